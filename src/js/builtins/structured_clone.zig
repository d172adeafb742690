//! `structuredClone(value)`, as the HTML standard's structured serialization defines it for
//! the values the language has, and as V8 (node 20) does it: primitives as they are; plain
//! objects and arrays as their own enumerable string-keyed properties, read with [[Get]]
//! (getters run), into a plain object or an array (prototypes are not kept: a class
//! instance becomes a plain object, a subclass of Map a Map); Date, RegExp (lastIndex 0), Map,
//! Set and errors (kind, message, cause) as themselves; cycles and shared references kept.
//!
//! Decision: what cannot be cloned (a function, a symbol, a promise, an iterator, a
//! generator) throws what node throws, a DataCloneError (here an `Error` whose own `name` is
//! `DataCloneError` and `code` 25, as base64.zig makes InvalidCharacterError), with V8's
//! message. The walk recurses natively and checks the native stack at each level, as JSON
//! does; the memory of objects already cloned is a Map in the run's heap.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const object = @import("../object.zig");
const Object = object.Object;
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");

const Cloner = struct {
    vm: *Vm,
    /// Original object → its clone.
    memory: *object.MapObject,

    fn clone(c: *Cloner, v: Value) Error!Value {
        const vm = c.vm;
        try vm.charge(meter.elementsCost(1));
        if (v.is(.symbol)) {
            const text = try @import("../symbol.zig").descriptiveString(vm, v.asSymbolKey());
            return throwDataClone(vm, text);
        }
        if (v.is(.native)) return throwDataClone(vm, try ops.toString(vm, v));
        if (v.is(.builtin)) {
            if (ops.isCallable(v)) return throwDataClone(vm, try ops.toString(vm, v));
            // Math, JSON...: objects with no enumerable own property.
            return Value.obj(try vm.newObject(0));
        }
        if (!v.is(.object)) return v;
        if (c.memory.get(v)) |done| return done;
        try vm.checkNativeStack();
        const o = v.asObject();
        return switch (o.kind) {
            .plain, .accessor => c.cloneProperties(o, Value.obj(try vm.newObject(0))),
            .array => c.cloneArray(o),
            .date => c.remember(v, try builtins.dates.newDate(vm, o.as(object.DateObject).time)),
            .regexp => c.remember(v, try builtins.regexps.construct(vm, Value.undefined_value, &.{v})),
            .map, .set => c.cloneCollection(o),
            .error_object => c.cloneError(o),
            .closure, .bound_function, .promise_function => throwDataClone(vm, try ops.toString(vm, v)),
            .promise => throwDataClone(vm, try vm.newLatin1("#<Promise>")),
            .generator => throwDataClone(vm, try vm.newLatin1("[object Generator]")),
            .iterator => throwDataClone(vm, try vm.newLatin1("#<Object>")),
            .array_buffer => {
                const b = o.as(object.ArrayBuffer);
                const copy = try builtins.typed_arrays.newBuffer(vm, b.len);
                @memcpy(copy.slice(), b.slice());
                return c.remember(v, Value.obj(&copy.object));
            },
            .typed_array => {
                // The buffer is cloned once, so views that shared one still share its copy.
                const t = o.as(object.TypedArray);
                const buffer = try c.clone(Value.obj(&t.buffer.object));
                const view = try builtins.typed_arrays.newView(vm, t.element, buffer.asObject().as(object.ArrayBuffer), t.byte_offset, t.len);
                return c.remember(v, Value.obj(&view.object));
            },
        };
    }

    fn remember(c: *Cloner, original: Value, copy: Value) Error!Value {
        c.memory.put(c.vm.heap, original, copy) catch return c.vm.outOfMemory();
        return copy;
    }

    /// The own enumerable string-keyed properties of `o`, cloned into `copy`.
    fn cloneProperties(c: *Cloner, o: *Object, copy: Value) Error!Value {
        const vm = c.vm;
        _ = try c.remember(Value.obj(o), copy);
        const keys = try ops.ownKeysArray(vm, Value.obj(o));
        for (keys.slice()) |key| {
            const value = try c.clone(try ops.getField(vm, Value.obj(o), key.asString()));
            try ops.setField(vm, copy, key.asString(), value);
        }
        return copy;
    }

    /// An array: its length, its elements (holes kept) and its other enumerable properties.
    fn cloneArray(c: *Cloner, o: *Object) Error!Value {
        const vm = c.vm;
        const source = o.as(object.Array);
        const copy = try vm.newArray(source.len);
        copy.setLength(vm.heap, source.len) catch return vm.outOfMemory();
        _ = try c.remember(Value.obj(o), Value.obj(&copy.object));
        var i: usize = 0;
        while (i < source.len) : (i += 1) {
            const item = source.items[i];
            if (item.eqlBits(Value.hole)) continue;
            copy.items[i] = try c.clone(item);
        }
        for (o.properties.slice()) |p| {
            if (p.flags.not_enumerable or p.flags.private or p.key.flags.symbol) continue;
            const value = try c.clone(try ops.getField(vm, Value.obj(o), p.key));
            try ops.setField(vm, Value.obj(&copy.object), p.key, value);
        }
        return Value.obj(&copy.object);
    }

    /// A Map or a Set (a Headers or a URLSearchParams is a platform object node clones as
    /// `{}`).
    fn cloneCollection(c: *Cloner, o: *Object) Error!Value {
        const vm = c.vm;
        if (builtins.headers.isHeaders(o) or builtins.urlsearchparams.isSearchParams(o)) {
            return c.remember(Value.obj(o), Value.obj(try vm.newObject(0)));
        }
        const copy = object.newMap(vm.heap, o.kind) catch return vm.outOfMemory();
        _ = try c.remember(Value.obj(o), Value.obj(&copy.object));
        // Entries as they were when the walk reached the collection; a getter run meanwhile
        // that adds entries adds them to the original only.
        const entries = object.mapOf(o).slice();
        for (entries, 0..) |_, i| {
            const e = object.mapOf(o).slice()[i];
            if (e.key.eqlBits(Value.hole)) continue;
            const key = try c.clone(e.key);
            const value = if (o.kind == .map) try c.clone(e.value) else Value.undefined_value;
            copy.put(vm.heap, key, value) catch return vm.outOfMemory();
        }
        return Value.obj(&copy.object);
    }

    /// An error: the kind its `name` names (Error for any other name), its message and its
    /// cause, as V8 serializes them.
    fn cloneError(c: *Cloner, o: *Object) Error!Value {
        const vm = c.vm;
        const e = o.as(object.ErrorObject);
        const name = try ops.getField(vm, Value.obj(o), names.string("name"));
        var kind: object.ErrorKind = .@"error";
        if (name.isString()) {
            for (std.enums.values(object.ErrorKind)) |k| {
                if (name.asString().eqlLatin1(k.name())) kind = k;
            }
        }
        const copy = try vm.newErrorWith(kind, e.message);
        _ = try c.remember(Value.obj(o), Value.obj(&copy.object));
        if (!e.cause.eqlBits(Value.hole)) copy.cause = try c.clone(e.cause);
        return Value.obj(&copy.object);
    }
};

/// node's DOMException for what cannot be cloned: an Error named DataCloneError, code 25.
fn throwDataClone(vm: *Vm, what: *string.String) Error {
    var buf: [512]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    string.writeUtf8(&w, what) catch {}; // A long source text is cut, not lost.
    w.writeAll(" could not be cloned.") catch {};
    return builtins.base64.throwDomException(vm, "DataCloneError", 25, w.buffered());
}

pub fn structuredClone(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    if (args.len == 0) return vm.throwMessage(.type_error, "The value argument must be specified");
    const memory = object.newMap(vm.heap, .map) catch return vm.outOfMemory();
    var cloner: Cloner = .{ .vm = vm, .memory = memory };
    return cloner.clone(args[0]);
}
