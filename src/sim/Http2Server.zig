//! A simulated backend connection that speaks HTTP/2 (h2c with prior knowledge), for the pools a
//! seed gives `protocol = h2c`: sluice's multiplexed client (proxy/Http2Backend.zig,
//! Http2Try.zig) against a server with faults of its own. Each stream is checked as an
//! HTTP/1.1 backend checks its request (tag, pool, target, body byte for byte, the fields a
//! proxy must drop or add), recorded in the ledger, and answered by a plan drawn for it: a
//! response (with a length or without, interim heads, trailers, big heads), a 5xx, a stall, a
//! delay, an early answer, RST_STREAM before, during or after the response, REFUSED_STREAM, a
//! GOAWAY, or the connection closed, reset or sent garbage. Its SETTINGS draw how many streams
//! it takes and how small a request body window is, and it may hand the window back late.
//! See docs/ARCHITECTURE.md, "HTTP/2 backends in the simulator".
//!
//! Decisions a reader must know:
//! - The codec is sluice's own `h2.ServerSession` (nghttp2's server), the one that serves
//!   sluice's HTTP/2 clients: nghttp2 checks every frame sluice's client side sends, and a
//!   protocol error, a flood or a stream past our SETTINGS fails the seed.
//! - The retry rules are HTTP/2's: a stream this backend refused (REFUSED_STREAM, or above its
//!   GOAWAY's last stream) was not processed (RFC 9113 §8.7) and is not a delivery, so it may
//!   go anywhere again, whatever its method; a stream it read is a delivery. A response has
//!   "reached sluice" once sluice sends a WINDOW_UPDATE for its stream: its exchange took body
//!   bytes, so it had the head. Reading the head's bytes is not enough, unlike HTTP/1.1: a try
//!   that gave up (a timeout) resets its stream and drops what still comes on it, while the
//!   shared connection goes on reading, so a late answer reaches sluice's socket after the
//!   request went elsewhere, and that is right. The offsets are exact: a 9-byte frame-header
//!   scanner (`Frames`) follows sluice's bytes, so the ledger gets where each request's
//!   HEADERS began and when each WINDOW_UPDATE was sent.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const h2 = @import("../h2/h2.zig");
const peer_http = @import("peer_http.zig");
const Ledger = @import("Ledger.zig");
const Simulator = @import("Simulator.zig");
const backends_ns = @import("Backends.zig");
const Conn = backends_ns.Conn;
const fail = @import("fail.zig");

const ServerSession = h2.ServerSession;
const StreamId = ServerSession.StreamId;
const Http2Server = @This();

/// Streams one connection serves at once: the most its SETTINGS ever allow.
pub const streams_max = 16;
/// The client connection preface (RFC 9113 §3.4), before the first frame.
pub const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

session: ServerSession = undefined,
/// The session exists: from the preface to the connection's end.
started: bool = false,
conn: *Conn = undefined,
world: *Simulator = undefined,
streams: [streams_max]Stream = @splat(.{}),
/// sluice's bytes, frame by frame.
incoming: Frames = .{ .skip = preface.len },
/// Where sluice's HEADERS frames began, by stream, until the stream's request is heard.
heads: [heads_max]Head = @splat(.{}),
/// The stream offset of `conn.out[0]`.
out_base: u64 = 0,
/// The connection closes (or resets) when its bytes up to here are written (`close_mid`).
cut_total: u64 = std.math.maxInt(u64),
cut_reset: bool = false,
/// The GOAWAY this side sent, naming its last stream: streams above it are refused.
goaway_last: ?StreamId = null,
/// The highest stream processed (its request taken).
last_processed: StreamId = 0,
/// Sent garbage: waits for sluice to close.
spent: bool = false,
/// Inside the session's `receive` (nghttp2 is in the call: the connection may not end now),
/// and the connection is to be reset once it returns.
receiving: bool = false,
reset_due: bool = false,
/// With no stream open, the connection closes (with a GOAWAY first, or not) at this time.
idle_close_ns: u64 = std.math.maxInt(u64),
idle_goaway: bool = false,

const heads_max = 32;

const Head = struct { stream: StreamId = 0, offset: u64 = 0 };

