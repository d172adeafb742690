//! A worker thread: its own event loop, its own SO_REUSEPORT listener, and the proxy state it
//! serves connections with (proxy/Proxy.zig: sessions, buffers, upstream pool). Workers share
//! nothing on the request path; the control thread talks to one only through `requestDrain`
//! (an atomic flag plus a wake) and reads its atomic counters.
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
const Config = @import("../config/Config.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Shared = @import("../upstream/Shared.zig");
const InitTrace = @import("InitTrace.zig");

const Worker = @This();

index: u32,
config: *const Config,
loop: Loop,
proxy: Proxy,
listener: Socket,
accept_completion: Completion = .{},
accept_backoff_timer: Timer = .{},
accept_backoff: TimerQueue = .init(accept_backoff_ns),
accepting: bool = false,

drain_requested: std.atomic.Value(bool) = .init(false),
finished: std.atomic.Value(bool) = .init(false),
/// Set by the worker thread once its loop is up and accepting (1), or it failed to start (2);
/// a futex word, so the control thread sleeps until then instead of spinning.
ready: std.atomic.Value(u32) = .init(0),
init_error: ?Loop.InitError = null,
connections_accepted: u64 = 0,
accept_errors: u64 = 0,
thread: ?std.Thread = null,

/// Pause before accepting again after the process ran out of file descriptors.
const accept_backoff_ns = 100 * std.time.ns_per_ms;
const listen_backlog = 4096;

/// Allocates everything the worker will ever use. `worker` must be at its final address.
pub fn init(
    worker: *Worker,
    allocator: std.mem.Allocator,
    config: *const Config,
    shared: *Shared,
    index: u32,
    workers_count: u32,
    listener_fd: linux.fd_t,
) !void {
    worker.* = .{
        .index = index,
        .config = config,
        .loop = undefined, // Created on the worker's own thread (io_uring single issuer).
        .proxy = undefined,
        .listener = Socket.init(listener_fd),
    };
    try worker.proxy.init(
        allocator,
        &worker.loop,
        config,
        shared,
        Proxy.sessionsCount(config, workers_count),
        index,
        .{ .context = worker, .function = slotFreeCallback },
    );
}

pub fn deinit(worker: *Worker, allocator: std.mem.Allocator) void {
    worker.proxy.deinit(allocator);
    worker.* = undefined;
}

pub fn spawn(worker: *Worker) !void {
    // Workers need little stack: no recursion, buffers live in the slab.
    worker.thread = try std.Thread.spawn(.{ .stack_size = 256 * 1024 }, run, .{worker});
}

/// Thread entry: set up the loop, accept, and tick until drained.
fn run(worker: *Worker) void {
    worker.loop = Loop.init(.{ .mode = worker.config.io }) catch |err| {
        worker.init_error = err;
        worker.setReady(2);
        return;
    };
    defer worker.loop.deinit();
    worker.proxy.registerTimerQueues();
    worker.loop.timerQueueRegister(&worker.accept_backoff);
    worker.loop.setWakeCallback(Worker, worker, wakeCallback);
    worker.acceptNext();
    worker.setReady(1);
    while (!worker.isDone()) {
        worker.loop.tick() catch |err| {
            std.log.err("worker {d}: event loop failed: {s}", .{ worker.index, @errorName(err) });
            break;
        };
    }
    worker.finished.store(true, .release);
}

fn setReady(worker: *Worker, value: u32) void {
    worker.ready.store(value, .release);
    sys.futexWake(&worker.ready);
}

/// Blocks until the worker is accepting (1) or failed to start (2). Start-up only.
pub fn waitReady(worker: *Worker) u32 {
    while (true) {
        const value = worker.ready.load(.acquire);
        if (value != 0) return value;
        sys.futexWait(&worker.ready, 0, 100 * std.time.ns_per_ms);
    }
}

fn isDone(worker: *const Worker) bool {
    return worker.proxy.draining and worker.connectionsActive() == 0 and
        !worker.accept_completion.isPending() and worker.proxy.upstream.isQuiet();
}

/// May be called from any thread.
pub fn connectionsActive(worker: *const Worker) u32 {
    return worker.proxy.connections_active.load(.monotonic);
}

/// Called from the control thread.
pub fn requestDrain(worker: *Worker) void {
    worker.drain_requested.store(true, .release);
    worker.loop.wake();
}

fn wakeCallback(worker: *Worker) void {
    if (!worker.drain_requested.load(.acquire) or worker.proxy.draining) return;
    if (worker.accept_completion.isPending()) worker.loop.cancel(&worker.accept_completion);
    worker.loop.timerCancel(&worker.accept_backoff_timer);
    worker.proxy.drain();
    if (!worker.accept_completion.isPending()) worker.closeListener();
}

fn closeListener(worker: *Worker) void {
    if (worker.listener.fd < 0) return;
    worker.loop.close(&worker.listener);
    worker.listener.fd = -1;
}

fn acceptNext(worker: *Worker) void {
    assert(!worker.accept_completion.isPending());
    if (worker.proxy.draining or !worker.proxy.hasFreeSession()) {
        worker.accepting = false; // Resumed by slotFreeCallback.
        return;
    }
    worker.accepting = true;
    const listener = &worker.listener;
    worker.loop.accept(&worker.accept_completion, listener, Worker, worker, acceptCallback);
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
            worker.accept_errors += 1;
            worker.accepting = false;
            return worker.loop.timerArm(
                &worker.accept_backoff,
                &worker.accept_backoff_timer,
                Worker,
                worker,
                acceptBackoffCallback,
            );
        },
    };
    if (worker.proxy.draining) {
        sys.close(fd);
        return worker.closeListener();
    }
    var storage: linux.sockaddr.storage = undefined;
    _ = sys.getpeername(fd, &storage) catch {
        sys.close(fd); // Already reset by the peer: nothing to serve.
        return worker.acceptNext();
    };
    sys.setsockoptInt(fd, linux.IPPROTO.TCP, linux.TCP.NODELAY, 1) catch {}; // Latency only.
    worker.connections_accepted += 1;
    InitTrace.markFirstAccept();
    worker.proxy.startSession(fd, Address.fromStorage(&storage));
    worker.acceptNext();
}

fn acceptBackoffCallback(worker: *Worker) void {
    if (!worker.accept_completion.isPending()) worker.acceptNext();
}

/// The proxy freed a session slot: resume accepting if a full proxy had paused it.
fn slotFreeCallback(context: *anyopaque) void {
    const worker: *Worker = @ptrCast(@alignCast(context));
    const backing_off = worker.accept_backoff_timer.isArmed();
    if (worker.accepting or worker.proxy.draining or backing_off) return;
    if (worker.accept_completion.isPending()) return;
    worker.acceptNext();
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
