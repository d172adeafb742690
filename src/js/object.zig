//! Heap objects and their storage: plain objects, arrays, closures, errors, Map and Set,
//! iterators. Every object begins with an `Object` header and lives in the run's Heap.
//!
//! Property order is the spec's: integer keys ascending, then string keys in insertion order.
//! The property list keeps that order physically (integer keys are inserted in place at the
//! front), so iteration is a walk. Lookup is a linear scan comparing key pointers first (keys
//! from the program's constant pool are shared, so a hit is usually a pointer compare); past
//! `table_threshold` properties an open-addressed index is built on the side.
//!
//! Arrays keep their elements dense, with `Value.hole` for holes; their named properties (rare)
//! go in the header's list. Map and Set keep entries in insertion order with tombstones, so an
//! iteration in progress sees exactly what the spec says it should.
//!
//! What an operation does beyond O(1) (properties moved to keep the order, an index rebuilt,
//! probes past a collision, a copy when storage grows) is charged to the run's meter
//! (meter.zig), so that no pattern of keys makes a run's time outgrow its budget.
const std = @import("std");
const builtin = @import("builtin");
const assert = std.debug.assert;

const Heap = @import("Heap.zig");
const value_mod = @import("value.zig");
const Value = value_mod.Value;
const Cell = value_mod.Cell;
const String = @import("string.zig").String;
const Program = @import("Program.zig");
const meter = @import("meter.zig");
const js_names = @import("names.zig");
const regexp = @import("regexp.zig");

pub const Kind = enum(u8) {
    plain,
    array,
    closure,
    error_object,
    map,
    set,
    iterator,
    /// `f.bind(this, ...args)`.
    bound_function,
    /// A getter and setter pair: the value of an accessor property, never in user hands.
    accessor,
    /// What calling a `function*` returns: its suspended frame.
    generator,
    /// A Promise (builtins/promises.zig).
    promise,
    /// A function that a Promise operation makes (resolve, reject, Promise.all's element
    /// functions...): callable, with its state here instead of in a closure.
    promise_function,
    /// A RegExp (builtins/regexps.zig).
    regexp,
    /// A Date (builtins/dates.zig).
    date,
    /// An ArrayBuffer (builtins/typed_arrays.zig).
    array_buffer,
    /// A view of integers or floats over an ArrayBuffer: Uint8Array and its kin.
    typed_array,
};

/// `Object.class` of an arguments object (builtins/arguments.zig): no host's class number
/// reaches it.
pub const arguments_class: u16 = std.math.maxInt(u16);

pub const Object = struct {
    kind: Kind,
    frozen: bool = false,
    /// A host's own class tag (0 for none): a handler's Response object, for instance.
    class: u16 = 0,
    /// `Object.preventExtensions` (or seal, or freeze) was applied: no property may be added.
    sealed_shape: bool = false,
    /// `Object.seal` was applied: every property, the kind's own fields too, is fixed.
    sealed_shape_all: bool = false,
    /// A function's own `name` or `length` that `delete` removed (a closure keeps both as
    /// fields, not properties; once deleted, it inherits Function.prototype's).
    deleted_intrinsics: DeletedIntrinsics = .{},
    properties: Properties = .{},
    /// The prototype: `undefined` for the builtin prototype of the object's kind (an array's
    /// is Array.prototype), `null` for none, an object, or a builtin prototype object (a
    /// class that extends Array has Array.prototype here).
    proto: Value = Value.undefined_value,

    pub fn as(o: *Object, comptime T: type) *T {
        assert(o.kind == T.kind);
        return @fieldParentPtr("object", o);
    }
};

pub const DeletedIntrinsics = packed struct(u8) {
    name: bool = false,
    length: bool = false,
    _: u6 = 0,
};

/// Whether a closure (or a function a Promise operation made) still has its own `name` or
/// `length` (they are configurable).
pub fn closureHasIntrinsic(o: *const Object, key: *String) bool {
    assert(o.kind == .closure or o.kind == .promise_function);
    if (js_names.is(key, "name")) return !o.deleted_intrinsics.name;
    if (js_names.is(key, "length")) return !o.deleted_intrinsics.length;
    return false;
}

pub const Property = struct {
    key: *String,
    value: Value,
    flags: PropertyFlags = .{},
};

