//! Immutable JavaScript strings: sequences of UTF-16 code units, as the language sees them,
//! stored one byte per unit (Latin-1) when every unit fits, two bytes otherwise.
//!
//! The representation is canonical: a string is wide only if some unit is above 0xFF. Equal
//! strings therefore have equal bytes, which keeps equality and hashing a `memcmp` and a hash
//! of the stored bytes. Every operation that can drop the wide units (slice, substring...)
//! narrows its result.
//!
//! The header is separate from the bytes (`ptr`), so that a concatenation whose left side
//! ends at the heap's string top grows in place (Heap.zig) and constants from an image point
//! at the image's own bytes.
const std = @import("std");
const assert = std.debug.assert;

const Heap = @import("Heap.zig");
const meter = @import("meter.zig");
const names = @import("names.zig");

pub const length_max: u32 = (1 << 29) - 24; // V8's limit on 64-bit targets, in code units.

pub const String = struct {
    ptr: [*]const u8,
    len: u32,
    hash_value: u32 = 0,
    flags: Flags = .{},
    /// The builtin property name this string spells (names.zig), once looked up.
    name_id: u16 = name_unknown,
    /// Its value as an array index, when `flags.index == .yes`.
    index_value: u32 = 0,

    pub const name_unknown: u16 = 0xFFFF;
    pub const name_none: u16 = 0xFFFE;

    pub const Flags = packed struct(u8) {
        wide: bool = false,
        hashed: bool = false,
        index: enum(u2) { unknown, no, yes } = .unknown,
        /// A private name's key (`#x`): equal to itself only, never to a string of the same
        /// text (object.Properties.find compares it by address).
        private: bool = false,
        /// A symbol's key (symbol.zig): equal to itself only. Its length is 0 and `ptr` points
        /// at the symbol's description, so no text comparison can ever match it.
        symbol: bool = false,
        _: u2 = 0,
    };

    pub fn latin1(s: *const String) []const u8 {
        assert(!s.flags.wide);
        return s.ptr[0..s.len];
    }

    pub fn utf16(s: *const String) []const u16 {
        assert(s.flags.wide);
        const units: [*]const u16 = @ptrCast(@alignCast(s.ptr));
        return units[0..s.len];
    }

    pub inline fn at(s: *const String, i: usize) u16 {
        assert(i < s.len);
        if (!s.flags.wide) return s.ptr[i];
        const units: [*]const u16 = @ptrCast(@alignCast(s.ptr));
        return units[i];
    }

    pub fn byteLen(s: *const String) usize {
        return if (s.flags.wide) @as(usize, s.len) * 2 else s.len;
    }

    pub fn bytes(s: *const String) []const u8 {
        return s.ptr[0..s.byteLen()];
    }

    pub fn hash(s: *String) u32 {
        if (!s.flags.hashed) {
            meter.chargeBytes(s.byteLen());
            s.hash_value = hashBytes(s.bytes(), s.flags.wide);
            s.flags.hashed = true;
        }
        return s.hash_value;
    }

    /// The array index this string spells ("0", "17", not "017" or "4294967295"), if any.
    pub fn arrayIndex(s: *String) ?u32 {
        switch (s.flags.index) {
            .yes => return s.index_value,
            .no => return null,
            .unknown => {
                const index = parseIndex(s);
                s.flags.index = if (index == null) .no else .yes;
                s.index_value = index orelse 0;
                return index;
            },
        }
    }

    pub fn eql(a: *const String, b: *const String) bool {
        if (a == b) return true;
        if (a.len != b.len or a.flags.wide != b.flags.wide or a.flags.symbol or b.flags.symbol) return false;
        if (a.flags.hashed and b.flags.hashed and a.hash_value != b.hash_value) return false;
        meter.chargeBytes(a.byteLen());
        return bytesEqual(a.bytes(), b.bytes());
    }

    pub fn eqlLatin1(s: *const String, text: []const u8) bool {
        return !s.flags.wide and std.mem.eql(u8, s.latin1(), text);
    }

    /// Code-unit order, as `<` on strings.
    pub fn order(a: *const String, b: *const String) std.math.Order {
        if (!a.flags.wide and !b.flags.wide) {
            const x = a.latin1();
            const y = b.latin1();
            const diff = firstDifference(x, y) orelse {
                meter.chargeBytes(x.len);
                return .eq;
            };
            meter.chargeBytes(diff);
            if (diff == x.len or diff == y.len) return std.math.order(x.len, y.len);
            return std.math.order(x[diff], y[diff]);
        }
        const n = @min(a.len, b.len);
        for (0..n) |i| {
            const x = a.at(i);
            const y = b.at(i);
            if (x != y) {
                meter.charge(meter.unitsCost(i));
                return std.math.order(x, y);
            }
        }
        meter.charge(meter.unitsCost(n));
        return std.math.order(a.len, b.len);
    }
};