const Stream = struct {
    state: State = .free,
    stream: StreamId = 0,
    id: u32 = 0,
    method: Ledger.Method = .GET,
    plan: Plan = .ok,
    body_len: u64 = 0,
    body_in: u64 = 0,
    request_done: bool = false,
    respond_at_ns: u64 = std.math.maxInt(u64),
    responded: bool = false,
    /// Its response is not a 5xx (for the ledger's retry rules), and reached sluice's
    /// exchange (`noteIncoming`).
    final: bool = false,
    arrived: bool = false,
    /// The response body: its length, what nghttp2 took of it, where a `reset_mid` cuts it.
    response_len: u32 = 0,
    response_sent: u32 = 0,
    cut_at: u32 = std.math.maxInt(u32),
    trailers: bool = false,
    /// The body provider may give bytes; a reset is due.
    body_open: bool = false,
    reset_due: ?ServerSession.ErrorCode = null,
    /// The connection closes at the next `act` (`close_in_body`, mid-body).
    close_due: bool = false,
    /// Request body bytes not handed back yet (a late window).
    unconsumed: u32 = 0,
    consume_at_ns: u64 = 0,

    const State = enum {
        free,
        /// Its request is heard; its plan runs.
        open,
        /// Refused or reset by this side: its close event follows.
        ending,
    };
};

pub const Plan = enum {
    ok,
    status_5xx,
    stall,
    delay,
    early,
    /// RST_STREAM (INTERNAL_ERROR) once the request is read, in its body, in the response's.
    reset_before,
    reset_in_body,
    reset_mid,
    /// The connection closed (or reset) once the request is read, in its body, in the
    /// response.
    close_before,
    close_in_body,
    close_mid,
    /// Bytes that are not HTTP/2 on the connection.
    garbage,
    /// RST_STREAM (REFUSED_STREAM): not processed.
    refuse,
    /// GOAWAY naming the streams processed so far: this one and later ones are not.
    goaway,
};

// ---------------------------------------------------------------------------------------------
// The connection

/// sluice sent the preface: the session starts and queues its SETTINGS. False when the
/// backends' nghttp2 memory is exhausted (the caller closes the connection, as a server out
/// of memory would).
pub fn start(server: *Http2Server, conn: *Conn, world: *Simulator) bool {
    assert(!server.started);
    const backends = &world.backends;
    server.* = .{ .conn = conn, .world = world };
    server.session.init(&backends.h2_setup.?, &backends.h2_pool, &backends.h2_counters, .of(Http2Server, server)) catch return false;
    server.started = true;
    world.summary.http2_backend_conns += 1;
    world.trace("backend {d} fd {d}: speaks HTTP/2", .{ conn.backend, conn.fd });
    return true;
}

/// The connection ends (either side closed it): the session and every stream with it.
pub fn end(server: *Http2Server) void {
    if (!server.started) return;
    server.session.deinit();
    server.started = false;
    server.streams = @splat(.{});
}

/// Bytes from sluice: scanned for frame offsets, then handed to the session.
pub fn receive(server: *Http2Server, bytes: []const u8) void {
    if (server.spent) return;
    server.incoming.feed(bytes, server, noteIncoming);
    server.receiving = true;
    server.session.receive(bytes, server.world.sim.now_ns) catch |err| switch (err) {
        error.OutOfMemory => server.reset_due = true,
        error.Flooded, error.Protocol => fail.invariant("backend {d}: sluice broke HTTP/2 on its connection: {t}", .{ server.conn.backend, err }),
    };
    server.receiving = false;
    if (server.reset_due) server.close(.reset);
}

/// Writes what is due: responses, resets, windows handed back, then the session's frames.
pub fn act(server: *Http2Server) void {
    if (!server.started) return;
    const world = server.world;
    const now = world.sim.now_ns;
    if (!server.spent) {
        for (&server.streams) |*s| {
            if (s.state != .open) continue;
            if (!server.actOn(s, now)) return;
        }
        server.idleActions(now);
        if (!server.started) return;
    }
    if (!server.flushOut()) return;
    if (!server.spent and !server.session.wantsRead() and !server.session.wantsWrite() and
        server.conn.out_sent == server.conn.out_len)
    {
        return server.close(.close); // Both sides are done (a GOAWAY and its streams ended).
    }
}

