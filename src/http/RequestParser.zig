//! Incremental, zero-copy, allocation-free parser of one HTTP/1.1 request head (RFC 9112).
//!
//! The caller owns one buffer per connection, appends what it reads and calls `feed` again
//! with the whole head-so-far; the parser resumes at the first unfinished line, so the total
//! work is O(head length) however the bytes arrive. On `.complete` the parsed `head` holds
//! slices into that buffer. The parser is strict wherever a lenient reading could frame the
//! message differently from the upstream (RFC 9112 §11.2, request smuggling): it refuses
//! instead of repairing, and every refusal is a `Reject` with the status to answer.

const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");
const field_values = @import("field_values.zig");
const message = @import("message.zig");
const Body = message.Body;
const Header = message.Header;
const Limits = message.Limits;
const TargetForm = message.TargetForm;
const Version = message.Version;
const Method = @import("method.zig").Method;
const Reject = @import("reject.zig").Reject;
const HeadScanner = @import("HeadScanner.zig");

const RequestParser = @This();

/// Valid after `feed` returned `.complete`, until `reset`.
head: Head,
scanner: HeadScanner,
limits: Limits,
state: State,
/// Empty lines skipped before the request line.
empty_lines_count: u8,
/// What `feed` answers once the head is complete or refused.
result: Result,

/// Longer than any registered method ("UPDATEREDIRECTREF" has 17 bytes).
pub const method_bytes_max = 32;
/// RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
pub const empty_lines_max = 4;

pub const Head = struct {
    method: Method,
    /// The method as received; the only name of a `.other` method.
    method_text: []const u8,
    target: []const u8,
    target_form: TargetForm,
    version: Version,
    /// Slices into the caller's buffer; the array is the parser's `headers_buffer`.
    headers: []const Header,
    /// The Host field value; null only in an HTTP/1.0 request without one. For an
    /// absolute-form target the target's authority names the origin instead (RFC 9112 §3.2.2).
    host: ?[]const u8,
    /// `.none`, `.content_length` (never 0) or `.chunked`.
    body: Body,
    /// HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "Connection: keep-alive".
    keep_alive: bool,
    /// "Expect: 100-continue" (any case) on HTTP/1.1. Any other expectation is treated as
    /// none rather than answered with 417, and RFC 9110 §10.1.1 says to ignore it on 1.0.
    expect_continue: bool,
    /// The Connection field lists "upgrade" and an Upgrade field is present.
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
    /// Length of the head: skipped empty lines, request line, fields and the final CRLF.
    complete: u32,
    invalid: Reject,
};

const State = enum { request_line, fields, done };

const head_empty: Head = .{
    .method = .other,
    .method_text = "",
    .target = "",
    .target_form = .origin,
    .version = .http11,
    .headers = &.{},
    .host = null,
    .body = .none,
    .keep_alive = false,
    .expect_continue = false,
    .upgrade = false,
    .has_connection = false,
};

/// `headers_buffer` must hold `limits.headers_count_max` fields; it is the only memory used.
pub fn init(headers_buffer: []Header, limits: Limits) RequestParser {
    limits.assertValid();
    assert(headers_buffer.len >= limits.headers_count_max);
    return .{
        .head = head_empty,
        .scanner = .init(headers_buffer, limits.headers_count_max, .request),
        .limits = limits,
        .state = .request_line,
        .empty_lines_count = 0,
        .result = .incomplete,
    };
}

/// Ready for the next request on the same connection, whose head starts a new buffer slice.
pub fn reset(p: *RequestParser) void {
    p.* = init(p.scanner.headers_buffer, p.limits);
}

