//! Whether a response is gzipped on its way to the client, and what that changes in its head.
//! Pure decisions over the request and the parsed response head: no state, no memory; the
//! deflate stream itself is `proxy/Compressor.zig`'s.
//!
//! The rules are nginx's `gzip on` with its usual companions (`gzip_types`, `gzip_min_length`,
//! `gzip_vary on`, `gzip_proxied any`), so an operator moving a site over sees the same
//! responses compressed:
//! - only 200, 403 and 404 (nginx's list): a 206 or any response with Content-Range is a
//!   byte range of the identity representation and must stay one; redirects and errors from
//!   the backend are passed as they are;
//! - never a response that has no body (HEAD, 204, 304), that already has a Content-Encoding,
//!   or whose Cache-Control says `no-transform` (RFC 9110 §7.7);
//! - a Content-Type in the list (the media type, parameters ignored; `text/*` covers a type),
//!   and a Content-Length of at least the threshold, or none (a chunked or close-delimited
//!   body counts as long enough: its size is not known before it has gone);
//! - the client accepts gzip: an Accept-Encoding element `gzip` or `x-gzip`, or `*` when gzip
//!   is not named, with a q-value above 0 (RFC 9110 §12.5.3: `gzip;q=0` refuses it);
//! - not to an HTTP/1.0 client when the length is not known: the compressed body would then
//!   end with the connection, whose end a 1.0 client cannot tell from a failure in the middle
//!   of an identity body either, but that client gets no keep-alive for nothing.
//!
//! Decision, `Vary`: a response that would have been compressed for a client that accepts
//! gzip gets `Vary: Accept-Encoding` whether or not this client does (nginx's `gzip_vary on`),
//! unless its own Vary already lists the field or `*`: a shared cache then keeps the two forms
//! apart.
//!
//! Decision, `ETag`: a strong validator names exact bytes, which a compressed body no longer
//! has, so it is made weak (`W/"..."`, what nginx has done since 1.7.3): conditional requests
//! and caches keep working with weak comparison. A weak one passes as it is.
const std = @import("std");
const assert = std.debug.assert;

const http = @import("../http/http.zig");
const chars = http.chars;

/// The settings a response is judged by (the generation's, with a route's override applied).
pub const Settings = struct {
    /// Media types, space-separated, lowercase (`text/html application/json text/*`).
    types: []const u8,
    /// A Content-Length under this is not compressed.
    min_bytes: u64,
};

pub const Verdict = enum {
    /// Compress it.
    compress,
    /// Leave the body alone but add `Vary: Accept-Encoding` (it would have been compressed for
    /// a client that takes gzip, or if a compressor had been free).
    vary_only,
    /// Not a candidate: passes as it is.
    untouched,
};

/// What compression changes in a response head: HTTP/1.1 (`proxy/rewrite.zig`) and HTTP/2
/// (`proxy/Http2Stream.zig`) each write it in their own form.
pub const HeadChange = struct {
    /// `Content-Encoding: gzip`, Content-Length dropped (the framing becomes chunked).
    gzip: bool = false,
    /// `Vary: Accept-Encoding` added.
    vary: bool = false,
    /// The ETag field is dropped and, when not empty, this one (`W/"..."`) written instead.
    drop_etag: bool = false,
    weak_etag: []const u8 = "",

    pub const vary_only: HeadChange = .{ .vary = true };

    /// Whether the backend's field `name` is left out: a replaced ETag; and, gzipped,
    /// Accept-Ranges (ranges of the gzip bytes are not served, as nginx clears it) and an
    /// empty Content-Encoding (any other kept the body from being compressed).
    pub fn drops(change: *const HeadChange, name: []const u8) bool {
        return switch (name.len) {
            4 => change.drop_etag and chars.eqlIgnoreCase(name, "etag"),
            13 => change.gzip and chars.eqlIgnoreCase(name, "accept-ranges"),
            16 => change.gzip and chars.eqlIgnoreCase(name, "content-encoding"),
            else => false,
        };
    }
};

/// Longest ETag value that is made weak; a longer strong one is dropped (it would not fit the
/// compressor's field buffer, and no real validator is that long).
pub const etag_bytes_max = 128;

/// Statuses nginx compresses.
fn statusCompressible(status: u16) bool {
    return status == 200 or status == 403 or status == 404;
}

/// The verdict on a response, given whether compression is on for its route.
pub fn decide(request: *const http.Request, head: *const http.ResponseParser.Head, settings: Settings) Verdict {
    if (!candidate(head, settings)) return .untouched;
    if (request.version == .http10 and head.body != .content_length) return .vary_only;
    if (!acceptsGzip(request.headers)) return .vary_only;
    return .compress;
}

