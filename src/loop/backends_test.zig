//! The one test suite both backends must pass, over real loopback sockets on port 0. Each test
//! is written once inside `Suite(mode)` and instantiated for io_uring and for epoll; when
//! io_uring cannot be set up here, its variants skip and print why instead of failing.
//!
//! Every test runs under a watchdog timer (5 s) so a lost completion fails the test rather than
//! hanging the run. Callbacks record errors into the test's state; the test body asserts.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;
const testing = std.testing;

const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Loop = @import("Loop.zig");
const Completion = @import("Completion.zig");
const Socket = @import("Socket.zig");
const Timer = @import("Timer.zig");
const TimerQueue = @import("TimerQueue.zig");

test {
    _ = Suite(.uring);
    _ = Suite(.epoll);
    _ = SpliceSuite(.uring);
    _ = SpliceSuite(.epoll);
}

const ms = std.time.ns_per_ms;

test "loop: auto mode uses io_uring when it can, else epoll with a reason" {
    var loop = try Loop.init(.{ .mode = .auto, .entries = 16 });
    defer loop.deinit();
    switch (loop.backend) {
        .io_uring => try testing.expect(loop.fallback_reason == null),
        .epoll => {
            std.debug.print("auto fell back to epoll: {s}\n", .{loop.fallback_reason.?});
            try testing.expect(loop.fallback_reason.?.len > 0);
        },
        .sim => unreachable, // Only from `initSim`.
    }
}

/// A loop plus the watchdog that bounds every test.
const Harness = struct {
    loop: Loop,
    watchdog_queue: TimerQueue,
    watchdog: Timer = .{},
    watchdog_fired: bool = false,
    /// Short steps for `tickFor`, so a test can let time pass without its own queue.
    step_queue: TimerQueue,
    step: Timer = .{},
    step_fired: bool = false,

    /// Small SQ on purpose: several tests submit more SQEs per tick than it holds.
    const entries = 16;

    /// In place: the loop must not move once it has ticked.
    fn init(harness: *Harness, comptime mode: Loop.Mode) !void {
        const loop = Loop.init(.{ .mode = mode, .entries = entries }) catch |err| switch (mode) {
            .uring => {
                const reason = Loop.initErrorReason(err);
                std.debug.print("skipping the io_uring variant: {s}\n", .{reason});
                return error.SkipZigTest;
            },
            else => return err,
        };
        harness.* = .{
            .loop = loop,
            .watchdog_queue = .init(5000 * ms),
            .step_queue = .init(1 * ms),
        };
        const expected: Loop.Backend = switch (mode) {
            .uring => .io_uring,
            .epoll => .epoll,
            .auto => unreachable,
        };
        assert(harness.loop.backend == expected);
        harness.loop.timerQueueRegister(&harness.watchdog_queue);
        harness.loop.timerQueueRegister(&harness.step_queue);
        const watchdog = &harness.watchdog;
        harness.loop.timerArm(&harness.watchdog_queue, watchdog, Harness, harness, watchdogCallback);
    }

    fn deinit(harness: *Harness) void {
        harness.loop.deinit();
        harness.* = undefined;
    }

    fn tick(harness: *Harness) !void {
        try harness.loop.tick();
        if (harness.watchdog_fired) return error.TestTimedOut;
    }

    /// Ticks until `done.*`, bounded by the watchdog.
    fn tickUntil(harness: *Harness, done: *const bool) !void {
        while (!done.*) try harness.tick();
    }

    /// Ticks for at least `duration_ns`: long enough for anything that was going to happen to
    /// a loopback socket to have happened.
    fn tickFor(harness: *Harness, duration_ns: u64) !void {
        const loop = &harness.loop;
        const end_ns = sys.clockMonotonicNs() + duration_ns;
        while (sys.clockMonotonicNs() < end_ns) {
            harness.step_fired = false;
            loop.timerArm(&harness.step_queue, &harness.step, bool, &harness.step_fired, setTrue);
            try harness.tickUntil(&harness.step_fired);
        }
    }

    fn watchdogCallback(harness: *Harness) void {
        harness.watchdog_fired = true;
    }
};

fn setTrue(flag: *bool) void {
    flag.* = true;
}

fn listenLoopback() !struct { socket: Socket, address: Address } {
    const fd = try tcpSocket();
    errdefer sys.close(fd);
    try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEADDR, 1);
    const any_port = Address.initIp4(.{ 127, 0, 0, 1 }, 0);
    try sys.bind(fd, any_port.sockaddr(), any_port.socklen());
    try sys.listen(fd, 128);
    var storage: linux.sockaddr.storage = undefined;
    _ = try sys.getsockname(fd, &storage);
    return .{ .socket = .init(fd), .address = Address.fromStorage(&storage) };
}

/// A blocking UDP socket on 127.0.0.1 and a port of its own, outside the loop.
fn datagramBound() !linux.fd_t {
    const fd = try sys.socket(linux.AF.INET, linux.SOCK.DGRAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC, 0);
    errdefer sys.close(fd);
    const any_port = Address.initIp4(.{ 127, 0, 0, 1 }, 0);
    try sys.bind(fd, any_port.sockaddr(), any_port.socklen());
    return fd;
}

fn tcpSocket() !linux.fd_t {
    return sys.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC, 0);
}

