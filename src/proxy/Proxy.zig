//! One worker's proxy: its session slots, buffers, upstream pool, balancer cursor, timer
//! queues and counters: everything a `Session` reaches for. The worker (runtime/) owns the
//! thread, the loop and the listener, hands accepted connections to `startSession`, and is
//! told through `on_slot_free` when a full proxy can take connections again. Keeping this here
//! keeps the layering one way: proxy/ never imports runtime/.
//!
//! Memory sizing (all allocated in `init`, on the control thread, before the first accept):
//!   sessions        = ceil(connections_max / workers)
//!   buffers         = 2 * sessions              (client side + upstream side per session)
//!   buffer bytes    = header_bytes_max + rewrite headroom, rounded up to a page
//!   header fields   = sessions * headers_count_max (one array per session, shared by its
//!                     request and response parser, which never run at the same time)
//!   upstream conns  = sessions + backends * keepalive_max
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const TimerQueue = loop_ns.TimerQueue;
const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const BufferPool = @import("../stdx/BufferPool.zig");
const Config = @import("../config/Config.zig");
const http = @import("../http/http.zig");
const Pool = @import("../upstream/Pool.zig");
const Shared = @import("../upstream/Shared.zig");
const Balancer = @import("../balance/Balancer.zig");
const RetryBudget = @import("RetryBudget.zig");
const AccessLog = @import("AccessLog.zig");
const Session = @import("Session.zig");
const Failure = @import("failure.zig").Failure;
const Histogram = @import("../metrics/Histogram.zig");

const Proxy = @This();

loop: *Loop,
config: *const Config,
sessions: []Session,
/// Slots `sessions[0..sessions_touched]` have been initialized. A slot is initialized when
/// first used, so the pages of slots a quiet worker never needs are never touched and idle
/// RSS follows peak concurrency, not the connection limit.
sessions_touched: u32 = 0,
free_sessions: []u32,
free_sessions_count: u32,
headers: []http.Header,
buffers: BufferPool,
upstream: Pool,
/// The pool's state shared with the other workers and the control thread.
shared: *Shared,
balancer: Balancer,
/// Requests this worker has in flight to each backend (`least_conn`).
inflight: [Config.backends_count_max]u32 = @splat(0),
retry_budget: RetryBudget,
queues: Queues,
buffer_trim_timer: loop_ns.Timer = .{},
/// Null when access logging is off.
access_log: ?AccessLog = null,
access_log_timer: loop_ns.Timer = .{},
/// Set by `drain`: finish what is in flight, take nothing new, keep nothing alive.
draining: bool = false,
/// Read by the control thread.
connections_active: std.atomic.Value(u32) = .init(0),
stats: Stats = .{},
on_slot_free: SlotFreeCallback,

pub const SlotFreeCallback = struct {
    context: *anyopaque,
    function: *const fn (*anyopaque) void,
};

/// The timer queues sessions use; the owner registers them with the loop (`timerQueues`).
pub const Queues = struct {
    client_header: TimerQueue,
    /// The idle wait after the hot period: `client_idle - client_short`.
    client_idle_rest: TimerQueue,
    client_idle: TimerQueue,
    /// `min(1 s, client_idle)`: the hot idle period, and the linger after an error response.
    client_short: TimerQueue,
    upstream_connect: TimerQueue,
    /// Request sent -> response head.
    upstream_response: TimerQueue,
    /// Gaps between response body bytes.
    upstream_body: TimerQueue,
    /// The whole exchange (only armed when the pool sets a total timeout).
    upstream_total: TimerQueue,
    upstream_idle: TimerQueue,
    /// How often cold free buffers give their pages back (`trimBuffersCallback`).
    buffer_trim: TimerQueue,
    /// How often the access log hands its lines to the control thread.
    access_log_publish: TimerQueue,
};

pub const Stats = struct {
    requests: u64 = 0,
    upgrades: u64 = 0,
    client_errors: u64 = 0,
    client_timeouts: u64 = 0,
    upstream_errors: u64 = 0,
    upstream_connect_failures: u64 = 0,
    upstream_stale_retries: u64 = 0,
    retries: u64 = 0,
    retries_refused_by_budget: u64 = 0,
    no_backend_available: u64 = 0,
    overloaded: u64 = 0,
    idle_parks: u64 = 0,
    buffers_trimmed: u64 = 0,
    /// How long exchanges took, from the request head parsed to the response sent (or the
    /// error answered, or the connection closed): see `Session.recordDuration`.
    latency: Histogram = .{},
    /// Final responses relayed from each backend, by status class 1xx..5xx (a 101 counts as
    /// 1xx; sluice's own error responses are in the counters above).
    backend_responses: [Config.backends_count_max][5]u64 = @splat(@splat(0)),

    pub fn countFailure(stats: *Stats, failure: Failure) void {
        if (failure == .no_backend_available) stats.no_backend_available += 1;
        switch (failure.status()) {
            503 => stats.overloaded += 1,
            500...502, 504...599 => stats.upstream_errors += 1,
            else => stats.client_errors += 1,
        }
    }
};

