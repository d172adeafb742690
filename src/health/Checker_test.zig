//! The health checker's tests (Checker.zig): the status-line judge, rise and fall, the probe
//! request, and probes against real backends on loopback through both I/O backends.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Completion = loop_ns.Completion;
const Socket = loop_ns.Socket;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("../config/Config.zig");
const tls_ns = @import("../tls/tls.zig");
const Checker = @import("Checker.zig");
const Listener = Checker.Listener;
const Report = Checker.Report;
const StatusLine = Checker.StatusLine;
const Streak = Checker.Streak;
const reason_malformed = Checker.reason_malformed;
const reason_closed = Checker.reason_closed;
const composeRequest = Checker.composeRequest;
const path_bytes_max = Checker.path_bytes_max;
const host_bytes_max = Checker.host_bytes_max;
const requestBytesMax = Checker.requestBytesMax;
const parseStatusLine = Checker.parseStatusLine;

const testing = std.testing;
const ms = std.time.ns_per_ms;

test {
    _ = Suite(.epoll);
    _ = Suite(.uring);
}

test "health: a status line is judged strictly, and only once it is complete" {
    const valid = [_]struct { line: []const u8, status: u16 }{
        .{ .line = "HTTP/1.1 200 OK\r\n", .status = 200 },
        .{ .line = "HTTP/1.0 503 Service Unavailable\r\n", .status = 503 },
        .{ .line = "HTTP/1.1 204 \r\n", .status = 204 }, // The reason phrase is optional.
        .{ .line = "HTTP/1.1 599 odd\tbut \xfflegal\r\n", .status = 599 }, // HTAB, obs-text.
        .{ .line = "HTTP/1.1 100 Continue\r\n", .status = 100 },
    };
    for (valid) |case| {
        // Split at every index: each prefix waits for more, the whole line decides.
        for (0..case.line.len) |end| {
            try testing.expectEqual(StatusLine.incomplete, parseStatusLine(case.line[0..end]));
        }
        const expected: StatusLine = .{ .status = case.status };
        try testing.expectEqual(expected, parseStatusLine(case.line));
        var buffer: [128]u8 = undefined;
        const with_fields = try std.fmt.bufPrint(&buffer, "{s}Server: x\r\n\r\n", .{case.line});
        try testing.expectEqual(expected, parseStatusLine(with_fields));
    }
    const malformed = [_][]const u8{
        "HTTP/1.1 20 OK\r\n", // Two digits.
        "HTTP/1.1 2000 OK\r\n", // Four digits.
        "HTTP/1.1 2x0 OK\r\n",
        "HTTP/2 200 OK\r\n",
        "HTTP/1.2 200 OK\r\n",
        "http/1.1 200 OK\r\n", // RFC 9112 §2.3: HTTP-name is case-sensitive.
        "HTTP/1.1 200\r\n", // The SP after the status code is required.
        "HTTP/1.1  200 OK\r\n",
        "HTTP/1.1 200 OK\n", // A bare LF.
        "HTTP/1.1 200 OK\rX",
        "HTTP/1.1 099 Low\r\n", // RFC 9110 §15: outside 100..599.
        "HTTP/1.1 600 High\r\n",
        "HTTP/1.1 200 bad\x00byte\r\n",
        "ICY 200 OK\r\n",
        "\r\n",
    };
    for (malformed) |line| {
        try testing.expectEqual(StatusLine.malformed, parseStatusLine(line));
        for (0..line.len) |end| try testing.expect(parseStatusLine(line[0..end]) != .status);
    }
}

