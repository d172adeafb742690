//! ArrayBuffer and the typed arrays (Uint8Array and its kin): the byte views that
//! TextEncoder, crypto.getRandomValues and crypto.subtle.digest take and give.
//!
//! Decision: a buffer's bytes are one block in the run's arena, like an array's elements, so
//! the heap's limit bounds them as it bounds arrays, and a view is a small header
//! (element type, offset, length) over its buffer. Buffers are never detached or resized
//! (no `transfer`, no resizable buffers), so a view checked at construction stays in bounds
//! for its life and element access needs no re-check beyond the index.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const ArrayBuffer = object.ArrayBuffer;
const TypedArray = object.TypedArray;
const ElementType = object.ElementType;
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

pub const element_types = std.enums.values(ElementType);

// ---------------------------------------------------------------------------------------
// Storage.

/// A zeroed buffer of `len` bytes in the run's arena.
pub fn newBuffer(vm: *Vm, len: usize) Error!*ArrayBuffer {
    if (len > object.byte_length_max) return vm.throwMessage(.range_error, "Array buffer allocation failed");
    try vm.charge(meter.bytesCost(len));
    const words = vm.heap.alloc(u64, (len + 7) / 8) catch return vm.outOfMemory();
    @memset(words, 0);
    const b = vm.heap.create(ArrayBuffer) catch return vm.outOfMemory();
    b.* = .{ .object = .{ .kind = .array_buffer }, .bytes = @ptrCast(words.ptr), .len = @intCast(len) };
    return b;
}

pub fn newView(vm: *Vm, element: ElementType, buffer: *ArrayBuffer, byte_offset: u32, len: u32) Error!*TypedArray {
    assert(@as(u64, byte_offset) + @as(u64, len) * element.size() <= buffer.len);
    const t = vm.heap.create(TypedArray) catch return vm.outOfMemory();
    t.* = .{ .object = .{ .kind = .typed_array }, .element = element, .buffer = buffer, .byte_offset = byte_offset, .len = len };
    return t;
}

/// A new typed array of `len` zeroed elements over a buffer of its own.
pub fn newTypedArray(vm: *Vm, element: ElementType, len: usize) Error!*TypedArray {
    const bytes = std.math.mul(usize, len, element.size()) catch return throwLength(vm, @floatFromInt(len));
    if (bytes > object.byte_length_max) return throwLength(vm, @floatFromInt(len));
    return newView(vm, element, try newBuffer(vm, bytes), 0, @intCast(len));
}

/// Element `i` (in bounds) as a number.
pub fn load(t: *const TypedArray, i: u32) f64 {
    assert(i < t.len);
    const p = t.buffer.bytes + t.byte_offset + @as(usize, i) * t.element.size();
    return switch (t.element) {
        .int8 => @floatFromInt(@as(i8, @bitCast(p[0]))),
        .uint8, .uint8_clamped => @floatFromInt(p[0]),
        .int16 => @floatFromInt(std.mem.readInt(i16, p[0..2], .little)),
        .uint16 => @floatFromInt(std.mem.readInt(u16, p[0..2], .little)),
        .int32 => @floatFromInt(std.mem.readInt(i32, p[0..4], .little)),
        .uint32 => @floatFromInt(std.mem.readInt(u32, p[0..4], .little)),
        .float32 => @floatCast(@as(f32, @bitCast(std.mem.readInt(u32, p[0..4], .little)))),
        .float64 => @bitCast(std.mem.readInt(u64, p[0..8], .little)),
    };
}

/// Stores `x` at element `i` (in bounds), converted as the spec's ToInt8...ToUint8Clamp.
pub fn store(t: *TypedArray, i: u32, x: f64) void {
    assert(i < t.len);
    const p = t.buffer.bytes + t.byte_offset + @as(usize, i) * t.element.size();
    switch (t.element) {
        .int8, .uint8 => p[0] = @truncate(modular(x)),
        .uint8_clamped => p[0] = clamp(x),
        .int16, .uint16 => std.mem.writeInt(u16, p[0..2], @truncate(modular(x)), .little),
        .int32, .uint32 => std.mem.writeInt(u32, p[0..4], @truncate(modular(x)), .little),
        .float32 => std.mem.writeInt(u32, p[0..4], @bitCast(@as(f32, @floatCast(x))), .little),
        .float64 => std.mem.writeInt(u64, p[0..8], @bitCast(x), .little),
    }
}

