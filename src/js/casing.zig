//! Lookups in the Unicode tables (unicode.zig, generated from node's ICU data): case
//! mapping of one code point, the properties final sigma depends on, and identifier
//! characters. Every lookup is a binary search over sorted ranges; ASCII never gets here
//! on the hot paths (callers test it first).
const std = @import("std");

const unicode = @import("unicode.zig");

pub const Direction = enum { lower, upper };

/// The simple (one code point) mapping of `cp`.
pub fn mapSimple(comptime direction: Direction, cp: u21) u21 {
    const runs: []const unicode.Run = if (direction == .upper) &unicode.upper_runs else &unicode.lower_runs;
    // The last run starting at or before cp.
    var lo: usize = 0;
    var hi: usize = runs.len;
    while (lo < hi) {
        const mid = (lo + hi) / 2;
        if (runs[mid].first <= cp) lo = mid + 1 else hi = mid;
    }
    if (lo == 0) return cp;
    const r = runs[lo - 1];
    if (cp > r.last or (cp - r.first) % r.stride != 0) return cp;
    return @intCast(@as(i32, cp) + r.delta);
}

/// The mapping of `cp` when it is more than one code point, as UTF-16 units.
pub fn mapSpecial(comptime direction: Direction, cp: u21) ?[]const u16 {
    const table: []const unicode.Special = if (direction == .upper) &unicode.upper_special else &unicode.lower_special;
    var lo: usize = 0;
    var hi: usize = table.len;
    while (lo < hi) {
        const mid = (lo + hi) / 2;
        if (table[mid].cp == cp) return table[mid].units;
        if (table[mid].cp < cp) lo = mid + 1 else hi = mid;
    }
    return null;
}

pub fn inRanges(table: []const unicode.Range, cp: u21) bool {
    var lo: usize = 0;
    var hi: usize = table.len;
    while (lo < hi) {
        const mid = (lo + hi) / 2;
        if (cp < table[mid].first) {
            hi = mid;
        } else if (cp > table[mid].last) {
            lo = mid + 1;
        } else return true;
    }
    return false;
}

pub fn isCased(cp: u21) bool {
    return inRanges(&unicode.cased, cp);
}

pub fn isCaseIgnorable(cp: u21) bool {
    return inRanges(&unicode.case_ignorable, cp);
}

pub fn isIdStart(cp: u21) bool {
    return inRanges(&unicode.id_start, cp);
}

pub fn isIdContinue(cp: u21) bool {
    return inRanges(&unicode.id_continue, cp);
}

test "casing: lookups agree with node" {
    const expectEqual = std.testing.expectEqual;
    try expectEqual(@as(u21, 'A'), mapSimple(.upper, 'a'));
    try expectEqual(@as(u21, 'z'), mapSimple(.lower, 'Z'));
    try expectEqual(@as(u21, 0x178), mapSimple(.upper, 0xFF));
    try expectEqual(@as(u21, 0x39C), mapSimple(.upper, 0xB5));
    try expectEqual(@as(u21, 0x101), mapSimple(.lower, 0x100));
    try expectEqual(@as(u21, 0x101), mapSimple(.lower, 0x101));
    try expectEqual(@as(u21, 0x100), mapSimple(.upper, 0x101));
    try expectEqual(@as(u21, 0x10428), mapSimple(.lower, 0x10400)); // Deseret
    try expectEqual(@as(u21, 0x1E922), mapSimple(.lower, 0x1E900)); // Adlam
    try expectEqual(@as(u21, '1'), mapSimple(.upper, '1'));
    try std.testing.expectEqualSlices(u16, &.{ 'S', 'S' }, mapSpecial(.upper, 0xDF).?);
    try std.testing.expectEqualSlices(u16, &.{ 'i', 0x307 }, mapSpecial(.lower, 0x130).?);
    try std.testing.expect(mapSpecial(.upper, 'a') == null);
    try std.testing.expect(isCased('a') and !isCased('1') and isCaseIgnorable('\'') and isCaseIgnorable(0x301));
    try std.testing.expect(isIdStart(0x3B1) and !isIdStart(0x2028) and !isIdStart(0x1F600) and isIdContinue(0x301) and !isIdStart(0x301));
}
