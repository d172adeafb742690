//! The simulated backends: HTTP/1.1 servers on the simulated network, one `Backend` per
//! address and one `Conn` per connection sluice opened to it. Each request is parsed strictly
//! and checked (its tag, its pool, its body byte for byte, the fields a proxy must drop or
//! add), recorded in the ledger (where the retry rules are checked), and answered according to
//! a plan drawn for it: a normal response (length, chunked or close-delimited), a 5xx, a stall,
//! a late answer, garbage, a close or reset before or in the middle of the response, an early
//! response before the body is read, or an upgrade to an echoing tunnel. Idle keep-alive
//! connections may be closed by the backend, or get bytes nobody asked for. A connection that
//! starts with HTTP/2's preface (a pool with `protocol = h2c`) is served by Http2Server.zig.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Sim = @import("../loop/Sim.zig");
const Address = @import("../stdx/Address.zig").Address;
const peer_http = @import("peer_http.zig");
const Ledger = @import("Ledger.zig");
const Simulator = @import("Simulator.zig");
const Clients = @import("Clients.zig");
const Http2Server = @import("Http2Server.zig");
const h2 = @import("../h2/h2.zig");
const fail = @import("fail.zig");

pub const backends_max = 6;
pub const conns_max = 512;
/// A response: head plus a body of at most 24 KiB, chunked.
const out_bytes_max = 64 * 1024;

pub const Backend = struct {
    address: Address,
    mode: Mode = .up,
    /// Bit k: the backend was in pool k in some generation.
    pools: u8 = 0,

    pub const Mode = enum { up, refuse, blackhole, unreachable_host, timeout };

    pub fn addressOf(index: u8) Address {
        return Address.initIp4(.{ 10, 0, 0, index + 1 }, 8000);
    }
};

pub const Plan = enum {
    ok,
    status_5xx,
    /// Never answers (keeps reading): sluice's response timeout ends it.
    stall,
    /// Answers after a delay that may pass the response timeout.
    delay,
    /// An invalid response head.
    garbage,
    close_before,
    reset_before,
    close_mid,
    reset_mid,
    /// Closes or resets while the request body is still coming.
    close_in_body,
    reset_in_body,
    /// Answers as soon as the head is read, before the body.
    early,
    /// Already answered: by the bytes it sent on the idle connection this request raced.
    answered,
};

pub const Conn = struct {
    state: enum { free, open } = .free,
    fd: linux.fd_t = -1,
    backend: u8 = 0,
    parser: peer_http.Parser = .init(.request),
    phase: Phase = .idle,
    /// The request being read or answered.
    id: u32 = 0,
    method: Ledger.Method = .GET,
    body_len: u64 = 0,
    request_done: bool = false,
    plan: Plan = .ok,
    respond_at_ns: u64 = 0,
    responded: bool = false,
    out: []u8 = &.{},
    out_len: u32 = 0,
    out_sent: u32 = 0,
    /// Response bytes after which the connection is closed or reset (`*_mid` plans).
    cut_at: u32 = std.math.maxInt(u32),
    close_after: bool = false,
    /// The start of each response in the stream to sluice, until sluice has read a byte of it.
    markers: [markers_max]Marker = undefined,
    markers_count: u8 = 0,
    idle_action_ns: u64 = std.math.maxInt(u64),
    idle_action: enum { none, close, unsolicited } = .none,
    tunnel_in: u64 = 0,
    /// Bytes read from sluice, and where the message being parsed started among them.
    stream_in: u64 = 0,
    message_start: u64 = 0,
    /// The backend reads nothing until then (its window fills, sluice's sends wait).
    read_paused_until_ns: u64 = 0,
    /// The connection speaks HTTP/2 (it began with the preface).
    h2: ?*Http2Server = null,
    /// The first bytes, until they tell HTTP/2's preface from an HTTP/1.1 method ("PR").
    sniff: [2]u8 = undefined,
    sniff_len: u8 = 0,

    const markers_max = 4;

    /// A new connection (field by field: the parser's head buffer is large).
    fn open(conn: *Conn, fd: linux.fd_t, backend: u8) void {
        assert(conn.state == .free);
        conn.parser.reset();
        conn.state = .open;
        conn.fd = fd;
        conn.backend = backend;
        conn.phase = .idle;
        conn.id = 0;
        conn.request_done = false;
        conn.responded = false;
        conn.out_len = 0;
        conn.out_sent = 0;
        conn.cut_at = std.math.maxInt(u32);
        conn.close_after = false;
        conn.markers_count = 0;
        conn.idle_action_ns = std.math.maxInt(u64);
        conn.idle_action = .none;
        conn.tunnel_in = 0;
        conn.stream_in = 0;
        conn.message_start = 0;
        conn.read_paused_until_ns = 0;
        conn.h2 = null;
        conn.sniff_len = 0;
    }

    fn pushMarker(conn: *Conn, id: u32, start: u64, final: bool) void {
        if (conn.markers_count == markers_max) fail.invariant("backend: too many responses unread by sluice", .{});
        conn.markers[conn.markers_count] = .{ .id = id, .start = start, .final = final };
        conn.markers_count += 1;
    }

    pub const Phase = enum {
        /// Waiting for a request head.
        idle,
        /// A request is being read; its answer comes at `respond_at_ns` or at its end.
        reading,
        /// The answer is being written.
        responding,
        /// Will never answer.
        stalled,
        /// After a 101: bytes from sluice are echoed back.
        tunnel,
        /// Sent garbage: waits for sluice to close.
        spent,
        /// Sent bytes nobody asked for on an idle connection: a request sluice sent at the
        /// same moment gets no answer but those bytes (the race no proxy can see).
        unsolicited,
    };

    const Marker = struct { id: u32, start: u64, final: bool };
};