/// x truncated and taken modulo 2^32 (ToUint32); the narrower kinds keep its low bits.
fn modular(x: f64) u32 {
    if (!std.math.isFinite(x)) return 0;
    const m = @mod(@trunc(x), 4294967296.0);
    return @intFromFloat(m);
}

/// ToUint8Clamp: NaN is 0, then clamped to [0, 255], rounding half to even.
fn clamp(x: f64) u8 {
    if (!(x > 0)) return 0;
    if (x >= 255) return 255;
    const f = @floor(x);
    const half = f + 0.5;
    const r = if (x < half) f else if (x > half) f + 1 else if (@mod(f, 2) == 0) f else f + 1;
    return @intFromFloat(r);
}

// ---------------------------------------------------------------------------------------
// Property access: the engine's get and set of an index or a field land here.

/// An element read by index: undefined past the end, as the spec's integer-indexed get.
pub fn get(t: *const TypedArray, i: u32) Value {
    if (i >= t.len) return Value.undefined_value;
    return Value.number(load(t, i));
}

/// An element write by index: converted first (valueOf may run), then dropped past the end.
pub fn set(vm: *Vm, t: *TypedArray, i: u32, v: Value) Error!void {
    const x = try ops.toNumber(vm, v);
    if (i >= t.len) return;
    try ops.checkModuleWrite(vm, t.buffer);
    store(t, i, x);
}

/// Whether `key` is one of a view's own fields (its indexes) or a getter of its prototype
/// that the engine answers for it.
pub fn isField(key: *String) bool {
    return key.arrayIndex() != null or names.is(key, "length") or names.is(key, "byteLength") or
        names.is(key, "byteOffset") or names.is(key, "buffer") or names.is(key, "BYTES_PER_ELEMENT");
}

pub fn field(t: *TypedArray, key: *String) ?Value {
    if (key.arrayIndex()) |i| return get(t, i);
    if (names.is(key, "length")) return Value.number(@floatFromInt(t.len));
    if (names.is(key, "byteLength")) return Value.number(@floatFromInt(t.len * t.element.size()));
    if (names.is(key, "byteOffset")) return Value.number(@floatFromInt(t.byte_offset));
    if (names.is(key, "buffer")) return Value.obj(&t.buffer.object);
    if (names.is(key, "BYTES_PER_ELEMENT")) return Value.number(@floatFromInt(t.element.size()));
    return null;
}

pub fn bufferField(b: *ArrayBuffer, key: *String) ?Value {
    if (names.is(key, "byteLength")) return Value.number(@floatFromInt(b.len));
    return null;
}

// ---------------------------------------------------------------------------------------
// Constructors.

fn throwLength(vm: *Vm, x: f64) Error {
    return vm.throwFmt(.range_error, "Invalid typed array length: {f}", .{ops.ShortFormat{ .vm = vm, .v = Value.number(x) }});
}

/// ToIndex for a length or an offset: an integer in [0, 2^53), else null.
fn toIndex(vm: *Vm, v: Value) Error!?f64 {
    if (v.isUndefined()) return 0;
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, v));
    if (x < 0 or x > 9007199254740991.0) return null;
    return x;
}

pub fn requireNew(comptime element: ElementType) builtins.NativeFn {
    return struct {
        fn f(vm: *Vm, this: Value, args: []const Value) Error!Value {
            _ = this;
            _ = args;
            return vm.throwMessage(.type_error, "Constructor " ++ comptime element.name() ++ " requires 'new'");
        }
    }.f;
}

pub fn construct(comptime element: ElementType) builtins.NativeFn {
    return struct {
        fn f(vm: *Vm, this: Value, args: []const Value) Error!Value {
            _ = this;
            const t = try constructFrom(vm, element, args);
            return Value.obj(&t.object);
        }
    }.f;
}

