//! One `fetch` of a JavaScript handler in flight, as the downstream of the exchange that carries
//! it to its pool (downstream.zig's `.fetch`): what Connection.zig is to a client's exchange,
//! for a request the handler made (docs/ARCHITECTURE.md, "`fetch` to pools").
//!
//! The sub-exchange is an ordinary `Exchange` started at `beginSubrequest`, so balancing,
//! health, retries, timeouts and TLS are the pool path's own. The fetch settles when the
//! response head is here: its status, reason and fields are copied into the suspended
//! request's heap (the engine's, through `Handler.fetchBytes`). A body that came whole with the
//! head is copied there too; any other waits at the pool, its first window held unacknowledged
//! (so the pool's connection is read no further), until the handler reads it (`startRead`: the
//! windows are gathered into the heap as they come) or returns it (`startRelay`: the parent
//! exchange sends each window on to its own client and acknowledges it only when the client
//! took it). A body neither read nor returned is aborted with the call (`detach`).
//!
//! Buffers: `buffer`, one worker buffer taken at `start`, holds the request's strings and body,
//! copied out of the handler's heap then, so that nothing the kernel may still read points into
//! a heap a cancelled request gave back. A body larger than the room behind the strings is
//! sent through that room a window at a time, each copied out of the heap when the exchange
//! asks for it: the heap is read only while the call that made the fetch is alive (it is
//! suspended or running, and its fetches are detached, so aborted, when it ends). A detached
//! sub-request (its parent ended first) only frees its slot when its exchange is released.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const http = @import("../http/http.zig");
const tls = @import("../tls/tls.zig");
const Handler = @import("../handler/Handler.zig");
const fetch_js = @import("../handler/fetch.zig");
const LocalPool = @import("../upstream/LocalPool.zig");
const Failure = @import("failure.zig").Failure;
const failure_http1 = @import("failure_http1.zig");
const rewrite = @import("rewrite.zig");
const AccessLog = @import("AccessLog.zig");
const Downstream = @import("downstream.zig").Downstream;
const Exchange = @import("Exchange.zig");
const Proxy = @import("Proxy.zig");

const Subrequest = @This();

state: State = .free,
/// The exchange whose handler fetched; null once it ended (the sub-request is detached).
parent: ?*Exchange = null,
/// The parent's next sub-request.
next: ?*Subrequest = null,
/// The exchange carrying the request (a slot of the worker reserved for this one).
exchange: *Exchange,
/// The fetch, as the handler recorded it (`index` names it to the engine).
fetch: Handler.Fetch = undefined,
/// The suspended call's ticket: where the answer is gathered.
ticket: Handler.Ticket = undefined,
handler: *Handler = undefined,
buffer: ?[]u8 = null,
/// Where the body (or the room its windows go through) starts in `buffer`.
body_start: usize = 0,
/// A body larger than the room behind the head: its bytes in the request's heap, sent a
/// window at a time through `buffer[body_start..]`; empty when the body is whole in `buffer`.
streamed: []const u8 = "",
/// How much of `streamed` has been copied out into windows.
streamed_pos: usize = 0,
request: http.Request = undefined,
/// The client's facts, as the parent's downstream gave them at the start.
client_address: Address = undefined,
client_ip: [46]u8 = undefined,
client_ip_len: u8 = 0,
client_fd: linux.fd_t = -1,
client_tls: bool = false,
/// The client is a trusted proxy: its forwarding fields were copied, and are appended to.
client_trusted: bool = false,
listener_slot: u8 = 0,
answer: Gathered = .{},
/// The body's first window, in the exchange's buffer and not acknowledged, while the fetch is
/// `headed` or `held` (and until a relay's head is out).
held: []u8 = &.{},
/// The handler's read of the body, while `gathering` (and once `body_done`, until settled).
read: ?Handler.FetchedRead = null,
/// Why there is no answer, for the TypeError the fetch rejects with.
message_buffer: [message_bytes_max]u8 = undefined,
message_len: u8 = 0,

