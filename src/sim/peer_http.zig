//! HTTP/1.1 as the simulated peers speak and check it: a strict streaming message parser
//! (one message at a time, heads kept, bodies checked as they pass), the tags that make a
//! mix-up detectable, and the byte patterns of bodies and tunnels.
//!
//! Decision: written for the simulator, not taken from src/http/. The peers are the oracle;
//! sharing the proxy's parser would share its mistakes. It is strict on what sluice writes
//! (CRLF only, no whitespace before a colon, one framing, no trailers) and small: heads are
//! at most `head_bytes_max`, the peers' messages are a known subset of HTTP.
const std = @import("std");
const assert = std.debug.assert;

pub const head_bytes_max = 16 * 1024;
pub const fields_max = 320;

/// Each request has an id, sent as `X-Sim-Tag: r<id>` (and in its target); the backend echoes
/// it in its response, so a response given to the wrong request is seen by the client.
pub const tag_field = "x-sim-tag";
/// The length of the body its sender meant: a body cut short or run long is then detectable.
pub const length_field = "x-sim-len";
/// The backend's body is close-delimited (sent only when the seed compresses).
pub const close_delimited_field = "x-sim-close-delimited";
/// Marks the bytes a backend sends on an idle connection, which nobody asked for.
pub const unsolicited_field = "x-sim-unsolicited";

pub const Salt = enum(u8) { request = 'q', response = 's', tunnel = 'u' };

/// Byte `offset` of the body of message `id`: a request's body, a response's, or what the
/// client sends through a tunnel (which the backend echoes). Letters, so dumps stay readable.
pub fn patternByte(salt: Salt, id: u32, offset: u64) u8 {
    var x: u64 = (@as(u64, id) << 8 | @backingInt(salt)) *% 0x9E3779B97F4A7C15 +% offset *% 0xBF58476D1CE4E5B9;
    x ^= x >> 31;
    x *%= 0x94D049BB133111EB;
    x ^= x >> 29;
    return 'a' + @as(u8, @intCast(x % 26));
}

pub fn fillPattern(out: []u8, salt: Salt, id: u32, offset: u64) void {
    for (out, 0..) |*byte, i| byte.* = patternByte(salt, id, offset + i);
}

pub fn matchesPattern(bytes: []const u8, salt: Salt, id: u32, offset: u64) bool {
    for (bytes, 0..) |byte, i| if (byte != patternByte(salt, id, offset + i)) return false;
    return true;
}

pub fn parseTag(text: []const u8) ?u32 {
    if (text.len < 2 or text[0] != 'r') return null;
    return std.fmt.parseInt(u32, text[1..], 10) catch null;
}

pub const Field = struct { name: []const u8, value: []const u8 };

/// A parsed head: slices into the parser's head buffer, valid until its next message.
pub const Head = struct {
    /// Request: method, target, version. Response: version, status, reason.
    first: [3][]const u8 = .{ "", "", "" },
    status: u16 = 0,
    fields: [fields_max]Field = undefined,
    fields_count: u32 = 0,

    pub fn get(head: *const Head, name: []const u8) ?[]const u8 {
        for (head.fields[0..head.fields_count]) |field| {
            if (std.ascii.eqlIgnoreCase(field.name, name)) return field.value;
        }
        return null;
    }

    pub fn count(head: *const Head, name: []const u8) u32 {
        var n: u32 = 0;
        for (head.fields[0..head.fields_count]) |field| n += @intFromBool(std.ascii.eqlIgnoreCase(field.name, name));
        return n;
    }

    /// Whether a comma-separated field (Connection) lists `token`.
    pub fn hasToken(head: *const Head, name: []const u8, token: []const u8) bool {
        for (head.fields[0..head.fields_count]) |field| {
            if (!std.ascii.eqlIgnoreCase(field.name, name)) continue;
            var it = std.mem.splitScalar(u8, field.value, ',');
            while (it.next()) |item| {
                if (std.ascii.eqlIgnoreCase(std.mem.trim(u8, item, " \t"), token)) return true;
            }
        }
        return false;
    }

    pub fn tag(head: *const Head) ?u32 {
        return parseTag(head.get(tag_field) orelse return null);
    }

    pub fn contentLength(head: *const Head) Error!?u64 {
        const value = head.get("content-length") orelse return null;
        if (head.count("content-length") != 1) return error.FramingRepeated;
        if (value.len == 0 or value.len > 18) return error.BadContentLength;
        for (value) |c| if (!std.ascii.isDigit(c)) return error.BadContentLength;
        return std.fmt.parseInt(u64, value, 10) catch error.BadContentLength;
    }

    /// `Transfer-Encoding: chunked` exactly (sluice writes its own framing); error otherwise.
    pub fn chunked(head: *const Head) Error!bool {
        const value = head.get("transfer-encoding") orelse return false;
        if (head.count("transfer-encoding") != 1) return error.FramingRepeated;
        if (!std.ascii.eqlIgnoreCase(value, "chunked")) return error.BadTransferEncoding;
        return true;
    }
};