/// Two short waits share one queue (the loop has room for eight): how long a connection
/// waiting for its next request keeps its buffer before returning it to the pool
/// (Session.parkBuffer), long enough that a client sending requests back to back never pays
/// for it; and how long an error response may take to be read before we close (Session.fail).
/// Both shrink with a client idle timeout under a second.
const short_ns = 1 * std.time.ns_per_s;

pub fn sessionsCount(config: *const Config, workers_count: u32) u32 {
    return std.math.divCeil(u32, config.connections_max, workers_count) catch unreachable;
}

/// Allocates everything the proxy will ever use. `proxy` must be at its final address, and
/// `loop` may still be uninitialized (it is created on the worker's thread).
pub fn init(
    proxy: *Proxy,
    allocator: std.mem.Allocator,
    loop: *Loop,
    config: *const Config,
    shared: *Shared,
    sessions_count: u32,
    seed: u64,
    on_slot_free: SlotFreeCallback,
) !void {
    const pool = &config.pool;
    const buffers_count = 2 * sessions_count;
    const headers_per_session: u32 = config.headers_count_max;
    const conns_count = sessions_count + pool.backends_count * pool.keepalive_max;
    var weights: [Config.backends_count_max]u16 = undefined;
    for (pool.backends(), weights[0..pool.backends_count]) |*backend, *weight| {
        weight.* = backend.weight;
    }

    // Untouched until used: slots are initialized on first use (`startSession`).
    const sessions = try StaticAllocator.allocUntouched(allocator, Session, null, sessions_count);
    errdefer allocator.free(sessions);
    const free_sessions = try allocator.alloc(u32, sessions_count);
    errdefer allocator.free(free_sessions);
    const headers_count = @as(usize, sessions_count) * headers_per_session;
    const headers = try StaticAllocator.allocUntouched(allocator, http.Header, null, headers_count);
    errdefer allocator.free(headers);
    var buffers = try BufferPool.init(allocator, buffers_count, config.bufferBytes());
    errdefer buffers.deinit(allocator);

    proxy.* = .{
        .loop = loop,
        .config = config,
        .sessions = sessions,
        .free_sessions = free_sessions,
        .free_sessions_count = sessions_count,
        .headers = headers,
        .buffers = buffers,
        .upstream = undefined,
        .shared = shared,
        .balancer = .init(pool.strategy, weights[0..pool.backends_count], shared.maglev, seed),
        .retry_budget = .init(
            pool.retry.budget_percent,
            pool.retry.budget_min_per_second,
            sys.clockMonotonicNs(), // The loop's clock, which does not exist yet.
        ),
        .queues = .{
            .client_header = .init(config.client_header_timeout_ns),
            .client_idle_rest = .init(@max(1, config.client_idle_timeout_ns -| short_ns)),
            .client_idle = .init(config.client_idle_timeout_ns),
            .client_short = .init(@min(short_ns, config.client_idle_timeout_ns)),
            .upstream_connect = .init(pool.connect_timeout_ns),
            .upstream_response = .init(pool.response_timeout_ns),
            .upstream_body = .init(pool.body_timeout_ns),
            .upstream_total = .init(@max(1, pool.total_timeout_ns)),
            .upstream_idle = .init(pool.idle_timeout_ns),
            .buffer_trim = .init(buffer_trim_interval_ns),
            .access_log_publish = .init(access_log_publish_ns),
        },
        .on_slot_free = on_slot_free,
    };
    if (config.access_log.enabled()) {
        proxy.access_log = try AccessLog.init(allocator, config.access_log.format);
    }
    proxy.upstream = try Pool.init(
        allocator,
        loop,
        shared,
        &proxy.queues.upstream_idle,
        conns_count,
        pool.backends_count,
        pool.keepalive_max,
    );
    // Lowest index on top: new slots are taken in order, so `sessions_touched` is a prefix.
    for (free_sessions, 0..) |*slot, i| slot.* = @intCast(sessions_count - 1 - i);
    assert(proxy.buffers.availableCount() == 2 * sessions_count);
}

