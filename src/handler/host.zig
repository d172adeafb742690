//! What sluice adds to the JavaScript language for request handlers: the `Response` global,
//! whose methods build Response objects (`Response.json`, `.text`, `.html`, `.redirect`, and
//! `.proxy`, which sends the request on to a pool instead of answering it).
//!
//! Decision: a Response is a plain engine object of the host's class 1 (it prints as
//! `Response { ... }`) whose own properties say what to send: `status`, `body` (a string),
//! `type` (its Content-Type), `location` (a redirect's) and `headers` (an object of strings).
//! The natives check everything a handler could get wrong (a status out of range, a field
//! name that is not a token, a value with CR or LF, a field sluice writes itself) and throw
//! where the handler called them, so the mistake has a line and a column; `Handler.zig` then
//! writes the response into the exchange's buffer without re-deciding any of it.
const std = @import("std");
const assert = std.debug.assert;

const js = @import("../js/js.zig");
const Vm = js.Vm;
const Value = js.Value;
const builtins = js.builtins;
const String = js.string.String;
const object = @import("../js/object.zig");
const ops = @import("../js/operations.zig");
const meter = js.meter;
const names = @import("../js/names.zig");
const chars = @import("../http/chars.zig");
const fetch = @import("fetch.zig");
const request_body = @import("request_body.zig");

/// The engine class of Response objects (`Host.class_names[class - 1]`).
pub const response_class: u16 = 1;
/// The engine class of a fetched Response's body (fetch.zig): printed as `ReadableStream {}`.
pub const stream_class: u16 = 2;

pub const host: builtins.Host = .{
    .natives = &.{
        .{ .name = "json", .length = 1, .func = json },
        .{ .name = "text", .length = 1, .func = text },
        .{ .name = "html", .length = 1, .func = html },
        .{ .name = "redirect", .length = 1, .func = redirect },
        .{ .name = "proxy", .length = 1, .func = proxy },
        // Not a member of `Response`: the `json` method of each request (`Handler.zig`;
        // request_body.zig, with `text` and `arrayBuffer` at the end of this table).
        .{ .name = "json", .length = 0, .func = request_body.json },
        // `new Response(body, init)`, and the `text` and `json` methods of what it makes.
        .{ .name = "Response", .length = 0, .func = construct },
        .{ .name = "text", .length = 0, .func = responseText },
        .{ .name = "json", .length = 0, .func = responseJson },
        // `fetch(url, init?)` (fetch.zig), and the body methods of the Response it settles with.
        .{ .name = "fetch", .length = 1, .func = fetch.fetch },
        .{ .name = "text", .length = 0, .func = fetch.fetchedText },
        .{ .name = "json", .length = 0, .func = fetch.fetchedJson },
        .{ .name = "arrayBuffer", .length = 0, .func = fetch.fetchedArrayBuffer },
        // A request's body methods (request_body.zig).
        .{ .name = "text", .length = 0, .func = request_body.text },
        .{ .name = "arrayBuffer", .length = 0, .func = request_body.arrayBuffer },
    },
    .functions = &.{.{ .name = "fetch", .native = fetch_native }},
    .objects = &.{.{
        .name = "Response",
        .members = &.{
            .{ .name = "json", .native = 0 },
            .{ .name = "text", .native = 1 },
            .{ .name = "html", .native = 2 },
            .{ .name = "redirect", .native = 3 },
            .{ .name = "proxy", .native = 4 },
        },
        .construct = construct_native,
        .instances_class = response_class,
    }},
    .class_names = &.{ "Response", "ReadableStream" },
};

pub const content_type_json = "application/json";
pub const content_type_text = "text/plain; charset=utf-8";
pub const content_type_html = "text/html; charset=utf-8";

/// Fields a handler may not set: sluice frames every message itself (DESIGN.md: "the framing
/// of a forwarded message is always the one sluice parsed, written by sluice"), and a
/// connection's persistence is the connection's business.
const reserved_fields = [_][]const u8{
    "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
};

/// Fields a handler may not set on a request it proxies, beyond `reserved_fields`: sluice
/// writes Host from the request it parsed and the forwarding fields from the peer it saw
/// (README, "Forwarding headers"), so a handler cannot make the backend see another client,
/// and the hop-by-hop fields describe the client's connection, not the backend's.
const proxy_reserved_fields = [_][]const u8{
    "host",             "x-forwarded-for",    "x-forwarded-proto",   "x-forwarded-host", "forwarded",
    "proxy-connection", "proxy-authenticate", "proxy-authorization",
};

