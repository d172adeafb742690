//! What every worker shares about one pool, built by the control thread with the pool
//! instance: the members' health (written by active checks and by exchange outcomes), the
//! published membership table (upstream/Members.zig: who is in the pool, weights, Maglev),
//! each slot's address and stable id (the sticky cookie's value and Maglev's identity for
//! it), and the connections open to each member across all workers, which is what a member's
//! `max_connections` caps.
//!
//! Decision: connection counts are shared atomics, not per-worker shares of the cap, so a cap
//! means what the operator wrote whatever the worker count. They change when a connection
//! opens or closes, not per request, so keep-alive traffic never touches them.
//!
//! Sizing: every array has one entry per slot, allocated from the pool's count when the
//! instance is built (no fixed maximum on the path; see docs/ARCHITECTURE.md, "Membership").
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const BitSet = @import("../stdx/BitSet.zig");
const Config = @import("../config/Config.zig");
const Health = @import("../health/Health.zig");
const Members = @import("Members.zig");

const Shared = @This();

health: Health,
/// By slot: the member's address and stable id (a hash of its address text: the sticky
/// cookie's value and Maglev's identity for it). Written by the control thread only while the
/// slot is free (upstream/Members.zig), read by workers for members of their table.
addresses: []Address,
ids: []u64,
/// The newest membership table: stored (release) by the control thread, loaded (acquire) by
/// each worker between events (`LocalPool.adoptMembers`).
table: std.atomic.Value(*const Members.Table),
/// The control thread's side of the membership: slot states, live tables.
members: Members,
connections: []std.atomic.Value(u32),
connections_max: []u32,
/// Some member has a connection cap: only then does a pick look at the counts. Set (never
/// cleared) by the control thread when such a member joins.
any_capped: std.atomic.Value(bool),
/// Requests in flight per member, counted only for members with a `max_pending` cap (so an
/// uncapped pool never writes shared memory per request).
pending: []std.atomic.Value(u32),
pending_max: []u32,
any_pending_capped: std.atomic.Value(bool),

pub const IdIndex = Members.IdIndex;

/// Allocates with `allocator` (the pool instance's arena; `deinit` for tests): one entry per
/// slot, `Members.slotsFor` the pool's member count, the configured members in the first.
pub fn init(shared: *Shared, allocator: std.mem.Allocator, pool: *const Config.Pool) !void {
    const backends = pool.backends();
    const members_count: u32 = @intCast(backends.len);
    assert(members_count <= Config.backends_count_max);
    // A pool of names may have no member yet (runtime/Dns.zig sets `member_slots`).
    assert(members_count > 0 or pool.member_slots > 0);
    const slots_count = if (pool.member_slots > 0) pool.member_slots else Members.slotsFor(members_count);
    assert(members_count <= slots_count);
    shared.* = .{
        .health = try .init(allocator, pool, slots_count),
        .addresses = try allocator.alloc(Address, slots_count),
        .ids = try allocator.alloc(u64, slots_count),
        .table = undefined,
        .members = undefined,
        .connections = try allocator.alloc(std.atomic.Value(u32), slots_count),
        .connections_max = try allocator.alloc(u32, slots_count),
        .any_capped = .init(false),
        .pending = try allocator.alloc(std.atomic.Value(u32), slots_count),
        .pending_max = try allocator.alloc(u32, slots_count),
        .any_pending_capped = .init(false),
    };
    @memset(shared.connections, .init(0));
    @memset(shared.pending, .init(0));
    @memset(shared.ids, 0);
    @memset(shared.connections_max, 0);
    @memset(shared.pending_max, 0);
    for (backends, 0..) |*backend, i| shared.setIdentity(@intCast(i), backend);
    const first = try shared.members.init(allocator, pool, shared.ids, slots_count);
    shared.table = .init(first);
}

/// Slot `index` holds `backend` from now on: its address, id and caps. The control thread,
/// while the slot is free (or before the pool is published).
pub fn setIdentity(shared: *Shared, index: u16, backend: *const Config.Backend) void {
    shared.addresses[index] = backend.address;
    shared.ids[index] = backendId(&backend.address);
    shared.connections_max[index] = backend.max_connections;
    shared.pending_max[index] = backend.max_pending;
    if (backend.max_connections > 0) shared.any_capped.store(true, .release);
    if (backend.max_pending > 0) shared.any_pending_capped.store(true, .release);
}

/// Whether slot `index` holds `backend` as configured (address and caps): a member a change
/// keeps in its slot.
pub fn same(shared: *const Shared, index: u16, backend: *const Config.Backend) bool {
    return shared.addresses[index].eql(&backend.address) and
        shared.connections_max[index] == backend.max_connections and
        shared.pending_max[index] == backend.max_pending;
}

pub fn deinit(shared: *Shared, allocator: std.mem.Allocator) void {
    shared.members.deinit(allocator);
    shared.health.deinit(allocator);
    allocator.free(shared.addresses);
    allocator.free(shared.ids);
    allocator.free(shared.connections);
    allocator.free(shared.connections_max);
    allocator.free(shared.pending);
    allocator.free(shared.pending_max);
    shared.* = undefined;
}

/// Slots (the pool's capacity), not members.
pub fn count(shared: *const Shared) u32 {
    return @intCast(shared.ids.len);
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

/// The member a sticky cookie value names in `table`, if it is one of ours: O(log n).
pub fn findIdText(table: *const Members.Table, text: []const u8) ?u16 {
    if (text.len != id_text_bytes) return null;
    return table.findId(std.fmt.parseInt(u64, text, 16) catch return null);
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
    try shared.init(test_arena.allocator(), &pool); // The first table lives in it.
    defer shared.deinit(test_arena.allocator());
    try std.testing.expect(shared.ids[0] != shared.ids[1]);
    const table = shared.table.load(.acquire);
    for (0..2) |i| {
        const text = shared.idText(@intCast(i));
        try std.testing.expectEqual(@as(?u16, @intCast(i)), findIdText(table, &text));
    }
    try std.testing.expectEqual(@as(?u16, null), findIdText(table, "zz"));
    try std.testing.expectEqual(@as(?u16, null), findIdText(table, "0123456789abcdef"));
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
    try shared.init(test_arena.allocator(), &pool); // The first table lives in it.
    defer shared.deinit(test_arena.allocator());
    try std.testing.expect(shared.tryBeginRequest(0) and shared.tryBeginRequest(0));
    try std.testing.expect(!shared.tryBeginRequest(0));
    try std.testing.expect(shared.atPendingCap(0));
    shared.endRequest(0);
    try std.testing.expect(!shared.atPendingCap(0));
    try std.testing.expect(shared.tryBeginRequest(1));
    shared.endRequest(1);
    try std.testing.expectEqual(@as(u32, 0), shared.pending[1].load(.monotonic));
}
