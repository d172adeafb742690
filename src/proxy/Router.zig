//! Which route a request takes: the routes of the current generation, tried in order, the first
//! whose every condition matches wins (the order the operator wrote is the order that counts,
//! as in HAProxy's `use_backend` and Envoy's route lists; see docs/CONFIG.md "Routes").
//!
//! Matching allocates nothing: the host is compared case-insensitively in place, with its
//! port and a trailing dot ignored; the path is matched in its normal form (http/path.zig:
//! `/%61dmin`, `//admin` and `/x/../admin` are all `/admin`), written into the worker's
//! scratch buffer. The target itself is forwarded as sent.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const http = @import("../http/http.zig");
const rewrite = @import("rewrite.zig");

/// What a request carries that routes look at.
pub const Request = struct {
    /// The Host field, or the authority of an absolute-form target; null if there is none.
    host: ?[]const u8,
    /// The target's path, without the query, in normal form (http/path.zig).
    path: []const u8,
    method: http.Method,
    /// The index of the listener it arrived on, in the generation's config.
    listener: u32,

    /// `scratch` holds `http.path.growth_factor_max` times the longest target.
    pub fn fromHead(head: *const http.Request, listener: u32, scratch: []u8) Request {
        const origin = rewrite.originForm(head);
        const path_and_query = if (origin.prefix.len > 0) origin.prefix else origin.path;
        const query = std.mem.indexOfScalar(u8, path_and_query, '?') orelse path_and_query.len;
        return .{
            .host = origin.host orelse head.host,
            .path = http.path.normalize(path_and_query[0..query], scratch),
            .method = head.method,
            .listener = listener,
        };
    }
};

/// The index of the first route that matches, or null.
pub fn match(routes: []const Config.Route, request: *const Request) ?u32 {
    const host = if (request.host) |host| hostName(host) else "";
    for (routes, 0..) |*route, i| {
        if (route.listeners != 0 and route.listeners & (@as(u32, 1) << @intCast(request.listener)) == 0) continue;
        if (!route.matchesMethod(request.method)) continue;
        if (!std.mem.startsWith(u8, request.path, route.path_prefix)) continue;
        if (route.host.len > 0 and !hostMatches(route.host, host)) continue;
        return @intCast(i);
    }
    return null;
}

/// The name in a Host value: without the port and a trailing dot. An IPv6 literal keeps its
/// brackets.
fn hostName(host: []const u8) []const u8 {
    var name = host;
    if (name.len > 0 and name[0] == '[') {
        const end = std.mem.indexOfScalar(u8, name, ']') orelse return name;
        return name[0 .. end + 1];
    }
    if (std.mem.lastIndexOfScalar(u8, name, ':')) |colon| name = name[0..colon];
    if (name.len > 0 and name[name.len - 1] == '.') name = name[0 .. name.len - 1];
    return name;
}

/// `pattern` is lowercase (Config.validate): exact, or `*.suffix` for any name that ends in
/// `.suffix` with at least one more label in front.
fn hostMatches(pattern: []const u8, name: []const u8) bool {
    if (std.mem.startsWith(u8, pattern, "*.")) {
        const suffix = pattern[1..]; // ".example.com"
        if (name.len <= suffix.len) return false;
        return std.ascii.eqlIgnoreCase(name[name.len - suffix.len ..], suffix);
    }
    return std.ascii.eqlIgnoreCase(pattern, name);
}

const testing = std.testing;

fn testRequest(host: ?[]const u8, path: []const u8, method: http.Method, listener: u32) Request {
    return .{ .host = host, .path = path, .method = method, .listener = listener };
}

