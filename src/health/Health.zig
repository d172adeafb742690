//! The health of one pool's backends, shared by every worker and the control thread. Two
//! sources feed it: active checks (the control thread's `Checker` says up or down) and passive
//! outlier detection (workers report each exchange's outcome). A backend takes new requests
//! when it is up *and* not ejected; workers read that as one bit mask per pick.
//!
//! How the two sources agree instead of fighting:
//! - an active "down" wins: nothing is sent to a backend its checks fail, ejected or not;
//! - an ejection is ended by whichever comes first: its cool-down running out (then one real
//!   request is the half-open trial), or `rise` active passes in a row after it began;
//! - the cool-down doubles on each ejection that follows soon after the last one (within the
//!   longest cool-down), so a backend that flaps is kept out longer and longer, and a pass of
//!   the active check does not reset that growth.
//!
//! Reads on the request path are lock-free (a word of `available` and the ejected count and,
//! after a failure, one store). State transitions are rare and take a spinlock, so the set,
//! the ejected count and the log line of a transition always agree; each transition is logged
//! once and counted.
//!
//! Sized at start-up: one `Backend` and one bit per member slot of the pool (stdx/BitSet.zig),
//! allocated by the pool instance.
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const Config = @import("../config/Config.zig");
const log = @import("../stdx/log.zig");
const BitSet = @import("../stdx/BitSet.zig");
const Counter = @import("../stdx/Counter.zig");

const Health = @This();

backends: []Backend,
/// Slots (the pool's capacity): every array has one entry per slot.
count: u32,
/// Slots in the pool's membership now (upstream/Members.zig): what `max_ejected_percent`
/// is a share of. Written by the control thread under the lock.
members_count: std.atomic.Value(u32),
/// Bit i: slot i holds a member (control thread, under the lock). Only members are available.
members: []BitSet.AtomicWord,
outlier: Config.Outlier,
/// How long a half-open trial may take before another request may try again (the trial's
/// session may end without a verdict, e.g. when its client goes away).
trial_timeout_ns: u64,
/// The active check's rise threshold, reused to end an ejection from active passes.
rise: u8,
/// Bit i: backend i takes new requests (active up, not ejected).
available: []BitSet.AtomicWord,
/// Bit i: backend i is ejected (cool-down or trial).
ejected: []BitSet.AtomicWord,
/// Members ejected now: nonzero is rare, and only then does a pick look for a trial.
ejected_count: std.atomic.Value(u32) = .init(0),
lock: std.atomic.Value(bool) = .init(false),
stats: Stats = .{},

pub const Stats = struct {
    ejections: std.atomic.Value(u64) = .init(0),
    ejections_refused_by_cap: std.atomic.Value(u64) = .init(0),
    trials: std.atomic.Value(u64) = .init(0),
    active_downs: std.atomic.Value(u64) = .init(0),
    active_ups: std.atomic.Value(u64) = .init(0),

    /// As `Counter.transfer`, for counts every worker adds to (control thread): a reload that
    /// replaces the pool's instance carries them into the new one when it is built, and the
    /// old one's later counts move over when it is freed (runtime/generations.zig).
    pub fn transfer(stats: *Stats, comptime how: Counter.Transfer, from: *const Stats, accounted: *Stats) void {
        inline for (comptime std.meta.fieldNames(Stats)) |name| {
            const now = @field(from, name).load(.monotonic);
            const done = &@field(accounted, name);
            switch (how) {
                .carry => @field(stats, name).store(now, .monotonic),
                .move => _ = @field(stats, name).fetchAdd(now -% done.load(.monotonic), .monotonic),
            }
            done.store(now, .monotonic);
        }
    }
};

pub const Backend = struct {
    /// Written under the lock, read anywhere.
    state: std.atomic.Value(State) = .init(.serving),
    active_up: std.atomic.Value(bool) = .init(true),
    consecutive_failures: std.atomic.Value(u32) = .init(0),
    /// While ejected: when the cool-down ends. While on trial: when the trial may be retried.
    until_ns: std.atomic.Value(u64) = .init(0),
    // Under the lock only:
    ejections_in_a_row: u32 = 0,
    last_ejection_ns: u64 = 0,
    active_passes_since_ejection: u32 = 0,
    name_buffer: [Address.text_bytes_max]u8 = undefined,
    name_len: u8 = 0,

    pub fn name(backend: *const Backend) []const u8 {
        return backend.name_buffer[0..backend.name_len];
    }
};

