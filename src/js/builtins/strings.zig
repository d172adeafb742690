//! String.prototype and String.fromCharCode/fromCodePoint. Positions and lengths are in UTF-16
//! code units, as in JavaScript; Latin-1 strings take byte-wise fast paths.
//!
//! Case mapping covers Latin-1, Latin Extended-A, Greek (with the final sigma), Cyrillic and
//! fullwidth Latin; localeCompare approximates ICU's root collation (white space, then
//! punctuation, digits, letters; accents and case only break ties), which is what node does
//! for the text handlers see.
const std = @import("std");
const assert = std.debug.assert;

const casing = @import("../casing.zig");
const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const regexps = @import("regexps.zig");
const arg = builtins.arg;

pub fn thisString(vm: *Vm, this: Value, comptime method: []const u8) Error!*String {
    if (this.isString()) return this.asString();
    if (this.isNullish()) return vm.throwMessage(.type_error, "String.prototype." ++ method ++ " called on null or undefined");
    return ops.toString(vm, this);
}

fn integerArg(vm: *Vm, v: Value) Error!f64 {
    return number.toIntegerOrInfinity(try ops.toNumber(vm, v));
}

fn clampIndex(x: f64, len: usize) usize {
    if (x <= 0) return 0;
    const l: f64 = @floatFromInt(len);
    return @intFromFloat(@min(x, l));
}

fn relativeIndex(x: f64, len: usize) usize {
    const l: f64 = @floatFromInt(len);
    if (x < 0) return @intFromFloat(@max(l + x, 0));
    return @intFromFloat(@min(x, l));
}

pub fn sub(vm: *Vm, s: *String, start: usize, end: usize) Error!*String {
    return string.slice(vm.heap, s, start, end) catch vm.outOfMemory();
}

pub fn at(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "at");
    const x = try integerArg(vm, arg(args, 0));
    const l: f64 = @floatFromInt(s.len);
    const k = if (x < 0) l + x else x;
    if (k < 0 or k >= l) return Value.undefined_value;
    return Value.string(try ops.charAt(vm, s, @intFromFloat(k)));
}

pub fn charAt(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "charAt");
    const x = try integerArg(vm, arg(args, 0));
    if (x < 0 or x >= @as(f64, @floatFromInt(s.len))) return Value.string(string.empty);
    return Value.string(try ops.charAt(vm, s, @intFromFloat(x)));
}

pub fn charCodeAt(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "charCodeAt");
    const x = try integerArg(vm, arg(args, 0));
    if (x < 0 or x >= @as(f64, @floatFromInt(s.len))) return Value.nan;
    return Value.number(@floatFromInt(s.at(@intFromFloat(x))));
}

pub fn codePointAt(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "codePointAt");
    const x = try integerArg(vm, arg(args, 0));
    if (x < 0 or x >= @as(f64, @floatFromInt(s.len))) return Value.undefined_value;
    return Value.number(@floatFromInt(string.codePointAtString(s, @intFromFloat(x))));
}

pub fn concat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    var s = try thisString(vm, this, "concat");
    for (args) |a| {
        const next = try ops.toString(vm, a);
        if (@as(usize, s.len) + next.len > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
        try vm.charge(meter.bytesCost(@as(usize, s.byteLen()) + next.byteLen()));
        s = string.concat(vm.heap, s, next) catch return vm.outOfMemory();
    }
    return Value.string(s);
}

// ---------------------------------------------------------------------------------------
// Searching: the positions holding the needle's first unit are found by a scalar search, and
// each is then compared with the needle. A search pays for each window of the haystack before
// scanning it (windows grow from 64 units to 64 Ki, so a search that finds its needle early
// pays for little more than it scanned) and for each comparison as it makes it, so a needle
// that matches almost everywhere ("xx...xy" in "xxxx...") costs what it does and can be
// stopped inside one call.

const window_first = 64;
const window_max = 64 * 1024;

/// Whether the needle's units are compared as bytes (same width) or one by one.
fn bulk(haystack: *const String, needle: *const String) bool {
    return haystack.flags.wide == needle.flags.wide;
}

/// What finding the next candidate and comparing the needle there costs.
fn compareCost(haystack: *const String, needle: *const String) u64 {
    const candidate = meter.elementsCost(10);
    if (bulk(haystack, needle)) return candidate + meter.bytesCost(needle.byteLen());
    return candidate + meter.unitsCost(needle.len);
}