pub const State = enum {
    free,
    /// Its exchange runs; no response head yet.
    running,
    /// The head came and the body is still coming: the fetch is to settle with the head, and
    /// the exchange waits for its first window (`held`) to be acknowledged.
    headed,
    /// Settled with its head: the body waits at the pool to be read or returned.
    held,
    /// The handler reads the body: its windows are gathered into the request's heap (`read`).
    gathering,
    /// The parent sends the body on to its client (the parent's `relay`; off its list).
    relaying,
    /// Its exchange was released before the fetch settled: the whole answer, or why there is
    /// none, waits for the parent.
    done,
    /// Its exchange was released after the fetch settled: gathered (then `read` settles with
    /// it), or broken off while held (a read or a return of it fails).
    body_done,
};

/// The response as it is gathered in the request's heap.
const Gathered = struct {
    status: u16 = 0,
    /// The reason phrase then the kept field lines, in the request's heap.
    head: []const u8 = "",
    reason_len: u16 = 0,
    body: ?[]align(8) u8 = null,
    body_len: usize = 0,
    /// The whole response arrived (its last window was gathered).
    complete: bool = false,
    dechunk: ?http.ChunkedDecoder = null,
    /// How the pool frames the body (read when the head came).
    framing: fetch_js.Framing = .close,
};

const message_bytes_max = 200;
/// A body of unknown length is gathered in a block that doubles when full, from this size.
const body_block_bytes_min = 4096;

// ---------------------------------------------------------------------------------------------
// The start

pub const StartError = error{ NoSlot, NoBuffer, TooLarge };

/// Starts `fetch` of the suspended call `ticket` of `parent`'s handler to `pool`, holding the
/// parent's generation (`hold`). Errors leave nothing taken.
pub fn start(sub: *Subrequest, parent: *Exchange, handler: *Handler, ticket: Handler.Ticket, fetch: Handler.Fetch, pool: *LocalPool) StartError!void {
    assert(sub.state == .free);
    const proxy = parent.proxy;
    const buffer = proxy.buffers.acquire() orelse return error.NoBuffer;
    errdefer proxy.buffers.release(buffer);
    const facts = parent.downstream.client();
    sub.* = .{ .exchange = sub.exchange, .parent = parent, .fetch = fetch, .ticket = ticket, .handler = handler, .buffer = buffer };
    sub.client_address = facts.address.*;
    const ip_len = @min(facts.ip.len, sub.client_ip.len);
    @memcpy(sub.client_ip[0..ip_len], facts.ip[0..ip_len]);
    sub.client_ip_len = @intCast(ip_len);
    sub.client_fd = facts.fd;
    sub.client_tls = facts.tls;
    sub.client_trusted = facts.trusted;
    sub.listener_slot = facts.listener_slot;
    try sub.composeRequest(buffer, parent.request_head);
    sub.state = .running;
    sub.next = parent.fetches;
    parent.fetches = sub;
    const exchange = sub.exchange;
    exchange.open(.{ .fetch = sub });
    exchange.beginSubrequest(&sub.request, pool, proxy.holdAgain(parent.hold.?));
}

/// The request head over `buffer`: the method, target, Host and the handler's fields' strings
/// (after them, from a trusted proxy, the client request's forwarding fields, which the
/// sub-request's are appended to as the client request's are), then the body; its fields in
/// the exchange slot's array.
fn composeRequest(sub: *Subrequest, buffer: []u8, parent_head: *const http.Request) StartError!void {
    const fetch = &sub.fetch.request;
    const host = rewrite.requestHost(parent_head);
    var used: usize = 0;
    const method = try copy(buffer, &used, fetch.method);
    const target = try copy(buffer, &used, fetch.target);
    const host_copy = if (host) |h| try copy(buffer, &used, h) else null;
    const fields_buffer = sub.exchange.request_parser.scanner.headers_buffer;
    var fields = fetch.fields();
    if (fields.count() > fields_buffer.len) return error.TooLarge;
    var count: usize = 0;
    while (fields.next()) |field| : (count += 1) {
        fields_buffer[count] = .{ .name = try copy(buffer, &used, field.name), .value = try copy(buffer, &used, field.value) };
    }
    if (sub.client_trusted) for (parent_head.headers) |field| {
        if (!forwarding(field.name)) continue;
        if (count == fields_buffer.len) return error.TooLarge;
        fields_buffer[count] = .{ .name = try copy(buffer, &used, field.name), .value = try copy(buffer, &used, field.value) };
        count += 1;
    };
    // The body follows the strings when it fits; else the rest of the buffer is the room its
    // windows go through (at least a quarter of it, so that the windows are not tiny).
    const room = buffer.len - used;
    const streamed = fetch.body.len > room;
    if (streamed and room < buffer.len / 4) return error.TooLarge;
    const body_copy = if (streamed) "" else try copy(buffer, &used, fetch.body);
    sub.streamed = if (streamed) fetch.body else "";
    sub.streamed_pos = 0;
    const body_len = if (streamed) fetch.body.len else body_copy.len;
    sub.request = .{
        .method = .parse(method),
        .method_text = method,
        .target = target,
        .target_form = .origin,
        .version = .http11,
        .headers = fields_buffer[0..count],
        .host = host_copy,
        .body = if (body_len == 0) .none else .{ .content_length = body_len },
        .keep_alive = true,
        .expect_continue = false,
        .upgrade = false,
        .has_connection = false,
    };
    sub.answer.body_len = 0;
    sub.body_start = used - body_copy.len;
}