/// Open fds of this process, from /proc/self/fd (not counting the directory's own fd).
fn fdCount() !usize {
    const rc = linux.openat(linux.AT.FDCWD, "/proc/self/fd", .{ .DIRECTORY = true, .CLOEXEC = true }, 0);
    if (linux.errno(rc) != .SUCCESS) return error.ProcUnavailable;
    const dir: linux.fd_t = @intCast(rc);
    defer sys.close(dir);
    var buffer: [4096]u8 align(8) = undefined;
    var count: usize = 0;
    while (true) {
        const n = linux.getdents64(dir, &buffer, buffer.len);
        if (linux.errno(n) != .SUCCESS) return error.ProcUnavailable;
        if (n == 0) break;
        var offset: usize = 0;
        while (offset < n) {
            const entry: *align(1) const linux.dirent64 = @ptrCast(&buffer[offset]);
            const name: [*:0]const u8 = @ptrCast(&buffer[offset + @offsetOf(linux.dirent64, "name")]);
            if (name[0] != '.') count += 1;
            offset += entry.reclen;
        }
    }
    return count - 1;
}

fn wakeAfter(loop: *Loop, delay_ns: u64) void {
    sleepNs(delay_ns);
    loop.wake();
}

fn sleepNs(ns: u64) void {
    const request: linux.timespec = .{ .sec = @intCast(ns / std.time.ns_per_s), .nsec = @intCast(ns % std.time.ns_per_s) };
    _ = linux.nanosleep(&request, null);
}

/// A connected pair over loopback made through the loop itself: `server` is accepted,
/// `client` connected.
const Pair = struct {
    harness: *Harness,
    listener: Socket,
    server: Socket = undefined,
    client: Socket,
    accept_completion: Completion = .{},
    connect_completion: Completion = .{},
    accepted: bool = false,
    connected: bool = false,
    both: bool = false,
    failure: ?anyerror = null,

    fn open(pair: *Pair, harness: *Harness) !void {
        const listening = try listenLoopback();
        pair.* = .{ .harness = harness, .listener = listening.socket, .client = .init(try tcpSocket()) };
        const loop = &harness.loop;
        loop.accept(&pair.accept_completion, &pair.listener, Pair, pair, acceptCallback);
        loop.connect(&pair.connect_completion, &pair.client, &listening.address, Pair, pair, connectCallback);
        try harness.tickUntil(&pair.both);
        if (pair.failure) |err| return err;
    }

    fn close(pair: *Pair) void {
        const loop = &pair.harness.loop;
        if (pair.client.fd >= 0) loop.close(&pair.client);
        if (pair.accepted and pair.server.fd >= 0) loop.close(&pair.server);
        loop.close(&pair.listener);
    }

    fn acceptCallback(pair: *Pair, result: sys.AcceptError!linux.fd_t) void {
        const fd = result catch |err| return pair.fail(err);
        pair.server = .init(fd);
        pair.accepted = true;
        pair.both = pair.connected;
    }

    fn connectCallback(pair: *Pair, result: sys.ConnectError!void) void {
        result catch |err| return pair.fail(err);
        pair.connected = true;
        pair.both = pair.accepted;
    }

    fn fail(pair: *Pair, err: anyerror) void {
        pair.failure = err;
        pair.both = true;
    }
};

