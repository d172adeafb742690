//! The upstream HTTP/1.1 client that an attempt runs (Attempt.zig): connect, send the composed
//! head and the request body, receive and parse the response head, frame the body, and give
//! the connection back to its pool or close it. The bytes go over a socket, through the TLS
//! codec (UpstreamTls.zig), or over a stream of a shared HTTP/2 connection (Http2Try.zig),
//! which takes the composed head as HTTP/1.1 text, hands its response head over as fields
//! (`recvHead`), and its body as data, or chunked for a client that needs HTTP/1.1 framing:
//! `recv` and `send` choose.
//!
//! What to make of what arrives is the exchange's (Exchange.zig): its lifecycle, its target,
//! its retry policy, its deadlines and the relay to the client. This file calls it back through
//! a few functions, each named for what happened: `requestHeadSent`, `requestWindowSent`,
//! `responseHead`, `responseBody`, `responseFromPipe`, and for the failures `connectFailed`,
//! `upstreamFailed`, `responseRefused`, `responseBroken` and `receiveCancelled`. It never
//! touches the downstream. Its own state is the try's (`exchange.attempt`): a retry starts it
//! afresh.
//!
//! The response arrives in the exchange's upstream buffer `ubuf`, behind `headroom` bytes that
//! the downstream's head rewrite may grow into; body windows are received at the front.
const std = @import("std");
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const http = @import("../http/http.zig");
const proxy_protocol = @import("../policy/proxy_protocol.zig");
const rewrite = @import("rewrite.zig");
const Failure = @import("failure.zig").Failure;
const Exchange = @import("Exchange.zig");
const UpstreamTls = @import("UpstreamTls.zig");
const Http2Try = @import("Http2Try.zig");

pub const headroom = rewrite.response_headroom_bytes;

// ---------------------------------------------------------------------------------------------
// The connection

/// Connects the lease's fresh socket.
pub fn connect(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    assert(attempt.leased);
    attempt.state = .connecting;
    exchange.rearmAttemptTimer();
    exchange.submit();
    const connection = attempt.connection.?;
    // A connect is the socket's first write.
    exchange.loop().connect(&attempt.send, &connection.socket, &connection.address, Exchange, exchange, connected);
}

/// The connect's completion (also a multiplexed try's, once its shared connection is up).
pub fn connected(exchange: *Exchange, result: sys.ConnectError!void) void {
    if (exchange.opDone()) return;
    const attempt = &exchange.attempt;
    assert(attempt.state == .connecting);
    result catch |err| return exchange.connectFailed(switch (err) {
        error.Canceled => if (attempt.connect_timed_out) .upstream_connect_timeout else .upstream_refused,
        error.TimedOut => .upstream_connect_timeout,
        else => .upstream_refused,
    });
    if (exchange.localPool().config.send_proxy == .v2 and !sendProxyHeader(exchange)) {
        return exchange.connectFailed(.upstream_refused);
    }
    // A stream's connection did its own handshake (Http2Backend.zig).
    if (exchange.localPool().tls == null or attempt.h2 != null) return sendHead(exchange);
    if (!acquireTls(exchange)) return exchange.fail(.overloaded);
    UpstreamTls.startHandshake(exchange);
}

/// The PROXY protocol v2 header on a connection just made, before TLS and the request: the
/// client's address, and the local address it reached sluice on. One non-blocking send of at
/// most 52 bytes into a new socket's empty buffer, which takes it whole; anything else (an
/// error, a short write) fails the connect, so no request follows a partial header.
fn sendProxyHeader(exchange: *Exchange) bool {
    const client = exchange.downstream.client();
    var buffer: [proxy_protocol.v2_written_bytes_max]u8 = undefined;
    const header = proxy_protocol.headerFor(client.address, client.fd, &buffer) orelse return false;
    const socket = &exchange.attempt.connection.?.socket;
    const sent = exchange.loop().sendNow(socket, header) catch return false;
    return sent == header.len;
}

/// The try's TLS buffers, for a pool that speaks TLS (sizing reserves two per session).
pub fn acquireTls(exchange: *Exchange) bool {
    assert(exchange.attempt.tls == null);
    exchange.attempt.tls = UpstreamTls.acquire(&exchange.proxy.buffers) orelse return false;
    return true;
}