test "health: rise and fall count consecutive results, as a model says" {
    // Model: the state flips exactly when the last `fall` results (when up) or the last `rise`
    // results (when down) all point the other way.
    const seed: u64 = testing.random_seed;
    errdefer std.debug.print("streak model test seed: {d}\n", .{seed});
    var prng = std.Random.DefaultPrng.init(seed);
    const random = prng.random();
    const results_count = 400;
    for (0..200) |_| {
        const rise = random.intRangeAtMost(u8, 1, 5);
        const fall = random.intRangeAtMost(u8, 1, 5);
        const pass_percent = random.intRangeAtMost(u8, 5, 95);
        var streak: Streak = .{};
        var up = true;
        var history: [results_count]bool = undefined;
        for (0..results_count) |index| {
            const passed = random.uintLessThan(u8, 100) < pass_percent;
            history[index] = passed;
            const window: usize = if (up) fall else rise;
            var flips = index + 1 >= window;
            if (flips) {
                for (history[index + 1 - window .. index + 1]) |result| {
                    if (result == up) flips = false;
                }
            }
            try testing.expectEqual(flips, streak.record(passed, rise, fall));
            if (flips) up = !up;
            try testing.expectEqual(up, streak.up);
        }
    }
}

test "health: the probe request carries the method, the path and the Host" {
    var buffer: [4096]u8 = undefined;
    const address = try Address.parse("127.0.0.1:8081");
    const get: Config.HealthCheck = .{ .path = "/healthz" };
    const get_bytes = requestBytesMax(get.path.len, get.host.len);
    try testing.expectEqualStrings("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n" ++
        "User-Agent: sluice-health-check\r\nConnection: close\r\n\r\n", composeRequest(
        buffer[0..get_bytes],
        &get,
        &address,
    ));
    const head: Config.HealthCheck = .{ .path = "/up?deep=1", .method = .HEAD, .host = "svc" };
    const head_bytes = requestBytesMax(head.path.len, head.host.len);
    try testing.expectEqualStrings("HEAD /up?deep=1 HTTP/1.1\r\nHost: svc\r\n" ++
        "User-Agent: sluice-health-check\r\nConnection: close\r\n\r\n", composeRequest(
        buffer[0..head_bytes],
        &head,
        &address,
    ));
    // The longest path, Host and method fill the buffer exactly; the longest address fits.
    var long_path: [path_bytes_max]u8 = @splat('p');
    long_path[0] = '/';
    const long_host: [host_bytes_max]u8 = @splat('h');
    const longest: Config.HealthCheck = .{
        .path = &long_path,
        .method = .HEAD,
        .host = &long_host,
    };
    const longest_bytes = requestBytesMax(path_bytes_max, host_bytes_max);
    const request = composeRequest(buffer[0..longest_bytes], &longest, &address);
    try testing.expectEqual(longest_bytes, request.len);
    const ip6 = try Address.parse("[1111:2222:3333:4444:5555:6666:7777:8888]:65535");
    const ip6_bytes = requestBytesMax(head.path.len, 0);
    const ip6_check: Config.HealthCheck = .{ .path = head.path, .method = .HEAD };
    try testing.expectEqual(ip6_bytes, composeRequest(buffer[0..ip6_bytes], &ip6_check, &ip6).len);
}

test "health: init refuses a path or Host that would break the request line" {
    var loop: Loop = undefined; // Only stored by init.
    var checker: Checker = undefined;
    const backends = [_]Config.Backend{.{ .address = try Address.parse("127.0.0.1:1") }};
    const listener: Listener = .{ .context = &checker, .function = ignoreReport };
    const bad_paths = [_][]const u8{ "/a b", "/a\r\nX-Injected: 1", "/\x7f", "a" };
    for (bad_paths) |path| {
        const check: Config.HealthCheck = .{ .path = path };
        const result = checker.init(testing.allocator, &loop, &check, &backends, listener, null, false);
        try testing.expectError(error.HealthPathInvalid, result);
    }
    const bad_host: Config.HealthCheck = .{ .path = "/", .host = "a\r\nb" };
    const result = checker.init(testing.allocator, &loop, &bad_host, &backends, listener, null, false);
    try testing.expectError(error.HealthHostInvalid, result);
    const good: Config.HealthCheck = .{ .path = "/ok", .host = "svc.internal:8080" };
    try checker.init(testing.allocator, &loop, &good, &backends, listener, null, false);
    try testing.expect(checker.stopped()); // Never started: nothing to wait for.
    checker.deinit(testing.allocator);
}

fn ignoreReport(context: *anyopaque, report: Report) void {
    _ = context;
    _ = report;
}

