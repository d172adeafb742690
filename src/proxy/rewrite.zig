//! What crosses the proxy: the request head as the backend sees it and the response head as
//! the client sees it. Hop-by-hop fields (RFC 9110 §7.6.1) are dropped, including every field
//! the Connection header names; X-Forwarded-* are added; framing fields are re-derived.
//!
//! Decision: the request head is composed into the (still empty) upstream buffer, so the body
//! bytes behind it in the client buffer never move. The response head is rewritten in place:
//! the response is received at `response_headroom_bytes` into its buffer and the new head is
//! written from offset 0. Every field is copied to an offset no later than where it was read,
//! so the copy never overwrites bytes it has yet to read, and the headroom pays for the few
//! bytes we add.
const std = @import("std");
const assert = std.debug.assert;
const http = @import("../http/http.zig");

/// Room in front of a received response head for the fields we may add: a Connection field
/// and one extra field (the sticky-session Set-Cookie).
pub const response_headroom_bytes: u32 = "Connection: keep-alive\r\n".len + extra_field_bytes_max;

/// The longest extra response field: "Set-Cookie: " + a cookie name of at most 64 bytes +
/// "=" + a 16-digit backend id + "; Path=/; HttpOnly\r\n" fits with room to spare.
pub const extra_field_bytes_max = 128;

/// The longest Host value we forward (and copy into X-Forwarded-Host). DNS names are at most
/// 253 bytes; with a port and brackets, 300 leaves room. A longer Host is a 400.
pub const host_bytes_max = 300;
comptime {
    std.debug.assert(host_bytes_max == @import("../config/Config.zig").rewrite_host_bytes_max);
}

/// Bytes `composeRequest` may add beyond the client's head. Each term is one field we write:
pub const request_growth_bytes_max =
    "X-Forwarded-For: ".len + ", ".len + 39 + "\r\n".len + // appended to, or replaced.
    "X-Forwarded-Proto: https\r\n".len +
    "X-Forwarded-Host: ".len + host_bytes_max + "\r\n".len +
    "Transfer-Encoding: chunked\r\n".len +
    "Connection: upgrade\r\n".len;

comptime {
    const Config = @import("../config/Config.zig");
    assert(request_growth_bytes_max <= Config.rewrite_headroom_bytes);
    assert(response_headroom_bytes <= Config.rewrite_headroom_bytes);
}

pub const Forwarding = struct {
    /// The peer's address as text (no port).
    client_ip: []const u8,
    /// The peer is a trusted proxy: keep and append to its X-Forwarded-* fields.
    trusted: bool,
    proto: []const u8 = "http",
};

/// Fields that describe one connection, never the message (RFC 9110 §7.6.1, RFC 9112 §6.1,
/// plus the non-standard Keep-Alive and Proxy-Connection that old clients send).
const hop_by_hop = [_][]const u8{
    "connection",        "keep-alive", "proxy-connection",    "te",                 "trailer",
    "transfer-encoding", "upgrade",    "proxy-authorization", "proxy-authenticate",
};

/// Whether this request may become a tunnel if the backend answers 101. An upgrade to h2c
/// (cleartext HTTP/2) is never offered: through a proxy it lets a client talk HTTP/2 straight
/// to the backend, past everything the proxy checks ("h2c smuggling"). Such a request is
/// forwarded as a plain request, its Upgrade field dropped like any hop-by-hop field.
pub fn upgradeAllowed(head: *const http.RequestParser.Head) bool {
    if (!head.upgrade) return false;
    const value = head.get("upgrade") orelse return false;
    var protocols = std.mem.splitScalar(u8, value, ',');
    while (protocols.next()) |protocol| {
        const name = std.mem.trim(u8, protocol, " \t");
        if (std.ascii.eqlIgnoreCase(name, "h2c")) return false;
    }
    return true;
}

pub fn isHopByHop(name: []const u8) bool {
    for (hop_by_hop) |hop| if (std.ascii.eqlIgnoreCase(name, hop)) return true;
    return false;
}

fn isForwardedField(name: []const u8) bool {
    return std.ascii.eqlIgnoreCase(name, "x-forwarded-for") or
        std.ascii.eqlIgnoreCase(name, "x-forwarded-proto") or
        std.ascii.eqlIgnoreCase(name, "x-forwarded-host");
}