fn forwarding(name: []const u8) bool {
    for ([_][]const u8{ "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded" }) |own| {
        if (std.ascii.eqlIgnoreCase(name, own)) return true;
    }
    return false;
}

fn copy(buffer: []u8, used: *usize, bytes: []const u8) StartError![]const u8 {
    if (bytes.len > buffer.len - used.*) return error.TooLarge;
    const out = buffer[used.*..][0..bytes.len];
    @memcpy(out, bytes);
    used.* += bytes.len;
    return out;
}

/// The body when it is whole in `buffer`; empty when there is none or it is streamed.
fn body(sub: *const Subrequest) []const u8 {
    if (sub.streamed.len > 0) return "";
    return switch (sub.request.body) {
        .content_length => |len| sub.buffer.?[sub.body_start..][0..@intCast(len)],
        else => "",
    };
}

/// Whether the heap a streamed body is read from is still the call's: the call runs or waits
/// (a fetch being returned to the client, `relaying`, outlives the call).
fn streamedReadable(sub: *const Subrequest) bool {
    if (sub.parent == null) return false;
    return switch (sub.state) {
        .running, .headed, .held, .gathering => true,
        .free, .relaying, .done, .body_done => false,
    };
}

/// The next window of a streamed body, copied out of the heap into the room behind the head.
fn sendStreamedWindow(sub: *Subrequest) void {
    // The call ended while the body was still being sent (its answer was the fetched body,
    // streamed before the backend read the whole request): the rest is no longer there.
    if (!sub.streamedReadable()) return sub.exchange.abort();
    const room = sub.buffer.?[sub.body_start..];
    const rest = sub.streamed[sub.streamed_pos..];
    assert(rest.len > 0);
    const n = @min(room.len, rest.len);
    @memcpy(room[0..n], rest[0..n]);
    sub.streamed_pos += n;
    sub.exchange.sendRequestBody(room[0..n], sub.streamed_pos == sub.streamed.len);
}

// ---------------------------------------------------------------------------------------------
// The parent's side

/// The parent ended (or its call did): nothing is settled any more, and the exchange, if it
/// still runs, is aborted; the slot is freed when it is released.
pub fn detach(sub: *Subrequest) void {
    assert(sub.parent != null);
    sub.parent = null;
    sub.next = null;
    switch (sub.state) {
        .running, .headed, .held, .gathering => sub.exchange.abort(), // Released now or when its operations call back.
        .done, .body_done => sub.free(),
        .free, .relaying => unreachable, // A relay is the parent's `relay`, not on its list.
    }
}

/// Whether the parent has something to settle: the fetch (its head came, or its exchange
/// ended), or the read of its body.
pub fn settles(sub: *const Subrequest) bool {
    return switch (sub.state) {
        .headed, .done => true,
        .body_done => sub.read != null,
        .free, .running, .held, .gathering, .relaying => false,
    };
}

/// What the fetch settles with: the head, with the body whole or still at the pool, or why
/// there is none. The fetch is then `held` (its body waits) or ends with the settling.
pub fn result(sub: *Subrequest) Handler.FetchResult {
    const gathered = &sub.answer;
    switch (sub.state) {
        .headed => {
            sub.state = .held;
            return sub.answerWith(.{ .pending = .{ .slot = sub.slotIndex(), .framing = gathered.framing } });
        },
        .done => {
            if (sub.message_len > 0 or !gathered.complete) return .{ .failed = sub.failureMessage() };
            return sub.answerWith(if (gathered.body) |b| .{ .bytes = b[0..gathered.body_len] } else .none);
        },
        else => unreachable, // `settles` said.
    }
}

