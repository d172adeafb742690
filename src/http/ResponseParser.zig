//! Incremental, zero-copy, allocation-free parser of one HTTP/1.1 response head (RFC 9112).
//!
//! Same contract as `RequestParser`: `feed` takes the whole head-so-far from one buffer and
//! resumes where it stopped. The decision a reader must know: where an ambiguous response
//! could be framed two ways, we refuse it instead of choosing (RFC 9112 §6.3 lets a client
//! fall back to reading until close; a proxy that did so would desynchronise from clients
//! that did not). Every refusal means the upstream misbehaved and is answered with 502,
//! whatever the `Reject` value says for requests.

const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");
const field_values = @import("field_values.zig");
const message = @import("message.zig");
const Body = message.Body;
const Header = message.Header;
const Limits = message.Limits;
const Version = message.Version;
const Method = @import("method.zig").Method;
const Reject = @import("reject.zig").Reject;
const HeadScanner = @import("HeadScanner.zig");

const ResponseParser = @This();

/// Valid after `feed` returned `.complete`, until `reset`.
head: Head,
scanner: HeadScanner,
limits: Limits,
state: State,
/// The method of the request this response answers, fixed at the first feed.
request_method: ?Method,
/// What `feed` answers once the head is complete or refused.
result: Result,

pub const Head = struct {
    version: Version,
    status: u16,
    /// The reason phrase as received, possibly empty; carries no meaning (RFC 9112 §4).
    reason: []const u8,
    /// Slices into the caller's buffer; the array is the parser's `headers_buffer`.
    headers: []const Header,
    /// RFC 9112 §6.3 given the request method; `.content_length` is never 0.
    body: Body,
    /// False whenever the body is close-delimited.
    keep_alive: bool,
    /// A 101 response with an Upgrade field: the connection now carries another protocol.
    upgrade: bool,

    /// A Connection field is present.
    has_connection: bool,

    /// Whether any Connection field lists `token`, ignoring case and OWS.
    pub fn connectionHasToken(head: *const Head, token: []const u8) bool {
        if (!head.has_connection) return false;
        return field_values.connectionHasToken(head.headers, token);
    }

    /// Whether a Connection field may name a field to drop: it lists a token other than
    /// `keep-alive` and `upgrade` (which name fields that are hop-by-hop anyway). False for
    /// the usual `Connection: keep-alive`, so the fields need not be checked one by one.
    pub fn connectionNamesFields(head: *const Head) bool {
        if (!head.has_connection) return false;
        return field_values.connectionListsOtherThan(head.headers, &.{ "keep-alive", "upgrade" });
    }

    /// The value of the first field called `name` (case-insensitive).
    pub fn get(head: *const Head, name: []const u8) ?[]const u8 {
        return field_values.get(head.headers, name);
    }
};

pub const Result = union(enum) {
    incomplete,
    /// Length of the head: status line, fields and the final CRLF.
    complete: u32,
    invalid: Reject,
};

const State = enum { status_line, fields, done };

const head_empty: Head = .{
    .version = .http11,
    .status = 0,
    .reason = "",
    .headers = &.{},
    .body = .none,
    .keep_alive = false,
    .upgrade = false,
    .has_connection = false,
};

/// `headers_buffer` must hold `limits.headers_count_max` fields; it is the only memory used.
/// `limits.target_bytes_max` is not used for responses.
pub fn init(headers_buffer: []Header, limits: Limits) ResponseParser {
    limits.assertValid();
    assert(headers_buffer.len >= limits.headers_count_max);
    return .{
        .head = head_empty,
        .scanner = .init(headers_buffer, limits.headers_count_max, .response),
        .limits = limits,
        .state = .status_line,
        .request_method = null,
        .result = .incomplete,
    };
}

/// Ready for the next response (after a 1xx, or the next request's), in a new buffer slice.
pub fn reset(p: *ResponseParser) void {
    p.* = init(p.scanner.headers_buffer, p.limits);
}

/// The room for a head that did not come as HTTP/1.1 text (an HTTP/2 backend's HEADERS, whose
/// codec checked its fields): `headers_count_max` fields, for `setHead`.
pub fn headersBuffer(p: *const ResponseParser) []Header {
    return p.scanner.headers_buffer[0..p.limits.headers_count_max];
}

