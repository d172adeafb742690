//! One client connection speaking HTTP/1.1, from accept to close: the socket, the read buffer,
//! keep-alive and pipelining, the idle, head and body deadlines, lingering close, and the
//! HTTP/1.1 framing of what goes both ways. It is the downstream side of the seam an
//! `Exchange` talks to (see Exchange.zig): it parses request heads and frames request bodies
//! into windows for the exchange, and writes the exchange's response heads and bodies out in
//! HTTP/1.1 (rewritten in place, de-chunked for an HTTP/1.0 client).
//!
//! An idle keep-alive connection holds only this slot (its buffer is given back after a short
//! hot period, see `parkBuffer`): the exchange, its parsers, field arrays and upstream buffer
//! are taken from the worker's exchange slots when a request head starts to arrive.
//!
//! Lifetime rule: every client operation is counted in `pending_ops` and every callback starts
//! with `opDone`. `close` cancels what is pending and aborts the exchange; the slot is
//! finalized (fd closed, buffer returned) only when the count is zero and the exchange has
//! been released, so no callback ever sees a freed slot.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const http = @import("../http/http.zig");
const rewrite = @import("rewrite.zig");
const Failure = @import("failure.zig").Failure;
const failure_http1 = @import("failure_http1.zig");
const Proxy = @import("Proxy.zig");
const Exchange = @import("Exchange.zig");
const tls_ns = @import("../tls/tls.zig");
const DownstreamTls = @import("DownstreamTls.zig");
const Downstream = @import("downstream.zig").Downstream;
const AccessLog = @import("AccessLog.zig");
const Http2 = @import("Http2.zig");
const proxy_protocol = @import("../policy/proxy_protocol.zig");

const Connection = @This();

proxy: *Proxy,
state: State = .free,
/// Client operations submitted and not yet called back.
pending_ops: u8 = 0,
/// What the one client timer currently guards; decides what its expiry means.
phase: Phase = .idle_hot,
/// The worker listener slot the connection came in on (routes may depend on it).
listener_slot: u8 = 0,
/// The client is a trusted proxy: its forwarding fields are kept and appended to.
client_trusted: bool = false,
/// The idle receive was cancelled to return the buffer (see `parkBuffer`).
parking: bool = false,
/// The client's socket watched while the exchange's handler waits (`watchClient`).
watch: Watch = .none,
client_ip_len: u8 = 0,
requests_served: u32 = 0,
socket: Socket = undefined,
/// The client: the peer, or the address its PROXY protocol header carried (`setClient`).
address: Address = undefined,
/// The client as X-Forwarded-For text: a fact of the connection, worked out once.
client_ip_buffer: [Address.host_text_bytes_max]u8 = undefined,
recv_completion: Completion = .{},
send_completion: Completion = .{},
timer: Timer = .{},
/// Client-side buffer: `cbuf[0..c_len]` is valid; `c_pos` is the next byte not yet consumed
/// (head parsed or body forwarded). A new request head always starts at offset 0 and stays
/// in place until its exchange ends (the exchange reads it: routing, replays, the log).
cbuf: ?[]u8 = null,
c_len: u32 = 0,
c_pos: u32 = 0,
/// The exchange of the request under way, from its head's first byte until it is released.
exchange: ?*Exchange = null,
request_body: RequestBody = .{},
out: Out = .{},
/// A TLS listener's connection: the codec between the socket and everything above
/// (DownstreamTls.zig). Null on a plain listener.
tls: ?DownstreamTls = null,
/// The connection speaks HTTP/2 (Http2.zig): it runs the streams, and the HTTP/1.1 state above
/// is unused but for the socket, the timer and `cbuf`.
http2: ?*Http2 = null,
/// A plain listener that takes HTTP/2 with prior knowledge: the first bytes are checked for
/// its preface.
h2c: bool = false,

pub const State = enum {
    free,
    active,
    /// A last response (an error, or a local answer to a request whose body sluice does not
    /// read) is going out: then half-close, read and discard until the client closes.
    lingering,
    closing,
};

pub const Phase = enum {
    /// A PROXY protocol listener's connection before its header: the head deadline covers it.
    proxy_header,
    /// A TLS handshake under way: the head deadline covers it.
    handshake,
    /// Waiting for a request with the buffer still held, for a short while.
    idle_hot,
    /// Waiting with the buffer returned to the pool (see `parkBuffer`).
    idle,
    header,
    /// The request body is arriving: the client sets the pace (client idle timeout).
    body,
    /// The exchange is with the backend: no client deadline (the exchange has its own).
    waiting,
    /// A response piece is being written: the client must read it (client idle timeout).
    sending,
    tunnel,
    linger,
};

/// Whether the client is being watched for its close while a handler waits, and whether that
/// watch is being stopped (its cancelled poll not yet called back).
const Watch = enum(u8) { none, polling, stopping };

/// The request body's HTTP/1.1 framing, as the client sent it.
const RequestBody = struct {
    framing: union(enum) { none, length: u64, chunked: http.ChunkedDecoder } = .none,
    done: bool = true,
    /// Body bytes already sent were received over (the body is larger than the room behind
    /// the head), or trailer lines were cut out in place: the body cannot be sent again.
    overwritten: bool = false,
    /// End of the window of `cbuf` handed to the exchange.
    window_end: u32 = 0,
    window_last: bool = false,
    /// Body bytes taken from `cbuf` so far, framing and dropped trailers included: the
    /// access log's `request_bytes` is the head and these. Counted where `c_pos` passes over
    /// body bytes, so bytes that came in the head's read count, and bytes behind the body (a
    /// pipelined request) do not.
    consumed: u64 = 0,
};

/// What is being written to the client.
const Out = struct {
    what: What = .none,
    bytes: []const u8 = "",
    progress: usize = 0,
    /// The response started: a byte of it may have reached the client.
    started: bool = false,
    /// Close after this response (decided with its head).
    close_after: bool = false,
    /// Chunked from the backend, bare data to an HTTP/1.0 client (RFC 9112 §6.1).
    dechunk: ?http.ChunkedDecoder = null,
    /// Or, when not -1, the bytes are `pipe_len` bytes in this pipe (a spliced body window).
    pipe: linux.fd_t = -1,
    pipe_len: u32 = 0,
    /// After an interim head: where the bytes that followed it now are.
    rest_start: u32 = 0,
    rest_len: u32 = 0,
    tunnel_client_done: bool = false,
    tunnel_upstream_done: bool = false,
    lingering: bool = false,

    const What = enum { none, interim, continue_interim, response, local, error_response, tunnel_head, tunnel };
};

