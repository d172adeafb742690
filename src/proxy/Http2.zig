//! A client connection that speaks HTTP/2 (ALPN `h2` on an HTTPS listener, or the h2c preface
//! on a plain listener that allows it): the `Connection` slot keeps its socket, TLS codec,
//! timer and read buffer; this drives nghttp2's `ServerSession` with them and runs each request
//! stream as an exchange (Http2Stream.zig is the exchange's downstream).
//!
//! One receive and one send at a time, as for HTTP/1.1: every byte received goes to the
//! session at once (it keeps what a frame still needs), and what the session has to send is
//! copied into `out` and written. A response body is pulled by nghttp2 when the stream's and
//! the connection's windows allow (`Http2Stream.readBody`); a window of the exchange's buffer
//! taken whole is handed back to its exchange after the session wrote it into frames
//! (`flush`), so a slow client slows its streams' backends through their buffers, and a slow
//! backend stalls only its own stream.
//!
//! Memory: the slot (this struct), `out` (one buffer of the worker's pool while there is
//! something to write, a session's second as `Proxy.buffersPerSession` counts them), the
//! connection's read buffer (and TLS record buffers), given back after a second with no
//! stream open as an idle HTTP/1.1 connection's are (`park`), and
//! nghttp2's own state in the worker's `h2.memory.Pool`; each stream a stream slot with its
//! exchange slot and buffers (Proxy.zig).
const std = @import("std");
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const loop_ns = @import("../loop/loop.zig");
const Counter = @import("../stdx/Counter.zig");
const h2 = @import("../h2/h2.zig");
const http = @import("../http/http.zig");
const Config = @import("../config/Config.zig");
const Connection = @import("Connection.zig");
const Stream = @import("Http2Stream.zig");
const Proxy = @import("Proxy.zig");
const Http2Try = @import("Http2Try.zig");

const ServerSession = h2.ServerSession;
const Http2 = @This();

connection: *Connection,
session: ServerSession,
/// Frames being written: `out[sent..len]` is still to go. A pool buffer held only while
/// there is something to write (a session's second buffer, so always there when asked for):
/// an idle connection does not keep it.
out: ?[]u8 = null,
len: u32 = 0,
sent: u32 = 0,
/// Streams that hold a slot: ended on close.
streams: ?*Stream = null,
streams_count: u32 = 0,
/// Streams whose response window nghttp2 took whole, to hand back after the frames are made.
drained: ?*Stream = null,
/// `flush` is running, or the session is receiving (nghttp2 is not reentrant): a nested call
/// only asks for another round, which the caller runs when it is done.
flushing: bool = false,
receiving: bool = false,
flush_again: bool = false,
/// Streams whose exchange waits for request body bytes: the client body timeout runs.
body_waits: u32 = 0,
/// Since when responses have waited for the client's flow-control window with no DATA going
/// out (`idle`); null: none waits, or DATA went out since.
window_stall_since_ns: ?u64 = null,
/// A GOAWAY was submitted (drain, idle timeout, a limit): close once it and every stream's
/// end are written.
going_away: bool = false,
/// The highest stream id taken (given an exchange): what a GOAWAY names as its last.
last_taken: ServerSession.StreamId = 0,

/// The HTTP/2 connection preface a client sends first (RFC 9113 §3.4).
pub const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub const PrefaceMatch = enum { yes, partial, no };

/// Whether `bytes` (the first a plain connection received) start HTTP/2's preface.
pub fn matchPreface(bytes: []const u8) PrefaceMatch {
    const n = @min(bytes.len, preface.len);
    if (!std.mem.eql(u8, bytes[0..n], preface[0..n])) return .no;
    return if (n == preface.len) .yes else .partial;
}

