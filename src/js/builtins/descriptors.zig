//! Prototypes and property descriptors: Object.create, getPrototypeOf, setPrototypeOf,
//! defineProperty(ies), getOwnPropertyDescriptor(s), getOwnPropertyNames, preventExtensions,
//! seal, and Object.prototype's propertyIsEnumerable and isPrototypeOf.
//!
//! A property's attributes live in its flags (object.PropertyFlags); the fields an object's
//! kind keeps itself (an array's elements and length, a function's name and length) have the
//! attributes JavaScript gives them, reported here and kept by the writes in operations.zig.
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
const classes = @import("../classes.zig");
const meter = @import("../meter.zig");
const changes = @import("../builtin_changes.zig");
const arg = builtins.arg;

fn requireObject(vm: *Vm, v: Value, comptime what: []const u8) Error!*Object {
    if (v.is(.object)) return v.asObject();
    if (v.is(.builtin)) return vm.throwMessage(.type_error, what ++ ": builtin objects are read-only");
    return vm.throwMessage(.type_error, what ++ " called on non-object");
}

pub fn getPrototypeOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    if (v.is(.object)) return ops.prototypeOf(v.asObject());
    if (v.is(.builtin)) return builtins.prototypeOfBuiltin(@intCast(v.payload()));
    if (v.is(.native)) return Value.builtin(builtins.builtinId("%Function.prototype%"));
    if (v.isString()) return Value.builtin(builtins.builtinId("%String.prototype%"));
    if (v.isNumber()) return Value.builtin(builtins.builtinId("%Number.prototype%"));
    if (v.is(.symbol)) return Value.builtin(builtins.builtinId("%Symbol.prototype%"));
    return Value.builtin(builtins.builtinId("%Boolean.prototype%"));
}

pub fn setPrototypeOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    const proto = arg(args, 1);
    if (v.isNullish()) return vm.throwMessage(.type_error, "Object.setPrototypeOf called on null or undefined");
    if (!proto.isNull() and !ops.isObjectLike(proto)) {
        return vm.throwFmt(.type_error, "Object prototype may only be an Object or null: {f}", .{ops.ValueText{ .vm = vm, .v = proto }});
    }
    if (!v.is(.object)) return v;
    try setPrototype(vm, v.asObject(), proto);
    return v;
}

/// Links `o` to `proto`, refusing a cycle and a non-extensible object.
pub fn setPrototype(vm: *Vm, o: *Object, proto: Value) Error!void {
    if (ops.prototypeOf(o).eqlBits(proto)) return;
    try ops.checkModuleWrite(vm, o);
    if (o.frozen or o.sealed_shape) return vm.throwFmt(.type_error, "{f} is not extensible", .{ops.ValueText{ .vm = vm, .v = Value.obj(o) }});
    if (proto.is(.object) and (proto.asObject() == o or ops.inherits(proto, Value.obj(o)))) {
        return vm.throwMessage(.type_error, "Cyclic __proto__ value");
    }
    o.proto = proto;
}

pub fn create(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const proto = arg(args, 0);
    if (!proto.isNull() and !ops.isObjectLike(proto)) {
        return vm.throwFmt(.type_error, "Object prototype may only be an Object or null: {f}", .{ops.ValueText{ .vm = vm, .v = proto }});
    }
    const o = try vm.newObject(0);
    o.proto = proto;
    const properties = arg(args, 1);
    if (!properties.isUndefined()) try defineAll(vm, o, properties);
    return Value.obj(o);
}

pub fn defineProperty(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const target = arg(args, 0);
    if (!target.is(.object) and !target.is(.builtin) and !target.is(.native)) {
        return vm.throwMessage(.type_error, "Object.defineProperty called on non-object");
    }
    const key = try ops.toPropertyKey(vm, arg(args, 1));
    const desc = try toDescriptor(vm, arg(args, 2));
    if (!target.is(.object)) {
        try defineBuiltin(vm, target, key, desc);
        return target;
    }
    try define(vm, target.asObject(), key, desc);
    return target;
}

pub fn defineProperties(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const target = arg(args, 0);
    const o = try requireObject(vm, target, "Object.defineProperties");
    try defineAll(vm, o, arg(args, 1));
    return target;
}