// ---------------------------------------------------------------------------------------------
// Accept and the request head

pub fn start(connection: *Connection, fd: linux.fd_t, peer: Address, listener_slot: u8) void {
    assert(connection.state == .free);
    assert(connection.pending_ops == 0);
    assert(connection.exchange == null);
    const proxy = connection.proxy;
    connection.* = .{ .proxy = proxy };
    connection.state = .active;
    connection.socket = Socket.init(fd);
    connection.listener_slot = listener_slot;
    connection.setClient(&peer);
    // Sizing reserves every buffer a session can hold (`Proxy.buffersPerSession`).
    connection.cbuf = proxy.buffers.acquire().?;
    if (proxy.generation.listenerProxyProtocol(listener_slot)) {
        connection.armTimer(.proxy_header);
        return connection.recvClient(connection.cbuf.?, recvProxyHeaderCallback);
    }
    connection.startListener();
}

fn setClient(connection: *Connection, address: *const Address) void {
    connection.address = address.*;
    connection.client_ip_len = @intCast(address.formatHost(&connection.client_ip_buffer).len);
    connection.client_trusted = connection.proxy.config.isTrustedProxy(address);
}

/// What the listener speaks, from the first byte (or the first after a PROXY header, already
/// in `cbuf` with what followed it): TLS, or HTTP.
fn startListener(connection: *Connection) void {
    const proxy = connection.proxy;
    const slot = connection.listener_slot;
    // The listener's TLS context in the newest generation: a reload's certificates serve the
    // next handshake (the context stays alive while its engines are open: generations.zig).
    if (proxy.generation.tlsServer(slot)) |server| return DownstreamTls.start(connection, server);
    connection.h2c = proxy.http2 != null and proxy.generation.listenerHttp2(slot);
    connection.startProtocol(.http1);
}

fn recvProxyHeaderCallback(connection: *Connection, result: sys.RecvError!usize) void {
    if (connection.opDone(false)) return;
    const n = result catch return connection.close();
    if (n == 0) {
        // Nothing at all: a load balancer's TCP health check, not a refusal worth a line.
        if (connection.c_len == 0) return connection.close();
        return connection.refuseProxyHeader("closed before its PROXY protocol header ended");
    }
    connection.c_len += @intCast(n);
    const cbuf = connection.cbuf.?;
    switch (proxy_protocol.parse(cbuf[0..connection.c_len])) {
        .incomplete => {
            // A header is decided within `header_bytes_max`, far below a buffer's size.
            assert(connection.c_len < proxy_protocol.header_bytes_max);
            connection.recvClient(cbuf[connection.c_len..], recvProxyHeaderCallback);
        },
        .invalid => |reason| connection.refuseProxyHeader(reason.text()),
        .complete => |header| {
            connection.proxy.stats.proxy_headers.add(1);
            if (header.source) |*source| connection.setClient(source);
            connection.c_pos = header.len;
            connection.compactClientBuffer();
            connection.startListener();
        },
    }
}

/// No usable PROXY protocol header: the connection is closed without an answer, as HAProxy and
/// nginx do (whatever sent it speaks no HTTP sluice should parse). Counted and logged.
fn refuseProxyHeader(connection: *Connection, reason: []const u8) void {
    connection.proxy.stats.proxy_headers_refused.add(1);
    var peer: [Address.host_text_bytes_max]u8 = undefined;
    connection.proxy.warnProxyHeader(connection.address.formatHost(&peer), reason);
    connection.close();
}

/// What a connection speaks: HTTP/1.1 on a plain listener, and on a TLS one what the
/// handshake agreed with ALPN (`DownstreamTls.protocol`); a plain listener that allows h2c
/// switches to HTTP/2 when the first bytes are its preface (`parseRequest`).
pub const Protocol = enum { http1, h2 };

pub fn startProtocol(connection: *Connection, protocol: Protocol) void {
    switch (protocol) {
        .http1 => connection.readRequest(),
        .h2 => if (connection.proxy.http2 != null) Http2.start(connection, 0) else connection.close(),
    }
}

/// Starts (or resumes, with pipelined bytes already buffered) reading the next request head.
pub fn readRequest(connection: *Connection) void {
    assert(connection.state == .active);
    assert(connection.exchange == null);
    connection.request_body = .{};
    connection.out = .{};
    connection.compactClientBuffer();
    if (connection.c_len > 0) {
        connection.openExchange();
        connection.armTimer(.header);
        return connection.parseRequest();
    }
    if (connection.proxy.draining and connection.requests_served > 0) return connection.close();
    // Waiting for a first byte is idle time, on a new connection too (browsers open
    // connections speculatively): the head deadline starts with the head's first byte.
    connection.armTimer(.idle_hot);
    connection.recvHead();
}

fn compactClientBuffer(connection: *Connection) void {
    const cbuf = connection.cbuf.?;
    assert(connection.c_pos <= connection.c_len);
    const rest = connection.c_len - connection.c_pos;
    if (connection.c_pos > 0 and rest > 0) {
        @memmove(cbuf[0..rest], cbuf[connection.c_pos..connection.c_len]);
    }
    connection.c_len = rest;
    connection.c_pos = 0;
}

/// A request head begins: its exchange slot is taken now (it holds the parser).
fn openExchange(connection: *Connection) void {
    assert(connection.exchange == null);
    const exchange = connection.proxy.acquireExchange();
    exchange.open(.{ .http1 = connection });
    connection.exchange = exchange;
}

fn recvHead(connection: *Connection) void {
    const cbuf = connection.cbuf.?;
    assert(connection.c_len < cbuf.len);
    // After a response, the next request of a keep-alive client is not there yet (the client
    // waited for the response); a new connection's first request often is.
    if (connection.requests_served > 0 and connection.c_len == 0 and connection.tls == null) {
        connection.submit();
        return connection.loop().recvLater(&connection.recv_completion, &connection.socket, cbuf, Connection, connection, recvHeadCallback);
    }
    connection.recvClient(cbuf[connection.c_len..], recvHeadCallback);
}

