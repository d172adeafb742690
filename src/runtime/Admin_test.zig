//! The admin listener's tests (runtime/Admin.zig): a real Admin on a real epoll loop over
//! loopback, with a collector and a reloader the tests drive.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Snapshot = @import("../metrics/Snapshot.zig");
const Prometheus = @import("../metrics/Prometheus.zig");
const Admin = @import("Admin.zig");
const request_bytes = Admin.request_bytes;
const connections_max = Admin.connections_max;
const reload_text_bytes_max = Admin.reload_text_bytes_max;
const text_plain = Admin.text_plain;
const refusal_host = Admin.refusal_host;
const refusal_origin = Admin.refusal_origin;
const refusal_reload = Admin.refusal_reload;
const isAddressAuthority = Admin.isAddressAuthority;
const Truncating = Admin.Truncating;
const reload_cut_note = Admin.reload_cut_note;

const testing = std.testing;
const ms = std.time.ns_per_ms;

/// An Admin on a real epoll loop over loopback, with a collector that reports two pools with
/// different backends and two routes, and (when asked for) a reloader that answers what the
/// test sets.
const Harness = struct {
    loop: Loop,
    admin: Admin,
    snapshot: Snapshot = undefined,
    backends: [3]Snapshot.Backend = undefined,
    collected: u32 = 0,
    /// When set, the collector reports it as a route's name: a response too large for its
    /// buffer, which only a bug in the sizing sum could make.
    oversized_name: ?[]const u8 = null,
    reloads: u32 = 0,
    reload_applied: bool = true,
    reload_text: []const u8 = "",

    fn init(harness: *Harness, options: struct {
        head_timeout_ns: u64 = 1000 * ms,
        reloader: bool = false,
    }) !void {
        harness.* = .{ .loop = try Loop.init(.{ .mode = .epoll }), .admin = undefined };
        errdefer harness.loop.deinit();
        try harness.admin.init(testing.allocator, &harness.loop, .{
            .address = Address.initIp4(.{ 127, 0, 0, 1 }, 0),
            .snapshot = &harness.snapshot,
            .collector = .{ .context = harness, .function = collect },
            .reloader = if (options.reloader) .{ .context = harness, .function = reload } else null,
            .head_timeout_ns = options.head_timeout_ns,
            .linger_ns = 200 * ms,
        });
        try harness.admin.start();
    }

    fn deinit(harness: *Harness) void {
        harness.admin.stop();
        var ticks: u32 = 0;
        while (!harness.admin.stopped() and ticks < 100) : (ticks += 1) harness.loop.tick() catch break;
        assert(harness.admin.stopped());
        harness.admin.deinit(testing.allocator);
        harness.loop.deinit();
    }

    fn collect(context: *anyopaque, snapshot: *Snapshot) void {
        const harness: *Harness = @ptrCast(@alignCast(context));
        harness.collected += 1;
        snapshot.* = .{
            .version = "test",
            .io = "epoll",
            .workers_count = 1,
            .config_generation = 2,
            .reloads_ok = 1,
            .pools_count = 2,
            .routes_count = 2,
        };
        snapshot.pools[0] = .{ .name = "app", .strategy = "round_robin" };
        snapshot.pools[1] = .{ .name = "static", .strategy = "weighted" };
        const addresses = [_][]const []const u8{
            &.{ "10.0.0.5:9000", "10.0.0.6:9000" },
            &.{"[1111:2222:3333:4444:5555:6666:7777:8888]:65535"},
        };
        for (snapshot.pools[0..2], addresses, [_]usize{ 0, 2 }) |*pool, pool_addresses, offset| {
            pool.backends_count = @intCast(pool_addresses.len);
            pool.backends = harness.backends[offset..][0..pool_addresses.len];
            for (pool.backends, pool_addresses) |*backend, address| {
                backend.* = .{
                    .address = address,
                    .weight = 1,
                    .available = true,
                    .active_up = true,
                    .state = .serving,
                    .connections_open = 0,
                    .in_flight = 0,
                    .responses = @splat(std.math.maxInt(u64) / 8),
                };
            }
        }
        snapshot.routes[0] = .{ .name = harness.oversized_name orelse "api", .requests = 3 };
        snapshot.routes[1] = .{ .name = "1", .requests = 4 };
    }

    fn reload(context: *anyopaque, out: *std.Io.Writer) bool {
        const harness: *Harness = @ptrCast(@alignCast(context));
        harness.reloads += 1;
        out.writeAll(harness.reload_text) catch unreachable; // Writes to `out` do not fail.
        return harness.reload_applied;
    }

    fn port(harness: *const Harness) u16 {
        return harness.admin.address.getPort();
    }
};

