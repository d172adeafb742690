//! Framing scanner for a chunked message body (RFC 9112 §7.1) that is forwarded raw.
//!
//! We never re-encode a body, so this only answers two questions: where does the message end,
//! and is every byte up to there well-formed? It is a byte-level state machine fed only NEW
//! bytes, so it accepts its input split at any boundary and keeps no slices. Chunk data is
//! skipped in one step per read, so its cost is per chunk, not per byte. It is strict where
//! two readings of a chunk line would disagree about the chunk size: nothing before the
//! digits, whitespace after them only ahead of a chunk extension (the BWS of RFC 9112
//! §7.1.1), no "0x", no sign, at most 16 hex digits, CRLF only.

const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");
const Reject = @import("reject.zig").Reject;

const ChunkedDecoder = @This();

limits: Limits,
state: State,
/// The size being read on a chunk line, then the data bytes still to skip.
size: u64,
size_digits_count: u8,
/// Bytes after the size digits on the current chunk line, excluding its CRLF.
extension_bytes: u32,
/// Bytes of the trailer section so far, including its final CRLF.
trailer_bytes: u32,
/// Bytes of the trailer section's field lines so far (its final CRLF not included).
trailer_field_bytes: u32,
/// Chunk data bytes announced so far (the sum of the chunk sizes): a body-size limit's count.
data_bytes: u64,
/// The current trailer field name, lowercased, as far as it fits (for the forbidden names).
trailer_name_buffer: [trailer_name_forbidden_bytes_max]u8,
trailer_name_len: u32,
/// Why the body was refused; answered again by every later feed.
reject: Reject,

/// At most 16 hex digits, so a size always fits in a u64 without an overflow check.
/// Leading zeros count.
pub const size_digits_max = 16;
comptime {
    assert(size_digits_max * 4 == @bitSizeOf(u64));
}

/// The largest chunk size, and total, accepted: 2^63 - 1, as for Content-Length. Larger
/// values are refused rather than forwarded to a backend that may read them as negative.
pub const size_max: u64 = std.math.maxInt(i64);

/// RFC 9110 §6.5.1: fields about framing and routing must not be sent in a trailer, and an
/// upstream that merged them into the header section would re-frame the message.
const trailer_names_forbidden = [_][]const u8{ "content-length", "transfer-encoding", "host" };
const trailer_name_forbidden_bytes_max = "transfer-encoding".len;

pub const Limits = struct {
    /// Per chunk line: everything between the size and the CRLF.
    chunk_extension_bytes_max: u32 = 256,
    /// The whole trailer section, from after the last-chunk line to its final CRLF.
    trailer_bytes_max: u32 = 8192,
};

pub const Result = union(enum) {
    /// All of the input belongs to the body and more is needed.
    need_more,
    /// The body ends after this many bytes of this input (last-chunk, trailers, final CRLF
    /// included). The bytes after it belong to the next message and were not read.
    done: usize,
    invalid: Reject,
};

const State = enum {
    /// The first hex digit of a chunk size.
    size_start,
    size,
    /// Whitespace after the size, allowed only before a ';' (BWS of RFC 9112 §7.1.1).
    extension_space,
    extension_name_start,
    extension_name,
    extension_after_name,
    extension_value_start,
    extension_token,
    extension_quoted,
    extension_quoted_pair,
    extension_after_quoted,
    extension_after_value,
    size_lf,
    data,
    data_cr,
    data_lf,
    trailer_line_start,
    trailer_name,
    trailer_value,
    trailer_lf,
    final_lf,
    done,
    invalid,
};

pub fn init(limits: Limits) ChunkedDecoder {
    // A trailer section is at least its final CRLF.
    assert(limits.trailer_bytes_max >= 2);
    return .{
        .limits = limits,
        .state = .size_start,
        .size = 0,
        .size_digits_count = 0,
        .extension_bytes = 0,
        .trailer_bytes = 0,
        .trailer_field_bytes = 0,
        .data_bytes = 0,
        .trailer_name_buffer = undefined,
        .trailer_name_len = 0,
        .reject = undefined,
    };
}

/// How many of the next bytes are chunk data (0: the next byte is framing). A caller that
/// copies data may take that many at once, then `feed` them.
pub fn dataAhead(d: *const ChunkedDecoder) u64 {
    return if (d.state == .data) d.size else 0;
}

