//! A backend's response on its way to the client, for the exchange (Exchange.zig) whose try
//! received it (upstream_http1.zig parses and frames, this decides): an interim head relayed
//! and the final one awaited, a 5xx retried elsewhere when the pool says so, a 101 handed to
//! the tunnel, the final head with its coding chosen (compression, a sticky cookie, trailers
//! for a client that takes them) and its body windows relayed as they come, with the
//! downstream's backpressure (`responseSent`). The exchange's lifecycle, tries, deadlines and
//! end stay in Exchange.zig; the calls the codec and the downstreams make are declared there.
const std = @import("std");
const assert = std.debug.assert;

const http = @import("../http/http.zig");
const compression = @import("../policy/compression.zig");
const rewrite = @import("rewrite.zig");
const tunnel = @import("tunnel.zig");
const handler_target = @import("handler_target.zig");
const upstream_http1 = @import("upstream_http1.zig");
const Exchange = @import("Exchange.zig");
const Http2Try = @import("Http2Try.zig");

const Encoding = Exchange.Encoding;
const ResponseView = Exchange.ResponseView;
const headroom = upstream_http1.headroom;

/// The backend's response head was refused. Over sluice's response limits it is a 502 that
/// does not count against the backend (it answered; the limit is ours, and the log line names
/// it); malformed, it is a 502 that does.
pub fn responseRefused(exchange: *Exchange, reject: http.Reject) void {
    exchange.log.response_reject = reject;
    switch (reject) {
        .head_too_large, .too_many_fields => {
            exchange.report(.success);
            exchange.failMidExchange(.upstream_head_too_large);
        },
        else => exchange.upstreamFailed(.reset, .upstream_bad_response),
    }
}

/// A complete response head arrived (`head_len` bytes at `headroom` in `ubuf`): an interim one
/// is relayed and the final one awaited, a 5xx may be retried elsewhere, a 101 starts a tunnel,
/// and a final head goes to the client.
pub fn responseHead(exchange: *Exchange, head_len: u32) void {
    const attempt = &exchange.attempt;
    const head = &attempt.response_parser.head;
    if (head.status < 200 and head.status != 101) return relayInterim(exchange, head_len);
    attempt.server_error = head.status >= 500;
    if (head.status >= 500 and retryServerError(exchange)) return;
    if (head.status == 101) return tunnel.start(exchange, head_len);
    relayResponseHead(exchange, head_len);
}

/// A 5xx head arrived and nothing of it was relayed: when the pool retries 5xx and the request
/// can be replayed, it goes to another backend and this response is dropped.
fn retryServerError(exchange: *Exchange) bool {
    if (!exchange.localPool().config.retry.on.status_5xx) return false;
    if (!exchange.replayable() or !exchange.reserveRetry()) return false;
    exchange.report(.status_5xx);
    exchange.last_failure = .upstream_bad_response;
    exchange.retryElsewhere();
    return true;
}

/// A 1xx other than 101 (100 Continue, 103 Early Hints): relayed, then the final response
/// follows on the same connection. HTTP/1.0 clients never see one (RFC 9110 §15.2).
fn relayInterim(exchange: *Exchange, head_len: u32) void {
    const attempt = &exchange.attempt;
    if (exchange.request.version == .http10) return upstream_http1.nextHead(exchange, headroom + head_len, attempt.received - head_len);
    attempt.state = .relaying_interim;
    exchange.interim_relayed = true;
    exchange.downstream.sendInterim(exchange.view(head_len, 0, false));
}

/// The downstream sent an interim head and left the bytes after it at `rest_start`.
pub fn interimSent(exchange: *Exchange, rest_start: u32, rest_len: u32) void {
    assert(exchange.attempt.state == .relaying_interim);
    exchange.attempt.state = .awaiting_response;
    upstream_http1.nextHead(exchange, rest_start, rest_len);
}

