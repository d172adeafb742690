//! Which backend of a pool serves the next request: one `Balancer` per worker and pool, a plain
//! value that never allocates, because `pick` runs on every request. Workers share nothing, so
//! each strategy is exact per worker and only approximate across workers.
//!
//! The one decision to know: sets of backends are `u64` bit masks (bit i is backend i, at most
//! 64 backends). The caller says which backends may be chosen for this request (healthy, under
//! their connection caps, not yet tried) and the balancer only chooses among them, so a retry
//! is the same call with the tried backend's bit cleared. A weight of 0 drains a backend: it
//! is masked out here whatever the caller passes.
const std = @import("std");
const mask_ns = @import("../stdx/mask.zig");
const assert = std.debug.assert;

const Maglev = @import("Maglev.zig");

const Balancer = @This();

strategy: Strategy,
backends_count: u8,
/// Round robin (and sticky's fallback): the backend to consider first on the next pick.
cursor: u6,
/// Backends with a weight above 0.
active: u64,
weights: [backends_max]u16,
/// Smooth weighted round robin: each backend's current weight. Their sum stays 0 and in
/// simulation every value stays within about the sum of all weights (< 2^22); i64 leaves
/// overflow unreachable even if a value drifted by the whole sum on every pick (2^41 picks).
current: [backends_max]i64,
prng: std.Random.DefaultPrng,
/// Shared and read-only; required for `.hash` and null otherwise.
maglev: ?*const Maglev,

pub const Strategy = enum { round_robin, weighted, least_conn, random, hash, sticky };
pub const backends_max = 64;

comptime {
    assert(backends_max == Maglev.backends_max);
    assert(backends_max == @bitSizeOf(u64));
}

pub const Request = struct {
    /// Backends that may be chosen: healthy, under their connection caps, not yet tried for
    /// this request. Bits at or above the backends count are a caller bug.
    candidates: u64,
    /// .hash: the hash of the request key (client IP, header, cookie or path; computed by the
    /// caller, well mixed, e.g. Wyhash).
    key: u64 = 0,
    /// .sticky: the backend the client's cookie names, if any. Out of range counts as absent
    /// (a stale cookie from before a reload is client data, not a bug).
    preferred: ?u16 = null,
    /// .least_conn: in-flight requests per backend on this worker (len == backends count).
    inflight: []const u32 = &.{},
};

/// `weights[i]` is backend i's weight (0 drains it). `maglev` must be built over the same
/// backends for `.hash` and is ignored otherwise. Give every worker its own `seed`: workers
/// with equal seeds make equal random choices and equal round robin starting points.
pub fn init(strategy: Strategy, weights: []const u16, maglev: ?*const Maglev, seed: u64) Balancer {
    assert(weights.len >= 1);
    assert(weights.len <= backends_max);
    if (strategy == .hash) assert(maglev.?.backends_count == weights.len);

    var balancer: Balancer = .{
        .strategy = strategy,
        .backends_count = @intCast(weights.len),
        .cursor = 0,
        .active = 0,
        .weights = @splat(0),
        .current = @splat(0),
        .prng = .init(seed),
        .maglev = if (strategy == .hash) maglev else null,
    };
    // Start round robin at a seeded backend, so workers do not all begin with backend 0.
    balancer.cursor = @intCast(balancer.below(weights.len));
    for (weights, 0..) |weight, index| {
        balancer.weights[index] = weight;
        if (weight > 0) balancer.active |= bit(@intCast(index));
    }
    return balancer;
}

/// The backend for this request, or null exactly when no non-drained backend is a candidate.
pub fn pick(balancer: *Balancer, request: Request) ?u16 {
    assert(request.candidates & ~maskFirst(balancer.backends_count) == 0);
    const mask = request.candidates & balancer.active;
    if (mask == 0) return null;

    const index: u16 = switch (balancer.strategy) {
        .round_robin => balancer.pickRoundRobin(mask),
        .weighted => balancer.pickWeighted(mask),
        .least_conn => balancer.pickLeastConn(mask, request.inflight),
        .random => balancer.pickRandom(mask),
        .hash => balancer.maglev.?.lookup(request.key, mask).?,
        .sticky => balancer.pickSticky(mask, request.preferred),
    };
    assert(mask & bit(index) != 0);
    return index;
}