fn constructFrom(vm: *Vm, element: ElementType, args: []const Value) Error!*TypedArray {
    const first = arg(args, 0);
    if (!first.is(.object)) {
        const x = (try toIndex(vm, first)) orelse return throwLength(vm, try ops.toNumber(vm, first));
        if (x > @as(f64, @floatFromInt(object.byte_length_max / element.size()))) return throwLength(vm, x);
        return newTypedArray(vm, element, @intFromFloat(x));
    }
    const o = first.asObject();
    switch (o.kind) {
        .array_buffer => return viewOf(vm, element, o.as(ArrayBuffer), arg(args, 1), arg(args, 2)),
        .typed_array => {
            const src = o.as(TypedArray);
            const t = try newTypedArray(vm, element, src.len);
            try vm.charge(meter.elementsCost(src.len));
            for (0..src.len) |i| store(t, @intCast(i), load(src, @intCast(i)));
            return t;
        },
        else => return fromValues(vm, element, try collect(vm, first, Value.undefined_value)),
    }
}

/// `new Uint16Array(buffer, byteOffset?, length?)`, with V8's RangeErrors.
fn viewOf(vm: *Vm, element: ElementType, b: *ArrayBuffer, offset_v: Value, length_v: Value) Error!*TypedArray {
    const size = element.size();
    const offset = (try toIndex(vm, offset_v)) orelse return vm.throwFmt(.range_error, "Start offset {f} is outside the bounds of the buffer", .{ops.ShortFormat{ .vm = vm, .v = Value.number(try ops.toNumber(vm, offset_v)) }});
    if (@mod(offset, @as(f64, @floatFromInt(size))) != 0) {
        return vm.throwFmt(.range_error, "start offset of {s} should be a multiple of {d}", .{ element.name(), size });
    }
    const buffer_len: f64 = @floatFromInt(b.len);
    var len: f64 = undefined;
    if (length_v.isUndefined()) {
        if (b.len % size != 0) return vm.throwFmt(.range_error, "byte length of {s} should be a multiple of {d}", .{ element.name(), size });
        if (offset > buffer_len) return vm.throwFmt(.range_error, "Start offset {d} is outside the bounds of the buffer", .{offset});
        len = (buffer_len - offset) / @as(f64, @floatFromInt(size));
    } else {
        len = (try toIndex(vm, length_v)) orelse return throwLength(vm, try ops.toNumber(vm, length_v));
        if (offset + len * @as(f64, @floatFromInt(size)) > buffer_len) return throwLength(vm, len);
    }
    return newView(vm, element, b, @intFromFloat(offset), @intFromFloat(len));
}

/// The values of an iterable, or of an array-like (`{ length: 2, 0: 5 }`), in an array,
/// mapped by `f` unless it is undefined: what Array.from makes of them.
fn collect(vm: *Vm, source: Value, f: Value) Error!*object.Array {
    const result = try builtins.array.from(vm, Value.undefined_value, &.{ source, f });
    return result.asObject().as(object.Array);
}

fn fromValues(vm: *Vm, element: ElementType, items: *object.Array) Error!*TypedArray {
    const t = try newTypedArray(vm, element, items.len);
    for (0..items.len) |i| {
        const v = items.items[i];
        store(t, @intCast(i), try ops.toNumber(vm, if (v.eqlBits(Value.hole)) Value.undefined_value else v));
    }
    return t;
}

/// The element type of the typed array constructor `this` (Uint8Array.from's receiver).
fn constructorElement(vm: *Vm, this: Value) Error!ElementType {
    if (this.is(.builtin)) {
        if (elementOfConstructor(@intCast(this.payload()))) |e| return e;
    }
    return vm.throwFmt(.type_error, "{f} is not a constructor", .{ops.ShortFormat{ .vm = vm, .v = this }});
}

comptime {
    // builtins.zig lays each constructor out before its prototype, in element order.
    for (element_types, 0..) |e, i| {
        assert(builtins.builtinId(e.name()) == builtins.builtinId(ElementType.int8.name()) + 2 * i);
    }
}