/// At most this many fields in a proxied request's `headers` (each replaces the client's
/// fields of its name or is added).
pub const proxy_fields_max = 32;
/// The longest pool name (Config's pool names are shorter) and rewritten path.
pub const pool_name_bytes_max = 64;
pub const proxy_path_bytes_max = 8192;

/// The properties of a Response object, by the names the natives give them. A proxied
/// request's Response has `pool` (and `path` and `headers` if given) and no `status`.
pub const Field = enum { status, body, type, location, headers, pool, path, statusText, ok, url, bodyUsed };

/// `Response.json(value, init?)`: the body is `JSON.stringify(value)`.
fn json(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    const body = try js.Engine.stringifyJson(vm, builtins.arg(args, 0));
    if (!body.isString()) {
        return vm.throwMessage(.type_error, "Response.json: the value has no JSON form (undefined, a function)");
    }
    return make(vm, body, content_type_json, builtins.arg(args, 1));
}

/// `Response.text(string, init?)`.
fn text(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    return make(vm, try bodyText(vm, builtins.arg(args, 0)), content_type_text, builtins.arg(args, 1));
}

/// `Response.html(string, init?)`.
fn html(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    return make(vm, try bodyText(vm, builtins.arg(args, 0)), content_type_html, builtins.arg(args, 1));
}

/// `Response.redirect(location, status = 302)`: the statuses the Fetch standard allows.
fn redirect(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    const location = try ops.toString(vm, builtins.arg(args, 0));
    try vm.charge(meter.bytesCost(location.byteLen()));
    if (!fieldValueValid(location) or location.len == 0) {
        return vm.throwMessage(.type_error, "Response.redirect: the location is empty or has a byte a header field cannot carry");
    }
    var status: f64 = 302;
    if (!builtins.arg(args, 1).isUndefined()) status = try ops.toNumber(vm, builtins.arg(args, 1));
    switch (@as(i64, if (std.math.isFinite(status)) @intFromFloat(@trunc(status)) else 0)) {
        301, 302, 303, 307, 308 => if (@trunc(status) != status) return invalidRedirect(vm),
        else => return invalidRedirect(vm),
    }
    const response = try vm.newObject(4);
    response.class = response_class;
    try addField(vm, response, .status, Value.number(status));
    try addField(vm, response, .body, Value.string(js.string.empty));
    try addField(vm, response, .location, Value.string(location));
    return Value.obj(response);
}

/// The native index of `request.json` (`Engine.hostFunction`).
pub const request_json_native: u16 = 5;

const construct_native: u16 = 6;
const response_text_native: u16 = 7;
const response_json_native: u16 = 8;
const fetch_native: u16 = 9;
pub const fetched_text_native: u16 = 10;
pub const fetched_json_native: u16 = 11;
pub const fetched_array_buffer_native: u16 = 12;
pub const request_text_native: u16 = 13;
pub const request_array_buffer_native: u16 = 14;

/// The Content-Type the Fetch standard gives a string body.
pub const content_type_fetch_text = "text/plain;charset=UTF-8";