/// A blocking client socket connected to the admin (the kernel completes the handshake from
/// the backlog, so this does not need the loop to tick).
fn connectClient(port: u16) !linux.fd_t {
    const rc = linux.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.CLOEXEC, 0);
    if (linux.errno(rc) != .SUCCESS) return error.SocketFailed;
    const fd: linux.fd_t = @intCast(rc);
    errdefer sys.close(fd);
    const address = Address.initIp4(.{ 127, 0, 0, 1 }, port);
    if (linux.errno(linux.connect(fd, address.sockaddr(), address.socklen())) != .SUCCESS) {
        return error.ConnectFailed;
    }
    return fd;
}

fn sendAll(fd: linux.fd_t, bytes: []const u8) !void {
    var rest = bytes;
    while (rest.len > 0) {
        const rc = linux.sendto(fd, rest.ptr, rest.len, linux.MSG.NOSIGNAL, null, 0);
        if (linux.errno(rc) != .SUCCESS) return error.SendFailed;
        rest = rest[rc..];
    }
}

/// Reads what is there without blocking; true once the peer closed its side.
fn readAvailable(fd: linux.fd_t, into: []u8, len: *usize) !bool {
    while (true) {
        if (len.* == into.len) return error.ResponseTooLarge;
        const rc = linux.recvfrom(fd, into[len.*..].ptr, into.len - len.*, linux.MSG.DONTWAIT, null, null);
        switch (linux.errno(rc)) {
            .SUCCESS => {
                if (rc == 0) return true;
                len.* += rc;
            },
            .AGAIN => return false,
            else => return error.RecvFailed,
        }
    }
}

/// Ticks the loop until every client has its whole response (the admin closed its side),
/// then closes the clients. The responses are `buffers[i][0..lens[i]]`.
fn tickUntilAnswered(harness: *Harness, fds: []const linux.fd_t, buffers: [][]u8, lens: []usize) !void {
    var done: [32]bool = @splat(false);
    var ticks: u32 = 0;
    while (true) : (ticks += 1) {
        var all = true;
        for (fds, buffers, lens, done[0..fds.len]) |fd, buffer, *len, *closed| {
            if (!closed.*) closed.* = try readAvailable(fd, buffer, len);
            all = all and closed.*;
        }
        if (all) break;
        if (ticks == 2000) return error.TestTimedOut;
        try harness.loop.tick();
    }
    for (fds) |fd| sys.close(fd);
}

/// One request on its own connection; the response's text in `buffer`.
fn exchange(harness: *Harness, request: []const u8, buffer: []u8) ![]const u8 {
    const fd = try connectClient(harness.port());
    sendAll(fd, request) catch |err| {
        sys.close(fd);
        return err;
    };
    var buffers = [_][]u8{buffer};
    var lens = [_]usize{0};
    try tickUntilAnswered(harness, &.{fd}, &buffers, &lens);
    return buffer[0..lens[0]];
}

/// A request and the status line it must get.
const StatusCase = struct { request: []const u8, status_line: []const u8 };

/// Each request on its own connection gets its status line.
fn expectStatuses(harness: *Harness, cases: []const StatusCase) !void {
    var buffer: [4096]u8 = undefined;
    for (cases) |case| {
        errdefer std.debug.print("request: {s}\n", .{case.request});
        try expectResponse(try exchange(harness, case.request, &buffer), case.status_line, null);
    }
}

