//! A worker thread: its own event loop, its own SO_REUSEPORT socket for each listener, and
//! the proxy state it serves connections with (proxy/Proxy.zig: sessions, buffers, and the
//! pools of the generations it holds). Workers share nothing on the request path; the control
//! thread talks to one only through `requestDrain` and `publish` (an atomic plus a wake) and
//! reads its atomic counters.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Counter = @import("../stdx/Counter.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("../config/Config.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Generation = @import("../proxy/Generation.zig");
const ListenerTable = @import("generations.zig").ListenerTable;
const InitTrace = @import("InitTrace.zig");
const log = @import("../stdx/log.zig");
const tls = @import("../tls/tls.zig");

const Worker = @This();

index: u32,
config: *const Config,
loop: Loop,
proxy: Proxy,
/// By listener slot (ListenerTable): the sockets this worker accepts on.
listeners: [ListenerTable.slots_max]Listener,
/// Where a new generation's listener sockets are found.
listener_table: *const ListenerTable,
accept_backoff: TimerQueue = .init(accept_backoff_ns),

drain_requested: std.atomic.Value(bool) = .init(false),
/// A generation published by the control thread and not yet adopted.
next_generation: std.atomic.Value(?*Generation) = .init(null),
/// TLS memory made by the reload that brought the first TLS to a process started without
/// (`giveTlsPool`), entered before the next generation is adopted.
tls_pool_next: std.atomic.Value(?*tls.memory.Pool) = .init(null),
finished: std.atomic.Value(bool) = .init(false),
/// Set by the worker thread once its loop is up and accepting (1), or it failed to start (2);
/// a futex word, so the control thread sleeps until then instead of spinning.
ready: std.atomic.Value(u32) = .init(0),
/// Set by the control thread once the worker's proxy is made (`Start.go`), or when start-up
/// failed before that (`Start.abort`): the thread makes its loop first, then waits on it.
start: std.atomic.Value(u32) = .init(@backingInt(Start.wait)),
init_error: ?Loop.InitError = null,
connections_accepted: Counter = .{},
accept_errors: u64 = 0,
thread: ?std.Thread = null,

/// One listener slot of this worker.
pub const Listener = struct {
    worker: *Worker,
    slot: u8,
    socket: Socket = .{ .fd = -1, .registered = false },
    /// The current generation has this listener.
    wanted: bool = false,
    accepting: bool = false,
    completion: Completion = .{},
    backoff_timer: Timer = .{},
    /// A socket to accept on once the previous one of this slot has finished closing.
    next_fd: linux.fd_t = -1,

    fn isOpen(listener: *const Listener) bool {
        return listener.socket.fd >= 0;
    }
};

/// Pause before accepting again after the process ran out of file descriptors.
const accept_backoff_ns = 100 * std.time.ns_per_ms;

/// io_uring submission queue entries of a worker's ring (its completion queue has 4×). The
/// kernel allocates and zeroes the ring when the worker starts, on the cold-start path: 1024
/// (64 KiB of SQEs and 64 KiB of CQEs) cost ~40 µs there, 256 ~18 µs. A tick writes about one
/// SQE per completion it handles, so 256 covers a tick of 256 completions; a larger batch
/// flushes the queue once more mid-tick (Uring.getSqe), and completions beyond 1024 wait in
/// the kernel's overflow list (IORING_FEAT_NODROP), neither lost. See docs/ARCHITECTURE.md,
/// "Start-up".
const ring_entries = 256;

pub const Start = enum(u32) { wait, go, abort };

/// Starts the worker's thread, which makes its event loop (on its own thread: io_uring's
/// single issuer) and then waits until `go` or `abort`. Started first thing, so that the
/// thread's creation, its scheduling and its ring's set-up overlap with the control thread
/// binding the listeners and allocating the proxy (docs/ARCHITECTURE.md, "Start-up").
/// `worker` must be at its final address.
pub fn spawn(worker: *Worker, config: *const Config, index: u32) !void {
    worker.* = .{
        .index = index,
        .config = config,
        .loop = undefined, // Made by the thread.
        .proxy = undefined, // Made by `init`, before `go`.
        .listeners = undefined,
        .listener_table = undefined,
    };
    // Workers need little stack: no recursion, buffers live in the slab.
    worker.thread = try std.Thread.spawn(.{ .stack_size = 256 * 1024 }, run, .{worker});
}

