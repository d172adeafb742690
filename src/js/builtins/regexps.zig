//! RegExp (the constructor, its prototype's methods and getters) and the String methods that
//! take one: match, matchAll, replace, replaceAll, split, search. Matching is regexp.zig's
//! Pike VM, which pays the run's meter for every thread step, so a match over a large input
//! is bounded by the budget and the deadline like any loop.
//!
//! Decision: the String methods and the Symbol.match/replace/split/matchAll/search methods
//! share one implementation each that works on positions, not on `lastIndex`: `lastIndex` is
//! read where the spec reads it and written only with the value the spec leaves in it, so a
//! RegExp built by a module's top level serves every request (its writes of 0 over 0 change
//! nothing), while `exec` and `test` on a global one are a write to module state, refused as
//! any other (docs/JS.md, "Request handlers"). The program and the matcher's scratch memory
//! are made once, with the object: a loop of `test` calls allocates nothing.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const Object = object.Object;
const RegExpObject = object.RegExpObject;
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const regexp = @import("../regexp.zig");
const strings = @import("strings.zig");
const array = @import("array.zig");
const arg = builtins.arg;
const thisString = strings.thisString;
const sub = strings.sub;

// ---------------------------------------------------------------------------------------
// Construction.

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const pattern = arg(args, 0);
    const flags = arg(args, 1);
    if (pattern.objectOf(.regexp)) |o| {
        const re = o.as(RegExpObject);
        const flags_text = if (flags.isUndefined()) try flagsString(vm, re.program.flags) else try ops.toString(vm, flags);
        return create(vm, re.pattern, flags_text);
    }
    const source = if (pattern.isUndefined()) string.empty else try ops.toString(vm, pattern);
    const flags_text = if (flags.isUndefined()) string.empty else try ops.toString(vm, flags);
    return create(vm, source, flags_text);
}

/// `RegExp(p)` without `new`: the RegExp itself when given one and no flags.
pub fn call(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (arg(args, 0).objectOf(.regexp) != null and arg(args, 1).isUndefined()) return arg(args, 0);
    return construct(vm, this, args);
}

/// A new RegExp: the pattern compiled, its scratch made, `lastIndex` 0.
pub fn create(vm: *Vm, pattern: *String, flags_text: *String) Error!Value {
    const flags = parseFlags(flags_text) orelse {
        return vm.throwFmt(.syntax_error, "Invalid flags supplied to RegExp constructor '{f}'", .{ops.StringFormat{ .s = flags_text }});
    };
    const compiled = try compiledFor(vm, pattern, flags_text, flags);
    const re = vm.heap.create(RegExpObject) catch return vm.outOfMemory();
    re.* = .{
        .object = .{ .kind = .regexp },
        .pattern = pattern,
        .source = try escapedSource(vm, pattern),
        .program = compiled.program,
        .scratch = compiled.scratch,
    };
    re.object.properties.define(vm.heap, names.string("lastIndex"), Value.number(0), .{
        .not_enumerable = true,
        .not_configurable = true,
    }) catch return vm.outOfMemory();
    return Value.obj(&re.object);
}

const Compiled = struct { program: *const regexp.Program, scratch: *regexp.Scratch };

/// The program and scratch for a pattern: from this run's cache when the same pattern and
/// flags strings (a literal's constants) were compiled already, else compiled now. Sharing
/// the scratch is safe: a match never runs script code, so no two matches overlap.
fn compiledFor(vm: *Vm, pattern: *String, flags_text: *String, flags: regexp.Flags) Error!Compiled {
    const entry = &vm.regexp_cache[(@intFromPtr(pattern) >> 4) % Vm.regexp_cache_len];
    if (entry.pattern == pattern and entry.flags == flags_text) {
        try vm.charge(meter.elementsCost(8)); // A lookup, and the object made below.
        return .{ .program = entry.program.?, .scratch = entry.scratch.? };
    }
    try vm.charge(meter.unitsCost(8 * @as(usize, pattern.len)));
    const heap_gpa = strings.HeapAllocator.init(vm);
    const gpa = heap_gpa.allocator();
    const units = try unitsOf(vm, pattern);
    var failure: regexp.Failure = .{ .message = "" };
    const program = regexp.compile(gpa, units, flags, &failure) catch |err| switch (err) {
        error.SyntaxError => return vm.throwFmt(.syntax_error, "Invalid regular expression: /{f}/{f}: {s}", .{
            ops.StringFormat{ .s = pattern }, ops.StringFormat{ .s = flags_text }, failure.message,
        }),
        error.OutOfMemory => return vm.outOfMemory(),
    };
    try vm.charge(meter.elementsCost(4 * program.insts.len) + meter.bytesCost(regexp.Scratch.bytesFor(program)));
    const scratch = regexp.Scratch.init(gpa, program) catch return vm.outOfMemory();
    entry.* = .{ .pattern = pattern, .flags = flags_text, .program = program, .scratch = scratch };
    return .{ .program = program, .scratch = scratch };
}