/// Writes the request head the backend receives into `out`. Returns its length.
/// NoSpaceLeft means the client's head plus our fields does not fit: a 431 for the client.
pub fn composeRequest(
    out: []u8,
    head: *const http.RequestParser.Head,
    forwarding: Forwarding,
) error{NoSpaceLeft}!usize {
    var w: std.Io.Writer = .fixed(out);
    const version = switch (head.version) {
        .http10 => "HTTP/1.0",
        .http11 => "HTTP/1.1",
    };
    // RFC 9112 §3.2.2: with an absolute-form target the authority in it names the host and
    // any Host field is ignored. Forwarding origin-form with Host taken from the authority
    // means the backend cannot read the host differently from how we did.
    const target = originForm(head);
    const host = target.host orelse head.host;
    w.print("{s} {s}{s} {s}\r\n", .{ head.method_text, target.prefix, target.path, version }) catch
        return error.NoSpaceLeft;
    if (host) |value| writeField(&w, "Host", value) catch return error.NoSpaceLeft;
    var have_proto = false;
    var have_host = false;
    var have_for = false;
    // Most requests carry no Connection field: then no field can be named in one.
    const has_connection = head.get("connection") != null;
    for (head.headers) |field| {
        if (isHopByHop(field.name)) continue;
        if (has_connection and head.connectionHasToken(field.name)) continue;
        if (std.ascii.eqlIgnoreCase(field.name, "host")) continue; // Written first, above.
        if (isForwardedField(field.name)) {
            if (!forwarding.trusted) continue;
            if (std.ascii.eqlIgnoreCase(field.name, "x-forwarded-for")) {
                have_for = true;
                continue; // Merged below, with the peer appended.
            }
            if (std.ascii.eqlIgnoreCase(field.name, "x-forwarded-proto")) have_proto = true;
            if (std.ascii.eqlIgnoreCase(field.name, "x-forwarded-host")) have_host = true;
        }
        writeField(&w, field.name, field.value) catch return error.NoSpaceLeft;
    }
    writeForwardedFor(&w, head, forwarding, have_for) catch return error.NoSpaceLeft;
    if (!have_proto) writeField(&w, "X-Forwarded-Proto", forwarding.proto) catch
        return error.NoSpaceLeft;
    if (!have_host) if (host) |value| {
        writeField(&w, "X-Forwarded-Host", value) catch return error.NoSpaceLeft;
    };
    if (head.body == .chunked) writeField(&w, "Transfer-Encoding", "chunked") catch
        return error.NoSpaceLeft;
    if (upgradeAllowed(head)) {
        writeField(&w, "Connection", "upgrade") catch return error.NoSpaceLeft;
        writeField(&w, "Upgrade", head.get("upgrade").?) catch return error.NoSpaceLeft;
    }
    w.writeAll("\r\n") catch return error.NoSpaceLeft;
    return w.end;
}

pub const OriginForm = struct {
    /// "/" when an absolute-form target has an empty path (RFC 9112 §3.2.1), else "".
    prefix: []const u8,
    path: []const u8,
    /// The authority of an absolute-form target; null for the other forms.
    host: ?[]const u8,
};

pub fn originForm(head: *const http.RequestParser.Head) OriginForm {
    if (head.target_form != .absolute) return .{ .prefix = "", .path = head.target, .host = null };
    const scheme_end = std.mem.indexOf(u8, head.target, "://").?; // The parser checked it.
    const rest = head.target[scheme_end + 3 ..];
    const authority_end = std.mem.indexOfAny(u8, rest, "/?") orelse rest.len;
    const path = rest[authority_end..];
    const needs_slash = path.len == 0 or path[0] == '?'; // "http://h" and "http://h?q".
    return .{
        .prefix = if (needs_slash) "/" else "",
        .path = path,
        .host = rest[0..authority_end],
    };
}

fn writeField(w: *std.Io.Writer, name: []const u8, value: []const u8) std.Io.Writer.Error!void {
    try w.writeAll(name);
    try w.writeAll(": ");
    try w.writeAll(value);
    try w.writeAll("\r\n");
}

/// One X-Forwarded-For field: the trusted chain (every such field, in order) then the peer.
fn writeForwardedFor(
    w: *std.Io.Writer,
    head: *const http.RequestParser.Head,
    forwarding: Forwarding,
    have_for: bool,
) std.Io.Writer.Error!void {
    try w.writeAll("X-Forwarded-For: ");
    if (have_for) {
        assert(forwarding.trusted);
        for (head.headers) |field| {
            if (!std.ascii.eqlIgnoreCase(field.name, "x-forwarded-for")) continue;
            if (field.value.len == 0) continue;
            try w.writeAll(field.value);
            try w.writeAll(", ");
        }
    }
    try w.writeAll(forwarding.client_ip);
    try w.writeAll("\r\n");
}