/// Allocates everything the worker will ever use but its pools' state (with each generation).
/// On the control thread, while the worker's thread makes its loop: nothing here reads the
/// loop (the proxy keeps its address).
pub fn init(
    worker: *Worker,
    allocator: std.mem.Allocator,
    config: *const Config,
    generation: *const Generation,
    listener_table: *const ListenerTable,
    workers_count: u32,
) !void {
    assert(worker.config == config and worker.start.load(.monotonic) == @backingInt(Start.wait));
    worker.listener_table = listener_table;
    for (&worker.listeners, 0..) |*listener, slot| listener.* = .{ .worker = worker, .slot = @intCast(slot) };
    try worker.proxy.init(
        allocator,
        &worker.loop,
        config,
        generation,
        worker.index,
        Proxy.sessionsCount(config, workers_count),
        .{ .context = worker, .function = slotFreeCallback },
        true, // A reload may add the first HTTPS listener or TLS pool (docs/TLS.md, "Memory").
        true, // And turn HTTP/2 on.
    );
}

pub fn deinit(worker: *Worker, allocator: std.mem.Allocator) void {
    worker.proxy.deinit(allocator);
    worker.* = undefined;
}

/// The control thread made the worker's proxy (`init`): the worker may accept.
pub fn go(worker: *Worker) void {
    worker.setStart(.go);
}

/// Start-up failed before `go`: the worker's thread frees its loop and ends.
pub fn abort(worker: *Worker) void {
    worker.setStart(.abort);
    if (worker.thread) |thread| thread.join();
    worker.thread = null;
}

fn setStart(worker: *Worker, value: Start) void {
    assert(worker.start.load(.monotonic) == @backingInt(Start.wait));
    worker.start.store(@backingInt(value), .release);
    sys.futexWake(&worker.start);
}

fn waitStart(worker: *Worker) Start {
    while (true) {
        const value: Start = @fromBackingInt(@intCast(worker.start.load(.acquire)));
        if (value != .wait) return value;
        sys.futexWait(&worker.start, @backingInt(Start.wait), 100 * std.time.ns_per_ms);
    }
}

