//! One request and its response: the target its route chose (a pool, a response sluice makes
//! itself, a handler), its tries on the pool's backends (one `Attempt` each), the relay of the
//! response back to the client, and its deadlines, failures and end.
//!
//! The seam: an exchange talks to the client only through its `Downstream` (an HTTP/1.1
//! connection, an HTTP/2 stream, or a handler's `fetch`). The downstream hands it a
//! protocol-neutral request head and request body windows; it hands the downstream a parsed
//! response head, body windows and tunnel bytes, and each side tells the other when a window
//! has gone, which is the backpressure both ways. Nothing here knows how the client's bytes
//! are framed on the wire.
//!
//! The exchange is this file and six beside it, each a part of its work on the same slot:
//! `routing.zig` (the route, its settings and policy, admission, affinity), `tries.zig`
//! (leases, the request sent, retries, health reports, the try's deadlines), `relay.zig` (the
//! response on its way to the client, compression included), `tunnel.zig` (after a 101),
//! `handler_target.zig` (a handler's call) and `accounting.zig` (the access-log line,
//! latency, counters and warnings it leaves); the calls other layers make into them are
//! declared here, so they all reach an exchange as `exchange.name(...)`.
//!
//! Lifetime: an exchange is a slot of its worker (`Proxy.acquireExchange`), taken when a
//! request head starts to arrive and given back when it ends. Its upstream operations are
//! counted in `pending_ops` and every callback starts with `opDone`; `abort` cancels them and
//! the slot is finalized (upstream connection, buffer and generation released) only when the
//! count is zero, after which the downstream is told (`Downstream.exchangeReleased`).
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const sys = @import("../stdx/sys.zig");
const http = @import("../http/http.zig");
const Config = @import("../config/Config.zig");
const LocalPool = @import("../upstream/LocalPool.zig");
const rewrite = @import("rewrite.zig");
const local = @import("local.zig");
const Failure = @import("failure.zig").Failure;
const Proxy = @import("Proxy.zig");
const Attempt = @import("Attempt.zig");
const Downstream = @import("downstream.zig").Downstream;
const tls = @import("../tls/tls.zig");
const Handler = @import("../handler/Handler.zig");
const tunnel = @import("tunnel.zig");
const handler_target = @import("handler_target.zig");
const upstream_http1 = @import("upstream_http1.zig");
const relay_ns = @import("relay.zig");
const tries = @import("tries.zig");
const routing = @import("routing.zig");
const accounting = @import("accounting.zig");
const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const compression = @import("../policy/compression.zig");
const Compressor = @import("Compressor.zig");
const Subrequest = @import("Subrequest.zig");

const Exchange = @This();