/// Where two byte strings first differ (the shorter's length if one is a prefix of the other),
/// or null if they are equal, eight bytes at a time. Not `std.mem.eql` and `std.mem.order`:
/// built for the native CPU (an AVX-512 EPYC here), eql's vector loop compiled to 1.3 µs per
/// KiB against 30 ns for this loop, and order compares a byte at a time.
pub fn firstDifference(a: []const u8, b: []const u8) ?usize {
    const n = @min(a.len, b.len);
    var i: usize = 0;
    while (i + 8 <= n) : (i += 8) {
        const x = std.mem.readInt(u64, a[i..][0..8], .little) ^ std.mem.readInt(u64, b[i..][0..8], .little);
        if (x != 0) return i + @ctz(x) / 8;
    }
    while (i < n) : (i += 1) {
        if (a[i] != b[i]) return i;
    }
    return if (a.len == b.len) null else n;
}

/// Whether two byte strings are equal (see `firstDifference`).
pub fn bytesEqual(a: []const u8, b: []const u8) bool {
    return a.len == b.len and (a.ptr == b.ptr or firstDifference(a, b) == null);
}

pub fn hashBytes(data: []const u8, wide: bool) u32 {
    return @truncate(std.hash.Wyhash.hash(@intFromBool(wide), data));
}

fn parseIndex(s: *const String) ?u32 {
    if (s.flags.wide) return null;
    return parseIndexText(s.latin1());
}

fn parseIndexText(text: []const u8) ?u32 {
    if (text.len == 0 or text.len > 10) return null;
    if (text[0] == '0') return if (text.len == 1) 0 else null;
    var value: u64 = 0;
    for (text) |c| {
        if (c < '0' or c > '9') return null;
        value = value * 10 + (c - '0');
    }
    // 2^32 - 1 is not an array index (it is the largest length).
    if (value >= std.math.maxInt(u32)) return null;
    return @intCast(value);
}

// ---------------------------------------------------------------------------------------
// Static strings: the empty string and every one-unit Latin-1 string, laid out at compile
// time, so that `s[i]`, `charAt` and `split("")` on ASCII text allocate nothing.

const all_latin1: [256]u8 = blk: {
    var table: [256]u8 = undefined;
    for (&table, 0..) |*c, i| c.* = @intCast(i);
    break :blk table;
};

pub const empty: *String = &empty_storage;
/// Static strings are never written after compile time: their hash and index are filled in
/// here, and `isStatic` keeps lazy caches (names.zig) from writing to them, so threads can
/// share them.
var empty_storage: String = .{
    .ptr = &all_latin1,
    .len = 0,
    .hash_value = hashBytes("", false),
    .flags = .{ .hashed = true, .index = .no },
};

var single_storage: [256]String = blk: {
    @setEvalBranchQuota(100_000);
    var table: [256]String = undefined;
    for (&table, 0..) |*s, i| {
        const digit = i >= '0' and i <= '9';
        s.* = .{
            .ptr = all_latin1[i..].ptr,
            .len = 1,
            .hash_value = hashBytes(all_latin1[i..][0..1], false),
            .flags = .{ .hashed = true, .index = if (digit) .yes else .no },
            .index_value = if (digit) i - '0' else 0,
        };
    }
    break :blk table;
};

/// Strings for the integers below this, so that `obj[i]` and `String(i)` on small numbers
/// allocate nothing.
pub const small_integers_count = 256;

const small_integer_text: [small_integers_count * 3]u8 = blk: {
    var text: [small_integers_count * 3]u8 = undefined;
    for (0..small_integers_count) |i| {
        text[i * 3] = '0' + @as(u8, @intCast(i / 100));
        text[i * 3 + 1] = '0' + @as(u8, @intCast(i / 10 % 10));
        text[i * 3 + 2] = '0' + @as(u8, @intCast(i % 10));
    }
    break :blk text;
};

