//! The command line: `sluice [flags]`, `sluice demo [flags]`, `--help`, `--version`.
//! Flags fill the same `Config` a config file will, so quick mode and file mode share one
//! schema. A mistake yields one `Diagnostic` naming the flag; main prints it as one line and
//! exits 2, the usual code for a usage error.
const std = @import("std");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("Config.zig");
const Cidr = @import("Cidr.zig");
const units = @import("units.zig");

pub const Command = enum { run, demo, help, version };

pub const Parsed = struct {
    command: Command,
    config: Config,
};

/// What went wrong, for one line on stderr: `sluice: {flag}: {message}`.
pub const Diagnostic = struct {
    flag: []const u8 = "",
    message_buffer: [256]u8 = undefined,
    message_len: usize = 0,

    pub fn message(diagnostic: *const Diagnostic) []const u8 {
        return diagnostic.message_buffer[0..diagnostic.message_len];
    }

    fn set(diagnostic: *Diagnostic, flag: []const u8, comptime fmt: []const u8, args: anytype) error{Usage} {
        diagnostic.flag = flag;
        const text = std.fmt.bufPrint(&diagnostic.message_buffer, fmt, args) catch
            diagnostic.message_buffer[0..];
        diagnostic.message_len = text.len;
        return error.Usage;
    }
};

pub const usage =
    \\sluice: an HTTP/1.1 load balancer and reverse proxy
    \\
    \\usage:
    \\  sluice [--listen ADDR] --backend ADDR [--backend ADDR ...] [options]
    \\  sluice demo [--listen ADDR] [options]   two built-in backends behind the proxy
    \\  sluice --help | --version
    \\
    \\addresses: IP:PORT, [IPv6]:PORT, :PORT (all interfaces), localhost:PORT
    \\durations: 500ms, 10s, 2m (a bare number is ms); sizes: 4096, 16KiB, 1MiB
    \\
    \\options:
    \\  --listen ADDR                     where clients connect (default :8080)
    \\  --backend ADDR                    a backend, repeatable, round robin between them
    \\  --workers N                       worker threads (default: one per CPU)
    \\  --io auto|uring|epoll             event loop backend (default auto: io_uring,
    \\                                    falling back to epoll when unavailable)
    \\  --max-connections N               client connections, all workers (default 4096)
    \\  --header-bytes-max SIZE           request head size limit (default 16KiB) -> 431
    \\  --headers-count-max N             request header field limit (default 100) -> 431
    \\  --target-bytes-max SIZE           request-target limit (default 8KiB) -> 414
    \\  --client-header-timeout DUR       time to receive a request head (default 10s) -> 408
    \\  --client-idle-timeout DUR         keep-alive idle and body gaps (default 60s)
    \\  --upstream-connect-timeout DUR    backend connect (default 5s) -> 504
    \\  --upstream-response-timeout DUR   backend response and body gaps (default 60s) -> 504
    \\  --upstream-idle-timeout DUR       pooled idle backend connections (default 30s)
    \\  --upstream-keepalive N            idle backend connections kept per backend and
    \\                                    worker (default 64)
    \\  --drain-timeout DUR               SIGTERM/SIGINT drain deadline (default 10s)
    \\  --trusted-proxy CIDR              peers whose X-Forwarded-For is kept and appended
    \\                                    to (repeatable; default none: always replaced)
    \\
;

const Flag = enum {
    listen,
    backend,
    workers,
    io,
    max_connections,
    header_bytes_max,
    headers_count_max,
    target_bytes_max,
    client_header_timeout,
    client_idle_timeout,
    upstream_connect_timeout,
    upstream_response_timeout,
    upstream_idle_timeout,
    upstream_keepalive,
    drain_timeout,
    trusted_proxy,
};

