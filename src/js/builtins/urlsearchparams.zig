//! `URLSearchParams`, as the URL standard defines it and node 20 implements it: an ordered
//! list of name-value pairs, parsed from and serialized to
//! `application/x-www-form-urlencoded` (`a=1&b=x+y`), with `append`, `delete`, `get`,
//! `getAll`, `has`, `set`, `sort`, `toString`, `forEach`, `keys`, `values`, `entries`,
//! iteration and `size`.
//!
//! Decision: like a Headers (headers.zig), a URLSearchParams is a Map-kind object whose
//! prototype link is `URLSearchParams.prototype`, so its storage is no property a script can
//! see; its one entry holds the pairs as a flat array (name, value, name, value...), because
//! the order of pairs across names and repeated names both matter. Strings are made
//! well-formed (a lone surrogate becomes U+FFFD) on the way in, as WebIDL's USVString does,
//! and percent-decoded bytes are read as UTF-8 by the Encoding standard's decoder (one U+FFFD
//! per maximal invalid subsequence), so parsing and serializing agree with node's byte for
//! byte.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const MapObject = object.MapObject;
const ops = @import("../operations.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;

/// The key of the Map entry that holds the pairs.
const list_key = Value.number(0);
/// The key of the entry that holds the URL whose `searchParams` this is, if any (url.zig).
const url_key = Value.number(1);

pub fn isSearchParams(o: *const object.Object) bool {
    return o.kind == .map and o.proto.eqlBits(Value.builtin(builtins.builtinId("%URLSearchParams.prototype%")));
}

/// The flat list of pairs of a URLSearchParams.
pub fn listOf(o: *object.Object) *object.Array {
    assert(isSearchParams(o));
    return object.mapOf(o).get(list_key).?.objectOf(.array).?.as(object.Array);
}

/// Its `size`: the number of pairs.
pub fn size(o: *object.Object) u32 {
    return @intCast(listOf(o).len / 2);
}

fn thisList(vm: *Vm, this: Value) Error!*object.Array {
    if (this.is(.object) and isSearchParams(this.asObject())) return listOf(this.asObject());
    return vm.throwMessage(.type_error, "Value of \"this\" must be of type URLSearchParams");
}

fn mutableList(vm: *Vm, this: Value) Error!*object.Array {
    const list = try thisList(vm, this);
    try ops.checkModuleWrite(vm, list);
    return list;
}

/// Makes `params` the `searchParams` of a URL: each change is written back to its query.
pub fn linkTo(vm: *Vm, params: *object.Object, url: *object.Object) Error!void {
    object.mapOf(params).put(vm.heap, url_key, Value.obj(url)) catch return vm.outOfMemory();
}

/// The pairs become those of `query` (a URL's, already percent-encoded ASCII).
pub fn replaceWith(vm: *Vm, params: *object.Object, query: []const u8) Error!void {
    const list = listOf(params);
    list.len = 0;
    const text = try vm.newLatin1(query);
    try parseInto(vm, list, text, 0);
}

/// After a change, the linked URL's query follows.
fn changed(vm: *Vm, this: Value) Error!void {
    const url = object.mapOf(this.asObject()).get(url_key) orelse return;
    const serialized = try toStringMethod(vm, this, &.{});
    try builtins.url.paramsChanged(vm, url.asObject(), serialized.asString());
}

fn requireName(vm: *Vm, args: []const Value) Error!void {
    if (args.len == 0) return vm.throwMessage(.type_error, "The \"name\" argument must be specified");
}

fn requireNameAndValue(vm: *Vm, args: []const Value) Error!void {
    if (args.len < 2) return vm.throwMessage(.type_error, "The \"name\" and \"value\" arguments must be specified");
}

/// WebIDL's USVString: the string of the value with each lone surrogate replaced by U+FFFD.
pub fn toUsv(vm: *Vm, v: Value) Error!*String {
    const s = try ops.toString(vm, v);
    if (!s.flags.wide) return s;
    try vm.charge(meter.unitsCost(s.len));
    const units = s.utf16();
    var lone = false;
    var i: usize = 0;
    while (i < units.len) : (i += 1) {
        const cp = string.codePointAt(units, i);
        if (cp >= 0x10000) {
            i += 1;
        } else if (cp >= 0xD800 and cp <= 0xDFFF) {
            lone = true;
            break;
        }
    }
    if (!lone) return s;
    var out = string.Builder.init(vm.heap, units.len, true) catch return vm.outOfMemory();
    i = 0;
    while (i < units.len) : (i += 1) {
        const cp = string.codePointAt(units, i);
        if (cp >= 0x10000) {
            out.append(units[i]);
            out.append(units[i + 1]);
            i += 1;
        } else if (cp >= 0xD800 and cp <= 0xDFFF) {
            out.append(0xFFFD);
        } else {
            out.append(units[i]);
        }
    }
    return out.finish() catch vm.outOfMemory();
}

// ---------------------------------------------------------------------------------------
// Construction and parsing.

pub fn requireNew(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Class constructor URLSearchParams cannot be invoked without 'new'");
}

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const m = object.newMap(vm.heap, .map) catch return vm.outOfMemory();
    m.object.proto = Value.builtin(builtins.builtinId("%URLSearchParams.prototype%"));
    const list = try vm.newArray(0);
    m.put(vm.heap, list_key, Value.obj(&list.object)) catch return vm.outOfMemory();
    const init = arg(args, 0);
    if (init.isUndefined()) return Value.obj(&m.object);
    if (init.is(.object)) {
        if (ops.isCallable(try ops.iteratorMethod(vm, init))) {
            try fillFromPairs(vm, list, init);
        } else {
            try fillFromRecord(vm, list, init.asObject());
        }
        return Value.obj(&m.object);
    }
    const text = try toUsv(vm, init);
    const start: usize = if (text.len > 0 and text.at(0) == '?') 1 else 0;
    try parseInto(vm, list, text, start);
    return Value.obj(&m.object);
}