fn Suite(comptime mode: Loop.Mode) type {
    return struct {
        test "loop: accept, connect, send and recv echo over loopback" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();

            const Echo = struct {
                pair: *Pair,
                server_recv: Completion = .{},
                server_send: Completion = .{},
                client_send: Completion = .{},
                client_recv: Completion = .{},
                server_buffer: [64]u8 = undefined,
                client_buffer: [64]u8 = undefined,
                echoed: []const u8 = "",
                done: bool = false,
                failure: ?anyerror = null,

                const Echo = @This();

                fn loop(echo: *Echo) *Loop {
                    return &echo.pair.harness.loop;
                }

                fn serverRecvCallback(echo: *Echo, result: sys.RecvError!usize) void {
                    const n = result catch |err| return echo.fail(err);
                    echo.loop().send(&echo.server_send, &echo.pair.server, echo.server_buffer[0..n], Echo, echo, sendCallback);
                }

                fn clientSendCallback(echo: *Echo, result: sys.SendError!usize) void {
                    const n = result catch |err| return echo.fail(err);
                    if (n != 5) return echo.fail(error.ShortSend);
                    echo.loop().recv(&echo.client_recv, &echo.pair.client, &echo.client_buffer, Echo, echo, clientRecvCallback);
                }

                fn sendCallback(echo: *Echo, result: sys.SendError!usize) void {
                    _ = result catch |err| return echo.fail(err);
                }

                fn clientRecvCallback(echo: *Echo, result: sys.RecvError!usize) void {
                    const n = result catch |err| return echo.fail(err);
                    echo.echoed = echo.client_buffer[0..n];
                    echo.done = true;
                }

                fn fail(echo: *Echo, err: anyerror) void {
                    echo.failure = err;
                    echo.done = true;
                }
            };
            var echo: Echo = .{ .pair = &pair };
            const loop = &harness.loop;
            loop.recv(&echo.server_recv, &pair.server, &echo.server_buffer, Echo, &echo, Echo.serverRecvCallback);
            loop.send(&echo.client_send, &pair.client, "hello", Echo, &echo, Echo.clientSendCallback);
            try harness.tickUntil(&echo.done);
            if (echo.failure) |err| return err;
            try testing.expectEqualStrings("hello", echo.echoed);
            // The server's send callback may still be queued: let it run before closing.
            while (echo.server_send.isPending()) try harness.tick();
        }

        test "loop: an orderly close by the peer reads as 0 bytes" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();

            var reader: Reader = .{};
            var completion: Completion = .{};
            harness.loop.close(&pair.client);
            harness.loop.recv(&completion, &pair.server, &reader.buffer, Reader, &reader, Reader.callback);
            try harness.tickUntil(&reader.done);
            try testing.expectEqual(@as(usize, 0), try reader.result);
        }

        test "loop: connect to a closed port is refused" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();

            // Bind without listening, note the port, close: nothing listens there now.
            const fd = try tcpSocket();
            var address = Address.initIp4(.{ 127, 0, 0, 1 }, 0);
            try sys.bind(fd, address.sockaddr(), address.socklen());
            var storage: linux.sockaddr.storage = undefined;
            _ = try sys.getsockname(fd, &storage);
            sys.close(fd);
            address = Address.fromStorage(&storage);

            const Connector = struct {
                result: sys.ConnectError!void = undefined,
                done: bool = false,
                fn callback(connector: *@This(), result: sys.ConnectError!void) void {
                    connector.result = result;
                    connector.done = true;
                }
            };
            var connector: Connector = .{};
            var socket: Socket = .init(try tcpSocket());
            defer harness.loop.close(&socket);
            var completion: Completion = .{};
            harness.loop.connect(&completion, &socket, &address, Connector, &connector, Connector.callback);
            try harness.tickUntil(&connector.done);
            try testing.expectError(error.ConnectionRefused, connector.result);
        }

        test "loop: cancel of a pending recv and accept gives Canceled exactly once" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const loop = &harness.loop;

            var idle: Completion = .{};
            loop.cancel(&idle); // No-op on an idle completion.
            try testing.expect(!idle.isPending());

            var reader: Reader = .{};
            var recv_completion: Completion = .{};
            loop.recv(&recv_completion, &pair.server, &reader.buffer, Reader, &reader, Reader.callback);
            var acceptor: Acceptor = .{};
            loop.accept(&pair.accept_completion, &pair.listener, Acceptor, &acceptor, Acceptor.callback);
            try harness.tickFor(10 * ms); // Both are in the kernel (or parked) now.
            try testing.expect(recv_completion.isPending());
            try testing.expect(pair.accept_completion.isPending());

            loop.cancel(&recv_completion);
            loop.cancel(&recv_completion); // A second cancel changes nothing.
            loop.cancel(&pair.accept_completion);
            try testing.expectEqual(@as(u32, 0), reader.calls); // Never from inside cancel.
            try harness.tickUntil(&reader.done);
            try harness.tickUntil(&acceptor.done);
            try harness.tickFor(20 * ms); // Any second callback would come in this time.
            try testing.expectEqual(@as(u32, 1), reader.calls);
            try testing.expectError(error.Canceled, reader.result);
            try testing.expectEqual(@as(u32, 1), acceptor.calls);
            try testing.expectError(error.Canceled, acceptor.result);
            try testing.expect(!recv_completion.isPending());
        }

        test "loop: cancel racing a finished recv delivers one callback with the real result" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const loop = &harness.loop;

            try testing.expectEqual(@as(usize, 3), try sys.send(pair.client.fd, "abc"));
            try harness.tickFor(5 * ms); // The bytes are in the server's receive queue.
            var reader: Reader = .{};
            var completion: Completion = .{};
            loop.recv(&completion, &pair.server, &reader.buffer, Reader, &reader, Reader.callback);
            loop.cancel(&completion);
            try harness.tickUntil(&reader.done);
            try harness.tickFor(20 * ms);
            try testing.expectEqual(@as(u32, 1), reader.calls);
            // Either outcome honours the contract; both backends find the data first here.
            const n = reader.result catch |err| switch (err) {
                error.Canceled => return,
                else => return err,
            };
            try testing.expectEqualStrings("abc", reader.buffer[0..n]);
        }

        test "loop: a completion re-armed from its own callback (accept and recv loops)" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;
            var listening = try listenLoopback();
            defer loop.close(&listening.socket);

            const clients_count = 3;
            const Server = struct {
                loop: *Loop,
                listener: *Socket,
                completion: Completion = .{},
                accepted: [clients_count]Socket = undefined,
                accepted_count: u32 = 0,
                recv_completion: Completion = .{},
                buffer: [7]u8 = undefined,
                received: [64]u8 = undefined,
                received_len: usize = 0,
                done: bool = false,
                failure: ?anyerror = null,

                const Server = @This();

                fn acceptCallback(server: *Server, result: sys.AcceptError!linux.fd_t) void {
                    const fd = result catch |err| return server.fail(err);
                    server.accepted[server.accepted_count] = .init(fd);
                    server.accepted_count += 1;
                    if (server.accepted_count < clients_count) {
                        server.loop.accept(&server.completion, server.listener, Server, server, acceptCallback);
                    } else {
                        server.loop.recv(&server.recv_completion, &server.accepted[0], &server.buffer, Server, server, recvCallback);
                    }
                }

                fn recvCallback(server: *Server, result: sys.RecvError!usize) void {
                    const n = result catch |err| return server.fail(err);
                    if (n == 0) {
                        server.done = true;
                        return;
                    }
                    if (server.received_len + n > server.received.len) return server.fail(error.TooMuch);
                    @memcpy(server.received[server.received_len..][0..n], server.buffer[0..n]);
                    server.received_len += n;
                    // Same completion, same socket, from inside its own callback.
                    server.loop.recv(&server.recv_completion, &server.accepted[0], &server.buffer, Server, server, recvCallback);
                }

                fn fail(server: *Server, err: anyerror) void {
                    server.failure = err;
                    server.done = true;
                }
            };
            var server: Server = .{ .loop = loop, .listener = &listening.socket };
            loop.accept(&server.completion, &listening.socket, Server, &server, Server.acceptCallback);

            var clients: [clients_count]Socket = undefined;
            var connects: [clients_count]Completion = @splat(.{});
            var connector: Counter = .{};
            for (&clients, &connects) |*client, *completion| {
                client.* = .init(try tcpSocket());
                loop.connect(completion, client, &listening.address, Counter, &connector, Counter.connectCallback);
            }
            while (connector.count < clients_count or server.accepted_count < clients_count) {
                if (server.failure != null or connector.failure != null) break;
                try harness.tick();
            }
            if (connector.failure) |err| return err;
            // The accepted order is the kernel's; whichever is first, feed it a stream.
            const message = "the quick brown fox jumps over the lazy dog";
            var sent: usize = 0;
            for (&clients) |*client| {
                var storage: linux.sockaddr.storage = undefined;
                var peer: linux.sockaddr.storage = undefined;
                _ = try sys.getsockname(client.fd, &storage);
                _ = try sys.getpeername(server.accepted[0].fd, &peer);
                const local = Address.fromStorage(&storage);
                const remote = Address.fromStorage(&peer);
                if (!local.eql(&remote)) continue;
                sent = try sys.send(client.fd, message);
                loop.close(client);
            }
            try testing.expectEqual(message.len, sent);
            try harness.tickUntil(&server.done);
            if (server.failure) |err| return err;
            try testing.expectEqualStrings(message, server.received[0..server.received_len]);
            for (&clients) |*client| if (client.fd >= 0) loop.close(client);
            for (&server.accepted) |*socket| loop.close(socket);
        }

        test "loop: timers fire in deadline order and a re-armed timer does not fire early" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;

            var long: TimerQueue = .init(30 * ms);
            var short: TimerQueue = .init(10 * ms);
            loop.timerQueueRegister(&long);
            loop.timerQueueRegister(&short);
            var log: FireLog = .{};
            var a1: Timer = .{};
            var a2: Timer = .{};
            var b1: Timer = .{};
            var entries: [3]FireLog.Entry = .{
                .{ .log = &log, .id = 1 },
                .{ .log = &log, .id = 2 },
                .{ .log = &log, .id = 3 },
            };
            loop.timerArm(&long, &a1, FireLog.Entry, &entries[0], FireLog.Entry.fire);
            loop.timerArm(&long, &a2, FireLog.Entry, &entries[1], FireLog.Entry.fire);
            loop.timerArm(&short, &b1, FireLog.Entry, &entries[2], FireLog.Entry.fire);
            try testing.expect(a1.isArmed());
            while (log.count < 3) try harness.tick();
            try testing.expectEqualSlices(u8, &.{ 3, 1, 2 }, log.ids[0..3]);
            try testing.expect(!a1.isArmed() and !a2.isArmed() and !b1.isArmed());

            // Re-arm halfway through: the deadline moves to the re-arm time plus the duration.
            var rearmed: Timer = .{};
            var rearmed_entry: FireLog.Entry = .{ .log = &log, .id = 4 };
            const armed_at = loop.now();
            loop.timerArm(&long, &rearmed, FireLog.Entry, &rearmed_entry, FireLog.Entry.fire);
            try harness.tickFor(15 * ms);
            try testing.expectEqual(@as(u32, 3), log.count);
            const rearmed_at = loop.now();
            try testing.expect(rearmed_at >= armed_at + 15 * ms);
            loop.timerArm(&long, &rearmed, FireLog.Entry, &rearmed_entry, FireLog.Entry.fire);
            while (log.count < 4) try harness.tick();
            try testing.expect(log.fired_at[3] >= rearmed_at + 30 * ms);
            try harness.tickFor(40 * ms);
            try testing.expectEqual(@as(u32, 4), log.count); // Fired once.
        }

        test "loop: timers expiring in the same tick fire in deadline order across queues" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;

            var long: TimerQueue = .init(20 * ms);
            var short: TimerQueue = .init(10 * ms);
            loop.timerQueueRegister(&long); // Registered first, but its timer is due later.
            loop.timerQueueRegister(&short);
            var log: FireLog = .{};
            var entries: [2]FireLog.Entry = .{ .{ .log = &log, .id = 1 }, .{ .log = &log, .id = 2 } };
            var late: Timer = .{};
            var early: Timer = .{};
            loop.timerArm(&long, &late, FireLog.Entry, &entries[0], FireLog.Entry.fire);
            loop.timerArm(&short, &early, FireLog.Entry, &entries[1], FireLog.Entry.fire);
            sleepNs(30 * ms); // Both are overdue by the next tick.
            try harness.tick();
            try testing.expectEqual(@as(u32, 2), log.count);
            try testing.expectEqualSlices(u8, &.{ 2, 1 }, log.ids[0..2]);
        }

        test "loop: more operations than SQ entries before the first tick, one canceled" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;
            var listening = try listenLoopback();
            defer loop.close(&listening.socket);

            // No tick yet: with io_uring the ring is still disabled, so everything past the
            // SQ's 16 entries waits in the backlog, in order.
            const count = Harness.entries + 8;
            var clients: [count]Socket = undefined;
            var connects: [count]Completion = @splat(.{});
            var results: [count]?(sys.ConnectError!void) = @splat(null);
            var calls: [count]u32 = @splat(0);
            const Slot = struct {
                result: *?(sys.ConnectError!void),
                calls: *u32,
                fn callback(slot: *@This(), result: sys.ConnectError!void) void {
                    slot.result.* = result;
                    slot.calls.* += 1;
                }
            };
            var slots: [count]Slot = undefined;
            for (&clients, &connects, &slots, &results, &calls) |*client, *completion, *slot, *result, *call| {
                client.* = .init(try tcpSocket());
                slot.* = .{ .result = result, .calls = call };
                loop.connect(completion, client, &listening.address, Slot, slot, Slot.callback);
            }
            // Deterministic only where the ring starts disabled (R_DISABLED, Linux 6.1+):
            // an enabled ring takes the overflow with an inline submit instead.
            const backlogged = connects[count - 1].state == .backlog;
            loop.cancel(&connects[count - 1]);
            while (true) {
                var finished: usize = 0;
                for (results) |result| finished += @intFromBool(result != null);
                if (finished == count) break;
                try harness.tick();
            }
            try harness.tickFor(10 * ms);
            for (calls) |call| try testing.expectEqual(@as(u32, 1), call);
            for (results[0 .. count - 1]) |result| try result.?;
            // From the backlog the canceled connect never reached the kernel. Otherwise (an
            // SQE, or epoll's connect(2) at submission) it may have finished first: allowed.
            results[count - 1].? catch |err| try testing.expectEqual(error.Canceled, err);
            if (backlogged) try testing.expectError(error.Canceled, results[count - 1].?);
            for (&clients) |*client| loop.close(client);
            // Drain the accept queue so the listener closes cleanly.
            while (sys.accept4(listening.socket.fd)) |fd| sys.close(fd) else |err| switch (err) {
                error.WouldBlock => {},
                else => return err,
            }
        }

        test "loop: timerCancel prevents firing, and a callback may re-arm its own timer" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;

            var queue: TimerQueue = .init(5 * ms);
            loop.timerQueueRegister(&queue);
            var canceled: Timer = .{};
            var canceled_fired = false;
            loop.timerArm(&queue, &canceled, bool, &canceled_fired, setTrue);
            loop.timerCancel(&canceled);
            loop.timerCancel(&canceled); // No-op when not armed.
            try testing.expect(!canceled.isArmed());

            const Repeater = struct {
                loop: *Loop,
                queue: *TimerQueue,
                timer: Timer = .{},
                count: u32 = 0,
                done: bool = false,
                fn fire(repeater: *@This()) void {
                    repeater.count += 1;
                    if (repeater.count == 3) {
                        repeater.done = true;
                    } else {
                        repeater.loop.timerArm(repeater.queue, &repeater.timer, @This(), repeater, fire);
                    }
                }
            };
            var repeater: Repeater = .{ .loop = loop, .queue = &queue };
            loop.timerArm(&queue, &repeater.timer, Repeater, &repeater, Repeater.fire);
            try harness.tickUntil(&repeater.done);
            try harness.tickFor(20 * ms);
            try testing.expect(!canceled_fired);
            try testing.expectEqual(@as(u32, 3), repeater.count);
        }

        test "loop: a tick with no I/O but an armed timer sleeps until the deadline" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;

            var queue: TimerQueue = .init(20 * ms);
            loop.timerQueueRegister(&queue);
            var timer: Timer = .{};
            var fired = false;
            const start_ns = sys.clockMonotonicNs();
            loop.timerArm(&queue, &timer, bool, &fired, setTrue);
            var ticks: u32 = 0;
            while (!fired) : (ticks += 1) try harness.tick();
            const elapsed_ns = sys.clockMonotonicNs() - start_ns;
            try testing.expect(elapsed_ns >= 20 * ms);
            try testing.expect(elapsed_ns < 1000 * ms);
            // One blocking wait sized by the deadline, not a spin (allow one spare wake-up).
            try testing.expect(ticks <= 2);
        }

        test "loop: wake from another thread unblocks a tick" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;

            var woken = false;
            loop.setWakeCallback(bool, &woken, setTrue);
            try harness.tickFor(1 * ms); // The first tick arms the wake-up read.
            const start_ns = sys.clockMonotonicNs();
            const thread = try std.Thread.spawn(.{}, wakeAfter, .{ loop, 30 * ms });
            defer thread.join();
            try harness.tickUntil(&woken);
            const elapsed_ns = sys.clockMonotonicNs() - start_ns;
            try testing.expect(elapsed_ns >= 25 * ms);
            try testing.expect(elapsed_ns < 2000 * ms); // Far before the 5 s watchdog.

            // Wake-ups keep working: a second one, and one sent before the tick.
            woken = false;
            loop.wake();
            try harness.tickUntil(&woken);
        }

        test "loop: pollReadable fires when the peer closes, not before" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const loop = &harness.loop;

            const Watcher = struct {
                result: Loop.PollError!void = undefined,
                calls: u32 = 0,
                done: bool = false,
                fn callback(watcher: *@This(), result: Loop.PollError!void) void {
                    watcher.result = result;
                    watcher.calls += 1;
                    watcher.done = true;
                }
            };
            var watcher: Watcher = .{};
            var completion: Completion = .{};
            loop.pollReadable(&completion, &pair.server, Watcher, &watcher, Watcher.callback);
            try harness.tickFor(20 * ms);
            try testing.expectEqual(@as(u32, 0), watcher.calls); // Idle: nothing to report.
            loop.close(&pair.client);
            try harness.tickUntil(&watcher.done);
            try watcher.result;
            try testing.expectEqual(@as(u32, 1), watcher.calls);

            // The poll consumed nothing: the EOF is still there for a recv.
            var reader: Reader = .{};
            var recv_completion: Completion = .{};
            loop.recv(&recv_completion, &pair.server, &reader.buffer, Reader, &reader, Reader.callback);
            try harness.tickUntil(&reader.done);
            try testing.expectEqual(@as(usize, 0), try reader.result);
        }

        test "loop: a large send to a slow reader completes over several partial sends" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const loop = &harness.loop;
            // Fixed, modest kernel buffers (no autotuning) make the first send partial for
            // sure. Not tiny ones: a receive window of a few KiB stalls TCP on its persist
            // timer, which would test TCP rather than the loop.
            try sys.setsockoptInt(pair.client.fd, linux.SOL.SOCKET, linux.SO.SNDBUF, 64 * 1024);
            try sys.setsockoptInt(pair.server.fd, linux.SOL.SOCKET, linux.SO.RCVBUF, 64 * 1024);

            const total = 4 * 1024 * 1024;
            const Transfer = struct {
                loop: *Loop,
                pair: *Pair,
                data: []const u8,
                send_completion: Completion = .{},
                recv_completion: Completion = .{},
                sent: usize = 0,
                sends: u32 = 0,
                received: usize = 0,
                buffer: [16 * 1024]u8 = undefined,
                reading: bool = false,
                done: bool = false,
                failure: ?anyerror = null,

                const Transfer = @This();

                fn sendNext(transfer: *Transfer) void {
                    transfer.loop.send(&transfer.send_completion, &transfer.pair.client, transfer.data[transfer.sent..], Transfer, transfer, sendCallback);
                }

                fn sendCallback(transfer: *Transfer, result: sys.SendError!usize) void {
                    const n = result catch |err| return transfer.fail(err);
                    transfer.sent += n;
                    transfer.sends += 1;
                    // The reader only starts after the first send finished: it is slow.
                    if (!transfer.reading) {
                        transfer.reading = true;
                        transfer.recvNext();
                    }
                    if (transfer.sent < transfer.data.len) transfer.sendNext();
                }

                fn recvNext(transfer: *Transfer) void {
                    transfer.loop.recv(&transfer.recv_completion, &transfer.pair.server, &transfer.buffer, Transfer, transfer, recvCallback);
                }

                fn recvCallback(transfer: *Transfer, result: sys.RecvError!usize) void {
                    const n = result catch |err| return transfer.fail(err);
                    if (n == 0) return transfer.fail(error.UnexpectedEof);
                    const expected = transfer.data[transfer.received..][0..n];
                    if (!std.mem.eql(u8, expected, transfer.buffer[0..n])) return transfer.fail(error.Corrupt);
                    transfer.received += n;
                    if (transfer.received == transfer.data.len) {
                        transfer.done = true;
                    } else {
                        transfer.recvNext();
                    }
                }

                fn fail(transfer: *Transfer, err: anyerror) void {
                    transfer.failure = err;
                    transfer.done = true;
                }
            };
            const data = try testing.allocator.alloc(u8, total);
            defer testing.allocator.free(data);
            for (data, 0..) |*byte, i| byte.* = @truncate(i *% 7 +% (i >> 11));
            var transfer: Transfer = .{ .loop = loop, .pair = &pair, .data = data };
            transfer.sendNext();
            try harness.tickUntil(&transfer.done);
            if (transfer.failure) |err| return err;
            try testing.expectEqual(@as(usize, total), transfer.sent);
            try testing.expectEqual(@as(usize, total), transfer.received);
            try testing.expect(transfer.sends > 1);
        }

        test "loop: 1,000 connections opened and closed leak no fd" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;
            try harness.tickFor(1 * ms); // The loop's own fds are in place before counting.
            const fds_before = try fdCount();

            var listening = try listenLoopback();
            // More connects per batch than the SQ has entries: exercises the full-SQ path.
            const batch = 50;
            const Batch = struct {
                loop: *Loop,
                listener: *Socket,
                accept_completion: Completion = .{},
                accepted: [batch]Socket = undefined,
                accepted_count: u32 = 0,
                failure: ?anyerror = null,

                const Batch = @This();

                fn acceptCallback(b: *Batch, result: sys.AcceptError!linux.fd_t) void {
                    const fd = result catch |err| {
                        b.failure = err;
                        return;
                    };
                    b.accepted[b.accepted_count] = .init(fd);
                    b.accepted_count += 1;
                    if (b.accepted_count < batch) b.loop.accept(&b.accept_completion, b.listener, Batch, b, acceptCallback);
                }
            };
            var connections: u32 = 0;
            while (connections < 1000) : (connections += batch) {
                var b: Batch = .{ .loop = loop, .listener = &listening.socket };
                loop.accept(&b.accept_completion, &listening.socket, Batch, &b, Batch.acceptCallback);
                var clients: [batch]Socket = undefined;
                var connects: [batch]Completion = @splat(.{});
                var connector: Counter = .{};
                for (&clients, &connects) |*client, *completion| {
                    client.* = .init(try tcpSocket());
                    loop.connect(completion, client, &listening.address, Counter, &connector, Counter.connectCallback);
                }
                while (connector.count < batch or b.accepted_count < batch) {
                    if (b.failure) |err| return err;
                    if (connector.failure) |err| return err;
                    try harness.tick();
                }
                for (&clients) |*client| loop.close(client);
                for (&b.accepted) |*socket| loop.close(socket);
            }
            loop.close(&listening.socket);
            try testing.expectEqual(fds_before, try fdCount());
        }

        test "loop: callbacks run from tick, never from inside the submitting call" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const loop = &harness.loop;

            try testing.expectEqual(@as(usize, 2), try sys.send(pair.client.fd, "hi"));
            try harness.tickFor(5 * ms);
            // The data is there, so epoll performs the recv inside this call; the callback
            // must still wait for the tick.
            var reader: Reader = .{};
            var completion: Completion = .{};
            loop.recv(&completion, &pair.server, &reader.buffer, Reader, &reader, Reader.callback);
            try testing.expectEqual(@as(u32, 0), reader.calls);
            try testing.expect(completion.isPending());
            try harness.tickUntil(&reader.done);
            try testing.expectEqual(@as(usize, 2), try reader.result);
        }

        test "loop: recvReady completes with its result after the batch, holds the reader slot, and survives a cancel" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const loop = &harness.loop;

            var reader: Reader = .{};
            var completion: Completion = .{};
            loop.recvReady(&completion, &pair.server, &reader.buffer, 3, Reader, &reader, Reader.callback);
            try testing.expectEqual(@as(u32, 0), reader.calls); // Not from inside the call.
            try testing.expect(completion.isPending());
            try testing.expectEqual(&completion, pair.server.reader.?);
            try harness.tickUntil(&reader.done);
            try testing.expectEqual(@as(usize, 3), try reader.result);
            try testing.expectEqual(@as(?*Completion, null), pair.server.reader);
            // Cancelled before its callback: the result already there is what comes, once.
            reader = .{};
            loop.recvReady(&completion, &pair.server, &reader.buffer, error.ConnectionResetByPeer, Reader, &reader, Reader.callback);
            loop.cancel(&completion);
            try harness.tickUntil(&reader.done);
            try testing.expectError(error.ConnectionResetByPeer, reader.result);
            try harness.tickFor(5 * ms);
            try testing.expectEqual(@as(u32, 1), reader.calls);
            // The reader slot is free again: a real receive can follow.
            reader = .{};
            try testing.expectEqual(@as(usize, 2), try sys.send(pair.client.fd, "ok"));
            loop.recv(&completion, &pair.server, &reader.buffer, Reader, &reader, Reader.callback);
            try harness.tickUntil(&reader.done);
            try testing.expectEqual(@as(usize, 2), try reader.result);
        }

        test "loop: a connected datagram socket receives only from its peer" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;
            const peer_fd = try datagramBound();
            defer sys.close(peer_fd);
            const stranger_fd = try datagramBound();
            defer sys.close(stranger_fd);
            var storage: linux.sockaddr.storage = undefined;
            _ = try sys.getsockname(peer_fd, &storage);
            const peer = Address.fromStorage(&storage);

            var socket = try loop.openDatagramSocket(linux.AF.INET);
            defer loop.close(&socket);
            var connected = false;
            var connect_completion: Completion = .{};
            const Connected = struct {
                fn callback(flag: *bool, result: sys.ConnectError!void) void {
                    result catch unreachable; // Connecting a datagram socket only sets its peer.
                    flag.* = true;
                }
            };
            loop.connect(&connect_completion, &socket, &peer, bool, &connected, Connected.callback);
            try harness.tickUntil(&connected);
            try testing.expectEqual(@as(usize, 4), try sys.send(socket.fd, "ping"));
            // Waiting before anything arrives: epoll registers the socket and sees one edge.
            var reader: Reader = .{};
            var completion: Completion = .{};
            loop.recvDatagram(&completion, &socket, &reader.buffer, Reader, &reader, Reader.callback);
            try harness.tickFor(2 * ms);

            // Learn the socket's address from the datagram, then answer from both sockets.
            var client: Address = undefined;
            var client_len: linux.socklen_t = @sizeOf(Address);
            var ping: [8]u8 = undefined;
            var polled = [_]linux.pollfd{.{ .fd = peer_fd, .events = linux.POLL.IN, .revents = 0 }};
            _ = linux.poll(&polled, 1, 1000);
            const got = linux.recvfrom(peer_fd, &ping, ping.len, 0, &client.any, &client_len);
            try testing.expectEqual(@as(usize, 4), got);
            // Two from the peer, both queued under that one edge: epoll must not wait for
            // another after the first (a short receive of a datagram drains nothing).
            const senders = [_]linux.fd_t{ stranger_fd, peer_fd, peer_fd };
            for (senders, [_][]const u8{ "stranger", "peer", "again" }) |fd, text| {
                const sent = linux.sendto(fd, text.ptr, text.len, 0, client.sockaddr(), client.socklen());
                try testing.expectEqual(text.len, sent);
            }
            try harness.tickUntil(&reader.done);
            try testing.expectEqualStrings("peer", reader.buffer[0..try reader.result]);
            reader = .{};
            loop.recvDatagram(&completion, &socket, &reader.buffer, Reader, &reader, Reader.callback);
            try harness.tickUntil(&reader.done);
            try testing.expectEqualStrings("again", reader.buffer[0..try reader.result]);
        }
    };
}