/// Which typed array a builtin id constructs, if any.
pub fn elementOfConstructor(id: u32) ?ElementType {
    const first = comptime builtins.builtinId(ElementType.int8.name());
    if (id < first or (id - first) % 2 != 0) return null;
    const i = (id - first) / 2;
    if (i >= element_types.len) return null;
    return element_types[i];
}

pub fn from(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const element = try constructorElement(vm, this);
    const f = arg(args, 1);
    if (!f.isUndefined() and !ops.isCallable(f)) return vm.throwFmt(.type_error, "{f} is not a function", .{ops.ValueText{ .vm = vm, .v = f }});
    const source = arg(args, 0);
    if (source.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    const t = try fromValues(vm, element, try collect(vm, source, f));
    return Value.obj(&t.object);
}

pub fn of(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const element = try constructorElement(vm, this);
    const t = try newTypedArray(vm, element, args.len);
    for (args, 0..) |v, i| store(t, @intCast(i), try ops.toNumber(vm, v));
    return Value.obj(&t.object);
}

pub fn requireNewBuffer(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Constructor ArrayBuffer requires 'new'");
}

pub fn constructBuffer(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const x = (try toIndex(vm, arg(args, 0))) orelse return vm.throwMessage(.range_error, "Invalid array buffer length");
    if (x > object.byte_length_max) return vm.throwMessage(.range_error, "Array buffer allocation failed");
    const b = try newBuffer(vm, @intFromFloat(x));
    return Value.obj(&b.object);
}

pub fn isView(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    return Value.boolean(arg(args, 0).objectOf(.typed_array) != null);
}

// ---------------------------------------------------------------------------------------
// ArrayBuffer.prototype.

pub fn bufferSlice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const o = this.objectOf(.array_buffer) orelse return vm.throwFmt(.type_error, "Method ArrayBuffer.prototype.slice called on incompatible receiver {f}", .{ops.ValueText{ .vm = vm, .v = this }});
    const b = o.as(ArrayBuffer);
    const start = try relative(vm, arg(args, 0), b.len, 0);
    const end = try relative(vm, arg(args, 1), b.len, b.len);
    const count = if (end > start) end - start else 0;
    const result = try newBuffer(vm, count);
    @memcpy(result.slice(), b.slice()[start..][0..count]);
    return Value.obj(&result.object);
}

// ---------------------------------------------------------------------------------------
// %TypedArray%.prototype.

fn thisView(vm: *Vm, this: Value) Error!*TypedArray {
    if (this.objectOf(.typed_array)) |o| return o.as(TypedArray);
    return vm.throwMessage(.type_error, "this is not a typed array.");
}

fn index(i: usize) Value {
    return Value.number(@floatFromInt(i));
}

const relative = builtins.array.relative;
const requireCallable = builtins.array.requireCallable;

pub fn at(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, arg(args, 0)));
    const k = if (x < 0) @as(f64, @floatFromInt(t.len)) + x else x;
    if (k < 0 or k >= @as(f64, @floatFromInt(t.len))) return Value.undefined_value;
    return get(t, @intFromFloat(k));
}

/// `set(source, offset?)`: a typed array's or an array-like's values from `offset`.
pub fn setMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const offset_f = number.toIntegerOrInfinity(try ops.toNumber(vm, arg(args, 1)));
    if (offset_f < 0) return vm.throwMessage(.range_error, "offset is out of bounds");
    const source = arg(args, 0);
    const source_items: union(enum) { view: *TypedArray, array: *object.Array } = if (source.objectOf(.typed_array)) |o|
        .{ .view = o.as(TypedArray) }
    else
        .{ .array = try arrayLike(vm, source) };
    const count: f64 = @floatFromInt(switch (source_items) {
        inline else => |v| v.len,
    });
    if (offset_f + count > @as(f64, @floatFromInt(t.len))) return vm.throwMessage(.range_error, "offset is out of bounds");
    const offset: u32 = @intFromFloat(offset_f);
    try ops.checkModuleWrite(vm, t.buffer);
    try vm.charge(meter.elementsCost(@intFromFloat(count)));
    switch (source_items) {
        .view => |src| {
            if (src.element == t.element) {
                // Same type: a byte copy, in the direction that is right when they overlap.
                const size = t.element.size();
                const dst = t.bytes()[offset * size ..][0 .. src.len * size];
                if (@intFromPtr(dst.ptr) > @intFromPtr(src.bytes().ptr)) {
                    std.mem.copyBackwards(u8, dst, src.bytes());
                } else {
                    std.mem.copyForwards(u8, dst, src.bytes());
                }
            } else if (src.buffer == t.buffer) {
                // Other types over the same bytes: the source is read whole first, as the
                // spec clones it, so no element is read after it was overwritten.
                const copy = try vm.newArray(src.len);
                for (0..src.len) |i| copy.push(vm.heap, get(src, @intCast(i))) catch return vm.outOfMemory();
                for (0..src.len) |i| store(t, offset + @as(u32, @intCast(i)), copy.items[i].asNumber());
            } else {
                for (0..src.len) |i| store(t, offset + @as(u32, @intCast(i)), load(src, @intCast(i)));
            }
        },
        .array => |a| for (0..a.len) |i| {
            const v = if (a.items[i].eqlBits(Value.hole)) Value.undefined_value else a.items[i];
            store(t, offset + @as(u32, @intCast(i)), try ops.toNumber(vm, v));
        },
    }
    return Value.undefined_value;
}