/// A property's attributes, stored inverted so that the zero value is a plain data property
/// (writable, enumerable, configurable), which is what every literal and assignment makes.
pub const PropertyFlags = packed struct(u8) {
    not_enumerable: bool = false,
    read_only: bool = false,
    not_configurable: bool = false,
    /// The value is an `Accessor` object.
    accessor: bool = false,
    /// Keyed by a private name (`#x`): no key listing shows it.
    private: bool = false,
    _: u3 = 0,

    /// What class methods, builtin-like `constructor` and `prototype` links get.
    pub const hidden: PropertyFlags = .{ .not_enumerable = true };
};

/// Properties past this count get a hash index.
pub const table_threshold = 8;

pub const Properties = struct {
    items: [*]Property = undefined,
    len: u32 = 0,
    cap: u32 = 0,
    /// How many keys at the front are array indices (kept sorted).
    index_keys: u32 = 0,
    /// Open-addressed index: entry `i + 1` for item i, 0 for empty.
    table: [*]u32 = undefined,
    table_cap: u32 = 0,

    pub fn slice(p: *const Properties) []Property {
        return p.items[0..p.len];
    }

    pub fn find(p: *const Properties, key: *String) ?u32 {
        if (p.table_cap > 0) {
            const mask = p.table_cap - 1;
            const home = key.hash() & mask;
            var i = home;
            defer chargeProbes((i -% home) & mask);
            while (true) : (i = (i + 1) & mask) {
                const entry = p.table[i];
                if (entry == 0) return null;
                const stored = p.items[entry - 1].key;
                if (stored == key or (key.name_id < js_names.count and stored.name_id == key.name_id)) return entry - 1;
                if (!privateKey(stored, key) and stored.eql(key)) return entry - 1;
            }
        }
        const items = p.items[0..p.len];
        // Two strings with the same known name's id (names.zig) spell the same name: a
        // program's constant finds the key a native added as the static string, and the
        // reverse, without comparing text. Private and symbol keys have no such id.
        const id = key.name_id;
        if (id < js_names.count) {
            for (items, 0..) |item, i| {
                if (item.key == key or item.key.name_id == id) return @intCast(i);
            }
        } else for (items, 0..) |item, i| {
            if (item.key == key) return @intCast(i);
        }
        if (key.flags.private or key.flags.symbol) return null;
        for (items, 0..) |item, i| {
            if (item.key.len == key.len and !item.key.flags.private and item.key.eql(key)) return @intCast(i);
        }
        return null;
    }

    pub fn get(p: *const Properties, key: *String) ?Value {
        const i = p.find(key) orelse return null;
        return p.items[i].value;
    }

    /// Sets a property, adding it in spec order if new.
    pub fn put(p: *Properties, heap: *Heap, key: *String, v: Value) Heap.Error!void {
        if (p.find(key)) |i| {
            p.items[i].value = v;
            return;
        }
        return p.add(heap, key, v);
    }

    /// Sets a property with its attributes, replacing whatever was there.
    pub fn define(p: *Properties, heap: *Heap, key: *String, v: Value, flags: PropertyFlags) Heap.Error!void {
        if (p.find(key)) |i| {
            p.items[i].value = v;
            p.items[i].flags = flags;
            return;
        }
        try p.add(heap, key, v);
        const i = p.find(key).?;
        p.items[i].flags = flags;
    }

    /// Adds a property the caller knows is absent and no array index (a native building an
    /// object it just made, each key once), without looking for it first.
    pub fn addNew(p: *Properties, heap: *Heap, key: *String, v: Value, flags: PropertyFlags) Heap.Error!void {
        // A whole lookup: checked in Debug builds (the tests) only, not in the ReleaseSafe
        // binary this would slow.
        if (builtin.mode == .debug) assert(p.find(key) == null);
        assert(key.arrayIndex() == null);
        try p.add(heap, key, v);
        p.items[p.len - 1].flags = flags;
    }

    /// Adds a property known to be absent.
    pub fn add(p: *Properties, heap: *Heap, key: *String, v: Value) Heap.Error!void {
        if (p.len == p.cap) try p.grow(heap, p.len + 1);
        if (key.arrayIndex()) |index| {
            // Binary search among the integer keys for the insertion point.
            var lo: u32 = 0;
            var hi: u32 = p.index_keys;
            while (lo < hi) {
                const mid = (lo + hi) / 2;
                if (p.items[mid].key.arrayIndex().? < index) lo = mid + 1 else hi = mid;
            }
            const appended = lo == p.len; // Ascending integer keys and nothing after them.
            meter.chargeElements(p.len - lo);
            std.mem.copyBackwards(Property, p.items[lo + 1 .. p.len + 1], p.items[lo..p.len]);
            p.items[lo] = .{ .key = key, .value = v };
            p.len += 1;
            p.index_keys += 1;
            if (p.table_cap > 0) {
                // Items after `lo` moved: the index is rebuilt, unless nothing moved.
                if (appended and p.len * 2 <= p.table_cap) p.insertTable(lo) else try p.rebuildTable(heap);
            } else if (p.len > table_threshold) {
                try p.rebuildTable(heap);
            }
            return;
        }
        p.items[p.len] = .{ .key = key, .value = v };
        p.len += 1;
        if (p.table_cap > 0) {
            if (p.len * 2 > p.table_cap) try p.rebuildTable(heap) else p.insertTable(p.len - 1);
        } else if (p.len > table_threshold) {
            try p.rebuildTable(heap);
        }
    }

    pub fn remove(p: *Properties, heap: *Heap, key: *String) Heap.Error!bool {
        const i = p.find(key) orelse return false;
        meter.chargeElements(p.len - i);
        if (i < p.index_keys) p.index_keys -= 1;
        std.mem.copyForwards(Property, p.items[i .. p.len - 1], p.items[i + 1 .. p.len]);
        p.len -= 1;
        if (p.table_cap > 0) try p.rebuildTable(heap);
        return true;
    }

    /// Room for at least `needed` properties.
    pub fn reserve(p: *Properties, heap: *Heap, needed: u32) Heap.Error!void {
        if (needed > p.cap) try p.grow(heap, needed);
    }

    /// Room for exactly `needed` properties, for objects whose size is known (a function's
    /// prototype and its one link back).
    pub fn reserveExact(p: *Properties, heap: *Heap, needed: u32) Heap.Error!void {
        if (needed <= p.cap) return;
        const items = try heap.alloc(Property, needed);
        @memcpy(items[0..p.len], p.items[0..p.len]);
        p.items = items.ptr;
        p.cap = needed;
    }

    fn grow(p: *Properties, heap: *Heap, needed: u32) Heap.Error!void {
        meter.chargeElements(p.len);
        const cap = @max(needed, @max(4, p.cap *| 2));
        const items = try heap.alloc(Property, cap);
        @memcpy(items[0..p.len], p.items[0..p.len]);
        p.items = items.ptr;
        p.cap = @intCast(cap);
    }

    fn rebuildTable(p: *Properties, heap: *Heap) Heap.Error!void {
        var cap: u32 = 16;
        while (cap < p.len * 2) cap *= 2;
        // Clearing the index and inserting every key again (their hashes are kept).
        meter.charge(meter.bytesCost(@as(usize, cap) * 4) + meter.elementsCost(p.len));
        if (cap != p.table_cap) {
            const table = try heap.alloc(u32, cap);
            p.table = table.ptr;
            p.table_cap = cap;
        }
        @memset(p.table[0..p.table_cap], 0);
        for (0..p.len) |i| p.insertTable(@intCast(i));
    }

    fn insertTable(p: *Properties, i: u32) void {
        const mask = p.table_cap - 1;
        const home = p.items[i].key.hash() & mask;
        var slot = home;
        while (p.table[slot] != 0) slot = (slot + 1) & mask;
        chargeProbes((slot -% home) & mask);
        p.table[slot] = i + 1;
    }
};

