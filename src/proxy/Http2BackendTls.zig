//! TLS under a shared HTTP/2 connection to a backend (`protocol = h2`): the handshake after
//! the TCP connect, then records both ways between the socket and the session's plaintext
//! buffers (Http2Backend's `in` and `out`). Http2Backend calls it where a plain connection
//! reads and writes the socket, so the session above sees the same bytes either way.
//!
//! Decisions:
//! - ALPN must choose `h2` (BackendTls offers only that for such a pool): a backend that
//!   chooses nothing, or anything else, fails the connect with a warning that says so, rather
//!   than receiving a connection preface it would read as a broken HTTP/1.1 request (RFC 9113
//!   §3.2: over TLS, HTTP/2 is agreed by ALPN and nothing else).
//! - A failed handshake fails every try waiting for the connection as a failed TLS connect
//!   (`upstream_tls_failed`): nothing reached the backend, so each may try another member.
//! - The engine is the connection's (`Connections.Connection.tls`), which sends close_notify
//!   and frees it when the connection is discarded; the two record buffers are the link's,
//!   from the worker's buffers, for as long as it is open.
//! - The end of the backend's stream without close_notify, or a close_notify, ends the
//!   connection as broken: streams still open fail as on a reset, never as complete.
const std = @import("std");
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const tls = @import("../tls/tls.zig");
const BufferPool = @import("../stdx/BufferPool.zig");
const Http2Backend = @import("Http2Backend.zig");

const Http2BackendTls = @This();

records: tls.Ciphertext,
/// What the handshake needs once its output is sent.
handshake_next: tls.Engine.Progress = .want_read,
/// Plaintext sealed into the records being sent, reported when they are out.
sealed: usize = 0,

/// The link's two record buffers; null when the worker has none free (sizing reserves them).
pub fn acquire(buffers: *BufferPool) ?Http2BackendTls {
    return .{ .records = tls.Ciphertext.acquire(buffers) orelse return null };
}

pub fn release(secure: *Http2BackendTls, buffers: *BufferPool) void {
    secure.records.release(buffers);
    secure.* = undefined;
}

fn engineOf(link: *Http2Backend) *tls.Engine {
    return &link.connection.tls.?;
}

fn recordsOf(link: *Http2Backend) *tls.Ciphertext {
    return &link.secure.?.records;
}

// ---------------------------------------------------------------------------------------------
// The handshake

/// The TCP connection is up: an engine offering this worker's newest session with the member,
/// then the handshake; `Http2Backend.up` or `Http2Backend.connectFailed` when it is over.
pub fn start(link: *Http2Backend) void {
    const backend_tls = link.pool.tls.?;
    const index = link.backend_index;
    assert(link.connection.tls == null);
    link.connection.tls = tls.Engine.initClient(&backend_tls.context, .{
        .server_name = backend_tls.names[index],
        .resumption = &link.pool.resumptions[index],
    }) catch |err| {
        link.proxy.warnUpstreamTls(link.pool.config.name, link.pool.backendName(index), "to start", @errorName(err));
        return link.connectFailed(true);
    };
    step(link);
}

fn step(link: *Http2Backend) void {
    const records = recordsOf(link);
    var w = records.wire();
    const progress = engineOf(link).handshake(&w);
    records.settle(&w);
    link.secure.?.handshake_next = progress catch return failed(link, "in the handshake");
    if (records.outputPending()) return handshakeSend(link);
    handshakeContinue(link);
}

fn handshakeContinue(link: *Http2Backend) void {
    const records = recordsOf(link);
    assert(!records.outputPending());
    records.clearOutput();
    switch (link.secure.?.handshake_next) {
        .done => done(link),
        .want_read => {
            link.pending_ops += 1;
            link.proxy.loop.recv(&link.recv, &link.connection.socket, records.room(), Http2Backend, link, handshakeRecvCallback);
        },
        .want_write => step(link), // The output is out: room again.
    }
}

fn handshakeSend(link: *Http2Backend) void {
    link.pending_ops += 1;
    link.proxy.loop.send(&link.send, &link.connection.socket, recordsOf(link).unsent(), Http2Backend, link, handshakeSendCallback);
}

fn handshakeSendCallback(link: *Http2Backend, result: sys.SendError!usize) void {
    link.pending_ops -= 1;
    if (link.state == .closing) return link.maybeFree();
    const n = result catch return reset(link);
    const records = recordsOf(link);
    records.sent(n);
    if (records.outputPending()) return handshakeSend(link);
    handshakeContinue(link);
}

