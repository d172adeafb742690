//! Tests of Resolver.zig against DNS servers written for them: each runs on a thread, UDP and
//! TCP on one loopback port, and answers from a script whose answers change between queries.
//! Every test runs once per I/O backend.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;
const testing = std.testing;

const loop_namespace = @import("../loop/loop.zig");
const Loop = loop_namespace.Loop;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const message = @import("message.zig");
const ReplyWriter = @import("message_test.zig").ReplyWriter;
const Resolver = @import("Resolver.zig");
const ResolvConf = @import("ResolvConf.zig");
const Hosts = @import("Hosts.zig");
const text_file = @import("text_file.zig");

const ms = std.time.ns_per_ms;

/// What a server does with every query.
pub const Script = enum {
    /// api.test: A 10.0.0.N (N counts the queries) TTL 30, AAAA ::N; www.test: a CNAME to
    /// api.test then its A; missing.test: NXDOMAIN; slow.test: the first query dropped;
    /// big.test: truncated over UDP, three records over TCP; spoof.test: a reply with a wrong
    /// ID and one from another socket before the real one.
    normal,
    servfail,
};

/// Also used by Watch_test.zig.
pub const Server = struct {
    udp_fd: linux.fd_t,
    tcp_fd: linux.fd_t,
    /// A second UDP socket, to send replies from the wrong source port.
    other_fd: linux.fd_t,
    port: u16,
    script: Script,
    queries: std.atomic.Value(u32) = .init(0),
    tcp_queries: std.atomic.Value(u32) = .init(0),
    stop: std.atomic.Value(bool) = .init(false),
    /// While set, every query is answered SERVFAIL (a server that starts failing).
    failing: std.atomic.Value(bool) = .init(false),
    thread: std.Thread = undefined,

    pub fn start(server: *Server, script: Script) !void {
        // UDP on port 0, then TCP on the same number, which may be taken: a few tries.
        var tries: u32 = 0;
        const udp_fd, const port, const tcp_fd = while (true) : (tries += 1) {
            const udp_fd = try socketBound(linux.SOCK.DGRAM, 0);
            var bound: Address = undefined;
            var len: linux.socklen_t = @sizeOf(Address);
            _ = linux.getsockname(udp_fd, &bound.any, &len);
            const port = bound.getPort();
            const tcp_fd = socketBound(linux.SOCK.STREAM, port) catch |err| {
                _ = linux.close(udp_fd);
                if (tries == 10) return err;
                continue;
            };
            break .{ udp_fd, port, tcp_fd };
        };
        if (linux.errno(linux.listen(tcp_fd, 8)) != .SUCCESS) return error.Listen;
        server.* = .{
            .udp_fd = udp_fd,
            .tcp_fd = tcp_fd,
            .other_fd = try socketBound(linux.SOCK.DGRAM, 0),
            .port = port,
            .script = script,
        };
        server.thread = try std.Thread.spawn(.{}, run, .{server});
    }

    pub fn stopAndJoin(server: *Server) void {
        server.stop.store(true, .release);
        server.thread.join();
        for ([_]linux.fd_t{ server.udp_fd, server.tcp_fd, server.other_fd }) |fd| _ = linux.close(fd);
    }

    pub fn address(server: *const Server) Address {
        return Address.initIp4(.{ 127, 0, 0, 1 }, server.port);
    }

    fn socketBound(kind: u32, port: u16) !linux.fd_t {
        const rc = linux.socket(linux.AF.INET, kind | linux.SOCK.CLOEXEC, 0);
        if (linux.errno(rc) != .SUCCESS) return error.Socket;
        const fd: linux.fd_t = @intCast(rc);
        const one: u32 = 1;
        _ = linux.setsockopt(fd, linux.SOL.SOCKET, linux.SO.REUSEADDR, std.mem.asBytes(&one), 4);
        const address_bound = Address.initIp4(.{ 127, 0, 0, 1 }, port);
        if (linux.errno(linux.bind(fd, address_bound.sockaddr(), address_bound.socklen())) != .SUCCESS) {
            _ = linux.close(fd);
            return error.Bind;
        }
        return fd;
    }

    fn run(server: *Server) void {
        while (!server.stop.load(.acquire)) {
            var fds = [_]linux.pollfd{
                .{ .fd = server.udp_fd, .events = linux.POLL.IN, .revents = 0 },
                .{ .fd = server.tcp_fd, .events = linux.POLL.IN, .revents = 0 },
            };
            _ = linux.poll(&fds, fds.len, 20);
            if (fds[0].revents != 0) server.serveUdp();
            if (fds[1].revents != 0) server.serveTcp();
        }
    }

    fn serveUdp(server: *Server) void {
        var query: [512]u8 = undefined;
        var peer: Address = undefined;
        var peer_len: linux.socklen_t = @sizeOf(Address);
        const rc = linux.recvfrom(server.udp_fd, &query, query.len, 0, &peer.any, &peer_len);
        if (linux.errno(rc) != .SUCCESS) return;
        const count = server.queries.fetchAdd(1, .monotonic) + 1;
        var w: ReplyWriter = .{};
        const name = server.answer(query[0..rc], count, false, &w) orelse return;
        if (std.mem.eql(u8, name, "spoof.test")) {
            // A wrong ID from the right source, then the right ID from the wrong source.
            var wrong = w;
            wrong.bytes[0] ^= 0xff;
            sendTo(server.udp_fd, wrong.slice(), &peer);
            var other = w;
            other.bytes[other.len - 1] = 66; // Its address ends in .66.
            sendTo(server.other_fd, other.slice(), &peer);
        }
        sendTo(server.udp_fd, w.slice(), &peer);
    }

    fn sendTo(fd: linux.fd_t, bytes: []const u8, peer: *const Address) void {
        _ = linux.sendto(fd, bytes.ptr, bytes.len, 0, peer.sockaddr(), peer.socklen());
    }

    fn serveTcp(server: *Server) void {
        const rc = linux.accept4(server.tcp_fd, null, null, linux.SOCK.CLOEXEC);
        if (linux.errno(rc) != .SUCCESS) return;
        const fd: linux.fd_t = @intCast(rc);
        defer _ = linux.close(fd);
        var query: [600]u8 = undefined;
        var len: usize = 0;
        while (len < 2 or len < 2 + @as(usize, std.mem.readInt(u16, query[0..2], .big))) {
            const n = linux.read(fd, query[len..].ptr, query.len - len);
            if (linux.errno(n) != .SUCCESS or n == 0) return;
            len += n;
        }
        _ = server.tcp_queries.fetchAdd(1, .monotonic);
        const count = server.queries.fetchAdd(1, .monotonic) + 1;
        var w: ReplyWriter = .{};
        w.len = 2;
        _ = server.answer(query[2..len], count, true, &w) orelse return;
        std.mem.writeInt(u16, w.bytes[0..2], @intCast(w.len - 2), .big);
        _ = linux.write(fd, w.slice().ptr, w.len);
    }

    /// Writes the reply to `query` into `w` and returns the asked name, or null to drop it.
    fn answer(server: *Server, query: []const u8, count: u32, tcp: bool, w: *ReplyWriter) ?[]const u8 {
        const message_start = w.len;
        var asked: message.Name = .{};
        const question_end = (message.readName(query, 12, &asked) catch return null) + 4;
        if (query.len < question_end) return null;
        const kind = std.mem.readInt(u16, query[question_end - 4 ..][0..2], .big);
        const id = std.mem.readInt(u16, query[0..2], .big);
        const name = asked.slice();
        const Reply = struct { rcode: u16 = 0, tc: bool = false, answers: u16 = 0 };
        var reply: Reply = .{};
        if (server.script == .servfail or server.failing.load(.monotonic)) {
            reply.rcode = 2;
        } else if (std.mem.eql(u8, name, "missing.test")) {
            reply.rcode = 3;
        } else if (std.mem.eql(u8, name, "slow.test") and count == 1) {
            return null;
        } else if (std.mem.eql(u8, name, "big.test") and !tcp) {
            reply.tc = true;
        } else if (std.mem.eql(u8, name, "www.test")) {
            reply.answers = 2;
        } else if (std.mem.eql(u8, name, "big.test")) {
            reply.answers = 3;
        } else if (std.mem.endsWith(u8, name, ".test")) {
            reply.answers = 1;
        }
        w.header(id, 0x8180 | reply.rcode | @as(u16, if (reply.tc) 0x0200 else 0), .{ 1, reply.answers, 0, 0 });
        w.raw(query[12..question_end]);
        if (std.mem.eql(u8, name, "www.test")) {
            w.pointer(12);
            w.fixed(5, 1, 10, 6); // CNAME www.test → api.test, TTL 10.
            const target_at: u16 = @intCast(w.len - message_start);
            w.raw(&.{ 3, 'a', 'p', 'i', 0xc0, 12 + 4 }); // "api" and the question's "test".
            w.pointer(target_at);
            w.fixed(1, 1, 30, 4);
            w.raw(&.{ 10, 0, 0, @intCast(count) });
            return name;
        }
        for (0..reply.answers) |index| {
            w.pointer(12);
            if (kind == 33) {
                // Priority 1, weight N, port 8080, target "node" plus the question's last
                // label ("test").
                w.fixed(33, 1, 30, 6 + 5 + 2);
                w.raw(&.{ 0, 1, 0, @intCast(count), 0x1f, 0x90, 4, 'n', 'o', 'd', 'e' });
                // The question ends "4 test 0", then type and class: its "test" is 10 back.
                w.pointer(@intCast(question_end - 10));
            } else if (kind == 28) {
                w.fixed(28, 1, 30, 16);
                const zeros: [16]u8 = @splat(0);
                w.raw(&zeros);
                w.bytes[w.len - 1] = @intCast(count);
            } else {
                w.fixed(1, 1, 30, 4);
                w.raw(&.{ 10, 0, @intCast(index), @intCast(count) });
            }
        }
        return name;
    }
};

