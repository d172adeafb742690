//! One worker's rate limits: token buckets per key in a fixed table allocated at start-up, so a
//! check allocates nothing and costs one hash and at most `ways` compares.
//!
//! A bucket is kept as the time its next token is due (GCRA, the "generic cell rate
//! algorithm" of ATM networks, which nginx's `limit_req` also is): one u64 per key instead of a
//! token count and a timestamp. A request at `now` is allowed when the bucket, one token
//! interval later, would be at most `burst` intervals ahead of `now`; then it moves on by one
//! interval. A refused request moves nothing, and learns when the next token is due (its
//! Retry-After).
//!
//! Eviction: the table is split into sets of `ways` slots (a key's hash picks its set). A key
//! not in its set takes an empty slot, else a slot whose bucket is full again (its next-token
//! time is past: forgetting it loses nothing), else the slot whose bucket is due soonest. Only
//! in that last case is a limited key forgotten early, which takes `ways` other keys hashing
//! to its set within its refill time; it is counted (`evictions_early`).
const std = @import("std");
const assert = std.debug.assert;

const RateLimiter = @This();

slots: []Slot,
/// The slots are cleared by the first check, not at start-up: a worker that never limits
/// leaves the table's pages untouched (no resident memory).
cleared: bool = false,
/// Buckets forgotten before they were full again (see the header).
evictions_early: u64 = 0,

pub const ways = 8;
/// Slots per worker: 8,192 keys in 128 KiB, touched only once a limit is checked.
pub const slots_count = 8192;

pub const Slot = struct {
    /// 0: empty. Else the key's hash, with its lowest bit set so it is never 0.
    key: u64 = 0,
    /// When the next token is due, in the loop's nanoseconds.
    due_ns: u64 = 0,
};

/// A limit as one worker applies it.
pub const Limit = struct {
    /// Nanoseconds between tokens (the rate's inverse).
    interval_ns: u64,
    /// Tokens a bucket holds, at least 1.
    burst: u32,
};

pub const Verdict = union(enum) {
    allowed,
    /// Refused; a token is due in this many nanoseconds.
    limited: u64,
};

/// `slots` has a power-of-two length, at least `ways`; the caller owns it.
pub fn init(slots: []Slot) RateLimiter {
    assert(slots.len >= ways and std.math.isPowerOfTwo(slots.len));
    return .{ .slots = slots };
}

/// Takes a token from the bucket of `key_hash` under `limit`, at `now_ns`.
pub fn take(limiter: *RateLimiter, key_hash: u64, limit: Limit, now_ns: u64) Verdict {
    assert(limit.interval_ns > 0 and limit.burst > 0);
    if (!limiter.cleared) {
        @memset(limiter.slots, .{});
        limiter.cleared = true;
    }
    const slot = limiter.find(key_hash | 1, now_ns);
    // A bucket never seen, or full again, is due now.
    const due = @max(slot.due_ns, now_ns);
    const next = due +| limit.interval_ns;
    const ceiling = now_ns +| limit.interval_ns *| limit.burst;
    if (next > ceiling) return .{ .limited = next - ceiling };
    slot.due_ns = next;
    return .allowed;
}

/// The key's slot, or the one it takes over (see the header's eviction rule).
fn find(limiter: *RateLimiter, key: u64, now_ns: u64) *Slot {
    const sets = limiter.slots.len / ways;
    const set_index: usize = @intCast((key >> 1) & (sets - 1));
    const set = limiter.slots[set_index * ways ..][0..ways];
    var victim: *Slot = &set[0];
    for (set) |*slot| {
        if (slot.key == key) return slot;
        if (slot.key == 0 or slot.due_ns <= now_ns) {
            victim = slot; // Empty, or full again: free to take.
            continue;
        }
        if (victim.key != 0 and victim.due_ns > now_ns and slot.due_ns < victim.due_ns) victim = slot;
    }
    if (victim.key != 0 and victim.due_ns > now_ns) limiter.evictions_early += 1;
    victim.* = .{ .key = key, .due_ns = 0 };
    return victim;
}

const testing = std.testing;
const ns_per_s = std.time.ns_per_s;

test "rate limiter: a burst, then one token per interval, and when the next is due" {
    var slots: [64]Slot = @splat(.{});
    var limiter: RateLimiter = .init(&slots);
    const limit: Limit = .{ .interval_ns = ns_per_s / 10, .burst = 3 }; // 10/s, burst 3
    const t0: u64 = 1_000 * ns_per_s;
    for (0..3) |_| try testing.expectEqual(Verdict.allowed, limiter.take(42, limit, t0));
    try testing.expectEqual(Verdict{ .limited = ns_per_s / 10 }, limiter.take(42, limit, t0));
    try testing.expectEqual(Verdict.allowed, limiter.take(7, limit, t0)); // Another key.
    try testing.expectEqual(Verdict.allowed, limiter.take(42, limit, t0 + ns_per_s / 10));
    try testing.expect(limiter.take(42, limit, t0 + ns_per_s / 10) == .limited);
    // A second later the bucket is full again: a whole burst.
    for (0..3) |_| try testing.expectEqual(Verdict.allowed, limiter.take(42, limit, t0 + 2 * ns_per_s));
}

test "rate limiter: matches a model of token buckets under random keys and times (seeded)" {
    var slots: [1024]Slot = @splat(.{}); // Room for every key: no eviction, so the model is exact.
    var limiter: RateLimiter = .init(&slots);
    var prng: std.Random.DefaultPrng = .init(testing.random_seed);
    const random = prng.random();
    const limit: Limit = .{ .interval_ns = 1_000, .burst = 4 };
    var model: [16]f64 = @splat(4); // Tokens per key.
    var last: [16]u64 = @splat(0);
    var now: u64 = 1_000_000;
    for (0..20_000) |_| {
        now += random.uintLessThan(u64, 1_500);
        const key = random.uintLessThan(usize, model.len);
        const elapsed: f64 = @floatFromInt(now - last[key]);
        model[key] = @min(4, model[key] + elapsed / 1_000);
        last[key] = now;
        const allowed = limiter.take(key *% 0x9e3779b97f4a7c15, limit, now) == .allowed;
        // The model's boundary cases are floating point: decide them the integer's way.
        if (@abs(model[key] - 1) > 1e-6) try testing.expectEqual(model[key] >= 1, allowed);
        if (allowed) model[key] -= 1;
    }
}

test "rate limiter: a full set evicts a full bucket first, else the one due soonest" {
    var slots: [ways]Slot = @splat(.{}); // One set.
    var limiter: RateLimiter = .init(&slots);
    const limit: Limit = .{ .interval_ns = 100, .burst = 1 };
    for (0..ways) |k| try testing.expect(limiter.take(2 * k, limit, 1_000 + k) == .allowed);
    try testing.expect(limiter.take(2 * ways, limit, 1_000 + ways) == .allowed); // Evicts key 0.
    try testing.expectEqual(@as(u64, 1), limiter.evictions_early);
    try testing.expect(limiter.take(2, limit, 1_000 + ways) == .limited); // Key 1 was kept.
    try testing.expect(limiter.take(0, limit, 1_200) == .allowed); // Due: reused, not counted.
    try testing.expectEqual(@as(u64, 1), limiter.evictions_early);
}