fn defineAll(vm: *Vm, o: *Object, properties: Value) Error!void {
    if (properties.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    const keys = try ops.ownKeysArray(vm, properties);
    // Every descriptor is read before any is applied, as the spec orders it.
    const descs = vm.heap.alloc(Descriptor, keys.len) catch return vm.outOfMemory();
    for (keys.slice(), descs) |k, *d| d.* = try toDescriptor(vm, try ops.getField(vm, properties, k.asString()));
    for (keys.slice(), descs) |k, d| try define(vm, o, k.asString(), d);
}

/// A property descriptor as given: each field present or not.
pub const Descriptor = struct {
    value: ?Value = null,
    writable: ?bool = null,
    enumerable: ?bool = null,
    configurable: ?bool = null,
    get: ?Value = null,
    set: ?Value = null,

    fn isAccessor(d: Descriptor) bool {
        return d.get != null or d.set != null;
    }
};

fn toDescriptor(vm: *Vm, v: Value) Error!Descriptor {
    if (!ops.isObjectLike(v)) return vm.throwFmt(.type_error, "Property description must be an object: {f}", .{ops.ValueText{ .vm = vm, .v = v }});
    var d: Descriptor = .{};
    if (try ops.hasProperty(vm, v, Value.string(names.string("enumerable")))) d.enumerable = ops.toBoolean(try ops.getField(vm, v, names.string("enumerable")));
    if (try ops.hasProperty(vm, v, Value.string(names.string("configurable")))) d.configurable = ops.toBoolean(try ops.getField(vm, v, names.string("configurable")));
    if (try ops.hasProperty(vm, v, Value.string(names.string("value")))) d.value = try ops.getField(vm, v, names.string("value"));
    if (try ops.hasProperty(vm, v, Value.string(names.string("writable")))) d.writable = ops.toBoolean(try ops.getField(vm, v, names.string("writable")));
    if (try ops.hasProperty(vm, v, Value.string(names.string("get")))) {
        const g = try ops.getField(vm, v, names.string("get"));
        if (!g.isUndefined() and !ops.isCallable(g)) return vm.throwFmt(.type_error, "Getter must be a function: {f}", .{ops.ValueText{ .vm = vm, .v = g }});
        d.get = g;
    }
    if (try ops.hasProperty(vm, v, Value.string(names.string("set")))) {
        const s = try ops.getField(vm, v, names.string("set"));
        if (!s.isUndefined() and !ops.isCallable(s)) return vm.throwFmt(.type_error, "Setter must be a function: {f}", .{ops.ValueText{ .vm = vm, .v = s }});
        d.set = s;
    }
    if (d.isAccessor() and (d.value != null or d.writable != null)) {
        return vm.throwMessage(.type_error, "Invalid property descriptor. Cannot both specify accessors and a value or writable attribute");
    }
    return d;
}

/// ValidateAndApplyPropertyDescriptor on an ordinary object.
fn define(vm: *Vm, o: *Object, key: *String, d: Descriptor) Error!void {
    try ops.checkModuleWrite(vm, o);
    if (try defineIntrinsic(vm, o, key, d)) return;
    var existing: ?object.Property = if (o.properties.find(key)) |i| o.properties.items[i] else null;
    if (existing) |*e| if (o.frozen) {
        e.flags.read_only = !e.flags.accessor;
        e.flags.not_configurable = true;
    };
    if (existing == null and (o.frozen or o.sealed_shape)) {
        return vm.throwFmt(.type_error, "Cannot define property {f}, object is not extensible", .{ops.KeyFormat{ .s = key }});
    }
    const p = try apply(vm, key, existing, d, false);
    o.properties.define(vm.heap, key, p.value, p.flags) catch return vm.outOfMemory();
}

/// ValidateAndApplyPropertyDescriptor on a builtin object or function: the result is a
/// change of the run (builtin_changes.zig), never a write to the shared tables.
fn defineBuiltin(vm: *Vm, target: Value, key: *String, d: Descriptor) Error!void {
    const existing: ?object.Property = if (try changes.ownMember(vm, target, key)) |m|
        .{ .key = key, .value = m.value, .flags = m.flags }
    else
        null;
    const p = try apply(vm, key, existing, d, true);
    try changes.put(vm, target, key, p.value, p.flags);
}

/// The property `d` makes of `existing` (null: a new one, its attributes false unless `d`
/// gives them), refused as the spec refuses changes to a non-configurable one. `fresh`: an
/// accessor is a new object rather than the existing one changed (a builtin's may be the
/// module's, which a request must not write).
fn apply(vm: *Vm, key: *String, existing: ?object.Property, d: Descriptor, fresh: bool) Error!object.Property {
    var flags: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true, .not_configurable = true };
    var value = Value.undefined_value;
    if (existing) |e| {
        if (e.flags.not_configurable) try checkRedefinition(vm, key, e, e.flags, d);
        flags = e.flags;
        value = e.value;
    }
    if (d.enumerable) |e| flags.not_enumerable = !e;
    if (d.configurable) |c| flags.not_configurable = !c;
    if (d.isAccessor()) {
        const accessor = if (flags.accessor and !fresh) value.asObject().as(object.Accessor) else try classes.newAccessor(vm);
        if (fresh and flags.accessor) {
            const old = value.asObject().as(object.Accessor);
            accessor.getter = old.getter;
            accessor.setter = old.setter;
        }
        if (d.get) |g| accessor.getter = g;
        if (d.set) |s| accessor.setter = s;
        flags.accessor = true;
        flags.read_only = false;
        value = Value.obj(&accessor.object);
    } else if (d.value != null or d.writable != null or !flags.accessor) {
        if (flags.accessor) {
            // An accessor becomes a data property: its value starts undefined, read-only.
            flags.accessor = false;
            flags.read_only = true;
            value = Value.undefined_value;
        }
        if (d.value) |v| value = v;
        if (d.writable) |w| flags.read_only = !w;
    }
    return .{ .key = key, .value = value, .flags = flags };
}