/// A loopback backend on its own thread, with plain blocking syscalls: it accepts one
/// connection at a time, reads the request head and answers as `script` says.
const TestBackend = struct {
    listener_fd: linux.fd_t,
    address: Address,
    script: std.atomic.Value(u8),
    accepted: std.atomic.Value(u32) = .init(0),
    stopping: std.atomic.Value(bool) = .init(false),
    /// The first request head, published by `request_len`.
    request_buffer: [512]u8 = undefined,
    request_len: std.atomic.Value(u32) = .init(0),
    thread: std.Thread = undefined,

    const Script = enum(u8) {
        status_200,
        status_503,
        status_199,
        status_204,
        status_205,
        http10_200,
        /// The status line in two writes, 10 ms apart.
        split_200,
        malformed_digits,
        malformed_version,
        missing_space,
        bare_lf,
        close_after_request,
        /// Reads the request and never answers.
        silent,

        fn response(script: Script) []const u8 {
            const fields = "Content-Length: 0\r\n\r\n";
            return switch (script) {
                .status_200 => "HTTP/1.1 200 OK\r\n" ++ fields,
                .status_503 => "HTTP/1.1 503 Service Unavailable\r\n" ++ fields,
                .status_199 => "HTTP/1.1 199 Odd\r\n" ++ fields,
                .status_204 => "HTTP/1.1 204 No Content\r\n\r\n",
                .status_205 => "HTTP/1.1 205 Reset Content\r\n" ++ fields,
                .http10_200 => "HTTP/1.0 200 OK\r\n\r\nbody",
                .malformed_digits => "HTTP/1.1 20 OK\r\n" ++ fields,
                .malformed_version => "HTTP/2 200 OK\r\n" ++ fields,
                .missing_space => "HTTP/1.1 200\r\n" ++ fields,
                .bare_lf => "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
                .split_200, .close_after_request, .silent => unreachable, // Not one write.
            };
        }
    };

    fn start(backend: *TestBackend, script: Script) !void {
        // Blocking on purpose: the thread waits in accept and recv.
        const rc = linux.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.CLOEXEC, 0);
        if (linux.errno(rc) != .SUCCESS) return error.SocketFailed;
        const fd: linux.fd_t = @intCast(rc);
        errdefer sys.close(fd);
        const any_port = Address.initIp4(.{ 127, 0, 0, 1 }, 0);
        try sys.bind(fd, any_port.sockaddr(), any_port.socklen());
        try sys.listen(fd, 16);
        var storage: linux.sockaddr.storage = undefined;
        _ = try sys.getsockname(fd, &storage);
        backend.* = .{
            .listener_fd = fd,
            .address = Address.fromStorage(&storage),
            .script = .init(@backingInt(script)),
        };
        backend.thread = try std.Thread.spawn(.{ .stack_size = 256 * 1024 }, run, .{backend});
    }

    /// Wakes the thread's accept with one last connection, then joins it.
    fn stop(backend: *TestBackend) void {
        backend.stopping.store(true, .release);
        const rc = linux.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.CLOEXEC, 0);
        assert(linux.errno(rc) == .SUCCESS);
        const fd: linux.fd_t = @intCast(rc);
        const connected = linux.connect(fd, backend.address.sockaddr(), backend.address.socklen());
        assert(linux.errno(connected) == .SUCCESS); // Loopback with a free backlog slot.
        sys.close(fd);
        backend.thread.join();
        sys.close(backend.listener_fd);
        backend.* = undefined;
    }

    fn setScript(backend: *TestBackend, script: Script) void {
        backend.script.store(@backingInt(script), .release);
    }

    fn request(backend: *TestBackend) []const u8 {
        return backend.request_buffer[0..backend.request_len.load(.acquire)];
    }

    fn run(backend: *TestBackend) void {
        while (true) {
            const rc = linux.accept4(backend.listener_fd, null, null, linux.SOCK.CLOEXEC);
            switch (linux.errno(rc)) {
                .SUCCESS => {},
                .INTR, .CONNABORTED => continue,
                else => |e| std.debug.panic("test backend accept: {t}", .{e}),
            }
            const fd: linux.fd_t = @intCast(rc);
            defer sys.close(fd);
            if (backend.stopping.load(.acquire)) return;
            _ = backend.accepted.fetchAdd(1, .release);
            backend.serve(fd);
        }
    }

    fn serve(backend: *TestBackend, fd: linux.fd_t) void {
        // Bounds a bug in the checker: no recv here waits longer than this.
        const timeout: linux.timeval = .{ .sec = 2, .usec = 0 };
        const option: [*]const u8 = @ptrCast(&timeout);
        const option_len = @sizeOf(linux.timeval);
        _ = linux.setsockopt(fd, linux.SOL.SOCKET, linux.SO.RCVTIMEO, option, option_len);
        var buffer: [2048]u8 = undefined;
        var len: usize = 0;
        while (std.mem.indexOf(u8, buffer[0..len], "\r\n\r\n") == null) {
            if (len == buffer.len) return;
            const received = blockingRecv(fd, buffer[len..]);
            if (received == 0) return;
            len += received;
        }
        if (backend.request_len.load(.acquire) == 0 and len <= backend.request_buffer.len) {
            @memcpy(backend.request_buffer[0..len], buffer[0..len]);
            backend.request_len.store(@intCast(len), .release);
        }
        const script: Script = @fromBackingInt(@intCast(backend.script.load(.acquire)));
        switch (script) {
            .close_after_request => {}, // Nothing unread: the close is a FIN, not a reset.
            .silent => while (blockingRecv(fd, &buffer) > 0) {}, // Until the checker gives up.
            .split_200 => {
                blockingSend(fd, "HTTP/1.1 2");
                sleepNs(10 * ms);
                blockingSend(fd, "00 OK\r\nContent-Length: 0\r\n\r\n");
            },
            else => blockingSend(fd, script.response()),
        }
    }

    /// 0 on EOF or any error (including the receive timeout).
    fn blockingRecv(fd: linux.fd_t, buffer: []u8) usize {
        const rc = linux.recvfrom(fd, buffer.ptr, buffer.len, 0, null, null);
        return if (linux.errno(rc) == .SUCCESS) rc else 0;
    }

    /// Best effort: the checker may have closed already, which its own report shows.
    fn blockingSend(fd: linux.fd_t, bytes: []const u8) void {
        var sent: usize = 0;
        while (sent < bytes.len) {
            const rest = bytes[sent..];
            const rc = linux.sendto(fd, rest.ptr, rest.len, linux.MSG.NOSIGNAL, null, 0);
            if (linux.errno(rc) != .SUCCESS) return;
            sent += rc;
        }
    }
};

