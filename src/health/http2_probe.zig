//! The health probe in HTTP/2, for pools whose members speak it (`protocol = h2c`, or `h2`
//! over TLS): an HTTP/1.1 request line would be a broken connection preface to them, and every
//! probe would fail. The request is the client preface, a SETTINGS frame and one HEADERS frame
//! (stream 1, END_STREAM), composed once per member; the verdict is the response's `:status`.
//!
//! Only what a probe needs is read, strictly, with no HPACK state: frames before the
//! response's HEADERS (SETTINGS, WINDOW_UPDATE, PING, ...) are skipped whole; GOAWAY or
//! RST_STREAM before it fail the probe; in the HEADERS frame, the first field must be
//! `:status` (RFC 9113 §8.3: pseudo-fields come first), read from the static table or as a
//! literal with `:status`'s name (three digits, plain or Huffman-coded), after any dynamic
//! table size updates. Anything else is a malformed response. Nothing of the dynamic table
//! can be referred to at that point of a connection's first field block, so no table is kept.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const Address = @import("../stdx/Address.zig").Address;

pub const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// SETTINGS with ENABLE_PUSH = 0: nothing but the answer is wanted.
const settings_frame = "\x00\x00\x06\x04\x00\x00\x00\x00\x00" ++ "\x00\x02\x00\x00\x00\x00";
const frame_header_bytes = 9;
const user_agent = "sluice-health-check";

const FrameType = enum(u8) { data = 0, headers = 1, rst_stream = 3, settings = 4, goaway = 7, _ };
const flag_end_stream = 0x1;
const flag_end_headers = 0x4;
const flag_padded = 0x8;
const flag_priority = 0x20;

/// The most bytes `compose` writes for a path and a Host of these lengths (host 0: the
/// address's text).
pub fn requestBytesMax(path_bytes: usize, host_bytes: usize) usize {
    const host = if (host_bytes > 0) host_bytes else Address.ip_text_bytes_max; // Address.authority.
    const field_overhead = 1 + 3 + 1; // Representation, a length of up to 3 bytes, rounding.
    return preface.len + settings_frame.len + frame_header_bytes +
        (1 + 1 + "HEAD".len) + // :method
        1 + // :scheme
        field_overhead + path_bytes +
        field_overhead + host +
        2 + 1 + user_agent.len;
}

/// The probe's request for one member, into `buffer` (sized by `requestBytesMax`).
pub fn compose(buffer: []u8, check: *const Config.HealthCheck, address: *const Address, https: bool) []const u8 {
    var address_text: [Address.text_bytes_max]u8 = undefined;
    const host = if (check.host.len > 0) check.host else address.authority(&address_text);
    var writer: std.Io.Writer = .fixed(buffer);
    writer.writeAll(preface ++ settings_frame) catch unreachable; // Sized by requestBytesMax.
    const header_at = writer.end;
    writer.splatByteAll(0, frame_header_bytes) catch unreachable; // Filled in below.
    const block_at = writer.end;
    // Static table (RFC 7541 Appendix A): 2 `:method: GET`, 6 `:scheme: http`, 7 `https`;
    // names 2 `:method`, 4 `:path`, 1 `:authority`, 58 `user-agent`.
    switch (check.method) {
        .GET => writer.writeByte(0x80 | 2) catch unreachable,
        .HEAD => literal(&writer, 2, "HEAD"),
    }
    writer.writeByte(0x80 | @as(u8, if (https) 7 else 6)) catch unreachable;
    literal(&writer, 4, check.path);
    literal(&writer, 1, host);
    literal(&writer, 58, user_agent);
    const block_len = writer.end - block_at;
    const header = buffer[header_at..][0..frame_header_bytes];
    std.mem.writeInt(u24, header[0..3], @intCast(block_len), .big);
    header[3] = @backingInt(FrameType.headers);
    header[4] = flag_end_stream | flag_end_headers;
    std.mem.writeInt(u32, header[5..9], 1, .big);
    return writer.buffered();
}

/// A literal field without indexing, its name from the static table (RFC 7541 §6.2.2), its
/// value plain.
fn literal(writer: *std.Io.Writer, name_index: u8, value: []const u8) void {
    integer(writer, 0x00, 4, name_index);
    integer(writer, 0x00, 7, value.len);
    writer.writeAll(value) catch unreachable; // Sized by requestBytesMax.
}