fn parseFlags(s: *const String) ?regexp.Flags {
    if (s.flags.wide) return null;
    return regexp.Flags.parse(s.latin1());
}

fn unitsOf(vm: *Vm, s: *const String) Error![]const u16 {
    if (s.flags.wide) return s.utf16();
    const units = vm.heap.alloc(u16, s.len) catch return vm.outOfMemory();
    for (s.latin1(), 0..) |c, i| units[i] = c;
    return units;
}

/// The pattern as `source` shows it: `/` escaped outside classes, line terminators as
/// escapes, and `(?:)` for the empty pattern, so that `/${source}/` reads back as itself.
fn escapedSource(vm: *Vm, pattern: *String) Error!*String {
    if (pattern.len == 0) return vm.newLatin1("(?:)");
    var b = string.StringBuffer.init(vm.heap);
    var in_class = false;
    var i: usize = 0;
    while (i < pattern.len) : (i += 1) {
        const u = pattern.at(i);
        switch (u) {
            '\\' => {
                b.appendUnit(u) catch return vm.outOfMemory();
                if (i + 1 < pattern.len) {
                    i += 1;
                    const next = pattern.at(i);
                    if (next == '\n') {
                        b.appendUnit('n') catch return vm.outOfMemory();
                    } else b.appendUnit(next) catch return vm.outOfMemory();
                }
                continue;
            },
            '[' => in_class = true,
            ']' => in_class = false,
            '/' => if (!in_class) {
                b.appendLatin1("\\/") catch return vm.outOfMemory();
                continue;
            },
            '\n' => {
                b.appendLatin1("\\n") catch return vm.outOfMemory();
                continue;
            },
            '\r' => {
                b.appendLatin1("\\r") catch return vm.outOfMemory();
                continue;
            },
            0x2028 => {
                b.appendLatin1("\\u2028") catch return vm.outOfMemory();
                continue;
            },
            0x2029 => {
                b.appendLatin1("\\u2029") catch return vm.outOfMemory();
                continue;
            },
            else => {},
        }
        b.appendUnit(u) catch return vm.outOfMemory();
    }
    return b.finish() catch vm.outOfMemory();
}

fn flagsString(vm: *Vm, flags: regexp.Flags) Error!*String {
    var buf: [regexp.Flags.letters.len]u8 = undefined;
    return vm.newLatin1(flags.write(&buf));
}

// ---------------------------------------------------------------------------------------
// The getters (kept as the object's own fields: operations.zig asks `field`).

/// Whether `key` is one of a RegExp's getters.
pub fn isField(key: *String) bool {
    const id = names.nameId(key) orelse return false;
    inline for (.{ "source", "flags", "global", "ignoreCase", "multiline", "dotAll", "unicode", "sticky", "hasIndices", "unicodeSets" }) |n| {
        if (id == comptime names.id(n)) return true;
    }
    return false;
}

pub fn field(vm: *Vm, re: *RegExpObject, key: *String) Error!?Value {
    const f = re.program.flags;
    if (names.is(key, "source")) return Value.string(re.source);
    if (names.is(key, "flags")) return Value.string(try flagsString(vm, f));
    if (names.is(key, "global")) return Value.boolean(f.global);
    if (names.is(key, "ignoreCase")) return Value.boolean(f.ignore_case);
    if (names.is(key, "multiline")) return Value.boolean(f.multiline);
    if (names.is(key, "dotAll")) return Value.boolean(f.dot_all);
    if (names.is(key, "unicode")) return Value.boolean(f.unicode and !f.unicode_sets);
    if (names.is(key, "unicodeSets")) return Value.boolean(f.unicode_sets);
    if (names.is(key, "sticky")) return Value.boolean(f.sticky);
    if (names.is(key, "hasIndices")) return Value.boolean(f.has_indices);
    return null;
}