var small_integer_storage: [small_integers_count]String = blk: {
    @setEvalBranchQuota(200_000);
    var table: [small_integers_count]String = undefined;
    for (&table, 0..) |*s, i| {
        const digits: usize = if (i >= 100) 3 else if (i >= 10) 2 else 1;
        const text = small_integer_text[i * 3 + 3 - digits ..][0..digits];
        s.* = .{
            .ptr = text.ptr,
            .len = digits,
            .hash_value = hashBytes(text, false),
            .flags = .{ .hashed = true, .index = .yes },
            .index_value = i,
        };
    }
    break :blk table;
};

/// A static string of `text` (Latin-1, no array index, no known name: names.string has
/// those), for a host that would otherwise copy the same text into every request's heap (a
/// Content-Type, say). Its hash and flags are filled in at compile time, so nothing writes it.
pub fn literal(comptime text: []const u8) *String {
    comptime assert(parseIndexText(text) == null and names.lookup(text) == null);
    const Storage = struct {
        var s: String = .{
            .ptr = text.ptr,
            .len = text.len,
            .hash_value = hashBytes(text, false),
            .flags = .{ .hashed = true, .index = .no },
            .name_id = String.name_none,
        };
    };
    return &Storage.s;
}

/// A static key that only a host's natives hold: private (compared by address, so no string a
/// script makes can name it, and no key listing or inspection shows it), for the state a
/// native keeps on an object it made (where a fetched body is, whether it was read). `text` is
/// what a debugger would print.
pub fn hostKey(comptime text: []const u8) *String {
    const Storage = struct {
        var s: String = .{
            .ptr = text.ptr,
            .len = text.len,
            .hash_value = hashBytes(text, false),
            .flags = .{ .hashed = true, .index = .no, .private = true },
            .name_id = String.name_none,
        };
    };
    return &Storage.s;
}

pub fn smallInteger(i: u32) *String {
    assert(i < small_integers_count);
    if (i < 10) return single('0' + @as(u8, @intCast(i)));
    return &small_integer_storage[i];
}

/// The one-unit string for a Latin-1 code unit.
pub fn single(unit: u8) *String {
    return &single_storage[unit];
}

pub fn isStatic(s: *const String) bool {
    const address = @intFromPtr(s);
    const singles = @intFromPtr(&single_storage);
    const integers = @intFromPtr(&small_integer_storage);
    return s == empty or
        (address >= singles and address < singles + @sizeOf(@TypeOf(single_storage))) or
        (address >= integers and address < integers + @sizeOf(@TypeOf(small_integer_storage)));
}

// ---------------------------------------------------------------------------------------
// Building strings in a heap.

pub fn newHeader(heap: *Heap, ptr: [*]const u8, len: u32, wide: bool) Heap.Error!*String {
    const s = try heap.create(String);
    s.* = .{ .ptr = ptr, .len = len, .flags = .{ .wide = wide } };
    return s;
}

/// A Latin-1 string copied from `text`.
pub fn fromLatin1(heap: *Heap, text: []const u8) Heap.Error!*String {
    if (text.len == 0) return empty;
    if (text.len == 1) return single(text[0]);
    if (text.len > length_max) return error.OutOfMemory;
    meter.chargeBytes(text.len);
    const data = try heap.allocBytes(text.len, 1);
    @memcpy(data, text);
    return newHeader(heap, data.ptr, @intCast(text.len), false);
}

/// A string from UTF-16 units, narrowed when every unit fits in a byte.
pub fn fromUtf16(heap: *Heap, units: []const u16) Heap.Error!*String {
    if (units.len > length_max) return error.OutOfMemory;
    meter.chargeBytes(units.len * 2);
    for (units) |u| {
        if (u > 0xFF) break;
    } else {
        if (units.len == 0) return empty;
        if (units.len == 1) return single(@intCast(units[0]));
        const data = try heap.allocBytes(units.len, 1);
        for (data, units) |*d, u| d.* = @intCast(u);
        return newHeader(heap, data.ptr, @intCast(units.len), false);
    }
    const data = try heap.allocBytes(units.len * 2, 2);
    const dest: [*]u16 = @ptrCast(@alignCast(data.ptr));
    @memcpy(dest[0..units.len], units);
    return newHeader(heap, data.ptr, @intCast(units.len), true);
}

