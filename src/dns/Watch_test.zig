//! Watch's tests: a real resolver on a real loop (each I/O backend) asking the DNS server of
//! Resolver_test.zig on loopback, whose answers change with every query (api.test: A 10.0.0.N
//! and AAAA ::N, N counting the queries, TTL 30 s; missing.test: NXDOMAIN).
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;
const testing = std.testing;

const loop_namespace = @import("../loop/loop.zig");
const Loop = loop_namespace.Loop;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Server = @import("Resolver_test.zig").Server;
const Resolver = @import("Resolver.zig");
const ResolvConf = @import("ResolvConf.zig");
const Hosts = @import("Hosts.zig");
const Watch = @import("Watch.zig");
const text_file = @import("text_file.zig");

const ms = std.time.ns_per_ms;

fn Harness(comptime mode: Loop.Mode) type {
    return struct {
        loop: Loop,
        server: Server,
        resolver: Resolver,
        slots: [2]Resolver.Slot,
        watch: Watch,
        entries: [2]Watch.Entry,
        reports: [64]Watch.Report,
        reports_count: u32,

        const Self = @This();

        /// In place: nothing here may move. TTLs are held 30 ms (floor and ceiling), a failure
        /// is retried after 30 ms.
        fn init(harness: *Self, names: []const Watch.Name, hosts: ?Hosts) !void {
            try harness.server.start(.normal);
            errdefer harness.server.stopAndJoin();
            var diagnostic: text_file.Diagnostic = .{};
            var conf = try ResolvConf.parse("", "resolv.conf", &diagnostic);
            conf.attempts = 1;
            conf.nameservers[0] = harness.server.address();
            conf.nameservers_count = 1;
            harness.loop = Loop.init(.{ .mode = mode, .entries = 16 }) catch |err| switch (mode) {
                .uring => return error.SkipZigTest, // No io_uring here: the epoll run covers it.
                else => return err,
            };
            harness.reports_count = 0;
            harness.resolver.init(&harness.loop, conf, hosts, &harness.slots, .{ .try_timeout_ns = 1000 * ms });
            try harness.watch.init(&harness.loop, &harness.resolver, names, harness.entries[0..names.len], .{
                .ttl_floor_ns = 30 * ms,
                .ttl_ceiling_ns = 30 * ms,
                .retry_ns = 30 * ms,
                .tick_ns = 10 * ms,
            }, Self, harness, reported);
        }

        fn deinit(harness: *Self) void {
            harness.watch.stop();
            const deadline_ns = sys.clockMonotonicNs() + 5000 * ms;
            while (!harness.watch.idle() and sys.clockMonotonicNs() < deadline_ns) harness.loop.tick() catch break;
            harness.watch.deinit();
            harness.resolver.deinit();
            harness.loop.deinit();
            harness.server.stopAndJoin();
        }

        fn reported(harness: *Self, report: Watch.Report) void {
            harness.reports[harness.reports_count] = report;
            harness.reports_count += 1;
        }

        /// Ticks the loop until entry `index` has ended `count` resolutions.
        fn runUntil(harness: *Self, index: u32, count: u64) !void {
            const deadline_ns = sys.clockMonotonicNs() + 5000 * ms;
            while (harness.entries[index].resolutions < count) {
                if (sys.clockMonotonicNs() > deadline_ns) return error.TestTimedOut;
                try harness.loop.tick();
            }
        }
    };
}

