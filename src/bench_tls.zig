//! The TLS layer on its own, in memory: `zig build tls-bench`. A server engine and a client
//! engine in one thread, through `Loopback`, each allocating from its own pool as two workers
//! would. For ECDSA P-256 and RSA-2048 certificates, TLS 1.3 and 1.2, it prints:
//!
//! - what a full and a resumed handshake cost each side's pool: allocations, peak bytes, and
//!   the bytes the connection keeps once idle (`Loopback.measure`, the figures the tests bound);
//! - handshakes per second of the server side alone (the time spent in its handshake calls,
//!   which is what a listener's core pays), full and resumed;
//! - with `--sizes`, each pool's size classes: allocations served and the most blocks in use
//!   at once over all the runs (how `memory.class_payload_bytes` was chosen).
//!
//! Figures, not assertions: the tests hold the bounds. Run on a quiet machine and quote the
//! median of a few runs.
const std = @import("std");
const tls = @import("tls/tls.zig");
const memory = tls.memory;
const certificate = tls.certificate;
const Loopback = @import("tls/Loopback.zig");
const testdata = @import("tls/testdata.zig");

/// Handshakes timed per row; each row also runs for at least `duration_min_ns`.
const handshakes_min = 200;
const duration_min_ns = std.time.ns_per_s;

const Case = struct {
    label: []const u8,
    source: certificate.Source,
    name: []const u8,
    version: tls.ServerContext.Version,
};

const cases = [_]Case{
    .{ .label = "ecdsa-p256 tls1.3", .source = testdata.ecdsa, .name = "ecdsa.test", .version = .tls1_3 },
    .{ .label = "ecdsa-p256 tls1.2", .source = testdata.ecdsa, .name = "ecdsa.test", .version = .tls1_2 },
    .{ .label = "rsa-2048   tls1.3", .source = testdata.rsa, .name = "rsa.test", .version = .tls1_3 },
    .{ .label = "rsa-2048   tls1.2", .source = testdata.rsa, .name = "rsa.test", .version = .tls1_2 },
};

pub fn main(init: std.process.Init) !void {
    var sizes = false;
    var args = init.minimal.args.iterate();
    _ = args.skip();
    while (args.next()) |arg| {
        if (std.mem.eql(u8, arg, "--sizes")) sizes = true else std.process.fatal("usage: bench-tls [--sizes]", .{});
    }
    try tls.init(.{});
    tls.prepareThread();
    const server_pool = try newPool();
    const client_pool = try newPool();
    var out_buffer: [4096]u8 = undefined;
    var out = std.Io.File.stdout().writer(init.io, &out_buffer);
    const w = &out.interface;
    try w.print("{s:<18} {s:>8} | {s:>22} | {s:>22} | {s:>9} {s:>9}\n", .{
        "certificate", "handshake", "server allocs/peak/idle", "client allocs/peak/idle", "server/s", "pair/s",
    });
    for (cases) |case| {
        var keys: tls.TicketKeys = undefined;
        try keys.init();
        var diagnostic: certificate.Diagnostic = .{};
        var server: tls.ServerContext = undefined;
        try server.init(std.heap.page_allocator, .{ .certificates = &.{case.source}, .ticket_keys = &keys }, &diagnostic);
        defer server.deinit();
        var client: tls.ClientContext = undefined;
        try client.init(std.heap.page_allocator, .{
            .ca_pem = testdata.ca_pem,
            .max_version = case.version,
        }, &diagnostic);
        defer client.deinit();
        var resumption: tls.ClientContext.Resumption = .{};
        defer {
            client_pool.enter();
            resumption.deinit();
            client_pool.leave();
        }
        // Warm: AWS-LC's process-wide caches are filled by the first handshake.
        _ = try Loopback.measure(&server, server_pool, &client, client_pool, .{ .server_name = case.name });
        for ([_]bool{ false, true }) |resume_session| {
            const options: tls.Engine.ClientOptions = .{
                .server_name = case.name,
                .resumption = if (resume_session) &resumption else null,
            };
            // A resumed row needs a session to resume: one full handshake leaves it.
            if (resume_session) _ = try Loopback.measure(&server, server_pool, &client, client_pool, options);
            const cost = try Loopback.measure(&server, server_pool, &client, client_pool, options);
            if (cost.resumed != resume_session) return error.ResumptionUnexpected;
            const rate = try handshakeRate(init.io, &server, server_pool, &client, client_pool, options);
            try w.print("{s:<18} {s:>9} | {d:>5} {d:>7} {d:>7} | {d:>5} {d:>7} {d:>7} | {d:>9.0} {d:>9.0}\n", .{
                case.label,              if (resume_session) "resumed" else "full",
                cost.server.allocations, cost.server.peak_bytes,
                cost.server.idle_bytes,  cost.client.allocations,
                cost.client.peak_bytes,  cost.client.idle_bytes,
                rate.server_per_s,       rate.pair_per_s,
            });
            try w.flush();
        }
    }
    try w.print("general-heap allocations on the pooled sides: 0 (checked by every measurement)\n", .{});
    if (sizes) try printClasses(w, server_pool, client_pool);
    try w.flush();
}