/// Whether the response is one sluice would compress for a client that takes gzip.
fn candidate(head: *const http.ResponseParser.Head, settings: Settings) bool {
    if (!statusCompressible(head.status)) return false;
    switch (head.body) {
        .none => return false, // HEAD, 204, 304, or an empty body.
        .content_length => |length| if (length < settings.min_bytes) return false,
        .chunked, .close_delimited => {},
    }
    var typed = false;
    for (head.headers) |field| {
        switch (field.name.len) {
            12 => if (chars.eqlIgnoreCase(field.name, "content-type")) {
                if (!typeListed(settings.types, field.value)) return false;
                typed = true;
            },
            13 => {
                if (chars.eqlIgnoreCase(field.name, "content-range")) return false;
                if (chars.eqlIgnoreCase(field.name, "cache-control") and
                    http.field_values.listHasToken(field.value, "no-transform")) return false;
            },
            16 => if (chars.eqlIgnoreCase(field.name, "content-encoding")) {
                // Any coding, `identity` included: what the backend chose is left to it.
                if (chars.trimWhitespace(field.value).len > 0) return false;
            },
            else => {},
        }
    }
    return typed;
}

/// Whether the media type of a Content-Type value (before any `;`) is in `types`: exactly, or
/// by a `type/*` entry.
pub fn typeListed(types: []const u8, content_type: []const u8) bool {
    const semicolon = std.mem.indexOfScalar(u8, content_type, ';') orelse content_type.len;
    const media = chars.trimWhitespace(content_type[0..semicolon]);
    const slash = std.mem.indexOfScalar(u8, media, '/') orelse return false;
    var entries = std.mem.tokenizeScalar(u8, types, ' ');
    while (entries.next()) |entry| {
        if (std.mem.endsWith(u8, entry, "/*")) {
            if (chars.eqlIgnoreCase(entry[0 .. entry.len - 1], media[0 .. slash + 1])) return true;
        } else if (chars.eqlIgnoreCase(entry, media)) return true;
    }
    return false;
}

/// Whether the Accept-Encoding fields (all of them, as one list) accept gzip: `gzip` or
/// `x-gzip` with a q-value above 0, or else `*` with one. No field: no (RFC 9110 §12.5.3 lets
/// a server assume any coding then, but clients that take gzip all say so, and nginx and
/// Envoy require it). A malformed q-value makes its element count as a refusal.
pub fn acceptsGzip(headers: []const http.Header) bool {
    var named: ?bool = null;
    var star = false;
    for (headers) |field| {
        if (!chars.eqlIgnoreCase(field.name, "accept-encoding")) continue;
        var elements = std.mem.splitScalar(u8, field.value, ',');
        while (elements.next()) |element| {
            const semicolon = std.mem.indexOfScalar(u8, element, ';') orelse element.len;
            const coding = chars.trimWhitespace(element[0..semicolon]);
            const accepted = weight(element[semicolon..]) > 0;
            if (chars.eqlIgnoreCase(coding, "gzip") or chars.eqlIgnoreCase(coding, "x-gzip")) {
                // The first one named decides, as with a repeated coding nothing better is said.
                if (named == null) named = accepted;
            } else if (std.mem.eql(u8, coding, "*")) {
                star = star or accepted;
            }
        }
    }
    return named orelse star;
}

/// The q-value in an element's parameters (`;q=0.5`, RFC 9110 §12.4.2) in thousandths: 1000
/// without one, 0 when it is malformed.
pub fn weight(parameters: []const u8) u16 {
    var rest = parameters;
    var result: u16 = 1000;
    while (rest.len > 0) {
        assert(rest[0] == ';');
        const next = std.mem.indexOfScalarPos(u8, rest, 1, ';') orelse rest.len;
        const parameter = chars.trimWhitespace(rest[1..next]);
        rest = rest[next..];
        if (parameter.len < 2 or chars.toLower(parameter[0]) != 'q') continue;
        const equals = chars.trimWhitespace(parameter[1..]);
        if (equals.len == 0 or equals[0] != '=') continue;
        result = qvalue(chars.trimWhitespace(equals[1..])) orelse return 0;
    }
    return result;
}

/// `( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn qvalue(text: []const u8) ?u16 {
    if (text.len == 0 or text.len > 5) return null;
    if (text[0] != '0' and text[0] != '1') return null;
    var value: u16 = @as(u16, text[0] - '0') * 1000;
    if (text.len == 1) return value;
    if (text[1] != '.') return null;
    var scale: u16 = 100;
    for (text[2..]) |c| {
        if (!chars.isDigit(c)) return null;
        value += @as(u16, c - '0') * scale;
        scale /= 10;
    }
    if (value > 1000) return null; // "1.5"
    return value;
}