/// The try lets go of its connection's TLS buffers (it is parked, closed or failed over).
fn releaseTls(exchange: *Exchange) void {
    const codec = &(exchange.attempt.tls orelse return);
    codec.release(&exchange.proxy.buffers);
    exchange.attempt.tls = null;
}

/// The TLS handshake on a fresh connection is done (`resumed`: with a session kept from an
/// earlier one): the request goes out.
pub fn handshakeDone(exchange: *Exchange, resumed: bool) void {
    assert(exchange.attempt.state == .handshaking);
    const stats = &exchange.localPool().stats;
    stats.tls_handshakes.add(1);
    if (resumed) stats.tls_resumptions.add(1);
    sendHead(exchange);
}

/// The try is over with its response complete: its connection goes back to the pool as idle
/// when it can carry another request (`attempt.reusable`), else closed, and the lease ends.
pub fn finish(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    exchange.loop().timerCancel(&attempt.timer);
    assert(attempt.leased);
    attempt.leased = false;
    if (attempt.h2 != null) {
        Http2Try.finish(exchange, true);
        return exchange.localPool().release(attempt.backend_index, null, .close);
    }
    const connection = attempt.connection.?;
    if (attempt.tls) |*codec| {
        if (!codec.reusable(&connection.tls.?)) attempt.reusable = false;
        releaseTls(exchange);
    }
    attempt.connection = null;
    exchange.localPool().release(attempt.backend_index, connection, if (attempt.reusable) .idle else .close);
}

/// Closes the connection of a failed try (it is never reused); the lease stays.
pub fn drop(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    if (attempt.h2 != null) {
        Http2Try.finish(exchange, false);
        exchange.loop().timerCancel(&attempt.timer);
        return;
    }
    const connection = attempt.connection orelse return;
    releaseTls(exchange);
    attempt.connection = null;
    exchange.localPool().drop(connection);
    exchange.loop().timerCancel(&attempt.timer);
}

// ---------------------------------------------------------------------------------------------
// The request

/// Sends the composed head (`ubuf[0..upstream_head_len]`).
pub fn sendHead(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    attempt.state = .sending_head;
    attempt.head_sent = 0;
    sendHeadRest(exchange);
    exchange.rearmAttemptTimer();
}

fn sendHeadRest(exchange: *Exchange) void {
    const head = exchange.ubuf.?[exchange.attempt.head_sent..exchange.upstream_head_len];
    send(exchange, head, sendHeadCallback);
}

fn sendHeadCallback(exchange: *Exchange, result: sys.SendError!usize) void {
    if (exchange.opDone()) return;
    const attempt = &exchange.attempt;
    // A TLS backend's alert may explain the reset (UpstreamTls.readWhyRefused).
    const n = result catch return exchange.upstreamFailed(.reset, if (attempt.tls_failed) .upstream_tls_failed else .upstream_reset);
    attempt.head_sent += @intCast(n);
    if (attempt.head_sent < exchange.upstream_head_len) return sendHeadRest(exchange);
    // The head is out: the response and the request body go on at once from here.
    attempt.state = .awaiting_response;
    recvHead(exchange);
    exchange.requestHeadSent();
}

/// Sends a window of request body bytes (framing included, as the client sent it: the head
/// forwarded says the same framing); `last`: it ends the body.
pub fn sendBody(exchange: *Exchange, window: []const u8, last: bool) void {
    assert(window.len > 0);
    exchange.attempt.outgoing = .{ .bytes = window, .last = last };
    sendBodyRest(exchange);
    exchange.rearmAttemptTimer(); // The backend sets the pace of its reading.
}

fn sendBodyRest(exchange: *Exchange) void {
    send(exchange, exchange.attempt.outgoing.rest(), sendBodyCallback);
}

