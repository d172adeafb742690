//! The one place where something going wrong becomes a response. Every failure a session can
//! meet is a `Failure`: a status, a one-line plain-text body and at most one extra field, all
//! built at compile time, so an error path never formats, allocates or needs a buffer. Each
//! client protocol frames them its own way (HTTP/1.1: failure_http1.zig).
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
    /// The pool has no member at all: its backends are names that have not resolved yet
    /// (runtime/Dns.zig).
    no_members,
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
    /// A JavaScript handler would wait on a timer, and as many of its requests as its
    /// `suspended_max` already do on this worker.
    handler_busy,
    /// The client's address is refused by an allow or deny list (policy/AccessPolicy.zig).
    forbidden,
    /// Over a rate limit (policy/RateLimits.zig); the seconds until a token is due, said in
    /// Retry-After (`retryAfterSeconds`).
    rate_limited: u16,

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
            .forbidden => 403,
            .rate_limited => 429,
            .client_header_timeout, .client_body_timeout => 408,
            .overloaded, .no_backend_available, .no_members, .backends_at_capacity, .handler_busy => 503,
            .upstream_refused, .upstream_tls_failed, .upstream_reset, .upstream_bad_response, .upstream_head_too_large => 502,
            .request_body_too_large => 413,
            .local_response_too_large, .handler_failed => 500,
            .upstream_connect_timeout, .upstream_response_timeout => 504,
        };
    }

    /// What the client is told, as plain text: one line, the status and why.
    pub fn body(failure: Failure) []const u8 {
        @setEvalBranchQuota(2_000_000); // One comptime-built text per Reject value.
        return switch (failure) {
            inline .bad_request, .bad_request_body => |reject| switch (reject) {
                inline else => |r| comptime text(r.status(), r.reason()),
            },
            .rate_limited => comptime text(429, "over the rate limit, retry later"),
            inline else => |_, tag| comptime text((@unionInit(Failure, @tagName(tag), {})).status(), detail(tag)),
        };
    }

    /// A field the response carries besides the framing ones, or empty: a 405 says which
    /// methods are allowed (RFC 9110 §15.5.6).
    pub fn extraField(failure: Failure) ?http.Header {
        return switch (failure) {
            .method_not_allowed => .{ .name = "Allow", .value = "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH, TRACE" },
            .rate_limited => |seconds| .{ .name = "Retry-After", .value = retry_after_texts[retryAfterSeconds(seconds) - 1] },
            else => null,
        };
    }

    /// The longest Retry-After said; a longer wait is said as this (the client asks again then
    /// and is told again). Each value is a whole response built at compile time.
    pub const retry_after_max_s = 60;

    pub fn retryAfterSeconds(seconds: u16) u16 {
        return std.math.clamp(seconds, 1, retry_after_max_s);
    }

    /// "1" to "60", made at compile time: an error path never formats.
    const retry_after_texts: [retry_after_max_s][]const u8 = blk: {
        @setEvalBranchQuota(100_000);
        var texts: [retry_after_max_s][]const u8 = undefined;
        for (&texts, 1..) |*t, n| t.* = std.fmt.comptimePrint("{d}", .{n});
        break :blk texts;
    };
};

fn detail(comptime tag: std.meta.Tag(Failure)) []const u8 {
    return switch (tag) {
        .bad_request, .bad_request_body, .rate_limited => unreachable, // Their own texts, in `body`.
        .host_too_long => "Host field too long",
        .head_too_large_to_forward => "request head too large to forward",
        .method_not_allowed => "CONNECT is not supported",
        .client_header_timeout => "request head not received in time",
        .client_body_timeout => "request body stopped arriving",
        .overloaded => "no capacity, try again",
        .no_backend_available => "no healthy backend available",
        .no_members => "no backend: the pool's backend names have not resolved",
        .backends_at_capacity => "every backend is at its connection limit",
        .upstream_refused => "could not connect to a backend",
        .upstream_tls_failed => "TLS handshake with the backend failed",
        .upstream_reset => "backend closed the connection",
        .upstream_bad_response => "backend sent an invalid response",
        .upstream_head_too_large => "backend response head too large",
        .request_body_too_large => "request body too large",
        .local_response_too_large => "response too large for its buffer",
        .plain_http_to_tls_port => "The plain HTTP request was sent to HTTPS port",
        .redirect_without_host => "the redirect names the request's host, and it has no Host field",
        .handler_failed => "the request handler failed",
        .handler_busy => "the request handler has too many requests waiting, try again",
        .forbidden => "this address may not use this service",
        .upstream_connect_timeout => "backend connect timed out",
        .upstream_response_timeout => "backend response timed out",
    };
}

/// The standard reason phrase of each status sluice answers a failure with.
pub fn reasonPhrase(comptime code: u16) []const u8 {
    return switch (code) {
        400 => "Bad Request",
        403 => "Forbidden",
        429 => "Too Many Requests",
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

fn text(comptime code: u16, comptime why: []const u8) []const u8 {
    return std.fmt.comptimePrint("{d} {s}: {s}\n", .{ code, reasonPhrase(code), why });
}

test "failure: every body is one line that starts with the status it claims" {
    const info = @typeInfo(Failure).@"union";
    inline for (info.field_names, info.field_types) |name, payload| {
        const failure: Failure = if (payload == void)
            @unionInit(Failure, name, {})
        else if (payload == u16)
            @unionInit(Failure, name, 1)
        else
            @unionInit(Failure, name, .missing_host);
        var buffer: [8]u8 = undefined;
        const prefix = try std.fmt.bufPrint(&buffer, "{d} ", .{failure.status()});
        try std.testing.expect(std.mem.startsWith(u8, failure.body(), prefix));
        try std.testing.expectEqual(failure.body().len - 1, std.mem.indexOfScalar(u8, failure.body(), '\n').?);
    }
}
