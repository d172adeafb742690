//! Which member of a pool serves the next request: one `Balancer` per worker and pool, whose
//! `pick` runs on every request and never allocates (its per-member arrays are allocated with
//! the pool). Workers share nothing, so each strategy is exact per worker and only approximate
//! across workers.
//!
//! The one decision to know: the caller says which members may be chosen for this request
//! (healthy, not drained, under their caps, not yet tried) as a `candidates` value with two
//! questions, `contains(i)` and `next(i)` (the first candidate at or after i, wrapping), and
//! the balancer only chooses among them, so a retry is the same call with the tried member
//! left out. No strategy copies or scans the whole set on the common path: round robin, sticky
//! and hash ask one `next` or `contains` (O(1) while candidates are dense), least_conn two,
//! random a binary search over the weights' prefix sums (O(log n)). Smooth weighted round
//! robin visits every candidate (O(n), as nginx's does): the one strategy that costs more with
//! a large pool.
const std = @import("std");
const assert = std.debug.assert;

const Maglev = @import("Maglev.zig");

const Balancer = @This();

strategy: Strategy,
backends_count: u16,
/// Round robin (and sticky's fallback): the member to consider first on the next pick.
cursor: u16,
/// One past the last slot with a member that takes requests: the cursor wraps there, not at
/// the end of the slots (a pool has twice its members' slots, for membership changes), so a
/// pick starts on a member instead of walking empty slots every time.
cursor_end: u16 = 1,
/// By member (a pool's slot); shared and read-only (the pool's membership table, replaced by
/// `adoptMembers`). A drained member, or a slot without one (0), is never a candidate.
weights: []const u16,
/// Random: `prefix[i]` is the sum of the weights of members 0..i (this worker's copy).
prefix: []u64,
/// Smooth weighted round robin: each member's current weight. Their sum stays 0 and in
/// simulation every value stays within about the sum of all weights (< 2^26); i64 leaves
/// overflow unreachable even if a value drifted by the whole sum on every pick (2^37 picks).
current: []i64,
prng: std.Random.DefaultPrng,
/// Shared and read-only; required for `.hash` and null otherwise.
maglev: ?*const Maglev,

pub const Strategy = enum { round_robin, weighted, least_conn, random, hash, sticky };
pub const backends_max = Maglev.backends_max;

/// Draws random makes before it takes the candidate after its last draw instead.
const random_draws_max = 4;

pub const Request = struct {
    /// .hash: the hash of the request key (client IP, header, cookie or path; computed by the
    /// caller, well mixed, e.g. Wyhash).
    key: u64 = 0,
    /// .sticky: the member the client's cookie names, if any. Out of range counts as absent
    /// (a stale cookie from before a reload is client data, not a bug).
    preferred: ?u16 = null,
    /// .least_conn: in-flight requests per member on this worker (len == members count).
    inflight: []const u32 = &.{},
};

/// `weights[i]` is member i's weight (0 drains it), kept by reference. `maglev` must be built
/// over the same members for `.hash` and is ignored otherwise. Give every worker its own
/// `seed`: workers with equal seeds make equal random choices and equal round robin starting
/// points. Allocates what the strategy needs per member with `allocator`.
pub fn init(
    allocator: std.mem.Allocator,
    strategy: Strategy,
    weights: []const u16,
    maglev: ?*const Maglev,
    seed: u64,
) error{OutOfMemory}!Balancer {
    assert(weights.len >= 1);
    assert(weights.len <= backends_max);
    if (strategy == .hash) if (maglev) |table| assert(table.backends_count == weights.len);

    var balancer: Balancer = .{
        .strategy = strategy,
        .backends_count = @intCast(weights.len),
        .cursor = 0,
        .weights = weights,
        .prefix = &.{},
        .current = &.{},
        .prng = .init(seed),
        .maglev = if (strategy == .hash) maglev else null,
    };
    balancer.cursor_end = cursorEnd(weights);
    // Start round robin at a seeded member, so workers do not all begin with member 0.
    balancer.cursor = @intCast(balancer.below(balancer.cursor_end));
    switch (strategy) {
        .weighted => {
            balancer.current = try allocator.alloc(i64, weights.len);
            @memset(balancer.current, 0);
        },
        .random => {
            balancer.prefix = try allocator.alloc(u64, weights.len);
            balancer.sumPrefix();
        },
        .round_robin, .least_conn, .hash, .sticky => {},
    }
    return balancer;
}

