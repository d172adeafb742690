//! Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network
//! Load Balancer", NSDI 2016, section 3.4): a lookup table of a prime number of slots, each
//! naming a member, filled so every member owns an equal share and a change of the member set
//! moves about 1/n of the keys.
//!
//! The one decision to know: a member that is not a candidate (unhealthy, full, already tried)
//! is skipped by walking forward from the key's slot to the next slot whose member is a
//! candidate. The table is not rebuilt, so keys of healthy members never move, and the keys
//! of a missing member spread over the others in proportion to their slots. Weights are not
//! used: for hashing a weight only drains (0), and the caller leaves drained members out of
//! the candidates. The table is sized from the member count when the pool is built (about 256
//! slots per member: 16381 slots up to 64 members, 262147 for 1,024; two bytes a slot),
//! allocated by the pool, and shared read-only between threads; `init` is the only writer.
const std = @import("std");
const assert = std.debug.assert;

const Maglev = @This();

/// Slot i names the member (an index into the `ids` given to `init`) that owns keys with
/// `key % table.len == i`.
table: []u16,
backends_count: u16,

/// Primes, so every skip in [1, size - 1] walks a full permutation of the slots; the first
/// that gives at least 256 slots per member (shares within 0.4% of each other) is used.
pub const table_sizes = [_]u32{ 16381, 65537, 262147 };
pub const backends_max = table_sizes[table_sizes.len - 1] / 256;
/// How far a lookup walks the table before it looks at the candidates in member order: with
/// most members candidates the walk ends in a step or two.
const walk_steps_max = 64;

const slot_empty = std.math.maxInt(u16);
const seed_offset = 0x4d61676c65762d6f; // "Maglev-o"
const seed_skip = 0x4d61676c65762d73; // "Maglev-s"

comptime {
    assert(backends_max >= 1024);
    assert(backends_max < slot_empty);
    assert(table_sizes[table_sizes.len - 1] < std.math.maxInt(u32) / 2);
}

pub fn tableSizeFor(count: u32) u32 {
    assert(count >= 1 and count <= backends_max);
    for (table_sizes) |size| if (size / 256 >= count or size == table_sizes[table_sizes.len - 1]) return size;
    unreachable;
}

/// Fills a table for members 0..ids.len-1, allocated with `allocator`. `ids[i]` is a stable
/// identity of member i (a hash of its address), so that a member keeps its slots when others
/// are added or removed, even though its index may change. Equal ids share a permutation and
/// still fill the table.
pub fn init(allocator: std.mem.Allocator, ids: []const u64) error{OutOfMemory}!Maglev {
    return initSlots(allocator, ids, null, @intCast(ids.len));
}

/// As `init`, for members that sit in slots of a larger pool (upstream/Members.zig): member i
/// is named by its slot, `slots[i]` (< `slots_count`), in the table; null: member i is slot i.
pub fn initSlots(
    allocator: std.mem.Allocator,
    ids: []const u64,
    slots: ?[]const u16,
    slots_count: u16,
) error{OutOfMemory}!Maglev {
    assert(ids.len >= 1);
    assert(ids.len <= slots_count and slots_count <= backends_max);
    if (slots) |named| assert(named.len == ids.len);
    const table_size = tableSizeFor(@intCast(ids.len));
    var maglev: Maglev = .{
        .table = try allocator.alloc(u16, table_size),
        .backends_count = slots_count,
    };
    errdefer allocator.free(maglev.table);
    // Per member: its next slot in its permutation, the permutation's step, and how many
    // entries of the permutation it has consumed (a permutation has table_size entries).
    const state = try allocator.alloc([3]u32, ids.len);
    defer allocator.free(state);
    for (ids, state) |id, *member| {
        member.* = .{
            @intCast(hashId(seed_offset, id) % table_size),
            @intCast(hashId(seed_skip, id) % (table_size - 1) + 1),
            0,
        };
    }

    @memset(maglev.table, slot_empty);
    var filled: u32 = 0;
    var rounds: u32 = 0;
    while (filled < table_size) : (rounds += 1) {
        assert(rounds < table_size); // Every round fills a slot per member.
        for (state, 0..) |*member, index| {
            const named: u16 = if (slots) |named| named[index] else @intCast(index);
            assert(named < slots_count);
            maglev.claim(named, &member[0], member[1], &member[2]);
            filled += 1;
            if (filled == table_size) break;
        }
    }
    maglev.assertShares();
    return maglev;
}