pub const Framing = union(enum) {
    none,
    length: u64,
    chunked,
    /// Until the connection closes (responses only).
    close,
};

pub const Error = error{
    HeadTooLarge,
    BareLineFeed,
    BadStartLine,
    BadField,
    TooManyFields,
    FramingRepeated,
    BadContentLength,
    BadTransferEncoding,
    BothFramings,
    BadChunk,
    TrailerForwarded,
    TruncatedBody,
};

pub const Kind = enum { request, response };

/// One message at a time from a byte stream. `feed` gives one event per call; after `.head`
/// the caller sets the body framing (`expectBody`), which depends on what it knows (a HEAD
/// request, a 204).
pub const Parser = struct {
    kind: Kind,
    state: State = .head,
    buffer: [head_bytes_max]u8 = undefined,
    len: u32 = 0,
    head: Head = .{},
    /// Body data bytes seen so far (framing excluded).
    body_offset: u64 = 0,
    remaining: u64 = 0,
    chunk: ChunkState = .size,
    chunk_size_digits: u8 = 0,

    const State = enum { head, head_done, body_length, body_chunked, body_close, done };
    const ChunkState = enum { size, size_lf, data, data_cr, data_lf, trailer_start, end_lf };

    pub const Event = union(enum) {
        /// Everything given was taken; more is needed.
        more,
        head,
        body: []const u8,
        end,
    };

    pub const Step = struct { consumed: usize, event: Event };

    pub fn init(kind: Kind) Parser {
        return .{ .kind = kind };
    }

    /// Ready for the next message on the same stream.
    pub fn next(parser: *Parser) void {
        assert(parser.state == .done);
        parser.reset();
    }

    /// Forgets any message under way (field by field: the head buffer is large).
    pub fn reset(parser: *Parser) void {
        parser.state = .head;
        parser.len = 0;
        parser.head.fields_count = 0;
        parser.head.status = 0;
        parser.body_offset = 0;
        parser.remaining = 0;
        parser.chunk = .size;
        parser.chunk_size_digits = 0;
    }

    pub fn feed(parser: *Parser, input: []const u8) Error!Step {
        switch (parser.state) {
            .head => return parser.feedHead(input),
            .head_done => unreachable, // expectBody first.
            .body_length => {
                if (input.len == 0) return .{ .consumed = 0, .event = .more };
                const n: usize = @intCast(@min(input.len, parser.remaining));
                parser.remaining -= n;
                parser.body_offset += n;
                if (parser.remaining == 0) parser.state = .done;
                return .{ .consumed = n, .event = .{ .body = input[0..n] } };
            },
            .body_chunked => return parser.feedChunked(input),
            .body_close => {
                if (input.len == 0) return .{ .consumed = 0, .event = .more };
                parser.body_offset += input.len;
                return .{ .consumed = input.len, .event = .{ .body = input } };
            },
            // The message is complete: the caller takes the end and calls `next`.
            .done => return .{ .consumed = 0, .event = .end },
        }
    }

    /// An event is waiting that needs no input (the end of a message without a body).
    pub fn hasEvent(parser: *const Parser) bool {
        return parser.state == .done;
    }

    pub fn expectBody(parser: *Parser, framing: Framing) void {
        assert(parser.state == .head_done);
        parser.state = switch (framing) {
            .none => .done,
            .length => |n| blk: {
                parser.remaining = n;
                break :blk if (n == 0) .done else .body_length;
            },
            .chunked => .body_chunked,
            .close => .body_close,
        };
    }

    /// The stream ended: true when that ends a close-delimited body (the caller then takes the
    /// end and calls `next`), false when no message was under way; a cut message is an error.
    pub fn eof(parser: *Parser) Error!bool {
        return switch (parser.state) {
            .head => if (parser.len == 0) false else error.TruncatedBody,
            .body_close => {
                parser.state = .done;
                return true;
            },
            .done => true,
            else => error.TruncatedBody,
        };
    }

    pub fn isIdle(parser: *const Parser) bool {
        return parser.state == .head and parser.len == 0;
    }

    fn feedHead(parser: *Parser, input: []const u8) Error!Step {
        // Take bytes until the blank line; never past it.
        var i: usize = 0;
        while (i < input.len) : (i += 1) {
            if (parser.len == parser.buffer.len) return error.HeadTooLarge;
            parser.buffer[parser.len] = input[i];
            parser.len += 1;
            const b = parser.buffer[0..parser.len];
            if (b.len >= 4 and std.mem.eql(u8, b[b.len - 4 ..], "\r\n\r\n")) {
                try parser.parseHead();
                parser.state = .head_done;
                return .{ .consumed = i + 1, .event = .head };
            }
        }
        return .{ .consumed = input.len, .event = .more };
    }

    fn parseHead(parser: *Parser) Error!void {
        const text = parser.buffer[0 .. parser.len - 2]; // Each line keeps its CRLF.
        for (text, 0..) |c, i| {
            if (c == '\n' and (i == 0 or text[i - 1] != '\r')) return error.BareLineFeed;
            if (c == '\r' and (i + 1 == text.len or text[i + 1] != '\n')) return error.BareLineFeed;
        }
        var lines = std.mem.splitSequence(u8, text[0 .. text.len - 2], "\r\n");
        const first = lines.next() orelse return error.BadStartLine;
        var parts = std.mem.splitScalar(u8, first, ' ');
        const a = parts.next() orelse return error.BadStartLine;
        const b = parts.next() orelse return error.BadStartLine;
        const c = parts.rest();
        parser.head = .{ .first = .{ a, b, c } };
        switch (parser.kind) {
            .request => {
                if (a.len == 0 or b.len == 0 or std.mem.indexOfScalar(u8, c, ' ') != null) return error.BadStartLine;
                if (!std.mem.eql(u8, c, "HTTP/1.1") and !std.mem.eql(u8, c, "HTTP/1.0")) return error.BadStartLine;
            },
            .response => {
                if (!std.mem.eql(u8, a, "HTTP/1.1") and !std.mem.eql(u8, a, "HTTP/1.0")) return error.BadStartLine;
                if (b.len != 3) return error.BadStartLine;
                parser.head.status = std.fmt.parseInt(u16, b, 10) catch return error.BadStartLine;
                if (parser.head.status < 100 or parser.head.status > 599) return error.BadStartLine;
            },
        }
        while (lines.next()) |line| {
            const colon = std.mem.indexOfScalar(u8, line, ':') orelse return error.BadField;
            const name = line[0..colon];
            if (name.len == 0) return error.BadField;
            for (name) |ch| if (!isTokenChar(ch)) return error.BadField;
            const value = std.mem.trim(u8, line[colon + 1 ..], " \t");
            for (value) |ch| if ((ch < ' ' and ch != '\t') or ch == 0x7f) return error.BadField;
            if (parser.head.fields_count == fields_max) return error.TooManyFields;
            parser.head.fields[parser.head.fields_count] = .{ .name = name, .value = value };
            parser.head.fields_count += 1;
        }
    }

    fn feedChunked(parser: *Parser, input: []const u8) Error!Step {
        var i: usize = 0;
        while (i < input.len) {
            const c = input[i];
            switch (parser.chunk) {
                .size => {
                    if (std.fmt.charToDigit(c, 16)) |digit| {
                        if (parser.chunk_size_digits == 15) return error.BadChunk;
                        parser.remaining = parser.remaining * 16 + digit;
                        parser.chunk_size_digits += 1;
                    } else |_| {
                        if (c != '\r' or parser.chunk_size_digits == 0) return error.BadChunk;
                        parser.chunk = .size_lf;
                    }
                    i += 1;
                },
                .size_lf => {
                    if (c != '\n') return error.BadChunk;
                    i += 1;
                    parser.chunk_size_digits = 0;
                    parser.chunk = if (parser.remaining == 0) .trailer_start else .data;
                },
                .data => {
                    const n: usize = @intCast(@min(input.len - i, parser.remaining));
                    parser.remaining -= n;
                    parser.body_offset += n;
                    if (parser.remaining == 0) parser.chunk = .data_cr;
                    return .{ .consumed = i + n, .event = .{ .body = input[i..][0..n] } };
                },
                .data_cr => {
                    if (c != '\r') return error.BadChunk;
                    parser.chunk = .data_lf;
                    i += 1;
                },
                .data_lf => {
                    if (c != '\n') return error.BadChunk;
                    parser.chunk = .size;
                    i += 1;
                },
                .trailer_start => {
                    // sluice drops trailers in both directions: only the final CRLF may come.
                    if (c != '\r') return error.TrailerForwarded;
                    parser.chunk = .end_lf;
                    i += 1;
                },
                .end_lf => {
                    if (c != '\n') return error.BadChunk;
                    parser.state = .done;
                    return .{ .consumed = i + 1, .event = .more };
                },
            }
        }
        return .{ .consumed = input.len, .event = .more };
    }
};

