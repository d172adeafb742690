//! The simulated clients: each one connection to sluice that sends a few tagged requests
//! (any method, bodies by length or chunked, pipelined or one at a time, some to local routes,
//! some malformed, some asking for an upgrade) and checks every byte it gets back: the
//! responses come in order, each carries the tag of the request it answers and the body the
//! backend sent for it, sluice's own answers are the ones it may give, and nothing follows a
//! response that announced the close. Faults: a client vanishes (close or reset) in the
//! middle of anything, half-closes, stops reading for a while, or sends a byte at a time.
//!
//! When a connection ends with requests unanswered, that is allowed (the connection closed),
//! except in clean seeds, where sluice may close only on requests it has not read a byte of,
//! or after announcing the close.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const peer_http = @import("peer_http.zig");
const Ledger = @import("Ledger.zig");
const Simulator = @import("Simulator.zig");
const Backend = @import("Backends.zig").Backend;
const Shared = @import("../upstream/Shared.zig");
const h2 = @import("../h2/h2.zig");
const Http2Client = @import("Http2Client.zig");
const fail = @import("fail.zig");

pub const clients_max = 48;
const out_bytes_max = 64 * 1024;
/// A gzipped body: at most `Options.body_bytes_max` (24 KiB) before. sluice flushes the
/// compressor once per window it relays, and each flush adds a few bytes (a block's header and
/// the sync marker, 00 00 FF FF): a body that came a byte at a time (the simulated kernel's
/// short reads) grows several times over (seed 228102604462628 passed 64 KiB).
const gzipped_bytes_max = 10 * 24 * 1024;
const outstanding_max = 16;

/// What the `/local/` route answers (Simulator.zig configures it).
pub const local_body = "sim local\n";

pub const Client = struct {
    state: State = .free,
    fd: linux.fd_t = -1,
    number: u32 = 0,
    peer: Address = undefined,
    requests_left: u8 = 0,
    pipeline: u8 = 1,
    /// The client vanishes once it has sent this many bytes, or at this time.
    vanish_at_byte: u64 = std.math.maxInt(u64),
    vanish_at_ns: u64 = std.math.maxInt(u64),
    vanish_reset: bool = false,
    half_close: bool = false,
    /// Speaks HTTP/1.0; asks for keep-alive or not.
    http10: bool = false,
    keep_alive10: bool = false,
    /// When done, close (else wait for sluice to close the idle connection).
    finish_close: bool = true,
    stall_from_ns: u64 = std.math.maxInt(u64),
    stall_until_ns: u64 = 0,
    slow: bool = false,
    slow_next_ns: u64 = 0,
    next_request_ns: u64 = 0,
    out: []u8 = &.{},
    /// A gzipped response's bytes as they arrive (`gzipped_bytes_max`).
    gzipped: []u8 = &.{},
    gzipped_len: u32 = 0,
    out_len: u32 = 0,
    out_sent: u32 = 0,
    stream_sent: u64 = 0,
    shut: bool = false,
    outstanding: [outstanding_max]Outstanding = undefined,
    outstanding_head: u8 = 0,
    outstanding_count: u8 = 0,
    parser: peer_http.Parser = .init(.response),
    response: Response = .{},
    /// A response announced the close (or was an error sluice closes after): nothing may
    /// follow it, and the requests behind it may go unanswered.
    close_announced: bool = false,
    closing_after_response: bool = false,
    tunnel: ?Tunnel = null,
    /// Speaks HTTP/2 (Http2Client.zig) with this state; null: HTTP/1.x.
    http2: ?*Http2Client = null,

    pub const State = enum { free, waiting, open };

    const Outstanding = struct {
        id: u32,
        method: Ledger.Method,
        target: Ledger.Target,
        upgrade: bool,
        /// Sent `Expect: 100-continue` (to the handler route only).
        expect: bool,
        body_len: u32,
        /// Where its first byte is in the stream to sluice.
        stream_start: u64,
        /// Its head is near or over sluice's limits (431 is a fair answer).
        head_at_limit: bool,
        /// Sent `Accept-Encoding: gzip`: only then may the answer be gzipped.
        gzip: bool = false,
    };

    const Response = struct {
        own: bool = false,
        /// A backend's bytes on an idle connection, relayed as this request's answer (the race
        /// `onHead` counts): nothing of it is checked against the request.
        unsolicited: bool = false,
        /// A 1xx before the answer: relayed, then the answer follows.
        interim: bool = false,
        status: u16 = 0,
        expected_len: u32 = 0,
        seen: u64 = 0,
        /// `Content-Encoding: gzip`: the body is gathered in `gzipped`, and checked whole,
        /// decompressed, at its end.
        gzip: bool = false,
        /// The backend's body was close-delimited: gzipped, a cut one ends as a whole one.
        close_delimited: bool = false,
    };

    const Tunnel = struct { id: u32, total: u32, sent: u32 = 0, echoed: u32 = 0 };

    /// An upgrade request is outstanding: the connection may become a tunnel.
    fn upgrading(client: *const Client) bool {
        for (0..client.outstanding_count) |i| {
            if (client.outstanding[(client.outstanding_head + i) % outstanding_max].upgrade) return true;
        }
        return false;
    }

    fn front(client: *Client) *Outstanding {
        assert(client.outstanding_count > 0);
        return &client.outstanding[client.outstanding_head];
    }
};

