//! A `Failure` framed as an HTTP/1.1 response, for the client connections that speak it
//! (Connection.zig): built at compile time, whole, with `Connection: close`, since after an
//! error the connection closes.
const std = @import("std");
const Failure = @import("failure.zig").Failure;
const reasonPhrase = @import("failure.zig").reasonPhrase;

/// The whole response.
pub fn response(failure: Failure) []const u8 {
    @setEvalBranchQuota(2_000_000); // One comptime-built response per Reject value.
    return switch (failure) {
        inline .bad_request, .bad_request_body => |reject, tag| switch (reject) {
            inline else => |r| comptime build(@unionInit(Failure, @tagName(tag), r)),
        },
        .rate_limited => |seconds| switch (Failure.retryAfterSeconds(seconds)) {
            inline 1...Failure.retry_after_max_s => |s| comptime build(.{ .rate_limited = s }),
            else => unreachable, // `retryAfterSeconds` bounds it.
        },
        inline else => |_, tag| comptime build(@unionInit(Failure, @tagName(tag), {})),
    };
}

/// The head of `response` alone, for a HEAD request (its Content-Length still says what a GET
/// would get).
pub fn responseHead(failure: Failure) []const u8 {
    const text = response(failure);
    const end = std.mem.indexOf(u8, text, "\r\n\r\n").? + 4; // Every response has one.
    return text[0..end];
}

fn build(comptime failure: Failure) []const u8 {
    @setEvalBranchQuota(20_000);
    const code = failure.status();
    const body = failure.body();
    const extra = if (failure.extraField()) |field| field.name ++ ": " ++ field.value ++ "\r\n" else "";
    return std.fmt.comptimePrint(
        "HTTP/1.1 {d} {s}\r\nContent-Type: text/plain\r\nContent-Length: {d}\r\n{s}" ++
            "Connection: close\r\n\r\n{s}",
        .{ code, reasonPhrase(code), body.len, extra, body },
    );
}

test "failure_http1: each response is a complete message with the status it claims" {
    const cases = [_]Failure{
        .{ .bad_request = .missing_host },
        .client_header_timeout,
        .upstream_refused,
        .upstream_tls_failed,
        .upstream_response_timeout,
        .overloaded,
        .no_backend_available,
        .no_members,
        .backends_at_capacity,
        .method_not_allowed,
        .upstream_head_too_large,
        .request_body_too_large,
        .local_response_too_large,
        .plain_http_to_tls_port,
        .handler_failed,
        .handler_busy,
        .forbidden,
        .{ .rate_limited = 7 },
    };
    for (cases) |failure| {
        const text = response(failure);
        var buffer: [16]u8 = undefined;
        const prefix = try std.fmt.bufPrint(&buffer, "HTTP/1.1 {d}", .{failure.status()});
        try std.testing.expect(std.mem.startsWith(u8, text, prefix));
        const split = std.mem.indexOf(u8, text, "\r\n\r\n").?;
        const body = text[split + 4 ..];
        try std.testing.expectEqualStrings(failure.body(), body);
        var cl_buffer: [32]u8 = undefined;
        const cl = try std.fmt.bufPrint(&cl_buffer, "Content-Length: {d}\r\n", .{body.len});
        try std.testing.expect(std.mem.indexOf(u8, text[0..split], cl) != null);
        try std.testing.expect(std.mem.indexOf(u8, text, "Connection: close\r\n") != null);
    }
}

test "failure_http1: a 429 says when to retry, within 1 to 60 seconds" {
    try std.testing.expect(std.mem.indexOf(u8, response(.{ .rate_limited = 7 }), "\r\nRetry-After: 7\r\n") != null);
    try std.testing.expect(std.mem.indexOf(u8, response(.{ .rate_limited = 900 }), "\r\nRetry-After: 60\r\n") != null);
    try std.testing.expect(std.mem.indexOf(u8, response(.{ .rate_limited = 0 }), "\r\nRetry-After: 1\r\n") != null);
}

test "failure_http1: a 405 says which methods are allowed; a HEAD gets the head alone" {
    const text = response(.method_not_allowed);
    try std.testing.expect(std.mem.indexOf(u8, text, "\r\nAllow: GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH, TRACE\r\n") != null);
    const head = responseHead(.overloaded);
    try std.testing.expect(std.mem.endsWith(u8, head, "Connection: close\r\n\r\n"));
    try std.testing.expect(std.mem.startsWith(u8, response(.overloaded), head));
}