fn actOn(server: *Http2Server, s: *Stream, now: u64) bool {
    if (s.reset_due) |code| return server.resetStream(s, code);
    if (s.close_due) {
        server.world.trace("backend {d} fd {d} (h2): closes in r{d}'s body", .{ server.conn.backend, server.conn.fd, s.id });
        server.close(if (server.world.random.boolean()) .close else .reset);
        return false;
    }
    switch (s.plan) {
        .early => if (!s.responded) server.respond(s),
        .reset_before => if (s.request_done) return server.resetStream(s, .internal_error),
        .close_before => if (s.request_done) {
            server.close(if (server.world.random.boolean()) .close else .reset);
            return false;
        },
        .stall => {},
        else => if (s.request_done and !s.responded and now >= s.respond_at_ns) server.respond(s),
    }
    if (s.unconsumed > 0 and now >= s.consume_at_ns) {
        server.session.consume(s.stream, s.unconsumed) catch {
            server.outOfMemory();
            return false;
        };
        s.unconsumed = 0;
    }
    return true;
}

fn idleActions(server: *Http2Server, now: u64) void {
    const options = &server.world.options;
    if (server.openCount() > 0 or server.goaway_last != null) {
        server.idle_close_ns = std.math.maxInt(u64);
        return;
    }
    if (server.idle_close_ns == std.math.maxInt(u64)) {
        if (server.world.random.uintLessThan(u8, 100) >= options.backend_idle_close_percent) {
            server.idle_close_ns = std.math.maxInt(u64) - 1; // Never, until a stream comes and goes.
            return;
        }
        server.idle_close_ns = now + server.world.random.uintAtMost(u64, 3 * std.time.ns_per_s);
        server.idle_goaway = server.world.random.boolean();
        return;
    }
    if (now < server.idle_close_ns) return;
    server.idle_close_ns = std.math.maxInt(u64);
    if (server.idle_goaway) {
        // A graceful end: sluice may finish what it sent before it reads this.
        server.world.trace("backend {d} fd {d}: idle, GOAWAY", .{ server.conn.backend, server.conn.fd });
        server.goaway_last = server.last_processed;
        server.session.goawayAfter(server.last_processed, .no_error) catch return server.outOfMemory();
        server.world.summary.http2_backend_goaways += 1;
    } else {
        server.close(.close);
    }
}

/// Moves the session's frames into the connection's buffer and writes them; false when the
/// connection is gone.
fn flushOut(server: *Http2Server) bool {
    const conn = server.conn;
    if (conn.out_sent == conn.out_len) {
        server.out_base += conn.out_len;
        conn.out_len = 0;
        conn.out_sent = 0;
    }
    if (!server.spent) {
        const n = server.session.send(conn.out[conn.out_len..]) catch |err| switch (err) {
            error.OutOfMemory => {
                server.outOfMemory();
                return false;
            },
            error.Flooded, error.Protocol => fail.invariant("backend {d}: its own session failed: {t}", .{ conn.backend, err }),
        };
        conn.out_len += @intCast(n);
    }
    var limit: u64 = conn.out_len;
    if (server.cut_total < server.out_base + limit) limit = server.cut_total -| server.out_base;
    if (conn.out_sent < limit) {
        switch (server.world.sim.peerWrite(conn.fd, conn.out[conn.out_sent..@intCast(limit)])) {
            .bytes => |n| conn.out_sent += n,
            .closed => {
                server.close(.close);
                return false;
            },
        }
    }
    if (server.out_base + conn.out_sent >= server.cut_total) {
        server.close(if (server.cut_reset) .reset else .close);
        return false;
    }
    return true;
}

fn close(server: *Http2Server, how: backends_ns.CloseHow) void {
    backends_ns.closeConn(server.conn, server.world, how);
}

fn outOfMemory(server: *Http2Server) void {
    server.world.trace("backend {d}: nghttp2 memory exhausted", .{server.conn.backend});
    server.resetConnection();
}

/// Resets the connection, after the session's `receive` when inside it.
fn resetConnection(server: *Http2Server) void {
    if (server.receiving) {
        server.reset_due = true;
    } else {
        server.close(.reset);
    }
}

