//! A request head as the proxy reads it, whichever protocol brought it: HTTP/1.1 fills it from
//! its parser (RequestParser.zig), HTTP/2 from a stream's HEADERS (`:method`, `:scheme`,
//! `:authority`, `:path` and the fields). Routing, head rewriting, affinity, handlers and the
//! access log read only this; every slice points into the buffer of the client side that
//! filled it, which keeps it in place until the exchange ends.
//!
//! HTTP/2's `:scheme` is not carried: its codec checks it, and the backend hears the scheme as
//! X-Forwarded-Proto, the client connection's, as from HTTP/1.1 (an absolute-form HTTP/1.1
//! target carries its own in `target`).
//!
//! Some fields only HTTP/1.1 can set (`keep_alive`, `upgrade`, `has_connection`, a target form
//! other than origin): a protocol without them leaves them at what means "none".
const field_values = @import("field_values.zig");
const message = @import("message.zig");
const Body = message.Body;
const Header = message.Header;
const TargetForm = message.TargetForm;
const Version = message.Version;
const Method = @import("method.zig").Method;

const Request = @This();

method: Method,
/// The method as received; the only name of a `.other` method.
method_text: []const u8,
target: []const u8,
target_form: TargetForm,
version: Version,
/// The fields other than pseudo-fields, in order: slices into the client side's buffer, in
/// an array of the exchange slot (`RequestParser.scanner.headers_buffer` for HTTP/1.1).
headers: []const Header,
/// The Host field value (HTTP/2: `:authority`, or Host without it); null only in an HTTP/1.0
/// request without one. For an absolute-form target the target's authority names the origin
/// instead (RFC 9112 §3.2.2).
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
pub fn connectionHasToken(request: *const Request, token: []const u8) bool {
    if (!request.has_connection) return false;
    return field_values.connectionHasToken(request.headers, token);
}

/// Whether a Connection field may name a field to drop: it lists a token other than
/// `keep-alive` and `upgrade` (which name fields that are hop-by-hop anyway). False for
/// the usual `Connection: keep-alive`, so the fields need not be checked one by one.
pub fn connectionNamesFields(request: *const Request) bool {
    if (!request.has_connection) return false;
    return field_values.connectionListsOtherThan(request.headers, &.{ "keep-alive", "upgrade" });
}

/// The value of the first field called `name` (case-insensitive).
pub fn get(request: *const Request, name: []const u8) ?[]const u8 {
    return field_values.get(request.headers, name);
}