/// A string from UTF-8 text. Invalid sequences become U+FFFD, one per bad byte.
pub fn fromUtf8(heap: *Heap, text: []const u8) Heap.Error!*String {
    meter.chargeBytes(text.len);
    var ascii = true;
    for (text) |c| {
        if (c >= 0x80) {
            ascii = false;
            break;
        }
    }
    if (ascii) return fromLatin1(heap, text);
    // At most one unit per byte.
    var units_len: usize = 0;
    var wide = false;
    var it: Utf8Iterator = .{ .text = text };
    while (it.next()) |cp| {
        units_len += if (cp >= 0x10000) 2 else 1;
        if (cp > 0xFF) wide = true;
    }
    if (units_len > length_max) return error.OutOfMemory;
    if (!wide) {
        const data = try heap.allocBytes(units_len, 1);
        it = .{ .text = text };
        var i: usize = 0;
        while (it.next()) |cp| : (i += 1) data[i] = @intCast(cp);
        if (units_len == 1) return single(data[0]);
        return newHeader(heap, data.ptr, @intCast(units_len), false);
    }
    const data = try heap.allocBytes(units_len * 2, 2);
    const dest: [*]u16 = @ptrCast(@alignCast(data.ptr));
    it = .{ .text = text };
    var i: usize = 0;
    while (it.next()) |cp| {
        if (cp >= 0x10000) {
            const v = cp - 0x10000;
            dest[i] = @intCast(0xD800 + (v >> 10));
            dest[i + 1] = @intCast(0xDC00 + (v & 0x3FF));
            i += 2;
        } else {
            dest[i] = @intCast(cp);
            i += 1;
        }
    }
    return newHeader(heap, data.ptr, @intCast(units_len), true);
}

/// Decodes UTF-8, giving U+FFFD for each byte that does not start a valid sequence. Also
/// accepts encoded surrogates (WTF-8), which the compiler writes for lone `\uD800` escapes.
pub const Utf8Iterator = struct {
    text: []const u8,
    i: usize = 0,

    pub fn next(it: *Utf8Iterator) ?u21 {
        if (it.i >= it.text.len) return null;
        const c = it.text[it.i];
        if (c < 0x80) {
            it.i += 1;
            return c;
        }
        const len: usize = if (c & 0xE0 == 0xC0) 2 else if (c & 0xF0 == 0xE0) 3 else if (c & 0xF8 == 0xF0) 4 else 0;
        if (len == 0 or it.i + len > it.text.len) {
            it.i += 1;
            return 0xFFFD;
        }
        var cp: u21 = switch (len) {
            2 => c & 0x1F,
            3 => c & 0x0F,
            else => c & 0x07,
        };
        for (it.text[it.i + 1 .. it.i + len]) |b| {
            if (b & 0xC0 != 0x80) {
                it.i += 1;
                return 0xFFFD;
            }
            cp = (cp << 6) | (b & 0x3F);
        }
        const min: u21 = switch (len) {
            2 => 0x80,
            3 => 0x800,
            else => 0x10000,
        };
        if (cp < min or cp > 0x10FFFF) {
            it.i += 1;
            return 0xFFFD;
        }
        it.i += len;
        return cp;
    }
};

/// `a + b`. Appends in place when `a`'s bytes are the last the heap wrote and both have the
/// same width; copies otherwise.
pub fn concat(heap: *Heap, a: *String, b: *String) Heap.Error!*String {
    if (a.len == 0) return b;
    if (b.len == 0) return a;
    const len = @as(usize, a.len) + b.len;
    if (len > length_max) return error.OutOfMemory;
    const wide = a.flags.wide or b.flags.wide;
    // Appending in place copies b; otherwise both are copied.
    meter.chargeBytes(b.byteLen());
    if (a.flags.wide == b.flags.wide) {
        if (heap.extendBytes(a.ptr + a.byteLen(), b.byteLen())) |tail| {
            @memcpy(tail, b.bytes());
            return newHeader(heap, a.ptr, @intCast(len), wide);
        }
    }
    meter.chargeBytes(a.byteLen());
    if (!wide) {
        const data = try heap.allocBytes(len, 1);
        @memcpy(data[0..a.len], a.latin1());
        @memcpy(data[a.len..], b.latin1());
        return newHeader(heap, data.ptr, @intCast(len), false);
    }
    const data = try heap.allocBytes(len * 2, 2);
    const dest: [*]u16 = @ptrCast(@alignCast(data.ptr));
    copyUnits(dest[0..a.len], a);
    copyUnits(dest[a.len..len], b);
    return newHeader(heap, data.ptr, @intCast(len), true);
}