/// One splice at a time, and what it gave.
const Splicer = struct {
    completion: Completion = .{},
    result: anyerror!usize = undefined,
    done: bool = false,

    fn inCallback(splicer: *Splicer, result: sys.RecvError!usize) void {
        splicer.result = result;
        splicer.done = true;
    }

    fn outCallback(splicer: *Splicer, result: sys.SendError!usize) void {
        splicer.result = result;
        splicer.done = true;
    }
};

fn SpliceSuite(comptime mode: Loop.Mode) type {
    return struct {
        test "loop: splice moves bytes socket -> pipe -> socket, waits for them, and reads EOF as 0" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;
            var from: Pair = undefined;
            try from.open(&harness);
            defer from.close();
            var to: Pair = undefined;
            try to.open(&harness);
            defer to.close();
            const pipe = try loop.openPipe(64 * 1024);
            defer loop.closePipe(pipe);

            var sent: [20_000]u8 = undefined;
            for (&sent, 0..) |*byte, i| byte.* = @truncate(i *% 31 +% 7);
            var splicer: Splicer = .{};
            // Nothing to read yet: the splice waits for the socket (a poll or epoll wait).
            loop.spliceIn(&splicer.completion, &from.server, pipe.write, pipe.capacity, Splicer, &splicer, Splicer.inCallback);
            try harness.tickFor(5 * ms);
            try testing.expect(!splicer.done);
            try testing.expectEqual(sent.len, try sys.send(from.client.fd, &sent));

            var moved: usize = 0;
            while (moved < sent.len) {
                if (!splicer.done and !splicer.completion.isPending()) {
                    loop.spliceIn(&splicer.completion, &from.server, pipe.write, pipe.capacity, Splicer, &splicer, Splicer.inCallback);
                }
                try harness.tickUntil(&splicer.done);
                const in = try splicer.result;
                try testing.expect(in > 0);
                var out: usize = 0;
                while (out < in) {
                    splicer.done = false;
                    loop.spliceOut(&splicer.completion, &to.client, pipe.read, @intCast(in - out), Splicer, &splicer, Splicer.outCallback);
                    try harness.tickUntil(&splicer.done);
                    out += try splicer.result;
                }
                moved += in;
                splicer.done = false;
            }
            var received: [20_000]u8 = undefined;
            var got: usize = 0;
            while (got < received.len) {
                got += sys.recv(to.server.fd, received[got..]) catch |err| switch (err) {
                    error.WouldBlock => {
                        try harness.tickFor(1 * ms);
                        continue;
                    },
                    else => return err,
                };
            }
            try testing.expectEqualSlices(u8, &sent, &received);

            loop.close(&from.client);
            loop.spliceIn(&splicer.completion, &from.server, pipe.write, pipe.capacity, Splicer, &splicer, Splicer.inCallback);
            try harness.tickUntil(&splicer.done);
            try testing.expectEqual(@as(usize, 0), try splicer.result);
        }

        test "loop: a waiting splice is cancelled like any operation" {
            var harness: Harness = undefined;
            try harness.init(mode);
            defer harness.deinit();
            const loop = &harness.loop;
            var pair: Pair = undefined;
            try pair.open(&harness);
            defer pair.close();
            const pipe = try loop.openPipe(64 * 1024);
            defer loop.closePipe(pipe);
            var splicer: Splicer = .{};
            loop.spliceIn(&splicer.completion, &pair.server, pipe.write, 4096, Splicer, &splicer, Splicer.inCallback);
            try harness.tickFor(2 * ms);
            loop.cancel(&splicer.completion);
            try harness.tickUntil(&splicer.done);
            try testing.expectError(error.Canceled, splicer.result);
        }
    };
}

