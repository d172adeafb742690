//! `zig build bench` (second part): the whole data path in one process. A demo backend and
//! one sluice worker run on their own threads; this thread is the client, with blocking
//! sockets and keep-alive connections. It prints requests per second through the proxy and,
//! the figure that matters here, heap allocations made after start-up per request: read from
//! the same counter `SIGUSR2` prints, before and after the measured requests.
//!
//! The client shares the machine with the proxy and the backend, so the rate is a smoke
//! figure; bench/proxy.sh compares proxies properly.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;

const Address = @import("stdx/Address.zig").Address;
const StaticAllocator = @import("stdx/StaticAllocator.zig");
const sys = @import("stdx/sys.zig");
const Config = @import("config/Config.zig");
const startup = @import("runtime/startup.zig");
const shutdown = @import("runtime/shutdown.zig");
const signals = @import("runtime/signals.zig");
const DemoBackend = @import("demo/Backend.zig");

const connections_count = 16;
const warmup_requests = 20_000;
const measured_requests = 200_000;

var static_allocator: StaticAllocator = undefined;
var demo_backend: DemoBackend = undefined;

pub fn main() !void {
    static_allocator = .init(std.heap.page_allocator);
    try signals.block();
    try demo_backend.start(1, .auto);
    var config: Config = .{};
    config.setListener(Address.initIp4(.{ 127, 0, 0, 1 }, 0));
    config.workers_count = 1;
    try config.quickPool().?.addBackend(std.heap.page_allocator, .{ .address = demo_backend.address });
    const runtime = switch (startup.start(&static_allocator, &config, .{})) {
        .running => |runtime| runtime,
        .failed => return error.StartFailed,
    };

    const address = runtime.firstListenAddress();
    var client: Client = try .connect(&address);
    defer client.close();
    try client.run(warmup_requests);
    const allocations_before = static_allocator.allocationsAfterStartup();
    const start_ns = sys.clockMonotonicNs();
    try client.run(measured_requests);
    const elapsed_ns = sys.clockMonotonicNs() - start_ns;
    const allocations = static_allocator.allocationsAfterStartup() - allocations_before;

    const elapsed: f64 = @floatFromInt(elapsed_ns);
    const per_second = @as(f64, measured_requests) * std.time.ns_per_s / elapsed;
    const per_request: f64 = @as(f64, @floatFromInt(allocations)) / measured_requests;
    std.debug.print(
        "proxy_end_to_end: {d} keep-alive requests over {d} connections, 1 worker, io={s}: " ++
            "{d:.0} req/s, {d:.2} us/request (client, proxy and backend share the machine)\n" ++
            "proxy_heap_allocations: {d} after start-up over {d} requests ({d:.4} per request)\n",
        .{
            measured_requests,
            connections_count,
            @tagName(runtime.workers[0].loop.backend),
            per_second,
            elapsed / measured_requests / 1000,
            allocations,
            measured_requests,
            per_request,
        },
    );
    client.close();
    _ = shutdown.drain(runtime, "benchmark done");
    if (allocations != 0) return error.AllocationsOnTheRequestPath;
}

/// Blocking keep-alive connections; each round writes one request on every connection, then
/// reads every response, so the proxy always has `connections_count` requests in flight.
const Client = struct {
    fds: [connections_count]linux.fd_t,
    buffer: [4096]u8 = undefined,

    const request = "GET /bench HTTP/1.1\r\nHost: bench\r\n\r\n";

    fn connect(address: *const Address) !Client {
        var client: Client = .{ .fds = undefined };
        for (&client.fds) |*fd| {
            const rc = linux.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.CLOEXEC, 0);
            if (linux.errno(rc) != .SUCCESS) return error.Socket;
            fd.* = @intCast(rc);
            const connected = linux.connect(fd.*, address.sockaddr(), address.socklen());
            if (linux.errno(connected) != .SUCCESS) return error.Connect;
        }
        return client;
    }

    fn close(client: *Client) void {
        for (&client.fds) |*fd| {
            if (fd.* >= 0) _ = linux.close(fd.*);
            fd.* = -1;
        }
    }

    fn run(client: *Client, requests: u32) !void {
        assert(requests % connections_count == 0);
        var done: u32 = 0;
        while (done < requests) : (done += connections_count) {
            for (client.fds) |fd| try writeAll(fd, request);
            for (client.fds) |fd| try client.readResponse(fd);
        }
    }

    /// Reads one response: a head with Content-Length, then that many body bytes. The demo
    /// backend answers nothing else, and one response fits the buffer.
    fn readResponse(client: *Client, fd: linux.fd_t) !void {
        var len: usize = 0;
        while (true) {
            const rc = linux.read(fd, client.buffer[len..].ptr, client.buffer.len - len);
            if (linux.errno(rc) != .SUCCESS or rc == 0) return error.ConnectionLost;
            len += rc;
            const received = client.buffer[0..len];
            const head_end = (std.mem.indexOf(u8, received, "\r\n\r\n") orelse continue) + 4;
            if (!std.mem.startsWith(u8, client.buffer[0..len], "HTTP/1.1 200 ")) return error.NotOk;
            const key = "Content-Length: ";
            const head = client.buffer[0..head_end];
            const at = std.mem.indexOf(u8, head, key) orelse return error.NoLength;
            const digits_end = std.mem.indexOfScalarPos(u8, client.buffer[0..head_end], at, '\r').?;
            const body_len = try std.fmt.parseInt(
                usize,
                client.buffer[at + key.len .. digits_end],
                10,
            );
            if (len == head_end + body_len) return;
            if (len > head_end + body_len) return error.UnexpectedBytes;
        }
    }

    fn writeAll(fd: linux.fd_t, bytes: []const u8) !void {
        var rest = bytes;
        while (rest.len > 0) {
            const rc = linux.write(fd, rest.ptr, rest.len);
            if (linux.errno(rc) != .SUCCESS) return error.WriteFailed;
            rest = rest[rc..];
        }
    }
};