/// The pool's membership changed (upstream/Members.zig): `weights` and `maglev` are the new
/// table's, over the same slots. Random's prefix sums are summed again; smooth weighted round
/// robin's current weights start over for slots whose weight changed (a member that joined
/// has no credit saved up). O(slots), once per change, on the worker's thread.
pub fn adoptMembers(balancer: *Balancer, weights: []const u16, maglev: ?*const Maglev) void {
    assert(weights.len == balancer.backends_count);
    if (balancer.strategy == .hash) if (maglev) |table| assert(table.backends_count == weights.len);
    if (balancer.strategy == .weighted) {
        for (balancer.current, balancer.weights, weights) |*current, before, after| {
            if (before != after) current.* = 0;
        }
    }
    balancer.weights = weights;
    balancer.cursor_end = cursorEnd(weights);
    if (balancer.cursor >= balancer.cursor_end) balancer.cursor = 0;
    balancer.maglev = if (balancer.strategy == .hash) maglev else null;
    if (balancer.strategy == .random) balancer.sumPrefix();
}

fn cursorEnd(weights: []const u16) u16 {
    var end = weights.len;
    while (end > 1 and weights[end - 1] == 0) end -= 1;
    return @intCast(end);
}

fn sumPrefix(balancer: *Balancer) void {
    var sum: u64 = 0;
    for (balancer.weights, balancer.prefix) |weight, *prefix| {
        sum += weight;
        prefix.* = sum;
    }
}

pub fn deinit(balancer: *Balancer, allocator: std.mem.Allocator) void {
    allocator.free(balancer.prefix);
    allocator.free(balancer.current);
    balancer.* = undefined;
}

/// The member for this request, or null exactly when there is no candidate. `candidates`
/// leaves drained members out (see the file's comment for its two questions).
pub fn pick(balancer: *Balancer, candidates: anytype, request: Request) ?u16 {
    const index: u16 = switch (balancer.strategy) {
        .round_robin => balancer.pickRoundRobin(candidates),
        .weighted => balancer.pickWeighted(candidates),
        .least_conn => balancer.pickLeastConn(candidates, request.inflight),
        .random => balancer.pickRandom(candidates),
        .hash => (balancer.maglev orelse return null).lookup(request.key, candidates),
        .sticky => balancer.pickSticky(candidates, request.preferred),
    } orelse return null;
    assert(index < balancer.backends_count);
    assert(balancer.weights[index] > 0);
    return index;
}

/// The first candidate at or after the cursor, wrapping.
fn pickRoundRobin(balancer: *Balancer, candidates: anytype) ?u16 {
    const index = candidates.next(balancer.cursor) orelse return null;
    assert(index < balancer.backends_count);
    balancer.cursor = if (index + 1 >= balancer.cursor_end) 0 else index + 1;
    return index;
}

/// Smooth weighted round robin as nginx does it (ngx_http_upstream_get_peer): every candidate
/// gains its weight, the one with the most wins and pays back the total. Non-candidates keep
/// their current weight untouched, as nginx does for down peers, so a member that returns
/// has no credit saved up and gets no burst. Ties go to the lowest index.
fn pickWeighted(balancer: *Balancer, candidates: anytype) ?u16 {
    var total: i64 = 0;
    var best: ?u16 = null;
    var from: u16 = 0;
    // One iteration per candidate, in member order: stop when `next` wraps.
    while (candidates.next(from)) |index| {
        if (best != null and index < from) break;
        const weight: i64 = balancer.weights[index];
        assert(weight > 0);
        balancer.current[index] += weight;
        total += weight;
        if (best == null or balancer.current[index] > balancer.current[best.?]) best = index;
        if (index + 1 == balancer.backends_count) break;
        from = index + 1;
    }
    balancer.current[best orelse return null] -= total;
    return best;
}