pub const State = enum(u8) { serving, ejected, trial };

/// An exchange's outcome, as passive detection sees it.
pub const Outcome = enum {
    success,
    connect,
    reset,
    timeout,
    status_5xx,

    /// As written in the configuration (`--eject-on`, `--retry-on`) and the log.
    pub fn text(outcome: Outcome) []const u8 {
        return if (outcome == .status_5xx) "5xx" else @tagName(outcome);
    }

    /// Whether `kinds` (a pool's `eject.on` or `retry.on`) include this outcome.
    pub fn isIn(outcome: Outcome, kinds: Config.FailureKinds) bool {
        return switch (outcome) {
            .success => false,
            .connect => kinds.connect,
            .reset => kinds.reset,
            .timeout => kinds.timeout,
            .status_5xx => kinds.status_5xx,
        };
    }
};

/// Allocates one `Backend` and one bit per slot (`slots_count`, the pool's capacity):
/// `allocator` is the pool instance's. The first `pool.backends_count` slots are the
/// configured members, in order; the others are free.
pub fn init(allocator: std.mem.Allocator, pool: *const Config.Pool, slots_count: u32) error{OutOfMemory}!Health {
    const count = slots_count;
    assert(count >= pool.backends_count and count <= Config.backends_count_max);
    assert(pool.backends_count > 0 or pool.member_slots > 0); // Names not resolved yet.
    const backends = try allocator.alloc(Backend, count);
    errdefer allocator.free(backends);
    const available = try allocator.alloc(BitSet.AtomicWord, BitSet.wordsFor(count));
    errdefer allocator.free(available);
    const ejected = try allocator.alloc(BitSet.AtomicWord, BitSet.wordsFor(count));
    errdefer allocator.free(ejected);
    const members = try allocator.alloc(BitSet.AtomicWord, BitSet.wordsFor(count));
    @memset(backends, .{});
    @memset(ejected, .init(0));
    @memset(available, .init(0));
    @memset(members, .init(0));
    for (pool.backends(), backends[0..pool.backends_count], 0..) |*config_backend, *backend, i| {
        backend.name_len = @intCast(config_backend.address.toText(&backend.name_buffer).len);
        BitSet.setAtomic(available, @intCast(i));
        BitSet.setAtomic(members, @intCast(i));
    }
    return .{
        .backends = backends,
        .count = count,
        .members_count = .init(pool.backends_count),
        .members = members,
        .outlier = pool.outlier,
        .trial_timeout_ns = pool.connect_timeout_ns + pool.response_timeout_ns,
        .rise = pool.health.rise,
        .available = available,
        .ejected = ejected,
    };
}

pub fn deinit(health: *Health, allocator: std.mem.Allocator) void {
    allocator.free(health.backends);
    allocator.free(health.available);
    allocator.free(health.ejected);
    allocator.free(health.members);
    health.* = undefined;
}

/// A reload rebuilt the pool: backend `index` is backend `from_index` of the previous
/// instance, and keeps what it was known to be (up or down, ejected and for how long). Called
/// on the control thread before the new instance is published; the previous instance may
/// still be written by exchanges finishing on it, so this is a moment's copy.
pub fn carryOver(health: *Health, index: u16, from: *const Health, from_index: u16) void {
    assert(index < health.count and from_index < from.count);
    const source = &from.backends[from_index];
    const backend = &health.backends[index];
    backend.state.store(source.state.load(.acquire), .release);
    backend.active_up.store(source.active_up.load(.acquire), .release);
    backend.consecutive_failures.store(source.consecutive_failures.load(.monotonic), .monotonic);
    backend.until_ns.store(source.until_ns.load(.acquire), .release);
    backend.ejections_in_a_row = source.ejections_in_a_row;
    backend.last_ejection_ns = source.last_ejection_ns;
    if (backend.state.load(.acquire) != .serving) health.markEjected(index, true);
    health.refreshLocked(index);
}

