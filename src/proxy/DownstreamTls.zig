//! TLS on a listener: the codec between a client connection's socket and its HTTP/1.1 codec,
//! as `UpstreamTls` is under an exchange's backend. Every receive and send the connection
//! makes on its client (`Connection.recvClient`, `sendClient`: heads, bodies, a tunnel's
//! bytes) comes here when the listener has TLS: a receive hands back plaintext decrypted from
//! the socket's records, a send reports plaintext taken once its records are on the wire.
//! The connection's callbacks, framing and deadlines stay as they are: one operation counted
//! per call, one callback per operation, on the connection's two completions (a receive may
//! chain several socket reads, as a record arrives in pieces; a send several writes).
//! Plaintext decrypted from records already held is handed over with `Loop.recvReady` (no
//! syscall, and still never a callback from inside a call). A failed engine ends the
//! connection: the callers see a reset. The handshake, receives and sends are `tls.stream`'s,
//! the one implementation a try on a backend runs too (UpstreamTls.zig); this file says what
//! they mean to a client connection.
//!
//! Decisions:
//! - The handshake runs first, under the head deadline (`Connection.Phase.handshake`): a
//!   client that never finishes it costs a slot for that long and no more. A plain HTTP
//!   request gets its 400 in plain text, as nginx sends; anything else that fails is closed.
//! - The engine (AWS-LC's state, a few KB in its pool while idle) lives as long as the
//!   connection; the two ciphertext buffers are the worker's and go back while the
//!   connection is parked idle (`park`), with its own buffer, unless part of a record is
//!   held (`holdsInput`).
//! - The end of the client's stream without its close_notify ends the request as an EOF
//!   would: a client cannot make sluice forward a body it did not send whole, because the
//!   framing above (Content-Length, chunked) decides what is complete.
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const tls = @import("../tls/tls.zig");
const BufferPool = @import("../stdx/BufferPool.zig");
const Connection = @import("Connection.zig");
const rewrite = @import("rewrite.zig");

const DownstreamTls = @This();

engine: tls.Engine,
/// Records received and to send, in two of the worker's buffers (both empty slices while the
/// connection is parked), and the operations under way.
stream: tls.stream.State(Connection),

const Stream = tls.stream.Stream(Connection, .{
    .state = stateOf,
    .engine = engineOf,
    .socket = socketOf,
    .loop = loopOf,
    .recv_completion = recvCompletion,
    .send_completion = sendCompletion,
    .submit = Connection.submit,
    .ending = closing,
    .truncation = .end,
    .answers_alerts = true,
    .handshake_stops = handshakeStops,
    .handshake_done = handshakeDone,
    .handshake_failed = handshakeFailed,
    .handshake_broken = handshakeBroken,
});

pub const recv = Stream.recv;
pub const send = Stream.send;

fn stateOf(connection: *Connection) *tls.stream.State(Connection) {
    return &connection.tls.?.stream;
}

fn engineOf(connection: *Connection) *tls.Engine {
    return &connection.tls.?.engine;
}

fn loopOf(connection: *Connection) *loop_ns.Loop {
    return connection.loop();
}

fn socketOf(connection: *Connection) *loop_ns.Socket {
    return &connection.socket;
}

fn recvCompletion(connection: *Connection) *loop_ns.Completion {
    return &connection.recv_completion;
}

fn sendCompletion(connection: *Connection) *loop_ns.Completion {
    return &connection.send_completion;
}

fn closing(connection: *Connection) bool {
    return connection.state == .closing;
}