/// Power of two random choices: two distinct candidates, each the first at or after a
/// uniformly drawn member (uniform while candidates are dense; one after a gap of unavailable
/// members is drawn more often, which only matters when many are out), the one with fewer
/// in-flight requests per unit of weight wins. The pair is ordered at random, so keeping the
/// first on a tie breaks ties at random.
fn pickLeastConn(balancer: *Balancer, candidates: anytype, inflight: []const u32) ?u16 {
    assert(inflight.len == balancer.backends_count);
    const count = balancer.backends_count;
    const first = candidates.next(@intCast(balancer.below(count))) orelse return null;
    var second = candidates.next(@intCast(balancer.below(count))).?;
    if (second == first) {
        second = candidates.next(if (first + 1 == count) 0 else first + 1).?;
        if (second == first) return first; // The only candidate.
    }
    // inflight[first] / weights[first] <= inflight[second] / weights[second], cross-multiplied:
    // u32 * u16 fits u64.
    const load_first = @as(u64, inflight[first]) * balancer.weights[second];
    const load_second = @as(u64, inflight[second]) * balancer.weights[first];
    return if (load_second < load_first) second else first;
}

/// A member drawn with probability proportional to its weight (binary search of the prefix
/// sums); a draw that is not a candidate is drawn again, at most `random_draws_max` times,
/// then the first candidate after the last draw is taken.
fn pickRandom(balancer: *Balancer, candidates: anytype) ?u16 {
    const total = balancer.prefix[balancer.prefix.len - 1];
    if (total == 0) return null; // Every member drained: none is a candidate.
    var drawn: u16 = 0;
    for (0..random_draws_max) |_| {
        const point = balancer.below(total);
        // The first member whose prefix sum is above the point.
        drawn = @intCast(std.sort.upperBound(u64, balancer.prefix, point, orderU64));
        assert(balancer.weights[drawn] > 0);
        if (candidates.contains(drawn)) return drawn;
    }
    return candidates.next(drawn);
}

fn orderU64(key: u64, item: u64) std.math.Order {
    return std.math.order(key, item);
}

/// The cookie's member while it may be chosen, else round robin. The caller re-issues the
/// cookie when the result differs from `preferred`.
fn pickSticky(balancer: *Balancer, candidates: anytype, preferred: ?u16) ?u16 {
    if (preferred) |index| {
        if (index < balancer.backends_count and candidates.contains(index)) return index;
    }
    return balancer.pickRoundRobin(candidates);
}

/// Uniform in [0, less_than). Multiply-shift without rejection, so no unbounded loop; the bias
/// is below less_than / 2^64, far under any effect a balancer can see.
fn below(balancer: *Balancer, less_than: u64) u64 {
    assert(less_than > 0);
    const value = std.Random.limitRangeBiased(u64, balancer.prng.next(), less_than);
    assert(value < less_than);
    return value;
}

const testing = std.testing;
const BitSet = @import("../stdx/BitSet.zig");

/// Candidates for the tests: a mask over at most 64 members, drained members left out as the
/// pool leaves them out.
fn maskCandidates(words: *[1]u64, mask: u64, weights: []const u16) Maglev.TestCandidates {
    var active: u64 = 0;
    for (weights, 0..) |weight, i| {
        if (weight > 0) active |= BitSet.bit(@intCast(i));
    }
    words[0] = mask & active;
    return .{ .words = words, .count = @intCast(weights.len) };
}

