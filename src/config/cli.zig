//! The command line: `sluice [flags]`, `sluice demo [flags]`, `sluice check FILE`,
//! `sluice reload`, `--help`, `--version`.
//! Flags fill the same `Config` a config file will, so quick mode and file mode share one
//! schema. A mistake yields one `Diagnostic` naming the flag; main prints it as one line and
//! exits 2, the usual code for a usage error.
const std = @import("std");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("Config.zig");
const Cidr = @import("Cidr.zig");
const units = @import("units.zig");

pub const Command = enum { run, demo, check, reload, help, version };

pub const Parsed = struct {
    command: Command,
    config: Config,
    /// `--config FILE` (run), or the FILE of `sluice check FILE`.
    config_path: ?[]const u8 = null,
    /// `--pid-file PATH`: written by a running instance, read by `sluice reload`.
    pid_file: ?[]const u8 = null,
    /// `sluice reload --admin ADDR`: the admin listener to ask.
    reload_admin: ?Address = null,
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
    \\  sluice --config FILE [options]          FILE is .zon or .json; flags override it
    \\  sluice check FILE                       validate FILE, print every mistake
    \\  sluice reload --pid-file PATH | --admin ADDR
    \\                                          reload the running instance's config file
    \\  sluice demo [--listen ADDR] [options]   two built-in backends behind the proxy
    \\  sluice --help | --version
    \\
    \\addresses: IP:PORT, [IPv6]:PORT, :PORT (all interfaces), localhost:PORT
    \\durations: 500ms, 10s, 2m (a bare number is ms); sizes: 4096, 16KiB, 1MiB
    \\
    \\options:
    \\  --config FILE                     a config file (docs/CONFIG.md)
    \\  --listen ADDR                     where clients connect (default :8080)
    \\  --workers N                       worker threads (default: one per CPU)
    \\  --io auto|uring|epoll             event loop backend (default auto: io_uring,
    \\                                    falling back to epoll when unavailable)
    \\  --max-connections N               client connections, all workers (default 4096)
    \\  --header-bytes-max SIZE           request head size limit (default 16KiB) -> 431
    \\  --headers-count-max N             request header field limit (default 100) -> 431
    \\  --target-bytes-max SIZE           request-target limit (default 8KiB) -> 414
    \\  --request-body-max SIZE           request body limit (default 0: none) -> 413
    \\  --response-header-bytes-max SIZE  response head size limit (default 32KiB) -> 502
    \\  --response-headers-count-max N    response header field limit (default 256) -> 502
    \\  --header-underscores drop|allow   request fields named with `_` (default drop)
    \\  --client-header-timeout DUR       time to receive a request head (default 10s) -> 408
    \\  --client-idle-timeout DUR         keep-alive idle and body gaps (default 60s)
    \\  --tunnel-idle-timeout DUR         upgraded (WebSocket) connections (default 1h)
    \\  --drain-timeout DUR               SIGTERM/SIGINT drain deadline (default 10s)
    \\  --trusted-proxy CIDR              peers whose X-Forwarded-For is kept and appended
    \\                                    to (repeatable; default none: always replaced)
    \\  --trace-init                      print each start-up phase's cost in ns
    \\  --pid-file PATH                   write the pid here once listening (for reload)
    \\  --log-level error|warn|info       the least severe log lines shown (default info)
    \\  --admin ADDR                      admin listener: /metrics, /status, /healthz,
    \\                                    POST /reload (default off; e.g. 127.0.0.1:9901)
    \\  --access-log stdout|PATH          a line per request (default off); SIGUSR1 reopens
    \\  --access-log-format combined|json (default combined)
    \\
    \\balancing (the pool of --backend addresses):
    \\  --backend ADDR[,weight=N][,max-conns=N][,max-pending=N]
    \\                                    weight 0..1000 (default 1; 0 drains the backend);
    \\                                    max-conns caps its open connections, max-pending
    \\                                    its requests in flight (default: no caps)
    \\  --strategy NAME                   round_robin (default), weighted, least_conn,
    \\                                    random, hash, sticky
    \\  --hash-key ip|path|header:NAME|cookie:NAME
    \\                                    what `hash` hashes (default ip)
    \\  --sticky-cookie NAME              the cookie `sticky` sets (default sluice_backend)
    \\
    \\health:
    \\  --health-path PATH                probe every backend with this path (default: no
    \\                                    active checks; backends start healthy)
    \\  --health-method GET|HEAD          (default GET)
    \\  --health-host HOST                Host of the probe (default: the backend address)
    \\  --health-interval DUR             between probes (default 2s)
    \\  --health-timeout DUR              per probe (default 1s)
    \\  --health-status LOW-HIGH          passing statuses (default 200-399)
    \\  --health-rise N                   passes to bring a backend up (default 2)
    \\  --health-fall N                   failures to take it down (default 3)
    \\  --eject-after N                   consecutive failures in real traffic that eject
    \\                                    a backend (default 5; 0 turns ejection off)
    \\  --eject-on KINDS                  which failures count: connect,reset,timeout,5xx
    \\                                    (default connect,reset,timeout)
    \\  --eject-time DUR                  first ejection; doubles on repeats (default 10s)
    \\  --eject-time-max DUR              longest ejection (default 5m)
    \\  --eject-max-percent N             share of the pool ejected at once (default 50)
    \\
    \\retries and upstream timeouts:
    \\  --tries N                         tries per request, the first included (default 3)
    \\  --retry-on KINDS                  connect,reset,timeout,5xx (default
    \\                                    connect,reset); only when safe
    \\  --retry-budget PERCENT            retries at most this share of requests, plus 10
    \\                                    per second (default 20)
    \\  --upstream-connect-timeout DUR    backend connect (default 5s) -> 504
    \\  --upstream-response-timeout DUR   request sent to response head (default 60s) -> 504
    \\  --upstream-body-timeout DUR       gap between response body bytes (default 60s):
    \\                                    the client connection is closed mid-body (its
    \\                                    status line was already relayed)
    \\  --upstream-total-timeout DUR      whole exchange (default none) -> 504, or a close
    \\                                    once the response has started
    \\  --upstream-idle-timeout DUR       pooled idle backend connections (default 30s)
    \\  --upstream-keepalive N            idle backend connections kept per backend and
    \\                                    worker (default 64)
    \\
;

const Flag = enum {
    config,
    pid_file,
    log_level,
    listen,
    backend,
    workers,
    io,
    max_connections,
    header_bytes_max,
    headers_count_max,
    target_bytes_max,
    request_body_max,
    response_header_bytes_max,
    response_headers_count_max,
    header_underscores,
    client_header_timeout,
    client_idle_timeout,
    tunnel_idle_timeout,
    drain_timeout,
    trusted_proxy,
    admin,
    access_log,
    access_log_format,
    strategy,
    hash_key,
    sticky_cookie,
    health_path,
    health_method,
    health_host,
    health_interval,
    health_timeout,
    health_status,
    health_rise,
    health_fall,
    eject_after,
    eject_on,
    eject_time,
    eject_time_max,
    eject_max_percent,
    tries,
    retry_on,
    retry_budget,
    upstream_connect_timeout,
    upstream_response_timeout,
    upstream_body_timeout,
    upstream_total_timeout,
    upstream_idle_timeout,
    upstream_keepalive,
};

/// Every flag is its enum tag in kebab case: `--max-connections` is `.max_connections`.
const flag_names = blk: {
    const fields = @typeInfo(Flag).@"enum".field_names;
    var pairs: [fields.len]struct { []const u8, Flag } = undefined;
    for (fields, 0..) |field, i| {
        var name: [field.len + 2]u8 = undefined;
        name[0] = '-';
        name[1] = '-';
        for (field, 2..) |c, j| name[j] = if (c == '_') '-' else c;
        const final = name;
        pairs[i] = .{ &final, @field(Flag, field) };
    }
    break :blk std.StaticStringMap(Flag).initComptime(pairs);
};

/// `args` excludes argv[0].
pub fn parse(args: []const []const u8, diagnostic: *Diagnostic) error{Usage}!Parsed {
    return parseOnto(args, .{}, diagnostic);
}

/// Applies the flags in `args` over `base`: the defaults, or what a `--config` file set (main
/// loads the file, then parses again onto it, so flags override the file).
pub fn parseOnto(args: []const []const u8, base: Config, diagnostic: *Diagnostic) error{Usage}!Parsed {
    var parsed: Parsed = .{ .command = .run, .config = base };
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
    if (args.len > 0 and std.mem.eql(u8, args[0], "reload")) return parseReload(args[1..], diagnostic);
    if (args.len > 0 and std.mem.eql(u8, args[0], "check")) {
        if (args.len != 2) return diagnostic.set("check", "expected exactly one FILE: sluice check FILE", .{});
        parsed.command = .check;
        parsed.config_path = args[1];
        return parsed;
    }
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        // A switch, not a setting: main reads it before anything else, so that the trace
        // covers parsing too (runtime/InitTrace.zig).
        if (std.mem.eql(u8, arg, "--trace-init")) continue;
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
        if (flag == .config) {
            if (parsed.command == .demo) return diagnostic.set(name, "the demo has its own backends", .{});
            parsed.config_path = value;
            continue;
        }
        if (flag == .pid_file) {
            if (value.len == 0) return diagnostic.set(name, "expected a file path", .{});
            parsed.pid_file = value;
            continue;
        }
        try apply(&parsed.config, flag, name, value, diagnostic);
    }
    const from_file = parsed.config_path != null and base.pools_count == 0;
    const backends_count = if (parsed.config.pools_count == 0) 0 else parsed.config.pools()[0].backends_count;
    if (parsed.command == .run and backends_count == 0 and !from_file) {
        return diagnostic.set("--backend", "at least one backend is required (or try `sluice demo`)", .{});
    }
    if (parsed.config.target_bytes_max >= parsed.config.header_bytes_max) {
        return diagnostic.set("--target-bytes-max", "must be smaller than --header-bytes-max", .{});
    }
    for (parsed.config.pools()) |*pool| {
        if (pool.health.path.len == 0 and (pool.health.host.len > 0)) {
            return diagnostic.set("--health-host", "needs --health-path (active checks are off without it)", .{});
        }
    }
    return parsed;
}

