//! One HTTP/2 connection to one member of a pool that speaks it (`protocol = h2c`, or `h2`
//! over TLS), shared by the tries that run on it as streams (Http2Try.zig): many requests, few
//! connections, as RFC 9113 intends and as gRPC backends expect.
//!
//! It drives nghttp2's `ClientSession` with its own socket (a connection slot of the pool's,
//! `LocalPool.openShared`, counted against `max_connections` like any) and two buffers of the
//! worker's: one receive and one send at a time, every byte received handed to the session at
//! once, what the session has to send written at once (no gathering per loop batch yet). The
//! session's events go to the try whose stream they name. Over TLS, the handshake follows the
//! connect and records go between the socket and those buffers (Http2BackendTls.zig, with two
//! more buffers).
//!
//! Lifetime: opened by the first try that finds no connection to its member with room for a
//! stream (`attach`), connected in the background while tries wait (each a parked "connect"
//! that completes when it is up, or fails with it). It stays open while it has tries, then
//! idles for the pool's idle timeout; it closes sooner when its pool is retired or the worker
//! drains, when the backend says GOAWAY and its last stream ends, or when the connection
//! breaks (every try on it then fails as on a reset).
//!
//! Found per member by a walk over the worker's open connections (`find`): few, since each
//! carries up to 100 streams. A table per member is the next step if pools of many members
//! multiplex.
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const sys = @import("../stdx/sys.zig");
const h2 = @import("../h2/h2.zig");
const Connections = @import("../upstream/Connections.zig");
const LocalPool = @import("../upstream/LocalPool.zig");
const Proxy = @import("Proxy.zig");
const Http2Try = @import("Http2Try.zig");
const Http2BackendTls = @import("Http2BackendTls.zig");

const ClientSession = h2.ClientSession;
const Http2Backend = @This();

proxy: *Proxy,
pool: *LocalPool,
backend_index: u16,
connection: *Connections.Connection,
session: ClientSession,
state: State = .connecting,
/// Receive and send buffers (the worker's), held while open.
in: []u8,
out: []u8,
out_len: u32 = 0,
out_sent: u32 = 0,
/// TLS under the session (`protocol = h2`); null for h2c.
secure: ?Http2BackendTls = null,
recv: Completion = .{},
/// The connect, then every send.
send: Completion = .{},
pending_ops: u8 = 0,
/// The tries attached (waiting for the connect, or with a stream).
tries: ?*Http2Try = null,
tries_count: u32 = 0,
/// nghttp2 is not reentrant: a flush asked for while it receives is done after.
receiving: bool = false,
idle_timer: Timer = .{},
/// Its member left the pool (Members.zig): it takes no new try and closes when idle.
retiring: bool = false,
/// The worker's list of open connections.
next: ?*Http2Backend = null,
prev: ?*Http2Backend = null,

pub const State = enum { connecting, ready, closing };

/// Streams per connection at most, whatever the backend allows (ClientSession.Limits).
pub const streams_max = 100;

/// The limits of every client session of a worker: the response head limits, and a stream
/// window that a try's inbox (one buffer) holds with the heads beside it.
pub fn limits(response_header_bytes_max: u32, response_headers_count_max: u32, buffer_bytes: u32) ClientSession.Limits {
    return .{
        .streams_max = streams_max,
        .stream_window_bytes = Http2Try.windowBytes(buffer_bytes),
        .header_list_bytes_max = response_header_bytes_max,
        .header_fields_max = response_headers_count_max,
    };
}

/// A connection to `backend` of `pool` with room for one more try, opening one if there is
/// none. When none can be opened (no slot, socket or memory, or the member is at its
/// connection cap), the try queues on the least busy connection to the member, whose streams
/// it waits for (`Http2Try.head_waiting`) under its deadlines, as nghttp2 would queue it; with
/// no connection to the member at all, it is shed (overloaded, or at the cap).
pub fn attachTry(proxy: *Proxy, pool: *LocalPool, backend: u16, attempt: *Http2Try) error{ Overloaded, AtBackendCap }!*Http2Backend {
    const link = find(proxy, pool, backend) orelse open(proxy, pool, backend) catch |err|
        (leastBusy(proxy, pool, backend) orelse return err);
    link.tries_count += 1;
    attempt.next = link.tries;
    attempt.prev = null;
    if (link.tries) |first| first.prev = attempt;
    link.tries = attempt;
    link.proxy.loop.timerCancel(&link.idle_timer);
    return link;
}