/// Whether either key is a private name, which matches only itself.
inline fn privateKey(a: *const String, b: *const String) bool {
    return a.flags.private or b.flags.private or a.flags.symbol or b.flags.symbol;
}

/// What probing past the first slots of an index cost (`past`: slots after the home one; many
/// of them: keys that collide).
inline fn chargeProbes(past: u32) void {
    if (past > 2) meter.charge(past);
}

pub const Array = struct {
    object: Object,
    items: [*]Value,
    len: u32,
    cap: u32,

    pub const kind: Kind = .array;

    pub fn slice(a: *const Array) []Value {
        return a.items[0..a.len];
    }

    pub fn reserve(a: *Array, heap: *Heap, needed: usize) Heap.Error!void {
        if (needed <= a.cap) return;
        if (needed > length_max) return error.OutOfMemory;
        const cap: u32 = @intCast(@min(length_max, @max(needed, @max(8, @as(usize, a.cap) * 2))));
        meter.chargeBytes(@as(usize, a.len) * @sizeOf(Value));
        const items = try heap.alloc(Value, cap);
        @memcpy(items[0..a.len], a.items[0..a.len]);
        a.items = items.ptr;
        a.cap = cap;
    }

    pub fn push(a: *Array, heap: *Heap, v: Value) Heap.Error!void {
        if (a.len == a.cap) try a.reserve(heap, @as(usize, a.len) + 1);
        a.items[a.len] = v;
        a.len += 1;
    }

    /// Sets the length, filling new room with holes.
    pub fn setLength(a: *Array, heap: *Heap, len: usize) Heap.Error!void {
        if (len > a.len) {
            try a.reserve(heap, len);
            meter.chargeBytes((len - a.len) * @sizeOf(Value));
            @memset(a.items[a.len..len], Value.hole);
        }
        a.len = @intCast(len);
    }
};