/// Ready for the next chunked body.
pub fn reset(d: *ChunkedDecoder) void {
    d.* = init(d.limits);
}

/// `bytes` are the bytes read since the last call, not the whole body. Must not be called
/// again after `.done` without `reset`.
pub fn feed(d: *ChunkedDecoder, bytes: []const u8) Result {
    assert(d.state != .done);
    if (d.state == .invalid) return .{ .invalid = d.reject };
    var i: usize = 0;
    while (i < bytes.len) {
        if (d.state == .data) {
            assert(d.size > 0);
            const skip: usize = @intCast(@min(d.size, bytes.len - i));
            d.size -= skip;
            i += skip;
            if (d.size == 0) d.state = .data_cr;
            continue;
        }
        if (d.advance(bytes[i])) |reject| {
            d.state = .invalid;
            d.reject = reject;
            return .{ .invalid = reject };
        }
        i += 1;
        if (d.state == .done) {
            assert(i <= bytes.len);
            return .{ .done = i };
        }
    }
    assert(i == bytes.len);
    return .need_more;
}

/// One byte of a chunk line, the CRLF after chunk data, or the trailer section.
fn advance(d: *ChunkedDecoder, c: u8) ?Reject {
    assert(d.state != .data and d.state != .done and d.state != .invalid);
    switch (d.state) {
        .size_start, .size => return d.sizeByte(c),
        .extension_space,
        .extension_name_start,
        .extension_name,
        .extension_after_name,
        .extension_value_start,
        .extension_token,
        .extension_quoted,
        .extension_quoted_pair,
        .extension_after_quoted,
        .extension_after_value,
        => return d.extensionByte(c),
        .size_lf => {
            if (c != '\n') return .bare_cr;
            d.state = if (d.size == 0) .trailer_line_start else .data;
            // Sizes are below 2^63 (`sizeByte`), so the sum of two cannot wrap; a total past
            // 2^63 is as unforwardable as a single such chunk.
            d.data_bytes += d.size;
            if (d.data_bytes > size_max) return .chunk_size_too_large;
            d.size_digits_count = 0;
            d.extension_bytes = 0;
        },
        .data_cr => {
            if (c != '\r') return .chunk_data_crlf_missing;
            d.state = .data_lf;
        },
        .data_lf => {
            if (c != '\n') return .chunk_data_crlf_missing;
            d.state = .size_start;
            d.size = 0;
        },
        .trailer_line_start, .trailer_name, .trailer_value, .trailer_lf, .final_lf => {
            d.trailer_bytes += 1;
            if (d.trailer_bytes > d.limits.trailer_bytes_max) return .trailer_too_large;
            const final_crlf = d.state == .final_lf or (d.state == .trailer_line_start and c == '\r');
            if (!final_crlf) d.trailer_field_bytes += 1;
            return d.trailerByte(c);
        },
        .data, .done, .invalid => unreachable,
    }
    return null;
}

/// chunk-size = 1*HEXDIG, then a chunk-ext or the CRLF.
fn sizeByte(d: *ChunkedDecoder, c: u8) ?Reject {
    if (chars.isHexDigit(c)) {
        if (d.size_digits_count == size_digits_max) return .chunk_size_too_large;
        d.size_digits_count += 1;
        d.size = (d.size << 4) | chars.hexValue(c);
        if (d.size > size_max) return .chunk_size_too_large;
        d.state = .size;
        return null;
    }
    if (c == '\n') return .bare_lf;
    // Nothing but a digit may start the line: no whitespace, sign or empty size.
    if (d.state == .size_start) return .chunk_size_invalid;
    assert(d.size_digits_count > 0);
    switch (c) {
        '\r' => d.state = .size_lf,
        ';' => d.state = .extension_name_start,
        ' ', '\t' => d.state = .extension_space,
        // "0x10", "10abc;" or any other byte after the digits.
        else => return .chunk_size_invalid,
    }
    if (c != '\r') {
        d.extension_bytes = 1;
        if (d.extension_bytes > d.limits.chunk_extension_bytes_max) {
            return .chunk_extension_too_long;
        }
    }
    return null;
}

/// RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ),
/// chunk-ext-name = token, chunk-ext-val = token / quoted-string. BWS must be accepted by a
/// recipient (RFC 9110 §5.6.3), but only where the grammar puts it: "5 \r\n" is refused.
fn extensionByte(d: *ChunkedDecoder, c: u8) ?Reject {
    if (c == '\n') return .bare_lf;
    if (c != '\r') {
        d.extension_bytes += 1;
        if (d.extension_bytes > d.limits.chunk_extension_bytes_max) {
            return .chunk_extension_too_long;
        }
    }
    const whitespace = chars.isWhitespace(c);
    const next: State = switch (d.state) {
        .extension_space => if (c == ';')
            .extension_name_start
        else if (whitespace)
            .extension_space
        else
            return .chunk_size_invalid,
        .extension_name_start => if (chars.isTchar(c))
            .extension_name
        else if (whitespace)
            .extension_name_start
        else
            return .chunk_extension_invalid,
        .extension_name => if (chars.isTchar(c))
            .extension_name
        else switch (c) {
            '=' => .extension_value_start,
            ';' => .extension_name_start,
            ' ', '\t' => .extension_after_name,
            '\r' => .size_lf,
            else => return .chunk_extension_invalid,
        },
        .extension_after_name => switch (c) {
            '=' => .extension_value_start,
            ';' => .extension_name_start,
            ' ', '\t' => .extension_after_name,
            else => return .chunk_extension_invalid,
        },
        .extension_value_start => if (chars.isTchar(c))
            .extension_token
        else switch (c) {
            '"' => .extension_quoted,
            ' ', '\t' => .extension_value_start,
            else => return .chunk_extension_invalid,
        },
        .extension_token => if (chars.isTchar(c))
            .extension_token
        else switch (c) {
            ';' => .extension_name_start,
            ' ', '\t' => .extension_after_value,
            '\r' => .size_lf,
            else => return .chunk_extension_invalid,
        },
        // RFC 9110 §5.6.4: qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text.
        .extension_quoted => switch (c) {
            '"' => .extension_after_quoted,
            '\\' => .extension_quoted_pair,
            else => if (chars.isFieldValueByte(c))
                .extension_quoted
            else
                return .chunk_extension_invalid,
        },
        // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ).
        .extension_quoted_pair => if (chars.isFieldValueByte(c))
            .extension_quoted
        else
            return .chunk_extension_invalid,
        .extension_after_quoted => switch (c) {
            ';' => .extension_name_start,
            ' ', '\t' => .extension_after_value,
            '\r' => .size_lf,
            else => return .chunk_extension_invalid,
        },
        // Whitespace after a value may only lead to another ';', never to the CRLF.
        .extension_after_value => switch (c) {
            ';' => .extension_name_start,
            ' ', '\t' => .extension_after_value,
            else => return .chunk_extension_invalid,
        },
        else => unreachable,
    };
    d.state = next;
    return null;
}

/// RFC 9112 §7.1.2: trailer-section = *( field-line CRLF ), with the field-line rules of
/// the head (no obs-fold, no whitespace before ':', field-value bytes only).
fn trailerByte(d: *ChunkedDecoder, c: u8) ?Reject {
    switch (d.state) {
        .trailer_line_start => {
            if (c == '\r') {
                d.state = .final_lf;
            } else if (c == '\n') {
                return .bare_lf;
            } else if (chars.isTchar(c)) {
                d.trailer_name_len = 0;
                d.trailerNameByte(c);
                d.state = .trailer_name;
            } else {
                // Whitespace here is obs-fold or a line starting with SP: both refused.
                return .trailer_invalid;
            }
        },
        .trailer_name => {
            if (chars.isTchar(c)) {
                d.trailerNameByte(c);
            } else if (c == ':') {
                if (d.trailerNameForbidden()) return .trailer_invalid;
                d.state = .trailer_value;
            } else if (c == '\n') {
                return .bare_lf;
            } else {
                return .trailer_invalid;
            }
        },
        .trailer_value => {
            if (c == '\r') {
                d.state = .trailer_lf;
            } else if (c == '\n') {
                return .bare_lf;
            } else if (!chars.isFieldValueByte(c)) {
                return .trailer_invalid;
            }
        },
        .trailer_lf => {
            if (c != '\n') return .bare_cr;
            d.state = .trailer_line_start;
        },
        .final_lf => {
            if (c != '\n') return .bare_cr;
            d.state = .done;
        },
        else => unreachable,
    }
    return null;
}

fn trailerNameByte(d: *ChunkedDecoder, c: u8) void {
    if (d.trailer_name_len < d.trailer_name_buffer.len) {
        d.trailer_name_buffer[d.trailer_name_len] = chars.toLower(c);
    }
    d.trailer_name_len += 1;
}