const flag_names = std.StaticStringMap(Flag).initComptime(.{
    .{ "--listen", .listen },
    .{ "--backend", .backend },
    .{ "--workers", .workers },
    .{ "--io", .io },
    .{ "--max-connections", .max_connections },
    .{ "--header-bytes-max", .header_bytes_max },
    .{ "--headers-count-max", .headers_count_max },
    .{ "--target-bytes-max", .target_bytes_max },
    .{ "--client-header-timeout", .client_header_timeout },
    .{ "--client-idle-timeout", .client_idle_timeout },
    .{ "--upstream-connect-timeout", .upstream_connect_timeout },
    .{ "--upstream-response-timeout", .upstream_response_timeout },
    .{ "--upstream-idle-timeout", .upstream_idle_timeout },
    .{ "--upstream-keepalive", .upstream_keepalive },
    .{ "--drain-timeout", .drain_timeout },
    .{ "--trusted-proxy", .trusted_proxy },
});

/// `args` excludes argv[0].
pub fn parse(args: []const []const u8, diagnostic: *Diagnostic) error{Usage}!Parsed {
    var parsed: Parsed = .{ .command = .run, .config = .{} };
    // --help and --version answer even when other arguments are wrong.
    for (args) |arg| {
        if (std.mem.eql(u8, arg, "--help") or std.mem.eql(u8, arg, "-h")) {
            parsed.command = .help;
            return parsed;
        }
        if (std.mem.eql(u8, arg, "--version")) {
            parsed.command = .version;
            return parsed;
        }
    }
    var i: usize = 0;
    if (args.len > 0 and std.mem.eql(u8, args[0], "demo")) {
        parsed.command = .demo;
        i = 1;
    }
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        const eq = std.mem.indexOfScalar(u8, arg, '=');
        const name = if (eq) |e| arg[0..e] else arg;
        const flag = flag_names.get(name) orelse {
            if (!std.mem.startsWith(u8, arg, "-")) {
                return diagnostic.set(arg, "unexpected argument (see --help)", .{});
            }
            return diagnostic.set(name, "unknown flag (see --help)", .{});
        };
        const value = if (eq) |e| arg[e + 1 ..] else blk: {
            i += 1;
            if (i == args.len) return diagnostic.set(name, "missing value", .{});
            break :blk args[i];
        };
        try apply(&parsed.config, flag, name, value, diagnostic);
    }
    if (parsed.command == .run and parsed.config.backends_count == 0) {
        return diagnostic.set("--backend", "at least one backend is required (or try `sluice demo`)", .{});
    }
    if (parsed.config.target_bytes_max >= parsed.config.header_bytes_max) {
        return diagnostic.set("--target-bytes-max", "must be smaller than --header-bytes-max", .{});
    }
    return parsed;
}

fn apply(config: *Config, flag: Flag, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (flag) {
        .listen => config.listen = try parseAddress(name, value, diagnostic),
        .backend => config.addBackend(try parseAddress(name, value, diagnostic)) catch
            return diagnostic.set(name, "more than {d} backends", .{Config.backends_count_max}),
        .workers => config.workers_count = try parseCount(u32, name, value, 1, Config.workers_count_max, diagnostic),
        .io => config.io = std.meta.stringToEnum(Config.IoMode, value) orelse
            return diagnostic.set(name, "invalid value \"{s}\": expected auto, uring or epoll", .{value}),
        .max_connections => config.connections_max = try parseCount(u32, name, value, 1, 1 << 20, diagnostic),
        .header_bytes_max => config.header_bytes_max = try parseSize(name, value, 1024, 1024 * 1024, diagnostic),
        .headers_count_max => config.headers_count_max = try parseCount(u16, name, value, 8, 1024, diagnostic),
        .target_bytes_max => config.target_bytes_max = try parseSize(name, value, 64, 1024 * 1024, diagnostic),
        .client_header_timeout => config.client_header_timeout_ns = try parseDuration(name, value, diagnostic),
        .client_idle_timeout => config.client_idle_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_connect_timeout => config.upstream_connect_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_response_timeout => config.upstream_response_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_idle_timeout => config.upstream_idle_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_keepalive => config.upstream_keepalive_max = try parseCount(u32, name, value, 0, 4096, diagnostic),
        .drain_timeout => config.drain_timeout_ns = try parseDuration(name, value, diagnostic),
        .trusted_proxy => {
            const cidr = Cidr.parse(value) catch
                return diagnostic.set(name, "invalid value \"{s}\": expected ADDRESS or ADDRESS/BITS", .{value});
            config.addTrustedProxy(cidr) catch
                return diagnostic.set(name, "more than {d} trusted proxies", .{Config.trusted_proxies_count_max});
        },
    }
}