pub const Backends = struct {
    backends: [backends_max]Backend = undefined,
    count: u8 = 0,
    conns: []Conn,
    /// `conns[high..]` are free: loops stop there.
    high: u32 = 0,
    out_memory: []u8,
    /// Each connection's HTTP/2 side, used when it speaks HTTP/2; nghttp2's memory for them
    /// (bounded, as sluice's is), their counters, and their setup, made per seed (the seed
    /// draws the streams and the window they announce).
    servers: []Http2Server,
    h2_pool: h2.memory.Pool,
    h2_counters: h2.ServerSession.Counters = .{},
    h2_setup: ?h2.ServerSession.Setup = null,

    pub fn init(allocator: std.mem.Allocator) !Backends {
        const conns = try allocator.alloc(Conn, conns_max);
        errdefer allocator.free(conns);
        const out_memory = try allocator.alloc(u8, conns_max * out_bytes_max);
        errdefer allocator.free(out_memory);
        const servers = try allocator.alloc(Http2Server, conns_max);
        errdefer allocator.free(servers);
        for (servers) |*server| server.* = .{};
        for (conns, 0..) |*conn, i| conn.* = .{ .out = out_memory[i * out_bytes_max ..][0..out_bytes_max] };
        var h2_pool: h2.memory.Pool = undefined;
        var blocks: h2.memory.Pool.Options = undefined;
        for (&blocks.blocks, h2_blocks_per_server) |*blocks_count, per_server| blocks_count.* = per_server * h2_servers_max;
        try h2_pool.init(allocator, blocks);
        return .{ .conns = conns, .out_memory = out_memory, .servers = servers, .h2_pool = h2_pool };
    }

    /// `backends` must not move after this (sessions point at the pool and the setup).
    pub fn deinit(backends: *Backends, allocator: std.mem.Allocator) void {
        if (backends.h2_setup) |*setup| setup.deinit();
        backends.h2_pool.deinit(allocator);
        allocator.free(backends.servers);
        allocator.free(backends.out_memory);
        allocator.free(backends.conns);
        backends.* = undefined;
    }

    pub fn reset(backends: *Backends, count: u8, h2_limits: h2.ServerSession.Limits) void {
        assert(count > 0 and count <= backends_max);
        if (backends.h2_pool.bytesInUse() != 0) fail.invariant("the backends' nghttp2 memory was not all given back", .{});
        if (backends.h2_setup) |*setup| setup.deinit();
        backends.h2_setup = null;
        var setup: h2.ServerSession.Setup = undefined;
        setup.init(h2_limits) catch fail.invariant("sim: nghttp2 setup: out of memory", .{});
        backends.h2_setup = setup;
        backends.count = count;
        for (backends.backends[0..count], 0..) |*backend, i| backend.* = .{ .address = Backend.addressOf(@intCast(i)) };
        for (backends.conns) |*conn| {
            conn.state = .free;
            conn.fd = -1;
        }
        backends.high = 0;
    }

    /// The limits a seed's HTTP/2 backends announce and keep: the streams and the request body
    /// window drawn for it, and floods' limits far above anything sluice sends (a flood from
    /// sluice would end a connection, and a seed with clean backends must not see that).
    pub fn h2Limits(streams: u32, window_bytes: u32) h2.ServerSession.Limits {
        assert(streams <= Http2Server.streams_max);
        return .{
            .concurrent_streams_max = streams,
            .stream_window_bytes = window_bytes,
            .header_list_bytes_max = 64 * 1024,
            .header_fields_max = peer_http.fields_max,
            .resets_per_window_max = 1_000_000,
            .control_frames_per_window_max = 1_000_000,
            .glitch_burst = 1_000_000,
            .glitch_per_second = 1_000_000,
        };
    }

    /// The connections that may be open.
    pub fn used(backends: *Backends) []Conn {
        while (backends.high > 0 and backends.conns[backends.high - 1].state == .free) backends.high -= 1;
        return backends.conns[0..backends.high];
    }

    pub fn find(backends: *Backends, address: *const Address) ?u8 {
        for (backends.backends[0..backends.count], 0..) |*backend, i| {
            if (backend.address.eql(address)) return @intCast(i);
        }
        return null;
    }

    pub fn openCount(backends: *Backends) u32 {
        var count: u32 = 0;
        for (backends.used()) |*conn| count += @intFromBool(conn.state == .open);
        return count;
    }

    /// sluice connects to `address`: what the network says, per the backend's mode.
    pub fn connect(backends: *Backends, address: *const Address, fd: linux.fd_t) Sim.Verdict {
        const index = backends.find(address) orelse {
            var text: [Address.text_bytes_max]u8 = undefined;
            fail.invariant("sluice connected to {s}, which no configuration names", .{address.toText(&text)});
        };
        switch (backends.backends[index].mode) {
            .up => {},
            .refuse => return .refuse,
            .blackhole => return .blackhole,
            .unreachable_host => return .unreachable_host,
            .timeout => return .timeout,
        }
        for (backends.conns, 0..) |*conn, i| {
            if (conn.state != .free) continue;
            conn.open(fd, index);
            backends.high = @max(backends.high, @as(u32, @intCast(i + 1)));
            return .accept;
        }
        return .refuse; // A full listen backlog.
    }
};