/// The worker's HTTP/2 state: nghttp2's shared setup, its memory, the counters, and the slots.
pub const Worker = struct {
    setup: ServerSession.Setup,
    /// Sessions to backends that speak HTTP/2 (Http2Backend.zig).
    client_setup: h2.ClientSession.Setup,
    pool: h2.memory.Pool,
    counters: ServerSession.Counters = .{},
    /// Connections that started HTTP/2, and streams served.
    connections: Counter = .{},
    streams: Counter = .{},
    /// Streams refused because the worker's stream slots were all taken.
    streams_refused: Counter = .{},
    /// The fields of one head being converted and submitted, and the names and values the
    /// response rules write (Http2Stream.zig, Http2Try.zig): nghttp2 copies a head when it is
    /// submitted, so nothing holds these past one call. Here rather than on the stack: safe
    /// builds fill undefined stack memory with 0xAA, 8 KiB per response.
    fields_scratch: [ServerSession.submitted_fields_max]ServerSession.Field = undefined,
    rules_scratch: [4096]u8 = undefined,
    /// A backend stream's trailers as HTTP/1.1 text, before they go into the
    /// try's inbox (Http2Try.zig), for the length of one call.
    text_scratch: [Http2Try.text_room_bytes]u8 = undefined,
};

/// Request body bytes a stream may have in flight: the protocol's initial window, which a
/// client may use before it has seen our SETTINGS anyway (RFC 9113 §6.9.2), so announcing less
/// would not bound what arrives on a connection's first streams.
pub const window_bytes: u32 = 65_535;

/// The limits every session of a worker uses: nghttp2's defaults and ours (ServerSession.zig),
/// with the head limits of HTTP/1.1 and the configured concurrent streams.
pub fn limits(config: *const Config) ServerSession.Limits {
    return .{
        .header_list_bytes_max = config.header_bytes_max,
        .header_fields_max = config.headers_count_max,
        .stream_window_bytes = window_bytes,
        .concurrent_streams_max = config.http2_streams_max,
    };
}

/// The connection negotiated HTTP/2: its first `already` bytes are in `cbuf`.
pub fn start(connection: *Connection, already: u32) void {
    const proxy = connection.proxy;
    const worker = proxy.http2.?;
    const http2 = proxy.acquireHttp2() orelse return connection.close();
    http2.* = .{ .connection = connection, .session = undefined };
    http2.session.init(&worker.setup, &worker.pool, &worker.counters, .of(Http2, http2)) catch {
        proxy.releaseHttp2(http2);
        return connection.close();
    };
    connection.http2 = http2;
    worker.connections.add(1);
    if (already > 0) {
        http2.received(connection.cbuf.?[0..already]);
        if (connection.state != .active) return;
    }
    // The preface completed after the drain began (a slow client's, or at the end of a TLS
    // handshake): the drain found an HTTP/1.1 connection waiting for a head and let it be, so
    // the GOAWAY is sent now, taking no stream beyond those already received; else the
    // session would serve new streams past the drain (the simulator's seed 2688).
    if (proxy.draining) http2.goAway();
    http2.flush();
    http2.receiveMore();
}

fn received(http2: *Http2, bytes: []const u8) void {
    // nghttp2 must not be asked to send from inside its own receive: `flush` waits for the end.
    http2.receiving = true;
    defer http2.receiving = false;
    http2.session.receive(bytes, http2.connection.loop().now()) catch |err| switch (err) {
        // A limit was passed (counted): the GOAWAY goes out, then the connection closes.
        error.Flooded => http2.going_away = true,
        error.OutOfMemory, error.Protocol => return http2.connection.close(),
    };
}

fn receiveMore(http2: *Http2) void {
    const connection = http2.connection;
    if (connection.state != .active) return;
    if (connection.recv_completion.isPending()) return;
    if (!http2.session.wantsRead()) {
        _ = http2.maybeClose();
        return;
    }
    connection.recvClient(connection.cbuf.?, recvCallback);
}

fn recvCallback(connection: *Connection, result: sys.RecvError!usize) void {
    if (connection.opDone(false)) return;
    const http2 = connection.http2.?;
    const parking = connection.parking;
    connection.parking = false;
    const n = result catch |err| switch (err) {
        error.Canceled => if (!parking) return connection.close() else return http2.parkBuffers(),
        else => return connection.close(),
    };
    if (n == 0) return connection.close(); // The client went away: its streams end with it.
    http2.received(connection.cbuf.?[0..n]);
    if (connection.state != .active) return;
    http2.flush();
    http2.receiveMore();
}

