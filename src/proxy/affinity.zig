//! What ties a request to a backend: the key `hash` hashes and the cookie `sticky` honours,
//! read from the parsed request head once per request (no copy, no allocation).
//!
//! Decision: when the header or cookie a `hash` pool is keyed on is missing, the request is
//! keyed on the client IP instead, so such requests still spread and a client keeps landing
//! on the same backend (Envoy falls back to random, nginx hashes the empty string and sends
//! them all to one backend).
const std = @import("std");
const http = @import("../http/http.zig");
const Config = @import("../config/Config.zig");

const Head = http.Request;

pub fn requestKey(head: *const Head, pool: *const Config.Pool, client_ip: []const u8) u64 {
    const bytes = switch (pool.hash_on) {
        .client_ip => client_ip,
        .path => path(head.target),
        .header => head.get(pool.hash_name) orelse client_ip,
        .cookie => cookieValue(head.headers, pool.hash_name) orelse client_ip,
    };
    return std.hash.Wyhash.hash(0, bytes);
}

/// The path of a request target: up to the query, and past the authority of an
/// absolute-form target.
fn path(target: []const u8) []const u8 {
    var rest = target;
    if (std.mem.indexOf(u8, rest, "://")) |scheme_end| {
        rest = rest[scheme_end + 3 ..];
        rest = rest[(std.mem.indexOfScalar(u8, rest, '/') orelse rest.len)..];
    }
    return rest[0..(std.mem.indexOfScalar(u8, rest, '?') orelse rest.len)];
}

/// The value of cookie `name` from the request's Cookie fields (RFC 6265 §5.4: pairs split by
/// "; "; clients send one field, but several are read in order).
pub fn cookieValue(headers: []const http.Header, name: []const u8) ?[]const u8 {
    for (headers) |field| {
        if (!std.ascii.eqlIgnoreCase(field.name, "cookie")) continue;
        var pairs = std.mem.splitScalar(u8, field.value, ';');
        while (pairs.next()) |pair_untrimmed| {
            const pair = std.mem.trim(u8, pair_untrimmed, " \t");
            const eq = std.mem.indexOfScalar(u8, pair, '=') orelse continue;
            if (!std.mem.eql(u8, pair[0..eq], name)) continue; // Cookie names are case-sensitive.
            return std.mem.trim(u8, pair[eq + 1 ..], "\"");
        }
    }
    return null;
}

test "affinity: cookie values are found among several, by exact name" {
    const headers = [_]http.Header{
        .{ .name = "Accept", .value = "*/*" },
        .{ .name = "Cookie", .value = "a=1; sid=abc;theme=dark" },
        .{ .name = "cookie", .value = "late=\"q\"" },
    };
    try std.testing.expectEqualStrings("abc", cookieValue(&headers, "sid").?);
    try std.testing.expectEqualStrings("dark", cookieValue(&headers, "theme").?);
    try std.testing.expectEqualStrings("q", cookieValue(&headers, "late").?);
    try std.testing.expectEqual(@as(?[]const u8, null), cookieValue(&headers, "SID"));
    try std.testing.expectEqual(@as(?[]const u8, null), cookieValue(&headers, "x"));
}

test "affinity: the path ignores the query and an absolute-form authority" {
    try std.testing.expectEqualStrings("/a/b", path("/a/b?x=1"));
    try std.testing.expectEqualStrings("/a", path("http://example.com/a?q"));
    try std.testing.expectEqualStrings("", path("http://example.com"));
    try std.testing.expectEqualStrings("*", path("*"));
}