fn recvHeadCallback(connection: *Connection, result: sys.RecvError!usize) void {
    if (connection.opDone(false)) return;
    const parking = connection.parking;
    connection.parking = false;
    const n = result catch |err| switch (err) {
        error.Canceled => if (!parking) return connection.close() else if (if (connection.tls) |*t| t.holdsInput() else false) {
            return connection.recvHead(); // Part of a record is here: wait with it, buffers kept.
        } else return connection.parkBuffer(),
        else => return connection.close(), // Reset or similar: nothing to answer.
    };
    if (n == 0) return connection.close(); // Closed between requests, or mid-head: done.
    if (connection.exchange == null) {
        connection.openExchange();
        connection.armTimer(.header); // First byte: the head deadline starts.
    }
    connection.c_len += @intCast(n);
    connection.parseRequest();
}

/// The connection has been idle for a while: give its buffer back and wait for readiness
/// without one. An idle keep-alive connection then holds only its slot, not 20 KiB.
/// Hot connections never come here, so the common path keeps a single receive per request.
fn parkBuffer(connection: *Connection) void {
    assert(connection.c_len == 0 and connection.c_pos == 0);
    assert(connection.phase == .idle);
    assert(connection.exchange == null);
    connection.parkUntilReadable(idleReadableCallback);
}

/// An idle connection's buffers go back to the worker (its TLS codec's too) and a poll waits
/// for the client's next bytes: HTTP/1.1 between requests, HTTP/2 with no stream (Http2.zig).
pub fn parkUntilReadable(connection: *Connection, comptime callback: fn (*Connection, loop_ns.PollError!void) void) void {
    connection.proxy.buffers.release(connection.cbuf.?);
    connection.cbuf = null;
    if (connection.tls) |*t| t.park(&connection.proxy.buffers);
    connection.proxy.stats.idle_parks.add(1);
    connection.submit();
    connection.loop().pollReadable(&connection.recv_completion, &connection.socket, Connection, connection, callback);
}

fn idleReadableCallback(connection: *Connection, result: loop_ns.PollError!void) void {
    if (connection.opDone(false)) return;
    result catch return connection.close();
    // Every buffer a session can hold is reserved at start-up (`Proxy.buffersPerSession`),
    // so this one is always there.
    connection.cbuf = connection.proxy.buffers.acquire().?;
    if (connection.tls) |*t| t.unpark(&connection.proxy.buffers);
    connection.recvHead(); // Data, or the EOF that made it readable: both are handled there.
}

fn parseRequest(connection: *Connection) void {
    const cbuf = connection.cbuf.?;
    const exchange = connection.exchange.?;
    if (connection.h2c and connection.requests_served == 0) switch (Http2.matchPreface(cbuf[0..connection.c_len])) {
        .no => connection.h2c = false,
        .partial => return connection.recvHead(),
        .yes => {
            exchange.cancelOpen();
            connection.releaseExchange(exchange);
            connection.loop().timerCancel(&connection.timer);
            return Http2.start(connection, connection.c_len);
        },
    };
    switch (exchange.request_parser.feed(cbuf[0..connection.c_len])) {
        .incomplete => {
            // The parser rejects a head over header_bytes_max, which is below the buffer size.
            assert(connection.c_len < cbuf.len);
            connection.recvHead();
        },
        .invalid => |reject| connection.refuseRequest(.{ .bad_request = reject }),
        .complete => |head_len| {
            connection.c_pos = head_len;
            connection.initRequestBody();
            connection.armTimer(.waiting);
            exchange.begin(&exchange.request_parser.head, head_len);
        },
    }
}

/// Sets the request body framing from the parsed head (again, when replaying).
fn initRequestBody(connection: *Connection) void {
    const head = &connection.exchange.?.request_parser.head;
    connection.request_body.framing = switch (head.body) {
        .none, .close_delimited => .none,
        .content_length => |length| if (length == 0) .none else .{ .length = length },
        .chunked => .{ .chunked = .init(.{}) },
    };
    connection.request_body.done = connection.request_body.framing == .none;
}

// ---------------------------------------------------------------------------------------------
// The seam, request side: body windows for the exchange

/// The exchange is ready for the next window of request body bytes.
pub fn pullRequestBody(connection: *Connection) void {
    assert(connection.state == .active);
    const body = &connection.request_body;
    assert(!body.done);
    const cbuf = connection.cbuf.?;
    if (connection.c_pos == connection.c_len) {
        // Everything buffered has been forwarded: receive more behind it while there is room,
        // so a body that fits stays whole for a replay. The head itself is never written over.
        const body_start = connection.exchange.?.request.head_len;
        assert(connection.c_len >= body_start);
        if (connection.c_len == cbuf.len) {
            body.overwritten = true;
            connection.c_pos = body_start;
            connection.c_len = body_start;
        }
        connection.armTimer(.body);
        return connection.recvClient(cbuf[connection.c_len..], recvBodyCallback);
    }
    const available = cbuf[connection.c_pos..connection.c_len];
    var take: usize = available.len;
    var skip: usize = 0;
    var last = false;
    switch (body.framing) {
        .length => |*remaining| {
            take = @min(available.len, remaining.*);
            remaining.* -= take;
            last = remaining.* == 0;
        },
        .chunked => |*decoder| {
            const filtered = decoder.feedDroppingTrailers(available);
            switch (filtered.result) {
                .need_more => {},
                .done => |n| {
                    take = n;
                    last = true;
                },
                .invalid => |reject| return connection.failRequestBody(.{ .bad_request_body = reject }),
            }
            skip = filtered.dropped; // Trailer lines, moved out of the window's front.
            if (skip > 0) body.overwritten = true; // The bytes were changed in place.
            const max = connection.exchange.?.body_bytes_max;
            if (max > 0 and decoder.data_bytes > max) return connection.failRequestBody(.request_body_too_large);
        },
        .none => unreachable, // `done` from the start.
    }
    body.window_end = connection.c_pos + @as(u32, @intCast(take));
    body.window_last = last;
    connection.c_pos += @intCast(skip);
    body.consumed += skip;
    if (connection.c_pos == body.window_end) {
        assert(!last); // The final CRLF is always forwarded.
        return connection.pullRequestBody();
    }
    // The backend sets the pace now; a response being written keeps its send timer.
    if (connection.phase != .sending) connection.armTimer(.waiting);
    connection.exchange.?.sendRequestBody(connection.cbuf.?[connection.c_pos..body.window_end], last);
}

