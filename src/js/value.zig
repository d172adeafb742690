//! A JavaScript value in one 64-bit word (NaN-boxing).
//!
//! Every bit pattern whose top 16 bits are below 0xFFF9 is an IEEE double, as is; the
//! patterns above are tagged values: the tag in the top 16 bits, a payload in the low 48
//! (a pointer on x86-64 and aarch64, where user addresses fit in 47 bits, or a small id).
//! Arithmetic only ever yields the two quiet NaNs 0x7FF8... and 0xFFF8..., both below the
//! tags, so a number never reads as a pointer; a number that comes from outside (an image's
//! constant pool) is canonicalised by the loader, which is what keeps the scheme sound.
//!
//! The one decision a reader must know: numbers are always doubles. There is no separate
//! small-integer representation; array indexing converts with one instruction and a compare.
const std = @import("std");
const assert = std.debug.assert;

const String = @import("string.zig").String;
const object = @import("object.zig");
const Object = object.Object;

pub const Tag = enum(u16) {
    /// undefined, null, booleans and the engine's internal markers.
    special = 0xFFF9,
    /// A native function: the payload is its id in `builtins.natives` (or the host's table).
    native = 0xFFFA,
    /// A builtin namespace object or constructor (Math, JSON, Map...): payload is its id.
    builtin = 0xFFFB,
    string = 0xFFFC,
    object = 0xFFFD,
    /// A closure variable's box; lives only in frame slots and closures, never in user hands.
    cell = 0xFFFE,
    /// A symbol: the payload points at its key, a String flagged `symbol` (symbol.zig).
    symbol = 0xFFFF,
};

const tag_shift = 48;
const payload_mask: u64 = (1 << tag_shift) - 1;
const tagged_min: u64 = @as(u64, 0xFFF9) << tag_shift;

pub const Special = enum(u8) {
    undefined = 0,
    null = 1,
    false = 2,
    true = 3,
    /// An array hole (`[1, , 3]`); never escapes an array read, which turns it into undefined.
    hole = 4,
    /// A `let`/`const` binding before its declaration ran (the temporal dead zone).
    uninitialized = 5,
    /// What a generator's `return(v)` unwinds its frame with, so that its `finally` blocks
    /// run: never seen by the script (a `catch` block rethrows it first, catch_guard), and
    /// turned into the return's result when it leaves the frame (Vm.resumeGenerator).
    generator_return = 6,
};

/// A closure variable's storage; captured bindings live here instead of in a frame slot.
pub const Cell = struct {
    value: Value,
};

