//! `fetch(url, init?)` in a handler: a request to a configured pool, whose answer settles a
//! promise (docs/ARCHITECTURE.md, "`fetch` to pools"). This file is the engine's side: the
//! native that checks the call and records it as a host operation (js/HostOps.zig), what the
//! exchange reads of a recorded fetch (`Request`), and the `Response` a fetched answer becomes.
//!
//! Decision: everything a handler can get wrong is a rejected promise with a TypeError that
//! names it, as the Fetch standard's `fetch` rejects rather than throws: a URL that is not
//! `http://POOL/...`, a method or field sluice cannot send, a body with GET or HEAD, more
//! fetches in flight than `fetch_max`. Whether the pool exists is the exchange's question (the
//! generation the request runs in knows), and its answer is a rejection too. The body is copied
//! out of the handler's objects at the call, as the standard extracts it there.
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
const http = @import("../http/http.zig");
const chars = @import("../http/chars.zig");
const host = @import("host.zig");
const request_body = @import("request_body.zig");

/// What a fetch costs beyond the bytes of its fields and body: it starts an exchange.
const fetch_ticks = 256;

/// `fetch(url, init?)`: a promise of the pool's Response.
pub fn fetch(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    try vm.charge(fetch_ticks);
    const p = try builtins.promises.newPromise(vm);
    const request = record(vm, builtins.arg(args, 0), builtins.arg(args, 1)) catch |err| switch (err) {
        error.Throw => return rejected(vm, p),
        error.Terminate => return err,
    };
    // One operation of the table is the request body's read (request_body.zig): `fetch_max`
    // fetches may fly beside it.
    const fetch_max = vm.limits.host_ops_max - 1;
    var limit = fetch_max;
    for (vm.host_ops.ops) |op| {
        if (op.state != .free and request_body.isRead(op.request)) limit += 1;
    }
    if (vm.host_ops.begin(limit, p, request) == null) {
        switch (vm.throwFmt(.type_error, "fetch: this request already has {d} fetches in flight (the handler's fetch_max)", .{fetch_max})) {
            error.Throw => return rejected(vm, p),
            error.Terminate => |err| return err,
        }
    }
    return Value.obj(&p.object);
}

/// `p`, rejected with the exception just raised.
pub fn rejected(vm: *Vm, p: *object.Promise) Vm.Error!Value {
    const reason = vm.exception;
    vm.exception = Value.undefined_value;
    vm.throw_site = null;
    try builtins.promises.rejectPromise(vm, p, reason);
    return Value.obj(&p.object);
}

/// The fetch as the exchange reads it: a plain object of checked strings, in the run's heap.
/// `input` is a URL or a `Request` (builtins/request.zig), whose members `init`'s replace.
fn record(vm: *Vm, input: Value, init: Value) Vm.Error!Value {
    if (!vm.timers_allowed) {
        return vm.throwMessage(.type_error, "fetch: a handler's top-level code may not fetch (its state outlives every request)");
    }
    const from = builtins.request.partsOf(input);
    if (from == null and builtins.request.isRequestLike(input)) {
        return vm.throwMessage(.type_error, "fetch: the handler's own request names no pool: send it on with Response.proxy(pool), or fetch(new Request(\"http://POOL\" + request.target, { method, headers }))");
    }
    const url = if (from) |r| r.url else try ops.toString(vm, input);
    try vm.charge(meter.bytesCost(url.byteLen()));
    const parts = try splitUrl(vm, url);
    const request = try vm.newObject(6);
    try put(vm, request, "url", Value.string(url));
    try put(vm, request, "pool", Value.string(try vm.newLatin1(parts.pool)));
    try put(vm, request, "target", Value.string(try vm.newLatin1(parts.target)));
    var method: []const u8 = if (from) |r| r.method.latin1() else "GET";
    var headers: ?Value = if (from) |r| Value.obj(r.headers) else null;
    var body: ?*object.ArrayBuffer = null;
    // The Content-Type the Fetch standard gives init's body, unless the fields have one (a
    // Request's body got its own when the Request was made).
    var content_type: ?[]const u8 = null;
    if (from) |r| if (r.body) |bytes| {
        body = try builtins.request.copyBuffer(vm, bytes);
    };
    if (!init.isNullish()) {
        if (!init.isObject()) return vm.throwMessage(.type_error, "fetch: init must be an object { method, headers, body }");
        if (try member(vm, init, "method")) |m| method = (try builtins.request.normalizeMethod(vm, m, "fetch: ")).latin1();
        if (try member(vm, init, "headers")) |h| headers = h;
        if (try member(vm, init, "body")) |b| {
            body = null;
            content_type = null;
            if (!b.isNull()) {
                const extracted = try builtins.request.extractBody(vm, b);
                body = extracted.buffer;
                content_type = extracted.content_type;
            }
        }
    }
    if (body != null and (std.mem.eql(u8, method, "GET") or std.mem.eql(u8, method, "HEAD"))) {
        return vm.throwMessage(.type_error, "fetch: Request with GET/HEAD method cannot have body.");
    }
    if (headers != null or content_type != null) {
        const fields_value = try checkedFields(vm, headers orelse Value.undefined_value);
        if (content_type) |t| try addContentType(vm, fields_value.asObject(), t);
        try put(vm, request, "headers", fields_value);
    }
    try put(vm, request, "method", Value.string(try vm.newLatin1(method)));
    if (body) |b| try put(vm, request, "body", Value.obj(&b.object));
    return Value.obj(request);
}

