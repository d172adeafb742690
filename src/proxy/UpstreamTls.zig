//! TLS to a backend: the codec between an attempt's upstream socket and the exchange's request
//! writer and response parser, as `Connection`'s is under a TLS client. Every receive and send
//! the exchange makes on the backend (`upstream_http1.recv`, `send`: heads, bodies,
//! a tunnel's bytes) comes here when the pool speaks TLS: a receive hands back plaintext
//! decrypted from the socket's records, a send reports plaintext taken once its records are
//! on the wire. The exchange's callbacks, framing and deadlines stay as they are: one
//! operation counted per call, one callback per operation, on the attempt's two completions
//! (a receive may chain several socket reads, a send several writes). There is no second
//! proxy path.
//!
//! Decisions:
//! - The engine (AWS-LC's connection state and its session) belongs to the upstream
//!   connection and is kept while it is idle in its pool; the two ciphertext buffers belong to
//!   the try (`Attempt.tls`), from the worker's buffers, and go back when the try lets go of
//!   the connection. A connection is parked only when nothing is held: no ciphertext of a
//!   record in part, no plaintext AWS-LC decrypted past the response.
//! - A fresh connection's handshake runs after the TCP connect, under the connect deadline; a
//!   handshake that fails (verification, no common protocol, an alert) is a connect-class
//!   failure (`Exchange.connectFailed`): nothing reached the backend, so another backend may
//!   be tried within the pool's tries and retry budget, and the backend's health hears of it.
//!   Its reason goes to a warning line in AWS-LC's words.
//! - The end of the backend's stream without its close_notify is a reset, not an end: a
//!   close-delimited body cut short by an attacker must not pass as complete.
const std = @import("std");
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const tls = @import("../tls/tls.zig");
const BufferPool = @import("../stdx/BufferPool.zig");
const Connections = @import("../upstream/Connections.zig");
const Exchange = @import("Exchange.zig");
const upstream_http1 = @import("upstream_http1.zig");

const UpstreamTls = @This();

/// Records received and to send, in the try's two buffers.
records: tls.Ciphertext,
/// The receive and the send under way for the exchange, and their callbacks.
plain_recv: []u8 = &.{},
recv_callback: *const RecvCallback = undefined,
plain_send: []const u8 = &.{},
send_callback: *const SendCallback = undefined,
/// Plaintext of `plain_send` sealed into records, reported when they have gone out.
send_taken: usize = 0,
/// What the handshake needs once its output is sent.
handshake_next: tls.Engine.Progress = .want_read,

pub const RecvCallback = fn (*Exchange, sys.RecvError!usize) void;
pub const SendCallback = fn (*Exchange, sys.SendError!usize) void;

/// The try's two buffers; null when the worker has none free (sizing reserves them, so this is
/// a bug's symptom, answered with a 503 rather than a crash).
pub fn acquire(buffers: *BufferPool) ?UpstreamTls {
    return .{ .records = tls.Ciphertext.acquire(buffers) orelse return null };
}

pub fn release(codec: *UpstreamTls, buffers: *BufferPool) void {
    codec.records.release(buffers);
    codec.* = undefined;
}

/// Nothing is held that a next request on this connection would read as its own.
pub fn reusable(codec: *const UpstreamTls, engine: *const tls.Engine) bool {
    const records = &codec.records;
    return records.in_len == 0 and !records.outputPending() and !records.peer_closed and
        engine.state == .open and !engine.hasPending();
}

fn codecOf(exchange: *Exchange) *UpstreamTls {
    return &exchange.attempt.tls.?;
}

fn recordsOf(exchange: *Exchange) *tls.Ciphertext {
    return &exchange.attempt.tls.?.records;
}

fn engineOf(exchange: *Exchange) *tls.Engine {
    return &exchange.attempt.connection.?.tls.?;
}

fn socketOf(exchange: *Exchange) *@import("../loop/loop.zig").Socket {
    return &exchange.attempt.connection.?.socket;
}

// ---------------------------------------------------------------------------------------------
// The handshake, on a fresh connection

/// The TCP connection is up: make its engine (offering this worker's newest session with the
/// backend) and shake hands; then `upstream_http1.handshakeDone`, or `Exchange.connectFailed`.
pub fn startHandshake(exchange: *Exchange) void {
    const attempt = &exchange.attempt;
    const pool = exchange.localPool();
    const backend_tls = pool.tls.?;
    const index = attempt.backend_index;
    const connection = attempt.connection.?;
    assert(connection.tls == null and attempt.tls != null);
    connection.tls = tls.Engine.initClient(&backend_tls.context, .{
        .server_name = backend_tls.names[index],
        .resumption = &pool.resumptions[index],
    }) catch |err| return handshakeFailed(exchange, err, "to start");
    attempt.state = .handshaking;
    handshakeStep(exchange);
}

