//! A pool's membership, apart from its policy: which backends are in the pool now, as a table
//! of slots that the control thread publishes and every worker reads. A pool instance has a
//! fixed number of slots (its capacity, sized when it is built); each member sits in one slot
//! for as long as it is in the pool, and everything kept per member (health, connection
//! counts and caps, idle connections, in-flight counts, counters, the Maglev table, the
//! sticky cookie's id) is kept per slot. A change of membership (a reload that changes a
//! pool's list; later, DNS) publishes a new `Table` instead of building a new pool, so the
//! members that stay keep their health and their idle connections.
//!
//! The decisions a reader must know:
//! - **Tables are immutable and versioned.** The control thread builds a table (present
//!   members, weights, slot generations, sorted ids, Maglev) and publishes it with a release
//!   store; each worker adopts it between events (`LocalPool.adoptMembers`), closes its idle
//!   connections to slots that left or changed generation, and acknowledges the version. A
//!   table is freed once every worker has acknowledged a newer one: a pick never spans events.
//! - **A slot's identity changes only while the slot is free.** A removed member's slot
//!   drains: it is in no table published since, but what is in flight to it finishes and its
//!   busy connections close as they end. It becomes free once every worker has acknowledged a
//!   table without it and nothing of it is left (no request in flight on any worker, no
//!   connection open, no pending count). Only then may an added member take it, with the next
//!   generation: so a worker never reads a slot's address, id or caps while they are being
//!   written, and a connection or lease can never be mistaken for one to the new member.
//!   Connections remember their slot's generation anyway, and one whose generation is not
//!   the table's is closed instead of kept idle.
//! - **Added members join with fresh health** (up, serving, nothing counted); members that
//!   stay keep theirs. A change of a member's caps (`max_connections`, `max_pending`) is a
//!   removal and an addition (the caps are part of the slot's identity); a change of weight
//!   is not (weights are per table).
//! - **When a change does not fit** (more members than free slots, because removed ones are
//!   still draining), `apply` says so and changes nothing; a reload then builds a new pool
//!   instance as it did before membership had tables.
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const BitSet = @import("../stdx/BitSet.zig");
const Config = @import("../config/Config.zig");
const Maglev = @import("../balance/Maglev.zig");
const Balancer = @import("../balance/Balancer.zig");

const Members = @This();

/// The control thread's view of each slot.
states: []SlotState,
/// By slot: the generation of the member in it (one more every time the slot is taken).
generations: []u32,
/// By slot: the member's weight in the newest table.
weights: []u16,
/// Tables published and not freed yet, the newest last.
live: [live_max]*Table = undefined,
live_count: u32 = 0,
next_version: u32 = 1,

/// Tables alive at once: a change while this many wait for a worker to adopt a newer one is
/// refused (`error.Busy`) and tried again by its caller later.
pub const live_max = 8;

pub const SlotState = enum { free, member, draining };

/// One version of the membership, immutable once published.
pub const Table = struct {
    /// Its own arena, freed when every worker has moved past it; null for the first table,
    /// which lives in the pool instance's arena (no mmap of its own at a cold start).
    arena: ?std.heap.ArenaAllocator,
    version: u32,
    members_count: u32,
    /// By slot: a member with a weight above 0 (weight 0 drains): only these are candidates.
    active: []BitSet.Word,
    /// By slot: a member, whatever its weight.
    present: []BitSet.Word,
    /// By slot; 0 for a slot that holds no member.
    weights: []u16,
    /// By slot: the generation of the member in it (see `Members`).
    generations: []u32,
    /// The present members' ids, sorted: a sticky cookie's slot by binary search.
    ids_sorted: []IdIndex,
    /// Built over the present members for the `hash` strategy (null otherwise, or with no
    /// member).
    maglev: ?*Maglev,

    pub fn slotsCount(table: *const Table) u32 {
        return @intCast(table.weights.len);
    }

    pub fn isPresent(table: *const Table, index: u16) bool {
        return BitSet.isSet(table.present, index);
    }

    /// The present member with id `id`, if any: O(log n).
    pub fn findId(table: *const Table, id: u64) ?u16 {
        const at = std.sort.lowerBound(IdIndex, table.ids_sorted, id, orderId);
        if (at == table.ids_sorted.len or table.ids_sorted[at].id != id) return null;
        return table.ids_sorted[at].index;
    }

    fn deinit(table: *Table) void {
        var arena = table.arena orelse return; // The instance's arena frees it.
        arena.deinit();
    }
};