fn maskFirst(count: u32) u64 {
    return if (count == 64) ~@as(u64, 0) else (@as(u64, 1) << @intCast(count)) - 1;
}

/// A balancer and its candidates in one, for the tests.
const Test = struct {
    balancer: Balancer,
    words: [1]u64 = undefined,

    fn init(strategy: Strategy, weights: []const u16, maglev: ?*const Maglev, seed: u64) !Test {
        return .{ .balancer = try .init(testing.allocator, strategy, weights, maglev, seed) };
    }

    fn deinit(t: *Test) void {
        t.balancer.deinit(testing.allocator);
    }

    fn pick(t: *Test, mask: u64, request: Request) ?u16 {
        return t.balancer.pick(maskCandidates(&t.words, mask, t.balancer.weights), request);
    }
};

test "balance: after a membership change every strategy picks only the new members" {
    // Six slots: members 0 and 1, then 1, 2 and 3 (weight 2 for slot 3), Maglev over each.
    const before = [_]u16{ 1, 1, 0, 0, 0, 0 };
    const after = [_]u16{ 0, 1, 1, 2, 0, 0 };
    const ids = [_]u64{ 10, 11, 12, 13, 14, 15 };
    var maglev_before: Maglev = try .initSlots(testing.allocator, ids[0..2], &.{ 0, 1 }, 6);
    defer maglev_before.deinit(testing.allocator);
    var maglev_after: Maglev = try .initSlots(testing.allocator, ids[1..4], &.{ 1, 2, 3 }, 6);
    defer maglev_after.deinit(testing.allocator);
    const inflight: [6]u32 = @splat(0);
    for ([_]Strategy{ .round_robin, .weighted, .least_conn, .random, .hash, .sticky }) |strategy| {
        var t: Test = try .init(strategy, &before, &maglev_before, 7);
        defer t.deinit();
        var seen_before: u64 = 0;
        for (0..64) |i| {
            const index = t.pick(maskFirst(6), .{ .key = i *% 0x9e3779b97f4a7c15, .inflight = &inflight }).?;
            seen_before |= BitSet.bit(index);
        }
        try testing.expectEqual(@as(u64, 0b11), seen_before);
        t.balancer.adoptMembers(&after, &maglev_after);
        var seen_after: u64 = 0;
        for (0..64) |i| {
            const index = t.pick(maskFirst(6), .{ .key = i *% 0x9e3779b97f4a7c15, .inflight = &inflight, .preferred = 0 }).?;
            seen_after |= BitSet.bit(index);
        }
        try testing.expectEqual(@as(u64, 0b1110), seen_after);
    }
}

test "balance: every strategy picks only non-drained candidates, null when there are none" {
    var prng: std.Random.DefaultPrng = .init(2);
    for ([_]u32{ 1, 2, 64 }) |count| {
        var ids: [64]u64 = undefined;
        for (ids[0..count]) |*id| id.* = prng.next();
        var maglev: Maglev = try .init(testing.allocator, ids[0..count]);
        defer maglev.deinit(testing.allocator);
        var weights: [64]u16 = undefined;
        var inflight: [64]u32 = undefined;
        for (weights[0..count], inflight[0..count], 0..) |*weight, *load, i| {
            // Member 0 always has a weight (validation: a pool is not all drained).
            weight.* = if (i > 0 and prng.next() % 4 == 0) 0 else @intCast(1 + prng.next() % 1000);
            load.* = @intCast(prng.next() % 100);
        }
        for (std.enums.values(Strategy)) |strategy| {
            var t: Test = try .init(strategy, weights[0..count], &maglev, count);
            defer t.deinit();
            try testing.expectEqual(@as(?u16, null), t.pick(0, .{ .inflight = inflight[0..count] }));
            for (0..2000) |_| {
                const candidates = prng.next() & maskFirst(count);
                const picked = t.pick(candidates, .{
                    .key = prng.next(),
                    .preferred = @intCast(prng.next() % (count + 1)),
                    .inflight = inflight[0..count],
                });
                if (t.words[0] == 0) {
                    try testing.expectEqual(@as(?u16, null), picked);
                } else {
                    try testing.expect(candidates & BitSet.bit(picked.?) != 0);
                    try testing.expect(weights[picked.?] > 0);
                }
            }
        }
    }
}

