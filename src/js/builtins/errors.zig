//! Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError,
//! AggregateError: their constructors and Error.prototype.toString.
//!
//! An error's `message` is a field, not an own property, so that it is not enumerable (as in
//! V8: `Object.keys(new Error("x"))` is empty); its `name` comes from its kind unless the
//! script assigns one. `stack` is the first line and where the error was made, as
//! "    at FILE:LINE:COLUMN" (node's frames name its own internals, which no test can match).
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;

fn construct(vm: *Vm, kind: object.ErrorKind, args: []const Value) Error!Value {
    const message = arg(args, 0);
    const text: ?*String = if (message.isUndefined()) null else try ops.toString(vm, message);
    const e = try vm.newErrorWith(kind, if (text) |t| (if (t.len == 0) null else t) else null);
    if (text != null and text.?.len == 0) e.message = string.empty;
    const options = arg(args, 1);
    if (options.is(.object)) {
        if (options.asObject().properties.get(names.string("cause"))) |cause| e.cause = cause;
    }
    return Value.obj(&e.object);
}

pub fn constructError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .@"error", args);
}

pub fn constructTypeError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .type_error, args);
}

pub fn constructRangeError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .range_error, args);
}

pub fn constructSyntaxError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .syntax_error, args);
}

pub fn constructReferenceError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .reference_error, args);
}

pub fn constructEvalError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .eval_error, args);
}

pub fn constructUriError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return construct(vm, .uri_error, args);
}

/// `new AggregateError(errors, message, options)`: an error whose own `errors` (not
/// enumerable) is an array of what the iterable gives.
pub fn constructAggregateError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const rest: []const Value = if (args.len > 1) args[1..] else &.{};
    const e = try construct(vm, .aggregate_error, rest);
    const list = try vm.newArray(0);
    try ops.appendIterable(vm, list, arg(args, 0), .{});
    try defineErrors(vm, e.asObject().as(object.ErrorObject), list);
    return e;
}

/// The `errors` own property of an AggregateError: writable, configurable, not enumerable.
pub fn defineErrors(vm: *Vm, e: *object.ErrorObject, list: *object.Array) Error!void {
    e.object.properties.define(vm.heap, names.string("errors"), Value.obj(&list.object), .hidden) catch return vm.outOfMemory();
}

/// Error.prototype.toString.
pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    if (!this.is(.object)) return vm.throwFmt(.type_error, "Method Error.prototype.toString called on incompatible receiver {f}", .{ops.ShortFormat{ .vm = vm, .v = this }});
    return Value.string(try errorToString(vm, this));
}

/// "Name: message", "Name" or "message", as Error.prototype.toString makes it.
pub fn errorToString(vm: *Vm, v: Value) Error!*String {
    const name_value = try ops.getField(vm, v, names.string("name"));
    const message_value = try ops.getField(vm, v, names.string("message"));
    const name = if (name_value.isUndefined()) names.string("Error") else try ops.toString(vm, name_value);
    const message = if (message_value.isUndefined()) string.empty else try ops.toString(vm, message_value);
    if (name.len == 0) return message;
    if (message.len == 0) return name;
    const with_colon = string.concat(vm.heap, name, try vm.newLatin1(": ")) catch return vm.outOfMemory();
    return string.concat(vm.heap, with_colon, message) catch vm.outOfMemory();
}

/// The first line node prints for an error it inspects (console.log, an uncaught throw):
/// the stack's first line (`head`, the toString line when the stack was made), which
/// util.inspect's improveStack rewrites when a name ending in "Error" is not the
/// constructor's: `e.name = "NotFoundError"` on an Error prints `Error [NotFoundError]: m`,
/// `e.name = "Error"` on a TypeError prints `TypeError: m`.
pub fn inspectHead(vm: *Vm, e: *object.ErrorObject, head: *String) Error!*String {
    const name_value = try ops.getField(vm, Value.obj(&e.object), names.string("name"));
    const name = if (name_value.isUndefined() or name_value.isNull()) names.string("Error") else try ops.toString(vm, name_value);
    const prefix = e.error_kind.name();
    const len = name.len;
    if (len < 5 or len > head.len) return head;
    for ("Error", len - 5..) |c, i| if (name.at(i) != c) return head;
    for (0..len) |i| if (head.at(i) != name.at(i)) return head;
    if (head.len != len and head.at(len) != ':' and head.at(len) != '\n') return head;
    if (name.eqlLatin1(prefix)) return head;
    const rest = string.slice(vm.heap, head, len, head.len) catch return vm.outOfMemory();
    const contains = !name.flags.wide and std.mem.indexOf(u8, prefix, name.latin1()) != null;
    const start = if (contains)
        try vm.newLatin1(prefix)
    else blk: {
        const open = string.concat(vm.heap, try vm.newLatin1(prefix), try vm.newLatin1(" [")) catch return vm.outOfMemory();
        const named = string.concat(vm.heap, open, name) catch return vm.outOfMemory();
        break :blk string.concat(vm.heap, named, try vm.newLatin1("]")) catch return vm.outOfMemory();
    };
    return string.concat(vm.heap, start, rest) catch vm.outOfMemory();
}

/// The `stack` text: the toString line, then where the error was made.
pub fn stackString(vm: *Vm, e: *object.ErrorObject) Error!*String {
    const head = try errorToString(vm, Value.obj(&e.object));
    const position = e.position orelse return head;
    const at = string.concat(vm.heap, head, try vm.newLatin1("\n    at ")) catch return vm.outOfMemory();
    return string.concat(vm.heap, at, position) catch vm.outOfMemory();
}
