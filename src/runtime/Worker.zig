//! A worker thread: its own event loop, its own SO_REUSEPORT listener, its session slots,
//! buffers, upstream pool and balancer cursor. Workers share nothing on the request path;
//! the control thread talks to one only through `requestDrain` (an atomic flag plus a wake)
//! and reads its atomic counters.
//!
//! Memory sizing (all allocated in `init`, on the control thread, before the first accept):
//!   sessions        = ceil(connections_max / workers)
//!   buffers         = 2 * sessions              (client side + upstream side per session)
//!   buffer bytes    = header_bytes_max + rewrite headroom, rounded up to a page
//!   header fields   = sessions * headers_count_max (one array per session, shared by its
//!                     request and response parser, which never run at the same time)
//!   upstream conns  = sessions + backends * upstream_keepalive_max
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const BufferPool = @import("../stdx/BufferPool.zig");
const Config = @import("../config/Config.zig");
const http = @import("../http/http.zig");
const Session = @import("../proxy/Session.zig");
const Failure = @import("../proxy/failure.zig").Failure;
const Pool = @import("../upstream/Pool.zig");
const RoundRobin = @import("../balance/RoundRobin.zig");

const Worker = @This();

index: u32,
config: *const Config,
loop: Loop,
listener: Socket,
accept_completion: Completion = .{},
accept_backoff_timer: Timer = .{},
accepting: bool = false,

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
balancer: RoundRobin = .{},
queues: Queues,

/// Set on the worker thread when it sees `drain_requested`.
draining: bool = false,
drain_requested: std.atomic.Value(bool) = .init(false),
/// Read by the control thread.
connections_active: std.atomic.Value(u32) = .init(0),
finished: std.atomic.Value(bool) = .init(false),
/// Set by the worker thread once its loop is up and accepting, or it failed to start.
ready: std.atomic.Value(u8) = .init(0),
init_error: ?Loop.InitError = null,
stats: Stats = .{},
thread: ?std.Thread = null,

pub const Queues = struct {
    client_header: TimerQueue,
    /// The idle wait after the hot period: `client_idle - client_short`.
    client_idle_rest: TimerQueue,
    client_idle: TimerQueue,
    /// `min(1 s, client_idle)`: the hot idle period, and the linger after an error response.
    client_short: TimerQueue,
    upstream_connect: TimerQueue,
    upstream_response: TimerQueue,
    upstream_idle: TimerQueue,
    accept_backoff: TimerQueue,
};