/// An array, or an array-like's elements read into one.
fn arrayLike(vm: *Vm, source: Value) Error!*object.Array {
    if (source.objectOf(.array)) |o| return o.as(object.Array);
    if (source.isNullish()) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    if (!source.is(.object)) return vm.newArray(0);
    const len_f = number.toIntegerOrInfinity(try ops.toNumber(vm, try ops.getField(vm, source, names.string("length"))));
    if (len_f > object.length_max) return vm.throwMessage(.range_error, "offset is out of bounds");
    const len: usize = if (len_f > 0) @intFromFloat(len_f) else 0;
    const result = try vm.newArray(len);
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        result.push(vm.heap, try ops.getElement(vm, source, index(i))) catch return vm.outOfMemory();
    }
    return result;
}

/// `subarray(begin?, end?)`: a new view over the same bytes.
pub fn subarray(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const start = try relative(vm, arg(args, 0), t.len, 0);
    const end = try relative(vm, arg(args, 1), t.len, t.len);
    const count = if (end > start) end - start else 0;
    const offset = t.byte_offset + @as(u32, @intCast(start)) * t.element.size();
    const view = try newView(vm, t.element, t.buffer, offset, @intCast(count));
    return Value.obj(&view.object);
}

/// `slice(begin?, end?)`: a copy in a buffer of its own.
pub fn slice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const start = try relative(vm, arg(args, 0), t.len, 0);
    const end = try relative(vm, arg(args, 1), t.len, t.len);
    const count = if (end > start) end - start else 0;
    const result = try newTypedArray(vm, t.element, count);
    const size = t.element.size();
    @memcpy(result.bytes(), t.bytes()[start * size ..][0 .. count * size]);
    return Value.obj(&result.object);
}

pub fn fill(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const x = try ops.toNumber(vm, arg(args, 0));
    const start = try relative(vm, arg(args, 1), t.len, 0);
    const end = try relative(vm, arg(args, 2), t.len, t.len);
    if (end > start) {
        try ops.checkModuleWrite(vm, t.buffer);
        try vm.charge(meter.elementsCost(end - start));
        for (start..end) |i| store(t, @intCast(i), x);
    }
    return this;
}

/// Where a scan starts: fromIndex relative to the end when negative.
fn scanStart(vm: *Vm, t: *TypedArray, v: Value) Error!usize {
    return relative(vm, v, t.len, 0);
}

pub fn includes(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    if (t.len == 0) return Value.false_value;
    const start = try scanStart(vm, t, arg(args, 1));
    const target = arg(args, 0);
    if (!target.isNumber()) return Value.false_value;
    try vm.charge(meter.elementsCost(t.len - start));
    for (start..t.len) |i| {
        if (object.sameValueZero(Value.number(load(t, @intCast(i))), target)) return Value.true_value;
    }
    return Value.false_value;
}