pub const Clients = struct {
    clients: []Client,
    out_memory: []u8,
    gzipped_memory: []u8,
    /// Each client's HTTP/2 state, used when it speaks HTTP/2.
    http2_clients: []Http2Client,
    /// nghttp2's memory for the clients' sessions (bounded as sluice's is), and their setup,
    /// made per seed (the seed draws the stream window).
    http2_pool: h2.memory.Pool,
    http2_setup: ?h2.ClientSession.Setup = null,
    /// Clients that arrived, in order: started as session slots free up.
    next_number: u32 = 0,

    pub fn init(allocator: std.mem.Allocator) !Clients {
        const clients = try allocator.alloc(Client, clients_max);
        errdefer allocator.free(clients);
        const out_memory = try allocator.alloc(u8, clients_max * out_bytes_max);
        errdefer allocator.free(out_memory);
        const gzipped_memory = try allocator.alloc(u8, clients_max * gzipped_bytes_max);
        errdefer allocator.free(gzipped_memory);
        const http2_clients = try allocator.alloc(Http2Client, clients_max);
        errdefer allocator.free(http2_clients);
        var http2_pool: h2.memory.Pool = undefined;
        var blocks: h2.memory.Pool.Options = undefined;
        for (&blocks.blocks, http2_blocks_per_client) |*blocks_count, per_client| blocks_count.* = per_client * clients_max;
        try http2_pool.init(allocator, blocks);
        return .{
            .clients = clients,
            .out_memory = out_memory,
            .gzipped_memory = gzipped_memory,
            .http2_clients = http2_clients,
            .http2_pool = http2_pool,
        };
    }

    /// `clients` must not move after this (sessions point at the pool and the setup).
    pub fn deinit(clients: *Clients, allocator: std.mem.Allocator) void {
        if (clients.http2_setup) |*setup| setup.deinit();
        clients.http2_pool.deinit(allocator);
        allocator.free(clients.http2_clients);
        allocator.free(clients.gzipped_memory);
        allocator.free(clients.out_memory);
        allocator.free(clients.clients);
        clients.* = undefined;
    }

    /// A seed starts: its clients, and the stream window its HTTP/2 clients announce.
    pub fn reset(clients: *Clients, http2_window_bytes: u32) void {
        if (clients.http2_pool.bytesInUse() != 0) fail.invariant("the clients' nghttp2 memory was not all given back", .{});
        if (clients.http2_setup) |*setup| setup.deinit();
        clients.http2_setup = null;
        var setup: h2.ClientSession.Setup = undefined;
        setup.init(.{
            .stream_window_bytes = http2_window_bytes,
            .streams_max = Http2Client.streams_max,
            // Above what sluice passes on (Options: response heads up to 6 KiB, 256 fields).
            .header_list_bytes_max = 64 * 1024,
            .header_fields_max = peer_http.fields_max,
        }) catch fail.invariant("sim: nghttp2 setup: out of memory", .{});
        clients.http2_setup = setup;
        clients.next_number = 0;
        for (clients.clients, 0..) |*client, i| client.* = .{
            .out = clients.out_memory[i * out_bytes_max ..][0..out_bytes_max],
            .gzipped = clients.gzipped_memory[i * gzipped_bytes_max ..][0..gzipped_bytes_max],
        };
    }

    pub fn count(clients: *const Clients, state: Client.State) u32 {
        var n: u32 = 0;
        for (clients.clients) |*client| n += @intFromBool(client.state == state);
        return n;
    }

    /// A new client arrives (it waits for a session slot); false when all are busy.
    pub fn arrive(clients: *Clients, world: *Simulator) bool {
        for (clients.clients) |*client| {
            if (client.state != .free) continue;
            const out = client.out;
            const gzipped = client.gzipped;
            const number = clients.next_number;
            clients.next_number += 1;
            client.* = .{ .state = .waiting, .out = out, .gzipped = gzipped, .number = number };
            plan(client, world);
            if (percent(world, world.options.http2_percent)) {
                const http2 = &clients.http2_clients[client - clients.clients.ptr];
                http2.plan(world);
                client.http2 = http2;
                client.pipeline = 1;
                client.http10 = false;
                world.summary.http2_clients += 1;
            }
            return true;
        }
        return false;
    }
};