/// `/source/flags`, as toString and console.log show a RegExp.
pub fn toStringOf(vm: *Vm, re: *RegExpObject) Error!*String {
    var buf: [regexp.Flags.letters.len]u8 = undefined;
    const flags = re.program.flags.write(&buf);
    var b = string.StringBuffer.init(vm.heap);
    b.appendUnit('/') catch return vm.outOfMemory();
    b.appendString(re.source) catch return vm.outOfMemory();
    b.appendUnit('/') catch return vm.outOfMemory();
    b.appendLatin1(flags) catch return vm.outOfMemory();
    return b.finish() catch vm.outOfMemory();
}

// ---------------------------------------------------------------------------------------
// Matching.

fn thisRegExp(vm: *Vm, this: Value, comptime method: []const u8) Error!*RegExpObject {
    if (this.objectOf(.regexp)) |o| return o.as(RegExpObject);
    return vm.throwFmt(.type_error, "Method RegExp.prototype." ++ method ++ " called on incompatible receiver {f}", .{ops.ShortFormat{ .vm = vm, .v = this }});
}

/// Pays the run's meter for each step of the matcher: a tick per live thread and one for
/// the position, checked at every position (so a match over any input stops with the run).
const MatchMeter = struct {
    vm: *Vm,

    pub fn step(m: MatchMeter, threads: usize) Error!void {
        try m.vm.charge(@as(u64, threads) + 1);
    }

    pub fn skipped(m: MatchMeter, units: usize, unit_bytes: usize) Error!void {
        try m.vm.charge(meter.bytesCost(units * unit_bytes));
    }
};

/// The capture slots of the first match at or after `start` (at `start` only when
/// anchored), copied into the heap; null if there is none.
fn matchAt(vm: *Vm, re: *RegExpObject, s: *const String, start: usize, anchored: bool) Error!?[]i32 {
    if (start > s.len) return null;
    const found = if (s.flags.wide)
        try regexp.exec(u16, re.program, re.scratch, s.utf16(), start, anchored, MatchMeter{ .vm = vm })
    else
        try regexp.exec(u8, re.program, re.scratch, s.latin1(), start, anchored, MatchMeter{ .vm = vm });
    const caps = found orelse return null;
    const copy = vm.heap.alloc(i32, caps.len) catch return vm.outOfMemory();
    @memcpy(copy, caps);
    return copy;
}

fn readLastIndex(vm: *Vm, re: *RegExpObject) Error!f64 {
    const v = try ops.getField(vm, Value.obj(&re.object), names.string("lastIndex"));
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, v));
    return @max(0, @min(x, 9007199254740991.0));
}

/// Writes `lastIndex`, unless it already holds that number (a module's RegExp keeps its 0).
fn writeLastIndex(vm: *Vm, re: *RegExpObject, x: usize) Error!void {
    const key = names.string("lastIndex");
    const v = Value.number(@floatFromInt(x));
    if (re.object.properties.find(key)) |i| {
        const current = re.object.properties.items[i];
        if (!current.flags.accessor and current.value.isNumber() and current.value.asNumber() == v.asNumber()) return;
    }
    return ops.setField(vm, Value.obj(&re.object), key, v);
}

/// RegExpBuiltinExec: a match from `lastIndex` for a global or sticky RegExp (which then
/// moves it), from 0 otherwise.
fn builtinExec(vm: *Vm, re: *RegExpObject, s: *const String) Error!?[]i32 {
    const flags = re.program.flags;
    const moves = flags.global or flags.sticky;
    const last = try readLastIndex(vm, re);
    const start: f64 = if (moves) last else 0;
    if (start > @as(f64, @floatFromInt(s.len))) {
        if (moves) try writeLastIndex(vm, re, 0);
        return null;
    }
    const caps = try matchAt(vm, re, s, @intFromFloat(start), flags.sticky) orelse {
        if (moves) try writeLastIndex(vm, re, 0);
        return null;
    };
    if (moves) try writeLastIndex(vm, re, @intCast(caps[1]));
    return caps;
}

