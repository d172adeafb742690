//! Byte classes of the HTTP/1.1 grammar as one comptime table of bit flags.
//!
//! Every hot byte test in the codec is a single load from a 256-byte table (four cache lines)
//! and a mask, never a chain of range comparisons. The classes are exactly the ABNF rules of
//! RFC 9110 and RFC 9112; where the codec is stricter than the grammar it says so at the use
//! site, not here.

const std = @import("std");
const assert = std.debug.assert;

const tchar_bit: u8 = 1 << 0;
const field_value_bit: u8 = 1 << 1;
const target_bit: u8 = 1 << 2;
const hex_bit: u8 = 1 << 3;
const digit_bit: u8 = 1 << 4;
const reg_name_bit: u8 = 1 << 5;
const ip_literal_bit: u8 = 1 << 6;
const whitespace_bit: u8 = 1 << 7;

const table: [256]u8 = table: {
    @setEvalBranchQuota(20_000);
    var t: [256]u8 = @splat(0);
    for (0..256) |i| {
        const c: u8 = @intCast(i);
        var flags: u8 = 0;
        // RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
        // "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA.
        if (isAlpha(c) or isDigitComptime(c) or in(c, "!#$%&'*+-.^_`|~")) flags |= tchar_bit;
        // RFC 9110 §5.5: field-vchar = VCHAR / obs-text, plus SP and HTAB between them.
        if (c == '\t' or c == ' ' or (c >= 0x21 and c <= 0x7e) or c >= 0x80) {
            flags |= field_value_bit;
        }
        // RFC 9112 §3.2 and RFC 3986 §3: every request-target character is visible ASCII;
        // '#' starts a fragment, which a client never sends (RFC 9110 §7.1).
        if (c >= 0x21 and c <= 0x7e and c != '#') flags |= target_bit;
        if (isDigitComptime(c) or (c >= 'a' and c <= 'f') or (c >= 'A' and c <= 'F')) {
            flags |= hex_bit;
        }
        if (isDigitComptime(c)) flags |= digit_bit;
        // RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ).
        // '%' is admitted here; the two hex digits after it are checked by the caller.
        const unreserved = isAlpha(c) or isDigitComptime(c) or in(c, "-._~");
        const sub_delims = in(c, "!$&'()*+,;=");
        if (unreserved or sub_delims or c == '%') flags |= reg_name_bit;
        // RFC 3986 §3.2.2: IP-literal holds an IPv6address or an IPvFuture, whose characters
        // are unreserved / sub-delims / ':'.
        if (unreserved or sub_delims or c == ':') flags |= ip_literal_bit;
        // RFC 9110 §5.6.3: OWS = *( SP / HTAB ).
        if (c == ' ' or c == '\t') flags |= whitespace_bit;
        t[i] = flags;
    }
    break :table t;
};

fn isAlpha(c: u8) bool {
    return (c >= 'a' and c <= 'z') or (c >= 'A' and c <= 'Z');
}

fn isDigitComptime(c: u8) bool {
    return c >= '0' and c <= '9';
}

fn in(c: u8, comptime set: []const u8) bool {
    for (set) |s| {
        if (c == s) return true;
    }
    return false;
}

/// A token character (RFC 9110 §5.6.2): methods, field names, codings, chunk-ext names.
pub fn isTchar(c: u8) bool {
    return table[c] & tchar_bit != 0;
}

/// A byte allowed inside a field value: HTAB, SP, VCHAR or obs-text (RFC 9110 §5.5).
pub fn isFieldValueByte(c: u8) bool {
    return table[c] & field_value_bit != 0;
}

/// A byte allowed in a request-target: 0x21–0x7E except '#'.
pub fn isTargetByte(c: u8) bool {
    return table[c] & target_bit != 0;
}

pub fn isHexDigit(c: u8) bool {
    return table[c] & hex_bit != 0;
}

pub fn isDigit(c: u8) bool {
    return table[c] & digit_bit != 0;
}

/// A byte of an RFC 3986 reg-name, counting '%' of a pct-encoding.
pub fn isRegNameByte(c: u8) bool {
    return table[c] & reg_name_bit != 0;
}

/// A byte allowed between the brackets of an RFC 3986 IP-literal.
pub fn isIpLiteralByte(c: u8) bool {
    return table[c] & ip_literal_bit != 0;
}