fn expectResponse(response: []const u8, status_line: []const u8, body: ?[]const u8) !void {
    errdefer std.debug.print("response:\n{s}\n", .{response});
    try testing.expect(std.mem.startsWith(u8, response, status_line));
    try testing.expect(std.mem.find(u8, response, "\r\nConnection: close\r\n") != null);
    const head_end = (std.mem.find(u8, response, "\r\n\r\n") orelse return error.NoHead) + 4;
    if (body) |expected| try testing.expectEqualStrings(expected, response[head_end..]);
}

test "admin: /healthz answers ok, then draining with 503" {
    var harness: Harness = undefined;
    try harness.init(.{});
    defer harness.deinit();
    var buffer: [4096]u8 = undefined;
    const request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    try expectResponse(try exchange(&harness, request, &buffer), "HTTP/1.1 200 OK\r\n", "ok\n");
    harness.admin.draining = true;
    const draining = try exchange(&harness, request, &buffer);
    try expectResponse(draining, "HTTP/1.1 503 Service Unavailable\r\n", "draining\n");
    try testing.expectEqual(@as(u32, 0), harness.collected); // Health needs no snapshot.
}

test "admin: /metrics and /status render a snapshot; HEAD has the length and no body" {
    var harness: Harness = undefined;
    try harness.init(.{});
    defer harness.deinit();
    var buffer: [64 * 1024]u8 = undefined;
    const metrics = try exchange(&harness, "GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &buffer);
    try expectResponse(metrics, "HTTP/1.1 200 OK\r\n", null);
    try testing.expect(std.mem.find(u8, metrics, "Content-Type: " ++ Prometheus.content_type) != null);
    const lines = [_][]const u8{
        "\nsluice_build_info{version=\"test\"} 1\n",
        "\nsluice_backends_available{pool=\"app\"} 2\n",
        "\nsluice_backends_available{pool=\"static\"} 1\n",
        "\nsluice_route_requests_total{route=\"1\"} 4\n",
        "\nsluice_config_reloads_total{result=\"ok\"} 1\n",
    };
    for (lines) |line| try testing.expect(std.mem.find(u8, metrics, line) != null);
    // One HELP for a family that both pools sample.
    const help = "# HELP sluice_backends_available ";
    try testing.expectEqual(@as(usize, 1), std.mem.count(u8, metrics, help));
    const body_len = metrics.len - (std.mem.find(u8, metrics, "\r\n\r\n").? + 4);

    var head_buffer: [1024]u8 = undefined;
    const head = try exchange(&harness, "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &head_buffer);
    try expectResponse(head, "HTTP/1.1 200 OK\r\n", "");
    var length_buffer: [64]u8 = undefined;
    const length_field = try std.fmt.bufPrint(&length_buffer, "\r\nContent-Length: {d}\r\n", .{body_len});
    try testing.expect(std.mem.find(u8, head, length_field) != null);

    const status = try exchange(&harness, "GET http://localhost/status HTTP/1.1\r\nHost: localhost\r\n\r\n", &buffer);
    try expectResponse(status, "HTTP/1.1 200 OK\r\n", null);
    const json = status[std.mem.find(u8, status, "\r\n\r\n").? + 4 ..];
    var parsed = try std.json.parseFromSlice(std.json.Value, testing.allocator, json, .{});
    defer parsed.deinit();
    const root = parsed.value.object;
    try testing.expectEqualStrings("test", root.get("version").?.string);
    const pools = root.get("pools").?.array.items;
    try testing.expectEqual(@as(usize, 2), pools.len);
    try testing.expectEqualStrings("static", pools[1].object.get("name").?.string);
    try testing.expectEqual(@as(usize, 1), pools[1].object.get("backends").?.array.items.len);
    try testing.expectEqual(@as(usize, 2), root.get("routes").?.array.items.len);
    try testing.expectEqual(@as(i64, 2), root.get("config").?.object.get("generation").?.integer);
}

test "admin: unknown paths are 404, other methods 405 with Allow, bad heads 4xx" {
    var harness: Harness = undefined;
    try harness.init(.{});
    defer harness.deinit();
    var buffer: [4096]u8 = undefined;
    const cases = [_]StatusCase{
        .{ .request = "GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", .status_line = "HTTP/1.1 404 Not Found\r\n" },
        .{ .request = "GET /metrics/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", .status_line = "HTTP/1.1 404 " },
        .{ .request = "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", .status_line = "HTTP/1.1 404 " },
        .{ .request = "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc", .status_line = "HTTP/1.1 405 Method Not Allowed\r\n" },
        .{ .request = "DELETE /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", .status_line = "HTTP/1.1 405 " },
        .{ .request = "GET /healthz HTTP/1.1\r\n\r\n", .status_line = "HTTP/1.1 400 Bad Request\r\n" },
        .{ .request = "GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n", .status_line = "HTTP/1.1 400 " },
        .{ .request = "GET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", .status_line = "HTTP/1.1 505 " },
    };
    for (cases) |case| {
        errdefer std.debug.print("request: {s}\n", .{case.request});
        const response = try exchange(&harness, case.request, &buffer);
        try expectResponse(response, case.status_line, null);
        const allow = std.mem.find(u8, response, "\r\nAllow: GET, HEAD\r\n") != null;
        try testing.expectEqual(std.mem.startsWith(u8, case.status_line, "HTTP/1.1 405"), allow);
    }
    // A head larger than the admin reads is refused, not cut.
    var large: [request_bytes + 100]u8 = @splat('a');
    const prefix = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: ";
    @memcpy(large[0..prefix.len], prefix);
    try expectResponse(try exchange(&harness, &large, &buffer), "HTTP/1.1 431 ", null);
}

test "admin: more clients than connection slots are all answered, in turn" {
    var harness: Harness = undefined;
    try harness.init(.{});
    defer harness.deinit();
    const clients = connections_max + 8;
    var fds: [clients]linux.fd_t = undefined;
    var storage: [clients][1024]u8 = undefined;
    var buffers: [clients][]u8 = undefined;
    var lens: [clients]usize = @splat(0);
    for (&fds, &buffers, &storage) |*fd, *buffer, *bytes| {
        fd.* = try connectClient(harness.port());
        try sendAll(fd.*, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        buffer.* = bytes;
    }
    try tickUntilAnswered(&harness, &fds, &buffers, &lens);
    for (buffers, lens) |buffer, len| try expectResponse(buffer[0..len], "HTTP/1.1 200 OK\r\n", "ok\n");
    // The clients closed: every slot comes back.
    var ticks: u32 = 0;
    while (harness.admin.free_count < connections_max) : (ticks += 1) {
        if (ticks == 1000) return error.TestTimedOut;
        try harness.loop.tick();
    }
}

test "admin: with every slot held by idle clients, a new one evicts the longest idle" {
    var harness: Harness = undefined;
    try harness.init(.{ .head_timeout_ns = 10 * std.time.ns_per_s });
    defer harness.deinit();
    // Every slot taken: some clients send nothing, others half a head.
    var idle: [connections_max]linux.fd_t = undefined;
    var opened: usize = 0;
    defer for (idle[0..opened]) |fd| sys.close(fd);
    for (&idle, 0..) |*fd, i| {
        fd.* = try connectClient(harness.port());
        opened += 1;
        if (i % 2 == 1) try sendAll(fd.*, "GET /metr");
        // Accepted one at a time, so the first is the longest idle.
        while (harness.admin.free_count > connections_max - 1 - i) try harness.loop.tick();
    }
    try testing.expectEqual(@as(u8, 0), harness.admin.free_count);
    // Not before they have waited `evict_wait_min_ns`: a burst is answered in turn.
    const start_ns = sys.clockMonotonicNs();
    var buffer: [1024]u8 = undefined;
    const response = try exchange(&harness, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &buffer);
    try expectResponse(response, "HTTP/1.1 200 OK\r\n", "ok\n");
    try testing.expect(sys.clockMonotonicNs() - start_ns < 2 * std.time.ns_per_s);
    // The first idle client was closed without an answer; the last one is still open.
    var len: usize = 0;
    try testing.expect(try readAvailable(idle[0], &buffer, &len));
    try testing.expectEqual(@as(usize, 0), len);
    try testing.expect(!try readAvailable(idle[connections_max - 1], &buffer, &len));
}

test "admin: a head trickling in a byte at a time is closed at the head deadline" {
    var harness: Harness = undefined;
    try harness.init(.{ .head_timeout_ns = 200 * ms });
    defer harness.deinit();
    const start_ns = sys.clockMonotonicNs();
    const fd = try connectClient(harness.port());
    defer sys.close(fd);
    while (harness.admin.free_count == connections_max) try harness.loop.tick(); // Accepted.
    const head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1234567890\r\n\r\n";
    var sent: usize = 0;
    // A byte every 20 ms would take over a second for the whole head. The loop's ticks are
    // bounded by the connection's deadline while it is open; once the admin closed it, there
    // is nothing left to tick for.
    while (harness.admin.free_count < connections_max) {
        try testing.expect(sent < head.len); // The whole head never goes in time.
        sendAll(fd, head[sent..][0..1]) catch break; // Closed meanwhile: what is tested.
        sent += 1;
        const pause_start = sys.clockMonotonicNs();
        while (sys.clockMonotonicNs() - pause_start < 20 * ms and
            harness.admin.free_count < connections_max) try harness.loop.tick();
    }
    const elapsed_ns = sys.clockMonotonicNs() - start_ns;
    errdefer std.debug.print("closed after {d} ms, {d} bytes sent\n", .{ elapsed_ns / ms, sent });
    try testing.expect(elapsed_ns >= 200 * ms and elapsed_ns < 600 * ms);
    // Closed without an answer (a reset when bytes were left unread: closed all the same).
    var buffer: [64]u8 = undefined;
    var len: usize = 0;
    try testing.expect(readAvailable(fd, &buffer, &len) catch true);
    try testing.expectEqual(@as(usize, 0), len);
}

test "admin: a Host that is not an address is 421, an Origin 403, a reload without its field 403" {
    var harness: Harness = undefined;
    try harness.init(.{ .reloader = true });
    defer harness.deinit();
    var buffer: [4096]u8 = undefined;
    try expectStatuses(&harness, &.{
        .{ .request = "GET /metrics HTTP/1.1\r\nHost: evil.example:9901\r\n\r\n", .status_line = "HTTP/1.1 421 Misdirected Request\r\n" },
        .{ .request = "GET /healthz HTTP/1.1\r\nHost: localhost.evil.example\r\n\r\n", .status_line = "HTTP/1.1 421 " },
        .{ .request = "GET http://evil.example/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", .status_line = "HTTP/1.1 421 " },
        .{ .request = "GET /status HTTP/1.1\r\nHost: 127.0.0.1:9901\r\nOrigin: null\r\n\r\n", .status_line = "HTTP/1.1 403 Forbidden\r\n" },
        .{ .request = "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1:9901\r\nSluice-Reload: 1\r\n\r\n", .status_line = "HTTP/1.1 403 " },
        .{ .request = "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nx", .status_line = "HTTP/1.1 403 " },
        .{ .request = "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nSluice-Reload: yes\r\n\r\n", .status_line = "HTTP/1.1 403 " },
        .{ .request = "GET /healthz HTTP/1.1\r\nHost: LocalHost:1\r\n\r\n", .status_line = "HTTP/1.1 200 " },
        .{ .request = "GET /healthz HTTP/1.1\r\nHost: [::1]:9901\r\n\r\n", .status_line = "HTTP/1.1 200 " },
        .{ .request = "GET /healthz HTTP/1.0\r\n\r\n", .status_line = "HTTP/1.1 200 " },
    });
    try testing.expectEqual(@as(u32, 0), harness.reloads);
    const refused = try exchange(&harness, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &buffer);
    try expectResponse(refused, "HTTP/1.1 403 ", refusal_reload);
    try testing.expect(std.mem.find(u8, refusal_reload, "Sluice-Reload: 1") != null);
}

test "admin: the names a Host may give are IP addresses and localhost, with or without a port" {
    const allowed = [_][]const u8{ "127.0.0.1", "127.0.0.1:9901", "10.1.2.3:80", "localhost", "LOCALHOST:1", "[::1]", "[::1]:9901", "[fe80::1]:0", "0.0.0.0:9901" };
    for (allowed) |authority| {
        errdefer std.debug.print("authority: {s}\n", .{authority});
        try testing.expect(isAddressAuthority(authority));
    }
    const refused = [_][]const u8{ "", "a", "evil.example", "localhost.", "localhost.evil.example", "127.0.0.1.nip.io", "127.1", "127.0.0.01", "::1", "[::1", "[::1]x", "[evil]", "127.0.0.1:", "127.0.0.1:123456", "127.0.0.1:80:80", "1.2.3.4.5" };
    for (refused) |authority| {
        errdefer std.debug.print("authority: {s}\n", .{authority});
        try testing.expect(!isAddressAuthority(authority));
    }
}

test "admin: a response too large for its buffer is a 500, and the next one is fine" {
    var harness: Harness = undefined;
    try harness.init(.{});
    defer harness.deinit();
    // Longer than any name Config allows: the one way to outgrow the worst-case sizing.
    const oversized = try testing.allocator.alloc(u8, Snapshot.render_bytes_max);
    defer testing.allocator.free(oversized);
    @memset(oversized, 'r');
    harness.oversized_name = oversized;
    var buffer: [4096]u8 = undefined;
    const request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    const response = try exchange(&harness, request, &buffer);
    try expectResponse(response, "HTTP/1.1 500 Internal Server Error\r\n", "internal server error\n");
    try testing.expect(harness.admin.overflow_logged);
    harness.oversized_name = null;
    var large: [64 * 1024]u8 = undefined;
    try expectResponse(try exchange(&harness, request, &large), "HTTP/1.1 200 OK\r\n", null);
}

test "admin: POST /reload answers the reloader's text, 200 when applied and 422 when refused" {
    var harness: Harness = undefined;
    try harness.init(.{ .reloader = true });
    defer harness.deinit();
    var buffer: [4096]u8 = undefined;
    harness.reload_text = "generation 2: 2 pools, 3 routes\n";
    const applied = try exchange(&harness, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nSluice-Reload: 1\r\n\r\n", &buffer);
    try expectResponse(applied, "HTTP/1.1 200 OK\r\n", "generation 2: 2 pools, 3 routes\n");
    const content_type = "\r\nContent-Type: " ++ text_plain ++ "\r\n";
    try testing.expect(std.mem.find(u8, applied, content_type) != null);

    // Refused; the text gets its missing final line feed. The body, which looks like a
    // second request, is dropped: one response, one reload.
    harness.reload_applied = false;
    harness.reload_text = "pools[1].backends: not an address";
    const body = "GET /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    const refused = try exchange(&harness, std.fmt.comptimePrint(
        "POST /reload?x HTTP/1.1\r\nHost: 127.0.0.1\r\nSluice-Reload: 1\r\nContent-Length: {d}\r\n\r\n{s}",
        .{ body.len, body },
    ), &buffer);
    const refusal = "pools[1].backends: not an address\n";
    try expectResponse(refused, "HTTP/1.1 422 Unprocessable Content\r\n", refusal);
    try testing.expectEqual(@as(usize, 1), std.mem.count(u8, refused, "HTTP/1.1"));
    try testing.expectEqual(@as(u32, 2), harness.reloads);

    // A reloader that says nothing still gets a line.
    harness.reload_text = "";
    const silent = try exchange(&harness, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nSluice-Reload: 1\r\n\r\n", &buffer);
    try expectResponse(silent, "HTTP/1.1 422 ", "reload failed\n");
    try testing.expectEqual(@as(u32, 0), harness.collected); // A reload renders no snapshot.
}

test "admin: a reload text longer than its buffer is cut, and says so" {
    var harness: Harness = undefined;
    try harness.init(.{ .reloader = true });
    defer harness.deinit();
    const long = try testing.allocator.alloc(u8, reload_text_bytes_max + 100);
    defer testing.allocator.free(long);
    @memset(long, 'x');
    harness.reload_text = long;
    var buffer: [16 * 1024]u8 = undefined;
    const response = try exchange(&harness, "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nSluice-Reload: 1\r\n\r\n", &buffer);
    try expectResponse(response, "HTTP/1.1 200 OK\r\n", null);
    const text = response[std.mem.find(u8, response, "\r\n\r\n").? + 4 ..];
    try testing.expectEqualStrings(long[0..reload_text_bytes_max], text[0..reload_text_bytes_max]);
    try testing.expectEqualStrings(reload_cut_note, text[reload_text_bytes_max..]);
}

test "admin: /reload without a reloader is 404; any method but POST is 405 with Allow: POST" {
    var harness: Harness = undefined;
    try harness.init(.{});
    defer harness.deinit();
    var buffer: [4096]u8 = undefined;
    const post = "POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nSluice-Reload: 1\r\nContent-Length: 2\r\n\r\n{}";
    const missing = try exchange(&harness, post, &buffer);
    const text = "no config file to reload (start with --config)\n";
    try expectResponse(missing, "HTTP/1.1 404 Not Found\r\n", text);
    for ([_][]const u8{ "GET", "HEAD", "PUT", "DELETE" }) |method| {
        var request_buffer: [128]u8 = undefined;
        const request = try std.fmt.bufPrint(
            &request_buffer,
            "{s} /reload HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            .{method},
        );
        const response = try exchange(&harness, request, &buffer);
        const body = if (std.mem.eql(u8, method, "HEAD")) "" else "method not allowed\n";
        try expectResponse(response, "HTTP/1.1 405 Method Not Allowed\r\n", body);
        try testing.expect(std.mem.find(u8, response, "\r\nAllow: POST\r\n") != null);
    }
    try testing.expectEqual(@as(u32, 0), harness.reloads);
}

test "admin: the reload text writer keeps what fits and drops the rest, without failing" {
    var buffer: [10]u8 = undefined;
    var out: Truncating = .init(&buffer);
    const w = &out.writer;
    try w.print("{d}-", .{12345});
    try w.splatByteAll('x', 3);
    try testing.expect(!out.truncated);
    try w.writeAll("abcdef"); // Only "a" fits.
    try testing.expect(out.truncated);
    try w.print("{d}", .{1});
    try w.splatByteAll('y', 1000);
    try w.writeByte('z');
    try testing.expectEqualStrings("12345-xxxa", w.buffered());
}

test "admin: a client that sends nothing is closed at the deadline; stop leaves no fd" {
    var harness: Harness = undefined;
    try harness.init(.{ .head_timeout_ns = 100 * ms });
    var deinit_done = false;
    defer if (!deinit_done) harness.deinit();
    const fd = try connectClient(harness.port());
    defer sys.close(fd);
    const start_ns = sys.clockMonotonicNs();
    var buffer: [64]u8 = undefined;
    var len: usize = 0;
    var ticks: u32 = 0;
    while (!try readAvailable(fd, &buffer, &len)) : (ticks += 1) {
        if (ticks == 1000) return error.TestTimedOut;
        try harness.loop.tick();
    }
    try testing.expectEqual(@as(usize, 0), len); // Closed without an answer.
    try testing.expect(sys.clockMonotonicNs() - start_ns >= 100 * ms);
    // One connection waiting mid-head when the admin stops: deinit checks it all closed.
    const waiting = try connectClient(harness.port());
    defer sys.close(waiting);
    try sendAll(waiting, "GET /metr");
    while (harness.admin.free_count == connections_max) try harness.loop.tick();
    deinit_done = true;
    harness.deinit();
}
