//! The tries of an exchange (Exchange.zig) on its pool's backends: a lease taken (a pooled
//! connection, a new one, or a stream on a shared HTTP/2 connection), the request's head and
//! body sent through the try's codec (upstream_http1.zig), and what a failure comes to: another
//! backend when the pool retries it and the request can be sent again (replayed from the
//! client's buffer, or re-read from a handler's), else the failure answered; each try's outcome
//! reported to the pool's health once; and the try's deadlines (connect, response, each gap in
//! the body), with the retry a response timeout may take. The exchange's lifecycle, total
//! deadline, relay and end stay where they are; the calls others make are declared in
//! Exchange.zig.
const std = @import("std");
const assert = std.debug.assert;

const Failure = @import("failure.zig").Failure;
const Health = @import("../health/Health.zig");
const Http2Try = @import("Http2Try.zig");
const handler_target = @import("handler_target.zig");
const upstream_http1 = @import("upstream_http1.zig");
const Exchange = @import("Exchange.zig");
const TimerQueue = @import("../loop/loop.zig").TimerQueue;

/// Takes a lease on a backend and reaches it: a pooled idle connection if one exists, else a
/// new one. A retry has been reserved (`LocalPool.reserveRetry`) before it comes here again.
pub fn connectUpstream(exchange: *Exchange) void {
    assert(exchange.state == .upstream);
    assert(exchange.attempt.connection == null and !exchange.attempt.leased);
    assert(exchange.pending_ops == 0);
    assert(!exchange.attempt.timer.isArmed());
    const pool = exchange.localPool();
    const first = exchange.tried.count == 0;
    if (first) exchange.log.upstream_started_ns = exchange.loop().now();
    const acquired = pool.acquire(&exchange.tried, .{
        .key = exchange.key,
        .preferred = exchange.preferred,
        .pooled = mayReuse(exchange) and pool.config.send_proxy == .off,
        .multiplexed = pool.config.protocol.multiplexed(),
    }, exchange.loop().now());
    const lease = switch (acquired) {
        .lease => |lease| lease,
        .member => |index| {
            // A stream on a connection the pool's tries share (Http2Try.zig).
            startTry(exchange, first, index);
            exchange.attempt.leased = true;
            exchange.attempt.state = .connecting;
            exchange.rearmAttemptTimer();
            return Http2Try.start(exchange, index);
        },
        .overloaded => return exchange.fail(.overloaded),
        .none_available, .at_capacity => {
            // On a retry, the failure that made it is the one to answer with.
            if (first) exchange.last_failure = if (acquired == .at_capacity)
                .backends_at_capacity
            else if (pool.table.members_count == 0)
                .no_members
            else
                .no_backend_available;
            return exchange.fail(exchange.last_failure);
        },
    };
    startTry(exchange, first, lease.backend);
    exchange.attempt.leased = true;
    exchange.attempt.connection = lease.connection;
    if (lease.fresh) return upstream_http1.connect(exchange);
    if (lease.connection.tls != null and !upstream_http1.acquireTls(exchange)) return exchange.fail(.overloaded);
    upstream_http1.sendHead(exchange);
}

/// A try's state, fresh, on backend `index`. The first try's is the one `open` made, so it is
/// not written again (the attempt is a third of the slot); a retry's is made anew.
fn startTry(exchange: *Exchange, first: bool, index: u16) void {
    const attempt = &exchange.attempt;
    if (first) {
        assert(attempt.state == .connecting and attempt.connection == null and !attempt.leased);
        assert(attempt.received == 0 and attempt.head_sent == 0 and !attempt.reported);
        attempt.backend_index = index;
        return;
    }
    attempt.reset(index, exchange.response_fields, exchange.proxy.responseLimits());
}

/// Whether the request may go on a pooled idle connection. A backend may close an idle
/// connection just as a request is sent on it (its keep-alive timeout: uvicorn's is 5 s), and
/// then nobody can know whether the request was processed. An idempotent request without a
/// body is simply sent again (`upstreamFailed`). Another one is closed to its client
/// unanswered, as the backend closed it to sluice, so that the client, which sent it on a
/// connection it had reused, decides whether to send it again, as it would have talking to
/// the backend itself; but a client's first request on a connection cannot be treated so (the
/// client never reused anything), so it goes on a connection of its own. HAProxy's
/// `http-reuse safe`, its default, works the same way.
fn mayReuse(exchange: *const Exchange) bool {
    if (exchange.downstream.client().reused) return true;
    return exchange.request.method.isIdempotent() and exchange.request_head.body == .none;
}

