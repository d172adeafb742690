//! Tests of `ClientSession`, against sluice's own `ServerSession` in memory (bytes handed both
//! ways, split at every byte boundary in one test): requests with and without bodies, responses
//! with bodies, interim heads and trailers, per-stream backpressure, GOAWAY, and a backend's
//! header block past the limits. Both sessions allocate from pools; the C heap must not move.
const std = @import("std");
const testing = std.testing;
const memory = @import("memory.zig");
const ClientSession = @import("ClientSession.zig");
const ServerSession = @import("ServerSession.zig");
const Field = ClientSession.Field;
const StreamId = ClientSession.StreamId;

const Log = struct {
    bytes: [16 * 1024]u8 = undefined,
    len: usize = 0,

    fn print(log: *Log, comptime format: []const u8, arguments: anytype) void {
        const written = std.fmt.bufPrint(log.bytes[log.len..], format ++ "\n", arguments) catch @panic("test log full");
        log.len += written.len;
    }

    fn text(log: *const Log) []const u8 {
        return log.bytes[0..log.len];
    }
};

/// The client's handler: logs events (body bytes as their count), consumes unless told not to,
/// and supplies `body` for every request that has one.
const Proxy = struct {
    log: Log = .{},
    body: []const u8 = "",
    sent: usize = 0,
    consume: bool = true,
    received: usize = 0,
    unconsumed: usize = 0,

    pub fn h2Event(proxy: *Proxy, session: *ClientSession, event: ClientSession.Event) void {
        switch (event) {
            .response => |response| {
                proxy.log.print("response {d} {d} end={}", .{ response.stream, response.status, response.end_stream });
                for (response.fields) |field| proxy.log.print("  {s}: {s}", .{ field.name, field.value });
            },
            .data => |data| {
                proxy.received += data.bytes.len;
                if (proxy.consume) {
                    session.consume(data.stream, data.bytes.len) catch unreachable;
                } else proxy.unconsumed += data.bytes.len;
            },
            .trailers => |trailers| {
                proxy.log.print("data {d}", .{proxy.received});
                proxy.log.print("trailers {d}", .{trailers.stream});
                for (trailers.fields) |field| proxy.log.print("  {s}: {s}", .{ field.name, field.value });
            },
            .end => |stream| proxy.log.print("end {d} after {d}", .{ stream, proxy.received }),
            .head_too_large => |stream| proxy.log.print("head too large {d}", .{stream}),
            .closed => |closed| proxy.log.print("closed {d} {t}", .{ closed.stream, closed.error_code }),
            .goaway => |goaway| proxy.log.print("goaway {d} {t}", .{ goaway.last_stream, goaway.error_code }),
        }
    }

    pub fn h2Body(proxy: *Proxy, _: *ClientSession, _: StreamId, buffer: []u8) ClientSession.BodyChunk {
        const rest = proxy.body[proxy.sent..];
        const n = @min(rest.len, buffer.len);
        @memcpy(buffer[0..n], rest[0..n]);
        proxy.sent += n;
        return if (n < rest.len) .{ .bytes = n } else .{ .last = n };
    }
};

