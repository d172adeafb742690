//! A simulated client that speaks HTTP/2 to sluice (h2c with prior knowledge), with several
//! streams at once on its one connection, and checks every stream: each response carries the
//! tag of its own stream's request and the body the backend sent for it (or is an answer
//! sluice may give), every stream ends (answered, reset, or refused before any backend saw it),
//! and a GOAWAY's promise holds (in a clean seed every stream at or below its last stream id
//! completes). See docs/ARCHITECTURE.md, "HTTP/2 clients in the simulator".
//!
//! The decision a reader must know: the codec is sluice's own `h2.ClientSession` (nghttp2's
//! client), the one that speaks to h2c backends, and not a frame writer of the simulator's:
//! nghttp2 checks every frame sluice sends (a protocol error on either side fails the seed),
//! and HPACK stays nghttp2's. The bytes go through the simulated kernel like an HTTP/1.1
//! client's, so frames arrive split wherever the kernel splits them (short reads and writes,
//! windows down to one byte, slow clients writing a few bytes at a time).
//!
//! Flow control is the fault it adds: the seed's SETTINGS_INITIAL_WINDOW_SIZE is small in a
//! share of seeds (down to 16 bytes), and a client may hand back its window (`consume`) only
//! after a while, so sluice's DATA must wait for WINDOW_UPDATE; request bodies pause, and
//! streams are reset by the client (RST_STREAM CANCEL) at random moments.
const std = @import("std");
const assert = std.debug.assert;

const h2 = @import("../h2/h2.zig");
const Shared = @import("../upstream/Shared.zig");
const Ledger = @import("Ledger.zig");
const Simulator = @import("Simulator.zig");
const clients_ns = @import("Clients.zig");
const Client = clients_ns.Client;
const Backend = @import("Backends.zig").Backend;
const peer_http = @import("peer_http.zig");
const fail = @import("fail.zig");

const ClientSession = h2.ClientSession;
const StreamId = ClientSession.StreamId;
const ErrorCode = ClientSession.ErrorCode;
const Http2Client = @This();

/// Streams one client keeps open at once (its "pipeline").
pub const streams_max = 8;

session: ClientSession = undefined,
/// The session exists: from the connection's start to its end.
started: bool = false,
client: *Client = undefined,
world: *Simulator = undefined,
streams: [streams_max]Stream = @splat(.{}),
/// Streams it opens at once, at most `streams_max`.
concurrency: u8 = 1,
/// A stream is reset by the client, in percent of streams (at a random moment).
reset_percent: u8 = 0,
/// Response bytes are handed back (`consume`, which opens the stream's window) only after a
/// while, so that sluice's DATA waits for WINDOW_UPDATE.
consume_late: bool = false,
/// sluice's GOAWAY, when it came.
goaway: ?Goaway = null,

const Goaway = struct { last: StreamId, code: ErrorCode };

const Stream = struct {
    state: State = .free,
    /// The request's id in the ledger.
    id: u32 = 0,
    stream: StreamId = 0,
    method: Ledger.Method = .GET,
    target: Ledger.Target = .pool,
    body_len: u32 = 0,
    body_sent: u32 = 0,
    /// The body waits (`BodyChunk.wait`) until then.
    body_paused_until_ns: u64 = 0,
    body_waiting: bool = false,
    reset_at_ns: u64 = std.math.maxInt(u64),
    /// Its head is near or over sluice's limits (431 is a fair answer).
    head_at_limit: bool = false,
    response: Response = .{},
    /// Response bytes received and not yet handed back.
    unconsumed: u32 = 0,
    consume_at_ns: u64 = 0,

    const State = enum {
        free,
        /// Sent (or being sent); its response has not ended.
        open,
        /// Its response ended; nghttp2 closes it next.
        ended,
        /// The client reset it: what still comes for it is dropped.
        reset_by_client,
    };
};

const Response = struct {
    /// A final head came.
    head: bool = false,
    own: bool = false,
    status: u16 = 0,
    expected_len: u32 = 0,
    seen: u32 = 0,
    /// The backend's body was close-delimited: a cut one ends as a whole one (sluice cannot
    /// tell them apart).
    close_delimited: bool = false,
    /// A backend's unsolicited bytes, relayed as the answer (Backends.zig): untagged, so
    /// `own`, but not sluice's own body either.
    unsolicited: bool = false,
};

