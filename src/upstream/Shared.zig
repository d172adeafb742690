//! What every worker shares about one pool, built by the control thread with the pool
//! instance: the members' health (written by active checks and by exchange outcomes), the
//! Maglev table for `hash` (read-only), each member's stable id (the sticky cookie's value and
//! Maglev's identity for it), weight, and the connections open to each member across all
//! workers, which is what a member's `max_connections` caps.
//!
//! Decision: connection counts are shared atomics, not per-worker shares of the cap, so a cap
//! means what the operator wrote whatever the worker count. They change when a connection
//! opens or closes, not per request, so keep-alive traffic never touches them.
//!
//! Sizing: every array has one entry per member, allocated from the pool's count when the
//! instance is built (no fixed maximum on the path; see docs/ARCHITECTURE.md, "Membership").
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const BitSet = @import("../stdx/BitSet.zig");
const Config = @import("../config/Config.zig");
const Health = @import("../health/Health.zig");
const Maglev = @import("../balance/Maglev.zig");

const Shared = @This();

health: Health,
/// Only for the `hash` strategy.
maglev: ?*Maglev,
ids: []u64,
/// `ids` sorted, with each one's member: a sticky cookie's member by binary search.
ids_sorted: []IdIndex,
weights: []u16,
/// Members with a weight above 0 (weight 0 drains): never candidates otherwise.
active: []BitSet.Word,
connections: []std.atomic.Value(u32),
connections_max: []u32,
/// Some member has a connection cap: only then does a pick look at the counts.
any_capped: bool,
/// Requests in flight per member, counted only for members with a `max_pending` cap (so an
/// uncapped pool never writes shared memory per request).
pending: []std.atomic.Value(u32),
pending_max: []u32,
any_pending_capped: bool,

pub const IdIndex = struct { id: u64, index: u16 };

/// Allocates with `allocator` (the pool instance's arena; `deinit` for tests).
pub fn init(shared: *Shared, allocator: std.mem.Allocator, pool: *const Config.Pool) !void {
    const backends = pool.backends();
    const members: u32 = @intCast(backends.len);
    assert(members > 0 and members <= Config.backends_count_max);
    shared.* = .{
        .health = try .init(allocator, pool),
        .maglev = null,
        .ids = try allocator.alloc(u64, members),
        .ids_sorted = try allocator.alloc(IdIndex, members),
        .weights = try allocator.alloc(u16, members),
        .active = try allocator.alloc(BitSet.Word, BitSet.wordsFor(members)),
        .connections = try allocator.alloc(std.atomic.Value(u32), members),
        .connections_max = try allocator.alloc(u32, members),
        .any_capped = false,
        .pending = try allocator.alloc(std.atomic.Value(u32), members),
        .pending_max = try allocator.alloc(u32, members),
        .any_pending_capped = false,
    };
    @memset(shared.active, 0);
    @memset(shared.connections, .init(0));
    @memset(shared.pending, .init(0));
    for (backends, 0..) |*backend, i| {
        shared.ids[i] = backendId(&backend.address);
        shared.ids_sorted[i] = .{ .id = shared.ids[i], .index = @intCast(i) };
        shared.weights[i] = backend.weight;
        if (backend.weight > 0) BitSet.set(shared.active, @intCast(i));
        shared.connections_max[i] = backend.max_connections;
        shared.pending_max[i] = backend.max_pending;
        if (backend.max_connections > 0) shared.any_capped = true;
        if (backend.max_pending > 0) shared.any_pending_capped = true;
    }
    std.mem.sort(IdIndex, shared.ids_sorted, {}, lessById);
    if (pool.strategy == .hash) {
        const maglev = try allocator.create(Maglev);
        maglev.* = try .init(allocator, shared.ids);
        shared.maglev = maglev;
    }
}

pub fn deinit(shared: *Shared, allocator: std.mem.Allocator) void {
    if (shared.maglev) |maglev| {
        maglev.deinit(allocator);
        allocator.destroy(maglev);
    }
    shared.health.deinit(allocator);
    allocator.free(shared.ids);
    allocator.free(shared.ids_sorted);
    allocator.free(shared.weights);
    allocator.free(shared.active);
    allocator.free(shared.connections);
    allocator.free(shared.connections_max);
    allocator.free(shared.pending);
    allocator.free(shared.pending_max);
    shared.* = undefined;
}