fn sleepNs(ns: u64) void {
    const request: linux.timespec = .{
        .sec = @intCast(ns / std.time.ns_per_s),
        .nsec = @intCast(ns % std.time.ns_per_s),
    };
    _ = linux.nanosleep(&request, null);
}

/// Open fds of this process, from /proc/self/fd, not counting the directory's own.
fn fdCount() !usize {
    const flags: linux.O = .{ .DIRECTORY = true, .CLOEXEC = true };
    const rc = linux.openat(linux.AT.FDCWD, "/proc/self/fd", flags, 0);
    if (linux.errno(rc) != .SUCCESS) return error.ProcUnavailable;
    const dir: linux.fd_t = @intCast(rc);
    defer sys.close(dir);
    var buffer: [4096]u8 align(8) = undefined;
    var count: usize = 0;
    while (true) {
        const read = linux.getdents64(dir, &buffer, buffer.len);
        if (linux.errno(read) != .SUCCESS) return error.ProcUnavailable;
        if (read == 0) break;
        var offset: usize = 0;
        while (offset < read) {
            const entry: *align(1) const linux.dirent64 = @ptrCast(&buffer[offset]);
            const name = buffer[offset + @offsetOf(linux.dirent64, "name")];
            if (name != '.') count += 1;
            offset += entry.reclen;
        }
    }
    return count - 1;
}

