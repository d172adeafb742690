//! `URL`, as the URL standard defines it and node 20 implements it: `new URL(input, base?)`,
//! `URL.canParse`, the getters and setters of every component, `searchParams` kept in step
//! both ways, `toString` and `toJSON`. The parsing itself is url_parser.zig's.
//!
//! Decision: a URL is a Map-kind object whose prototype link is `URL.prototype` (as a
//! Headers is), holding two entries no script can see: its href (the serialized URL, ASCII)
//! and its URLSearchParams. A getter parses the href again (it is already canonical, so the
//! parse finds the components as they are), and a setter parses it, changes one component
//! and stores the new serialization: one string is the single source of truth, and every
//! buffer comes from the run's arena, sized before the parse.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const meter = @import("../meter.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const parser = @import("url_parser.zig");
const urlsearchparams = @import("urlsearchparams.zig");
const throwCoded = @import("text_encoding.zig").throwCoded;
const arg = builtins.arg;
const Record = parser.Record;

const href_key = Value.number(0);
const params_key = Value.number(1);

pub fn isUrl(o: *const object.Object) bool {
    return o.kind == .map and o.proto.eqlBits(Value.builtin(builtins.builtinId("%URL.prototype%")));
}

/// The components, in the order node's inspect lists them.
pub const fields = [_][]const u8{
    "href",     "origin", "protocol", "username", "password",     "host",
    "hostname", "port",   "pathname", "search",   "searchParams", "hash",
};

pub fn isField(key: *String) bool {
    const id = names.nameId(key) orelse return false;
    inline for (fields) |n| {
        if (id == comptime names.id(n)) return true;
    }
    return false;
}

fn hrefOf(o: *object.Object) *String {
    return object.mapOf(o).get(href_key).?.asString();
}

/// The href's bytes (ASCII: every other byte was percent-encoded).
pub fn hrefText(o: *object.Object) []const u8 {
    return hrefOf(o).latin1();
}

pub fn paramsOf(o: *object.Object) *object.Object {
    return object.mapOf(o).get(params_key).?.asObject();
}

fn thisUrl(vm: *Vm, this: Value) Error!*object.Object {
    if (this.is(.object) and isUrl(this.asObject())) return this.asObject();
    return vm.throwMessage(.type_error, "Receiver must be an instance of class URL");
}

/// The UTF-8 of a string made well-formed, in a fresh arena buffer the parser may change.
fn utf8Of(vm: *Vm, s: *const String) Error![]u8 {
    try vm.charge(meter.unitsCost(s.len) * 4);
    const buf = vm.heap.allocBytes(@as(usize, s.len) * 3, 1) catch return vm.outOfMemory();
    var n: usize = 0;
    var i: usize = 0;
    while (i < s.len) : (i += 1) {
        const cp = string.codePointAtString(s, i);
        if (cp >= 0x10000) i += 1;
        var utf8: [4]u8 = undefined;
        const len = std.unicode.utf8Encode(cp, &utf8) catch unreachable; // toUsv made it well-formed.
        @memcpy(buf[n..][0..len], utf8[0..len]);
        n += len;
    }
    return buf[0..n];
}

fn scratch(vm: *Vm, len: usize) Error![]u8 {
    return vm.heap.allocBytes(len, 1) catch vm.outOfMemory();
}

/// Parses `input` against `base` (both well-formed strings).
fn parseString(vm: *Vm, input: *const String, base: ?*const Record) Error!?Record {
    const bytes = try utf8Of(vm, input);
    const buf = try scratch(vm, parser.capacityFor(bytes.len, base));
    return parser.parse(buf, bytes, base) catch |err| switch (err) {
        error.Invalid => null,
        error.Idna => return throwIdna(vm),
    };
}

fn throwIdna(vm: *Vm) Error {
    return throwCoded(vm, .type_error, "ERR_INVALID_URL", "Invalid URL: a host name that is not ASCII needs IDNA, which sluice does not implement");
}

/// The components of a URL object, from its href.
fn recordOf(vm: *Vm, o: *object.Object) Error!Record {
    const href = hrefOf(o);
    try vm.charge(meter.unitsCost(href.len) * 4);
    const copy = try scratch(vm, href.len);
    @memcpy(copy, href.latin1());
    const buf = try scratch(vm, parser.capacityFor(copy.len, null));
    // A serialized URL parses to itself; were it not so (our mistake), the script gets an
    // error rather than the worker a crash.
    return parser.parse(buf, copy, null) catch vm.throwMessage(.type_error, "URL: its own href does not parse (a bug in sluice)");
}

fn hrefString(vm: *Vm, r: *const Record) Error!*String {
    const buf = try scratch(vm, r.serializedLen());
    return vm.newLatin1(r.serialize(buf));
}

