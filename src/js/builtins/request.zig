//! `Request`, as WinterTC's minimum common API has it (the Fetch standard's, as node 20's
//! undici implements it): `new Request(input, init?)` with `method`, `url`, `headers` (a
//! Headers) and `body`, the promises `text()`, `json()` and `arrayBuffer()`, and `clone()`.
//! A handler's `fetch` takes one (handler/fetch.zig), and a handler's own `request` argument
//! inherits from `Request.prototype` (so `request instanceof Request` holds and its
//! `text()` and `json()` are these).
//!
//! Decision: a Request is a plain object whose prototype is `Request.prototype`, holding its
//! four members as own read-only, non-enumerable properties (as a TextDecoder holds its
//! settings): `Object.keys` and JSON.stringify see nothing, as node's getters give, and a
//! property read costs what any read costs. The body is read whole, so it is a Uint8Array of
//! its bytes (node's is a ReadableStream) or null, and it can be read more than once (there
//! is no `bodyUsed`), as a fetched Response's.
const std = @import("std");
const assert = std.debug.assert;

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
const headers_mod = @import("headers.zig");
const typed_arrays = @import("typed_arrays.zig");
const urlsearchparams = @import("urlsearchparams.zig");
const url = @import("url.zig");
const promises = @import("promises.zig");
const json = @import("json.zig");
const arg = builtins.arg;

/// The members are the object's own, fixed: a script reads them and cannot change them.
const fixed: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true, .not_configurable = true };

pub const content_type_text = "text/plain;charset=UTF-8";
pub const content_type_form = "application/x-www-form-urlencoded;charset=UTF-8";

fn prototype() Value {
    return Value.builtin(comptime builtins.builtinId("%Request.prototype%"));
}

/// Whether `v` inherits from Request.prototype directly: a constructed Request, or a
/// handler's own request.
pub fn isRequestLike(v: Value) bool {
    return v.is(.object) and v.asObject().proto.eqlBits(prototype());
}

/// Makes `o` (a handler's request) inherit from Request.prototype.
pub fn adopt(o: *object.Object) void {
    assert(o.kind == .plain);
    o.proto = prototype();
}

/// What a constructed Request holds (a handler's own request has no `url`: null).
pub const Parts = struct {
    method: *String,
    url: *String,
    /// A Headers.
    headers: *object.Object,
    /// The body's bytes; null: none.
    body: ?[]const u8,
};

pub fn partsOf(v: Value) ?Parts {
    if (!isRequestLike(v)) return null;
    const o = v.asObject();
    const url_value = o.properties.get(names.string("url")) orelse return null;
    const method = o.properties.get(names.string("method")) orelse return null;
    const headers = o.properties.get(names.string("headers")) orelse return null;
    if (!url_value.isString() or !method.isString() or !headers.is(.object)) return null;
    if (!headers_mod.isHeaders(headers.asObject())) return null;
    return .{
        .method = method.asString(),
        .url = url_value.asString(),
        .headers = headers.asObject(),
        .body = bytesOf(o.properties.get(names.string("body")) orelse Value.null_value),
    };
}

fn bytesOf(body: Value) ?[]const u8 {
    if (body.objectOf(.typed_array)) |o| return o.as(object.TypedArray).bytes();
    if (body.objectOf(.array_buffer)) |o| return o.as(object.ArrayBuffer).slice();
    return null;
}

pub fn requireNew(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Class constructor Request cannot be invoked without 'new'");
}

/// `new Request(input, init?)`: `input` a URL (any string `new URL` parses, with no user or
/// password) or a Request whose members are the defaults; `init`'s `method`, `headers` and
/// `body` (read in that order, as undici reads the dictionary) replace them.
pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    if (args.len == 0) return vm.throwMessage(.type_error, "Request constructor: 1 argument required, but 0 found.");
    const input = args[0];
    const init = arg(args, 1);
    if (!init.isNullish() and !init.is(.object)) {
        return vm.throwFmt(.type_error, "Request constructor: Expected {f} to be one of: Null, Undefined, Object.", .{ops.ShortFormat{ .vm = vm, .v = init }});
    }
    var parts: Parts = if (partsOf(input)) |p| p else .{
        .method = names.string("GET"),
        .url = try parsedUrl(vm, input),
        .headers = undefined,
        .body = null,
    };
    const from_request = partsOf(input) != null;
    var content_type: ?[]const u8 = null;
    var headers_init = if (from_request) Value.obj(parts.headers) else Value.undefined_value;
    if (!init.isNullish()) {
        if (try member(vm, init, "method")) |m| parts.method = try checkedMethod(vm, m);
        if (try member(vm, init, "headers")) |h| headers_init = h;
        if (try member(vm, init, "body")) |b| {
            parts.body = null;
            if (!b.isNull()) {
                const extracted = try extractBody(vm, b);
                parts.body = extracted.buffer.slice();
                content_type = extracted.content_type;
            }
        }
    }
    if (parts.body != null and (parts.method.eqlLatin1("GET") or parts.method.eqlLatin1("HEAD"))) {
        return vm.throwMessage(.type_error, "Request with GET/HEAD method cannot have body.");
    }
    parts.headers = (try headers_mod.fromInit(vm, headers_init)).asObject();
    if (content_type) |t| if (!headers_mod.hasName(parts.headers, "content-type")) {
        const name = Value.string(names.string("content-type"));
        _ = try headers_mod.append(vm, Value.obj(parts.headers), &.{ name, Value.string(try vm.newLatin1(t)) });
    };
    return Value.obj(try make(vm, parts));
}