/// `bytes` is the whole head-so-far, always starting at the same address. Bytes after the
/// head (a body, a pipelined request) are never read.
pub fn feed(p: *RequestParser, bytes: []const u8) Result {
    if (p.state == .done) return p.result;
    p.scanner.begin(bytes);
    while (true) {
        const limit = p.lineLimit();
        switch (p.scanner.nextLine(bytes, limit.end_max)) {
            .incomplete => return .incomplete,
            .too_long => return p.finish(.{ .invalid = limit.reject }),
            .invalid => |reject| return p.finish(.{ .invalid = reject }),
            .line => |line| {
                if (p.state == .request_line) {
                    if (p.requestLine(line)) |reject| return p.finish(.{ .invalid = reject });
                } else if (line.len == 0) {
                    const result = p.complete();
                    if (result == .complete) assert(result.complete <= bytes.len);
                    return p.finish(result);
                } else if (p.scanner.fieldLine(line, p.head.version)) |reject| {
                    return p.finish(.{ .invalid = reject });
                }
            },
        }
    }
}

fn finish(p: *RequestParser, result: Result) Result {
    assert(p.state != .done);
    assert(result != .incomplete);
    p.state = .done;
    p.result = result;
    return result;
}

const LineLimit = struct { end_max: u64, reject: Reject };

/// Where the LF of the current line must lie below, and what to answer if it cannot.
/// The head as a whole must fit in `header_bytes_max` (431); the request line must also fit
/// in the longest method, target and version allowed (414), whichever bound comes first.
fn lineLimit(p: *const RequestParser) LineLimit {
    const head: LineLimit = .{ .end_max = p.limits.header_bytes_max, .reject = .head_too_large };
    if (p.state != .request_line) return head;
    const request_line_bytes_max: u64 = method_bytes_max + " ".len +
        @as(u64, p.limits.target_bytes_max) + " ".len + "HTTP/1.1".len + "\r".len;
    const end_max = @as(u64, p.scanner.line_start) + request_line_bytes_max + 1;
    if (end_max < head.end_max) return .{ .end_max = end_max, .reject = .target_too_long };
    return head;
}

/// RFC 9112 §3: request-line = method SP request-target SP HTTP-version, with exactly one SP
/// each (the lenient "any whitespace" split of §3 is not applied: a proxy must not guess).
fn requestLine(p: *RequestParser, line: []const u8) ?Reject {
    assert(p.state == .request_line);
    if (line.len == 0) {
        if (p.empty_lines_count == empty_lines_max) return .too_many_empty_lines;
        p.empty_lines_count += 1;
        return null;
    }
    if (std.mem.findScalar(u8, line, '\r') != null) return .bare_cr;

    var method_end: usize = 0;
    while (method_end < line.len and chars.isTchar(line[method_end])) method_end += 1;
    if (method_end == 0) return if (chars.isWhitespace(line[0])) .bad_request_line else .bad_method;
    if (method_end == line.len) return .bad_request_line;
    if (line[method_end] != ' ') return .bad_method;
    if (method_end > method_bytes_max) return .method_too_long;

    const target_start = method_end + 1;
    const target_end = target_start +
        (chars.findNonTargetByte(line[target_start..]) orelse return .bad_request_line);
    if (line[target_end] != ' ') return .bad_target;
    if (target_end == target_start) return .bad_request_line;
    const target = line[target_start..target_end];
    if (target.len > p.limits.target_bytes_max) return .target_too_long;

    const version = switch (parseVersion(line[target_end + 1 ..])) {
        .version => |v| v,
        .reject => |reject| return reject,
    };
    const method = Method.parse(line[0..method_end]);
    const target_form = targetForm(method, target) orelse return .bad_target;

    p.head.method = method;
    p.head.method_text = line[0..method_end];
    p.head.target = target;
    p.head.target_form = target_form;
    p.head.version = version;
    p.state = .fields;
    return null;
}

const VersionOrReject = union(enum) { version: Version, reject: Reject };

/// RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive. Well-formed
/// versions other than 1.0 and 1.1 are answered 505, including 1.2 which RFC 9110 §6.2
/// would let us treat as 1.1: we forward heads as received, so we only pass what we parse.
fn parseVersion(text: []const u8) VersionOrReject {
    if (std.mem.eql(u8, text, "HTTP/1.1")) return .{ .version = .http11 };
    if (std.mem.eql(u8, text, "HTTP/1.0")) return .{ .version = .http10 };
    if (text.len == 8 and std.mem.startsWith(u8, text, "HTTP/") and chars.isDigit(text[5]) and
        text[6] == '.' and chars.isDigit(text[7]))
    {
        return .{ .reject = .version_not_supported };
    }
    // "GET / HTTP/1.1 " or a fourth part: the line, not the version, is malformed.
    if (std.mem.findScalar(u8, text, ' ') != null) return .{ .reject = .bad_request_line };
    return .{ .reject = .bad_version };
}

/// RFC 9112 §3.2: which target form this is, or null when the form is malformed or not
/// allowed with this method.
fn targetForm(method: Method, target: []const u8) ?TargetForm {
    assert(target.len > 0);
    if (method == .connect) {
        // RFC 9112 §3.2.3: CONNECT takes authority-form (host:port) and nothing else.
        if (!field_values.authorityIsValid(target, .required)) return null;
        return .authority;
    }
    if (target[0] == '/') return .origin;
    if (std.mem.eql(u8, target, "*")) {
        // RFC 9112 §3.2.4: asterisk-form is only used with OPTIONS.
        return if (method == .options) .asterisk else null;
    }
    const authority_start = schemeLength(target) orelse return null;
    // RFC 9110 §4.2.1: an http(s) URI with an empty host is invalid; RFC 9110 §4.2.4:
    // userinfo ("user@host") is refused, which the host grammar does by excluding '@'.
    const rest = target[authority_start..];
    const authority_end = std.mem.findAny(u8, rest, "/?") orelse rest.len;
    if (!field_values.authorityIsValid(rest[0..authority_end], .optional)) return null;
    return .absolute;
}

/// The length of a case-insensitive "http://" or "https://" prefix.
fn schemeLength(target: []const u8) ?usize {
    if (target.len >= 7 and chars.eqlIgnoreCase(target[0..7], "http://")) return 7;
    if (target.len >= 8 and chars.eqlIgnoreCase(target[0..8], "https://")) return 8;
    return null;
}