fn parseAddress(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Address {
    return Address.parse(value) catch |err| switch (err) {
        error.MissingPort, error.InvalidPort => diagnostic.set(name, "invalid address \"{s}\": expected HOST:PORT with a port from 0 to 65535", .{value}),
        error.InvalidHost => diagnostic.set(name, "invalid address \"{s}\": expected HOST:PORT where HOST is an IP address or localhost", .{value}),
    };
}

fn parseCount(comptime T: type, name: []const u8, value: []const u8, min: T, max: T, diagnostic: *Diagnostic) error{Usage}!T {
    const n = std.fmt.parseInt(T, value, 10) catch
        return diagnostic.set(name, "invalid value \"{s}\": expected a whole number from {d} to {d}", .{ value, min, max });
    if (n < min or n > max) {
        return diagnostic.set(name, "invalid value \"{s}\": expected a whole number from {d} to {d}", .{ value, min, max });
    }
    return n;
}

fn parseSize(name: []const u8, value: []const u8, min: u32, max: u32, diagnostic: *Diagnostic) error{Usage}!u32 {
    const bytes = units.parseBytes(value) catch
        return diagnostic.set(name, "invalid size \"{s}\": expected bytes, or a number with KiB or MiB", .{value});
    if (bytes < min or bytes > max) {
        return diagnostic.set(name, "invalid size \"{s}\": expected from {d} to {d} bytes", .{ value, min, max });
    }
    return @intCast(bytes);
}

fn parseDuration(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!u64 {
    const ns = units.parseDurationNs(value) catch
        return diagnostic.set(name, "invalid duration \"{s}\": expected e.g. 500ms, 10s or 2m", .{value});
    if (ns == 0) return diagnostic.set(name, "invalid duration \"{s}\": must be more than zero", .{value});
    return ns;
}

test "cli: quick mode fills the config" {
    var diagnostic: Diagnostic = .{};
    const parsed = try parse(&.{
        "--listen",  "127.0.0.1:0",     "--backend=127.0.0.1:9001",
        "--backend", "[::1]:9002",      "--workers",
        "2",         "--io=epoll",      "--client-header-timeout",
        "1500ms",    "--trusted-proxy", "10.0.0.0/8",
    }, &diagnostic);
    try std.testing.expectEqual(Command.run, parsed.command);
    try std.testing.expectEqual(@as(u32, 2), parsed.config.backends_count);
    try std.testing.expectEqual(@as(u32, 2), parsed.config.workers_count);
    try std.testing.expectEqual(Config.IoMode.epoll, parsed.config.io);
    try std.testing.expectEqual(@as(u64, 1500 * std.time.ns_per_ms), parsed.config.client_header_timeout_ns);
    try std.testing.expectEqual(@as(u32, 1), parsed.config.trusted_proxies_count);
    try parsed.config.validate();
}

test "cli: each mistake names its flag" {
    const cases = [_]struct { args: []const []const u8, flag: []const u8 }{
        .{ .args = &.{}, .flag = "--backend" },
        .{ .args = &.{ "--backend", "nonsense" }, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--listen", "999.1.1.1:80" }, .flag = "--listen" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--workers", "0" }, .flag = "--workers" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--io", "bogus" }, .flag = "--io" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--bogus" }, .flag = "--bogus" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--drain-timeout", "0s" }, .flag = "--drain-timeout" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--header-bytes-max", "1MB" }, .flag = "--header-bytes-max" },
        .{ .args = &.{"--backend"}, .flag = "--backend" },
    };
    for (cases) |case| {
        var diagnostic: Diagnostic = .{};
        try std.testing.expectError(error.Usage, parse(case.args, &diagnostic));
        try std.testing.expectEqualStrings(case.flag, diagnostic.flag);
        try std.testing.expect(diagnostic.message().len > 0);
    }
}

test "cli: demo needs no backend; help and version win" {
    var diagnostic: Diagnostic = .{};
    try std.testing.expectEqual(Command.demo, (try parse(&.{"demo"}, &diagnostic)).command);
    try std.testing.expectEqual(Command.help, (try parse(&.{ "--bogus=1", "--help" }, &diagnostic)).command);
}
