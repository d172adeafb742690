//! The typed arrays' methods that typed_arrays.zig did not have: `copyWithin`, `findLast`,
//! `findLastIndex`, `reduceRight`, `toReversed`, `toSorted` and `with`, as ECMAScript 2023
//! defines them and node 20 runs them.
//!
//! Decision: each works on the view's elements through typed_arrays.zig's `load`/`store`
//! (or, for copyWithin, moves the bytes), and the copying ones make a new array of the same
//! element type in the run's arena; the callbacks are paid for per element, as the other
//! methods are.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const TypedArray = object.TypedArray;
const ops = @import("../operations.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");
const typed_arrays = @import("typed_arrays.zig");
const arg = builtins.arg;
const relative = builtins.array.relative;
const requireCallable = builtins.array.requireCallable;

fn thisView(vm: *Vm, this: Value) Error!*TypedArray {
    if (this.objectOf(.typed_array)) |o| return o.as(TypedArray);
    return vm.throwMessage(.type_error, "this is not a typed array.");
}

fn index(i: usize) Value {
    return Value.number(@floatFromInt(i));
}

/// `copyWithin(target, start, end?)`: the elements [start, end) moved to target, as if
/// through a copy (the ranges may overlap).
pub fn copyWithin(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const target = try relative(vm, arg(args, 0), t.len, 0);
    const start = try relative(vm, arg(args, 1), t.len, 0);
    const end = try relative(vm, arg(args, 2), t.len, t.len);
    const count = @min(end -| start, t.len - target);
    if (count == 0) return this;
    try ops.checkModuleWrite(vm, t.buffer);
    try vm.charge(meter.elementsCost(count));
    const size = t.element.size();
    const bytes = t.bytes();
    const from = bytes[start * size ..][0 .. count * size];
    const to = bytes[target * size ..][0 .. count * size];
    if (target < start) std.mem.copyForwards(u8, to, from) else std.mem.copyBackwards(u8, to, from);
    return this;
}

/// Runs the predicate from the last element down; the index where it first held.
fn walkBack(vm: *Vm, t: *TypedArray, args: []const Value) Error!?usize {
    const f = arg(args, 0);
    try requireCallable(vm, f);
    var i: usize = t.len;
    while (i > 0) {
        i -= 1;
        try vm.charge(meter.elementsCost(1));
        const r = try vm.call(f, arg(args, 1), &.{ typed_arrays.get(t, @intCast(i)), index(i), Value.obj(&t.object) });
        if (ops.toBoolean(r)) return i;
    }
    return null;
}

pub fn findLast(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const i = try walkBack(vm, t, args) orelse return Value.undefined_value;
    return typed_arrays.get(t, @intCast(i));
}

pub fn findLastIndex(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const i = try walkBack(vm, try thisView(vm, this), args) orelse return Value.number(-1);
    return index(i);
}

pub fn reduceRight(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    var i: usize = t.len;
    var acc: Value = undefined;
    if (args.len >= 2) {
        acc = args[1];
    } else {
        if (t.len == 0) return vm.throwMessage(.type_error, "Reduce of empty array with no initial value");
        i -= 1;
        acc = typed_arrays.get(t, @intCast(i));
    }
    while (i > 0) {
        i -= 1;
        try vm.charge(meter.elementsCost(1));
        acc = try vm.call(f, Value.undefined_value, &.{ acc, typed_arrays.get(t, @intCast(i)), index(i), this });
    }
    return acc;
}

/// A copy of the view in a new array of its element type.
fn copyOf(vm: *Vm, t: *TypedArray) Error!*TypedArray {
    try vm.charge(meter.elementsCost(t.len));
    const result = try typed_arrays.newTypedArray(vm, t.element, t.len);
    @memcpy(result.bytes(), t.bytes());
    return result;
}

pub fn toReversed(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try thisView(vm, this);
    const result = try typed_arrays.newTypedArray(vm, t.element, t.len);
    try vm.charge(meter.elementsCost(t.len));
    for (0..t.len) |i| typed_arrays.store(result, @intCast(t.len - 1 - i), typed_arrays.load(t, @intCast(i)));
    return Value.obj(&result.object);
}

pub fn toSorted(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const comparator = arg(args, 0);
    if (!comparator.isUndefined() and !ops.isCallable(comparator)) {
        return vm.throwMessage(.type_error, "The comparison function must be either a function or undefined");
    }
    const result = try copyOf(vm, t);
    return typed_arrays.sort(vm, Value.obj(&result.object), args);
}

/// `with(index, value)`: a copy with one element changed; an index outside the view is a
/// RangeError (after the value is converted, as the standard orders it).
pub fn with(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const n = try ops.toNumber(vm, arg(args, 0));
    const relative_index = if (std.math.isNan(n)) 0 else @trunc(n);
    const len: f64 = @floatFromInt(t.len);
    const actual = if (relative_index < 0) len + relative_index else relative_index;
    const x = try ops.toNumber(vm, arg(args, 1));
    if (!(actual >= 0 and actual < len)) return vm.throwMessage(.range_error, "Invalid typed array index");
    const result = try copyOf(vm, t);
    typed_arrays.store(result, @intFromFloat(actual), x);
    return Value.obj(&result.object);
}