pub const IdIndex = struct { id: u64, index: u16 };

/// How many slots a pool of `members_count` gets: room for a whole second list beside the
/// first, so that a change replacing every member while the old ones drain still fits (a
/// Kubernetes rollout replaces every pod), with at least 8 and at most the 1,024 a pool may
/// have. About 200 B a slot (docs/ARCHITECTURE.md, "Membership").
pub fn slotsFor(members_count: u32) u32 {
    assert(members_count >= 1 and members_count <= Config.backends_count_max);
    return @min(Config.backends_count_max, @max(8, 2 * members_count));
}

/// The first `pool.backends_count` slots hold the configured members in order, generation 1;
/// the first table is built in `allocator` (the pool instance's arena) and returned (the
/// caller publishes it with the pool).
pub fn init(
    members: *Members,
    allocator: std.mem.Allocator,
    pool: *const Config.Pool,
    ids: []const u64,
    slots_count: u32,
) error{OutOfMemory}!*Table {
    assert(ids.len == slots_count);
    assert(pool.backends_count <= slots_count);
    members.* = .{
        .states = try allocator.alloc(SlotState, slots_count),
        .generations = try allocator.alloc(u32, slots_count),
        .weights = try allocator.alloc(u16, slots_count),
    };
    @memset(members.states, .free);
    @memset(members.generations, 0);
    @memset(members.weights, 0);
    for (pool.backends(), 0..) |*backend, i| {
        members.states[i] = .member;
        members.generations[i] = 1;
        members.weights[i] = backend.weight;
    }
    return members.publish(allocator, pool.strategy, ids) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.Busy => unreachable, // No table is live yet.
    };
}

pub fn deinit(members: *Members, allocator: std.mem.Allocator) void {
    members.freeTables();
    allocator.free(members.states);
    allocator.free(members.generations);
    allocator.free(members.weights);
    members.* = undefined;
}

/// Frees every live table (each has its own arena, outside the pool instance's): when the
/// instance is freed, no worker uses it any more.
pub fn freeTables(members: *Members) void {
    for (members.live[0..members.live_count]) |table| table.deinit();
    members.live_count = 0;
}

pub fn newest(members: *const Members) *Table {
    assert(members.live_count > 0);
    return members.live[members.live_count - 1];
}

/// A new table from the slots' states, weights and generations, kept as the newest live one.
/// The caller publishes it (`Shared.table`).
pub fn publishNext(members: *Members, strategy: Balancer.Strategy, ids: []const u64) error{ OutOfMemory, Busy }!*Table {
    if (members.live_count == live_max) return error.Busy;
    var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    errdefer arena_state.deinit();
    const table = try members.publish(arena_state.allocator(), strategy, ids);
    table.arena = arena_state;
    return table;
}

/// Builds the next table in `arena` and keeps it as the newest live one (its `arena` field
/// null: the caller's).
fn publish(members: *Members, arena: std.mem.Allocator, strategy: Balancer.Strategy, ids: []const u64) error{ OutOfMemory, Busy }!*Table {
    if (members.live_count == live_max) return error.Busy;
    const slots_count: u32 = @intCast(members.states.len);
    const table = try arena.create(Table);
    table.* = .{
        .arena = null,
        .version = members.next_version,
        .members_count = 0,
        .active = try arena.alloc(BitSet.Word, BitSet.wordsFor(slots_count)),
        .present = try arena.alloc(BitSet.Word, BitSet.wordsFor(slots_count)),
        .weights = try arena.alloc(u16, slots_count),
        .generations = try arena.dupe(u32, members.generations),
        .ids_sorted = &.{},
        .maglev = null,
    };
    @memset(table.active, 0);
    @memset(table.present, 0);
    @memset(table.weights, 0);
    for (members.states, 0..) |state, i| {
        if (state != .member) continue;
        table.members_count += 1;
        BitSet.set(table.present, @intCast(i));
        table.weights[i] = members.weights[i];
        if (members.weights[i] > 0) BitSet.set(table.active, @intCast(i));
    }
    table.ids_sorted = try arena.alloc(IdIndex, table.members_count);
    const present_ids = try arena.alloc(u64, table.members_count);
    const present_slots = try arena.alloc(u16, table.members_count);
    var at: u32 = 0;
    for (members.states, 0..) |state, i| {
        if (state != .member) continue;
        table.ids_sorted[at] = .{ .id = ids[i], .index = @intCast(i) };
        present_ids[at] = ids[i];
        present_slots[at] = @intCast(i);
        at += 1;
    }
    std.mem.sort(IdIndex, table.ids_sorted, {}, lessById);
    if (strategy == .hash and table.members_count > 0) {
        const maglev = try arena.create(Maglev);
        maglev.* = try .initSlots(arena, present_ids, present_slots, @intCast(slots_count));
        table.maglev = maglev;
    }
    members.next_version += 1;
    members.live[members.live_count] = table;
    members.live_count += 1;
    return table;
}