/// Whether `needle` occurs in `haystack` at unit `i`.
fn matchesAt(haystack: *const String, needle: *const String, i: usize) bool {
    if (i + needle.len > haystack.len) return false;
    if (bulk(haystack, needle)) {
        const width: usize = if (haystack.flags.wide) 2 else 1;
        return string.bytesEqual(haystack.bytes()[i * width ..][0..needle.byteLen()], needle.bytes());
    }
    for (0..needle.len) |k| {
        if (haystack.at(i + k) != needle.at(k)) return false;
    }
    return true;
}

const Direction = enum { forward, backward };

/// The first (forward) or last (backward) position in [from, end) holding `unit`: a vector
/// scan forward, a unit at a time backward.
fn findUnit(haystack: *const String, unit: u16, from: usize, end: usize, comptime direction: Direction) ?usize {
    if (!haystack.flags.wide and unit > 0xFF) return null;
    const found = if (haystack.flags.wide) switch (direction) {
        .forward => std.mem.indexOfScalarPos(u16, haystack.utf16()[0..end], from, unit),
        .backward => std.mem.lastIndexOfScalar(u16, haystack.utf16()[from..end], unit),
    } else switch (direction) {
        .forward => std.mem.indexOfScalarPos(u8, haystack.latin1()[0..end], from, @intCast(unit)),
        .backward => std.mem.lastIndexOfScalar(u8, haystack.latin1()[from..end], @intCast(unit)),
    };
    const i = found orelse return null;
    return if (direction == .backward) from + i else i;
}

/// The first (forward) or last (backward) index in [from, end) where `needle` starts in
/// `haystack` (`end` at most `haystack.len - needle.len + 1`; the needle is not empty), each
/// comparison paid for.
fn findIn(vm: *Vm, haystack: *const String, needle: *const String, from: usize, end: usize, comptime direction: Direction) Error!?usize {
    assert(needle.len > 0 and end + needle.len <= haystack.len + 1);
    const cost = compareCost(haystack, needle);
    var low = from;
    var high = end;
    while (findUnit(haystack, needle.at(0), low, high, direction)) |candidate| {
        try vm.charge(cost);
        if (matchesAt(haystack, needle, candidate)) return candidate;
        switch (direction) {
            .forward => low = candidate + 1,
            .backward => high = candidate,
        }
    }
    return null;
}

/// The first index >= from where `needle` occurs in `haystack`, charged window by window.
pub fn indexOfUnits(vm: *Vm, haystack: *const String, needle: *const String, from: usize) Error!?usize {
    if (needle.len == 0) return if (from <= haystack.len) from else null;
    if (needle.len > haystack.len) return null;
    const end = haystack.len - needle.len + 1; // One past the last start position.
    var start = from;
    var window: usize = window_first;
    while (start < end) {
        const stop = @min(end, start + window);
        // A vector scan for the first unit.
        try vm.charge(meter.bytesCost((stop - start) * @as(usize, if (haystack.flags.wide) 2 else 1)) + 1);
        if (try findIn(vm, haystack, needle, start, stop, .forward)) |found| return found;
        start = stop;
        window = @min(window * 2, window_max);
    }
    return null;
}

/// The last index <= from where `needle` occurs in `haystack`, charged window by window.
fn lastIndexOfUnits(vm: *Vm, haystack: *const String, needle: *const String, from: usize) Error!?usize {
    if (needle.len > haystack.len) return null;
    if (needle.len == 0) return @min(from, @as(usize, haystack.len));
    var stop: usize = @min(from, @as(usize, haystack.len - needle.len)) + 1; // One past the last start position.
    var window: usize = window_first;
    while (stop > 0) {
        const start = stop -| window;
        // A scan for the first unit, a unit at a time.
        try vm.charge(meter.unitsCost(stop - start));
        if (try findIn(vm, haystack, needle, start, stop, .backward)) |found| return found;
        stop = start;
        window = @min(window * 2, window_max);
    }
    return null;
}

pub fn indexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "indexOf");
    const needle = try ops.toString(vm, arg(args, 0));
    const from = clampIndex(try integerArg(vm, arg(args, 1)), s.len);
    const found = (try indexOfUnits(vm, s, needle, from)) orelse return Value.number(-1);
    return Value.number(@floatFromInt(found));
}

