//! The one place where something going wrong becomes an HTTP response. Every failure a session
//! can meet is a `Failure`; `response` maps it to bytes that are built at compile time, so an
//! error path never formats, allocates or needs a buffer.
const std = @import("std");
const http = @import("../http/http.zig");

pub const Failure = union(enum) {
    /// The request head broke a rule of RFC 9110/9112 (status from the parser: 400, 414,
    /// 431, 501, 505).
    bad_request: http.Reject,
    /// Host longer than we forward.
    host_too_long,
    /// The head plus the fields we add does not fit a buffer.
    head_too_large_to_forward,
    /// CONNECT tunnels are not offered.
    method_not_allowed,
    /// The client sent an invalid chunked body after its head had been forwarded.
    bad_request_body: http.Reject,
    client_header_timeout,
    /// The request body stopped arriving for longer than the client idle timeout.
    client_body_timeout,
    /// No buffer or connection slot free right now.
    overloaded,
    /// Every backend of the pool is down, ejected or drained.
    no_backend_available,
    /// Every backend that could take the request is at its connection cap.
    backends_at_capacity,
    upstream_refused,
    /// The TLS handshake with the backend failed (verification, no common protocol, an
    /// alert): a connect-class failure, logged with AWS-LC's reason.
    upstream_tls_failed,
    upstream_connect_timeout,
    upstream_reset,
    upstream_bad_response,
    /// The response head is over `--response-header-bytes-max` or its field count, or would
    /// not fit a buffer once rewritten.
    upstream_head_too_large,
    upstream_response_timeout,
    /// The request body is over the route's (or the listener's) `request_body_max`.
    request_body_too_large,
    /// A response sluice composes itself did not fit its buffer (Config.validate sizes
    /// buffers so that it always does: a bug, answered rather than crashed on).
    local_response_too_large,
    /// A plain HTTP request arrived on a TLS listener: answered in plain text, as nginx does.
    plain_http_to_tls_port,
    /// A route redirects to the request's own host (`scheme`), and the request has none (an
    /// HTTP/1.0 request without Host).
    redirect_without_host,
    /// A JavaScript handler gave no response: an uncaught exception, a limit, a response too
    /// large for its buffer (handler/Handler.zig logs which, with the file, line and column;
    /// the client learns nothing more).
    handler_failed,

    /// A short name for logs and the access log's `reason`: the tag, without a payload.
    pub fn name(failure: Failure) []const u8 {
        return @tagName(failure);
    }

    pub fn status(failure: Failure) u16 {
        return switch (failure) {
            .bad_request, .bad_request_body => |reject| reject.status(),
            .host_too_long, .plain_http_to_tls_port, .redirect_without_host => 400,
            .head_too_large_to_forward => 431,
            .method_not_allowed => 405,
            .client_header_timeout, .client_body_timeout => 408,
            .overloaded, .no_backend_available, .backends_at_capacity => 503,
            .upstream_refused, .upstream_tls_failed, .upstream_reset, .upstream_bad_response, .upstream_head_too_large => 502,
            .request_body_too_large => 413,
            .local_response_too_large, .handler_failed => 500,
            .upstream_connect_timeout, .upstream_response_timeout => 504,
        };
    }

    /// The head of `response` alone (its Content-Length still says what a GET would get).
    pub fn responseHead(failure: Failure) []const u8 {
        const text = failure.response();
        const end = std.mem.indexOf(u8, text, "\r\n\r\n").? + 4; // Every response has one.
        return text[0..end];
    }

    /// The whole response, `Connection: close` included: after an error we close.
    pub fn response(failure: Failure) []const u8 {
        @setEvalBranchQuota(2_000_000); // One comptime-built response per Reject value.
        return switch (failure) {
            inline .bad_request, .bad_request_body => |reject| switch (reject) {
                inline else => |r| comptime build(r.status(), r.reason()),
            },
            .host_too_long => comptime build(400, "Host field too long"),
            .head_too_large_to_forward => comptime build(431, "request head too large to forward"),
            .method_not_allowed => comptime build(405, "CONNECT is not supported"),
            .client_header_timeout => comptime build(408, "request head not received in time"),
            .client_body_timeout => comptime build(408, "request body stopped arriving"),
            .overloaded => comptime build(503, "no capacity, try again"),
            .no_backend_available => comptime build(503, "no healthy backend available"),
            .backends_at_capacity => comptime build(503, "every backend is at its connection limit"),
            .upstream_refused => comptime build(502, "could not connect to a backend"),
            .upstream_tls_failed => comptime build(502, "TLS handshake with the backend failed"),
            .upstream_reset => comptime build(502, "backend closed the connection"),
            .upstream_bad_response => comptime build(502, "backend sent an invalid response"),
            .upstream_head_too_large => comptime build(502, "backend response head too large"),
            .request_body_too_large => comptime build(413, "request body too large"),
            .local_response_too_large => comptime build(500, "response too large for its buffer"),
            .plain_http_to_tls_port => comptime build(400, "The plain HTTP request was sent to HTTPS port"),
            .redirect_without_host => comptime build(400, "the redirect names the request's host, and it has no Host field"),
            .handler_failed => comptime build(500, "the request handler failed"),
            .upstream_connect_timeout => comptime build(504, "backend connect timed out"),
            .upstream_response_timeout => comptime build(504, "backend response timed out"),
        };
    }
};

fn reasonPhrase(comptime code: u16) []const u8 {
    return switch (code) {
        400 => "Bad Request",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        500 => "Internal Server Error",
        414 => "URI Too Long",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        else => @compileError(std.fmt.comptimePrint("no reason phrase for {d}", .{code})),
    };
}

fn build(comptime code: u16, comptime detail: []const u8) []const u8 {
    @setEvalBranchQuota(20_000);
    const body = std.fmt.comptimePrint("{d} {s}: {s}\n", .{ code, reasonPhrase(code), detail });
    const extra = if (code == 405) "Allow: GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH, TRACE\r\n" else "";
    return std.fmt.comptimePrint(
        "HTTP/1.1 {d} {s}\r\nContent-Type: text/plain\r\nContent-Length: {d}\r\n{s}" ++
            "Connection: close\r\n\r\n{s}",
        .{ code, reasonPhrase(code), body.len, extra, body },
    );
}

test "failure: each response is a complete message with the status it claims" {
    const cases = [_]Failure{
        .{ .bad_request = .missing_host },
        .client_header_timeout,
        .upstream_refused,
        .upstream_tls_failed,
        .upstream_response_timeout,
        .overloaded,
        .no_backend_available,
        .backends_at_capacity,
        .method_not_allowed,
        .upstream_head_too_large,
        .request_body_too_large,
        .local_response_too_large,
        .plain_http_to_tls_port,
        .handler_failed,
    };
    for (cases) |failure| {
        const text = failure.response();
        var buffer: [16]u8 = undefined;
        const prefix = try std.fmt.bufPrint(&buffer, "HTTP/1.1 {d}", .{failure.status()});
        try std.testing.expect(std.mem.startsWith(u8, text, prefix));
        const split = std.mem.indexOf(u8, text, "\r\n\r\n").?;
        const body = text[split + 4 ..];
        var cl_buffer: [32]u8 = undefined;
        const cl = try std.fmt.bufPrint(&cl_buffer, "Content-Length: {d}\r\n", .{body.len});
        try std.testing.expect(std.mem.indexOf(u8, text[0..split], cl) != null);
        try std.testing.expect(std.mem.indexOf(u8, text, "Connection: close\r\n") != null);
    }
}