fn sendBodyCallback(exchange: *Exchange, result: sys.SendError!usize) void {
    if (exchange.opDone()) return;
    const n = result catch {
        exchange.report(.reset);
        return exchange.failMidExchange(.upstream_reset);
    };
    const outgoing = &exchange.attempt.outgoing;
    outgoing.sent += @intCast(n);
    exchange.rearmAttemptTimer();
    if (outgoing.rest().len > 0) return sendBodyRest(exchange);
    outgoing.bytes = "";
    exchange.requestWindowSent(outgoing.last);
}

// ---------------------------------------------------------------------------------------------
// The response head

/// Receives (more of) the response head, behind what has arrived of it; a stream's comes
/// whole, as fields.
pub fn recvHead(exchange: *Exchange) void {
    if (exchange.attempt.h2 != null) {
        exchange.submit();
        Http2Try.recvHead(exchange, streamHeadCallback);
        return exchange.rearmAttemptTimer();
    }
    const ubuf = exchange.ubuf.?;
    const offset = headroom + exchange.attempt.received;
    assert(offset < ubuf.len);
    recv(exchange, ubuf[offset..], recvHeadCallback);
    exchange.rearmAttemptTimer(); // Progress, or a new wait.
}

fn recvHeadCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    if (exchange.opDone()) return;
    const attempt = &exchange.attempt;
    if (attempt.state == .cancelling_for_retry) return exchange.receiveCancelled(if (result) |n| n > 0 else |_| false);
    const n = result catch 0;
    if (n == 0) {
        // Reset or closed before a complete head (or refused by the TLS engine: a backend that
        // wants a client certificate says so only after the handshake, in TLS 1.3).
        const failure: Failure = if (attempt.received > 0)
            .upstream_bad_response
        else if (attempt.tls_failed)
            .upstream_tls_failed
        else
            .upstream_reset;
        return exchange.upstreamFailed(.reset, failure);
    }
    attempt.received += @intCast(n);
    parseHead(exchange);
}

/// A stream's head is in (Http2Try.takeHead puts it in the response parser, checked as
/// nghttp2 and the parser check one): nothing was received into `ubuf` for it.
fn streamHeadCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    if (exchange.opDone()) return;
    const attempt = &exchange.attempt;
    if (attempt.state == .cancelling_for_retry) return exchange.receiveCancelled(if (result) |n| n > 0 else |_| false);
    const n = result catch 0;
    if (n == 0) return exchange.upstreamFailed(.reset, .upstream_reset);
    if (Http2Try.takeHead(exchange)) |reject| return exchange.responseRefused(reject);
    exchange.responseHead(0);
}

fn parseHead(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    const ubuf = exchange.ubuf.?;
    const bytes = ubuf[headroom..][0..attempt.received];
    switch (attempt.response_parser.feed(bytes, exchange.request.method)) {
        .incomplete => {
            // The parser's limit is below the buffer, so this is that limit, reached early
            // because the head did not start at the front (after a 1xx).
            const full = headroom + attempt.received == ubuf.len;
            if (full) return exchange.responseRefused(.head_too_large);
            recvHead(exchange);
        },
        .invalid => |reject| exchange.responseRefused(reject),
        .complete => |head_len| exchange.responseHead(head_len),
    }
}

/// After an interim response: the `rest_len` bytes received after it, at `rest_start`, go
/// back to where a head is parsed, and the final head is read on.
pub fn nextHead(exchange: *Exchange, rest_start: u32, rest_len: u32) void {
    const ubuf = exchange.ubuf.?;
    const attempt = &exchange.attempt;
    @memmove(ubuf[headroom..][0..rest_len], ubuf[rest_start..][0..rest_len]);
    attempt.received = rest_len;
    attempt.response_parser.reset();
    if (rest_len > 0) return parseHead(exchange);
    recvHead(exchange);
}

// ---------------------------------------------------------------------------------------------
// The response body

/// The final head (`head`) says how its body is framed: from here on the body is read as
/// that, and whether the connection can carry another request once it is done.
pub fn startBody(exchange: *Exchange, head: *const http.ResponseParser.Head) void {
    const attempt = &exchange.attempt;
    attempt.response_body = switch (head.body) {
        .none => .none,
        .content_length => |length| if (length == 0) .none else .{ .length = length },
        .chunked => .{ .chunked = .init(.{}) },
        // A stream's body with no length only comes so when it goes over unframed.
        .close_delimited => if (attempt.h2 != null) .stream else .close_delimited,
    };
    // A connection that carried a client's PROXY header is that client's: never pooled.
    attempt.reusable = head.keep_alive and exchange.request.version == .http11 and
        attempt.response_body != .close_delimited and exchange.localPool().config.send_proxy == .off;
}