/// A Request of these parts; its body a Uint8Array of a copy of the bytes (the caller's
/// may be a script's Uint8Array, which it can still write).
fn make(vm: *Vm, parts: Parts) Error!*object.Object {
    const o = try vm.newObject(4);
    o.proto = prototype();
    const body = if (parts.body) |bytes| try uint8Copy(vm, bytes) else Value.null_value;
    try define(vm, o, "method", Value.string(parts.method));
    try define(vm, o, "url", Value.string(parts.url));
    try define(vm, o, "headers", Value.obj(parts.headers));
    try define(vm, o, "body", body);
    return o;
}

fn define(vm: *Vm, o: *object.Object, comptime name: []const u8, v: Value) Error!void {
    o.properties.define(vm.heap, names.string(name), v, fixed) catch return vm.outOfMemory();
}

/// The href of `new URL(input)`, or node's TypeError.
fn parsedUrl(vm: *Vm, input: Value) Error!*String {
    const parsed = (try url.parseHref(vm, input)) orelse {
        // undici's error, with the URL parser's as its cause.
        const written = try ops.toString(vm, input);
        var buf: [512]u8 = undefined;
        var w: std.Io.Writer = .fixed(&buf);
        w.print("Failed to parse URL from {f}", .{ops.StringFormat{ .s = written }}) catch {}; // A long message is cut.
        const e = try vm.newError(.type_error, w.buffered());
        const cause = try vm.newError(.type_error, "Invalid URL");
        const code = Value.string(try vm.newLatin1("ERR_INVALID_URL"));
        cause.object.properties.put(vm.heap, names.string("code"), code) catch return vm.outOfMemory();
        e.object.properties.define(vm.heap, names.string("cause"), Value.obj(&cause.object), object.PropertyFlags.hidden) catch return vm.outOfMemory();
        return vm.throwValue(Value.obj(&e.object));
    };
    if (parsed.credentials) {
        return vm.throwFmt(.type_error, "Request cannot be constructed from a URL that includes credentials: {s}", .{parsed.href.latin1()});
    }
    return parsed.href;
}

/// A method as the Fetch standard normalizes it: a token of at most 32 bytes, DELETE, GET,
/// HEAD, OPTIONS, POST and PUT upper-cased whatever their case, CONNECT, TRACE and TRACK
/// refused, the rest as written (node keeps `patch` in lower case). `prefix` starts the
/// messages ("fetch: " for fetch's), after which they are undici's.
pub fn normalizeMethod(vm: *Vm, v: Value, comptime prefix: []const u8) Error!*String {
    const s = try ops.toString(vm, v);
    if (s.flags.wide or s.len > 32 or !isToken(s.latin1())) {
        return vm.throwFmt(.type_error, prefix ++ "'{f}' is not a valid HTTP method.", .{ops.StringFormat{ .s = s }});
    }
    const text = s.latin1();
    inline for (.{ "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT" }) |known| {
        if (std.ascii.eqlIgnoreCase(text, known)) return names.string(known);
    }
    inline for (.{ "CONNECT", "TRACE", "TRACK" }) |forbidden| {
        if (std.ascii.eqlIgnoreCase(text, forbidden)) return vm.throwFmt(.type_error, prefix ++ "'{s}' HTTP method is unsupported.", .{text});
    }
    return s;
}

fn checkedMethod(vm: *Vm, v: Value) Error!*String {
    return normalizeMethod(vm, v, "");
}

/// RFC 9110 §5.6.2's token.
fn isToken(text: []const u8) bool {
    if (text.len == 0) return false;
    for (text) |c| switch (c) {
        'a'...'z', 'A'...'Z', '0'...'9', '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~' => {},
        else => return false,
    };
    return true;
}

/// A body and the Content-Type the Fetch standard gives it (none for bytes).
pub const Extracted = struct { buffer: *object.ArrayBuffer, content_type: ?[]const u8 };

/// The Fetch standard's "extract a body" for what the language has: a typed array's or an
/// ArrayBuffer's bytes, a URLSearchParams' serialization, or anything else's string as
/// UTF-8, each copied now into a buffer of its own.
pub fn extractBody(vm: *Vm, v: Value) Error!Extracted {
    if (bytesOf(v)) |bytes| return .{ .buffer = try copyBuffer(vm, bytes), .content_type = null };
    if (v.is(.object) and urlsearchparams.isSearchParams(v.asObject())) {
        const serialized = (try urlsearchparams.toStringMethod(vm, v, &.{})).asString();
        return .{ .buffer = try utf8Buffer(vm, serialized), .content_type = content_type_form };
    }
    return .{ .buffer = try utf8Buffer(vm, try ops.toString(vm, v)), .content_type = content_type_text };
}