fn answerWith(sub: *const Subrequest, body_state: fetch_js.Body) Handler.FetchResult {
    const gathered = &sub.answer;
    return .{ .answer = .{
        .status = gathered.status,
        .reason = gathered.head[0..gathered.reason_len],
        .fields = gathered.head[gathered.reason_len..],
        .body = body_state,
    } };
}

/// What the read of the body settles with: the gathered bytes, or why there are none.
pub fn readResult(sub: *const Subrequest) Handler.BodyResult {
    assert(sub.state == .body_done and sub.read != null);
    const gathered = &sub.answer;
    if (sub.message_len > 0 or !gathered.complete) return .{ .failed = sub.failureMessage() };
    const empty: []align(8) u8 = &.{};
    return .{ .bytes = if (gathered.body) |b| b[0..gathered.body_len] else empty };
}

/// Why there is no answer (or no whole body).
pub fn failureMessage(sub: *const Subrequest) []const u8 {
    if (sub.message_len > 0) return sub.message_buffer[0..sub.message_len];
    return "fetch: the pool's response broke off";
}

/// This slot's index among the worker's fetch slots: what names it to the engine.
pub fn slotIndex(sub: *const Subrequest) u32 {
    return @intCast(sub - sub.exchange.proxy.fetches.ptr);
}

pub fn free(sub: *Subrequest) void {
    assert(sub.state == .done or sub.state == .body_done);
    assert(sub.parent == null);
    sub.state = .free;
    sub.read = null;
    sub.held = &.{};
    const proxy = sub.exchange.proxy;
    proxy.releaseFetch(sub);
}

/// The message the fetch rejects with, naming the pool.
fn fail(sub: *Subrequest, comptime format: []const u8, args: anytype) void {
    if (sub.message_len > 0) return; // The first reason stands.
    if (sub.parent == null) return; // Nobody reads it (and the pool's name was the request's).
    var w: std.Io.Writer = .fixed(&sub.message_buffer);
    w.print("fetch: pool \"{s}\" ", .{sub.fetch.request.pool}) catch {}; // Cut at the buffer's end.
    w.print(format, args) catch {}; // Cut, as above.
    sub.message_len = @intCast(w.end);
}

/// The exchange was released: the answer (or the body) is whole, or there is none; the parent
/// settles it. A relay's end is the parent's business already (`stopRelay`, `relaySent`).
fn ended(sub: *Subrequest) void {
    const proxy = sub.exchange.proxy;
    if (sub.buffer) |buffer| proxy.buffers.release(buffer);
    sub.buffer = null;
    sub.held = &.{};
    sub.state = switch (sub.state) {
        .running, .headed => .done,
        .held, .gathering => .body_done,
        .relaying => blk: {
            assert(sub.parent == null); // `finishRelay`, `stopRelay` or `exchangeFailed` let go.
            break :blk .done;
        },
        .free, .done, .body_done => unreachable,
    };
    const parent = sub.parent orelse return sub.free();
    @import("handler_target.zig").fetchEnded(parent);
}

/// The handler reads the body: room for it in the request's heap (its length, or a block that
/// grows), then the held window is gathered and acknowledged, and the rest follows. A body that
/// does not fit ends the exchange; the read settles when it is released either way.
pub fn startRead(sub: *Subrequest, read: Handler.FetchedRead) void {
    assert(sub.state == .held);
    sub.state = .gathering;
    sub.read = read;
    const gathered = &sub.answer;
    switch (gathered.framing) {
        .length => |length| {
            const length_bytes = std.math.cast(usize, length) orelse return sub.overMemory({});
            gathered.body = sub.handler.fetchBytes(sub.ticket, length_bytes) orelse return sub.overMemory({});
        },
        .chunked, .close => {}, // Decoded (`gatherHead`) and grown as it comes.
    }
    const window = sub.held;
    sub.held = &.{};
    sub.gatherBody(window, false);
}