/// `new Response(body?, init?)`, as the Fetch standard has it for the bodies the language
/// has: a string (anything else is converted to one, as WebIDL's USVString converts it;
/// `text/plain;charset=UTF-8`), or none (null or undefined: an empty body and no
/// Content-Type). `init.status` is checked as node checks it, and `init.headers` becomes a
/// `Headers` (from a Headers, pairs or a record) of which none is a field sluice writes. The
/// object also has `text()` and `json()`, promises of its body as node's have.
fn construct(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    const body_arg = builtins.arg(args, 0);
    const init = builtins.arg(args, 1);
    var status: f64 = 200;
    var headers = Value.undefined_value;
    if (!init.isNullish()) {
        if (!init.isObject()) {
            return vm.throwMessage(.type_error, "Response constructor: Expected init to be a dictionary.");
        }
        if (try initMember(vm, init, "status")) |s| {
            status = try ops.toNumber(vm, s);
            if (@trunc(status) != status or status < 200 or status > 599) {
                return vm.throwMessage(.range_error, "init[\"status\"] must be in the range of 200 to 599, inclusive.");
            }
        }
        if (try initMember(vm, init, "headers")) |h| headers = try builtins.headers.fromInit(vm, h);
    }
    if (headers.isUndefined()) headers = try builtins.headers.fromInit(vm, Value.undefined_value);
    try refuseReserved(vm, headers);
    const response = try vm.newObject(8);
    response.class = response_class;
    try addField(vm, response, .status, Value.number(status));
    if (body_arg.isNullish()) {
        try addField(vm, response, .body, Value.string(js.string.empty));
    } else if (fetch.streamOf(body_arg)) |stream| {
        // A fetched body: the new Response takes it over, still at the pool; it is streamed
        // when returned, or read once by either Response.
        if (fetch.streamStateOf(stream) != .unread) {
            return vm.throwMessage(.type_error, "Response constructor: body already used (a fetched body can be read or returned once)");
        }
        try addField(vm, response, .body, body_arg);
    } else if (body_arg.objectOf(.typed_array) != null or body_arg.objectOf(.array_buffer) != null) {
        // Bytes (a fetched Response's body, say): sent as they are, with no Content-Type of
        // their own, as the Fetch standard gives a BufferSource body none.
        try addField(vm, response, .body, body_arg);
    } else {
        try addField(vm, response, .body, Value.string(try ops.toString(vm, body_arg)));
        try addField(vm, response, .type, Value.string(js.string.literal(content_type_fetch_text)));
    }
    try addField(vm, response, .headers, headers);
    const bytes = fetch.bodyOf(Value.obj(response)) != null or fetch.streamOf(body_arg) != null;
    if (fetch.streamOf(body_arg) != null) try addField(vm, response, .bodyUsed, Value.boolean(false));
    try putHidden(vm, response, "text", Value.native(builtins.natives_count + if (bytes) fetched_text_native else response_text_native));
    try putHidden(vm, response, "json", Value.native(builtins.natives_count + if (bytes) fetched_json_native else response_json_native));
    if (bytes) try putHidden(vm, response, "arrayBuffer", Value.native(builtins.natives_count + fetched_array_buffer_native));
    return Value.obj(response);
}

/// A TypeError at the call for a field of a response's Headers that sluice writes itself.
fn refuseReserved(vm: *Vm, headers: Value) Vm.Error!void {
    var fields = builtins.headers.fields(headers.asObject());
    while (fields.next()) |f| {
        if (isReservedIn(.response, f.name.latin1())) |reserved| {
            return vm.throwFmt(.type_error, "Response: {s} is written by sluice, not by a handler", .{reserved});
        }
    }
}

/// `init[name]`, read as WebIDL reads a dictionary member (getters run, inherited members
/// count); null when undefined.
fn initMember(vm: *Vm, init: Value, comptime name: []const u8) Vm.Error!?Value {
    const v = try ops.getField(vm, init, names.string(name));
    return if (v.isUndefined()) null else v;
}

/// `response.text()`: a promise of the body's text.
fn responseText(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    const body = try responseBody(vm, this, "text");
    return Value.obj(&(try builtins.promises.promiseResolve(vm, body)).object);
}

/// `response.json()`: a promise of JSON.parse of the body, rejected with its SyntaxError.
fn responseJson(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    const body = try responseBody(vm, this, "json");
    const p = try builtins.promises.newPromise(vm);
    if (js.Engine.parseJson(vm, body)) |parsed| {
        try builtins.promises.resolvePromise(vm, p, parsed);
    } else |err| switch (err) {
        error.Throw => {
            const reason = vm.exception;
            vm.exception = Value.undefined_value;
            try builtins.promises.rejectPromise(vm, p, reason);
        },
        else => |e| return e,
    }
    return Value.obj(&p.object);
}

fn responseBody(vm: *Vm, this: Value, comptime method: []const u8) Vm.Error!Value {
    if (!this.isObject() or this.asObject().class != response_class) {
        return vm.throwMessage(.type_error, "Response." ++ method ++ ": call it on a Response");
    }
    const body = own(this, "body") orelse Value.undefined_value;
    if (!body.isString()) return vm.throwMessage(.type_error, "Response." ++ method ++ ": the Response's body is not a string");
    return body;
}

/// A method of a Response, not enumerable (JSON and `Object.keys` leave it out).
fn putHidden(vm: *Vm, o: *object.Object, comptime name: []const u8, v: Value) Vm.Error!void {
    try addNew(vm, o, name, v, .hidden);
}

