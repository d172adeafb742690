//! The small value types both head parsers return: version, field, body framing and limits.
//!
//! A `Header` is two slices into the connection's buffer, never a copy, so a parsed head is
//! only valid while the caller keeps those bytes in place.

const std = @import("std");
const assert = std.debug.assert;

/// Only HTTP/1.0 and HTTP/1.1 are parsed; every other well-formed version is refused.
pub const Version = enum(u1) {
    http10,
    http11,

    pub fn text(v: Version) []const u8 {
        return switch (v) {
            .http10 => "HTTP/1.0",
            .http11 => "HTTP/1.1",
        };
    }
};

/// One field line. `value` has OWS trimmed on both sides (RFC 9112 §5.1) and may be empty.
pub const Header = struct {
    name: []const u8,
    value: []const u8,
};

/// How the message body is delimited (RFC 9112 §6.3).
///
/// `content_length` is never 0: a message whose Content-Length is 0 has body `.none`, so a
/// caller has exactly one case for "no body bytes follow the head".
pub const Body = union(enum) {
    none,
    content_length: u64,
    chunked,
    /// The body runs until the upstream closes the connection. Responses only.
    close_delimited,
};

/// The four request-target forms of RFC 9112 §3.2.
pub const TargetForm = enum {
    /// "/path?query": the usual form.
    origin,
    /// "http://host/path": sent to proxies. RFC 9112 §3.2.2: the authority of the target, not
    /// the Host field, names the origin; a proxy forwarding it MUST derive Host from it.
    absolute,
    /// "host:port": CONNECT only.
    authority,
    /// "*": OPTIONS only.
    asterisk,
};

/// Bounds of one message head, sized from configuration at start-up.
pub const Limits = struct {
    /// The whole head: skipped empty lines, start line, field lines and the final CRLF.
    header_bytes_max: u32,
    /// Field lines in one head; the caller's `headers_buffer` holds at least this many.
    headers_count_max: u16,
    /// The request-target alone.
    target_bytes_max: u32,

    pub fn assertValid(limits: Limits) void {
        // The shortest head that can complete, "GET / HTTP/1.0\r\n\r\n", has 18 bytes.
        assert(limits.header_bytes_max >= 18);
        // An HTTP/1.1 request needs at least its Host field.
        assert(limits.headers_count_max >= 1);
        assert(limits.target_bytes_max >= 1);
        assert(limits.target_bytes_max <= limits.header_bytes_max);
    }
};

test "message: Body is a small tagged union" {
    try std.testing.expect(@sizeOf(Body) <= 16);
    try std.testing.expectEqual(2 * @sizeOf([]const u8), @sizeOf(Header));
}