/// The longest array this engine makes; beyond, a RangeError (V8 allows 2^32 - 1, which no
/// per-request arena could hold anyway).
pub const length_max: u32 = 1 << 27;

pub const Closure = struct {
    object: Object,
    function: *const Program.Function,
    captures: [*]*Cell,
    /// The name given at run time, over the function's own: an anonymous function defined
    /// under a computed key takes the key (`{ [k]: () => 1 }.dyn.name` is "dyn").
    name: ?*String = null,
    /// A method's home object, where `super.x` starts looking (the prototype of the object
    /// or class that defined it).
    home: ?*Object = null,
    /// A class constructor's field initialiser: a method run on each new instance.
    fields: ?*Closure = null,

    pub const kind: Kind = .closure;
};

/// A function made by `bind`: calling it calls the target with the bound receiver and the
/// bound arguments first.
pub const BoundFunction = struct {
    object: Object,
    target: Value,
    this: Value,
    args: []const Value,

    pub const kind: Kind = .bound_function;
};

/// A RegExp: its compiled program and the matcher's memory, made with it; `lastIndex` is an
/// ordinary own property.
pub const RegExpObject = struct {
    object: Object,
    /// The pattern as given.
    pattern: *String,
    /// The pattern as `source` shows it (escaped).
    source: *String,
    program: *const regexp.Program,
    scratch: *regexp.Scratch,

    pub const kind: Kind = .regexp;
};

/// A Date: its time value, milliseconds since the epoch (NaN for an invalid date).
pub const DateObject = struct {
    object: Object,
    time: f64,

    pub const kind: Kind = .date;
};

/// The getter and setter of an accessor property (undefined where absent).
/// An ArrayBuffer's bytes live in the run's arena, 8-byte aligned so that every element type
/// can be read in place; `len` is the byteLength, at most `byte_length_max`.
pub const ArrayBuffer = struct {
    object: Object,
    bytes: [*]align(8) u8,
    len: u32,

    pub const kind: Kind = .array_buffer;

    pub fn slice(b: *const ArrayBuffer) []u8 {
        return b.bytes[0..b.len];
    }
};

/// The largest ArrayBuffer: 1 GiB, more than a run's default heap, so the heap's own limit
/// is what a script meets first (a RangeError past it, as node's past its own).
pub const byte_length_max: u32 = 1 << 30;

/// The element types of the typed arrays, in the spec's table order.
pub const ElementType = enum(u8) {
    int8,
    uint8,
    uint8_clamped,
    int16,
    uint16,
    int32,
    uint32,
    float32,
    float64,

    pub fn size(t: ElementType) u32 {
        return switch (t) {
            .int8, .uint8, .uint8_clamped => 1,
            .int16, .uint16 => 2,
            .int32, .uint32, .float32 => 4,
            .float64 => 8,
        };
    }

    /// The constructor's name: `Uint8Array`.
    pub fn name(t: ElementType) []const u8 {
        return switch (t) {
            .int8 => "Int8Array",
            .uint8 => "Uint8Array",
            .uint8_clamped => "Uint8ClampedArray",
            .int16 => "Int16Array",
            .uint16 => "Uint16Array",
            .int32 => "Int32Array",
            .uint32 => "Uint32Array",
            .float32 => "Float32Array",
            .float64 => "Float64Array",
        };
    }
};