fn trailerNameForbidden(d: *const ChunkedDecoder) bool {
    assert(d.trailer_name_len > 0);
    if (d.trailer_name_len > d.trailer_name_buffer.len) return false;
    const name = d.trailer_name_buffer[0..d.trailer_name_len];
    for (trailer_names_forbidden) |forbidden| {
        if (std.mem.eql(u8, name, forbidden)) return true;
    }
    return false;
}

// ----------------------------------------------------------------------------------------
// Tests.

const testing = std.testing;

/// Well-formed bodies; shared with the fuzz program as seeds.
/// What `decodeInPlace` did with its input.
pub const Decoded = struct {
    /// Bytes of the input that belong to the body (framing included); any rest follows it.
    consumed: usize,
    /// Data bytes, now at the front of the input.
    data_len: usize,
    done: bool,
    reject: ?Reject = null,
    /// The trailer section's field-line bytes in this input (its final CRLF not included),
    /// left where they were: `bytes[trailer_start..][0..trailer_len]`. A section split across
    /// inputs comes in order, a piece from each.
    trailer_start: usize = 0,
    trailer_len: usize = 0,
};

/// What `feedDroppingTrailers` did with its input.
pub const Filtered = struct {
    result: Result,
    /// Trailer field-line bytes removed: the bytes to forward are `bytes[dropped..n]` (or
    /// `bytes[dropped..]` on `need_more`), moved there in place.
    dropped: usize,
};

/// Like `feed`, and also removes the trailer section's field lines in place (only its final
/// CRLF is forwarded). A proxy may discard trailers (RFC 9110 §6.5.1), and those that a
/// backend would merge into the header section are how framing, routing, authentication or
/// forwarding fields could be smuggled past the head's checks. Decided per byte from the
/// decoder's state, so a trailer line split across reads needs nothing held back.
pub fn feedDroppingTrailers(d: *ChunkedDecoder, bytes: []u8) Filtered {
    const field_bytes_before = d.trailer_field_bytes;
    const final_before = d.trailer_bytes - d.trailer_field_bytes;
    const result = d.feed(bytes);
    const end = switch (result) {
        .need_more => bytes.len,
        .done => |n| n,
        .invalid => return .{ .result = result, .dropped = 0 },
    };
    const dropped: usize = d.trailer_field_bytes - field_bytes_before;
    if (dropped == 0) return .{ .result = result, .dropped = 0 };
    // Trailer bytes end the body: in this input they are the field-line bytes, then the
    // final CRLF's bytes (up to two). Everything before the field lines moves right over them.
    const final_here: usize = (d.trailer_bytes - d.trailer_field_bytes) - final_before;
    assert(final_here <= 2 and dropped + final_here <= end);
    const kept_head = end - final_here - dropped;
    @memmove(bytes[dropped..][0..kept_head], bytes[0..kept_head]);
    return .{ .result = result, .dropped = dropped };
}

/// Like `feed`, and also removes the framing in place: the chunk data ends up at the front of
/// `bytes`. For the one case where a proxy must re-frame a body (a chunked response to an
/// HTTP/1.0 client, RFC 9112 §6.1); forwarded bodies use `feed`. Data is handed over a whole
/// read at a time, framing one byte at a time (framing lines are short).
pub fn decodeInPlace(d: *ChunkedDecoder, bytes: []u8) Decoded {
    const field_bytes_before = d.trailer_field_bytes;
    const final_before = d.trailer_bytes - d.trailer_field_bytes;
    var decoded = d.decodeFraming(bytes);
    if (decoded.reject != null) return decoded;
    // Trailer bytes end the body and are never moved (data is written only before the
    // position read): in this input, the field-line bytes, then the final CRLF's (up to two).
    decoded.trailer_len = d.trailer_field_bytes - field_bytes_before;
    const final_here: usize = (d.trailer_bytes - d.trailer_field_bytes) - final_before;
    assert(final_here <= 2 and decoded.trailer_len + final_here <= decoded.consumed);
    decoded.trailer_start = decoded.consumed - final_here - decoded.trailer_len;
    assert(decoded.trailer_start >= decoded.data_len);
    return decoded;
}

