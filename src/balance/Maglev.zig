//! Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network
//! Load Balancer", NSDI 2016, section 3.4): a lookup table of a fixed prime number of slots,
//! each naming a backend, filled so every backend owns an equal share and a change of the
//! backend set moves about 1/n of the keys.
//!
//! The one decision to know: a backend that is not a candidate (unhealthy, full, already tried)
//! is skipped by walking forward from the key's slot to the next slot whose backend is a
//! candidate. The table is not rebuilt, so keys of healthy backends never move, and the keys
//! of a missing backend spread over the others in proportion to their slots. Weights are not
//! used: for hashing a weight only drains (0), and the caller masks drained backends out of
//! the candidates. The caller allocates one table at start-up (16 KiB) and shares it
//! read-only between threads; `build` is the only writer.
const std = @import("std");
const mask_ns = @import("../stdx/mask.zig");
const assert = std.debug.assert;

const Maglev = @This();

/// Slot i names the backend (an index into the `ids` given to `build`) that owns keys with
/// `key % table_size == i`.
table: [table_size]u8,
backends_count: u8,

/// Prime, so every skip in [1, table_size - 1] walks a full permutation of the slots. About
/// 256 slots per backend at `backends_max`, which keeps the shares within 0.4% of each other.
pub const table_size = 16381;
pub const backends_max = 64;

const slot_empty = std.math.maxInt(u8);
const seed_offset = 0x4d61676c65762d6f; // "Maglev-o"
const seed_skip = 0x4d61676c65762d73; // "Maglev-s"

comptime {
    assert(backends_max < slot_empty);
    assert(table_size < std.math.maxInt(u32) / 2);
}

/// Fills the table for backends 0..ids.len-1. `ids[i]` is a stable identity of backend i (a
/// hash of its address), so that a backend keeps its slots when others are added or removed,
/// even though its index may change. Equal ids share a permutation and still fill the table.
pub fn build(maglev: *Maglev, ids: []const u64) void {
    assert(ids.len >= 1);
    assert(ids.len <= backends_max);

    // Per backend: its next slot in its permutation, the permutation's step, and how many
    // entries of the permutation it has consumed (a permutation has table_size entries).
    var slot: [backends_max]u32 = undefined;
    var skip: [backends_max]u32 = undefined;
    var next: [backends_max]u32 = @splat(0);
    for (ids, 0..) |id, index| {
        slot[index] = @intCast(hashId(seed_offset, id) % table_size);
        skip[index] = @intCast(hashId(seed_skip, id) % (table_size - 1) + 1);
    }

    @memset(&maglev.table, slot_empty);
    maglev.backends_count = @intCast(ids.len);
    var filled: u32 = 0;
    var rounds: u32 = 0;
    while (filled < table_size) : (rounds += 1) {
        assert(rounds < table_size); // Every round fills a slot per backend.
        for (0..ids.len) |index| {
            maglev.claim(@intCast(index), &slot[index], skip[index], &next[index]);
            filled += 1;
            if (filled == table_size) break;
        }
    }
    maglev.assertShares();
}

/// The backend owning `key`, or the first candidate after it in the table. Null when no
/// backend in the table is a candidate.
pub fn lookup(maglev: *const Maglev, key: u64, candidates: u64) ?u16 {
    assert(maglev.backends_count >= 1);
    assert(maglev.backends_count <= backends_max);
    const present = candidates & maskFirst(maglev.backends_count);
    if (present == 0) return null;

    var slot: u32 = @intCast(key % table_size);
    var steps: u32 = 0;
    while (steps < table_size) : (steps += 1) {
        const index = maglev.table[slot];
        assert(index < maglev.backends_count);
        if (present & bit(index) != 0) return index;
        slot += 1;
        if (slot == table_size) slot = 0;
    }
    unreachable; // Every backend owns at least one slot (`assertShares`).
}

/// Gives backend `index` the next empty slot in its permutation (the paper's inner loop).
fn claim(maglev: *Maglev, index: u8, slot: *u32, skip: u32, next: *u32) void {
    assert(skip >= 1 and skip < table_size);
    while (maglev.table[slot.*] != slot_empty) {
        assert(next.* < table_size); // A permutation visits every slot, so one is empty.
        next.* += 1;
        slot.* = step(slot.*, skip);
    }
    maglev.table[slot.*] = index;
    next.* += 1;
    slot.* = step(slot.*, skip);
}

/// The next slot of a permutation: `(slot + skip) % table_size` without the division, which
/// dominates the build otherwise (both terms are below table_size, so one subtraction does).
fn step(slot: u32, skip: u32) u32 {
    assert(slot < table_size);
    assert(skip < table_size);
    const sum = slot + skip;
    return if (sum >= table_size) sum - table_size else sum;
}

/// Filling in rounds gives every backend floor(M/n) slots and the first M mod n one more.
fn assertShares(maglev: *const Maglev) void {
    var shares: [backends_max]u32 = @splat(0);
    for (maglev.table) |index| {
        assert(index < maglev.backends_count);
        shares[index] += 1;
    }
    const count: u32 = maglev.backends_count;
    const share_min = table_size / count;
    const share_extra = table_size % count;
    for (shares[0..maglev.backends_count], 0..) |share, index| {
        assert(share == share_min + @intFromBool(index < share_extra));
    }
}