pub fn deinit(maglev: *Maglev, allocator: std.mem.Allocator) void {
    allocator.free(maglev.table);
    maglev.* = undefined;
}

/// The member owning `key`, or the first candidate after it in the table; after
/// `walk_steps_max` slots without one, the first candidate at or after the key's owner in
/// member order (`candidates.next`), so a lookup is bounded whatever the candidates and still
/// the same for the same key while they do not change. Null when no member is a candidate.
/// `candidates` has `contains(u16) bool` and `next(u16) ?u16` (first candidate at or after,
/// wrapping).
pub fn lookup(maglev: *const Maglev, key: u64, candidates: anytype) ?u16 {
    assert(maglev.backends_count >= 1);
    const table_size: u32 = @intCast(maglev.table.len);
    const first_slot: u32 = @intCast(key % table_size);
    var slot = first_slot;
    for (0..walk_steps_max) |_| {
        const index = maglev.table[slot];
        assert(index < maglev.backends_count);
        if (candidates.contains(index)) return index;
        slot += 1;
        if (slot == table_size) slot = 0;
    }
    return candidates.next(maglev.table[first_slot]);
}

/// Gives backend `index` the next empty slot in its permutation (the paper's inner loop).
fn claim(maglev: *Maglev, index: u16, slot: *u32, skip: u32, next: *u32) void {
    const table_size: u32 = @intCast(maglev.table.len);
    assert(skip >= 1 and skip < table_size);
    while (maglev.table[slot.*] != slot_empty) {
        assert(next.* < table_size); // A permutation visits every slot, so one is empty.
        next.* += 1;
        slot.* = step(slot.*, skip, table_size);
    }
    maglev.table[slot.*] = index;
    next.* += 1;
    slot.* = step(slot.*, skip, table_size);
}

/// The next slot of a permutation: `(slot + skip) % table_size` without the division, which
/// dominates the build otherwise (both terms are below table_size, so one subtraction does).
fn step(slot: u32, skip: u32, table_size: u32) u32 {
    assert(slot < table_size);
    assert(skip < table_size);
    const sum = slot + skip;
    return if (sum >= table_size) sum - table_size else sum;
}

/// Filling in rounds gives every backend floor(M/n) slots and the first M mod n one more.
/// Checked in Debug and ReleaseSafe builds only: it walks the whole table.
fn assertShares(maglev: *const Maglev) void {
    if (!std.debug.runtime_safety) return;
    const count: u32 = maglev.backends_count;
    const table_size: u32 = @intCast(maglev.table.len);
    const share_min = table_size / count;
    const share_extra = table_size % count;
    assert(share_min * count + share_extra == table_size);
    // Every slot filled (none is `slot_empty`) with a member; the shares are the test's.
    for (maglev.table) |index| assert(index < count);
}

/// Hashes the id's little-endian bytes, so tables agree across machines of any endianness.
fn hashId(seed: u64, id: u64) u64 {
    var bytes: [8]u8 = undefined;
    std.mem.writeInt(u64, &bytes, id, .little);
    return std.hash.Wyhash.hash(seed, &bytes);
}

const testing = std.testing;
const BitSet = @import("../stdx/BitSet.zig");

/// Candidates as a set of bits (tests of this file and Balancer's).
pub const TestCandidates = struct {
    words: []const u64,
    count: u32,

    pub fn contains(candidates: TestCandidates, index: u16) bool {
        return index < candidates.count and BitSet.isSet(candidates.words, index);
    }

    pub fn next(candidates: TestCandidates, from: u16) ?u16 {
        const index = BitSet.nextSet(candidates.words, candidates.count, from) orelse return null;
        return @intCast(index);
    }
};