/// Slot `index` takes a new member (`address`), with fresh health: up, serving, no failures
/// counted (upstream/Members.zig). The control thread, while the slot is free: no request is
/// in flight to it and no worker's table has it, so nothing reports on it meanwhile.
pub fn join(health: *Health, index: u16, address: *const Address) void {
    assert(index < health.count);
    assert(!BitSet.isSetAtomic(health.members, index));
    health.acquire();
    defer health.release();
    const backend = &health.backends[index];
    health.markEjected(index, false);
    backend.state.store(.serving, .release);
    backend.active_up.store(true, .release);
    backend.consecutive_failures.store(0, .monotonic);
    backend.until_ns.store(0, .release);
    backend.ejections_in_a_row = 0;
    backend.last_ejection_ns = 0;
    backend.active_passes_since_ejection = 0;
    backend.name_len = @intCast(address.toText(&backend.name_buffer).len);
    BitSet.setAtomic(health.members, index);
    _ = health.members_count.fetchAdd(1, .monotonic);
    health.refreshLocked(index);
}

/// Slot `index`'s member left the pool: it takes no new request (its bit in `available`
/// clears) and no longer counts toward the ejection cap. What is in flight to it may still
/// report; that changes nothing a pick reads.
pub fn leave(health: *Health, index: u16) void {
    assert(index < health.count);
    assert(BitSet.isSetAtomic(health.members, index));
    health.acquire();
    defer health.release();
    health.markEjected(index, false);
    health.backends[index].state.store(.serving, .release);
    BitSet.unsetAtomic(health.members, index);
    _ = health.members_count.fetchSub(1, .monotonic);
    health.refreshLocked(index);
}

// ---------------------------------------------------------------------------------------------
// Workers: on the request path

/// The backends that may take a new request now, one bit each: read a word at a time by the
/// pick (BitSet.nextSet), never copied.
pub fn availableWords(health: *const Health) []const BitSet.AtomicWord {
    return health.available;
}

/// A backend whose cool-down has run out and whose half-open trial this caller just claimed
/// (the request should go there), or null. One load when nothing is ejected; otherwise a walk
/// over the ejected set (a word per 64 members), which is rare.
pub fn claimAnyTrial(health: *Health, now_ns: u64) ?u16 {
    if (health.ejected_count.load(.acquire) == 0) return null;
    for (health.ejected, 0..) |*word, word_index| {
        var rest = word.load(.acquire);
        while (rest != 0) : (rest &= rest - 1) {
            const index: u16 = @intCast(word_index * BitSet.word_bits + @ctz(rest));
            const backend = &health.backends[index];
            if (!backend.active_up.load(.acquire)) continue;
            if (now_ns < backend.until_ns.load(.acquire)) continue;
            if (health.claimTrial(index, now_ns)) return index;
        }
    }
    return null;
}

/// Reports how an exchange with backend `index` went.
pub fn report(health: *Health, index: u16, outcome: Outcome, now_ns: u64) void {
    assert(index < health.count);
    const backend = &health.backends[index];
    if (outcome == .success or !outcome.isIn(health.outlier.on)) {
        // The common case costs a load: only a streak of failures needs a store.
        if (backend.consecutive_failures.load(.monotonic) != 0) {
            backend.consecutive_failures.store(0, .monotonic);
        }
        if (backend.state.load(.acquire) == .trial) health.endTrial(index, true, outcome, now_ns);
        return;
    }
    if (backend.state.load(.acquire) == .trial) return health.endTrial(index, false, outcome, now_ns);
    if (health.outlier.consecutive_failures == 0) return;
    const failures = backend.consecutive_failures.fetchAdd(1, .monotonic) + 1;
    // Exactly one reporter sees the threshold crossed, so one ejection per streak.
    if (failures == health.outlier.consecutive_failures) health.eject(index, outcome, now_ns);
}

// ---------------------------------------------------------------------------------------------
// The control thread: active checks

/// The active check flipped backend `index` up or down (`rise`/`fall` reached).
pub fn setActive(health: *Health, index: u16, up: bool, reason: []const u8) void {
    assert(index < health.count);
    health.acquire();
    defer health.release();
    const backend = &health.backends[index];
    backend.active_up.store(up, .release);
    const was_ejected = up and backend.state.load(.acquire) != .serving;
    if (up) {
        _ = health.stats.active_ups.fetchAdd(1, .monotonic);
        if (was_ejected) health.unejectLocked(index);
    } else {
        _ = health.stats.active_downs.fetchAdd(1, .monotonic);
    }
    // The mask first, then the line: whoever reads the line sees the state it announces.
    health.refreshLocked(index);
    if (was_ejected) {
        // Down by the checks while ejected, then up: the rise ends the ejection too.
        log.info("backend {s} is up: active checks pass, ejection ended", .{backend.name()});
    } else if (up) {
        log.info("backend {s} is up: active checks pass", .{backend.name()});
    } else {
        log.warn("backend {s} is down: active check failed ({s})", .{ backend.name(), reason });
    }
}