/// The parent returns the body: its windows go to the parent's client from now on. The held
/// window is the relay's first (`takeHeld`).
pub fn startRelay(sub: *Subrequest) void {
    assert(sub.state == .held);
    assert(sub.parent != null);
    sub.state = .relaying;
}

/// The held window, once: the parent sends it after the head (or copied it behind the head).
pub fn takeHeld(sub: *Subrequest) []u8 {
    assert(sub.state == .relaying);
    const window = sub.held;
    sub.held = &.{};
    return window;
}

/// The parent's client took the last window the relay gave it: the next may come.
pub fn relayWindowSent(sub: *Subrequest) void {
    assert(sub.state == .relaying);
    sub.exchange.responseSent();
}

/// The relay ended as the parent's exchange did: the sub-exchange stops (if it still runs) and
/// the slot is freed when it is released.
pub fn stopRelay(sub: *Subrequest) void {
    assert(sub.state == .relaying);
    sub.parent = null;
    sub.exchange.abort(); // Released now or when its operations call back.
}

/// The relay's last window is out: the sub-exchange finishes (and the slot is freed).
pub fn finishRelay(sub: *Subrequest) void {
    assert(sub.state == .relaying);
    sub.parent = null;
    sub.exchange.responseSent();
}

// ---------------------------------------------------------------------------------------------
// The request, as the exchange reads it

pub fn pullRequestBody(sub: *Subrequest) void {
    if (sub.streamed.len > 0) return sub.sendStreamedWindow();
    const bytes = sub.body();
    assert(bytes.len > 0);
    sub.exchange.sendRequestBody(bytes, true);
}

/// A window is out: the next of a streamed body follows (a whole one was the last).
pub fn requestBodySent(sub: *Subrequest) void {
    if (sub.streamed_pos < sub.streamed.len) sub.sendStreamedWindow();
}

pub fn bufferedBodyReject(sub: *const Subrequest) ?http.Reject {
    _ = sub;
    return null;
}

pub fn requestBodyPending(sub: *const Subrequest) bool {
    return sub.request.body != .none;
}

pub fn requestBodyWhole(sub: *const Subrequest) bool {
    return sub.streamed.len == 0;
}

pub fn requestBodyRoom(sub: *const Subrequest) u64 {
    return sub.body().len; // Whole from the start.
}

pub fn requestBodyBytes(sub: *const Subrequest) []const u8 {
    return sub.body();
}

pub fn requestBodyChunked(sub: *const Subrequest) bool {
    _ = sub;
    return false;
}

/// A whole body stays in `buffer` until the end; a streamed one is read again from the heap
/// while the call lives.
pub fn requestBodyReplayable(sub: *const Subrequest) bool {
    return sub.streamed.len == 0 or sub.streamedReadable();
}

pub fn rewindRequestBody(sub: *Subrequest) void {
    sub.streamed_pos = 0; // `pullRequestBody` sends it from its start.
}

// ---------------------------------------------------------------------------------------------
// The response, gathered

pub fn sendInterim(sub: *Subrequest, view: Exchange.ResponseView) void {
    // A 1xx is not the answer: the bytes after it are the next head.
    const rest_start = view.head_start + view.head_len;
    sub.exchange.interimSent(rest_start, view.received - view.head_len);
}

pub fn sendContinue(sub: *Subrequest) void {
    _ = sub;
    unreachable; // A sub-request sends no `Expect: 100-continue`.
}

/// The pool's response head, with the first body bytes that came with it. A body that came
/// whole is gathered at once (the fetch settles when the exchange ends, as a small answer's
/// does); any other is held where it is and the fetch settles with the head now.
pub fn sendResponse(sub: *Subrequest, view: Exchange.ResponseView, extra_field: []const u8) void {
    _ = extra_field; // A sticky cookie is for a client's next request, not a handler's.
    assert(sub.state == .running);
    const head = view.head;
    if (!sub.gatherHead(head)) return;
    const body_bytes = view.buffer[view.head_start + view.head_len ..][0..view.body_len];
    if (view.body_last) {
        if (!sub.roomForWhole()) return sub.overMemory({});
        return sub.gatherBody(body_bytes, true);
    }
    sub.held = body_bytes;
    sub.state = .headed;
    const parent = sub.parent orelse return sub.exchange.abort(); // Detached: nobody wants it.
    @import("handler_target.zig").fetchEnded(parent);
}