fn decodeFraming(d: *ChunkedDecoder, bytes: []u8) Decoded {
    var read: usize = 0;
    var written: usize = 0;
    while (read < bytes.len) {
        if (d.state == .data) {
            const take: usize = @intCast(@min(d.size, bytes.len - read));
            switch (d.feed(bytes[read..][0..take])) {
                .need_more => {},
                .done, .invalid => unreachable, // Data bytes never end or break a body.
            }
            @memmove(bytes[written..][0..take], bytes[read..][0..take]);
            written += take;
            read += take;
            continue;
        }
        switch (d.feed(bytes[read..][0..1])) {
            .need_more => read += 1,
            .done => |n| {
                assert(n == 1);
                return .{ .consumed = read + 1, .data_len = written, .done = true };
            },
            .invalid => |reject| return .{
                .consumed = read,
                .data_len = written,
                .done = false,
                .reject = reject,
            },
        }
    }
    assert(written <= read);
    return .{ .consumed = read, .data_len = written, .done = false };
}

test "chunked decoder: decodeInPlace keeps the data, drops the framing, at any split" {
    const body = "4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\nNEXT";
    const expected = "Wikipedia in \r\n\r\nchunks.";
    for (0..body.len - "NEXT".len) |split| {
        var copy: [body.len]u8 = body.*;
        var decoder: ChunkedDecoder = .init(.{});
        var out: [body.len]u8 = undefined;
        const first = decoder.decodeInPlace(copy[0..split]);
        try std.testing.expect(!first.done);
        @memcpy(out[0..first.data_len], copy[0..first.data_len]);
        const second = decoder.decodeInPlace(copy[split..]);
        try std.testing.expect(second.done);
        try std.testing.expectEqual(body.len - "NEXT".len - split, second.consumed);
        @memcpy(out[first.data_len..][0..second.data_len], copy[split..][0..second.data_len]);
        try std.testing.expectEqualStrings(expected, out[0 .. first.data_len + second.data_len]);
    }
}

test "chunked decoder: decodeInPlace leaves the trailer lines in place, at any split" {
    const body = "3\r\nabc\r\n0\r\nGrpc-Status: 0\r\nX-T: 1\r\n\r\n";
    const trailers = "Grpc-Status: 0\r\nX-T: 1\r\n";
    for (0..body.len) |split| {
        var copy: [body.len]u8 = body.*;
        var decoder: ChunkedDecoder = .init(.{});
        var got: [trailers.len]u8 = undefined;
        var got_len: usize = 0;
        for ([_][]u8{ copy[0..split], copy[split..] }) |part| {
            const decoded = decoder.decodeInPlace(part);
            try std.testing.expect(decoded.reject == null);
            @memcpy(got[got_len..][0..decoded.trailer_len], part[decoded.trailer_start..][0..decoded.trailer_len]);
            got_len += decoded.trailer_len;
        }
        try std.testing.expectEqualStrings(trailers, got[0..got_len]);
    }
}

test "chunked decoder: decodeInPlace refuses what feed refuses" {
    var bytes = "zz\r\nabc".*;
    var decoder: ChunkedDecoder = .init(.{});
    try std.testing.expect(decoder.decodeInPlace(&bytes).reject != null);
}

pub const valid_cases = [_][]const u8{
    "0\r\n\r\n",
    "5\r\nhello\r\n0\r\n\r\n",
    "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    "A\r\n0123456789\r\n0\r\n\r\n",
    "a\r\n0123456789\r\n000\r\n\r\n",
    "0000000000000001\r\nx\r\n0\r\n\r\n",
    "1;name\r\nx\r\n0\r\n\r\n",
    "1;name=value\r\nx\r\n0\r\n\r\n",
    "1;a=1;b=\"q \\\" s\"\r\nx\r\n0;last\r\n\r\n",
    "1 ;a = 1 ; b\r\nx\r\n0\r\n\r\n",
    "1;a=\"\"\r\nx\r\n0\r\n\r\n",
    "0\r\nExpires: never\r\nX-Checksum: abc \t\r\n\r\n",
    "0\r\nX-Empty:\r\n\r\n",
    "3\r\n\r\n\r\r\n0\r\n\r\n",
};

test "chunked decoder: valid bodies end exactly after their final CRLF" {
    for (valid_cases) |body| {
        var d = init(.{});
        // Bytes of the next message after the body must not be read.
        var buffer: [128]u8 = undefined;
        const input = try std.fmt.bufPrint(&buffer, "{s}GET / HTTP/1.1\r\n\x00", .{body});
        testing.expectEqual(Result{ .done = body.len }, d.feed(input)) catch |err| {
            std.debug.print("body: {f}\n", .{std.ascii.hexEscape(body, .lower)});
            return err;
        };
    }
}