proxy: *Proxy,
/// The client side of the seam (see the file comment).
downstream: Downstream,
state: State = .free,
/// Upstream operations submitted and not yet called back.
pending_ops: u8 = 0,
/// The generation hold (Proxy.holdCurrent) while the exchange runs.
hold: ?u8 = null,
/// The HTTP/1.1 downstream's parser of this request's head (Connection.zig). It lives in the
/// exchange slot, not the connection, so that an idle connection holds none; the exchange
/// itself reads only `request_head`.
request_parser: http.RequestParser,
/// The request head, whichever protocol brought it (http/Request.zig): set by `begin`, its
/// strings slices of the downstream's buffer, which keeps them in place until the exchange
/// ends.
request_head: *const http.Request = undefined,
request: Request = .{},
/// The target: a pool, or a response sluice makes itself.
target: Target = .none,
/// Where an upgraded connection's idle timer goes (the route's tunnel idle timeout).
tunnel_queue: ?*TimerQueue = null,
/// The request body limit in bytes; 0: none.
body_bytes_max: u64 = 0,
/// The route's header rules and request id as this exchange applies them, in the worker's
/// slot beside this one (policy/HeaderPolicy.zig); null: no rules anywhere.
policy: ?*HeaderPolicy.Applied = null,
/// The compression settings of the request's route; null: off for it.
compression_settings: ?*const Config.Compression = null,
/// What happens to the response body's coding on its way to the client.
response_encoding: Encoding = .identity,
/// Where the request may go: `hash`'s key and the backend a `sticky` cookie names.
key: u64 = 0,
preferred: ?u16 = null,
/// Backends tried so far (`LocalPool.acquire` adds each), and the failure to answer with if
/// no try succeeds.
tried: LocalPool.Tried = .{},
last_failure: Failure = .upstream_refused,
/// One stale-connection retry per exchange (see `upstreamFailed`).
retried_stale: bool = false,
/// A 1xx went to the client: the request can no longer be replayed.
interim_relayed: bool = false,
/// A chunked response's trailer section goes to the client (it asked with `TE: trailers`);
/// else only its final CRLF does (`frameResponseBody`).
relay_trailers: bool = false,
/// The request body has been sent whole to the current try.
request_done: bool = false,
/// While the response body is spliced (`spliceBody`): this worker's pipe it moves through,
/// and whether bytes in it have not all gone to the client yet (then it is closed, not reused).
pipe: ?*const Loop.Pipe = null,
pipe_loaded: bool = false,
/// Upstream-side buffer: the composed request head, then the response.
ubuf: ?[]u8 = null,
upstream_head_len: u32 = 0,
/// A handler's `Response.proxy`: the composed head, kept for a retry (its overrides lived in
/// the handler's arena, which the handler's next call reuses, so it cannot be composed again).
head_copy: ?[]u8 = null,
response: ResponseState = .none,
/// The try under way.
attempt: Attempt,
response_fields: []http.Header,
/// The pool's total timeout for the exchange, across its retries (armed only when set); while
/// a handler waits suspended, its wake-up (the two never run at once).
total_timer: Timer = .{},
/// The handler's suspended call, while the exchange is `suspended` (handler_target.zig).
handler_ticket: ?Handler.Ticket = null,
/// The handler's fetches this exchange started and has not settled (handler_target.zig).
fetches: ?*Subrequest = null,
/// A handler's answer larger than `ubuf`: the body bytes not sent yet, in the engine slot it
/// keeps until they are (handler_target.zig; the record is in that slot's heap).
handler_unsent: ?*Handler.Kept = null,
/// The request body being read for the handler's suspended call (handler_target.zig; the
/// record is in the request's heap).
body_read: ?*handler_target.BodyRead = null,
/// A fetched body the handler returned, relayed from its sub-exchange (handler_target.zig).
relay: ?*Subrequest = null,
log: Log = .{},

pub const State = enum {
    free,
    /// A request head is arriving (the downstream parses it).
    head,
    /// Routed to a pool: tries, relay, or a tunnel.
    upstream,
    /// Routed to a handler: its request body is being received whole into the downstream's
    /// buffer before the handler runs.
    body,
    /// Answered by sluice itself (a route's response, or a handler's); the downstream sends it.
    local,
    /// A handler's call waits on a timer (its engine keeps the request's state): the exchange
    /// holds no buffer of its own, only a wake-up timer.
    suspended,
    /// Failed or aborted: waiting for pending operations before releasing.
    ending,
};

pub const Target = union(enum) {
    none,
    pool: *LocalPool,
    /// A route's fixed response or redirect, or (null) the 404 for no route.
    local: ?*const Config.Route,
    /// A JavaScript handler: this worker's engine for it.
    handler: *Handler,
};

/// What the exchange keeps of the parsed request head.
pub const Request = struct {
    method: http.Method = .get,
    version: http.Version = .http11,
    keep_alive: bool = false,
    upgrade_allowed: bool = false,
    /// Bytes of the head in the downstream's buffer, from its start.
    head_len: u32 = 0,
};

pub const ResponseState = enum {
    none,
    /// A head is on its way to the client (interim or final): nothing can be replayed.
    started,
    /// The last body window went to the downstream; the exchange ends when it is sent.
    complete,
    /// The downstream sent it: only now may the exchange end (the request side may finish
    /// first, while the last window is still being written from the exchange's buffer or pipe).
    sent,
};

