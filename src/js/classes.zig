//! Classes, constructors and methods at run time: what `class` builds (a constructor whose
//! `prototype` holds the methods), how members are defined (methods with their home object,
//! accessors, fields), and what `new`, `super()` and `super.x` do.
//!
//! The one decision a reader must know: a class's instance fields are compiled into a method
//! of their own (the constructor's `fields`), which runs on each new instance: at the start of
//! a base class's constructor, and right after `super()` returns in a derived one. Static
//! fields and blocks are another method, run once on the class.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const Value = @import("value.zig").Value;
const string = @import("string.zig");
const String = string.String;
const object = @import("object.zig");
const Object = object.Object;
const ops = @import("operations.zig");
const names = @import("names.zig");
const bytecode = @import("bytecode.zig");
const builtins = @import("builtins.zig");

pub const Made = struct { constructor: Value, prototype: Value };

/// `class C extends H`: C's prototype object inherits from H.prototype, C from H. Without a
/// heritage the prototype inherits from Object.prototype and C from Function.prototype.
pub fn makeClass(vm: *Vm, constructor: Value, heritage: ?Value) Error!Made {
    const c = (constructor.objectOf(.closure) orelse return vm.terminate(.invalid_bytecode)).as(object.Closure);
    assert(c.function.kind.isClassConstructor());
    const prototype = try vm.newObject(2);
    if (heritage) |h| {
        if (h.isNull()) {
            prototype.proto = Value.null_value;
        } else {
            if (!isConstructor(h)) {
                return vm.throwFmt(.type_error, "Class extends value {f} is not a constructor or null", .{ops.ValueText{ .vm = vm, .v = h }});
            }
            const parent_prototype = try ops.getField(vm, h, names.string("prototype"));
            if (!parent_prototype.isNull() and !ops.isObjectLike(parent_prototype)) {
                return vm.throwFmt(.type_error, "Class extends value does not have valid prototype property {f}", .{ops.ValueText{ .vm = vm, .v = parent_prototype }});
            }
            prototype.proto = parent_prototype;
            c.object.proto = h;
        }
    }
    const hidden: object.PropertyFlags = .hidden;
    prototype.properties.define(vm.heap, names.string("constructor"), constructor, hidden) catch return vm.outOfMemory();
    const fixed: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true, .not_configurable = true };
    c.object.properties.define(vm.heap, names.string("prototype"), Value.obj(prototype), fixed) catch return vm.outOfMemory();
    c.home = prototype;
    return .{ .constructor = constructor, .prototype = Value.obj(prototype) };
}

/// Whether `new v()` can work: a constructor closure, a builtin constructor, a bound one.
pub fn isConstructor(v: Value) bool {
    if (v.objectOf(.closure)) |o| return o.as(object.Closure).function.kind.isConstructor();
    if (v.objectOf(.bound_function)) |o| return isConstructor(o.as(object.BoundFunction).target);
    if (v.is(.builtin)) return builtins.globalIsConstructor(@intCast(v.payload()));
    return false;
}

/// A new private name: a key with `#x`'s text that only itself matches.
pub fn newPrivateName(vm: *Vm, name: *const String) Error!*String {
    const key = vm.heap.create(String) catch return vm.outOfMemory();
    key.* = .{ .ptr = name.ptr, .len = name.len, .flags = .{ .wide = name.flags.wide, .private = true, .index = .no } };
    key.name_id = String.name_none;
    return key;
}