pub const Malformed = struct { []const u8, Reject };

/// Refused bodies with the reason; shared with the fuzz program as seeds.
pub const malformed_cases = [_]Malformed{
    .{ "\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ " 5\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "5 \r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "5\t\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "+5\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "-5\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "0x5\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "5g\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "g\r\n", .chunk_size_invalid },
    .{ "5,5\r\nhello\r\n0\r\n\r\n", .chunk_size_invalid },
    .{ "10000000000000000\r\n", .chunk_size_too_large },
    .{ "00000000000000000\r\n\r\n", .chunk_size_too_large },
    .{ "ffffffffffffffffff\r\n", .chunk_size_too_large },
    .{ "5;\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;=x\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a=\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a=b c\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a \r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a=b \r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a=\"b\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a=\"b\x00\"\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a\"b\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5;a=b\x7f\r\nhello\r\n0\r\n\r\n", .chunk_extension_invalid },
    .{ "5\nhello\r\n0\r\n\r\n", .bare_lf },
    .{ "5;a\nhello\r\n0\r\n\r\n", .bare_lf },
    .{ "5\rhello\r\n0\r\n\r\n", .bare_cr },
    .{ "5\r\nhelloX\r\n0\r\n\r\n", .chunk_data_crlf_missing },
    .{ "5\r\nhello\n0\r\n\r\n", .chunk_data_crlf_missing },
    .{ "5\r\nhello\rX0\r\n\r\n", .chunk_data_crlf_missing },
    .{ "5\r\nhel\r\n0\r\n\r\n", .chunk_data_crlf_missing },
    .{ "0\r\n\n", .bare_lf },
    .{ "0\r\n\rX", .bare_cr },
    .{ "0\r\nX: a\n\r\n", .bare_lf },
    .{ "0\r\nX: a\rb\r\n\r\n", .bare_cr },
    .{ "0\r\n X: a\r\n\r\n", .trailer_invalid },
    .{ "0\r\nX : a\r\n\r\n", .trailer_invalid },
    .{ "0\r\n: a\r\n\r\n", .trailer_invalid },
    .{ "0\r\nX: a\x00\r\n\r\n", .trailer_invalid },
    .{ "0\r\nX\r\n\r\n", .trailer_invalid },
    .{ "0\r\nContent-Length: 5\r\n\r\n", .trailer_invalid },
    .{ "0\r\nTRANSFER-ENCODING: chunked\r\n\r\n", .trailer_invalid },
    .{ "0\r\nHost: a\r\n\r\n", .trailer_invalid },
};

test "chunked decoder: malformed bodies are refused with the right reason" {
    for (malformed_cases) |case| {
        var d = init(.{});
        testing.expectEqual(Result{ .invalid = case[1] }, d.feed(case[0])) catch |err| {
            std.debug.print("body: {f}\n", .{std.ascii.hexEscape(case[0], .lower)});
            return err;
        };
        // A refusal is sticky.
        try testing.expectEqual(Result{ .invalid = case[1] }, d.feed("0\r\n\r\n"));
    }
}

/// Feeds `input` in pieces cut at `cuts` (increasing offsets) and returns the overall result,
/// with `done` counted from the start of `input`.
fn feedInPieces(d: *ChunkedDecoder, input: []const u8, cuts: []const usize) Result {
    var start: usize = 0;
    for (cuts) |cut| {
        assert(cut >= start);
        switch (d.feed(input[start..cut])) {
            .need_more => start = cut,
            .done => |n| return .{ .done = start + n },
            .invalid => |reject| return .{ .invalid = reject },
        }
    }
    return switch (d.feed(input[start..])) {
        .need_more => .need_more,
        .done => |n| .{ .done = start + n },
        .invalid => |reject| .{ .invalid = reject },
    };
}

