//! What an exchange (Exchange.zig) leaves behind when it ends: its duration in the latency
//! histogram, its access-log line (formatted on the worker into the worker's buffer), the
//! response counted per backend and status class, and the rate-limited warning of a 502 or
//! 504 with what explains it. Read-only of the exchange, but for the flags that make each
//! happen once.
const std = @import("std");
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const Failure = @import("failure.zig").Failure;
const Exchange = @import("Exchange.zig");

/// The exchange is over for its client (response sent, error answered, or connection closed;
/// for a tunnel, the tunnel closed): its duration goes into the histogram and its line into
/// the access log, once.
pub fn recordDuration(exchange: *Exchange) void {
    const started_ns = exchange.log.started_ns;
    if (started_ns == 0) return; // No request parsed, or recorded already.
    exchange.log.started_ns = 0;
    const duration_ns = exchange.loop().now() -| started_ns;
    if (!exchange.log.latency_observed) observeLatency(exchange, duration_ns);
    logAccess(exchange, duration_ns);
}

/// One access-log line (when the log is on). Formatting happens here, on the worker, into the
/// worker's buffer; writing the buffer out is the control thread's job.
pub fn logAccess(exchange: *Exchange, duration_ns: u64) void {
    const log = &(exchange.proxy.access_log orelse return);
    const peer = &exchange.proxy.peer_scratch;
    peer.subject_len = 0;
    const client = exchange.downstream.logFacts(peer);
    const upstream_ns: ?u64 = if (exchange.log.upstream_started_ns == 0)
        null
    else
        exchange.loop().now() -| exchange.log.upstream_started_ns;
    log.append(&.{
        .client_ip = client.ip,
        .method = if (exchange.log.method.len > 0) exchange.log.method else "-",
        .target = if (exchange.log.target.len > 0) exchange.log.target else "-",
        .version = if (client.http2) "HTTP/2.0" else if (exchange.request.version == .http10) "HTTP/1.0" else "HTTP/1.1",
        .status = exchange.log.status,
        .bytes_sent = exchange.log.bytes_sent,
        .duration_ns = duration_ns,
        .backend = exchange.backendName() orelse "",
        .upstream_ns = upstream_ns,
        .tries = exchange.tried.count,
        .reason = exchange.log.end_reason,
        .request_bytes = exchange.log.request_bytes + client.request_body_bytes,
        .referer = exchange.log.referer,
        .user_agent = exchange.log.user_agent,
        .tls_version = client.tls_version,
        .tls_cipher = client.tls_cipher,
        .client_subject = client.client_subject,
        .client_fingerprint = client.client_fingerprint,
        .request_id = if (exchange.policy) |applied| applied.request_id else "",
        .rewritten = if (exchange.pathRewrite()) |path| .{ path.replacement, path.rest } else null,
    }, sys.clockRealtimeSeconds());
}

pub fn observeLatency(exchange: *Exchange, duration_ns: u64) void {
    assert(!exchange.log.latency_observed);
    exchange.log.latency_observed = true;
    const latency = if (exchange.poolOrNull()) |pool_local| &pool_local.stats.latency else &exchange.proxy.stats.latency;
    latency.observe(duration_ns);
}

/// The rate-limited warning for a 502 or 504, with what explains it.
pub fn warnFailure(exchange: *Exchange, failure: Failure) void {
    const detail: []const u8 = if (exchange.log.response_reject) |reject|
        reject.reason()
    else if (exchange.log.head_rewrite_failed)
        "the response head would not fit a buffer once rewritten (raise --response-header-bytes-max)"
    else switch (failure) {
        .upstream_head_too_large => "over --response-header-bytes-max or --response-headers-count-max",
        .upstream_response_timeout => if (exchange.response != .none)
            "no body byte within the body timeout"
        else
            "no response head within the response timeout",
        else => failure.body(),
    };
    exchange.proxy.warnFailure(failure, .{
        .pool = if (exchange.poolOrNull()) |p| p.config.name else "-",
        .backend = exchange.backendName() orelse "-",
        .tries = exchange.tried.count,
        .detail = std.mem.trimEnd(u8, detail, "\n"),
    });
}

/// A final response from the backend is on its way to the client.
pub fn countResponse(exchange: *Exchange, status: u16) void {
    assert(status >= 100 and status <= 599); // The response parser refuses anything else.
    const class = status / 100 - 1;
    exchange.localPool().stats.backend_responses[exchange.attempt.backend_index][class].add(1);
}