/// Defines a method (with its home object), a getter, a setter or a field on `target`.
pub fn defineMember(vm: *Vm, target: Value, key_value: Value, v: Value, flags: bytecode.MemberFlags) Error!void {
    if (!target.is(.object)) return vm.terminate(.invalid_bytecode);
    const o = target.asObject();
    const key = try ops.toPropertyKey(vm, key_value);
    if (key.flags.private) return definePrivate(vm, o, key, v, flags);
    if (v.objectOf(.closure)) |f| {
        const closure = f.as(object.Closure);
        if (flags.kind != .field) closure.home = o;
        if (closure.function.name == @import("Program.zig").no_name and closure.name == null) {
            closure.name = switch (flags.kind) {
                .getter => try prefixed(vm, "get ", key),
                .setter => try prefixed(vm, "set ", key),
                else => key,
            };
        }
    }
    const attributes: object.PropertyFlags = .{ .not_enumerable = flags.not_enumerable };
    switch (flags.kind) {
        .method, .field => {
            if (flags.kind == .field) try ops.checkModuleWrite(vm, o);
            if (flags.kind == .field and (o.frozen or o.sealed_shape) and o.properties.find(key) == null) {
                return vm.throwFmt(.type_error, "Cannot define property {f}, object is not extensible", .{ops.KeyFormat{ .s = key }});
            }
            o.properties.define(vm.heap, key, v, attributes) catch return vm.outOfMemory();
        },
        .getter, .setter => {
            var accessor: *object.Accessor = undefined;
            if (o.properties.find(key)) |i| {
                const existing = o.properties.items[i];
                if (existing.flags.accessor) accessor = existing.value.asObject().as(object.Accessor) else accessor = try newAccessor(vm);
            } else accessor = try newAccessor(vm);
            if (flags.kind == .getter) accessor.getter = v else accessor.setter = v;
            var accessor_flags = attributes;
            accessor_flags.accessor = true;
            o.properties.define(vm.heap, key, Value.obj(&accessor.object), accessor_flags) catch return vm.outOfMemory();
        },
    }
}

/// A private field, method or accessor on an instance (or a class): once per object, and
/// even on a frozen one.
fn definePrivate(vm: *Vm, o: *Object, key: *String, v: Value, flags: bytecode.MemberFlags) Error!void {
    try ops.checkModuleWrite(vm, o);
    if (v.objectOf(.closure)) |f| {
        if (flags.kind != .field) f.as(object.Closure).home = o;
    }
    var attributes: object.PropertyFlags = .{ .not_enumerable = true, .private = true };
    if (o.properties.find(key)) |i| {
        const existing = o.properties.items[i];
        // A getter and a setter of one name meet in one accessor.
        const pairing = existing.flags.accessor and (flags.kind == .getter or flags.kind == .setter);
        if (!pairing) return vm.throwFmt(.type_error, "Cannot initialize {f} twice on the same object", .{ops.KeyFormat{ .s = key }});
        const accessor = existing.value.asObject().as(object.Accessor);
        if (flags.kind == .getter) accessor.getter = v else accessor.setter = v;
        return;
    }
    var value = v;
    switch (flags.kind) {
        .field => {},
        .method => attributes.read_only = true,
        .getter, .setter => {
            const accessor = try newAccessor(vm);
            if (flags.kind == .getter) accessor.getter = v else accessor.setter = v;
            attributes.accessor = true;
            value = Value.obj(&accessor.object);
        },
    }
    o.properties.define(vm.heap, key, value, attributes) catch return vm.outOfMemory();
}

/// `o.#x`: the object must have it (its class made it), or it is a TypeError.
pub fn privateGet(vm: *Vm, obj: Value, key: *String) Error!Value {
    const p = privateProperty(obj, key) orelse
        return vm.throwFmt(.type_error, "Cannot read private member {f} from an object whose class did not declare it", .{ops.KeyFormat{ .s = key }});
    if (!p.flags.accessor) return p.value;
    const a = p.value.asObject().as(object.Accessor);
    if (a.getter.isUndefined()) return vm.throwFmt(.type_error, "'{f}' was defined without a getter", .{ops.KeyFormat{ .s = key }});
    return vm.call(a.getter, obj, &.{});
}

/// `o.#x = v`: as privateGet, and a private method cannot be written.
pub fn privateSet(vm: *Vm, obj: Value, key: *String, v: Value) Error!void {
    const p = privateProperty(obj, key) orelse
        return vm.throwFmt(.type_error, "Cannot write private member {f} to an object whose class did not declare it", .{ops.KeyFormat{ .s = key }});
    if (p.flags.accessor) {
        const a = p.value.asObject().as(object.Accessor);
        if (a.setter.isUndefined()) return vm.throwFmt(.type_error, "'{f}' was defined without a setter", .{ops.KeyFormat{ .s = key }});
        _ = try vm.call(a.setter, obj, &.{v});
        return;
    }
    if (p.flags.read_only) return vm.throwFmt(.type_error, "Private method '{f}' is not writable", .{ops.KeyFormat{ .s = key }});
    try ops.checkModuleWrite(vm, obj.asObject());
    p.value = v;
}

