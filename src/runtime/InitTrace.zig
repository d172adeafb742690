//! `--trace-init`: each start-up phase's own cost and the running total, in nanoseconds, so a
//! cold start is measured phase by phase rather than guessed. The clock is read only when the
//! flag is on: off, a phase mark is one predictable branch.
//!
//! The total starts when `main` starts: what the kernel and the loader spend before that
//! (exec, mapping a static binary) is outside the process's view; `bench/coldstart` measures
//! spawn to first proxied response from outside.
const std = @import("std");
const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");

const InitTrace = @This();

enabled: bool = false,
start_ns: u64 = 0,
last_ns: u64 = 0,
/// The first accept is marked by a worker, possibly while the control thread marks its last
/// phase: marks are serialised so that each line's own cost and total stay consistent.
lock: std.atomic.Value(bool) = .init(false),

pub fn begin(trace: *InitTrace) void {
    if (!trace.enabled) return;
    trace.start_ns = sys.clockMonotonicNs();
    trace.last_ns = trace.start_ns;
}

/// Marks the end of phase `name`: prints what it cost and the total so far.
pub fn mark(trace: *InitTrace, comptime name: []const u8) void {
    if (!trace.enabled) return;
    while (trace.lock.cmpxchgWeak(false, true, .acquire, .monotonic) != null) {
        std.atomic.spinLoopHint();
    }
    defer trace.lock.store(false, .release);
    const now_ns = sys.clockMonotonicNs();
    log.info("init {s:<16} {d:>9} ns  total {d:>9} ns", .{
        name,
        now_ns - trace.last_ns,
        now_ns - trace.start_ns,
    });
    trace.last_ns = now_ns;
}

/// The process-wide trace: written by the control thread during start-up, and read once by
/// the worker that accepts the first connection (`markFirstAccept`).
pub var global: InitTrace = .{};
var first_accept_done: std.atomic.Value(bool) = .init(false);

/// Called by a worker on every accept: prints the "first accept" phase once.
pub fn markFirstAccept() void {
    if (!global.enabled) return;
    if (first_accept_done.swap(true, .acq_rel)) return;
    global.mark("first accept");
}

test "init trace: off costs nothing and prints nothing" {
    var trace: InitTrace = .{};
    trace.begin();
    trace.mark("config");
    try std.testing.expectEqual(@as(u64, 0), trace.start_ns);
}
