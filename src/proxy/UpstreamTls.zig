//! TLS to a backend: the codec between an attempt's upstream socket and the exchange's request
//! writer and response parser, as `Connection`'s is under a TLS client. Every receive and send
//! the exchange makes on the backend (`upstream_http1.recv`, `send`: heads, bodies,
//! a tunnel's bytes) comes here when the pool speaks TLS: a receive hands back plaintext
//! decrypted from the socket's records, a send reports plaintext taken once its records are
//! on the wire. The exchange's callbacks, framing and deadlines stay as they are: one
//! operation counted per call, one callback per operation, on the attempt's two completions
//! (a receive may chain several socket reads, a send several writes). There is no second
//! proxy path, and no second TLS stream: the handshake, receives and sends are
//! `tls.stream`'s, the one implementation a client connection's codec (DownstreamTls.zig)
//! runs too; this file says what they mean to a try.
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

const tls = @import("../tls/tls.zig");
const loop_ns = @import("../loop/loop.zig");
const BufferPool = @import("../stdx/BufferPool.zig");
const Exchange = @import("Exchange.zig");
const upstream_http1 = @import("upstream_http1.zig");

const UpstreamTls = @This();

/// The records and the operations under way (the engine is the connection's).
stream: tls.stream.State(Exchange),

const Stream = tls.stream.Stream(Exchange, .{
    .state = stateOf,
    .engine = engineOf,
    .socket = socketOf,
    .loop = loopOf,
    .recv_completion = recvCompletion,
    .send_completion = sendCompletion,
    .submit = Exchange.submit,
    .ending = ending,
    .truncation = .reset,
    .answers_alerts = false,
    .read_failed = readFailed,
    .send_reset = readWhyRefused,
    .handshake_stops = handshakeStops,
    .handshake_done = handshakeDone,
    .handshake_failed = handshakeFailed,
    .handshake_broken = handshakeBroken,
});

pub const RecvCallback = Stream.RecvCallback;
pub const SendCallback = Stream.SendCallback;
pub const recv = Stream.recv;
pub const send = Stream.send;

/// The try's two buffers; null when the worker has none free (sizing reserves them, so this is
/// a bug's symptom, answered with a 503 rather than a crash).
pub fn acquire(buffers: *BufferPool) ?UpstreamTls {
    return .{ .stream = .{ .records = tls.Ciphertext.acquire(buffers) orelse return null } };
}

pub fn release(codec: *UpstreamTls, buffers: *BufferPool) void {
    codec.stream.records.release(buffers);
    codec.* = undefined;
}

/// Nothing is held that a next request on this connection would read as its own.
pub fn reusable(codec: *const UpstreamTls, engine: *const tls.Engine) bool {
    const records = &codec.stream.records;
    return records.in_len == 0 and !records.outputPending() and !records.peer_closed and
        engine.state == .open and !engine.hasPending();
}

fn stateOf(exchange: *Exchange) *tls.stream.State(Exchange) {
    return &exchange.attempt.tls.?.stream;
}

fn recordsOf(exchange: *Exchange) *tls.Ciphertext {
    return &exchange.attempt.tls.?.stream.records;
}

fn engineOf(exchange: *Exchange) *tls.Engine {
    return &exchange.attempt.connection.?.tls.?;
}

fn socketOf(exchange: *Exchange) *loop_ns.Socket {
    return &exchange.attempt.connection.?.socket;
}

fn loopOf(exchange: *Exchange) *loop_ns.Loop {
    return exchange.loop();
}

fn recvCompletion(exchange: *Exchange) *loop_ns.Completion {
    return &exchange.attempt.recv;
}

fn sendCompletion(exchange: *Exchange) *loop_ns.Completion {
    return &exchange.attempt.send;
}

fn ending(exchange: *Exchange) bool {
    return exchange.state == .ending;
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
    }) catch |err| return handshakeFailedWhen(exchange, err, "to start");
    attempt.state = .handshaking;
    Stream.handshakeStep(exchange);
}

/// A handshake completion arrived: the exchange's own end, or the connect deadline, comes first.
fn handshakeStops(exchange: *Exchange) bool {
    if (exchange.opDone()) return true;
    if (!exchange.attempt.connect_timed_out) return false;
    exchange.connectFailed(.upstream_connect_timeout);
    return true;
}

fn handshakeDone(exchange: *Exchange) void {
    upstream_http1.handshakeDone(exchange, engineOf(exchange).resumed());
}

/// The socket failed under the handshake (a reset): a failed connect, said in the log.
fn handshakeBroken(exchange: *Exchange, _: tls.stream.Broken) void {
    exchange.proxy.warnUpstreamTls(exchange.localPool().config.name, exchange.backendName().?, "in the handshake", "the connection was reset");
    exchange.connectFailed(.upstream_tls_failed);
}

fn handshakeFailed(exchange: *Exchange, err: tls.Failure) void {
    handshakeFailedWhen(exchange, err, "in the handshake");
}

/// The engine refused: the alert it wrote goes out (best effort), the reason to the log, and
/// the try ends as a failed connect. `when`: "to start" or "in the handshake".
fn handshakeFailedWhen(exchange: *Exchange, err: tls.Failure, when: []const u8) void {
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
// What a failed receive or send means to a try

/// The engine could not read the backend's records (a bad record, an alert): the reason to the
/// log, and the try counts as a TLS failure.
fn readFailed(exchange: *Exchange) void {
    warn(exchange, engineOf(exchange), "reading");
    exchange.attempt.tls_failed = true;
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