/// The connection is accepted: the session queues the preface and SETTINGS.
pub fn start(http2: *Http2Client, client: *Client, world: *Simulator, setup: *const ClientSession.Setup, pool: *h2.memory.Pool) void {
    assert(!http2.started);
    http2.client = client;
    http2.world = world;
    http2.session.init(setup, pool, .of(Http2Client, http2)) catch fail.invariant("sim: the clients' nghttp2 pool is too small", .{});
    http2.started = true;
}

/// A new client draws how it behaves.
pub fn plan(http2: *Http2Client, world: *Simulator) void {
    const options = &world.options;
    const random = world.random;
    http2.* = .{
        .concurrency = random.intRangeAtMost(u8, 1, options.http2_streams_max),
        .reset_percent = options.http2_reset_percent,
        .consume_late = random.uintLessThan(u8, 100) < options.http2_consume_late_percent,
    };
}

pub fn step(http2: *Http2Client, world: *Simulator) void {
    const client = http2.client;
    assert(client.state == .open and http2.started);
    const now = world.sim.now_ns;
    if (now >= client.vanish_at_ns) return http2.end(.vanish);
    const stalled = now >= client.stall_from_ns and now < client.stall_until_ns;
    if (!stalled) {
        const buffer = &world.scratch;
        var reads: u32 = 0;
        while (reads < 16) : (reads += 1) {
            switch (world.sim.peerRead(client.fd, buffer)) {
                .none => break,
                .bytes => |n| http2.session.receive(buffer[0..n]) catch |err| {
                    fail.invariant("client {d}: sluice's HTTP/2 bytes broke the protocol: {t}", .{ client.number, err });
                },
                .eof => return http2.end(.closed),
                .reset => return http2.end(.reset),
            }
        }
    }
    http2.openStreams();
    http2.streamTimers();
    if (!http2.write()) return;
    if (client.requests_left == 0 and http2.busyCount() == 0 and client.out_sent == client.out_len and
        !http2.session.wantsWrite() and client.finish_close)
    {
        http2.end(.finish);
    }
}

/// The next time, after `now`, the client has something to do by itself.
pub fn wakeAt(http2: *const Http2Client, now: u64) u64 {
    var at: u64 = std.math.maxInt(u64);
    for (&http2.streams) |*s| {
        const times = [_]u64{
            if (s.state == .open) s.reset_at_ns else 0,
            if (s.body_waiting) s.body_paused_until_ns else 0,
            if (s.unconsumed > 0) s.consume_at_ns else 0,
        };
        for (times) |t| if (t > now) {
            at = @min(at, t);
        };
    }
    return at;
}

fn busyCount(http2: *const Http2Client) u32 {
    var n: u32 = 0;
    for (&http2.streams) |*s| n += @intFromBool(s.state != .free);
    return n;
}

fn openCount(http2: *const Http2Client) u32 {
    var n: u32 = 0;
    for (&http2.streams) |*s| n += @intFromBool(s.state == .open);
    return n;
}

// ---------------------------------------------------------------------------------------------
// Requests

fn openStreams(http2: *Http2Client) void {
    const client = http2.client;
    const world = http2.world;
    while (client.requests_left > 0 and http2.goaway == null and http2.busyCount() < http2.concurrency and
        world.sim.now_ns >= client.next_request_ns and http2.session.canOpen() and !world.ledger.isFull())
    {
        const slot = for (&http2.streams) |*s| {
            if (s.state == .free) break s;
        } else unreachable; // Fewer busy than `concurrency`, at most `streams_max`.
        http2.openStream(slot);
    }
}