fn push(vm: *Vm, list: *object.Array, name: *String, value: *String) Error!void {
    list.push(vm.heap, Value.string(name)) catch return vm.outOfMemory();
    list.push(vm.heap, Value.string(value)) catch return vm.outOfMemory();
}

fn fillFromPairs(vm: *Vm, list: *object.Array, init: Value) Error!void {
    var source = try ops.iterStart(vm, init, .{});
    var cursor = Value.number(0);
    while (try ops.iterNext(vm, &source, &cursor)) |pair| {
        try vm.charge(meter.elementsCost(1));
        if (!pair.is(.object) or !ops.isCallable(try ops.iteratorMethod(vm, pair))) {
            return vm.throwMessage(.type_error, "Each query pair must be an iterable [name, value] tuple");
        }
        var items: [2]Value = undefined;
        const count = try builtins.headers.pairItems(vm, pair, &items);
        if (count != 2) return vm.throwMessage(.type_error, "Each query pair must be an iterable [name, value] tuple");
        try push(vm, list, try toUsv(vm, items[0]), try toUsv(vm, items[1]));
    }
}

fn fillFromRecord(vm: *Vm, list: *object.Array, o: *object.Object) Error!void {
    const own_keys = try ops.ownKeysArray(vm, Value.obj(o));
    for (own_keys.slice()) |key| {
        try vm.charge(meter.elementsCost(1));
        const v = try ops.getField(vm, Value.obj(o), key.asString());
        try push(vm, list, try toUsv(vm, key), try toUsv(vm, v));
    }
}

/// The urlencoded parser: `&`-separated sequences, each split at its first `=`, `+` read as
/// a space, percent-escapes decoded, the bytes read as UTF-8.
fn parseInto(vm: *Vm, list: *object.Array, text: *const String, start: usize) Error!void {
    try vm.charge(meter.unitsCost(text.len) * 4);
    // The UTF-8 of a unit is at most 3 bytes (a surrogate pair's 4 are for two units).
    const scratch = vm.heap.allocBytes(@as(usize, text.len) * 3, 1) catch return vm.outOfMemory();
    var i = start;
    while (i < text.len) {
        var end = i;
        while (end < text.len and text.at(end) != '&') end += 1;
        if (end > i) {
            var eq = i;
            while (eq < end and text.at(eq) != '=') eq += 1;
            const name = try decodeComponent(vm, text, i, eq, scratch);
            const value = try decodeComponent(vm, text, @min(eq + 1, end), end, scratch);
            try push(vm, list, name, value);
        }
        i = end + 1;
    }
}