/// A loop of one backend, a resolver on it, and what its callbacks saw.
fn Harness(comptime mode: Loop.Mode) type {
    return struct {
        loop: Loop,
        resolver: Resolver,
        slots: [2]Resolver.Slot,
        servers: [2]Server,
        servers_count: u8,
        reply: message.Reply,
        outcome: ?Resolver.Outcome,

        const Self = @This();

        const Setup = struct {
            /// One server per script, asked in this order.
            scripts: []const Script = &.{.normal},
            attempts: u8 = 2,
            try_timeout_ns: u64 = 1000 * ms,
            /// resolv.conf lines added (search, options).
            conf_lines: []const u8 = "",
            hosts: ?Hosts = null,
            /// A first nameserver whose port is closed: its tries end in ECONNREFUSED.
            closed_first: bool = false,
        };

        /// In place: the servers, the loop and the resolver must not move.
        fn init(harness: *Self, setup: Setup) !void {
            assert(setup.scripts.len <= harness.servers.len);
            harness.servers_count = 0;
            errdefer harness.stopServers();
            for (setup.scripts, 0..) |script, index| {
                try harness.servers[index].start(script);
                harness.servers_count += 1;
            }
            var diagnostic: text_file.Diagnostic = .{};
            var conf = try ResolvConf.parse(setup.conf_lines, "resolv.conf", &diagnostic);
            conf.attempts = setup.attempts;
            conf.nameservers_count = 0;
            if (setup.closed_first) {
                conf.nameservers[0] = try closedPort();
                conf.nameservers_count = 1;
            }
            for (harness.servers[0..harness.servers_count]) |*server| {
                conf.nameservers[conf.nameservers_count] = server.address();
                conf.nameservers_count += 1;
            }
            harness.loop = Loop.init(.{ .mode = mode, .entries = 16 }) catch |err| switch (mode) {
                .uring => return error.SkipZigTest, // No io_uring here: the epoll run covers it.
                else => return err,
            };
            harness.outcome = null;
            const options: Resolver.Options = .{ .try_timeout_ns = setup.try_timeout_ns };
            harness.resolver.init(&harness.loop, conf, setup.hosts, &harness.slots, options);
        }

        fn deinit(harness: *Self) void {
            harness.resolver.deinit();
            harness.loop.deinit();
            harness.stopServers();
        }

        fn stopServers(harness: *Self) void {
            for (harness.servers[0..harness.servers_count]) |*server| server.stopAndJoin();
        }

        fn queries(harness: *const Self, server: u8) u32 {
            return harness.servers[server].queries.load(.monotonic);
        }

        fn resolve(harness: *Self, name: []const u8, kind: message.Kind) !Resolver.Outcome {
            harness.outcome = null;
            const started = try harness.resolver.resolve(name, kind, &harness.reply, Self, harness, resolved);
            if (started == .from_hosts) return .answer;
            const deadline_ns = sys.clockMonotonicNs() + 5000 * ms;
            while (harness.outcome == null) {
                if (sys.clockMonotonicNs() > deadline_ns) return error.TestTimedOut;
                try harness.loop.tick();
            }
            return harness.outcome.?;
        }

        fn resolved(harness: *Self, outcome: Resolver.Outcome) void {
            assert(harness.outcome == null);
            harness.outcome = outcome;
        }

        fn firstA(harness: *const Self) [4]u8 {
            return harness.reply.records[0].a;
        }
    };
}