/// A multiplexed try could not be attached to a connection (no slot, socket or memory, or the
/// member is at its connection cap): its lease ends and the exchange fails as a fresh
/// connection's would.
pub fn h2Unavailable(exchange: *Exchange, at_cap: bool) void {
    endTry(exchange);
    if (!at_cap) return exchange.fail(.overloaded);
    exchange.last_failure = .backends_at_capacity;
    exchange.fail(exchange.last_failure);
}

/// The connection could not be made (refused, timed out, or its TLS handshake failed).
/// Nothing reached the backend, so trying another one is always safe.
pub fn connectFailed(exchange: *Exchange, failure: Failure) void {
    assert(exchange.attempt.state == .connecting or exchange.attempt.state == .handshaking);
    exchange.last_failure = failure;
    exchange.localPool().stats.upstream_connect_failures.add(1);
    exchange.report(.connect);
    upstream_http1.drop(exchange);
    endTry(exchange);
    const retry_on = exchange.localPool().config.retry.on;
    if (!retry_on.connect or !exchange.reserveRetry()) return exchange.fail(exchange.last_failure);
    connectUpstream(exchange);
}

/// No memory or buffer for the try (the worker's TLS memory ran out): a 503, and the backend
/// is not blamed.
pub fn failOverloaded(exchange: *Exchange) void {
    exchange.fail(.overloaded);
}

/// A window of request body bytes from the downstream (framing included, as the client sent
/// it: the head forwarded says the same framing). `last`: it ends the body.
pub fn sendRequestBody(exchange: *Exchange, window: []const u8, last: bool) void {
    if (exchange.state == .body) return handler_target.keepBody(exchange, last);
    if (exchange.state != .upstream) return handler_target.gatherWindow(exchange, window, last);
    assert(!exchange.request_done);
    upstream_http1.sendBody(exchange, window, last);
}

/// The request head is out (`upstream_http1`): the body follows, read from the client only now.
pub fn requestHeadSent(exchange: *Exchange) void {
    if (!exchange.request_done) exchange.downstream.pullRequestBody();
}

/// A request body window is out (`upstream_http1`); `last`: the body is whole.
pub fn requestWindowSent(exchange: *Exchange, last: bool) void {
    if (!last) return exchange.downstream.requestBodySent(); // More comes.
    exchange.request_done = true;
    exchange.rearmAttemptTimer();
    exchange.downstream.requestBodySent();
    exchange.maybeFinish();
}

/// The backend failed before any byte of its response reached the client: it reset or
/// closed the connection, sent a malformed head, or timed out. On a reused connection a reset
/// before any response byte is usually the backend closing an idle connection as we sent on
/// it (the stale keep-alive race): that is not the backend's fault and is retried once on a
/// fresh connection to the same backend. Otherwise the failure counts against the backend,
/// and the request goes to another one when the pool retries this kind and replaying it is
/// safe (`replayable`).
pub fn upstreamFailed(exchange: *Exchange, outcome: Health.Outcome, failure: Failure) void {
    const attempt = &exchange.attempt;
    // A shared HTTP/2 connection has no stale race: a stream the backend did not take is
    // refused, never half-sent.
    const reused = if (attempt.connection) |connection| connection.reused else false;
    assert(exchange.response == .none);
    exchange.last_failure = failure;
    // A response byte means the backend took the request: not a stale connection, and not
    // replayed (a malformed or cut-off response is the backend's answer, not a lost request).
    const response_arrived = attempt.received > 0;
    const stale = outcome == .reset and reused and !exchange.retried_stale and !response_arrived;
    // A stream the backend refused (RST_STREAM with REFUSED_STREAM, or above the last stream
    // its GOAWAY took) was not processed (RFC 9113 §8.7): sent again once, whatever its method.
    const stream_refused = if (attempt.h2) |stream| stream.refused() else false;
    const unprocessed = stream_refused and !exchange.retried_stale and !response_arrived;
    if (!stale and !unprocessed) exchange.report(outcome);
    if (response_arrived) return exchange.failMidExchange(failure);
    if (unprocessed and resendable(exchange)) {
        exchange.retried_stale = true;
        exchange.localPool().stats.upstream_stale_retries.add(1);
        return replayStream(exchange);
    }
    if (!exchange.replayable()) {
        const client_may_retry = exchange.downstream.client().reused;
        if (stale and client_may_retry and !exchange.interim_relayed) return closeUnanswered(exchange);
        return exchange.failMidExchange(failure);
    }
    if (stale) {
        exchange.retried_stale = true;
        exchange.localPool().stats.upstream_stale_retries.add(1);
        return replayOn(exchange, attempt.backend_index);
    }
    if (!outcome.isIn(exchange.localPool().config.retry.on)) return exchange.failMidExchange(failure);
    if (!exchange.reserveRetry()) return exchange.failMidExchange(failure);
    exchange.retryElsewhere();
}