/// A string's UTF-8 (a lone surrogate as U+FFFD), in a new ArrayBuffer.
pub fn utf8Buffer(vm: *Vm, s: *const String) Error!*object.ArrayBuffer {
    var counter: std.Io.Writer.Discarding = .init(&.{});
    string.writeUtf8(&counter.writer, s) catch unreachable; // Discarding never fails.
    const len: usize = @intCast(counter.fullCount());
    try vm.charge(meter.bytesCost(len));
    const buffer = try typed_arrays.newBuffer(vm, len);
    var w: std.Io.Writer = .fixed(buffer.slice());
    string.writeUtf8(&w, s) catch unreachable; // Counted above.
    return buffer;
}

/// A copy of `bytes` in a new ArrayBuffer.
pub fn copyBuffer(vm: *Vm, bytes: []const u8) Error!*object.ArrayBuffer {
    try vm.charge(meter.bytesCost(bytes.len));
    const buffer = try typed_arrays.newBuffer(vm, bytes.len);
    @memcpy(buffer.slice(), bytes);
    return buffer;
}

/// A Uint8Array of a copy of `bytes`.
fn uint8Copy(vm: *Vm, bytes: []const u8) Error!Value {
    const buffer = try copyBuffer(vm, bytes);
    const view = try typed_arrays.newView(vm, .uint8, buffer, 0, @intCast(bytes.len));
    return Value.obj(&view.object);
}

/// `init[name]` as WebIDL reads a dictionary member; null when undefined.
fn member(vm: *Vm, init: Value, comptime name: []const u8) Error!?Value {
    const v = try ops.getField(vm, init, names.string(name));
    return if (v.isUndefined()) null else v;
}

// ---------------------------------------------------------------------------------------
// Request.prototype

/// `request.text()`: a promise of the body's text (a constructed Request's bytes decoded as
/// UTF-8, a handler's request's body string as it is).
pub fn textMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const body = try bodyText(vm, this, "text");
    return Value.obj(&(try promises.promiseResolve(vm, body)).object);
}

/// `request.json()`: a promise of JSON.parse of the text, rejected with its SyntaxError.
pub fn jsonMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const body = try bodyText(vm, this, "json");
    const p = try promises.newPromise(vm);
    if (json.parse(vm, Value.undefined_value, &.{body})) |parsed| {
        try promises.resolvePromise(vm, p, parsed);
    } else |err| switch (err) {
        error.Throw => {
            const reason = vm.exception;
            vm.exception = Value.undefined_value;
            vm.throw_site = null;
            try promises.rejectPromise(vm, p, reason);
        },
        else => |e| return e,
    }
    return Value.obj(&p.object);
}

/// `request.arrayBuffer()`: a promise of an ArrayBuffer of a copy of the body's bytes.
pub fn arrayBuffer(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const body = try bodyOf(vm, this, "arrayBuffer");
    const buffer = if (body.isString()) try utf8Buffer(vm, body.asString()) else try copyBuffer(vm, bytesOf(body) orelse "");
    return Value.obj(&(try promises.promiseResolve(vm, Value.obj(&buffer.object))).object);
}

/// `request.clone()`: a Request with the same members, its own Headers and body bytes.
pub fn clone(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    var parts = partsOf(this) orelse {
        if (isRequestLike(this)) return vm.throwMessage(.type_error, "Request.clone: a handler's request cannot be cloned (it has no URL; make one with new Request(url, { method, headers }))");
        return receiverError(vm, "clone");
    };
    parts.headers = (try headers_mod.fromInit(vm, Value.obj(parts.headers))).asObject();
    return Value.obj(try make(vm, parts));
}

fn receiverError(vm: *Vm, comptime method: []const u8) Error {
    return vm.throwMessage(.type_error, "Request." ++ method ++ ": call it on a Request");
}

/// The body member of a Request or of a handler's request: a string, bytes or null.
fn bodyOf(vm: *Vm, this: Value, comptime method: []const u8) Error!Value {
    if (!isRequestLike(this)) return receiverError(vm, method);
    const body = this.asObject().properties.get(names.string("body")) orelse return Value.null_value;
    if (body.isString() or body.isNull() or bytesOf(body) != null) return body;
    return vm.throwMessage(.type_error, "Request." ++ method ++ ": the request's body is not text or bytes");
}

fn bodyText(vm: *Vm, this: Value, comptime method: []const u8) Error!Value {
    const body = try bodyOf(vm, this, method);
    if (body.isString()) return body;
    const bytes = bytesOf(body) orelse return Value.string(string.empty);
    try vm.charge(meter.bytesCost(bytes.len));
    if (bytes.len == 0) return Value.string(string.empty);
    return Value.string(try urlsearchparams.decodeUtf8(vm, bytes));
}