pub fn lastIndexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "lastIndexOf");
    const needle = try ops.toString(vm, arg(args, 0));
    const position = try ops.toNumber(vm, arg(args, 1));
    const from = if (std.math.isNan(position)) s.len else clampIndex(number.toIntegerOrInfinity(position), s.len);
    const found = (try lastIndexOfUnits(vm, s, needle, from)) orelse return Value.number(-1);
    return Value.number(@floatFromInt(found));
}

pub fn includes(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "includes");
    const needle = try ops.toString(vm, arg(args, 0));
    const from = clampIndex(try integerArg(vm, arg(args, 1)), s.len);
    return Value.boolean((try indexOfUnits(vm, s, needle, from)) != null);
}

pub fn startsWith(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "startsWith");
    const needle = try ops.toString(vm, arg(args, 0));
    const from = clampIndex(try integerArg(vm, arg(args, 1)), s.len);
    try vm.charge(meter.unitsCost(needle.len));
    return Value.boolean(matchesAt(s, needle, from));
}

pub fn endsWith(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "endsWith");
    const needle = try ops.toString(vm, arg(args, 0));
    const end_arg = arg(args, 1);
    const end = if (end_arg.isUndefined()) s.len else clampIndex(try integerArg(vm, end_arg), s.len);
    if (needle.len > end) return Value.false_value;
    try vm.charge(meter.unitsCost(needle.len));
    return Value.boolean(matchesAt(s, needle, end - needle.len));
}

pub fn slice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "slice");
    const start = relativeIndex(try integerArg(vm, arg(args, 0)), s.len);
    const end_arg = arg(args, 1);
    const end = if (end_arg.isUndefined()) s.len else relativeIndex(try integerArg(vm, end_arg), s.len);
    if (end <= start) return Value.string(string.empty);
    return Value.string(try sub(vm, s, start, end));
}

pub fn substring(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "substring");
    var start = clampIndex(try integerArg(vm, arg(args, 0)), s.len);
    const end_arg = arg(args, 1);
    var end = if (end_arg.isUndefined()) s.len else clampIndex(try integerArg(vm, end_arg), s.len);
    if (start > end) std.mem.swap(usize, &start, &end);
    return Value.string(try sub(vm, s, start, end));
}

pub fn substr(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "substr");
    const start = relativeIndex(try integerArg(vm, arg(args, 0)), s.len);
    const length_arg = arg(args, 1);
    const count = if (length_arg.isUndefined()) s.len - start else clampIndex(try integerArg(vm, length_arg), s.len - start);
    return Value.string(try sub(vm, s, start, start + count));
}

pub fn split(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "split");
    const separator = arg(args, 0);
    if (separator.objectOf(.regexp)) |o| return regexps.splitWith(vm, o.as(object.RegExpObject), s, arg(args, 1));
    const limit_arg = arg(args, 1);
    const limit: u32 = if (limit_arg.isUndefined()) std.math.maxInt(u32) else number.toUint32(try ops.toNumber(vm, limit_arg));
    const result = try vm.newArray(0);
    if (limit == 0) return Value.obj(&result.object);
    if (separator.isUndefined()) {
        result.push(vm.heap, Value.string(s)) catch return vm.outOfMemory();
        return Value.obj(&result.object);
    }
    const sep = try ops.toString(vm, separator);
    if (sep.len == 0) {
        const count = @min(s.len, limit);
        try vm.charge(meter.elementsCost(count));
        result.reserve(vm.heap, count) catch return vm.outOfMemory();
        for (0..count) |i| result.items[i] = Value.string(try ops.charAt(vm, s, i));
        result.len = count;
        return Value.obj(&result.object);
    }
    var start: usize = 0;
    while (try indexOfUnits(vm, s, sep, start)) |found| {
        try vm.charge(meter.elementsCost(1));
        result.push(vm.heap, Value.string(try sub(vm, s, start, found))) catch return vm.outOfMemory();
        if (result.len >= limit) return Value.obj(&result.object);
        start = found + sep.len;
    }
    result.push(vm.heap, Value.string(try sub(vm, s, start, s.len))) catch return vm.outOfMemory();
    return Value.obj(&result.object);
}

fn trimWith(vm: *Vm, s: *String, front: bool, back: bool) Error!*String {
    var start: usize = 0;
    var end: usize = s.len;
    if (front) {
        while (start < end and number.isSpace(s.at(start))) start += 1;
    }
    if (back) {
        while (end > start and number.isSpace(s.at(end - 1))) end -= 1;
    }
    // The spaces scanned (at most the string, which the script made and paid for).
    try vm.charge(meter.unitsCost(start + (s.len - end)));
    return sub(vm, s, start, end);
}

