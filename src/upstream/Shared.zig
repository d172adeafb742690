//! What every worker shares about one pool, built once by the control thread at start-up:
//! the backends' health (written by active checks and by exchange outcomes), the Maglev table
//! for `hash` (read-only), each backend's stable id (the sticky cookie's value and Maglev's
//! identity for it) and the connections open to each backend across all workers, which is
//! what a backend's `max_connections` caps.
//!
//! Decision: connection counts are shared atomics, not per-worker shares of the cap, so a cap
//! means what the operator wrote whatever the worker count. They change when a connection
//! opens or closes, not per request, so keep-alive traffic never touches them.
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const Config = @import("../config/Config.zig");
const Health = @import("../health/Health.zig");
const Maglev = @import("../balance/Maglev.zig");
const mask = @import("../stdx/mask.zig");

const Shared = @This();

pub const backends_max = Config.backends_count_max;

health: Health,
/// Only for the `hash` strategy.
maglev: ?*Maglev,
ids: [backends_max]u64,
connections: [backends_max]std.atomic.Value(u32),
connections_max: [backends_max]u32,
/// Backends with a connection cap.
capped: u64,
/// Requests in flight per backend, counted only for backends with a `max_pending` cap (so
/// an uncapped pool never writes shared memory per request).
pending: [backends_max]std.atomic.Value(u32),
pending_max: [backends_max]u32,
pending_capped: u64,

pub fn init(shared: *Shared, allocator: std.mem.Allocator, pool: *const Config.Pool) !void {
    const backends = pool.backends();
    assert(backends.len > 0 and backends.len <= backends_max);
    shared.* = .{
        .health = .init(pool),
        .maglev = null,
        .ids = @splat(0),
        .connections = @splat(.init(0)),
        .connections_max = @splat(0),
        .capped = 0,
        .pending = @splat(.init(0)),
        .pending_max = @splat(0),
        .pending_capped = 0,
    };
    for (backends, 0..) |*backend, i| {
        shared.ids[i] = backendId(&backend.address);
        shared.connections_max[i] = backend.max_connections;
        if (backend.max_connections > 0) shared.capped |= mask.bit(@intCast(i));
        shared.pending_max[i] = backend.max_pending;
        if (backend.max_pending > 0) shared.pending_capped |= mask.bit(@intCast(i));
    }
    if (pool.strategy == .hash) {
        const maglev = try allocator.create(Maglev);
        maglev.build(shared.ids[0..backends.len]);
        shared.maglev = maglev;
    }
}

pub fn deinit(shared: *Shared, allocator: std.mem.Allocator) void {
    if (shared.maglev) |maglev| allocator.destroy(maglev);
    shared.* = undefined;
}

/// A backend's identity: a hash of its address, so it survives reordering the backend list
/// and restarts (a client's sticky cookie keeps meaning the same backend).
pub fn backendId(address: *const Address) u64 {
    var text: [Address.text_bytes_max]u8 = undefined;
    return std.hash.Wyhash.hash(0x5eed_0f_5a1c, address.toText(&text));
}

pub const id_text_bytes = 16;

pub fn idText(shared: *const Shared, index: u16) [id_text_bytes]u8 {
    var text: [id_text_bytes]u8 = undefined;
    _ = std.fmt.bufPrint(&text, "{x:0>16}", .{shared.ids[index]}) catch unreachable;
    return text;
}

/// The backend a sticky cookie value names, if it is one of ours.
pub fn findIdText(shared: *const Shared, text: []const u8, count: u32) ?u16 {
    if (text.len != id_text_bytes) return null;
    const id = std.fmt.parseInt(u64, text, 16) catch return null;
    for (shared.ids[0..count], 0..) |candidate, i| {
        if (candidate == id) return @intCast(i);
    }
    return null;
}

/// Counts a new connection to backend `index`; false (and nothing counted) when that would
/// go over its cap.
pub fn tryOpen(shared: *Shared, index: u16) bool {
    const max = shared.connections_max[index];
    const before = shared.connections[index].fetchAdd(1, .monotonic);
    if (max > 0 and before >= max) {
        _ = shared.connections[index].fetchSub(1, .monotonic);
        return false;
    }
    return true;
}