/// Whether the response's Vary fields already make caches key on Accept-Encoding.
pub fn varies(head: *const http.ResponseParser.Head) bool {
    for (head.headers) |field| {
        if (!chars.eqlIgnoreCase(field.name, "vary")) continue;
        if (http.field_values.listHasToken(field.value, "accept-encoding")) return true;
        if (http.field_values.listHasToken(field.value, "*")) return true;
    }
    return false;
}

/// What a compressed response's ETag becomes: `W/` and the strong value, written into
/// `buffer`; null when there is none or it is weak already (it passes), "" when a strong one
/// is too long to keep (it is dropped).
pub fn weakEtag(head: *const http.ResponseParser.Head, buffer: *[etag_bytes_max + 2]u8) ?[]const u8 {
    const value = chars.trimWhitespace(head.get("etag") orelse return null);
    if (std.mem.startsWith(u8, value, "W/")) return null;
    if (value.len > etag_bytes_max) return "";
    buffer[0..2].* = "W/".*;
    @memcpy(buffer[2..][0..value.len], value);
    return buffer[0 .. value.len + 2];
}

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

fn testHead(status: u16, body: http.Body, fields: []const http.Header) http.ResponseParser.Head {
    return .{
        .version = .http11,
        .status = status,
        .reason = "OK",
        .headers = fields,
        .body = body,
        .keep_alive = true,
        .upgrade = false,
        .has_connection = false,
    };
}

fn testRequest(version: http.Version, fields: []const http.Header) http.Request {
    return .{
        .method = .get,
        .method_text = "GET",
        .target = "/",
        .target_form = .origin,
        .version = version,
        .headers = fields,
        .host = "example.com",
        .body = .none,
        .keep_alive = true,
        .expect_continue = false,
        .upgrade = false,
        .has_connection = false,
    };
}

const test_settings: Settings = .{ .types = "text/html application/json text/*", .min_bytes = 100 };

test "compression: q-values, gzip;q=0 refuses, * stands in only when gzip is not named" {
    const cases = [_]struct { []const u8, bool }{
        .{ "gzip", true },
        .{ "GZIP", true },
        .{ "x-gzip", true },
        .{ "br, gzip;q=0.5", true },
        .{ "gzip;q=0", false },
        .{ "gzip; q=0.000", false },
        .{ "gzip;q=0.001", true },
        .{ "gzip;q=1.000", true },
        .{ "gzip;q=1.5", false },
        .{ "gzip;q=2", false },
        .{ "gzip;q=0.5000", false },
        .{ "gzip;q=", false },
        .{ "gzip;level=1", true },
        .{ "*", true },
        .{ "*;q=0", false },
        .{ "*, gzip;q=0", false },
        .{ "gzip;q=0, *", false },
        .{ "identity", false },
        .{ "deflate, br", false },
        .{ "", false },
        .{ "gzipx", false },
    };
    for (cases) |case| {
        const fields = [_]http.Header{.{ .name = "Accept-Encoding", .value = case[0] }};
        testing.expectEqual(case[1], acceptsGzip(&fields)) catch |err| {
            std.debug.print("Accept-Encoding: {s}\n", .{case[0]});
            return err;
        };
    }
    // Two fields are one list.
    const two = [_]http.Header{ .{ .name = "accept-encoding", .value = "br" }, .{ .name = "Accept-Encoding", .value = "gzip" } };
    try testing.expect(acceptsGzip(&two));
    try testing.expect(!acceptsGzip(&.{}));
}

