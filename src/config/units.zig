//! Durations (`500ms`, `10s`, `2m`, `1h`) and sizes (`512`, `16KiB`, `1MiB`) as an operator
//! writes them. A bare number is bytes for a size; for a duration it is milliseconds on the
//! command line and a mistake in a config file (docs/CONFIG.md); anything else is an error
//! rather than a guess.
const std = @import("std");

pub const ParseError = error{ InvalidNumber, InvalidUnit, Overflow };

/// What a duration without a unit means.
pub const Bare = enum { milliseconds, unit_required };

pub fn parseDurationNs(text: []const u8, bare: Bare) (ParseError || error{MissingUnit})!u64 {
    const split = splitNumber(text);
    const value = try parseDigits(split.digits);
    if (split.unit.len == 0 and bare == .unit_required) return error.MissingUnit;
    const unit_ns: u64 = if (split.unit.len == 0 or std.mem.eql(u8, split.unit, "ms"))
        std.time.ns_per_ms
    else if (std.mem.eql(u8, split.unit, "s"))
        std.time.ns_per_s
    else if (std.mem.eql(u8, split.unit, "m"))
        std.time.ns_per_min
    else if (std.mem.eql(u8, split.unit, "h"))
        std.time.ns_per_hour
    else
        return error.InvalidUnit;
    return std.math.mul(u64, value, unit_ns) catch error.Overflow;
}

pub fn parseBytes(text: []const u8) ParseError!u64 {
    const split = splitNumber(text);
    const value = try parseDigits(split.digits);
    const unit: u64 = if (split.unit.len == 0 or std.mem.eql(u8, split.unit, "B"))
        1
    else if (std.mem.eql(u8, split.unit, "KiB"))
        1024
    else if (std.mem.eql(u8, split.unit, "MiB"))
        1024 * 1024
    else if (std.mem.eql(u8, split.unit, "GiB"))
        1024 * 1024 * 1024
    else
        return error.InvalidUnit;
    return std.math.mul(u64, value, unit) catch error.Overflow;
}

const Split = struct { digits: []const u8, unit: []const u8 };

fn splitNumber(text: []const u8) Split {
    var i: usize = 0;
    while (i < text.len and text[i] >= '0' and text[i] <= '9') i += 1;
    return .{ .digits = text[0..i], .unit = text[i..] };
}

fn parseDigits(digits: []const u8) ParseError!u64 {
    if (digits.len == 0) return error.InvalidNumber;
    return std.fmt.parseInt(u64, digits, 10) catch |err| switch (err) {
        error.Overflow => error.Overflow,
        error.InvalidCharacter => error.InvalidNumber,
    };
}

test "units: durations and sizes with their suffixes" {
    try std.testing.expectEqual(@as(u64, 500 * std.time.ns_per_ms), try parseDurationNs("500ms", .unit_required));
    try std.testing.expectEqual(@as(u64, 10 * std.time.ns_per_s), try parseDurationNs("10s", .unit_required));
    try std.testing.expectEqual(@as(u64, 120 * std.time.ns_per_s), try parseDurationNs("2m", .unit_required));
    try std.testing.expectEqual(@as(u64, 250 * std.time.ns_per_ms), try parseDurationNs("250", .milliseconds));
    try std.testing.expectError(error.MissingUnit, parseDurationNs("250", .unit_required));
    try std.testing.expectEqual(@as(u64, 16 * 1024), try parseBytes("16KiB"));
    try std.testing.expectEqual(@as(u64, 4096), try parseBytes("4096"));
    try std.testing.expectError(error.InvalidUnit, parseDurationNs("10 s", .milliseconds));
    try std.testing.expectError(error.InvalidUnit, parseBytes("16kb"));
    try std.testing.expectError(error.InvalidNumber, parseBytes("KiB"));
    try std.testing.expectError(error.Overflow, parseDurationNs("99999999999999999h", .milliseconds));
}
