//! `Headers`, as the Fetch standard defines it and node 20 (undici) implements it: a list of
//! header fields with case-insensitive names, `append`, `delete`, `get`, `getSetCookie`,
//! `has`, `set`, `forEach`, and iteration in the order of the lower-cased names, each name
//! once with its values joined by ", " (Set-Cookie's values one by one).
//!
//! Decision: a Headers object is a Map-kind object whose prototype link is
//! `Headers.prototype`, keyed by the lower-cased name, so it needs no object kind of its own
//! and its storage is no property a script can see. A name's entry is an array: the name as
//! first appended (console.log shows it), then its values one by one, joined with ", " when
//! read, except Set-Cookie's, which iteration gives one by one: they are the one field that
//! may not be combined (RFC 9110 section 5.3). Names and values are checked as undici checks them, with its messages: a name must
//! be a token, a value is stripped of leading and trailing HTTP white space and may not hold
//! NUL, CR or LF, and both must be ByteStrings (no unit above 0xFF).
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
const names = @import("../names.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;

/// Whether an object is a Headers (its prototype link is Headers.prototype).
pub fn isHeaders(o: *const object.Object) bool {
    return o.kind == .map and o.proto.eqlBits(Value.builtin(builtins.builtinId("%Headers.prototype%")));
}

fn thisHeaders(vm: *Vm, this: Value) Error!*MapObject {
    if (this.is(.object) and isHeaders(this.asObject())) return object.mapOf(this.asObject());
    return vm.throwMessage(.type_error, "Illegal invocation");
}

fn mutableHeaders(vm: *Vm, this: Value) Error!*MapObject {
    const m = try thisHeaders(vm, this);
    try ops.checkModuleWrite(vm, m);
    return m;
}

/// undici's count check: "Headers.get: 1 argument required, but 0 found."
fn requireArguments(vm: *Vm, args: []const Value, comptime method: []const u8, comptime count: usize) Error!void {
    if (args.len >= count) return;
    if (count == 1) return vm.throwFmt(.type_error, "Headers.{s}: 1 argument required, but 0 found.", .{method});
    return vm.throwFmt(.type_error, "Headers.{s}: {d} arguments required, but only {d} found.", .{ method, count, args.len });
}

/// WebIDL's ByteString: the string of the value, with no unit above 0xFF.
fn byteString(vm: *Vm, v: Value) Error!*String {
    const s = try ops.toString(vm, v);
    try vm.charge(meter.unitsCost(s.len));
    if (!s.flags.wide) return s;
    for (s.utf16(), 0..) |u, i| {
        if (u > 0xFF) return vm.throwFmt(.type_error, "Cannot convert argument to a ByteString because the character at index {d} has a value of {d} which is greater than 255.", .{ i, u });
    }
    return s; // Wide storage of Latin-1 units: every unit fits.
}

/// RFC 9110's tchar.
fn isTokenUnit(u: u16) bool {
    return switch (u) {
        'a'...'z', 'A'...'Z', '0'...'9' => true,
        '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~' => true,
        else => false,
    };
}

fn isHttpWhitespace(u: u16) bool {
    return u == ' ' or u == '\t' or u == '\n' or u == '\r';
}

/// `Headers.METHOD: "TEXT" is an invalid header KIND.`, the text as UTF-8.
fn throwInvalid(vm: *Vm, comptime where: []const u8, s: *const String, comptime what: []const u8) Error {
    var buf: [512]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    w.writeAll(where ++ ": \"") catch {};
    string.writeUtf8(&w, s) catch {}; // A long name is cut, not lost.
    w.writeAll("\" is an invalid header " ++ what ++ ".") catch {};
    return vm.throwMessage(.type_error, w.buffered());
}

/// The lower-cased name, after checking it is a token.
fn headerName(vm: *Vm, v: Value, comptime where: []const u8) Error!*String {
    const s = try byteString(vm, v);
    if (s.len == 0) return throwInvalid(vm, where, s, "name");
    var needs_lowering = false;
    for (0..s.len) |i| {
        const u = s.at(i);
        if (!isTokenUnit(u)) return throwInvalid(vm, where, s, "name");
        if (u >= 'A' and u <= 'Z') needs_lowering = true;
    }
    if (!needs_lowering and !s.flags.wide) return s;
    var out = string.Builder.init(vm.heap, s.len, false) catch return vm.outOfMemory();
    for (0..s.len) |i| out.append(std.ascii.toLower(@intCast(s.at(i))));
    return out.finish() catch vm.outOfMemory();
}

/// The value stripped of leading and trailing HTTP white space, after checking it holds no
/// NUL, CR or LF.
fn headerValue(vm: *Vm, v: Value, comptime where: []const u8) Error!*String {
    const s = try byteString(vm, v);
    var start: usize = 0;
    var end: usize = s.len;
    while (start < end and isHttpWhitespace(s.at(start))) start += 1;
    while (end > start and isHttpWhitespace(s.at(end - 1))) end -= 1;
    const stripped = if (start == 0 and end == s.len)
        s
    else
        string.slice(vm.heap, @constCast(s), start, end) catch return vm.outOfMemory();
    for (0..stripped.len) |i| {
        const u = stripped.at(i);
        if (u == 0 or u == '\r' or u == '\n') return throwInvalid(vm, where, stripped, "value");
    }
    return stripped;
}

fn isSetCookie(name: *const String) bool {
    return name.eqlLatin1("set-cookie");
}

/// A name's entry: its name as first appended, then its values.
fn fieldOf(stored: Value) *object.Array {
    return stored.objectOf(.array).?.as(object.Array);
}

/// `name: value` added after the name's other values.
fn appendField(vm: *Vm, m: *MapObject, name: *String, original: *String, value: *String) Error!void {
    const key = Value.string(name);
    if (m.get(key)) |stored| {
        return fieldOf(stored).push(vm.heap, Value.string(value)) catch vm.outOfMemory();
    }
    const field = try vm.newArray(2);
    field.push(vm.heap, Value.string(original)) catch return vm.outOfMemory();
    field.push(vm.heap, Value.string(value)) catch return vm.outOfMemory();
    m.putNew(vm.heap, key, Value.obj(&field.object)) catch return vm.outOfMemory();
}

/// A name's values as `get` gives them: joined with ", ".
fn combined(vm: *Vm, stored: Value) Error!*String {
    const field = fieldOf(stored).slice();
    assert(field.len >= 2);
    if (field.len == 2) return field[1].asString();
    var joined = field[1].asString();
    for (field[2..]) |v| {
        try vm.charge(meter.elementsCost(1));
        joined = string.concat(vm.heap, joined, names.string(", ")) catch return vm.outOfMemory();
        joined = string.concat(vm.heap, joined, v.asString()) catch return vm.outOfMemory();
    }
    return joined;
}

/// What console.log shows: `Headers { 'X-A': '1, 2' }`, each name as first appended, in the
/// order of first appending, with its values joined (node's inspect of undici's list). The
/// inspector formats in the heap's free space (`gpa`), so the joined values are made there
/// too, not in the heap.
pub fn inspectProperties(o: *object.Object, gpa: std.mem.Allocator) std.mem.Allocator.Error![]object.Property {
    assert(isHeaders(o));
    var out: std.ArrayList(object.Property) = .empty;
    for (object.mapOf(o).slice()) |e| {
        if (e.key.eqlBits(Value.hole)) continue;
        const field = fieldOf(e.value).slice();
        const value = if (field.len == 2) field[1].asString() else try joinInto(gpa, field[1..]);
        try out.append(gpa, .{ .key = field[0].asString(), .value = Value.string(value) });
    }
    return out.items;
}

/// ByteStrings joined with ", ", as a Latin-1 string in `gpa`.
fn joinInto(gpa: std.mem.Allocator, parts: []const Value) std.mem.Allocator.Error!*String {
    var bytes: std.ArrayList(u8) = .empty;
    for (parts, 0..) |v, i| {
        if (i > 0) try bytes.appendSlice(gpa, ", ");
        const part = v.asString();
        for (0..part.len) |k| try bytes.append(gpa, @intCast(part.at(k)));
    }
    const joined = try gpa.create(String);
    joined.* = .{ .ptr = bytes.items.ptr, .len = @intCast(bytes.items.len) };
    return joined;
}

pub fn requireNew(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Class constructor _Headers cannot be invoked without 'new'");
}

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const m = object.newMap(vm.heap, .map) catch return vm.outOfMemory();
    m.object.proto = Value.builtin(builtins.builtinId("%Headers.prototype%"));
    const init = arg(args, 0);
    if (init.isUndefined()) return Value.obj(&m.object);
    if (!init.is(.object)) {
        return vm.throwMessage(.type_error, "Headers constructor: Argument 1 could not be converted to one of: sequence<sequence<ByteString>>, record<ByteString, ByteString>.");
    }
    if (isHeaders(init.asObject()) and init.asObject().properties.len == 0) {
        try fillFromHeaders(vm, m, object.mapOf(init.asObject()));
    } else if (ops.isCallable(try ops.iteratorMethod(vm, init))) {
        try fillFromPairs(vm, m, init);
    } else {
        try fillFromRecord(vm, m, init.asObject());
    }
    return Value.obj(&m.object);
}