/// One active check passed. `rise` of them in a row end an ejection.
pub fn activePassed(health: *Health, index: u16) void {
    assert(index < health.count);
    const backend = &health.backends[index];
    if (backend.state.load(.acquire) == .serving) return;
    health.acquire();
    defer health.release();
    if (backend.state.load(.acquire) == .serving) return;
    backend.active_passes_since_ejection += 1;
    if (backend.active_passes_since_ejection < health.rise) return;
    health.unejectLocked(index);
    health.refreshLocked(index);
    log.info("backend {s}: ejection ended by {d} passing active checks", .{
        backend.name(), health.rise,
    });
}

/// One active check failed: the streak of passes that would end an ejection starts over.
pub fn activeFailed(health: *Health, index: u16) void {
    const backend = &health.backends[index];
    if (backend.state.load(.acquire) == .serving) return;
    health.acquire();
    defer health.release();
    backend.active_passes_since_ejection = 0;
}

/// Whether a backend not in `excluded` is available or ejected (one may come back as a
/// trial), without claiming a trial: for "is there anything left to try" before a retry. Walks
/// the sets only until one is found (rare path: once per retry).
pub fn mayTakeRequestsBeyond(health: *const Health, excluded: []const u16) bool {
    for (health.available, health.ejected, 0..) |*available, *ejected, word_index| {
        var rest = available.load(.acquire) | ejected.load(.acquire);
        while (rest != 0) : (rest &= rest - 1) {
            const index: u16 = @intCast(word_index * BitSet.word_bits + @ctz(rest));
            if (std.mem.indexOfScalar(u16, excluded, index) == null) return true;
        }
    }
    return false;
}

pub fn isAvailable(health: *const Health, index: u16) bool {
    return BitSet.isSetAtomic(health.available, index);
}

pub fn isEjected(health: *const Health, index: u16) bool {
    return BitSet.isSetAtomic(health.ejected, index);
}

pub fn ejectedCount(health: *const Health) u32 {
    return health.ejected_count.load(.acquire);
}

// ---------------------------------------------------------------------------------------------
// Transitions (rare; under the lock)

fn eject(health: *Health, index: u16, outcome: Outcome, now_ns: u64) void {
    health.acquire();
    defer health.release();
    const backend = &health.backends[index];
    if (backend.state.load(.acquire) != .serving) return;
    // Rounded down: a pool of one backend is never ejected from (nothing to fail over to; as
    // nginx ignores max_fails for a lone server), nor a pool of three at 50% more than one.
    const members_count = health.members_count.load(.monotonic);
    const ejected_max = members_count * health.outlier.max_ejected_percent / 100;
    if (health.ejectedCount() >= ejected_max) {
        _ = health.stats.ejections_refused_by_cap.fetchAdd(1, .monotonic);
        log.warn("backend {s}: {d} consecutive failures (last: {s}), not ejected: {d} of {d} " ++
            "backends already are (max {d}%)", .{
            backend.name(), health.outlier.consecutive_failures,
            outcome.text(), health.ejectedCount(),
            members_count,  health.outlier.max_ejected_percent,
        });
        return;
    }
    const cooldown_ns = health.nextCooldownLocked(backend, now_ns);
    health.ejectLocked(index, now_ns, cooldown_ns);
    log.warn("backend {s} ejected for {d} ms: {d} consecutive failures (last: {s})", .{
        backend.name(),
        cooldown_ns / std.time.ns_per_ms,
        health.outlier.consecutive_failures,
        outcome.text(),
    });
}

fn claimTrial(health: *Health, index: u16, now_ns: u64) bool {
    health.acquire();
    defer health.release();
    const backend = &health.backends[index];
    const state = backend.state.load(.acquire);
    if (state == .serving) return false;
    if (now_ns < backend.until_ns.load(.acquire)) return false; // Someone else claimed it.
    backend.state.store(.trial, .release);
    backend.until_ns.store(now_ns + health.trial_timeout_ns, .release);
    _ = health.stats.trials.fetchAdd(1, .monotonic);
    return true;
}