/// Writes what the session has to send, and hands windows taken whole back to their
/// exchanges (which may give more at once: then round again).
///
/// Not at once: a zero-byte send that completes after this batch of callbacks
/// (`Loop.sendReady`) does it, so every stream that answered in the batch goes out in one
/// write, as HAProxy and nginx gather theirs.
pub fn flush(http2: *Http2) void {
    const connection = http2.connection;
    if (connection.state != .active) return;
    if (http2.flushing or http2.receiving) {
        http2.flush_again = true;
        return;
    }
    if (connection.send_completion.isPending()) return; // Its callback flushes.
    http2.scheduleFlush();
}

/// A flush after this loop batch, through the send completion (one flush per batch).
fn scheduleFlush(http2: *Http2) void {
    const connection = http2.connection;
    connection.submit();
    connection.loop().sendReady(&connection.send_completion, &connection.socket, "", 0, Connection, connection, flushCallback);
}

fn flushCallback(connection: *Connection, result: sys.SendError!usize) void {
    if (connection.opDone(false)) return;
    _ = result catch unreachable; // Known at submission: 0.
    connection.http2.?.flushNow();
}

fn flushNow(http2: *Http2) void {
    const connection = http2.connection;
    if (connection.state != .active) return;
    assert(!http2.flushing and !http2.receiving);
    assert(!connection.send_completion.isPending());
    http2.flushing = true;
    defer http2.flushing = false;
    http2.unpark(); // A GOAWAY (the idle timeout, a drain) may be sent from parked.
    // A session's second buffer (`Proxy.buffersPerSession`), always there.
    const out = http2.out orelse http2.connection.proxy.buffers.acquire().?;
    http2.out = out;
    while (true) {
        http2.flush_again = false;
        const n = http2.session.send(out[http2.len..]) catch |err| switch (err) {
            error.Flooded => blk: {
                http2.going_away = true;
                break :blk 0;
            },
            error.OutOfMemory, error.Protocol => return connection.close(),
        };
        http2.len += @intCast(n);
        while (http2.drained) |stream| {
            http2.drained = stream.drained_next;
            stream.drained_next = null;
            stream.drained = false;
            stream.windowSent();
            if (connection.state != .active) return;
        }
        if (!http2.flush_again and (n == 0 or http2.len == out.len)) break;
        if (http2.len == out.len) break;
    }
    if (http2.len > http2.sent) {
        connection.armTimer(.sending);
        return connection.sendClient(out[http2.sent..http2.len], sendCallback);
    }
    http2.releaseOut();
    http2.idle();
    // `idle` reset streams whose window stayed shut: their RST_STREAM frames go in a new round
    // (a flush asked for during this one is only noted).
    if (http2.flush_again and connection.state == .active and !connection.send_completion.isPending()) http2.scheduleFlush();
}

fn sendCallback(connection: *Connection, result: sys.SendError!usize) void {
    if (connection.opDone(false)) return;
    const http2 = connection.http2.?;
    const n = result catch return connection.close();
    http2.sent += @intCast(n);
    if (http2.sent < http2.len) return connection.sendClient(http2.out.?[http2.sent..http2.len], sendCallback);
    http2.sent = 0;
    http2.len = 0;
    http2.flushNow();
    http2.receiveMore();
}

fn releaseOut(http2: *Http2) void {
    assert(http2.len == 0);
    const out = http2.out orelse return;
    http2.connection.proxy.buffers.release(out);
    http2.out = null;
}

