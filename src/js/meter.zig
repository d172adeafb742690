//! The work meter of the run in progress on this thread: every operation whose work grows with
//! its input (a string compared or hashed, properties moved, a builtin's scan or copy) charges
//! it in ticks, the same ticks the interpreter charges for a loop's bytecode, so that a run's
//! budget and its deadline bound its time whatever it calls (docs/JS.md, "Limits").
//!
//! Decision: the meter is one thread-local counter, not a field of the engine. The primitives
//! that do such work (`String.eql`, `String.hash`, `Properties.add`, `MapObject.find`...) are
//! called from a hundred places, most of which have no engine at hand; a thread-local lets
//! each primitive charge itself, so that no call site can forget to. Only one run is ever in
//! progress on a thread (a worker runs its engines one call at a time, the control thread
//! runs top-level code one engine at a time), and `Vm.startRun` sets the counter afresh.
//!
//! Primitives charge without checking (`charge`): they cannot end a run from where they are.
//! The engine checks the counter (`Vm.charge`) on every backward jump and call, and builtins
//! check it before and during anything that can be large, so what a primitive charged is seen
//! by the next check, at most one primitive's work later.
const std = @import("std");

/// Ticks left before the engine's next checkpoint (Vm.checkpoint): the slice of the budget it
/// handed out, minus what was charged since. Zero or below means a checkpoint is due.
pub threadlocal var fuel: i64 = 0;

/// The largest single charge: more than any budget, and small enough that what is charged
/// between two checks cannot carry the counter past its minimum (2^63): one builtin's
/// unchecked work is bounded by its heap, far below 2^19 such charges.
pub const charge_max: u64 = 1 << 44;

/// Charges `ticks` of work; the engine's next check sees it. A plain subtraction: this is on
/// every hot path (a saturating one cost twice the instructions).
pub inline fn charge(ticks: u64) void {
    fuel -%= @as(i64, @intCast(@min(ticks, charge_max)));
}

/// Charges for `n` bytes handled in bulk, unless they are too few to be worth a charge (most
/// strings are short, and this is on their hot paths: a compare is cheaper than the charge).
pub inline fn chargeBytes(n: usize) void {
    if (n >= 64) charge(bytesCost(n));
}

/// Charges for `n` values moved or visited, unless they are too few to be worth a charge.
pub inline fn chargeElements(n: usize) void {
    if (n >= 8) charge(elementsCost(n));
}

// The prices, in ticks. A tick is about what the interpreter spends on one byte of a loop's
// bytecode (1 to 2 ns on the machines this runs on); each price is set so that the work it
// pays for takes no longer than that per tick: a loop on a builtin spends its budget no slower
// than a plain loop (docs/JS.md, "What the budget counts"; budget_test.zig checks each
// builtin charges, test/integration/test_handler_budget.py times the loops).

/// Bytes read or written in bulk (memcpy, memcmp, memchr, hashing): one tick per 8.
pub inline fn bytesCost(n: usize) u64 {
    return @as(u64, n) >> 3;
}

/// Code units handled one at a time (case mapping, JSON text, collation, URI coding).
pub inline fn unitsCost(n: usize) u64 {
    return @as(u64, n);
}

/// Values visited, moved or written by a native loop (array scans, copies, fills).
pub inline fn elementsCost(n: usize) u64 {
    return @as(u64, n);
}

test "meter: a charge counts down, at most charge_max at a time" {
    fuel = 100;
    charge(30);
    try std.testing.expectEqual(@as(i64, 70), fuel);
    charge(std.math.maxInt(u64));
    try std.testing.expectEqual(@as(i64, 70) - @as(i64, @intCast(charge_max)), fuel);
    fuel = 0;
}
