//! The whole run-time configuration as plain data: what the CLI quick mode fills in today and
//! what config files will fill in later (issue 4), so both map onto one schema. Every limit the
//! data plane sizes itself from lives here, with its default, and `validate` checks the
//! relations between them once, before anything is allocated.
const std = @import("std");
const assert = std.debug.assert;
pub const Address = @import("../stdx/Address.zig").Address;
pub const Cidr = @import("Cidr.zig");

const Config = @This();

/// The event loop's own choice of backend: the CLI fills it, workers hand it to Loop.init.
pub const IoMode = @import("../loop/Loop.zig").Mode;

pub const default_listen = Address.initIp4(.{ 0, 0, 0, 0 }, 8080);
/// Where the admin listener binds when a config file's `admin` section names no address.
pub const default_admin_listen = Address.initIp4(.{ 127, 0, 0, 1 }, 9901);

pub const backends_count_max = 64;
pub const trusted_proxies_count_max = 32;
pub const workers_count_max = 256;

listen: Address = default_listen,
workers_count: u32 = 0, // 0 = one per CPU, resolved at start-up.
io: IoMode = .auto,

connections_max: u32 = 4096,
header_bytes_max: u32 = 16 * 1024,
headers_count_max: u16 = 100,
target_bytes_max: u32 = 8 * 1024,

client_header_timeout_ns: u64 = 10 * std.time.ns_per_s,
client_idle_timeout_ns: u64 = 60 * std.time.ns_per_s,
drain_timeout_ns: u64 = 10 * std.time.ns_per_s,

trusted_proxies_buffer: [trusted_proxies_count_max]Cidr = undefined,
trusted_proxies_count: u32 = 0,

/// The backends and how they are chosen, checked, retried and timed. One pool for now: the
/// CLI quick mode fills it; config files with several pools and routes come with issue 4.
pool: Pool = .{},

/// The admin listener (`/metrics`, `/status`, `/healthz`), served by the control thread.
admin: Admin = .{},
access_log: AccessLog = .{},

pub const AccessLog = struct {
    /// Empty: off. `stdout`, or a file path (opened for appending; SIGUSR1 reopens it, for
    /// log rotation).
    target: []const u8 = "",
    format: AccessLogFormat = .combined,

    pub fn enabled(log: *const AccessLog) bool {
        return log.target.len > 0;
    }
};

pub const AccessLogFormat = enum { combined, json };

pub const Admin = struct {
    /// Off unless `--admin ADDR` or a config file's `admin` section asks for it.
    enabled: bool = false,
    /// Bound as given: the docs recommend loopback, nothing refuses another address.
    listen: Address = default_admin_listen,
};

pub const Pool = struct {
    /// The config file's name for the pool; `default` in quick mode. A metrics label.
    name: []const u8 = "default",
    backends_buffer: [backends_count_max]Backend = undefined,
    backends_count: u32 = 0,
    strategy: Strategy = .round_robin,
    /// What `hash` hashes; `hash_name` names the header or cookie.
    hash_on: HashOn = .client_ip,
    hash_name: []const u8 = "",
    /// The cookie `sticky` sets and honours.
    sticky_cookie: []const u8 = "sluice_backend",
    health: HealthCheck = .{},
    outlier: Outlier = .{},
    retry: Retry = .{},

    connect_timeout_ns: u64 = 5 * std.time.ns_per_s,
    /// Request sent -> response head received.
    response_timeout_ns: u64 = 60 * std.time.ns_per_s,
    /// Longest gap between body bytes, either direction, once the exchange is under way.
    body_timeout_ns: u64 = 60 * std.time.ns_per_s,
    /// Whole exchange, from picking a backend to the last response byte; 0 = no limit.
    total_timeout_ns: u64 = 0,
    /// Pooled idle connections are closed after this.
    idle_timeout_ns: u64 = 30 * std.time.ns_per_s,
    /// Idle connections kept per backend and worker.
    keepalive_max: u32 = 64,

    pub fn backends(pool: *const Pool) []const Backend {
        return pool.backends_buffer[0..pool.backends_count];
    }

    pub fn addBackend(pool: *Pool, backend: Backend) error{TooMany}!void {
        if (pool.backends_count == backends_count_max) return error.TooMany;
        pool.backends_buffer[pool.backends_count] = backend;
        pool.backends_count += 1;
    }

    pub fn validate(pool: *const Pool) ValidateError!void {
        if (pool.backends_count == 0) return error.NoBackends;
        if (pool.name.len > pool_name_bytes_max) return error.NameTooLong;
        const timeouts = [_]u64{
            pool.connect_timeout_ns,  pool.response_timeout_ns, pool.body_timeout_ns,
            pool.idle_timeout_ns,     pool.health.interval_ns,  pool.health.timeout_ns,
            pool.outlier.ejection_ns,
        };
        for (timeouts) |timeout_ns| if (timeout_ns == 0) return error.TimeoutZero;
        const named = pool.hash_on == .header or pool.hash_on == .cookie;
        if (pool.strategy == .hash and named and pool.hash_name.len == 0) return error.HashNameMissing;
        if (pool.hash_name.len > name_bytes_max) return error.NameTooLong;
        if (pool.strategy == .sticky and pool.sticky_cookie.len == 0) return error.HashNameMissing;
        if (pool.sticky_cookie.len > sticky_cookie_bytes_max) return error.NameTooLong;
        const health = &pool.health;
        if (health.status_min < 100 or health.status_max > 599 or
            health.status_min > health.status_max) return error.HealthStatusRange;
        if (health.enabled() and health.path[0] != '/') return error.HealthPathNotAbsolute;
        if (health.path.len > health_text_bytes_max or health.host.len > health_text_bytes_max) {
            return error.NameTooLong;
        }
        if (!isVisible(health.path) or !isVisible(health.host)) return error.HealthTextInvalid;
        if (health.rise == 0 or health.fall == 0) return error.HealthThresholdZero;
        if (pool.retry.tries_max == 0) return error.TriesZero;
        if (pool.retry.budget_percent > 100) return error.PercentOver100;
        if (pool.outlier.max_ejected_percent > 100) return error.PercentOver100;
    }
};