/// The address of a UDP port that was just bound and closed again: nobody listens there.
fn closedPort() !Address {
    const fd = try Server.socketBound(linux.SOCK.DGRAM, 0);
    defer _ = linux.close(fd);
    var bound: Address = undefined;
    var len: linux.socklen_t = @sizeOf(Address);
    _ = linux.getsockname(fd, &bound.any, &len);
    return bound;
}

fn Suite(comptime mode: Loop.Mode) type {
    return struct {
        test "resolver: A and AAAA answers, which change between queries, with their TTL" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{});
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("api.test", .a));
            try testing.expectEqual([4]u8{ 10, 0, 0, 1 }, harness.firstA());
            try testing.expectEqual(@as(u32, 30), harness.reply.ttl_s);
            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("api.test.", .a));
            try testing.expectEqual([4]u8{ 10, 0, 0, 2 }, harness.firstA());
            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("api.test", .aaaa));
            try testing.expectEqual(@as(u8, 3), harness.reply.records[0].aaaa[15]);
        }

        test "resolver: SRV answers give priority, weight, port and target" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{});
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("_http._tcp.api.test", .srv));
            const srv = harness.reply.records[0].srv;
            try testing.expectEqual(@as(u16, 1), srv.priority);
            try testing.expectEqual(@as(u16, 1), srv.weight);
            try testing.expectEqual(@as(u16, 8080), srv.port);
            try testing.expectEqualStrings("node.test", srv.target.slice());
            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("_http._tcp.api.test", .srv));
            try testing.expectEqual(@as(u16, 2), harness.reply.records[0].srv.weight);
        }

        test "resolver: a CNAME chain gives the target's addresses and the smallest TTL" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{});
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("www.test", .a));
            try testing.expectEqualStrings("api.test", harness.reply.canonical.slice());
            try testing.expectEqual([4]u8{ 10, 0, 0, 1 }, harness.firstA());
            try testing.expectEqual(@as(u32, 10), harness.reply.ttl_s);
        }

        test "resolver: NXDOMAIN is not found, asked once; SERVFAIL moves to the next server" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{ .scripts = &.{ .servfail, .normal } });
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("api.test", .a));
            try testing.expectEqual(@as(u32, 1), harness.queries(0));
            try testing.expectEqual([4]u8{ 10, 0, 0, 1 }, harness.firstA());

            const missing = try harness.resolve("missing.test", .a);
            try testing.expectEqual(Resolver.Outcome{ .failure = .not_found }, missing);
            try testing.expectEqual(@as(u32, 2), harness.queries(1));
        }

        test "resolver: when every server fails every attempt, the failure says so" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{ .scripts = &.{.servfail}, .attempts = 3 });
            defer harness.deinit();

            const outcome = try harness.resolve("api.test", .a);
            try testing.expectEqual(Resolver.Outcome{ .failure = .servers_failed }, outcome);
            try testing.expectEqual(@as(u32, 3), harness.queries(0));
        }

        test "resolver: a server whose port is closed fails at once, not at the timeout" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{ .closed_first = true, .try_timeout_ns = 3000 * ms });
            defer harness.deinit();

            const start_ns = sys.clockMonotonicNs();
            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("api.test", .a));
            try testing.expect(sys.clockMonotonicNs() - start_ns < 1000 * ms);
            try testing.expectEqual(@as(u32, 1), harness.queries(0));
        }

        test "resolver: a try that times out is tried again" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{ .try_timeout_ns = 100 * ms });
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("slow.test", .a));
            try testing.expectEqual(@as(u32, 2), harness.queries(0));
            try testing.expectEqual([4]u8{ 10, 0, 0, 2 }, harness.firstA());
        }

        test "resolver: a truncated UDP answer is asked again over TCP" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{});
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("big.test", .a));
            try testing.expectEqual(@as(u8, 3), harness.reply.records_count);
            try testing.expectEqual(@as(u32, 1), harness.servers[0].tcp_queries.load(.monotonic));
        }

        test "resolver: replies with a wrong ID or from another port are ignored" {
            var harness: Harness(mode) = undefined;
            try harness.init(.{ .attempts = 1 });
            defer harness.deinit();

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("spoof.test", .a));
            try testing.expectEqual([4]u8{ 10, 0, 0, 1 }, harness.firstA());
            try testing.expectEqual(@as(u8, 1), harness.reply.records_count);
        }

        test "resolver: the search list, ndots, and /etc/hosts first" {
            var diagnostic: text_file.Diagnostic = .{};
            const hosts = try Hosts.parse("192.0.2.7 pinned.test\n", "h", &diagnostic);
            var harness: Harness(mode) = undefined;
            try harness.init(.{ .attempts = 1, .conf_lines = "search none.example test\n", .hosts = hosts });
            defer harness.deinit();

            // No dot: "api.none.example" (refused: not .test), then "api.test".
            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("api", .a));
            try testing.expectEqualStrings("api.test", harness.reply.canonical.slice());
            try testing.expectEqual(@as(u32, 2), harness.queries(0));

            try testing.expectEqual(Resolver.Outcome.answer, try harness.resolve("pinned.test", .a));
            try testing.expectEqual([4]u8{ 192, 0, 2, 7 }, harness.firstA());
            try testing.expectEqual(@as(u32, 2), harness.queries(0));

            try testing.expectError(error.NameInvalid, harness.resolve("a..b", .a));
        }
    };
}

comptime {
    _ = Suite(.epoll);
    _ = Suite(.uring);
}

test "resolver: the sizes of a slot and a reply, which the caller provides" {
    // docs/ARCHITECTURE.md "DNS" states them: a change here is a decision to write down there.
    try testing.expectEqual(9312, @sizeOf(Resolver.Slot));
    try testing.expectEqual(8652, @sizeOf(message.Reply));
}