fn recvBodyCallback(connection: *Connection, result: sys.RecvError!usize) void {
    if (connection.opDone(false)) return;
    const n = result catch return connection.close();
    if (n == 0) return connection.close(); // The client gave up mid-body; the backend's copy is cut.
    connection.c_len += @intCast(n);
    connection.pullRequestBody();
}

/// The exchange sent the window it was given.
pub fn requestBodySent(connection: *Connection) void {
    const body = &connection.request_body;
    assert(body.window_end >= connection.c_pos);
    body.consumed += body.window_end - connection.c_pos;
    connection.c_pos = body.window_end;
    if (body.window_last) {
        body.done = true;
        return;
    }
    connection.pullRequestBody();
}

/// What is wrong with the chunked body bytes already received behind the head, if they are
/// malformed: checked before the head goes to a backend, so a request whose body is broken
/// from the start reaches none (as with nginx and HAProxy, which read that far before
/// forwarding). Bytes that arrive later are checked as they stream, after the head has gone:
/// then the backend connection is closed mid-body and never reused (docs/ARCHITECTURE.md,
/// "HTTP strictness").
pub fn bufferedBodyReject(connection: *const Connection) ?http.Reject {
    if (connection.request_body.framing != .chunked) return null;
    var decoder: http.ChunkedDecoder = .init(.{});
    return switch (decoder.feed(connection.cbuf.?[connection.c_pos..connection.c_len])) {
        .invalid => |reject| reject,
        .need_more, .done => null,
    };
}

/// Whether the request has a body still to come (a handler's exchange reads it first).
pub fn requestBodyPending(connection: *const Connection) bool {
    return !connection.request_body.done;
}

/// Whether the body received so far is still whole behind the head, as it came: not
/// overwritten by more of it (it was larger than the room behind the head) nor cut (trailers).
pub fn requestBodyWhole(connection: *const Connection) bool {
    return !connection.request_body.overwritten;
}

/// The buffer's room behind the request head: a body of at most this is received whole.
pub fn requestBodyRoom(connection: *const Connection) u64 {
    return connection.cbuf.?.len - connection.exchange.?.request.head_len;
}

/// The request body, received whole behind the head (a handler's `request.body`).
pub fn requestBodyBytes(connection: *const Connection) []const u8 {
    assert(connection.request_body.done and !connection.request_body.overwritten);
    return connection.cbuf.?[connection.exchange.?.request.head_len..connection.c_pos];
}

/// Whether the body bytes are chunked as the client framed them.
pub fn requestBodyChunked(connection: *const Connection) bool {
    return connection.exchange.?.request_head.body == .chunked;
}

/// Whether every body byte sent so far could be sent again (for a replay), and nothing is
/// being received for the body right now (a replay starts the body over from its first
/// byte; a receive still under way would hand the exchange a second window).
pub fn requestBodyReplayable(connection: *const Connection) bool {
    return !connection.request_body.overwritten and !connection.recv_completion.isPending();
}

/// For a replay: the body from its first byte, as it was received.
pub fn rewindRequestBody(connection: *Connection) void {
    assert(!connection.request_body.overwritten);
    connection.c_pos = connection.exchange.?.request.head_len;
    connection.request_body.consumed = 0; // The same bytes are taken again.
    connection.initRequestBody();
}

// ---------------------------------------------------------------------------------------------
// The seam, response side: heads and bodies written out in HTTP/1.1

/// A 1xx (not 101), relayed to an HTTP/1.1 client; the bytes after it are kept for the final
/// response (`Exchange.interimSent`).
pub fn sendInterim(connection: *Connection, view: Exchange.ResponseView) void {
    const new_len = rewrite.rewriteResponse(view.buffer, view.head_start, view.head_len, view.received, view.head, .{
        .connection = .keep_alive_default,
    }) catch return connection.exchange.?.responseHeadTooLarge();
    // An interim head does not start the response: a failure after it still gets its answer.
    connection.out.rest_start = @intCast(new_len);
    connection.out.rest_len = view.received - view.head_len;
    connection.write(.interim, view.buffer[0..new_len]);
}

/// `HTTP/1.1 100 Continue`, for a request whose body sluice reads itself before answering (a
/// handler's) when the client asked with `Expect: 100-continue` (the parser sets that on
/// HTTP/1.1 only): such a client may wait for it before sending the body (RFC 9110 §10.1.1).
/// Like a relayed interim head it does not start the response. Then `Exchange.continueSent`.
pub fn sendContinue(connection: *Connection) void {
    assert(!connection.out.started and !connection.request_body.done);
    connection.write(.continue_interim, "HTTP/1.1 100 Continue\r\n\r\n");
}

/// The final response head, with the first body bytes that came with it.
pub fn sendResponse(connection: *Connection, view: Exchange.ResponseView, extra_field: []const u8) void {
    const exchange = connection.exchange.?;
    const out = &connection.out;
    const http10 = exchange.request.version == .http10;
    const chunked = view.head.body == .chunked;
    out.dechunk = if (http10 and chunked) .init(.{}) else null;
    out.close_after = !exchange.request.keep_alive or connection.proxy.draining or
        view.close_delimited or out.dechunk != null or !connection.request_body.done;
    const connection_field: rewrite.ClientConnection = if (out.close_after)
        .close
    else if (http10)
        .keep_alive_explicit
    else
        .keep_alive_default;
    const new_len = rewrite.rewriteResponse(view.buffer, view.head_start, view.head_len, view.received, view.head, .{
        .connection = connection_field,
        .keep_transfer_encoding = !http10,
        .extra_field = extra_field,
        .rules = view.rules,
        .change = view.change,
    }) catch return exchange.responseHeadTooLarge();
    const body = view.buffer[new_len..][0..view.body_len];
    const data = connection.dechunked(body) orelse return;
    out.started = true;
    connection.write(.response, view.buffer[0 .. new_len + data.len]);
}

/// More of the response body (`last`: the rest of it, possibly empty).
pub fn sendResponseBody(connection: *Connection, window: []u8, last: bool) void {
    _ = last; // The exchange knows when the response is complete; each window is just written.
    const data = connection.dechunked(window) orelse return;
    if (data.len == 0) return connection.exchange.?.responseSent(); // Framing bytes only.
    connection.write(.response, data);
}