pub const Backend = struct {
    address: Address,
    /// Share of requests for `weighted`, `least_conn`, `random`; 0 drains the backend: it is
    /// never chosen for a new request, and its in-flight requests finish.
    weight: u16 = 1,
    /// Connections open to this backend (busy and idle), all workers together; 0 = no cap.
    /// Over the cap a request tries another backend, else gets a 503.
    max_connections: u32 = 0,
    /// Requests pending at this backend (sent, response not yet complete), all workers
    /// together; 0 = no cap. Over it, as above. Unlike `max_connections`, idle pooled
    /// connections do not count.
    max_pending: u32 = 0,
};

/// The balancer's own choice of strategy (see balance/Balancer.zig).
pub const Strategy = @import("../balance/Balancer.zig").Strategy;

pub const HashOn = enum { client_ip, header, cookie, path };

/// Kinds of upstream failure, as a set: which ones count towards ejection, which ones are
/// retried.
pub const FailureKinds = packed struct(u8) {
    /// The connection could not be made (refused, unreachable, connect timeout).
    connect: bool = true,
    /// The connection broke before a response head arrived (reset, closed, malformed head).
    reset: bool = true,
    /// No response head within the response timeout.
    timeout: bool = true,
    /// A 5xx response head (retried only when nothing of it has been relayed).
    status_5xx: bool = false,
    _padding: u4 = 0,

    pub const none: FailureKinds = .{ .connect = false, .reset = false, .timeout = false };
};

pub const HealthCheck = struct {
    /// Active checks run when a path is set. Until a check says otherwise, a backend is
    /// healthy (a cold start must not wait for probes to serve).
    path: []const u8 = "",
    method: enum { GET, HEAD } = .GET,
    /// Host header of the probe; empty = the backend's address.
    host: []const u8 = "",
    interval_ns: u64 = 2 * std.time.ns_per_s,
    timeout_ns: u64 = 1 * std.time.ns_per_s,
    status_min: u16 = 200,
    status_max: u16 = 399,
    /// Consecutive passes that bring a down backend up, and failures that take it down.
    rise: u8 = 2,
    fall: u8 = 3,

    pub fn enabled(check: *const HealthCheck) bool {
        return check.path.len > 0;
    }
};

/// Passive outlier detection from real traffic.
pub const Outlier = struct {
    /// Consecutive failures (of the kinds in `on`) that eject a backend; 0 = off.
    consecutive_failures: u32 = 5,
    on: FailureKinds = .{},
    /// The first ejection lasts this long; each repeat ejection doubles it, up to the max.
    ejection_ns: u64 = 10 * std.time.ns_per_s,
    ejection_max_ns: u64 = 5 * 60 * std.time.ns_per_s,
    /// At most this share of the pool is ejected at once, rounded down (so a lone backend is
    /// never ejected; 100 lets every backend be).
    max_ejected_percent: u8 = 50,
};