pub const Value = packed struct(u64) {
    bits: u64,

    pub const undefined_value: Value = special(.undefined);
    pub const null_value: Value = special(.null);
    pub const true_value: Value = special(.true);
    pub const false_value: Value = special(.false);
    pub const hole: Value = special(.hole);
    pub const uninitialized: Value = special(.uninitialized);
    pub const generator_return: Value = special(.generator_return);
    pub const nan: Value = .{ .bits = 0x7FF8_0000_0000_0000 };

    fn special(which: Special) Value {
        return .{ .bits = (@as(u64, @backingInt(Tag.special)) << tag_shift) | @backingInt(which) };
    }

    pub inline fn tagged(t: Tag, payload_bits: u64) Value {
        assert(payload_bits <= payload_mask);
        return .{ .bits = (@as(u64, @backingInt(t)) << tag_shift) | payload_bits };
    }

    /// Any double, canonicalising a NaN so that it cannot collide with a tag.
    pub inline fn number(x: f64) Value {
        const bits: u64 = @bitCast(x);
        if (bits >= tagged_min) return nan;
        return .{ .bits = bits };
    }

    pub inline fn boolean(b: bool) Value {
        return if (b) true_value else false_value;
    }

    pub inline fn string(s: *const String) Value {
        return tagged(.string, @intFromPtr(s));
    }

    pub inline fn obj(o: *Object) Value {
        return tagged(.object, @intFromPtr(o));
    }

    pub inline fn cell(c: *Cell) Value {
        return tagged(.cell, @intFromPtr(c));
    }

    pub inline fn symbol(key: *const String) Value {
        assert(key.flags.symbol);
        return tagged(.symbol, @intFromPtr(key));
    }

    pub inline fn asSymbolKey(v: Value) *String {
        assert(v.is(.symbol));
        return @ptrFromInt(v.payload());
    }

    pub inline fn native(id: u32) Value {
        return tagged(.native, id);
    }

    pub inline fn builtin(id: u32) Value {
        return tagged(.builtin, id);
    }

    pub inline fn isNumber(v: Value) bool {
        return v.bits < tagged_min;
    }

    pub inline fn tag(v: Value) ?Tag {
        if (v.bits < tagged_min) return null;
        return @fromBackingInt(@intCast(@as(u16, @truncate(v.bits >> tag_shift))));
    }

    pub inline fn is(v: Value, t: Tag) bool {
        return (v.bits >> tag_shift) == @backingInt(t);
    }

    pub inline fn payload(v: Value) u64 {
        return v.bits & payload_mask;
    }

    pub inline fn asNumber(v: Value) f64 {
        assert(v.isNumber());
        return @bitCast(v.bits);
    }

    pub inline fn asString(v: Value) *String {
        assert(v.is(.string));
        return @ptrFromInt(v.payload());
    }

    pub inline fn asObject(v: Value) *Object {
        assert(v.is(.object));
        return @ptrFromInt(v.payload());
    }

    pub inline fn asCell(v: Value) *Cell {
        assert(v.is(.cell));
        return @ptrFromInt(v.payload());
    }

    pub inline fn isString(v: Value) bool {
        return v.is(.string);
    }

    pub inline fn isObject(v: Value) bool {
        return v.is(.object);
    }

    pub inline fn isUndefined(v: Value) bool {
        return v.bits == undefined_value.bits;
    }

    pub inline fn isNull(v: Value) bool {
        return v.bits == null_value.bits;
    }

    pub inline fn isNullish(v: Value) bool {
        return v.bits == undefined_value.bits or v.bits == null_value.bits;
    }

    pub inline fn isBool(v: Value) bool {
        return v.bits == true_value.bits or v.bits == false_value.bits;
    }

    pub inline fn eqlBits(a: Value, b: Value) bool {
        return a.bits == b.bits;
    }

    /// The object, if this value is one of the given kind.
    pub inline fn objectOf(v: Value, kind: object.Kind) ?*Object {
        if (!v.is(.object)) return null;
        const o = v.asObject();
        return if (o.kind == kind) o else null;
    }
};

comptime {
    assert(@sizeOf(Value) == 8);
    // Both NaNs that hardware arithmetic produces are numbers, below every tag.
    assert(@as(u64, 0xFFF8_0000_0000_0000) < tagged_min);
    assert(@as(u64, @bitCast(-std.math.inf(f64))) < tagged_min);
}

test "value: doubles and tags do not collide" {
    const testing = std.testing;
    const samples = [_]f64{ 0, -0.0, 1, -1, 1e308, -1e308, std.math.inf(f64), -std.math.inf(f64), 5e-324 };
    for (samples) |x| {
        const v = Value.number(x);
        try testing.expect(v.isNumber());
        try testing.expectEqual(@as(u64, @bitCast(x)), v.bits);
    }
    const negative_nan: f64 = @bitCast(@as(u64, 0xFFFF_0000_0000_0001));
    try testing.expect(Value.number(negative_nan).isNumber());
    try testing.expect(std.math.isNan(Value.number(negative_nan).asNumber()));
    try testing.expect(!Value.undefined_value.isNumber());
    try testing.expect(Value.undefined_value.isNullish() and Value.null_value.isNullish());
    try testing.expect(!Value.false_value.isNullish());
    try testing.expectEqual(Tag.native, Value.native(7).tag().?);
    try testing.expectEqual(@as(u64, 7), Value.native(7).payload());
}