/// `new Headers([[name, value], ...])`, or from another Headers.
fn fillFromPairs(vm: *Vm, m: *MapObject, init: Value) Error!void {
    var source = try ops.iterStart(vm, init, .{});
    var cursor = Value.number(0);
    var index: usize = 0;
    while (try ops.iterNext(vm, &source, &cursor)) |pair| : (index += 1) {
        try vm.charge(meter.elementsCost(1));
        if (!pair.is(.object) or !ops.isCallable(try ops.iteratorMethod(vm, pair))) {
            return vm.throwFmt(.type_error, "Headers contructor: init[{d}] ({f}) is not iterable.", .{ index, ops.ShortFormat{ .vm = vm, .v = pair } });
        }
        var items: [2]Value = undefined;
        const count = try pairItems(vm, pair, &items);
        if (count != 2) {
            return vm.throwFmt(.type_error, "Headers constructor: expected name/value pair to be length 2, found {d}.", .{count});
        }
        try appendChecked(vm, m, items[0], items[1], "Headers.append");
    }
}

/// `new Headers(headers)` (one with nothing of its own over the prototype): a copy of its
/// fields in order, each name as first written, as node's undici copies another Headers' list
/// (not through its sorted, lower-cased iteration): Set-Cookie's values apart, each other
/// name's joined with ", " as undici keeps them. Each was checked when it was appended there.
fn fillFromHeaders(vm: *Vm, m: *MapObject, source: *MapObject) Error!void {
    assert(m.len == 0); // A new Headers: each of the source's names is added once, unlooked-for.
    for (source.slice()) |e| {
        if (e.key.eqlBits(Value.hole)) continue;
        const field = fieldOf(e.value).slice();
        try vm.charge(meter.elementsCost(field.len));
        const copy = try vm.newArray(if (isSetCookie(e.key.asString())) field.len else 2);
        copy.push(vm.heap, field[0]) catch return vm.outOfMemory();
        if (isSetCookie(e.key.asString())) {
            for (field[1..]) |v| copy.push(vm.heap, v) catch return vm.outOfMemory();
        } else {
            copy.push(vm.heap, Value.string(try combined(vm, e.value))) catch return vm.outOfMemory();
        }
        m.putNew(vm.heap, e.key, Value.obj(&copy.object)) catch return vm.outOfMemory();
    }
}