/// Nothing is being written: the idle timer runs while no stream is open, none otherwise
/// (each exchange has its deadlines); a session that is over closes.
fn idle(http2: *Http2) void {
    const connection = http2.connection;
    if (http2.maybeClose()) return;
    if (http2.streams_count == 0) {
        // The client idle timeout: its first second hot, then the buffers are parked
        // (`timedOut`), as an idle HTTP/1.1 connection's are.
        const parks = connection.proxy.parksIdleBuffers() and connection.cbuf != null;
        connection.armTimer(if (parks) .idle_hot else .sending);
    } else if (http2.body_waits > 0) {
        connection.armTimer(.body); // Request bodies must keep arriving.
    } else if (http2.windowWaits()) {
        // Responses wait for the client's WINDOW_UPDATE: the client idle timeout runs from
        // the last DATA that went out, whatever else the client sends (a client that keeps
        // its windows shut while it trickles other frames would hold the streams, their
        // exchanges and a drain forever: the HTTP/2 slow read). Every write re-arms the
        // connection's timer, so the stall's age is checked here too, after each one.
        const now = connection.loop().now();
        const since = http2.window_stall_since_ns orelse now;
        http2.window_stall_since_ns = since;
        if (now - since >= connection.proxy.queues.client_idle.duration_ns) return http2.resetStalled();
        connection.armTimer(.sending);
    } else {
        http2.window_stall_since_ns = null;
        connection.armTimer(.waiting);
    }
}

/// Streams whose response waited for the client's window for the whole client idle timeout:
/// reset (CANCEL), counted as client timeouts, as an HTTP/1.1 client that does not read is
/// closed. The connection serves on.
fn resetStalled(http2: *Http2) void {
    http2.window_stall_since_ns = null;
    var next = http2.streams;
    while (next) |stream| {
        next = stream.next;
        if (!stream.waitsForWindow()) continue;
        http2.connection.proxy.stats.client_timeouts.add(1);
        stream.windowTimedOut();
    }
    http2.flush();
}

/// Some stream has response bytes nghttp2 has not taken while nothing is being written: it
/// waits for the client's flow-control window.
fn windowWaits(http2: *const Http2) bool {
    var next = http2.streams;
    while (next) |stream| : (next = stream.next) {
        if (stream.waitsForWindow()) return true;
    }
    return false;
}

/// Ends the connection when the session is over (both sides said GOAWAY with no stream open,
/// or it failed) and nothing is left to write: half-closed, then lingering (`Connection.
/// lingerAfterGoaway`), not closed, since frames the client sent meanwhile would turn a close
/// into a reset that can destroy the GOAWAY before the client reads it.
fn maybeClose(http2: *Http2) bool {
    const connection = http2.connection;
    assert(connection.state == .active);
    if (connection.send_completion.isPending() or http2.len > 0) return false;
    const over = !http2.session.wantsRead() and !http2.session.wantsWrite();
    const done_going = http2.going_away and http2.streams_count == 0 and !http2.session.wantsWrite();
    if (!over and !done_going) return false;
    if (!http2.quiet()) {
        connection.close(); // Streams nghttp2 closed whose exchanges still run: aborted now.
        return true;
    }
    connection.lingerAfterGoaway();
    return true;
}

/// The connection's timer: idle with no stream (or a client that does not read what it is
/// sent): GOAWAY and close.
pub fn timedOut(http2: *Http2) void {
    const connection = http2.connection;
    if (connection.phase == .idle_hot) {
        // The hot second ran out in the turn the connection came back to life (a stream
        // opened, its answer being written: seed 78035804546485): the timer is armed for
        // what it does now, a write under way with the whole client idle timeout (a client
        // that reads nothing is closed after it, as before). Else its buffers are parked.
        if (http2.streams_count > 0) return http2.idle();
        if (connection.send_completion.isPending() or http2.out != null) return connection.armTimer(.sending);
        return http2.park();
    }
    if (connection.send_completion.isPending()) return connection.close(); // Not reading.
    if (connection.phase == .body) {
        // Streams whose request body stopped arriving: 408 each, as HTTP/1.1's would get.
        var next = http2.streams;
        while (next) |stream| {
            next = stream.next;
            if (!stream.waitsForBody()) continue;
            connection.proxy.stats.client_timeouts.add(1);
            stream.failBody(.client_body_timeout);
        }
        return http2.flush();
    }
    // A quiet client idle timeout with responses waiting for the client's window.
    if (connection.phase == .sending and http2.streams_count > 0) return http2.resetStalled();
    http2.goAway();
    http2.flush(); // Then `maybeClose`, once the GOAWAY is written.
}