/// The stale keep-alive race on a request that cannot be sent again (`mayReuse`): the client
/// connection closes with no response, as the backend's did, and the client (which reused its
/// connection) may send the request again. Logged (status 499, as any exchange that ends
/// without a response) and counted.
fn closeUnanswered(exchange: *Exchange) void {
    assert(exchange.downstream.client().reused);
    assert(exchange.response == .none);
    exchange.localPool().stats.upstream_stale_closes.add(1);
    exchange.log.end_reason = "upstream_closed_reused_connection";
    exchange.attempt.reusable = false;
    exchange.abortWith(null);
}

/// Sending the request again is safe: its method is idempotent (RFC 9110 §9.2.2), nothing of
/// a response was relayed, every body byte sent can be sent again (the downstream still has
/// it), and no operation is in flight.
pub fn replayable(exchange: *const Exchange) bool {
    return exchange.request.method.isIdempotent() and resendable(exchange);
}

/// Sending the request again is possible: nothing of a response was relayed, every body byte
/// sent can be sent again, and no operation is in flight.
fn resendable(exchange: *const Exchange) bool {
    return exchange.response == .none and !exchange.interim_relayed and
        exchange.downstream.requestBodyReplayable() and exchange.pending_ops == 0;
}

pub fn reserveRetry(exchange: *Exchange) bool {
    return exchange.localPool().reserveRetry(&exchange.tried, exchange.loop().now());
}

/// Sends the request to another backend, the retry already reserved.
pub fn retryElsewhere(exchange: *Exchange) void {
    upstream_http1.drop(exchange);
    endTry(exchange);
    rewindRequest(exchange);
    connectUpstream(exchange);
}

/// Sends the request again as a new stream to the same member, within the same lease (the
/// refused stream's connection takes no new one: another is opened if it said GOAWAY).
fn replayStream(exchange: *Exchange) void {
    const index = exchange.attempt.backend_index;
    restartTry(exchange, index);
    exchange.attempt.state = .connecting;
    exchange.rearmAttemptTimer();
    Http2Try.start(exchange, index);
}

/// The try starts over on `index` with nothing of it kept but its lease: it is the same try,
/// on a new connection or stream.
fn restartTry(exchange: *Exchange, index: u16) void {
    upstream_http1.drop(exchange);
    rewindRequest(exchange);
    assert(exchange.attempt.leased);
    exchange.attempt.reset(index, exchange.response_fields, exchange.proxy.responseLimits());
    exchange.attempt.leased = true;
}

/// Sends the request again to the same backend on a fresh connection (the stale race).
fn replayOn(exchange: *Exchange, index: u16) void {
    restartTry(exchange, index);
    exchange.attempt.connection = exchange.localPool().reconnect(index) catch |err| switch (err) {
        error.NoCapacity, error.SocketFailed => return exchange.fail(.overloaded),
        error.AtBackendCap => {
            // Another worker took the last connection this backend may have.
            exchange.last_failure = .backends_at_capacity;
            endTry(exchange);
            return connectUpstream(exchange);
        },
    };
    upstream_http1.connect(exchange);
}

/// Puts the request back as it was before its first try: head composed again (the buffer
/// holds a response now), body from its first byte.
fn rewindRequest(exchange: *Exchange) void {
    assert(exchange.attempt.connection == null);
    assert(exchange.pending_ops == 0);
    if (exchange.head_copy) |copy| {
        @memcpy(exchange.ubuf.?[0..exchange.upstream_head_len], copy[0..exchange.upstream_head_len]);
    } else {
        if (!exchange.composeUpstreamHead(.{})) unreachable; // It fitted before; the head is unchanged.
    }
    const head_body = exchange.request_head.body;
    exchange.request_done = head_body == .none or head_body == .close_delimited;
    exchange.downstream.rewindRequestBody();
}