/// The backend: logs requests and their bodies' length, answers each when it ends with
/// `status`, `fields`, `body` and `trailers`, after `interim` if set.
const Backend = struct {
    log: Log = .{},
    received: usize = 0,
    interim: ?u16 = null,
    fields: []const Field = &.{},
    body: []const u8 = "hello",
    trailers: []const Field = &.{},
    sent: usize = 0,

    pub fn h2Event(backend: *Backend, session: *ServerSession, event: ServerSession.Event) void {
        switch (event) {
            .request => |request| {
                backend.log.print("request {d} {s} {s} {s} {s}", .{ request.stream, request.method, request.scheme, request.authority, request.path });
                for (request.fields) |field| backend.log.print("  {s}: {s}", .{ field.name, field.value });
            },
            .data => |data| {
                backend.received += data.bytes.len;
                session.consume(data.stream, data.bytes.len) catch unreachable;
            },
            .end => |stream| {
                backend.log.print("end {d} body {d}", .{ stream, backend.received });
                if (backend.interim) |status| session.interim(stream, status, &.{}) catch unreachable;
                backend.sent = 0;
                session.respond(stream, 200, backend.fields, true) catch unreachable;
            },
            .trailers, .closed, .goaway => {},
        }
    }

    pub fn h2Body(backend: *Backend, _: *ServerSession, _: StreamId, buffer: []u8) ServerSession.BodyChunk {
        const rest = backend.body[backend.sent..];
        const n = @min(rest.len, buffer.len);
        @memcpy(buffer[0..n], rest[0..n]);
        backend.sent += n;
        if (n < rest.len) return .{ .bytes = n };
        if (backend.trailers.len > 0) return .{ .last_with_trailers = .{ .len = n, .fields = backend.trailers } };
        return .{ .last = n };
    }
};

const Pair = struct {
    client_pool: memory.Pool,
    server_pool: memory.Pool,
    client_setup: ClientSession.Setup,
    server_setup: ServerSession.Setup,
    counters: ServerSession.Counters = .{},
    proxy: Proxy = .{},
    backend: Backend = .{},
    client: ClientSession,
    server: ServerSession,
    /// Hand bytes over this many at a time (0: all at once).
    split: usize = 0,

    fn init(pair: *Pair, limits: ClientSession.Limits) !void {
        try pair.client_pool.init(testing.allocator, .uniform(64));
        errdefer pair.client_pool.deinit(testing.allocator);
        try pair.server_pool.init(testing.allocator, .uniform(64));
        errdefer pair.server_pool.deinit(testing.allocator);
        try pair.client_setup.init(limits);
        errdefer pair.client_setup.deinit();
        try pair.server_setup.init(.{});
        errdefer pair.server_setup.deinit();
        pair.counters = .{};
        pair.proxy = .{};
        pair.backend = .{};
        pair.split = 0;
        try pair.client.init(&pair.client_setup, &pair.client_pool, .of(Proxy, &pair.proxy));
        errdefer pair.client.deinit();
        try pair.server.init(&pair.server_setup, &pair.server_pool, &pair.counters, .of(Backend, &pair.backend));
    }

    fn deinit(pair: *Pair) void {
        pair.client.deinit();
        pair.server.deinit();
        pair.client_setup.deinit();
        pair.server_setup.deinit();
        pair.client_pool.deinit(testing.allocator);
        pair.server_pool.deinit(testing.allocator);
    }

    /// Hands bytes both ways until neither side has anything to send.
    fn pump(pair: *Pair) !void {
        var buffer: [4096]u8 = undefined;
        for (0..100_000) |_| {
            const step = if (pair.split == 0) buffer.len else pair.split;
            const up = try pair.client.send(buffer[0..step]);
            if (up > 0) try pair.server.receive(buffer[0..up], 1);
            const down = try pair.server.send(buffer[0..step]);
            if (down > 0) try pair.client.receive(buffer[0..down]);
            if (up == 0 and down == 0) return;
        } else return error.NoQuiescence;
    }
};

var context_marker: u8 = 0;

fn get(pair: *Pair, path: []const u8, body: bool) !StreamId {
    const fields = [_]Field{.{ .name = "te", .value = "trailers" }};
    return pair.client.request(.{ .method = if (body) "POST" else "GET", .scheme = "http", .authority = "backend:8080", .path = path, .fields = &fields }, body, &context_marker);
}

