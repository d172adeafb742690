//! The whole run-time configuration as plain data: what the CLI quick mode fills in today and
//! what config files will fill in later (issue 4), so both map onto one schema. Every limit the
//! data plane sizes itself from lives here, with its default, and `validate` checks the
//! relations between them once, before anything is allocated.
const std = @import("std");
const assert = std.debug.assert;
const Address = @import("../stdx/Address.zig").Address;
const Cidr = @import("Cidr.zig");

const Config = @This();

/// The event loop's own choice of backend: the CLI fills it, workers hand it to Loop.init.
pub const IoMode = @import("../loop/Loop.zig").Mode;

pub const default_listen = Address.initIp4(.{ 0, 0, 0, 0 }, 8080);

pub const backends_count_max = 64;
pub const trusted_proxies_count_max = 32;
pub const workers_count_max = 256;

listen: Address = default_listen,
backends_buffer: [backends_count_max]Address = undefined,
backends_count: u32 = 0,
workers_count: u32 = 0, // 0 = one per CPU, resolved at start-up.
io: IoMode = .auto,

connections_max: u32 = 4096,
header_bytes_max: u32 = 16 * 1024,
headers_count_max: u16 = 100,
target_bytes_max: u32 = 8 * 1024,

client_header_timeout_ns: u64 = 10 * std.time.ns_per_s,
client_idle_timeout_ns: u64 = 60 * std.time.ns_per_s,
upstream_connect_timeout_ns: u64 = 5 * std.time.ns_per_s,
upstream_response_timeout_ns: u64 = 60 * std.time.ns_per_s,
upstream_idle_timeout_ns: u64 = 30 * std.time.ns_per_s,
upstream_keepalive_max: u32 = 64,
drain_timeout_ns: u64 = 10 * std.time.ns_per_s,

trusted_proxies_buffer: [trusted_proxies_count_max]Cidr = undefined,
trusted_proxies_count: u32 = 0,

/// Bytes a rewritten head may grow by: X-Forwarded-For (existing value is replaced or the
/// peer appended), X-Forwarded-Proto, X-Forwarded-Host (a copy of Host, itself bounded by
/// `host_bytes_max`) and `Connection: close`. The sum is asserted in `proxy/rewrite.zig`.
pub const rewrite_headroom_bytes = 1024;

pub fn backends(config: *const Config) []const Address {
    return config.backends_buffer[0..config.backends_count];
}

pub fn trustedProxies(config: *const Config) []const Cidr {
    return config.trusted_proxies_buffer[0..config.trusted_proxies_count];
}

pub fn addBackend(config: *Config, address: Address) error{TooMany}!void {
    if (config.backends_count == backends_count_max) return error.TooMany;
    config.backends_buffer[config.backends_count] = address;
    config.backends_count += 1;
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
};

pub fn validate(config: *const Config) ValidateError!void {
    if (config.backends_count == 0) return error.NoBackends;
    if (config.header_bytes_max < 1024) return error.HeaderBytesTooSmall;
    if (config.header_bytes_max > 1024 * 1024) return error.HeaderBytesTooLarge;
    if (config.target_bytes_max >= config.header_bytes_max) return error.TargetBytesTooLarge;
    if (config.connections_max == 0) return error.ConnectionsTooFew;
    const timeouts = [_]u64{
        config.client_header_timeout_ns,    config.client_idle_timeout_ns,
        config.upstream_connect_timeout_ns, config.upstream_response_timeout_ns,
        config.upstream_idle_timeout_ns,
    };
    for (timeouts) |timeout_ns| if (timeout_ns == 0) return error.TimeoutZero;
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
    try config.addBackend(try Address.parse("127.0.0.1:9000"));
    try config.validate();
    try std.testing.expect(config.bufferBytes() >= config.header_bytes_max + 1024);
    try std.testing.expect(config.bufferBytes() % 4096 == 0);
}
