//! Generator.prototype: next, return, throw and [Symbol.iterator]. The work is the
//! generator's own frame, resumed by Vm.resumeGenerator.
const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const names = @import("../names.zig");
const ops = @import("../operations.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;

fn thisGenerator(vm: *Vm, this: Value, comptime method: []const u8) Error!*object.Generator {
    if (this.objectOf(.generator)) |o| {
        const gen = o.as(object.Generator);
        if (gen.async_generator == null) return gen;
    }
    return vm.throwFmt(.type_error, "{s} method called on incompatible receiver {f}", .{ method, ops.ShortFormat{ .vm = vm, .v = this } });
}

/// { value, done }.
pub fn iteratorResult(vm: *Vm, value: Value, done: bool) Error!Value {
    const result = try vm.newObject(2);
    result.properties.add(vm.heap, names.string("value"), value) catch return vm.outOfMemory();
    result.properties.add(vm.heap, names.string("done"), Value.boolean(done)) catch return vm.outOfMemory();
    return Value.obj(result);
}

fn resumeWith(vm: *Vm, this: Value, args: []const Value, comptime mode: Vm.ResumeMode, comptime method: []const u8) Error!Value {
    const gen = try thisGenerator(vm, this, method);
    const r = try vm.resumeGenerator(gen, arg(args, 0), mode);
    return iteratorResult(vm, r.value, r.done);
}

pub fn next(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return resumeWith(vm, this, args, .next, "next");
}

pub fn returnMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return resumeWith(vm, this, args, .@"return", "return");
}

pub fn throwMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return resumeWith(vm, this, args, .throw, "throw");
}