/// The next time, after `now`, the connection has something to do by itself.
pub fn wakeAt(server: *const Http2Server, now: u64) u64 {
    if (!server.started) return std.math.maxInt(u64);
    var at: u64 = std.math.maxInt(u64);
    if (server.idle_close_ns > now and server.idle_close_ns < std.math.maxInt(u64) - 1) at = server.idle_close_ns;
    for (&server.streams) |*s| {
        if (s.state != .open) continue;
        if (s.request_done and !s.responded and s.respond_at_ns > now) at = @min(at, s.respond_at_ns);
        if (s.unconsumed > 0 and s.consume_at_ns > now) at = @min(at, s.consume_at_ns);
    }
    return at;
}

fn openCount(server: *const Http2Server) u32 {
    var n: u32 = 0;
    for (&server.streams) |*s| n += @intFromBool(s.state != .free);
    return n;
}

// ---------------------------------------------------------------------------------------------
// Frame offsets

/// Follows a byte stream frame by frame (RFC 9113 §4.1: 9 octets of header, then the
/// payload), calling back with each frame's header as it completes.
const Frames = struct {
    /// Bytes before the first frame (the client preface).
    skip: u32 = 0,
    header: [9]u8 = undefined,
    header_len: u8 = 0,
    payload_left: u32 = 0,
    /// The stream offset of the next byte fed.
    offset: u64 = 0,

    const Frame = struct { kind: u8, flags: u8, stream: StreamId, start: u64, end: u64 };

    fn feed(frames: *Frames, bytes: []const u8, context: anytype, comptime onFrame: fn (@TypeOf(context), Frame) void) void {
        var rest = bytes;
        while (rest.len > 0) {
            if (frames.skip > 0) {
                const n = @min(frames.skip, rest.len);
                frames.skip -= @intCast(n);
                frames.advance(&rest, n);
            } else if (frames.payload_left > 0) {
                const n = @min(frames.payload_left, rest.len);
                frames.payload_left -= @intCast(n);
                frames.advance(&rest, n);
            } else {
                frames.header[frames.header_len] = rest[0];
                frames.header_len += 1;
                frames.advance(&rest, 1);
                if (frames.header_len < frames.header.len) continue;
                frames.header_len = 0;
                const h = frames.header;
                const length = @as(u32, h[0]) << 16 | @as(u32, h[1]) << 8 | h[2];
                const stream: StreamId = @truncate(std.mem.readInt(u32, h[5..9], .big));
                frames.payload_left = length;
                const first = frames.offset - 9;
                onFrame(context, .{ .kind = h[3], .flags = h[4], .stream = stream, .start = first, .end = first + 9 + length });
            }
        }
    }

    fn advance(frames: *Frames, rest: *[]const u8, n: usize) void {
        rest.* = rest.*[n..];
        frames.offset += n;
    }
};

const frame_headers = 0x1;
const frame_window_update = 0x8;

/// A HEADERS frame of sluice's: a request's (or trailers') start, kept until its event. A
/// WINDOW_UPDATE for a stream answered: its response reached sluice's exchange.
fn noteIncoming(server: *Http2Server, frame: Frames.Frame) void {
    if (frame.kind == frame_window_update and frame.stream != 0) return server.noteConsumed(frame);
    if (frame.kind != frame_headers) return;
    for (&server.heads) |*head| {
        if (head.stream == frame.stream) return; // Trailers: the request's start is kept.
    }
    for (&server.heads) |*head| if (head.stream == 0) {
        head.* = .{ .stream = frame.stream, .offset = frame.start };
        return;
    };
    // More requests begun than heard: the oldest is forgotten (its resend is then unordered).
    server.heads[0] = .{ .stream = frame.stream, .offset = frame.start };
}

fn takeHeadOffset(server: *Http2Server, stream: StreamId) ?u64 {
    for (&server.heads) |*head| if (head.stream == stream) {
        const offset = head.offset;
        head.* = .{};
        return offset;
    };
    return null;
}

/// sluice gave window back on a stream this backend answers: its exchange took body bytes, so
/// it had the response's head, and the request may not be sent again (when the frame was
/// sent, on the kernel's clock: the ledger orders resends against it).
fn noteConsumed(server: *Http2Server, frame: Frames.Frame) void {
    const s = server.streamOf(frame.stream) orelse return;
    if (!s.responded or s.arrived) return;
    s.arrived = true;
    server.world.summary.http2_backend_taken += 1;
    server.world.ledger.arrived(s.id, s.final, server.world.sim.sentAt(server.conn.fd, frame.start));
}

// ---------------------------------------------------------------------------------------------
// What sluice sent