// ---------------------------------------------------------------------------------------
// Construction.

pub fn requireNew(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Class constructor URL cannot be invoked without 'new'");
}

/// The record `new URL(args...)` would make, or null where it would throw Invalid URL.
fn parseArgs(vm: *Vm, args: []const Value) Error!?Record {
    if (args.len == 0) return throwCoded(vm, .type_error, "ERR_MISSING_ARGS", "The \"url\" argument must be specified");
    const input = try urlsearchparams.toUsv(vm, args[0]);
    var base_record: Record = undefined;
    var base: ?*const Record = null;
    if (args.len > 1 and !args[1].isUndefined()) {
        const base_text = try urlsearchparams.toUsv(vm, args[1]);
        base_record = (try parseString(vm, base_text, null)) orelse return null;
        base = &base_record;
    }
    return parseString(vm, input, base);
}

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const r = (try parseArgs(vm, args)) orelse return throwCoded(vm, .type_error, "ERR_INVALID_URL", "Invalid URL");
    const m = object.newMap(vm.heap, .map) catch return vm.outOfMemory();
    m.object.proto = Value.builtin(builtins.builtinId("%URL.prototype%"));
    m.put(vm.heap, href_key, Value.string(try hrefString(vm, &r))) catch return vm.outOfMemory();
    const params = try urlsearchparams.construct(vm, Value.undefined_value, &.{});
    m.put(vm.heap, params_key, params) catch return vm.outOfMemory();
    try urlsearchparams.linkTo(vm, params.asObject(), &m.object);
    try refillParams(vm, &m.object, &r);
    return Value.obj(&m.object);
}

/// What `new URL(input)` makes, for a Request's URL: its href, and whether it has a user or
/// a password. Null where `new URL` throws Invalid URL.
pub const Href = struct { href: *String, credentials: bool };

pub fn parseHref(vm: *Vm, input: Value) Error!?Href {
    const r = (try parseArgs(vm, &.{input})) orelse return null;
    return .{ .href = try hrefString(vm, &r), .credentials = r.hasCredentials() };
}

pub fn canParse(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const r = try parseArgs(vm, args);
    return Value.boolean(r != null);
}

// ---------------------------------------------------------------------------------------
// Getters.

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(hrefOf(try thisUrl(vm, this)));
}

/// A component of a URL (`key` is one of `fields`).
pub fn field(vm: *Vm, o: *object.Object, key: *String) Error!Value {
    if (names.is(key, "href")) return Value.string(hrefOf(o));
    if (names.is(key, "searchParams")) return object.mapOf(o).get(params_key).?;
    const href = hrefOf(o);
    try vm.charge(meter.unitsCost(href.len) * 4);
    const memory = try scratch(vm, textsMemory(href.len));
    var fixed = std.heap.FixedBufferAllocator.init(memory);
    const texts = componentTexts(fixed.allocator(), href.latin1()) catch |err| switch (err) {
        error.OutOfMemory => unreachable, // textsMemory is enough.
        // A serialized URL parses to itself; were it not so (our mistake), the script gets
        // an error rather than the worker a crash.
        error.Invalid, error.Idna => return vm.throwMessage(.type_error, "URL: its own href does not parse (a bug in sluice)"),
    };
    inline for (fields, 0..) |name, i| {
        if (names.is(key, name)) return Value.string(try vm.newLatin1(texts[i]));
    }
    unreachable; // isField chose the key.
}

/// What `componentTexts` may allocate for an href of `len` bytes: two parses (the URL and
/// a blob URL's inner one, each `capacityFor` and a copy) and the joined texts.
pub fn textsMemory(len: usize) usize {
    return 2 * (parser.capacityFor(len, null) + len) + 4 * (len + 16) + 256;
}

/// The text of each of `fields` (searchParams' is empty) of the URL `href`, allocated with
/// `gpa` (console.log's inspector calls this too, with its own scratch).
pub fn componentTexts(gpa: std.mem.Allocator, href: []const u8) (parser.Failure || error{OutOfMemory})![fields.len][]const u8 {
    const r = try parseCopy(gpa, href);
    var t: [fields.len][]const u8 = undefined;
    t[0] = href;
    t[1] = try origin(gpa, &r);
    t[2] = try std.mem.concat(gpa, u8, &.{ r.scheme, ":" });
    t[3] = r.username;
    t[4] = r.password;
    const host = r.host orelse "";
    t[5] = if (r.port) |p| try std.fmt.allocPrint(gpa, "{s}:{d}", .{ host, p }) else host;
    t[6] = host;
    t[7] = if (r.port) |p| try std.fmt.allocPrint(gpa, "{d}", .{p}) else "";
    t[8] = r.path;
    const query = r.query orelse "";
    t[9] = if (query.len == 0) "" else try std.mem.concat(gpa, u8, &.{ "?", query });
    t[10] = "";
    const fragment = r.fragment orelse "";
    t[11] = if (fragment.len == 0) "" else try std.mem.concat(gpa, u8, &.{ "#", fragment });
    return t;
}