test "balance: every strategy picks among 1,024 members, skipping the ones left out" {
    const count = 1024;
    var ids: [count]u64 = undefined;
    var weights: [count]u16 = undefined;
    var inflight: [count]u32 = undefined;
    var prng: std.Random.DefaultPrng = .init(3);
    for (&ids, &weights, &inflight) |*id, *weight, *load| {
        id.* = prng.next();
        weight.* = @intCast(1 + prng.next() % 10);
        load.* = @intCast(prng.next() % 10);
    }
    var maglev: Maglev = try .init(testing.allocator, &ids);
    defer maglev.deinit(testing.allocator);
    var words: [count / 64]u64 = @splat(0);
    // Every third member is a candidate.
    for (0..count) |i| {
        if (i % 3 == 0) BitSet.set(&words, @intCast(i));
    }
    const candidates: Maglev.TestCandidates = .{ .words = &words, .count = count };
    for (std.enums.values(Strategy)) |strategy| {
        var balancer: Balancer = try .init(testing.allocator, strategy, &weights, &maglev, 7);
        defer balancer.deinit(testing.allocator);
        var seen: [count]bool = @splat(false);
        for (0..20_000) |_| {
            const picked = balancer.pick(candidates, .{ .key = prng.next(), .inflight = &inflight }).?;
            try testing.expect(picked % 3 == 0);
            seen[picked] = true;
        }
        // Candidates get requests: every one in turn (sticky without a cookie is round
        // robin), nearly every one at random (20,000 draws over 342 members).
        var seen_count: u32 = 0;
        for (seen) |was_seen| seen_count += @intFromBool(was_seen);
        const candidates_count = (count + 2) / 3;
        switch (strategy) {
            .round_robin, .sticky, .weighted => try testing.expectEqual(candidates_count, seen_count),
            .least_conn, .random, .hash => try testing.expect(seen_count > candidates_count * 9 / 10),
        }
    }
}

test "balance: round robin spreads evenly and skips non-candidates" {
    for ([_]u32{ 3, 64 }) |count| {
        const weights: [64]u16 = @splat(1);
        var t: Test = try .init(.round_robin, weights[0..count], null, count);
        defer t.deinit();
        var counts: [64]u32 = @splat(0);
        for (0..count * 100) |_| counts[t.pick(maskFirst(count), .{}).?] += 1;
        for (counts[0..count]) |picks| try testing.expectEqual(100, picks);
    }

    var t: Test = try .init(.round_robin, &.{ 1, 1, 1, 1 }, null, 0);
    defer t.deinit();
    var counts: [4]u32 = @splat(0);
    for (0..300) |_| counts[t.pick(0b1011, .{}).?] += 1;
    try testing.expectEqualSlices(u32, &.{ 100, 100, 0, 100 }, &counts);
    // In order: from wherever the cursor is, each pick is the next candidate after the last.
    var last = t.pick(0b1111, .{}).?;
    for (0..10) |_| {
        const picked = t.pick(0b1111, .{}).?;
        try testing.expectEqual((last + 1) % 4, picked);
        last = picked;
    }
    // A drained member is skipped too.
    var drained: Test = try .init(.round_robin, &.{ 1, 0, 1 }, null, 0);
    defer drained.deinit();
    for (0..10) |_| try testing.expect(drained.pick(0b111, .{}).? != 1);
}