fn plan(client: *Client, world: *Simulator) void {
    const random = world.random;
    const options = &world.options;
    const now = world.sim.now_ns;
    client.peer = peerAddress(client.number);
    client.requests_left = random.intRangeAtMost(u8, 1, options.requests_per_client_max);
    client.pipeline = if (percent(world, options.pipeline_percent)) random.intRangeAtMost(u8, 2, 4) else 1;
    client.http10 = percent(world, options.http10_percent);
    if (client.http10) {
        client.pipeline = 1;
        client.keep_alive10 = random.boolean();
    }
    if (percent(world, options.client_vanish_percent)) {
        if (random.boolean()) {
            client.vanish_at_byte = random.uintAtMost(u64, 4096);
        } else {
            client.vanish_at_ns = now + random.uintAtMost(u64, 5 * std.time.ns_per_s);
        }
        client.vanish_reset = random.boolean();
    }
    client.half_close = percent(world, options.client_half_close_percent);
    client.finish_close = random.uintLessThan(u8, 4) != 0;
    if (percent(world, options.client_stall_percent)) {
        client.stall_from_ns = now + random.uintAtMost(u64, 2 * std.time.ns_per_s);
        client.stall_until_ns = client.stall_from_ns + random.uintAtMost(u64, 20 * std.time.ns_per_s);
    }
    client.slow = percent(world, options.client_slow_percent);
}

/// nghttp2's blocks per client session, by size class (h2/memory.zig): about twice what
/// sluice gives each of its sessions (Proxy.zig `h2_blocks_per_session`), for up to
/// `Http2Client.streams_max` streams and response heads of up to `peer_http.fields_max` fields.
const http2_blocks_per_client = [h2.memory.class_count]u32{
    96, 192, 96, 96, 48, 48, 24, 24, 12, 12, 6, 6, 4, 6, 2, 2, 2, 4, 2, 1, 1,
};

pub fn percent(world: *Simulator, value: u8) bool {
    return world.random.uintLessThan(u8, 100) < value;
}

/// The connection is accepted: sluice serves `fd` from now on.
pub fn start(client: *Client, world: *Simulator, fd: linux.fd_t) void {
    assert(client.state == .waiting);
    client.state = .open;
    client.fd = fd;
    if (client.http2) |http2| {
        const clients = &world.clients;
        http2.start(client, world, &clients.http2_setup.?, &clients.http2_pool);
    }
}

pub fn step(client: *Client, world: *Simulator) void {
    if (client.state != .open) return;
    if (client.http2) |http2| return http2.step(world);
    const now = world.sim.now_ns;
    if (now >= client.vanish_at_ns) return vanish(client, world);
    const stalled = now >= client.stall_from_ns and now < client.stall_until_ns;
    if (!stalled) {
        const buffer = &world.scratch;
        var reads: u32 = 0;
        while (reads < 16) : (reads += 1) {
            switch (world.sim.peerRead(client.fd, buffer)) {
                .none => break,
                .bytes => |n| consume(client, world, buffer[0..n]),
                .eof => return closed(client, world, false),
                .reset => return closed(client, world, true),
            }
        }
    }
    if (client.tunnel != null) return tunnelOut(client, world);
    send(client, world);
    if (client.state != .open) return;
    // Done: every request sent and answered.
    if (client.requests_left == 0 and client.outstanding_count == 0 and client.out_sent == client.out_len and
        client.finish_close and client.parser.isIdle())
    {
        finish(client, world);
    }
}

/// The next time, after `now`, the client has something to do by itself (what it could do
/// now it has done in its step).
pub fn wakeAt(client: *const Client, now: u64) u64 {
    if (client.state != .open) return std.math.maxInt(u64);
    const times = [_]u64{
        client.vanish_at_ns,
        client.stall_from_ns,
        client.stall_until_ns,
        if (client.slow and client.out_sent < client.out_len) client.slow_next_ns else 0,
        if (client.requests_left > 0) client.next_request_ns else 0,
    };
    var at: u64 = std.math.maxInt(u64);
    for (times) |t| if (t > now) {
        at = @min(at, t);
    };
    if (client.http2) |http2| at = @min(at, http2.wakeAt(now));
    return at;
}

fn send(client: *Client, world: *Simulator) void {
    if (client.shut) return;
    if (client.out_sent == client.out_len) {
        if (!mayStartRequest(client, world)) return;
        buildRequest(client, world);
    }
    switch (writeOut(client, world)) {
        .waiting, .closed => return,
        .wrote => {},
    }
    if (client.stream_sent >= client.vanish_at_byte) return vanish(client, world);
    if (client.out_sent == client.out_len and client.requests_left == 0 and client.half_close and !client.shut and
        !client.upgrading())
    {
        world.sim.peerShutdown(client.fd);
        client.shut = true;
    }
}

pub const Written = enum {
    wrote,
    /// A slow client waits before its next few bytes.
    waiting,
    /// sluice has closed: the read side will say how.
    closed,
};