test "compression: the verdict follows status, body, type, encoding, range and no-transform" {
    const accepts = [_]http.Header{.{ .name = "Accept-Encoding", .value = "gzip" }};
    const request = testRequest(.http11, &accepts);
    const html = http.Header{ .name = "Content-Type", .value = "text/html; charset=utf-8" };
    const Case = struct { status: u16, body: http.Body, extra: ?http.Header, verdict: Verdict };
    const cases = [_]Case{
        .{ .status = 200, .body = .{ .content_length = 1000 }, .extra = null, .verdict = .compress },
        .{ .status = 200, .body = .chunked, .extra = null, .verdict = .compress },
        .{ .status = 200, .body = .close_delimited, .extra = null, .verdict = .compress },
        .{ .status = 404, .body = .{ .content_length = 1000 }, .extra = null, .verdict = .compress },
        .{ .status = 200, .body = .{ .content_length = 99 }, .extra = null, .verdict = .untouched },
        .{ .status = 200, .body = .none, .extra = null, .verdict = .untouched },
        .{ .status = 206, .body = .{ .content_length = 1000 }, .extra = null, .verdict = .untouched },
        .{ .status = 302, .body = .{ .content_length = 1000 }, .extra = null, .verdict = .untouched },
        .{ .status = 200, .body = .chunked, .extra = .{ .name = "Content-Range", .value = "bytes 0-9/10" }, .verdict = .untouched },
        .{ .status = 200, .body = .chunked, .extra = .{ .name = "Content-Encoding", .value = "br" }, .verdict = .untouched },
        .{ .status = 200, .body = .chunked, .extra = .{ .name = "cache-control", .value = "public, No-Transform" }, .verdict = .untouched },
        .{ .status = 200, .body = .chunked, .extra = .{ .name = "cache-control", .value = "max-age=60" }, .verdict = .compress },
    };
    for (cases) |case| {
        var fields: [2]http.Header = .{ html, undefined };
        var count: usize = 1;
        if (case.extra) |extra| {
            fields[1] = extra;
            count = 2;
        }
        const head = testHead(case.status, case.body, fields[0..count]);
        try testing.expectEqual(case.verdict, decide(&request, &head, test_settings));
    }
    // No Content-Type, or one not listed.
    const untyped = testHead(200, .chunked, &.{});
    try testing.expectEqual(Verdict.untouched, decide(&request, &untyped, test_settings));
    const image = testHead(200, .chunked, &.{.{ .name = "Content-Type", .value = "image/png" }});
    try testing.expectEqual(Verdict.untouched, decide(&request, &image, test_settings));
    // A client that does not take gzip, or an HTTP/1.0 one with a body of unknown length.
    const head = testHead(200, .chunked, &.{html});
    const plain = testRequest(.http11, &.{});
    try testing.expectEqual(Verdict.vary_only, decide(&plain, &head, test_settings));
    const old = testRequest(.http10, &accepts);
    try testing.expectEqual(Verdict.vary_only, decide(&old, &head, test_settings));
    const sized = testHead(200, .{ .content_length = 500 }, &.{html});
    try testing.expectEqual(Verdict.compress, decide(&old, &sized, test_settings));
}

test "compression: media types match exactly or by type/*, parameters ignored" {
    try testing.expect(typeListed("text/html application/json", "application/json"));
    try testing.expect(typeListed("text/html application/json", " Application/JSON ; charset=x"));
    try testing.expect(!typeListed("text/html application/json", "application/jsonx"));
    try testing.expect(typeListed("text/*", "text/css"));
    try testing.expect(!typeListed("text/*", "textx/css"));
    try testing.expect(!typeListed("text/html", "garbage"));
}

test "compression: a strong ETag is made weak, a weak one kept, a very long one dropped" {
    var buffer: [etag_bytes_max + 2]u8 = undefined;
    const strong = testHead(200, .chunked, &.{.{ .name = "ETag", .value = "\"abc\"" }});
    try testing.expectEqualStrings("W/\"abc\"", weakEtag(&strong, &buffer).?);
    const weak = testHead(200, .chunked, &.{.{ .name = "etag", .value = "W/\"abc\"" }});
    try testing.expect(weakEtag(&weak, &buffer) == null);
    const long = "\"" ++ @as([etag_bytes_max]u8, @splat('a')) ++ "\"";
    const too_long = testHead(200, .chunked, &.{.{ .name = "ETag", .value = long }});
    try testing.expectEqualStrings("", weakEtag(&too_long, &buffer).?);
    const none = testHead(200, .chunked, &.{});
    try testing.expect(weakEtag(&none, &buffer) == null);
    const vary = testHead(200, .chunked, &.{.{ .name = "Vary", .value = "Cookie, Accept-Encoding" }});
    try testing.expect(varies(&vary));
    try testing.expect(!varies(&strong));
}

test "compression: a gzipped head leaves out Accept-Ranges, an empty Content-Encoding, a replaced ETag" {
    const gzipped: HeadChange = .{ .gzip = true, .vary = true, .drop_etag = true, .weak_etag = "W/\"a\"" };
    try testing.expect(gzipped.drops("ETag"));
    try testing.expect(gzipped.drops("accept-ranges"));
    try testing.expect(gzipped.drops("Content-Encoding"));
    try testing.expect(!gzipped.drops("Content-Type"));
    try testing.expect(!gzipped.drops("vary"));
    try testing.expect(!HeadChange.vary_only.drops("accept-ranges"));
    try testing.expect(!HeadChange.vary_only.drops("etag"));
}