fn streamOf(server: *Http2Server, stream: StreamId) ?*Stream {
    for (&server.streams) |*s| {
        if (s.state != .free and s.stream == stream) return s;
    }
    return null;
}

pub fn h2Event(server: *Http2Server, _: *ServerSession, event: ServerSession.Event) void {
    switch (event) {
        .request => |request| server.onRequest(request),
        .data => |data| server.onData(data.stream, data.bytes),
        .trailers => |trailers| {
            const s = server.streamOf(trailers.stream) orelse return;
            for (trailers.fields) |field| {
                if (std.mem.eql(u8, field.name, "x-sim-trailer")) fail.invariant("r{d}: a client's trailer reached an h2 backend", .{s.id});
            }
        },
        .end => |stream| server.onEnd(stream),
        .closed => |closed| if (server.streamOf(closed.stream)) |s| {
            s.* = .{};
        },
        .goaway => {},
    }
}

fn onRequest(server: *Http2Server, request: ServerSession.Request) void {
    const world = server.world;
    const conn = server.conn;
    const head_offset = server.takeHeadOffset(request.stream);
    var tag: ?u32 = null;
    for (request.fields) |field| {
        if (std.mem.eql(u8, field.name, peer_http.tag_field)) tag = peer_http.parseTag(field.value);
    }
    const id = tag orelse fail.invariant("backend {d} (h2): a request without a tag: {s} {s}", .{ conn.backend, request.method, request.path });
    const s = for (&server.streams) |*slot| {
        if (slot.state == .free) break slot;
    } else fail.invariant("backend {d} (h2): more streams open than its SETTINGS allow", .{conn.backend});
    const ledger_request = world.ledger.get(id);
    s.* = .{ .state = .open, .stream = request.stream, .id = id, .method = ledger_request.method, .body_len = ledger_request.body_len };
    world.summary.http2_backend_streams += 1;
    world.markAllArrivals();
    if (server.goaway_last) |last| if (request.stream > last) {
        // Sent before sluice read the GOAWAY: not processed, as the GOAWAY said.
        world.trace("backend {d} fd {d} (h2): r{d} on stream {d}, above its GOAWAY", .{ conn.backend, conn.fd, id, request.stream });
        return server.refuse(s);
    };
    s.plan = drawPlan(world, ledger_request);
    if (world.random.uintLessThan(u8, 100) < world.options.backend_read_pause_percent) {
        conn.read_paused_until_ns = world.sim.now_ns + world.random.uintAtMost(u64, 5 * std.time.ns_per_s);
    }
    world.trace("backend {d} fd {d} (h2): r{d} {t} on stream {d}, plan {t}", .{ conn.backend, conn.fd, id, s.method, request.stream, s.plan });
    switch (s.plan) {
        .refuse => return server.refuse(s),
        .goaway => {
            server.goaway_last = server.last_processed;
            server.session.goawayAfter(server.last_processed, .no_error) catch return server.outOfMemory();
            world.summary.http2_backend_goaways += 1;
            return server.refuse(s);
        },
        .garbage => {
            // Not a frame: sluice's session fails the connection and every stream on it.
            const bytes = "HTTP/1.1 200 OK\r\n\r\n";
            world.ledger.delivered(id, conn.backend, if (head_offset) |o| world.sim.sentAt(conn.fd, o) else null);
            const c = server.conn;
            if (c.out_sent == c.out_len) {
                server.out_base += c.out_len;
                c.out_len = 0;
                c.out_sent = 0;
            }
            // Behind frames sluice has not read yet, if they leave room and the last of them
            // is whole; else a reset does. (Behind part of a frame, the bytes would be that
            // frame's payload: DATA a client of sluice gets as its body, seed 75967455623000.)
            const mid_frame = server.session.pending.len > 0;
            if (c.out.len - c.out_len < bytes.len or mid_frame) return server.resetConnection();
            @memcpy(c.out[c.out_len..][0..bytes.len], bytes);
            c.out_len += bytes.len;
            server.spent = true;
            return;
        },
        else => {},
    }
    world.ledger.delivered(id, conn.backend, if (head_offset) |o| world.sim.sentAt(conn.fd, o) else null);
    server.last_processed = @max(server.last_processed, request.stream);
    checkRequest(server, &request, id, ledger_request);
    if (request.end_stream and s.body_len > 0) fail.invariant("r{d} reached an h2 backend without its {d}-byte body", .{ id, s.body_len });
}