fn isTokenChar(c: u8) bool {
    return switch (c) {
        'a'...'z', 'A'...'Z', '0'...'9' => true,
        '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~' => true,
        else => false,
    };
}

/// Writes a chunked encoding of `data` (already patterned) into `out` with chunk sizes drawn
/// from `random`; with `trailer`, a trailer field the proxy must drop. Returns bytes written.
pub fn writeChunked(out: []u8, random: std.Random, salt: Salt, id: u32, body_len: u64, trailer: bool) usize {
    var w: usize = 0;
    var offset: u64 = 0;
    while (offset < body_len) {
        const size = @min(body_len - offset, random.intRangeAtMost(u64, 1, 3000));
        w += (std.fmt.bufPrint(out[w..], "{x}\r\n", .{size}) catch unreachable).len;
        fillPattern(out[w..][0..@intCast(size)], salt, id, offset);
        w += @intCast(size);
        offset += size;
        @memcpy(out[w..][0..2], "\r\n");
        w += 2;
    }
    const last = if (trailer) "0\r\nX-Sim-Trailer: dropped\r\n\r\n" else "0\r\n\r\n";
    @memcpy(out[w..][0..last.len], last);
    return w + last.len;
}

/// The most bytes `writeChunked` writes for a body of `body_len` (chunks of at least 1 byte
/// would be more, but sizes are drawn from 1..3000: each chunk adds at most 7 bytes, and the
/// count is bounded by the body length).
pub fn chunkedBytesMax(body_len: u64) u64 {
    return body_len * 8 + 64;
}