fn endTrial(health: *Health, index: u16, passed: bool, outcome: Outcome, now_ns: u64) void {
    health.acquire();
    defer health.release();
    const backend = &health.backends[index];
    if (backend.state.load(.acquire) != .trial) return; // Ended by an active check meanwhile.
    if (passed) {
        health.unejectLocked(index);
        health.refreshLocked(index);
        log.info("backend {s}: trial request succeeded, back in rotation", .{backend.name()});
        return;
    }
    const cooldown_ns = health.nextCooldownLocked(backend, now_ns);
    health.ejectLocked(index, now_ns, cooldown_ns);
    log.warn("backend {s}: trial request failed ({s}), ejected again for {d} ms", .{
        backend.name(), outcome.text(), cooldown_ns / std.time.ns_per_ms,
    });
}

/// Doubles with each ejection that follows the last one within the longest cool-down.
fn nextCooldownLocked(health: *Health, backend: *Backend, now_ns: u64) u64 {
    const max_ns = @max(health.outlier.ejection_max_ns, health.outlier.ejection_ns);
    const recent = backend.ejections_in_a_row > 0 and
        now_ns -| backend.last_ejection_ns < max_ns + health.trial_timeout_ns;
    backend.ejections_in_a_row = if (recent) backend.ejections_in_a_row + 1 else 1;
    backend.last_ejection_ns = now_ns;
    const shift: u6 = @intCast(@min(backend.ejections_in_a_row - 1, 32));
    const grown = std.math.shlExact(u64, health.outlier.ejection_ns, shift) catch max_ns;
    return @min(grown, max_ns);
}

fn ejectLocked(health: *Health, index: u16, now_ns: u64, cooldown_ns: u64) void {
    const backend = &health.backends[index];
    backend.state.store(.ejected, .release);
    backend.until_ns.store(now_ns + cooldown_ns, .release);
    backend.active_passes_since_ejection = 0;
    health.markEjected(index, true);
    _ = health.stats.ejections.fetchAdd(1, .monotonic);
    health.refreshLocked(index);
}

fn unejectLocked(health: *Health, index: u16) void {
    const backend = &health.backends[index];
    backend.state.store(.serving, .release);
    backend.consecutive_failures.store(0, .monotonic);
    health.markEjected(index, false);
}

/// Sets or clears `index`'s bit in `ejected`, keeping `ejected_count` in step (under the lock,
/// or before the instance is published).
fn markEjected(health: *Health, index: u16, ejected: bool) void {
    if (health.isEjected(index) == ejected) return;
    if (ejected) {
        BitSet.setAtomic(health.ejected, index);
        _ = health.ejected_count.fetchAdd(1, .acq_rel);
    } else {
        BitSet.unsetAtomic(health.ejected, index);
        _ = health.ejected_count.fetchSub(1, .acq_rel);
    }
}

/// Recomputes backend `index`'s bit in `available` from its state.
fn refreshLocked(health: *Health, index: u16) void {
    const backend = &health.backends[index];
    const takes = BitSet.isSetAtomic(health.members, index) and
        backend.active_up.load(.acquire) and backend.state.load(.acquire) == .serving;
    if (takes) BitSet.setAtomic(health.available, index) else BitSet.unsetAtomic(health.available, index);
}

fn acquire(health: *Health) void {
    while (health.lock.cmpxchgWeak(false, true, .acquire, .monotonic) != null) {
        std.atomic.spinLoopHint();
    }
}

fn release(health: *Health) void {
    assert(health.lock.load(.monotonic));
    health.lock.store(false, .release);
}

// ---------------------------------------------------------------------------------------------

/// A pool of `count` backends, its list in `arena`.
fn availableMask(health: *const Health) u64 {
    return health.available[0].load(.acquire);
}

fn testPool(arena: std.mem.Allocator, count: u32) Config.Pool {
    var pool: Config.Pool = .{};
    const list = arena.alloc(Config.Backend, count) catch unreachable; // Tests have memory.
    for (list, 0..) |*backend, i| {
        backend.* = .{ .address = Address.initIp4(.{ 127, 0, 0, 1 }, @intCast(9000 + i)) };
    }
    pool.setBackends(list) catch unreachable; // At most the maximum.
    pool.outlier.consecutive_failures = 3;
    pool.outlier.ejection_ns = 100;
    pool.outlier.ejection_max_ns = 1000;
    pool.connect_timeout_ns = 10;
    pool.response_timeout_ns = 10;
    return pool;
}