/// The first candidate at or after the cursor, wrapping: rotate the mask so the cursor's bit
/// is bit 0, then count trailing zeros. Bits at and above the backends count are 0, so
/// wrapping at 64 instead of at the count changes nothing.
fn pickRoundRobin(balancer: *Balancer, mask: u64) u16 {
    assert(mask != 0);
    const rotated = std.math.rotr(u64, mask, balancer.cursor);
    const index = balancer.cursor +% @as(u6, @intCast(@ctz(rotated)));
    assert(mask & bit(index) != 0);
    balancer.cursor = index +% 1;
    return index;
}

/// Smooth weighted round robin as nginx does it (ngx_http_upstream_get_peer): every candidate
/// gains its weight, the one with the most wins and pays back the total. Non-candidates keep
/// their current weight untouched, as nginx does for down peers, so a backend that returns
/// has no credit saved up and gets no burst. Ties go to the lowest index.
fn pickWeighted(balancer: *Balancer, mask: u64) u16 {
    assert(mask != 0);
    var total: i64 = 0;
    var best: u6 = @intCast(@ctz(mask));
    var rest = mask;
    while (rest != 0) : (rest &= rest - 1) { // One iteration per candidate, at most 64.
        const index: u6 = @intCast(@ctz(rest));
        const weight: i64 = balancer.weights[index];
        assert(weight > 0);
        balancer.current[index] += weight;
        total += weight;
        if (balancer.current[index] > balancer.current[best]) best = index;
    }
    balancer.current[best] -= total;
    return best;
}

/// Power of two random choices: two distinct candidates drawn uniformly, the one with fewer
/// in-flight requests per unit of weight wins. The pair is ordered at random, so keeping the
/// first on a tie breaks ties at random.
fn pickLeastConn(balancer: *Balancer, mask: u64, inflight: []const u32) u16 {
    assert(mask != 0);
    assert(inflight.len == balancer.backends_count);
    const count: u64 = @popCount(mask);
    if (count == 1) return @ctz(mask);

    const rank_first = balancer.below(count);
    var rank_second = balancer.below(count - 1);
    if (rank_second >= rank_first) rank_second += 1;
    const first = nthSetBit(mask, @intCast(rank_first));
    const second = nthSetBit(mask, @intCast(rank_second));
    assert(first != second);

    // inflight[first] / weights[first] <= inflight[second] / weights[second], cross-multiplied:
    // u32 * u16 fits u64.
    const load_first = @as(u64, inflight[first]) * balancer.weights[second];
    const load_second = @as(u64, inflight[second]) * balancer.weights[first];
    return if (load_second < load_first) second else first;
}

/// A candidate drawn with probability proportional to its weight.
fn pickRandom(balancer: *Balancer, mask: u64) u16 {
    assert(mask != 0);
    var total: u64 = 0;
    var rest = mask;
    while (rest != 0) : (rest &= rest - 1) total += balancer.weights[@ctz(rest)];
    assert(total > 0);

    var point = balancer.below(total);
    rest = mask;
    while (rest != 0) : (rest &= rest - 1) { // One iteration per candidate, at most 64.
        const index: u16 = @ctz(rest);
        const weight = balancer.weights[index];
        if (point < weight) return index;
        point -= weight;
    }
    unreachable; // point < total, the sum of the weights walked.
}

/// The cookie's backend while it may be chosen, else round robin. The caller re-issues the
/// cookie when the result differs from `preferred`.
fn pickSticky(balancer: *Balancer, mask: u64, preferred: ?u16) u16 {
    assert(mask != 0);
    if (preferred) |index| {
        if (index < balancer.backends_count and mask & bit(index) != 0) return index;
    }
    return balancer.pickRoundRobin(mask);
}

/// Uniform in [0, less_than). Multiply-shift without rejection, so no unbounded loop; the bias
/// is below less_than / 2^64, far under any effect a balancer can see.
fn below(balancer: *Balancer, less_than: u64) u64 {
    assert(less_than > 0);
    const value = std.Random.limitRangeBiased(u64, balancer.prng.next(), less_than);
    assert(value < less_than);
    return value;
}