/// `init.headers` (or a Request's; undefined: none) as the checked record the exchange writes.
fn checkedFields(vm: *Vm, h: Value) Vm.Error!Value {
    if (h.isUndefined()) return Value.obj(try vm.newObject(1));
    const headers = try host.checkedHeaders(vm, h, .request);
    const properties = headers.asObject().properties.slice();
    if (properties.len > host.proxy_fields_max) return vm.throwMessage(.type_error, "fetch: at most 32 headers");
    for (properties) |property| if (!property.value.isString()) {
        return vm.throwMessage(.type_error, "fetch: a header's value must be a string");
    };
    return headers;
}

/// `content-type: t` appended to checked fields that have no Content-Type.
fn addContentType(vm: *Vm, fields_object: *object.Object, t: []const u8) Vm.Error!void {
    for (fields_object.properties.slice()) |property| {
        if (std.ascii.eqlIgnoreCase(property.key.latin1(), "content-type")) return;
    }
    if (fields_object.properties.len >= host.proxy_fields_max) return vm.throwMessage(.type_error, "fetch: at most 32 headers");
    const value = Value.string(try vm.newLatin1(t));
    fields_object.properties.put(vm.heap, try vm.newLatin1("content-type"), value) catch return vm.outOfMemory();
}

const UrlParts = struct { pool: []const u8, target: []const u8 };

/// `http://POOL/path?query#fragment`: the pool's name and the origin-form target (`/` when
/// the path is empty; the fragment is not sent, as no client sends one).
fn splitUrl(vm: *Vm, url: *const String) Vm.Error!UrlParts {
    if (url.flags.wide) return vm.throwMessage(.type_error, "fetch: the URL must be http://POOL/path, in ASCII (percent-encode the rest)");
    const text = url.latin1();
    const scheme_end = std.mem.indexOf(u8, text, "://") orelse
        return vm.throwMessage(.type_error, "fetch: the URL must be http://POOL/path, where POOL is a configured pool's name");
    const scheme = text[0..scheme_end];
    if (std.ascii.eqlIgnoreCase(scheme, "https")) {
        return vm.throwMessage(.type_error, "fetch: https:// is not for pools: write http://POOL/path (the pool's own tls setting decides TLS to its backends)");
    }
    if (!std.ascii.eqlIgnoreCase(scheme, "http")) {
        return vm.throwMessage(.type_error, "fetch: only http://POOL/path URLs are fetched (a configured pool's name; nothing leaves for other hosts)");
    }
    const rest = text[scheme_end + 3 ..];
    const authority_end = std.mem.indexOfAny(u8, rest, "/?#") orelse rest.len;
    const pool = rest[0..authority_end];
    if (std.mem.indexOfScalar(u8, pool, '@') != null) return vm.throwMessage(.type_error, "fetch: the URL may not carry a user or password");
    if (std.mem.indexOfScalar(u8, pool, ':') != null) return vm.throwMessage(.type_error, "fetch: the URL may not name a port: the pool's members have theirs (write http://POOL/path)");
    if (pool.len == 0 or pool.len > host.pool_name_bytes_max) return vm.throwMessage(.type_error, "fetch: the URL's host must be a pool's name (1 to 64 bytes)");
    var target = rest[authority_end..];
    if (std.mem.indexOfScalar(u8, target, '#')) |hash| target = target[0..hash];
    if (target.len == 0 or target[0] == '?') {
        target = try concatSlash(vm, target);
    }
    if (target.len > host.proxy_path_bytes_max or chars.findNonTargetByte(target) != null) {
        return vm.throwMessage(.type_error, "fetch: the URL's path and query must be request-target bytes, at most 8192 (percent-encode the rest)");
    }
    return .{ .pool = pool, .target = target };
}