test "health: consecutive failures eject once; success in between resets the streak" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    const pool = testPool(test_arena.allocator(), 4);
    var health: Health = try .init(test_arena.allocator(), &pool, pool.backends_count);
    try std.testing.expectEqual(@as(u64, 0b1111), availableMask(&health));
    health.report(1, .reset, 0);
    health.report(1, .reset, 0);
    health.report(1, .success, 0);
    health.report(1, .reset, 0);
    health.report(1, .reset, 0);
    try std.testing.expect(health.isAvailable(1));
    health.report(1, .timeout, 0);
    try std.testing.expect(!health.isAvailable(1));
    try std.testing.expectEqual(@as(u64, 0b1101), availableMask(&health));
    health.report(1, .reset, 0); // More failures while ejected change nothing.
    try std.testing.expectEqual(@as(u64, 1), health.stats.ejections.load(.monotonic));
    // A kind not in `on` is not a failure.
    health.report(2, .status_5xx, 0);
    health.report(2, .status_5xx, 0);
    health.report(2, .status_5xx, 0);
    try std.testing.expect(health.isAvailable(2));
}

test "health: cool-down, half-open trial, growing ejections" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    const pool = testPool(test_arena.allocator(), 4);
    var health: Health = try .init(test_arena.allocator(), &pool, pool.backends_count);
    for (0..3) |_| health.report(0, .connect, 0);
    try std.testing.expect(!health.isAvailable(0));
    // Cool-down (100 ns) not over: no trial.
    try std.testing.expectEqual(@as(?u16, null), health.claimAnyTrial(99));
    // Over: exactly one caller claims the trial.
    try std.testing.expectEqual(@as(?u16, 0), health.claimAnyTrial(100));
    try std.testing.expectEqual(@as(?u16, null), health.claimAnyTrial(101));
    // The trial fails: ejected again, for twice as long.
    health.report(0, .connect, 105);
    try std.testing.expectEqual(@as(?u16, null), health.claimAnyTrial(300));
    try std.testing.expectEqual(@as(?u16, 0), health.claimAnyTrial(305));
    // This one succeeds: back in rotation.
    health.report(0, .success, 310);
    try std.testing.expect(health.isAvailable(0));
    try std.testing.expectEqual(@as(u32, 0), health.ejectedCount());
    // A trial whose verdict never comes can be claimed again after the trial timeout.
    for (0..3) |_| health.report(0, .connect, 400);
    const cooldown = health.backends[0].until_ns.load(.monotonic) - 400;
    try std.testing.expectEqual(@as(u64, 400), cooldown); // Third in a row: 100 << 2.
    try std.testing.expectEqual(@as(?u16, 0), health.claimAnyTrial(800));
    try std.testing.expectEqual(@as(?u16, null), health.claimAnyTrial(810));
    try std.testing.expectEqual(@as(?u16, 0), health.claimAnyTrial(820));
}

test "health: at most max_ejected_percent of the pool, rounded down" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var pool = testPool(test_arena.allocator(), 4);
    pool.outlier.max_ejected_percent = 50;
    var health: Health = try .init(test_arena.allocator(), &pool, pool.backends_count);
    for (0..4) |index| {
        for (0..3) |_| health.report(@intCast(index), .reset, 0);
    }
    try std.testing.expectEqual(@as(u32, 2), health.ejectedCount());
    try std.testing.expectEqual(@as(u64, 2), health.stats.ejections_refused_by_cap.load(.monotonic));

    var single = testPool(test_arena.allocator(), 1);
    single.outlier.max_ejected_percent = 50;
    var one: Health = try .init(test_arena.allocator(), &single, single.backends_count);
    for (0..3) |_| one.report(0, .reset, 0);
    try std.testing.expectEqual(@as(u32, 0), one.ejectedCount());
    try std.testing.expectEqual(@as(u64, 1), availableMask(&one));
    single.outlier.max_ejected_percent = 100;
    var all: Health = try .init(test_arena.allocator(), &single, single.backends_count);
    for (0..3) |_| all.report(0, .reset, 0);
    try std.testing.expectEqual(@as(u64, 0), availableMask(&all));
}