/// What `apply` decided for one slot.
pub const Change = struct {
    /// Slots whose member left (now draining).
    left: [Config.backends_count_max]u16 = undefined,
    left_count: u32 = 0,
    /// Slots taken by an added member, with the index in the new list of each.
    joined: [Config.backends_count_max]u16 = undefined,
    joined_from: [Config.backends_count_max]u16 = undefined,
    joined_count: u32 = 0,

    pub fn isEmpty(change: *const Change) bool {
        return change.left_count == 0 and change.joined_count == 0;
    }
};

/// The slot of each member of `list` found among the current members (`context.find(member)`:
/// the member slot holding it, by id in O(log n); `context.same(slot, member)` confirms), or
/// none for a member to add.
/// Fails with `error.Full` when the members to add outnumber the free slots; nothing is
/// changed then. Otherwise the states say what changed (`Change`) and the caller gives each
/// joined slot its identity before it publishes the next table.
pub fn apply(
    members: *Members,
    list: []const Config.Backend,
    context: anytype,
    change: *Change,
) error{Full}!void {
    assert(list.len <= Config.backends_count_max);
    var kept: [Config.backends_count_max]?u16 = undefined;
    var claimed: std.StaticBitSet(Config.backends_count_max) = .empty;
    var to_add: u32 = 0;
    for (list, 0..) |*backend, i| {
        kept[i] = null;
        if (context.find(backend)) |slot| {
            assert(context.same(slot, backend));
            if (members.states[slot] == .member and !claimed.isSet(slot)) {
                kept[i] = slot;
                claimed.set(slot);
            }
        }
        if (kept[i] == null) to_add += 1;
    }
    var free: u32 = 0;
    for (members.states) |state| free += @intFromBool(state == .free);
    if (to_add > free) return error.Full;

    change.* = .{};
    for (members.states, 0..) |*state, slot| {
        if (state.* != .member or claimed.isSet(slot)) continue;
        state.* = .draining;
        members.weights[slot] = 0;
        change.left[change.left_count] = @intCast(slot);
        change.left_count += 1;
    }
    var next_free: u32 = 0;
    for (list, 0..) |*backend, i| {
        if (kept[i]) |slot| {
            members.weights[slot] = backend.weight;
            continue;
        }
        while (members.states[next_free] != .free) next_free += 1;
        const slot: u16 = @intCast(next_free);
        members.states[slot] = .member;
        members.generations[slot] +%= 1;
        members.weights[slot] = backend.weight;
        change.joined[change.joined_count] = slot;
        change.joined_from[change.joined_count] = @intCast(i);
        change.joined_count += 1;
    }
    assert(change.joined_count == to_add);
}

/// The oldest version every worker has adopted (`acks`: each worker's acknowledged version).
pub fn adoptedByAll(acks: []const u32) u32 {
    var oldest: u32 = std.math.maxInt(u32);
    for (acks) |ack| oldest = @min(oldest, ack);
    return oldest;
}

/// Frees every table older than the one all workers have adopted (`oldest_adopted`). The
/// newest is never freed.
pub fn freeAdopted(members: *Members, oldest_adopted: u32) void {
    var kept: u32 = 0;
    for (members.live[0..members.live_count], 0..) |table, i| {
        const is_newest = i == members.live_count - 1;
        if (!is_newest and table.version < oldest_adopted) {
            table.deinit();
            continue;
        }
        members.live[kept] = table;
        kept += 1;
    }
    members.live_count = kept;
}