pub const Framed = struct { len: usize, last: bool };

/// How many bytes, from the front of `bytes`, belong to the response body (trailer lines
/// removed and the rest moved up, unless `exchange.relay_trailers`); `last` when they end it.
/// Null when the body is malformed (the exchange has failed). Bytes past the end of the
/// message mean the backend sent more than it framed: that connection is not reused.
pub fn frameBody(exchange: *Exchange, bytes: []u8) ?Framed {
    const attempt = &exchange.attempt;
    var take: usize = bytes.len;
    var last = false;
    switch (attempt.response_body) {
        .none => {
            take = 0;
            last = true;
        },
        .length => |*remaining| {
            take = @min(bytes.len, remaining.*);
            remaining.* -= take;
            last = remaining.* == 0;
        },
        .chunked => |*decoder| {
            const filtered: http.ChunkedDecoder.Filtered = if (exchange.relay_trailers)
                .{ .result = decoder.feed(bytes), .dropped = 0 }
            else
                decoder.feedDroppingTrailers(bytes);
            switch (filtered.result) {
                .need_more => {},
                .done => |n| {
                    take = n;
                    last = true;
                },
                .invalid => {
                    exchange.report(.reset);
                    exchange.failMidExchange(.upstream_bad_response);
                    return null;
                },
            }
            if (take < bytes.len) attempt.reusable = false;
            if (filtered.dropped > 0) {
                // Trailer lines were taken out: the rest goes back to the front.
                const kept = take - filtered.dropped;
                @memmove(bytes[0..kept], bytes[filtered.dropped..take]);
                return .{ .len = kept, .last = last };
            }
            return .{ .len = take, .last = last };
        },
        .close_delimited, .stream => {},
    }
    if (take < bytes.len) attempt.reusable = false;
    return .{ .len = take, .last = last };
}

/// Receives the next window of the body: spliced when it can be, else into `ubuf`.
pub fn recvBody(exchange: *Exchange) void {
    if (spliceable(exchange)) return spliceBody(exchange);
    recv(exchange, exchange.ubuf.?, recvBodyCallback);
    exchange.rearmAttemptTimer();
}

fn recvBodyCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    if (exchange.opDone()) return;
    const n = result catch return exchange.responseBroken(); // The client sees the close.
    if (n == 0) {
        return switch (exchange.attempt.response_body) {
            .close_delimited => exchange.responseBody(exchange.ubuf.?[0..0], true),
            // The stream ended cleanly (a cut one is an error).
            .stream => exchange.responseStreamEnded(),
            .none, .length, .chunked => exchange.responseBroken(),
        };
    }
    const framed = frameBody(exchange, exchange.ubuf.?[0..n]) orelse return;
    if (framed.len == 0 and !framed.last) return recvBody(exchange); // Framing bytes only.
    exchange.responseBody(exchange.ubuf.?[0..framed.len], framed.last);
}

/// Whether the rest of the response body can go backend -> pipe -> client with splice(2),
/// never through sluice's memory: it has a length and at least `splice_min` of it is left
/// (so the bytes after it are not ours to take), the client takes the bytes as they are, and
/// a pipe is free. The head and the body bytes that came with it were relayed as usual.
fn spliceable(exchange: *Exchange) bool {
    if (exchange.response_encoding == .gzip) return false; // The bytes go through the compressor.
    const remaining = switch (exchange.attempt.response_body) {
        .length => |n| n,
        .none, .chunked, .close_delimited, .stream => return false,
    };
    const min = exchange.proxy.config.splice_min_bytes;
    if (min == 0 or remaining < min) return false;
    if (!exchange.downstream.takesSplice()) return false;
    // A TLS backend's bytes are records that sluice opens, an HTTP/2 one's are frames:
    // nothing goes around them.
    if (exchange.attempt.tls != null or exchange.attempt.h2 != null) return false;
    if (exchange.pipe == null) exchange.pipe = exchange.proxy.pipes.acquire(exchange.loop());
    return exchange.pipe != null;
}