test "health: active down wins; active passes end an ejection; no fight over growth" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var pool = testPool(test_arena.allocator(), 2);
    pool.health.rise = 2;
    var health: Health = try .init(test_arena.allocator(), &pool, pool.backends_count);
    health.setActive(0, false, "status 503");
    try std.testing.expectEqual(@as(u64, 0b10), availableMask(&health));
    health.setActive(0, true, "");
    try std.testing.expectEqual(@as(u64, 0b11), availableMask(&health));

    for (0..3) |_| health.report(1, .reset, 0);
    try std.testing.expect(!health.isAvailable(1));
    health.activePassed(1);
    health.activeFailed(1);
    health.activePassed(1);
    try std.testing.expect(!health.isAvailable(1)); // The streak was broken.
    health.activePassed(1);
    try std.testing.expect(health.isAvailable(1));
    // Ejected again soon after: the cool-down still grows.
    for (0..3) |_| health.report(1, .reset, 10);
    try std.testing.expectEqual(@as(u64, 200), health.backends[1].until_ns.load(.monotonic) - 10);
    // Down by active checks while ejected: no trial is claimed for it.
    health.setActive(1, false, "timed out");
    try std.testing.expectEqual(@as(?u16, null), health.claimAnyTrial(10_000));
    // Its rise ends the ejection as well: up and serving, long before the cool-down is over.
    health.setActive(1, true, "");
    try std.testing.expect(health.isAvailable(1) and !health.isEjected(1));
    try std.testing.expectEqual(@as(u32, 0), health.ejectedCount());
}

test "health: 1,024 backends use every bit of every word" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var pool = testPool(test_arena.allocator(), 1024);
    pool.outlier.max_ejected_percent = 100;
    var health: Health = try .init(test_arena.allocator(), &pool, pool.backends_count);
    try std.testing.expectEqual(@as(usize, 16), health.available.len);
    try std.testing.expectEqual(@as(u32, 1024), BitSet.countAtomic(health.available));
    for ([_]u16{ 0, 63, 64, 1023 }) |index| {
        for (0..3) |_| health.report(index, .reset, 0);
        try std.testing.expect(!health.isAvailable(index) and health.isEjected(index));
    }
    try std.testing.expectEqual(@as(u32, 1020), BitSet.countAtomic(health.available));
    try std.testing.expectEqual(@as(u32, 4), health.ejectedCount());
    // Every ejected member's cool-down is over: each is claimed as a trial once.
    var claimed: u32 = 0;
    while (health.claimAnyTrial(1_000_000)) |index| : (claimed += 1) health.report(index, .success, 1_000_000);
    try std.testing.expectEqual(@as(u32, 4), claimed);
    try std.testing.expectEqual(@as(u32, 1024), BitSet.countAtomic(health.available));
    try std.testing.expect(health.mayTakeRequestsBeyond(&.{ 0, 1, 2 }));
}

test "health: a member that leaves takes nothing and leaves the ejection cap; one that joins starts fresh" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var pool = testPool(test_arena.allocator(), 4);
    pool.outlier.max_ejected_percent = 50;
    // Six slots, four members: slots 4 and 5 are free and never available.
    var health: Health = try .init(test_arena.allocator(), &pool, 6);
    try std.testing.expect(!health.isAvailable(4) and !health.isAvailable(5));
    for (0..3) |_| health.report(1, .connect, 0); // Ejected: 1 of 4 (cap 2).
    try std.testing.expect(health.isEjected(1));
    health.leave(1);
    health.leave(2);
    try std.testing.expect(!health.isAvailable(1) and !health.isAvailable(2));
    try std.testing.expectEqual(@as(u32, 0), health.ejectedCount());
    try std.testing.expectEqual(@as(u32, 2), health.members_count.load(.monotonic));
    // Two members now, cap 50%: one may be ejected.
    for (0..3) |_| health.report(0, .connect, 0);
    try std.testing.expect(health.isEjected(0));
    for (0..3) |_| health.report(3, .connect, 0);
    try std.testing.expect(!health.isEjected(3)); // Over the cap of the members there are.
    // Slot 1 is taken again by another member: up, serving, nothing counted.
    const address = Address.initIp4(.{ 127, 0, 0, 2 }, 9000);
    health.join(1, &address);
    try std.testing.expect(health.isAvailable(1) and !health.isEjected(1));
    try std.testing.expectEqual(@as(u32, 0), health.backends[1].consecutive_failures.load(.monotonic));
    try std.testing.expectEqualStrings("127.0.0.2:9000", health.backends[1].name());
    try std.testing.expectEqual(@as(u32, 3), health.members_count.load(.monotonic));
}