/// A real loop, a checker on it, and the reports it made. Every wait is bounded by a watchdog
/// timer (a tick never blocks past it) and a tick count (a busy loop fails too).
const Harness = struct {
    loop: Loop,
    watchdog_queue: TimerQueue,
    watchdog: Timer = .{},
    watchdog_fired: bool = false,
    ticks: u32 = 0,
    checker: Checker = undefined,
    checker_started: bool = false,
    /// The listener stops the checker on its first report.
    stop_on_report: bool = false,
    slots: [reports_max]Slot = undefined,
    reports_count: u32 = 0,

    const reports_max = 64;
    const ticks_max = 10_000;
    const watchdog_ns = 5 * std.time.ns_per_s;

    /// A copy: the checker's reason is only valid during its callback.
    const Slot = struct {
        report: Report,
        reason_buffer: [64]u8,
    };

    /// In place: the loop must not move once it has ticked.
    fn init(harness: *Harness, comptime mode: Loop.Mode) !void {
        const loop = Loop.init(.{ .mode = mode, .entries = 64 }) catch |err| switch (mode) {
            .uring => {
                std.debug.print("skipping the io_uring variant: {s}\n", .{
                    Loop.initErrorReason(err),
                });
                return error.SkipZigTest;
            },
            else => return err,
        };
        harness.* = .{ .loop = loop, .watchdog_queue = .init(watchdog_ns) };
        harness.loop.timerQueueRegister(&harness.watchdog_queue);
        const watchdog = &harness.watchdog;
        const queue = &harness.watchdog_queue;
        harness.loop.timerArm(queue, watchdog, Harness, harness, watchdogCallback);
    }

    /// Stops and frees the checker first; a checker that will not stop is a bug, and fails.
    fn deinit(harness: *Harness) void {
        if (harness.checker_started) {
            harness.stopChecker() catch |err| std.debug.panic("checker did not stop: {t}", .{err});
            harness.checker.deinit(testing.allocator);
        }
        harness.loop.deinit();
        harness.* = undefined;
    }

    fn startChecker(
        harness: *Harness,
        check: *const Config.HealthCheck,
        backends: []const Config.Backend,
    ) !void {
        assert(!harness.checker_started);
        const listener: Listener = .{ .context = harness, .function = reportCallback };
        try harness.checker.init(testing.allocator, &harness.loop, check, backends, listener, null, false);
        harness.checker_started = true;
        harness.checker.start();
    }

    fn stopChecker(harness: *Harness) !void {
        harness.checker.stop();
        while (!harness.checker.stopped()) try harness.tick();
        for (harness.checker.probes) |*probe| try testing.expectEqual(-1, probe.socket.fd);
    }

    fn tick(harness: *Harness) !void {
        try harness.loop.tick();
        harness.ticks += 1;
        if (harness.watchdog_fired) return error.TestTimedOut;
        if (harness.ticks > ticks_max) return error.TestTooManyTicks;
    }

    fn tickUntilReports(harness: *Harness, count: u32) !void {
        assert(count <= reports_max);
        while (harness.reports_count < count) try harness.tick();
    }

    fn report(harness: *const Harness, index: u32) Report {
        assert(index < harness.reports_count);
        return harness.slots[index].report;
    }

    fn reportCallback(context: *anyopaque, report_: Report) void {
        const harness: *Harness = @ptrCast(@alignCast(context));
        if (harness.reports_count < reports_max) {
            const slot = &harness.slots[harness.reports_count];
            assert(report_.reason.len <= slot.reason_buffer.len);
            @memcpy(slot.reason_buffer[0..report_.reason.len], report_.reason);
            slot.report = report_;
            slot.report.reason = slot.reason_buffer[0..report_.reason.len];
        }
        harness.reports_count += 1;
        if (harness.stop_on_report) harness.checker.stop();
    }

    fn watchdogCallback(harness: *Harness) void {
        harness.watchdog_fired = true;
    }
};