/// A typed array: `len` elements of `element` from `byte_offset` in `buffer`. Buffers never
/// shrink (no resizable or transferable buffers), so a view stays in bounds for its life.
pub const TypedArray = struct {
    object: Object,
    element: ElementType,
    buffer: *ArrayBuffer,
    byte_offset: u32,
    len: u32,

    pub const kind: Kind = .typed_array;

    pub fn bytes(t: *const TypedArray) []u8 {
        const start = t.byte_offset;
        const end = start + t.len * t.element.size();
        assert(end <= t.buffer.len);
        return t.buffer.bytes[start..end];
    }
};

pub const Accessor = struct {
    object: Object,
    getter: Value,
    setter: Value,

    pub const kind: Kind = .accessor;
};

pub const ErrorKind = enum(u8) {
    @"error",
    type_error,
    range_error,
    syntax_error,
    reference_error,
    eval_error,
    uri_error,
    /// Promise.any's rejection, with its `errors`.
    aggregate_error,

    pub fn name(k: ErrorKind) []const u8 {
        return switch (k) {
            .@"error" => "Error",
            .type_error => "TypeError",
            .range_error => "RangeError",
            .syntax_error => "SyntaxError",
            .reference_error => "ReferenceError",
            .eval_error => "EvalError",
            .uri_error => "URIError",
            .aggregate_error => "AggregateError",
        };
    }
};

pub const ErrorObject = struct {
    object: Object,
    error_kind: ErrorKind,
    /// The `message` property (not enumerable, as in JavaScript), or null when absent.
    message: ?*String,
    /// Where it was made: "file:line:column", for the stack text.
    position: ?*String,
    /// The `cause` the constructor's options gave (an own property that is not enumerable,
    /// as in JavaScript), or `Value.hole` when there was none.
    cause: Value = Value.hole,

    pub const kind: Kind = .error_object;
};

pub const MapEntry = struct {
    /// `Value.hole` marks a deleted entry.
    key: Value,
    value: Value,
};

/// Map and Set (a Set ignores the values).
pub const MapObject = struct {
    object: Object,
    entries: [*]MapEntry = undefined,
    /// Entries used, tombstones included.
    len: u32 = 0,
    cap: u32 = 0,
    live: u32 = 0,
    table: [*]u32 = undefined,
    table_cap: u32 = 0,

    pub fn slice(m: *const MapObject) []MapEntry {
        return m.entries[0..m.len];
    }

    pub fn find(m: *const MapObject, key: Value) ?u32 {
        if (m.table_cap == 0) {
            for (m.entries[0..m.len], 0..) |e, i| {
                if (sameValueZero(e.key, key)) return @intCast(i);
            }
            return null;
        }
        const mask = m.table_cap - 1;
        const home = hashValue(key) & mask;
        var i = home;
        defer chargeProbes((i -% home) & mask);
        while (true) : (i = (i + 1) & mask) {
            const entry = m.table[i];
            if (entry == 0) return null;
            if (sameValueZero(m.entries[entry - 1].key, key)) return entry - 1;
        }
    }

    pub fn get(m: *const MapObject, key: Value) ?Value {
        const i = m.find(key) orelse return null;
        return m.entries[i].value;
    }

    pub fn put(m: *MapObject, heap: *Heap, key_in: Value, v: Value) Heap.Error!void {
        // -0 is stored as +0, as the spec asks.
        const key = if (key_in.isNumber() and key_in.asNumber() == 0) Value.number(0) else key_in;
        if (m.find(key)) |i| {
            m.entries[i].value = v;
            return;
        }
        return m.putNew(heap, key, v);
    }

    /// Adds an entry the caller knows is absent (and not -0), without looking for it first.
    pub fn putNew(m: *MapObject, heap: *Heap, key: Value, v: Value) Heap.Error!void {
        if (builtin.mode == .debug) assert(m.find(key) == null); // As in Properties.addNew.
        assert(!(key.isNumber() and key.asNumber() == 0 and std.math.signbit(key.asNumber())));
        if (m.len == m.cap) try m.grow(heap);
        m.entries[m.len] = .{ .key = key, .value = v };
        m.len += 1;
        m.live += 1;
        if (m.table_cap > 0) {
            if (m.len * 2 > m.table_cap) try m.rebuildTable(heap) else m.insertTable(m.len - 1);
        } else if (m.len > table_threshold) {
            try m.rebuildTable(heap);
        }
    }

    pub fn remove(m: *MapObject, key: Value) bool {
        const i = m.find(key) orelse return false;
        m.entries[i].key = Value.hole;
        m.entries[i].value = Value.undefined_value;
        m.live -= 1;
        // The index keeps pointing at the tombstone, whose hole key matches nothing.
        return true;
    }

    pub fn clear(m: *MapObject) void {
        meter.charge(meter.elementsCost(m.len));
        for (m.entries[0..m.len]) |*e| e.* = .{ .key = Value.hole, .value = Value.undefined_value };
        m.live = 0;
    }

    fn grow(m: *MapObject, heap: *Heap) Heap.Error!void {
        const cap = @max(8, m.cap *| 2);
        if (cap > length_max) return error.OutOfMemory;
        meter.chargeBytes(@as(usize, m.len) * @sizeOf(MapEntry));
        const entries = try heap.alloc(MapEntry, cap);
        @memcpy(entries[0..m.len], m.entries[0..m.len]);
        m.entries = entries.ptr;
        m.cap = cap;
    }

    fn rebuildTable(m: *MapObject, heap: *Heap) Heap.Error!void {
        var cap: u32 = 16;
        while (cap < m.len * 2) cap *= 2;
        meter.charge(meter.bytesCost(@as(usize, cap) * 4) + meter.elementsCost(m.len));
        if (cap != m.table_cap) {
            const table = try heap.alloc(u32, cap);
            m.table = table.ptr;
            m.table_cap = cap;
        }
        @memset(m.table[0..m.table_cap], 0);
        for (0..m.len) |i| {
            if (!m.entries[i].key.eqlBits(Value.hole)) m.insertTable(@intCast(i));
        }
    }

    fn insertTable(m: *MapObject, i: u32) void {
        const mask = m.table_cap - 1;
        const home = hashValue(m.entries[i].key) & mask;
        var slot = home;
        while (m.table[slot] != 0) slot = (slot + 1) & mask;
        chargeProbes((slot -% home) & mask);
        m.table[slot] = i + 1;
    }
};