test "balance: weighted is smooth and exact per cycle" {
    var t: Test = try .init(.weighted, &.{ 5, 1, 1 }, null, 0);
    defer t.deinit();
    var sequence: [7]u16 = undefined;
    for (&sequence) |*picked| picked.* = t.pick(0b111, .{}).?;
    // nginx's well-known order for {a: 5, b: 1, c: 1}: a a b a c a a.
    try testing.expectEqualSlices(u16, &.{ 0, 0, 1, 0, 2, 0, 0 }, &sequence);

    const cases = [_]struct { weights: []const u16, cycle: u32 }{
        .{ .weights = &.{ 5, 1, 1 }, .cycle = 7 },
        .{ .weights = &.{ 3, 2 }, .cycle = 5 },
        .{ .weights = &.{ 1000, 1, 7, 0, 12 }, .cycle = 1020 },
    };
    for (cases) |case| {
        var cycle: Test = try .init(.weighted, case.weights, null, 0);
        defer cycle.deinit();
        const candidates = maskFirst(@intCast(case.weights.len));
        for (0..20) |_| {
            var counts: [8]u32 = @splat(0);
            for (0..case.cycle) |_| counts[cycle.pick(candidates, .{}).?] += 1;
            for (case.weights, counts[0..case.weights.len]) |weight, picks| {
                try testing.expectEqual(weight, picks);
            }
        }
    }
}

test "balance: weighted gives no burst to a member that leaves and returns" {
    var t: Test = try .init(.weighted, &.{ 1, 1, 1 }, null, 0);
    defer t.deinit();
    for (0..1000) |_| _ = t.pick(0b011, .{}).?;
    // Back in: at most its fair share, not the 333 picks it missed.
    var counts: [3]u32 = @splat(0);
    for (0..30) |_| counts[t.pick(0b111, .{}).?] += 1;
    try testing.expect(counts[2] >= 9 and counts[2] <= 11);
    for (t.balancer.current[0..3]) |current| try testing.expect(@abs(current) <= 3);

    // With unequal weights, and the returning member the heavy one.
    var heavy: Test = try .init(.weighted, &.{ 1, 1, 8 }, null, 0);
    defer heavy.deinit();
    for (0..1000) |_| _ = heavy.pick(0b011, .{}).?;
    counts = @splat(0);
    for (0..10) |_| counts[heavy.pick(0b111, .{}).?] += 1;
    try testing.expect(counts[2] >= 7 and counts[2] <= 9);
}

test "balance: least connections prefers the less loaded member" {
    var t: Test = try .init(.least_conn, &.{ 1, 1, 1 }, null, 3);
    defer t.deinit();
    var counts: [3]u32 = @splat(0);
    const picks_count = 30_000;
    for (0..picks_count) |_| {
        counts[t.pick(0b111, .{ .inflight = &.{ 0, 100, 100 } }).?] += 1;
    }
    // Member 0 wins every pair it is in: two of the three pairs (5/9 of draws with the
    // redraw of equal picks as the next member).
    try testing.expect(counts[0] > picks_count * 50 / 100 and counts[0] < picks_count * 70 / 100);

    // Equal load: ties go to the first of a randomly ordered pair, so uniform.
    counts = @splat(0);
    for (0..picks_count) |_| {
        counts[t.pick(0b111, .{ .inflight = &.{ 7, 7, 7 } }).?] += 1;
    }
    for (counts) |picks| {
        try testing.expect(picks > picks_count * 30 / 100 and picks < picks_count * 37 / 100);
    }

    // Relative to weight: 10 in flight on weight 2 is lighter than 6 on weight 1.
    var weighted: Test = try .init(.least_conn, &.{ 2, 1 }, null, 4);
    defer weighted.deinit();
    for (0..100) |_| {
        try testing.expectEqual(0, weighted.pick(0b11, .{ .inflight = &.{ 10, 6 } }));
    }
    // One candidate is chosen whatever its load.
    try testing.expectEqual(1, weighted.pick(0b10, .{ .inflight = &.{ 0, 1000 } }));
}