/// A window of the response body that the exchange spliced into a pipe: it goes on to the
/// client from there (upstream_http1.spliceBody), and `exchange.responseSent` follows as for
/// `sendResponseBody`.
pub fn sendResponseFromPipe(connection: *Connection, pipe_read: linux.fd_t, len: u32) void {
    assert(len > 0);
    assert(connection.takesSplice());
    const out = &connection.out;
    out.what = .response;
    out.bytes = "";
    out.pipe = pipe_read;
    out.pipe_len = len;
    out.progress = 0;
    connection.armTimer(.sending);
    connection.spliceClient(pipe_read, len, writeCallback);
}

/// Whether response body bytes may go to the client exactly as the backend sent them, from a
/// pipe: HTTP/1.1 on a plain socket, with no de-chunking on the way.
pub fn takesSplice(connection: *const Connection) bool {
    // A TLS connection's bytes are sealed into records by sluice: nothing goes around it.
    return connection.tls == null and connection.out.dechunk == null;
}

/// For an HTTP/1.0 client of a chunked response: the data of `bytes` (framing removed in
/// place). Null when the framing is broken (already refused by the exchange's own scan, so
/// this is a bug, answered with a close).
fn dechunked(connection: *Connection, bytes: []u8) ?[]u8 {
    const decoder = &(connection.out.dechunk orelse return bytes);
    const result = decoder.decodeInPlace(bytes);
    if (result.reject != null) {
        connection.close();
        return null;
    }
    return bytes[0..result.data_len];
}

/// A response sluice made itself (a route's, the 404, a handler's): its status line and
/// framing written in front of its fields, and sent from where it is. A body larger than the
/// buffer goes on in `sendResponseBody` windows, written as they come (the head has its
/// Content-Length).
pub fn sendLocal(connection: *Connection, local: Downstream.Local) void {
    connection.out.dechunk = null; // Its windows are the body's bytes: nothing to take off.
    connection.out.close_after = local.close_after;
    connection.out.started = true;
    const bytes = local.response.frameHttp1(local.buffer, .{
        .version = connection.exchange.?.request.version,
        .close = local.close_after,
    });
    connection.write(.local, bytes);
}

/// While the exchange's handler waits suspended, nothing is sent to the client: the send
/// completion polls its socket instead, so a client that closes is noticed at once (the
/// exchange is aborted, its handler's call abandoned). Bytes it sends meanwhile (a pipelined
/// request) are kept behind what is buffered, for after the response. Not over TLS (its bytes
/// are records only the TLS codec reads: the close is noticed when the response is written,
/// as while a pool answers), nor when the buffer has no room left.
pub fn watchClient(connection: *Connection) void {
    assert(connection.state == .active and connection.watch == .none);
    if (connection.tls != null or connection.send_completion.isPending()) return;
    if (connection.c_len == connection.cbuf.?.len) return;
    connection.watch = .polling;
    connection.submit();
    connection.loop().pollReadable(&connection.send_completion, &connection.socket, Connection, connection, watchCallback);
}

/// The handler is about to answer: the watch ends. True when its cancelled poll has yet to call
/// back; the exchange goes on from `Exchange.clientWatchStopped` then, once the completion is
/// free for the response.
pub fn stopWatching(connection: *Connection) bool {
    switch (connection.watch) {
        .none => return false,
        .polling => {
            connection.watch = .stopping;
            connection.loop().cancel(&connection.send_completion);
            return true;
        },
        .stopping => unreachable, // The exchange stops it once.
    }
}

fn watchCallback(connection: *Connection, result: sys.PollError!void) void {
    const stopping = connection.watch == .stopping;
    connection.watch = .none;
    if (connection.opDone(false)) return;
    if (stopping) return connection.exchange.?.clientWatchStopped(); // Whatever the poll saw.
    result catch return connection.close(); // Only a close cancels it otherwise.
    const cbuf = connection.cbuf.?;
    const n = connection.loop().recvNow(&connection.socket, cbuf[connection.c_len..]) catch |err| switch (err) {
        error.WouldBlock => return connection.watchClient(),
        else => return connection.close(), // Reset: the client is gone.
    };
    if (n == 0) return connection.close(); // The client closed while its handler waited.
    connection.c_len += @intCast(n);
    connection.watchClient();
}

/// Whether a local response to this request closes the connection after it: sluice does not
/// read a body it does not forward, so a request with one ends the connection (after a
/// linger, like an error response).
pub fn closesAfterLocal(connection: *const Connection, keep_alive: bool) bool {
    return !keep_alive or connection.proxy.draining or !connection.request_body.done;
}

/// After a 101: the head, then bytes both ways untouched until each side has closed.
pub fn startTunnel(connection: *Connection, view: Exchange.ResponseView) void {
    const new_len = rewrite.rewriteResponse(view.buffer, view.head_start, view.head_len, view.received, view.head, .{
        .connection = .upgrade,
    }) catch return connection.exchange.?.responseHeadTooLarge();
    const rest_len = view.received - view.head_len;
    connection.out.started = true;
    connection.write(.tunnel_head, view.buffer[0 .. new_len + rest_len]);
    // Bytes the client sent after its head are already in cbuf: they go first.
    if (connection.c_pos < connection.c_len) {
        connection.exchange.?.countReceived(connection.c_len - connection.c_pos);
        return connection.exchange.?.tunnelToUpstream(connection.cbuf.?[connection.c_pos..connection.c_len]);
    }
    connection.tunnelRecvFromClient();
}

/// Tunnel bytes from the backend.
pub fn tunnelToClient(connection: *Connection, bytes: []const u8) void {
    connection.write(.tunnel, bytes);
}

/// The exchange sent the client's tunnel bytes upstream: receive more.
pub fn tunnelSent(connection: *Connection) void {
    connection.tunnelRecvFromClient();
}

pub fn tunnelProgress(connection: *Connection) void {
    connection.armTimer(.tunnel);
}

/// The backend closed its side: so does the client's, once what was sent is read.
pub fn tunnelUpstreamClosed(connection: *Connection) void {
    connection.out.tunnel_upstream_done = true;
    if (!connection.send_completion.isPending()) DownstreamTls.closeNotify(connection);
    // The peer may be gone already; the close that follows cleans up either way.
    connection.loop().shutdownWrite(&connection.socket) catch {};
    connection.maybeEndTunnel();
}