/// The items of an iterable `[name, value]` pair (Headers and URLSearchParams take a list
/// of them): the first two in `items`, and how many it had.
pub fn pairItems(vm: *Vm, pair: Value, items: *[2]Value) Error!usize {
    var count: usize = 0;
    var inner = try ops.iterStart(vm, pair, .{});
    var cursor = Value.number(0);
    while (try ops.iterNext(vm, &inner, &cursor)) |item| {
        if (count < items.len) items[count] = item;
        count += 1;
        try vm.charge(meter.elementsCost(1));
    }
    return count;
}

/// `new Headers({ name: value, ... })`: the own enumerable string keys.
fn fillFromRecord(vm: *Vm, m: *MapObject, o: *object.Object) Error!void {
    const own_keys = try ops.ownKeysArray(vm, Value.obj(o));
    for (own_keys.slice()) |key| {
        try vm.charge(meter.elementsCost(1));
        const v = try ops.getField(vm, Value.obj(o), key.asString());
        try appendChecked(vm, m, key, v, "Headers.append");
    }
}

/// Checks a name and a value and appends them.
fn appendChecked(vm: *Vm, m: *MapObject, name_value: Value, value_value: Value, comptime where: []const u8) Error!void {
    const original = try byteString(vm, name_value);
    const name = try headerName(vm, Value.string(original), where);
    try appendField(vm, m, name, original, try headerValue(vm, value_value, where));
}