/// Such a head, complete: read as `feed`'s would be until `reset`. Its fields lie in
/// `headersBuffer()`; their bytes are the caller's, and outlive the head's use.
pub fn setHead(p: *ResponseParser, head: Head) void {
    assert(p.state == .status_line); // Nothing fed since the last reset.
    assert(head.status >= 100 and head.status <= 599);
    assert(head.headers.len <= p.limits.headers_count_max);
    assert(head.body != .content_length or head.body.content_length > 0);
    p.head = head;
    p.state = .done;
    p.result = .{ .complete = 0 };
}

/// `bytes` is the whole head-so-far, always starting at the same address; `request_method`
/// is the method of the request being answered and the same on every call.
pub fn feed(p: *ResponseParser, bytes: []const u8, request_method: Method) Result {
    if (p.request_method) |method| assert(method == request_method);
    p.request_method = request_method;
    if (p.state == .done) return p.result;
    p.scanner.begin(bytes);
    // The status line has no bound of its own: the reason phrase only counts toward the head.
    const end_max: u64 = p.limits.header_bytes_max;
    while (true) {
        switch (p.scanner.nextLine(bytes, end_max)) {
            .incomplete => return .incomplete,
            .too_long => return p.finish(.{ .invalid = .head_too_large }),
            .invalid => |reject| return p.finish(.{ .invalid = reject }),
            .line => |line| {
                if (p.state == .status_line) {
                    if (p.statusLine(line)) |reject| return p.finish(.{ .invalid = reject });
                } else if (line.len == 0) {
                    const result = p.complete(request_method);
                    if (result == .complete) assert(result.complete <= bytes.len);
                    return p.finish(result);
                } else if (p.scanner.fieldLine(line, p.head.version)) |reject| {
                    return p.finish(.{ .invalid = reject });
                }
            },
        }
    }
}

fn finish(p: *ResponseParser, result: Result) Result {
    assert(p.state != .done);
    assert(result != .incomplete);
    p.state = .done;
    p.result = result;
    return result;
}

/// RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ]. The second
/// SP is also accepted missing when the reason is ("HTTP/1.1 200"), as clients commonly do;
/// it cannot change framing. No empty lines are skipped before a status line.
fn statusLine(p: *ResponseParser, line: []const u8) ?Reject {
    assert(p.state == .status_line);
    if (std.mem.findScalar(u8, line, '\r') != null) return .bare_cr;
    if (line.len < "HTTP/1.1 200".len) return .status_line_invalid;
    const version: Version = if (std.mem.eql(u8, line[0..8], "HTTP/1.1"))
        .http11
    else if (std.mem.eql(u8, line[0..8], "HTTP/1.0"))
        .http10
    else
        return .status_line_invalid;
    if (line[8] != ' ') return .status_line_invalid;
    var status: u16 = 0;
    for (line[9..12]) |c| {
        if (!chars.isDigit(c)) return .status_line_invalid;
        status = status * 10 + (c - '0');
    }
    // RFC 9110 §15: status codes are 100 to 599.
    if (status < 100 or status > 599) return .status_code_invalid;
    var reason: []const u8 = "";
    if (line.len > 12) {
        if (line[12] != ' ') return .status_line_invalid;
        reason = line[13..];
        // reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ), the field-value bytes.
        for (reason) |c| {
            if (!chars.isFieldValueByte(c)) return .status_line_invalid;
        }
    }
    p.head.version = version;
    p.head.status = status;
    p.head.reason = reason;
    p.state = .fields;
    return null;
}

/// The empty line ended the head: settle framing (RFC 9112 §6.3) and persistence.
fn complete(p: *ResponseParser, request_method: Method) Result {
    assert(p.state == .fields);
    const s = &p.scanner;
    const status = p.head.status;
    assert(status >= 100 and status <= 599);
    assert(!(s.transfer_encoding_chunked and s.content_length != null));

    p.head.headers = s.headers();
    // Item 1: no content whatever the fields say. Item 2: a 2xx to CONNECT starts a tunnel.
    // Items 4 and 5 (bad or conflicting framing) were refused at the field lines.
    const no_content = request_method == .head or status < 200 or status == 204 or
        status == 304;
    const tunnel = request_method == .connect and status >= 200 and status < 300;
    p.head.body = if (no_content or tunnel)
        .none
    else if (s.transfer_encoding_chunked)
        .chunked
    else if (s.content_length) |length|
        (if (length == 0) .none else .{ .content_length = length })
    else
        .close_delimited;
    p.head.has_connection = s.connection_present;
    const close = p.head.connectionHasToken("close");
    p.head.keep_alive = p.head.body != .close_delimited and switch (p.head.version) {
        .http11 => !close,
        .http10 => !close and p.head.connectionHasToken("keep-alive"),
    };
    p.head.upgrade = status == 101 and s.upgrade_present;
    return .{ .complete = s.line_start };
}