/// HTTP/2 backend sessions at once (each connection has an `Http2Server`; their nghttp2 memory
/// is for this many).
const h2_servers_max = 64;

/// nghttp2's blocks per backend session, by size class (h2/memory.zig): as a simulated
/// client's (Clients.zig), for `Http2Server.streams_max` streams and heads of up to
/// `peer_http.fields_max` fields.
const h2_blocks_per_server = [h2.memory.class_count]u32{
    96, 192, 96, 96, 48, 48, 24, 24, 12, 12, 6, 6, 4, 6, 2, 2, 2, 4, 2, 1, 1,
};

// ---------------------------------------------------------------------------------------------
// Serving a connection

pub fn step(conn: *Conn, world: *Simulator) void {
    if (conn.state != .open) return;
    markArrivals(conn, world);
    if (world.sim.now_ns < conn.read_paused_until_ns) return actOn(conn, world);
    const buffer = &world.scratch;
    var reads: u32 = 0;
    while (reads < 16) : (reads += 1) {
        switch (world.sim.peerRead(conn.fd, buffer)) {
            .none => break,
            .bytes => |n| if (!take(conn, world, buffer[0..n])) return,
            .eof, .reset => return closeConn(conn, world, .close),
        }
    }
    actOn(conn, world);
}

fn actOn(conn: *Conn, world: *Simulator) void {
    if (conn.h2) |server| return server.act();
    act(conn, world);
}

/// Takes bytes from sluice, as HTTP/2 once its preface began them; false when the connection
/// was closed meanwhile.
fn take(conn: *Conn, world: *Simulator, bytes: []const u8) bool {
    if (conn.h2) |server| {
        server.receive(bytes);
        return conn.state == .open;
    }
    if (conn.stream_in > 0) return consume(conn, world, bytes);
    // The first two bytes tell: no method the clients send begins with "PR".
    var rest = bytes;
    while (conn.sniff_len < 2 and rest.len > 0) {
        conn.sniff[conn.sniff_len] = rest[0];
        conn.sniff_len += 1;
        rest = rest[1..];
    }
    if (conn.sniff_len < 2) return true;
    const sniffed = conn.sniff;
    if (std.mem.eql(u8, &sniffed, Http2Server.preface[0..2])) {
        const server = &world.backends.servers[conn - world.backends.conns.ptr];
        if (!server.start(conn, world)) {
            closeConn(conn, world, .reset);
            return false;
        }
        conn.h2 = server;
        server.receive(&sniffed);
        if (conn.state != .open) return false;
        server.receive(rest);
        return conn.state == .open;
    }
    if (!consume(conn, world, &sniffed)) return false;
    return consume(conn, world, rest);
}