pub fn sendResponseBody(sub: *Subrequest, window: []u8, last: bool) void {
    switch (sub.state) {
        .running, .gathering => sub.gatherBody(window, last),
        .relaying => @import("handler_target.zig").relayWindow(sub.parent.?, window, last),
        .free, .headed, .held, .done, .body_done => unreachable, // The exchange waits for its ack.
    }
}

/// The status, the reason and the fields a Response shows (the hop-by-hop and framing ones
/// left out: sluice writes those), and how the body is framed.
fn gatherHead(sub: *Subrequest, head: *const http.ResponseParser.Head) bool {
    const keep: Kept = .of(head);
    var len: usize = head.reason.len;
    for (head.headers) |field| {
        if (keep.kept(field.name)) len += field.name.len + 2 + field.value.len + 2;
    }
    const bytes = sub.handler.fetchBytes(sub.ticket, len) orelse return sub.overMemory(false);
    var w: std.Io.Writer = .fixed(bytes);
    // Counted above: the writes cannot fail.
    w.writeAll(head.reason) catch unreachable;
    for (head.headers) |field| {
        if (keep.kept(field.name)) http.chars.writeFieldLine(&w, field.name, field.value) catch unreachable;
    }
    assert(w.end == len);
    sub.answer.status = head.status;
    sub.answer.reason_len = @intCast(@min(head.reason.len, std.math.maxInt(u16)));
    sub.answer.head = bytes;
    sub.answer.framing = switch (head.body) {
        .none => .{ .length = 0 },
        .content_length => |length| .{ .length = length },
        .chunked => .chunked,
        .close_delimited => .close,
    };
    if (head.body == .chunked) sub.answer.dechunk = .init(.{});
    return true;
}

/// Room for a body that came whole with its head, when its length is known (the exchange
/// framed it); one of unknown length grows as it is appended.
fn roomForWhole(sub: *Subrequest) bool {
    const length = switch (sub.answer.framing) {
        .length => |length| length,
        .chunked, .close => return true,
    };
    if (length == 0) return true;
    const length_bytes = std.math.cast(usize, length) orelse return false;
    sub.answer.body = sub.handler.fetchBytes(sub.ticket, length_bytes) orelse return false;
    return true;
}

