//! Every request of a seed, as its client meant it and as the backends saw it. Clients write a
//! record when they start a request; backends add each delivery and each response; the retry
//! rules of the README are checked as a delivery happens:
//! - a non-idempotent request reaches a backend at most once;
//! - nothing is sent again after a byte of a response to it reached sluice, except after a 5xx
//!   when some pool retries 5xx (`--retry-on 5xx`);
//! - at most `tries` deliveries, plus the one resend of the stale keep-alive race.
//! Clients then check each response against what the backends sent for that request.
const std = @import("std");
const assert = std.debug.assert;

const fail = @import("fail.zig");

const Ledger = @This();

requests: []Request,
count: u32 = 0,
/// The largest `tries` of any pool of any generation this seed.
tries_max: u8 = 1,
/// Some pool of some generation retries 5xx.
retry_5xx: bool = false,
/// Second deliveries whose sending was too far back to order against the answers.
unordered: u64 = 0,

pub const requests_max = 1 << 18;

pub const Method = enum {
    GET,
    HEAD,
    POST,
    PUT,
    DELETE,
    OPTIONS,
    PATCH,

    /// RFC 9110 §9.2.2, written here again rather than taken from src/http/.
    pub fn isIdempotent(method: Method) bool {
        return switch (method) {
            .GET, .HEAD, .PUT, .DELETE, .OPTIONS => true,
            .POST, .PATCH => false,
        };
    }
};

pub const Target = enum {
    /// To a pool (`/p<k>/`): answered by a backend, or by sluice with an error.
    pool,
    /// A route's fixed response.
    local,
    /// A route's redirect.
    redirect,
    /// No route matches: 404 from sluice.
    unrouted,
    /// A head sluice must refuse with 400.
    malformed,
    /// To the `/js/` route's handler (`/js/p<k>/`): answered by the handler itself, or sent
    /// on to pool k (`Response.proxy`), as the generation's source says.
    handler,
};

pub const Response = struct { status: u16, body_len: u32 };

pub const Request = struct {
    method: Method,
    target: Target,
    pool: u8,
    body_len: u32,
    upgrade: bool,
    http10: bool = false,
    /// Sent with an X-Forwarded-For of its own, a field named with `_`, an absolute target.
    forwarded_for: bool = false,
    underscore: bool = false,
    absolute: bool = false,
    client: u32,
    /// Times a backend parsed its head, and which backends (bit per backend).
    deliveries: u8 = 0,
    backends: u64 = 0,
    /// When (the simulated kernel's `sequence`) a byte of a response to it first reached
    /// sluice: a final answer, or a 5xx head. Null: none yet, or not known.
    arrived_final: ?u64 = null,
    arrived_5xx: ?u64 = null,
    /// What backends answered (status and body length), at most `responses_max`.
    responses: [responses_max]Response = undefined,
    responses_count: u8 = 0,
    /// Responses its client took for it (at most one).
    answered: u8 = 0,
    /// sluice refused its HTTP/2 stream (REFUSED_STREAM): it must never reach a backend.
    refused: bool = false,

    pub const responses_max = 8;
};

pub fn init(allocator: std.mem.Allocator) !Ledger {
    return .{ .requests = try allocator.alloc(Request, requests_max) };
}

pub fn deinit(ledger: *Ledger, allocator: std.mem.Allocator) void {
    allocator.free(ledger.requests);
    ledger.* = undefined;
}

pub fn reset(ledger: *Ledger) void {
    ledger.count = 0;
    ledger.tries_max = 1;
    ledger.retry_5xx = false;
    ledger.unordered = 0;
}

pub fn isFull(ledger: *const Ledger) bool {
    return ledger.count == ledger.requests.len;
}

pub fn add(ledger: *Ledger, request: Request) u32 {
    assert(!ledger.isFull());
    const id = ledger.count;
    ledger.requests[id] = request;
    ledger.count += 1;
    return id;
}

pub fn get(ledger: *Ledger, id: u32) *Request {
    if (id >= ledger.count) fail.invariant("a backend or client saw tag r{d}, which no client sent", .{id});
    return &ledger.requests[id];
}

/// A backend parsed the head of request `id`, which sluice sent at `sent` (the kernel's
/// sequence; null if too far back to know). A backend may read a head long after sluice sent
/// it, so the rules compare when sluice sent it with when a response byte reached sluice.
pub fn delivered(ledger: *Ledger, id: u32, backend: u8, sent: ?u64) void {
    const request = ledger.get(id);
    if (request.refused) fail.invariant("r{d} reached backend {d} after sluice refused its stream", .{ id, backend });
    request.deliveries += 1;
    request.backends |= @as(u64, 1) << @intCast(backend);
    if (request.deliveries == 1) return;
    if (!request.method.isIdempotent()) {
        fail.invariant("{t} r{d} reached a backend {d} times (it is not idempotent)", .{
            request.method, id, request.deliveries,
        });
    }
    const sent_at = sent orelse {
        ledger.unordered += 1;
        return;
    };
    if (request.arrived_final) |arrived_at| if (sent_at > arrived_at) {
        fail.invariant("r{d} was sent to a backend again after a byte of a response to it had " ++
            "reached sluice", .{id});
    };
    if (request.arrived_5xx) |arrived_at| if (sent_at > arrived_at and !ledger.retry_5xx) {
        fail.invariant("r{d} was sent again after a 5xx, and no pool retries 5xx", .{id});
    };
    if (request.deliveries > ledger.tries_max + 1) {
        fail.invariant("r{d} reached backends {d} times (tries at most {d}, plus one stale resend)", .{
            id, request.deliveries, ledger.tries_max,
        });
    }
}

/// sluice refused request `id`'s HTTP/2 stream (REFUSED_STREAM, RFC 9113 §8.7: not processed),
/// which no backend may have seen, nor see later.
pub fn refuse(ledger: *Ledger, id: u32) void {
    const request = ledger.get(id);
    if (request.deliveries > 0) fail.invariant("r{d}: its stream was refused, yet it reached a backend", .{id});
    request.refused = true;
}

/// A backend starts answering request `id`.
pub fn responded(ledger: *Ledger, id: u32, response: Response) void {
    const request = ledger.get(id);
    if (request.responses_count == Request.responses_max) return;
    request.responses[request.responses_count] = response;
    request.responses_count += 1;
}

/// A byte of a backend's answer to `id` was read by sluice at `at` (the kernel's sequence;
/// null if not known: then as early as can be, which only makes the rules stricter).
pub fn arrived(ledger: *Ledger, id: u32, final: bool, at: ?u64) void {
    const request = ledger.get(id);
    const when = at orelse 0;
    const slot = if (final) &request.arrived_final else &request.arrived_5xx;
    slot.* = @min(slot.* orelse when, when);
}

/// A client took a response for request `id`.
pub fn answered(ledger: *Ledger, id: u32) void {
    const request = ledger.get(id);
    request.answered += 1;
    if (request.answered > 1) fail.invariant("r{d} was answered {d} times", .{ id, request.answered });
}

/// Whether a backend answered `id` with this status and body length.
pub fn backendSent(ledger: *Ledger, id: u32, status: u16, body_len: u32) bool {
    const request = ledger.get(id);
    for (request.responses[0..request.responses_count]) |response| {
        if (response.status == status and response.body_len == body_len) return true;
    }
    return request.responses_count == Request.responses_max; // Not all recorded.
}
