//! A server engine and a client engine connected through memory: two queues of bytes in
//! flight, each side allocating from its own pool as two workers would. What the tests and
//! `zig build tls-bench` drive handshakes and records with; it is also a small example of
//! driving an `Engine` (a connection does the same with a socket instead of a queue).
const std = @import("std");
const tls = @import("tls.zig");
const memory = @import("memory.zig");
const Engine = @import("Engine.zig");
const ServerContext = @import("ServerContext.zig");
const ClientContext = @import("ClientContext.zig");

const Loopback = @This();

to_server: Queue = .{},
to_client: Queue = .{},
server: Side = undefined,
client: Side = undefined,

/// Bytes sent one way and not yet received.
pub const Queue = struct {
    bytes: [64 * 1024]u8 = undefined,
    len: usize = 0,

    fn free(queue: *Queue) []u8 {
        return queue.bytes[queue.len..];
    }

    fn drop(queue: *Queue, n: usize) void {
        std.mem.copyForwards(u8, queue.bytes[0 .. queue.len - n], queue.bytes[n..queue.len]);
        queue.len -= n;
    }
};

/// One end: its engine, the pool it allocates from, what it receives and sends.
pub const Side = struct {
    engine: Engine,
    pool: ?*memory.Pool,
    inbox: *Queue,
    outbox: *Queue,
    /// How its handshake failed, if it did.
    failure: ?tls.Failure = null,

    fn enter(side: *Side) void {
        if (side.pool) |pool| pool.enter();
    }

    fn leave(side: *Side) void {
        if (side.pool) |pool| pool.leave();
    }

    fn wire(side: *Side) Engine.Wire {
        return .{ .input = side.inbox.bytes[0..side.inbox.len], .output = side.outbox.free() };
    }

    fn settle(side: *Side, w: *const Engine.Wire) void {
        side.inbox.drop(w.consumed);
        side.outbox.len += w.produced;
    }

    pub fn handshakeStep(side: *Side) void {
        if (side.engine.state != .handshaking) return;
        side.enter();
        defer side.leave();
        var w = side.wire();
        defer side.settle(&w);
        _ = side.engine.handshake(&w) catch |err| {
            side.failure = err;
        };
    }

    /// Everything that arrived, decrypted, as far as `buffer` holds.
    pub fn read(side: *Side, buffer: []u8) tls.Failure![]u8 {
        side.enter();
        defer side.leave();
        var w = side.wire();
        defer side.settle(&w);
        const result = try side.engine.read(&w, buffer);
        return buffer[0..result.plaintext];
    }

    pub fn writeSome(side: *Side, plaintext: []const u8) tls.Failure!Engine.Write {
        side.enter();
        defer side.leave();
        var w = side.wire();
        defer side.settle(&w);
        return side.engine.write(&w, plaintext);
    }

    /// All of `plaintext`, or an error.
    pub fn write(side: *Side, plaintext: []const u8) !void {
        const result = try side.writeSome(plaintext);
        if (result.plaintext != plaintext.len) return error.ShortWrite;
    }

    pub fn describe(side: *const Side, buffer: []u8) []const u8 {
        return side.engine.describe(buffer);
    }

    fn deinit(side: *Side) void {
        side.enter();
        defer side.leave();
        side.engine.deinit();
    }
};

/// Makes both engines (each in its pool). `loopback` must not move afterwards.
pub fn init(
    loopback: *Loopback,
    server: *ServerContext,
    server_pool: ?*memory.Pool,
    client: *ClientContext,
    client_pool: ?*memory.Pool,
    options: Engine.ClientOptions,
) tls.Failure!void {
    loopback.* = .{};
    loopback.server = .{ .engine = undefined, .pool = server_pool, .inbox = &loopback.to_server, .outbox = &loopback.to_client };
    loopback.client = .{ .engine = undefined, .pool = client_pool, .inbox = &loopback.to_client, .outbox = &loopback.to_server };
    loopback.server.enter();
    const server_engine = Engine.initServer(server);
    loopback.server.leave();
    loopback.server.engine = try server_engine;
    errdefer loopback.server.deinit();
    loopback.client.enter();
    const client_engine = Engine.initClient(client, options);
    loopback.client.leave();
    loopback.client.engine = try client_engine;
}