pub fn trim(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try trimWith(vm, try thisString(vm, this, "trim"), true, true));
}

pub fn trimStart(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try trimWith(vm, try thisString(vm, this, "trimStart"), true, false));
}

pub fn trimEnd(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try trimWith(vm, try thisString(vm, this, "trimEnd"), false, true));
}

fn pad(vm: *Vm, this: Value, args: []const Value, at_start: bool) Error!Value {
    const s = if (at_start) try thisString(vm, this, "padStart") else try thisString(vm, this, "padEnd");
    const target_f = try integerArg(vm, arg(args, 0));
    if (target_f <= @as(f64, @floatFromInt(s.len))) return Value.string(s);
    const filler_arg = arg(args, 1);
    const filler = if (filler_arg.isUndefined()) string.single(' ') else try ops.toString(vm, filler_arg);
    if (filler.len == 0) return Value.string(s);
    if (target_f > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    const target: usize = @intFromFloat(target_f);
    const fill_len = target - s.len;
    try vm.charge(meter.unitsCost(2 * fill_len) + meter.bytesCost(s.byteLen()));
    var b = string.Builder.init(vm.heap, target, s.flags.wide or filler.flags.wide) catch return vm.outOfMemory();
    if (!at_start) b.appendString(s);
    for (0..fill_len) |i| b.append(filler.at(i % filler.len));
    if (at_start) b.appendString(s);
    return Value.string(b.finish() catch return vm.outOfMemory());
}

pub fn padStart(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return pad(vm, this, args, true);
}

pub fn padEnd(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return pad(vm, this, args, false);
}

pub fn repeat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "repeat");
    const given = try ops.toNumber(vm, arg(args, 0));
    const n = number.toIntegerOrInfinity(given);
    if (n < 0 or std.math.isInf(n)) {
        // V8 shows the count as a number, before it is truncated: -1.5, not -1.
        var buf: [number.format_bytes_max]u8 = undefined;
        return vm.throwFmt(.range_error, "Invalid count value: {s}", .{number.format(&buf, given)});
    }
    if (n == 0 or s.len == 0) return Value.string(string.empty);
    if (n * @as(f64, @floatFromInt(s.len)) > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    const count: usize = @intFromFloat(n);
    // Paid for before a byte is written: a copy of `s` per repetition.
    try vm.charge(meter.elementsCost(count) + meter.bytesCost(count * s.byteLen()));
    var b = string.Builder.init(vm.heap, count * s.len, s.flags.wide) catch return vm.outOfMemory();
    for (0..count) |_| b.appendString(s);
    return Value.string(b.finish() catch return vm.outOfMemory());
}

/// Expands `$$`, `$&`, `` $` `` and `$'` in a replacement string (a string pattern has no
/// capture groups, so `$1` stays as it is).
fn expandReplacement(vm: *Vm, out: *std.ArrayList(u16), gpa: std.mem.Allocator, template: *const String, s: *const String, position: usize, match_len: usize) Error!void {
    try vm.charge(meter.unitsCost(template.len));
    var i: usize = 0;
    while (i < template.len) : (i += 1) {
        const u = template.at(i);
        if (u == '$' and i + 1 < template.len) {
            const next = template.at(i + 1);
            switch (next) {
                '$' => {
                    appendUnit(vm, out, gpa, '$') catch return vm.outOfMemory();
                    i += 1;
                    continue;
                },
                '&' => {
                    try vm.charge(meter.unitsCost(match_len));
                    for (position..position + match_len) |k| appendUnit(vm, out, gpa, s.at(k)) catch return vm.outOfMemory();
                    i += 1;
                    continue;
                },
                '`' => {
                    try vm.charge(meter.unitsCost(position));
                    for (0..position) |k| appendUnit(vm, out, gpa, s.at(k)) catch return vm.outOfMemory();
                    i += 1;
                    continue;
                },
                '\'' => {
                    try vm.charge(meter.unitsCost(s.len - position - match_len));
                    for (position + match_len..s.len) |k| appendUnit(vm, out, gpa, s.at(k)) catch return vm.outOfMemory();
                    i += 1;
                    continue;
                },
                else => {},
            }
        }
        appendUnit(vm, out, gpa, u) catch return vm.outOfMemory();
    }
}