pub const IteratorKind = enum(u8) {
    array_keys,
    array_values,
    array_entries,
    map_keys,
    map_values,
    map_entries,
    set_values,
    set_entries,
    string_values,
    /// for-in: the keys taken at the start, each visited only if still there.
    for_in_keys,
    /// An iterable of the script's: `source` is the iterator its `[Symbol.iterator]()` gave,
    /// stepped by calling `next_method` (never in user hands).
    protocol,
};

pub const Iterator = struct {
    object: Object,
    source: Value,
    iterator_kind: IteratorKind,
    index: u32 = 0,
    done: bool = false,
    /// for-in's snapshot of the keys.
    keys: ?*Array = null,
    /// The `next` of a `protocol` iterator.
    next_method: Value = Value.undefined_value,

    pub const kind: Kind = .iterator;
};

/// A generator: its function's frame while it is suspended (locals and operands, the pc to
/// resume at, its open exception handlers relative to the frame), in storage sized once for
/// the function's largest frame, so that suspending allocates nothing.
pub const Generator = struct {
    object: Object,
    state: State = .suspended_start,
    closure: *Closure,
    this: Value,
    pc: u32 = 0,
    values: [*]Value,
    values_len: u32 = 0,
    handlers: [*]SavedHandler,
    handlers_len: u32 = 0,
    /// An async function's promise (null for a generator).
    promise: ?*Promise = null,
    /// The value return(v) finishes the generator with once its finally blocks have run.
    return_value: Value = Value.undefined_value,
    /// An async generator's request queue and state (null for a generator or an async
    /// function), in the run's heap.
    async_generator: ?*AsyncGeneratorState = null,
    /// The frame last suspended at an async generator's `yield` (yield_async), not at an
    /// `await`.
    yielded: bool = false,

    pub const kind: Kind = .generator;

    pub const State = enum(u8) { suspended_start, suspended_yield, running, done };

    pub const SavedHandler = struct {
        target: u32,
        /// Relative to the frame's base.
        sp: u32,
    };
};

/// ES §27.6: an async generator's state and its queue of next/return/throw requests, each
/// with the promise that request returned.
pub const AsyncGeneratorState = struct {
    state: State = .suspended_start,
    head: ?*Request = null,
    tail: ?*Request = null,

    pub const State = enum(u8) { suspended_start, suspended_yield, executing, awaiting_return, completed };

    pub const Mode = enum(u8) { next, @"return", throw };

    pub const Request = struct {
        next: ?*Request = null,
        mode: Mode,
        value: Value,
        promise: *Promise,
    };
};