test "router: first match in order; host exact, wildcard, port and case; prefix; method; listener" {
    const routes = [_]Config.Route{
        .{ .host = "api.example.com", .path_prefix = "/v1/", .methods = Config.methodBit(.get) },
        .{ .host = "*.example.com" },
        .{ .path_prefix = "/internal", .listeners = 0b10 },
        .{ .path_prefix = "/api" },
    };
    try testing.expectEqual(@as(?u32, 0), match(&routes, &testRequest("API.example.com:8080", "/v1/x", .get, 0)));
    // Same host, other method or path: the wildcard route is next.
    try testing.expectEqual(@as(?u32, 1), match(&routes, &testRequest("api.example.com", "/v1/x", .head, 0)));
    try testing.expectEqual(@as(?u32, 1), match(&routes, &testRequest("api.example.com.", "/v2", .get, 0)));
    try testing.expectEqual(@as(?u32, 1), match(&routes, &testRequest("a.b.example.com", "/", .post, 0)));
    // The wildcard needs a label in front of the suffix.
    try testing.expectEqual(@as(?u32, null), match(&routes, &testRequest("example.com", "/", .get, 0)));
    try testing.expectEqual(@as(?u32, null), match(&routes, &testRequest("badexample.com", "/", .get, 0)));
    // Listener restriction.
    try testing.expectEqual(@as(?u32, null), match(&routes, &testRequest("x", "/internal/a", .get, 0)));
    try testing.expectEqual(@as(?u32, 2), match(&routes, &testRequest("x", "/internal/a", .get, 1)));
    // A plain byte prefix.
    try testing.expectEqual(@as(?u32, 3), match(&routes, &testRequest(null, "/apix", .get, 0)));
    try testing.expectEqual(@as(?u32, null), match(&routes, &testRequest(null, "/ap", .get, 0)));
    try testing.expectEqual(@as(?u32, null), match(&routes, &testRequest("[::1]:80", "/", .get, 0)));
}

test "router: OPTIONS * matches no path prefix but \"*\", and routes without one" {
    const routes = [_]Config.Route{
        .{ .path_prefix = "/" },
        .{ .path_prefix = "*", .pool = 1 },
        .{ .pool = 2 },
    };
    try testing.expectEqual(@as(?u32, 1), match(&routes, &testRequest("h", "*", .options, 0)));
    try testing.expectEqual(@as(?u32, 2), match(routes[2..], &testRequest("h", "*", .options, 0)).? + 2);
    try testing.expectEqual(@as(?u32, null), match(routes[0..1], &testRequest("h", "*", .options, 0)));
}

test "router: the request's path comes without its query, from either target form" {
    var headers: [8]http.Header = undefined;
    var parser = http.RequestParser.init(&headers, .{ .header_bytes_max = 1024, .headers_count_max = 8, .target_bytes_max = 512 });
    const text = "GET http://Other.example/a/b?q=1 HTTP/1.1\r\nHost: ignored.example\r\n\r\n";
    try testing.expect(parser.feed(text) == .complete);
    var scratch: [3 * 512]u8 = undefined;
    const r = Request.fromHead(&parser.head, 0, &scratch);
    try testing.expectEqualStrings("Other.example", r.host.?);
    try testing.expectEqualStrings("/a/b", r.path);
    parser.reset();
    try testing.expect(parser.feed("GET /x?y HTTP/1.1\r\nHost: h:1\r\n\r\n") == .complete);
    const o = Request.fromHead(&parser.head, 1, &scratch);
    try testing.expectEqualStrings("/x", o.path);
    try testing.expectEqualStrings("h:1", o.host.?);
}

test "router: a route on a path cannot be passed by another spelling of it" {
    const routes = [_]Config.Route{ .{ .path_prefix = "/admin", .action = .respond, .status = 403 }, .{} };
    var headers: [8]http.Header = undefined;
    var parser = http.RequestParser.init(&headers, .{ .header_bytes_max = 1024, .headers_count_max = 8, .target_bytes_max = 512 });
    var scratch: [3 * 512]u8 = undefined;
    for ([_][]const u8{ "/admin", "/%61dmin", "//admin", "/./admin", "/x/../admin", "/admin/../admin/x" }) |target| {
        parser.reset();
        var line_buffer: [128]u8 = undefined;
        const text = try std.fmt.bufPrint(&line_buffer, "GET {s}?a=b HTTP/1.1\r\nHost: h\r\n\r\n", .{target});
        try testing.expect(parser.feed(text) == .complete);
        const request = Request.fromHead(&parser.head, 0, &scratch);
        try testing.expectEqual(@as(?u32, 0), match(&routes, &request));
        try testing.expectEqualStrings(target, parser.head.target[0..target.len]); // As sent.
    }
}