fn appendUnit(vm: *Vm, out: *std.ArrayList(u16), gpa: std.mem.Allocator, u: u16) error{OutOfMemory}!void {
    _ = vm;
    if (out.items.len >= string.length_max) return error.OutOfMemory;
    try out.append(gpa, u);
}

fn replaceImpl(vm: *Vm, this: Value, args: []const Value, all: bool) Error!Value {
    const s = if (all) try thisString(vm, this, "replaceAll") else try thisString(vm, this, "replace");
    if (arg(args, 0).objectOf(.regexp)) |o| {
        const re = o.as(object.RegExpObject);
        if (all and !re.program.flags.global) return vm.throwMessage(.type_error, "String.prototype.replaceAll called with a non-global RegExp argument");
        return regexps.replaceWith(vm, re, s, arg(args, 1));
    }
    const pattern = try ops.toString(vm, arg(args, 0));
    const replacement = arg(args, 1);
    const callable = ops.isCallable(replacement);
    const template = if (callable) string.empty else try ops.toString(vm, replacement);
    // The pieces are kept as strings (a replacement callback may allocate in the heap),
    // then joined in one allocation.
    var pieces: std.ArrayList(*String) = .empty;
    const heap_gpa = HeapAllocator.init(vm);
    const gpa = heap_gpa.allocator();
    var position: usize = 0;
    var last: usize = 0;
    var found_any = false;
    while (try indexOfUnits(vm, s, pattern, position)) |found| {
        found_any = true;
        pieces.append(gpa, try sub(vm, s, last, found)) catch return vm.outOfMemory();
        if (callable) {
            const match = try sub(vm, s, found, found + pattern.len);
            const result = try vm.call(replacement, Value.undefined_value, &.{ Value.string(match), Value.number(@floatFromInt(found)), Value.string(s) });
            pieces.append(gpa, try ops.toString(vm, result)) catch return vm.outOfMemory();
        } else {
            var units: std.ArrayList(u16) = .empty;
            try expandReplacement(vm, &units, gpa, template, s, found, pattern.len);
            pieces.append(gpa, string.fromUtf16(vm.heap, units.items) catch return vm.outOfMemory()) catch return vm.outOfMemory();
        }
        last = found + pattern.len;
        if (!all) break;
        position = if (pattern.len == 0) found + 1 else found + pattern.len;
        if (position > s.len) break;
    }
    if (!found_any) return Value.string(s);
    pieces.append(gpa, try sub(vm, s, last, s.len)) catch return vm.outOfMemory();
    var total: usize = 0;
    var wide = false;
    for (pieces.items) |p| {
        total += p.len;
        if (p.flags.wide) wide = true;
    }
    if (total > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    try vm.charge(meter.elementsCost(pieces.items.len) + meter.bytesCost(if (wide) total * 2 else total));
    var b = string.Builder.init(vm.heap, total, wide) catch return vm.outOfMemory();
    for (pieces.items) |p| b.appendString(p);
    return Value.string(b.finish() catch return vm.outOfMemory());
}

/// An allocator over the run's heap (objects end), for builtins' temporary lists.
pub const HeapAllocator = struct {
    vm: *Vm,

    pub fn init(vm: *Vm) HeapAllocator {
        return .{ .vm = vm };
    }

    pub fn allocator(self: *const HeapAllocator) std.mem.Allocator {
        return .{ .ptr = @constCast(self), .vtable = &vtable };
    }

    const vtable: std.mem.Allocator.VTable = .{
        .alloc = alloc,
        .resize = std.mem.Allocator.noResize,
        .remap = std.mem.Allocator.noRemap,
        .free = std.mem.Allocator.noFree,
    };

    fn alloc(ctx: *anyopaque, len: usize, alignment: std.mem.Alignment, ret_addr: usize) ?[*]u8 {
        _ = ret_addr;
        const self: *HeapAllocator = @ptrCast(@alignCast(ctx));
        const bytes = self.vm.heap.alloc(u8, len + alignment.toByteUnits()) catch return null;
        const address = std.mem.alignForward(usize, @intFromPtr(bytes.ptr), alignment.toByteUnits());
        return @ptrFromInt(address);
    }
};

pub fn replace(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return replaceImpl(vm, this, args, false);
}

pub fn replaceAll(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return replaceImpl(vm, this, args, true);
}

pub fn valueOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try thisString(vm, this, "valueOf"));
}