/// `Response.proxy(pool, { path, headers }?)`: the request goes on to the pool named, with its
/// balancing, health checks and retries, its target replaced by `path` (an origin-form target:
/// "/" and target bytes) and `headers` replacing or adding fields. Whether the pool exists is
/// known only to the generation the request runs in, so that is checked by the exchange.
fn proxy(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    const pool = builtins.arg(args, 0);
    if (!pool.isString() or pool.asString().flags.wide or pool.asString().len == 0 or
        pool.asString().len > pool_name_bytes_max)
    {
        return vm.throwMessage(.type_error, "Response.proxy: the pool must be a pool's name (a string of 1 to 64 bytes)");
    }
    const response = try vm.newObject(3);
    response.class = response_class;
    try addField(vm, response, .pool, pool);
    const init = builtins.arg(args, 1);
    if (!init.isNullish()) {
        if (!init.isObject()) return vm.throwMessage(.type_error, "Response.proxy: init must be an object { path, headers }");
        if (own(init, "path")) |p| if (!p.isUndefined()) {
            const path = try ops.toString(vm, p);
            if (!proxyPathValid(path)) {
                return vm.throwMessage(.type_error, "Response.proxy: path must start with / and hold only the bytes of a request target (at most 8192)");
            }
            try addField(vm, response, .path, Value.string(path));
        };
        if (own(init, "headers")) |h| if (!h.isUndefined()) {
            const headers = try checkedHeaders(vm, h, .request);
            if (headers.asObject().properties.len > proxy_fields_max) {
                return vm.throwMessage(.range_error, "Response.proxy: at most 32 headers");
            }
            try addField(vm, response, .headers, headers);
        };
    }
    return Value.obj(response);
}

/// RFC 9112 §3.2.1: origin-form, `absolute-path [ "?" query ]`, in the bytes the request
/// parser accepts in a target.
pub fn proxyPathValid(path: *const String) bool {
    if (path.flags.wide or path.len == 0 or path.len > proxy_path_bytes_max) return false;
    const bytes = path.latin1();
    return bytes[0] == '/' and chars.findNonTargetByte(bytes) == null;
}

fn invalidRedirect(vm: *Vm) Vm.Error {
    return vm.throwMessage(.range_error, "Response.redirect: the status must be 301, 302, 303, 307 or 308");
}

/// A body's text: undefined and null are empty, anything else its string.
fn bodyText(vm: *Vm, v: Value) Vm.Error!Value {
    if (v.isNullish()) return Value.string(js.string.empty);
    return Value.string(try ops.toString(vm, v));
}

/// A Response with `init`'s status and headers, checked.
fn make(vm: *Vm, body: Value, comptime content_type: []const u8, init: Value) Vm.Error!Value {
    var status: f64 = 200;
    var headers = Value.undefined_value;
    if (!init.isNullish()) {
        if (!init.isObject()) return vm.throwMessage(.type_error, "Response: init must be an object { status, headers }");
        if (own(init, "status")) |s| if (!s.isUndefined()) {
            status = try ops.toNumber(vm, s);
            if (@trunc(status) != status or status < 200 or status > 599) {
                return vm.throwMessage(.range_error, "Response: init.status must be in the range of 200 to 599, inclusive");
            }
        };
        if (own(init, "headers")) |h| if (!h.isUndefined()) {
            headers = try checkedHeaders(vm, h, .response);
        };
    }
    const response = try vm.newObject(4);
    response.class = response_class;
    try addField(vm, response, .status, Value.number(status));
    try addField(vm, response, .body, body);
    try addField(vm, response, .type, Value.string(js.string.literal(content_type)));
    if (!headers.isUndefined()) try addField(vm, response, .headers, headers);
    return Value.obj(response);
}

/// Which message a handler's fields go into: what it may not set differs.
pub const Message = enum { response, request };