/// No stream for the hot second: the receive is cancelled so that its callback can give the
/// buffers back (`parkBuffers`), unless data wins the race (then it is simply processed). The
/// rest of the idle timeout runs meanwhile (`.idle`).
fn park(http2: *Http2) void {
    const connection = http2.connection;
    connection.armTimer(.idle);
    if (!connection.recv_completion.isPending()) return; // The session reads no more.
    connection.parking = true;
    connection.loop().cancel(&connection.recv_completion);
}

/// The idle connection's read buffer and TLS record buffers go back to the worker's pool; a
/// readiness wait without a buffer replaces the receive. Not while part of a TLS record is
/// held (it is kept, and the receive goes on with it).
fn parkBuffers(http2: *Http2) void {
    const connection = http2.connection;
    if (connection.tls) |*t| if (t.holdsInput()) return http2.receiveMore();
    // Between the cancel and its callback the connection may have stopped being idle: a
    // drain's GOAWAY is being written (seed 60200721749293), or the timer's round wrote
    // something. Then the receive goes on, with its buffers.
    if (http2.out != null or http2.going_away or http2.streams_count > 0) return http2.receiveMore();
    assert(http2.len == 0);
    connection.parkUntilReadable(readableCallback);
}

fn readableCallback(connection: *Connection, result: loop_ns.PollError!void) void {
    if (connection.opDone(false)) return;
    result catch return connection.close();
    const http2 = connection.http2.?;
    http2.unpark();
    http2.receiveMore(); // Data, or the EOF that made it readable: both are handled there.
}

/// The buffers a parked connection gave back, taken again (reserved per session, so there).
fn unpark(http2: *Http2) void {
    const connection = http2.connection;
    if (connection.cbuf != null) return;
    connection.cbuf = connection.proxy.buffers.acquire().?;
    if (connection.tls) |*t| t.unpark(&connection.proxy.buffers);
}

/// Drain: no new stream; those under way finish; then close (RFC 9113 §6.8).
pub fn drain(http2: *Http2) void {
    http2.goAway();
    http2.flush();
}

fn goAway(http2: *Http2) void {
    if (http2.going_away) return;
    http2.going_away = true;
    http2.session.goawayAfter(http2.last_taken, .no_error) catch {};
}

/// The connection is closing: every stream's exchange is aborted, and streams that have none
/// go back now.
pub fn closeAll(http2: *Http2) void {
    http2.body_waits = 0;
    http2.drained = null;
    var next = http2.streams;
    while (next) |stream| {
        next = stream.next;
        stream.closed = true;
        stream.drained = false;
        stream.body.wanted = false; // `body_waits` is 0 now.
        if (stream.exchange) |exchange| {
            exchange.abort(); // Released now or when its operations call back.
        } else {
            http2.freeStream(stream);
        }
    }
}

/// Whether every stream has gone (the connection may be finalized).
pub fn quiet(http2: *const Http2) bool {
    return http2.streams_count == 0;
}

pub fn deinit(http2: *Http2) void {
    assert(http2.streams_count == 0);
    const proxy = http2.connection.proxy;
    http2.session.deinit();
    // What was not written is dropped with the connection.
    http2.len = 0;
    http2.sent = 0;
    http2.releaseOut();
    http2.connection.http2 = null;
    proxy.releaseHttp2(http2);
}

// ---------------------------------------------------------------------------------------------
// The session's events