/// The index of the set bit of `mask` with `rank` set bits below it: a binary search on the
/// population count of the lower half, six steps whatever the mask.
fn nthSetBit(mask: u64, rank: u32) u6 {
    assert(rank < @popCount(mask));
    var rest = mask;
    var rank_rest = rank;
    var index: u32 = 0;
    inline for (.{ 32, 16, 8, 4, 2, 1 }) |width| {
        const low_count: u32 = @popCount(rest & ((@as(u64, 1) << width) - 1));
        if (rank_rest >= low_count) {
            rank_rest -= low_count;
            rest >>= width;
            index += width;
        }
    }
    assert(rest & 1 == 1 and rank_rest == 0);
    return @intCast(index);
}

const bit = mask_ns.bit;
const maskFirst = mask_ns.first;

const testing = std.testing;

test "balance: Balancer size" {
    const size = 64 * 8 + // current (smooth weighted round robin)
        64 * 2 + // weights
        4 * 8 + // prng
        8 + // active
        8 + // maglev
        3 + // strategy, backends_count, cursor
        5; // padding to 8
    try testing.expectEqual(size, @sizeOf(Balancer));
    try testing.expectEqual(696, size);
}

test "balance: nth set bit agrees with clearing the lowest bit rank times" {
    var prng: std.Random.DefaultPrng = .init(1);
    for (0..2000) |_| {
        const mask = prng.next() & prng.next() | 1; // Sparse and dense masks, never empty.
        var rest = mask;
        var rank: u32 = 0;
        while (rest != 0) : ({
            rest &= rest - 1;
            rank += 1;
        }) {
            try testing.expectEqual(@as(u6, @intCast(@ctz(rest))), nthSetBit(mask, rank));
        }
    }
    try testing.expectEqual(63, nthSetBit(1 << 63, 0));
    try testing.expectEqual(63, nthSetBit(std.math.maxInt(u64), 63));
}

test "balance: every strategy picks only non-drained candidates, null when there are none" {
    var prng: std.Random.DefaultPrng = .init(2);
    var maglev: Maglev = undefined;
    for ([_]u32{ 1, 2, 64 }) |count| {
        var ids: [backends_max]u64 = undefined;
        for (ids[0..count]) |*id| id.* = prng.next();
        maglev.build(ids[0..count]);
        var weights: [backends_max]u16 = undefined;
        var inflight: [backends_max]u32 = undefined;
        for (weights[0..count], inflight[0..count]) |*weight, *load| {
            weight.* = if (prng.next() % 4 == 0) 0 else @intCast(1 + prng.next() % 1000);
            load.* = @intCast(prng.next() % 100);
        }
        for (std.enums.values(Strategy)) |strategy| {
            var balancer: Balancer = .init(strategy, weights[0..count], &maglev, count);
            try testing.expectEqual(@as(?u16, null), balancer.pick(.{ .candidates = 0 }));
            for (0..2000) |_| {
                const candidates = prng.next() & maskFirst(count);
                const picked = balancer.pick(.{
                    .candidates = candidates,
                    .key = prng.next(),
                    .preferred = @intCast(prng.next() % (count + 1)),
                    .inflight = inflight[0..count],
                });
                if (candidates & balancer.active == 0) {
                    try testing.expectEqual(@as(?u16, null), picked);
                } else {
                    try testing.expect(candidates & bit(picked.?) != 0);
                    try testing.expect(weights[picked.?] > 0);
                }
            }
        }
    }
}

test "balance: round robin spreads evenly and skips non-candidates" {
    for ([_]u32{ 3, 64 }) |count| {
        const weights: [backends_max]u16 = @splat(1);
        var balancer: Balancer = .init(.round_robin, weights[0..count], null, count);
        var counts: [backends_max]u32 = @splat(0);
        for (0..count * 100) |_| counts[balancer.pick(.{ .candidates = maskFirst(count) }).?] += 1;
        for (counts[0..count]) |picks| try testing.expectEqual(100, picks);
    }

    var balancer: Balancer = .init(.round_robin, &.{ 1, 1, 1, 1 }, null, 0);
    var counts: [4]u32 = @splat(0);
    for (0..300) |_| counts[balancer.pick(.{ .candidates = 0b1011 }).?] += 1;
    try testing.expectEqualSlices(u32, &.{ 100, 100, 0, 100 }, &counts);
    // In order: from wherever the cursor is, each pick is the next candidate after the last.
    var last = balancer.pick(.{ .candidates = 0b1111 }).?;
    for (0..10) |_| {
        const picked = balancer.pick(.{ .candidates = 0b1111 }).?;
        try testing.expectEqual((last + 1) % 4, picked);
        last = picked;
    }
    // A drained backend is skipped too.
    balancer = .init(.round_robin, &.{ 1, 0, 1 }, null, 0);
    for (0..10) |_| try testing.expect(balancer.pick(.{ .candidates = 0b111 }).? != 1);
}