fn privateProperty(obj: Value, key: *String) ?*object.Property {
    if (!obj.is(.object)) return null;
    const o = obj.asObject();
    const i = o.properties.find(key) orelse return null;
    return &o.properties.items[i];
}

pub fn newAccessor(vm: *Vm) Error!*object.Accessor {
    const a = vm.heap.create(object.Accessor) catch return vm.outOfMemory();
    a.* = .{ .object = .{ .kind = .accessor }, .getter = Value.undefined_value, .setter = Value.undefined_value };
    return a;
}

fn prefixed(vm: *Vm, comptime prefix: []const u8, key: *String) Error!*String {
    return ops.concatTwo(vm, names.string(prefix), key) catch |err| return err;
}

/// Attaches the instance fields' method to the constructor; its home is the prototype.
pub fn setFields(vm: *Vm, prototype: Value, constructor: Value, init: Value) Error!void {
    const c = (constructor.objectOf(.closure) orelse return vm.terminate(.invalid_bytecode)).as(object.Closure);
    const f = (init.objectOf(.closure) orelse return vm.terminate(.invalid_bytecode)).as(object.Closure);
    if (!prototype.is(.object)) return vm.terminate(.invalid_bytecode);
    f.home = prototype.asObject();
    c.fields = f;
}

/// Runs the static fields' method once, with the class as `this`.
pub fn callStatic(vm: *Vm, constructor: Value, init: Value) Error!void {
    const f = (init.objectOf(.closure) orelse return vm.terminate(.invalid_bytecode)).as(object.Closure);
    if (!constructor.is(.object)) return vm.terminate(.invalid_bytecode);
    f.home = constructor.asObject();
    _ = try vm.call(init, constructor, &.{});
}

/// Defines a class's instance fields on a new instance (nothing when it has none).
pub fn initFields(vm: *Vm, this: Value, constructor: Value) Error!void {
    const c = (constructor.objectOf(.closure) orelse return).as(object.Closure);
    const fields = c.fields orelse return;
    _ = try vm.call(Value.obj(&fields.object), this, &.{});
}

/// What a derived constructor returns: an object it returned, else its `this`, which
/// `super()` must have bound.
pub fn derivedResult(vm: *Vm, result: Value, this: Value) Error!Value {
    if (result.is(.object)) return result;
    if (!result.isUndefined()) return vm.throwMessage(.type_error, "Derived constructors may only return object or undefined");
    if (this.eqlBits(Value.uninitialized) or this.isUndefined()) {
        return vm.throwMessage(.reference_error, "Must call super constructor in derived class before accessing 'this' or returning from derived constructor");
    }
    return this;
}

/// `super(...args)` in `constructor`: the parent (the constructor's prototype) constructs with
/// the same `new.target`, so the object inherits from the class `new` named.
pub fn superConstruct(vm: *Vm, constructor: Value, new_target: Value, args: []const Value) Error!Value {
    if (!constructor.is(.object)) return vm.terminate(.invalid_bytecode);
    const parent = constructor.asObject().proto;
    if (!isConstructor(parent)) {
        return vm.throwFmt(.type_error, "Super constructor {f} of anonymous class is not a constructor", .{ops.ValueText{ .vm = vm, .v = parent }});
    }
    const result = try vm.construct(parent, args, new_target);
    if (parent.objectOf(.closure) == null and result.is(.object)) {
        // A builtin made it (Array, Error, Map...): it inherits from the class's prototype.
        result.asObject().proto = try ops.prototypeForNew(vm, new_target);
    }
    return result;
}

/// `super[key]` read with `this` as the receiver: from the home object's prototype.
pub fn superGet(vm: *Vm, this: Value, home: Value, key_value: Value) Error!Value {
    if (!home.is(.object)) return vm.terminate(.invalid_bytecode);
    const key = try ops.toPropertyKey(vm, key_value);
    const proto = ops.prototypeOf(home.asObject());
    if (proto.isNull()) return Value.undefined_value;
    return ops.getFieldFrom(vm, proto, key, this);
}