/// `init.headers` as a fresh object of string values, each field checked: a name that is a
/// token, a value a field can carry, and none of the fields sluice writes itself. A
/// `content-type` here replaces the one the method chose. In a proxied request a `null`
/// value stays null: the client's field of that name is removed.
pub fn checkedHeaders(vm: *Vm, headers_in: Value, message: Message) Vm.Error!Value {
    var headers = headers_in;
    if (headers.isObject() and builtins.headers.isHeaders(headers.asObject())) {
        // A Headers: a response keeps a copy (Set-Cookie's values stay apart); a proxied
        // request takes its fields as a record, checked below like any other.
        if (message == .response) {
            const copy = try builtins.headers.fromInit(vm, headers);
            try refuseReserved(vm, copy);
            return copy;
        }
        headers = Value.obj(try builtins.headers.toRecord(vm, headers.asObject()));
    }
    if (!headers.isObject() or headers.asObject().kind != .plain) {
        return vm.throwMessage(.type_error, "Response: init.headers must be an object of field names and values");
    }
    const source = headers.asObject();
    const copy = try vm.newObject(source.properties.len);
    for (source.properties.slice()) |property| {
        const name = property.key;
        // A field's name and value are checked byte by byte: paid for, as the builtins' scans.
        try vm.charge(meter.elementsCost(1) + meter.bytesCost(name.byteLen()));
        if (name.flags.wide or !isToken(name.latin1())) {
            return vm.throwMessage(.type_error, "Response: a header name must be a token (letters, digits, !#$%&'*+-.^_`|~)");
        }
        if (isReservedIn(message, name.latin1())) |reserved| {
            return vm.throwFmt(.type_error, "Response: {s} is written by sluice, not by a handler", .{reserved});
        }
        if (message == .request and property.value.isNull()) {
            copy.properties.put(vm.heap, name, Value.null_value) catch return vm.outOfMemory();
            continue;
        }
        const value = try ops.toString(vm, property.value);
        try vm.charge(meter.bytesCost(value.byteLen()));
        if (!fieldValueValid(value)) {
            return vm.throwMessage(.type_error, "Response: a header value may not contain CR, LF, NUL or characters past U+00FF");
        }
        copy.properties.put(vm.heap, name, Value.string(value)) catch return vm.outOfMemory();
    }
    return Value.obj(copy);
}

/// The reserved field `name` is, if it is one.
pub fn isReserved(name: []const u8) ?[]const u8 {
    for (reserved_fields) |reserved| if (std.ascii.eqlIgnoreCase(name, reserved)) return reserved;
    return null;
}

/// The field `name` is if a handler may not set it in `message`.
pub fn isReservedIn(message: Message, name: []const u8) ?[]const u8 {
    if (isReserved(name)) |reserved| return reserved;
    if (message == .response) return null;
    for (proxy_reserved_fields) |reserved| if (std.ascii.eqlIgnoreCase(name, reserved)) return reserved;
    return null;
}

pub fn isToken(name: []const u8) bool {
    if (name.len == 0) return false;
    for (name) |c| if (!chars.isTchar(c)) return false;
    return true;
}

/// RFC 9110 §5.5: visible bytes, spaces and tabs (no CR, LF or NUL); one byte per unit, so
/// what is written is what the handler wrote.
pub fn fieldValueValid(s: *const String) bool {
    if (s.flags.wide) return false;
    for (s.latin1()) |c| if ((c < ' ' and c != '\t') or c == 0x7f) return false;
    return true;
}

/// Adds a field to a Response a native just made. Keys are the static strings of names.zig:
/// no key is allocated, and a lookup matches by the name's id whether the native or the
/// script wrote the property.
fn addField(vm: *Vm, response: *object.Object, which: Field, v: Value) Vm.Error!void {
    response.properties.addNew(vm.heap, fieldKey(which), v, .{}) catch return vm.outOfMemory();
}

fn fieldKey(which: Field) *String {
    return switch (which) {
        inline else => |w| names.string(@tagName(w)),
    };
}

/// Adds a property by a known name (names.zig) to an object a native just made, which does
/// not have it yet.
pub fn addNew(vm: *Vm, o: *object.Object, comptime name: []const u8, v: Value, flags: object.PropertyFlags) Vm.Error!void {
    o.properties.addNew(vm.heap, names.string(name), v, flags) catch return vm.outOfMemory();
}

/// An own property of an object, by name (a name names.zig knows).
pub fn own(v: Value, comptime name: []const u8) ?Value {
    assert(v.isObject());
    return v.asObject().properties.get(names.string(name));
}

/// An own property of an object by a host's key (js.string.hostKey).
pub fn ownHidden(v: Value, key: *String) ?Value {
    assert(v.isObject() and key.flags.private);
    return v.asObject().properties.get(key);
}

/// A host key's property: private, so no key listing shows it.
pub const host_key_flags: object.PropertyFlags = .{ .not_enumerable = true, .private = true };

/// Sets an own property by a host's key: private, so the script can neither see nor change it.
pub fn putHostKey(vm: *Vm, o: *object.Object, key: *String, v: Value) Vm.Error!void {
    assert(key.flags.private);
    o.properties.define(vm.heap, key, v, host_key_flags) catch return vm.outOfMemory();
}

/// A Response's property (null when absent, as after a handler's `delete r.body`).
pub fn field(response: Value, which: Field) ?Value {
    return response.asObject().properties.get(fieldKey(which));
}
