//! Grammars of the field values the codec interprets: Content-Length, Transfer-Encoding,
//! Host (and the authority of a request-target), and comma-separated token lists.
//!
//! The framing fields are parsed more strictly than the RFC's OWS rules allow: a value of
//! Content-Length or Transfer-Encoding that holds an HTAB, or an empty list element, is
//! refused rather than trimmed or skipped. Those bytes decide where a message ends, and
//! upstreams that disagree about them are exactly how requests get smuggled; no real client
//! sends them.

const std = @import("std");
const assert = std.debug.assert;

const chars = @import("chars.zig");
const Header = @import("message.zig").Header;
const Reject = @import("reject.zig").Reject;

/// At most 19 decimal digits, so every accepted value fits in a u64 without an overflow check
/// (10^19 - 1 < 2^64 - 1). Leading zeros count.
pub const content_length_digits_max = 19;
comptime {
    assert(std.math.pow(u128, 10, content_length_digits_max) - 1 <= std.math.maxInt(u64));
}

/// The largest length accepted: 2^63 - 1. Many servers hold a length in a signed 64-bit
/// integer; a larger value would wrap to a negative one there, so it is refused, not forwarded.
pub const content_length_max: u64 = std.math.maxInt(i64);

/// RFC 9110 §8.6: Content-Length = 1*DIGIT. `raw` is the value before OWS trimming.
/// No sign, no inner whitespace and no comma list (RFC 9112 §6.3 item 5 lets a recipient
/// collapse "5, 5"; a proxy must not, since its upstream may not).
pub fn parseContentLength(raw: []const u8) ?u64 {
    // OWS (SP or HTAB) around the value is not part of it (RFC 9110 §5.5); a tab inside the
    // digits fails the digit check below.
    const digits = chars.trimWhitespace(raw);
    if (digits.len == 0 or digits.len > content_length_digits_max) return null;
    var value: u64 = 0;
    for (digits) |c| {
        if (!chars.isDigit(c)) return null;
        value = value * 10 + (c - '0');
    }
    if (value > content_length_max) return null;
    return value;
}

/// RFC 9112 §6.1 and §6.3: the only transfer coding relayed is a single "chunked".
/// Returns null when `raw` (the value before OWS trimming) is exactly that, otherwise why not:
/// `transfer_encoding_invalid` (400) for a malformed list or chunked not final,
/// `transfer_encoding_unsupported` (501) for any other coding, known or not.
pub fn checkTransferEncoding(raw: []const u8) ?Reject {
    // OWS around list elements may be SP or HTAB (RFC 9110 §5.6.1). Accepting a tab is safe
    // because the value is never forwarded: the proxy writes its own `Transfer-Encoding:
    // chunked`, so a backend never sees the client's spelling.
    var elements_count: u32 = 0;
    var other_coding = false;
    var chunked_not_final = false;
    var rest = raw;
    while (true) {
        const comma = std.mem.findScalar(u8, rest, ',');
        const element = chars.trimWhitespace(if (comma) |c| rest[0..c] else rest);
        if (element.len == 0) return .transfer_encoding_invalid;
        for (element) |c| {
            // A parameter (";q=1") or any other non-token byte.
            if (!chars.isTchar(c)) return .transfer_encoding_invalid;
        }
        elements_count += 1;
        if (chars.eqlIgnoreCase(element, "chunked")) {
            // RFC 9112 §6.3 item 4: chunked must be the final coding, applied once (§7).
            if (comma != null) chunked_not_final = true;
        } else {
            other_coding = true;
        }
        const c = comma orelse break;
        rest = rest[c + 1 ..];
    }
    assert(elements_count >= 1);
    if (chunked_not_final) return .transfer_encoding_invalid;
    if (other_coding) return .transfer_encoding_unsupported;
    assert(elements_count == 1);
    return null;
}

/// RFC 9110 §7.2 and RFC 3986 §3.2.2: Host = uri-host [ ":" port ], where uri-host is an
/// IP-literal in brackets or a reg-name (which covers IPv4 addresses). An empty host is
/// refused although RFC 9110 allows it for targets without an authority: no client we serve
/// sends one, and an empty authority is useless for routing.
pub fn hostIsValid(value: []const u8) bool {
    return authorityIsValid(value, .optional);
}

pub const Port = enum { optional, required };