/// `sluice reload --pid-file PATH` or `sluice reload --admin ADDR`.
fn parseReload(args: []const []const u8, diagnostic: *Diagnostic) error{Usage}!Parsed {
    var parsed: Parsed = .{ .command = .reload, .config = .{} };
    var i: usize = 0;
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        const eq = std.mem.indexOfScalar(u8, arg, '=');
        const name = if (eq) |e| arg[0..e] else arg;
        const value = if (eq) |e| arg[e + 1 ..] else blk: {
            i += 1;
            if (i == args.len) return diagnostic.set(name, "missing value", .{});
            break :blk args[i];
        };
        if (std.mem.eql(u8, name, "--pid-file")) {
            parsed.pid_file = value;
        } else if (std.mem.eql(u8, name, "--admin")) {
            parsed.reload_admin = try parseAddress(name, value, diagnostic);
        } else {
            return diagnostic.set(name, "sluice reload takes --pid-file PATH or --admin ADDR", .{});
        }
    }
    if ((parsed.pid_file == null) == (parsed.reload_admin == null)) {
        return diagnostic.set("reload", "expected exactly one of --pid-file PATH or --admin ADDR", .{});
    }
    return parsed;
}

fn apply(config: *Config, flag: Flag, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (flag) {
        .config, .pid_file => unreachable, // Handled by the caller: not settings.
        .listen => config.setListener(try parseAddress(name, value, diagnostic)),
        .log_level => config.log_level = try parseEnum(Config.LogLevel, name, value, diagnostic),
        .workers => config.workers_count = try parseCount(u32, name, value, 1, Config.workers_count_max, diagnostic),
        .io => config.io = try parseEnum(Config.IoMode, name, value, diagnostic),
        .max_connections => config.connections_max = try parseCount(u32, name, value, 1, 1 << 20, diagnostic),
        .header_bytes_max => config.header_bytes_max = try parseSize(name, value, 1024, 1024 * 1024, diagnostic),
        .headers_count_max => config.headers_count_max = try parseCount(u16, name, value, 8, 1024, diagnostic),
        .target_bytes_max => config.target_bytes_max = try parseSize(name, value, 64, 1024 * 1024, diagnostic),
        .request_body_max => config.request_body_bytes_max = try parseSize64(name, value, diagnostic),
        .response_header_bytes_max => config.response_header_bytes_max = try parseSize(name, value, 1024, 1024 * 1024, diagnostic),
        .response_headers_count_max => config.response_headers_count_max = try parseCount(u16, name, value, 8, 1024, diagnostic),
        .header_underscores => config.header_underscores = try parseEnum(Config.HeaderUnderscores, name, value, diagnostic),
        .tunnel_idle_timeout => config.tunnel_idle_timeout_ns = try parseDuration(name, value, diagnostic),
        .client_header_timeout => config.client_header_timeout_ns = try parseDuration(name, value, diagnostic),
        .client_idle_timeout => config.client_idle_timeout_ns = try parseDuration(name, value, diagnostic),
        .drain_timeout => config.drain_timeout_ns = try parseDuration(name, value, diagnostic),
        .trusted_proxy => {
            const cidr = Cidr.parse(value) catch
                return diagnostic.set(name, "invalid value \"{s}\": expected ADDRESS or ADDRESS/BITS", .{value});
            config.addTrustedProxy(cidr) catch
                return diagnostic.set(name, "more than {d} trusted proxies", .{Config.trusted_proxies_count_max});
        },
        .admin => config.admin = .{ .enabled = true, .listen = try parseAddress(name, value, diagnostic) },
        .access_log => {
            if (value.len == 0) return diagnostic.set(name, "expected stdout or a file path", .{});
            config.access_log.target = value;
        },
        .access_log_format => config.access_log.format = try parseEnum(Config.AccessLogFormat, name, value, diagnostic),
        else => {
            const pool = config.quickPool() orelse return diagnostic.set(
                name,
                "the config file has several pools: set this in the file, per pool",
                .{},
            );
            try applyPool(pool, flag, name, value, diagnostic);
        },
    }
}