/// Units [start, end) of a well-formed string, as UTF-8 with `+` as a space and `%XX`
/// decoded, then read back by the Encoding standard's UTF-8 decoder.
fn decodeComponent(vm: *Vm, text: *const String, start: usize, end: usize, scratch: []u8) Error!*String {
    var n: usize = 0;
    var i = start;
    while (i < end) : (i += 1) {
        const u = text.at(i);
        if (u == '+') {
            scratch[n] = ' ';
            n += 1;
        } else if (u == '%' and i + 2 < end and isHex(text.at(i + 1)) and isHex(text.at(i + 2))) {
            scratch[n] = (hexValue(text.at(i + 1)) << 4) | hexValue(text.at(i + 2));
            n += 1;
            i += 2;
        } else {
            const cp = string.codePointAtString(text, i);
            if (cp >= 0x10000) i += 1;
            var utf8: [4]u8 = undefined;
            const len = std.unicode.utf8Encode(cp, &utf8) catch unreachable; // Well-formed.
            @memcpy(scratch[n..][0..len], utf8[0..len]);
            n += len;
        }
    }
    return decodeUtf8(vm, scratch[0..n]);
}

fn isHex(u: u16) bool {
    return (u >= '0' and u <= '9') or (u >= 'a' and u <= 'f') or (u >= 'A' and u <= 'F');
}

fn hexValue(u: u16) u8 {
    return std.fmt.charToDigit(@intCast(u), 16) catch unreachable; // Checked by isHex.
}

/// The Encoding standard's UTF-8 decode: each maximal subpart of an ill-formed sequence is
/// one U+FFFD.
pub fn decodeUtf8(vm: *Vm, bytes: []const u8) Error!*String {
    var out = string.Builder.init(vm.heap, bytes.len, true) catch return vm.outOfMemory();
    var i: usize = 0;
    while (i < bytes.len) {
        const decoded = decodeOne(bytes[i..]);
        i += decoded.len;
        if (decoded.cp >= 0x10000) {
            const v = decoded.cp - 0x10000;
            out.append(@intCast(0xD800 + (v >> 10)));
            out.append(@intCast(0xDC00 + (v & 0x3FF)));
        } else {
            out.append(@intCast(decoded.cp));
        }
    }
    return out.finish() catch vm.outOfMemory();
}

const Decoded = struct { cp: u21, len: usize };

/// One code point from the front of `bytes` (not empty), or U+FFFD and the length of the
/// maximal subpart that could not become one.
fn decodeOne(bytes: []const u8) Decoded {
    const first = bytes[0];
    if (first < 0x80) return .{ .cp = first, .len = 1 };
    var needed: usize = 0;
    var lower: u8 = 0x80;
    var upper: u8 = 0xBF;
    var cp: u21 = 0;
    switch (first) {
        0xC2...0xDF => {
            needed = 1;
            cp = first & 0x1F;
        },
        0xE0...0xEF => {
            if (first == 0xE0) lower = 0xA0;
            if (first == 0xED) upper = 0x9F;
            needed = 2;
            cp = first & 0x0F;
        },
        0xF0...0xF4 => {
            if (first == 0xF0) lower = 0x90;
            if (first == 0xF4) upper = 0x8F;
            needed = 3;
            cp = first & 0x07;
        },
        else => return .{ .cp = 0xFFFD, .len = 1 },
    }
    var seen: usize = 1;
    while (seen <= needed) : (seen += 1) {
        if (seen >= bytes.len) return .{ .cp = 0xFFFD, .len = seen };
        const b = bytes[seen];
        if (b < lower or b > upper) return .{ .cp = 0xFFFD, .len = seen };
        lower = 0x80;
        upper = 0xBF;
        cp = (cp << 6) | (b & 0x3F);
    }
    return .{ .cp = cp, .len = needed + 1 };
}

// ---------------------------------------------------------------------------------------
// Serializing.