/// Moves the next chunk of the body, at most the pipe's size and never past its end, from the
/// backend into the (empty) pipe; the exchange has the downstream move it on to the client.
fn spliceBody(exchange: *Exchange) void {
    const pipe = exchange.pipe.?;
    assert(!exchange.pipe_loaded);
    const attempt = &exchange.attempt;
    const len: u32 = @intCast(@min(attempt.response_body.length, pipe.capacity));
    const socket = &attempt.connection.?.socket;
    exchange.submit();
    exchange.loop().spliceIn(&attempt.recv, socket, pipe.write, len, Exchange, exchange, spliceBodyCallback);
    exchange.rearmAttemptTimer();
}

fn spliceBodyCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    // Even a cancelled splice may have moved bytes: then the pipe is not clean.
    if (result) |n| exchange.pipe_loaded = n > 0 else |_| {}
    if (exchange.opDone()) return;
    const n = result catch return exchange.responseBroken(); // The client sees the close.
    if (n == 0) return exchange.responseBroken(); // Shorter than its Content-Length.
    const remaining = &exchange.attempt.response_body.length;
    assert(n <= remaining.*);
    remaining.* -= n;
    exchange.responseFromPipe(@intCast(n), remaining.* == 0);
}

// ---------------------------------------------------------------------------------------------
// Operations: each counted, each on the attempt's own completion

/// Every receive from the backend: through the TLS codec when the pool speaks TLS, from the
/// stream's inbox on a shared HTTP/2 connection.
pub fn recv(exchange: *Exchange, buffer: []u8, comptime callback: Exchange.RecvCallback) void {
    const attempt = &exchange.attempt;
    exchange.submit();
    if (attempt.h2 != null) return Http2Try.recv(exchange, buffer, callback);
    const socket = &attempt.connection.?.socket;
    if (attempt.tls != null) return UpstreamTls.recv(exchange, buffer, callback);
    // The request has just gone: its response cannot be there yet.
    const later = attempt.state == .awaiting_response and attempt.received == 0;
    if (later) return exchange.loop().recvLater(&attempt.recv, socket, buffer, Exchange, exchange, callback);
    exchange.loop().recv(&attempt.recv, socket, buffer, Exchange, exchange, callback);
}

/// Every send to the backend: through the TLS codec when the pool speaks TLS, as a stream's
/// frames on a shared HTTP/2 connection.
pub fn send(exchange: *Exchange, buffer: []const u8, comptime callback: Exchange.SendCallback) void {
    exchange.submit();
    if (exchange.attempt.h2 != null) return Http2Try.send(exchange, buffer, callback);
    const socket = &exchange.attempt.connection.?.socket;
    if (exchange.attempt.tls != null) return UpstreamTls.send(exchange, buffer, callback);
    exchange.loop().send(&exchange.attempt.send, socket, buffer, Exchange, exchange, callback);
}

/// Cancels the try's operations in flight; each still calls back (`Exchange.opDone`).
pub fn cancel(exchange: *Exchange) void {
    if (exchange.attempt.h2 != null) return Http2Try.cancel(exchange);
    if (exchange.attempt.recv.isPending()) exchange.loop().cancel(&exchange.attempt.recv);
    if (exchange.attempt.send.isPending()) exchange.loop().cancel(&exchange.attempt.send);
}

/// Cancels the receive of the response head only (a timeout that will retry elsewhere).
pub fn cancelRecv(exchange: *Exchange) void {
    if (exchange.attempt.h2 != null) return Http2Try.cancel(exchange);
    exchange.loop().cancel(&exchange.attempt.recv);
}

/// A receive from the backend is under way (on the socket, or parked on an HTTP/2 stream).
pub fn receiving(exchange: *const Exchange) bool {
    if (exchange.attempt.h2) |attempt| if (attempt.receiving()) return true;
    return exchange.attempt.recv.isPending();
}
