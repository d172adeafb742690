//! Symbol (the function, Symbol.for and keyFor, Symbol.prototype) and the members that the
//! iteration protocol adds to the builtins: `[Symbol.iterator]` of strings and of iterators.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const symbol = @import("../symbol.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;

/// `Symbol(description)`: a new symbol; `new Symbol()` is refused (no construct behaviour).
pub fn call(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const d = arg(args, 0);
    const description = if (d.isUndefined()) null else try ops.toString(vm, d);
    return Value.symbol(try symbol.create(vm, description));
}

pub fn symbolFor(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const text = try ops.toString(vm, arg(args, 0));
    return Value.symbol(try symbol.registered(vm, text));
}

pub fn keyFor(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const s = arg(args, 0);
    if (!s.is(.symbol)) return vm.throwFmt(.type_error, "{f} is not a symbol", .{ops.ValueText{ .vm = vm, .v = s }});
    const text = try symbol.registryKey(vm, s.asSymbolKey()) orelse return Value.undefined_value;
    return Value.string(text);
}

fn thisSymbol(vm: *Vm, this: Value, comptime method: []const u8) Error!*@import("../string.zig").String {
    if (this.is(.symbol)) return this.asSymbolKey();
    return vm.throwFmt(.type_error, method ++ " requires that 'this' be a Symbol", .{});
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try symbol.descriptiveString(vm, try thisSymbol(vm, this, "Symbol.prototype.toString")));
}

pub fn valueOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.symbol(try thisSymbol(vm, this, "Symbol.prototype.valueOf"));
}

/// `sym.description`: the description, or undefined.
pub fn descriptionOf(key: *@import("../string.zig").String) Value {
    const d = symbol.description(key) orelse return Value.undefined_value;
    return Value.string(d);
}

/// `String.prototype[Symbol.iterator]`: an iterator over the string's code points.
pub fn stringIterator(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    if (this.isNullish()) return vm.throwMessage(.type_error, "String.prototype[Symbol.iterator] called on null or undefined");
    const s = try ops.toString(vm, this);
    const it = vm.heap.create(object.Iterator) catch return vm.outOfMemory();
    it.* = .{ .object = .{ .kind = .iterator }, .source = Value.string(s), .iterator_kind = .string_values };
    return Value.obj(&it.object);
}

/// `%IteratorPrototype%[Symbol.iterator]`: an iterator is its own iterable.
pub fn returnThis(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = args;
    return this;
}