/// A response's coding on its way to the client (policy/compression.zig decides it when the
/// head arrives).
pub const Encoding = union(enum) {
    /// As the backend sent it.
    identity,
    /// As sent, with `Vary: Accept-Encoding` added.
    vary_only,
    /// Gzipped in a compressor slot of the worker (`Proxy.compressors`).
    gzip: *Compressor,
};

/// For the access log and the latency histogram.
pub const Log = struct {
    /// The loop's clock when the head was parsed; 0 once recorded.
    started_ns: u64 = 0,
    upstream_started_ns: u64 = 0,
    status: u16 = 0,
    bytes_sent: u64 = 0,
    request_bytes: u64 = 0,
    method: []const u8 = "",
    target: []const u8 = "",
    referer: []const u8 = "",
    user_agent: []const u8 = "",
    /// Why sluice ended the exchange itself (a `Failure`'s name), or empty.
    end_reason: []const u8 = "",
    latency_observed: bool = false,
    /// Why the backend's response head was refused, if it was (for the warning line).
    response_reject: ?http.Reject = null,
    head_rewrite_failed: bool = false,
};

/// A response head on its way to the client: parsed, and where its bytes are in `buffer`
/// (the downstream rewrites it there for its own framing).
pub const ResponseView = struct {
    head: *const http.ResponseParser.Head,
    buffer: []u8,
    head_start: u32,
    head_len: u32,
    /// Bytes received from `head_start`: the head, then `rest_len` more.
    received: u32,
    /// Of the bytes after the head, the first `body_len` belong to the response body (the
    /// rest is the next response after a 1xx, or a tunnel's first bytes for a 101).
    body_len: u32,
    body_last: bool,
    /// The response ends with the connection (the downstream must close the client after).
    close_delimited: bool,
    /// The route's response header rules (the exchange's); null: none.
    rules: ?*const rewrite.Rules = null,
    /// What compression changes in the head (Content-Encoding, Vary, ETag); null: nothing.
    change: ?*const compression.HeadChange = null,
};

/// A fresh exchange in place, in the slot's field arrays. Field by field into place: a call's
/// result would be built on the stack and copied, a few kilobytes per request.
pub fn reset(exchange: *Exchange, proxy: *Proxy, downstream: Downstream, request_fields: []http.Header, response_fields: []http.Header) void {
    exchange.* = .{
        .proxy = proxy,
        .downstream = downstream,
        .request_parser = .init(request_fields, proxy.httpLimits()),
        .response_fields = response_fields,
        .attempt = .{ .backend_index = 0, .response_parser = .init(response_fields, proxy.responseLimits()) },
    };
}

/// A request head begins to arrive on `downstream`.
pub fn open(exchange: *Exchange, downstream: Downstream) void {
    assert(exchange.state == .free);
    assert(exchange.pending_ops == 0);
    assert(exchange.hold == null and exchange.ubuf == null and exchange.pipe == null);
    assert(exchange.head_copy == null and exchange.handler_ticket == null);
    assert(exchange.fetches == null and exchange.handler_unsent == null and exchange.body_read == null);
    assert(exchange.response_encoding == .identity);
    assert(!exchange.total_timer.isArmed() and !exchange.attempt.timer.isArmed());
    exchange.reset(exchange.proxy, downstream, exchange.request_parser.scanner.headers_buffer, exchange.response_fields);
    exchange.state = .head;
}

/// The bytes that began to arrive were not an HTTP/1.1 head after all (HTTP/2's preface): the
/// slot goes back as it was taken.
pub fn cancelOpen(exchange: *Exchange) void {
    assert(exchange.state == .head);
    exchange.state = .free;
}

// ---------------------------------------------------------------------------------------------
// The request: routed, then sent on