fn relayResponseHead(exchange: *Exchange, head_len: u32) void {
    const attempt = &exchange.attempt;
    const head = &attempt.response_parser.head;
    exchange.countResponse(head.status);
    exchange.log.status = head.status;
    upstream_http1.startBody(exchange, head);
    switch (attempt.response_body) {
        .chunked, .stream => exchange.relay_trailers = clientTakesTrailers(exchange),
        .none, .length, .close_delimited => {},
    }
    exchange.response_encoding = chooseEncoding(exchange, head);
    const body = exchange.ubuf.?[headroom + head_len ..][0 .. attempt.received - head_len];
    const framed = upstream_http1.frameBody(exchange, body) orelse return;
    attempt.state = .relaying_body;
    // The response timer armed for the head stops here: while the client takes the head and
    // the body bytes that came with it, no upstream deadline runs (a slow client's, or an
    // HTTP/2 client's shut window, would otherwise time the backend out: the simulator's seed
    // 1002227).
    exchange.rearmAttemptTimer();
    exchange.response = .started;
    if (framed.last) exchange.response = .complete;
    var cookie_buffer: [rewrite.extra_field_bytes_max]u8 = undefined;
    const cookie = stickyCookie(exchange, &cookie_buffer);
    var response_view = exchange.view(head_len, @intCast(framed.len), framed.last);
    if (exchange.response_encoding == .gzip) {
        // The body bytes that came with the head go through the compressor now, before the
        // head is rewritten over them: the head goes alone, the chunk after it (`responseSent`).
        const compressor = exchange.response_encoding.gzip;
        compressor.pending = compressor.compress(body[0..framed.len], framed.last) catch
            return compressorFailed(exchange);
        response_view.received = head_len;
        response_view.body_len = 0;
        response_view.body_last = false;
    }
    exchange.downstream.sendResponse(response_view, cookie);
}

/// The response's coding (policy/compression.zig's verdict), with a compressor slot taken
/// and started for `gzip`. Compressed, the body goes out chunked: `head.body` says so from
/// here on, for the head's rewrite (a trailer section is not relayed to a client that did not
/// ask for it in any case).
fn chooseEncoding(exchange: *Exchange, head: *http.ResponseParser.Head) Encoding {
    const settings = exchange.compression_settings orelse return .identity;
    if (exchange.attempt.response_body == .none) return .identity; // An empty body (`min_length` 0).
    // A client that takes the trailer section (gRPC's status is there) gets it: the compressed
    // stream would have to drop it.
    if (exchange.relay_trailers) return .identity;
    const verdict = compression.decide(exchange.request_head, head, .{ .types = settings.types, .min_bytes = settings.min_bytes });
    const vary: Encoding = if (compression.varies(head)) .identity else .vary_only;
    switch (verdict) {
        .untouched => return .identity,
        .vary_only => return vary,
        .compress => {},
    }
    const proxy = exchange.proxy;
    const compressor = proxy.compressors.acquire() orelse {
        proxy.stats.compression_slots_full.add(1); // An operating condition: it passes as sent.
        return vary;
    };
    compressor.start(settings.level, head.body == .chunked);
    compressor.change = .{ .gzip = true, .vary = vary == .vary_only };
    if (compression.weakEtag(head, &compressor.etag_buffer)) |etag| {
        compressor.change.drop_etag = true;
        compressor.change.weak_etag = etag;
    }
    head.body = .chunked;
    assert(!exchange.relay_trailers);
    proxy.stats.responses_compressed.add(1);
    assert(exchange.attempt.response_body != .none);
    compressor.pending = "";
    return .{ .gzip = compressor };
}

/// The compressor's output did not fit the buffer sized for it: a bug, contained. The client
/// sees a close, never a short body that looks whole.
fn compressorFailed(exchange: *Exchange) void {
    exchange.log.end_reason = "compressor_output_full";
    exchange.attempt.reusable = false;
    exchange.abortWith(null);
}

/// What compression changes in the response head, if anything.
fn headChange(exchange: *const Exchange) ?*const compression.HeadChange {
    return switch (exchange.response_encoding) {
        .identity => null,
        .vary_only => &vary_only_change,
        .gzip => |compressor| &compressor.change,
    };
}

const vary_only_change: compression.HeadChange = .vary_only;

/// Whether the client said it takes a trailer section (`TE: trailers`, RFC 9110 §10.1.4): a
/// gRPC client, never a browser. Trailers go to no other client: one that merged them into the
/// header section would take fields the head's checks and rules never saw (nginx and Envoy
/// drop HTTP/1.1 trailers altogether). An HTTP/1.0 client gets the body de-chunked, without.
fn clientTakesTrailers(exchange: *const Exchange) bool {
    // A fetch's body goes to the handler, or on to the fetching request's client as it came
    // (a returned body is relayed window by window): its trailers are kept when that client
    // takes them, and a read of the body decodes past them.
    switch (exchange.downstream) {
        .fetch => |sub| return if (sub.parent) |parent| clientTakesTrailers(parent) else false,
        else => {},
    }
    if (exchange.request.version == .http10) return false;
    const te = exchange.request_head.get("te") orelse return false;
    return http.field_values.listHasToken(te, "trailers");
}