/// The empty line ended the head: settle Host, framing and connection handling.
fn complete(p: *RequestParser) Result {
    assert(p.state == .fields);
    const s = &p.scanner;
    const version = p.head.version;
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400.
    if (version == .http11 and s.host == null) return .{ .invalid = .missing_host };
    assert(!(s.transfer_encoding_chunked and s.content_length != null));

    p.head.headers = s.headers();
    p.head.host = s.host;
    // RFC 9112 §6.3 items 4 to 7 (item 3, both fields present, was refused already).
    p.head.body = if (s.transfer_encoding_chunked)
        .chunked
    else if (s.content_length) |length|
        (if (length == 0) .none else .{ .content_length = length })
    else
        .none;
    // RFC 9112 §9.3: persistence.
    p.head.has_connection = s.connection_present;
    const close = p.head.connectionHasToken("close");
    p.head.keep_alive = switch (version) {
        .http11 => !close,
        .http10 => !close and p.head.connectionHasToken("keep-alive"),
    };
    p.head.expect_continue = s.expect_continue and version == .http11;
    p.head.upgrade = s.upgrade_present and p.head.connectionHasToken("upgrade");
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

fn parseOnce(input: []const u8, limits: Limits) struct { Result, Head } {
    var headers_buffer: [64]Header = undefined;
    assert(limits.headers_count_max <= headers_buffer.len);
    var p = init(&headers_buffer, limits);
    const result = p.feed(input);
    return .{ result, p.head };
}

pub const Valid = struct {
    input: []const u8,
    method: Method = .get,
    target: []const u8 = "/",
    version: Version = .http11,
    body: Body = .none,
    keep_alive: bool = true,
    headers_count: usize = 1,
};

pub const valid_cases = [_]Valid{
    .{ .input = "GET / HTTP/1.1\r\nHost: a\r\n\r\n" },
    .{ .input = "GET /x?y=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n", .target = "/x?y=1", .headers_count = 2 },
    .{ .input = "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" },
    .{ .input = "\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" },
    .{ .input = "POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", .method = .post, .target = "/f", .body = .{ .content_length = 5 }, .headers_count = 2 },
    .{ .input = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", .method = .post, .headers_count = 2 },
    .{ .input = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .method = .post, .body = .chunked, .headers_count = 2 },
    .{ .input = "POST / HTTP/1.1\r\nHost: a\r\ntransfer-encoding:  CHUNKED  \r\n\r\n", .method = .post, .body = .chunked, .headers_count = 2 },
    .{ .input = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tchunked \t\r\n\r\n", .method = .post, .body = .chunked, .headers_count = 2 },
    .{ .input = "GET / HTTP/1.0\r\n\r\n", .version = .http10, .keep_alive = false, .headers_count = 0 },
    .{ .input = "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", .version = .http10, .headers_count = 1 },
    .{ .input = "GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, close\r\n\r\n", .keep_alive = false, .headers_count = 2 },
    .{ .input = "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", .method = .options, .target = "*" },
    .{ .input = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", .method = .connect, .target = "example.com:443" },
    .{ .input = "GET HTTP://Example.com/p HTTP/1.1\r\nHost: example.com\r\n\r\n", .target = "HTTP://Example.com/p" },
    .{ .input = "GET https://[::1]:8443?q HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n", .target = "https://[::1]:8443?q" },
    .{ .input = "PROPFIND /d HTTP/1.1\r\nHost: a\r\n\r\n", .method = .other, .target = "/d" },
    .{ .input = "GET / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Obs: caf\xc3\xa9\r\n\r\n", .headers_count = 3 },
    .{ .input = "GET / HTTP/1.1\r\nHost:a\r\nX:\t \tv\t \r\n\r\n", .headers_count = 2 },
    .{ .input = "DELETE /%41 HTTP/1.1\r\nHost: a\r\n\r\n", .method = .delete, .target = "/%41" },
    .{ .input = "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 007\r\n\r\n", .body = .{ .content_length = 7 }, .headers_count = 2 },
};

test "request parser: valid heads parse to the expected head" {
    for (valid_cases) |case| {
        const result, const head = parseOnce(case.input, limits_test);
        var start: usize = 0;
        while (std.mem.startsWith(u8, case.input[start..], "\r\n")) start += 2;
        const head_end = std.mem.findPos(u8, case.input, start, "\r\n\r\n").? + 4;
        testing.expectEqual(Result{ .complete = @intCast(head_end) }, result) catch |err| {
            std.debug.print("input: {f}\n", .{std.ascii.hexEscape(case.input, .lower)});
            return err;
        };
        try testing.expectEqual(case.method, head.method);
        try testing.expectEqualStrings(case.target, head.target);
        try testing.expectEqual(case.version, head.version);
        try testing.expectEqual(case.body, head.body);
        try testing.expectEqual(case.keep_alive, head.keep_alive);
        try testing.expectEqual(case.headers_count, head.headers.len);
    }
}

test "request parser: fields, Host, Expect and Upgrade are exposed" {
    const input = "GET /chat HTTP/1.1\r\nHost:  a.example \r\n" ++
        "Connection: keep-alive, Upgrade\r\n" ++
        "Upgrade: websocket\r\nExpect: 100-Continue\r\nX-Dup: 1\r\nx-dup: 2\r\n\r\n";
    const result, const head = parseOnce(input, limits_test);
    try testing.expectEqual(Result{ .complete = input.len }, result);
    try testing.expectEqualStrings("a.example", head.host.?);
    try testing.expectEqualStrings("GET", head.method_text);
    try testing.expect(head.upgrade and head.expect_continue and head.keep_alive);
    try testing.expectEqualStrings("1", head.get("X-DUP").?);
    try testing.expect(head.connectionHasToken("KEEP-ALIVE"));
    try testing.expect(!head.connectionHasToken("close"));
    try testing.expectEqual(TargetForm.origin, head.target_form);

    // Upgrade without the Connection token, and an unknown expectation, are both "no".
    const plain = "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nExpect: tea\r\n\r\n";
    _, const head_plain = parseOnce(plain, limits_test);
    try testing.expect(!head_plain.upgrade and !head_plain.expect_continue);
    // RFC 9110 §10.1.1: a 100-continue expectation on HTTP/1.0 is ignored.
    const old = "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n";
    _, const head_old = parseOnce(old, limits_test);
    try testing.expect(!head_old.expect_continue);
}

pub const Malformed = struct { []const u8, Reject };

/// Refused heads with the reason; shared with the fuzz program as seeds.
pub const malformed_cases = [_]Malformed{
    // Request line.
    .{ "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .bad_request_line },
    .{ "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", .bad_request_line },
    .{ "GET /  HTTP/1.1\r\nHost: a\r\n\r\n", .bad_request_line },
    .{ " GET / HTTP/1.1\r\nHost: a\r\n\r\n", .bad_request_line },
    .{ "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", .bad_method },
    .{ "GET /\r\nHost: a\r\n\r\n", .bad_request_line },
    .{ "GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", .bad_request_line },
    .{ "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", .bad_method },
    .{ "GET / http/1.1\r\nHost: a\r\n\r\n", .bad_version },
    .{ "GET / HTTP/1.10\r\nHost: a\r\n\r\n", .bad_version },
    .{ "GET / HTTP/11\r\nHost: a\r\n\r\n", .bad_version },
    .{ "GET / HTTP/2.0\r\nHost: a\r\n\r\n", .version_not_supported },
    .{ "GET / HTTP/1.2\r\nHost: a\r\n\r\n", .version_not_supported },
    .{ "GET / HTTP/0.9\r\nHost: a\r\n\r\n", .version_not_supported },
    .{ "GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET * HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET example.com:80 HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "CONNECT example.com HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET http:///p HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", .bad_target },
    .{ "\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", .too_many_empty_lines },
    // Line endings.
    .{ "GET / HTTP/1.1\nHost: a\r\n\r\n", .bare_lf },
    .{ "GET / HTTP/1.1\r\nHost: a\n\r\n", .bare_lf },
    .{ "GET / HTTP/1.1\r\nHost: a\r\n\n", .bare_lf },
    .{ "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", .bare_lf },
    .{ "GET / HTTP/1.1\r\r\nHost: a\r\n\r\n", .bare_cr },
    .{ "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", .bare_cr },
    .{ "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", .bare_cr },
    // Field lines.
    .{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", .obs_fold },
    .{ "GET / HTTP/1.1\r\n Host: a\r\n\r\n", .obs_fold },
    .{ "GET / HTTP/1.1\r\nHost : a\r\n\r\n", .space_before_colon },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\t: chunked\r\n\r\n", .space_before_colon },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nX Y: b\r\n\r\n", .bad_field_name },
    .{ "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", .bad_field_name },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", .bad_field_name },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", .bad_field_value },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n", .bad_field_value },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \x0bchunked\r\n\r\n", .bad_field_value },
    // Host.
    .{ "GET / HTTP/1.1\r\n\r\n", .missing_host },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", .duplicate_host },
    .{ "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", .duplicate_host },
    .{ "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", .bad_host },
    .{ "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", .bad_host },
    .{ "GET / HTTP/1.1\r\nHost:\r\n\r\n", .bad_host },
    .{ "GET / HTTP/1.1\r\nHost: a:99999\r\n\r\n", .bad_host },
    .{ "GET / HTTP/1.0\r\nHost: a@b\r\n\r\n", .bad_host },
    // Framing.
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", .content_length_with_transfer_encoding },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", .content_length_with_transfer_encoding },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", .content_length_repeated },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n", .content_length_repeated },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 5\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\t0\r\n\r\n", .content_length_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chun\tked\r\n\r\n", .transfer_encoding_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .transfer_encoding_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n", .transfer_encoding_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;x=1\r\n\r\n", .transfer_encoding_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n", .transfer_encoding_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,chunked\r\n\r\n", .transfer_encoding_invalid },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", .transfer_encoding_unsupported },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .transfer_encoding_unsupported },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", .transfer_encoding_unsupported },
    .{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", .transfer_encoding_repeated },
    .{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .transfer_encoding_http10 },
    .{ "POST / HTTP/1.0\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", .transfer_encoding_http10 },
};

test "request parser: malformed and smuggling heads are refused with the right reason" {
    for (malformed_cases) |case| {
        const result, _ = parseOnce(case[0], limits_test);
        testing.expectEqual(Result{ .invalid = case[1] }, result) catch |err| {
            std.debug.print("input: {f}\n", .{std.ascii.hexEscape(case[0], .lower)});
            return err;
        };
    }
}

test "request parser: reject statuses of typical refusals" {
    const cases = [_]struct { []const u8, u16 }{
        .{ "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505 },
        .{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501 },
        .{ "GET / HTTP/1.1\r\n\r\n", 400 },
        .{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", 400 },
    };
    for (cases) |case| {
        const result, _ = parseOnce(case[0], limits_test);
        try testing.expectEqual(case[1], result.invalid.status());
    }
}

/// Feeds `input` as the prefixes ending at `cuts` and then whole, as a connection would.
fn feedInPieces(p: *RequestParser, input: []const u8, cuts: []const usize) Result {
    for (cuts) |cut| {
        const result = p.feed(input[0..cut]);
        if (result != .incomplete) return result;
    }
    return p.feed(input);
}

fn expectSameHead(expected: *const Head, actual: *const Head) !void {
    try testing.expectEqual(expected.method, actual.method);
    try testing.expectEqualStrings(expected.target, actual.target);
    try testing.expectEqual(expected.body, actual.body);
    try testing.expectEqual(expected.keep_alive, actual.keep_alive);
    try testing.expectEqual(expected.headers.len, actual.headers.len);
    for (expected.headers, actual.headers) |e, a| {
        try testing.expectEqualStrings(e.name, a.name);
        try testing.expectEqualStrings(e.value, a.value);
    }
}

test "request parser: splitting the input at every index gives the same result" {
    var headers_one: [16]Header = undefined;
    var headers_split: [16]Header = undefined;
    const inputs = valid_cases.len + malformed_cases.len;
    for (0..inputs) |n| {
        const input = if (n < valid_cases.len)
            valid_cases[n].input
        else
            malformed_cases[n - valid_cases.len][0];
        var one = init(&headers_one, limits_test);
        const expected = one.feed(input);
        for (0..input.len + 1) |cut| {
            var split = init(&headers_split, limits_test);
            try testing.expectEqual(expected, feedInPieces(&split, input, &.{cut}));
            if (expected == .complete) try expectSameHead(&one.head, &split.head);
        }
        var bytewise = init(&headers_split, limits_test);
        var cuts: [256]usize = undefined;
        assert(input.len <= cuts.len);
        for (cuts[0..input.len], 0..) |*cut, i| cut.* = i;
        try testing.expectEqual(expected, feedInPieces(&bytewise, input, cuts[0..input.len]));
        if (expected == .complete) try expectSameHead(&one.head, &bytewise.head);
    }
}

test "request parser: an unfinished head is incomplete and later bytes are not read" {
    const input = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGARBAGE\x00\n\r";
    var headers_buffer: [limits_test.headers_count_max]Header = undefined;
    var p = init(&headers_buffer, limits_test);
    try testing.expectEqual(Result.incomplete, p.feed(input[0..0]));
    try testing.expectEqual(Result.incomplete, p.feed(input[0..26]));
    try testing.expectEqual(Result{ .complete = 27 }, p.feed(input));
    // Complete is sticky until reset.
    try testing.expectEqual(Result{ .complete = 27 }, p.feed(input));
    p.reset();
    const next = "GET /2 HTTP/1.1\r\nHost: b\r\n\r\n";
    try testing.expectEqual(Result{ .complete = next.len }, p.feed(next));
    try testing.expectEqualStrings("/2", p.head.target);
    try testing.expectEqualStrings("b", p.head.host.?);
}

test "request parser: more fields than headers_count_max is 431" {
    const limits: Limits = .{
        .header_bytes_max = 8192,
        .headers_count_max = 3,
        .target_bytes_max = 64,
    };
    const ok = "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n";
    try testing.expectEqual(Result{ .complete = ok.len }, parseOnce(ok, limits)[0]);
    const over = "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    const result = parseOnce(over, limits)[0];
    try testing.expectEqual(Result{ .invalid = .too_many_fields }, result);
    try testing.expectEqual(@as(u16, 431), result.invalid.status());
}

test "request parser: a head longer than header_bytes_max is 431, complete or not" {
    const head = "GET / HTTP/1.1\r\nHost: a\r\nX: 0123456789\r\n\r\n";
    const exact: Limits = .{
        .header_bytes_max = head.len,
        .headers_count_max = 4,
        .target_bytes_max = 8,
    };
    try testing.expectEqual(Result{ .complete = head.len }, parseOnce(head, exact)[0]);
    var short = exact;
    short.header_bytes_max = head.len - 1;
    try testing.expectEqual(Result{ .invalid = .head_too_large }, parseOnce(head, short)[0]);
    // An unfinished head is refused as soon as it cannot fit any more.
    try testing.expectEqual(Result.incomplete, parseOnce(head[0 .. head.len - 2], short)[0]);
    try testing.expectEqual(
        Result{ .invalid = .head_too_large },
        parseOnce(head[0 .. head.len - 1], short)[0],
    );
    try testing.expectEqual(@as(u16, 431), Reject.head_too_large.status());
}

test "request parser: a long target is 414, finished or not" {
    const limits: Limits = .{
        .header_bytes_max = 8192,
        .headers_count_max = 4,
        .target_bytes_max = 16,
    };
    const fits = "GET /0123456789abcde HTTP/1.1\r\nHost: a\r\n\r\n";
    try testing.expect(parseOnce(fits, limits)[0] == .complete);
    const long = "GET /0123456789abcdef HTTP/1.1\r\nHost: a\r\n\r\n";
    const result = parseOnce(long, limits)[0];
    try testing.expectEqual(Result{ .invalid = .target_too_long }, result);
    try testing.expectEqual(@as(u16, 414), result.invalid.status());
    // A request line that cannot end within method + target + version room is 414 before
    // its end arrives.
    const endless = "GET /" ++ @as([100]u8, @splat('a'));
    try testing.expectEqual(Result{ .invalid = .target_too_long }, parseOnce(endless, limits)[0]);
    try testing.expectEqual(Result.incomplete, parseOnce(endless[0..40], limits)[0]);
}

test "request parser: the head size is pinned" {
    // A parser lives in every downstream connection: growth must be a decision.
    if (@sizeOf(usize) != 8) return error.SkipZigTest;
    try testing.expectEqual(@as(usize, 88), @sizeOf(Head));
    // 192: the scanner's `connection_present` (no Connection field, no token to look for).
    try testing.expectEqual(@as(usize, 192), @sizeOf(RequestParser));
}