/// "/" followed by `query` ("" or "?..."), in the run's heap.
fn concatSlash(vm: *Vm, query: []const u8) Vm.Error![]const u8 {
    const bytes = vm.heap.allocBytes(query.len + 1, 1) catch return vm.outOfMemory();
    bytes[0] = '/';
    @memcpy(bytes[1..], query);
    return bytes;
}

/// `init[name]` as WebIDL reads a dictionary member; null when undefined.
fn member(vm: *Vm, init: Value, comptime name: []const u8) Vm.Error!?Value {
    const v = try ops.getField(vm, init, names.string(name));
    return if (v.isUndefined()) null else v;
}

fn put(vm: *Vm, o: *object.Object, comptime name: []const u8, v: Value) Vm.Error!void {
    o.properties.put(vm.heap, names.string(name), v) catch return vm.outOfMemory();
}

// ---------------------------------------------------------------------------------------------
// What the exchange reads of a recorded fetch

/// A fetch as recorded by the native: its strings are checked Latin-1 (ASCII for the pool,
/// the target and the method), in the request's heap until the request ends.
pub const Request = struct {
    pool: []const u8,
    target: []const u8,
    method: []const u8,
    url: *const String,
    /// The handler's fields (names are tokens, values field values): `fields`.
    headers: ?*object.Object,
    body: []const u8,

    pub fn of(v: Value) Request {
        assert(v.isObject());
        const headers = host.own(v, "headers");
        const body = host.own(v, "body");
        return .{
            .pool = host.own(v, "pool").?.asString().latin1(),
            .target = host.own(v, "target").?.asString().latin1(),
            .method = host.own(v, "method").?.asString().latin1(),
            .url = host.own(v, "url").?.asString(),
            .headers = if (headers) |h| h.asObject() else null,
            .body = if (body) |b| b.asObject().as(object.ArrayBuffer).slice() else "",
        };
    }

    /// The handler's fields, in the order it gave them.
    pub fn fields(r: *const Request) Fields {
        return .{ .properties = if (r.headers) |h| h.properties.slice() else &.{} };
    }
};

pub const Fields = struct {
    properties: []const object.Property,
    i: usize = 0,

    pub fn next(f: *Fields) ?http.Header {
        if (f.i == f.properties.len) return null;
        const property = f.properties[f.i];
        f.i += 1;
        return .{ .name = property.key.latin1(), .value = property.value.asString().latin1() };
    }

    pub fn count(f: *const Fields) usize {
        return f.properties.len;
    }
};

// ---------------------------------------------------------------------------------------------
// The Response a fetch settles with

/// What came back from the pool, as the exchange gathered it in the request's heap.
pub const Answer = struct {
    status: u16,
    reason: []const u8,
    /// The fields kept ("Name: value\r\n" lines, hop-by-hop and framing fields left out).
    fields: []const u8,
    body: Body,
};

/// A fetched response's body when its promise settles.
pub const Body = union(enum) {
    /// The response has none.
    none,
    /// Whole (it came with the head), 8-byte aligned in the request's heap.
    bytes: []align(8) u8,
    /// Still at the pool: the worker's fetch slot that holds it (proxy/Subrequest.zig) and how
    /// the pool frames it. Read on demand (a host operation) or streamed when returned.
    pending: Pending,
};

pub const Pending = struct {
    slot: u32,
    framing: Framing,
};

/// How a pending body reaches its end, as the pool framed it: the head a handler returns it
/// with says the same (sluice writes the framing fields).
pub const Framing = union(enum) {
    length: u64,
    chunked,
    /// The pool's connection closes after it.
    close,
};