/// A quick-mode flag about the pool.
fn applyPool(pool: *Config.Pool, flag: Flag, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (flag) {
        .backend => pool.addBackend(try parseBackend(name, value, diagnostic)) catch
            return diagnostic.set(name, "more than {d} backends", .{Config.backends_count_max}),
        .strategy => pool.strategy = try parseEnum(Config.Strategy, name, value, diagnostic),
        .hash_key => try parseHashKey(pool, name, value, diagnostic),
        .sticky_cookie => {
            pool.sticky_cookie = try parseToken(name, value, diagnostic);
            if (value.len > Config.sticky_cookie_bytes_max) {
                return diagnostic.set(name, "invalid value \"{s}\": at most {d} bytes", .{ value, Config.sticky_cookie_bytes_max });
            }
        },
        .health_path => pool.health.path = try parsePath(name, value, diagnostic),
        .health_method => pool.health.method = try parseEnum(@TypeOf(pool.health.method), name, value, diagnostic),
        .health_host => pool.health.host = try parseToken(name, value, diagnostic),
        .health_interval => pool.health.interval_ns = try parseDuration(name, value, diagnostic),
        .health_timeout => pool.health.timeout_ns = try parseDuration(name, value, diagnostic),
        .health_status => try parseStatusRange(&pool.health, name, value, diagnostic),
        .health_rise => pool.health.rise = try parseCount(u8, name, value, 1, 100, diagnostic),
        .health_fall => pool.health.fall = try parseCount(u8, name, value, 1, 100, diagnostic),
        .eject_after => pool.outlier.consecutive_failures = try parseCount(u32, name, value, 0, 1000, diagnostic),
        .eject_on => pool.outlier.on = try parseFailureKinds(name, value, diagnostic),
        .eject_time => pool.outlier.ejection_ns = try parseDuration(name, value, diagnostic),
        .eject_time_max => pool.outlier.ejection_max_ns = try parseDuration(name, value, diagnostic),
        .eject_max_percent => pool.outlier.max_ejected_percent = try parseCount(u8, name, value, 0, 100, diagnostic),
        .tries => pool.retry.tries_max = try parseCount(u8, name, value, 1, 10, diagnostic),
        .retry_on => pool.retry.on = try parseFailureKinds(name, value, diagnostic),
        .retry_budget => pool.retry.budget_percent = try parseCount(u8, name, value, 0, 100, diagnostic),
        .upstream_connect_timeout => pool.connect_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_response_timeout => pool.response_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_body_timeout => pool.body_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_total_timeout => pool.total_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_idle_timeout => pool.idle_timeout_ns = try parseDuration(name, value, diagnostic),
        .upstream_keepalive => pool.keepalive_max = try parseCount(u32, name, value, 0, 4096, diagnostic),
        else => unreachable, // Not a pool flag: see `apply`.
    }
}