/// The index after `i` for an empty match: past a surrogate pair in unicode mode.
fn advance(s: *const String, i: usize, unicode: bool) usize {
    if (unicode and i + 1 < s.len) {
        const u = s.at(i);
        const v = s.at(i + 1);
        if (u >= 0xD800 and u <= 0xDBFF and v >= 0xDC00 and v <= 0xDFFF) return i + 2;
    }
    return i + 1;
}

fn capture(vm: *Vm, s: *String, caps: []const i32, group: usize) Error!Value {
    const a = caps[2 * group];
    const b = caps[2 * group + 1];
    if (a < 0 or b < 0) return Value.undefined_value;
    try vm.charge(meter.bytesCost(@intCast(b - a)));
    return Value.string(string.slice(vm.heap, s, @intCast(a), @intCast(b)) catch return vm.outOfMemory());
}

/// The `groups` object of a match (null prototype), or undefined without named groups.
fn groupsObject(vm: *Vm, re: *RegExpObject, s: *String, caps: []const i32) Error!Value {
    const program = re.program;
    if (program.names.len == 0) return Value.undefined_value;
    const o = try vm.newObject(@intCast(program.names.len));
    o.proto = Value.null_value;
    for (program.names) |n| {
        const key = string.fromUtf16(vm.heap, n.name) catch return vm.outOfMemory();
        o.properties.put(vm.heap, key, try capture(vm, s, caps, n.group)) catch return vm.outOfMemory();
    }
    return Value.obj(o);
}

/// The array `exec` returns: the match and its groups, with index, input, groups (and
/// indices, with the d flag).
fn resultArray(vm: *Vm, re: *RegExpObject, s: *String, caps: []const i32) Error!Value {
    const count = re.program.group_count;
    const result = try vm.newArray(count);
    try vm.charge(meter.elementsCost(count));
    for (0..count) |g| result.push(vm.heap, try capture(vm, s, caps, g)) catch return vm.outOfMemory();
    const props = &result.object.properties;
    const heap = vm.heap;
    props.add(heap, names.string("index"), Value.number(@floatFromInt(caps[0]))) catch return vm.outOfMemory();
    props.add(heap, names.string("input"), Value.string(s)) catch return vm.outOfMemory();
    props.add(heap, names.string("groups"), try groupsObject(vm, re, s, caps)) catch return vm.outOfMemory();
    if (re.program.flags.has_indices) {
        const indices = try vm.newArray(count);
        for (0..count) |g| {
            const a = caps[2 * g];
            const b = caps[2 * g + 1];
            if (a < 0 or b < 0) {
                indices.push(heap, Value.undefined_value) catch return vm.outOfMemory();
                continue;
            }
            const pair = try vm.newArray(2);
            pair.push(heap, Value.number(@floatFromInt(a))) catch return vm.outOfMemory();
            pair.push(heap, Value.number(@floatFromInt(b))) catch return vm.outOfMemory();
            indices.push(heap, Value.obj(&pair.object)) catch return vm.outOfMemory();
        }
        var groups = Value.undefined_value;
        if (re.program.names.len > 0) {
            const o = try vm.newObject(@intCast(re.program.names.len));
            o.proto = Value.null_value;
            for (re.program.names) |n| {
                const key = string.fromUtf16(heap, n.name) catch return vm.outOfMemory();
                o.properties.put(heap, key, indices.items[n.group]) catch return vm.outOfMemory();
            }
            groups = Value.obj(o);
        }
        indices.object.properties.add(heap, names.string("groups"), groups) catch return vm.outOfMemory();
        props.add(heap, names.string("indices"), Value.obj(&indices.object)) catch return vm.outOfMemory();
    }
    return Value.obj(&result.object);
}

pub fn exec(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "exec");
    const s = try ops.toString(vm, arg(args, 0));
    const caps = try builtinExec(vm, re, s) orelse return Value.null_value;
    return resultArray(vm, re, s, caps);
}

pub fn testMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "test");
    const s = try ops.toString(vm, arg(args, 0));
    return Value.boolean(try builtinExec(vm, re, s) != null);
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const re = try thisRegExp(vm, this, "toString");
    return Value.string(try toStringOf(vm, re));
}