/// A non-configurable property may not change, except a writable one's value (and writable
/// to false).
fn checkRedefinition(vm: *Vm, key: *String, e: object.Property, current: object.PropertyFlags, d: Descriptor) Error!void {
    const refused = (d.configurable orelse false) or
        (d.enumerable != null and d.enumerable.? == current.not_enumerable) or
        (d.isAccessor() != current.accessor and (d.isAccessor() or d.value != null or d.writable != null)) or
        (current.accessor and ((d.get != null and !d.get.?.eqlBits(e.value.asObject().as(object.Accessor).getter)) or
            (d.set != null and !d.set.?.eqlBits(e.value.asObject().as(object.Accessor).setter)))) or
        (!current.accessor and current.read_only and ((d.writable orelse false) or
            (d.value != null and !sameValue(d.value.?, e.value))));
    if (refused) return vm.throwFmt(.type_error, "Cannot redefine property: {f}", .{ops.KeyFormat{ .s = key }});
}

fn sameValue(a: Value, b: Value) bool {
    if (a.isNumber() and b.isNumber()) {
        const x = a.asNumber();
        const y = b.asNumber();
        if (std.math.isNan(x) and std.math.isNan(y)) return true;
        return x == y and std.math.signbit(x) == std.math.signbit(y);
    }
    return ops.strictEquals(a, b);
}

/// defineProperty on a field the object's kind keeps (an array's element or length): only
/// the attributes JavaScript's defaults give them can be set; returns whether it handled it.
fn defineIntrinsic(vm: *Vm, o: *Object, key: *String, d: Descriptor) Error!bool {
    if (o.kind == .typed_array) return defineTypedArrayElement(vm, o.as(object.TypedArray), key, d);
    if (o.kind != .array) return false;
    const a = o.as(object.Array);
    const index = key.arrayIndex();
    if (index == null and !names.is(key, "length")) return false;
    if (d.isAccessor() or (d.writable != null and !d.writable.?) or
        (index != null and ((d.enumerable != null and !d.enumerable.?) or (d.configurable != null and !d.configurable.?))))
    {
        return vm.throwFmt(.type_error, "Cannot define property {f}: an array's elements and length keep their default attributes here", .{ops.KeyFormat{ .s = key }});
    }
    if (index) |i| {
        if (i >= a.len and (o.frozen or o.sealed_shape)) return vm.throwFmt(.type_error, "Cannot define property {f}, object is not extensible", .{ops.KeyFormat{ .s = key }});
        try ops.setIndex(vm, a, i, d.value orelse (if (i < a.len and !a.items[i].eqlBits(Value.hole)) a.items[i] else Value.undefined_value));
    } else if (d.value) |v| {
        try ops.setField(vm, Value.obj(o), key, v);
    }
    return true;
}

/// A typed array's element is always a writable, enumerable, configurable data property: a
/// descriptor that keeps it so sets its value, any other is V8's TypeError.
fn defineTypedArrayElement(vm: *Vm, t: *object.TypedArray, key: *String, d: Descriptor) Error!bool {
    const i = key.arrayIndex() orelse return false;
    if (i >= t.len) return vm.throwMessage(.type_error, "Invalid typed array index");
    if (d.isAccessor() or (d.writable != null and !d.writable.?) or
        (d.enumerable != null and !d.enumerable.?) or (d.configurable != null and !d.configurable.?))
    {
        return vm.throwFmt(.type_error, "Cannot redefine property: {d}", .{i});
    }
    if (d.value) |v| try builtins.typed_arrays.set(vm, t, i, v);
    return true;
}