/// A fetched Response's `body`: an object of the host's `ReadableStream` class whose hidden
/// members say where the bytes are. It has no methods of its own (the engine has no streams):
/// a handler reads it with the Response's `text()`, `json()` or `arrayBuffer()`, or hands it
/// to `new Response(body, init)` or returns it, and then sluice streams it from the pool.
/// Its members are host keys (js.string.hostKey): the script cannot read or change them.
const stream_slot = js.string.hostKey("#slot");
const stream_state = js.string.hostKey("#state");
const stream_bytes = js.string.hostKey("#bytes");
const stream_framing = js.string.hostKey("#framing");
const stream_kind = js.string.hostKey("#kind");
const stream_response = js.string.hostKey("#response");

/// A body can be used once, as the Fetch standard's: read, or returned (streamed).
pub const StreamState = enum(u8) { unread, reading, used };

/// What a read asked the body as.
pub const ReadKind = enum(u8) { text, json, array_buffer };

/// A `Response` of the host's class for `answer`: `status`, `statusText`, `ok`, `url`,
/// `headers` (a Headers), `body` (a body stream, or null), `bodyUsed`, and `text()`, `json()`
/// and `arrayBuffer()`.
pub fn newResponse(vm: *Vm, answer: *const Answer, url: *const String) Vm.Error!Value {
    const response = try vm.newObject(10);
    response.class = host.response_class;
    try host.addNew(vm, response, "status", Value.number(@floatFromInt(answer.status)), .{});
    try host.addNew(vm, response, "statusText", Value.string(try reasonString(vm, answer.reason)), .{});
    try host.addNew(vm, response, "ok", Value.boolean(answer.status >= 200 and answer.status <= 299), .{});
    try host.addNew(vm, response, "url", Value.string(@constCast(url)), .{});
    try host.addNew(vm, response, "headers", try headersOf(vm, answer.fields), .{});
    const body = switch (answer.body) {
        .none => Value.null_value,
        else => try newStream(vm, response, &answer.body),
    };
    try host.addNew(vm, response, "body", body, .{});
    try host.addNew(vm, response, "bodyUsed", Value.boolean(false), .{});
    try host.addNew(vm, response, "text", Value.native(builtins.natives_count + host.fetched_text_native), .hidden);
    try host.addNew(vm, response, "json", Value.native(builtins.natives_count + host.fetched_json_native), .hidden);
    try host.addNew(vm, response, "arrayBuffer", Value.native(builtins.natives_count + host.fetched_array_buffer_native), .hidden);
    return Value.obj(response);
}

fn newStream(vm: *Vm, response: *object.Object, body: *const Body) Vm.Error!Value {
    const stream = try vm.newObject(4);
    stream.class = host.stream_class;
    try host.putHostKey(vm, stream, stream_state, Value.number(@floatFromInt(@backingInt(StreamState.unread))));
    try host.putHostKey(vm, stream, stream_response, Value.obj(response));
    switch (body.*) {
        .none => unreachable, // A null body.
        .bytes => |bytes| try host.putHostKey(vm, stream, stream_bytes, try bufferOver(vm, bytes)),
        .pending => |pending| {
            try host.putHostKey(vm, stream, stream_slot, Value.number(@floatFromInt(pending.slot)));
            const framing: f64 = switch (pending.framing) {
                .length => |length| @floatFromInt(length),
                .chunked => -1,
                .close => -2,
            };
            try host.putHostKey(vm, stream, stream_framing, Value.number(framing));
        },
    }
    return Value.obj(stream);
}

/// The body stream `v` is, if it is one.
pub fn streamOf(v: Value) ?*object.Object {
    if (!v.isObject() or v.asObject().class != host.stream_class) return null;
    return v.asObject();
}

pub fn streamStateOf(stream: *object.Object) StreamState {
    const v = host.ownHidden(Value.obj(stream), stream_state).?; // Hidden: only the natives write it.
    return @fromBackingInt(@as(u8, @intFromFloat(v.asNumber())));
}

/// A stream's bytes when its body came whole with the head.
pub fn streamBytes(stream: *object.Object) ?[]const u8 {
    const v = host.ownHidden(Value.obj(stream), stream_bytes) orelse return null;
    return v.asObject().as(object.ArrayBuffer).slice();
}

/// A pending stream's fetch slot and framing.
pub fn streamPending(stream: *object.Object) Pending {
    const slot = host.ownHidden(Value.obj(stream), stream_slot).?.asNumber();
    const framing = host.ownHidden(Value.obj(stream), stream_framing).?.asNumber();
    return .{
        .slot = @intFromFloat(slot),
        .framing = if (framing == -1) .chunked else if (framing == -2) .close else .{ .length = @intFromFloat(framing) },
    };
}

