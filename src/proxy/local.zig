//! Responses sluice writes itself, for routes that answer without a backend: a fixed response
//! (status, Content-Type, extra fields, body) or a redirect, and the 404 for a request no
//! route matches. Composed per request into the exchange's upstream-side buffer (a redirect
//! that keeps the path depends on the request) as an `http.LocalResponse`: fields and body,
//! with the status line and framing left to the client's protocol. `Config.validate`
//! guarantees that the largest one fits.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const http = @import("../http/http.zig");
const rewrite = @import("rewrite.zig");

pub const Options = struct {
    /// The request's target in origin form (for a redirect that keeps the path).
    target: rewrite.OriginForm,
    /// The request's authority (an absolute-form target's, else Host), checked by the parser;
    /// null when it has none (HTTP/1.0 without Host). A `scheme` redirect needs it.
    host: ?[]const u8 = null,
    /// HEAD: the same head, no body.
    head_only: bool,
};

const not_found_body = "404 Not Found: no route matches\n";

/// Writes the response `route` (null: no route matched) asks for into `out`: its fields, then
/// its body. `Config.validate` sizes buffers so that it always fits; NoSpaceLeft (a 500) is
/// that guarantee broken, answered instead of written past.
pub fn compose(out: []u8, route: ?*const Config.Route, options: Options) error{NoSpaceLeft}!http.LocalResponse {
    if (route) |r| assert(r.scheme.len == 0 or options.host != null); // The exchange checks.
    var w: std.Io.Writer = .fixed(out);
    const status: u16 = if (route) |r| r.responseStatus() else 404;
    const body = if (route) |r| (if (r.action == .respond) r.body else "") else not_found_body;
    writeFields(&w, route, options) catch return error.NoSpaceLeft;
    const fields_len = w.end;
    if (!options.head_only) w.writeAll(body) catch return error.NoSpaceLeft;
    return .{ .status = status, .content_length = body.len, .fields_len = @intCast(fields_len), .len = @intCast(w.end) };
}

fn writeFields(w: *std.Io.Writer, route: ?*const Config.Route, options: Options) !void {
    if (route) |r| switch (r.action) {
        .respond => {
            if (r.content_type.len > 0) try field(w, "Content-Type", r.content_type);
            try w.writeAll(r.headers_text);
        },
        .redirect => {
            if (r.scheme.len > 0) {
                try w.print("Location: {s}://{s}", .{ r.scheme, hostWithoutPort(options.host.?) });
                if (r.redirect_port != 0) try w.print(":{d}", .{r.redirect_port});
            } else {
                try w.print("Location: {s}", .{r.location});
            }
            if (r.keep_path or r.scheme.len > 0) {
                // `OPTIONS *` (asterisk-form) has no path to keep: the root.
                const asterisk = std.mem.eql(u8, options.target.path, "*");
                try w.print("{s}{s}", .{ options.target.prefix, if (asterisk) "/" else options.target.path });
            }
            try w.writeAll("\r\n");
        },
        .pool, .handler => unreachable, // The router answers locally only for the other actions.
    } else try field(w, "Content-Type", "text/plain");
    try w.writeAll("\r\n");
}

/// `example.com:8080` as `example.com`, `[::1]:80` as `[::1]`: the port of a plain listener
/// is not the one an HTTPS redirect should name (nginx's `$host`, HAProxy's `redirect scheme`).
/// The parser checked the authority, so a colon past an IPv6 literal starts the port.
fn hostWithoutPort(authority: []const u8) []const u8 {
    const literal_end = if (authority.len > 0 and authority[0] == '[')
        (std.mem.indexOfScalar(u8, authority, ']') orelse authority.len - 1) + 1
    else
        0;
    const colon = std.mem.indexOfScalarPos(u8, authority, literal_end, ':') orelse return authority;
    return authority[0..colon];
}

fn field(w: *std.Io.Writer, name: []const u8, value: []const u8) !void {
    try w.print("{s}: {s}\r\n", .{ name, value });
}