/// The downstream parsed a request head (`head_len` bytes on the wire). Routes it and starts
/// the first try, or the response sluice makes itself.
pub fn begin(exchange: *Exchange, head: *const http.Request, head_len: u32) void {
    assert(exchange.state == .head);
    exchange.request_head = head;
    const proxy = exchange.proxy;
    exchange.request = .{
        .method = head.method,
        .version = head.version,
        .keep_alive = head.keep_alive,
        .upgrade_allowed = rewrite.upgradeAllowed(head),
        .head_len = head_len,
    };
    exchange.log.started_ns = exchange.loop().now();
    exchange.log.request_bytes = head_len;
    assert(exchange.log.started_ns > 0);
    if (proxy.access_log != null) {
        exchange.log.method = head.method_text;
        exchange.log.target = head.target;
        exchange.log.referer = head.get("referer") orelse "";
        exchange.log.user_agent = head.get("user-agent") orelse "";
    }
    if (head.method == .connect) return exchange.fail(.method_not_allowed);
    // The host forwarded, whichever field it came from (an absolute-form target's authority
    // overrides Host): bounded, as X-Forwarded-Host copies it.
    if (rewrite.requestHost(head)) |host| {
        if (host.len > rewrite.host_bytes_max) return exchange.fail(.host_too_long);
    }
    assert(exchange.hold == null);
    exchange.hold = proxy.holdCurrent();
    if (routing.route(exchange)) |refusal| return exchange.fail(refusal);
    switch (exchange.target) {
        .none => unreachable, // `route` sets one.
        .local => |chosen| return exchange.respondLocal(chosen),
        .handler => |handler| return handler_target.start(exchange, handler),
        .pool => {},
    }
    if (exchange.policy) |applied| if (applied.path_refused) return exchange.fail(.{ .bad_request = .bad_target });
    if (!exchange.forward(.{})) return exchange.fail(.head_too_large_to_forward);
}

/// A handler's fetch (Subrequest.zig) starts on `pool`: no routing or admission (the client's
/// request had both), the parent's generation held (`hold`), then on as a route's request
/// to that pool goes, with its balancing, retries and timeouts.
pub fn beginSubrequest(exchange: *Exchange, head: *const http.Request, pool: *LocalPool, hold: u8) void {
    assert(exchange.state == .head);
    assert(exchange.downstream == .fetch);
    assert(exchange.hold == null);
    exchange.request_head = head;
    exchange.request = .{ .method = head.method, .version = head.version, .keep_alive = true };
    exchange.log.started_ns = exchange.loop().now();
    if (exchange.proxy.access_log != null) {
        exchange.log.method = head.method_text;
        exchange.log.target = head.target;
    }
    exchange.hold = hold;
    exchange.target = .{ .pool = pool };
    if (!exchange.forward(.{})) return exchange.fail(.head_too_large_to_forward);
}

/// Sends the request on to the target's pool (a route's, or a handler's `Response.proxy`),
/// its head rewritten with `overrides`: false when that head does not fit `ubuf` (the caller
/// says what that is), true when the exchange is under way or has failed otherwise.
pub fn forward(exchange: *Exchange, overrides: rewrite.Overrides) bool {
    if (exchange.bodyOverLimit()) {
        exchange.fail(.request_body_too_large);
        return true;
    }
    if (exchange.downstream.bufferedBodyReject()) |reject| {
        exchange.fail(.{ .bad_request_body = reject });
        return true;
    }
    const pool = exchange.localPool();
    pool.stats.requests.add(1);
    pool.retry_budget.deposit();
    routing.findAffinity(exchange);
    // A handler's exchange has its buffer already.
    if (exchange.ubuf == null) exchange.ubuf = exchange.proxy.buffers.acquire() orelse {
        exchange.fail(.overloaded);
        return true;
    };
    if (!exchange.composeUpstreamHead(overrides)) return false;
    exchange.state = .upstream;
    if (pool.config.total_timeout_ns > 0) {
        exchange.loop().timerArm(pool.queues.total, &exchange.total_timer, Exchange, exchange, totalTimerCallback);
    }
    exchange.request_done = exchange.request_head.body == .none or
        exchange.request_head.body == .close_delimited;
    exchange.connectUpstream();
    return true;
}

/// The target the pool sees instead of the client's, if the route rewrites it.
pub fn pathRewrite(exchange: *const Exchange) ?*const HeaderPolicy.PathRewrite {
    const applied = exchange.policy orelse return null;
    return if (applied.path) |*path| path else null;
}

