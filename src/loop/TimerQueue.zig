//! A doubly linked list of armed Timers that all share `duration_ns`, so appending at the tail
//! keeps it sorted by deadline (deadlines are "now + duration" and now never goes backwards).
//! One queue per kind of deadline (client header, client idle, upstream connect, ...); the
//! caller owns it and registers it with the Loop once.
//!
//! A queue made with `initAnyDeadline` takes timers of any deadline instead (a JavaScript
//! handler's `setTimeout`, whose delay the script chooses): `insert` keeps it sorted by walking
//! from the tail, O(timers armed in it), which its owner bounds.
const std = @import("std");
const assert = std.debug.assert;

const Timer = @import("Timer.zig");

const TimerQueue = @This();

duration_ns: u64,
head: ?*Timer = null,
tail: ?*Timer = null,
/// Set by Loop.timerQueueRegister; a queue belongs to one loop.
registered: bool = false,
/// Timers of any deadline (`insert`), not `duration_ns` after now (`append`).
any_deadline: bool = false,

pub fn init(duration_ns: u64) TimerQueue {
    // A zero duration would let a timer callback re-arm itself into the pass that is expiring
    // it, forever.
    assert(duration_ns > 0);
    return .{ .duration_ns = duration_ns };
}

/// A queue for timers of any deadline (`insert`). `duration_ns` is unused but kept non-zero,
/// so the loop treats it as any other queue.
pub fn initAnyDeadline() TimerQueue {
    return .{ .duration_ns = 1, .any_deadline = true };
}

/// Links an unarmed timer where its deadline puts it: after every timer due no later (so
/// equal deadlines keep arm order). O(timers later than it).
pub fn insert(queue: *TimerQueue, timer: *Timer, deadline_ns: u64) void {
    assert(queue.any_deadline);
    assert(!timer.isArmed());
    var after = queue.tail;
    while (after) |candidate| : (after = candidate.prev) {
        if (candidate.deadline_ns <= deadline_ns) break;
    }
    const before = if (after) |a| a.next else queue.head;
    timer.prev = after;
    timer.next = before;
    timer.queue = queue;
    timer.deadline_ns = deadline_ns;
    if (after) |a| a.next = timer else queue.head = timer;
    if (before) |b| b.prev = timer else queue.tail = timer;
    assert(queue.head != null and queue.tail != null);
}

/// Links an unarmed timer at the tail. O(1).
pub fn append(queue: *TimerQueue, timer: *Timer, deadline_ns: u64) void {
    assert(!queue.any_deadline);
    assert(!timer.isArmed());
    if (queue.tail) |tail| {
        // Sortedness: the deadline is now + duration with a monotonic now.
        assert(tail.deadline_ns <= deadline_ns);
        tail.next = timer;
    } else {
        assert(queue.head == null);
        queue.head = timer;
    }
    timer.prev = queue.tail;
    timer.next = null;
    timer.queue = queue;
    timer.deadline_ns = deadline_ns;
    queue.tail = timer;
}

/// Unlinks an armed timer of this queue. O(1).
pub fn remove(queue: *TimerQueue, timer: *Timer) void {
    assert(timer.queue == queue);
    if (timer.prev) |prev| prev.next = timer.next else queue.head = timer.next;
    if (timer.next) |next| next.prev = timer.prev else queue.tail = timer.prev;
    timer.prev = null;
    timer.next = null;
    timer.queue = null;
    assert((queue.head == null) == (queue.tail == null));
}

pub fn earliestDeadline(queue: *const TimerQueue) ?u64 {
    const head = queue.head orelse return null;
    return head.deadline_ns;
}

test "timer queue: random arms and cancels match a sorted model" {
    try checkAgainstModel(false);
}

test "timer queue: timers of any deadline stay sorted, equal deadlines in arm order" {
    try checkAgainstModel(true);
}

/// Model-based: after every random arm or cancel, the list must equal the armed timers
/// ordered by (deadline, arm order). A fixed-duration queue gets now + duration (so arm order
/// is the whole order); a queue of any deadline gets few distinct deadlines (many ties).
fn checkAgainstModel(comptime any_deadline: bool) !void {
    const seed: u64 = std.testing.random_seed;
    errdefer std.debug.print("timer queue model test seed: {d} (any deadline: {})\n", .{ seed, any_deadline });
    var prng = std.Random.DefaultPrng.init(seed);
    const random = prng.random();

    const timers_count = 32;
    var timers: [timers_count]Timer = @splat(.{});
    var armed_order: [timers_count]u64 = @splat(0); // 0 = not armed, else arm sequence number
    var queue: TimerQueue = if (any_deadline) .initAnyDeadline() else .init(100);
    var now: u64 = 0;
    var sequence: u64 = 0;

    for (0..10_000) |_| {
        const index = random.uintLessThan(usize, timers_count);
        const timer = &timers[index];
        now += random.uintLessThan(u64, 3);
        if (random.boolean()) {
            if (timer.isArmed()) queue.remove(timer);
            if (any_deadline) queue.insert(timer, random.uintLessThan(u64, 8)) else queue.append(timer, now + queue.duration_ns);
            sequence += 1;
            armed_order[index] = sequence;
        } else if (timer.isArmed()) {
            queue.remove(timer);
            armed_order[index] = 0;
        }

        // Walk the list: every armed timer appears once, deadlines sorted, ties in arm order.
        var seen: usize = 0;
        var cursor = queue.head;
        var previous: ?*Timer = null;
        while (cursor) |current| : (cursor = current.next) {
            try std.testing.expectEqual(previous, current.prev);
            if (previous) |p| {
                try std.testing.expect(p.deadline_ns <= current.deadline_ns);
                const i = (@intFromPtr(current) - @intFromPtr(&timers[0])) / @sizeOf(Timer);
                const j = (@intFromPtr(p) - @intFromPtr(&timers[0])) / @sizeOf(Timer);
                if (!any_deadline or p.deadline_ns == current.deadline_ns) {
                    try std.testing.expect(armed_order[j] < armed_order[i]);
                }
            }
            previous = current;
            seen += 1;
        }
        try std.testing.expectEqual(previous, queue.tail);
        var armed: usize = 0;
        for (armed_order) |order| armed += @intFromBool(order != 0);
        try std.testing.expectEqual(armed, seen);
    }
}