/// The body is being used (read, or returned to be streamed): its state, and `bodyUsed` of the
/// Response it came with and of `by` (a `new Response` over it), say so.
pub fn useStream(vm: *Vm, stream: *object.Object, state: StreamState, by: ?Value) Vm.Error!void {
    assert(state != .unread);
    try host.putHostKey(vm, stream, stream_state, Value.number(@floatFromInt(@backingInt(state))));
    const origin = host.ownHidden(Value.obj(stream), stream_response).?;
    try markUsed(vm, origin);
    if (by) |response| if (response.isObject()) try markUsed(vm, response);
}

fn markUsed(vm: *Vm, response: Value) Vm.Error!void {
    response.asObject().properties.put(vm.heap, names.string("bodyUsed"), Value.boolean(true)) catch return vm.outOfMemory();
}

/// Whether a host operation's recorded value is the read of a fetched body (a body stream).
pub fn isBodyRead(op_request: Value) bool {
    const stream = streamOf(op_request) orelse return false;
    return streamStateOf(stream) == .reading;
}

/// The settled value of a fetched body's read, built from `bytes` (in the request's heap).
pub fn settleRead(vm: *Vm, stream_value: Value, bytes: []align(8) u8) Vm.Error!Value {
    const stream = streamOf(stream_value).?;
    assert(streamStateOf(stream) == .reading);
    try host.putHostKey(vm, stream, stream_state, Value.number(@floatFromInt(@backingInt(StreamState.used))));
    const kind: ReadKind = @fromBackingInt(@as(u8, @intFromFloat(host.ownHidden(stream_value, stream_kind).?.asNumber())));
    return bodyValue(vm, kind, bytes, true);
}

/// A read that failed: the stream is used, and the read rejects with a TypeError.
pub fn failRead(vm: *Vm, stream_value: Value, message: []const u8) Vm.Error!Value {
    const stream = streamOf(stream_value).?;
    try host.putHostKey(vm, stream, stream_state, Value.number(@floatFromInt(@backingInt(StreamState.used))));
    return vm.throwMessage(.type_error, message);
}

/// The text, the parsed JSON or an ArrayBuffer of `bytes`. `owned`: nothing else refers to them
/// (a fetched body, gathered or whole), so ASCII text and the ArrayBuffer are made over them
/// where they are; else (a `new Response`'s bytes, which the script may still write) copied.
fn bodyValue(vm: *Vm, kind: ReadKind, bytes: []const u8, owned: bool) Vm.Error!Value {
    switch (kind) {
        .text, .json => {
            try vm.charge(meter.bytesCost(bytes.len));
            const text = if (bytes.len == 0)
                Value.string(js.string.empty)
            else if (owned)
                Value.string(try request_body.decode(vm, bytes))
            else
                Value.string(try builtins.urlsearchparams.decodeUtf8(vm, bytes));
            if (kind == .text) return text;
            return js.Engine.parseJson(vm, text);
        },
        .array_buffer => {
            if (!owned) return Value.obj(&(try builtins.request.copyBuffer(vm, bytes)).object);
            // Owned bytes are the heap's, in words (`Engine.hostBytes`).
            return bufferOver(vm, @alignCast(@constCast(bytes)));
        },
    }
}

/// A Headers of the kept field lines (each name and value checked by the response parser).
fn headersOf(vm: *Vm, lines: []const u8) Vm.Error!Value {
    const headers = try builtins.headers.construct(vm, Value.undefined_value, &.{});
    var it: http.chars.CrlfLines = .init(lines);
    while (it.next()) |line| {
        if (line.len == 0) continue;
        const colon = std.mem.indexOfScalar(u8, line, ':').?; // Written by the exchange.
        try builtins.headers.appendParsed(vm, headers, line[0..colon], http.chars.trimWhitespace(line[colon + 1 ..]));
    }
    return headers;
}

/// A response's reason phrase; the common one is static.
fn reasonString(vm: *Vm, reason: []const u8) Vm.Error!*String {
    if (std.mem.eql(u8, reason, "OK")) return js.string.literal("OK");
    return vm.newLatin1(reason);
}