fn Suite(comptime mode: Loop.Mode) type {
    return struct {
        test "watch: a name's A and AAAA answers are its set, and each change is reported once" {
            var harness: Harness(mode) = undefined;
            try harness.init(&.{.{ .name = "api.test", .port = 8080 }}, null);
            defer harness.deinit();

            try harness.runUntil(0, 1);
            const entry = &harness.entries[0];
            try testing.expect(harness.watch.settled());
            try testing.expectEqual(Watch.State.resolved, entry.state);
            try testing.expectEqual(@as(u32, 30), entry.ttl_s);
            try testing.expect(entry.everResolved());
            // Query 1 asked A, query 2 AAAA.
            try testing.expectEqual(@as(usize, 2), entry.slice().len);
            try testing.expect(entry.slice()[0].eql(&Address.initIp4(.{ 10, 0, 0, 1 }, 8080)));
            var v6: [16]u8 = @splat(0);
            v6[15] = 2;
            try testing.expect(entry.slice()[1].eql(&Address.initIp6(v6, 8080)));
            try testing.expectEqual(@as(u32, 1), harness.reports_count);
            try testing.expect(harness.reports[0].set_changed and harness.reports[0].state_changed);
            try testing.expectEqual(Watch.State.pending, harness.reports[0].previous);

            // Asked again when the held TTL ran out; every answer differs, the state does not.
            try harness.runUntil(0, 3);
            try testing.expect(entry.slice()[0].eql(&Address.initIp4(.{ 10, 0, 0, 5 }, 8080)));
            try testing.expectEqual(@as(u32, 3), harness.reports_count);
            for (harness.reports[1..3]) |report| {
                try testing.expect(report.set_changed and !report.state_changed);
            }
            try testing.expectEqual(@as(u64, 0), entry.failures);
            try testing.expectEqual(@as(u32, 6), harness.server.queries.load(.monotonic));
        }

        test "watch: a failure keeps the last good set, is counted, and is reported once per change of state" {
            var harness: Harness(mode) = undefined;
            try harness.init(&.{ .{ .name = "api.test", .port = 80 }, .{ .name = "missing.test", .port = 80 } }, null);
            defer harness.deinit();

            try harness.runUntil(0, 1);
            try harness.runUntil(1, 1);
            const missing = &harness.entries[1];
            try testing.expectEqual(Watch.State.not_found, missing.state);
            try testing.expect(!missing.everResolved());
            try testing.expectEqual(@as(usize, 0), missing.slice().len);
            try testing.expectEqual(Resolver.Failure.not_found, missing.last_failure.?);

            harness.server.failing.store(true, .monotonic);
            const before = harness.reports_count;
            const entry = &harness.entries[0];
            // The first may have been in flight (its A answered) when the server began failing.
            try harness.runUntil(0, entry.resolutions + 2);
            try testing.expectEqual(Watch.State.failing, entry.state);
            try testing.expectEqual(Resolver.Failure.servers_failed, entry.last_failure.?);
            const kept = entry.slice()[0];
            const failures = entry.failures;
            try harness.runUntil(0, entry.resolutions + 2);
            try testing.expectEqual(failures + 2, entry.failures);
            try testing.expect(entry.slice()[0].eql(&kept));
            try testing.expect(entry.everResolved());

            harness.server.failing.store(false, .monotonic);
            try harness.runUntil(0, entry.resolutions + 1);
            try testing.expectEqual(Watch.State.resolved, entry.state);
            try testing.expect(!entry.slice()[0].eql(&kept));
            // api.test's changes of state since the server began failing: resolved → failing
            // once, however many tries failed, then failing → resolved. missing.test's reports
            // are all changes of state (NXDOMAIN, then SERVFAIL, then NXDOMAIN), never of a set.
            var api_state_reports: u32 = 0;
            for (harness.reports[before..harness.reports_count]) |report| {
                if (report.index != 0) {
                    try testing.expect(report.state_changed and !report.set_changed);
                    continue;
                }
                api_state_reports += @intFromBool(report.state_changed);
            }
            try testing.expectEqual(@as(u32, 2), api_state_reports);
            try testing.expect(missing.failures >= 3);
        }

        test "watch: /etc/hosts answers for a name, and DNS is not asked" {
            var diagnostic: text_file.Diagnostic = .{};
            const hosts = try Hosts.parse("192.0.2.7 pinned.test\n", "h", &diagnostic);
            var harness: Harness(mode) = undefined;
            try harness.init(&.{.{ .name = "pinned.test", .port = 9000 }}, hosts);
            defer harness.deinit();

            try harness.runUntil(0, 2);
            try testing.expectEqual(@as(usize, 1), harness.entries[0].slice().len);
            try testing.expect(harness.entries[0].slice()[0].eql(&Address.initIp4(.{ 192, 0, 2, 7 }, 9000)));
            try testing.expectEqual(@as(u32, 0), harness.server.queries.load(.monotonic));
            try testing.expectEqual(@as(u32, 1), harness.reports_count);
        }
    };
}

comptime {
    _ = Suite(.epoll);
    _ = Suite(.uring);
}

test "watch: a TTL is held between the floor and the ceiling" {
    var watch: Watch = undefined;
    watch.options = .{ .ttl_floor_ns = 5 * std.time.ns_per_s, .ttl_ceiling_ns = 60 * std.time.ns_per_s };
    try testing.expectEqual(5 * std.time.ns_per_s, watch.holdNs(0));
    try testing.expectEqual(30 * std.time.ns_per_s, watch.holdNs(30));
    try testing.expectEqual(60 * std.time.ns_per_s, watch.holdNs(86400));
    try testing.expectEqual(60 * std.time.ns_per_s, watch.holdNs(std.math.maxInt(u32)));
}

test "watch: the invalid name is refused" {
    var loop: Loop = try .init(.{ .mode = .epoll, .entries = 4 });
    defer loop.deinit();
    var watch: Watch = undefined;
    var entries: [1]Watch.Entry = undefined;
    const Context = struct {
        fn report(_: *@This(), _: Watch.Report) void {}
    };
    var context: Context = .{};
    try testing.expectError(error.NameInvalid, watch.init(&loop, undefined, &.{.{ .name = "a..b", .port = 1 }}, &entries, .{}, Context, &context, Context.report));
}