pub fn append(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try mutableHeaders(vm, this);
    try requireArguments(vm, args, "append", 2);
    try appendChecked(vm, m, args[0], args[1], "Headers.append");
    return Value.undefined_value;
}

pub fn set(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try mutableHeaders(vm, this);
    try requireArguments(vm, args, "set", 2);
    const original = try byteString(vm, args[0]);
    const name = try headerName(vm, Value.string(original), "Headers.set");
    const value = try headerValue(vm, args[1], "Headers.set");
    // The name keeps its place and its first spelling; only its values are replaced.
    if (m.get(Value.string(name))) |stored| {
        const field = fieldOf(stored);
        field.setLength(vm.heap, 1) catch return vm.outOfMemory();
        field.push(vm.heap, Value.string(value)) catch return vm.outOfMemory();
        return Value.undefined_value;
    }
    try appendField(vm, m, name, original, value);
    return Value.undefined_value;
}

pub fn delete(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try mutableHeaders(vm, this);
    try requireArguments(vm, args, "delete", 1);
    _ = m.remove(Value.string(try headerName(vm, args[0], "Headers.delete")));
    return Value.undefined_value;
}

pub fn get(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try thisHeaders(vm, this);
    try requireArguments(vm, args, "get", 1);
    const stored = m.get(Value.string(try headerName(vm, args[0], "Headers.get"))) orelse return Value.null_value;
    return Value.string(try combined(vm, stored));
}

pub fn has(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try thisHeaders(vm, this);
    try requireArguments(vm, args, "has", 1);
    return Value.boolean(m.find(Value.string(try headerName(vm, args[0], "Headers.has"))) != null);
}

pub fn getSetCookie(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const m = try thisHeaders(vm, this);
    const out = try vm.newArray(0);
    const stored = m.get(Value.string(names.string("set-cookie"))) orelse return Value.obj(&out.object);
    for (fieldOf(stored).slice()[1..]) |v| out.push(vm.heap, v) catch return vm.outOfMemory();
    return Value.obj(&out.object);
}

/// The fields in iteration order: [name, value] pairs sorted by name, Set-Cookie's values
/// one pair each.
fn sortedPairs(vm: *Vm, m: *MapObject) Error!*object.Array {
    const stored = m.slice();
    try vm.charge(meter.elementsCost(stored.len * 4));
    const live_names = try vm.newArray(stored.len);
    for (stored) |e| {
        if (e.key.eqlBits(Value.hole)) continue;
        live_names.push(vm.heap, e.key) catch return vm.outOfMemory();
    }
    // Insertion sort: a message has few fields, and the budget paid for the square above
    // only up to the elements' count; the comparisons below charge themselves.
    const list = live_names.slice();
    var i: usize = 1;
    while (i < list.len) : (i += 1) {
        var j = i;
        while (j > 0 and list[j - 1].asString().order(list[j].asString()) == .gt) : (j -= 1) {
            std.mem.swap(Value, &list[j - 1], &list[j]);
        }
        try vm.charge(meter.elementsCost(i));
    }
    const pairs = try vm.newArray(list.len);
    for (list) |name| {
        const field = m.get(name).?;
        if (isSetCookie(name.asString())) {
            for (fieldOf(field).slice()[1..]) |v| try pushPair(vm, pairs, name, v);
        } else {
            try pushPair(vm, pairs, name, Value.string(try combined(vm, field)));
        }
    }
    return pairs;
}

fn pushPair(vm: *Vm, pairs: *object.Array, name: Value, value: Value) Error!void {
    const pair = try vm.newArray(2);
    pair.push(vm.heap, name) catch return vm.outOfMemory();
    pair.push(vm.heap, value) catch return vm.outOfMemory();
    pairs.push(vm.heap, Value.obj(&pair.object)) catch return vm.outOfMemory();
}

/// The sorted pairs' element `which` (0 the names, 1 the values), as an array.
fn column(vm: *Vm, pairs: *object.Array, which: usize) Error!*object.Array {
    const out = try vm.newArray(pairs.len);
    for (pairs.slice()) |pair| {
        out.push(vm.heap, pair.asObject().as(object.Array).slice()[which]) catch return vm.outOfMemory();
    }
    return out;
}

