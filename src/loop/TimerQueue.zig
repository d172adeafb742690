//! A doubly linked list of armed Timers that all share `duration_ns`, so appending at the tail
//! keeps it sorted by deadline (deadlines are "now + duration" and now never goes backwards).
//! One queue per kind of deadline (client header, client idle, upstream connect, ...); the
//! caller owns it and registers it with the Loop once.
const std = @import("std");
const assert = std.debug.assert;

const Timer = @import("Timer.zig");

const TimerQueue = @This();

duration_ns: u64,
head: ?*Timer = null,
tail: ?*Timer = null,
/// Set by Loop.timerQueueRegister; a queue belongs to one loop.
registered: bool = false,

pub fn init(duration_ns: u64) TimerQueue {
    // A zero duration would let a timer callback re-arm itself into the pass that is expiring
    // it, forever.
    assert(duration_ns > 0);
    return .{ .duration_ns = duration_ns };
}

/// Links an unarmed timer at the tail. O(1).
pub fn append(queue: *TimerQueue, timer: *Timer, deadline_ns: u64) void {
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
    // Model-based: the list must always equal the armed timers ordered by (deadline, arm order).
    const seed: u64 = std.testing.random_seed;
    errdefer std.debug.print("timer queue model test seed: {d}\n", .{seed});
    var prng = std.Random.DefaultPrng.init(seed);
    const random = prng.random();

    const timers_count = 32;
    var timers: [timers_count]Timer = @splat(.{});
    var armed_order: [timers_count]u64 = @splat(0); // 0 = not armed, else arm sequence number
    var queue: TimerQueue = .init(100);
    var now: u64 = 0;
    var sequence: u64 = 0;

    for (0..10_000) |_| {
        const index = random.uintLessThan(usize, timers_count);
        const timer = &timers[index];
        now += random.uintLessThan(u64, 3);
        if (random.boolean()) {
            if (timer.isArmed()) queue.remove(timer);
            queue.append(timer, now + queue.duration_ns);
            sequence += 1;
            armed_order[index] = sequence;
        } else if (timer.isArmed()) {
            queue.remove(timer);
            armed_order[index] = 0;
        }

        // Walk the list: every armed timer appears once, in arm order, deadlines sorted.
        var seen: usize = 0;
        var previous_sequence: u64 = 0;
        var cursor = queue.head;
        var previous: ?*Timer = null;
        while (cursor) |current| : (cursor = current.next) {
            const i = (@intFromPtr(current) - @intFromPtr(&timers[0])) / @sizeOf(Timer);
            try std.testing.expect(armed_order[i] > previous_sequence);
            try std.testing.expectEqual(previous, current.prev);
            if (previous) |p| try std.testing.expect(p.deadline_ns <= current.deadline_ns);
            previous_sequence = armed_order[i];
            previous = current;
            seen += 1;
        }
        try std.testing.expectEqual(previous, queue.tail);
        var armed: usize = 0;
        for (armed_order) |order| armed += @intFromBool(order != 0);
        try std.testing.expectEqual(armed, seen);
    }
}