pub const Retry = struct {
    /// Tries per request, the first included; 1 = never retry.
    tries_max: u8 = 3,
    /// What is retried (when safe: see ARCHITECTURE.md, "Retries").
    on: FailureKinds = .{},
    /// Retries are at most this share of requests...
    budget_percent: u8 = 20,
    /// ...plus this many per second and worker, so a quiet pool can still retry.
    budget_min_per_second: u32 = 10,
};

/// Bytes a rewritten head may grow by: X-Forwarded-For (existing value is replaced or the
/// peer appended), X-Forwarded-Proto, X-Forwarded-Host (a copy of Host, itself bounded by
/// `host_bytes_max`) and `Connection: close`. The sum is asserted in `proxy/rewrite.zig`.
pub const rewrite_headroom_bytes = 1024;

pub fn trustedProxies(config: *const Config) []const Cidr {
    return config.trusted_proxies_buffer[0..config.trusted_proxies_count];
}

pub fn addTrustedProxy(config: *Config, cidr: Cidr) error{TooMany}!void {
    if (config.trusted_proxies_count == trusted_proxies_count_max) return error.TooMany;
    config.trusted_proxies_buffer[config.trusted_proxies_count] = cidr;
    config.trusted_proxies_count += 1;
}

pub const ValidateError = error{
    NoBackends,
    HeaderBytesTooSmall,
    HeaderBytesTooLarge,
    TargetBytesTooLarge,
    ConnectionsTooFew,
    TimeoutZero,
    HashNameMissing,
    HealthStatusRange,
    HealthPathNotAbsolute,
    HealthThresholdZero,
    TriesZero,
    PercentOver100,
    NameTooLong,
    HealthTextInvalid,
};

/// A header or cookie name `hash` reads.
pub const name_bytes_max = 255;
/// A pool's name (the admin listener sizes its responses from it).
pub const pool_name_bytes_max = 64;
/// The sticky cookie name: short enough that its Set-Cookie field fits the response headroom
/// (proxy/rewrite.zig `extra_field_bytes_max`).
pub const sticky_cookie_bytes_max = 64;
/// A health check's path and Host (the probe request is sized from them).
pub const health_text_bytes_max = 1024;

/// "a, b, c": an enum's tags, for messages that say what was expected (the CLI and config
/// files name the same choices the same way).
pub fn enumNames(comptime E: type) []const u8 {
    comptime var text: []const u8 = "";
    inline for (@typeInfo(E).@"enum".field_names, 0..) |name, i| {
        text = text ++ (if (i == 0) "" else ", ") ++ name;
    }
    return text;
}

/// Printable ASCII without spaces: what may go into a request line or a field value we write.
pub fn isVisible(text: []const u8) bool {
    for (text) |c| if (c <= ' ' or c >= 0x7f) return false;
    return true;
}

pub fn validate(config: *const Config) ValidateError!void {
    if (config.header_bytes_max < 1024) return error.HeaderBytesTooSmall;
    if (config.header_bytes_max > 1024 * 1024) return error.HeaderBytesTooLarge;
    if (config.target_bytes_max >= config.header_bytes_max) return error.TargetBytesTooLarge;
    if (config.connections_max == 0) return error.ConnectionsTooFew;
    if (config.client_header_timeout_ns == 0) return error.TimeoutZero;
    if (config.client_idle_timeout_ns == 0) return error.TimeoutZero;
    try config.pool.validate();
}

/// One buffer holds a whole head plus the room a rewrite needs; bodies stream through it.
pub fn bufferBytes(config: *const Config) u32 {
    const bytes = std.mem.alignForward(u32, config.header_bytes_max + rewrite_headroom_bytes, 4096);
    assert(bytes >= config.header_bytes_max + rewrite_headroom_bytes);
    return bytes;
}

/// Is this peer allowed to tell us who the client is (X-Forwarded-For kept and appended to)?
pub fn isTrustedProxy(config: *const Config, peer: *const Address) bool {
    for (config.trustedProxies()) |cidr| {
        if (cidr.contains(peer)) return true;
    }
    return false;
}

test "config: defaults validate once a backend is given" {
    var config: Config = .{};
    try std.testing.expectError(error.NoBackends, config.validate());
    try config.pool.addBackend(.{ .address = try Address.parse("127.0.0.1:9000") });
    try config.validate();
    try std.testing.expect(config.bufferBytes() >= config.header_bytes_max + 1024);
    try std.testing.expect(config.bufferBytes() % 4096 == 0);
}