/// RFC 7541 §5.1: an integer with an N-bit prefix.
fn integer(writer: *std.Io.Writer, high_bits: u8, comptime prefix_bits: u3, value: usize) void {
    const limit: usize = (1 << prefix_bits) - 1;
    if (value < limit) return writer.writeByte(high_bits | @as(u8, @intCast(value))) catch unreachable;
    writer.writeByte(high_bits | @as(u8, @intCast(limit))) catch unreachable;
    var rest = value - limit;
    while (rest >= 128) : (rest >>= 7) writer.writeByte(@as(u8, @intCast(rest & 0x7f)) | 0x80) catch unreachable;
    writer.writeByte(@intCast(rest)) catch unreachable;
}

pub const Reading = union(enum) {
    /// More bytes are needed; the first `skip` bytes are whole frames of no interest that the
    /// caller may drop to make room.
    incomplete: struct { skip: usize },
    malformed,
    /// The server refused the stream or the connection before answering.
    refused,
    status: u16,
};

/// Reads what the server sent so far (from the start of its side of the connection, minus
/// what earlier calls said to skip).
pub fn read(bytes: []const u8) Reading {
    var at: usize = 0;
    while (true) {
        if (bytes.len - at < frame_header_bytes) return .{ .incomplete = .{ .skip = at } };
        const header = bytes[at..][0..frame_header_bytes];
        const length = std.mem.readInt(u24, header[0..3], .big);
        const kind: FrameType = @fromBackingInt(@intCast(header[3]));
        const flags = header[4];
        const stream = std.mem.readInt(u32, header[5..9], .big) & 0x7fff_ffff;
        // Larger than SETTINGS_MAX_FRAME_SIZE's default, which the probe does not raise
        // (RFC 9113 §4.2): not HTTP/2 (an HTTP/1.1 answer read as frames is this).
        if (length > 16_384) return .malformed;
        const payload_at = at + frame_header_bytes;
        const available = bytes[payload_at..];
        switch (kind) {
            .headers => {
                if (stream != 1) return .malformed;
                // The first field needs only the block's first bytes, whatever its length.
                return switch (firstStatus(available[0..@min(available.len, length)], flags, length)) {
                    .incomplete => .{ .incomplete = .{ .skip = at } },
                    else => |reading| reading,
                };
            },
            .goaway => return .refused,
            .rst_stream => if (stream == 1) return .refused,
            .data => return .malformed, // A body before its head.
            else => {},
        }
        if (available.len < length) return .{ .incomplete = .{ .skip = at } };
        at = payload_at + length;
    }
}

/// The `:status` at the start of a HEADERS frame's payload (`bytes`, perhaps not all of it).
fn firstStatus(bytes: []const u8, flags: u8, length: u24) Reading {
    var at: usize = 0;
    var padding: usize = 0;
    if (flags & flag_padded != 0) {
        if (bytes.len < 1) return .{ .incomplete = .{ .skip = 0 } };
        padding = bytes[0];
        at = 1;
    }
    if (flags & flag_priority != 0) at += 5;
    if (at + padding > length) return .malformed;
    const block = bytes[@min(at, bytes.len)..@min(bytes.len, length - padding)];
    const complete = bytes.len >= length;
    return switch (status(block)) {
        .incomplete => if (complete) .malformed else .{ .incomplete = .{ .skip = 0 } },
        else => |reading| reading,
    };
}

