//! Map and Set (constructors and prototypes) and the iterators that keys(), values() and
//! entries() return for Map, Set and Array.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const Object = object.Object;
const MapObject = object.MapObject;
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const objects = @import("objects.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

pub fn requireNewMap(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Constructor Map requires 'new'");
}

pub fn requireNewSet(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Constructor Set requires 'new'");
}

fn newCollection(vm: *Vm, kind: object.Kind) Error!*MapObject {
    return object.newMap(vm.heap, kind) catch vm.outOfMemory();
}

pub fn constructMap(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const m = try newCollection(vm, .map);
    const iterable = arg(args, 0);
    if (iterable.isNullish()) return Value.obj(&m.object);
    var source = try startIteration(vm, iterable);
    var cursor = Value.number(0);
    while (try ops.iterNext(vm, &source, &cursor)) |entry| {
        try vm.charge(meter.elementsCost(1));
        if (!entry.is(.object)) {
            return vm.throwFmt(.type_error, "Iterator value {f} is not an entry object", .{objects.RawFormat{ .v = entry }});
        }
        const k = try ops.getElement(vm, entry, Value.number(0));
        const v = try ops.getElement(vm, entry, Value.number(1));
        m.put(vm.heap, k, v) catch return vm.outOfMemory();
    }
    return Value.obj(&m.object);
}

pub fn constructSet(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const m = try newCollection(vm, .set);
    const iterable = arg(args, 0);
    if (iterable.isNullish()) return Value.obj(&m.object);
    var source = try startIteration(vm, iterable);
    var cursor = Value.number(0);
    while (try ops.iterNext(vm, &source, &cursor)) |v| {
        try vm.charge(meter.elementsCost(1));
        m.put(vm.heap, v, Value.undefined_value) catch return vm.outOfMemory();
    }
    return Value.obj(&m.object);
}

fn startIteration(vm: *Vm, v: Value) Error!Value {
    return ops.iterStart(vm, v, .{});
}

fn mutable(vm: *Vm, m: *MapObject) Error!*MapObject {
    try ops.checkModuleWrite(vm, m);
    return m;
}

fn thisCollection(vm: *Vm, this: Value, kind: object.Kind, comptime method: []const u8) Error!*MapObject {
    if (this.objectOf(kind)) |o| return object.mapOf(o);
    return vm.throwFmt(.type_error, "Method " ++ method ++ " called on incompatible receiver {f}", .{ops.ShortFormat{ .vm = vm, .v = this }});
}

pub fn mapGet(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try thisCollection(vm, this, .map, "Map.prototype.get");
    return m.get(arg(args, 0)) orelse Value.undefined_value;
}

pub fn mapSet(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try mutable(vm, try thisCollection(vm, this, .map, "Map.prototype.set"));
    m.put(vm.heap, arg(args, 0), arg(args, 1)) catch return vm.outOfMemory();
    return this;
}

pub fn setAdd(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try mutable(vm, try thisCollection(vm, this, .set, "Set.prototype.add"));
    m.put(vm.heap, arg(args, 0), Value.undefined_value) catch return vm.outOfMemory();
    return this;
}

/// has, delete, clear and forEach, one of each per prototype: a receiver that is not of
/// the method's own kind is refused with its name (`Method Set.prototype.has called on
/// incompatible receiver undefined`).
pub fn Shared(comptime kind: object.Kind) type {
    const prefix = if (kind == .map) "Map.prototype." else "Set.prototype.";
    return struct {
        pub fn has(vm: *Vm, this: Value, args: []const Value) Error!Value {
            const m = try thisCollection(vm, this, kind, prefix ++ "has");
            return Value.boolean(m.find(arg(args, 0)) != null);
        }

        pub fn delete(vm: *Vm, this: Value, args: []const Value) Error!Value {
            const m = try mutable(vm, try thisCollection(vm, this, kind, prefix ++ "delete"));
            return Value.boolean(m.remove(arg(args, 0)));
        }

        pub fn clear(vm: *Vm, this: Value, args: []const Value) Error!Value {
            _ = args;
            const m = try mutable(vm, try thisCollection(vm, this, kind, prefix ++ "clear"));
            m.clear();
            return Value.undefined_value;
        }

        pub fn forEach(vm: *Vm, this: Value, args: []const Value) Error!Value {
            const m = try thisCollection(vm, this, kind, prefix ++ "forEach");
            const f = arg(args, 0);
            // Map's and Set's forEach name the value by its type, as V8's default call site does.
            if (!ops.isCallable(f)) return vm.throwFmt(.type_error, "{f} is not a function", .{ops.DefaultSite{ .vm = vm, .v = f }});
            // Entries added during the walk are visited, as the spec says: the length is re-read.
            var i: u32 = 0;
            while (i < m.len) : (i += 1) {
                try vm.charge(meter.elementsCost(1));
                const entry = m.entries[i];
                if (entry.key.eqlBits(Value.hole)) continue;
                const v = if (m.object.kind == .set) entry.key else entry.value;
                _ = try vm.call(f, Value.undefined_value, &.{ v, entry.key, this });
            }
            return Value.undefined_value;
        }
    };
}

pub const map_methods = Shared(.map);
pub const set_methods = Shared(.set);

fn newIterator(vm: *Vm, source: Value, kind: object.IteratorKind) Error!Value {
    const it = vm.heap.create(object.Iterator) catch return vm.outOfMemory();
    it.* = .{ .object = .{ .kind = .iterator }, .source = source, .iterator_kind = kind };
    return Value.obj(&it.object);
}

pub fn mapKeys(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    _ = try thisCollection(vm, this, .map, "Map.prototype.keys");
    return newIterator(vm, this, .map_keys);
}

pub fn mapValues(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    _ = try thisCollection(vm, this, .map, "Map.prototype.values");
    return newIterator(vm, this, .map_values);
}

pub fn mapEntries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    _ = try thisCollection(vm, this, .map, "Map.prototype.entries");
    return newIterator(vm, this, .map_entries);
}