/// Marks the requests whose answer sluice has started to read (the retry rules need it).
pub fn markArrivals(conn: *Conn, world: *Simulator) void {
    if (conn.state != .open) return;
    if (conn.h2 != null) return; // Marked as sluice takes body bytes (Http2Server.noteConsumed).
    if (conn.markers_count == 0) return;
    const read_total = world.sim.proxyReadTotal(conn.fd);
    var kept: u8 = 0;
    for (conn.markers[0..conn.markers_count]) |marker| {
        if (read_total > marker.start) {
            world.ledger.arrived(marker.id, marker.final, world.sim.receivedAt(conn.fd, marker.start));
        } else {
            conn.markers[kept] = marker;
            kept += 1;
        }
    }
    conn.markers_count = kept;
}

/// Takes bytes from sluice; false when the connection was closed meanwhile.
fn consume(conn: *Conn, world: *Simulator, bytes: []const u8) bool {
    const base = conn.stream_in;
    conn.stream_in += bytes.len;
    var rest = bytes;
    while (rest.len > 0 or conn.parser.hasEvent()) {
        if (conn.parser.isIdle()) conn.message_start = base + (bytes.len - rest.len);
        if (conn.phase == .tunnel) return rest.len == 0 or tunnelIn(conn, rest);
        if (rest.len > 0 and conn.parser.isIdle() and conn.phase != .idle and conn.phase != .unsolicited) {
            fail.invariant("sluice sent a new request on a connection to backend {d} whose exchange " ++
                "(r{d}, {t}) has not finished", .{ conn.backend, conn.id, conn.phase });
        }
        const parsed = conn.parser.feed(rest) catch |err| {
            fail.invariant("backend {d} got a malformed request from sluice after r{d}: {t}", .{ conn.backend, conn.id, err });
        };
        rest = rest[parsed.consumed..];
        switch (parsed.event) {
            .more => {},
            .head => if (!onHead(conn, world)) return false,
            .body => |body| {
                const offset = conn.parser.body_offset - body.len;
                if (!peer_http.matchesPattern(body, .request, conn.id, offset)) {
                    fail.invariant("backend {d} got body bytes {d}..{d} of r{d} that are not its own", .{
                        conn.backend, offset, conn.parser.body_offset, conn.id,
                    });
                }
                switch (conn.plan) {
                    .close_in_body, .reset_in_body => if (conn.parser.body_offset < conn.body_len) {
                        closeConn(conn, world, if (conn.plan == .reset_in_body) .reset else .close);
                        return false;
                    },
                    else => {},
                }
            },
            .end => {
                if (conn.parser.body_offset != conn.body_len) {
                    fail.invariant("backend {d} got {d} body bytes for r{d}, which has {d}", .{
                        conn.backend, conn.parser.body_offset, conn.id, conn.body_len,
                    });
                }
                conn.parser.next();
                if (!onRequestEnd(conn, world)) return false;
            },
        }
    }
    return true;
}

fn onHead(conn: *Conn, world: *Simulator) bool {
    const head = &conn.parser.head;
    const id = head.tag() orelse fail.invariant("backend {d} got a request without a tag: {s} {s}", .{
        conn.backend, head.first[0], head.first[1],
    });
    // The retry rules compare with what sluice has read of every answer so far.
    world.markAllArrivals();
    world.trace("backend {d} fd {d}: head of r{d}: {s} {s}", .{ conn.backend, conn.fd, id, head.first[0], head.first[1] });
    world.ledger.delivered(id, conn.backend, world.sim.sentAt(conn.fd, conn.message_start));
    const request = world.ledger.get(id);
    checkRequestHead(conn, world, head, id, request);
    conn.id = id;
    conn.method = request.method;
    conn.body_len = request.body_len;
    conn.request_done = false;
    conn.responded = false;
    conn.cut_at = std.math.maxInt(u32);
    conn.close_after = false;
    conn.idle_action = .none;
    conn.idle_action_ns = std.math.maxInt(u64);
    if (world.random.uintLessThan(u8, 100) < world.options.backend_read_pause_percent) {
        conn.read_paused_until_ns = world.sim.now_ns + world.random.uintAtMost(u64, 5 * std.time.ns_per_s);
    }
    // After unsolicited bytes, sluice has read those as the answer already.
    conn.plan = if (conn.phase == .unsolicited) .answered else drawPlan(world, request);
    conn.phase = .reading;
    world.trace("backend {d} fd {d}: r{d} {t} (delivery {d}), plan {t}", .{ conn.backend, conn.fd, id, request.method, request.deliveries, conn.plan });
    const framing: peer_http.Framing = if (head.chunked() catch unreachable)
        .chunked
    else if (head.contentLength() catch unreachable) |length| .{ .length = length } else .none;
    conn.parser.expectBody(framing);
    switch (conn.plan) {
        .early => if (request.body_len > 0) respond(conn, world),
        else => {},
    }
    return true;
}