fn parseCopy(gpa: std.mem.Allocator, text: []const u8) (parser.Failure || error{OutOfMemory})!Record {
    const copy = try gpa.dupe(u8, text);
    const buf = try gpa.alloc(u8, parser.capacityFor(copy.len, null));
    return parser.parse(buf, copy, null);
}

/// scheme://host[:port] for the special schemes but file; a blob: URL's is that of the
/// http(s) URL in its path; "null" for the others.
fn origin(gpa: std.mem.Allocator, r: *const Record) error{OutOfMemory}![]const u8 {
    if (std.mem.eql(u8, r.scheme, "blob")) {
        const inner = parseCopy(gpa, r.path) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Invalid, error.Idna => return "null",
        };
        if (std.mem.eql(u8, inner.scheme, "http") or std.mem.eql(u8, inner.scheme, "https")) return origin(gpa, &inner);
        return "null";
    }
    if (parser.defaultPort(r.scheme) == null) return "null";
    const tuple: Record = .{ .scheme = r.scheme, .host = r.host, .port = r.port };
    const buf = try gpa.alloc(u8, tuple.serializedLen());
    return tuple.serialize(buf);
}

// ---------------------------------------------------------------------------------------
// Setters.

/// `url[key] = v` for a key `isField` accepts.
pub fn setField(vm: *Vm, o: *object.Object, key: *String, v: Value) Error!void {
    if (names.is(key, "origin") or names.is(key, "searchParams")) {
        return vm.throwFmt(.type_error, "Cannot set property {s} of [object URL] which has only a getter", .{key.latin1()});
    }
    const text = try urlsearchparams.toUsv(vm, v);
    if (names.is(key, "href")) {
        const r = (try parseString(vm, text, null)) orelse return throwCoded(vm, .type_error, "ERR_INVALID_URL", "Invalid URL");
        return store(vm, o, &r, true);
    }
    var r = try recordOf(vm, o);
    const raw = try utf8Of(vm, text);
    // The userinfo setters encode the value as it is; the others parse it, which drops tabs
    // and newlines first.
    const is_userinfo = names.is(key, "username") or names.is(key, "password");
    const value = if (is_userinfo) raw else parser.removeTabsAndNewlines(raw);
    const buf = try scratch(vm, parser.capacityFor(value.len, null));
    if (names.is(key, "protocol")) parser.setProtocol(&r, buf, value);
    if (names.is(key, "username")) parser.setUsername(&r, buf, value);
    if (names.is(key, "password")) parser.setPassword(&r, buf, value);
    if (names.is(key, "host") or names.is(key, "hostname")) {
        parser.setHost(&r, buf, value, names.is(key, "host")) catch return throwIdna(vm);
    }
    if (names.is(key, "port")) parser.setPort(&r, value);
    if (names.is(key, "pathname")) parser.setPathname(&r, buf, value);
    if (names.is(key, "hash")) parser.setHash(&r, buf, value);
    if (names.is(key, "search")) {
        parser.setSearch(&r, buf, value);
        return store(vm, o, &r, true);
    }
    return store(vm, o, &r, false);
}

fn store(vm: *Vm, o: *object.Object, r: *const Record, query_changed: bool) Error!void {
    try ops.checkModuleWrite(vm, o);
    object.mapOf(o).put(vm.heap, href_key, Value.string(try hrefString(vm, r))) catch return vm.outOfMemory();
    if (query_changed) try refillParams(vm, o, r);
}

/// The URLSearchParams of a URL, parsed again from its query.
fn refillParams(vm: *Vm, o: *object.Object, r: *const Record) Error!void {
    const params = object.mapOf(o).get(params_key).?.asObject();
    try urlsearchparams.replaceWith(vm, params, r.query orelse "");
}

/// Called by a URLSearchParams linked to a URL after each change: the URL's query becomes
/// the params' serialization (none when that is empty).
pub fn paramsChanged(vm: *Vm, o: *object.Object, serialized: *String) Error!void {
    var r = try recordOf(vm, o);
    r.query = if (serialized.len == 0) null else serialized.latin1();
    try store(vm, o, &r, false);
}

pub fn toJSON(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return toStringMethod(vm, this, args);
}

test "url: every field name is a known name" {
    inline for (fields) |n| _ = comptime names.id(n);
}