/// Hashes the id's little-endian bytes, so tables agree across machines of any endianness.
fn hashId(seed: u64, id: u64) u64 {
    var bytes: [8]u8 = undefined;
    std.mem.writeInt(u64, &bytes, id, .little);
    return std.hash.Wyhash.hash(seed, &bytes);
}

const bit = mask_ns.bit;
const maskFirst = mask_ns.first;

const testing = std.testing;

fn testIds(ids: []u64, seed: u64) void {
    var prng: std.Random.DefaultPrng = .init(seed);
    for (ids) |*id| id.* = prng.next();
}

/// The id of the backend owning `key`, so tables built from different id lists compare.
fn ownerId(maglev: *const Maglev, ids: []const u64, key: u64, candidates: u64) u64 {
    return ids[maglev.lookup(key, candidates).?];
}

test "balance: Maglev size" {
    try testing.expectEqual(table_size + 1, @sizeOf(Maglev));
}

test "balance: maglev gives every backend an equal share of the table" {
    var maglev: Maglev = undefined;
    for ([_]u32{ 1, 2, 10, 63, 64 }) |count| {
        var ids: [backends_max]u64 = undefined;
        testIds(ids[0..count], count);
        maglev.build(ids[0..count]); // `assertShares` checks the postcondition...
        var shares: [backends_max]u32 = @splat(0);
        for (maglev.table) |index| shares[index] += 1;
        for (shares[0..count]) |share| {
            // ...and this states it without the module's arithmetic.
            try testing.expect(share == table_size / count or share == table_size / count + 1);
        }
    }
}

test "balance: maglev maps a key to the same backend every time" {
    var maglev: Maglev = undefined;
    var ids: [10]u64 = undefined;
    testIds(&ids, 1);
    maglev.build(&ids);
    var again: Maglev = undefined;
    again.build(&ids);
    try testing.expectEqualSlices(u8, &maglev.table, &again.table);

    var prng: std.Random.DefaultPrng = .init(2);
    for (0..1000) |_| {
        const key = prng.next();
        const first = maglev.lookup(key, maskFirst(10)).?;
        try testing.expectEqual(first, maglev.lookup(key, maskFirst(10)).?);
        try testing.expectEqual(first, again.lookup(key, maskFirst(10)).?);
    }
}

test "balance: maglev spreads random keys evenly over 10 backends" {
    var maglev: Maglev = undefined;
    var ids: [10]u64 = undefined;
    testIds(&ids, 3);
    maglev.build(&ids);

    var prng: std.Random.DefaultPrng = .init(4);
    var counts: [10]u32 = @splat(0);
    const keys_count = 100_000;
    for (0..keys_count) |_| counts[maglev.lookup(prng.next(), maskFirst(10)).?] += 1;
    for (counts) |count| {
        // 10% each; the binomial standard deviation is 0.09 percentage points.
        try testing.expect(count > keys_count * 9 / 100 and count < keys_count * 11 / 100);
    }
}

test "balance: maglev moves about 1/n of the keys when a backend is removed" {
    var ids: [10]u64 = undefined;
    testIds(&ids, 5);
    var before: Maglev = undefined;
    before.build(&ids);
    // Remove backend 3: later backends shift down an index, which is why owners compare by id.
    var ids_after: [9]u64 = undefined;
    @memcpy(ids_after[0..3], ids[0..3]);
    @memcpy(ids_after[3..], ids[4..]);
    var after: Maglev = undefined;
    after.build(&ids_after);

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

test "balance: maglev moves about 1/n of the keys when a backend is added" {
    var ids: [11]u64 = undefined;
    testIds(&ids, 7);
    var before: Maglev = undefined;
    before.build(ids[0..10]);
    var after: Maglev = undefined;
    after.build(&ids);

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
    // The new backend takes 1/11 of the keys; few others move between the old ones.
    try testing.expect(moved < keys_count * 15 / 100);
    try testing.expect(moved_to_new >= moved * 80 / 100);
}

test "balance: maglev masking a backend out moves only that backend's keys" {
    var maglev: Maglev = undefined;
    var ids: [10]u64 = undefined;
    testIds(&ids, 9);
    maglev.build(&ids);

    const all = maskFirst(10);
    const without_4 = all & ~bit(4);
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
    // Backend 4's ~10,000 keys land on every other backend, not on one neighbour.
    for (spread, 0..) |count, index| {
        if (index != 4) try testing.expect(count > 500);
    }
}

test "balance: maglev lookup is null only when no backend in the table is a candidate" {
    var maglev: Maglev = undefined;
    var ids: [backends_max]u64 = undefined;
    testIds(&ids, 11);
    maglev.build(&ids);
    var prng: std.Random.DefaultPrng = .init(12);
    for (0..1000) |_| {
        const key = prng.next();
        try testing.expectEqual(@as(?u16, null), maglev.lookup(key, 0));
        const only: u16 = @intCast(prng.next() % backends_max);
        try testing.expectEqual(@as(?u16, only), maglev.lookup(key, bit(only)));
        const candidates = prng.next();
        const owner = maglev.lookup(key, candidates);
        try testing.expect(candidates == 0 or candidates & bit(owner.?) != 0);
    }

    maglev.build(ids[0..3]);
    try testing.expectEqual(@as(?u16, null), maglev.lookup(1, ~maskFirst(3)));
    try testing.expectEqual(@as(?u16, 2), maglev.lookup(1, bit(2) | ~maskFirst(3)));
}