pub fn getOwnPropertyDescriptor(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    const key = try ops.toPropertyKey(vm, arg(args, 1));
    return descriptorOf(vm, v, key);
}

pub fn getOwnPropertyDescriptors(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    const keys = try ownNames(vm, v);
    const result = try vm.newObject(@intCast(@min(keys.len, 0xFFFF)));
    for (keys.slice()) |k| {
        const d = try descriptorOf(vm, v, k.asString());
        result.properties.put(vm.heap, k.asString(), d) catch return vm.outOfMemory();
    }
    return Value.obj(result);
}

const Attributes = struct { writable: bool, enumerable: bool, configurable: bool };

/// `{ get, set, enumerable, configurable }` of an Accessor object.
fn accessorDescriptor(vm: *Vm, accessor: Value, enumerable: bool, configurable: bool) Error!Value {
    const a = accessor.asObject().as(object.Accessor);
    const d = try vm.newObject(4);
    d.properties.add(vm.heap, names.string("get"), a.getter) catch return vm.outOfMemory();
    d.properties.add(vm.heap, names.string("set"), a.setter) catch return vm.outOfMemory();
    d.properties.add(vm.heap, names.string("enumerable"), Value.boolean(enumerable)) catch return vm.outOfMemory();
    d.properties.add(vm.heap, names.string("configurable"), Value.boolean(configurable)) catch return vm.outOfMemory();
    return Value.obj(d);
}

fn dataDescriptor(vm: *Vm, value: Value, a: Attributes) Error!Value {
    const d = try vm.newObject(4);
    d.properties.add(vm.heap, names.string("value"), value) catch return vm.outOfMemory();
    d.properties.add(vm.heap, names.string("writable"), Value.boolean(a.writable)) catch return vm.outOfMemory();
    d.properties.add(vm.heap, names.string("enumerable"), Value.boolean(a.enumerable)) catch return vm.outOfMemory();
    d.properties.add(vm.heap, names.string("configurable"), Value.boolean(a.configurable)) catch return vm.outOfMemory();
    return Value.obj(d);
}

/// The descriptor of an own property, or undefined.
pub fn descriptorOf(vm: *Vm, v: Value, key: *String) Error!Value {
    if (v.isString()) {
        const s = v.asString();
        if (key.arrayIndex()) |i| {
            if (i < s.len) return dataDescriptor(vm, Value.string(try ops.charAt(vm, s, i)), .{ .writable = false, .enumerable = true, .configurable = false });
        }
        if (names.is(key, "length")) return dataDescriptor(vm, Value.number(@floatFromInt(s.len)), .{ .writable = false, .enumerable = false, .configurable = false });
        return Value.undefined_value;
    }
    if (v.is(.builtin) or v.is(.native)) return builtinDescriptor(vm, v, key);
    if (!v.is(.object)) return Value.undefined_value;
    const o = v.asObject();
    const frozen = o.frozen;
    if (o.properties.find(key)) |i| {
        const p = o.properties.items[i];
        if (p.flags.accessor) return accessorDescriptor(vm, p.value, !p.flags.not_enumerable, !p.flags.not_configurable and !frozen);
        return dataDescriptor(vm, p.value, .{
            .writable = !p.flags.read_only and !frozen,
            .enumerable = !p.flags.not_enumerable,
            .configurable = !p.flags.not_configurable and !frozen and !o.sealed_shape_all,
        });
    }
    return intrinsicDescriptor(vm, o, key);
}