/// SP or HTAB, the bytes of OWS and BWS (RFC 9110 §5.6.3).
pub fn isWhitespace(c: u8) bool {
    return table[c] & whitespace_bit != 0;
}

/// Bytes per vector step of the bulk scans. Sixteen, not the widest the CPU has: field values
/// are mostly 10 to 60 bytes, and a 64-byte step would leave nearly all of them to the tail.
const vector_len = 16;
const Vector = @Vector(vector_len, u8);

/// The offset of the first byte of `bytes` that may not appear in a field value, or null.
/// Field values are most of a head's bytes, so they are checked a vector at a time.
pub fn findNonFieldValueByte(bytes: []const u8) ?usize {
    return findBad(bytes, badFieldValueBytes, isFieldValueByte);
}

/// The offset of the first byte of `bytes` that may not appear in a request-target, or null.
pub fn findNonTargetByte(bytes: []const u8) ?usize {
    return findBad(bytes, badTargetBytes, isTargetByte);
}

fn badFieldValueBytes(v: Vector) bool {
    const control = (v < @as(Vector, @splat(0x20))) & (v != @as(Vector, @splat('\t')));
    return @reduce(.Or, control | (v == @as(Vector, @splat(0x7f))));
}

fn badTargetBytes(v: Vector) bool {
    const outside = (v <= @as(Vector, @splat(0x20))) | (v >= @as(Vector, @splat(0x7f)));
    return @reduce(.Or, outside | (v == @as(Vector, @splat('#'))));
}

/// Vector steps while every byte is good, a last overlapping step for the tail, and the
/// scalar table only to locate the first bad byte (or for inputs shorter than one vector).
inline fn findBad(
    bytes: []const u8,
    comptime anyBad: fn (Vector) bool,
    comptime isGood: fn (u8) bool,
) ?usize {
    var i: usize = 0;
    if (bytes.len >= vector_len) {
        while (i + vector_len <= bytes.len) : (i += vector_len) {
            if (anyBad(bytes[i..][0..vector_len].*)) break;
        } else {
            if (i == bytes.len) return null;
            const last = bytes.len - vector_len;
            if (!anyBad(bytes[last..][0..vector_len].*)) return null;
        }
    }
    while (i < bytes.len) : (i += 1) {
        if (!isGood(bytes[i])) return i;
    }
    return null;
}

/// The value of a hex digit; the caller has checked `isHexDigit`.
pub fn hexValue(c: u8) u4 {
    assert(isHexDigit(c));
    return @intCast(switch (c) {
        '0'...'9' => c - '0',
        'a'...'f' => c - 'a' + 10,
        'A'...'F' => c - 'A' + 10,
        else => unreachable,
    });
}

pub fn toLower(c: u8) u8 {
    return if (c >= 'A' and c <= 'Z') c | 0x20 else c;
}

/// ASCII case-insensitive equality; bytes outside A–Z compare exactly.
pub fn eqlIgnoreCase(a: []const u8, b: []const u8) bool {
    if (a.len != b.len) return false;
    for (a, b) |x, y| {
        if (toLower(x) != toLower(y)) return false;
    }
    return true;
}

/// The lines of text sluice composed or already checked, split at each CRLF as
/// `std.mem.splitSequence(u8, text, "\r\n")` would (an empty line after the last CRLF
/// included), but found with a scan for the LF byte: splitSequence compares two bytes at every
/// position through a call, which cost an HTTP/2 request to a backend 14% of its instructions.
/// A bare LF splits too; such text has none (field values cannot hold one).
pub const CrlfLines = struct {
    rest: ?[]const u8,

    pub fn init(text: []const u8) CrlfLines {
        return .{ .rest = text };
    }

    pub fn next(lines: *CrlfLines) ?[]const u8 {
        const rest = lines.rest orelse return null;
        const lf = std.mem.indexOfScalar(u8, rest, '\n') orelse {
            lines.rest = null;
            return rest;
        };
        lines.rest = rest[lf + 1 ..];
        return rest[0..if (lf > 0 and rest[lf - 1] == '\r') lf - 1 else lf];
    }
};