fn refuse(server: *Http2Server, s: *Stream) void {
    server.world.summary.http2_backend_refused += 1;
    s.reset_due = .refused_stream;
}

/// What sluice must have done to a request it sends on as an HTTP/2 stream.
fn checkRequest(server: *Http2Server, request: *const ServerSession.Request, id: u32, ledger_request: *const Ledger.Request) void {
    const world = server.world;
    const backend = &world.backends.backends[server.conn.backend];
    if (ledger_request.target != .pool and ledger_request.target != .handler) fail.invariant("r{d} ({t}) reached backend {d}", .{ id, ledger_request.target, server.conn.backend });
    var expected: [64]u8 = undefined;
    const target = std.fmt.bufPrint(&expected, "/p{d}/r{d}", .{ ledger_request.pool, id }) catch unreachable;
    if (!std.mem.startsWith(u8, request.path, target)) fail.invariant("h2 backend got :path {s} with tag r{d}", .{ request.path, id });
    if (!std.mem.eql(u8, request.method, @tagName(ledger_request.method))) {
        fail.invariant("r{d} is a {t} but reached an h2 backend as {s}", .{ id, ledger_request.method, request.method });
    }
    if (backend.pools & (@as(u8, 1) << @intCast(ledger_request.pool)) == 0) {
        fail.invariant("r{d} for pool p{d} reached backend {d}, never in that pool", .{ id, ledger_request.pool, server.conn.backend });
    }
    const host = if (ledger_request.absolute) "abs.test" else "sim.test";
    var hosts: u32 = 0;
    var forwarded: ?[]const u8 = null;
    var forwarded_count: u32 = 0;
    var underscore = false;
    var length: ?[]const u8 = null;
    for (request.fields) |field| {
        if (std.mem.eql(u8, field.name, "host")) hosts += 1;
        if (std.mem.eql(u8, field.name, "x-forwarded-for")) {
            forwarded = field.value;
            forwarded_count += 1;
        }
        if (std.mem.eql(u8, field.name, "x_sim_under")) underscore = true;
        if (std.mem.eql(u8, field.name, "content-length")) length = field.value;
        for ([_][]const u8{ "connection", "keep-alive", "x-hop", "te", "proxy-connection", "transfer-encoding", "upgrade", "x-sim-trailer" }) |name| {
            if (std.mem.eql(u8, field.name, name)) fail.invariant("r{d} reached an h2 backend with {s}", .{ id, name });
        }
    }
    // RFC 9113 §8.3.1: the authority in :authority, and a Host only if it is the same.
    if (!std.mem.eql(u8, request.authority, host)) fail.invariant("r{d}: :authority {s}, sent for {s}", .{ id, request.authority, host });
    if (hosts > 1) fail.invariant("r{d} reached an h2 backend with {d} Host fields", .{ id, hosts });
    if (forwarded_count != 1) fail.invariant("r{d}: {d} X-Forwarded-For fields", .{ id, forwarded_count });
    backends_ns.checkForwardedForValue(world, forwarded.?, id, ledger_request);
    if (underscore != (ledger_request.underscore and world.options.underscores_allowed)) {
        fail.invariant("r{d}: a field named with `_` forwarded {}, sent {}, allowed {}", .{ id, underscore, ledger_request.underscore, world.options.underscores_allowed });
    }
    if (length) |text| {
        const n = std.fmt.parseInt(u64, text, 10) catch fail.invariant("r{d}: content-length {s}", .{ id, text });
        if (n != ledger_request.body_len) fail.invariant("r{d} reached an h2 backend with content-length {d}, its body is {d}", .{ id, n, ledger_request.body_len });
    }
}

fn drawPlan(world: *Simulator, request: *const Ledger.Request) Plan {
    const options = &world.options;
    const random = world.random;
    if (random.uintLessThan(u8, 100) < options.backend_h2_refuse_percent) return .refuse;
    if (random.uintLessThan(u8, 100) < options.backend_h2_goaway_percent) return .goaway;
    return switch (backends_ns.drawPlan(world, request)) {
        .ok, .answered => .ok,
        .status_5xx => .status_5xx,
        .stall => .stall,
        .delay => .delay,
        .early => .early,
        .garbage => .garbage,
        .close_before => .close_before,
        .close_mid => .close_mid,
        .close_in_body => .close_in_body,
        .reset_before => .reset_before,
        .reset_mid => .reset_mid,
        .reset_in_body => .reset_in_body,
    };
}