/// Receives once and records the outcome.
const Reader = struct {
    buffer: [64]u8 = undefined,
    result: sys.RecvError!usize = undefined,
    calls: u32 = 0,
    done: bool = false,

    fn callback(reader: *Reader, result: sys.RecvError!usize) void {
        reader.result = result;
        reader.calls += 1;
        reader.done = true;
    }
};

const Acceptor = struct {
    result: sys.AcceptError!linux.fd_t = undefined,
    calls: u32 = 0,
    done: bool = false,

    fn callback(acceptor: *Acceptor, result: sys.AcceptError!linux.fd_t) void {
        acceptor.result = result;
        acceptor.calls += 1;
        acceptor.done = true;
    }
};

const Counter = struct {
    count: u32 = 0,
    failure: ?anyerror = null,

    fn connectCallback(counter: *Counter, result: sys.ConnectError!void) void {
        result catch |err| {
            counter.failure = err;
            return;
        };
        counter.count += 1;
    }
};

const FireLog = struct {
    ids: [8]u8 = undefined,
    fired_at: [8]u64 = undefined,
    count: u32 = 0,

    const Entry = struct {
        log: *FireLog,
        id: u8,

        fn fire(entry: *Entry) void {
            const log = entry.log;
            assert(log.count < log.ids.len);
            log.ids[log.count] = entry.id;
            // Timer callbacks run after the wait returned, so now() is the firing time.
            log.fired_at[log.count] = sys.clockMonotonicNs();
            log.count += 1;
        }
    };
};