pub fn indexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    if (t.len == 0) return Value.number(-1);
    const start = try scanStart(vm, t, arg(args, 1));
    const target = arg(args, 0);
    if (!target.isNumber()) return Value.number(-1);
    try vm.charge(meter.elementsCost(t.len - start));
    for (start..t.len) |i| {
        if (load(t, @intCast(i)) == target.asNumber()) return index(i);
    }
    return Value.number(-1);
}

pub fn lastIndexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    if (t.len == 0) return Value.number(-1);
    var last: f64 = @floatFromInt(t.len - 1);
    if (args.len >= 2) {
        const x = number.toIntegerOrInfinity(try ops.toNumber(vm, args[1]));
        last = if (x < 0) @as(f64, @floatFromInt(t.len)) + x else @min(x, last);
    }
    const target = arg(args, 0);
    if (last < 0 or !target.isNumber()) return Value.number(-1);
    var i: usize = @intFromFloat(last);
    try vm.charge(meter.elementsCost(i + 1));
    while (true) : (i -= 1) {
        if (load(t, @intCast(i)) == target.asNumber()) return index(i);
        if (i == 0) break;
    }
    return Value.number(-1);
}

pub fn joinMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const sep = arg(args, 0);
    const separator = if (sep.isUndefined()) names.string(",") else try ops.toString(vm, sep);
    return Value.string(try join(vm, t, separator));
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try thisView(vm, this);
    return Value.string(try join(vm, t, names.string(",")));
}

fn join(vm: *Vm, t: *TypedArray, separator: *String) Error!*String {
    if (t.len == 0) return string.empty;
    try vm.charge(meter.elementsCost(2 * @as(usize, t.len)));
    const texts = try vm.newArray(t.len);
    for (0..t.len) |i| {
        texts.push(vm.heap, Value.string(try ops.numberToString(vm, load(t, @intCast(i))))) catch return vm.outOfMemory();
    }
    return builtins.array.join(vm, texts, separator);
}

/// Runs `f(value, index, view)` over the view; `stop` decides from each result whether the
/// walk ends there (find, some, every), and the index where it ended is returned.
fn walk(vm: *Vm, t: *TypedArray, args: []const Value, comptime stop: ?bool) Error!?usize {
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const this_arg = arg(args, 1);
    for (0..t.len) |i| {
        try vm.charge(meter.elementsCost(1));
        const r = try vm.call(f, this_arg, &.{ get(t, @intCast(i)), index(i), Value.obj(&t.object) });
        if (stop) |s| if (ops.toBoolean(r) == s) return i;
    }
    return null;
}

pub fn forEach(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = try walk(vm, try thisView(vm, this), args, null);
    return Value.undefined_value;
}

pub fn some(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return Value.boolean(try walk(vm, try thisView(vm, this), args, true) != null);
}

pub fn every(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return Value.boolean(try walk(vm, try thisView(vm, this), args, false) == null);
}

pub fn find(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const i = try walk(vm, t, args, true) orelse return Value.undefined_value;
    return get(t, @intCast(i));
}

pub fn findIndex(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const i = try walk(vm, try thisView(vm, this), args, true) orelse return Value.number(-1);
    return index(i);
}

pub fn map(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const result = try newTypedArray(vm, t.element, t.len);
    for (0..t.len) |i| {
        try vm.charge(meter.elementsCost(1));
        const r = try vm.call(f, arg(args, 1), &.{ get(t, @intCast(i)), index(i), this });
        store(result, @intCast(i), try ops.toNumber(vm, r));
    }
    return Value.obj(&result.object);
}

pub fn filter(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const kept = try vm.newArray(0);
    for (0..t.len) |i| {
        try vm.charge(meter.elementsCost(1));
        const v = get(t, @intCast(i));
        if (ops.toBoolean(try vm.call(f, arg(args, 1), &.{ v, index(i), this }))) {
            kept.push(vm.heap, v) catch return vm.outOfMemory();
        }
    }
    const result = try fromValues(vm, t.element, kept);
    return Value.obj(&result.object);
}