fn handshakeStep(exchange: *Exchange) void {
    const codec = codecOf(exchange);
    var w = codec.records.wire();
    const progress = engineOf(exchange).handshake(&w);
    codec.records.settle(&w);
    codec.handshake_next = progress catch |err| return handshakeFailed(exchange, err, "in the handshake");
    if (codec.records.outputPending()) return handshakeSend(exchange);
    handshakeContinue(exchange);
}

fn handshakeContinue(exchange: *Exchange) void {
    const codec = codecOf(exchange);
    assert(!codec.records.outputPending());
    codec.records.clearOutput();
    switch (codec.handshake_next) {
        .done => upstream_http1.handshakeDone(exchange, engineOf(exchange).resumed()),
        .want_read => {
            exchange.submit();
            exchange.loop().recv(&exchange.attempt.recv, socketOf(exchange), codec.records.room(), Exchange, exchange, handshakeRecvCallback);
        },
        .want_write => handshakeStep(exchange), // The output is out: room again.
    }
}

fn handshakeSend(exchange: *Exchange) void {
    exchange.submit();
    exchange.loop().send(&exchange.attempt.send, socketOf(exchange), recordsOf(exchange).unsent(), Exchange, exchange, handshakeSendCallback);
}

fn handshakeSendCallback(exchange: *Exchange, result: sys.SendError!usize) void {
    if (exchange.opDone()) return;
    if (exchange.attempt.connect_timed_out) return exchange.connectFailed(.upstream_connect_timeout);
    const n = result catch return handshakeBroken(exchange);
    const records = recordsOf(exchange);
    records.sent(n);
    if (records.outputPending()) return handshakeSend(exchange);
    handshakeContinue(exchange);
}

fn handshakeRecvCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    if (exchange.opDone()) return;
    if (exchange.attempt.connect_timed_out) return exchange.connectFailed(.upstream_connect_timeout);
    const n = result catch return handshakeBroken(exchange);
    recordsOf(exchange).received(n);
    handshakeStep(exchange);
}

/// The socket failed under the handshake (a reset): a failed connect, said in the log.
fn handshakeBroken(exchange: *Exchange) void {
    exchange.proxy.warnUpstreamTls(exchange.localPool().config.name, exchange.backendName().?, "in the handshake", "the connection was reset");
    exchange.connectFailed(.upstream_tls_failed);
}

/// The engine refused: the alert it wrote goes out (best effort), the reason to the log, and
/// the try ends as a failed connect.
fn handshakeFailed(exchange: *Exchange, err: tls.Failure, when: []const u8) void {
    const records = recordsOf(exchange);
    if (exchange.attempt.connection.?.tls) |*engine| {
        if (records.outputPending()) {
            _ = exchange.loop().sendNow(socketOf(exchange), records.unsent()) catch {}; // Best effort: an alert.
        }
        warn(exchange, engine, when);
    } else {
        exchange.proxy.warnUpstreamTls(exchange.localPool().config.name, exchange.backendName().?, when, @errorName(err));
    }
    records.clearOutput();
    switch (err) {
        // The worker's TLS memory ran out: load to shed, not the backend's fault.
        error.OutOfMemory => exchange.failOverloaded(),
        else => exchange.connectFailed(.upstream_tls_failed),
    }
}

/// The warning line with AWS-LC's reason ("certificate verify failed: self signed
/// certificate", "tlsv13 alert certificate required").
fn warn(exchange: *Exchange, engine: *const tls.Engine, when: []const u8) void {
    var buffer: [256]u8 = undefined;
    const reason = engine.describe(&buffer);
    exchange.proxy.warnUpstreamTls(exchange.localPool().config.name, exchange.backendName().?, when, reason);
}

// ---------------------------------------------------------------------------------------------
// Receives and sends for the exchange

/// The receive the exchange asked for (counted by it): plaintext from what is held, else more
/// records.
pub fn recv(exchange: *Exchange, buffer: []u8, comptime callback: RecvCallback) void {
    const codec = codecOf(exchange);
    assert(buffer.len > 0);
    codec.plain_recv = buffer;
    codec.recv_callback = callback;
    recvStep(exchange);
}

fn recvStep(exchange: *Exchange) void {
    const codec = codecOf(exchange);
    var w = codec.records.wire();
    w.output = &.{}; // A read writes nothing: AWS-LC answers a KeyUpdate with the next write.
    const engine = engineOf(exchange);
    const result = engine.read(&w, codec.plain_recv);
    codec.records.settle(&w);
    const read = result catch {
        warn(exchange, engine, "reading");
        exchange.attempt.tls_failed = true;
        return recvDone(exchange, error.ConnectionResetByPeer);
    };
    if (read.plaintext > 0) return recvDone(exchange, read.plaintext);
    switch (read.progress) {
        .closed => recvDone(exchange, 0), // close_notify: an orderly end.
        .want_read => {
            // The stream ended without close_notify: maybe a truncation, never an end.
            if (codec.records.peer_closed) return recvDone(exchange, error.ConnectionResetByPeer);
            exchange.loop().recv(&exchange.attempt.recv, socketOf(exchange), codec.records.room(), Exchange, exchange, recvCallback);
        },
        .want_write, .plaintext_full => recvDone(exchange, error.ConnectionResetByPeer),
    }
}