/// The first field of a field block, which must be `:status`.
fn status(block: []const u8) Reading {
    const incomplete: Reading = .{ .incomplete = .{ .skip = 0 } };
    var at: usize = 0;
    while (true) {
        if (at >= block.len) return incomplete;
        const first = block[at];
        if (first & 0xe0 != 0x20) break;
        // A dynamic table size update (§6.3): its value does not matter here.
        const update = decodeInteger(block[at..], 5) orelse return incomplete;
        at += update.len;
    }
    const first = block[at];
    if (first & 0x80 != 0) {
        // Indexed (§6.1): the static table's 8 to 14 are `:status` with a value.
        const index = decodeInteger(block[at..], 7) orelse return incomplete;
        return switch (index.value) {
            8 => .{ .status = 200 },
            9 => .{ .status = 204 },
            10 => .{ .status = 206 },
            11 => .{ .status = 304 },
            12 => .{ .status = 400 },
            13 => .{ .status = 404 },
            14 => .{ .status = 500 },
            else => .malformed,
        };
    }
    // A literal (§6.2): with incremental indexing (01, 6-bit index), without indexing (0000)
    // or never indexed (0001, both 4-bit). A new name (index 0) is not `:status`.
    const prefix_bits: u3 = if (first & 0xc0 == 0x40) 6 else if (first & 0xe0 == 0) 4 else return .malformed;
    const name = decodeInteger(block[at..], prefix_bits) orelse return incomplete;
    if (name.value < 8 or name.value > 14) return .malformed;
    at += name.len;
    if (at >= block.len) return incomplete;
    const huffman = block[at] & 0x80 != 0;
    const value_len = decodeInteger(block[at..], 7) orelse return incomplete;
    at += value_len.len;
    if (value_len.value > 4) return .malformed; // Three digits take at most 3 bytes either way.
    const value_end = at + @as(usize, @intCast(value_len.value));
    if (value_end > block.len) return incomplete;
    const value = block[at..value_end];
    var digits: [3]u8 = undefined;
    const text: []const u8 = if (huffman) (huffmanDigits(value, &digits) orelse return .malformed) else value;
    if (text.len != 3) return .malformed;
    const code = std.fmt.parseUnsigned(u16, text, 10) catch return .malformed;
    if (code < 100 or code > 599) return .malformed;
    return .{ .status = code };
}

const Decoded = struct { value: u64, len: usize };

/// RFC 7541 §5.1; null when the bytes end first. Values past 2^32 are malformed in any field
/// a probe reads, and are returned as too large.
fn decodeInteger(bytes: []const u8, prefix_bits: u3) ?Decoded {
    const limit: u64 = (@as(u64, 1) << prefix_bits) - 1;
    if (bytes.len == 0) return null;
    var value: u64 = bytes[0] & limit;
    if (value < limit) return .{ .value = value, .len = 1 };
    var shift: u6 = 0;
    for (bytes[1..], 1..) |byte, i| {
        value += @as(u64, byte & 0x7f) << shift;
        if (byte & 0x80 == 0) return .{ .value = value, .len = i + 1 };
        if (shift >= 28) return .{ .value = std.math.maxInt(u32) + 1, .len = i + 1 };
        shift += 7;
    }
    return null;
}

/// Three decimal digits from their Huffman codes (RFC 7541 Appendix B: '0' to '2' are the 5-bit
/// 00000 to 00010, '3' to '9' the 6-bit 011001 to 011111), then padding of fewer than 8 one
/// bits. Null for anything else.
fn huffmanDigits(bytes: []const u8, out: *[3]u8) ?[]const u8 {
    var bits: u64 = 0;
    var count: u6 = 0; // Bits held in `bits`, at its low end.
    for (bytes) |byte| {
        bits = (bits << 8) | byte;
        count += 8;
    }
    var position: u6 = count;
    for (out) |*digit| {
        if (position < 5) return null;
        const five: u64 = (bits >> (position - 5)) & 0x1f;
        if (five <= 2) {
            digit.* = '0' + @as(u8, @intCast(five));
            position -= 5;
            continue;
        }
        if (position < 6) return null;
        const six: u64 = (bits >> (position - 6)) & 0x3f;
        if (six < 0b011001 or six > 0b011111) return null;
        digit.* = '3' + @as(u8, @intCast(six - 0b011001));
        position -= 6;
    }
    // Padding: the most significant bits of EOS (all ones), shorter than a byte.
    if (position >= 8) return null;
    const mask = (@as(u64, 1) << position) - 1;
    if (bits & mask != mask) return null;
    return out;
}

// --- Tests --------------------------------------------------------------------------------

const testing = std.testing;

fn hex(comptime text: []const u8) *const [text.len / 2]u8 {
    return comptime blk: {
        var out: [text.len / 2]u8 = undefined;
        _ = std.fmt.hexToBytes(&out, text) catch unreachable;
        const bytes = out;
        break :blk &bytes;
    };
}

fn headersFrame(comptime block: []const u8) *const [frame_header_bytes + block.len]u8 {
    return comptime blk: {
        var header: [frame_header_bytes]u8 = undefined;
        std.mem.writeInt(u24, header[0..3], block.len, .big);
        header[3] = 1;
        header[4] = flag_end_headers;
        std.mem.writeInt(u32, header[5..9], 1, .big);
        const frame = header ++ block[0..block.len].*;
        break :blk &frame;
    };
}