/// This exchange's rules for one direction, if it has any.
pub fn rulesFor(exchange: *const Exchange, comptime direction: enum { request, response }) ?*const rewrite.Rules {
    const applied = exchange.policy orelse return null;
    return if (@field(applied, @tagName(direction))) |*rules| rules else null;
}

/// A declared length over the limit is refused before anything is sent; a chunked body is
/// counted as it streams (the downstream checks it against `body_bytes_max`).
pub fn bodyOverLimit(exchange: *const Exchange) bool {
    const max = exchange.body_bytes_max;
    if (max == 0) return false;
    return switch (exchange.request_head.body) {
        .content_length => |length| length > max,
        .none, .chunked, .close_delimited => false,
    };
}

pub fn composeUpstreamHead(exchange: *Exchange, overrides: rewrite.Overrides) bool {
    const client = exchange.downstream.client();
    const peer = &exchange.proxy.peer_scratch;
    const forwarding: rewrite.Forwarding = .{
        .client_ip = client.ip,
        .trusted = client.trusted,
        .allow_underscores = exchange.proxy.generation.config.header_underscores == .allow,
        .proto = if (client.tls) "https" else "http",
        .certificate = exchange.downstream.certificateFields(peer),
        .rules = exchange.rulesFor(.request),
        .path = exchange.pathRewrite(),
    };
    const head = exchange.request_head;
    const composed = rewrite.composeRequest(exchange.ubuf.?, head, forwarding, overrides) catch return false;
    exchange.upstream_head_len = @intCast(composed.len);
    if (exchange.head_copy) |copy| @memcpy(copy[0..composed.len], exchange.ubuf.?[0..composed.len]);
    if (composed.underscore_fields_dropped > 0) {
        exchange.proxy.noteUnderscoreFields(composed.underscore_fields_dropped, client.ip);
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Responses sluice makes itself

/// A route's own response (or, with no route, the 404), composed into `ubuf` and handed to
/// the downstream to send.
fn respondLocal(exchange: *Exchange, chosen: ?*const Config.Route) void {
    const proxy = exchange.proxy;
    proxy.stats.local_responses.add(1);
    exchange.state = .local;
    const ubuf = proxy.buffers.acquire() orelse return exchange.fail(.overloaded);
    exchange.ubuf = ubuf;
    const close = exchange.downstream.closesAfterLocal(exchange.request.keep_alive);
    const head = exchange.request_head;
    const target = rewrite.originForm(head);
    // RFC 9112 §3.2.2: an absolute-form target's authority names the origin, not Host.
    const host = target.host orelse head.host;
    if (chosen) |r| if (r.scheme.len > 0 and host == null) return exchange.fail(.redirect_without_host);
    const response = local.compose(ubuf[http.LocalResponse.head_room..], chosen, .{
        .target = target,
        .host = host,
        .head_only = exchange.request.method == .head,
    }) catch return exchange.fail(.local_response_too_large);
    exchange.log.status = response.status;
    exchange.response = .complete;
    exchange.downstream.sendLocal(.{ .response = response, .buffer = ubuf, .more = false, .close_after = close });
}

/// Both halves are done: the upstream connection goes back to its pool (or is closed), and
/// the downstream goes on with its next request.
pub fn maybeFinish(exchange: *Exchange) void {
    if (exchange.response != .sent) return;
    if (exchange.state == .upstream and !exchange.request_done) return;
    assert(exchange.pending_ops == 0);
    if (exchange.state == .upstream) {
        exchange.report(if (exchange.attempt.server_error) .status_5xx else .success);
        upstream_http1.finish(exchange);
    }
    accounting.recordDuration(exchange);
    exchange.release();
    exchange.downstream.exchangeFinished();
}

// ---------------------------------------------------------------------------------------------
// Failure, timers and the end

/// The exchange failed: the downstream answers with the failure's response if nothing of a
/// response reached the client, else closes; the exchange lets go of everything.
pub fn fail(exchange: *Exchange, failure: Failure) void {
    exchange.proxy.countFailure(exchange.poolOrNull(), failure, exchange.response == .none);
    exchange.log.end_reason = failure.name();
    if (failure.status() == 502 or failure.status() == 504) accounting.warnFailure(exchange, failure);
    exchange.last_failure = failure;
    exchange.abortWith(failure);
}

/// A failure after the request head went upstream: same, and that connection is not reused.
pub fn failMidExchange(exchange: *Exchange, failure: Failure) void {
    exchange.attempt.reusable = false;
    exchange.fail(failure);
}

/// Ends the exchange early: the downstream is told (`failure`: answer it if nothing was sent,
/// null: close), then pending operations are cancelled and the slot is released when they
/// have called back.
pub fn abortWith(exchange: *Exchange, failure: ?Failure) void {
    if (exchange.state == .ending or exchange.state == .free) return;
    if (failure) |f| {
        if (exchange.response == .none) {
            exchange.log.status = f.status();
            exchange.log.bytes_sent = exchange.downstream.errorResponseLen(f);
        }
    }
    accounting.recordDuration(exchange);
    exchange.state = .ending;
    exchange.stopTimers();
    upstream_http1.cancel(exchange);
    exchange.downstream.exchangeFailed(failure, exchange.response != .none);
    if (exchange.pending_ops == 0) exchange.finalize();
}

/// The downstream's watch of the client (while a handler waited) has ended as asked.
pub fn clientWatchStopped(exchange: *Exchange) void {
    handler_target.watchStopped(exchange);
}

/// The downstream is closing (the client went away or timed out): cancel everything.
pub fn abort(exchange: *Exchange) void {
    exchange.attempt.reusable = false;
    if (exchange.state == .ending or exchange.state == .free) return;
    accounting.recordDuration(exchange);
    exchange.state = .ending;
    exchange.stopTimers();
    upstream_http1.cancel(exchange);
    if (exchange.pending_ops == 0) exchange.finalize();
}

/// The downstream refused the request before it reached a target (a malformed head, a head
/// timeout) and answers it with `response_len` bytes: counted and logged with what is known of
/// it. Nothing was taken (no hold, no buffer, no operation), so the slot is free at once.
pub fn refused(exchange: *Exchange, failure: Failure, response_len: usize) void {
    assert(exchange.state == .head);
    exchange.proxy.countFailure(null, failure, true);
    exchange.log.status = failure.status();
    exchange.log.bytes_sent = response_len;
    exchange.log.end_reason = failure.name();
    accounting.logAccess(exchange, 0);
    exchange.state = .free;
}

/// The downstream failed the request itself (a malformed body, a body timeout, too large):
/// counted and logged like any failure; the downstream answers.
pub fn failByDownstream(exchange: *Exchange, failure: Failure) void {
    exchange.proxy.countFailure(exchange.poolOrNull(), failure, exchange.response == .none);
    exchange.log.end_reason = failure.name();
    exchange.attempt.reusable = false;
    if (exchange.response == .none) {
        exchange.log.status = failure.status();
        exchange.log.bytes_sent = exchange.downstream.errorResponseLen(failure);
    }
    exchange.abort();
}

fn stopTimers(exchange: *Exchange) void {
    exchange.loop().timerCancel(&exchange.attempt.timer);
    exchange.loop().timerCancel(&exchange.total_timer);
}

/// Every operation has called back: release what the exchange holds and tell the downstream.
fn finalize(exchange: *Exchange) void {
    assert(exchange.state == .ending);
    assert(exchange.pending_ops == 0);
    upstream_http1.drop(exchange);
    exchange.endTry();
    exchange.release();
    exchange.downstream.exchangeReleased();
}

/// The slot's resources go back; the slot itself is the downstream's to return.
fn release(exchange: *Exchange) void {
    assert(exchange.pending_ops == 0);
    assert(exchange.attempt.connection == null);
    exchange.stopTimers(); // The slot is overwritten when it is taken again.
    // Before the hold: the engine is the held generation's. Fetches first: nothing of theirs
    // may settle into the call once it is abandoned.
    if (exchange.fetches != null) handler_target.detachFetches(exchange);
    if (exchange.handler_ticket != null) handler_target.abandon(exchange);
    if (exchange.handler_unsent != null) handler_target.releaseUnsent(exchange);
    if (exchange.relay != null) handler_target.stopRelay(exchange);
    if (exchange.ubuf) |ubuf| exchange.proxy.buffers.release(ubuf);
    exchange.ubuf = null;
    if (exchange.head_copy) |copy| exchange.proxy.buffers.release(copy);
    exchange.head_copy = null;
    if (exchange.pipe) |pipe| exchange.proxy.pipes.release(exchange.loop(), pipe, !exchange.pipe_loaded);
    exchange.pipe = null;
    exchange.pipe_loaded = false;
    exchange.releaseCompressor();
    if (exchange.hold) |index| exchange.proxy.releaseHold(index);
    exchange.hold = null;
    exchange.state = .free;
}

/// A compressed response's slot goes back, whichever way the exchange ended, and its bytes are
/// counted.
fn releaseCompressor(exchange: *Exchange) void {
    const compressor = switch (exchange.response_encoding) {
        .gzip => |compressor| compressor,
        .identity, .vary_only => {
            exchange.response_encoding = .identity;
            return;
        },
    };
    const stats = &exchange.proxy.stats;
    stats.compression_bytes_in.add(compressor.bytes_in);
    stats.compression_bytes_out.add(compressor.bytes_out);
    exchange.proxy.compressors.release(compressor);
    exchange.response_encoding = .identity;
}

pub const rearmAttemptTimer = tries.rearmAttemptTimer;
pub const receiveCancelled = tries.receiveCancelled;

fn totalTimerCallback(exchange: *Exchange) void {
    assert(exchange.state == .upstream);
    exchange.failMidExchange(.upstream_response_timeout);
}

// ---------------------------------------------------------------------------------------------
// Logs and counters

pub const observeLatency = accounting.observeLatency;
pub const countResponse = accounting.countResponse;

/// Bytes the downstream sent to the client for this exchange, and read from it.
pub fn countSent(exchange: *Exchange, n: usize) void {
    exchange.log.bytes_sent += n;
}

pub fn countReceived(exchange: *Exchange, n: usize) void {
    exchange.log.request_bytes += n;
}

/// The backend of the current or last try, by address; null before any try.
pub fn backendName(exchange: *const Exchange) ?[]const u8 {
    if (exchange.tried.count == 0) return null;
    return exchange.poolOrNullConst().?.backendName(exchange.attempt.backend_index);
}

/// The downstream could not fit the rewritten head in the buffer.
pub fn responseHeadTooLarge(exchange: *Exchange) void {
    exchange.log.head_rewrite_failed = true;
    exchange.response = .none; // Nothing reached the client: the 502 can still be sent.
    exchange.report(.success);
    exchange.failMidExchange(.upstream_head_too_large);
}

// ---------------------------------------------------------------------------------------------
// Operations: each counted (the try's own are upstream_http1's)

pub const RecvCallback = fn (*Exchange, sys.RecvError!usize) void;
pub const SendCallback = fn (*Exchange, sys.SendError!usize) void;

pub fn submit(exchange: *Exchange) void {
    exchange.pending_ops += 1;
    assert(exchange.pending_ops <= 2); // One per completion.
}

/// Every callback starts here. True means the callback must return at once: the exchange is
/// ending (and was finalized if this was its last operation).
pub fn opDone(exchange: *Exchange) bool {
    assert(exchange.pending_ops > 0);
    exchange.pending_ops -= 1;
    switch (exchange.state) {
        .upstream => return false,
        .ending => {
            if (exchange.pending_ops == 0) exchange.finalize();
            return true;
        },
        .free, .head, .body, .local, .suspended => unreachable, // No upstream operation runs then.
    }
}

// The downstream's calls into the two kinds of exchange that have files of their own.
pub const continueSent = handler_target.continueSent;
pub const tunnelToUpstream = tunnel.toUpstream;
pub const tunnelRecv = tunnel.recv;
pub const tunnelClientClosed = tunnel.clientClosed;

// The tries (tries.zig): the calls the codec, the downstreams and the handler make, and the
// exchange's own way in.
pub const connectUpstream = tries.connectUpstream;
pub const h2Unavailable = tries.h2Unavailable;
pub const connectFailed = tries.connectFailed;
pub const failOverloaded = tries.failOverloaded;
pub const sendRequestBody = tries.sendRequestBody;
pub const requestHeadSent = tries.requestHeadSent;
pub const requestWindowSent = tries.requestWindowSent;
pub const upstreamFailed = tries.upstreamFailed;
pub const replayable = tries.replayable;
pub const reserveRetry = tries.reserveRetry;
pub const retryElsewhere = tries.retryElsewhere;
pub const endTry = tries.endTry;
pub const report = tries.report;

// A backend's response on its way to the client (relay.zig): the calls its codec
// (upstream_http1.zig) and the downstreams make.
pub const responseRefused = relay_ns.responseRefused;
pub const responseHead = relay_ns.responseHead;
pub const interimSent = relay_ns.interimSent;
pub const view = relay_ns.view;
pub const responseSent = relay_ns.responseSent;
pub const responseBody = relay_ns.responseBody;
pub const responseStreamEnded = relay_ns.responseStreamEnded;
pub const responseFromPipe = relay_ns.responseFromPipe;
pub const responseBroken = relay_ns.responseBroken;

/// What must hold of a slot between any two callbacks, whatever the exchange is doing: the
/// simulator checks every slot after every step (sim/Simulator.zig). Null when all hold, else
/// the one that does not, named. Cheap, but not free: it is for the simulator and tests only.
pub fn invariants(exchange: *const Exchange) ?[]const u8 {
    const attempt = &exchange.attempt;
    if (exchange.state == .free) {
        if (exchange.pending_ops != 0) return "a free exchange has operations pending";
        if (exchange.hold != null) return "a free exchange holds a generation";
        if (exchange.ubuf != null or exchange.head_copy != null) return "a free exchange holds a buffer";
        if (exchange.pipe != null) return "a free exchange holds a pipe";
        if (exchange.handler_ticket != null or exchange.fetches != null) return "a free exchange holds a handler call";
        if (exchange.handler_unsent != null or exchange.body_read != null or exchange.relay != null) return "a free exchange holds a handler's body";
        if (exchange.response_encoding != .identity) return "a free exchange holds a compressor";
        if (exchange.total_timer.isArmed() or attempt.timer.isArmed()) return "a free exchange has a timer armed";
    }
    if (attempt.connection != null and !attempt.leased) return "an upstream connection without a lease";
    if (attempt.connection != null and attempt.h2 != null) return "a try on a connection of its own and on a stream";
    if (attempt.tls != null and attempt.connection == null) return "TLS buffers without an upstream connection";
    if (attempt.h2 == null and exchange.pending_ops != attempt.pendingOps()) return "pending operations differ from the try's completions";
    if (exchange.pipe_loaded and exchange.pipe == null) return "a loaded pipe the exchange does not hold";
    switch (exchange.state) {
        .upstream => {
            if (exchange.target != .pool) return "upstream without a pool";
            if (exchange.hold == null) return "upstream without a generation hold";
            if (exchange.ubuf == null) return "upstream without its buffer";
        },
        .suspended => if (exchange.handler_ticket == null) return "suspended without a handler call",
        .free, .head, .body, .local, .ending => {},
    }
    if (exchange.state == .free) return null; // Its try's state is the last one's until `open`.
    if (exchange.response != .none and exchange.state == .head) return "a response before the request head";
    // (Not so once ending: a head too large once rewritten takes the response back to none.)
    if (exchange.state == .upstream and attempt.state == .relaying_body and exchange.response == .none) {
        return "a body relayed before its head";
    }
    return null;
}

pub fn loop(exchange: *const Exchange) *Loop {
    return exchange.proxy.loop;
}

/// The pool of the exchange (its route's); only while the target is a pool.
pub fn localPool(exchange: *const Exchange) *LocalPool {
    return exchange.target.pool;
}

pub fn poolOrNull(exchange: *const Exchange) ?*LocalPool {
    return switch (exchange.target) {
        .pool => |p| p,
        .none, .local, .handler => null,
    };
}

fn poolOrNullConst(exchange: *const Exchange) ?*const LocalPool {
    return exchange.poolOrNull();
}