pub fn setValues(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    _ = try thisCollection(vm, this, .set, "Set.prototype.values");
    return newIterator(vm, this, .set_values);
}

pub fn setEntries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    _ = try thisCollection(vm, this, .set, "Set.prototype.entries");
    return newIterator(vm, this, .set_entries);
}

/// The iterator's next value, or null when it is done (and stays done).
/// An array iterator's step over a typed array: its length is read at each step, as an
/// array's is.
fn typedArrayStep(vm: *Vm, it: *object.Iterator, t: *object.TypedArray) Error!?Value {
    if (it.index >= t.len) {
        it.done = true;
        return null;
    }
    const i = it.index;
    it.index += 1;
    const v = builtins.typed_arrays.get(t, i);
    return switch (it.iterator_kind) {
        .array_keys => Value.number(@floatFromInt(i)),
        .array_values => v,
        else => Value.obj(try ops.pair(vm, Value.number(@floatFromInt(i)), v)),
    };
}

/// An array iterator's step over an object that is not an array: `length` and the element
/// read through Get at each step, so getters and a length that changes are seen.
fn arrayLikeStep(vm: *Vm, it: *object.Iterator) Error!?Value {
    const len = try builtins.array_like.lengthOf(vm, it.source);
    // An index past u32 is out of any budget's reach; stop rather than wrap.
    if (it.index >= len or it.index == std.math.maxInt(u32)) {
        it.done = true;
        return null;
    }
    const i = it.index;
    it.index += 1;
    if (it.iterator_kind == .array_keys) return Value.number(@floatFromInt(i));
    const v = try ops.getElement(vm, it.source, Value.number(@floatFromInt(i)));
    if (it.iterator_kind == .array_values) return v;
    return Value.obj(try ops.pair(vm, Value.number(@floatFromInt(i)), v));
}

pub fn iteratorStep(vm: *Vm, it: *object.Iterator) Error!?Value {
    if (it.done) return null;
    const source = it.source;
    if (it.iterator_kind == .protocol) return ops.protocolStep(vm, it);
    if (it.iterator_kind == .string_values) return stringStep(vm, it);
    if (!source.is(.object)) {
        it.done = true;
        return null;
    }
    const o = source.asObject();
    switch (it.iterator_kind) {
        .array_keys, .array_values, .array_entries => {
            if (o.kind == .typed_array) return typedArrayStep(vm, it, o.as(object.TypedArray));
            if (o.kind != .array) return arrayLikeStep(vm, it);
            const a = o.as(object.Array);
            if (it.index >= a.len) {
                it.done = true;
                return null;
            }
            const i = it.index;
            it.index += 1;
            const raw = a.items[i];
            const v = if (raw.eqlBits(Value.hole)) Value.undefined_value else raw;
            return switch (it.iterator_kind) {
                .array_keys => Value.number(@floatFromInt(i)),
                .array_values => v,
                else => Value.obj(try ops.pair(vm, Value.number(@floatFromInt(i)), v)),
            };
        },
        .map_keys, .map_values, .map_entries, .set_values, .set_entries => {
            if (o.kind != .map and o.kind != .set) return null;
            const m = object.mapOf(o);
            const start = it.index;
            while (it.index < m.len and m.entries[it.index].key.eqlBits(Value.hole)) it.index += 1;
            meter.charge(meter.elementsCost(2 * (it.index - start))); // Deleted entries skipped.
            if (it.index >= m.len) {
                it.done = true;
                return null;
            }
            const entry = m.entries[it.index];
            it.index += 1;
            return switch (it.iterator_kind) {
                .map_keys, .set_values => entry.key,
                .map_values => entry.value,
                .map_entries => Value.obj(try ops.pair(vm, entry.key, entry.value)),
                else => Value.obj(try ops.pair(vm, entry.key, entry.key)),
            };
        },
        .string_values, .protocol => unreachable, // Handled above.
        .for_in_keys => {
            const keys = it.keys orelse return null;
            while (it.index < keys.len) {
                const key = keys.items[it.index];
                it.index += 1;
                meter.charge(meter.elementsCost(1));
                if (key.isString() and ops.hasOwnKey(o, key.asString())) return key;
            }
            it.done = true;
            return null;
        },
    }
}

/// A string iterator's next code point, as a string of one or two units.
fn stringStep(vm: *Vm, it: *object.Iterator) Error!?Value {
    if (!it.source.isString()) return null;
    const s = it.source.asString();
    if (it.index >= s.len) {
        it.done = true;
        return null;
    }
    var source = it.source;
    var cursor = Value.number(@floatFromInt(it.index));
    const v = try ops.iterNext(vm, &source, &cursor);
    it.index = @intFromFloat(cursor.asNumber());
    return v;
}

/// iterator.next(): { value, done }.
pub fn iteratorNext(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const o = this.objectOf(.iterator) orelse return vm.throwMessage(.type_error, "next method called on incompatible receiver");
    const step = try iteratorStep(vm, o.as(object.Iterator));
    const result = try vm.newObject(2);
    result.properties.add(vm.heap, names.string("value"), step orelse Value.undefined_value) catch return vm.outOfMemory();
    result.properties.add(vm.heap, names.string("done"), Value.boolean(step == null)) catch return vm.outOfMemory();
    return Value.obj(result);
}