/// Copies a string's units into a wide buffer.
pub fn copyUnits(dest: []u16, s: *const String) void {
    assert(dest.len == s.len);
    if (s.flags.wide) {
        @memcpy(dest, s.utf16());
    } else {
        for (dest, s.latin1()) |*d, c| d.* = c;
    }
}

/// Units `[start, end)` of `s`, narrowed if the slice has no wide unit.
pub fn slice(heap: *Heap, s: *String, start: usize, end: usize) Heap.Error!*String {
    assert(start <= end and end <= s.len);
    if (start == 0 and end == s.len) return s;
    if (end - start == 1 and s.at(start) <= 0xFF) return single(@intCast(s.at(start)));
    if (!s.flags.wide) {
        // Shares the bytes: strings are immutable.
        return newHeader(heap, s.ptr + start, @intCast(end - start), false);
    }
    const units = s.utf16()[start..end];
    meter.chargeBytes(units.len * 2);
    for (units) |u| {
        if (u > 0xFF) break;
    } else return fromUtf16(heap, units);
    return newHeader(heap, @ptrCast(units.ptr), @intCast(units.len), true);
}

/// Builds a string of known final length, unit by unit; wide or not is decided up front.
pub const Builder = struct {
    heap: *Heap,
    wide: bool,
    data: []u8,
    len: usize = 0,

    pub fn init(heap: *Heap, capacity: usize, wide: bool) Heap.Error!Builder {
        if (capacity > length_max) return error.OutOfMemory;
        const data = try heap.allocBytes(if (wide) capacity * 2 else capacity, if (wide) 2 else 1);
        return .{ .heap = heap, .wide = wide, .data = data };
    }

    pub fn append(b: *Builder, unit: u16) void {
        if (b.wide) {
            const dest: [*]u16 = @ptrCast(@alignCast(b.data.ptr));
            assert((b.len + 1) * 2 <= b.data.len);
            dest[b.len] = unit;
        } else {
            assert(unit <= 0xFF and b.len < b.data.len);
            b.data[b.len] = @intCast(unit);
        }
        b.len += 1;
    }

    pub fn appendString(b: *Builder, s: *const String) void {
        if (b.wide) {
            const dest: [*]u16 = @ptrCast(@alignCast(b.data.ptr));
            assert((b.len + s.len) * 2 <= b.data.len);
            copyUnits(dest[b.len .. b.len + s.len], s);
        } else {
            assert(b.len + s.len <= b.data.len);
            @memcpy(b.data[b.len..][0..s.len], s.latin1());
        }
        b.len += s.len;
    }

    pub fn appendLatin1(b: *Builder, text: []const u8) void {
        for (text) |c| b.append(c);
    }

    /// The finished string. Narrows a wide build that turned out to need no wide unit, and
    /// gives back unused capacity when the buffer is still the heap's last string data.
    pub fn finish(b: *Builder) Heap.Error!*String {
        const used = if (b.wide) b.len * 2 else b.len;
        if (@intFromPtr(b.data.ptr) + b.data.len == @intFromPtr(b.heap.region.ptr) + b.heap.low) {
            b.heap.low -= b.data.len - used;
            b.data.len = used;
        }
        if (b.wide) {
            const units: [*]const u16 = @ptrCast(@alignCast(b.data.ptr));
            for (units[0..b.len]) |u| {
                if (u > 0xFF) break;
            } else return fromUtf16(b.heap, units[0..b.len]);
            return newHeader(b.heap, b.data.ptr, @intCast(b.len), true);
        }
        if (b.len == 0) return empty;
        if (b.len == 1) return single(b.data[0]);
        return newHeader(b.heap, b.data.ptr, @intCast(b.len), false);
    }
};