/// The urlencoded byte serializer: ASCII alphanumerics and `*-._` as they are, a space as
/// `+`, every other byte of the UTF-8 as `%XX`.
fn appendEncoded(out: *string.StringBuffer, s: *const String) error{OutOfMemory}!void {
    var i: usize = 0;
    while (i < s.len) : (i += 1) {
        const cp = string.codePointAtString(s, i);
        if (cp >= 0x10000) i += 1;
        var utf8: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(cp, &utf8) catch blk: {
            // A lone surrogate cannot be stored (toUsv replaced them): U+FFFD regardless.
            break :blk std.unicode.utf8Encode(0xFFFD, &utf8) catch unreachable;
        };
        for (utf8[0..n]) |b| {
            switch (b) {
                'a'...'z', 'A'...'Z', '0'...'9', '*', '-', '.', '_' => try out.appendLatin1(&.{b}),
                ' ' => try out.appendLatin1("+"),
                else => {
                    const hex = "0123456789ABCDEF";
                    try out.appendLatin1(&.{ '%', hex[b >> 4], hex[b & 0x0F] });
                },
            }
        }
    }
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const list = try thisList(vm, this);
    const items = list.slice();
    var out = string.StringBuffer.init(vm.heap);
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        const name = items[i].asString();
        const value = items[i + 1].asString();
        try vm.charge(meter.unitsCost(name.len + value.len) * 4 + meter.elementsCost(1));
        if (i > 0) out.appendLatin1("&") catch return vm.outOfMemory();
        appendEncoded(&out, name) catch return vm.outOfMemory();
        out.appendLatin1("=") catch return vm.outOfMemory();
        appendEncoded(&out, value) catch return vm.outOfMemory();
    }
    return Value.string(out.finish() catch return vm.outOfMemory());
}

// ---------------------------------------------------------------------------------------
// The list's methods.

pub fn append(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try mutableList(vm, this);
    try requireNameAndValue(vm, args);
    try push(vm, list, try toUsv(vm, args[0]), try toUsv(vm, args[1]));
    try changed(vm, this);
    return Value.undefined_value;
}

/// Whether pair `i` matches a name, and the value when one was given.
fn matches(items: []const Value, i: usize, name: *String, value: ?*String) bool {
    if (!items[i].asString().eql(name)) return false;
    return value == null or items[i + 1].asString().eql(value.?);
}

pub fn delete(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try mutableList(vm, this);
    try requireName(vm, args);
    const name = try toUsv(vm, args[0]);
    const value: ?*String = if (args.len > 1 and !args[1].isUndefined()) try toUsv(vm, args[1]) else null;
    const items = list.slice();
    try vm.charge(meter.elementsCost(items.len));
    var kept: usize = 0;
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        if (matches(items, i, name, value)) continue;
        items[kept] = items[i];
        items[kept + 1] = items[i + 1];
        kept += 2;
    }
    list.len = @intCast(kept);
    try changed(vm, this);
    return Value.undefined_value;
}

pub fn get(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try thisList(vm, this);
    try requireName(vm, args);
    const name = try toUsv(vm, args[0]);
    const items = list.slice();
    try vm.charge(meter.elementsCost(items.len));
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        if (matches(items, i, name, null)) return items[i + 1];
    }
    return Value.null_value;
}

pub fn getAll(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try thisList(vm, this);
    try requireName(vm, args);
    const name = try toUsv(vm, args[0]);
    const items = list.slice();
    try vm.charge(meter.elementsCost(items.len));
    const out = try vm.newArray(0);
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        if (matches(items, i, name, null)) out.push(vm.heap, items[i + 1]) catch return vm.outOfMemory();
    }
    return Value.obj(&out.object);
}

pub fn has(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try thisList(vm, this);
    try requireName(vm, args);
    const name = try toUsv(vm, args[0]);
    const value: ?*String = if (args.len > 1 and !args[1].isUndefined()) try toUsv(vm, args[1]) else null;
    const items = list.slice();
    try vm.charge(meter.elementsCost(items.len));
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        if (matches(items, i, name, value)) return Value.true_value;
    }
    return Value.false_value;
}