/// Which response fields are shown to the handler: not one sluice writes itself, nor one the
/// Connection field names (whether it names any is found once per head).
const Kept = struct {
    head: *const http.ResponseParser.Head,
    connection_names_fields: bool,

    fn of(head: *const http.ResponseParser.Head) Kept {
        return .{ .head = head, .connection_names_fields = head.connectionNamesFields() };
    }

    fn kept(k: Kept, name: []const u8) bool {
        for ([_][]const u8{ "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "proxy-connection" }) |own| {
            if (std.ascii.eqlIgnoreCase(name, own)) return false;
        }
        return !(k.connection_names_fields and k.head.connectionHasToken(name));
    }
};

/// Body bytes into the request's heap (de-chunked), then handed back to the exchange.
fn gatherBody(sub: *Subrequest, window: []u8, last: bool) void {
    var data = window;
    if (sub.answer.dechunk) |*decoder| {
        const decoded = decoder.decodeInPlace(window);
        if (decoded.reject != null) return sub.exchange.abort(); // The exchange's scan refused it first: a bug's answer.
        data = window[0..decoded.data_len];
    }
    if (data.len > 0 and !sub.append(data)) return sub.overMemory({});
    if (last) sub.answer.complete = true;
    sub.exchange.responseSent();
}

fn append(sub: *Subrequest, data: []const u8) bool {
    const gathered = &sub.answer;
    const room = if (gathered.body) |b| b.len - gathered.body_len else 0;
    if (data.len > room) {
        // Unknown length (a known one was allocated whole, and the exchange frames it).
        const needed = gathered.body_len + data.len;
        const grown_len = @max(needed, @max(body_block_bytes_min, 2 * (if (gathered.body) |b| b.len else 0)));
        const grown = sub.handler.fetchBytes(sub.ticket, grown_len) orelse return false;
        if (gathered.body) |old| @memcpy(grown[0..gathered.body_len], old[0..gathered.body_len]);
        gathered.body = grown;
    }
    @memcpy(gathered.body.?[gathered.body_len..][0..data.len], data);
    gathered.body_len += data.len;
    return true;
}

/// The response does not fit the handler's memory: the fetch rejects, the exchange stops.
/// Returns `answer`, for the caller to return.
fn overMemory(sub: *Subrequest, answer: anytype) @TypeOf(answer) {
    sub.fail("answered with more than the handler's memory holds (its `memory` setting)", .{});
    sub.exchange.abort(); // Released now or when its operations call back.
    return answer;
}

pub fn sendResponseFromPipe(sub: *Subrequest, pipe_read: linux.fd_t, len: u32) void {
    _ = sub;
    _ = pipe_read;
    _ = len;
    unreachable; // `takesSplice` is false.
}

pub fn takesSplice(sub: *const Subrequest) bool {
    _ = sub;
    return false;
}

pub fn sendLocal(sub: *Subrequest, local: Downstream.Local) void {
    _ = sub;
    _ = local;
    unreachable; // A sub-request's target is a pool.
}

pub fn watchClient(sub: *Subrequest) void {
    _ = sub;
    unreachable; // A sub-request runs no handler.
}

pub fn stopWatching(sub: *Subrequest) bool {
    _ = sub;
    unreachable; // As above.
}

pub fn closesAfterLocal(sub: *const Subrequest, keep_alive: bool) bool {
    _ = sub;
    _ = keep_alive;
    return false;
}

pub fn errorResponse(sub: *const Subrequest, failure: Failure) []const u8 {
    _ = sub;
    return failure_http1.response(failure);
}

// A tunnel: never (`upgrade_allowed` is false for a sub-request).

pub fn startTunnel(sub: *Subrequest, view: Exchange.ResponseView) void {
    _ = sub;
    _ = view;
    unreachable;
}

pub fn tunnelToClient(sub: *Subrequest, bytes: []const u8) void {
    _ = sub;
    _ = bytes;
    unreachable;
}

pub fn tunnelSent(sub: *Subrequest) void {
    _ = sub;
    unreachable;
}

pub fn tunnelProgress(sub: *Subrequest) void {
    _ = sub;
    unreachable;
}

pub fn tunnelUpstreamClosed(sub: *Subrequest) void {
    _ = sub;
    unreachable;
}

// ---------------------------------------------------------------------------------------------
// The end of the exchange

pub fn exchangeFinished(sub: *Subrequest) void {
    sub.ended();
}

pub fn closeAfterEarlyResponse(sub: *Subrequest) void {
    // The pool answered before it read the whole body: the answer stands; the rest is dropped.
    sub.exchange.abort(); // Released now or when its operations call back.
}

pub fn exchangeFailed(sub: *Subrequest, failure_reason: ?Failure, response_started: bool) void {
    _ = response_started;
    if (sub.state == .relaying) {
        // The pool broke off a body already on its way to the parent's client: the client is
        // told as for any broken relay, by a close (HTTP/1.1) or a reset stream (h2).
        const parent = sub.parent.?;
        sub.parent = null;
        return @import("handler_target.zig").relayBroken(parent);
    }
    const reason = failure_reason orelse return; // Aborted: `result` says the response broke off.
    if (sub.state == .running) return sub.fail("gave no response: {d} {s}", .{ reason.status(), reason.name() });
    sub.fail("broke off its response's body: {d} {s}", .{ reason.status(), reason.name() });
}

pub fn exchangeReleased(sub: *Subrequest) void {
    sub.ended();
}

// ---------------------------------------------------------------------------------------------
// The client, as the exchange sees it: the parent's

pub fn client(sub: *const Subrequest) Downstream.Client {
    return .{
        .address = &sub.client_address,
        .ip = sub.client_ip[0..sub.client_ip_len],
        .fd = sub.client_fd,
        .trusted = sub.client_trusted,
        .tls = sub.client_tls,
        .listener_slot = sub.listener_slot,
        .reused = false,
    };
}

pub fn certificateFields(sub: *const Subrequest, peer: *tls.Engine.PeerCertificate) ?rewrite.CertificateFields {
    _ = sub;
    _ = peer;
    return null;
}

pub fn logFacts(sub: *const Subrequest, peer: *tls.Engine.PeerCertificate) AccessLog.ClientFacts {
    _ = peer;
    return .{ .ip = sub.client_ip[0..sub.client_ip_len], .request_body_bytes = sub.body().len };
}
