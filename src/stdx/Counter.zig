//! A number one thread writes and others read: the worker's counters that the control thread
//! sums for `/metrics`, `/status` and the SIGUSR2 line.
//!
//! Decision: a relaxed atomic load and store, never a read-modify-write. With one writer no
//! increment can be lost, so no `lock` prefix is needed: on x86-64 `add` compiles to the same
//! load, add and store a plain `+=` does, and a reader sees some recent value, never a torn
//! one. A plain `+=` read by another thread is a data race under Zig's memory model even where
//! the hardware forgives it; this is the same instructions without the race.
const std = @import("std");

const Counter = @This();

value: std.atomic.Value(u64) = .init(0),

/// The writer thread only.
pub inline fn add(counter: *Counter, n: u64) void {
    counter.value.store(counter.value.load(.monotonic) +% n, .monotonic);
}

/// The writer thread only (a gauge, such as requests in flight).
pub inline fn sub(counter: *Counter, n: u64) void {
    const before = counter.value.load(.monotonic);
    std.debug.assert(before >= n);
    counter.value.store(before - n, .monotonic);
}

/// The writer thread only: carrying a value over from an instance no one writes any more.
pub inline fn set(counter: *Counter, n: u64) void {
    counter.value.store(n, .monotonic);
}

/// How the counts of an instance that a reload replaced go on in its successor, each exactly
/// once: `.carry` when the successor is built (it starts from `from`'s count), `.move` later
/// for what `from` counted since (the writer thread of `counter` only). `accounted` remembers
/// what of `from` is in a successor already.
pub const Transfer = enum { carry, move };

pub inline fn transfer(counter: *Counter, comptime how: Transfer, from: *const Counter, accounted: *Counter) void {
    const now = from.load();
    switch (how) {
        .carry => counter.set(now),
        .move => counter.add(now -% accounted.load()),
    }
    accounted.set(now);
}

/// Any thread.
pub inline fn load(counter: *const Counter) u64 {
    return counter.value.load(.monotonic);
}

test "counter: the writer's adds and subs are what any thread loads" {
    var counter: Counter = .{};
    counter.add(5);
    counter.add(1);
    counter.sub(2);
    try std.testing.expectEqual(@as(u64, 4), counter.load());
    counter.set(9);
    try std.testing.expectEqual(@as(u64, 9), counter.load());
    try std.testing.expectEqual(@sizeOf(u64), @sizeOf(Counter));
}

test "counter: a transfer counts what the old instance counted exactly once" {
    var old: Counter = .{};
    var new: Counter = .{};
    var accounted: Counter = .{};
    old.add(7);
    new.transfer(.carry, &old, &accounted); // A reload builds the successor.
    new.add(1);
    old.add(2); // An exchange of the old generation finishes late.
    new.transfer(.move, &old, &accounted);
    old.add(4);
    new.transfer(.move, &old, &accounted);
    new.transfer(.move, &old, &accounted); // Nothing new: nothing added.
    try std.testing.expectEqual(@as(u64, 7 + 1 + 2 + 4), new.load());
}

test "counter: a reader on another thread only ever sees values the writer wrote" {
    var counter: Counter = .{};
    const rounds = 100_000;
    const Reader = struct {
        fn run(c: *const Counter, done: *std.atomic.Value(bool), bad: *std.atomic.Value(bool)) void {
            var last: u64 = 0;
            while (!done.load(.acquire)) {
                const now = c.load();
                if (now < last or now > rounds) bad.store(true, .release);
                last = now;
            }
        }
    };
    var done: std.atomic.Value(bool) = .init(false);
    var bad: std.atomic.Value(bool) = .init(false);
    const thread = try std.Thread.spawn(.{}, Reader.run, .{ &counter, &done, &bad });
    for (0..rounds) |_| counter.add(1);
    done.store(true, .release);
    thread.join();
    try std.testing.expect(!bad.load(.acquire));
    try std.testing.expectEqual(@as(u64, rounds), counter.load());
}