test "balance: weighted is smooth and exact per cycle" {
    var balancer: Balancer = .init(.weighted, &.{ 5, 1, 1 }, null, 0);
    var sequence: [7]u16 = undefined;
    for (&sequence) |*picked| picked.* = balancer.pick(.{ .candidates = 0b111 }).?;
    // nginx's well-known order for {a: 5, b: 1, c: 1}: a a b a c a a.
    try testing.expectEqualSlices(u16, &.{ 0, 0, 1, 0, 2, 0, 0 }, &sequence);

    const cases = [_]struct { weights: []const u16, cycle: u32 }{
        .{ .weights = &.{ 5, 1, 1 }, .cycle = 7 },
        .{ .weights = &.{ 3, 2 }, .cycle = 5 },
        .{ .weights = &.{ 1000, 1, 7, 0, 12 }, .cycle = 1020 },
    };
    for (cases) |case| {
        balancer = .init(.weighted, case.weights, null, 0);
        const candidates = maskFirst(@intCast(case.weights.len));
        for (0..20) |_| {
            var counts: [backends_max]u32 = @splat(0);
            for (0..case.cycle) |_| counts[balancer.pick(.{ .candidates = candidates }).?] += 1;
            for (case.weights, counts[0..case.weights.len]) |weight, picks| {
                try testing.expectEqual(weight, picks);
            }
        }
    }
}

test "balance: weighted gives no burst to a backend that leaves and returns" {
    var balancer: Balancer = .init(.weighted, &.{ 1, 1, 1 }, null, 0);
    for (0..1000) |_| _ = balancer.pick(.{ .candidates = 0b011 }).?;
    // Back in: at most its fair share, not the 333 picks it missed.
    var counts: [3]u32 = @splat(0);
    for (0..30) |_| counts[balancer.pick(.{ .candidates = 0b111 }).?] += 1;
    try testing.expect(counts[2] >= 9 and counts[2] <= 11);
    for (balancer.current[0..3]) |current| try testing.expect(@abs(current) <= 3);

    // With unequal weights, and the returning backend the heavy one.
    balancer = .init(.weighted, &.{ 1, 1, 8 }, null, 0);
    for (0..1000) |_| _ = balancer.pick(.{ .candidates = 0b011 }).?;
    counts = @splat(0);
    for (0..10) |_| counts[balancer.pick(.{ .candidates = 0b111 }).?] += 1;
    try testing.expect(counts[2] >= 7 and counts[2] <= 9);
}

test "balance: least connections prefers the less loaded backend" {
    var balancer: Balancer = .init(.least_conn, &.{ 1, 1, 1 }, null, 3);
    var counts: [3]u32 = @splat(0);
    const picks_count = 30_000;
    for (0..picks_count) |_| {
        counts[balancer.pick(.{ .candidates = 0b111, .inflight = &.{ 0, 100, 100 } }).?] += 1;
    }
    // Backend 0 wins every pair it is in: two of the three pairs.
    try testing.expect(counts[0] > picks_count * 63 / 100 and counts[0] < picks_count * 70 / 100);

    // Equal load: ties go to the first of a randomly ordered pair, so uniform.
    counts = @splat(0);
    for (0..picks_count) |_| {
        counts[balancer.pick(.{ .candidates = 0b111, .inflight = &.{ 7, 7, 7 } }).?] += 1;
    }
    for (counts) |picks| {
        try testing.expect(picks > picks_count * 30 / 100 and picks < picks_count * 37 / 100);
    }

    // Relative to weight: 10 in flight on weight 2 is lighter than 6 on weight 1.
    balancer = .init(.least_conn, &.{ 2, 1 }, null, 4);
    for (0..100) |_| {
        try testing.expectEqual(0, balancer.pick(.{ .candidates = 0b11, .inflight = &.{ 10, 6 } }));
    }
    // One candidate is chosen whatever its load.
    try testing.expectEqual(1, balancer.pick(.{ .candidates = 0b10, .inflight = &.{ 0, 1000 } }));
}