/// A TLS listener's connection: the handshake first, under the head deadline, then requests.
/// Bytes already in `cbuf` (what came behind a PROXY protocol header) are the first records.
pub fn start(connection: *Connection, server: *tls.ServerContext) void {
    const proxy = connection.proxy;
    const engine = tls.Engine.initServer(server) catch {
        // The worker's TLS memory is exhausted: shed this connection, as with no slot.
        proxy.stats.tls_handshakes_failed.add(1);
        return connection.close();
    };
    // Sizing reserves two more buffers per session when a listener has TLS.
    connection.tls = .{
        .engine = engine,
        .stream = .{ .records = .{ .in = proxy.buffers.acquire().?, .out = proxy.buffers.acquire().? } },
    };
    const early = connection.cbuf.?[connection.c_pos..connection.c_len];
    const records = &connection.tls.?.stream.records;
    assert(early.len <= records.in.len); // Buffers of one pool; a PROXY header came first.
    @memcpy(records.in[0..early.len], early);
    records.in_len = @intCast(early.len);
    connection.c_len = 0;
    connection.c_pos = 0;
    connection.armTimer(.handshake);
    Stream.handshakeStep(connection);
}

/// Both buffers go back while the connection waits idle; nothing may be held in them.
pub fn park(codec: *DownstreamTls, buffers: *BufferPool) void {
    const records = &codec.stream.records;
    assert(records.in_len == 0 and !records.outputPending());
    buffers.release(records.in);
    buffers.release(records.out);
    records.* = .{ .in = &.{}, .out = &.{}, .peer_closed = records.peer_closed };
}

pub fn unpark(codec: *DownstreamTls, buffers: *BufferPool) void {
    const records = &codec.stream.records;
    assert(records.in.len == 0 and records.out.len == 0);
    records.in = buffers.acquire().?;
    records.out = buffers.acquire().?;
}

pub fn deinit(codec: *DownstreamTls, buffers: *BufferPool) void {
    const records = &codec.stream.records;
    if (records.in.len > 0) buffers.release(records.in);
    if (records.out.len > 0) buffers.release(records.out);
    codec.engine.deinit();
    codec.* = undefined;
}

/// A partial record is held: the connection cannot give its buffers back while it waits.
pub fn holdsInput(codec: *const DownstreamTls) bool {
    return codec.stream.records.in_len > 0;
}

/// The engine's negotiated protocol and cipher, for the access log ("" before a handshake).
pub fn version(codec: *const DownstreamTls) []const u8 {
    return codec.engine.version();
}

pub fn cipher(codec: *const DownstreamTls) []const u8 {
    return codec.engine.cipher();
}

/// The client's certificate, if it presented one (verified by the handshake, or by the one
/// whose session it resumed). Formatted into `peer` on the caller's stack: for the request
/// fields the listener forwards it in and for the access log, nothing kept per connection.
pub fn clientCertificate(codec: *const DownstreamTls, peer: *tls.Engine.PeerCertificate) bool {
    return codec.engine.peerCertificate(peer);
}

/// The fields a listener that asks for client certificates forwards them in
/// (`Config.Tls.client_subject_header`, `client_fingerprint_header`), filled from `peer` when
/// the client presented one; null when the listener names no such field.
pub fn certificateFields(connection: *const Connection, peer: *tls.Engine.PeerCertificate) ?rewrite.CertificateFields {
    const codec = &(connection.tls orelse return null);
    const settings = connection.proxy.generation.listenerTls(connection.listener_slot) orelse return null;
    if (settings.client_subject_header.len == 0 and settings.client_fingerprint_header.len == 0) return null;
    var fields: rewrite.CertificateFields = .{
        .subject_name = settings.client_subject_header,
        .fingerprint_name = settings.client_fingerprint_header,
    };
    if (codec.clientCertificate(peer)) {
        fields.subject = peer.subject();
        fields.fingerprint = &peer.fingerprint;
    }
    return fields;
}

// --- The handshake ---------------------------------------------------------------------------

/// A handshake completion arrived after the connection began to close.
fn handshakeStops(connection: *Connection) bool {
    return connection.opDone(false);
}

/// The client went away (or its socket failed) under the handshake: nothing to tell it.
fn handshakeBroken(connection: *Connection, _: tls.stream.Broken) void {
    connection.close();
}