/// Thread entry: set up the loop, wait for the proxy, accept, and tick until drained.
fn run(worker: *Worker) void {
    worker.loop = Loop.init(.{ .mode = worker.config.io, .entries = ring_entries }) catch |err| {
        worker.init_error = err;
        worker.setReady(2);
        return;
    };
    defer worker.loop.deinit();
    if (worker.waitStart() == .abort) return;
    if (worker.proxy.tls_pool) |pool| {
        // From here on AWS-LC allocates from this worker's pool only; its per-thread state
        // is made now rather than in the first handshake.
        pool.enter();
        tls.prepareThread();
    }
    worker.loop.timerQueueRegister(&worker.accept_backoff);
    worker.proxy.start();
    defer worker.proxy.stop();
    worker.syncListeners();
    worker.loop.setWakeCallback(Worker, worker, wakeCallback);
    worker.setReady(1);
    while (!worker.isDone()) {
        worker.loop.tick() catch |err| {
            log.err("worker {d}: event loop failed: {s}", .{ worker.index, @errorName(err) });
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
    if (!worker.proxy.draining or worker.connectionsActive() > 0) return false;
    for (&worker.listeners) |*listener| if (listener.completion.isPending()) return false;
    return worker.proxy.upstreamsQuiet();
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

/// Called from the control thread: the worker adopts `generation` at its next wake-up. One it
/// had not adopted yet is let go of on its behalf.
pub fn publish(worker: *Worker, generation: *Generation) void {
    if (worker.next_generation.swap(generation, .acq_rel)) |skipped| {
        _ = skipped.holders.fetchSub(1, .release);
    }
    worker.loop.wake();
}

/// Called from the control thread, before it publishes the first generation with TLS to a
/// worker that has no TLS memory: the worker enters `pool` before it adopts that generation.
pub fn giveTlsPool(worker: *Worker, pool: *tls.memory.Pool) void {
    assert(worker.tls_pool_next.swap(pool, .release) == null);
}

fn wakeCallback(worker: *Worker) void {
    if (!worker.proxy.draining) {
        if (worker.next_generation.swap(null, .acq_rel)) |generation| {
            // Given before the generation was published: seen once the generation is.
            if (worker.tls_pool_next.swap(null, .acquire)) |pool| {
                assert(worker.proxy.tls_pool == null);
                worker.proxy.tls_pool = pool;
                pool.enter(); // AWS-LC's per-thread state comes with the first handshake.
            }
            worker.proxy.adopt(generation);
            worker.syncListeners();
        }
        worker.proxy.adoptMembers();
    }
    if (!worker.drain_requested.load(.acquire) or worker.proxy.draining) return;
    worker.proxy.drain();
    for (&worker.listeners) |*listener| {
        listener.wanted = false;
        worker.stopListener(listener);
    }
}

/// Accepts on the current generation's listeners, and stops accepting on the others.
fn syncListeners(worker: *Worker) void {
    const generation = worker.proxy.generation;
    for (&worker.listeners) |*listener| {
        const wanted = std.mem.indexOfScalar(u8, generation.listener_slots, listener.slot) != null;
        if (wanted == listener.wanted) continue;
        listener.wanted = wanted;
        if (!wanted) {
            worker.stopListener(listener);
            continue;
        }
        const fd = worker.listener_table.slots[listener.slot].fds[worker.index];
        if (listener.isOpen()) {
            listener.next_fd = fd; // Still closing the slot's previous socket.
            continue;
        }
        listener.socket = Socket.init(fd);
        worker.acceptNext(listener);
    }
}

/// Cancels the accept (its callback closes the socket) or closes the socket now.
fn stopListener(worker: *Worker, listener: *Listener) void {
    worker.loop.timerCancel(&listener.backoff_timer);
    if (listener.completion.isPending()) return worker.loop.cancel(&listener.completion);
    worker.closeListener(listener);
}

fn closeListener(worker: *Worker, listener: *Listener) void {
    listener.accepting = false;
    if (listener.isOpen()) {
        worker.loop.close(&listener.socket);
        listener.socket.fd = -1;
    }
    if (listener.next_fd >= 0 and listener.wanted and !worker.proxy.draining) {
        listener.socket = Socket.init(listener.next_fd);
        listener.next_fd = -1;
        return worker.acceptNext(listener);
    }
    if (listener.next_fd >= 0) {
        sys.close(listener.next_fd);
        listener.next_fd = -1;
    }
}

fn acceptNext(worker: *Worker, listener: *Listener) void {
    assert(!listener.completion.isPending());
    if (worker.proxy.draining or !listener.wanted) return worker.closeListener(listener);
    if (!worker.proxy.hasFreeSession()) {
        listener.accepting = false; // Resumed by slotFreeCallback.
        return;
    }
    listener.accepting = true;
    worker.loop.accept(&listener.completion, &listener.socket, Listener, listener, acceptCallback);
}

fn acceptCallback(listener: *Listener, result: sys.AcceptError!linux.fd_t) void {
    const worker = listener.worker;
    const fd = result catch |err| switch (err) {
        error.Canceled => return worker.closeListener(listener),
        error.ConnectionAborted, error.WouldBlock => return worker.acceptNext(listener),
        error.ProcessFdQuotaExceeded,
        error.SystemFdQuotaExceeded,
        error.SystemResources,
        error.Unexpected,
        => {
            // Out of descriptors or memory: accepting again at once would spin. Existing
            // connections keep being served; try again shortly.
            worker.accept_errors += 1;
            listener.accepting = false;
            return worker.loop.timerArm(
                &worker.accept_backoff,
                &listener.backoff_timer,
                Listener,
                listener,
                acceptBackoffCallback,
            );
        },
    };
    if (worker.proxy.draining or !listener.wanted) {
        sys.close(fd);
        return worker.closeListener(listener);
    }
    var storage: linux.sockaddr.storage = undefined;
    _ = sys.getpeername(fd, &storage) catch {
        sys.close(fd); // Already reset by the peer: nothing to serve.
        return worker.acceptNext(listener);
    };
    sys.setsockoptInt(fd, linux.IPPROTO.TCP, linux.TCP.NODELAY, 1) catch {}; // Latency only.
    worker.connections_accepted.add(1);
    InitTrace.markFirstAccept();
    worker.proxy.startSession(fd, Address.fromStorage(&storage), listener.slot);
    worker.acceptNext(listener);
}

fn acceptBackoffCallback(listener: *Listener) void {
    if (!listener.completion.isPending()) listener.worker.acceptNext(listener);
}

/// The proxy freed a session slot: resume accepting where a full proxy had paused it.
fn slotFreeCallback(context: *anyopaque) void {
    const worker: *Worker = @ptrCast(@alignCast(context));
    if (worker.proxy.draining) return;
    for (&worker.listeners) |*listener| {
        if (!listener.wanted or listener.accepting or !listener.isOpen()) continue;
        if (listener.backoff_timer.isArmed() or listener.completion.isPending()) continue;
        worker.acceptNext(listener);
    }
}