pub fn count(shared: *const Shared) u32 {
    return @intCast(shared.ids.len);
}

fn lessById(_: void, a: IdIndex, b: IdIndex) bool {
    return a.id < b.id;
}

/// A member's identity: a hash of its address, so it survives reordering the member list
/// and restarts (a client's sticky cookie keeps meaning the same member).
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

/// The member a sticky cookie value names, if it is one of ours: O(log n).
pub fn findIdText(shared: *const Shared, text: []const u8) ?u16 {
    if (text.len != id_text_bytes) return null;
    return shared.findId(std.fmt.parseInt(u64, text, 16) catch return null);
}

/// The member with id `id`, if any: O(log n).
pub fn findId(shared: *const Shared, id: u64) ?u16 {
    const at = std.sort.lowerBound(IdIndex, shared.ids_sorted, id, orderId);
    if (at == shared.ids_sorted.len or shared.ids_sorted[at].id != id) return null;
    return shared.ids_sorted[at].index;
}

fn orderId(id: u64, item: IdIndex) std.math.Order {
    return std.math.order(id, item.id);
}

/// Counts a new connection to member `index`; false (and nothing counted) when that would
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

/// Counts a request to member `index` if it has a `max_pending` cap; false (nothing
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

/// Member `index` is at its `max_pending` cap now.
pub fn atPendingCap(shared: *const Shared, index: u16) bool {
    const max = shared.pending_max[index];
    return max > 0 and shared.pending[index].load(.monotonic) >= max;
}

/// Member `index` is at its connection cap now.
pub fn atConnectionCap(shared: *const Shared, index: u16) bool {
    const max = shared.connections_max[index];
    return max > 0 and shared.connections[index].load(.monotonic) >= max;
}

test "shared: ids survive reordering and round-trip through cookie text" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var pool: Config.Pool = .{};
    try pool.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.1:80"), .max_connections = 1 });
    try pool.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.2:80") });
    var shared: Shared = undefined;
    try shared.init(std.testing.allocator, &pool);
    defer shared.deinit(std.testing.allocator);
    try std.testing.expect(shared.ids[0] != shared.ids[1]);
    for (0..2) |i| {
        const text = shared.idText(@intCast(i));
        try std.testing.expectEqual(@as(?u16, @intCast(i)), shared.findIdText(&text));
    }
    try std.testing.expectEqual(@as(?u16, null), shared.findIdText("zz"));
    try std.testing.expectEqual(@as(?u16, null), shared.findIdText("0123456789abcdef"));
    try std.testing.expectEqual(backendId(&pool.backends()[0].address), shared.ids[0]);

    try std.testing.expect(shared.tryOpen(0));
    try std.testing.expect(!shared.tryOpen(0));
    try std.testing.expect(shared.atConnectionCap(0) and !shared.atConnectionCap(1));
    shared.closed(0);
    try std.testing.expect(!shared.atConnectionCap(0));
    try std.testing.expect(shared.tryOpen(1) and shared.tryOpen(1)); // Uncapped.
}

test "shared: pending requests are capped and counted only where a cap is set" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var pool: Config.Pool = .{};
    try pool.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.1:80"), .max_pending = 2 });
    try pool.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.2:80") });
    var shared: Shared = undefined;
    try shared.init(std.testing.allocator, &pool);
    defer shared.deinit(std.testing.allocator);
    try std.testing.expect(shared.tryBeginRequest(0) and shared.tryBeginRequest(0));
    try std.testing.expect(!shared.tryBeginRequest(0));
    try std.testing.expect(shared.atPendingCap(0));
    shared.endRequest(0);
    try std.testing.expect(!shared.atPendingCap(0));
    try std.testing.expect(shared.tryBeginRequest(1));
    shared.endRequest(1);
    try std.testing.expectEqual(@as(u32, 0), shared.pending[1].load(.monotonic));
}