/// Writes the next bytes of `out` at the client's pace: a few bytes at a time when it is slow,
/// never past the byte it vanishes at (the caller vanishes then).
pub fn writeOut(client: *Client, world: *Simulator) Written {
    const now = world.sim.now_ns;
    if (client.slow and now < client.slow_next_ns) return .waiting;
    var limit = client.out_len;
    if (client.slow) {
        limit = @min(limit, client.out_sent + world.random.intRangeAtMost(u32, 1, 8));
        client.slow_next_ns = now + world.random.uintAtMost(u64, 200 * std.time.ns_per_ms);
    }
    const room = client.vanish_at_byte -| client.stream_sent;
    if (room < limit - client.out_sent) limit = client.out_sent + @as(u32, @intCast(room));
    if (limit > client.out_sent) {
        switch (world.sim.peerWrite(client.fd, client.out[client.out_sent..limit])) {
            .bytes => |n| {
                client.out_sent += n;
                client.stream_sent += n;
            },
            .closed => return .closed,
        }
    }
    return .wrote;
}

fn mayStartRequest(client: *Client, world: *Simulator) bool {
    if (client.requests_left == 0 or client.close_announced or client.closing_after_response) return false;
    if (client.outstanding_count >= client.pipeline) return false;
    if (world.sim.now_ns < client.next_request_ns) return false;
    if (world.ledger.isFull()) return false;
    // Nothing is pipelined behind a request that changes what the connection is.
    if (client.outstanding_count > 0) {
        const last = &client.outstanding[(client.outstanding_head + client.outstanding_count - 1) % outstanding_max];
        if (last.upgrade or last.target == .malformed) return false;
    }
    return true;
}

fn buildRequest(client: *Client, world: *Simulator) void {
    const random = world.random;
    const options = &world.options;
    var target: Ledger.Target = .pool;
    if (percent(world, options.client_malformed_percent)) {
        target = .malformed;
    } else if (percent(world, options.local_percent)) {
        target = ([_]Ledger.Target{ .local, .redirect, .unrouted, .handler })[random.uintLessThan(usize, 4)];
    }
    const methods = [_]Ledger.Method{ .GET, .GET, .GET, .GET, .HEAD, .POST, .POST, .PUT, .DELETE, .OPTIONS, .PATCH };
    const method = methods[random.uintLessThan(usize, methods.len)];
    const may_have_body = method == .POST or method == .PUT or method == .PATCH;
    var body_len: u32 = 0;
    if (may_have_body and percent(world, options.body_percent)) body_len = random.uintAtMost(u32, options.body_bytes_max);
    const chunked = may_have_body and !client.http10 and percent(world, options.chunked_percent);
    const upgrade = method == .GET and target == .pool and !client.http10 and percent(world, options.upgrade_percent);
    const pool: u8 = random.uintLessThan(u8, options.pools_count);
    const forwarding = percent(world, options.forwarding_percent);
    const id = world.ledger.add(.{
        .method = method,
        .target = target,
        .pool = pool,
        .body_len = body_len,
        .upgrade = upgrade,
        .http10 = client.http10,
        .forwarded_for = forwarding and random.boolean(),
        .underscore = forwarding and random.boolean(),
        .absolute = forwarding and target != .malformed and random.boolean(),
        .client = client.number,
    });
    const sent = world.ledger.get(id);
    var w = std.Io.Writer.fixed(client.out);
    const version = if (client.http10) "HTTP/1.0" else "HTTP/1.1";
    w.print("{t} ", .{method}) catch unreachable;
    writeTarget(&w, sent, id) catch unreachable;
    w.print(" {s}\r\n", .{version}) catch unreachable;
    if (client.keep_alive10) w.writeAll("Connection: keep-alive\r\n") catch unreachable;
    w.print("Host: sim.test\r\nUser-Agent: sim/{d}\r\nX-Sim-Tag: r{d}\r\n", .{ client.number, id }) catch unreachable;
    if (sent.forwarded_for) w.writeAll("X-Forwarded-For: 203.0.113.9\r\n") catch unreachable;
    if (sent.underscore) w.writeAll("X_Sim_Under: 1\r\n") catch unreachable;
    const gzip = options.compress_percent > 0 and !client.http10 and percent(world, options.compress_percent);
    if (gzip) w.writeAll("Accept-Encoding: gzip\r\n") catch unreachable;
    if (target == .malformed) {
        const broken = [_][]const u8{ "Host: other.test\r\n", "X-Bad : 1\r\n", "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n" };
        w.writeAll(broken[random.uintLessThan(usize, broken.len)]) catch unreachable;
    }
    if (chunked) {
        w.writeAll("Transfer-Encoding: chunked\r\n") catch unreachable;
    } else if (body_len > 0 or (may_have_body and random.boolean())) {
        w.print("Content-Length: {d}\r\n", .{body_len}) catch unreachable;
    }
    if (percent(world, options.affinity_percent)) {
        // What `hash` (on a header or a cookie) and `sticky` read.
        const backend = Backend.addressOf(random.uintLessThan(u8, world.backends.count));
        const backend_id = if (random.boolean()) Shared.backendId(&backend) else random.int(u64);
        w.print("X-Sim-Key: k{d}\r\nCookie: sim=k{d}; sluice_backend={x:0>16}\r\n", .{
            random.uintAtMost(u8, 50), random.uintAtMost(u8, 50), backend_id,
        }) catch unreachable;
    }
    var head_at_limit = false;
    if (percent(world, options.client_big_head_percent)) {
        // Fields up to past the count limit, or one long field up to past the bytes limit.
        if (random.boolean()) {
            const count = random.uintAtMost(u32, options.headers_count_max + 4);
            for (0..count) |i| w.print("X-Pad-{d}: {d}\r\n", .{ i, i }) catch unreachable;
            head_at_limit = count + 16 > options.headers_count_max;
        } else {
            const len = random.uintAtMost(u32, options.header_bytes_max + 256);
            w.writeAll("X-Pad: ") catch unreachable;
            w.splatByteAll('p', len) catch unreachable;
            w.writeAll("\r\n") catch unreachable;
            head_at_limit = w.end + 256 > options.header_bytes_max;
        }
    }
    // A handler reads the body before it runs: with `Expect: 100-continue`, sluice's own
    // 100 comes first (the body is sent at once all the same, as RFC 9110 §10.1.1 allows).
    const expect = target == .handler and may_have_body and !client.http10 and random.boolean();
    if (expect) w.writeAll("Expect: 100-continue\r\n") catch unreachable;
    if (upgrade) {
        w.writeAll("Connection: Upgrade\r\nUpgrade: websocket\r\n") catch unreachable;
    } else if (percent(world, options.hop_fields_percent)) {
        w.writeAll("Connection: keep-alive, X-Hop\r\nKeep-Alive: timeout=5\r\nX-Hop: secret\r\n") catch unreachable;
    }
    w.writeAll("\r\n") catch unreachable;
    var len = w.end;
    // 431 is a fair answer to a head near the limits (the margins cover the fields sluice
    // counts differently from us).
    head_at_limit = head_at_limit or len + 64 > options.header_bytes_max;
    if (chunked) {
        len += peer_http.writeChunked(client.out[len..], random, .request, id, body_len, percent(world, options.trailer_percent));
    } else {
        peer_http.fillPattern(client.out[len..][0..body_len], .request, id, 0);
        len += body_len;
    }
    client.out_len = @intCast(len);
    client.out_sent = 0;
    const slot = (client.outstanding_head + client.outstanding_count) % outstanding_max;
    client.outstanding[slot] = .{
        .id = id,
        .method = method,
        .target = target,
        .upgrade = upgrade,
        .expect = expect,
        .body_len = body_len,
        .stream_start = client.stream_sent,
        .head_at_limit = head_at_limit,
        .gzip = gzip,
    };
    client.outstanding_count += 1;
    client.requests_left -= 1;
    world.trace("client {d}: r{d} {t} {t} body {d}{s}{s}", .{
        client.number, id, method, target, body_len, if (chunked) " chunked" else "", if (upgrade) " upgrade" else "",
    });
    if (percent(world, options.idle_gap_percent)) {
        client.next_request_ns = world.sim.now_ns + random.uintAtMost(u64, options.idle_gap_ns_max);
    }
}