/// Every match of a global RegExp, from 0, as the loops of match and replace find them;
/// `lastIndex` is left at 0, as their last (failing) exec leaves it.
fn allMatches(vm: *Vm, re: *RegExpObject, s: *const String, list: *std.ArrayList([]i32), gpa: std.mem.Allocator) Error!void {
    try writeLastIndex(vm, re, 0);
    const unicode = re.program.flags.unicode;
    var pos: usize = 0;
    while (pos <= s.len) {
        const caps = try matchAt(vm, re, s, pos, re.program.flags.sticky) orelse break;
        list.append(gpa, caps) catch return vm.outOfMemory();
        const end: usize = @intCast(caps[1]);
        pos = if (end == @as(usize, @intCast(caps[0]))) advance(s, end, unicode) else end;
    }
}

fn toRegExp(vm: *Vm, v: Value, flags: []const u8) Error!*RegExpObject {
    const pattern = if (v.isUndefined()) string.empty else try ops.toString(vm, v);
    const made = try create(vm, pattern, try vm.newLatin1(flags));
    return made.asObject().as(RegExpObject);
}

/// String.prototype.match with a RegExp (or what becomes one).
pub fn matchWith(vm: *Vm, re: *RegExpObject, s: *String) Error!Value {
    if (!re.program.flags.global) {
        const caps = try builtinExec(vm, re, s) orelse return Value.null_value;
        return resultArray(vm, re, s, caps);
    }
    const heap_gpa = strings.HeapAllocator.init(vm);
    const gpa = heap_gpa.allocator();
    var list: std.ArrayList([]i32) = .empty;
    try allMatches(vm, re, s, &list, gpa);
    if (list.items.len == 0) return Value.null_value;
    const result = try vm.newArray(list.items.len);
    for (list.items) |caps| result.push(vm.heap, try capture(vm, s, caps, 0)) catch return vm.outOfMemory();
    return Value.obj(&result.object);
}

pub fn match(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "match");
    const pattern = arg(args, 0);
    const re = if (pattern.objectOf(.regexp)) |o| o.as(RegExpObject) else try toRegExp(vm, pattern, "");
    return matchWith(vm, re, s);
}

pub fn symbolMatch(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "[Symbol.match]");
    return matchWith(vm, re, try ops.toString(vm, arg(args, 0)));
}

/// matchAll: every match's exec array, from `lastIndex`; made at once and handed out by an
/// array iterator (node's iterator is lazy; what it yields is the same).
pub fn matchAllWith(vm: *Vm, re: *RegExpObject, s: *String) Error!Value {
    const result = try vm.newArray(0);
    const unicode = re.program.flags.unicode;
    const last = try readLastIndex(vm, re);
    if (last <= @as(f64, @floatFromInt(s.len))) {
        var pos: usize = @intFromFloat(last);
        while (pos <= s.len) {
            const caps = try matchAt(vm, re, s, pos, re.program.flags.sticky) orelse break;
            result.push(vm.heap, try resultArray(vm, re, s, caps)) catch return vm.outOfMemory();
            if (!re.program.flags.global) break;
            const end: usize = @intCast(caps[1]);
            pos = if (end == @as(usize, @intCast(caps[0]))) advance(s, end, unicode) else end;
        }
    }
    return array.values(vm, Value.obj(&result.object), &.{});
}

pub fn matchAll(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "matchAll");
    const pattern = arg(args, 0);
    if (pattern.objectOf(.regexp)) |o| {
        const re = o.as(RegExpObject);
        if (!re.program.flags.global) return vm.throwMessage(.type_error, "String.prototype.matchAll called with a non-global RegExp argument");
        return matchAllWith(vm, re, s);
    }
    return matchAllWith(vm, try toRegExp(vm, pattern, "g"), s);
}

pub fn symbolMatchAll(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "[Symbol.matchAll]");
    return matchAllWith(vm, re, try ops.toString(vm, arg(args, 0)));
}

pub fn searchWith(vm: *Vm, re: *RegExpObject, s: *String) Error!Value {
    const caps = try matchAt(vm, re, s, 0, re.program.flags.sticky) orelse return Value.number(-1);
    return Value.number(@floatFromInt(caps[0]));
}