/// What sluice must have done to a request it forwards.
fn checkRequestHead(conn: *Conn, world: *Simulator, head: *const peer_http.Head, id: u32, request: *const Ledger.Request) void {
    const backend = &world.backends.backends[conn.backend];
    if (request.target != .pool and request.target != .handler) fail.invariant("r{d} ({t}) reached backend {d}", .{ id, request.target, conn.backend });
    var expected: [64]u8 = undefined;
    const target = std.fmt.bufPrint(&expected, "/p{d}/r{d}", .{ request.pool, id }) catch unreachable;
    if (!std.mem.startsWith(u8, head.first[1], target)) {
        fail.invariant("backend {d} got target {s} with tag r{d}", .{ conn.backend, head.first[1], id });
    }
    if (!std.mem.eql(u8, head.first[0], @tagName(request.method))) {
        fail.invariant("r{d} is a {t} but reached backend {d} as {s}", .{ id, request.method, conn.backend, head.first[0] });
    }
    if (backend.pools & (@as(u8, 1) << @intCast(request.pool)) == 0) {
        fail.invariant("r{d} for pool p{d} reached backend {d}, never in that pool", .{ id, request.pool, conn.backend });
    }
    if (head.count("host") != 1) fail.invariant("r{d} reached backend with {d} Host fields", .{ id, head.count("host") });
    // An absolute-form target's authority is the host, and the target goes on in origin form.
    const host = if (request.absolute) "abs.test" else "sim.test";
    if (!std.mem.eql(u8, head.get("host").?, host)) fail.invariant("r{d}: Host {s}, sent for {s}", .{ id, head.get("host").?, host });
    if (head.count("x-forwarded-for") != 1) fail.invariant("r{d}: {d} X-Forwarded-For fields", .{ id, head.count("x-forwarded-for") });
    checkForwardedForValue(world, head.get("x-forwarded-for").?, id, request);
    const underscore = head.get("x_sim_under") != null;
    if (underscore != (request.underscore and world.options.underscores_allowed)) {
        fail.invariant("r{d}: a field named with `_` forwarded {}, sent {}, allowed {}", .{ id, underscore, request.underscore, world.options.underscores_allowed });
    }
    for ([_][]const u8{ "keep-alive", "x-hop", "te", "proxy-connection", "x-sim-trailer" }) |name| {
        if (head.get(name) != null) fail.invariant("r{d} reached backend with hop-by-hop field {s}", .{ id, name });
    }
    const chunked = head.chunked() catch |err| fail.invariant("r{d}: {t}", .{ id, err });
    const length = head.contentLength() catch |err| fail.invariant("r{d}: {t}", .{ id, err });
    if (chunked and length != null) fail.invariant("r{d} reached backend with both framings", .{id});
    if (length) |n| if (n != request.body_len) {
        fail.invariant("r{d} reached backend with Content-Length {d}, its body is {d}", .{ id, n, request.body_len });
    };
    if (!chunked and length == null and request.body_len > 0) {
        fail.invariant("r{d} reached backend without framing for its {d}-byte body", .{ id, request.body_len });
    }
    const version = if (request.http10) "HTTP/1.0" else "HTTP/1.1";
    if (!std.mem.eql(u8, head.first[2], version)) fail.invariant("r{d} from a {s} client forwarded as {s}", .{ id, version, head.first[2] });
    const upgrade = head.get("upgrade") != null;
    if (upgrade != request.upgrade) fail.invariant("r{d}: Upgrade forwarded {}, asked {}", .{ id, upgrade, request.upgrade });
    if (upgrade and !head.hasToken("connection", "upgrade")) fail.invariant("r{d}: Upgrade without Connection: upgrade", .{id});
}

/// The one X-Forwarded-For: the client's own value kept only from a trusted client, then the
/// client's address.
pub fn checkForwardedForValue(world: *Simulator, value: []const u8, id: u32, request: *const Ledger.Request) void {
    var buffer: [64]u8 = undefined;
    const peer = Clients.peerAddress(request.client);
    var host_buffer: [Address.host_text_bytes_max]u8 = undefined;
    const ip = peer.formatHost(&host_buffer);
    const trusted = world.options.trusted_clients and peer.in.addr & 0xff000000 < 128 << 24;
    const expected = if (request.forwarded_for and trusted)
        std.fmt.bufPrint(&buffer, "203.0.113.9, {s}", .{ip}) catch unreachable
    else
        ip;
    if (!std.mem.eql(u8, value, expected)) fail.invariant("r{d}: X-Forwarded-For {s}, expected {s}", .{ id, value, expected });
}