fn openStream(http2: *Http2Client, s: *Stream) void {
    const client = http2.client;
    const world = http2.world;
    const random = world.random;
    const options = &world.options;
    var target: Ledger.Target = .pool;
    if (clients_ns.percent(world, options.local_percent)) {
        target = ([_]Ledger.Target{ .local, .redirect, .unrouted, .handler })[random.uintLessThan(usize, 4)];
    }
    const methods = [_]Ledger.Method{ .GET, .GET, .GET, .HEAD, .POST, .POST, .PUT, .DELETE, .OPTIONS, .PATCH };
    const method = methods[random.uintLessThan(usize, methods.len)];
    const may_have_body = method == .POST or method == .PUT or method == .PATCH;
    var body_len: u32 = 0;
    if (may_have_body and clients_ns.percent(world, options.body_percent)) body_len = random.uintAtMost(u32, options.body_bytes_max);
    const id = world.ledger.add(.{
        .method = method,
        .target = target,
        .pool = random.uintLessThan(u8, options.pools_count),
        .body_len = body_len,
        .upgrade = false,
        .client = client.number,
    });
    const request = world.ledger.get(id);
    var path_buffer: [96]u8 = undefined;
    var path = std.Io.Writer.fixed(&path_buffer);
    clients_ns.writeTarget(&path, request, id) catch unreachable;
    var text: [4096 + 64]u8 = undefined;
    var fields: [ClientSession.request_fields_max]ClientSession.Field = undefined;
    var head: Head = .{ .text = &text, .fields = &fields };
    head.add("user-agent", "sim/{d}", .{client.number});
    head.add("x-sim-tag", "r{d}", .{id});
    // With a length or without (an HTTP/2 body needs none: sluice sends it on chunked).
    if (body_len > 0 or (may_have_body and random.boolean())) {
        if (random.boolean()) head.add("content-length", "{d}", .{body_len});
    }
    if (clients_ns.percent(world, options.affinity_percent)) {
        // What `hash` and `sticky` read; the cookie in two crumbs (RFC 9113 §8.2.3).
        const backend = Backend.addressOf(random.uintLessThan(u8, world.backends.count));
        const backend_id = if (random.boolean()) Shared.backendId(&backend) else random.int(u64);
        head.add("x-sim-key", "k{d}", .{random.uintAtMost(u8, 50)});
        head.add("cookie", "sim=k{d}", .{random.uintAtMost(u8, 50)});
        head.add("cookie", "sluice_backend={x:0>16}", .{backend_id});
    }
    if (clients_ns.percent(world, options.client_big_head_percent)) head.pad(world);
    const head_at_limit = head.listBytes(path.buffered().len) + 256 > options.header_bytes_max or
        head.fields_len + 8 > options.headers_count_max;
    s.* = .{
        .state = .open,
        .id = id,
        .method = method,
        .target = target,
        .body_len = body_len,
        .head_at_limit = head_at_limit,
    };
    if (random.uintLessThan(u8, 100) < http2.reset_percent) {
        s.reset_at_ns = world.sim.now_ns + random.uintAtMost(u64, 300 * std.time.ns_per_ms);
    }
    s.stream = http2.session.request(.{
        .method = @tagName(method),
        .scheme = "http",
        .authority = "sim.test",
        .path = path.buffered(),
        .fields = fields[0..head.fields_len],
    }, body_len > 0, s) catch |err| fail.invariant("client {d}: r{d} could not be submitted: {t}", .{ client.number, id, err });
    client.requests_left -= 1;
    world.summary.http2_streams += 1;
    world.trace("client {d} (h2): r{d} {t} {t} body {d} on stream {d}", .{ client.number, id, method, target, body_len, s.stream });
    if (clients_ns.percent(world, options.idle_gap_percent)) {
        client.next_request_ns = world.sim.now_ns + random.uintAtMost(u64, options.idle_gap_ns_max);
    }
}

