//! One pool as one worker sees it: its connections to the pool's backends, the balancer's
//! cursor, the retry budget, the requests in flight per backend, the pool's timer queues and
//! counters. A session's exchange points at the `Upstream` of the pool its route chose, so
//! everything an exchange touches for its backend is here, not in the worker-wide `Proxy`.
//!
//! An `Upstream` belongs to a pool instance (`PoolInstance`), one per worker, allocated by the
//! control thread with the instance and touched only by its worker. A reload that leaves a
//! pool unchanged keeps its instance, and with it these connections, cursors and counters.
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const TimerQueue = loop_ns.TimerQueue;
const Config = @import("../config/Config.zig");
const Pool = @import("../upstream/Pool.zig");
const Shared = @import("../upstream/Shared.zig");
const Balancer = @import("../balance/Balancer.zig");
const RetryBudget = @import("RetryBudget.zig");
const Histogram = @import("../metrics/Histogram.zig");
const Counter = @import("../stdx/Counter.zig");

const Upstream = @This();

pool: *const Config.Pool,
shared: *Shared,
conns: Pool,
balancer: Balancer,
retry_budget: RetryBudget,
/// Requests this worker has in flight to each backend (`least_conn`).
inflight: [Config.backends_count_max]u32 = @splat(0),
/// Set when the worker adopts a generation with this pool (`bindQueues`): queues are the
/// worker's, shared by every pool with the same timeout.
queues: Queues = undefined,
/// Set when the worker adopts a generation without this pool: its idle connections are
/// closed and it only finishes what it has in flight.
retired: bool = false,
stats: Stats = .{},

pub const Queues = struct {
    connect: *TimerQueue,
    /// Request sent -> response head.
    response: *TimerQueue,
    /// Gaps between response body bytes.
    body: *TimerQueue,
    /// The whole exchange (only armed when the pool sets a total timeout).
    total: *TimerQueue,
    idle: *TimerQueue,
};

/// The pool's timeouts, in `Queues` order: what the worker needs a queue for.
pub fn timeouts(pool: *const Config.Pool) [5]u64 {
    return .{
        pool.connect_timeout_ns,
        pool.response_timeout_ns,
        pool.body_timeout_ns,
        @max(1, pool.total_timeout_ns),
        pool.idle_timeout_ns,
    };
}

/// Written by the worker, read by the control thread (`Counter`).
pub const Stats = struct {
    requests: Counter = .{},
    upgrades: Counter = .{},
    upstream_errors: Counter = .{},
    upstream_connect_failures: Counter = .{},
    upstream_stale_retries: Counter = .{},
    retries: Counter = .{},
    retries_refused_by_budget: Counter = .{},
    no_backend_available: Counter = .{},
    overloaded: Counter = .{},
    /// How long exchanges took, from the request head parsed to the response sent (or the
    /// error answered, or the connection closed): see `Session.recordDuration`.
    latency: Histogram = .{},
    /// Final responses relayed from each backend, by status class 1xx..5xx (a 101 counts as
    /// 1xx; sluice's own error responses are in `own_responses`).
    backend_responses: [Config.backends_count_max][5]Counter = @splat(@splat(.{})),
    /// Tries sent to each backend (a retry counts on the backend it went to).
    backend_requests: [Config.backends_count_max]Counter = @splat(.{}),
    /// Responses sluice answered itself for requests routed to this pool (502, 503, 504,
    /// 413...), by status class.
    own_responses: [5]Counter = @splat(.{}),

    /// Carries the counters of `from` (the same pool's previous instance, on this worker)
    /// over: every pool-wide counter, and each backend's that is still in the pool
    /// (`backend_map[i]`: the index in `from` of this instance's backend i, if it had it).
    /// A reload that changes a pool then does not reset what `/metrics` shows for it.
    pub fn carryFrom(stats: *Stats, from: *const Stats, backend_map: []const ?u16) void {
        inline for (.{
            "requests",                  "upgrades", "upstream_errors",      "upstream_connect_failures",
            "upstream_stale_retries",    "retries",  "no_backend_available", "overloaded",
            "retries_refused_by_budget",
        }) |name| @field(stats, name).set(@field(from, name).load());
        stats.latency.addRelaxed(&from.latency);
        for (&stats.own_responses, &from.own_responses) |*to, *value| to.set(value.load());
        for (backend_map, 0..) |from_index, i| {
            const old = from_index orelse continue;
            stats.backend_requests[i].set(from.backend_requests[old].load());
            for (&stats.backend_responses[i], &from.backend_responses[old]) |*to, *value| to.set(value.load());
        }
    }
};

/// The worker's own count of its requests in flight to `index` (`least_conn` reads it as a
/// plain array); the control thread reads it too, so each write is a relaxed atomic store.
pub fn inflightAdd(upstream: *Upstream, index: u16, delta: i2) void {
    const count = &upstream.inflight[index];
    assert(delta == 1 or count.* > 0);
    const next = if (delta == 1) count.* + 1 else count.* - 1;
    @atomicStore(u32, count, next, .monotonic);
}

/// `sessions_count`: the worker's session slots (at most one busy connection each).
pub fn init(
    upstream: *Upstream,
    allocator: std.mem.Allocator,
    loop: *Loop,
    pool: *const Config.Pool,
    shared: *Shared,
    sessions_count: u32,
    seed: u64,
    now_ns: u64,
) !void {
    var weights: [Config.backends_count_max]u16 = undefined;
    for (pool.backends(), weights[0..pool.backends_count]) |*backend, *weight| {
        weight.* = backend.weight;
    }
    const conns_count = sessions_count + pool.backends_count * pool.keepalive_max;
    upstream.* = .{
        .pool = pool,
        .shared = shared,
        .conns = undefined,
        .balancer = .init(pool.strategy, weights[0..pool.backends_count], shared.maglev, seed),
        .retry_budget = .init(pool.retry.budget_percent, pool.retry.budget_min_per_second, now_ns),
    };
    // The idle queue is the worker's; bound in `bindQueues` before any connection is parked.
    upstream.conns = try Pool.init(allocator, loop, shared, undefined, conns_count, pool.backends_count, pool.keepalive_max);
}

pub fn deinit(upstream: *Upstream, allocator: std.mem.Allocator) void {
    upstream.conns.deinit(allocator);
    upstream.* = undefined;
}

pub fn bindQueues(upstream: *Upstream, queues: Queues) void {
    upstream.queues = queues;
    upstream.conns.idle_queue = queues.idle;
}

/// The worker adopted a generation without this pool.
pub fn retire(upstream: *Upstream) void {
    upstream.retired = true;
    upstream.conns.closeIdle();
}

/// Nothing of this pool's is left on the worker's loop once its sessions are done: no request
/// in flight and no idle connection being closed. (Busy connections belong to sessions, which
/// hold their generation until they let go of them.)
pub fn isQuiet(upstream: *const Upstream) bool {
    for (upstream.inflight[0..upstream.pool.backends_count]) |count| if (count > 0) return false;
    return upstream.conns.isQuiet();
}
