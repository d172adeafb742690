//! A deadline with a callback, linked into one TimerQueue while armed. Caller-owned (inside a
//! session), starts as `.{}`, armed and canceled through the Loop (`timerArm`, `timerCancel`).
//!
//! Decision: no syscall per arm. A timer is a node in an intrusive list whose every member
//! shares one duration, so arming is an O(1) append and the list stays sorted by deadline; the
//! loop only looks at each queue's head to size its wait.
const std = @import("std");
const assert = std.debug.assert;

const TimerQueue = @import("TimerQueue.zig");

const Timer = @This();

prev: ?*Timer = null,
next: ?*Timer = null,
/// The queue this timer is linked into; null when not armed.
queue: ?*TimerQueue = null,
deadline_ns: u64 = 0,
context: ?*anyopaque = null,
callback: Callback = undefined,

pub const Callback = *const fn (context: ?*anyopaque) void;

pub fn isArmed(timer: *const Timer) bool {
    assert(timer.queue != null or (timer.prev == null and timer.next == null));
    return timer.queue != null;
}