test "balance: random follows the weights" {
    var balancer: Balancer = .init(.random, &.{ 1, 2, 3 }, null, 5);
    var counts: [3]u32 = @splat(0);
    const picks_count = 100_000;
    for (0..picks_count) |_| counts[balancer.pick(.{ .candidates = 0b111 }).?] += 1;
    // Shares of 1/6, 2/6 and 3/6, within 1.5 percentage points (the deviation is ~0.15).
    for (counts, [_]u32{ 1, 2, 3 }) |picks, weight| {
        const expected = picks_count * weight / 6;
        try testing.expect(picks + picks_count * 15 / 1000 > expected);
        try testing.expect(picks < expected + picks_count * 15 / 1000);
    }

    // Among candidates only: backend 1 out, so 1/4 and 3/4.
    counts = @splat(0);
    for (0..picks_count) |_| counts[balancer.pick(.{ .candidates = 0b101 }).?] += 1;
    try testing.expectEqual(0, counts[1]);
    try testing.expect(counts[0] > picks_count * 235 / 1000);
    try testing.expect(counts[0] < picks_count * 265 / 1000);
}

test "balance: hash sends a key to the same backend and spreads keys evenly" {
    var ids: [10]u64 = undefined;
    for (&ids, 0..) |*id, index| id.* = std.hash.Wyhash.hash(0, &.{@intCast(index)});
    var maglev: Maglev = undefined;
    maglev.build(&ids);
    const weights: [10]u16 = @splat(1);
    var balancer: Balancer = .init(.hash, &weights, &maglev, 6);

    var prng: std.Random.DefaultPrng = .init(7);
    var counts: [10]u32 = @splat(0);
    const keys_count = 100_000;
    for (0..keys_count) |_| {
        const key = prng.next();
        const request: Request = .{ .candidates = maskFirst(10), .key = key };
        const picked = balancer.pick(request).?;
        try testing.expectEqual(picked, balancer.pick(request));
        try testing.expectEqual(picked, maglev.lookup(key, maskFirst(10)));
        counts[picked] += 1;
    }
    for (counts) |picks| {
        try testing.expect(picks > keys_count * 9 / 100 and picks < keys_count * 11 / 100);
    }

    // A drained backend's keys go elsewhere; the other backends keep theirs.
    var weights_drained = weights;
    weights_drained[3] = 0;
    var drained: Balancer = .init(.hash, &weights_drained, &maglev, 6);
    for (0..1000) |_| {
        const key = prng.next();
        const before = balancer.pick(.{ .candidates = maskFirst(10), .key = key }).?;
        const after = drained.pick(.{ .candidates = maskFirst(10), .key = key }).?;
        try testing.expect(after != 3);
        if (before != 3) try testing.expectEqual(before, after);
    }
}

test "balance: sticky honours the preferred backend while it is a candidate" {
    var balancer: Balancer = .init(.sticky, &.{ 1, 1, 1, 0 }, null, 8);
    for (0..10) |_| {
        try testing.expectEqual(2, balancer.pick(.{ .candidates = 0b1111, .preferred = 2 }));
    }
    // Not a candidate, drained, out of range or absent: round robin over the candidates.
    var counts: [4]u32 = @splat(0);
    for (0..100) |_| counts[balancer.pick(.{ .candidates = 0b1011, .preferred = 2 }).?] += 1;
    for (0..100) |_| counts[balancer.pick(.{ .candidates = 0b1011, .preferred = 3 }).?] += 1;
    for (0..100) |_| counts[balancer.pick(.{ .candidates = 0b1011, .preferred = 64 }).?] += 1;
    for (0..100) |_| counts[balancer.pick(.{ .candidates = 0b1011 }).?] += 1;
    try testing.expectEqualSlices(u32, &.{ 200, 200, 0, 0 }, &counts);
}
