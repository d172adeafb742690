//! setTimeout, setInterval, clearTimeout and clearInterval: the first host operation, a
//! promise settled from outside any job.
//!
//! A run's timers are a list in its heap (`Vm.timers_head`), soonest first, equal times in
//! the order they were set, as node fires them. Nothing here waits: the host does. When a
//! run's code returns with timers set, its owner decides when to come back (`sluice js run`
//! sleeps until the first is due; a handler's exchange arms a worker timer and serves other
//! requests meanwhile: Engine.zig) and calls `Vm.runTimers`, which runs each timer due by then
//! and drains the microtask queue after each, as node does between two timers.
//!
//! The delay is node's: a number of milliseconds, 1 when it is below 1, above 2^31 - 1 or not
//! a number. The id is a number, as in browsers and WinterTC runtimes (node returns an
//! object). Each timer is a few words of the run's arena and inserting one is charged per
//! timer it passes, so a script that sets many pays for them like any other work.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const ops = @import("../operations.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");
const promises = @import("promises.zig");
const arg = builtins.arg;

pub const Timer = struct {
    next: ?*Timer = null,
    id: u32,
    /// When it is due, on the Vm's clock (monotonic nanoseconds).
    due_ns: u64,
    /// setInterval's period; 0 for setTimeout.
    interval_ns: u64,
    callback: Value,
    /// The arguments after the delay, passed to the callback.
    args: []const Value,
};

/// node's TIMEOUT_MAX: a longer delay is taken as 1 ms, as node does (with a warning).
const delay_ms_max: f64 = 2147483647;

/// What a timer costs beyond the call it makes.
const timer_ticks = 16;

pub fn setTimeout(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return arm(vm, args, false);
}

pub fn setInterval(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return arm(vm, args, true);
}

/// clearTimeout and clearInterval (which node makes the same function): an id that names no
/// timer set in this run is ignored.
pub fn clearTimeout(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const id = arg(args, 0);
    if (!id.isNumber()) return Value.undefined_value;
    var link = &vm.timers_head;
    while (link.*) |timer| : (link = &timer.next) {
        try vm.charge(1);
        if (@as(f64, @floatFromInt(timer.id)) == id.asNumber()) {
            link.* = timer.next;
            break;
        }
    }
    return Value.undefined_value;
}

fn arm(vm: *Vm, args: []const Value, repeat: bool) Error!Value {
    if (!vm.timers_allowed) {
        return vm.throwMessage(.type_error, "timers belong to a request: a handler's top-level code cannot set one");
    }
    const callback = arg(args, 0);
    if (!ops.isCallable(callback)) {
        return vm.throwFmt(.type_error, "The \"callback\" argument must be of type function. Received {f}", .{ops.ValueText{ .vm = vm, .v = callback }});
    }
    const delay_ms = try delayOf(vm, arg(args, 1));
    const extra = if (args.len > 2) args[2..] else &.{};
    const kept = vm.heap.alloc(Value, extra.len) catch return vm.outOfMemory();
    try vm.charge(meter.elementsCost(extra.len) + timer_ticks);
    @memcpy(kept, extra);
    const timer = vm.heap.create(Timer) catch return vm.outOfMemory();
    const delay_ns = delay_ms * std.time.ns_per_ms;
    timer.* = .{
        .id = vm.timer_next_id,
        .due_ns = vm.clock() +| delay_ns,
        .interval_ns = if (repeat) delay_ns else 0,
        .callback = callback,
        .args = kept,
    };
    vm.timer_next_id +%= 1;
    if (vm.timer_next_id == 0) vm.timer_next_id = 1; // 0 is never an id (`if (id)` reads it so).
    try insert(vm, timer);
    return Value.number(@floatFromInt(timer.id));
}

/// node's rule: `after *= 1; if (!(after >= 1 && after <= TIMEOUT_MAX)) after = 1`, in whole
/// milliseconds.
fn delayOf(vm: *Vm, delay: Value) Error!u64 {
    const ms = if (delay.isUndefined()) 1 else try ops.toNumber(vm, delay);
    if (!(ms >= 1 and ms <= delay_ms_max)) return 1;
    return @intFromFloat(@trunc(ms));
}

/// Links a timer after every one due no later than it, paying for each it passes.
fn insert(vm: *Vm, timer: *Timer) Error!void {
    var link = &vm.timers_head;
    while (link.*) |other| : (link = &other.next) {
        if (other.due_ns > timer.due_ns) break;
        try vm.charge(1);
    }
    timer.next = link.*;
    link.* = timer;
}

/// Runs the timers due by `now_ns`, soonest first, each followed by a microtask drain. A timer
/// set meanwhile is due at least 1 ms after `now_ns`, and an interval comes back at least that
/// late, so the pass ends.
pub fn runDue(vm: *Vm, now_ns: u64) Error!void {
    while (vm.timers_head) |timer| {
        if (timer.due_ns > now_ns) break;
        vm.timers_head = timer.next;
        if (timer.interval_ns > 0) {
            // Set again before the call, so that clearInterval inside it finds it.
            timer.due_ns = now_ns +| timer.interval_ns;
            try insert(vm, timer);
        }
        try vm.charge(timer_ticks);
        _ = try vm.call(timer.callback, Value.undefined_value, timer.args);
        if (vm.jobs_head != null) try promises.drain(vm);
    }
}

/// When the first timer is due, if any is set.
pub fn firstDue(head: ?*const Timer) ?u64 {
    const first = head orelse return null;
    return first.due_ns;
}