test "chunked decoder: splitting the input at every index gives the same result" {
    var cuts: [128]usize = undefined;
    for (0..valid_cases.len + malformed_cases.len) |n| {
        const input = if (n < valid_cases.len)
            valid_cases[n]
        else
            malformed_cases[n - valid_cases.len][0];
        var one = init(.{});
        const expected = one.feed(input);
        for (0..input.len + 1) |cut| {
            var split = init(.{});
            try testing.expectEqual(expected, feedInPieces(&split, input, &.{cut}));
        }
        assert(input.len <= cuts.len);
        for (cuts[0..input.len], 0..) |*cut, i| cut.* = i;
        var bytewise = init(.{});
        try testing.expectEqual(expected, feedInPieces(&bytewise, input, cuts[0..input.len]));
    }
}

test "chunked decoder: an unfinished body needs more and large chunks are skipped whole" {
    var d = init(.{});
    try testing.expectEqual(Result.need_more, d.feed("7fffffffffffffff\r\n"));
    try testing.expectEqual(size_max, d.size);
    var data: [4096]u8 = @splat('x');
    try testing.expectEqual(Result.need_more, d.feed(&data));
    try testing.expectEqual(size_max - @as(u64, data.len), d.size);
    try testing.expectEqual(Result.need_more, d.feed(""));
}

test "chunked decoder: sizes and their total stay below 2^63" {
    var d = init(.{});
    try testing.expectEqual(Result{ .invalid = .chunk_size_too_large }, d.feed("8000000000000000\r\n"));
    d.reset();
    try testing.expectEqual(Result{ .invalid = .chunk_size_too_large }, d.feed("ffffffffffffffff\r\n"));
    // Two chunks whose sum passes the bound: the second size line is refused.
    d.reset();
    try testing.expectEqual(Result.need_more, d.feed("7fffffffffffffff\r\n"));
    d.size = 0; // As if its data had been skipped.
    d.state = .data_cr;
    try testing.expectEqual(Result{ .invalid = .chunk_size_too_large }, d.feed("\r\n1\r\n"));
}

test "chunked decoder: trailers are dropped in place, at any split, final CRLF kept" {
    // Framing and Host trailers are refused outright (see trailer_names_forbidden); the rest
    // is dropped, whatever it names.
    const allowed = "3\r\nabc\r\n0\r\nX-Forwarded-For: 6.6.6.6\r\nX-Sig: 1\r\n\r\nNEXT";
    const expected = "3\r\nabc\r\n0\r\n\r\n";
    for (0..allowed.len + 1) |cut| {
        var d = init(.{});
        var copy = allowed.*;
        var out: [allowed.len]u8 = undefined;
        var out_len: usize = 0;
        var start: usize = 0;
        var done = false;
        for ([_]usize{ cut, allowed.len }) |end| {
            if (done or end < start) continue;
            const filtered = d.feedDroppingTrailers(copy[start..end]);
            const kept_end = switch (filtered.result) {
                .need_more => end - start,
                .done => |n| blk: {
                    done = true;
                    break :blk n;
                },
                .invalid => return error.TestUnexpectedResult,
            };
            const kept = copy[start..][filtered.dropped..kept_end];
            @memcpy(out[out_len..][0..kept.len], kept);
            out_len += kept.len;
            if (done) try testing.expectEqualStrings("NEXT", copy[start + kept_end ..]);
            start = end;
        }
        try testing.expect(done);
        try testing.expectEqualStrings(expected, out[0..out_len]);
        try testing.expectEqual(@as(u64, 3), d.data_bytes);
    }
}

test "chunked decoder: extension and trailer limits" {
    var d = init(.{ .chunk_extension_bytes_max = 8, .trailer_bytes_max = 16 });
    try testing.expectEqual(Result{ .done = 19 }, d.feed("1;abcdefg\r\nx\r\n0\r\n\r\n"));
    d.reset();
    try testing.expectEqual(
        Result{ .invalid = .chunk_extension_too_long },
        d.feed("1;abcdefgh\r\nx\r\n0\r\n\r\n"),
    );
    // The trailer section "X: 012345678\r\n\r\n" has 16 bytes; one more is too many.
    d.reset();
    try testing.expectEqual(Result{ .done = 19 }, d.feed("0\r\nX: 012345678\r\n\r\n"));
    d.reset();
    try testing.expectEqual(
        Result{ .invalid = .trailer_too_large },
        d.feed("0\r\nX: 0123456789\r\n\r\n"),
    );
    try testing.expectEqual(@as(u16, 431), Reject.trailer_too_large.status());
}

test "chunked decoder: the decoder size is pinned" {
    try testing.expectEqual(@as(usize, 64), @sizeOf(ChunkedDecoder));
}
