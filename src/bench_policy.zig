//! `zig build bench` (policy part): what edge policy adds to a request, per request, with the
//! real functions the exchange calls: composing a request head with and without one header
//! rule (`rewrite.composeRequest`), a rate-limit check (`RateLimits.take`, over 10,000 client
//! addresses, so the buckets come from a table larger than the cache lines one address
//! touches) and an allow list of two blocks (`AccessPolicy.allows`). Prints nanoseconds per
//! call, the median of 7 runs.
//!
//! A micro-benchmark: the figures are the policy's own cost on a warm cache, the lower bound
//! of what it adds to a proxied request (about 14 µs of CPU on this machine, README
//! "Benchmarks"), not a substitute for bench/proxy.sh.
const std = @import("std");

const Address = @import("stdx/Address.zig").Address;
const sys = @import("stdx/sys.zig");
const http = @import("http/http.zig");
const Config = @import("config/Config.zig");
const rewrite = @import("proxy/rewrite.zig");
const HeaderPolicy = @import("policy/HeaderPolicy.zig");
const RateLimiter = @import("policy/RateLimiter.zig");
const RateLimits = @import("policy/RateLimits.zig");
const AccessPolicy = @import("policy/AccessPolicy.zig");

const runs = 7;
const calls = 200_000;
const clients_count = 10_000;

const request_text = "GET /api/items?page=2 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: bench/1.0\r\n" ++
    "Accept: application/json\r\nAccept-Encoding: gzip, br\r\nCookie: session=abc123\r\n\r\n";

pub fn main() !void {
    var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var headers: [32]http.Header = undefined;
    var parser: http.RequestParser = .init(&headers, .{ .header_bytes_max = 16 * 1024, .headers_count_max = 32, .target_bytes_max = 8 * 1024 });
    if (parser.feed(request_text) != .complete) return error.BadRequestText;
    const head = &parser.head;

    const clients = try arena.alloc(Address, clients_count);
    for (clients, 0..) |*client, i| client.* = Address.initIp4(.{ 10, @intCast(i >> 16), @intCast((i >> 8) & 0xff), @intCast(i & 0xff) }, 40000);

    var config: Config = .{};
    config.rate_limit = "1000000/s";
    config.access = .{ .allow = "192.168.0.0/16 10.0.0.0/8" };
    const limits = (try RateLimits.build(arena, &config, 1)).?;
    const access = (try AccessPolicy.build(arena, &config)).?;
    const slots = try arena.alloc(RateLimiter.Slot, RateLimiter.slots_count);
    var limiter: RateLimiter = .init(slots);

    const plain: rewrite.Forwarding = .{ .client_ip = "10.0.0.9", .trusted = false };
    const side: HeaderPolicy.Side = .{
        .dropped = &.{"x-env"},
        .written = &.{.{ .name = "X-Env", .value = "prod", .variables = false }},
    };
    const variables: HeaderPolicy.Variables = .{ .client_ip = "10.0.0.9", .request_id = "", .scheme = "http", .host = "shop.example" };
    var with_rule = plain;
    with_rule.rules = &.{ .side = &side, .variables = &variables };

    var out: [4096]u8 = undefined;
    // Interleaved, run by run, so that the machine's drift falls on both alike.
    var plain_runs: [runs]f64 = undefined;
    var rule_runs: [runs]f64 = undefined;
    var differences: [runs]f64 = undefined;
    for (&plain_runs, &rule_runs, &differences) |*p, *r, *d| {
        p.* = timePerCall(compose, .{ &out, head, plain });
        r.* = timePerCall(compose, .{ &out, head, with_rule });
        d.* = r.* - p.*;
    }
    const compose_plain = middle(&plain_runs);
    const compose_rule = middle(&rule_runs);
    const rule_cost = middle(&differences);
    var now: u64 = 1_000_000_000;
    const rate_check = median(struct {
        fn call(l: *const RateLimits, r: *RateLimiter, h: *const http.Request, c: []const Address, t: *u64, i: usize) void {
            t.* += 1_000;
            const verdict = l.take(r, &c[i % c.len], h, null, t.*);
            std.mem.doNotOptimizeAway(verdict == .allowed);
        }
    }.call, .{ &limits, &limiter, head, clients, &now });
    const allow_check = median(struct {
        fn call(a: *const AccessPolicy, c: []const Address, i: usize) void {
            std.mem.doNotOptimizeAway(a.allows(&c[i % c.len], 0, null));
        }
    }.call, .{ &access, clients });

    std.debug.print(
        \\edge policy, per call (median of {d} runs of {d} calls, ReleaseFast):
        \\  compose a request head, no rule:      {d:.1} ns
        \\  compose a request head, one set rule: {d:.1} ns  (the rule: {d:.1} ns, median of the runs' differences)
        \\  rate-limit check, 10,000 clients:     {d:.1} ns
        \\  allow list of 2 blocks:               {d:.1} ns
        \\
    , .{ runs, calls, compose_plain, compose_rule, rule_cost, rate_check, allow_check });
}

fn compose(out: *[4096]u8, head: *const http.Request, forwarding: rewrite.Forwarding, _: usize) void {
    const composed = rewrite.composeRequest(out, head, forwarding, .{}) catch unreachable;
    std.mem.doNotOptimizeAway(composed.len);
}

fn timePerCall(comptime function: anytype, args: anytype) f64 {
    const start = sys.clockMonotonicNs();
    for (0..calls) |i| @call(.auto, function, args ++ .{i});
    const elapsed = sys.clockMonotonicNs() - start;
    return @as(f64, @floatFromInt(elapsed)) / calls;
}

fn middle(results: *[runs]f64) f64 {
    std.mem.sortUnstable(f64, results, {}, std.sort.asc(f64));
    return results[runs / 2];
}

/// The median over `runs` of the time per call of `function(args..., i)`, in nanoseconds.
fn median(comptime function: anytype, args: anytype) f64 {
    var results: [runs]f64 = undefined;
    for (&results) |*result| result.* = timePerCall(function, args);
    return middle(&results);
}