pub fn drawPlan(world: *Simulator, request: *const Ledger.Request) Plan {
    const options = &world.options;
    const roll = world.random.uintLessThan(u32, 100);
    const weights = [_]struct { Plan, u8 }{
        .{ .status_5xx, options.backend_5xx_percent },
        .{ .stall, options.backend_stall_percent },
        .{ .delay, options.backend_delay_percent },
        .{ .garbage, options.backend_garbage_percent },
        .{ .close_before, options.backend_close_percent / 3 },
        .{ .close_mid, options.backend_close_percent / 3 },
        .{ .close_in_body, if (request.body_len > 1) options.backend_close_percent / 3 else 0 },
        .{ .reset_before, options.backend_reset_percent / 3 },
        .{ .reset_mid, options.backend_reset_percent / 3 },
        .{ .reset_in_body, if (request.body_len > 1) options.backend_reset_percent / 3 else 0 },
        .{ .early, if (request.body_len > 0) options.backend_early_percent else 0 },
    };
    var at: u32 = 0;
    for (weights) |entry| {
        at += entry[1];
        if (roll < at) return entry[0];
    }
    return .ok;
}

fn onRequestEnd(conn: *Conn, world: *Simulator) bool {
    conn.request_done = true;
    if (conn.responded) {
        // An early response: once both are done the connection waits for the next request.
        if (conn.out_sent == conn.out_len and !conn.close_after) becomeIdle(conn, world);
        return true;
    }
    switch (conn.plan) {
        .stall => conn.phase = .stalled,
        .answered => becomeIdle(conn, world),
        .close_before => {
            closeConn(conn, world, .close);
            return false;
        },
        .reset_before => {
            closeConn(conn, world, .reset);
            return false;
        },
        .delay => conn.respond_at_ns = world.sim.now_ns + world.random.uintAtMost(u64, 3 * std.time.ns_per_s),
        else => conn.respond_at_ns = world.sim.now_ns,
    }
    return true;
}

/// Writes what is due: the answer, the rest of it, an idle action.
fn act(conn: *Conn, world: *Simulator) void {
    if (conn.phase == .reading and conn.request_done and !conn.responded and world.sim.now_ns >= conn.respond_at_ns) {
        respond(conn, world);
    }
    if (conn.out_sent < conn.out_len) {
        if (!flush(conn, world)) return;
        if (conn.out_sent < conn.out_len) return;
        if (conn.phase == .tunnel) return;
        if (conn.close_after) return closeConn(conn, world, .close);
        if (conn.phase == .responding and conn.request_done) becomeIdle(conn, world);
        if (conn.phase == .responding and conn.plan == .garbage) conn.phase = .spent;
    }
    if (conn.phase == .idle and world.sim.now_ns >= conn.idle_action_ns) {
        switch (conn.idle_action) {
            .none => {},
            .close => return closeConn(conn, world, .close),
            .unsolicited => {
                conn.idle_action = .none;
                conn.idle_action_ns = std.math.maxInt(u64);
                // As servers that answer 408 on an idle connection before closing it. If sluice
                // sends a request at the same moment, this is the answer it reads: a race no
                // proxy can tell from a real answer, so clients accept it (`unsolicited_field`).
                const bytes = "HTTP/1.1 200 OK\r\nX-Sim-Unsolicited: 1\r\nContent-Length: 0\r\n\r\n";
                @memcpy(conn.out[0..bytes.len], bytes);
                conn.out_len = bytes.len;
                conn.out_sent = 0;
                conn.phase = .unsolicited;
                world.trace("backend {d} fd {d}: unsolicited bytes on an idle connection", .{ conn.backend, conn.fd });
                _ = flush(conn, world);
            },
        }
    }
}

/// Writes out what the window takes; false when the connection is gone.
fn flush(conn: *Conn, world: *Simulator) bool {
    var limit = conn.out_len;
    if (conn.cut_at < limit) limit = conn.cut_at;
    if (conn.out_sent < limit) {
        switch (world.sim.peerWrite(conn.fd, conn.out[conn.out_sent..limit])) {
            .bytes => |n| conn.out_sent += n,
            .closed => {
                closeConn(conn, world, .close);
                return false;
            },
        }
    }
    if (conn.out_sent == conn.cut_at) {
        closeConn(conn, world, if (conn.plan == .reset_mid) .reset else .close);
        return false;
    }
    return true;
}

