//! The line and field-line machinery shared by `RequestParser` and `ResponseParser`.
//!
//! It finds the next CRLF-terminated line of a head that grows in place, resuming the search
//! where the last call stopped, so a head delivered one byte at a time still costs O(n).
//! The decision a reader must know: every limit is a property of byte POSITIONS, never of how
//! the bytes arrived. A line is refused as too long exactly when its LF would lie at or past
//! `end_max`, and the search only looks below `end_max`, so feeding a head in one piece or in
//! a thousand gives the same answer (the fuzz program checks this).

const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");
const field_values = @import("field_values.zig");
const message = @import("message.zig");
const Header = message.Header;
const Version = message.Version;
const Reject = @import("reject.zig").Reject;

const HeadScanner = @This();

/// Fields in the order they arrived; `headers_count` of them are set.
headers_buffer: []Header,
headers_count: u16,
headers_count_max: u16,
role: Role,
/// The caller's buffer, remembered at the first non-empty feed: every later feed must pass
/// the same address, since parsed slices point into it.
buffer_ptr: ?[*]const u8,
/// Offset of the first byte of the first unfinished line.
line_start: u32,
/// Bytes in [line_start, scan_end) are known to hold no LF.
scan_end: u32,
/// Framing and routing fields met so far.
content_length: ?u64,
transfer_encoding_chunked: bool,
host: ?[]const u8,
upgrade_present: bool,
/// A Connection field was met: without one no token can be asked of it, and most requests
/// (and many responses) have none.
connection_present: bool,
expect_continue: bool,

pub const Role = enum { request, response };

pub const Line = union(enum) {
    /// No LF yet; every byte so far was examined once and will not be examined again.
    incomplete,
    /// The LF of this line cannot lie below `end_max`.
    too_long,
    invalid: Reject,
    /// The line without its CRLF; `line_start` now points past the LF.
    line: []const u8,
};

pub fn init(headers_buffer: []Header, headers_count_max: u16, role: Role) HeadScanner {
    assert(headers_buffer.len >= headers_count_max);
    return .{
        .headers_buffer = headers_buffer,
        .headers_count = 0,
        .headers_count_max = headers_count_max,
        .role = role,
        .buffer_ptr = null,
        .line_start = 0,
        .scan_end = 0,
        .content_length = null,
        .transfer_encoding_chunked = false,
        .host = null,
        .upgrade_present = false,
        .connection_present = false,
        .expect_continue = false,
    };
}

pub fn reset(s: *HeadScanner) void {
    s.* = init(s.headers_buffer, s.headers_count_max, s.role);
}

/// Checks the contract of a feed: the same buffer, grown or unchanged, never shrunk.
pub fn begin(s: *HeadScanner, bytes: []const u8) void {
    assert(bytes.len >= s.scan_end);
    if (bytes.len == 0) return;
    if (s.buffer_ptr) |ptr| {
        assert(ptr == bytes.ptr);
    } else {
        s.buffer_ptr = bytes.ptr;
    }
}

/// The next line, whose LF must lie below `end_max` (an absolute offset).
pub fn nextLine(s: *HeadScanner, bytes: []const u8, end_max: u64) Line {
    assert(s.line_start <= s.scan_end);
    assert(s.scan_end <= bytes.len);
    const search_end: usize = @intCast(@min(bytes.len, end_max));
    assert(s.scan_end <= search_end);
    const lf = std.mem.findScalarPos(u8, bytes[0..search_end], s.scan_end, '\n') orelse {
        if (bytes.len >= end_max) return .too_long;
        s.scan_end = @intCast(bytes.len);
        return .incomplete;
    };
    assert(lf < end_max);
    const start = s.line_start;
    // RFC 9112 §2.2: a line ends with CRLF; a bare LF is refused, not tolerated, since a
    // recipient that tolerates it splits lines differently from one that does not.
    if (lf == start or bytes[lf - 1] != '\r') return .{ .invalid = .bare_lf };
    s.line_start = @intCast(lf + 1);
    s.scan_end = s.line_start;
    return .{ .line = bytes[start .. lf - 1] };
}

/// One field line (RFC 9112 §5): `field-name ":" OWS field-value OWS`, without its CRLF.
pub fn fieldLine(s: *HeadScanner, line: []const u8, version: Version) ?Reject {
    assert(line.len > 0);
    // RFC 9112 §5.2: obs-fold is refused; so is whitespace before the first field line
    // (RFC 9112 §2.2), which is the same shape.
    if (chars.isWhitespace(line[0])) return .obs_fold;
    var colon: usize = 0;
    while (colon < line.len and chars.isTchar(line[colon])) colon += 1;
    if (colon == line.len) return .bad_field_name;
    if (line[colon] != ':') return nameEndReject(line[colon..]);
    if (colon == 0) return .bad_field_name;
    const raw = line[colon + 1 ..];
    if (chars.findNonFieldValueByte(raw)) |bad| {
        return if (raw[bad] == '\r') .bare_cr else .bad_field_value;
    }
    if (s.headers_count == s.headers_count_max) return .too_many_fields;
    const header: Header = .{ .name = line[0..colon], .value = chars.trimWhitespace(raw) };
    if (s.special(header, raw, version)) |reject| return reject;
    s.headers_buffer[s.headers_count] = header;
    s.headers_count += 1;
    assert(s.headers_count <= s.headers_count_max);
    return null;
}

pub fn headers(s: *const HeadScanner) []const Header {
    return s.headers_buffer[0..s.headers_count];
}