test "balance: random follows the weights" {
    var t: Test = try .init(.random, &.{ 1, 2, 3 }, null, 5);
    defer t.deinit();
    var counts: [3]u32 = @splat(0);
    const picks_count = 100_000;
    for (0..picks_count) |_| counts[t.pick(0b111, .{}).?] += 1;
    // Shares of 1/6, 2/6 and 3/6, within 1.5 percentage points (the deviation is ~0.15).
    for (counts, [_]u32{ 1, 2, 3 }) |picks, weight| {
        const expected = picks_count * weight / 6;
        try testing.expect(picks + picks_count * 15 / 1000 > expected);
        try testing.expect(picks < expected + picks_count * 15 / 1000);
    }

    // Among candidates only: member 1 out, so about 1/4 and 3/4 (a draw of member 1 is drawn
    // again, up to four times).
    counts = @splat(0);
    for (0..picks_count) |_| counts[t.pick(0b101, .{}).?] += 1;
    try testing.expectEqual(0, counts[1]);
    try testing.expect(counts[0] > picks_count * 235 / 1000);
    try testing.expect(counts[0] < picks_count * 265 / 1000);
}

test "balance: hash sends a key to the same member and spreads keys evenly" {
    var ids: [10]u64 = undefined;
    for (&ids, 0..) |*id, index| id.* = std.hash.Wyhash.hash(0, &.{@intCast(index)});
    var maglev: Maglev = try .init(testing.allocator, &ids);
    defer maglev.deinit(testing.allocator);
    const weights: [10]u16 = @splat(1);
    var t: Test = try .init(.hash, &weights, &maglev, 6);
    defer t.deinit();

    var prng: std.Random.DefaultPrng = .init(7);
    var counts: [10]u32 = @splat(0);
    const keys_count = 100_000;
    var words: [1]u64 = undefined;
    for (0..keys_count) |_| {
        const key = prng.next();
        const picked = t.pick(maskFirst(10), .{ .key = key }).?;
        try testing.expectEqual(picked, t.pick(maskFirst(10), .{ .key = key }));
        try testing.expectEqual(picked, maglev.lookup(key, maskCandidates(&words, maskFirst(10), &weights)));
        counts[picked] += 1;
    }
    for (counts) |picks| {
        try testing.expect(picks > keys_count * 9 / 100 and picks < keys_count * 11 / 100);
    }

    // A drained member's keys go elsewhere; the other members keep theirs.
    var weights_drained = weights;
    weights_drained[3] = 0;
    var drained: Test = try .init(.hash, &weights_drained, &maglev, 6);
    defer drained.deinit();
    for (0..1000) |_| {
        const key = prng.next();
        const before = t.pick(maskFirst(10), .{ .key = key }).?;
        const after = drained.pick(maskFirst(10), .{ .key = key }).?;
        try testing.expect(after != 3);
        if (before != 3) try testing.expectEqual(before, after);
    }
}

test "balance: sticky honours the preferred member while it is a candidate" {
    var t: Test = try .init(.sticky, &.{ 1, 1, 1, 0 }, null, 8);
    defer t.deinit();
    for (0..10) |_| {
        try testing.expectEqual(2, t.pick(0b1111, .{ .preferred = 2 }));
    }
    // Not a candidate, drained, out of range or absent: round robin over the candidates.
    var counts: [4]u32 = @splat(0);
    for (0..100) |_| counts[t.pick(0b1011, .{ .preferred = 2 }).?] += 1;
    for (0..100) |_| counts[t.pick(0b1011, .{ .preferred = 3 }).?] += 1;
    for (0..100) |_| counts[t.pick(0b1011, .{ .preferred = 64 }).?] += 1;
    for (0..100) |_| counts[t.pick(0b1011, .{}).?] += 1;
    try testing.expectEqualSlices(u32, &.{ 200, 200, 0, 0 }, &counts);
}