/// A string built piece by piece when its length is not known up front (JSON.stringify):
/// Latin-1 until a wide unit arrives, in the heap's string end, grown in place while nothing
/// else was allocated there, and handed over without a copy.
pub const StringBuffer = struct {
    heap: *Heap,
    data: []u8 = &.{},
    /// Units written.
    len: usize = 0,
    wide: bool = false,

    pub fn init(heap: *Heap) StringBuffer {
        return .{ .heap = heap };
    }

    fn unitBytes(b: *const StringBuffer) usize {
        return if (b.wide) 2 else 1;
    }

    fn ensure(b: *StringBuffer, extra: usize) Heap.Error!void {
        const needed = (b.len + extra) * b.unitBytes();
        if (needed <= b.data.len) return;
        if (b.len + extra > length_max) return error.OutOfMemory;
        const grow = @max(needed - b.data.len, @max(64, b.data.len));
        if (b.data.len > 0) {
            if (b.heap.extendBytes(b.data.ptr + b.data.len, grow)) |more| {
                b.data = b.data.ptr[0 .. b.data.len + more.len];
                return;
            }
        }
        const data = try b.heap.allocBytes(b.data.len + grow, 2);
        @memcpy(data[0 .. b.len * b.unitBytes()], b.data[0 .. b.len * b.unitBytes()]);
        b.data = data;
    }

    fn widen(b: *StringBuffer) Heap.Error!void {
        const data = try b.heap.allocBytes(@max(64, b.len * 4), 2);
        const units: [*]u16 = @ptrCast(@alignCast(data.ptr));
        for (b.data[0..b.len], 0..) |c, i| units[i] = c;
        b.data = data;
        b.wide = true;
    }

    pub inline fn appendUnit(b: *StringBuffer, u: u16) Heap.Error!void {
        if (!b.wide and u <= 0xFF and b.len < b.data.len) {
            b.data[b.len] = @intCast(u);
            b.len += 1;
            return;
        }
        return b.appendUnitSlow(u);
    }

    fn appendUnitSlow(b: *StringBuffer, u: u16) Heap.Error!void {
        if (u > 0xFF and !b.wide) try b.widen();
        try b.ensure(1);
        if (b.wide) {
            const units: [*]u16 = @ptrCast(@alignCast(b.data.ptr));
            units[b.len] = u;
        } else b.data[b.len] = @intCast(u);
        b.len += 1;
    }

    pub fn appendLatin1(b: *StringBuffer, text: []const u8) Heap.Error!void {
        if (!b.wide and b.len + text.len <= b.data.len) {
            @memcpy(b.data[b.len..][0..text.len], text);
            b.len += text.len;
            return;
        }
        try b.ensure(text.len);
        if (b.wide) {
            const units: [*]u16 = @ptrCast(@alignCast(b.data.ptr));
            for (text, 0..) |c, i| units[b.len + i] = c;
        } else @memcpy(b.data[b.len..][0..text.len], text);
        b.len += text.len;
    }

    pub fn appendString(b: *StringBuffer, s: *const String) Heap.Error!void {
        if (s.flags.wide and !b.wide) try b.widen();
        try b.ensure(s.len);
        if (b.wide) {
            const units: [*]u16 = @ptrCast(@alignCast(b.data.ptr));
            copyUnits(units[b.len .. b.len + s.len], s);
        } else @memcpy(b.data[b.len..][0..s.len], s.latin1());
        b.len += s.len;
    }

    pub fn appendSpaces(b: *StringBuffer, n: usize) Heap.Error!void {
        try b.ensure(n);
        for (0..n) |_| try b.appendUnit(' ');
    }

    pub fn finish(b: *StringBuffer) Heap.Error!*String {
        const used = b.len * b.unitBytes();
        if (b.data.len > used and @intFromPtr(b.data.ptr) + b.data.len == @intFromPtr(b.heap.region.ptr) + b.heap.low) {
            b.heap.low -= b.data.len - used;
        }
        if (b.wide) {
            const units: [*]const u16 = @ptrCast(@alignCast(b.data.ptr));
            for (units[0..b.len]) |u| {
                if (u > 0xFF) break;
            } else return fromUtf16(b.heap, units[0..b.len]);
            return newHeader(b.heap, b.data.ptr, @intCast(b.len), true);
        }
        if (b.len == 0) return empty;
        if (b.len == 1) return single(b.data[0]);
        return newHeader(b.heap, b.data.ptr, @intCast(b.len), false);
    }
};