const testing = std.testing;

fn origin(path: []const u8) rewrite.OriginForm {
    return .{ .prefix = "", .path = path, .host = null };
}

test "local: fixed response, HEAD, redirect keeping the path, and the 404" {
    var buffer: [1024]u8 = undefined;
    const respond: Config.Route = .{
        .action = .respond,
        .status = 201,
        .content_type = "text/plain",
        .headers_text = "Cache-Control: no-store\r\n",
        .body = "pong\n",
    };
    var r = try compose(&buffer, &respond, .{ .target = origin("/p"), .head_only = false });
    try testing.expectEqual(@as(u16, 201), r.status);
    try testing.expectEqual(@as(?u64, 5), r.content_length);
    try testing.expectEqualStrings("Content-Type: text/plain\r\nCache-Control: no-store\r\n\r\n", buffer[0..r.fields_len]);
    try testing.expectEqualStrings("pong\n", r.body(&buffer));
    // HEAD: the same fields and length, no body.
    r = try compose(&buffer, &respond, .{ .target = origin("/p"), .head_only = true });
    try testing.expectEqual(@as(?u64, 5), r.content_length);
    try testing.expectEqual(r.fields_len, r.len);

    const redirect: Config.Route = .{ .action = .redirect, .status = 301, .location = "https://example.com", .keep_path = true };
    r = try compose(&buffer, &redirect, .{ .target = origin("/a?b=1"), .head_only = false });
    try testing.expectEqual(@as(?u64, 0), r.content_length);
    try testing.expectEqualStrings("Location: https://example.com/a?b=1\r\n\r\n", buffer[0..r.len]);

    r = try compose(&buffer, &redirect, .{ .target = origin("*"), .head_only = false });
    try testing.expectEqualStrings("Location: https://example.com/\r\n\r\n", buffer[0..r.len]);

    r = try compose(&buffer, null, .{ .target = origin("/"), .head_only = false });
    try testing.expectEqual(@as(u16, 404), r.status);
    try testing.expectEqualStrings("Content-Type: text/plain\r\n\r\n" ++ not_found_body, buffer[0..r.len]);
    try testing.expectError(error.NoSpaceLeft, compose(buffer[0..40], &respond, .{ .target = origin("/"), .head_only = false }));
}

test "local: a scheme redirect names the request's host without its port, and the target" {
    var buffer: [512]u8 = undefined;
    const to_https: Config.Route = .{ .action = .redirect, .status = 308, .scheme = "https" };
    const cases = [_]struct { host: []const u8, target: []const u8, location: []const u8 }{
        .{ .host = "example.com", .target = "/a?b=1", .location = "https://example.com/a?b=1" },
        .{ .host = "example.com:8080", .target = "/", .location = "https://example.com/" },
        .{ .host = "[2001:db8::1]:80", .target = "/x", .location = "https://[2001:db8::1]/x" },
        .{ .host = "[::1]", .target = "*", .location = "https://[::1]/" },
        .{ .host = "10.0.0.1:1", .target = "/%2F..", .location = "https://10.0.0.1/%2F.." },
    };
    for (cases) |case| {
        const r = try compose(&buffer, &to_https, .{ .target = origin(case.target), .host = case.host, .head_only = false });
        try testing.expectEqual(@as(u16, 308), r.status);
        var lines = r.fieldLines(&buffer);
        const location = lines.next().?;
        try testing.expectEqualStrings("Location", location.name);
        try testing.expectEqualStrings(case.location, location.value);
    }
    const with_port: Config.Route = .{ .action = .redirect, .scheme = "https", .redirect_port = 8443 };
    const r = try compose(&buffer, &with_port, .{ .target = origin("/p"), .host = "example.com:8080", .head_only = false });
    try testing.expectEqual(@as(u16, 302), r.status);
    try testing.expectEqualStrings("Location: https://example.com:8443/p\r\n\r\n", buffer[0..r.len]);
}