/// The target of a request as its client writes it (the access log must show it so).
pub fn writeTarget(w: *std.Io.Writer, request: *const Ledger.Request, id: u32) std.Io.Writer.Error!void {
    if (request.absolute) try w.writeAll("http://abs.test");
    switch (request.target) {
        .pool, .malformed => try w.print("/p{d}/r{d}?x=1", .{ request.pool, id }),
        .local => try w.print("/local/r{d}", .{id}),
        .redirect => try w.print("/redir/r{d}", .{id}),
        .unrouted => try w.print("/nowhere/r{d}", .{id}),
        .handler => try w.print("/js/p{d}/r{d}?x=1", .{ request.pool, id }),
    }
}

/// What the handler answers by itself (Simulator.zig `handler_sources`): the method and the
/// length of the body it read, so a body read short, long or twice shows.
pub fn handlerBody(buffer: []u8, method: Ledger.Method, body_len: u32) []const u8 {
    return std.fmt.bufPrint(buffer, "sim {t} {d}\n", .{ method, body_len }) catch unreachable;
}

/// Bytes `offset..` of one of sluice's own answers to request `id`: the local route's body or
/// the handler's, when the answer is their 200 (for HTTP/1.1 and HTTP/2 clients).
pub fn checkOwnBody(id: u32, target: Ledger.Target, method: Ledger.Method, body_len: u32, status: u16, offset: u64, bytes: []const u8) void {
    if (status != 200) return;
    var buffer: [64]u8 = undefined;
    const expected = switch (target) {
        .local => local_body,
        .handler => handlerBody(&buffer, method, body_len),
        else => return,
    };
    if (offset + bytes.len > expected.len or !std.mem.eql(u8, bytes, expected[offset..][0..bytes.len])) {
        fail.invariant("r{d}: the {t} route's body is wrong: {s}", .{ id, target, bytes });
    }
}