pub fn isWellFormed(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const s = try thisString(vm, this, "isWellFormed");
    if (!s.flags.wide) return Value.true_value;
    try vm.charge(meter.unitsCost(s.len));
    var i: usize = 0;
    const units = s.utf16();
    while (i < units.len) : (i += 1) {
        const u = units[i];
        if (u >= 0xDC00 and u <= 0xDFFF) return Value.false_value;
        if (u >= 0xD800 and u <= 0xDBFF) {
            if (i + 1 >= units.len or units[i + 1] < 0xDC00 or units[i + 1] > 0xDFFF) return Value.false_value;
            i += 1;
        }
    }
    return Value.true_value;
}

// ---------------------------------------------------------------------------------------
// Case mapping.

/// The simple lower-case mapping of a unit (for collation).
fn lowerUnit(u: u16) u16 {
    if (u < 0x80) return if (u >= 'A' and u <= 'Z') u + 32 else u;
    if (u >= 0xD800 and u <= 0xDFFF) return u;
    const m = casing.mapSimple(.lower, u);
    return if (m <= 0xFFFF) @intCast(m) else u;
}

fn upperUnit(u: u16) u16 {
    if (u < 0x80) return if (u >= 'a' and u <= 'z') u - 32 else u;
    if (u >= 0xD800 and u <= 0xDFFF) return u;
    const m = casing.mapSimple(.upper, u);
    return if (m <= 0xFFFF) @intCast(m) else u;
}

fn isCasedLetter(u: u16) bool {
    return lowerUnit(u) != u or upperUnit(u) != u;
}

/// The code point at unit `i` and its length in units (a lone surrogate is itself).
fn codePointIn(s: *const String, i: usize) struct { cp: u21, units: u8 } {
    const u = s.at(i);
    if (u >= 0xD800 and u <= 0xDBFF and i + 1 < s.len) {
        const v = s.at(i + 1);
        if (v >= 0xDC00 and v <= 0xDFFF) return .{ .cp = 0x10000 + ((@as(u21, u) - 0xD800) << 10) + (v - 0xDC00), .units = 2 };
    }
    return .{ .cp = u, .units = 1 };
}

/// The code point ending just before unit `i` (i > 0), and its length in units.
fn codePointBefore(s: *const String, i: usize) struct { cp: u21, units: u8 } {
    const v = s.at(i - 1);
    if (v >= 0xDC00 and v <= 0xDFFF and i >= 2) {
        const u = s.at(i - 2);
        if (u >= 0xD800 and u <= 0xDBFF) return .{ .cp = 0x10000 + ((@as(u21, u) - 0xD800) << 10) + (v - 0xDC00), .units = 2 };
    }
    return .{ .cp = v, .units = 1 };
}

/// Unicode's Final_Sigma: a cased letter before (past case-ignorables) and none after.
fn isFinalSigma(s: *const String, i: usize) bool {
    var j = i;
    const before = while (j > 0) {
        const p = codePointBefore(s, j);
        j -= p.units;
        if (casing.isCaseIgnorable(p.cp)) continue;
        break casing.isCased(p.cp);
    } else false;
    if (!before) return false;
    j = i + 1;
    while (j < s.len) {
        const n = codePointIn(s, j);
        j += n.units;
        if (casing.isCaseIgnorable(n.cp)) continue;
        return !casing.isCased(n.cp);
    }
    return true;
}

/// The mapping of the code point at unit `i`, as at most three units.
const Mapped = struct { units: [3]u16 = undefined, len: u8 = 0, consumed: u8 = 1 };

fn mapAt(s: *const String, i: usize, comptime direction: casing.Direction) Mapped {
    const u = s.at(i);
    var m: Mapped = .{};
    if (u < 0x80) {
        m.units[0] = if (direction == .upper) (if (u >= 'a' and u <= 'z') u - 32 else u) else (if (u >= 'A' and u <= 'Z') u + 32 else u);
        m.len = 1;
        return m;
    }
    const p = codePointIn(s, i);
    m.consumed = p.units;
    if (direction == .lower and p.cp == 0x3A3 and isFinalSigma(s, i)) {
        m.units[0] = 0x3C2;
        m.len = 1;
        return m;
    }
    if (casing.mapSpecial(direction, p.cp)) |units| {
        @memcpy(m.units[0..units.len], units);
        m.len = @intCast(units.len);
        return m;
    }
    const cp = casing.mapSimple(direction, p.cp);
    if (cp >= 0x10000) {
        m.units[0] = @intCast(0xD800 + ((cp - 0x10000) >> 10));
        m.units[1] = @intCast(0xDC00 + ((cp - 0x10000) & 0x3FF));
        m.len = 2;
    } else {
        m.units[0] = @intCast(cp);
        m.len = 1;
    }
    return m;
}

