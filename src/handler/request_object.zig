//! The `request` object a handler is called with, built in the request's heap from what the
//! exchange read: method, path and query (decoded as URLSearchParams decodes), target, header
//! fields by lower-case name, the client's address, and the body (a string when it was read
//! before the call, with `text()`, `json()` and `arrayBuffer()`; null when the handler is to
//! read it: request_body.zig).
const std = @import("std");
const assert = std.debug.assert;

const js = @import("../js/js.zig");
const Engine = js.Engine;
const Value = js.Value;
const string = js.string;
const object = @import("../js/object.zig");
const http = @import("../http/http.zig");
const host = @import("host.zig");
const request_body = @import("request_body.zig");
const Handler = @import("Handler.zig");

/// The handler's `request` argument, in the request's heap.
pub fn build(engine: *Engine, request: *const Handler.Request, scratch: []u8) Engine.BuildError!Value {
    const value = try engine.newRequestObject();
    try engine.addProperty(value, "method", try engine.newString(request.method), .{});
    const query_start = std.mem.indexOfScalar(u8, request.path_and_query, '?');
    const path = request.path_and_query[0 .. query_start orelse request.path_and_query.len];
    try engine.addProperty(value, "path", try engine.newString(if (path.len == 0) "/" else path), .{});
    const query_text = if (query_start) |q| request.path_and_query[q + 1 ..] else "";
    try engine.addProperty(value, "query", try buildQuery(engine, query_text, scratch), .{});
    try engine.addProperty(value, "target", try engine.newString(request.target), .{});
    try engine.addProperty(value, "headers", try buildHeaders(engine, request.headers), .{});
    try engine.addProperty(value, "ip", try engine.newString(request.ip), .{});
    if (request.body_unread) {
        try engine.addProperty(value, "body", Value.null_value, .{});
        request_body.markUnread(&engine.heap, value) catch return error.OutOfMemory;
    } else {
        const body = if (request.body_chunked) try decodeChunked(engine, request.body) else request.body;
        try engine.addProperty(value, "body", try engine.newString(body), .{});
    }
    try engine.addProperty(value, "json", engine.hostFunction(host.request_json_native), .{});
    // Not enumerable, so `Object.keys` and JSON leave them out (the request's body methods are
    // new, and a handler that returns `Response.json(request)` sees what it saw before).
    try engine.addProperty(value, "text", engine.hostFunction(host.request_text_native), .hidden);
    try engine.addProperty(value, "arrayBuffer", engine.hostFunction(host.request_array_buffer_native), .hidden);
    return value;
}

/// The data of a chunked body, in the engine's arena. The connection's decoder checked the
/// framing (sizes, CRLFs, the last chunk) and cut out any trailers, so this reads sizes and
/// copies data; it still never reads past `raw`, whatever it holds.
pub fn decodeChunked(engine: *Engine, raw: []const u8) Engine.BuildError![]const u8 {
    const out = engine.heap.allocBytes(raw.len, 1) catch return error.OutOfMemory;
    var len: usize = 0;
    var i: usize = 0;
    while (i < raw.len) {
        const line_end = std.mem.indexOfPos(u8, raw, i, "\r\n") orelse break;
        var size: usize = 0;
        for (raw[i..line_end]) |c| {
            const digit = hexValue(c) orelse break; // `;` starts an extension.
            size = std.math.mul(usize, size, 16) catch return out[0..len];
            size += digit;
        }
        i = line_end + 2;
        if (size == 0 or size > raw.len - i) break;
        @memcpy(out[len..][0..size], raw[i..][0..size]);
        len += size;
        i += size + 2; // The chunk's CRLF.
    }
    return out[0..len];
}