/// The client's address: the same for every connection of a client number.
pub fn peerAddress(number: u32) Address {
    return Address.initIp4(.{ 192, 0, 2, @intCast(1 + number % 200) }, @intCast(1024 + number % 60000));
}

fn consume(client: *Client, world: *Simulator, bytes: []const u8) void {
    var rest = bytes;
    while (rest.len > 0 or client.parser.hasEvent()) {
        if (client.tunnel != null) return tunnelIn(client, rest);
        if (client.close_announced and rest.len > 0) {
            fail.invariant("client {d} got bytes after a response that closes the connection: {s}", .{
                client.number, rest[0..@min(rest.len, 60)],
            });
        }
        const parsed = client.parser.feed(rest) catch |err| {
            fail.invariant("client {d} got a malformed response from sluice: {t}", .{ client.number, err });
        };
        rest = rest[parsed.consumed..];
        switch (parsed.event) {
            .more => {},
            .head => onHead(client, world),
            .body => |body| onBody(client, body),
            .end => onEnd(client, world),
        }
    }
}

fn onHead(client: *Client, world: *Simulator) void {
    const head = &client.parser.head;
    if (client.outstanding_count == 0) {
        fail.invariant("client {d} got a response ({d}) with no request outstanding", .{ client.number, head.status });
    }
    const request = client.front();
    const version_ok = std.mem.eql(u8, head.first[0], "HTTP/1.1") or
        (client.http10 and std.mem.eql(u8, head.first[0], "HTTP/1.0"));
    if (!version_ok) fail.invariant("r{d}: answered with {s}", .{ request.id, head.first[0] });
    const status = head.status;
    const tag = head.tag();
    if (client.http10 and status < 200) fail.invariant("r{d}: {d} relayed to an HTTP/1.0 client", .{ request.id, status });
    if (status < 200 and status != 101) {
        // An interim response the backend sent (100, 103), or sluice's own 100 Continue to a
        // request that asked for it: the answer follows.
        const own_continue = tag == null and status == 100 and request.expect;
        if (tag != request.id and !own_continue) fail.invariant("r{d}: interim {d} with tag {any}", .{ request.id, status, tag });
        if (own_continue) world.summary.continues += 1;
        world.trace("client {d}: r{d} interim {d}", .{ client.number, request.id, status });
        client.response = .{ .interim = true, .status = status };
        return client.parser.expectBody(.none);
    }
    const own = tag == null;
    if (tag) |t| if (t != request.id) {
        fail.invariant("client {d}: the response to r{d} was delivered for r{d}", .{ client.number, t, request.id });
    };
    const length = head.contentLength() catch |err| fail.invariant("r{d}: response {t}", .{ request.id, err });
    const chunked = head.chunked() catch |err| fail.invariant("r{d}: response {t}", .{ request.id, err });
    if (length != null and chunked) fail.invariant("r{d}: response with both framings", .{request.id});
    if (client.http10 and chunked) fail.invariant("r{d}: chunked to an HTTP/1.0 client", .{request.id});
    if (status == 101 and !request.upgrade) fail.invariant("r{d}: 101 to a request that asked for no upgrade", .{request.id});
    const bodiless = request.method == .HEAD or status == 204 or status == 304 or status == 101;
    const framing: peer_http.Framing = if (bodiless)
        .none
    else if (chunked)
        .chunked
    else if (length) |n| .{ .length = n } else if (own)
        fail.invariant("r{d}: sluice answered {d} without framing", .{ request.id, status })
    else
        .close;
    if (own and head.get(peer_http.unsolicited_field) != null) {
        // A backend's bytes on an idle connection raced sluice's request on it (Backends.zig).
        world.summary.unsolicited_relayed += 1;
        client.response = .{ .own = true, .unsolicited = true, .status = status };
        client.closing_after_response = head.hasToken("connection", "close");
        return client.parser.expectBody(.{ .length = 0 });
    }
    client.response = .{ .own = own, .status = status };
    if (head.get("content-encoding")) |coding| {
        // Backends send none: any is sluice's gzip, which only a request that took it may get.
        if (own or !std.mem.eql(u8, coding, "gzip") or !request.gzip or bodiless) {
            fail.invariant("r{d}: Content-Encoding {s} on a response to a request that {s} gzip", .{
                request.id, coding, if (request.gzip) "took" else "did not take",
            });
        }
        if (!head.hasToken("vary", "accept-encoding")) fail.invariant("r{d}: gzipped without Vary: Accept-Encoding", .{request.id});
        client.response.gzip = true;
        client.response.close_delimited = head.get(peer_http.close_delimited_field) != null;
        client.gzipped_len = 0;
        world.summary.gzipped += 1;
    }
    world.trace("client {d}: r{d} answered {d} {s}{s}", .{ client.number, request.id, status, head.first[2], if (own) " by sluice" else "" });
    if (own) {
        checkOwn(client, world, request, status);
    } else {
        const text = head.get(peer_http.length_field) orelse fail.invariant("r{d}: response without its length field", .{request.id});
        client.response.expected_len = std.fmt.parseInt(u32, text, 10) catch fail.invariant("r{d}: bad length field", .{request.id});
    }
    if (head.hasToken("connection", "close")) client.closing_after_response = true;
    // HTTP/1.0: the connection closes after the response unless it says keep-alive.
    if (client.http10 and !head.hasToken("connection", "keep-alive")) client.closing_after_response = true;
    client.parser.expectBody(framing);
}