fn intrinsicDescriptor(vm: *Vm, o: *Object, key: *String) Error!Value {
    const frozen = o.frozen;
    switch (o.kind) {
        .typed_array => if (key.arrayIndex()) |i| {
            const t = o.as(object.TypedArray);
            if (i >= t.len) return Value.undefined_value;
            return dataDescriptor(vm, builtins.typed_arrays.get(t, i), .{ .writable = true, .enumerable = true, .configurable = true });
        },
        .array => {
            const a = o.as(object.Array);
            if (key.arrayIndex()) |i| {
                if (i >= a.len or a.items[i].eqlBits(Value.hole)) return Value.undefined_value;
                return dataDescriptor(vm, a.items[i], .{ .writable = !frozen, .enumerable = true, .configurable = !frozen and !o.sealed_shape_all });
            }
            if (names.is(key, "length")) return dataDescriptor(vm, Value.number(@floatFromInt(a.len)), .{ .writable = !frozen, .enumerable = false, .configurable = false });
        },
        .closure, .promise_function => {
            if (object.closureHasIntrinsic(o, key)) {
                return dataDescriptor(vm, try ops.getField(vm, Value.obj(o), key), .{ .writable = false, .enumerable = false, .configurable = !frozen });
            }
        },
        .error_object => {
            const e = o.as(object.ErrorObject);
            if (names.is(key, "message") and e.message != null) return dataDescriptor(vm, Value.string(e.message.?), .{ .writable = !frozen, .enumerable = false, .configurable = !frozen });
            if (names.is(key, "stack")) return dataDescriptor(vm, try ops.getField(vm, Value.obj(o), key), .{ .writable = !frozen, .enumerable = false, .configurable = !frozen });
            if (names.is(key, "cause") and !e.cause.eqlBits(Value.hole)) return dataDescriptor(vm, e.cause, .{ .writable = !frozen, .enumerable = false, .configurable = !frozen });
        },
        else => {},
    }
    return Value.undefined_value;
}

/// A builtin object's or function's member as the run sees it (builtin_changes.zig: the
/// tables' attributes, or what the script changed).
fn builtinDescriptor(vm: *Vm, v: Value, key: *String) Error!Value {
    const m = (try changes.ownMember(vm, v, key)) orelse return Value.undefined_value;
    if (m.flags.accessor) return accessorDescriptor(vm, m.value, !m.flags.not_enumerable, !m.flags.not_configurable);
    return dataDescriptor(vm, m.value, .{ .writable = !m.flags.read_only, .enumerable = !m.flags.not_enumerable, .configurable = !m.flags.not_configurable });
}

pub fn getOwnPropertyNames(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    return Value.obj(&(try ownNames(vm, v)).object);
}