// ----------------------------------------------------------------------------------------
// Tests.

const testing = std.testing;

const limits_test: Limits = .{
    .header_bytes_max = 8192,
    .headers_count_max = 16,
    .target_bytes_max = 2048,
};

fn parseOnce(input: []const u8, method: Method, limits: Limits) struct { Result, Head } {
    var headers_buffer: [64]Header = undefined;
    assert(limits.headers_count_max <= headers_buffer.len);
    var p = init(&headers_buffer, limits);
    const result = p.feed(input, method);
    return .{ result, p.head };
}

pub const Valid = struct {
    input: []const u8,
    method: Method = .get,
    status: u16 = 200,
    body: Body,
    keep_alive: bool = true,
    upgrade: bool = false,
};

pub const valid_cases = [_]Valid{
    .{ .input = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", .body = .{ .content_length = 2 } },
    .{ .input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .body = .chunked },
    .{ .input = "HTTP/1.1 200 OK\r\n\r\nuntil close", .body = .close_delimited, .keep_alive = false },
    .{ .input = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", .body = .none },
    .{ .input = "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", .body = .{ .content_length = 1 } },
    .{ .input = "HTTP/1.1 200 \r\nContent-Length: 1\r\n\r\nx", .body = .{ .content_length = 1 } },
    .{ .input = "HTTP/1.1 204 No Content\r\n\r\n", .status = 204, .body = .none },
    .{ .input = "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", .status = 304, .body = .none },
    .{ .input = "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", .method = .head, .body = .none },
    .{ .input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", .method = .head, .body = .none },
    .{ .input = "HTTP/1.1 100 Continue\r\n\r\n", .status = 100, .body = .none },
    .{ .input = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", .status = 101, .body = .none, .upgrade = true },
    .{ .input = "HTTP/1.1 200 Connection established\r\n\r\n", .method = .connect, .body = .none },
    .{ .input = "HTTP/1.1 407 Auth\r\nContent-Length: 3\r\n\r\nno!", .method = .connect, .status = 407, .body = .{ .content_length = 3 } },
    .{ .input = "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", .body = .{ .content_length = 1 }, .keep_alive = false },
    .{ .input = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", .body = .{ .content_length = 1 } },
    .{ .input = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", .body = .{ .content_length = 1 }, .keep_alive = false },
    .{ .input = "HTTP/1.1 599 Whatever \xff\t\r\nContent-Length: 1\r\n\r\nx", .status = 599, .body = .{ .content_length = 1 } },
};

test "response parser: valid heads are framed per RFC 9112 §6.3" {
    for (valid_cases) |case| {
        const result, const head = parseOnce(case.input, case.method, limits_test);
        const head_end = std.mem.find(u8, case.input, "\r\n\r\n").? + 4;
        testing.expectEqual(Result{ .complete = @intCast(head_end) }, result) catch |err| {
            std.debug.print("input: {f}\n", .{std.ascii.hexEscape(case.input, .lower)});
            return err;
        };
        try testing.expectEqual(case.status, head.status);
        try testing.expectEqual(case.body, head.body);
        try testing.expectEqual(case.keep_alive, head.keep_alive);
        try testing.expectEqual(case.upgrade, head.upgrade);
    }
}

test "response parser: reason, version and fields are exposed" {
    const input = "HTTP/1.0 404 Not  Found\r\nServer: x\r\n\r\n";
    const result, const head = parseOnce(input, .get, limits_test);
    try testing.expectEqual(Result{ .complete = input.len }, result);
    try testing.expectEqualStrings("Not  Found", head.reason);
    try testing.expectEqual(Version.http10, head.version);
    try testing.expectEqualStrings("x", head.get("server").?);
    try testing.expect(!head.connectionHasToken("close"));
}

pub const Malformed = struct { []const u8, Reject };

/// Refused response heads with the reason; shared with the fuzz program as seeds.
pub const malformed_cases = [_]Malformed{
    .{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", .content_length_with_transfer_encoding },
    .{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", .content_length_repeated },
    .{ "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", .content_length_invalid },
    .{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .transfer_encoding_unsupported },
    .{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .transfer_encoding_invalid },
    .{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", .transfer_encoding_repeated },
    .{ "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", .transfer_encoding_http10 },
    .{ "HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", .bare_lf },
    .{ "HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\n", .bare_lf },
    .{ "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", .bare_cr },
    .{ "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", .obs_fold },
    .{ "HTTP/1.1 200 OK\r\nX : a\r\n\r\n", .space_before_colon },
    .{ "HTTP/1.1 200 OK\r\nX: a\x00\r\n\r\n", .bad_field_value },
    .{ "HTTP/1.1 200 OK\r\n@: a\r\n\r\n", .bad_field_name },
    .{ "HTTP/1.2 200 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/2 200 OK\r\n\r\n", .status_line_invalid },
    .{ "http/1.1 200 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1  200 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1 20 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1 2000 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1 200OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1 +20 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1 200 O\x00K\r\n\r\n", .status_line_invalid },
    .{ "\r\nHTTP/1.1 200 OK\r\n\r\n", .status_line_invalid },
    .{ "HTTP/1.1 099 Low\r\n\r\n", .status_code_invalid },
    .{ "HTTP/1.1 600 High\r\n\r\n", .status_code_invalid },
};

test "response parser: malformed heads are refused, and every refusal is a 502" {
    for (malformed_cases) |case| {
        const result, _ = parseOnce(case[0], .get, limits_test);
        testing.expectEqual(Result{ .invalid = case[1] }, result) catch |err| {
            std.debug.print("input: {f}\n", .{std.ascii.hexEscape(case[0], .lower)});
            return err;
        };
    }
    try testing.expectEqual(@as(u16, 502), Reject.status_line_invalid.status());
}

test "response parser: splitting the input at every index gives the same result" {
    var headers_one: [16]Header = undefined;
    var headers_split: [16]Header = undefined;
    for (0..valid_cases.len + malformed_cases.len) |n| {
        const input, const method = if (n < valid_cases.len)
            .{ valid_cases[n].input, valid_cases[n].method }
        else
            .{ malformed_cases[n - valid_cases.len][0], Method.get };
        var one = init(&headers_one, limits_test);
        const expected = one.feed(input, method);
        for (0..input.len + 1) |cut| {
            var split = init(&headers_split, limits_test);
            var result = split.feed(input[0..cut], method);
            if (result == .incomplete) result = split.feed(input, method);
            try testing.expectEqual(expected, result);
            if (expected == .complete) {
                try testing.expectEqual(one.head.body, split.head.body);
                try testing.expectEqualStrings(one.head.reason, split.head.reason);
            }
        }
        var bytewise = init(&headers_split, limits_test);
        var result: Result = .incomplete;
        for (0..input.len + 1) |end| {
            result = bytewise.feed(input[0..end], method);
            if (result != .incomplete) break;
        }
        try testing.expectEqual(expected, result);
    }
}

test "response parser: limits on fields and head size are 431-class refusals" {
    const limits: Limits = .{
        .header_bytes_max = 64,
        .headers_count_max = 2,
        .target_bytes_max = 8,
    };
    const many = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    const refused_many = parseOnce(many, .get, limits)[0];
    try testing.expectEqual(Result{ .invalid = .too_many_fields }, refused_many);
    // 17 + 55 + 2 = 74 bytes, over the 64 allowed.
    const large = "HTTP/1.1 200 OK\r\n" ++
        "A: 01234567890123456789012345678901234567890123456789\r\n\r\n";
    const refused_large = parseOnce(large, .get, limits)[0];
    try testing.expectEqual(Result{ .invalid = .head_too_large }, refused_large);
    try testing.expectEqual(
        Result{ .invalid = .head_too_large },
        parseOnce(large[0..64], .get, limits)[0],
    );
}

test "response parser: the parser size is pinned" {
    if (@sizeOf(usize) != 8) return error.SkipZigTest;
    try testing.expectEqual(@as(usize, 56), @sizeOf(Head));
    try testing.expectEqual(@as(usize, 160), @sizeOf(ResponseParser)); // `connection_present`.

}