/// The try's lease is over (failed over, or the exchange ends), its connection closed first
/// if it still has one (`upstream_http1.drop`).
pub fn endTry(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    if (!attempt.leased) return;
    assert(attempt.connection == null);
    attempt.leased = false;
    exchange.localPool().release(attempt.backend_index, null, .close);
}

/// Tells the pool's health how this try went, once per try: a failure when it happens, a
/// success (or a 5xx) when the response is complete, so a backend that breaks off its
/// responses half-way counts as failing.
pub fn report(exchange: *Exchange, outcome: Health.Outcome) void {
    const attempt = &exchange.attempt;
    if (attempt.reported) return;
    attempt.reported = true;
    exchange.localPool().report(attempt.backend_index, outcome, exchange.loop().now());
}

// ---------------------------------------------------------------------------------------------
// The try's deadlines: connect, response, and each gap in the body

/// Arms the try's one timer on `queue` (connect, response or body gap).
fn armAttemptTimer(exchange: *Exchange, queue: *TimerQueue) void {
    exchange.loop().timerArm(queue, &exchange.attempt.timer, Exchange, exchange, attemptTimerCallback);
}

/// The try's deadline after progress, from where it is: the backend has the response timeout
/// until its head arrives (and while it reads the request body), the body timeout for each
/// gap in its body. While only the client is being waited for (its reading of the response),
/// no upstream deadline runs: the downstream's does.
pub fn rearmAttemptTimer(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    const queues = exchange.localPool().queues;
    switch (attempt.state) {
        .connecting, .handshaking => armAttemptTimer(exchange, queues.connect),
        .sending_head, .awaiting_response, .relaying_interim => armAttemptTimer(exchange, queues.response),
        .relaying_body => if (upstream_http1.receiving(exchange))
            armAttemptTimer(exchange, queues.body)
        else if (attempt.send.isPending())
            armAttemptTimer(exchange, queues.response)
        else
            exchange.loop().timerCancel(&attempt.timer),
        .cancelling_for_retry, .tunnel, .done => exchange.loop().timerCancel(&attempt.timer),
    }
}

fn attemptTimerCallback(exchange: *Exchange) void {
    assert(exchange.state == .upstream);
    const attempt = &exchange.attempt;
    switch (attempt.state) {
        .connecting, .handshaking => {
            // The connect (or handshake) callback sees the flag and moves on to the next
            // backend.
            attempt.connect_timed_out = true;
            upstream_http1.cancel(exchange);
            rearmAttemptTimer(exchange); // Bounds that wait too.
        },
        .sending_head, .awaiting_response, .relaying_interim => responseTimedOut(exchange),
        .relaying_body => {
            exchange.report(.timeout);
            exchange.failMidExchange(.upstream_response_timeout);
        },
        .cancelling_for_retry, .tunnel, .done => unreachable, // No attempt timer runs then.
    }
}

/// The response timed out before its head arrived. When the pool retries timeouts, the
/// request is replayable and only the head's receive is in flight, that receive is cancelled
/// and its callback sends the request to another backend.
fn responseTimedOut(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    exchange.last_failure = .upstream_response_timeout;
    exchange.report(.timeout);
    const only_receiving = exchange.pending_ops == 1 and upstream_http1.receiving(exchange);
    const retry = exchange.localPool().config.retry.on.timeout and exchange.request_done and
        exchange.request.method.isIdempotent() and !exchange.interim_relayed and
        exchange.downstream.requestBodyReplayable() and only_receiving and attempt.received == 0;
    if (!retry or !exchange.reserveRetry()) return exchange.failMidExchange(.upstream_response_timeout);
    assert(attempt.state == .awaiting_response); // Only its head's receive is in flight.
    attempt.state = .cancelling_for_retry;
    upstream_http1.cancelRecv(exchange);
}

/// The head's receive that `responseTimedOut` cancelled has called back: on to another backend,
/// unless a byte of the response had `arrived` before the cancel (then the request is not sent
/// again, and it came after the deadline: a timeout all the same).
pub fn receiveCancelled(exchange: *Exchange, arrived: bool) void {
    if (!arrived) return exchange.retryElsewhere();
    exchange.failMidExchange(.upstream_response_timeout);
}
