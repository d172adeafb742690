//! A response sluice writes itself (a route's fixed response or redirect, the 404, a
//! handler's), as it is before any protocol frames it: its status, the field lines sluice
//! wrote, the body's length, and the body's first bytes behind the fields.
//!
//! The producer (proxy/local.zig, handler/Handler.zig) writes no status line, no framing
//! field (Content-Length, Transfer-Encoding) and no Connection field: those are the
//! protocol's. HTTP/1.1 writes its status line and framing into the room the producer left in
//! front of the fields (`head_room`) and sends the bytes where they are, in one write and
//! without a copy (`frameHttp1`); HTTP/2 makes the field lines its HEADERS (`FieldLines`).
//! Nothing is parsed back, and a producer cannot write a framing of its own.
//!
//! Field lines are `Name: value\r\n`, ended by an empty line, in sluice's own bytes: the
//! producers checked names and values (a handler's again as they are written), so they are
//! split here, not validated.
const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");
const Version = @import("message.zig").Version;

const LocalResponse = @This();

status: u16,
/// The body's whole length (possibly more than follows the fields: the rest comes in later
/// windows), sent as Content-Length; null: none is sent (a 204, or a 304 whose length would
/// have to be the 200's).
content_length: ?u64,
/// Of the producer's bytes: the field lines and their empty line.
fields_len: u32,
/// Of the producer's bytes: the fields, then the body's first bytes.
len: u32,

/// The room in front of the producer's bytes for HTTP/1.1's status line, Content-Length and
/// Connection field (at most 46 + 38 + 24 bytes: `frameHttp1`).
pub const head_room = 128;

/// The most field lines a producer writes (HTTP/2 submits them as an array of its own,
/// ServerSession's, beside the length and the status).
pub const fields_max = 100;

pub fn fieldLines(response: LocalResponse, text: []const u8) FieldLines {
    return .{ .lines = .init(text[0..response.fields_len]) };
}

pub fn body(response: LocalResponse, text: []const u8) []const u8 {
    return text[response.fields_len..response.len];
}

pub const Field = struct { name: []u8, value: []const u8 };

/// The field lines one by one; names are handed out writable (HTTP/2 lowercases them in place).
pub const FieldLines = struct {
    lines: chars.CrlfLines,

    pub fn next(field_lines: *FieldLines) ?Field {
        const line = field_lines.lines.next() orelse return null;
        if (line.len == 0) return null; // The empty line.
        const colon = std.mem.indexOfScalar(u8, line, ':').?; // The producer wrote `Name: value`.
        return .{ .name = @constCast(line[0..colon]), .value = chars.trimWhitespace(line[colon + 1 ..]) };
    }
};

/// What HTTP/1.1 adds in front of the fields.
pub const Http1 = struct {
    version: Version,
    /// `Connection: close`; otherwise an HTTP/1.0 client is told `Connection: keep-alive`.
    close: bool,
};

/// The whole HTTP/1.1 message, in place: the status line, Content-Length and Connection
/// written into the room in front of the fields, which are `buffer[head_room..]`. Returns the
/// bytes to send, from the status line to the end of the body's first bytes.
pub fn frameHttp1(response: LocalResponse, buffer: []u8, options: Http1) []u8 {
    var prefix: [head_room]u8 = undefined;
    var w: std.Io.Writer = .fixed(&prefix);
    writePrefix(&w, response, options) catch unreachable; // `head_room` holds the largest.
    const start = head_room - w.end;
    @memcpy(buffer[start..head_room], w.buffered());
    return buffer[start .. head_room + response.len];
}

/// RFC 9110 §15's reason phrase for `status` (100 to 599), or empty for a code it does not
/// name: every status line sluice writes itself takes it from here.
pub fn standardPhrase(status: u16) []const u8 {
    const code: std.http.Status = @fromBackingInt(@as(u10, @intCast(status)));
    return code.phrase() orelse "";
}

fn writePrefix(w: *std.Io.Writer, response: LocalResponse, options: Http1) std.Io.Writer.Error!void {
    const phrase = standardPhrase(response.status);
    const version = if (options.version == .http10) "HTTP/1.0" else "HTTP/1.1";
    try w.print("{s} {d} {s}\r\n", .{ version, response.status, phrase });
    if (response.content_length) |length| try w.print("Content-Length: {d}\r\n", .{length});
    if (options.close) {
        try w.writeAll("Connection: close\r\n");
    } else if (options.version == .http10) {
        try w.writeAll("Connection: keep-alive\r\n");
    }
}

const testing = std.testing;

test "local response: framed for HTTP/1.1 in front of its fields, and split for HTTP/2" {
    var buffer: [head_room + 64]u8 = undefined;
    const text = "Content-Type: text/plain\r\nX-A:  b \r\n\r\npong";
    @memcpy(buffer[head_room..][0..text.len], text);
    const response: LocalResponse = .{ .status = 201, .content_length = 4, .fields_len = text.len - 4, .len = text.len };
    try testing.expectEqualStrings("HTTP/1.1 201 Created\r\nContent-Length: 4\r\nContent-Type: text/plain\r\n" ++
        "X-A:  b \r\n\r\npong", response.frameHttp1(&buffer, .{ .version = .http11, .close = false }));
    try testing.expectEqualStrings("HTTP/1.0 201 Created\r\nContent-Length: 4\r\nConnection: keep-alive\r\n" ++
        "Content-Type: text/plain\r\nX-A:  b \r\n\r\npong", response.frameHttp1(&buffer, .{ .version = .http10, .close = false }));
    var lines = response.fieldLines(buffer[head_room..]);
    const first = lines.next().?;
    try testing.expectEqualStrings("Content-Type", first.name);
    try testing.expectEqualStrings("text/plain", first.value);
    const second = lines.next().?;
    try testing.expectEqualStrings("X-A", second.name);
    try testing.expectEqualStrings("b", second.value);
    try testing.expect(lines.next() == null);
    try testing.expectEqualStrings("pong", response.body(buffer[head_room..]));
}

test "local response: the largest HTTP/1.1 prefix fits the room" {
    var buffer: [head_room + 2]u8 = undefined;
    buffer[head_room..][0..2].* = "\r\n".*;
    // Every status with a phrase of its own, the longest length, the longest Connection field.
    var status: u16 = 100;
    while (status < 600) : (status += 1) {
        const response: LocalResponse = .{ .status = status, .content_length = std.math.maxInt(u64), .fields_len = 2, .len = 2 };
        const framed = response.frameHttp1(&buffer, .{ .version = .http10, .close = false });
        try testing.expect(std.mem.startsWith(u8, framed, "HTTP/1.0 "));
    }
    // No body length: no Content-Length (a 204; a 304).
    const no_content: LocalResponse = .{ .status = 204, .content_length = null, .fields_len = 2, .len = 2 };
    try testing.expectEqualStrings("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", no_content.frameHttp1(&buffer, .{ .version = .http11, .close = true }));
}