fn expectReport(
    actual: Report,
    expected: struct { passed: bool, changed: bool, up: bool, reason: []const u8 = "" },
) !void {
    errdefer std.debug.print("report: {any}, reason \"{s}\"\n", .{ actual, actual.reason });
    try testing.expectEqual(expected.passed, actual.passed);
    try testing.expectEqual(expected.changed, actual.changed);
    try testing.expectEqual(expected.up, actual.up);
    try testing.expectEqualStrings(expected.reason, actual.reason);
}

fn Suite(comptime mode: Loop.Mode) type {
    return struct {
        const interval_ns = 20 * ms;
        const timeout_ns = 100 * ms;

        test "health: 200 responses keep backends up, and every pass is reported" {
            var servers: [2]TestBackend = undefined;
            try servers[0].start(.status_200);
            defer servers[0].stop();
            try servers[1].start(.status_200);
            defer servers[1].stop();
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            const check: Config.HealthCheck = .{
                .path = "/healthz",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .rise = 2,
                .fall = 2,
            };
            const backends = [_]Config.Backend{
                .{ .address = servers[0].address },
                .{ .address = servers[1].address },
            };
            try harness.startChecker(&check, &backends);
            try harness.tickUntilReports(6);
            var per_backend: [2]u32 = @splat(0);
            for (0..6) |index| {
                const report = harness.report(@intCast(index));
                try expectReport(report, .{ .passed = true, .changed = false, .up = true });
                per_backend[report.backend_index] += 1;
            }
            // Probed at once and then each on its own interval: neither waits for the other.
            try testing.expect(per_backend[0] >= 2 and per_backend[1] >= 2);
            var expected: [256]u8 = undefined;
            var text: [Address.text_bytes_max]u8 = undefined;
            const request = try std.fmt.bufPrint(&expected, "GET /healthz HTTP/1.1\r\n" ++
                "Host: {s}\r\nUser-Agent: sluice-health-check\r\nConnection: close\r\n\r\n", .{
                servers[0].address.toText(&text),
            });
            try testing.expectEqualStrings(request, servers[0].request());
        }

        test "health: fall failures take a backend down once, rise passes bring it back once" {
            var server: TestBackend = undefined;
            try server.start(.status_503);
            defer server.stop();
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .rise = 2,
                .fall = 2,
            };
            const backends = [_]Config.Backend{.{ .address = server.address }};
            try harness.startChecker(&check, &backends);
            try harness.tickUntilReports(3);
            const reason = "status 503";
            try expectReport(harness.report(0), .{
                .passed = false,
                .changed = false,
                .up = true,
                .reason = reason,
            });
            try expectReport(harness.report(1), .{
                .passed = false,
                .changed = true,
                .up = false,
                .reason = reason,
            });
            try expectReport(harness.report(2), .{
                .passed = false,
                .changed = false,
                .up = false,
                .reason = reason,
            });
            // No probe is in flight: the next one starts an interval after this report.
            server.setScript(.status_200);
            try harness.tickUntilReports(6);
            try expectReport(harness.report(3), .{ .passed = true, .changed = false, .up = false });
            try expectReport(harness.report(4), .{ .passed = true, .changed = true, .up = true });
            try expectReport(harness.report(5), .{ .passed = true, .changed = false, .up = true });
        }

        test "health: a refused connection fails with a reason naming it" {
            // A bound port with nothing listening: the kernel answers the SYN with a reset.
            const fd = try sys.socket(
                linux.AF.INET,
                linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC,
                0,
            );
            defer sys.close(fd);
            const any_port = Address.initIp4(.{ 127, 0, 0, 1 }, 0);
            try sys.bind(fd, any_port.sockaddr(), any_port.socklen());
            var storage: linux.sockaddr.storage = undefined;
            _ = try sys.getsockname(fd, &storage);

            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .fall = 1,
            };
            const backends = [_]Config.Backend{.{ .address = Address.fromStorage(&storage) }};
            try harness.startChecker(&check, &backends);
            try harness.tickUntilReports(2);
            const reason = "connection refused";
            try expectReport(harness.report(0), .{
                .passed = false,
                .changed = true,
                .up = false,
                .reason = reason,
            });
            try expectReport(harness.report(1), .{
                .passed = false,
                .changed = false,
                .up = false,
                .reason = reason,
            });
        }

        test "health: a backend that accepts and never answers times out" {
            var server: TestBackend = undefined;
            try server.start(.silent);
            defer server.stop();
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .fall = 2,
            };
            const backends = [_]Config.Backend{.{ .address = server.address }};
            const start_ns = sys.clockMonotonicNs();
            try harness.startChecker(&check, &backends);
            try harness.tickUntilReports(1);
            try testing.expect(sys.clockMonotonicNs() - start_ns >= timeout_ns);
            const reason = "timed out after 100 ms";
            try expectReport(harness.report(0), .{
                .passed = false,
                .changed = false,
                .up = true,
                .reason = reason,
            });
            try harness.tickUntilReports(2);
            try expectReport(harness.report(1), .{
                .passed = false,
                .changed = true,
                .up = false,
                .reason = reason,
            });
            try testing.expect(server.accepted.load(.acquire) >= 1); // It did accept.
        }

        test "health: a malformed or missing status line fails, a split one passes" {
            var server: TestBackend = undefined;
            try server.start(.malformed_digits);
            defer server.stop();
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .rise = 1,
                .fall = 1,
            };
            const backends = [_]Config.Backend{.{ .address = server.address }};
            const cases = [_]struct { script: TestBackend.Script, reason: []const u8 }{
                .{ .script = .malformed_digits, .reason = reason_malformed },
                .{ .script = .malformed_version, .reason = reason_malformed },
                .{ .script = .missing_space, .reason = reason_malformed },
                .{ .script = .bare_lf, .reason = reason_malformed },
                .{ .script = .close_after_request, .reason = reason_closed },
                .{ .script = .split_200, .reason = "" },
                .{ .script = .http10_200, .reason = "" },
            };
            try harness.startChecker(&check, &backends);
            for (cases, 1..) |case, count| {
                errdefer std.debug.print("script: {t}\n", .{case.script});
                // Between probes (the previous report just came): the next one reads this.
                server.setScript(case.script);
                try harness.tickUntilReports(@intCast(count));
                const report = harness.report(@intCast(count - 1));
                try testing.expectEqual(case.reason.len == 0, report.passed);
                try testing.expectEqualStrings(case.reason, report.reason);
                try testing.expectEqual(report.passed, report.up);
            }
        }

        test "health: the status range decides, both bounds inclusive" {
            var server: TestBackend = undefined;
            try server.start(.status_204);
            defer server.stop();
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .status_min = 200,
                .status_max = 204,
                .rise = 1,
                .fall = 1,
            };
            const backends = [_]Config.Backend{.{ .address = server.address }};
            const cases = [_]struct { script: TestBackend.Script, reason: []const u8 }{
                .{ .script = .status_204, .reason = "" },
                .{ .script = .status_205, .reason = "status 205" },
                .{ .script = .status_200, .reason = "" },
                .{ .script = .status_199, .reason = "status 199" },
                .{ .script = .status_503, .reason = "status 503" },
                .{ .script = .status_200, .reason = "" },
            };
            try harness.startChecker(&check, &backends);
            var up = true;
            for (cases, 1..) |case, count| {
                errdefer std.debug.print("script: {t}\n", .{case.script});
                server.setScript(case.script);
                try harness.tickUntilReports(@intCast(count));
                const passed = case.reason.len == 0;
                try expectReport(harness.report(@intCast(count - 1)), .{
                    .passed = passed,
                    .changed = passed != up,
                    .up = passed,
                    .reason = case.reason,
                });
                up = passed;
            }
        }

        test "health: a start long after the loop last ticked does not time out early" {
            // The loop's clock only moves in `tick`, so deadlines armed by `start` on a loop
            // that sat idle for longer than the timeout come due at the first tick.
            var server: TestBackend = undefined;
            try server.start(.status_200);
            defer server.stop();
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
            };
            const backends = [_]Config.Backend{.{ .address = server.address }};
            sleepNs(timeout_ns + 50 * ms);
            try harness.startChecker(&check, &backends);
            try harness.tickUntilReports(2);
            try expectReport(harness.report(0), .{ .passed = true, .changed = false, .up = true });
            try expectReport(harness.report(1), .{ .passed = true, .changed = false, .up = true });
        }

        test "health: a probe that gets no socket fails at its deadline, not inside start" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                .timeout_ns = timeout_ns,
                .fall = 1,
            };
            const nowhere = Address.initIp4(.{ 127, 0, 0, 1 }, 1); // Never reached.
            const backends = [_]Config.Backend{.{ .address = nowhere }};
            // Lower the fd limit to the lowest free fd, so the probe's socket(2) gets EMFILE.
            var limit: linux.rlimit = undefined;
            try testing.expectEqual(.SUCCESS, linux.errno(linux.getrlimit(.NOFILE, &limit)));
            const lowest_free = try sys.socket(
                linux.AF.INET,
                linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC,
                0,
            );
            sys.close(lowest_free);
            var lowered = limit;
            lowered.cur = @intCast(lowest_free);
            const start_ns = sys.clockMonotonicNs();
            {
                try testing.expectEqual(.SUCCESS, linux.errno(linux.setrlimit(.NOFILE, &lowered)));
                defer assert(linux.errno(linux.setrlimit(.NOFILE, &limit)) == .SUCCESS);
                try harness.startChecker(&check, &backends);
            }
            try testing.expectEqual(0, harness.reports_count); // The listener ran not in start.
            try harness.tickUntilReports(1);
            try testing.expect(sys.clockMonotonicNs() - start_ns >= timeout_ns);
            try expectReport(harness.report(0), .{
                .passed = false,
                .changed = true,
                .up = false,
                .reason = "socket: out of file descriptors (EMFILE)",
            });
        }

        test "health: stop in any phase of a probe leaves no fd open" {
            const fds_before = try fdCount();
            {
                var silent: TestBackend = undefined;
                try silent.start(.silent);
                defer silent.stop();
                var answering: TestBackend = undefined;
                try answering.start(.status_200);
                defer answering.stop();
                const backends = [_]Config.Backend{
                    .{ .address = silent.address },
                    .{ .address = answering.address },
                };
                const phases = [_]StopPhase{ .connect, .receive, .report, .interval };
                for (phases) |phase| {
                    errdefer std.debug.print("stop phase: {t}\n", .{phase});
                    try stopDuring(phase, &backends);
                }
            }
            try testing.expectEqual(fds_before, try fdCount());
        }

        const StopPhase = enum {
            /// Right after start: both connects submitted, nothing ticked yet.
            connect,
            /// The silent backend's probe waits for its status line.
            receive,
            /// From inside the listener, at the first report (the answering backend's).
            report,
            /// Both probes waiting for their next interval.
            interval,
        };

        fn stopDuring(phase: StopPhase, backends: []const Config.Backend) !void {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const check: Config.HealthCheck = .{
                .path = "/",
                .interval_ns = interval_ns,
                // Long, so the silent probe is still in flight when it is stopped.
                .timeout_ns = 1000 * ms,
            };
            harness.stop_on_report = phase == .report;
            const only_answering = backends[1..];
            try harness.startChecker(&check, if (phase == .interval) only_answering else backends);
            const checker = &harness.checker;
            switch (phase) {
                .connect => try testing.expect(checker.probes[0].completion.isPending()),
                .receive => {
                    const probe = &checker.probes[0];
                    while (probe.completion.operation != .recv) try harness.tick();
                    try testing.expect(probe.completion.isPending());
                    try testing.expect(probe.socket.fd >= 0);
                },
                .report => try harness.tickUntilReports(1),
                .interval => {
                    try harness.tickUntilReports(1);
                    try testing.expectEqual(-1, checker.probes[0].socket.fd);
                },
            }
            try harness.stopChecker();
            // Nothing is left that could report, or touch a socket, later.
            try testing.expectEqual(null, checker.interval_queue.earliestDeadline());
            try testing.expectEqual(null, checker.timeout_queue.earliestDeadline());
            for (checker.probes) |*probe| try testing.expect(!probe.completion.isPending());
        }
    };
}