fn mapCase(vm: *Vm, s: *String, comptime direction: casing.Direction) Error!*String {
    // Up to two passes over the code points, each mapped through the tables.
    try vm.charge(meter.unitsCost(8 * @as(usize, s.len)));
    // First pass: the result's length and width, and whether anything changes.
    var len: usize = 0;
    var wide = false;
    var changed = false;
    var i: usize = 0;
    while (i < s.len) {
        const m = mapAt(s, i, direction);
        if (m.len != m.consumed) changed = true;
        for (m.units[0..m.len], 0..) |x, k| {
            if (x > 0xFF) wide = true;
            if (k < m.consumed and x != s.at(i + k)) changed = true;
        }
        len += m.len;
        i += m.consumed;
    }
    if (!changed) return s;
    if (len > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    var b = string.Builder.init(vm.heap, len, wide) catch return vm.outOfMemory();
    i = 0;
    while (i < s.len) {
        const m = mapAt(s, i, direction);
        for (m.units[0..m.len]) |x| b.append(x);
        i += m.consumed;
    }
    return b.finish() catch vm.outOfMemory();
}

pub fn toLowerCase(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try mapCase(vm, try thisString(vm, this, "toLowerCase"), .lower));
}

pub fn toUpperCase(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try mapCase(vm, try thisString(vm, this, "toUpperCase"), .upper));
}

// ---------------------------------------------------------------------------------------
// localeCompare.

fn baseLetter(u: u16) u16 {
    const lower = lowerUnit(u);
    return switch (lower) {
        0xE0...0xE5 => 'a',
        0xE7 => 'c',
        0xE8...0xEB => 'e',
        0xEC...0xEF => 'i',
        0xF1 => 'n',
        0xF2...0xF6, 0xF8 => 'o',
        0xF9...0xFC => 'u',
        0xFD, 0xFF => 'y',
        else => lower,
    };
}

/// Primary collation weight: white space, punctuation and symbols, digits, then letters.
fn primary(u: u16) u32 {
    if (number.isSpace(u)) return u;
    if (u < 0x80) {
        const c: u8 = @intCast(u);
        if (std.ascii.isDigit(c)) return 0x20000 + @as(u32, c);
        if (std.ascii.isAlphabetic(c)) return 0x30000 + @as(u32, baseLetter(u));
        return 0x10000 + @as(u32, c);
    }
    if (isCasedLetter(u) or (u >= 0xC0 and u <= 0xFF and u != 0xD7 and u != 0xF7)) return 0x30000 + @as(u32, baseLetter(u));
    return 0x40000 + @as(u32, u);
}

const Sensitivity = enum { base, accent, case, variant };

fn isAsciiDigit(u: u16) bool {
    return u >= '0' and u <= '9';
}

/// The primary comparison; with `numeric`, runs of digits compare by their value (ICU's
/// numeric collation: "file2" before "file10").
fn comparePrimary(a: *const String, b: *const String, numeric: bool) std.math.Order {
    var i: usize = 0;
    var j: usize = 0;
    while (i < a.len and j < b.len) {
        if (numeric and isAsciiDigit(a.at(i)) and isAsciiDigit(b.at(j))) {
            var i_end = i;
            while (i_end < a.len and isAsciiDigit(a.at(i_end))) i_end += 1;
            var j_end = j;
            while (j_end < b.len and isAsciiDigit(b.at(j_end))) j_end += 1;
            // Leading zeros do not count.
            while (i + 1 < i_end and a.at(i) == '0') i += 1;
            while (j + 1 < j_end and b.at(j) == '0') j += 1;
            if (i_end - i != j_end - j) return std.math.order(i_end - i, j_end - j);
            while (i < i_end) : ({
                i += 1;
                j += 1;
            }) {
                if (a.at(i) != b.at(j)) return std.math.order(a.at(i), b.at(j));
            }
            continue;
        }
        const x = primary(a.at(i));
        const y = primary(b.at(j));
        if (x != y) return std.math.order(x, y);
        i += 1;
        j += 1;
    }
    return std.math.order(a.len - i, b.len - j);
}

