//! The normal form of a request path, for matching routes (RFC 3986 §6.2.2): percent-encoded
//! unreserved characters decoded, the hex digits of the other percent-encodings in upper case,
//! dot segments removed (§5.2.4), and runs of slashes merged into one.
//!
//! Why: a route that answers 403 for `/admin` must not be passed by `/%61dmin`, `//admin`,
//! `/./admin` or `/x/../admin`, which most backends read as `/admin`. Only matching uses the
//! normal form; the target is forwarded as the client sent it (a proxy that rewrote it could
//! break signed URLs and applications that care about the encoding). Encoded reserved
//! characters (`%2F`) stay encoded: decoding them would change which segments there are.
const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");

/// How much longer than its input a normal form can be: a stray '%' becomes "%25".
pub const growth_factor_max = 3;

/// Writes the normal form of `path` (the target's path, without query) into `out`, which
/// must hold `growth_factor_max * path.len` bytes. Returns it.
pub fn normalize(path: []const u8, out: []u8) []const u8 {
    assert(out.len >= growth_factor_max * path.len);
    // First pass: decode unreserved percent-encodings and merge slashes, into `out`.
    var len: usize = 0;
    var i: usize = 0;
    while (i < path.len) {
        var c = path[i];
        var width: usize = 1;
        if (c == '%' and !(i + 2 < path.len and chars.isHexDigit(path[i + 1]) and
            chars.isHexDigit(path[i + 2])))
        {
            // A '%' that starts no escape is a literal one: written as "%25", so that bytes
            // decoded next to it can never form an escape that a second decoding would read.
            out[len..][0..3].* = "%25".*;
            len += 3;
            i += 1;
            continue;
        }
        if (c == '%') {
            const decoded = @as(u8, chars.hexValue(path[i + 1])) * 16 + chars.hexValue(path[i + 2]);
            width = 3;
            if (isUnreserved(decoded)) {
                c = decoded;
            } else {
                out[len..][0..3].* = .{ '%', std.ascii.toUpper(path[i + 1]), std.ascii.toUpper(path[i + 2]) };
                len += 3;
                i += width;
                continue;
            }
        }
        i += width;
        if (c == '/' and len > 0 and out[len - 1] == '/') continue; // "//" -> "/"
        out[len] = c;
        len += 1;
    }
    // Second pass, in place: remove dot segments. Reading never falls behind writing.
    return removeDotSegments(out[0..len]);
}

/// RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
fn isUnreserved(c: u8) bool {
    return std.ascii.isAlphanumeric(c) or c == '-' or c == '.' or c == '_' or c == '~';
}

/// RFC 3986 §5.2.4 for a path whose slashes are already merged, written over itself: each
/// segment is copied, "." is skipped, ".." drops the last segment written. A path that ends
/// in "." or ".." keeps its final slash ("/a/b/.." is "/a/").
fn removeDotSegments(path: []u8) []const u8 {
    var w: usize = 0;
    var r: usize = 0;
    while (r < path.len) {
        // One segment: an optional leading '/' and the bytes up to the next '/'.
        const slash = path[r] == '/';
        const start = r + @intFromBool(slash);
        const end = std.mem.indexOfScalarPos(u8, path, start, '/') orelse path.len;
        const segment = path[start..end];
        r = end;
        const last = end == path.len;
        if (std.mem.eql(u8, segment, ".")) {
            if (last and slash) {
                path[w] = '/';
                w += 1;
            }
            continue;
        }
        if (std.mem.eql(u8, segment, "..")) {
            // Drop the last "/segment" written (at the root there is none to drop).
            w = std.mem.lastIndexOfScalar(u8, path[0..w], '/') orelse 0;
            if (last and slash) {
                path[w] = '/';
                w += 1;
            }
            continue;
        }
        if (slash) {
            path[w] = '/';
            w += 1;
        }
        @memmove(path[w..][0..segment.len], segment);
        w += segment.len;
    }
    return path[0..w];
}

const testing = std.testing;

fn expectNormal(expected: []const u8, path: []const u8) !void {
    var out: [3 * 64]u8 = undefined;
    try testing.expectEqualStrings(expected, normalize(path, &out));
}

test "path: the probe's route bypasses all normalise to the route's path" {
    for ([_][]const u8{ "/admin", "/%61dmin", "/%61%64%6D%69%6E", "//admin", "/./admin", "/x/../admin", "/x/./../admin", "///x//..//admin" }) |path| {
        try expectNormal("/admin", path);
    }
    try expectNormal("/admin/", "/admin/.");
    try expectNormal("/api/v1", "/api/v2/../v1");
}

test "path: RFC 3986 §5.2.4 examples and edges" {
    try expectNormal("/a/g", "/a/b/c/./../../g");
    try expectNormal("/mid/6", "/mid/content=5/../6");
    try expectNormal("/", "/..");
    try expectNormal("/", "/../..");
    try expectNormal("/", "/.");
    try expectNormal("/", "/");
    try expectNormal("/a/", "/a/b/..");
    try expectNormal("/a/..b", "/a/..b");
    try expectNormal("/.a", "/.a");
    try expectNormal("/a/", "/a/b/%2E%2E");
}

test "path: reserved encodings stay encoded, in upper case; bad escapes stay as they are" {
    try expectNormal("/a%2Fb", "/a%2fb");
    try expectNormal("/a%20b", "/a%20b");
    try expectNormal("/~x-y_z.", "/%7Ex%2dy%5Fz%2E");
    try expectNormal("/100%25", "/100%");
    try expectNormal("/%25zz", "/%zz");
    try expectNormal("/%254", "/%4");
    try expectNormal("/%252e", "/%%32e"); // Not "/%2e": that would decode again to ".".
}

test "path: normalising is idempotent and bounded (seeded)" {
    var prng: std.Random.DefaultPrng = .init(0xd07);
    const random = prng.random();
    const alphabet = "/.%a2F4e_-";
    var path: [64]u8 = undefined;
    var once: [growth_factor_max * 64]u8 = undefined;
    var twice: [growth_factor_max * growth_factor_max * 64]u8 = undefined;
    for (0..20_000) |_| {
        const len = random.uintAtMost(usize, path.len);
        for (path[0..len]) |*c| c.* = alphabet[random.uintLessThan(usize, alphabet.len)];
        const first = normalize(path[0..len], &once);
        try testing.expect(first.len <= growth_factor_max * len);
        const second = normalize(first, &twice);
        try testing.expectEqualStrings(first, second);
        try testing.expect(std.mem.indexOf(u8, first, "//") == null);
        try testing.expect(std.mem.indexOf(u8, first, "/./") == null);
        try testing.expect(std.mem.indexOf(u8, first, "/../") == null);
    }
}