/// `a=1&b=x+y&a=2` as `{ a: "1", b: "x y" }`: the first value of each name, decoded as
/// URLSearchParams decodes (`+` is a space, `%XX` a byte, a malformed escape stays as it is).
fn buildQuery(engine: *Engine, text: []const u8, scratch: []u8) Engine.BuildError!Value {
    const query = try engine.newObject();
    var pairs = std.mem.splitScalar(u8, text, '&');
    while (pairs.next()) |pair| {
        if (pair.len == 0) continue;
        const eq = std.mem.indexOfScalar(u8, pair, '=') orelse pair.len;
        const name = decodeComponent(pair[0..eq], scratch);
        if (engine.getProperty(query, name) != null) continue; // The first value wins.
        const value_raw = if (eq < pair.len) pair[eq + 1 ..] else "";
        const name_value = try engine.newString(name);
        const decoded = decodeComponent(value_raw, scratch);
        const value = try engine.newString(decoded);
        try setOwn(engine, query, name_value, value);
    }
    return query;
}

/// Decodes into `scratch` (never longer than the input).
fn decodeComponent(raw: []const u8, scratch: []u8) []const u8 {
    assert(scratch.len >= raw.len);
    var len: usize = 0;
    var i: usize = 0;
    while (i < raw.len) : (i += 1) {
        const c = raw[i];
        if (c == '+') {
            scratch[len] = ' ';
        } else if (c == '%' and i + 2 < raw.len and hexValue(raw[i + 1]) != null and hexValue(raw[i + 2]) != null) {
            scratch[len] = hexValue(raw[i + 1]).? * 16 + hexValue(raw[i + 2]).?;
            i += 2;
        } else {
            scratch[len] = c;
        }
        len += 1;
    }
    return scratch[0..len];
}

fn hexValue(c: u8) ?u8 {
    return switch (c) {
        '0'...'9' => c - '0',
        'a'...'f' => c - 'a' + 10,
        'A'...'F' => c - 'A' + 10,
        else => null,
    };
}

/// Header fields by lower-case name; a repeated field's values joined with ", ", in order.
fn buildHeaders(engine: *Engine, headers: []const http.Header) Engine.BuildError!Value {
    const result = try engine.newObject();
    const heap = &engine.heap;
    for (headers) |field| {
        const name = lowerName(heap, field.name) catch return error.OutOfMemory;
        const value = (try engine.newString(field.value)).asString();
        const joined = if (result.asObject().properties.get(name)) |earlier| blk: {
            const comma = string.concat(heap, earlier.asString(), string.fromLatin1(heap, ", ") catch
                return error.OutOfMemory) catch return error.OutOfMemory;
            break :blk string.concat(heap, comma, value) catch return error.OutOfMemory;
        } else value;
        result.asObject().properties.put(heap, name, Value.string(joined)) catch return error.OutOfMemory;
    }
    return result;
}

/// A field name (a token: ASCII, checked by the parser) in lower case, in the request's heap.
fn lowerName(heap: *js.Heap, name: []const u8) js.Heap.Error!*string.String {
    for (name) |c| {
        if (std.ascii.isUpper(c)) break;
    } else return string.fromLatin1(heap, name);
    const bytes = try heap.allocBytes(name.len, 1);
    _ = std.ascii.lowerString(bytes, name);
    return string.newHeader(heap, bytes.ptr, @intCast(name.len), false);
}

fn setOwn(engine: *Engine, obj: Value, key: Value, v: Value) Engine.BuildError!void {
    obj.asObject().properties.put(&engine.heap, key.asString(), v) catch return error.OutOfMemory;
}

test "handler: query decoding keeps malformed escapes and turns + into a space" {
    var scratch: [64]u8 = undefined;
    try std.testing.expectEqualStrings("a b/c", decodeComponent("a+b%2Fc", &scratch));
    try std.testing.expectEqualStrings("100%", decodeComponent("100%", &scratch));
    try std.testing.expectEqualStrings("%zz%4", decodeComponent("%zz%4", &scratch));
    try std.testing.expectEqualStrings("é", decodeComponent("%C3%A9", &scratch));
}