/// Whether some slot still drains.
pub fn anyDraining(members: *const Members) bool {
    return std.mem.indexOfScalar(SlotState, members.states, .draining) != null;
}

fn lessById(_: void, a: IdIndex, b: IdIndex) bool {
    return a.id < b.id;
}

fn orderId(id: u64, item: IdIndex) std.math.Order {
    return std.math.order(id, item.id);
}

const testing = std.testing;

const TestSame = struct {
    addresses: []const Address,
    states: []const SlotState,

    pub fn same(context: TestSame, slot: u16, backend: *const Config.Backend) bool {
        return context.addresses[slot].eql(&backend.address);
    }

    pub fn find(context: TestSame, backend: *const Config.Backend) ?u16 {
        for (context.addresses, context.states, 0..) |*address, state, slot| {
            if (state == .member and address.eql(&backend.address)) return @intCast(slot);
        }
        return null;
    }
};

test "members: a change keeps the members that stay in their slots and drains the others" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var pool: Config.Pool = .{ .strategy = .hash };
    for ([_][]const u8{ "10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80" }) |text| {
        try pool.addBackend(arena, .{ .address = try Address.parse(text) });
    }
    const slots_count = slotsFor(pool.backends_count);
    try testing.expectEqual(@as(u32, 8), slots_count);
    var addresses: [8]Address = undefined;
    var ids: [8]u64 = @splat(0);
    for (pool.backends(), 0..) |*backend, i| {
        addresses[i] = backend.address;
        ids[i] = i + 100;
    }
    var members: Members = undefined;
    const first = try members.init(arena, &pool, &ids, slots_count); // The first table too.
    defer members.deinit(arena);
    try testing.expectEqual(@as(u32, 3), first.members_count);
    try testing.expectEqual(@as(?u16, 1), first.findId(101));
    try testing.expect(first.maglev != null);

    // 10.0.0.2 leaves, 10.0.0.4 joins, 10.0.0.3's weight changes.
    const list = [_]Config.Backend{
        .{ .address = try Address.parse("10.0.0.1:80") },
        .{ .address = try Address.parse("10.0.0.3:80"), .weight = 5 },
        .{ .address = try Address.parse("10.0.0.4:80") },
    };
    var change: Change = undefined;
    try members.apply(&list, TestSame{ .addresses = &addresses, .states = members.states }, &change);
    try testing.expectEqual(@as(u32, 1), change.left_count);
    try testing.expectEqual(@as(u16, 1), change.left[0]);
    try testing.expectEqual(@as(u32, 1), change.joined_count);
    const joined = change.joined[0];
    try testing.expectEqual(@as(u16, 3), joined); // The first free slot, not the draining one.
    try testing.expectEqual(@as(u16, 2), change.joined_from[0]);
    addresses[joined] = list[2].address;
    ids[joined] = 103;
    const second = try members.publishNext(.hash, &ids);
    try testing.expect(second.version > first.version);
    try testing.expectEqual(@as(u32, 3), second.members_count);
    try testing.expect(!second.isPresent(1) and second.isPresent(3));
    try testing.expectEqual(@as(u16, 5), second.weights[2]);
    try testing.expectEqual(@as(?u16, null), second.findId(101));
    try testing.expectEqual(first.generations[0], second.generations[0]);
    try testing.expectEqual(members.states[1], .draining);
    // Maglev names only present slots.
    for (second.maglev.?.table) |slot| try testing.expect(second.isPresent(slot));

    // A whole new list of 8 does not fit while slot 1 drains: nothing changes.
    var eight: [8]Config.Backend = undefined;
    for (&eight, 0..) |*backend, i| {
        var text_buffer: [32]u8 = undefined;
        const text = try std.fmt.bufPrint(&text_buffer, "10.0.1.{d}:80", .{i});
        backend.* = .{ .address = try Address.parse(text) };
    }
    try testing.expectError(error.Full, members.apply(&eight, TestSame{ .addresses = &addresses, .states = members.states }, &change));
    try testing.expectEqual(members.states[0], .member);

    // Once every worker has adopted the second table, the first is freed.
    members.freeAdopted(adoptedByAll(&.{ second.version, second.version }));
    try testing.expectEqual(@as(u32, 1), members.live_count);
    try testing.expectEqual(second, members.newest());
}