pub fn reduce(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    var i: usize = 0;
    var acc: Value = undefined;
    if (args.len >= 2) {
        acc = args[1];
    } else {
        if (t.len == 0) return vm.throwMessage(.type_error, "Reduce of empty array with no initial value");
        acc = get(t, 0);
        i = 1;
    }
    while (i < t.len) : (i += 1) {
        try vm.charge(meter.elementsCost(1));
        acc = try vm.call(f, Value.undefined_value, &.{ acc, get(t, @intCast(i)), index(i), this });
    }
    return acc;
}

pub fn reverse(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try thisView(vm, this);
    if (t.len < 2) return this;
    try ops.checkModuleWrite(vm, t.buffer);
    try vm.charge(meter.elementsCost(t.len));
    var i: u32 = 0;
    var j: u32 = t.len - 1;
    while (i < j) : ({
        i += 1;
        j -= 1;
    }) {
        const a = load(t, i);
        store(t, i, load(t, j));
        store(t, j, a);
    }
    return this;
}

/// `sort(comparator?)`: numbers ascending (-0 before 0, NaN last), or by the comparator
/// through Array's own sort, so a comparator meets the same algorithm as on an array.
pub fn sort(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try thisView(vm, this);
    const comparator = arg(args, 0);
    if (!comparator.isUndefined()) try requireCallable(vm, comparator);
    try ops.checkModuleWrite(vm, t.buffer);
    try vm.charge(meter.elementsCost(@as(usize, t.len) * (std.math.log2_int_ceil(usize, @max(2, t.len)))));
    if (comparator.isUndefined()) {
        const numbers = vm.heap.alloc(f64, t.len) catch return vm.outOfMemory();
        for (numbers, 0..) |*x, i| x.* = load(t, @intCast(i));
        std.mem.sort(f64, numbers, {}, numericLess);
        for (numbers, 0..) |x, i| store(t, @intCast(i), x);
        return this;
    }
    const items = try vm.newArray(t.len);
    for (0..t.len) |i| items.push(vm.heap, get(t, @intCast(i))) catch return vm.outOfMemory();
    const sorted = try builtins.array.toSorted(vm, Value.obj(&items.object), &.{comparator});
    const result = sorted.asObject().as(object.Array);
    for (0..@min(t.len, result.len)) |i| store(t, @intCast(i), try ops.toNumber(vm, result.items[i]));
    return this;
}

fn numericLess(_: void, a: f64, b: f64) bool {
    if (std.math.isNan(b)) return !std.math.isNan(a);
    if (std.math.isNan(a)) return false;
    if (a == 0 and b == 0) return std.math.signbit(a) and !std.math.signbit(b);
    return a < b;
}

fn iterator(vm: *Vm, this: Value, kind: object.IteratorKind) Error!Value {
    const t = try thisView(vm, this);
    const it = vm.heap.create(object.Iterator) catch return vm.outOfMemory();
    it.* = .{ .object = .{ .kind = .iterator }, .source = Value.obj(&t.object), .iterator_kind = kind };
    return Value.obj(&it.object);
}

pub fn keys(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return iterator(vm, this, .array_keys);
}

pub fn values(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return iterator(vm, this, .array_values);
}

pub fn entries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return iterator(vm, this, .array_entries);
}

test "typed arrays: conversions wrap integers and clamp Uint8ClampedArray as the spec says" {
    try std.testing.expectEqual(@as(u32, 44), modular(300) & 0xFF);
    try std.testing.expectEqual(@as(u32, 255), modular(-1) & 0xFF);
    try std.testing.expectEqual(@as(u32, 1), modular(1.7));
    try std.testing.expectEqual(@as(u32, 0), modular(std.math.nan(f64)));
    try std.testing.expectEqual(@as(u32, 0), modular(std.math.inf(f64)));
    try std.testing.expectEqual(@as(u32, 0xFFFF_FFFF), modular(-1));
    try std.testing.expectEqual(@as(u8, 2), clamp(1.5));
    try std.testing.expectEqual(@as(u8, 2), clamp(2.5));
    try std.testing.expectEqual(@as(u8, 4), clamp(3.5));
    try std.testing.expectEqual(@as(u8, 255), clamp(300));
    try std.testing.expectEqual(@as(u8, 0), clamp(-1));
    try std.testing.expectEqual(@as(u8, 0), clamp(std.math.nan(f64)));
}