fn printClasses(w: *std.Io.Writer, server_pool: *const memory.Pool, client_pool: *const memory.Pool) !void {
    try w.print("\n{s:>7} | {s:>20} | {s:>20}\n", .{ "class", "server allocs/most", "client allocs/most" });
    for (memory.class_payload_bytes, 0..) |bytes, class| {
        try w.print("{d:>7} | {d:>11} {d:>8} | {d:>11} {d:>8}\n", .{
            bytes,
            server_pool.classAllocations(class),
            server_pool.classHighWater(class),
            client_pool.classAllocations(class),
            client_pool.classHighWater(class),
        });
    }
}

fn newPool() !*memory.Pool {
    const pool = try std.heap.page_allocator.create(memory.Pool);
    try pool.init(std.heap.page_allocator, .uniform(256));
    return pool;
}

const Rate = struct { server_per_s: f64, pair_per_s: f64 };

/// Handshakes one after another; the server's share is the time inside its handshake steps.
fn handshakeRate(
    io: std.Io,
    server: *tls.ServerContext,
    server_pool: *memory.Pool,
    client: *tls.ClientContext,
    client_pool: *memory.Pool,
    options: tls.Engine.ClientOptions,
) !Rate {
    var server_ns: u64 = 0;
    var count: u64 = 0;
    const start = std.Io.Clock.awake.now(io);
    var elapsed_ns: u64 = 0;
    while (count < handshakes_min or elapsed_ns < duration_min_ns) : (count += 1) {
        var loopback: Loopback = undefined;
        try loopback.init(server, server_pool, client, client_pool, options);
        defer loopback.deinit();
        var steps: u32 = 0;
        while (loopback.client.engine.state == .handshaking or loopback.server.engine.state == .handshaking) : (steps += 1) {
            if (steps == 16) return error.HandshakeStuck;
            loopback.client.handshakeStep();
            const before = std.Io.Clock.awake.now(io);
            loopback.server.handshakeStep();
            server_ns += @intCast(before.durationTo(std.Io.Clock.awake.now(io)).nanoseconds);
        }
        if (loopback.client.failure != null or loopback.server.failure != null) return error.HandshakeFailed;
        // A TLS 1.3 client reads its tickets with the first response: keep the next session.
        if (options.resumption != null) try loopback.roundTrip("a", "b");
        elapsed_ns = @intCast(start.durationTo(std.Io.Clock.awake.now(io)).nanoseconds);
    }
    const seconds = @as(f64, @floatFromInt(elapsed_ns)) / std.time.ns_per_s;
    const server_seconds = @as(f64, @floatFromInt(server_ns)) / std.time.ns_per_s;
    const handshakes: f64 = @floatFromInt(count);
    return .{ .server_per_s = handshakes / server_seconds, .pair_per_s = handshakes / seconds };
}
