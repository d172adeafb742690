//! One configuration generation as the workers see it: its config (listeners, pools, routes),
//! the pool instance serving each of its pools, which worker listener slot each of its
//! listeners uses, and how many worker timer queues it needs. Built and published by the
//! control thread (runtime/generations.zig), immutable once published, and freed by it when
//! every worker has let go of it.
//!
//! Workers pick a new generation up between events (`Proxy.adopt`). New exchanges use the
//! newest; an exchange keeps the generation it started on until it ends, so a reload never
//! changes a request half-way (see docs/ARCHITECTURE.md, "Generations and reload").
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const Pool = @import("../upstream/Pool.zig");
const Counter = @import("../stdx/Counter.zig");
const tls = @import("../tls/tls.zig");
const Handler = @import("../handler/Handler.zig");
const HandlerInstance = @import("../handler/Instance.zig");
const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const AccessPolicy = @import("../policy/AccessPolicy.zig");
const RateLimits = @import("../policy/RateLimits.zig");

const Generation = @This();

/// 1 at start-up, one more per applied reload.
number: u64,
config: *const Config,
/// `pools[i]` serves `config.pools()[i]`.
pools: []const *Pool,
/// The worker listener slot of each of `config.listeners()`.
listener_slots: []const u8,
/// The TLS context of each of `config.listeners()` (null: plain HTTP). Built with the
/// generation, its files read then, and freed with it once no connection made from it is
/// open (runtime/generations.zig), so a reload swaps certificates for new handshakes only.
tls_servers: []const ?*tls.ServerContext = &.{},
/// `handlers[i]` serves `config.handlers()[i]`: its module and each worker's engine, built
/// with the generation (or kept from the previous one when unchanged).
handlers: []const *HandlerInstance = &.{},
/// The worker timer queues this generation's pools use: `timeouts.durations[0..timeouts_count]`.
timeouts: *const Timeouts,
timeouts_count: u32,
/// The timer queue slot of each route's tunnel idle timeout, then (last) of the default one.
tunnel_slots: []const u8,
/// Workers that have not let go of this generation yet (one each at publication).
holders: std.atomic.Value(u32),
/// Requests each route took, one row per worker (each written by its worker only).
route_requests: []const []Counter,
/// The header rules of each route, then (last) those of requests no route took
/// (policy/HeaderPolicy.zig). Empty: none anywhere (a simulator's generation).
header_policies: []const HeaderPolicy = &.{},
/// The allow and deny lists (policy/AccessPolicy.zig); null: none anywhere.
access: ?AccessPolicy = null,
/// The rate limits (policy/RateLimits.zig); null: none anywhere.
rate_limits: ?RateLimits = null,
/// Requests each route refused with a 429, rows as `route_requests`; empty without limits
/// anywhere (then nothing counts in them).
route_rate_limited: []const []Counter = &.{},

/// Requests this generation routed by the route labelled `label` (`Config.routeLabel`), all
/// workers together (control thread).
pub fn routeRequests(generation: *const Generation, label: []const u8) u64 {
    return generation.labelTotal(generation.route_requests, label);
}

/// Requests of the route labelled `label` refused by a rate limit, all workers together.
pub fn routeRateLimited(generation: *const Generation, label: []const u8) u64 {
    return generation.labelTotal(generation.route_rate_limited, label);
}

fn labelTotal(generation: *const Generation, rows: []const []Counter, label: []const u8) u64 {
    var total: u64 = 0;
    for (0..generation.config.routes_count) |index| {
        if (!std.mem.eql(u8, generation.config.routeLabel(index), label)) continue;
        for (rows) |row| total += row[index].load();
    }
    return total;
}

/// The header rules for a request that took route `index` (null: none).
pub fn headerPolicy(generation: *const Generation, route: ?usize) ?*const HeaderPolicy {
    if (generation.header_policies.len == 0) return null;
    return &generation.header_policies[route orelse generation.header_policies.len - 1];
}

/// The TLS context of the listener on worker listener slot `slot`; null: plain HTTP (or a
/// slot this generation no longer has).
pub fn tlsServer(generation: *const Generation, slot: u8) ?*tls.ServerContext {
    const index = std.mem.indexOfScalar(u8, generation.listener_slots, slot) orelse return null;
    if (index >= generation.tls_servers.len) return null;
    return generation.tls_servers[index];
}

/// Whether the listener on worker listener slot `slot` serves HTTP/2 (false for a slot this
/// generation no longer has).
pub fn listenerHttp2(generation: *const Generation, slot: u8) bool {
    const index = std.mem.indexOfScalar(u8, generation.listener_slots, slot) orelse return false;
    return generation.config.listenerHttp2(index);
}

/// Whether connections to the listener on worker listener slot `slot` start with a PROXY
/// protocol header (false for a slot this generation no longer has).
pub fn listenerProxyProtocol(generation: *const Generation, slot: u8) bool {
    const index = std.mem.indexOfScalar(u8, generation.listener_slots, slot) orelse return false;
    return generation.config.listenerProxyProtocol(index);
}

/// The TLS settings of the listener on worker listener slot `slot` (its own `.tls`, or the
/// command line's); null: plain HTTP (or a slot this generation no longer has).
pub fn listenerTls(generation: *const Generation, slot: u8) ?*const Config.Tls {
    const index = std.mem.indexOfScalar(u8, generation.listener_slots, slot) orelse return null;
    return generation.config.listenerTls(index);
}

/// The generation's instance of the handler named `name`: what the next build keeps when the
/// handler's text and limits are unchanged (`HandlerInstance.make`).
pub fn handlerNamed(generation: *const Generation, name: []const u8) ?*HandlerInstance {
    for (generation.handlers) |instance| {
        if (std.mem.eql(u8, instance.config.name, name)) return instance;
    }
    return null;
}

/// Worker `worker_index`'s engine for the handler of index `index` in `config.handlers()`.
pub fn handler(generation: *const Generation, index: usize, worker_index: u32) *Handler {
    assert(index < generation.handlers.len); // Routes are validated against the same handlers.
    return generation.handlers[index].on(worker_index);
}

/// The durations of the worker timer queues upstream timeouts use, one queue per distinct
/// duration, shared by every pool and generation with that timeout. Append-only and owned by
/// the control thread; a generation publishes how many it uses.
pub const Timeouts = struct {
    durations: [count_max]u64 = undefined,
    count: u32 = 0,

    /// Room for the upstream timeouts of several generations; a reload that would need more
    /// is refused (the loop has a fixed number of queues).
    pub const count_max = 40;

    /// The slot of `duration_ns`, added if new; null when the table is full.
    pub fn slot(timeouts: *Timeouts, duration_ns: u64) ?u8 {
        for (timeouts.durations[0..timeouts.count], 0..) |duration, i| {
            if (duration == duration_ns) return @intCast(i);
        }
        if (timeouts.count == count_max) return null;
        timeouts.durations[timeouts.count] = duration_ns;
        timeouts.count += 1;
        return @intCast(timeouts.count - 1);
    }
};

test "generation: timeouts are shared by duration and bounded" {
    var timeouts: Timeouts = .{};
    try std.testing.expectEqual(@as(?u8, 0), timeouts.slot(5));
    try std.testing.expectEqual(@as(?u8, 1), timeouts.slot(7));
    try std.testing.expectEqual(@as(?u8, 0), timeouts.slot(5));
    for (2..Timeouts.count_max) |i| _ = timeouts.slot(100 + i).?;
    try std.testing.expectEqual(@as(?u8, null), timeouts.slot(1));
    try std.testing.expectEqual(@as(?u8, 1), timeouts.slot(7));
}