pub fn deinit(proxy: *Proxy, allocator: std.mem.Allocator) void {
    if (proxy.access_log) |*log| log.deinit(allocator);
    proxy.upstream.deinit(allocator);
    proxy.buffers.deinit(allocator);
    allocator.free(proxy.headers);
    allocator.free(proxy.free_sessions);
    allocator.free(proxy.sessions);
    proxy.* = undefined;
}

/// Registers the session timer queues with the loop (on the loop's thread).
pub fn registerTimerQueues(proxy: *Proxy) void {
    inline for (@typeInfo(Queues).@"struct".field_names) |name| {
        proxy.loop.timerQueueRegister(&@field(proxy.queues, name));
    }
    proxy.loop.timerArm(&proxy.queues.buffer_trim, &proxy.buffer_trim_timer, Proxy, proxy, trimBuffersCallback);
    if (proxy.access_log != null) {
        proxy.loop.timerArm(&proxy.queues.access_log_publish, &proxy.access_log_timer, Proxy, proxy, publishAccessLogCallback);
    }
}

const access_log_publish_ns = 200 * std.time.ns_per_ms;

fn publishAccessLogCallback(proxy: *Proxy) void {
    _ = proxy.access_log.?.publish(); // If the control thread is behind, the next tick retries.
    proxy.loop.timerArm(&proxy.queues.access_log_publish, &proxy.access_log_timer, Proxy, proxy, publishAccessLogCallback);
}

/// Buffers a burst touched once go back to the kernel when they have been free for a while
/// (stdx/BufferPool.zig `trim`); the most recently used stay warm for the next requests.
const buffer_trim_interval_ns = 5 * std.time.ns_per_s;
const buffers_kept_warm = 64;

fn trimBuffersCallback(proxy: *Proxy) void {
    proxy.stats.buffers_trimmed += proxy.buffers.trim(buffers_kept_warm);
    proxy.loop.timerArm(&proxy.queues.buffer_trim, &proxy.buffer_trim_timer, Proxy, proxy, trimBuffersCallback);
}

pub fn hasFreeSession(proxy: *const Proxy) bool {
    return proxy.free_sessions_count > 0;
}

/// Serves an accepted connection. The caller checked `hasFreeSession`.
pub fn startSession(proxy: *Proxy, fd: linux.fd_t, peer: Address) void {
    assert(proxy.free_sessions_count > 0);
    assert(!proxy.draining);
    proxy.free_sessions_count -= 1;
    const index = proxy.free_sessions[proxy.free_sessions_count];
    const session = &proxy.sessions[index];
    if (index == proxy.sessions_touched) {
        const per_session: usize = proxy.config.headers_count_max;
        session.* = .init(proxy, proxy.headers[index * per_session ..][0..per_session]);
        proxy.sessions_touched += 1;
    }
    assert(index < proxy.sessions_touched);
    _ = proxy.connections_active.fetchAdd(1, .monotonic);
    session.start(fd, peer);
}

/// Called by a session once it is finalized.
pub fn releaseSession(proxy: *Proxy, session: *Session) void {
    const index: u32 = @intCast(session - proxy.sessions.ptr);
    assert(index < proxy.sessions_touched);
    assert(proxy.free_sessions_count < proxy.sessions.len);
    proxy.free_sessions[proxy.free_sessions_count] = index;
    proxy.free_sessions_count += 1;
    _ = proxy.connections_active.fetchSub(1, .monotonic);
    proxy.on_slot_free.function(proxy.on_slot_free.context);
}

/// Stop keeping anything alive: idle client and upstream connections close now, the others
/// after their current response (sessions consult `draining`).
pub fn drain(proxy: *Proxy) void {
    proxy.draining = true;
    proxy.upstream.closeIdle();
    for (proxy.sessions[0..proxy.sessions_touched]) |*session| session.drain();
}

pub fn httpLimits(proxy: *const Proxy) http.Limits {
    return .{
        .header_bytes_max = proxy.config.header_bytes_max,
        .headers_count_max = proxy.config.headers_count_max,
        .target_bytes_max = proxy.config.target_bytes_max,
    };
}

/// Whether idle connections return their buffer: not when the idle timeout is so short that
/// the hot period would already end it.
pub fn parksIdleBuffers(proxy: *const Proxy) bool {
    return proxy.config.client_idle_timeout_ns > short_ns;
}