pub fn search(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const s = try thisString(vm, this, "search");
    const pattern = arg(args, 0);
    const re = if (pattern.objectOf(.regexp)) |o| o.as(RegExpObject) else try toRegExp(vm, pattern, "");
    return searchWith(vm, re, s);
}

pub fn symbolSearch(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "[Symbol.search]");
    return searchWith(vm, re, try ops.toString(vm, arg(args, 0)));
}

// ---------------------------------------------------------------------------------------
// replace and split.

/// String.prototype.replace and replaceAll with a RegExp: every match of a global one,
/// else the one exec finds.
pub fn replaceWith(vm: *Vm, re: *RegExpObject, s: *String, replacement: Value) Error!Value {
    const heap_gpa = strings.HeapAllocator.init(vm);
    const gpa = heap_gpa.allocator();
    const callable = ops.isCallable(replacement);
    const template = if (callable) string.empty else try ops.toString(vm, replacement);
    var list: std.ArrayList([]i32) = .empty;
    if (re.program.flags.global) {
        try allMatches(vm, re, s, &list, gpa);
    } else if (try builtinExec(vm, re, s)) |caps| {
        list.append(gpa, caps) catch return vm.outOfMemory();
    }
    if (list.items.len == 0) return Value.string(s);
    var out = string.StringBuffer.init(vm.heap);
    var next: usize = 0;
    const group_count = re.program.group_count;
    for (list.items) |caps| {
        const start: usize = @intCast(caps[0]);
        const end: usize = @intCast(caps[1]);
        const piece = if (callable) blk: {
            var call_args: std.ArrayList(Value) = .empty;
            for (0..group_count) |g| call_args.append(gpa, try capture(vm, s, caps, g)) catch return vm.outOfMemory();
            call_args.append(gpa, Value.number(@floatFromInt(start))) catch return vm.outOfMemory();
            call_args.append(gpa, Value.string(s)) catch return vm.outOfMemory();
            if (re.program.names.len > 0) call_args.append(gpa, try groupsObject(vm, re, s, caps)) catch return vm.outOfMemory();
            const result = try vm.call(replacement, Value.undefined_value, call_args.items);
            break :blk try ops.toString(vm, result);
        } else try substitution(vm, re, s, caps, template);
        // The text between matches, then the replacement (the out buffer is built after
        // the callback, which may allocate: StringBuffer copies when it cannot grow in place).
        if (start >= next) {
            try vm.charge(meter.bytesCost(start - next));
            out.appendString(try sub(vm, s, next, start)) catch return vm.outOfMemory();
            out.appendString(piece) catch return vm.outOfMemory();
            next = end;
        }
    }
    try vm.charge(meter.bytesCost(s.len - next));
    out.appendString(try sub(vm, s, next, s.len)) catch return vm.outOfMemory();
    if (out.len > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    return Value.string(out.finish() catch return vm.outOfMemory());
}

/// GetSubstitution: `$$`, `$&`, `` $` ``, `$'`, `$n` and `$nn`, `$<name>`.
fn substitution(vm: *Vm, re: *RegExpObject, s: *String, caps: []const i32, template: *const String) Error!*String {
    try vm.charge(meter.unitsCost(template.len));
    var out = string.StringBuffer.init(vm.heap);
    const m = re.program.group_count - 1;
    const start: usize = @intCast(caps[0]);
    const end: usize = @intCast(caps[1]);
    var i: usize = 0;
    while (i < template.len) : (i += 1) {
        const u = template.at(i);
        if (u != '$' or i + 1 >= template.len) {
            out.appendUnit(u) catch return vm.outOfMemory();
            continue;
        }
        const next = template.at(i + 1);
        switch (next) {
            '$' => {
                out.appendUnit('$') catch return vm.outOfMemory();
                i += 1;
            },
            '&' => {
                try appendSlice(vm, &out, s, start, end);
                i += 1;
            },
            '`' => {
                try appendSlice(vm, &out, s, 0, start);
                i += 1;
            },
            '\'' => {
                try appendSlice(vm, &out, s, @min(end, s.len), s.len);
                i += 1;
            },
            '0'...'9' => {
                const d1: usize = next - '0';
                var group: ?usize = null;
                var used: usize = 1;
                if (i + 2 < template.len and template.at(i + 2) >= '0' and template.at(i + 2) <= '9') {
                    const d2: usize = d1 * 10 + (template.at(i + 2) - '0');
                    if (d2 >= 1 and d2 <= m) {
                        group = d2;
                        used = 2;
                    }
                }
                if (group == null and d1 >= 1 and d1 <= m) group = d1;
                if (group) |g| {
                    const a = caps[2 * g];
                    const b = caps[2 * g + 1];
                    if (a >= 0 and b >= 0) try appendSlice(vm, &out, s, @intCast(a), @intCast(b));
                    i += used;
                } else out.appendUnit('$') catch return vm.outOfMemory();
            },
            '<' => {
                if (re.program.names.len == 0) {
                    out.appendUnit('$') catch return vm.outOfMemory();
                    continue;
                }
                var close = i + 2;
                while (close < template.len and template.at(close) != '>') close += 1;
                if (close >= template.len) {
                    out.appendUnit('$') catch return vm.outOfMemory();
                    continue;
                }
                for (re.program.names) |n| {
                    if (n.name.len != close - (i + 2)) continue;
                    var same = true;
                    for (n.name, 0..) |c, k| {
                        if (template.at(i + 2 + k) != c) {
                            same = false;
                            break;
                        }
                    }
                    if (!same) continue;
                    const a = caps[2 * n.group];
                    const b = caps[2 * n.group + 1];
                    if (a >= 0 and b >= 0) try appendSlice(vm, &out, s, @intCast(a), @intCast(b));
                    break;
                }
                i = close;
            },
            else => out.appendUnit('$') catch return vm.outOfMemory(),
        }
    }
    return out.finish() catch vm.outOfMemory();
}

fn appendSlice(vm: *Vm, out: *string.StringBuffer, s: *String, a: usize, b: usize) Error!void {
    if (b <= a) return;
    try vm.charge(meter.unitsCost(b - a));
    for (a..b) |k| out.appendUnit(s.at(k)) catch return vm.outOfMemory();
}

pub fn symbolReplace(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "[Symbol.replace]");
    return replaceWith(vm, re, try ops.toString(vm, arg(args, 0)), arg(args, 1));
}