/// sluice answered by itself: with what this request may get.
fn checkOwn(client: *Client, world: *Simulator, request: *const Client.Outstanding, status: u16) void {
    const options = &world.options;
    const allowed = switch (request.target) {
        .pool => switch (status) {
            502, 503, 504 => true,
            408 => true, // A body that stopped coming (a slow or stalled client, or a stall upstream).
            413 => options.request_body_bytes_max > 0 and request.body_len > options.request_body_bytes_max,
            431 => request.head_at_limit,
            else => false,
        },
        .local => status == 200,
        // Answered by the handler itself (200), or refused a body over its limit or one that
        // does not fit the buffer (413), or sent on to a pool that could not answer.
        .handler => switch (status) {
            200, 502, 503, 504, 408 => true,
            413 => request.method == .POST or request.method == .PUT or request.method == .PATCH,
            431 => request.head_at_limit,
            else => false,
        },
        .redirect => status == 302,
        .unrouted => status == 404,
        .malformed => status == 400,
    } or (status == 431 and request.head_at_limit);
    const slow_head = status == 408 and !options.clean; // The head did not come in time.
    if (!allowed and !slow_head) {
        fail.invariant("client {d}: r{d} ({t} {t}) answered {d} by sluice", .{
            client.number, request.id, request.method, request.target, status,
        });
    }
    if (options.clean and request.target == .pool) {
        fail.invariant("clean seed: r{d} answered {d} by sluice, not by its backend", .{ request.id, status });
    }
    // sluice closes after its error responses.
    if (status >= 400 and status != 404) client.closing_after_response = true;
}

fn onBody(client: *Client, body: []const u8) void {
    const request = client.front();
    const offset = client.parser.body_offset - body.len;
    if (client.response.own) {
        return checkOwnBody(request.id, request.target, request.method, request.body_len, client.response.status, offset, body);
    }
    if (client.response.gzip) {
        if (client.gzipped_len + body.len > client.gzipped.len) fail.invariant("r{d}: gzipped body past {d} bytes", .{ request.id, client.gzipped.len });
        @memcpy(client.gzipped[client.gzipped_len..][0..body.len], body);
        client.gzipped_len += @intCast(body.len);
        return;
    }
    if (!peer_http.matchesPattern(body, .response, request.id, offset)) {
        fail.invariant("client {d}: r{d} got response bytes {d}..{d} that are not its own", .{
            client.number, request.id, offset, offset + body.len,
        });
    }
}

/// A gzipped body's length once decompressed, after checking every byte is the backend's.
fn gunzipped(client: *Client, request: *const Client.Outstanding) u64 {
    var plain: [gzipped_bytes_max]u8 = undefined;
    var reader: std.Io.Reader = .fixed(client.gzipped[0..client.gzipped_len]);
    var window: [std.compress.flate.max_window_len]u8 = undefined;
    var decompress: std.compress.flate.Decompress = .init(&reader, .gzip, &window);
    var writer: std.Io.Writer = .fixed(&plain);
    _ = decompress.reader.streamRemaining(&writer) catch |err| {
        fail.invariant("r{d}: a gzipped body of {d} bytes does not inflate: {t}", .{ request.id, client.gzipped_len, err });
    };
    if (reader.seek != client.gzipped_len) fail.invariant("r{d}: bytes after the gzip stream", .{request.id});
    const body = writer.buffered();
    if (!peer_http.matchesPattern(body, .response, request.id, 0)) {
        fail.invariant("client {d}: r{d} got a gzipped body that is not its own", .{ client.number, request.id });
    }
    return body.len;
}