pub fn h2Event(http2: *Http2, session: *ServerSession, event: ServerSession.Event) void {
    _ = session;
    switch (event) {
        .request => |request| http2.openStream(&request),
        .data => |data| if (http2.streamOf(data.stream)) |stream| stream.received(data.bytes),
        // Request trailers are dropped, as HTTP/1.1's are (RequestParser.zig).
        .trailers => {},
        .end => |id| if (http2.streamOf(id)) |stream| stream.ended(),
        .closed => |closed| if (http2.streamOf(closed.stream)) |stream| stream.streamClosed(),
        .goaway => {}, // nghttp2 stops new streams; those under way finish.
    }
}

pub fn h2Body(http2: *Http2, session: *ServerSession, id: ServerSession.StreamId, buffer: []u8) ServerSession.BodyChunk {
    _ = session;
    const stream = http2.streamOf(id) orelse return .{ .last = 0 };
    return stream.readBody(buffer);
}

fn streamOf(http2: *Http2, id: ServerSession.StreamId) ?*Stream {
    const context = http2.session.streamContext(id) orelse return null;
    return @ptrCast(@alignCast(context));
}

/// A request's HEADERS: a stream slot, its head buffer and an exchange, then the exchange
/// begins. With none free, the stream is refused (REFUSED_STREAM: the client may retry it,
/// RFC 9113 §8.7).
fn openStream(http2: *Http2, request: *const ServerSession.Request) void {
    const proxy = http2.connection.proxy;
    const worker = proxy.http2.?;
    if (http2.going_away) return http2.refuseStream(request.stream, .refused_stream);
    const stream = proxy.acquireStream() orelse {
        worker.streams_refused.add(1);
        return http2.refuseStream(request.stream, .refused_stream);
    };
    const head = proxy.buffers.acquire().?; // Reserved per stream slot (Proxy.zig).
    const exchange = proxy.acquireStreamExchange();
    stream.begin(http2, request, head, exchange.request_parser.scanner.headers_buffer) catch |err| {
        proxy.buffers.release(head);
        proxy.releaseExchange(exchange);
        proxy.releaseStream(stream);
        return http2.refuseStream(request.stream, switch (err) {
            error.TooLarge, error.Malformed => .protocol_error,
        });
    };
    http2.session.setStreamContext(request.stream, stream);
    stream.next = http2.streams;
    stream.prev = null;
    if (http2.streams) |first| first.prev = stream;
    http2.streams = stream;
    http2.streams_count += 1;
    http2.last_taken = @max(http2.last_taken, request.stream);
    worker.streams.add(1);
    stream.exchange = exchange;
    exchange.open(.{ .h2 = stream });
    exchange.begin(&stream.request, stream.headLen());
}

fn refuseStream(http2: *Http2, id: ServerSession.StreamId, code: ServerSession.ErrorCode) void {
    http2.session.reset(id, code) catch {};
}

pub fn freeStream(http2: *Http2, stream: *Stream) void {
    assert(stream.exchange == null and !stream.drained);
    if (stream.prev) |prev| prev.next = stream.next else http2.streams = stream.next;
    if (stream.next) |next| next.prev = stream.prev;
    http2.streams_count -= 1;
    stream.releaseBuffers();
    http2.connection.proxy.releaseStream(stream);
    if (http2.streams_count == 0 and http2.connection.state == .closing) http2.connection.maybeFinalize();
}

/// The size of the buffers a stream's body is received into (Http2Stream.zig).
pub fn segmentBytes(http2: *const Http2) u32 {
    return http2.connection.proxy.buffers.buffer_bytes;
}

/// A buffer for a stream's request body (reserved per stream slot).
pub fn acquireBuffer(http2: *Http2) ?[]u8 {
    return http2.connection.proxy.buffers.acquire();
}

/// Queues `stream` to have its window handed back after the frames are made.
pub fn markDrained(http2: *Http2, stream: *Stream) void {
    if (stream.drained) return;
    stream.drained = true;
    stream.drained_next = http2.drained;
    http2.drained = stream;
    http2.flush();
}

/// `bytes` of a stream's request body left sluice: its window opens by as much.
pub fn consume(http2: *Http2, id: ServerSession.StreamId, bytes: usize) void {
    http2.session.consume(id, bytes) catch return http2.connection.close();
    http2.flush();
}