pub fn closed(shared: *Shared, index: u16) void {
    const before = shared.connections[index].fetchSub(1, .monotonic);
    assert(before > 0);
}

/// Counts a request to backend `index` if it has a `max_pending` cap; false (nothing
/// counted) when that would go over it.
pub fn tryBeginRequest(shared: *Shared, index: u16) bool {
    const max = shared.pending_max[index];
    if (max == 0) return true;
    const before = shared.pending[index].fetchAdd(1, .monotonic);
    if (before >= max) {
        _ = shared.pending[index].fetchSub(1, .monotonic);
        return false;
    }
    return true;
}

pub fn endRequest(shared: *Shared, index: u16) void {
    if (shared.pending_max[index] == 0) return;
    const before = shared.pending[index].fetchSub(1, .monotonic);
    assert(before > 0);
}

/// Backends at their `max_pending` cap now.
pub fn atPendingCap(shared: *const Shared) u64 {
    var result: u64 = 0;
    var rest = shared.pending_capped;
    while (rest != 0) : (rest &= rest - 1) {
        const index = @ctz(rest);
        if (shared.pending[index].load(.monotonic) >= shared.pending_max[index]) {
            result |= mask.bit(index);
        }
    }
    return result;
}

/// Capped backends that are at their connection cap now.
pub fn atCapacity(shared: *const Shared) u64 {
    var result: u64 = 0;
    var rest = shared.capped;
    while (rest != 0) : (rest &= rest - 1) {
        const index = @ctz(rest);
        if (shared.connections[index].load(.monotonic) >= shared.connections_max[index]) {
            result |= mask.bit(index);
        }
    }
    return result;
}

test "shared: ids survive reordering and round-trip through cookie text" {
    var pool: Config.Pool = .{};
    try pool.addBackend(.{ .address = try Address.parse("10.0.0.1:80"), .max_connections = 1 });
    try pool.addBackend(.{ .address = try Address.parse("10.0.0.2:80") });
    var shared: Shared = undefined;
    try shared.init(std.testing.allocator, &pool);
    defer shared.deinit(std.testing.allocator);
    try std.testing.expect(shared.ids[0] != shared.ids[1]);
    const text = shared.idText(1);
    try std.testing.expectEqual(@as(?u16, 1), shared.findIdText(&text, 2));
    try std.testing.expectEqual(@as(?u16, null), shared.findIdText("zz", 2));
    try std.testing.expectEqual(backendId(&pool.backends()[0].address), shared.ids[0]);

    try std.testing.expect(shared.tryOpen(0));
    try std.testing.expect(!shared.tryOpen(0));
    try std.testing.expectEqual(@as(u64, 0b01), shared.atCapacity());
    shared.closed(0);
    try std.testing.expectEqual(@as(u64, 0), shared.atCapacity());
    try std.testing.expect(shared.tryOpen(1) and shared.tryOpen(1)); // Uncapped.
}

test "shared: pending requests are capped and counted only where a cap is set" {
    var pool: Config.Pool = .{};
    try pool.addBackend(.{ .address = try Address.parse("10.0.0.1:80"), .max_pending = 2 });
    try pool.addBackend(.{ .address = try Address.parse("10.0.0.2:80") });
    var shared: Shared = undefined;
    try shared.init(std.testing.allocator, &pool);
    defer shared.deinit(std.testing.allocator);
    try std.testing.expect(shared.tryBeginRequest(0) and shared.tryBeginRequest(0));
    try std.testing.expect(!shared.tryBeginRequest(0));
    try std.testing.expectEqual(@as(u64, 0b01), shared.atPendingCap());
    shared.endRequest(0);
    try std.testing.expectEqual(@as(u64, 0), shared.atPendingCap());
    try std.testing.expect(shared.tryBeginRequest(1));
    shared.endRequest(1);
    try std.testing.expectEqual(@as(u32, 0), shared.pending[1].load(.monotonic));
}