pub fn getOwnPropertySymbols(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (v.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    const keys = try vm.newArray(0);
    if (!v.is(.object)) return Value.obj(&keys.object);
    const o = v.asObject();
    try vm.charge(meter.elementsCost(o.properties.len));
    for (o.properties.slice()) |p| {
        if (!p.key.flags.symbol) continue;
        keys.push(vm.heap, Value.symbol(p.key)) catch return vm.outOfMemory();
    }
    return Value.obj(&keys.object);
}

/// Every own string key, enumerable or not, in the spec's order.
pub fn ownNames(vm: *Vm, v: Value) Error!*object.Array {
    if (v.is(.builtin)) return builtinNames(vm, @intCast(v.payload()));
    const keys = try vm.newArray(0);
    if (v.is(.native)) {
        // A builtin function's own: its length and name (unless deleted), and what was added.
        inline for (.{ "length", "name" }) |n| {
            if (!try changes.isDeleted(vm, v, names.string(n))) keys.push(vm.heap, Value.string(names.string(n))) catch return vm.outOfMemory();
        }
        if (vm.builtin_changes != null) try changes.addedKeys(vm, v, keys, .all);
        return keys;
    }
    if (v.isString()) {
        const enumerable = try ops.ownKeysArray(vm, v);
        for (enumerable.slice()) |k| keys.push(vm.heap, k) catch return vm.outOfMemory();
        keys.push(vm.heap, Value.string(names.string("length"))) catch return vm.outOfMemory();
        return keys;
    }
    if (!v.is(.object)) return keys;
    const o = v.asObject();
    try vm.charge(meter.elementsCost(o.properties.len));
    if (o.kind == .array) {
        const a = o.as(object.Array);
        try vm.charge(meter.elementsCost(a.len));
        for (a.slice(), 0..) |item, i| {
            if (item.eqlBits(Value.hole)) continue;
            keys.push(vm.heap, Value.string(try ops.numberToString(vm, @floatFromInt(i)))) catch return vm.outOfMemory();
        }
        keys.push(vm.heap, Value.string(names.string("length"))) catch return vm.outOfMemory();
    }
    if (o.kind == .typed_array) {
        const len = o.as(object.TypedArray).len;
        try vm.charge(meter.elementsCost(len));
        for (0..len) |i| keys.push(vm.heap, Value.string(try ops.numberToString(vm, @floatFromInt(i)))) catch return vm.outOfMemory();
    }
    for (o.properties.slice()) |p| {
        if (p.key.arrayIndex() == null) continue;
        keys.push(vm.heap, Value.string(p.key)) catch return vm.outOfMemory();
    }
    const intrinsic: []const []const u8 = switch (o.kind) {
        .closure, .bound_function, .promise_function => &.{ "length", "name" },
        .error_object => &.{"stack"},
        else => &.{},
    };
    inline for (.{ "length", "name", "stack", "message" }) |n| {
        for (intrinsic) |i| {
            const kept = (o.kind != .closure and o.kind != .promise_function) or object.closureHasIntrinsic(o, names.string(n));
            if (std.mem.eql(u8, i, n) and kept and o.properties.find(names.string(n)) == null) {
                keys.push(vm.heap, Value.string(names.string(n))) catch return vm.outOfMemory();
            }
        }
    }
    if (o.kind == .error_object and o.as(object.ErrorObject).message != null and o.properties.find(names.string("message")) == null) {
        keys.push(vm.heap, Value.string(names.string("message"))) catch return vm.outOfMemory();
    }
    for (o.properties.slice()) |p| {
        if (p.key.arrayIndex() != null or p.flags.private or p.key.flags.symbol) continue;
        keys.push(vm.heap, Value.string(p.key)) catch return vm.outOfMemory();
    }
    return keys;
}

fn builtinNames(vm: *Vm, id: u32) Error!*object.Array {
    const keys = try vm.newArray(0);
    if (id >= builtins.builtin_objects.len) return keys;
    if (builtins.isCallableBuiltin(id)) {
        inline for (.{ "length", "name" }) |n| {
            if (!try changes.isDeleted(vm, Value.builtin(@intCast(id)), names.string(n))) {
                keys.push(vm.heap, Value.string(names.string(n))) catch return vm.outOfMemory();
            }
        }
    }
    const target = Value.builtin(@intCast(id));
    if (builtins.builtin_objects[id].prototype != null and !try changes.isDeleted(vm, target, names.string("prototype"))) {
        keys.push(vm.heap, Value.string(names.string("prototype"))) catch return vm.outOfMemory();
    }
    if (builtins.builtin_objects[id].constructor_of != null and !try changes.isDeleted(vm, target, names.string("constructor"))) {
        keys.push(vm.heap, Value.string(names.string("constructor"))) catch return vm.outOfMemory();
    }
    for (0..names.count) |i| {
        const key = names.byId(@intCast(i));
        if (key.flags.symbol) continue;
        if (builtins.classMember(builtins.builtin_objects[id].class, key) == null) continue;
        if (try changes.isDeleted(vm, target, key)) continue;
        keys.push(vm.heap, Value.string(key)) catch return vm.outOfMemory();
    }
    if (vm.builtin_changes != null) try changes.addedKeys(vm, target, keys, .all);
    return keys;
}

pub fn preventExtensions(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (!v.is(.object)) return v;
    try ops.checkModuleWrite(vm, v.asObject());
    v.asObject().sealed_shape = true;
    return v;
}

pub fn isExtensible(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    if (!v.is(.object)) return Value.false_value;
    return Value.boolean(!v.asObject().frozen and !v.asObject().sealed_shape);
}

pub fn seal(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const v = arg(args, 0);
    if (!v.is(.object)) return v;
    const o = v.asObject();
    try ops.checkModuleWrite(vm, o);
    o.sealed_shape = true;
    o.sealed_shape_all = true;
    try vm.charge(meter.elementsCost(o.properties.len));
    for (o.properties.slice()) |*p| p.flags.not_configurable = true;
    return v;
}

pub fn isSealed(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    if (!v.is(.object)) return Value.true_value;
    const o = v.asObject();
    if (o.frozen) return Value.true_value;
    if (!o.sealed_shape) return Value.false_value;
    if (o.kind == .array and o.as(object.Array).len > 0 and !o.sealed_shape_all) return Value.false_value;
    for (o.properties.slice()) |p| if (!p.flags.not_configurable) return Value.false_value;
    return Value.true_value;
}

pub fn propertyIsEnumerable(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (this.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    const key = try ops.toPropertyKey(vm, arg(args, 0));
    const d = try descriptorOf(vm, this, key);
    if (d.isUndefined()) return Value.false_value;
    return ops.getField(vm, d, names.string("enumerable"));
}

pub fn isPrototypeOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    const v = arg(args, 0);
    if (!v.is(.object)) return Value.false_value;
    return Value.boolean(ops.inherits(v, this));
}