/// How the response tells the client what happens to its connection.
pub const ClientConnection = enum {
    /// HTTP/1.1 client, connection stays open: say nothing (persistence is the default).
    keep_alive_default,
    /// HTTP/1.0 client that asked for keep-alive and gets it.
    keep_alive_explicit,
    /// We close after this response.
    close,
    /// 101: the connection becomes a tunnel.
    upgrade,
};

pub const ResponseRewrite = struct {
    connection: ClientConnection,
    /// False when sluice removes the chunked framing itself (HTTP/1.0 client).
    keep_transfer_encoding: bool = true,
    /// One whole field line ("Name: value\r\n") to add, or empty.
    extra_field: []const u8 = "",
};

/// Rewrites the response head found at `buffer[head_start..][0..head_len]` to start at
/// `buffer[0]`. Returns the new head length. `head` must come from parsing exactly those bytes.
pub fn rewriteResponseInPlace(
    buffer: []u8,
    head_start: usize,
    head_len: usize,
    head: *const http.ResponseParser.Head,
    options: ResponseRewrite,
) usize {
    const connection = options.connection;
    assert(head_start >= response_headroom_bytes);
    assert(options.extra_field.len <= extra_field_bytes_max);
    assert(head_start + head_len <= buffer.len);
    assert(head.headers.len <= drop_bits_max);
    // Decide every drop before writing: a later field's bytes may be overwritten by an earlier
    // one's copy only after that later field has been read, but the Connection values that
    // decide drops may sit anywhere.
    var drop: std.StaticBitSet(drop_bits_max) = .empty;
    const has_connection = head.get("connection") != null;
    for (head.headers, 0..) |field, i| {
        const keep_upgrade = connection == .upgrade and std.ascii.eqlIgnoreCase(field.name, "upgrade");
        const keep_chunked = options.keep_transfer_encoding and
            std.ascii.eqlIgnoreCase(field.name, "transfer-encoding");
        if (keep_upgrade or keep_chunked) continue;
        const named = has_connection and head.connectionHasToken(field.name);
        if (isHopByHop(field.name) or named) drop.set(i);
    }
    var w: usize = 0;
    w = copyForward(buffer, w, "HTTP/1.1 ");
    assert(head.status >= 100 and head.status <= 999); // The parser checked it.
    const status_text = [3]u8{
        @intCast('0' + head.status / 100),
        @intCast('0' + head.status / 10 % 10),
        @intCast('0' + head.status % 10),
    };
    w = copyForward(buffer, w, &status_text);
    w = copyForward(buffer, w, " ");
    w = copyForward(buffer, w, head.reason);
    w = copyForward(buffer, w, "\r\n");
    for (head.headers, 0..) |field, i| {
        if (drop.isSet(i)) continue;
        w = copyForward(buffer, w, field.name);
        w = copyForward(buffer, w, ": ");
        w = copyForward(buffer, w, field.value);
        w = copyForward(buffer, w, "\r\n");
    }
    w = copyForward(buffer, w, options.extra_field);
    switch (connection) {
        .keep_alive_default => {},
        .keep_alive_explicit => w = copyForward(buffer, w, "Connection: keep-alive\r\n"),
        .close => w = copyForward(buffer, w, "Connection: close\r\n"),
        .upgrade => w = copyForward(buffer, w, "Connection: upgrade\r\n"),
    }
    w = copyForward(buffer, w, "\r\n");
    assert(w <= head_start + head_len); // The headroom paid for what we added.
    return w;
}

const drop_bits_max = 1024;

/// Copies `bytes` (which may alias `buffer` at or after `at`) to `buffer[at..]`.
fn copyForward(buffer: []u8, at: usize, bytes: []const u8) usize {
    std.mem.copyForwards(u8, buffer[at..][0..bytes.len], bytes);
    return at + bytes.len;
}

const testing = std.testing;

fn parseRequest(text: []const u8, headers: []http.Header) !http.RequestParser {
    var parser: http.RequestParser = .init(headers, .{
        .header_bytes_max = 16 * 1024,
        .headers_count_max = @intCast(headers.len),
        .target_bytes_max = 8 * 1024,
    });
    switch (parser.feed(text)) {
        .complete => return parser,
        else => return error.TestUnexpectedResult,
    }
}

test "rewrite: request drops hop-by-hop fields and those named in Connection" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET /a?b HTTP/1.1\r\nHost: example.com\r\n" ++
        "Connection: keep-alive, X-Secret\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n" ++
        "X-Secret: 1\r\nProxy-Authorization: Basic x\r\nAccept: */*\r\n" ++
        "X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil\r\n\r\n", &headers);
    var out: [1024]u8 = undefined;
    const n = try composeRequest(&out, &parser.head, .{ .client_ip = "10.0.0.9", .trusted = false });
    try testing.expectEqualStrings("GET /a?b HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n" ++
        "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\n" ++
        "X-Forwarded-Host: example.com\r\n\r\n", out[0..n]);
}