/// Into the client buffer behind the request head, which the access log line written when
/// the tunnel ends still reads.
fn tunnelRecvFromClient(connection: *Connection) void {
    const body_start = connection.exchange.?.request.head_len;
    connection.c_pos = body_start;
    connection.c_len = body_start;
    connection.recvClient(connection.cbuf.?[body_start..], tunnelRecvFromClientCallback);
}

fn tunnelRecvFromClientCallback(connection: *Connection, result: sys.RecvError!usize) void {
    if (connection.opDone(false)) return;
    const n = result catch return connection.close();
    const exchange = connection.exchange.?;
    if (n == 0) {
        connection.out.tunnel_client_done = true;
        exchange.tunnelClientClosed();
        return connection.maybeEndTunnel();
    }
    connection.armTimer(.tunnel);
    connection.c_len += @intCast(n);
    exchange.countReceived(n);
    exchange.tunnelToUpstream(connection.cbuf.?[connection.c_pos..connection.c_len]);
}

fn maybeEndTunnel(connection: *Connection) void {
    if (connection.out.tunnel_client_done and connection.out.tunnel_upstream_done) connection.close();
}

/// Writes `bytes` out, whole, then goes on by what they were.
fn write(connection: *Connection, what: Out.What, bytes: []const u8) void {
    assert(bytes.len > 0);
    connection.out.what = what;
    connection.out.bytes = bytes;
    connection.out.pipe = -1;
    connection.out.progress = 0;
    connection.armTimer(if (what == .tunnel or what == .tunnel_head) .tunnel else .sending);
    connection.sendClient(bytes, writeCallback);
}

fn writeCallback(connection: *Connection, result: sys.SendError!usize) void {
    if (connection.opDone(false)) return;
    const n = result catch return connection.close(); // The client went away.
    const out = &connection.out;
    out.progress += n;
    connection.exchange.?.countSent(n);
    if (out.pipe >= 0) {
        if (out.progress < out.pipe_len) {
            connection.armTimer(.sending);
            return connection.spliceClient(out.pipe, @intCast(out.pipe_len - out.progress), writeCallback);
        }
        out.pipe = -1;
    } else if (out.progress < out.bytes.len) {
        connection.armTimer(if (out.what == .tunnel or out.what == .tunnel_head) .tunnel else .sending);
        return connection.sendClient(out.bytes[out.progress..], writeCallback);
    }
    const exchange = connection.exchange.?;
    switch (out.what) {
        .interim => {
            connection.armTimer(.waiting);
            exchange.interimSent(out.rest_start, out.rest_len);
        },
        .continue_interim => {
            connection.armTimer(.waiting);
            exchange.continueSent();
        },
        .response, .local => {
            connection.armTimer(.waiting);
            exchange.responseSent();
        },
        .tunnel_head, .tunnel => exchange.tunnelRecv(),
        .none, .error_response => unreachable, // The error has its own callback.
    }
}

/// The exchange's response is complete and its resources released: the next request, or
/// the close the response asked for.
pub fn exchangeFinished(connection: *Connection) void {
    const exchange = connection.exchange.?;
    connection.releaseExchange(exchange);
    connection.requests_served += 1;
    connection.loop().timerCancel(&connection.timer);
    if (connection.out.close_after or !connection.request_body.done) return connection.closeAfterResponse();
    connection.readRequest();
}

/// The backend answered before it read the whole request body: the rest has nowhere to go,
/// so the connection closes once the response is out (it is). The exchange ends here.
pub fn closeAfterEarlyResponse(connection: *Connection) void {
    connection.exchange.?.abort(); // Released now or when its operations call back.
    connection.closeAfterResponse();
}

/// The response is out and the connection is to close. Bytes the client sent after its
/// request (pipelined requests, the rest of a body nobody read) would make the close a reset
/// that can destroy the response before the client reads it (RFC 9112 §9.6): then half-close
/// and linger first, as after an error response.
fn closeAfterResponse(connection: *Connection) void {
    const unread = connection.c_pos < connection.c_len or !connection.request_body.done;
    if (!unread) return connection.close();
    connection.cancelPending(); // A body receive's: the linger reads into cbuf.
    connection.linger();
}

// ---------------------------------------------------------------------------------------------
// Failure, timers and close

/// The exchange failed. With `failure` and nothing of a response sent, the client gets the
/// failure's response and the connection lingers; otherwise it closes.
pub fn exchangeFailed(connection: *Connection, failure: ?Failure, response_started: bool) void {
    if (connection.state != .active) return;
    const answer = failure orelse return connection.close();
    if (response_started or !connection.canAnswer()) return connection.close();
    connection.sendError(answer);
}

/// The exchange let go of everything (after a failure or an abort).
pub fn exchangeReleased(connection: *Connection) void {
    const exchange = connection.exchange.?;
    connection.releaseExchange(exchange);
    if (connection.state == .closing) connection.maybeFinalize();
}

fn releaseExchange(connection: *Connection, exchange: *Exchange) void {
    assert(exchange.state == .free);
    connection.exchange = null;
    connection.proxy.releaseExchange(exchange);
}

/// A request refused before it reached an exchange's target (a malformed head, a head
/// timeout): counted, logged with what is known of it, answered, and the connection lingers.
fn refuseRequest(connection: *Connection, failure: Failure) void {
    const exchange = connection.exchange.?;
    exchange.refused(failure, connection.errorResponse(failure).len);
    connection.releaseExchange(exchange);
    connection.sendError(failure);
}

/// The request body failed on the client's side (malformed framing, over the limit, too
/// slow): the exchange is aborted and the client answered, unless a response had started.
fn failRequestBody(connection: *Connection, failure: Failure) void {
    const can_answer = connection.canAnswer();
    // What is being written to the client may come from the exchange's buffer or pipe, which
    // it lets go of as it fails: stop the write first (the close below would, too late).
    if (!can_answer) connection.cancelPending();
    connection.exchange.?.failByDownstream(failure);
    if (connection.state != .active) return;
    if (!can_answer) return connection.close();
    connection.sendError(failure);
}

/// Whether an error response can still be sent: nothing of a response started, and nothing
/// is being written (an interim head may be: the error would have to wait for it, and a
/// client that got a 1xx and then a close knows as much).
fn canAnswer(connection: *const Connection) bool {
    return !connection.out.started and !connection.send_completion.isPending();
}

