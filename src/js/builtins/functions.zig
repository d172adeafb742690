//! Function.prototype's call, apply and bind: calling any function with a chosen `this`.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

fn requireCallable(vm: *Vm, this: Value, comptime method: []const u8) Error!void {
    if (!ops.isCallable(this)) {
        return vm.throwMessage(.type_error, "Function.prototype." ++ method ++ " was called on a value that is not a function");
    }
}

/// `f.call(thisArg, ...args)`.
pub fn call(vm: *Vm, this: Value, args: []const Value) Error!Value {
    try requireCallable(vm, this, "call");
    const rest = if (args.len > 1) args[1..] else &[_]Value{};
    return vm.call(this, arg(args, 0), rest);
}

/// `f.apply(thisArg, argsArray)`: the array (or array-like) spread as the arguments.
pub fn apply(vm: *Vm, this: Value, args: []const Value) Error!Value {
    try requireCallable(vm, this, "apply");
    const list = arg(args, 1);
    if (list.isNullish()) return vm.call(this, arg(args, 0), &.{});
    const values = try arrayLikeValues(vm, list);
    return vm.call(this, arg(args, 0), values);
}

/// The elements of an array or array-like object, as a slice in the heap.
pub fn arrayLikeValues(vm: *Vm, list: Value) Error![]const Value {
    if (list.objectOf(.array)) |o| {
        const a = o.as(object.Array);
        try vm.charge(meter.elementsCost(a.len));
        const copy = vm.heap.alloc(Value, a.len) catch return vm.outOfMemory();
        for (a.slice(), copy) |v, *c| c.* = if (v.eqlBits(Value.hole)) Value.undefined_value else v;
        return copy;
    }
    if (!ops.isObjectLike(list)) return vm.throwMessage(.type_error, "CreateListFromArrayLike called on non-object");
    const length = try ops.toNumber(vm, try ops.getField(vm, list, @import("../names.zig").string("length")));
    const n: usize = if (length > 0 and length < object.length_max) @intFromFloat(@trunc(length)) else 0;
    if (length >= object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    try vm.charge(meter.elementsCost(n));
    const copy = vm.heap.alloc(Value, n) catch return vm.outOfMemory();
    for (copy, 0..) |*c, i| c.* = try ops.getElement(vm, list, Value.number(@floatFromInt(i)));
    return copy;
}

/// `f.bind(thisArg, ...args)`.
pub fn bind(vm: *Vm, this: Value, args: []const Value) Error!Value {
    try requireCallable(vm, this, "bind");
    const bound_args: []const Value = if (args.len > 1) blk: {
        const copy = vm.heap.alloc(Value, args.len - 1) catch return vm.outOfMemory();
        @memcpy(copy, args[1..]);
        break :blk copy;
    } else &.{};
    const b = vm.heap.create(object.BoundFunction) catch return vm.outOfMemory();
    b.* = .{ .object = .{ .kind = .bound_function }, .target = this, .this = arg(args, 0), .args = bound_args };
    return Value.obj(&b.object);
}