/// A request head's regular fields, their text in one buffer (nghttp2 copies them when the
/// request is submitted).
const Head = struct {
    text: []u8,
    text_len: usize = 0,
    fields: []ClientSession.Field,
    fields_len: u32 = 0,

    fn add(head: *Head, name: []const u8, comptime format: []const u8, args: anytype) void {
        const value = std.fmt.bufPrint(head.text[head.text_len..], format, args) catch unreachable;
        head.text_len += value.len;
        head.fields[head.fields_len] = .{ .name = name, .value = value };
        head.fields_len += 1;
    }

    /// Fields up to past the count limit, or one long field up to past the bytes limit.
    fn pad(head: *Head, world: *Simulator) void {
        const options = &world.options;
        const random = world.random;
        if (random.boolean()) {
            const room: u32 = @intCast(head.fields.len - head.fields_len);
            const count = @min(random.uintAtMost(u32, options.headers_count_max + 4), room);
            for (0..count) |i| head.add(pad_names[i % pad_names.len], "{d}", .{i});
        } else {
            const len = @min(random.uintAtMost(u32, options.header_bytes_max + 256), 4096);
            const at = head.text_len;
            @memset(head.text[at..][0..len], 'p');
            head.text_len += len;
            head.fields[head.fields_len] = .{ .name = "x-pad", .value = head.text[at..][0..len] };
            head.fields_len += 1;
        }
    }

    /// The header list's size as RFC 9113 §6.5.2 counts it (32 per field), pseudo-fields too.
    fn listBytes(head: *const Head, path_len: usize) usize {
        var total: usize = 4 * 32 + ":method".len + 7 + ":scheme".len + 4 + ":authority".len + 8 + ":path".len + path_len;
        for (head.fields[0..head.fields_len]) |field| total += field.name.len + field.value.len + 32;
        return total;
    }
};

const pad_names = [_][]const u8{ "x-pad-a", "x-pad-b", "x-pad-c", "x-pad-d", "x-pad-e", "x-pad-f", "x-pad-g", "x-pad-h" };

/// nghttp2 asks for the next piece of `stream`'s request body.
pub fn h2Body(http2: *Http2Client, _: *ClientSession, stream: StreamId, buffer: []u8) ClientSession.BodyChunk {
    const s = http2.streamOf(stream) orelse return .{ .last = 0 };
    const world = http2.world;
    assert(s.body_sent < s.body_len);
    if (clients_ns.percent(world, world.options.client_slow_percent)) {
        s.body_paused_until_ns = world.sim.now_ns + world.random.uintAtMost(u64, 300 * std.time.ns_per_ms);
        s.body_waiting = true;
        return .wait;
    }
    const n: u32 = @intCast(@min(buffer.len, s.body_len - s.body_sent, world.random.intRangeAtMost(u32, 1, 16 * 1024)));
    peer_http.fillPattern(buffer[0..n], .request, s.id, s.body_sent);
    s.body_sent += n;
    return if (s.body_sent == s.body_len) .{ .last = n } else .{ .bytes = n };
}

/// Resets due, paused bodies that may go on, windows to hand back.
fn streamTimers(http2: *Http2Client) void {
    const now = http2.world.sim.now_ns;
    for (&http2.streams) |*s| {
        if (s.state == .open and now >= s.reset_at_ns) {
            http2.world.trace("client {d} (h2): resets r{d} (stream {d})", .{ http2.client.number, s.id, s.stream });
            http2.session.reset(s.stream, .cancel) catch |err| switch (err) {
                error.StreamClosed => {}, // nghttp2 closed it meanwhile: its event follows.
                error.OutOfMemory, error.TooManyFields => fail.invariant("client: reset: {t}", .{err}),
            };
            s.state = .reset_by_client;
            http2.world.summary.http2_client_resets += 1;
        }
        if (s.body_waiting and now >= s.body_paused_until_ns and s.state == .open) {
            s.body_waiting = false;
            http2.session.resumeBody(s.stream) catch |err| switch (err) {
                error.StreamClosed => {},
                error.OutOfMemory, error.TooManyFields => fail.invariant("client: resume: {t}", .{err}),
            };
        }
        if (s.unconsumed > 0 and now >= s.consume_at_ns) {
            http2.session.consume(s.stream, s.unconsumed) catch fail.invariant("client: consume: out of memory", .{});
            s.unconsumed = 0;
        }
    }
}