pub const Stats = struct {
    connections_accepted: u64 = 0,
    requests: u64 = 0,
    upgrades: u64 = 0,
    client_errors: u64 = 0,
    client_timeouts: u64 = 0,
    upstream_errors: u64 = 0,
    upstream_connect_failures: u64 = 0,
    upstream_stale_retries: u64 = 0,
    overloaded: u64 = 0,
    accept_errors: u64 = 0,
    idle_parks: u64 = 0,

    pub fn countFailure(stats: *Stats, failure: Failure) void {
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

/// Whether idle connections return their buffer: not when the idle timeout is so short that
/// the hot period would already end it.
pub fn parksIdleBuffers(worker: *const Worker) bool {
    return worker.config.client_idle_timeout_ns > short_ns;
}
/// Pause before accepting again after the process ran out of file descriptors.
const accept_backoff_ns = 100 * std.time.ns_per_ms;
const listen_backlog = 4096;

pub fn sessionsCount(config: *const Config, workers_count: u32) u32 {
    return std.math.divCeil(u32, config.connections_max, workers_count) catch unreachable;
}

/// Allocates everything the worker will ever use. `worker` must be at its final address.
pub fn init(
    worker: *Worker,
    allocator: std.mem.Allocator,
    config: *const Config,
    index: u32,
    workers_count: u32,
    listener_fd: linux.fd_t,
) !void {
    const sessions_count = sessionsCount(config, workers_count);
    const buffers_count = 2 * sessions_count;
    const headers_per_session: u32 = config.headers_count_max;
    const conns_count = sessions_count + config.backends_count * config.upstream_keepalive_max;

    const sessions = try allocator.alloc(Session, sessions_count);
    errdefer allocator.free(sessions);
    const free_sessions = try allocator.alloc(u32, sessions_count);
    errdefer allocator.free(free_sessions);
    const headers = try allocator.alloc(
        http.Header,
        @as(usize, sessions_count) * headers_per_session,
    );
    errdefer allocator.free(headers);
    var buffers = try BufferPool.init(allocator, buffers_count, config.bufferBytes());
    errdefer buffers.deinit(allocator);

    worker.* = .{
        .index = index,
        .config = config,
        .loop = undefined, // Created on the worker's own thread (io_uring single issuer).
        .listener = Socket.init(listener_fd),
        .sessions = sessions,
        .free_sessions = free_sessions,
        .free_sessions_count = sessions_count,
        .headers = headers,
        .buffers = buffers,
        .upstream = undefined,
        .queues = .{
            .client_header = .init(config.client_header_timeout_ns),
            .client_idle_rest = .init(@max(1, config.client_idle_timeout_ns -| short_ns)),
            .client_idle = .init(config.client_idle_timeout_ns),
            .client_short = .init(@min(short_ns, config.client_idle_timeout_ns)),
            .upstream_connect = .init(config.upstream_connect_timeout_ns),
            .upstream_response = .init(config.upstream_response_timeout_ns),
            .upstream_idle = .init(config.upstream_idle_timeout_ns),
            .accept_backoff = .init(accept_backoff_ns),
        },
    };
    worker.upstream = try Pool.init(
        allocator,
        &worker.loop,
        &worker.queues.upstream_idle,
        conns_count,
        config.backends_count,
        config.upstream_keepalive_max,
    );
    // Lowest index on top: new slots are taken in order, so `sessions_touched` is a prefix.
    for (free_sessions, 0..) |*slot, i| slot.* = @intCast(sessions_count - 1 - i);
    assert(worker.buffers.availableCount() == 2 * sessions_count);
}

pub fn deinit(worker: *Worker, allocator: std.mem.Allocator) void {
    worker.upstream.deinit(allocator);
    worker.buffers.deinit(allocator);
    allocator.free(worker.headers);
    allocator.free(worker.free_sessions);
    allocator.free(worker.sessions);
    worker.* = undefined;
}

pub fn httpLimits(worker: *const Worker) http.Limits {
    return .{
        .header_bytes_max = worker.config.header_bytes_max,
        .headers_count_max = worker.config.headers_count_max,
        .target_bytes_max = worker.config.target_bytes_max,
    };
}

pub fn spawn(worker: *Worker) !void {
    // Workers need little stack: no recursion, buffers live in the slab.
    worker.thread = try std.Thread.spawn(.{ .stack_size = 256 * 1024 }, run, .{worker});
}

/// Thread entry: set up the loop, accept, and tick until drained.
fn run(worker: *Worker) void {
    const mode: Loop.Mode = switch (worker.config.io) {
        .auto => .auto,
        .uring => .uring,
        .epoll => .epoll,
    };
    worker.loop = Loop.init(.{ .mode = mode }) catch |err| {
        worker.init_error = err;
        worker.ready.store(2, .release);
        return;
    };
    defer worker.loop.deinit();
    inline for (@typeInfo(Queues).@"struct".field_names) |name| {
        worker.loop.timerQueueRegister(&@field(worker.queues, name));
    }
    worker.loop.setWakeCallback(Worker, worker, wakeCallback);
    worker.acceptNext();
    worker.ready.store(1, .release);
    while (!worker.isDone()) {
        worker.loop.tick() catch |err| {
            std.log.err("worker {d}: event loop failed: {s}", .{ worker.index, @errorName(err) });
            break;
        };
    }
    worker.finished.store(true, .release);
}

fn isDone(worker: *const Worker) bool {
    return worker.draining and worker.connections_active.load(.monotonic) == 0 and
        !worker.accept_completion.isPending();
}

/// Called from the control thread.
pub fn requestDrain(worker: *Worker) void {
    worker.drain_requested.store(true, .release);
    worker.loop.wake();
}

fn wakeCallback(worker: *Worker) void {
    if (!worker.drain_requested.load(.acquire) or worker.draining) return;
    worker.draining = true;
    if (worker.accept_completion.isPending()) worker.loop.cancel(&worker.accept_completion);
    worker.loop.timerCancel(&worker.accept_backoff_timer);
    worker.upstream.closeIdle();
    for (worker.sessions[0..worker.sessions_touched]) |*session| session.drain();
    if (!worker.accept_completion.isPending()) worker.closeListener();
}

fn closeListener(worker: *Worker) void {
    if (worker.listener.fd < 0) return;
    worker.loop.close(&worker.listener);
    worker.listener.fd = -1;
}

fn acceptNext(worker: *Worker) void {
    assert(!worker.accept_completion.isPending());
    if (worker.draining or worker.free_sessions_count == 0) {
        worker.accepting = false;
        return;
    }
    worker.accepting = true;
    worker.loop.accept(&worker.accept_completion, &worker.listener, Worker, worker, acceptCallback);
}

fn acceptCallback(worker: *Worker, result: sys.AcceptError!linux.fd_t) void {
    const fd = result catch |err| switch (err) {
        error.Canceled => {
            worker.accepting = false;
            return worker.closeListener();
        },
        error.ConnectionAborted, error.WouldBlock => return worker.acceptNext(),
        error.ProcessFdQuotaExceeded,
        error.SystemFdQuotaExceeded,
        error.SystemResources,
        error.Unexpected,
        => {
            // Out of descriptors or memory: accepting again at once would spin. Existing
            // connections keep being served; try again shortly.
            worker.stats.accept_errors += 1;
            worker.accepting = false;
            return worker.loop.timerArm(
                &worker.queues.accept_backoff,
                &worker.accept_backoff_timer,
                Worker,
                worker,
                acceptBackoffCallback,
            );
        },
    };
    if (worker.draining) {
        sys.close(fd);
        return worker.closeListener();
    }
    var storage: linux.sockaddr.storage = undefined;
    _ = sys.getpeername(fd, &storage) catch {
        sys.close(fd); // Already reset by the peer: nothing to serve.
        return worker.acceptNext();
    };
    const peer = Address.fromStorage(&storage);
    sys.setsockoptInt(fd, linux.IPPROTO.TCP, linux.TCP.NODELAY, 1) catch {}; // Latency only.
    assert(worker.free_sessions_count > 0);
    worker.free_sessions_count -= 1;
    const index = worker.free_sessions[worker.free_sessions_count];
    const session = &worker.sessions[index];
    if (index == worker.sessions_touched) {
        const per_session: usize = worker.config.headers_count_max;
        session.* = .init(worker, worker.headers[index * per_session ..][0..per_session]);
        worker.sessions_touched += 1;
    }
    assert(index < worker.sessions_touched);
    _ = worker.connections_active.fetchAdd(1, .monotonic);
    worker.stats.connections_accepted += 1;
    worker.acceptNext();
    session.start(fd, peer);
}

fn acceptBackoffCallback(worker: *Worker) void {
    if (!worker.accept_completion.isPending()) worker.acceptNext();
}

pub fn releaseSession(worker: *Worker, session: *Session) void {
    const index: u32 = @intCast(session - worker.sessions.ptr);
    assert(index < worker.sessions.len);
    assert(worker.free_sessions_count < worker.sessions.len);
    worker.free_sessions[worker.free_sessions_count] = index;
    worker.free_sessions_count += 1;
    _ = worker.connections_active.fetchSub(1, .monotonic);
    const backing_off = worker.accept_backoff_timer.isArmed();
    if (!worker.accepting and !worker.draining and !backing_off) worker.acceptNext();
}

/// A listening socket for `address`, SO_REUSEPORT so every worker can bind its own.
pub fn listen(address: *const Address) !linux.fd_t {
    const fd = try sys.socket(
        address.family(),
        linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC,
        0,
    );
    errdefer sys.close(fd);
    try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEADDR, 1);
    try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEPORT, 1);
    try sys.bind(fd, address.sockaddr(), address.socklen());
    try sys.listen(fd, listen_backlog);
    return fd;
}
