//! Object's static functions (keys, values, entries, assign, fromEntries, freeze...) and
//! Object.prototype's methods.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const Object = object.Object;
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

fn requireObjectCoercible(vm: *Vm, v: Value) Error!void {
    if (v.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
}

pub fn keys(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const o = arg(args, 0);
    try requireObjectCoercible(vm, o);
    return Value.obj(&(try ops.ownKeysArray(vm, o)).object);
}

pub fn values(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return ownEntries(vm, arg(args, 0), .values);
}

pub fn entries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return ownEntries(vm, arg(args, 0), .entries);
}

fn ownEntries(vm: *Vm, v: Value, what: enum { values, entries }) Error!Value {
    try requireObjectCoercible(vm, v);
    const key_list = try ops.ownKeysArray(vm, v);
    const result = try vm.newArray(key_list.len);
    try vm.charge(meter.elementsCost(key_list.len));
    for (key_list.slice()) |key| {
        const value = try ops.getField(vm, v, key.asString());
        const item = if (what == .values) value else Value.obj(try ops.pair(vm, key, value));
        result.push(vm.heap, item) catch return vm.outOfMemory();
    }
    return Value.obj(&result.object);
}

pub fn assign(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const target = arg(args, 0);
    try requireObjectCoercible(vm, target);
    if (!target.is(.object)) return target;
    for (args[1..]) |source| {
        if (source.isNullish()) continue;
        const key_list = try ops.ownKeysArray(vm, source);
        try vm.charge(meter.elementsCost(key_list.len));
        for (key_list.slice()) |key| {
            const value = try ops.getField(vm, source, key.asString());
            try ops.setField(vm, target, key.asString(), value);
        }
    }
    return target;
}

pub fn fromEntries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const iterable = arg(args, 0);
    // V8 checks for null and undefined first, with no value in its message.
    if (iterable.isNullish()) return vm.throwMessage(.type_error, "undefined is not iterable");
    const result = try vm.newObject(0);
    var source = try ops.iterStart(vm, iterable, .{});
    var cursor = Value.number(0);
    while (try ops.iterNext(vm, &source, &cursor)) |entry| {
        try vm.charge(meter.elementsCost(1));
        if (!entry.is(.object)) {
            return vm.throwFmt(.type_error, "Iterator value {f} is not an entry object", .{RawFormat{ .v = entry }});
        }
        const key = try ops.getElement(vm, entry, Value.number(0));
        const value = try ops.getElement(vm, entry, Value.number(1));
        result.properties.put(vm.heap, try ops.toPropertyKey(vm, key), value) catch return vm.outOfMemory();
    }
    return Value.obj(result);
}

/// V8's wording when a builtin is given something it cannot iterate.
pub fn throwNotIterable(vm: *Vm, v: Value) Error {
    return ops.throwNotIterable(vm, v, .{});
}

/// A value in a message as V8 prints it: strings bare, numbers as text.
pub const RawFormat = struct {
    v: Value,

    pub fn format(self: RawFormat, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const v = self.v;
        if (v.isString()) return string.writeUtf8(w, v.asString());
        if (v.isNumber()) {
            var buf: [32]u8 = undefined;
            return w.writeAll(@import("../number.zig").format(&buf, v.asNumber()));
        }
        if (v.isUndefined()) return w.writeAll("undefined");
        if (v.isNull()) return w.writeAll("null");
        if (v.eqlBits(Value.true_value)) return w.writeAll("true");
        if (v.eqlBits(Value.false_value)) return w.writeAll("false");
        return w.writeAll("#<Object>");
    }
};

pub fn freeze(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.objectOf(.typed_array)) |o| {
        // Its elements stay writable: the spec's freeze fails on them.
        if (o.as(object.TypedArray).len > 0) return vm.throwMessage(.type_error, "Cannot freeze array buffer views with elements");
    }
    if (v.is(.object) and !v.asObject().frozen) {
        try ops.checkModuleWrite(vm, v.asObject());
        v.asObject().frozen = true;
    }
    return v;
}

pub fn isFrozen(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    if (!v.is(.object)) return Value.true_value;
    return Value.boolean(v.asObject().frozen);
}

pub fn hasOwn(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const o = arg(args, 0);
    try requireObjectCoercible(vm, o);
    return Value.boolean(try hasOwnKey(vm, o, arg(args, 1)));
}

pub fn hasOwnProperty(vm: *Vm, this: Value, args: []const Value) Error!Value {
    try requireObjectCoercible(vm, this);
    return Value.boolean(try hasOwnKey(vm, this, arg(args, 0)));
}

fn hasOwnKey(vm: *Vm, v: Value, key_value: Value) Error!bool {
    const key = try ops.toPropertyKey(vm, key_value);
    if (v.is(.builtin) or v.is(.native)) {
        return !(try builtins.descriptors.descriptorOf(vm, v, key)).isUndefined();
    }
    if (v.isString()) {
        const s = v.asString();
        if (key.arrayIndex()) |i| return i < s.len;
        return names.is(key, "length");
    }
    if (!v.is(.object)) return false;
    const o = v.asObject();
    if (o.properties.find(key) != null) return true;
    switch (o.kind) {
        .array => {
            const a = o.as(object.Array);
            if (key.arrayIndex()) |i| return i < a.len and !a.items[i].eqlBits(Value.hole);
            return names.is(key, "length");
        },
        .error_object => {
            const e = o.as(object.ErrorObject);
            // Every error has its own stack; message and cause when they were given.
            return names.is(key, "stack") or (names.is(key, "message") and e.message != null) or
                (names.is(key, "cause") and !e.cause.eqlBits(Value.hole));
        },
        .closure, .promise_function => return object.closureHasIntrinsic(o, key),
        .typed_array => return if (key.arrayIndex()) |i| i < o.as(object.TypedArray).len else false,
        else => return false,
    }
}