/// Copies the session's frames out and writes them; false when the client is gone.
fn write(http2: *Http2Client) bool {
    const client = http2.client;
    if (client.out_sent == client.out_len) {
        const n = http2.session.send(client.out) catch |err| fail.invariant("client {d}: nghttp2 send: {t}", .{ client.number, err });
        client.out_len = @intCast(n);
        client.out_sent = 0;
    }
    switch (clients_ns.writeOut(client, http2.world)) {
        .waiting, .closed => return true,
        .wrote => {},
    }
    if (client.stream_sent >= client.vanish_at_byte) {
        http2.end(.vanish);
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// What sluice sent

fn streamOf(http2: *Http2Client, stream: StreamId) ?*Stream {
    const context = http2.session.streamContext(stream) orelse return null;
    const s: *Stream = @ptrCast(@alignCast(context));
    assert(s.stream == stream or s.stream == 0); // 0: being submitted.
    return s;
}

pub fn h2Event(http2: *Http2Client, _: *ClientSession, event: ClientSession.Event) void {
    switch (event) {
        .response => |response| http2.onResponse(response),
        .data => |data| http2.onData(data.stream, data.bytes),
        .trailers => {}, // A backend's chunked trailers, relayed: nothing to check in them.
        .end => |stream| http2.onEnd(stream),
        .head_too_large => |stream| {
            const s = http2.streamOf(stream) orelse return;
            fail.invariant("r{d}: sluice sent a response head past the client's limits", .{s.id});
        },
        .closed => |closed| http2.onClosed(closed.stream, closed.error_code),
        .goaway => |goaway| http2.onGoaway(goaway.last_stream, goaway.error_code),
    }
}

fn onResponse(http2: *Http2Client, response: ClientSession.Response) void {
    const s = http2.streamOf(response.stream) orelse return;
    if (s.state == .reset_by_client) return;
    if (s.state != .open) fail.invariant("r{d}: a response head on a stream in state {t}", .{ s.id, s.state });
    if (s.response.head) fail.invariant("r{d}: a second final head", .{s.id});
    var tag: ?u32 = null;
    var length: ?[]const u8 = null;
    var close_delimited = false;
    var unsolicited = false;
    for (response.fields) |field| {
        if (std.mem.eql(u8, field.name, peer_http.close_delimited_field)) close_delimited = true;
        if (std.mem.eql(u8, field.name, peer_http.unsolicited_field)) unsolicited = true;
        if (std.mem.eql(u8, field.name, peer_http.tag_field)) tag = peer_http.parseTag(field.value);
        if (std.mem.eql(u8, field.name, peer_http.length_field)) length = field.value;
        for ([_][]const u8{ "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "content-encoding" }) |name| {
            if (std.mem.eql(u8, field.name, name)) fail.invariant("r{d}: HTTP/2 response with {s}", .{ s.id, name });
        }
    }
    if (tag) |t| if (t != s.id) {
        fail.invariant("client {d}: the response to r{d} came on the stream of r{d}", .{ http2.client.number, t, s.id });
    };
    const status = response.status;
    if (status < 200) {
        if (tag == null) fail.invariant("r{d}: interim {d} without its tag", .{ s.id, status });
        return; // A backend's 100 or 103, relayed: the answer follows.
    }
    s.response = .{ .head = true, .own = tag == null, .status = status, .close_delimited = close_delimited };
    http2.world.trace("client {d} (h2): r{d} answered {d}{s}", .{ http2.client.number, s.id, status, if (tag == null) " by sluice" else "" });
    if (s.response.own and unsolicited) {
        // A backend's bytes on an idle connection raced sluice's request on it (Backends.zig):
        // relayed as this request's answer, which no proxy can tell from a real one.
        http2.world.summary.unsolicited_relayed += 1;
        s.response.unsolicited = true;
        return;
    }
    if (s.response.own) return http2.checkOwn(s);
    const text = length orelse fail.invariant("r{d}: response without its length field", .{s.id});
    s.response.expected_len = std.fmt.parseInt(u32, text, 10) catch fail.invariant("r{d}: bad length field", .{s.id});
}

/// sluice answered by itself: with what this request may get.
fn checkOwn(http2: *Http2Client, s: *const Stream) void {
    const options = &http2.world.options;
    const status = s.response.status;
    const has_body = s.method == .POST or s.method == .PUT or s.method == .PATCH;
    const allowed = switch (s.target) {
        .pool => switch (status) {
            502, 503, 504, 408 => true,
            413 => options.request_body_bytes_max > 0 and s.body_len > options.request_body_bytes_max,
            else => false,
        },
        .local => status == 200,
        .handler => switch (status) {
            200, 502, 503, 504, 408 => true,
            413 => has_body,
            else => false,
        },
        .redirect => status == 302,
        .unrouted => status == 404,
        .malformed => unreachable, // HTTP/2 clients send none.
    } or (status == 431 and s.head_at_limit);
    if (!allowed) {
        fail.invariant("client {d} (h2): r{d} ({t} {t}) answered {d} by sluice", .{ http2.client.number, s.id, s.method, s.target, status });
    }
    if (options.clean and s.target == .pool) {
        fail.invariant("clean seed: r{d} (h2) answered {d} by sluice, not by its backend", .{ s.id, status });
    }
}

fn onData(http2: *Http2Client, stream: StreamId, bytes: []const u8) void {
    const s = http2.streamOf(stream) orelse return;
    defer http2.handBack(s, @intCast(bytes.len));
    if (s.state == .reset_by_client) return;
    if (!s.response.head) fail.invariant("r{d}: DATA before a final head", .{s.id});
    if (s.method == .HEAD) fail.invariant("r{d}: DATA in a response to HEAD", .{s.id});
    const offset = s.response.seen;
    s.response.seen += @intCast(bytes.len);
    if (s.response.own) {
        return clients_ns.checkOwnBody(s.id, s.target, s.method, s.body_len, s.response.status, offset, bytes);
    }
    if (!peer_http.matchesPattern(bytes, .response, s.id, offset)) {
        fail.invariant("client {d} (h2): r{d} got response bytes {d}..{d} that are not its own", .{
            http2.client.number, s.id, offset, offset + bytes.len,
        });
    }
}

/// The stream's window opens by `n` now, or after a while (a window stall sluice must wait out).
fn handBack(http2: *Http2Client, s: *Stream, n: u32) void {
    if (!http2.consume_late) {
        http2.session.consume(s.stream, n) catch fail.invariant("client: consume: out of memory", .{});
        return;
    }
    if (s.unconsumed == 0) s.consume_at_ns = http2.world.sim.now_ns + http2.world.random.uintAtMost(u64, 200 * std.time.ns_per_ms);
    s.unconsumed += n;
}

fn onEnd(http2: *Http2Client, stream: StreamId) void {
    const s = http2.streamOf(stream) orelse return;
    const world = http2.world;
    if (s.state == .reset_by_client) return;
    if (!s.response.head) fail.invariant("r{d}: the stream ended without a final head", .{s.id});
    const response = s.response;
    if (!response.own) {
        const bodiless = s.method == .HEAD;
        if (!bodiless and response.close_delimited and response.seen < response.expected_len) {
            // Cut by the backend's close, which ends such a body: checked as a prefix.
            world.summary.http2_cut += 1;
        } else if (!bodiless and response.seen != response.expected_len) {
            fail.invariant("r{d} (h2): response body of {d} bytes, the backend sent {d}", .{ s.id, response.seen, response.expected_len });
        }
        if (!world.ledger.backendSent(s.id, response.status, response.expected_len)) {
            // (A cut body's status and length are the backend's too: its head said them.)
            fail.invariant("r{d} (h2): got {d} with {d} bytes, which no backend sent", .{ s.id, response.status, response.expected_len });
        }
        if (s.target == .handler) world.summary.handler_proxied += 1;
    } else if (s.target == .local and response.status == 200 and s.method != .HEAD and response.seen != clients_ns.local_body.len) {
        fail.invariant("r{d} (h2): the local route's body is {d} bytes", .{ s.id, response.seen });
    } else if (s.target == .handler and response.status == 200 and !response.unsolicited) {
        var buffer: [64]u8 = undefined;
        const expected = clients_ns.handlerBody(&buffer, s.method, s.body_len);
        if (s.method != .HEAD and response.seen != expected.len) {
            fail.invariant("r{d} (h2): the handler's body is {d} bytes, not {d}", .{ s.id, response.seen, expected.len });
        }
        world.summary.handler_answered += 1;
    }
    world.ledger.answered(s.id);
    s.state = .ended;
}

fn onClosed(http2: *Http2Client, stream: StreamId, code: ErrorCode) void {
    const s = http2.streamOf(stream) orelse return;
    const world = http2.world;
    defer s.* = .{};
    switch (s.state) {
        .free => unreachable,
        .ended, .reset_by_client => return,
        .open => {},
    }
    // The stream ended without its response.
    world.trace("client {d} (h2): r{d} (stream {d}) closed by sluice: {t}", .{ http2.client.number, s.id, stream, code });
    switch (code) {
        // Not processed: no backend may ever see it (after a GOAWAY, or past the stream slots).
        .refused_stream => {
            world.ledger.refuse(s.id);
            world.summary.http2_refused += 1;
        },
        // A backend failed after the head went out, or the exchange gave up on the stream.
        .cancel, .internal_error => {
            if (world.options.clean) fail.invariant("clean seed: r{d} (h2): sluice reset the stream ({t})", .{ s.id, code });
            world.summary.http2_sluice_resets += 1;
        },
        else => fail.invariant("r{d} (h2): the stream was closed with {t}", .{ s.id, code }),
    }
}

fn onGoaway(http2: *Http2Client, last: StreamId, code: ErrorCode) void {
    const world = http2.world;
    world.trace("client {d} (h2): GOAWAY last stream {d}, {t}", .{ http2.client.number, last, code });
    switch (code) {
        .no_error => {},
        .internal_error => if (world.options.clean) fail.invariant("clean seed: GOAWAY {t}", .{code}),
        else => fail.invariant("client {d} (h2): GOAWAY {t}", .{ http2.client.number, code }),
    }
    http2.goaway = .{ .last = last, .code = code };
    http2.client.requests_left = 0;
    world.summary.http2_goaways += 1;
}

// ---------------------------------------------------------------------------------------------
// The end of the connection

const End = enum { finish, vanish, closed, reset };

fn end(http2: *Http2Client, how: End) void {
    const client = http2.client;
    const world = http2.world;
    world.trace("client {d} (h2): {t}, {d} streams open", .{ client.number, how, http2.openCount() });
    if (how == .closed or how == .reset) http2.checkUnanswered(how);
    http2.session.deinit();
    http2.started = false;
    http2.streams = @splat(.{});
    switch (how) {
        .vanish => if (client.vanish_reset) world.sim.peerReset(client.fd) else world.sim.peerClose(client.fd),
        .finish, .closed, .reset => world.sim.peerClose(client.fd),
    }
    client.state = .free;
}

/// sluice closed the connection: a stream still open went unanswered, which a clean seed
/// allows for none once sluice has read from the connection (a GOAWAY promises every stream
/// up to its last one an answer, and sluice has no other reason to close). A stream above the
/// GOAWAY's last one was not processed (RFC 9113 §6.8): refused, as the client may send it
/// again elsewhere. (Its HEADERS may still have been in the client's queue or in the socket
/// when the drain's GOAWAY went out: seed 38028753180137, behind the DATA of a refused upload.)
fn checkUnanswered(http2: *Http2Client, how: End) void {
    if (!http2.world.options.clean) return;
    // A connection sluice never read a byte of (the drain came first) had no session yet: it
    // may close it as it closes an HTTP/1.1 one whose request it has not read.
    if (http2.world.sim.proxyReadCommitted(http2.client.fd) == 0) {
        for (&http2.streams) |*s| if (s.state == .open) {
            http2.world.ledger.refuse(s.id);
        };
        return;
    }
    for (&http2.streams) |*s| {
        if (s.state != .open) continue;
        const promised = if (http2.goaway) |goaway| s.stream <= goaway.last else false;
        if (http2.goaway != null and !promised and s.stream != 0) {
            http2.world.ledger.refuse(s.id);
            continue;
        }
        fail.invariant("clean seed: client {d} (h2): sluice {t} the connection with r{d} (stream {d}) unanswered{s}", .{
            http2.client.number, how, s.id, s.stream, if (promised) ", below its GOAWAY's last stream" else "",
        });
    }
}