fn recvDone(exchange: *Exchange, result: sys.RecvError!usize) void {
    const codec = codecOf(exchange);
    exchange.loop().recvReady(&exchange.attempt.recv, socketOf(exchange), codec.plain_recv, result, Exchange, exchange, recvDeliverCallback);
}

fn recvDeliverCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    codecOf(exchange).recv_callback(exchange, result);
}

/// Records arrived (or the socket ended): decrypt, unless the exchange is ending.
fn recvCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    const codec = codecOf(exchange);
    const n = result catch |err| return codec.recv_callback(exchange, err);
    if (exchange.state == .ending) return codec.recv_callback(exchange, error.Canceled);
    codec.records.received(n);
    recvStep(exchange);
}

/// The send the exchange asked for (counted by it): seal what fits one buffer of records, send
/// them all, then report the plaintext taken.
pub fn send(exchange: *Exchange, buffer: []const u8, comptime callback: SendCallback) void {
    const codec = codecOf(exchange);
    assert(!codec.records.outputPending() and codec.send_taken == 0);
    codec.plain_send = buffer;
    codec.send_callback = callback;
    codec.records.clearOutput();
    const engine = engineOf(exchange);
    // The backend sent close_notify (or the engine failed): nothing more can be sealed.
    if (engine.state != .open) return sendRefused(exchange);
    var w = codec.records.wire();
    const result = engine.write(&w, buffer);
    codec.records.settle(&w);
    const written = result catch return sendRefused(exchange);
    // A buffer holds a whole record and its overhead, so a call seals something unless the
    // engine waits for the peer (renegotiation is off: it never does).
    if (!codec.records.outputPending()) return sendRefused(exchange);
    codec.send_taken = written.plaintext;
    sendOutput(exchange);
}

fn sendOutput(exchange: *Exchange) void {
    exchange.loop().send(&exchange.attempt.send, socketOf(exchange), recordsOf(exchange).unsent(), Exchange, exchange, sendCallback);
}

fn sendCallback(exchange: *Exchange, result: sys.SendError!usize) void {
    const codec = codecOf(exchange);
    const n = result catch |err| {
        if (err == error.ConnectionResetByPeer or err == error.BrokenPipe) readWhyRefused(exchange);
        return sendFailed(exchange, err);
    };
    if (exchange.state == .ending) return sendFailed(exchange, error.Canceled);
    codec.records.sent(n);
    if (codec.records.outputPending()) return sendOutput(exchange);
    const taken = codec.send_taken;
    codec.send_taken = 0;
    codec.send_callback(exchange, taken);
}

/// The backend reset the connection under the request's head. On a connection this fresh it
/// may have said why first: a TLS 1.3 backend that wants a client certificate checks it after
/// our side of the handshake is done, and closes with its alert while the head is on its way;
/// the reset that our unread head causes then fails the send, and the alert waits unread. So
/// read what is already here (never waiting) and let the engine say it: `tls_failed` and the
/// reason in the warning line, as when the receive finds the alert first. Not while a receive
/// is pending (after the head, the response's), which would race it.
fn readWhyRefused(exchange: *Exchange) void {
    if (exchange.attempt.state != .sending_head) return;
    const records = recordsOf(exchange);
    const n = exchange.loop().recvNow(socketOf(exchange), records.room()) catch return;
    if (n == 0) return; // Closed without a word: a reset, as before.
    records.received(n);
    var w = records.wire();
    w.output = &.{};
    var plaintext: [1]u8 = undefined; // The attempt is failing: data, if any, is not kept.
    const engine = engineOf(exchange);
    const result = engine.read(&w, &plaintext);
    records.settle(&w);
    _ = result catch {
        warn(exchange, engine, "sending the request");
        exchange.attempt.tls_failed = true;
    };
}

/// The engine cannot seal the send: it fails, after the batch, as a send to a closed peer.
fn sendRefused(exchange: *Exchange) void {
    const codec = codecOf(exchange);
    codec.records.clearOutput();
    exchange.loop().sendReady(&exchange.attempt.send, socketOf(exchange), codec.plain_send, error.BrokenPipe, Exchange, exchange, sendDeliverCallback);
}

/// The send ends without its records on the wire: the connection will not send again.
fn sendFailed(exchange: *Exchange, err: sys.SendError) void {
    const codec = codecOf(exchange);
    codec.send_taken = 0;
    codec.records.clearOutput();
    codec.send_callback(exchange, err);
}

fn sendDeliverCallback(exchange: *Exchange, result: sys.SendError!usize) void {
    codecOf(exchange).send_callback(exchange, result);
}