test "ClientSession: a request with a body, answered with a body and trailers" {
    var pair: Pair = undefined;
    try pair.init(.{});
    defer pair.deinit();
    const heap_before = memory.heapAllocations();
    pair.proxy.body = "hello backend";
    pair.backend.fields = &.{.{ .name = "content-type", .value = "application/grpc" }};
    pair.backend.trailers = &.{.{ .name = "grpc-status", .value = "0" }};
    try testing.expect(pair.client.canOpen());
    try testing.expectEqual(@as(StreamId, 1), try get(&pair, "/svc/Call", true));
    try pair.pump();
    try testing.expectEqualStrings(
        \\request 1 POST http backend:8080 /svc/Call
        \\  te: trailers
        \\end 1 body 13
        \\
    , pair.backend.log.text());
    try testing.expectEqualStrings(
        \\response 1 200 end=false
        \\  content-type: application/grpc
        \\data 5
        \\trailers 1
        \\  grpc-status: 0
        \\end 1 after 5
        \\closed 1 no_error
        \\
    , pair.proxy.log.text());
    try testing.expectEqual(@as(u32, 0), pair.client.streams_open);
    try testing.expectEqual(heap_before, memory.heapAllocations());
}

test "ClientSession: the same exchange with the bytes split at every size, and an interim head" {
    for (1..40) |split| {
        var pair: Pair = undefined;
        try pair.init(.{});
        defer pair.deinit();
        pair.split = split;
        pair.backend.interim = 103;
        const response_body: [100]u8 = @splat('x');
        const request_body: [50]u8 = @splat('y');
        pair.backend.body = &response_body;
        pair.proxy.body = &request_body;
        _ = try get(&pair, "/a", true);
        try pair.pump();
        try testing.expectEqualStrings(
            \\response 1 103 end=false
            \\response 1 200 end=false
            \\end 1 after 100
            \\closed 1 no_error
            \\
        , pair.proxy.log.text());
        try testing.expectEqual(@as(usize, 50), pair.backend.received);
    }
}

test "ClientSession: an unconsumed response stalls its own stream; consuming reopens it" {
    var pair: Pair = undefined;
    try pair.init(.{ .stream_window_bytes = 1000 });
    defer pair.deinit();
    const big: [5000]u8 = @splat('z');
    pair.backend.body = &big;
    pair.proxy.consume = false;
    const stream = try get(&pair, "/big", false);
    try pair.pump();
    // The backend may send no more than the stream's window before it is consumed.
    try testing.expectEqual(@as(usize, 1000), pair.proxy.received);
    pair.proxy.consume = true;
    try pair.client.consume(stream, pair.proxy.unconsumed);
    try pair.pump();
    try testing.expectEqual(@as(usize, big.len), pair.proxy.received);
}

test "ClientSession: a GOAWAY from the backend stops new streams; begun ones finish" {
    var pair: Pair = undefined;
    try pair.init(.{});
    defer pair.deinit();
    _ = try get(&pair, "/1", false);
    try pair.pump();
    try pair.server.goaway(.no_error);
    try pair.pump();
    try testing.expect(!pair.client.canOpen());
    try testing.expect(std.mem.indexOf(u8, pair.proxy.log.text(), "goaway 1 no_error\n") != null);
}

test "ClientSession: the backend's SETTINGS_MAX_CONCURRENT_STREAMS and ours bound what opens" {
    var pair: Pair = undefined;
    try pair.init(.{ .streams_max = 3 });
    defer pair.deinit();
    try pair.pump(); // SETTINGS both ways
    for (0..3) |_| _ = try get(&pair, "/n", false);
    try testing.expect(!pair.client.canOpen());
    try pair.pump();
    try testing.expect(pair.client.canOpen());
    try testing.expectEqual(@as(u32, 0), pair.client.streams_open);
}

test "ClientSession: a response head past the limits resets its stream, and says why" {
    var pair: Pair = undefined;
    try pair.init(.{ .header_list_bytes_max = 200 });
    defer pair.deinit();
    const value: [300]u8 = @splat('v');
    pair.backend.fields = &.{.{ .name = "x-big", .value = &value }};
    _ = try get(&pair, "/", false);
    try pair.pump();
    try testing.expectEqualStrings(
        \\head too large 1
        \\closed 1 internal_error
        \\
    , pair.proxy.log.text());
}