/// String.prototype.split with a RegExp: the pieces between matches, each match's groups
/// after its piece; an empty match never splits at the start of a piece.
pub fn splitWith(vm: *Vm, re: *RegExpObject, s: *String, limit_arg: Value) Error!Value {
    const limit: u32 = if (limit_arg.isUndefined()) std.math.maxInt(u32) else number.toUint32(try ops.toNumber(vm, limit_arg));
    const result = try vm.newArray(0);
    if (limit == 0) return Value.obj(&result.object);
    const heap = vm.heap;
    const size = s.len;
    if (size == 0) {
        if (try matchAt(vm, re, s, 0, true) == null) result.push(heap, Value.string(s)) catch return vm.outOfMemory();
        return Value.obj(&result.object);
    }
    const unicode = re.program.flags.unicode;
    var p: usize = 0;
    var q: usize = 0;
    while (q < size) {
        const caps = try matchAt(vm, re, s, q, false) orelse break;
        const m: usize = @intCast(caps[0]);
        if (m >= size) break;
        const e: usize = @min(@as(usize, @intCast(caps[1])), size);
        if (e == p) {
            q = advance(s, m, unicode);
            continue;
        }
        try vm.charge(meter.elementsCost(1));
        result.push(heap, Value.string(try sub(vm, s, p, m))) catch return vm.outOfMemory();
        if (result.len >= limit) return Value.obj(&result.object);
        p = e;
        for (1..re.program.group_count) |g| {
            result.push(heap, try capture(vm, s, caps, g)) catch return vm.outOfMemory();
            if (result.len >= limit) return Value.obj(&result.object);
        }
        q = p;
    }
    result.push(heap, Value.string(try sub(vm, s, p, size))) catch return vm.outOfMemory();
    return Value.obj(&result.object);
}

pub fn symbolSplit(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const re = try thisRegExp(vm, this, "[Symbol.split]");
    return splitWith(vm, re, try ops.toString(vm, arg(args, 0)), arg(args, 1));
}