pub fn entries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const pairs = try sortedPairs(vm, try thisHeaders(vm, this));
    return builtins.array.values(vm, Value.obj(&pairs.object), &.{});
}

pub fn keys(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const pairs = try sortedPairs(vm, try thisHeaders(vm, this));
    return builtins.array.values(vm, Value.obj(&(try column(vm, pairs, 0)).object), &.{});
}

pub fn values(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const pairs = try sortedPairs(vm, try thisHeaders(vm, this));
    return builtins.array.values(vm, Value.obj(&(try column(vm, pairs, 1)).object), &.{});
}

pub fn forEach(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const m = try thisHeaders(vm, this);
    try requireArguments(vm, args, "forEach", 1);
    const callback = args[0];
    if (!ops.isCallable(callback)) {
        return vm.throwMessage(.type_error, "Failed to execute 'forEach' on 'Headers': parameter 1 is not of type 'Function'.");
    }
    const pairs = try sortedPairs(vm, m);
    for (pairs.slice()) |pair| {
        const kv = pair.asObject().as(object.Array).slice();
        _ = try vm.call(callback, arg(args, 1), &.{ kv[1], kv[0], this });
    }
    return Value.undefined_value;
}

// ---------------------------------------------------------------------------------------
// For hosts: a handler's `new Response(body, { headers })` keeps a Headers, and the handler
// writes its fields.

/// `name: value` of a message sluice parsed, appended to a Headers without a script's checks:
/// the parser has checked the name is a token and the value a field value, and trimmed it.
pub fn appendParsed(vm: *Vm, headers: Value, name: []const u8, value: []const u8) Error!void {
    assert(isHeaders(headers.asObject()) and name.len > 0);
    try vm.charge(meter.bytesCost(name.len + value.len));
    const original = try vm.newLatin1(name);
    var lower = original;
    for (name, 0..) |c, i| if (c >= 'A' and c <= 'Z') {
        var out = string.Builder.init(vm.heap, name.len, false) catch return vm.outOfMemory();
        for (name[0..i]) |same| out.append(same);
        for (name[i..]) |rest| out.append(std.ascii.toLower(rest));
        lower = out.finish() catch return vm.outOfMemory();
        break;
    };
    try appendField(vm, object.mapOf(headers.asObject()), lower, original, try vm.newLatin1(value));
}

/// `new Headers(init)`.
pub fn fromInit(vm: *Vm, init: Value) Error!Value {
    return construct(vm, Value.undefined_value, &.{init});
}

/// One name's field: its lower-cased name and its values (ByteStrings, in order).
pub const Field = struct { name: *String, values: []const Value };

/// The fields of a Headers in the order their names were first appended.
pub const Fields = struct {
    entries: []const object.MapEntry,
    next_index: usize = 0,

    pub fn next(it: *Fields) ?Field {
        while (it.next_index < it.entries.len) {
            const e = it.entries[it.next_index];
            it.next_index += 1;
            if (e.key.eqlBits(Value.hole)) continue;
            return .{ .name = e.key.asString(), .values = fieldOf(e.value).slice()[1..] };
        }
        return null;
    }
};

pub fn fields(o: *object.Object) Fields {
    assert(isHeaders(o));
    return .{ .entries = object.mapOf(o).slice() };
}

/// A plain object of the fields, each name's values joined with ", " (what `get` gives).
pub fn toRecord(vm: *Vm, o: *object.Object) Error!*object.Object {
    const record = try vm.newObject(0);
    for (object.mapOf(o).slice()) |e| {
        if (e.key.eqlBits(Value.hole)) continue;
        try vm.charge(meter.elementsCost(1));
        const value = try combined(vm, e.value);
        record.properties.put(vm.heap, e.key.asString(), Value.string(value)) catch return vm.outOfMemory();
    }
    return record;
}

/// Whether a Headers has a field of this lower-cased name.
pub fn hasName(o: *object.Object, lower_name: []const u8) bool {
    var it = fields(o);
    while (it.next()) |f| {
        if (f.name.eqlLatin1(lower_name)) return true;
    }
    return false;
}
