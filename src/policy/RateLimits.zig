//! The rate limits of a generation, parsed once from their text (config/RateLimit.zig): the
//! top level's, which every request passes, and each route's, which its requests pass too.
//! Buckets live in each worker's `RateLimiter`.
//!
//! Decision: limits are per worker, each taking its share: `N` workers each allow rate/N and a
//! burst of burst/N (rounded up, at least 1), with no state shared between workers, so a check
//! stays a few compares in memory the worker owns. A client's connections are spread over the
//! workers by the kernel (SO_REUSEPORT hashes each connection), so a client with many
//! connections sees about the written limit, and one with a single connection sees its
//! worker's share (README, "Rate limits", says so). A rule's buckets are keyed by a hash of
//! its text and its route's label with the client's key, so a reload that keeps a rule keeps
//! its buckets, and one that changes it starts them full.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Config = @import("../config/Config.zig");
const RateLimit = @import("../config/RateLimit.zig");
const http = @import("../http/http.zig");
const Address = @import("../stdx/Address.zig").Address;
const RateLimiter = @import("RateLimiter.zig");

const RateLimits = @This();

top: ?Rule,
/// One per route of the config, by index.
routes: []const ?Rule,

pub const Rule = struct {
    /// The worker's share.
    limit: RateLimiter.Limit,
    key: RateLimit.Key,
    header: []const u8,
    /// Seeds the key hash: the rule's text and its route's label.
    seed: u64,

    fn parse(text: []const u8, label: []const u8, workers_count: u32) ?Rule {
        if (text.len == 0) return null;
        const written = RateLimit.parse(text).limit; // Checked by the mappers.
        return .{
            .limit = .{
                .interval_ns = written.intervalNs() * workers_count,
                .burst = std.math.divCeil(u32, written.burst, workers_count) catch unreachable,
            },
            .key = written.key,
            .header = written.header,
            .seed = std.hash.Wyhash.hash(std.hash.Wyhash.hash(0, label), text),
        };
    }

    /// The bucket of this request under this rule.
    fn keyHash(rule: *const Rule, client: *const Address, head: *const http.Request) u64 {
        var address_bytes: [8]u8 = undefined;
        const bytes: []const u8 = switch (rule.key) {
            .route => "",
            .header => head.get(rule.header) orelse addressKey(client, &address_bytes),
            .ip => addressKey(client, &address_bytes),
        };
        return std.hash.Wyhash.hash(rule.seed, bytes);
    }
};

/// The limits of `config`, or null when none is written (then a request pays one comparison).
pub fn build(arena: std.mem.Allocator, config: *const Config, workers_count: u32) error{OutOfMemory}!?RateLimits {
    assert(workers_count > 0);
    var any = config.rate_limit.len > 0;
    for (config.routes()) |*route| any = any or route.rate_limit.len > 0;
    if (!any) return null;
    const routes = try arena.alloc(?Rule, config.routes().len);
    for (routes, config.routes(), 0..) |*rule, *route, i| rule.* = .parse(route.rate_limit, config.routeLabel(i), workers_count);
    return .{ .top = .parse(config.rate_limit, "", workers_count), .routes = routes };
}

/// Takes a token from every bucket that applies to this request (the top level's, then the
/// route's): the first refusal, with the wait until its next token, or `.allowed`.
pub fn take(
    limits: *const RateLimits,
    limiter: *RateLimiter,
    client: *const Address,
    head: *const http.Request,
    route: ?usize,
    now_ns: u64,
) RateLimiter.Verdict {
    if (limits.top) |*rule| {
        const verdict = limiter.take(rule.keyHash(client, head), rule.limit, now_ns);
        if (verdict == .limited) return verdict;
    }
    const index = route orelse return .allowed;
    const rule = &(limits.routes[index] orelse return .allowed);
    return limiter.take(rule.keyHash(client, head), rule.limit, now_ns);
}

/// A client address as a bucket key: IPv4 (an IPv4-mapped IPv6 one too) whole, IPv6 by its
/// /64, the block one customer usually holds (a client with a /64 has 2^64 addresses).
fn addressKey(client: *const Address, out: *[8]u8) []const u8 {
    switch (client.family()) {
        linux.AF.INET => {
            out[0..4].* = @bitCast(client.in.addr);
            return out[0..4];
        },
        linux.AF.INET6 => {
            const bytes = &client.in6.addr;
            const mapped = @as([10]u8, @splat(0)) ++ [2]u8{ 0xff, 0xff };
            if (std.mem.eql(u8, bytes[0..12], &mapped)) {
                out[0..4].* = bytes[12..16].*;
                return out[0..4];
            }
            out.* = bytes[0..8].*;
            return out[0..8];
        },
        else => unreachable, // Clients are IP.
    }
}

const testing = std.testing;

test "rate limits: IPv6 clients share their /64, IPv4-mapped ones are IPv4" {
    var a: [8]u8 = undefined;
    var b: [8]u8 = undefined;
    const one = addressKey(&(try Address.parse("[2001:db8:1:2::1]:1")), &a);
    const other = addressKey(&(try Address.parse("[2001:db8:1:2:ffff::9]:1")), &b);
    try testing.expectEqualSlices(u8, one, other);
    const v4 = addressKey(&(try Address.parse("192.0.2.1:1")), &a);
    const mapped = addressKey(&(try Address.parse("[::ffff:192.0.2.1]:1")), &b);
    try testing.expectEqualSlices(u8, v4, mapped);
}

test "rate limits: a worker's share, and the top level's rule before the route's" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    config.rate_limit = "100/s,burst=3";
    try config.addRoute(.{ .path_prefix = "/api/", .rate_limit = "1/m,key=route" });
    try config.addRoute(.{});
    const limits = (try build(arena_state.allocator(), &config, 2)).?;
    try testing.expectEqual(@as(u64, 20 * std.time.ns_per_ms), limits.top.?.limit.interval_ns);
    try testing.expectEqual(@as(u32, 2), limits.top.?.limit.burst);
    try testing.expect(limits.routes[1] == null);
    var slots: [64]RateLimiter.Slot = @splat(.{});
    var limiter: RateLimiter = .init(&slots);
    const head: http.Request = undefined; // Read only by a header key.
    const client = try Address.parse("192.0.2.1:1");
    const now: u64 = 1_000 * std.time.ns_per_s;
    try testing.expect(limits.take(&limiter, &client, &head, 0, now) == .allowed);
    // The route allows one a minute (two minutes for the worker), whoever asks.
    const other = try Address.parse("192.0.2.2:1");
    try testing.expect(limits.take(&limiter, &other, &head, 0, now) == .limited);
    try testing.expect(limits.take(&limiter, &other, &head, 1, now) == .allowed);
    try testing.expect(limits.take(&limiter, &other, &head, 1, now) == .limited); // The top level's burst of 2.
}