test "http2 probe: the request is a preface, SETTINGS and one HEADERS on stream 1" {
    var check: Config.HealthCheck = .{ .path = "/healthz", .method = .HEAD, .host = "api.test" };
    const address = try Address.parse("127.0.0.1:8443");
    var buffer: [512]u8 = undefined;
    const request = compose(&buffer, &check, &address, true);
    try testing.expect(request.len <= requestBytesMax(check.path.len, check.host.len));
    try testing.expect(std.mem.startsWith(u8, request, preface ++ settings_frame));
    const frame = request[preface.len + settings_frame.len ..];
    const length = std.mem.readInt(u24, frame[0..3], .big);
    try testing.expectEqual(frame.len - frame_header_bytes, length);
    try testing.expectEqual(@as(u8, 1), frame[3]);
    try testing.expectEqual(@as(u8, 0x5), frame[4]);
    try testing.expectEqual(@as(u32, 1), std.mem.readInt(u32, frame[5..9], .big));
    // :method HEAD, :scheme https, :path, :authority, user-agent (as Python's hpack writes them).
    const block = frame[frame_header_bytes..];
    try testing.expectEqualSlices(u8, hex("020448454144" ++ "87" ++ "04082f6865616c74687a" ++ "010861706" ++ "92e74657374"), block[0 .. 6 + 1 + 10 + 10]);
    try testing.expect(std.mem.endsWith(u8, block, "\x0f\x2b\x13" ++ user_agent));

    check = .{ .path = "/", .method = .GET };
    const plain = compose(&buffer, &check, &address, false);
    const plain_block = plain[preface.len + settings_frame.len + frame_header_bytes ..];
    try testing.expectEqualSlices(u8, "\x82\x86\x04\x01/\x01\x0e127.0.0.1:8443", plain_block[0..21]);
}

test "http2 probe: the status, indexed, literal or Huffman-coded, after skipped frames" {
    const settings = "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64";
    const window = "\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\xff\xff";
    try testing.expectEqual(Reading{ .status = 200 }, read(settings ++ window ++ headersFrame("\x88")));
    try testing.expectEqual(Reading{ .status = 503 }, read(settings ++ headersFrame(hex("48836c0cff"))));
    try testing.expectEqual(Reading{ .status = 418 }, read(headersFrame(hex("4803343138"))));
    try testing.expectEqual(Reading{ .status = 299 }, read(headersFrame(hex("488313efff"))));
    // A dynamic table size update first, then never indexed.
    try testing.expectEqual(Reading{ .status = 404 }, read(headersFrame("\x3f\xe1\x1f" ++ "\x18\x03404")));
    try testing.expectEqual(Reading{ .status = 304 }, read(headersFrame("\x8b" ++ "\x5f\x1d\x0atext/plain")));
}

test "http2 probe: partial input asks for more and says what may be dropped" {
    const settings = "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    const whole = settings ++ headersFrame(hex("48836c0cff"));
    for (0..whole.len) |n| {
        const reading = read(whole[0..n]);
        const expected_skip: usize = if (n >= settings.len) settings.len else 0;
        try testing.expectEqual(Reading{ .incomplete = .{ .skip = expected_skip } }, reading);
    }
    try testing.expectEqual(Reading{ .status = 503 }, read(whole));
}

test "http2 probe: refusals and malformed answers" {
    try testing.expectEqual(Reading.refused, read("\x00\x00\x08\x07\x00\x00\x00\x00\x00" ++ "\x00\x00\x00\x00\x00\x00\x00\x01"));
    try testing.expectEqual(Reading.refused, read("\x00\x00\x04\x03\x00\x00\x00\x00\x01" ++ "\x00\x00\x00\x07"));
    // An HTTP/1.1 answer read as frames, DATA first, a field that is not :status, a status
    // of two digits, a Huffman code that is a letter, a status out of range.
    try testing.expectEqual(Reading.malformed, read("HTTP/1.1 400 Bad Request\r\n\r\n"));
    try testing.expectEqual(Reading.malformed, read("\x00\x00\x01\x00\x00\x00\x00\x00\x01x"));
    try testing.expectEqual(Reading.malformed, read(headersFrame("\x82")));
    try testing.expectEqual(Reading.malformed, read(headersFrame("\x48\x0220")));
    try testing.expectEqual(Reading.malformed, read(headersFrame("\x48\x82\x18\xff")));
    try testing.expectEqual(Reading.malformed, read(headersFrame("\x48\x03999")));
    try testing.expectEqual(Reading.malformed, read(headersFrame("\x40\x07:status\x03200")));
}
