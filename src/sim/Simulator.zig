//! One seed of the data-plane simulator: a real `Proxy` worker (sessions, buffers, pools,
//! balancer, health, retries, routes) on a Loop whose backend is the simulated kernel
//! (loop/Sim.zig), with simulated clients (Clients.zig) and backends (Backends.zig) on the
//! other ends of its sockets, reloads, health changes and a drain while traffic runs, and the
//! invariants checked after every step. Everything follows from the seed: the options
//! (Options.zig), every choice of the actors, the kernel's order of completions.
//!
//! A step: events (arrivals, reloads, health and backend changes, the drain), new sessions for
//! waiting clients, every backend and client acts, one loop tick, old generations freed, the
//! invariants checked. After the last step the proxy drains and the simulation runs until
//! everything is closed, which must happen within a bound of simulated time (nothing hangs);
//! then nothing may be left: no session, buffer, upstream connection or fd.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Sim = loop_ns.Sim;
const Config = @import("../config/Config.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Pool = @import("../upstream/Pool.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const Address = @import("../stdx/Address.zig").Address;
const Options = @import("Options.zig");
const Ledger = @import("Ledger.zig");
const Generations = @import("Generations.zig");
const backends_ns = @import("Backends.zig");
const clients_ns = @import("Clients.zig");
const fail = @import("fail.zig");

const Simulator = @This();

sim: Sim,
loop: Loop,
quarantine: Generations.Quarantine = .{},
ledger: Ledger,
backends: backends_ns.Backends,
clients: clients_ns.Clients,
prng: std.Random.DefaultPrng = .init(0),
random: std.Random = undefined,
options: Options = undefined,
seed: u64 = 0,
/// The start-up configuration (limits, client timeouts); each generation has its own copy
/// with its pools and routes.
config: Config = .{},
/// Where reloads compose the next configuration.
next_config: Config = .{},
static: StaticAllocator = undefined,
proxy: Proxy = undefined,
generations: Generations = undefined,
step_count: u64 = 0,
/// `--trace`: every actor's events on stderr, with the simulated time.
tracing: bool = false,
draining: bool = false,
next_arrival_ns: u64 = 0,
summary: Summary = .{},
/// Where actors read what sluice sent them (a stack array would be filled with 0xAA per call
/// in safe builds).
scratch: [4096]u8 = undefined,
/// The configurations' backend lists (Config.Pool.backends_list), for the whole run: a few
/// hundred bytes a reload.
config_arena: std.heap.ArenaAllocator = .init(std.heap.page_allocator),

/// What one seed did, for the run's report.
pub const Summary = struct {
    steps: u64 = 0,
    simulated_ns: u64 = 0,
    clients: u64 = 0,
    requests: u64 = 0,
    answered: u64 = 0,
    /// Requests that reached more than one backend (or one twice): retries.
    resent: u64 = 0,
    reloads: u64 = 0,
    reloads_refused: u64 = 0,
    /// Reloads that changed only member lists (membership changes in place).
    member_reloads: u64 = 0,
    /// Members changed in place without a reload, as by DNS; those that left none; those
    /// put off because they did not fit yet (members that left still draining).
    resolution_changes: u64 = 0,
    resolution_changes_to_none: u64 = 0,
    resolution_changes_deferred: u64 = 0,
    health_flips: u64 = 0,
    backend_flips: u64 = 0,
    clean: u64 = 0,
    /// Clean seeds: requests taken up by sluice whose connection it then closed with a reset
    /// (bytes it had not read yet), as the kernel does (see Clients.zig).
    clean_lost_to_reset: u64 = 0,
    /// Bytes a backend sent on an idle connection, relayed as the answer to a request sluice
    /// sent on it at the same moment (an HTTP/1.1 race no proxy can see).
    unsolicited_relayed: u64 = 0,
    access_log_lines: u64 = 0,
    /// Requests to the handler route answered by the handler itself, and by a backend after
    /// its `Response.proxy`.
    handler_answered: u64 = 0,
    handler_proxied: u64 = 0,
    /// sluice's own `100 Continue`s to requests that asked (`Expect`, the handler route).
    continues: u64 = 0,
    /// Responses sluice gzipped, each inflated and checked byte for byte by its client.
    gzipped: u64 = 0,
    /// Of those, close-delimited bodies a backend's fault cut, ended as whole by the close.
    gzipped_cut: u64 = 0,
    /// Resends the ledger could not order against the answers (the kernel forgot that far).
    resends_unordered: u64 = 0,
    /// HTTP/2 clients (Http2Client.zig), their streams, the streams they reset, those sluice
    /// reset (a backend's failure after the head went out), those it refused (never seen by a
    /// backend), and the GOAWAYs they received.
    http2_clients: u64 = 0,
    http2_streams: u64 = 0,
    http2_client_resets: u64 = 0,
    http2_sluice_resets: u64 = 0,
    http2_refused: u64 = 0,
    http2_goaways: u64 = 0,
    /// Close-delimited bodies a backend's close cut, which sluice ends as whole ones.
    http2_cut: u64 = 0,
    /// HTTP/2 backend connections (Http2Server.zig), the streams they heard, those they
    /// refused (REFUSED_STREAM or above a GOAWAY), the GOAWAYs they sent, the streams they
    /// reset mid-way, and the responses sluice was seen to take (a WINDOW_UPDATE for their
    /// stream: from then on the request may not be sent again).
    http2_backend_taken: u64 = 0,
    http2_backend_conns: u64 = 0,
    http2_backend_streams: u64 = 0,
    http2_backend_refused: u64 = 0,
    http2_backend_goaways: u64 = 0,
    http2_backend_resets: u64 = 0,
    sim: Sim.Stats = .{},

    pub fn add(total: *Summary, one: *const Summary) void {
        inline for (@typeInfo(Summary).@"struct".field_names) |name| {
            if (comptime std.mem.eql(u8, name, "sim")) {
                inline for (@typeInfo(Sim.Stats).@"struct".field_names) |field| {
                    @field(total.sim, field) += @field(one.sim, field);
                }
            } else {
                @field(total, name) += @field(one, name);
            }
        }
    }
};

const pool_names = [_][]const u8{ "p0", "p1", "p2" };
const pool_prefixes = [_][]const u8{ "/p0/", "/p1/", "/p2/" };

/// The `/js/` route's handler, one of two sources at each reload (a change of source compiles a
/// new instance; the same source and limits keep the running one): it answers by itself with
/// what it read (`Clients.handlerBody`), or sends the request on to the pool its path names,
/// `/js/p<k>/r<id>` to pool k as `/p<k>/r<id>`.
const handler_sources = [_][]const u8{
    \\export default async function (request) {
    \\  const body = request.body ?? await request.text();
    \\  return Response.text(`sim ${request.method} ${body.length}\n`);
    \\}
    ,
    \\export default function (request) {
    \\  const pool = request.path.split("/")[2];
    \\  return Response.proxy(pool, { path: request.path.slice(3) + "?x=1" });
    \\}
    ,
};

/// Simulated time allowed after the drain for everything to close.
const settle_ns_max = 10 * 60 * std.time.ns_per_s;

pub fn create(allocator: std.mem.Allocator) !*Simulator {
    const world = try allocator.create(Simulator);
    errdefer allocator.destroy(world);
    world.* = .{
        .sim = undefined,
        .loop = undefined,
        .ledger = try .init(allocator),
        .backends = try .init(allocator),
        .clients = try .init(allocator),
    };
    world.sim = try .init(allocator, .{ .context = world, .function = connectCallback });
    return world;
}

pub fn destroy(world: *Simulator, allocator: std.mem.Allocator) void {
    world.sim.deinit(allocator);
    world.clients.deinit(allocator);
    world.backends.deinit(allocator);
    world.ledger.deinit(allocator);
    world.config_arena.deinit();
    allocator.destroy(world);
}

/// Runs one seed for `steps` steps, then drains and checks that nothing is left. Panics (with
/// the invariant named) on the first violation.
pub fn run(world: *Simulator, seed: u64, steps: u64) Summary {
    world.seed = seed;
    world.options = Options.generate(seed, steps);
    world.prng = .init(seed);
    world.random = world.prng.random();
    world.sim.reset(seed *% 0x9E3779B97F4A7C15 +% 1, world.options.sim);
    world.loop = Loop.initSim(&world.sim);
    world.ledger.reset();
    world.backends.reset(world.options.backends_count, backends_ns.Backends.h2Limits(world.options.backend_h2_streams, world.options.backend_h2_window_bytes));
    world.clients.reset(world.options.http2_window_bytes);
    world.step_count = 0;
    world.draining = false;
    world.next_arrival_ns = world.sim.now_ns;
    world.summary = .{ .clean = @intFromBool(world.options.clean) };
    world.setUp();
    while (world.step_count < steps) {
        if (world.step_count == world.options.drain_step) world.startDrain();
        world.step();
    }
    world.settle();
    world.summary.steps = world.step_count;
    world.summary.simulated_ns = world.sim.now_ns - 1000 * std.time.ns_per_s;
    world.summary.requests = world.ledger.count;
    for (world.ledger.requests[0..world.ledger.count]) |*request| {
        world.summary.answered += request.answered;
        world.summary.resent += @intFromBool(request.deliveries > 1);
    }
    world.summary.sim = world.sim.stats;
    world.summary.resends_unordered = world.ledger.unordered;
    world.tearDown();
    return world.summary;
}

fn setUp(world: *Simulator) void {
    const options = &world.options;
    world.config = .{};
    const config = &world.config;
    config.workers_count = 1;
    config.connections_max = options.sessions;
    config.header_bytes_max = options.header_bytes_max;
    config.headers_count_max = options.headers_count_max;
    config.target_bytes_max = options.header_bytes_max / 2;
    config.response_header_bytes_max = options.response_header_bytes_max;
    config.response_headers_count_max = options.response_headers_count_max;
    switch (options.access_log) {
        .off => {},
        .combined, .json => |format| config.access_log = .{
            .target = "sim",
            .format = if (format == .json) .json else .combined,
        },
    }
    config.client_header_timeout_ns = options.client_header_timeout_ns;
    config.client_idle_timeout_ns = options.client_idle_timeout_ns;
    config.tunnel_idle_timeout_ns = options.tunnel_idle_timeout_ns;
    config.request_body_bytes_max = options.request_body_bytes_max;
    config.splice_min_bytes = options.splice_min_bytes;
    config.header_underscores = if (options.underscores_allowed) .allow else .drop;
    if (options.trusted_clients) config.addTrustedProxy(Config.Cidr.parse("192.0.2.0/25") catch unreachable) catch unreachable;
    if (options.compress_percent > 0) config.compression = .{
        .enabled = true,
        .level = options.compress_level,
        .slots = options.compress_slots,
        .min_bytes = options.compress_min_bytes,
    };
    if (options.http2_percent > 0) {
        // h2c with prior knowledge beside HTTP/1.1 on the one listener.
        config.http2 = .on;
        config.http2_streams_max = options.http2_streams_allowed;
    }
    if (options.http2_percent > 0 or options.backend_h2_percent > 0) {
        // A stream's request body window (65,535 bytes) must fit its four segments
        // (Http2Stream.segments_max), and a try's inbox a window beside 8 KiB of heads
        // (Http2Try.windowBytes): buffers over 16 KiB, which the workers get from their TLS
        // reserve and the simulator from a larger response head limit (backends pad their
        // heads up to past the drawn limit, all of which now passes).
        config.response_header_bytes_max = @max(config.response_header_bytes_max, 16 * 1024);
    }
    world.composePools(config);
    config.validate() catch |err| std.debug.panic("sim: the configuration does not validate: {t}", .{err});
    world.generations = .{ .loop = &world.loop, .sessions_count = options.sessions, .quarantine = &world.quarantine };
    const built = world.generations.build(config, world.sim.now_ns) catch |err| std.debug.panic("sim: first generation: {t}", .{err});
    world.static = .init(std.heap.page_allocator);
    world.proxy.init(
        world.static.allocator(),
        &world.loop,
        config,
        &built.generation,
        0,
        options.sessions,
        .{ .context = world, .function = slotFreeCallback },
        false, // TLS is not simulated (docs/ARCHITECTURE.md, "The simulator": limits).
        options.http2_percent > 0 or options.backend_h2_percent > 0,
    ) catch |err| std.debug.panic("sim: Proxy.init: {t}", .{err});
    world.static.seal();
    world.proxy.start();
}

fn tearDown(world: *Simulator) void {
    if (world.proxy.access_log) |*access_log| access_log.drainAll(world, checkAccessLog);
    world.proxy.stop();
    world.proxy.deinit(world.static.allocator());
    world.generations.freeAll();
    world.quarantine.releaseAll();
}

fn slotFreeCallback(context: *anyopaque) void {
    _ = context; // Waiting clients are admitted at the next step.
}

fn connectCallback(context: *anyopaque, address: *const Address, fd: linux.fd_t) Sim.Verdict {
    const world: *Simulator = @ptrCast(@alignCast(context));
    return world.backends.connect(address, fd);
}

// ---------------------------------------------------------------------------------------------
// Steps

fn step(world: *Simulator) void {
    world.events();
    world.admit();
    for (world.backends.used()) |*conn| backends_ns.step(conn, world);
    for (world.clients.clients) |*client| clients_ns.step(client, world);
    world.sim.horizon_ns = world.horizon();
    world.loop.tick() catch unreachable;
    world.generations.reap();
    world.check();
    if (world.proxy.access_log) |*access_log| access_log.drainPublished(world, checkAccessLog);
    world.step_count += 1;
}

fn chancePer10k(world: *Simulator, value: u32) bool {
    return value > 0 and world.random.uintLessThan(u32, 10_000) < value;
}

fn events(world: *Simulator) void {
    const options = &world.options;
    const now = world.sim.now_ns;
    if (!world.draining and now >= world.next_arrival_ns) {
        const present = world.clients.count(.waiting) + world.clients.count(.open);
        if (present < options.clients_concurrent_max and world.clients.arrive(world)) world.summary.clients += 1;
        world.next_arrival_ns = now + world.random.uintAtMost(u64, options.client_arrival_ns_max);
    }
    if (!world.draining and world.chancePer10k(options.reloads_percent)) world.reload();
    if (world.chancePer10k(options.resolution_changes_per_10k)) world.resolutionChange();
    if (world.chancePer10k(options.health_flip_per_10k)) world.flipHealth();
    if (world.chancePer10k(options.backend_flip_per_10k)) {
        const backend = &world.backends.backends[world.random.uintLessThan(u8, world.backends.count)];
        backend.mode = if (world.random.boolean()) .up else world.random.enumValue(backends_ns.Backend.Mode);
        world.summary.backend_flips += 1;
    }
}

/// Waiting clients get a session as slots free up (the kernel's backlog, in order).
fn admit(world: *Simulator) void {
    var waiting: ?*clients_ns.Client = null;
    while (true) {
        waiting = null;
        for (world.clients.clients) |*client| {
            if (client.state != .waiting) continue;
            if (waiting == null or client.number < waiting.?.number) waiting = client;
        }
        const client = waiting orelse return;
        if (world.draining) {
            client.state = .free; // Never connected: gone with the listener.
            continue;
        }
        if (!world.proxy.hasFreeSession()) return;
        const fd = world.sim.openClient();
        clients_ns.start(client, world, fd);
        world.trace("client {d}: connected, fd {d}", .{ client.number, fd });
        world.proxy.startSession(fd, client.peer, 0);
    }
}

fn horizon(world: *Simulator) u64 {
    const now = world.sim.now_ns;
    var at: u64 = std.math.maxInt(u64);
    if (!world.draining and world.next_arrival_ns > now) at = world.next_arrival_ns;
    for (world.backends.used()) |*conn| at = @min(at, backends_ns.wakeAt(conn, now));
    for (world.clients.clients) |*client| at = @min(at, clients_ns.wakeAt(client, now));
    // Events drawn per step (reloads, flips) need steps to happen: never jump too far.
    return @min(at, now + 5 * std.time.ns_per_s);
}

fn startDrain(world: *Simulator) void {
    if (world.draining) return;
    world.draining = true;
    world.trace("drain", .{});
    world.proxy.drain();
}

/// After the last step: drain, then run until everything is closed.
fn settle(world: *Simulator) void {
    world.startDrain();
    const deadline = world.sim.now_ns + settle_ns_max;
    while (!world.quiet()) {
        if (world.sim.now_ns > deadline) {
            fail.invariant("not quiet {d} s after the drain: {d} sessions, {d} clients, {d} backend " ++
                "connections, {d} sim connections, upstreams quiet: {}", .{
                settle_ns_max / std.time.ns_per_s,
                world.proxy.connections.len - world.proxy.free_connections.available(),
                world.clients.count(.open),
                world.backends.openCount(),
                world.sim.usedCount(),
                world.proxy.upstreamsQuiet(),
            });
        }
        world.step();
    }
    // Nothing may be left behind.
    const proxy = &world.proxy;
    if (proxy.buffers.availableCount() != proxy.buffers.totalCount()) {
        fail.invariant("quiet, yet {d} buffers are in use", .{proxy.buffers.totalCount() - proxy.buffers.availableCount()});
    }
    if (world.sim.inflight_count != 0) fail.invariant("quiet, yet {d} operations are in flight", .{world.sim.inflight_count});
    var instances_buffer: [Proxy.holds_max * Config.pools_count_max]*Pool = undefined;
    for (world.generations.instances(&instances_buffer)) |instance| {
        const pool = &instance.locals[0].connections;
        for (pool.slots[0..pool.slots_touched]) |*conn| {
            if (conn.state != .free) fail.invariant("quiet, yet pool {s} has a connection {t}", .{ instance.config.name, conn.state });
        }
    }
    for (proxy.holds, 0..) |hold, i| {
        if (hold.users != 0) fail.invariant("quiet, yet generation hold {d} has {d} users", .{ i, hold.users });
    }
}

fn quiet(world: *Simulator) bool {
    return world.proxy.free_connections.available() == world.proxy.connections.len and
        world.clients.count(.open) == 0 and world.clients.count(.waiting) == 0 and
        world.backends.openCount() == 0 and world.sim.usedCount() == 0 and
        world.proxy.upstreamsQuiet();
}

/// Each access-log line names a request its client sent, as it sent it: the method, the
/// target and the user agent are slices of the client buffer when the line is written, so a
/// body received over the head would show here (it did once, before the head was kept).
fn checkAccessLog(world: *Simulator, bytes: []const u8) void {
    var lines = std.mem.splitScalar(u8, bytes, '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        world.summary.access_log_lines += 1;
        const method, const target, const agent = switch (world.options.access_log) {
            .off => unreachable,
            .json => .{ jsonString(line, "method"), jsonString(line, "target"), jsonString(line, "user_agent") },
            .combined => combined: {
                var quoted = std.mem.splitScalar(u8, line, '"');
                _ = quoted.next();
                var request = std.mem.splitScalar(u8, quoted.next() orelse "", ' ');
                const m = request.next() orelse "";
                const t = request.next() orelse "";
                _ = quoted.next(); // Status and bytes.
                _ = quoted.next(); // Referer.
                _ = quoted.next();
                break :combined .{ m, t, quoted.next() orelse "" };
            },
        };
        if (std.mem.eql(u8, target, "-") or target.len == 0) continue; // Refused before it parsed.
        const at = std.mem.lastIndexOf(u8, target, "/r") orelse fail.invariant("access log target without a tag: {s}", .{line});
        const end = std.mem.indexOfAnyPos(u8, target, at + 2, "?") orelse target.len;
        const id = std.fmt.parseInt(u32, target[at + 2 .. end], 10) catch fail.invariant("access log target: {s}", .{line});
        const request = world.ledger.get(id);
        var expected: [96]u8 = undefined;
        var expected_writer = std.Io.Writer.fixed(&expected);
        clients_ns.writeTarget(&expected_writer, request, id) catch unreachable;
        const sent = expected_writer.buffered();
        var agent_expected: [32]u8 = undefined;
        const agent_sent = std.fmt.bufPrint(&agent_expected, "sim/{d}", .{request.client}) catch unreachable;
        if (!std.mem.eql(u8, target, sent) or !std.mem.eql(u8, method, @tagName(request.method)) or
            !std.mem.eql(u8, agent, agent_sent))
        {
            fail.invariant("access log line does not show r{d} as sent ({t} {s}, {s}): {s}", .{ id, request.method, sent, agent_sent, line });
        }
    }
}

/// The value of `"name":"..."` in a JSON line (the simulator's values need no unescaping).
fn jsonString(line: []const u8, comptime name: []const u8) []const u8 {
    const key = "\"" ++ name ++ "\":\"";
    const start = (std.mem.indexOf(u8, line, key) orelse return "") + key.len;
    const end = std.mem.indexOfScalarPos(u8, line, start, '"') orelse return "";
    return line[start..end];
}

/// A line of the trace (`--trace`): what an actor did, at what simulated time.
pub fn trace(world: *const Simulator, comptime format: []const u8, args: anytype) void {
    if (!world.tracing) return;
    const ms = (world.sim.now_ns - 1000 * std.time.ns_per_s) / std.time.ns_per_us;
    std.debug.print("{d:>6} {d:>10.3}ms " ++ format ++ "\n", .{ world.step_count, @as(f64, @floatFromInt(ms)) / 1000 } ++ args);
}

/// Open connections to HTTP/2 backends, and the tries on them that hold an inbox.
fn http2BackendBuffers(proxy: *const Proxy) struct { u32, u32 } {
    var links: u32 = 0;
    var inboxes: u32 = 0;
    var next = proxy.h2_backends_open;
    while (next) |link| : (next = link.next) {
        links += 1;
        var attempt = link.tries;
        while (attempt) |try_| : (attempt = try_.next) inboxes += @intFromBool(try_.inbox != null);
    }
    return .{ links, inboxes };
}

/// Marks, on every backend connection, what sluice has read of the answers so far.
pub fn markAllArrivals(world: *Simulator) void {
    for (world.backends.used()) |*conn| backends_ns.markArrivals(conn, world);
}

// ---------------------------------------------------------------------------------------------
// Configuration: pools, routes, reloads

fn composePools(world: *Simulator, config: *Config) void {
    const options = &world.options;
    config.pools_count = 0;
    config.routes_count = 0;
    config.handlers_count = 0;
    for (0..options.pools_count) |k| {
        const pool = config.addPool(.{ .name = pool_names[k] }) catch unreachable;
        world.randomPool(pool, @intCast(k));
    }
    if (!options.routed) return;
    for (0..options.pools_count) |k| {
        config.addRoute(.{ .path_prefix = pool_prefixes[k], .pool = @intCast(k) }) catch unreachable;
    }
    config.addRoute(.{
        .path_prefix = "/local/",
        .action = .respond,
        .content_type = "text/plain",
        .body = clients_ns.local_body,
    }) catch unreachable;
    config.addRoute(.{
        .path_prefix = "/redir/",
        .action = .redirect,
        .location = "http://sim.test/elsewhere",
        .keep_path = world.random.boolean(),
    }) catch unreachable;
    config.setHandler(.{
        .name = "sim",
        .path = "",
        .source = handler_sources[world.random.uintLessThan(usize, handler_sources.len)],
        .heap_bytes = 256 * 1024,
        // Now and then a limit under the bodies clients send: their requests get a 413.
        .body_bytes_max = if (world.random.uintLessThan(u8, 4) == 0) 100 else 64 * 1024,
    }) catch unreachable;
    config.addRoute(.{ .path_prefix = "/js/", .action = .handler, .handler = 0 }) catch unreachable;
}

/// A new member list for pool `k`: a non-empty subset of the backends, each with a random
/// weight and (with faults) now and then caps.
fn randomMembers(world: *Simulator, pool: *Config.Pool, k: u8) void {
    const random = world.random;
    const clean = world.options.clean;
    const count = world.backends.count;
    pool.backends_list = &.{};
    pool.backends_count = 0;
    var chosen: u8 = 0;
    while (chosen == 0) chosen = random.int(u8) & ((@as(u8, 1) << @intCast(count)) - 1);
    for (0..count) |b| {
        if (chosen & (@as(u8, 1) << @intCast(b)) == 0) continue;
        const weight: u16 = if (!clean and random.uintLessThan(u8, 20) == 0) 0 else random.intRangeAtMost(u16, 1, 5);
        pool.addBackend(world.config_arena.allocator(), .{
            .address = backends_ns.Backend.addressOf(@intCast(b)),
            .weight = weight,
            .max_connections = if (!clean and random.uintLessThan(u8, 5) == 0) random.intRangeAtMost(u32, 1, 3) else 0,
            .max_pending = if (!clean and random.uintLessThan(u8, 10) == 0) random.intRangeAtMost(u32, 1, 3) else 0,
        }) catch unreachable;
        world.backends.backends[b].pools |= @as(u8, 1) << @intCast(k);
    }
}

fn randomPool(world: *Simulator, pool: *Config.Pool, k: u8) void {
    const random = world.random;
    const clean = world.options.clean;
    world.randomMembers(pool, k);
    pool.strategy = random.enumValue(Config.Strategy);
    pool.hash_on = random.enumValue(Config.HashOn);
    pool.hash_name = switch (pool.hash_on) {
        .header => "x-sim-key",
        .cookie => "sim",
        .client_ip, .path => "",
    };
    pool.retry = .{
        .tries_max = random.intRangeAtMost(u8, 1, 3),
        .on = .{
            .connect = random.boolean(),
            .reset = random.boolean(),
            .timeout = random.boolean(),
            .status_5xx = random.boolean(),
        },
        .budget_percent = random.uintAtMost(u8, 100),
        .budget_min_per_second = random.uintAtMost(u32, 20),
    };
    pool.outlier = .{
        .consecutive_failures = random.uintAtMost(u32, 5),
        .on = .{ .connect = random.boolean(), .reset = random.boolean(), .timeout = random.boolean(), .status_5xx = random.boolean() },
        .ejection_ns = ([_]u64{ 100, 1000 })[random.uintLessThan(usize, 2)] * std.time.ns_per_ms,
        .ejection_max_ns = 5 * std.time.ns_per_s,
        .max_ejected_percent = random.uintAtMost(u8, 100),
    };
    const ms = std.time.ns_per_ms;
    pool.connect_timeout_ns = ([_]u64{ 50, 200, 1000 })[random.uintLessThan(usize, 3)] * ms;
    pool.response_timeout_ns = ([_]u64{ 200, 1000, 3000 })[random.uintLessThan(usize, 3)] * ms;
    pool.body_timeout_ns = ([_]u64{ 500, 2000 })[random.uintLessThan(usize, 2)] * ms;
    pool.total_timeout_ns = ([_]u64{ 0, 0, 4000 })[random.uintLessThan(usize, 3)] * ms;
    pool.idle_timeout_ns = ([_]u64{ 300, 2000, 10_000 })[random.uintLessThan(usize, 3)] * ms;
    pool.keepalive_max = random.uintAtMost(u32, 4);
    if (clean) {
        // Timeouts only fire on faults: a clean seed's backends answer within these.
        pool.connect_timeout_ns = 60 * std.time.ns_per_s;
        pool.response_timeout_ns = 60 * std.time.ns_per_s;
        pool.body_timeout_ns = 60 * std.time.ns_per_s;
        pool.total_timeout_ns = 0;
    }
    // Drawn only in seeds with HTTP/2 backends, so that the others replay as they did.
    const h2_percent = world.options.backend_h2_percent;
    pool.protocol = if (h2_percent > 0 and random.uintLessThan(u8, 100) < h2_percent) .h2c else .http1;
    world.ledger.tries_max = @max(world.ledger.tries_max, pool.retry.tries_max);
    if (pool.retry.on.status_5xx) world.ledger.retry_5xx = true;
}

/// A new configuration, built and adopted between events, as SIGHUP does.
/// Half the reloads change only the pools' member lists (the policy stays, so the pools keep
/// their instances and change membership in place: upstream/Members.zig); the others compose
/// every pool anew.
fn reload(world: *Simulator) void {
    const members_only = world.random.boolean();
    if (members_only) {
        world.next_config = world.generations.current().config;
        const pools = world.next_config.pools_buffer[0..world.next_config.pools_count];
        for (pools, 0..) |*pool, k| world.randomMembers(pool, @intCast(k));
    } else {
        world.next_config = world.config;
        world.composePools(&world.next_config);
    }
    world.next_config.validate() catch |err| std.debug.panic("sim: reload configuration: {t}", .{err});
    const built = world.generations.build(&world.next_config, world.sim.now_ns) catch |err| switch (err) {
        error.TooManyGenerations, error.TooManyTimeouts => {
            world.summary.reloads_refused += 1;
            return;
        },
        error.OutOfMemory => std.debug.panic("sim: out of memory", .{}),
    };
    world.proxy.adopt(&built.generation);
    world.proxy.adoptMembers(); // As a worker does when the control thread wakes it.
    world.summary.reloads += 1;
    if (members_only) world.summary.member_reloads += 1;
    world.trace("reload: generation {d}", .{built.generation.number});
}

/// A backend name's answer changed (runtime/Dns.zig, `Supervisor.applyNames`): a pool of the
/// current generation takes new members in place, with no new generation, now and then none
/// at all (a name that has not resolved: its requests get 503 `no_members`). The workers
/// adopt the table at their next wake-up, as the control thread's wake makes them.
fn resolutionChange(world: *Simulator) void {
    const generation = &world.generations.current().generation;
    const k = world.random.uintLessThan(usize, generation.pools.len);
    const instance = generation.pools[k];
    var pool = instance.config;
    // No member means 503s from sluice, which a clean seed never answers.
    if (!world.options.clean and world.random.uintLessThan(u8, 8) == 0) {
        pool.backends_list = &.{};
        pool.backends_count = 0;
    } else world.randomMembers(&pool, @intCast(k));
    const members = pool.backends();
    if (instance.sameMembers(members)) return;
    if (!instance.membersFit(members)) {
        world.summary.resolution_changes_deferred += 1;
        return;
    }
    _ = instance.changeMembers(members) catch |err| switch (err) {
        error.OutOfMemory => std.debug.panic("sim: out of memory", .{}),
        error.Full, error.Busy => unreachable, // `membersFit` said it fits.
    };
    world.proxy.adoptMembers();
    world.summary.resolution_changes += 1;
    if (members.len == 0) world.summary.resolution_changes_to_none += 1;
    world.trace("dns: pool {s} now has {d} members", .{ instance.config.name, members.len });
}

/// Active health checks say a backend went down, or came back.
fn flipHealth(world: *Simulator) void {
    var instances_buffer: [Proxy.holds_max * Config.pools_count_max]*Pool = undefined;
    const instances = world.generations.instances(&instances_buffer);
    const instance = instances[world.random.uintLessThan(usize, instances.len)];
    const index = world.random.uintLessThan(u16, @intCast(instance.shared.count())); // A slot.
    const up = world.random.boolean();
    instance.shared.health.setActive(index, up, "simulated");
    world.trace("health: pool {s} backend {d} up={}", .{ instance.config.name, index, up });
    world.summary.health_flips += 1;
}

// ---------------------------------------------------------------------------------------------
// Invariants after every step

fn check(world: *Simulator) void {
    if (world.static.allocationsAfterStartup() != 0) {
        fail.invariant("{d} heap allocations after start-up", .{world.static.allocationsAfterStartup()});
    }
    const proxy = &world.proxy;
    const active: u32 = @intCast(proxy.connections.len - proxy.free_connections.available());
    if (proxy.connections_active.load(.monotonic) != active) {
        fail.invariant("connections_active {d}, sessions in use {d}", .{ proxy.connections_active.load(.monotonic), active });
    }
    // A session owns its client fd from start to finalize: one open fd per session.
    const client_fds = world.sim.openCount(.client);
    if (client_fds != active) fail.invariant("{d} sessions in use but {d} client fds open", .{ active, client_fds });
    const buffers_used = proxy.buffers.totalCount() - proxy.buffers.availableCount();
    // HTTP/2 streams hold buffers (and exchanges) of their own beside their connection's;
    // a shared connection to an HTTP/2 backend holds two, and each try on it an inbox.
    const streams: u32 = @intCast(proxy.streams.len - proxy.free_streams.available());
    const h2_backends, const h2_inboxes = http2BackendBuffers(proxy);
    if (buffers_used > Proxy.buffersPerSession(false, false) * active + Proxy.buffersPerStream(false) * streams + 2 * h2_backends + h2_inboxes) {
        fail.invariant("{d} buffers in use by {d} sessions, {d} HTTP/2 streams, {d} HTTP/2 backend connections and {d} tries on them", .{
            buffers_used, active, streams, h2_backends, h2_inboxes,
        });
    }

    var instances_buffer: [Proxy.holds_max * Config.pools_count_max]*Pool = undefined;
    var conns_open: u32 = 0;
    var busy: u32 = 0;
    var inflight: u32 = 0;
    for (world.generations.instances(&instances_buffer)) |instance| {
        const upstream = &instance.locals[0];
        const pool = &upstream.connections;
        var per_backend: [Config.backends_count_max]u32 = @splat(0);
        var idle: u32 = 0;
        var closing: u32 = 0;
        for (pool.slots[0..pool.slots_touched]) |*conn| {
            switch (conn.state) {
                .free => continue,
                .busy => busy += 1,
                .idle => {
                    idle += 1;
                    if (!conn.watching) fail.invariant("pool {s}: an idle connection is not watched", .{instance.config.name});
                    // Kept idle only for a member of the worker's table, of its generation.
                    const table = upstream.table;
                    if (!table.isPresent(conn.backend_index) or table.generations[conn.backend_index] != conn.generation) {
                        fail.invariant("pool {s}: an idle connection to slot {d}, whose member left", .{ instance.config.name, conn.backend_index });
                    }
                },
                .closing => {
                    closing += 1;
                    if (!conn.watching) fail.invariant("pool {s}: a closing connection has no watch to finish it", .{instance.config.name});
                },
            }
            per_backend[conn.backend_index] += 1;
            if (!world.sim.isOpen(conn.socket.fd)) {
                fail.invariant("pool {s}: a {t} connection's fd {d} is not open", .{ instance.config.name, conn.state, conn.socket.fd });
            }
            if (conn.watching and !world.sim.hasPending(conn.socket.fd)) {
                fail.invariant("pool {s}: a watched connection has no operation pending", .{instance.config.name});
            }
        }
        if (idle != pool.idleCount()) fail.invariant("pool {s}: {d} idle connections, idle lists say {d}", .{ instance.config.name, idle, pool.idleCount() });
        if (pool.watches_pending != idle + closing) {
            // Busy connections whose watch is being cancelled count too.
            var busy_watching: u32 = 0;
            for (pool.slots[0..pool.slots_touched]) |*conn| busy_watching += @intFromBool(conn.state == .busy and conn.watching);
            if (pool.watches_pending != idle + closing + busy_watching) {
                fail.invariant("pool {s}: {d} watches pending, {d} connections watched", .{ instance.config.name, pool.watches_pending, idle + closing + busy_watching });
            }
        }
        for (per_backend[0..instance.shared.count()], 0..) |count, b| {
            const shared = instance.shared.connections[b].load(.monotonic);
            if (shared != count) fail.invariant("pool {s}: backend {d} has {d} connections, the shared count says {d}", .{ instance.config.name, b, count, shared });
            conns_open += count;
        }
        for (upstream.inflight) |count| inflight += count;
    }
    const upstream_fds = world.sim.openCount(.upstream);
    if (conns_open != upstream_fds) {
        fail.invariant("{d} connections in the pools but {d} upstream fds open (a leak, or a double close)", .{ conns_open, upstream_fds });
    }
    // A shared connection to an HTTP/2 backend is busy for as long as it is open.
    if (busy < h2_backends) fail.invariant("{d} busy upstream connections, {d} of them shared HTTP/2 ones", .{ busy, h2_backends });
    busy -= h2_backends;
    if (busy > active + streams) fail.invariant("{d} busy upstream connections for {d} sessions and {d} streams", .{ busy, active, streams });
    if (inflight > active + streams) fail.invariant("{d} requests in flight for {d} sessions and {d} streams", .{ inflight, active, streams });
    var users: u32 = 0;
    for (proxy.holds) |hold| users += hold.users;
    // One hold per exchange: an HTTP/1.1 session's, or an HTTP/2 stream's.
    if (users > active + streams) fail.invariant("{d} generation holds for {d} sessions and {d} streams", .{ users, active, streams });
    if (active == 0 and (buffers_used != 2 * h2_backends or busy != 0 or inflight != 0 or users != 0 or streams != 0)) {
        fail.invariant("no session, yet {d} buffers, {d} busy connections, {d} requests in flight, {d} holds, {d} streams", .{ buffers_used, busy, inflight, users, streams });
    }
    for (proxy.connections[0..proxy.free_connections.touched()], 0..) |*connection, i| {
        if (connection.invariants()) |broken| fail.invariant("connection slot {d} ({t}): {s}", .{ i, connection.state, broken });
    }
    // Every exchange slot ever taken (the others were never written): a client connection's,
    // an HTTP/2 stream's, a handler's fetch's.
    const sessions = proxy.free_exchanges.capacity();
    const ranges = [_]struct { u32, u32 }{
        .{ 0, proxy.free_exchanges.touched() },
        .{ sessions, proxy.free_stream_exchanges.touched() },
        .{ 2 * sessions, proxy.free_fetches.touched() },
    };
    for (ranges) |range| for (proxy.exchanges[range[0]..][0..range[1]], range[0]..) |*exchange, i| {
        if (exchange.invariants()) |broken| fail.invariant("exchange slot {d} ({t}): {s}", .{ i, exchange.state, broken });
    };
    if (proxy.http2) |http2| if (active == 0 and h2_backends == 0 and http2.pool.bytesInUse() != 0) {
        fail.invariant("no session, yet {d} bytes of nghttp2 memory in use", .{http2.pool.bytesInUse()});
    };
    if (h2_inboxes > active + streams) fail.invariant("{d} HTTP/2 tries hold an inbox for {d} sessions and {d} streams", .{ h2_inboxes, active, streams });
    // A pipe is busy only while an exchange splices through it; every open one is the proxy's.
    const pipes_busy = proxy.pipes.busyCount();
    if (pipes_busy > active) fail.invariant("{d} pipes busy for {d} sessions", .{ pipes_busy, active });
    var pipes_open: u32 = 0;
    for (&proxy.pipes.slots) |*slot| pipes_open += @intFromBool(slot.pipe != null);
    if (pipes_open != world.sim.openPipes()) fail.invariant("the proxy has {d} pipes, {d} are open (a leak, or a double close)", .{ pipes_open, world.sim.openPipes() });
}