test "chars: CrlfLines splits as splitSequence on CRLF does" {
    for ([_][]const u8{ "", "a", "a\r\n", "a\r\nb", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "\r\n\r\n", "x: 1\r\ny: 2\r\n" }) |text| {
        var expected = std.mem.splitSequence(u8, text, "\r\n");
        var got: CrlfLines = .init(text);
        while (expected.next()) |line| try std.testing.expectEqualStrings(line, got.next().?);
        try std.testing.expectEqual(@as(?[]const u8, null), got.next());
    }
}

/// Writes the field line `name: value` and its CRLF, with no formatting pass (the caller has
/// checked both).
pub fn writeFieldLine(w: *std.Io.Writer, name: []const u8, value: []const u8) std.Io.Writer.Error!void {
    try w.writeAll(name);
    try w.writeAll(": ");
    try w.writeAll(value);
    try w.writeAll("\r\n");
}

/// Removes OWS (SP and HTAB) from both ends.
pub fn trimWhitespace(text: []const u8) []const u8 {
    var start: usize = 0;
    var end: usize = text.len;
    while (start < end and isWhitespace(text[start])) start += 1;
    while (end > start and isWhitespace(text[end - 1])) end -= 1;
    assert(start <= end);
    return text[start..end];
}

test "chars: tchar is exactly the RFC 9110 token set" {
    var count: u32 = 0;
    for (0..256) |i| {
        if (isTchar(@intCast(i))) count += 1;
    }
    // 26 + 26 letters, 10 digits and 15 symbols.
    try std.testing.expectEqual(@as(u32, 77), count);
    try std.testing.expect(isTchar('!') and isTchar('~') and isTchar('`'));
    for ("()<>@,;:\\\"/[]?={} \t\x00\x7f\x80") |c| try std.testing.expect(!isTchar(c));
}

test "chars: field values admit SP, HTAB, VCHAR and obs-text only" {
    for (0..256) |i| {
        const c: u8 = @intCast(i);
        const expected = c == '\t' or (c >= 0x20 and c != 0x7f);
        try std.testing.expectEqual(expected, isFieldValueByte(c));
    }
}

test "chars: request-target bytes exclude controls, space, '#' and non-ASCII" {
    try std.testing.expect(isTargetByte('/') and isTargetByte('?') and isTargetByte('%'));
    for (" #\x00\x7f\x80\xff\t\r\n") |c| try std.testing.expect(!isTargetByte(c));
}

test "chars: hex digits and their values" {
    try std.testing.expectEqual(@as(u4, 0xa), hexValue('a'));
    try std.testing.expectEqual(@as(u4, 0xF), hexValue('F'));
    try std.testing.expectEqual(@as(u4, 7), hexValue('7'));
    try std.testing.expect(!isHexDigit('g') and !isHexDigit('x') and !isHexDigit(' '));
}

test "chars: case-insensitive comparison folds ASCII letters only" {
    try std.testing.expect(eqlIgnoreCase("Content-Length", "content-length"));
    try std.testing.expect(!eqlIgnoreCase("chunked", "chunke"));
    // 0xC0 | 0x20 would be 0xE0: non-letters must not fold.
    try std.testing.expect(!eqlIgnoreCase("\xc0", "\xe0"));
    try std.testing.expect(!eqlIgnoreCase("@", "`"));
}

test "chars: trimming removes SP and HTAB only" {
    try std.testing.expectEqualStrings("a b", trimWhitespace(" \ta b\t "));
    try std.testing.expectEqualStrings("", trimWhitespace(" \t "));
    try std.testing.expectEqualStrings("\x0bx", trimWhitespace("\x0bx"));
}

test "chars: the vector scans agree with the byte tables at every offset" {
    var bytes: [100]u8 = undefined;
    for (0..256) |b| {
        const c: u8 = @intCast(b);
        for ([_]usize{ 0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 99 }) |at| {
            @memset(&bytes, 'a');
            bytes[at] = c;
            const value_expected: ?usize = if (isFieldValueByte(c)) null else at;
            try std.testing.expectEqual(value_expected, findNonFieldValueByte(&bytes));
            const target_expected: ?usize = if (isTargetByte(c)) null else at;
            try std.testing.expectEqual(target_expected, findNonTargetByte(&bytes));
        }
    }
    try std.testing.expectEqual(@as(?usize, null), findNonFieldValueByte(""));
}