/// An ArrayBuffer over `bytes`, which stay where they are (the request's heap).
fn bufferOver(vm: *Vm, bytes: []align(8) u8) Vm.Error!Value {
    if (bytes.len > object.byte_length_max) return vm.outOfMemory();
    const buffer = vm.heap.create(object.ArrayBuffer) catch return vm.outOfMemory();
    buffer.* = .{ .object = .{ .kind = .array_buffer }, .bytes = bytes.ptr, .len = @intCast(bytes.len) };
    return Value.obj(&buffer.object);
}

/// The body's bytes of a Response whose body is bytes (`new Response(bytes)`).
pub fn bodyOf(response: Value) ?[]const u8 {
    const body = host.field(response, .body) orelse return null;
    if (body.objectOf(.typed_array)) |o| return o.as(object.TypedArray).bytes();
    if (body.objectOf(.array_buffer)) |o| return o.as(object.ArrayBuffer).slice();
    return null;
}

/// A Response's `text()`: its body decoded as UTF-8 (each invalid sequence U+FFFD).
pub fn fetchedText(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    return readBody(vm, this, .text, "text");
}

/// `json()`: JSON.parse of the text, a rejection with its SyntaxError.
pub fn fetchedJson(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    return readBody(vm, this, .json, "json");
}

/// `arrayBuffer()`: a copy of the bytes.
pub fn fetchedArrayBuffer(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    return readBody(vm, this, .array_buffer, "arrayBuffer");
}

/// A promise of the body as `kind`: at once when the bytes are here (bytes of a `new
/// Response`, or a fetched body that came whole), else a host operation that gathers the
/// fetched body from the pool (the call suspends). A fetched body is read once.
fn readBody(vm: *Vm, this: Value, kind: ReadKind, comptime method: []const u8) Vm.Error!Value {
    if (!this.isObject() or this.asObject().class != host.response_class) {
        return vm.throwMessage(.type_error, "Response." ++ method ++ ": call it on a Response");
    }
    const p = try builtins.promises.newPromise(vm);
    const body = host.field(this, .body) orelse Value.null_value;
    const bytes: []const u8 = if (body.isNull()) "" else if (streamOf(body)) |stream| {
        if (streamStateOf(stream) != .unread) return rejectWith(vm, p, "Response." ++ method ++ ": body already used (a fetched body can be read or returned once)");
        if (streamBytes(stream)) |whole| {
            try useStream(vm, stream, .used, this);
            return settleWith(vm, p, kind, whole, true);
        }
        if (vm.host_ops.begin(vm.limits.host_ops_max, p, body) == null) {
            return rejectWith(vm, p, "Response." ++ method ++ ": as many operations as fetch_max are in flight already");
        }
        try useStream(vm, stream, .reading, this);
        try host.putHostKey(vm, stream, stream_kind, Value.number(@floatFromInt(@backingInt(kind))));
        return Value.obj(&p.object);
    } else bodyOf(this) orelse return rejectWith(vm, p, "Response." ++ method ++ ": the Response's body was changed to something that is not bytes");
    return settleWith(vm, p, kind, bytes, false);
}

fn settleWith(vm: *Vm, p: *object.Promise, kind: ReadKind, bytes: []const u8, owned: bool) Vm.Error!Value {
    const value = bodyValue(vm, kind, bytes, owned) catch |err| switch (err) {
        error.Throw => return rejected(vm, p),
        else => |e| return e,
    };
    try builtins.promises.resolvePromise(vm, p, value);
    return Value.obj(&p.object);
}

fn rejectWith(vm: *Vm, p: *object.Promise, message: []const u8) Vm.Error!Value {
    switch (vm.throwMessage(.type_error, message)) {
        error.Throw => return rejected(vm, p),
        error.Terminate => |err| return err,
    }
}

test "fetch: the URL names a pool and a target, and nothing else" {
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = js.Heap.init(&region);
    var vm: Vm = undefined;
    vm.heap = &heap;
    _ = &vm;
    // splitUrl needs a Vm only to throw; the accepted cases are checked here.
    const cases = [_]struct { []const u8, []const u8, []const u8 }{
        .{ "http://auth/check?x=1", "auth", "/check?x=1" },
        .{ "http://app", "app", "/" },
        .{ "HTTP://app?q", "app", "/?q" },
        .{ "http://app/a#frag", "app", "/a" },
    };
    for (cases) |case| {
        const url = try js.string.fromLatin1(&heap, case[0]);
        const parts = try splitUrl(&vm, url);
        try std.testing.expectEqualStrings(case[1], parts.pool);
        try std.testing.expectEqualStrings(case[2], parts.target);
    }
}