fn find(proxy: *Proxy, pool: *LocalPool, backend: u16) ?*Http2Backend {
    var next = proxy.h2_backends_open;
    while (next) |link| : (next = link.next) {
        if (link.pool != pool or link.backend_index != backend) continue;
        // A member that left, or the earlier member of a reused slot: no new stream, and the
        // connection closes when its last one ends.
        if (!pool.sharedCurrent(link.connection)) {
            link.retiring = true;
            continue;
        }
        if (link.hasRoom()) return link;
    }
    return null;
}

/// The connection to `backend` that a try may queue on with the fewest tries: not closing,
/// not leaving, without a GOAWAY, and below `queue_max` tries.
fn leastBusy(proxy: *Proxy, pool: *LocalPool, backend: u16) ?*Http2Backend {
    var best: ?*Http2Backend = null;
    var next = proxy.h2_backends_open;
    while (next) |link| : (next = link.next) {
        if (link.pool != pool or link.backend_index != backend) continue;
        if (link.state == .closing or link.retiring or link.session.goaway_received) continue;
        if (!pool.sharedCurrent(link.connection) or link.tries_count >= queue_max) continue;
        if (best == null or link.tries_count < best.?.tries_count) best = link;
    }
    return best;
}

/// Tries one connection holds at most, streams and waiting heads together: past it, the
/// worker sheds the request rather than queue it (as HAProxy's queue has a size).
const queue_max = 4 * streams_max;

fn hasRoom(link: *const Http2Backend) bool {
    return switch (link.state) {
        .connecting => link.tries_count < streams_max,
        // Tries attached count, whether or not their stream is open yet. Until the backend's
        // SETTINGS say how many streams it takes, as many as we would open.
        .ready => if (!link.session.settings_received)
            link.tries_count < streams_max and !link.session.goaway_received
        else
            link.session.canOpen() and link.tries_count < link.session.streamsAllowed(),
        .closing => false,
    };
}

/// Tries may send: the connection is up and the backend's SETTINGS arrived. Before them its
/// stream limit is not known, and streams opened past it would be refused (and a request
/// refused twice fails): grpc-go's client waits for them too before it uses a connection.
pub fn usable(link: *const Http2Backend) bool {
    return link.state == .ready and link.session.settings_received;
}

fn open(proxy: *Proxy, pool: *LocalPool, backend: u16) error{ Overloaded, AtBackendCap }!*Http2Backend {
    const worker = proxy.http2 orelse return error.Overloaded;
    const index = proxy.free_h2_backends.take() orelse return error.Overloaded;
    const link = &proxy.h2_backends[index.index];
    const connection = pool.openShared(backend) catch |err| {
        proxy.free_h2_backends.give(index.index);
        return switch (err) {
            error.AtBackendCap => error.AtBackendCap,
            error.NoCapacity, error.SocketFailed => error.Overloaded,
        };
    };
    // Two buffers per connection slot are reserved, four with TLS (Proxy.buffersForHttp2Backends).
    const in = proxy.buffers.acquire().?;
    const out = proxy.buffers.acquire().?;
    const secure: ?Http2BackendTls = if (pool.tls != null) Http2BackendTls.acquire(&proxy.buffers).? else null;
    link.* = .{
        .proxy = proxy,
        .pool = pool,
        .backend_index = backend,
        .connection = connection,
        .session = undefined,
        .in = in,
        .out = out,
        .secure = secure,
    };
    link.session.init(&worker.client_setup, &worker.pool, .of(Http2Backend, link)) catch {
        proxy.buffers.release(in);
        proxy.buffers.release(out);
        if (link.secure) |*codec| codec.release(&proxy.buffers);
        pool.closeShared(connection);
        proxy.free_h2_backends.give(index.index);
        return error.Overloaded;
    };
    link.next = proxy.h2_backends_open;
    if (proxy.h2_backends_open) |first| first.prev = link;
    proxy.h2_backends_open = link;
    link.pending_ops += 1;
    proxy.loop.connect(&link.send, &connection.socket, &connection.address, Http2Backend, link, connectCallback);
    return link;
}

fn connectCallback(link: *Http2Backend, result: sys.ConnectError!void) void {
    link.pending_ops -= 1;
    if (link.state == .closing) return link.maybeFree();
    result catch return link.connectFailed(false);
    if (link.secure != null) return Http2BackendTls.start(link);
    link.up();
}