/// Why a field name stopped at a byte that is neither tchar nor ':'.
fn nameEndReject(rest: []const u8) Reject {
    assert(rest.len > 0 and rest[0] != ':');
    if (rest[0] == '\r') return .bare_cr;
    if (!chars.isWhitespace(rest[0])) return .bad_field_name;
    // RFC 9112 §5.1: no whitespace is allowed between the field name and colon; a server
    // MUST reject it with 400, since others would read "Name " as a different field.
    const after = chars.trimWhitespace(rest);
    if (after.len > 0 and after[0] == ':') return .space_before_colon;
    return .bad_field_name;
}

/// Bookkeeping of the fields that decide framing and routing, by name length first so most
/// fields cost one switch.
fn special(s: *HeadScanner, header: Header, raw: []const u8, version: Version) ?Reject {
    switch (header.name.len) {
        4 => if (chars.eqlIgnoreCase(header.name, "host")) {
            if (s.role == .response) return null;
            // RFC 9112 §3.2: more than one Host, or an invalid one, is a 400.
            if (s.host != null) return .duplicate_host;
            if (!field_values.hostIsValid(header.value)) return .bad_host;
            s.host = header.value;
        },
        6 => if (chars.eqlIgnoreCase(header.name, "expect")) {
            // RFC 9110 §10.1.1: 100-continue is the only expectation defined; anything else
            // is treated as no expectation rather than a 417.
            if (chars.eqlIgnoreCase(header.value, "100-continue")) s.expect_continue = true;
        },
        7 => if (chars.eqlIgnoreCase(header.name, "upgrade")) {
            s.upgrade_present = true;
        },
        10 => if (chars.eqlIgnoreCase(header.name, "connection")) {
            s.connection_present = true;
        },
        14 => if (chars.eqlIgnoreCase(header.name, "content-length")) {
            // RFC 9112 §6.3 items 3 and 5: conflicting framing is refused outright, even
            // repeated equal values, since the upstream may frame differently.
            if (s.content_length != null) return .content_length_repeated;
            if (s.transfer_encoding_chunked) return .content_length_with_transfer_encoding;
            s.content_length = field_values.parseContentLength(raw) orelse
                return .content_length_invalid;
        },
        17 => if (chars.eqlIgnoreCase(header.name, "transfer-encoding")) {
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            if (version == .http10) return .transfer_encoding_http10;
            if (s.transfer_encoding_chunked) return .transfer_encoding_repeated;
            if (s.content_length != null) return .content_length_with_transfer_encoding;
            if (field_values.checkTransferEncoding(raw)) |reject| return reject;
            s.transfer_encoding_chunked = true;
        },
        else => {},
    }
    return null;
}

test "head scanner: lines are found once and bare LF is refused" {
    var buffer: [4]Header = undefined;
    var s = init(&buffer, 4, .request);
    const bytes = "ab\r\ncd\r\n\n";
    s.begin(bytes[0..3]);
    try std.testing.expectEqual(Line.incomplete, s.nextLine(bytes[0..3], 100));
    try std.testing.expectEqual(@as(u32, 3), s.scan_end);
    s.begin(bytes[0..8]);
    try std.testing.expectEqualStrings("ab", s.nextLine(bytes[0..8], 100).line);
    try std.testing.expectEqualStrings("cd", s.nextLine(bytes[0..8], 100).line);
    s.begin(bytes);
    try std.testing.expectEqual(Line{ .invalid = .bare_lf }, s.nextLine(bytes, 100));
}

test "head scanner: a line is too long exactly when its LF cannot lie below end_max" {
    var buffer: [4]Header = undefined;
    var s = init(&buffer, 4, .request);
    // The LF at offset 4 lies below 5: accepted.
    try std.testing.expectEqualStrings("abc", s.nextLine("abc\r\n", 5).line);
    s.reset();
    // The LF at offset 4 does not lie below 4: too long, whether or not it has arrived.
    try std.testing.expectEqual(Line.too_long, s.nextLine("abc\r\n", 4));
    s.reset();
    try std.testing.expectEqual(Line.too_long, s.nextLine("abc\r", 4));
    s.reset();
    try std.testing.expectEqual(Line.incomplete, s.nextLine("abc", 4));
}

test "head scanner: field lines are name, colon, trimmed value" {
    var buffer: [2]Header = undefined;
    var s = init(&buffer, 2, .request);
    try std.testing.expectEqual(@as(?Reject, null), s.fieldLine("X-A: \t v a l \t", .http11));
    try std.testing.expectEqual(@as(?Reject, null), s.fieldLine("X-Empty:", .http11));
    try std.testing.expectEqualStrings("X-A", s.headers()[0].name);
    try std.testing.expectEqualStrings("v a l", s.headers()[0].value);
    try std.testing.expectEqualStrings("", s.headers()[1].value);
    try std.testing.expectEqual(@as(?Reject, .too_many_fields), s.fieldLine("X-B: 1", .http11));
}

test "head scanner: field line syntax errors" {
    const cases = [_]struct { []const u8, Reject }{
        .{ " X: 1", .obs_fold },
        .{ "\tX: 1", .obs_fold },
        .{ "X : 1", .space_before_colon },
        .{ "X\t: 1", .space_before_colon },
        .{ "X Y: 1", .bad_field_name },
        .{ ": 1", .bad_field_name },
        .{ "X", .bad_field_name },
        .{ "X(: 1", .bad_field_name },
        .{ "X\r: 1", .bare_cr },
        .{ "X: a\rb", .bare_cr },
        .{ "X: a\x00b", .bad_field_value },
        .{ "X: a\x7fb", .bad_field_value },
        .{ "X: a\x0bb", .bad_field_value },
        .{ "X: a\x1bb", .bad_field_value },
    };
    for (cases) |case| {
        var buffer: [2]Header = undefined;
        var s = init(&buffer, 2, .request);
        try std.testing.expectEqual(@as(?Reject, case[1]), s.fieldLine(case[0], .http11));
    }
}
