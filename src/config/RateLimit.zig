//! A rate limit as the operator writes it, on the command line and in a file alike:
//! `RATE[/s|/m][,burst=N][,key=ip|route|header:NAME]` (`100/s`, `600/m,burst=50`,
//! `20/s,key=header:X-Api-Key`). `Config` keeps the checked text; a generation parses it once
//! (policy/RateLimits.zig), so the text is the one form checked, baked and shown.
//!
//! Defaults: per second; a burst of the rate's own count (`100/s` lets 100 requests through at
//! once, then 100 a second), which is what a page load's burst of requests needs; keyed on the
//! client's address (IPv6 clients by their /64, the block one customer usually holds).
const std = @import("std");
const chars = @import("../http/chars.zig");

const RateLimit = @This();

/// Requests per `per`.
count: u32,
per: Per = .second,
/// Requests let through at once from a full bucket.
burst: u32,
key: Key = .ip,
/// `key = .header`: the field's name.
header: []const u8 = "",

pub const Per = enum { second, minute };
pub const Key = enum { ip, route, header };

pub const count_max = 1_000_000;
pub const burst_max = 1_000_000;

/// Nanoseconds between tokens for the whole process.
pub fn intervalNs(limit: *const RateLimit) u64 {
    const unit: u64 = switch (limit.per) {
        .second => std.time.ns_per_s,
        .minute => std.time.ns_per_min,
    };
    return unit / limit.count;
}

/// The limit in `text`, or what is wrong with it (a phrase for "invalid value ...: {s}").
pub fn parse(text: []const u8) union(enum) { limit: RateLimit, mistake: []const u8 } {
    const expected = "expected RATE[/s|/m][,burst=N][,key=ip|route|header:NAME], such as 100/s,burst=50";
    var parts = std.mem.splitScalar(u8, text, ',');
    const rate = parts.first();
    const slash = std.mem.indexOfScalar(u8, rate, '/');
    var limit: RateLimit = .{ .count = 0, .burst = 0 };
    limit.count = number(rate[0 .. slash orelse rate.len], count_max) orelse
        return .{ .mistake = "the rate is a whole number of requests from 1 to 1000000 (" ++ expected ++ ")" };
    if (slash) |at| {
        const unit = rate[at + 1 ..];
        limit.per = if (std.mem.eql(u8, unit, "s")) .second else if (std.mem.eql(u8, unit, "m")) .minute else return .{ .mistake = "the rate is per second (/s) or per minute (/m)" };
    }
    limit.burst = limit.count;
    while (parts.next()) |part| {
        if (std.mem.startsWith(u8, part, "burst=")) {
            limit.burst = number(part["burst=".len..], burst_max) orelse
                return .{ .mistake = "burst is a whole number from 1 to 1000000" };
        } else if (std.mem.eql(u8, part, "key=ip")) {
            limit.key = .ip;
        } else if (std.mem.eql(u8, part, "key=route")) {
            limit.key = .route;
        } else if (std.mem.startsWith(u8, part, "key=header:")) {
            const name = part["key=header:".len..];
            if (!isToken(name)) return .{ .mistake = "key=header: needs a field name (a token)" };
            limit.key = .header;
            limit.header = name;
        } else return .{ .mistake = expected };
    }
    return .{ .limit = limit };
}

/// For the settings table's text check: null when `text` is a limit.
pub fn mistake(text: []const u8) ?[]const u8 {
    return switch (parse(text)) {
        .limit => null,
        .mistake => |why| why,
    };
}

fn isToken(text: []const u8) bool {
    if (text.len == 0) return false;
    for (text) |c| if (!chars.isTchar(c)) return false;
    return true;
}

fn number(text: []const u8, max: u32) ?u32 {
    if (text.len == 0 or text.len > 7 or (text.len > 1 and text[0] == '0')) return null;
    for (text) |c| if (c < '0' or c > '9') return null;
    const n = std.fmt.parseInt(u32, text, 10) catch return null;
    return if (n >= 1 and n <= max) n else null;
}

test "rate limit: the forms an operator writes, and their defaults" {
    const plain = parse("100/s").limit;
    try std.testing.expectEqual(@as(u32, 100), plain.burst);
    try std.testing.expectEqual(Key.ip, plain.key);
    try std.testing.expectEqual(@as(u64, 10 * std.time.ns_per_ms), plain.intervalNs());
    const full = parse("600/m,burst=5,key=header:X-Api-Key").limit;
    try std.testing.expectEqual(Per.minute, full.per);
    try std.testing.expectEqual(@as(u32, 5), full.burst);
    try std.testing.expectEqualStrings("X-Api-Key", full.header);
    try std.testing.expectEqual(@as(u64, 100 * std.time.ns_per_ms), full.intervalNs());
    try std.testing.expectEqual(Key.route, parse("7,key=route").limit.key);
    for ([_][]const u8{ "", "0/s", "10/h", "10/s,burst=0", "10/s,key=cookie:a", "10/s,key=header:", "x", "010/s", "10/s,burst=2,extra" }) |bad| {
        try std.testing.expect(mistake(bad) != null);
    }
}