fn becomeIdle(conn: *Conn, world: *Simulator) void {
    conn.phase = .idle;
    const options = &world.options;
    if (world.random.uintLessThan(u8, 100) < options.backend_idle_close_percent) {
        conn.idle_action = .close;
        conn.idle_action_ns = world.sim.now_ns + world.random.uintAtMost(u64, 3 * std.time.ns_per_s);
    } else if (world.random.uintLessThan(u8, 100) < options.backend_unsolicited_percent) {
        conn.idle_action = .unsolicited;
        conn.idle_action_ns = world.sim.now_ns + world.random.uintAtMost(u64, 3 * std.time.ns_per_s);
    }
}

/// Builds the answer to the current request and starts writing it.
fn respond(conn: *Conn, world: *Simulator) void {
    assert(!conn.responded);
    assert(conn.out_sent == conn.out_len);
    conn.responded = true;
    conn.phase = .responding;
    const request = world.ledger.get(conn.id);
    const start = world.sim.peerWrittenTotal(conn.fd);
    var len: usize = 0;
    if (conn.plan == .garbage) {
        const garbages = [_][]const u8{
            "HTTP/1.1 2x0 Nope\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            "HTTP/1.1 200 OK\nX: y\n\n",
            "\x00\x01garbage that is not HTTP\r\n\r\n",
        };
        const which = world.random.uintLessThan(usize, garbages.len + 1);
        if (which < garbages.len) {
            @memcpy(conn.out[0..garbages[which].len], garbages[which]);
            len = garbages[which].len;
            world.ledger.responded(conn.id, .{ .status = 0, .body_len = 0 });
        } else {
            // A valid head and a broken body: relayed, then cut (or complete, for HEAD).
            const head = "HTTP/1.1 200 OK\r\nX-Sim-Tag: r{d}\r\nX-Sim-Len: 0\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
            len = (std.fmt.bufPrint(conn.out, head, .{conn.id}) catch unreachable).len;
            world.ledger.responded(conn.id, .{ .status = 200, .body_len = 0 });
        }
        conn.pushMarker(conn.id, start, true);
    } else if (request.upgrade and conn.plan == .ok and world.random.boolean()) {
        const head = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nX-Sim-Tag: r{d}\r\nX-Sim-Len: 0\r\n\r\n";
        len = (std.fmt.bufPrint(conn.out, head, .{conn.id}) catch unreachable).len;
        world.ledger.responded(conn.id, .{ .status = 101, .body_len = 0 });
        conn.pushMarker(conn.id, start, true);
        conn.phase = .tunnel;
        conn.tunnel_in = 0;
    } else {
        len = buildResponse(conn, world, request);
    }
    conn.out_len = @intCast(len);
    conn.out_sent = 0;
    world.trace("backend {d} fd {d}: answers r{d}: {s}", .{ conn.backend, conn.fd, conn.id, conn.out[0..@min(len, std.mem.indexOf(u8, conn.out[0..len], "\r\n") orelse len)] });
    switch (conn.plan) {
        .close_mid, .reset_mid => conn.cut_at = if (len > 1) world.random.intRangeLessThan(u32, 1, @intCast(len)) else 0,
        else => {},
    }
}