/// The bytes of a failure's response: its head only for a HEAD request (RFC 9110 §9.3.2; a
/// body there would be read as the next response). The method is known once the request
/// line parsed, even when a later part of the head was refused.
pub fn errorResponse(connection: *const Connection, failure: Failure) []const u8 {
    if (connection.requestIsHead()) return failure_http1.responseHead(failure);
    return failure_http1.response(failure);
}

/// Whether the request being answered is a HEAD: from the parse, or, when the request line
/// itself was refused (too long, say), from its first bytes.
fn requestIsHead(connection: *const Connection) bool {
    if (connection.exchange) |exchange| {
        if (exchange.request_parser.head.method == .head) return true;
    }
    const cbuf = connection.cbuf orelse return false;
    var bytes = cbuf[0..connection.c_len];
    while (std.mem.startsWith(u8, bytes, "\r\n")) bytes = bytes[2..]; // Skipped empty lines.
    return std.mem.startsWith(u8, bytes, "HEAD ");
}

/// Sends a failure's response, then lingers (the connection always closes after an error).
pub fn sendError(connection: *Connection, failure: Failure) void {
    assert(connection.state == .active);
    connection.state = .lingering;
    connection.cancelPending();
    connection.armTimer(.linger);
    connection.out.what = .error_response;
    connection.out.bytes = connection.errorResponse(failure);
    connection.out.progress = 0;
    connection.sendClient(connection.out.bytes, sendErrorCallback);
}

fn sendErrorCallback(connection: *Connection, result: sys.SendError!usize) void {
    if (connection.opDone(true)) return;
    const n = result catch return connection.close();
    const out = &connection.out;
    out.progress += n;
    if (out.progress < out.bytes.len) return connection.sendClient(out.bytes[out.progress..], sendErrorCallback);
    connection.lingerAfterResponse();
}

/// An HTTP/2 session is over, its GOAWAY and every stream's end written: half-close and linger
/// as after a last HTTP/1.1 response. A client that sent frames meanwhile (a stream the
/// GOAWAY refused, a WINDOW_UPDATE) would otherwise get a reset for a close with unread bytes,
/// which can destroy the GOAWAY before it is read, and the client could not tell which of its
/// streams were processed (RFC 9113 §6.8; the simulator's seed 51 found it).
pub fn lingerAfterGoaway(connection: *Connection) void {
    assert(connection.http2 != null);
    assert(connection.http2.?.quiet());
    connection.cancelPending(); // The session's receive: the linger reads into cbuf.
    connection.linger();
}

/// Our last response is out, and the client may still be sending a body we do not read.
fn linger(connection: *Connection) void {
    assert(connection.state == .active);
    connection.state = .lingering;
    connection.armTimer(.linger);
    connection.lingerAfterResponse();
}

/// Half-close, then read and discard until the client closes or the linger timer fires.
/// Closing with unread bytes queued would send a reset that can destroy the response before
/// the client reads it.
fn lingerAfterResponse(connection: *Connection) void {
    assert(connection.state == .lingering);
    connection.out.what = .none;
    DownstreamTls.closeNotify(connection);
    connection.loop().shutdownWrite(&connection.socket) catch return connection.close();
    connection.lingerIfIdle();
}

fn lingerIfIdle(connection: *Connection) void {
    assert(connection.state == .lingering);
    if (connection.out.what == .error_response or connection.out.lingering) return;
    if (connection.recv_completion.isPending()) return; // Its (cancelled) callback comes back here.
    connection.out.lingering = true;
    connection.lingerRecv();
}

fn lingerRecv(connection: *Connection) void {
    if (connection.tls != null) {
        // What a TLS client still sends is dropped as it is: nothing of it is read, and the
        // engine has sent its close_notify.
        connection.submit();
        return connection.loop().recv(&connection.recv_completion, &connection.socket, connection.cbuf.?, Connection, connection, lingerRecvCallback);
    }
    connection.recvClient(connection.cbuf.?, lingerRecvCallback);
}

fn lingerRecvCallback(connection: *Connection, result: sys.RecvError!usize) void {
    if (connection.opDone(true)) return;
    const n = result catch return connection.close();
    if (n == 0) return connection.close();
    connection.lingerRecv();
}

pub fn armTimer(connection: *Connection, phase: Phase) void {
    connection.phase = phase;
    const queues = &connection.proxy.queues;
    const queue = switch (phase) {
        .idle_hot, .linger => &queues.client_short,
        .idle => &queues.client_idle_rest,
        .body, .sending => &queues.client_idle,
        .header, .handshake, .proxy_header => &queues.client_header,
        .tunnel => connection.exchange.?.tunnel_queue.?,
        .waiting => {
            connection.loop().timerCancel(&connection.timer);
            return;
        },
    };
    connection.loop().timerArm(queue, &connection.timer, Connection, connection, timerCallback);
}

fn timerCallback(connection: *Connection) void {
    assert(connection.state == .active or connection.state == .lingering);
    if (connection.state == .lingering) return connection.close(); // Linger is over.
    if (connection.http2) |http2| return http2.timedOut();
    switch (connection.phase) {
        .idle_hot => {
            if (!connection.proxy.parksIdleBuffers()) return connection.close(); // Idle timeout.
            // Still idle after the short hot period: park the buffer. The cancelled receive's
            // callback does it, unless data won the race (then it is simply processed).
            connection.parking = true;
            connection.loop().cancel(&connection.recv_completion);
            connection.armTimer(.idle);
        },
        .idle, .tunnel, .linger, .sending => connection.close(),
        .handshake => {
            connection.proxy.stats.client_timeouts.add(1);
            connection.proxy.stats.tls_handshakes_failed.add(1);
            connection.close();
        },
        .proxy_header => {
            connection.proxy.stats.client_timeouts.add(1);
            connection.refuseProxyHeader("no PROXY protocol header within the head deadline");
        },
        .header => {
            connection.proxy.stats.client_timeouts.add(1);
            connection.refuseRequest(.client_header_timeout);
        },
        .body => {
            connection.proxy.stats.client_timeouts.add(1);
            connection.failRequestBody(.client_body_timeout);
        },
        .waiting => unreachable, // No timer is armed while waiting.
    }
}