/// The connection could not be made (`tls`: its handshake failed): every try waiting for it
/// fails as its own connect would have.
pub fn connectFailed(link: *Http2Backend, tls: bool) void {
    link.state = .closing;
    var next = link.tries;
    while (next) |attempt| {
        next = attempt.next;
        attempt.connected(if (tls) .tls_failed else .failed);
    }
    link.maybeFree();
}

/// Connected (and, over TLS, agreed on h2): the session's preface goes out, and the tries
/// waiting go on once the backend's SETTINGS are in (`settingsArrived`).
pub fn up(link: *Http2Backend) void {
    link.state = .ready;
    link.receiveMore();
    link.flush();
}

/// The backend's SETTINGS arrived: the tries waiting for the connection go on.
fn settingsArrived(link: *Http2Backend) void {
    var next = link.tries;
    while (next) |attempt| {
        next = attempt.next;
        attempt.connected(.up);
    }
}

/// A stream slot may have come free: heads waiting for one go out (or, after a GOAWAY, are
/// refused as unprocessed), the longest waiting first.
fn startWaitingHeads(link: *Http2Backend) void {
    while (oldestWaiting(link)) |attempt| {
        if (link.session.goaway_received) {
            attempt.refuseWaitingHead();
        } else if (link.session.canOpen()) {
            attempt.sendWaitingHead();
        } else {
            return;
        }
    }
}

/// The list holds the newest try first: the last waiting one found waited longest.
fn oldestWaiting(link: *const Http2Backend) ?*Http2Try {
    var oldest: ?*Http2Try = null;
    var next = link.tries;
    while (next) |attempt| : (next = attempt.next) {
        if (attempt.head_waiting) oldest = attempt;
    }
    return oldest;
}

/// A try's stream ended (or it never had one): the connection idles when none is left.
pub fn detach(link: *Http2Backend, attempt: *Http2Try) void {
    assert(link.tries_count > 0);
    if (attempt.prev) |prev| prev.next = attempt.next else link.tries = attempt.next;
    if (attempt.next) |next| next.prev = attempt.prev;
    attempt.next = null;
    attempt.prev = null;
    link.tries_count -= 1;
    // A closing connection (it broke, or its connect failed) is freed with its last try.
    if (link.state == .closing) return link.maybeFree();
    if (link.tries_count > 0) {
        // Its stream (reset as it left, or ended) may have been the slot a head waits for.
        if (link.usable()) link.startWaitingHeads();
        return;
    }
    if (link.pool.retired or link.retiring or link.proxy.draining or link.session.goaway_received) return link.close();
    if (link.state == .ready) link.proxy.loop.timerArm(link.pool.queues.idle, &link.idle_timer, Http2Backend, link, idleCallback);
}

fn idleCallback(link: *Http2Backend) void {
    if (link.tries_count == 0) link.close();
}

/// Closes connections no try uses when their pool is retired or the worker drains.
pub fn closeIdle(proxy: *Proxy) void {
    var next = proxy.h2_backends_open;
    while (next) |link| {
        next = link.next;
        if (link.tries_count > 0) continue;
        if (link.pool.retired or proxy.draining or !link.pool.sharedCurrent(link.connection)) link.close();
    }
}

// ---------------------------------------------------------------------------------------------
// Bytes in and out

fn receiveMore(link: *Http2Backend) void {
    if (link.state != .ready or link.recv.isPending()) return;
    link.pending_ops += 1;
    const room = if (link.secure != null) Http2BackendTls.room(link) else link.in;
    link.proxy.loop.recv(&link.recv, &link.connection.socket, room, Http2Backend, link, recvCallback);
}

fn recvCallback(link: *Http2Backend, result: sys.RecvError!usize) void {
    link.pending_ops -= 1;
    if (link.state == .closing) return link.maybeFree();
    const n = result catch 0;
    const settings_known = link.session.settings_received;
    if (link.secure != null) {
        if (!Http2BackendTls.received(link, n)) return;
    } else {
        if (n == 0) return link.broken(); // The backend went away: its streams end with it.
        if (!link.deliver(link.in[0..n])) return;
    }
    if (!settings_known and link.session.settings_received) link.settingsArrived();
    link.startWaitingHeads();
    link.flush();
    link.receiveMore();
    if (link.tries_count == 0 and link.session.goaway_received) link.close();
}