/// `uri-host [":" port]`: the Host field value, the authority of an absolute-form target,
/// or (with the port required, RFC 9112 §3.2.3) an authority-form target.
/// A port is 1 to 5 digits up to 65535; "host:" with an empty port is refused.
pub fn authorityIsValid(text: []const u8, port: Port) bool {
    if (text.len == 0) return false;
    var host_end: usize = undefined;
    if (text[0] == '[') {
        const close = std.mem.findScalar(u8, text, ']') orelse return false;
        if (close == 1) return false;
        for (text[1..close]) |c| {
            if (!chars.isIpLiteralByte(c)) return false;
        }
        host_end = close + 1;
    } else {
        host_end = std.mem.findScalar(u8, text, ':') orelse text.len;
        if (host_end == 0) return false;
        if (!regNameIsValid(text[0..host_end])) return false;
    }
    assert(host_end <= text.len);
    if (host_end == text.len) return port == .optional;
    if (text[host_end] != ':') return false;
    return portIsValid(text[host_end + 1 ..]);
}

fn regNameIsValid(text: []const u8) bool {
    var i: usize = 0;
    while (i < text.len) : (i += 1) {
        const c = text[i];
        if (!chars.isRegNameByte(c)) return false;
        if (c == '%') {
            // pct-encoded = "%" HEXDIG HEXDIG.
            if (i + 2 >= text.len) return false;
            if (!chars.isHexDigit(text[i + 1]) or !chars.isHexDigit(text[i + 2])) return false;
            i += 2;
        }
    }
    return true;
}

fn portIsValid(text: []const u8) bool {
    if (text.len == 0 or text.len > 5) return false;
    var value: u32 = 0;
    for (text) |c| {
        if (!chars.isDigit(c)) return false;
        value = value * 10 + (c - '0');
    }
    return value <= std.math.maxInt(u16);
}

/// Whether the comma-separated list `value` has an element equal to `token`, ignoring case
/// and OWS around elements (RFC 9110 §5.6.1). Empty elements are skipped.
pub fn listHasToken(value: []const u8, token: []const u8) bool {
    assert(token.len > 0);
    var rest = value;
    while (true) {
        const comma = std.mem.findScalar(u8, rest, ',');
        const element = chars.trimWhitespace(if (comma) |c| rest[0..c] else rest);
        if (chars.eqlIgnoreCase(element, token)) return true;
        const c = comma orelse return false;
        rest = rest[c + 1 ..];
    }
}

/// The value of the first field called `name` (case-insensitive).
pub fn get(headers: []const Header, name: []const u8) ?[]const u8 {
    for (headers) |header| {
        if (chars.eqlIgnoreCase(header.name, name)) return header.value;
    }
    return null;
}

/// Whether any Connection field lists a token that is not one of `known` (any case, OWS
/// ignored; an empty list element is not a token).
pub fn connectionListsOtherThan(headers: []const Header, known: []const []const u8) bool {
    for (headers) |header| {
        if (!chars.eqlIgnoreCase(header.name, "connection")) continue;
        var elements = std.mem.splitScalar(u8, header.value, ',');
        elements: while (elements.next()) |raw| {
            const element = chars.trimWhitespace(raw);
            if (element.len == 0) continue;
            for (known) |token| if (chars.eqlIgnoreCase(element, token)) continue :elements;
            return true;
        }
    }
    return false;
}

/// Whether any Connection field lists `token` (RFC 9110 §7.6.1).
pub fn connectionHasToken(headers: []const Header, token: []const u8) bool {
    for (headers) |header| {
        if (!chars.eqlIgnoreCase(header.name, "connection")) continue;
        if (listHasToken(header.value, token)) return true;
    }
    return false;
}

test "field values: a Connection field lists other tokens than the known ones" {
    const known = [_][]const u8{ "keep-alive", "upgrade" };
    const cases = [_]struct { []const u8, bool }{
        .{ "keep-alive", false },
        .{ " Keep-Alive , UPGRADE ,, ", false },
        .{ "close", true },
        .{ "keep-alive, X-Secret", true },
        .{ "", false },
    };
    for (cases) |case| {
        const headers = [_]Header{ .{ .name = "Host", .value = "x" }, .{ .name = "CONNECTION", .value = case[0] } };
        try std.testing.expectEqual(case[1], connectionListsOtherThan(&headers, &known));
    }
    const none = [_]Header{.{ .name = "Host", .value = "x" }};
    try std.testing.expect(!connectionListsOtherThan(&none, &known));
}