fn onData(server: *Http2Server, stream: StreamId, bytes: []const u8) void {
    const s = server.streamOf(stream) orelse return;
    const world = server.world;
    if (s.state != .open) return;
    if (!peer_http.matchesPattern(bytes, .request, s.id, s.body_in)) {
        fail.invariant("h2 backend {d} got body bytes {d}..{d} of r{d} that are not its own", .{ server.conn.backend, s.body_in, s.body_in + bytes.len, s.id });
    }
    s.body_in += bytes.len;
    if (s.body_in > s.body_len) fail.invariant("r{d}: {d} body bytes reached an h2 backend, it has {d}", .{ s.id, s.body_in, s.body_len });
    if (world.random.uintLessThan(u8, 100) < world.options.backend_h2_consume_late_percent) {
        if (s.unconsumed == 0) s.consume_at_ns = world.sim.now_ns + world.random.uintAtMost(u64, 300 * std.time.ns_per_ms);
        s.unconsumed += @intCast(bytes.len);
    } else {
        server.session.consume(stream, bytes.len) catch return server.outOfMemory();
    }
    if (s.body_in < s.body_len) switch (s.plan) {
        .reset_in_body => s.reset_due = .internal_error,
        .close_in_body => s.close_due = true,
        else => {},
    };
}

fn onEnd(server: *Http2Server, stream: StreamId) void {
    const s = server.streamOf(stream) orelse return;
    if (s.state != .open) return;
    if (s.body_in != s.body_len) fail.invariant("h2 backend got {d} body bytes for r{d}, which has {d}", .{ s.body_in, s.id, s.body_len });
    s.request_done = true;
    const world = server.world;
    s.respond_at_ns = switch (s.plan) {
        .delay => world.sim.now_ns + world.random.uintAtMost(u64, 3 * std.time.ns_per_s),
        else => world.sim.now_ns,
    };
}

// ---------------------------------------------------------------------------------------------
// Answers

fn respond(server: *Http2Server, s: *Stream) void {
    assert(!s.responded);
    const world = server.world;
    const random = world.random;
    const options = &world.options;
    s.responded = true;
    const status: u16 = if (s.plan == .status_5xx) ([_]u16{ 500, 502, 503 })[random.uintLessThan(usize, 3)] else 200;
    const body_len: u32 = random.uintAtMost(u32, options.body_bytes_max);
    const has_body = s.method != .HEAD;
    s.response_len = if (has_body) body_len else 0;
    s.trailers = has_body and random.uintLessThan(u8, 100) < options.trailer_percent;
    if (s.plan == .reset_mid) s.cut_at = if (s.response_len > 0) random.uintLessThan(u32, s.response_len) else 0;

    var text: [512]u8 = undefined;
    var fields_buffer: [ServerSession.submitted_fields_max - 1]ServerSession.Field = undefined;
    var fields: FieldList = .{ .text = &text, .fields = &fields_buffer };
    fields.add(peer_http.tag_field, "r{d}", .{s.id});
    fields.add(peer_http.length_field, "{d}", .{body_len});
    if (options.compress_percent > 0) fields.add("content-type", "text/plain", .{});
    if (random.boolean()) fields.add("content-length", "{d}", .{body_len});
    var pad: [17 * 1024]u8 = undefined;
    if (random.uintLessThan(u8, 100) < options.backend_big_head_percent) fields.pad(world, &pad);

    if (random.uintLessThan(u8, 100) < options.interim_percent) {
        var interim_text: [16]u8 = undefined;
        const interim_fields = [_]ServerSession.Field{.{ .name = peer_http.tag_field, .value = std.fmt.bufPrint(&interim_text, "r{d}", .{s.id}) catch unreachable }};
        server.session.interim(s.stream, 103, &interim_fields) catch |err| return server.submitFailed(s, err);
    }
    world.ledger.responded(s.id, .{ .status = status, .body_len = body_len });
    s.final = status < 500;
    s.body_open = true;
    const body = s.response_len > 0 or s.trailers or s.plan == .reset_mid;
    server.session.respond(s.stream, status, fields.fields[0..fields.len], body) catch |err| return server.submitFailed(s, err);
    world.trace("backend {d} fd {d} (h2): answers r{d}: {d}, {d} bytes{s}", .{ server.conn.backend, server.conn.fd, s.id, status, body_len, if (s.trailers) " and trailers" else "" });
    if (s.plan == .close_mid) {
        const c = server.conn;
        const produced = server.out_base + c.out_len + server.session.pending.len;
        server.cut_total = produced + 1 + random.uintAtMost(u64, 64 + s.response_len);
        server.cut_reset = random.boolean();
    }
}