/// Hands received plaintext to the session; false when the connection broke under it.
pub fn deliver(link: *Http2Backend, bytes: []const u8) bool {
    link.receiving = true;
    link.session.receive(bytes) catch {
        link.receiving = false;
        link.broken();
        return false;
    };
    link.receiving = false;
    return link.state == .ready;
}

/// Writes what the session has to send (a try submitted, consumed or ended something).
pub fn flush(link: *Http2Backend) void {
    if (link.state != .ready) return;
    if (link.receiving) return; // `recvCallback` flushes after.
    if (link.send.isPending()) return; // `sendCallback` flushes when the write is done.
    const n = link.session.send(link.out) catch return link.broken();
    if (n == 0) return;
    link.out_len = @intCast(n);
    link.out_sent = 0;
    link.sendRest();
}

fn sendRest(link: *Http2Backend) void {
    const plaintext = link.out[link.out_sent..link.out_len];
    if (link.secure != null) {
        const records = Http2BackendTls.seal(link, plaintext) orelse return link.broken();
        return link.sendBytes(records);
    }
    link.sendBytes(plaintext);
}

fn sendBytes(link: *Http2Backend, bytes: []const u8) void {
    link.pending_ops += 1;
    link.proxy.loop.send(&link.send, &link.connection.socket, bytes, Http2Backend, link, sendCallback);
}

fn sendCallback(link: *Http2Backend, result: sys.SendError!usize) void {
    link.pending_ops -= 1;
    if (link.state == .closing) return link.maybeFree();
    const n = result catch return link.broken();
    if (link.secure) |*codec| {
        if (Http2BackendTls.sent(link, n)) |rest| return link.sendBytes(rest);
        link.out_sent += @intCast(codec.sealed);
    } else {
        link.out_sent += @intCast(n);
    }
    if (link.out_sent < link.out_len) return link.sendRest();
    link.out_len = 0;
    link.flush();
}

// ---------------------------------------------------------------------------------------------
// The session's events, to the try of their stream

pub fn h2Event(link: *Http2Backend, session: *ClientSession, event: ClientSession.Event) void {
    switch (event) {
        .goaway => return, // `canOpen` says no from now on; streams above it close refused.
        inline else => |payload| {
            const stream = if (@TypeOf(payload) == ClientSession.StreamId) payload else payload.stream;
            const context = session.streamContext(stream) orelse return;
            const attempt: *Http2Try = @ptrCast(@alignCast(context));
            // A try that moved on forgot its stream (`ClientSession.forget`): its slot may be
            // another exchange's now.
            assert(attempt.stream == stream and attempt.link == link);
            attempt.onEvent(event);
        },
    }
}

pub fn h2Body(link: *Http2Backend, session: *ClientSession, stream: ClientSession.StreamId, buffer: []u8) ClientSession.BodyChunk {
    _ = link;
    const context = session.streamContext(stream) orelse return .{ .last = 0 };
    const attempt: *Http2Try = @ptrCast(@alignCast(context));
    return attempt.readBody(buffer);
}

// ---------------------------------------------------------------------------------------------
// The end

/// The connection broke (the backend closed or reset it, or broke the protocol): every try on
/// it fails as on a reset, and it closes.
pub fn broken(link: *Http2Backend) void {
    if (link.state == .closing) return;
    link.state = .closing;
    var next = link.tries;
    while (next) |attempt| {
        next = attempt.next;
        attempt.connectionBroken();
    }
    link.close();
}

/// No new stream; pending operations are cancelled and the slot freed when they are back.
pub fn close(link: *Http2Backend) void {
    link.state = .closing;
    link.proxy.loop.timerCancel(&link.idle_timer);
    if (link.recv.isPending()) link.proxy.loop.cancel(&link.recv);
    if (link.send.isPending()) link.proxy.loop.cancel(&link.send);
    link.maybeFree();
}

pub fn maybeFree(link: *Http2Backend) void {
    assert(link.state == .closing);
    if (link.pending_ops > 0 or link.tries_count > 0) return;
    const proxy = link.proxy;
    if (link.prev) |prev| prev.next = link.next else proxy.h2_backends_open = link.next;
    if (link.next) |next| next.prev = link.prev;
    link.session.deinit();
    proxy.buffers.release(link.in);
    proxy.buffers.release(link.out);
    if (link.secure) |*codec| codec.release(&proxy.buffers);
    link.pool.closeShared(link.connection);
    proxy.free_h2_backends.give(@intCast(link - proxy.h2_backends.ptr));
    proxy.releaseIdleHolds(); // A retired pool may be quiet now.
}