test "peer http: a response parses whole, chunked, split at every byte" {
    var buffer: [4096]u8 = undefined;
    var prng = std.Random.DefaultPrng.init(7);
    const head = "HTTP/1.1 200 OK\r\nX-Sim-Tag: r7\r\nTransfer-Encoding: chunked\r\n\r\n";
    @memcpy(buffer[0..head.len], head);
    const len = head.len + writeChunked(buffer[head.len..], prng.random(), .response, 7, 900, false);
    for (0..len) |split| {
        var parser: Parser = .init(.response);
        var seen: u64 = 0;
        var ended = false;
        for ([_][]const u8{ buffer[0..split], buffer[split..len] }) |part| {
            var rest = part;
            while (rest.len > 0 or parser.hasEvent()) {
                const step = try parser.feed(rest);
                rest = rest[step.consumed..];
                switch (step.event) {
                    .more => {},
                    .head => {
                        try std.testing.expectEqual(@as(?u32, 7), parser.head.tag());
                        try std.testing.expect(try parser.head.chunked());
                        parser.expectBody(.chunked);
                    },
                    .body => |bytes| {
                        try std.testing.expect(matchesPattern(bytes, .response, 7, seen));
                        seen += bytes.len;
                    },
                    .end => {
                        ended = true;
                        break;
                    },
                }
            }
        }
        try std.testing.expect(ended);
        try std.testing.expectEqual(@as(u64, 900), seen);
    }
}

test "peer http: bare LF, space before colon and trailers are refused" {
    var parser: Parser = .init(.request);
    try std.testing.expectError(error.BareLineFeed, parser.feed("GET / HTTP/1.1\nHost: a\r\n\r\n"));
    parser = .init(.request);
    try std.testing.expectError(error.BadField, parser.feed("GET / HTTP/1.1\r\nHost : a\r\n\r\n"));
    parser = .init(.request);
    const step = try parser.feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    try std.testing.expectEqual(Parser.Event.head, step.event);
    parser.expectBody(.chunked);
    try std.testing.expectError(error.TrailerForwarded, parser.feed("0\r\nX: y\r\n\r\n"));
}