/// The Set-Cookie field that pins a `sticky` client to the backend that answered, when its
/// cookie named no backend or one that could not take the request; else empty.
fn stickyCookie(exchange: *const Exchange, buffer: *[rewrite.extra_field_bytes_max]u8) []const u8 {
    const config = exchange.localPool().config;
    if (config.strategy != .sticky) return "";
    const index = exchange.attempt.backend_index;
    if (exchange.preferred == index) return "";
    const id = exchange.localPool().idText(index);
    // Validation bounds the cookie name so that this always fits; if it did not, the
    // response goes without the cookie rather than with a cut one.
    return std.fmt.bufPrint(buffer, "Set-Cookie: {s}={s}; Path=/; HttpOnly\r\n", .{
        config.sticky_cookie, &id,
    }) catch "";
}

pub fn view(exchange: *Exchange, head_len: u32, body_len: u32, body_last: bool) ResponseView {
    const attempt = &exchange.attempt;
    return .{
        .head = &attempt.response_parser.head,
        .buffer = exchange.ubuf.?,
        .head_start = headroom,
        .head_len = head_len,
        .received = attempt.received,
        .body_len = body_len,
        .body_last = body_last,
        // Compressed, a close-delimited body goes out chunked: the client connection stays.
        .close_delimited = attempt.response_body == .close_delimited and exchange.response_encoding != .gzip,
        .rules = exchange.rulesFor(.response),
        .change = headChange(exchange),
    };
}

/// The downstream sent the last response window it was given.
pub fn responseSent(exchange: *Exchange) void {
    assert(exchange.state == .upstream or exchange.state == .local);
    exchange.pipe_loaded = false; // What was spliced into the pipe is out of it.
    if (sendPendingGzip(exchange)) return;
    if (exchange.handler_unsent != null) return handler_target.sendMore(exchange);
    if (exchange.relay != null and handler_target.relaySent(exchange)) return;
    if (exchange.state == .local or exchange.response == .complete) {
        exchange.response = .sent;
        // An early response (the backend answered before reading the whole body): the rest
        // of the request body has nowhere to go, and the client connection cannot be reused.
        if (exchange.state == .upstream and !exchange.request_done) {
            exchange.attempt.reusable = false;
            return exchange.downstream.closeAfterEarlyResponse();
        }
        return exchange.maybeFinish();
    }
    upstream_http1.recvBody(exchange);
}

/// After a compressed response's head: the chunk made of the body bytes that came with it.
fn sendPendingGzip(exchange: *Exchange) bool {
    const compressor = switch (exchange.response_encoding) {
        .gzip => |compressor| compressor,
        .identity, .vary_only => return false,
    };
    if (compressor.pending.len == 0) return false;
    const chunk = compressor.pending;
    compressor.pending = "";
    exchange.downstream.sendResponseBody(chunk, exchange.response == .complete);
    return true;
}

/// A window of the response body arrived (`upstream_http1`): relayed; `last`: it ends the body.
pub fn responseBody(exchange: *Exchange, window: []u8, last: bool) void {
    if (last) exchange.response = .complete;
    exchange.rearmAttemptTimer();
    relayBody(exchange, window, last);
}

/// A body that went over as data from an HTTP/2 backend's stream (`.stream`) ended cleanly:
/// its trailers go to a client that takes them, then the (empty) last window.
pub fn responseStreamEnded(exchange: *Exchange) void {
    if (exchange.relay_trailers) {
        const trailers = Http2Try.takeTrailers(exchange);
        if (trailers.len > 0) exchange.downstream.keepTrailers(trailers);
    }
    responseBody(exchange, exchange.ubuf.?[0..0], true);
}

/// `len` bytes of the response body are in the exchange's pipe (`upstream_http1`'s splice):
/// the downstream moves them on to the client.
pub fn responseFromPipe(exchange: *Exchange, len: u32, last: bool) void {
    if (last) exchange.response = .complete;
    exchange.rearmAttemptTimer();
    exchange.downstream.sendResponseFromPipe(exchange.pipe.?.read, len);
}

/// A window of the response body (framed as the backend framed it) to the downstream: as it
/// is, or gzipped into one chunk.
fn relayBody(exchange: *Exchange, window: []u8, last: bool) void {
    const compressor = switch (exchange.response_encoding) {
        .gzip => |compressor| compressor,
        .identity, .vary_only => return exchange.downstream.sendResponseBody(window, last),
    };
    assert(compressor.pending.len == 0); // Sent before the body was read on.
    const chunk = compressor.compress(window, last) catch return compressorFailed(exchange);
    if (chunk.len == 0) return upstream_http1.recvBody(exchange); // Chunk framing only, or nothing new.
    exchange.downstream.sendResponseBody(chunk, last);
}

/// The backend broke off a response already under way: the client can only be told by a
/// close, and the backend's health hears of it.
pub fn responseBroken(exchange: *Exchange) void {
    exchange.log.end_reason = "upstream_response_incomplete";
    exchange.report(.reset);
    exchange.attempt.reusable = false;
    exchange.abortWith(null);
}