fn onEnd(client: *Client, world: *Simulator) void {
    const request = client.front().*;
    const response = client.response;
    const seen = if (response.gzip) gunzipped(client, &request) else client.parser.body_offset;
    client.parser.next();
    if (response.interim) return;
    if (!response.own) {
        const bodiless = request.method == .HEAD or response.status == 101;
        // sluice ends a gzipped body when the backend's close ends a close-delimited one: a
        // cut there cannot be told from the end (the bytes were checked as a prefix).
        const cut_and_closed = response.gzip and response.close_delimited and seen < response.expected_len;
        if (cut_and_closed) {
            world.summary.gzipped_cut += 1;
        } else if (!bodiless and seen != response.expected_len) {
            fail.invariant("r{d}: response body of {d} bytes, the backend sent {d}", .{ request.id, seen, response.expected_len });
        }
        if (!cut_and_closed and !world.ledger.backendSent(request.id, response.status, response.expected_len)) {
            fail.invariant("r{d}: got {d} with {d} bytes, which no backend sent", .{ request.id, response.status, response.expected_len });
        }
    } else if (request.target == .local and response.status == 200 and seen != local_body.len and request.method != .HEAD) {
        fail.invariant("r{d}: the local route's body is {d} bytes", .{ request.id, seen });
    } else if (request.target == .handler and response.status == 200 and request.method != .HEAD and !response.unsolicited) {
        var buffer: [64]u8 = undefined;
        const expected = handlerBody(&buffer, request.method, request.body_len);
        if (seen != expected.len) fail.invariant("r{d}: the handler's body is {d} bytes, not {d}", .{ request.id, seen, expected.len });
    }
    if (request.target == .handler) {
        if (!response.own) world.summary.handler_proxied += 1 else if (response.status == 200) world.summary.handler_answered += 1;
    }
    world.ledger.answered(request.id);
    client.outstanding_head = @intCast((client.outstanding_head + 1) % outstanding_max);
    client.outstanding_count -= 1;
    if (client.closing_after_response) client.close_announced = true;
    if (response.status == 101) {
        client.tunnel = .{ .id = request.id, .total = world.random.intRangeAtMost(u32, 1, 8000) };
    }
}

fn tunnelOut(client: *Client, world: *Simulator) void {
    const tunnel = &client.tunnel.?;
    if (tunnel.sent < tunnel.total) {
        var chunk: [1024]u8 = undefined;
        const n = @min(chunk.len, tunnel.total - tunnel.sent);
        peer_http.fillPattern(chunk[0..n], .tunnel, tunnel.id, tunnel.sent);
        switch (world.sim.peerWrite(client.fd, chunk[0..n])) {
            .bytes => |written| tunnel.sent += written,
            .closed => return,
        }
    }
    if (tunnel.echoed == tunnel.total) finish(client, world);
}

fn tunnelIn(client: *Client, bytes: []const u8) void {
    const tunnel = &client.tunnel.?;
    if (bytes.len == 0) return;
    if (tunnel.echoed + bytes.len > tunnel.sent or !peer_http.matchesPattern(bytes, .tunnel, tunnel.id, tunnel.echoed)) {
        fail.invariant("client {d}: tunnel of r{d} echoed bytes it did not send at {d}", .{ client.number, tunnel.id, tunnel.echoed });
    }
    tunnel.echoed += @intCast(bytes.len);
}

/// sluice closed the connection (or reset it).
fn closed(client: *Client, world: *Simulator, reset: bool) void {
    world.trace("client {d}: sluice {s}, {d} outstanding", .{ client.number, if (reset) "reset" else "closed", client.outstanding_count });
    // A close-delimited body ends here.
    if (client.parser.eof()) |ended| {
        if (ended and client.outstanding_count > 0) {
            const response = client.response;
            if (response.own or client.parser.body_offset == response.expected_len) {
                onEnd(client, world);
            } else {
                client.parser = .init(.response); // Cut short: the request is not answered.
            }
        }
    } else |_| {}
    if (world.options.clean and client.outstanding_count > 0 and !client.close_announced and client.tunnel == null) {
        // sluice may close a connection on a request it has not taken up: one it has not read
        // (or only read by a receive it had cancelled, racing an idle close), and that no
        // backend has seen.
        const read = world.sim.proxyReadCommitted(client.fd);
        const request = client.front();
        if (read > request.stream_start or world.ledger.get(request.id).deliveries > 0) {
            // One exception: sluice read exactly up to the next request and closed after this
            // one's response; the bytes of the next request it had not read yet made the close
            // a reset, which destroyed the response (RFC 9112 §9.6 asks for a half-close
            // first). sluice lingers when it knows of such bytes, these it could not know of.
            const next_start = if (client.outstanding_count > 1)
                client.outstanding[(client.outstanding_head + 1) % outstanding_max].stream_start
            else
                client.stream_sent;
            if (!reset or read != next_start) {
                fail.invariant("clean seed: client {d}: sluice took r{d} up and closed without answering it", .{ client.number, request.id });
            }
            world.summary.clean_lost_to_reset += 1;
        }
    }
    world.sim.peerClose(client.fd);
    client.state = .free;
}

fn vanish(client: *Client, world: *Simulator) void {
    world.trace("client {d}: vanishes ({s})", .{ client.number, if (client.vanish_reset) "reset" else "close" });
    if (client.vanish_reset) world.sim.peerReset(client.fd) else world.sim.peerClose(client.fd);
    client.state = .free;
}

fn finish(client: *Client, world: *Simulator) void {
    world.sim.peerClose(client.fd);
    client.state = .free;
}