fn buildResponse(conn: *Conn, world: *Simulator, request: *const Ledger.Request) usize {
    const random = world.random;
    const options = &world.options;
    const status: u16 = if (conn.plan == .status_5xx) ([_]u16{ 500, 502, 503 })[random.uintLessThan(usize, 3)] else 200;
    const body_len: u32 = random.uintAtMost(u32, options.body_bytes_max);
    const has_body = conn.method != .HEAD;
    const Shape = enum { length, chunked, close };
    var shape: Shape = .length;
    const roll = random.uintLessThan(u8, 100);
    if (roll < 25) shape = .chunked else if (roll < 35) shape = .close;
    // A 1.1 server does not answer chunked to HTTP/1.0; some do anyway (sluice de-chunks).
    if (shape == .chunked and request.http10 and (options.clean or random.uintLessThan(u8, 4) != 0)) shape = .length;
    conn.close_after = shape == .close or random.uintLessThan(u8, 10) == 0;
    const reason = if (status == 200) "OK" else "Server Error";
    var w = std.Io.Writer.fixed(conn.out);
    if (random.uintLessThan(u8, 100) < options.interim_percent) {
        for (0..random.intRangeAtMost(u8, 1, 2)) |_| {
            const interim: u16 = if (random.boolean()) 100 else 103;
            w.print("HTTP/1.1 {d} Interim\r\nX-Sim-Tag: r{d}\r\nLink: </s.css>; rel=preload\r\n\r\n", .{ interim, conn.id }) catch unreachable;
        }
    }
    w.print("HTTP/1.1 {d} {s}\r\nX-Sim-Tag: r{d}\r\nX-Sim-Len: {d}\r\n", .{ status, reason, conn.id, body_len }) catch unreachable;
    // A type gzip takes (compression.types' default), so that sluice compresses what it may.
    if (options.compress_percent > 0) w.writeAll("Content-Type: text/plain\r\n") catch unreachable;
    // Said to the client, which cannot see it once sluice has gzipped the body into chunks or
    // made it DATA frames: a close-delimited body cut by a close is, to sluice, a body that
    // ended.
    if ((options.compress_percent > 0 or options.http2_percent > 0) and shape == .close) w.writeAll(peer_http.close_delimited_field ++ ": 1\r\n") catch unreachable;
    if (random.uintLessThan(u8, 100) < options.backend_big_head_percent) {
        // Up to past the limits, in fields that grow when sluice rewrites them (`Name:value`).
        const count = random.uintAtMost(u32, options.response_headers_count_max + 8);
        const bytes = random.uintAtMost(u32, options.response_header_bytes_max + 512);
        const each = bytes / @max(count, 1);
        for (0..count) |i| {
            w.print("X-Pad-{d}:{s}", .{ i, if (random.boolean()) " " else "" }) catch unreachable;
            w.splatByteAll('v', each) catch unreachable;
            w.writeAll("\r\n") catch unreachable;
        }
    }
    switch (shape) {
        .length => w.print("Content-Length: {d}\r\n", .{body_len}) catch unreachable,
        .chunked => w.writeAll("Transfer-Encoding: chunked\r\n") catch unreachable,
        .close => {},
    }
    if (conn.close_after) w.writeAll("Connection: close\r\n") catch unreachable;
    w.writeAll("\r\n") catch unreachable;
    var len = w.end;
    if (has_body) switch (shape) {
        .length, .close => {
            peer_http.fillPattern(conn.out[len..][0..body_len], .response, conn.id, 0);
            len += body_len;
        },
        .chunked => len += peer_http.writeChunked(conn.out[len..], random, .response, conn.id, body_len, random.uintLessThan(u8, 100) < options.trailer_percent),
    };
    world.ledger.responded(conn.id, .{ .status = status, .body_len = body_len });
    conn.pushMarker(conn.id, world.sim.peerWrittenTotal(conn.fd), status < 500);
    return len;
}

fn tunnelIn(conn: *Conn, bytes: []const u8) bool {
    if (!peer_http.matchesPattern(bytes, .tunnel, conn.id, conn.tunnel_in)) {
        fail.invariant("backend {d} got tunnel bytes of r{d} at {d} that are not its own", .{ conn.backend, conn.id, conn.tunnel_in });
    }
    conn.tunnel_in += bytes.len;
    // Echo: compact what was sent, then append.
    if (conn.out_sent == conn.out_len) {
        conn.out_sent = 0;
        conn.out_len = 0;
    }
    if (conn.out_len + bytes.len > conn.out.len) fail.invariant("backend {d}: tunnel echo overflow", .{conn.backend});
    @memcpy(conn.out[conn.out_len..][0..bytes.len], bytes);
    conn.out_len += @intCast(bytes.len);
    return true;
}

pub const CloseHow = enum { close, reset };

pub fn closeConn(conn: *Conn, world: *Simulator, how: CloseHow) void {
    markArrivals(conn, world);
    world.trace("backend {d} fd {d}: {t}", .{ conn.backend, conn.fd, how });
    if (conn.h2) |server| {
        server.end();
        conn.h2 = null;
    }
    switch (how) {
        .close => world.sim.peerClose(conn.fd),
        .reset => world.sim.peerReset(conn.fd),
    }
    conn.state = .free;
    conn.fd = -1;
}

/// The next time, after `now`, this connection has something to do by itself.
pub fn wakeAt(conn: *const Conn, now: u64) u64 {
    if (conn.state != .open) return std.math.maxInt(u64);
    if (conn.read_paused_until_ns > now) return conn.read_paused_until_ns;
    if (conn.h2) |server| return server.wakeAt(now);
    const at = switch (conn.phase) {
        .reading => if (conn.request_done and !conn.responded) conn.respond_at_ns else std.math.maxInt(u64),
        .idle => conn.idle_action_ns,
        else => std.math.maxInt(u64),
    };
    return if (at > now) at else std.math.maxInt(u64);
}