/// Writes a string as UTF-8; a lone surrogate becomes U+FFFD, as node writes it.
pub fn writeUtf8(w: *std.Io.Writer, s: *const String) std.Io.Writer.Error!void {
    if (!s.flags.wide) {
        const text = s.latin1();
        var start: usize = 0;
        for (text, 0..) |c, i| {
            if (c < 0x80) continue;
            try w.writeAll(text[start..i]);
            try w.writeAll(&.{ 0xC0 | (c >> 6), 0x80 | (c & 0x3F) });
            start = i + 1;
        }
        try w.writeAll(text[start..]);
        return;
    }
    const units = s.utf16();
    var i: usize = 0;
    while (i < units.len) {
        const cp = codePointAt(units, i);
        i += if (cp >= 0x10000) 2 else 1;
        const scalar: u21 = if (cp >= 0xD800 and cp <= 0xDFFF) 0xFFFD else cp;
        var buf: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(scalar, &buf) catch unreachable; // A scalar value.
        try w.writeAll(buf[0..n]);
    }
}

/// The code point at `i`: a surrogate pair joined, or a lone unit as is.
pub fn codePointAt(units: []const u16, i: usize) u21 {
    const u = units[i];
    if (u >= 0xD800 and u <= 0xDBFF and i + 1 < units.len) {
        const v = units[i + 1];
        if (v >= 0xDC00 and v <= 0xDFFF) return 0x10000 + ((@as(u21, u) - 0xD800) << 10) + (v - 0xDC00);
    }
    return u;
}

/// The code point at unit `i` of a string of either width.
pub fn codePointAtString(s: *const String, i: usize) u21 {
    if (!s.flags.wide) return s.ptr[i];
    return codePointAt(s.utf16(), i);
}

test "string: canonical width, equality and hashing" {
    const testing = std.testing;
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    const a = try fromUtf8(&heap, "héllo");
    try testing.expect(!a.flags.wide);
    try testing.expectEqual(@as(u32, 5), a.len);
    const b = try fromUtf16(&heap, &.{ 'h', 0xE9, 'l', 'l', 'o' });
    try testing.expect(a.eql(b));
    try testing.expectEqual(a.hash(), b.hash());
    const c = try fromUtf8(&heap, "a😀b");
    try testing.expect(c.flags.wide);
    try testing.expectEqual(@as(u32, 4), c.len);
    try testing.expectEqual(@as(u16, 0xD83D), c.at(1));
    // Slicing off the wide units narrows.
    const d = try slice(&heap, c, 0, 1);
    try testing.expect(!d.flags.wide and d.eqlLatin1("a"));
}

test "string: concatenation appends in place when it can" {
    const testing = std.testing;
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    var s = try fromLatin1(&heap, "ab");
    const before = heap.low;
    var cd: String = .{ .ptr = "cd", .len = 2 };
    s = try concat(&heap, s, &cd);
    s = try concat(&heap, s, single('e'));
    try testing.expect(s.eqlLatin1("abcde"));
    try testing.expect(heap.low - before <= 5);
    const w = try concat(&heap, s, try fromUtf8(&heap, "€"));
    try testing.expect(w.flags.wide and w.len == 6);
    var out: [32]u8 = undefined;
    var writer: std.Io.Writer = .fixed(&out);
    try writeUtf8(&writer, w);
    try testing.expectEqualStrings("abcde€", writer.buffered());
}

test "string: the first difference of two byte strings, at every offset and length" {
    var a: [40]u8 = undefined;
    for (&a, 0..) |*c, i| c.* = @intCast('a' + i % 26);
    var b = a;
    try std.testing.expectEqual(@as(?usize, null), firstDifference(&a, &b));
    for (0..a.len) |i| {
        b[i] = '#';
        try std.testing.expectEqual(@as(?usize, i), firstDifference(&a, &b));
        try std.testing.expect(!bytesEqual(&a, &b));
        b[i] = a[i];
        try std.testing.expectEqual(@as(?usize, i), firstDifference(a[0..i], &b));
        try std.testing.expectEqual(@as(?usize, i), firstDifference(&a, b[0..i]));
    }
    try std.testing.expect(bytesEqual(&a, &b));
}

test "string: array indices" {
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    const cases = .{ .{ "0", 0 }, .{ "17", 17 }, .{ "4294967294", 4294967294 } };
    inline for (cases) |case| {
        const s = try fromLatin1(&heap, case[0]);
        try std.testing.expectEqual(@as(?u32, case[1]), s.arrayIndex());
    }
    for ([_][]const u8{ "", "01", "-1", "1.5", "4294967295", "a" }) |text| {
        const s = try fromLatin1(&heap, text);
        try std.testing.expectEqual(@as(?u32, null), s.arrayIndex());
    }
}