fn handshakeDone(connection: *Connection) void {
    const engine = engineOf(connection);
    const stats = &connection.proxy.stats;
    stats.tls_handshakes.add(1);
    if (engine.resumed()) stats.tls_resumptions.add(1);
    // Policy allows TLS 1.2 and 1.3 only (ServerContext): nothing else completes.
    if (engine.versionNumber() == 0x0304) stats.tls_handshakes_tls13.add(1) else stats.tls_handshakes_tls12.add(1);
    connection.startProtocol(protocol(engine));
}

/// The protocol ALPN agreed on: one the listener offered (`tls.ServerContext` selects only
/// those), or none, which on an HTTPS port means HTTP/1.1 (RFC 7301 §3.1: a client that sends
/// no ALPN gets the server's default).
fn protocol(engine: *const tls.Engine) Connection.Protocol {
    const agreed = engine.alpn() orelse return .http1;
    if (std.mem.eql(u8, agreed, "h2")) return .h2;
    assert(std.mem.eql(u8, agreed, "http/1.1")); // The contexts offer no other (generations.zig).
    return .http1;
}

/// A handshake that failed: a plain HTTP request gets its 400 in plain text (as nginx sends);
/// anything else (garbage, no shared protocol, a client that gave up) gets the alert the
/// engine wrote (protocol_version, handshake_failure, no_application_protocol, decode_error,
/// certificate_required...: what nginx and HAProxy send too), then the close.
fn handshakeFailed(connection: *Connection, err: tls.Failure) void {
    const proxy = connection.proxy;
    proxy.stats.tls_handshakes_failed.add(1);
    switch (err) {
        error.PlainHttp => {
            connection.tls.?.deinit(&proxy.buffers);
            connection.tls = null;
            proxy.countFailure(null, .plain_http_to_tls_port, true);
            connection.sendError(.plain_http_to_tls_port);
        },
        error.NotTls, error.ProtocolVersion, error.NoSharedCipher, error.CertificateVerifyFailed, error.CertificateRequired => {
            var reason: [160]u8 = undefined;
            proxy.warnClientCertificate(connection.clientIp(), connection.tls.?.engine.describe(&reason));
            sendAlertAndClose(connection);
        },
        error.NoApplicationProtocol,
        error.AlertReceived,
        error.RenegotiationRefused,
        error.UnexpectedEof,
        error.OutOfMemory,
        error.Protocol,
        => sendAlertAndClose(connection),
    }
}

/// Best effort, as close_notify: one non-blocking send of the alert the engine wrote, which
/// the socket's empty buffer takes whole unless the client is gone; then the close.
fn sendAlertAndClose(connection: *Connection) void {
    const records = &connection.tls.?.stream.records;
    if (records.outputPending()) _ = connection.loop().sendNow(&connection.socket, records.unsent()) catch {}; // Best effort (above).
    connection.close();
}

/// Before the write side ends: a close_notify alert, so the client can tell the end of a
/// close-delimited response from a truncation (RFC 8446 §6.1). Best effort: one non-blocking
/// send of a few dozen bytes, sealed into a buffer of its own (the connection's may be parked);
/// a client that is gone, or a full socket buffer, just sees the close without it. Nothing on
/// a plain connection.
pub fn closeNotify(connection: *Connection) void {
    const codec = &(connection.tls orelse return);
    if (codec.engine.state != .open) return; // No handshake finished, or already closed.
    var alert: [64]u8 = undefined; // A close_notify record: 24 to 31 bytes with our ciphers.
    var w: tls.Engine.Wire = .{ .output = &alert };
    const progress = codec.engine.close(&w) catch return; // A failed engine has nothing to say.
    if (progress != .done or w.produced == 0) return;
    _ = connection.loop().sendNow(&connection.socket, w.written()) catch {}; // Best effort (above).
}