pub fn deinit(loopback: *Loopback) void {
    loopback.client.deinit();
    loopback.server.deinit();
    loopback.* = undefined;
}

/// Runs both handshakes until both are done or one fails (the other then sees the alert);
/// the sides' `failure` say how.
pub fn handshake(loopback: *Loopback) error{ HandshakeFailed, HandshakeStuck }!void {
    for (0..16) |_| {
        loopback.client.handshakeStep();
        loopback.server.handshakeStep();
        if (loopback.client.engine.state != .handshaking and loopback.server.engine.state != .handshaking) break;
    } else return error.HandshakeStuck;
    if (loopback.client.failure != null or loopback.server.failure != null) return error.HandshakeFailed;
}

/// The client sends `request`, the server reads it and answers `response`, the client reads
/// that: one exchange on an established connection. Each message must fit 32 KiB.
pub fn roundTrip(loopback: *Loopback, request: []const u8, response: []const u8) !void {
    var buffer: [32 * 1024]u8 = undefined;
    try loopback.client.write(request);
    if (!std.mem.eql(u8, request, try readAll(&loopback.server, &buffer, request.len))) return error.Mismatch;
    try loopback.server.write(response);
    if (!std.mem.eql(u8, response, try readAll(&loopback.client, &buffer, response.len))) return error.Mismatch;
}

/// What one connection costs each side's pool: the allocations and the peak bytes of its
/// handshake and first exchange (a TLS 1.3 client takes its tickets there), and the bytes the
/// connection still holds once it is idle after them.
pub const Cost = struct {
    resumed: bool,
    server: SideCost,
    client: SideCost,

    pub const SideCost = struct {
        allocations: u64,
        peak_bytes: u64,
        idle_bytes: u64,
    };
};

/// Connects a pair, handshakes, makes one exchange and closes it, counting what each pool
/// handed out meanwhile. Fails if any of it came from the general heap: both sides run in
/// their pools, so none may.
pub fn measure(
    server: *ServerContext,
    server_pool: *memory.Pool,
    client: *ClientContext,
    client_pool: *memory.Pool,
    options: Engine.ClientOptions,
) !Cost {
    const heap_before = memory.heapAllocations();
    const server_before: Mark = .of(server_pool);
    const client_before: Mark = .of(client_pool);
    var loopback: Loopback = undefined;
    try loopback.init(server, server_pool, client, client_pool, options);
    defer loopback.deinit();
    try loopback.handshake();
    try loopback.roundTrip("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 204 No Content\r\n\r\n");
    if (memory.heapAllocations() != heap_before) return error.HeapAllocation;
    return .{
        .resumed = loopback.client.engine.resumed(),
        .server = server_before.since(server_pool),
        .client = client_before.since(client_pool),
    };
}

const Mark = struct {
    allocations: u64,
    bytes: u64,

    fn of(pool: *memory.Pool) Mark {
        pool.resetHighWater();
        return .{ .allocations = pool.allocations.load(), .bytes = pool.bytesInUse() };
    }

    fn since(mark: Mark, pool: *const memory.Pool) Cost.SideCost {
        return .{
            .allocations = pool.allocations.load() - mark.allocations,
            .peak_bytes = pool.bytesHighWater() - mark.bytes,
            .idle_bytes = pool.bytesInUse() -| mark.bytes,
        };
    }
};

fn readAll(side: *Side, buffer: []u8, len: usize) ![]u8 {
    var total: usize = 0;
    while (total < len) {
        const got = try side.read(buffer[total..len]);
        if (got.len == 0) return error.Short;
        total += got.len;
    }
    return buffer[0..total];
}