/// localeCompare(that, locales, options): the locale is ignored (root collation); the
/// options' `numeric` and `sensitivity` are honoured.
pub fn localeCompare(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = try thisString(vm, this, "localeCompare");
    const b = try ops.toString(vm, arg(args, 0));
    var numeric = false;
    var sensitivity: Sensitivity = .variant;
    const options = arg(args, 2);
    if (options.is(.object)) {
        numeric = ops.toBoolean(try ops.getField(vm, options, try vm.newLatin1("numeric")));
        const s = try ops.getField(vm, options, try vm.newLatin1("sensitivity"));
        if (!s.isUndefined()) {
            const text = try ops.toString(vm, s);
            sensitivity = if (text.eqlLatin1("base")) .base else if (text.eqlLatin1("accent")) .accent else if (text.eqlLatin1("case")) .case else if (text.eqlLatin1("variant")) .variant else return vm.throwFmt(.range_error, "Value {f} out of range for Intl.Collator options property sensitivity", .{ops.ValueText{ .vm = vm, .v = s }});
        }
    }
    // At most three passes over the shorter string (primary, accents, case), a unit's
    // collation weights looked up at each step.
    try vm.charge(meter.unitsCost(10 * @as(usize, @min(a.len, b.len))));
    // Primary: letters without accents or case.
    switch (comparePrimary(a, b, numeric)) {
        .lt => return Value.number(-1),
        .gt => return Value.number(1),
        .eq => {},
    }
    if (sensitivity == .base or a.len != b.len) return Value.number(0);
    const n = a.len;
    // Secondary: accents; tertiary: lower case before upper case.
    if (sensitivity != .case) {
        for (0..n) |i| {
            const x = a.at(i);
            const y = b.at(i);
            const ax = lowerUnit(x) != baseLetter(x);
            const ay = lowerUnit(y) != baseLetter(y);
            if (ax != ay) return Value.number(if (ay) -1 else 1);
        }
    }
    for (0..n) |i| {
        const x = a.at(i);
        const y = b.at(i);
        if (x == y) continue;
        const ux = lowerUnit(x) != x;
        const uy = lowerUnit(y) != y;
        if (ux != uy) {
            if (sensitivity == .accent) continue;
            return Value.number(if (uy) -1 else 1);
        }
        // Two different accents (or other variants) of one letter.
        if (sensitivity == .case) continue;
        if (sensitivity == .accent and lowerUnit(x) == lowerUnit(y)) continue;
        return Value.number(if (x < y) -1 else 1);
    }
    return Value.number(0);
}

// ---------------------------------------------------------------------------------------
// Statics.

pub fn fromCharCode(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try vm.charge(meter.elementsCost(args.len));
    var wide = false;
    var units_buf: [256]u16 = undefined;
    if (args.len > units_buf.len) {
        var b = string.Builder.init(vm.heap, args.len, true) catch return vm.outOfMemory();
        for (args) |a| b.append(@truncate(number.toUint32(try ops.toNumber(vm, a))));
        return Value.string(b.finish() catch return vm.outOfMemory());
    }
    for (args, 0..) |a, i| {
        const u: u16 = @truncate(number.toUint32(try ops.toNumber(vm, a)));
        units_buf[i] = u;
        if (u > 0xFF) wide = true;
    }
    return Value.string(string.fromUtf16(vm.heap, units_buf[0..args.len]) catch return vm.outOfMemory());
}

pub fn fromCodePoint(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try vm.charge(meter.elementsCost(args.len));
    var b = string.Builder.init(vm.heap, args.len * 2, true) catch return vm.outOfMemory();
    for (args) |a| {
        const x = try ops.toNumber(vm, a);
        if (x != @trunc(x) or x < 0 or x > 0x10FFFF or std.math.isNan(x)) {
            var buf: [number.format_bytes_max]u8 = undefined;
            return vm.throwFmt(.range_error, "Invalid code point {s}", .{number.format(&buf, x)});
        }
        const cp: u21 = @intFromFloat(x);
        if (cp >= 0x10000) {
            const v = cp - 0x10000;
            b.append(@intCast(0xD800 + (v >> 10)));
            b.append(@intCast(0xDC00 + (v & 0x3FF)));
        } else b.append(@intCast(cp));
    }
    return Value.string(b.finish() catch return vm.outOfMemory());
}