fn testIds(ids: []u64, seed: u64) void {
    var prng: std.Random.DefaultPrng = .init(seed);
    for (ids) |*id| id.* = prng.next();
}

fn only(words: *[1]u64, mask: u64, count: u32) TestCandidates {
    words[0] = mask;
    return .{ .words = words, .count = count };
}

fn maskFirst(count: u32) u64 {
    return if (count == 64) ~@as(u64, 0) else (@as(u64, 1) << @intCast(count)) - 1;
}

/// The id of the member owning `key`, so tables built from different id lists compare.
fn ownerId(maglev: *const Maglev, ids: []const u64, key: u64, mask: u64) u64 {
    var words: [1]u64 = undefined;
    return ids[maglev.lookup(key, only(&words, mask, maglev.backends_count)).?];
}

test "balance: maglev gives every member an equal share of the table" {
    for ([_]u32{ 1, 2, 10, 63, 64, 65, 300, 1024 }) |count| {
        const ids = try testing.allocator.alloc(u64, count);
        defer testing.allocator.free(ids);
        testIds(ids, count);
        var maglev: Maglev = try .init(testing.allocator, ids);
        defer maglev.deinit(testing.allocator);
        const table_size: u32 = @intCast(maglev.table.len);
        try testing.expect(table_size / count >= 256 or table_size == table_sizes[0]);
        const shares = try testing.allocator.alloc(u32, count);
        defer testing.allocator.free(shares);
        @memset(shares, 0);
        for (maglev.table) |index| shares[index] += 1;
        for (shares) |share| {
            try testing.expect(share == table_size / count or share == table_size / count + 1);
        }
    }
}

test "balance: maglev maps a key to the same member every time" {
    var ids: [10]u64 = undefined;
    testIds(&ids, 1);
    var maglev: Maglev = try .init(testing.allocator, &ids);
    defer maglev.deinit(testing.allocator);
    var again: Maglev = try .init(testing.allocator, &ids);
    defer again.deinit(testing.allocator);
    try testing.expectEqualSlices(u16, maglev.table, again.table);

    var prng: std.Random.DefaultPrng = .init(2);
    var words: [1]u64 = undefined;
    const all = only(&words, maskFirst(10), 10);
    for (0..1000) |_| {
        const key = prng.next();
        const first = maglev.lookup(key, all).?;
        try testing.expectEqual(first, maglev.lookup(key, all).?);
        try testing.expectEqual(first, again.lookup(key, all).?);
    }
}

test "balance: maglev spreads random keys evenly over 10 members" {
    var ids: [10]u64 = undefined;
    testIds(&ids, 3);
    var maglev: Maglev = try .init(testing.allocator, &ids);
    defer maglev.deinit(testing.allocator);

    var prng: std.Random.DefaultPrng = .init(4);
    var counts: [10]u32 = @splat(0);
    var words: [1]u64 = undefined;
    const keys_count = 100_000;
    for (0..keys_count) |_| counts[maglev.lookup(prng.next(), only(&words, maskFirst(10), 10)).?] += 1;
    for (counts) |count| {
        // 10% each; the binomial standard deviation is 0.09 percentage points.
        try testing.expect(count > keys_count * 9 / 100 and count < keys_count * 11 / 100);
    }
}