fn handshakeRecvCallback(link: *Http2Backend, result: sys.RecvError!usize) void {
    link.pending_ops -= 1;
    if (link.state == .closing) return link.maybeFree();
    const n = result catch return reset(link);
    recordsOf(link).received(n); // 0: the end, which the engine reports as a failure.
    step(link);
}

fn done(link: *Http2Backend) void {
    const engine = engineOf(link);
    const chosen = engine.alpn() orelse "";
    if (!std.mem.eql(u8, chosen, "h2")) {
        var buffer: [96]u8 = undefined;
        const reason = if (chosen.len == 0)
            "it chose no protocol by ALPN, and HTTP/2 over TLS needs h2"
        else
            std.fmt.bufPrint(&buffer, "it chose {s} by ALPN, not h2", .{chosen[0..@min(chosen.len, 32)]}) catch unreachable;
        link.proxy.warnUpstreamTls(link.pool.config.name, link.pool.backendName(link.backend_index), "to agree on HTTP/2", reason);
        return link.connectFailed(true);
    }
    const stats = &link.pool.stats;
    stats.tls_handshakes.add(1);
    if (engine.resumed()) stats.tls_resumptions.add(1);
    link.up();
}

/// The socket failed under the handshake.
fn reset(link: *Http2Backend) void {
    link.proxy.warnUpstreamTls(link.pool.config.name, link.pool.backendName(link.backend_index), "in the handshake", "the connection was reset");
    link.connectFailed(true);
}

/// The engine refused: its alert goes out (best effort), its reason to the log.
fn failed(link: *Http2Backend, when: []const u8) void {
    const records = recordsOf(link);
    if (records.outputPending()) {
        _ = link.proxy.loop.sendNow(&link.connection.socket, records.unsent()) catch {}; // Best effort: an alert.
    }
    records.clearOutput();
    warn(link, when);
    link.connectFailed(true);
}

fn warn(link: *Http2Backend, when: []const u8) void {
    var buffer: [256]u8 = undefined;
    const reason = engineOf(link).describe(&buffer);
    link.proxy.warnUpstreamTls(link.pool.config.name, link.pool.backendName(link.backend_index), when, reason);
}

// ---------------------------------------------------------------------------------------------
// Records, once open

/// Where the next receive from the socket goes.
pub fn room(link: *Http2Backend) []u8 {
    return recordsOf(link).room();
}

/// `n` bytes of records arrived (0: the socket ended): each record's plaintext goes to the
/// session (`Http2Backend.deliver`). False when the connection broke or is closing.
pub fn received(link: *Http2Backend, n: usize) bool {
    const records = recordsOf(link);
    records.received(n);
    const engine = engineOf(link);
    while (true) {
        var w = records.wire();
        w.output = &.{}; // A read writes nothing: AWS-LC answers a KeyUpdate with the next write.
        const result = engine.read(&w, link.in);
        records.settle(&w);
        const read = result catch {
            warn(link, "reading");
            link.broken();
            return false;
        };
        if (read.plaintext > 0) {
            if (!link.deliver(link.in[0..read.plaintext])) return false;
            continue;
        }
        switch (read.progress) {
            .want_read => if (!records.peer_closed) return true,
            // close_notify, an end without it, or a state a read cannot leave: over.
            .closed, .want_write, .plaintext_full => {},
        }
        link.broken();
        return false;
    }
}

/// Seals what it can of `plaintext` into records; the records to send, or null when the
/// engine cannot seal (it failed, or the backend closed).
pub fn seal(link: *Http2Backend, plaintext: []const u8) ?[]const u8 {
    const records = recordsOf(link);
    assert(!records.outputPending());
    records.clearOutput();
    const engine = engineOf(link);
    if (engine.state != .open) return null;
    var w = records.wire();
    const result = engine.write(&w, plaintext);
    records.settle(&w);
    const written = result catch return null;
    // A buffer holds a whole record and its overhead, so a call seals something.
    if (!records.outputPending()) return null;
    link.secure.?.sealed = written.plaintext;
    return records.unsent();
}

/// `n` bytes of records went out: the records still to send, or null when they all went (the
/// plaintext they carry is then `sealed`).
pub fn sent(link: *Http2Backend, n: usize) ?[]const u8 {
    const records = recordsOf(link);
    records.sent(n);
    if (records.outputPending()) return records.unsent();
    records.clearOutput();
    return null;
}