pub const Promise = struct {
    object: Object,
    state: State = .pending,
    result: Value = Value.undefined_value,
    /// Reactions waiting while pending, in the order `then` added them.
    reactions: ?*Reaction = null,
    reactions_tail: ?*Reaction = null,
    /// A handler was ever attached (HostPromiseRejectionTracker).
    handled: bool = false,
    /// The run's list of promises rejected while unhandled.
    next_rejected: ?*Promise = null,

    pub const kind: Kind = .promise;

    pub const State = enum(u8) { pending, fulfilled, rejected };
};

/// A PromiseReaction: what to run when a promise settles, and the promise `then` made.
pub const Reaction = struct {
    next: ?*Reaction = null,
    /// The promise that `then` returned (null for an `await`).
    derived: ?*Promise,
    on_fulfilled: Value,
    on_rejected: Value,
    /// An async function suspended in `await`: resumed instead of calling a handler.
    generator: ?*Generator = null,
    /// The capability of a `then` whose species constructor is not %Promise%: its resolve or
    /// reject is called with the handler's result (derived is null then).
    capability: ?*Capability = null,
};

/// A PromiseCapability record (ES §27.2.1.1): a promise some constructor made and the
/// functions that settle it, which may be any callables that constructor handed out.
pub const Capability = struct {
    promise: Value = Value.undefined_value,
    resolve: Value = Value.undefined_value,
    reject: Value = Value.undefined_value,
};

/// A microtask: a reaction to run with a settled value, a thenable to resolve a promise
/// with, or a queueMicrotask callback.
pub const Job = struct {
    next: ?*Job = null,
    what: union(enum) {
        reaction: struct { reaction: *Reaction, argument: Value, rejected: bool },
        thenable: struct { promise: *Promise, thenable: Value, then: Value },
        callback: Value,
        /// An async function's first step, or a generator resumed by an await.
        resume_async: struct { generator: *Generator, argument: Value, rejected: bool },
    },
};

pub const PromiseFunction = struct {
    object: Object,
    action: Action,
    promise: ?*Promise = null,
    shared: ?*PromiseShared = null,
    index: u32 = 0,
    /// finally's callback, or the value a thunk returns or throws.
    value: Value = Value.undefined_value,
    /// For resolve and reject: both see the same flag.
    already: ?*bool = null,
    /// An element function of Promise.all and kin runs once.
    called: bool = false,
    /// The async generator the async_generator_* actions act on.
    generator: ?*Generator = null,
    /// The record a GetCapabilitiesExecutor function fills in.
    capability: ?*Capability = null,
    /// finally's species constructor, for PromiseResolve(C, result).
    constructor: Value = Value.undefined_value,

    pub const kind: Kind = .promise_function;

    /// The `length` each action's function has (ES §27.2: 2 for a GetCapabilitiesExecutor
    /// function, 1 for the others).
    pub fn length(f: *const PromiseFunction) u32 {
        return if (f.action == .capability_executor) 2 else 1;
    }

    pub const Action = enum(u8) {
        resolve,
        reject,
        finally_fulfilled,
        finally_rejected,
        value_thunk,
        thrower,
        /// %AsyncFromSyncIteratorPrototype%.next over a sync iterator (`value`: its next).
        async_from_sync_next,
        /// The sync result's value, awaited, into { value, done } (`called`: done).
        async_from_sync_unwrap,
        /// An async generator's AwaitReturn, settled (`generator`).
        async_generator_return_fulfilled,
        async_generator_return_rejected,
        /// A return(v) request to an async generator suspended at a yield: v awaited, then
        /// the generator resumed with return (or the rejection thrown in).
        async_generator_resume_return,
        async_generator_resume_throw,
        all_element,
        all_settled_fulfilled,
        all_settled_rejected,
        any_rejected,
        /// GetCapabilitiesExecutor (`capability`): records the resolve and reject it is
        /// given, once.
        capability_executor,
    };
};

/// What Promise.all, allSettled and any share among their element functions.
pub const PromiseShared = struct {
    capability: *Capability,
    values: *Array,
    remaining: u32,
};

/// SameValueZero: like ===, except that NaN equals NaN.
pub fn sameValueZero(a: Value, b: Value) bool {
    if (a.isNumber() and b.isNumber()) {
        const x = a.asNumber();
        const y = b.asNumber();
        return x == y or (std.math.isNan(x) and std.math.isNan(y));
    }
    if (a.isString() and b.isString()) return a.asString().eql(b.asString());
    return a.bits == b.bits;
}