test "balance: maglev moves about 1/n of the keys when a member is removed" {
    var ids: [10]u64 = undefined;
    testIds(&ids, 5);
    var before: Maglev = try .init(testing.allocator, &ids);
    defer before.deinit(testing.allocator);
    // Remove member 3: later members shift down an index, which is why owners compare by id.
    var ids_after: [9]u64 = undefined;
    @memcpy(ids_after[0..3], ids[0..3]);
    @memcpy(ids_after[3..], ids[4..]);
    var after: Maglev = try .init(testing.allocator, &ids_after);
    defer after.deinit(testing.allocator);

    var prng: std.Random.DefaultPrng = .init(6);
    var moved: u32 = 0;
    var survivors: u32 = 0;
    var survivors_stayed: u32 = 0;
    const keys_count = 100_000;
    for (0..keys_count) |_| {
        const key = prng.next();
        const owner_before = ownerId(&before, &ids, key, maskFirst(10));
        const owner_after = ownerId(&after, &ids_after, key, maskFirst(9));
        moved += @intFromBool(owner_before != owner_after);
        if (owner_before != ids[3]) {
            survivors += 1;
            survivors_stayed += @intFromBool(owner_before == owner_after);
        }
    }
    try testing.expect(moved < keys_count * 15 / 100);
    try testing.expect(survivors_stayed >= survivors * 95 / 100);
}

test "balance: maglev moves about 1/n of the keys when a member is added" {
    var ids: [11]u64 = undefined;
    testIds(&ids, 7);
    var before: Maglev = try .init(testing.allocator, ids[0..10]);
    defer before.deinit(testing.allocator);
    var after: Maglev = try .init(testing.allocator, &ids);
    defer after.deinit(testing.allocator);

    var prng: std.Random.DefaultPrng = .init(8);
    var moved: u32 = 0;
    var moved_to_new: u32 = 0;
    const keys_count = 100_000;
    for (0..keys_count) |_| {
        const key = prng.next();
        const owner_before = ownerId(&before, ids[0..10], key, maskFirst(10));
        const owner_after = ownerId(&after, &ids, key, maskFirst(11));
        moved += @intFromBool(owner_before != owner_after);
        moved_to_new += @intFromBool(owner_before != owner_after and owner_after == ids[10]);
    }
    // The new member takes 1/11 of the keys; few others move between the old ones.
    try testing.expect(moved < keys_count * 15 / 100);
    try testing.expect(moved_to_new >= moved * 80 / 100);
}

test "balance: maglev leaving a member out moves only that member's keys" {
    var ids: [10]u64 = undefined;
    testIds(&ids, 9);
    var maglev: Maglev = try .init(testing.allocator, &ids);
    defer maglev.deinit(testing.allocator);

    var all_words: [1]u64 = undefined;
    var without_words: [1]u64 = undefined;
    const all = only(&all_words, maskFirst(10), 10);
    const without_4 = only(&without_words, maskFirst(10) & ~BitSet.bit(4), 10);
    var prng: std.Random.DefaultPrng = .init(10);
    var spread: [10]u32 = @splat(0);
    for (0..100_000) |_| {
        const key = prng.next();
        const owner = maglev.lookup(key, all).?;
        const owner_masked = maglev.lookup(key, without_4).?;
        try testing.expect(owner_masked != 4);
        if (owner != 4) try testing.expectEqual(owner, owner_masked);
        if (owner == 4) spread[owner_masked] += 1;
    }
    // Member 4's ~10,000 keys land on every other member, not on one neighbour.
    for (spread, 0..) |count, index| {
        if (index != 4) try testing.expect(count > 500);
    }
}

test "balance: maglev lookup is null only when no member is a candidate, and bounded" {
    var ids: [64]u64 = undefined;
    testIds(&ids, 11);
    var maglev: Maglev = try .init(testing.allocator, &ids);
    defer maglev.deinit(testing.allocator);
    var prng: std.Random.DefaultPrng = .init(12);
    var words: [1]u64 = undefined;
    for (0..1000) |_| {
        const key = prng.next();
        try testing.expectEqual(@as(?u16, null), maglev.lookup(key, only(&words, 0, 64)));
        const one: u16 = @intCast(prng.next() % 64);
        try testing.expectEqual(@as(?u16, one), maglev.lookup(key, only(&words, BitSet.bit(one), 64)));
        const mask = prng.next();
        const owner = maglev.lookup(key, only(&words, mask, 64));
        try testing.expect(mask == 0 or mask & BitSet.bit(owner.?) != 0);
        // The same key and candidates: the same member.
        try testing.expectEqual(owner, maglev.lookup(key, only(&words, mask, 64)));
    }
}