/// Drain: a connection waiting for its next request is closed now; others close after their
/// current response (sendResponse and readRequest consult `proxy.draining`).
pub fn drain(connection: *Connection) void {
    if (connection.state != .active) return;
    if (connection.http2) |http2| return http2.drain();
    if (connection.exchange != null) return;
    if (connection.phase == .idle or connection.phase == .idle_hot) connection.close();
}

pub fn close(connection: *Connection) void {
    if (connection.state == .closing or connection.state == .free) return;
    connection.state = .closing;
    connection.loop().timerCancel(&connection.timer);
    connection.cancelPending();
    if (connection.exchange) |exchange| exchange.abort(); // May release it at once.
    if (connection.http2) |http2| http2.closeAll();
    connection.maybeFinalize();
}

fn cancelPending(connection: *Connection) void {
    if (connection.recv_completion.isPending()) connection.loop().cancel(&connection.recv_completion);
    if (connection.send_completion.isPending()) connection.loop().cancel(&connection.send_completion);
}

/// Once nothing is pending and the exchange (or every HTTP/2 stream) is released: the fd and
/// buffer go back.
pub fn maybeFinalize(connection: *Connection) void {
    if (connection.state != .closing) return;
    if (connection.pending_ops > 0 or connection.exchange != null) return;
    if (connection.http2) |http2| {
        if (!http2.quiet()) return;
        http2.deinit();
    }
    const proxy = connection.proxy;
    DownstreamTls.closeNotify(connection);
    connection.loop().close(&connection.socket);
    if (connection.cbuf) |cbuf| proxy.buffers.release(cbuf);
    connection.cbuf = null;
    if (connection.tls) |*t| t.deinit(&proxy.buffers);
    connection.tls = null;
    connection.state = .free;
    proxy.releaseSession(connection);
}

/// What must hold of a slot between any two callbacks (as `Exchange.invariants`): the
/// simulator checks every slot after every step. Null when all hold, else the one that does
/// not, named.
pub fn invariants(connection: *const Connection) ?[]const u8 {
    if (connection.state == .free) {
        if (connection.pending_ops != 0) return "a free connection has operations pending";
        if (connection.exchange != null) return "a free connection has an exchange";
        if (connection.cbuf != null) return "a free connection holds a buffer";
        if (connection.tls != null or connection.http2 != null) return "a free connection holds a TLS or HTTP/2 session";
        if (connection.timer.isArmed()) return "a free connection has its timer armed";
        return null;
    }
    const completions = @as(u8, @intFromBool(connection.recv_completion.isPending())) +
        @intFromBool(connection.send_completion.isPending());
    if (connection.pending_ops != completions) return "pending operations differ from the connection's completions";
    if (connection.exchange) |exchange| {
        if (connection.http2 != null) return "an HTTP/2 connection with an HTTP/1.1 exchange";
        if (exchange.state == .free) return "the connection's exchange is free";
        switch (exchange.downstream) {
            .http1 => |owner| if (owner != connection) return "the connection's exchange is another's",
            .h2, .fetch => return "the connection's exchange is not an HTTP/1.1 one",
        }
    }
    if (connection.watch != .none and connection.exchange == null) return "a client watched with no exchange waiting";
    if (connection.out.pipe != -1 and connection.out.what != .response) return "a pipe to send from, but no response";
    return null;
}

// ---------------------------------------------------------------------------------------------
// The access log

/// The access log's facts of this connection's client (`peer` holds the certificate's text).
pub fn logFacts(connection: *const Connection, peer: *tls_ns.Engine.PeerCertificate) AccessLog.ClientFacts {
    var facts: AccessLog.ClientFacts = .{
        .ip = connection.clientIp(),
        .request_body_bytes = connection.request_body.consumed,
    };
    const session = &(connection.tls orelse return facts);
    facts.tls_version = session.version();
    facts.tls_cipher = session.cipher();
    if (session.engine.state == .open and session.clientCertificate(peer)) {
        facts.client_subject = peer.subject() orelse "";
        facts.client_fingerprint = &peer.fingerprint;
    }
    return facts;
}

pub fn clientIp(connection: *const Connection) []const u8 {
    return connection.client_ip_buffer[0..connection.client_ip_len];
}

// ---------------------------------------------------------------------------------------------
// Operations: each counted, each on the connection's own completion

pub fn recvClient(connection: *Connection, buffer: []u8, comptime callback: RecvCallback) void {
    connection.submit();
    if (connection.tls != null) return DownstreamTls.recv(connection, buffer, callback);
    connection.loop().recv(&connection.recv_completion, &connection.socket, buffer, Connection, connection, callback);
}

pub fn sendClient(connection: *Connection, buffer: []const u8, comptime callback: SendCallback) void {
    connection.submit();
    if (connection.tls != null) return DownstreamTls.send(connection, buffer, callback);
    connection.loop().send(&connection.send_completion, &connection.socket, buffer, Connection, connection, callback);
}

fn spliceClient(connection: *Connection, pipe_read: linux.fd_t, len: u32, comptime callback: SendCallback) void {
    connection.submit();
    connection.loop().spliceOut(&connection.send_completion, &connection.socket, pipe_read, len, Connection, connection, callback);
}

pub const RecvCallback = fn (*Connection, sys.RecvError!usize) void;
pub const SendCallback = fn (*Connection, sys.SendError!usize) void;

pub fn submit(connection: *Connection) void {
    connection.pending_ops += 1;
    assert(connection.pending_ops <= 2); // One per completion.
}

/// Every callback starts here. True means the callback must return at once: the connection
/// is closing (and was finalized if this was its last operation), or it is lingering and
/// this callback is not part of sending the error or lingering (`lingering_ok`).
pub fn opDone(connection: *Connection, lingering_ok: bool) bool {
    assert(connection.pending_ops > 0);
    connection.pending_ops -= 1;
    switch (connection.state) {
        .active => return false,
        .lingering => {
            if (lingering_ok) return false;
            connection.lingerIfIdle();
            return true;
        },
        .closing => {
            connection.maybeFinalize();
            return true;
        },
        .free => unreachable,
    }
}

pub fn loop(connection: *const Connection) *Loop {
    return connection.proxy.loop;
}

test "connection: an idle connection's slot stays small" {
    // Everything a request needs (parsers, field arrays, the upstream side) is in its
    // exchange slot; an idle keep-alive connection holds only this.
    try std.testing.expect(@sizeOf(Connection) <= 1024);
}