pub fn hashValue(v: Value) u32 {
    if (v.isNumber()) {
        const x = v.asNumber();
        const bits: u64 = if (x == 0) 0 else if (std.math.isNan(x)) Value.nan.bits else v.bits;
        return @truncate(bits ^ (bits >> 29) ^ (bits >> 47));
    }
    if (v.isString()) return v.asString().hash();
    const bits = v.bits;
    return @truncate((bits >> 4) ^ (bits >> 23) ^ (bits >> 37));
}

pub fn newPlain(heap: *Heap, capacity: u32) Heap.Error!*Object {
    const o = try heap.create(Object);
    o.* = .{ .kind = .plain };
    if (capacity > 0) try o.properties.reserve(heap, capacity);
    return o;
}

pub fn newArray(heap: *Heap, capacity: usize) Heap.Error!*Array {
    if (capacity > length_max) return error.OutOfMemory;
    const a = try heap.create(Array);
    a.* = .{ .object = .{ .kind = .array }, .items = undefined, .len = 0, .cap = 0 };
    if (capacity > 0) {
        const items = try heap.alloc(Value, capacity);
        a.items = items.ptr;
        a.cap = @intCast(capacity);
    }
    return a;
}

pub fn newMap(heap: *Heap, kind: Kind) Heap.Error!*MapObject {
    assert(kind == .map or kind == .set);
    const m = try heap.create(MapObject);
    m.* = .{ .object = .{ .kind = kind } };
    return m;
}

pub fn mapOf(o: *Object) *MapObject {
    assert(o.kind == .map or o.kind == .set);
    return @fieldParentPtr("object", o);
}

test "object: integer keys come first, in order; strings keep insertion order" {
    const string = @import("string.zig");
    var region: [256 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    const o = try newPlain(&heap, 0);
    const keys = [_][]const u8{ "b", "10", "a", "2", "0", "c" };
    for (keys, 0..) |k, i| try o.properties.put(&heap, try string.fromLatin1(&heap, k), Value.number(@floatFromInt(i)));
    const expected = [_][]const u8{ "0", "2", "10", "b", "a", "c" };
    for (o.properties.slice(), expected) |p, e| try std.testing.expect(p.key.eqlLatin1(e));
    // Lookups by an equal string that is a different object.
    try std.testing.expectEqual(@as(f64, 2), o.properties.get(try string.fromLatin1(&heap, "a")).?.asNumber());
}

test "object: the hash index agrees with a model under random operations" {
    const string = @import("string.zig");
    var region: [1024 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    var prng = std.Random.DefaultPrng.init(42);
    const random = prng.random();
    const o = try newPlain(&heap, 0);
    var model: [64]?f64 = @splat(null);
    var names: [64]*String = undefined;
    for (&names, 0..) |*n, i| {
        var buf: [8]u8 = undefined;
        const text = if (i % 3 == 0) std.fmt.bufPrint(&buf, "{d}", .{i}) catch unreachable else std.fmt.bufPrint(&buf, "k{d}", .{i}) catch unreachable;
        n.* = try string.fromLatin1(&heap, text);
    }
    for (0..2000) |step| {
        const i = random.uintLessThan(usize, names.len);
        if (random.uintLessThan(u8, 4) == 0) {
            _ = try o.properties.remove(&heap, names[i]);
            model[i] = null;
        } else {
            const x: f64 = @floatFromInt(step);
            try o.properties.put(&heap, names[i], Value.number(x));
            model[i] = x;
        }
        for (names, model) |n, m| {
            const got = o.properties.get(n);
            if (m) |x| try std.testing.expectEqual(x, got.?.asNumber()) else try std.testing.expect(got == null);
        }
    }
}

test "object: Map keeps insertion order and SameValueZero" {
    var region: [256 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    const m = try newMap(&heap, .map);
    for (0..20) |i| try m.put(&heap, Value.number(@floatFromInt(i)), Value.number(@floatFromInt(i * 2)));
    try m.put(&heap, Value.nan, Value.true_value);
    try std.testing.expect(m.get(Value.number(std.math.nan(f64))) != null);
    try m.put(&heap, Value.number(-0.0), Value.false_value);
    try std.testing.expect(m.get(Value.number(0)).?.eqlBits(Value.false_value));
    try std.testing.expect(m.remove(Value.number(3)));
    try std.testing.expect(m.get(Value.number(3)) == null);
    try std.testing.expectEqual(@as(u32, 20), m.live);
}