/// Object.prototype.toString: `[object Tag]`, the tag by the value's kind.
pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    if (this.is(.object)) {
        // An object's own or inherited [Symbol.toStringTag], when it is a string.
        const own = try ops.getField(vm, this, @import("../symbol.zig").wellKnown("@@toStringTag"));
        if (own.isString()) {
            var parts = [_]Value{ Value.string(try vm.newLatin1("[object ")), own, Value.string(try vm.newLatin1("]")) };
            return Value.string(try ops.concatValues(vm, &parts));
        }
    }
    const tag: []const u8 = if (this.isUndefined())
        "Undefined"
    else if (this.isNull())
        "Null"
    else if (this.isString())
        "String"
    else if (this.isNumber())
        "Number"
    else if (this.isBool())
        "Boolean"
    else if (ops.isCallable(this))
        "Function"
    else if (this.is(.object)) switch (this.asObject().kind) {
        .array => "Array",
        .map => if (builtins.headers.isHeaders(this.asObject()))
            "Headers"
        else if (builtins.urlsearchparams.isSearchParams(this.asObject()))
            "URLSearchParams"
        else if (builtins.url.isUrl(this.asObject()))
            "URL"
        else if (builtins.data_view.isDataView(this.asObject()))
            "DataView"
        else
            "Map",
        .set => "Set",
        .error_object => "Error",
        .generator => if (this.asObject().as(object.Generator).async_generator != null) "AsyncGenerator" else "Generator",
        .promise => "Promise",
        .regexp => "RegExp",
        .date => "Date",
        .array_buffer => "ArrayBuffer",
        .typed_array => this.asObject().as(object.TypedArray).element.name(),
        .iterator => switch (this.asObject().as(object.Iterator).iterator_kind) {
            .array_keys, .array_values, .array_entries => "Array Iterator",
            .map_keys, .map_values, .map_entries => "Map Iterator",
            .set_values, .set_entries => "Set Iterator",
            .string_values => "String Iterator",
            .for_in_keys, .protocol => "Object",
        },
        .plain => if (builtins.arguments.isArguments(this.asObject()))
            "Arguments"
        else if (builtins.text_encoding.isEncoder(this.asObject()))
            "TextEncoder"
        else if (builtins.text_encoding.isDecoder(this.asObject()))
            "TextDecoder"
        else if (builtins.request.isRequestLike(this))
            "Request"
        else
            "Object",
        else => "Object",
    } else if (this.is(.symbol)) "Symbol" else if (this.is(.builtin)) builtinTag(@intCast(this.payload())) else "Object";
    var buf: [32]u8 = undefined;
    return Value.string(try vm.newLatin1(std.fmt.bufPrint(&buf, "[object {s}]", .{tag}) catch unreachable));
}

/// The toStringTag of a builtin namespace object.
fn builtinTag(id: u32) []const u8 {
    if (id >= builtins.builtin_objects.len) return "Object";
    const name = builtins.builtin_objects[id].name;
    if (std.mem.eql(u8, name, "Math") or std.mem.eql(u8, name, "JSON")) return name;
    if (std.mem.eql(u8, name, "%Array.prototype%")) return "Array";
    if (std.mem.eql(u8, name, "%Function.prototype%")) return "Function";
    if (std.mem.eql(u8, name, "%Error.prototype%")) return "Object";
    if (std.mem.eql(u8, name, "%String.prototype%")) return "String";
    if (std.mem.eql(u8, name, "%Number.prototype%")) return "Number";
    if (std.mem.eql(u8, name, "%Boolean.prototype%")) return "Boolean";
    if (std.mem.eql(u8, name, "%Map.prototype%")) return "Map";
    if (std.mem.eql(u8, name, "%Set.prototype%")) return "Set";
    return "Object";
}

/// Function.prototype.toString: a function's source text (`function parseInt() { [native
/// code] }` for a builtin), as String(f) gives it.
pub fn functionToString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    if (!ops.isCallable(this)) return vm.throwMessage(.type_error, "Function.prototype.toString requires that 'this' be a Function");
    return Value.string(try ops.toString(vm, this));
}

pub fn valueOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    try requireObjectCoercible(vm, this);
    return this;
}

pub fn is(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const a = arg(args, 0);
    const b = arg(args, 1);
    if (a.isNumber() and b.isNumber()) {
        const x = a.asNumber();
        const y = b.asNumber();
        if (std.math.isNan(x) and std.math.isNan(y)) return Value.true_value;
        return Value.boolean(x == y and std.math.signbit(x) == std.math.signbit(y));
    }
    return Value.boolean(ops.strictEquals(a, b));
}

/// Object() and new Object(): a new object, or the argument if it is one.
pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.is(.object)) return v;
    return Value.obj(try vm.newObject(0));
}
