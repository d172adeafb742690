//! The arguments object of a call: the strict-mode, unmapped one of ES §10.4.4.6
//! (CreateUnmappedArgumentsObject), since every function here is strict. It is an ordinary
//! object whose prototype is Object.prototype: the call's arguments as indexed elements,
//! `length` (writable, not enumerable), `[Symbol.iterator]` (the intrinsic
//! Array.prototype.values, whatever the script did to Array.prototype since) and `callee`, an
//! accessor whose getter and setter are %ThrowTypeError%.
//!
//! The decision a reader must know: only a function whose code (or an arrow's inside it)
//! names `arguments` makes one, at its entry, before its parameters' defaults and its locals
//! overwrite the frame slots that still hold the call's extra arguments (`push_special` is
//! then the function's first instruction). A function that never names it pays nothing; the
//! object lives in the run's arena like any other.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const symbol = @import("../symbol.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");
const classes = @import("../classes.zig");

/// The arguments object of the frame that is entering (its first instruction runs).
pub fn make(vm: *Vm, frame: *const Vm.Frame) Error!Value {
    const f = frame.function;
    const locals = vm.stack[frame.base..];
    const params: u32 = f.param_count;
    // A function with a rest parameter has its extra arguments in the rest array only
    // (the frame's set-up cleared the slots above it).
    const rest: []const Value = if (f.has_rest) blk: {
        const a = locals[params].objectOf(.array) orelse return vm.terminate(.invalid_bytecode);
        break :blk a.as(object.Array).slice();
    } else &.{};
    const direct = if (f.has_rest) @min(frame.argc, params) else frame.argc;
    assert(!f.has_rest or frame.argc <= params or rest.len == frame.argc - params);
    const count = direct + @as(u32, @intCast(rest.len));
    try vm.charge(meter.elementsCost(count));
    const o = try vm.newObject(count + 3);
    o.class = object.arguments_class;
    for (0..count) |i| {
        const v = if (i < direct) locals[i] else rest[i - direct];
        const key = try ops.toString(vm, Value.number(@floatFromInt(i)));
        o.properties.add(vm.heap, key, v) catch return vm.outOfMemory();
    }
    const hidden: object.PropertyFlags = .{ .not_enumerable = true };
    try define(vm, o, names.string("length"), Value.number(@floatFromInt(count)), hidden);
    const values = builtins.classMember(.array_proto, names.string("values")).?;
    try define(vm, o, symbol.wellKnown("@@iterator"), values, hidden);
    const poison = try classes.newAccessor(vm);
    poison.getter = throwTypeErrorFunction();
    poison.setter = poison.getter;
    try define(vm, o, names.string("callee"), Value.obj(&poison.object), .{
        .not_enumerable = true,
        .not_configurable = true,
        .accessor = true,
    });
    return Value.obj(o);
}

fn define(vm: *Vm, o: *object.Object, key: *@import("../string.zig").String, v: Value, flags: object.PropertyFlags) Error!void {
    o.properties.define(vm.heap, key, v, flags) catch return vm.outOfMemory();
}

/// %ThrowTypeError% (ES §10.2.4.1): one function for every arguments object's `callee`.
pub fn throwTypeErrorFunction() Value {
    return builtins.classMember(.intrinsics, names.string("%ThrowTypeError%")).?;
}

pub fn throwTypeError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return ops.throwPoisoned(vm);
}

pub fn isArguments(o: *const object.Object) bool {
    return o.kind == .plain and o.class == object.arguments_class;
}