const backend_options = "expected weight=N, max-conns=N or max-pending=N";

/// `ADDR[,weight=N][,max-conns=N][,max-pending=N]`.
fn parseBackend(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Config.Backend {
    var parts = std.mem.splitScalar(u8, value, ',');
    var backend: Config.Backend = .{ .address = try parseAddress(name, parts.first(), diagnostic) };
    while (parts.next()) |part| {
        const eq = std.mem.indexOfScalar(u8, part, '=') orelse
            return diagnostic.set(name, "invalid option \"{s}\": " ++ backend_options, .{part});
        const key = part[0..eq];
        const number = part[eq + 1 ..];
        if (std.mem.eql(u8, key, "weight")) {
            backend.weight = try parseCount(u16, name, number, 0, 1000, diagnostic);
        } else if (std.mem.eql(u8, key, "max-conns")) {
            backend.max_connections = try parseCount(u32, name, number, 1, 1 << 20, diagnostic);
        } else if (std.mem.eql(u8, key, "max-pending")) {
            backend.max_pending = try parseCount(u32, name, number, 1, 1 << 20, diagnostic);
        } else {
            return diagnostic.set(name, "invalid option \"{s}\": " ++ backend_options, .{part});
        }
    }
    return backend;
}

fn parseHashKey(pool: *Config.Pool, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    const colon = std.mem.indexOfScalar(u8, value, ':');
    const kind = if (colon) |c| value[0..c] else value;
    const key_name = if (colon) |c| value[c + 1 ..] else "";
    const expected = "expected ip, path, header:NAME or cookie:NAME";
    if (std.mem.eql(u8, kind, "ip") and colon == null) {
        pool.hash_on = .client_ip;
    } else if (std.mem.eql(u8, kind, "path") and colon == null) {
        pool.hash_on = .path;
    } else if (std.mem.eql(u8, kind, "header") or std.mem.eql(u8, kind, "cookie")) {
        if (key_name.len == 0 or !isToken(key_name)) {
            return diagnostic.set(name, "invalid value \"{s}\": {s}", .{ value, expected });
        }
        pool.hash_on = if (kind[0] == 'h') .header else .cookie;
        pool.hash_name = key_name;
    } else {
        return diagnostic.set(name, "invalid value \"{s}\": {s}", .{ value, expected });
    }
}

/// `LOW-HIGH` or a single status.
fn parseStatusRange(check: *Config.HealthCheck, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    const dash = std.mem.indexOfScalar(u8, value, '-');
    const low = if (dash) |d| value[0..d] else value;
    const high = if (dash) |d| value[d + 1 ..] else value;
    check.status_min = try parseCount(u16, name, low, 100, 599, diagnostic);
    check.status_max = try parseCount(u16, name, high, 100, 599, diagnostic);
    if (check.status_min > check.status_max) {
        return diagnostic.set(name, "invalid range \"{s}\": LOW is above HIGH", .{value});
    }
}

/// A comma-separated subset of connect, reset, timeout, 5xx.
fn parseFailureKinds(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Config.FailureKinds {
    var kinds: Config.FailureKinds = .none;
    var parts = std.mem.splitScalar(u8, value, ',');
    while (parts.next()) |part| {
        if (std.mem.eql(u8, part, "connect")) {
            kinds.connect = true;
        } else if (std.mem.eql(u8, part, "reset")) {
            kinds.reset = true;
        } else if (std.mem.eql(u8, part, "timeout")) {
            kinds.timeout = true;
        } else if (std.mem.eql(u8, part, "5xx")) {
            kinds.status_5xx = true;
        } else if (!(part.len == 0 and value.len == 0)) {
            return diagnostic.set(name, "invalid kind \"{s}\": expected a list of connect, reset, timeout, 5xx", .{part});
        }
    }
    return kinds;
}

fn parseEnum(comptime E: type, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!E {
    if (std.meta.stringToEnum(E, value)) |tag| return tag;
    const names = comptime Config.enumNames(E);
    return diagnostic.set(name, "invalid value \"{s}\": expected one of {s}", .{ value, names });
}

fn parseToken(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}![]const u8 {
    if (value.len == 0 or value.len > 255 or !isToken(value)) {
        return diagnostic.set(name, "invalid value \"{s}\": expected 1 to 255 letters, digits or -._~", .{value});
    }
    return value;
}

fn parsePath(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}![]const u8 {
    const visible = Config.isVisible(value);
    if (value.len == 0 or value.len > Config.health_text_bytes_max or value[0] != '/' or !visible) {
        return diagnostic.set(name, "invalid path \"{s}\": expected /... of at most 1024 visible characters", .{value});
    }
    return value;
}

/// Names of headers and cookies, and Host values: a conservative character set that needs
/// no quoting anywhere it is written.
fn isToken(value: []const u8) bool {
    for (value) |c| switch (c) {
        'a'...'z', 'A'...'Z', '0'...'9', '-', '.', '_', '~', ':' => {},
        else => return false,
    };
    return true;
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

/// A size with no upper bound but the u64's (request bodies); 0 means "no limit".
fn parseSize64(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!u64 {
    return units.parseBytes(value) catch
        diagnostic.set(name, "invalid size \"{s}\": expected bytes, or a number with KiB, MiB or GiB", .{value});
}

fn parseDuration(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!u64 {
    const ns = units.parseDurationNs(value, .milliseconds) catch
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
        "--admin",   "127.0.0.1:0",
    }, &diagnostic);
    try std.testing.expectEqual(Command.run, parsed.command);
    try std.testing.expectEqual(@as(u32, 2), parsed.config.pools()[0].backends_count);
    try std.testing.expectEqual(@as(u32, 2), parsed.config.workers_count);
    try std.testing.expectEqual(Config.IoMode.epoll, parsed.config.io);
    try std.testing.expectEqual(@as(u64, 1500 * std.time.ns_per_ms), parsed.config.client_header_timeout_ns);
    try std.testing.expectEqual(@as(u32, 1), parsed.config.trusted_proxies_count);
    try std.testing.expect(parsed.config.admin.enabled);
    try std.testing.expectEqual(@as(u16, 0), parsed.config.admin.listen.getPort());
    try std.testing.expectEqualStrings("default", parsed.config.pools()[0].name);
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
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--admin", "9901" }, .flag = "--admin" },
    };
    for (cases) |case| {
        var diagnostic: Diagnostic = .{};
        try std.testing.expectError(error.Usage, parse(case.args, &diagnostic));
        try std.testing.expectEqualStrings(case.flag, diagnostic.flag);
        try std.testing.expect(diagnostic.message().len > 0);
    }
}

test "cli: balancing, health and retry flags fill the pool" {
    var diagnostic: Diagnostic = .{};
    const parsed = try parse(&.{
        "--backend",                "127.0.0.1:9001,weight=3,max-conns=10",
        "--backend",                "127.0.0.1:9002,weight=0",
        "--strategy",               "hash",
        "--hash-key",               "cookie:session",
        "--health-path",            "/healthz",
        "--health-status",          "200-204",
        "--eject-on",               "reset,5xx",
        "--retry-on",               "connect",
        "--tries",                  "2",
        "--upstream-total-timeout", "30s",
    }, &diagnostic);
    const pool = &parsed.config.pools()[0];
    try std.testing.expectEqual(@as(u16, 3), pool.backends()[0].weight);
    try std.testing.expectEqual(@as(u32, 10), pool.backends()[0].max_connections);
    try std.testing.expectEqual(@as(u16, 0), pool.backends()[1].weight);
    try std.testing.expectEqual(Config.Strategy.hash, pool.strategy);
    try std.testing.expectEqual(Config.HashOn.cookie, pool.hash_on);
    try std.testing.expectEqualStrings("session", pool.hash_name);
    try std.testing.expect(pool.health.enabled());
    try std.testing.expectEqual(@as(u16, 204), pool.health.status_max);
    try std.testing.expect(pool.outlier.on.status_5xx and pool.outlier.on.reset and !pool.outlier.on.connect);
    try std.testing.expect(pool.retry.on.connect and !pool.retry.on.reset);
    try std.testing.expectEqual(@as(u8, 2), pool.retry.tries_max);
    try std.testing.expectEqual(@as(u64, 30 * std.time.ns_per_s), pool.total_timeout_ns);
    try parsed.config.validate();
}

test "cli: balancing mistakes name their flag" {
    const cases = [_]struct { args: []const []const u8, flag: []const u8 }{
        .{ .args = &.{ "--backend", "1.2.3.4:1,weight=1001" }, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1,colour=red" }, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--strategy", "fastest" }, .flag = "--strategy" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--hash-key", "header:" }, .flag = "--hash-key" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--health-path", "healthz" }, .flag = "--health-path" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--health-status", "300-200" }, .flag = "--health-status" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--eject-on", "reset,slow" }, .flag = "--eject-on" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--tries", "0" }, .flag = "--tries" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--health-host", "h" }, .flag = "--health-host" },
    };
    for (cases) |case| {
        var diagnostic: Diagnostic = .{};
        try std.testing.expectError(error.Usage, parse(case.args, &diagnostic));
        try std.testing.expectEqualStrings(case.flag, diagnostic.flag);
    }
}

test "cli: demo needs no backend; help and version win" {
    var diagnostic: Diagnostic = .{};
    try std.testing.expectEqual(Command.demo, (try parse(&.{"demo"}, &diagnostic)).command);
    try std.testing.expectEqual(Command.help, (try parse(&.{ "--bogus=1", "--help" }, &diagnostic)).command);
}