fn submitFailed(server: *Http2Server, s: *Stream, err: ServerSession.SubmitError) void {
    switch (err) {
        error.StreamClosed => s.body_open = false, // sluice reset it meanwhile: its close follows.
        error.OutOfMemory => server.outOfMemory(),
        error.TooManyFields => unreachable, // `FieldList` holds fewer.
    }
}

fn resetStream(server: *Http2Server, s: *Stream, code: ServerSession.ErrorCode) bool {
    server.world.trace("backend {d} fd {d} (h2): resets r{d} (stream {d}): {t}", .{ server.conn.backend, server.conn.fd, s.id, s.stream, code });
    s.reset_due = null;
    s.state = .ending;
    s.body_open = false;
    if (code != .refused_stream) server.world.summary.http2_backend_resets += 1;
    server.session.reset(s.stream, code) catch |err| switch (err) {
        error.StreamClosed => {},
        error.OutOfMemory => {
            server.outOfMemory();
            return false;
        },
        error.TooManyFields => unreachable,
    };
    return true;
}

/// nghttp2 asks for the next piece of `stream`'s response body.
pub fn h2Body(server: *Http2Server, _: *ServerSession, stream: StreamId, buffer: []u8) ServerSession.BodyChunk {
    const s = server.streamOf(stream) orelse return .{ .last = 0 };
    if (!s.body_open) return .wait;
    if (s.response_sent >= s.cut_at) {
        s.body_open = false;
        s.reset_due = .internal_error;
        return .wait;
    }
    const world = server.world;
    const until = @min(s.response_len, s.cut_at);
    const n: u32 = @intCast(@min(buffer.len, until - s.response_sent, world.random.intRangeAtMost(u32, 1, 16 * 1024)));
    peer_http.fillPattern(buffer[0..n], .response, s.id, s.response_sent);
    s.response_sent += n;
    if (s.response_sent < s.response_len) return .{ .bytes = n };
    s.body_open = false;
    if (s.trailers) return .{ .last_with_trailers = .{ .len = n, .fields = &trailer_fields } };
    return .{ .last = n };
}

const trailer_fields = [_]ServerSession.Field{.{ .name = "x-sim-trailer", .value = "h2" }};

/// A response head's fields, their text in one buffer (nghttp2 copies them when submitted).
const FieldList = struct {
    text: []u8,
    text_len: usize = 0,
    fields: []ServerSession.Field,
    len: u32 = 0,

    fn add(list: *FieldList, name: []const u8, comptime format: []const u8, args: anytype) void {
        const value = std.fmt.bufPrint(list.text[list.text_len..], format, args) catch unreachable;
        list.text_len += value.len;
        list.fields[list.len] = .{ .name = name, .value = value };
        list.len += 1;
    }

    /// Up to past sluice's response head limits, in fields of `v`s.
    fn pad(list: *FieldList, world: *Simulator, bytes: *[17 * 1024]u8) void {
        const options = &world.options;
        const random = world.random;
        const room: u32 = @intCast(list.fields.len - list.len);
        const count = @min(random.uintAtMost(u32, options.response_headers_count_max + 8), room, pad_names.len);
        const total = @min(random.uintAtMost(u32, options.response_header_bytes_max + 512), bytes.len);
        const each = total / @max(count, 1);
        @memset(bytes, 'v');
        for (0..count) |i| {
            list.fields[list.len] = .{ .name = pad_names[i], .value = bytes[0..each] };
            list.len += 1;
        }
    }
};

const pad_names = blk: {
    @setEvalBranchQuota(100_000);
    var names: [120][]const u8 = undefined;
    for (&names, 0..) |*name, i| name.* = std.fmt.comptimePrint("x-pad-{d}", .{i});
    break :blk names;
};