test "field values: Content-Length is 1 to 19 plain digits" {
    try std.testing.expectEqual(@as(?u64, 0), parseContentLength("0"));
    try std.testing.expectEqual(@as(?u64, 42), parseContentLength(" 42 "));
    try std.testing.expectEqual(@as(?u64, 7), parseContentLength("007"));
    try std.testing.expectEqual(@as(?u64, content_length_max), parseContentLength(
        "9223372036854775807",
    ));
    try std.testing.expectEqual(@as(?u64, null), parseContentLength("9223372036854775808"));
    try std.testing.expectEqual(@as(?u64, null), parseContentLength("9999999999999999999"));
    const refused = [_][]const u8{
        "",
        " ",
        "+5",
        "-5",
        "5, 5",
        "5,5",
        "0x5",
        "5 5",
        "1e3",
        "5\t5",
        "\xef\xbc\x95", // FULLWIDTH DIGIT FIVE
        "5.0",
        "abc",
        "18446744073709551615", // u64 max, but 20 digits
        "00000000000000000001",
    };
    for (refused) |raw| try std.testing.expectEqual(@as(?u64, null), parseContentLength(raw));
}

test "field values: Transfer-Encoding must be exactly one chunked" {
    try std.testing.expectEqual(@as(?Reject, null), checkTransferEncoding("chunked"));
    try std.testing.expectEqual(@as(?Reject, null), checkTransferEncoding(" CHUNKED "));
    // OWS may be HTAB (RFC 9110 §5.6.3): tabs around the value are not part of it.
    try std.testing.expectEqual(@as(?Reject, null), checkTransferEncoding("\tchunked \t"));
    try std.testing.expectEqual(@as(?u64, 5), parseContentLength("\t5 "));
    const cases = [_]struct { []const u8, Reject }{
        .{ "chunked, chunked", .transfer_encoding_invalid },
        .{ "chunked, identity", .transfer_encoding_invalid },
        .{ "chunked,", .transfer_encoding_invalid },
        .{ ", chunked", .transfer_encoding_invalid },
        .{ "", .transfer_encoding_invalid },
        .{ "chun\tked", .transfer_encoding_invalid },
        .{ "chunked;q=1", .transfer_encoding_invalid },
        .{ "chun ked", .transfer_encoding_invalid },
        .{ "\"chunked\"", .transfer_encoding_invalid },
        .{ "gzip, chunked", .transfer_encoding_unsupported },
        .{ "gzip", .transfer_encoding_unsupported },
        .{ "identity", .transfer_encoding_unsupported },
        .{ "xchunked", .transfer_encoding_unsupported },
        .{ "chunked2", .transfer_encoding_unsupported },
    };
    for (cases) |case| {
        try std.testing.expectEqual(@as(?Reject, case[1]), checkTransferEncoding(case[0]));
    }
}

test "field values: Host is uri-host with an optional valid port" {
    const valid = [_][]const u8{
        "example.com",    "example.com:8080", "127.0.0.1:80", "[::1]",     "[::1]:443",
        "a-b_c~d.e",      "xn--bcher-kva.ch", "ex%41mple",    "[v1.fe80]", "h:65535",
        "sub!$&'()*+,;=",
    };
    for (valid) |value| try std.testing.expect(hostIsValid(value));
    const invalid = [_][]const u8{
        "",          ":80",  "host:", "host:65536", "host:123456", "user@host", "ho st",
        "host/path", "[::1", "[]",    "[::1]x",     "host:80:80",  "%4",        "%zz",
        "exa\"mple", "h:-1", "h:8a",  "[::1]:",     "h#",          "h?",        "\xc3\xa9",
    };
    for (invalid) |value| try std.testing.expect(!hostIsValid(value));
}

test "field values: authority-form requires a port" {
    try std.testing.expect(authorityIsValid("example.com:443", .required));
    try std.testing.expect(authorityIsValid("[::1]:443", .required));
    try std.testing.expect(!authorityIsValid("example.com", .required));
    try std.testing.expect(!authorityIsValid("[::1]", .required));
}

test "field values: token lists ignore case, OWS and empty elements" {
    try std.testing.expect(listHasToken("keep-alive, Upgrade", "upgrade"));
    try std.testing.expect(listHasToken(" ,close", "close"));
    try std.testing.expect(listHasToken("close", "close"));
    try std.testing.expect(!listHasToken("closed", "close"));
    try std.testing.expect(!listHasToken("", "close"));
    const headers = [_]Header{
        .{ .name = "Connection", .value = "keep-alive" },
        .{ .name = "connection", .value = "x, Upgrade" },
    };
    try std.testing.expect(connectionHasToken(&headers, "upgrade"));
    try std.testing.expect(!connectionHasToken(&headers, "close"));
    try std.testing.expectEqualStrings("keep-alive", get(&headers, "CONNECTION").?);
    try std.testing.expectEqual(@as(?[]const u8, null), get(&headers, "host"));
}