test "rewrite: a trusted peer's forwarding chain is kept and appended to" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("POST / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 1.1.1.1\r\n" ++
        "Transfer-Encoding: chunked\r\nX-Forwarded-For: 2.2.2.2, 3.3.3.3\r\n" ++
        "X-Forwarded-Proto: https\r\n\r\n", &headers);
    var out: [1024]u8 = undefined;
    const n = try composeRequest(&out, &parser.head, .{ .client_ip = "10.0.0.9", .trusted = true });
    try testing.expectEqualStrings("POST / HTTP/1.1\r\nHost: h\r\nX-Forwarded-Proto: https\r\n" ++
        "X-Forwarded-For: 1.1.1.1, 2.2.2.2, 3.3.3.3, 10.0.0.9\r\nX-Forwarded-Host: h\r\n" ++
        "Transfer-Encoding: chunked\r\n\r\n", out[0..n]);
}

test "rewrite: an upgrade request keeps Upgrade and says so in Connection" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n" ++
        "Upgrade: websocket\r\nSec-WebSocket-Key: k\r\n\r\n", &headers);
    var out: [1024]u8 = undefined;
    const n = try composeRequest(&out, &parser.head, .{ .client_ip = "::1", .trusted = false });
    try testing.expectEqualStrings("GET /ws HTTP/1.1\r\nHost: h\r\nSec-WebSocket-Key: k\r\n" ++
        "X-Forwarded-For: ::1\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n" ++
        "Connection: upgrade\r\nUpgrade: websocket\r\n\r\n", out[0..n]);
}

test "rewrite: an absolute-form target becomes origin-form with its authority as Host" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET http://Example.com:8080/p?q=1 HTTP/1.1\r\n" ++
        "Host: other.example\r\nAccept: */*\r\n\r\n", &headers);
    var out: [1024]u8 = undefined;
    const n = try composeRequest(&out, &parser.head, .{ .client_ip = "10.0.0.9", .trusted = false });
    try testing.expectEqualStrings("GET /p?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\n" ++
        "Accept: */*\r\nX-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\n" ++
        "X-Forwarded-Host: Example.com:8080\r\n\r\n", out[0..n]);
    const bare = try parseRequest("GET http://h?x HTTP/1.1\r\nHost: h\r\n\r\n", &headers);
    const m = try composeRequest(&out, &bare.head, .{ .client_ip = "10.0.0.9", .trusted = false });
    try testing.expect(std.mem.startsWith(u8, out[0..m], "GET /?x HTTP/1.1\r\nHost: h\r\n"));
}

test "rewrite: an h2c upgrade is forwarded as a plain request" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n" ++
        "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", &headers);
    try testing.expect(!upgradeAllowed(&parser.head));
    var out: [1024]u8 = undefined;
    const n = try composeRequest(&out, &parser.head, .{ .client_ip = "10.0.0.9", .trusted = false });
    try testing.expectEqualStrings("GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 10.0.0.9\r\n" ++
        "X-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n\r\n", out[0..n]);
}

test "rewrite: a head that does not fit is NoSpaceLeft, never a partial write past the end" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET / HTTP/1.1\r\nHost: h\r\n\r\n", &headers);
    var out: [40]u8 = undefined;
    try testing.expectError(error.NoSpaceLeft, composeRequest(&out, &parser.head, .{
        .client_ip = "10.0.0.9",
        .trusted = false,
    }));
}

test "rewrite: response head rewritten in place, body bytes behind it untouched" {
    var headers: [32]http.Header = undefined;
    var parser: http.ResponseParser = .init(&headers, .{
        .header_bytes_max = 16 * 1024,
        .headers_count_max = 32,
        .target_bytes_max = 8 * 1024,
    });
    const response = "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n" ++
        "Keep-Alive: timeout=5\r\nContent-Length: 5\r\nServer: s\r\n\r\nhello";
    var buffer: [512]u8 = undefined;
    const start = response_headroom_bytes;
    @memcpy(buffer[start..][0..response.len], response);
    const head_len: usize = switch (parser.feed(buffer[start..][0..response.len], .get)) {
        .complete => |len| len,
        else => return error.TestUnexpectedResult,
    };
    const n = rewriteResponseInPlace(&buffer, start, head_len, &parser.head, .{ .connection = .close });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: s\r\n" ++
        "Connection: close\r\n\r\n", buffer[0..n]);
    try testing.expectEqualStrings("hello", buffer[start + head_len ..][0..5]);
}