/// The first pair of the name gets the value; the name's other pairs go.
pub fn set(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try mutableList(vm, this);
    try requireNameAndValue(vm, args);
    const name = try toUsv(vm, args[0]);
    const value = try toUsv(vm, args[1]);
    const items = list.slice();
    try vm.charge(meter.elementsCost(items.len));
    var kept: usize = 0;
    var found = false;
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        if (matches(items, i, name, null)) {
            if (found) continue;
            found = true;
            items[i + 1] = Value.string(value);
        }
        items[kept] = items[i];
        items[kept + 1] = items[i + 1];
        kept += 2;
    }
    list.len = @intCast(kept);
    if (!found) try push(vm, list, name, value);
    try changed(vm, this);
    return Value.undefined_value;
}

/// A stable sort of the pairs by name, in code units (insertion sort: stable, and the
/// budget pays for each step).
pub fn sort(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const list = try mutableList(vm, this);
    const items = list.slice();
    var i: usize = 2;
    while (i < items.len) : (i += 2) {
        var j = i;
        while (j > 0 and items[j - 2].asString().order(items[j].asString()) == .gt) : (j -= 2) {
            std.mem.swap(Value, &items[j - 2], &items[j]);
            std.mem.swap(Value, &items[j - 1], &items[j + 1]);
        }
        try vm.charge(meter.elementsCost(i));
    }
    try changed(vm, this);
    return Value.undefined_value;
}

pub fn forEach(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const list = try thisList(vm, this);
    const callback = arg(args, 0);
    if (!ops.isCallable(callback)) {
        return vm.throwFmt(.type_error, "The \"callback\" argument must be of type function. Received {f}", .{ops.ShortFormat{ .vm = vm, .v = callback }});
    }
    // The list as it is at each step: the callback may change it.
    var i: usize = 0;
    while (i + 1 < list.len) : (i += 2) {
        const items = list.slice();
        _ = try vm.call(callback, arg(args, 1), &.{ items[i + 1], items[i], this });
    }
    return Value.undefined_value;
}

/// The pairs' names (0), values (1) or [name, value] arrays (2), copied into an array.
fn column(vm: *Vm, list: *object.Array, which: u2) Error!*object.Array {
    const items = list.slice();
    try vm.charge(meter.elementsCost(items.len));
    const out = try vm.newArray(items.len / 2);
    var i: usize = 0;
    while (i < items.len) : (i += 2) {
        const v = switch (which) {
            0 => items[i],
            1 => items[i + 1],
            else => blk: {
                const pair = try vm.newArray(2);
                pair.push(vm.heap, items[i]) catch return vm.outOfMemory();
                pair.push(vm.heap, items[i + 1]) catch return vm.outOfMemory();
                break :blk Value.obj(&pair.object);
            },
        };
        out.push(vm.heap, v) catch return vm.outOfMemory();
    }
    return out;
}

pub fn keys(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const out = try column(vm, try thisList(vm, this), 0);
    return builtins.array.values(vm, Value.obj(&out.object), &.{});
}

pub fn values(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const out = try column(vm, try thisList(vm, this), 1);
    return builtins.array.values(vm, Value.obj(&out.object), &.{});
}

pub fn entries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const out = try column(vm, try thisList(vm, this), 2);
    return builtins.array.values(vm, Value.obj(&out.object), &.{});
}

test "urlsearchparams: the UTF-8 decoder replaces each maximal subpart once" {
    const cases = [_]struct { []const u8, u21, usize }{
        .{ "\xE2\x82\xAC", 0x20AC, 3 },      .{ "\xE2\x82", 0xFFFD, 2 }, .{ "\xED\xA0\x80", 0xFFFD, 1 },
        .{ "\xF0\x9F\x98\x80", 0x1F600, 4 }, .{ "\xC0\x80", 0xFFFD, 1 }, .{ "\xF4\x90\x80\x80", 0xFFFD, 1 },
        .{ "\xFF", 0xFFFD, 1 },              .{ "\xE0\x80", 0xFFFD, 1 },
    };
    for (cases) |c| {
        const d = decodeOne(c[0]);
        try std.testing.expectEqual(c[1], d.cp);
        try std.testing.expectEqual(c[2], d.len);
    }
}
