//! The event loop of one worker thread: completion-based I/O on sockets (io_uring, or epoll
//! where io_uring is unavailable), cheap deadline timers, and a thread-safe wake-up.
//!
//! Decisions a caller must know:
//! - The loop never allocates: every Completion, Socket, Timer and TimerQueue belongs to the
//!   caller and must stay put while in use. The Loop itself must not move after its first
//!   `tick` (its wake-up read points into it); it may move between `init` and then.
//! - Callbacks run only from `tick`, never from inside `recv`, `cancel`, ... Per tick: submit,
//!   wait (not at all if callbacks or expired timers are already waiting), run the completion
//!   callbacks of the batch, then expire timers in deadline order across all queues.
//!   Completions that finish while callbacks run (e.g. an epoll recv re-armed on a socket with
//!   more data) run in the next tick. There is no order between different sockets, nor between
//!   the reader and the writer of one socket.
//! - Callbacks never see error.WouldBlock; `send` may complete partially; `recv` of 0 is EOF.
//! - Every submitted operation gets exactly one callback. `cancel` makes it come sooner (with
//!   error.Canceled) unless the operation already finished, in which case the real result
//!   comes. A callback may resubmit its own completion.
//! - `close` is synchronous and requires that no operation is pending on the socket: cancel,
//!   wait for the callback, then close. With io_uring a pending operation would otherwise keep
//!   the socket alive inside the kernel after close(2).
//! - Everything except `wake` must be called from one thread: the one that ticks.
//! - A third backend, `Sim.zig`, is a simulated kernel for the deterministic simulator
//!   (src/sim/): fake fds, seeded completion order and faults, simulated time (`initSim`).
const std = @import("std");
const builtin = @import("builtin");
const linux = std.os.linux;
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
pub const Completion = @import("Completion.zig");
pub const Socket = @import("Socket.zig");
pub const Timer = @import("Timer.zig");
pub const TimerQueue = @import("TimerQueue.zig");
const Uring = @import("Uring.zig");
const Epoll = @import("Epoll.zig");
pub const Sim = @import("Sim.zig");

const Loop = @This();

backend: Backend,
/// Set when `.auto` could not set up io_uring and fell back to epoll: a static string.
fallback_reason: ?[]const u8,
io: Io,
/// Monotonic time, refreshed at the start of each tick and again when its wait returns.
now_ns: u64,
/// Completions whose result is set and whose callback has not run yet.
ready: Completion.Fifo = .{},
timer_queues: [timer_queues_max]*TimerQueue = undefined,
timer_queues_count: u8 = 0,
/// The wake-up eventfd (nonblocking), read through the loop's own operation.
wake_socket: Socket,
wake_completion: Completion = .{},
wake_buffer: u64 = 0,
wake_context: ?*anyopaque = null,
wake_callback: ?*const fn (?*anyopaque) void = null,
/// The loop's address as of its first tick, to assert that it has not moved since.
started: ?*Loop = null,
ticking: bool = false,

pub const Mode = enum { auto, uring, epoll };
pub const Backend = enum { io_uring, epoll, sim };

pub const Options = struct {
    mode: Mode = .auto,
    /// io_uring submission queue entries: a power of two, at most 32768.
    entries: u16 = 1024,
};

pub const InitError = Uring.InitError || Epoll.InitError || sys.EventfdError;
pub const TickError = error{Unexpected};
pub const PollError = sys.PollError;

/// Registered timer queues per loop: one per kind of deadline. A worker has nine of its own
/// (its accept back-off, and proxy/Proxy.zig `Queues`) and one per distinct upstream timeout
/// (proxy/Generation.zig `Timeouts`, at most 40).
pub const timer_queues_max = 49;

const Io = union {
    uring: Uring,
    epoll: Epoll,
    /// Owned by the simulator, which drives its peers from outside the loop.
    sim: *Sim,
};

/// `.uring` fails if io_uring cannot be set up; `.auto` then falls back to epoll and says why
/// in `fallback_reason`.
pub fn init(options: Options) InitError!Loop {
    assert(std.math.isPowerOfTwo(options.entries));
    assert(options.entries <= 32768);
    var fallback_reason: ?[]const u8 = null;
    var backend: Backend = undefined;
    var io: Io = undefined;
    switch (options.mode) {
        .uring => {
            io = .{ .uring = try Uring.init(options.entries) };
            backend = .io_uring;
        },
        .epoll => {
            io = .{ .epoll = try Epoll.init() };
            backend = .epoll;
        },
        .auto => if (Uring.init(options.entries)) |uring| {
            io = .{ .uring = uring };
            backend = .io_uring;
        } else |err| {
            fallback_reason = Uring.reason(err);
            io = .{ .epoll = try Epoll.init() };
            backend = .epoll;
        },
    }
    errdefer switch (backend) {
        .io_uring => io.uring.deinit(),
        .epoll => io.epoll.deinit(),
        .sim => unreachable, // `initSim`.
    };
    const wake_fd = try sys.eventfd(0, linux.EFD.NONBLOCK | linux.EFD.CLOEXEC);
    return .{
        .backend = backend,
        .fallback_reason = fallback_reason,
        .io = io,
        .now_ns = sys.clockMonotonicNs(),
        .wake_socket = .init(wake_fd),
    };
}

/// A loop on the simulated kernel `sim`: its clock is the simulation's, its sockets fake fds,
/// and it has no wake-up eventfd (`wake` sets a flag the next tick reads).
pub fn initSim(sim: *Sim) Loop {
    return .{
        .backend = .sim,
        .fallback_reason = null,
        .io = .{ .sim = sim },
        .now_ns = sim.now_ns,
        .wake_socket = .{ .fd = -1 },
    };
}

/// A static, human-readable reason for an init failure (what `fallback_reason` would say).
pub fn initErrorReason(err: InitError) []const u8 {
    return switch (err) {
        error.IoUringNotSupported,
        error.IoUringFeatureMissing,
        error.PermissionDenied,
        => |e| Uring.reason(e),
        // These can also come from epoll_create1 or eventfd.
        error.ProcessFdQuotaExceeded => "EMFILE: the process is out of file descriptors",
        error.SystemFdQuotaExceeded => "ENFILE: the system is out of file descriptors",
        error.SystemResources => "ENOMEM: out of kernel memory (or RLIMIT_MEMLOCK for io_uring)",
        error.Unexpected => "unexpected error",
    };
}

/// Operations still pending are abandoned: their callbacks never run, and with io_uring the
/// kernel cancels them as the ring closes. Close the caller's sockets after this.
pub fn deinit(loop: *Loop) void {
    switch (loop.backend) {
        .io_uring => loop.io.uring.deinit(),
        .epoll => loop.io.epoll.deinit(),
        .sim => {},
    }
    if (loop.backend != .sim) sys.close(loop.wake_socket.fd);
    loop.* = undefined;
}

/// Submits queued work, waits for at least one completion or the earliest timer deadline (not
/// at all when callbacks or expired timers are already waiting), runs the completion callbacks,
/// then the callbacks of expired timers.
pub fn tick(loop: *Loop) TickError!void {
    assert(!loop.ticking); // Not from inside a callback.
    loop.ticking = true;
    defer loop.ticking = false;
    try loop.start();
    loop.now_ns = loop.clock();
    const earliest = loop.earliestDeadline();
    const block = loop.ready.isEmpty() and (earliest == null or earliest.? > loop.now_ns);
    const timeout_ns: ?u64 = if (!block) 0 else if (earliest) |deadline|
        deadline - loop.now_ns
    else
        null;
    switch (loop.backend) {
        .io_uring => try loop.io.uring.tick(loop, block, timeout_ns),
        .epoll => loop.io.epoll.tick(loop, timeout_ns),
        .sim => loop.io.sim.tick(loop, timeout_ns),
    }
    loop.runReady();
    loop.expireTimers();
}

/// Monotonic nanoseconds as of the current tick: no syscall per call.
pub fn now(loop: *const Loop) u64 {
    return loop.now_ns;
}

/// Thread-safe: makes a blocked (or the next) tick return promptly; the loop thread then runs
/// the wake callback. Wake-ups coalesce: several calls may produce one callback.
pub fn wake(loop: *Loop) void {
    if (loop.backend == .sim) return loop.io.sim.wake();
    sys.eventfdSignal(loop.wake_socket.fd);
}

pub fn setWakeCallback(
    loop: *Loop,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context) void,
) void {
    loop.wake_context = context;
    loop.wake_callback = erasedContextCallback(Context, callback);
}

/// Completes with a new nonblocking, close-on-exec connection fd, which the caller owns.
pub fn accept(
    loop: *Loop,
    completion: *Completion,
    listener: *Socket,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.AcceptError!linux.fd_t) void,
) void {
    const erased = erasedCallback(Context, "accept", callback);
    loop.submit(completion, .{ .accept = .{ .socket = listener } }, context, erased);
}

/// `socket` must be a fresh nonblocking socket. `address` must stay as it is until the callback:
/// io_uring reads it when the SQE is submitted, which may be after this returns, and a backend
/// slot's address may be rewritten by the control thread once no worker's table has it. So the
/// socket's owner keeps its own copy (upstream/Connections.zig, health/Checker.zig's probes);
/// a pointer, not a copy in the completion, since a Unix socket's address is 112 bytes.
pub fn connect(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    address: *const Address,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.ConnectError!void) void,
) void {
    const erased = erasedCallback(Context, "connect", callback);
    const operation: Completion.Operation = .{
        .connect = .{ .socket = socket, .address = address },
    };
    loop.submit(completion, operation, context, erased);
}

/// Completes with the number of bytes received; 0 is an orderly EOF.
pub fn recv(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    buffer: []u8,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.RecvError!usize) void,
) void {
    loop.submitRecv(completion, .{ .socket = socket, .buffer = buffer }, Context, context, callback);
}

/// `recv` for bytes that most likely have not arrived yet: the next request on a keep-alive
/// connection after its response went out, a response just after its request was sent.
/// io_uring waits for readiness before receiving (IORING_RECVSEND_POLL_FIRST) instead of
/// trying a receive that finds nothing first; the outcome is the same.
pub fn recvLater(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    buffer: []u8,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.RecvError!usize) void,
) void {
    loop.submitRecv(completion, .{ .socket = socket, .buffer = buffer, .later = true }, Context, context, callback);
}

/// `recv` of one datagram on a socket from `openDatagramSocket` (its bytes, cut to `buffer`).
/// Apart from `recv` because a short receive says nothing of what else is queued: epoll's
/// "short read drained the socket" shortcut, right for streams, would wait for an edge that
/// a second datagram already queued never raises.
pub fn recvDatagram(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    buffer: []u8,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.RecvError!usize) void,
) void {
    loop.submitRecv(completion, .{ .socket = socket, .buffer = buffer, .datagram = true }, Context, context, callback);
}

/// The one body of `recv`, `recvLater` and `recvDatagram`.
fn submitRecv(
    loop: *Loop,
    completion: *Completion,
    operation: @FieldType(Completion.Operation, "recv"),
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.RecvError!usize) void,
) void {
    assert(operation.buffer.len > 0); // A zero-length recv could not tell EOF from success.
    const erased = erasedCallback(Context, "recv", callback);
    loop.submit(completion, .{ .recv = operation }, context, erased);
}

/// Completes with the number of bytes sent, which may be fewer than `buffer.len`.
pub fn send(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    buffer: []const u8,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.SendError!usize) void,
) void {
    assert(buffer.len > 0);
    const erased = erasedCallback(Context, "send", callback);
    loop.submit(completion, .{ .send = .{ .socket = socket, .buffer = buffer } }, context, erased);
}

/// Moves up to `len` bytes from `socket` into the pipe whose write end is `pipe_write`, which
/// must be empty (so that "would block" can only mean the socket). Completes with the number
/// of bytes moved; 0 is an orderly EOF. The bytes never enter user memory.
pub fn spliceIn(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    pipe_write: linux.fd_t,
    len: u32,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.RecvError!usize) void,
) void {
    assert(len > 0);
    const erased = erasedCallback(Context, "splice_in", callback);
    const operation: Completion.Operation = .{ .splice_in = .{ .socket = socket, .pipe = pipe_write, .len = len } };
    loop.submit(completion, operation, context, erased);
}

/// Moves up to `len` bytes, which the pipe whose read end is `pipe_read` must hold, into
/// `socket`. Completes with the number moved, which may be fewer than `len` (as `send`).
pub fn spliceOut(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    pipe_read: linux.fd_t,
    len: u32,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.SendError!usize) void,
) void {
    assert(len > 0);
    const erased = erasedCallback(Context, "splice_out", callback);
    const operation: Completion.Operation = .{ .splice_out = .{ .socket = socket, .pipe = pipe_read, .len = len } };
    loop.submit(completion, operation, context, erased);
}

/// A receive whose outcome is already known (a TLS connection decrypted bytes into `buffer`
/// from records it had received before, or found the connection over): completes with
/// `result` after this batch, without a syscall, like any receive. It holds the socket's
/// reader slot until its callback runs, and a cancel lets the result through, as for a
/// receive that had already finished.
pub fn recvReady(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    buffer: []u8,
    result: sys.RecvError!usize,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.RecvError!usize) void,
) void {
    if (result) |n| assert(n <= buffer.len) else |_| {}
    const erased = erasedCallback(Context, "recv", callback);
    loop.attach(completion, .{ .recv = .{ .socket = socket, .buffer = buffer } }, context, erased);
    completion.result = .{ .recv = result };
    loop.pushReadyNow(completion);
}

/// A send whose outcome is already known (a TLS connection whose engine failed): completes
/// with `result` after this batch, without a syscall. See `recvReady`.
pub fn sendReady(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    buffer: []const u8,
    result: sys.SendError!usize,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, sys.SendError!usize) void,
) void {
    if (result) |n| assert(n <= buffer.len) else |_| {}
    const erased = erasedCallback(Context, "send", callback);
    loop.attach(completion, .{ .send = .{ .socket = socket, .buffer = buffer } }, context, erased);
    completion.result = .{ .send = result };
    loop.pushReadyNow(completion);
}

fn pushReadyNow(loop: *Loop, completion: *Completion) void {
    if (loop.backend == .sim) loop.io.sim.submitReady(completion);
    loop.pushReady(completion);
}

/// Completes when the socket is readable, at EOF, hung up or in error, without consuming
/// anything: the way to watch an idle pooled upstream connection. A watch has its own slot
/// (Socket.zig), so a receive may be pending beside it; bytes that the receive takes may
/// still fire it (io_uring) or not (epoll, which serves the receive first and tries the watch
/// only when no receive is pending): a caller that receives treats a firing watch as noise.
pub fn pollReadable(
    loop: *Loop,
    completion: *Completion,
    socket: *Socket,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, PollError!void) void,
) void {
    const erased = erasedCallback(Context, "poll_readable", callback);
    loop.submit(completion, .{ .poll_readable = .{ .socket = socket } }, context, erased);
}

/// False when the backend knows that something waits to be read on `socket` (bytes, an EOF,
/// an error) whose watch has not called back yet: for an idle pooled connection about to
/// carry a request, which must not. epoll knows from its cached readiness (an edge since the
/// socket was last drained, seen at the last wait), asking the kernel only in the rare case
/// the cache cannot tell (a last read that filled its buffer exactly); io_uring learns only
/// through the watch's completion, so it says true: a system call per request to ask the
/// kernel (poll(2): ~450 ns on the machine we measure on) would cost more than the watch.
pub fn seemsQuiet(loop: *Loop, socket: *Socket) bool {
    assert(socket.reader == null);
    switch (loop.backend) {
        .io_uring => return true,
        .epoll => {
            if (!socket.readable) return true;
            if (sys.peekReadable(socket.fd)) return false;
            socket.readable = false;
            return true;
        },
        .sim => return loop.io.sim.seemsQuiet(socket),
    }
}

/// The target's callback runs exactly once more: with error.Canceled, or with its real result
/// if the operation already finished. A no-op on an idle completion, or on one whose result is
/// already waiting for its callback. Needs no Completion of its own.
///
/// A cancelled operation gives up its socket's reader or writer slot at once, so the owner
/// can start the next operation of that direction without waiting for the callback (the
/// upstream pool cancels an idle connection's watch and sends a request on it in the same
/// tick). The owner must still not close the socket before the cancelled callback has run.
pub fn cancel(loop: *Loop, target: *Completion) void {
    switch (loop.backend) {
        .io_uring => loop.io.uring.cancel(loop, target),
        .epoll => Epoll.cancel(loop, target),
        .sim => loop.io.sim.cancel(loop, target),
    }
    if (target.state == .idle) return;
    const slot = target.operation.socket().slot(target.operation.direction());
    if (slot.* == target) {
        slot.* = null;
        target.detached = true;
    }
}

/// A new nonblocking, close-on-exec TCP socket for `family`, with Nagle off (the proxy writes
/// whole heads itself, and small requests and responses must not wait), to be connected with
/// `connect`. Through the loop, like every other socket operation, so a simulated loop can
/// stand in for the kernel.
pub fn openSocket(loop: *Loop, family: u32) sys.SocketError!Socket {
    if (loop.backend == .sim) return loop.io.sim.openSocket();
    const flags = linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC;
    const fd = try sys.socket(family, flags, 0);
    // Latency only; a Unix socket has no Nagle to turn off.
    if (family != linux.AF.UNIX) sys.setsockoptInt(fd, linux.IPPROTO.TCP, linux.TCP.NODELAY, 1) catch {};
    return .init(fd);
}

/// A new nonblocking, close-on-exec UDP socket for `family`. `connect` gives it its one peer,
/// after which the kernel delivers only that peer's datagrams to `recv` (the resolver relies on
/// this to refuse replies from any other source) and `send` needs no address. Not simulated:
/// the simulator resolves no names.
pub fn openDatagramSocket(loop: *Loop, family: u32) sys.SocketError!Socket {
    assert(loop.backend != .sim);
    const flags = linux.SOCK.DGRAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC;
    return .init(try sys.socket(family, flags, 0));
}

/// A pipe for splices: nonblocking, close-on-exec, sized for `bytes_wanted` where the system
/// allows (see `capacity`). Synchronous; the caller keeps it for reuse.
pub const Pipe = struct { read: linux.fd_t, write: linux.fd_t, capacity: u32 };

pub fn openPipe(loop: *Loop, bytes_wanted: u32) sys.PipeError!Pipe {
    if (loop.backend == .sim) return loop.io.sim.openPipe();
    const pipe = try sys.pipe(bytes_wanted);
    return .{ .read = pipe.read, .write = pipe.write, .capacity = pipe.capacity };
}

/// No splice naming the pipe may be pending.
pub fn closePipe(loop: *Loop, pipe: Pipe) void {
    if (loop.backend == .sim) return loop.io.sim.closePipe(pipe.read);
    sys.close(pipe.read);
    sys.close(pipe.write);
}

/// Synchronous, non-blocking send(2) of a few bytes, best effort: a TLS close_notify just
/// before `shutdownWrite` or `close`. Nothing may be pending in the socket's write direction.
pub fn sendNow(loop: *Loop, socket: *Socket, bytes: []const u8) sys.SendError!usize {
    assert(socket.writer == null);
    // The simulator has no TLS connection, so nothing calls this there.
    if (loop.backend == .sim) return error.WouldBlock;
    return sys.send(socket.fd, bytes);
}

/// Synchronous receive that never waits, outside the ring: what the peer sent that is already
/// here. Only with no receive pending on the socket (it would race the ring's).
pub fn recvNow(loop: *Loop, socket: *Socket, buffer: []u8) sys.RecvError!usize {
    assert(socket.reader == null);
    // The simulator has no TLS connection, so nothing calls this there.
    if (loop.backend == .sim) return error.WouldBlock;
    return sys.recvNoWait(socket.fd, buffer);
}

/// Synchronous shutdown(2) of the write side: the peer reads EOF once what was sent is read.
/// An error means the peer is gone already; the close that follows cleans up either way.
pub fn shutdownWrite(loop: *Loop, socket: *Socket) sys.ShutdownError!void {
    if (loop.backend == .sim) return loop.io.sim.shutdownWrite(socket);
    return sys.shutdown(socket.fd, linux.SHUT.WR);
}

/// Synchronous close(2). No operation may be pending on the socket (asserted).
pub fn close(loop: *Loop, socket: *Socket) void {
    assert(socket.reader == null);
    assert(socket.writer == null);
    assert(socket.watcher == null);
    // The simulated kernel also checks that no detached (cancelled) operation still waits.
    if (loop.backend == .sim) loop.io.sim.close(socket) else sys.close(socket.fd);
    // For epoll, close(2) removes the registration with the fd's last reference.
    socket.* = .{ .fd = -1, .registered = false };
}

/// At most `timer_queues_max` queues per loop; the caller owns them.
pub fn timerQueueRegister(loop: *Loop, queue: *TimerQueue) void {
    assert(!queue.registered);
    assert(queue.duration_ns > 0);
    assert(loop.timer_queues_count < timer_queues_max);
    loop.timer_queues[loop.timer_queues_count] = queue;
    loop.timer_queues_count += 1;
    queue.registered = true;
}

/// Forgets an empty queue (its owner is going away): the order of the others is kept.
pub fn timerQueueUnregister(loop: *Loop, queue: *TimerQueue) void {
    assert(queue.registered);
    assert(queue.head == null);
    const queues = loop.timer_queues[0..loop.timer_queues_count];
    const index = std.mem.indexOfScalar(*TimerQueue, queues, queue).?;
    @memmove(queues[index .. queues.len - 1], queues[index + 1 ..]);
    loop.timer_queues_count -= 1;
    queue.registered = false;
}

/// (Re)arms `timer` to fire at now + queue.duration_ns, unlinking it from whatever queue it was
/// in. O(1), no syscall.
pub fn timerArm(
    loop: *Loop,
    queue: *TimerQueue,
    timer: *Timer,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context) void,
) void {
    assert(loop.timerQueueIsRegistered(queue));
    if (timer.queue) |old| old.remove(timer);
    timer.context = context;
    timer.callback = erasedContextCallback(Context, callback);
    queue.append(timer, loop.now_ns + queue.duration_ns);
    assert(timer.isArmed());
}

/// (Re)arms `timer` to fire at `deadline_ns` (the loop's clock) on a queue of any deadline
/// (`TimerQueue.initAnyDeadline`). A deadline already past fires at the next expiry after
/// this one: never in the pass that is expiring, so a callback that re-arms cannot spin it.
pub fn timerArmAt(
    loop: *Loop,
    queue: *TimerQueue,
    timer: *Timer,
    deadline_ns: u64,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context) void,
) void {
    assert(loop.timerQueueIsRegistered(queue));
    assert(queue.any_deadline);
    if (timer.queue) |old| old.remove(timer);
    timer.context = context;
    timer.callback = erasedContextCallback(Context, callback);
    queue.insert(timer, @max(deadline_ns, loop.now_ns + 1));
    assert(timer.isArmed());
}

/// O(1); a no-op if the timer is not armed.
pub fn timerCancel(loop: *Loop, timer: *Timer) void {
    _ = loop;
    if (timer.queue) |queue| queue.remove(timer);
    assert(!timer.isArmed());
}

// --- Internals shared with the backends (pub for Uring.zig and Epoll.zig only) -----------------

/// Queues a completion whose result is set; its callback runs at the end of this tick (or at
/// the next one when this is called from a callback).
pub fn pushReady(loop: *Loop, completion: *Completion) void {
    // From .idle when epoll performs the syscall inside the submitting call.
    assert(completion.state != .ready);
    assert(completion.operation != .none);
    completion.state = .ready;
    loop.ready.push(completion);
}

/// Runs a completion's callback: detaches it from its socket and marks it idle first, so the
/// callback may resubmit it.
pub fn complete(loop: *Loop, completion: *Completion) void {
    assert(completion.state == .ready);
    if (loop.backend == .sim) loop.io.sim.callbackStarting(completion);
    const slot = completion.operation.socket().slot(completion.operation.direction());
    if (completion.detached) assert(slot.* != completion) else {
        assert(slot.* == completion);
        slot.* = null;
    }
    completion.detached = false;
    completion.state = .idle;
    completion.callback(completion.context, completion);
}

fn submit(
    loop: *Loop,
    completion: *Completion,
    operation: Completion.Operation,
    context: ?*anyopaque,
    callback: Completion.Callback,
) void {
    loop.attach(completion, operation, context, callback);
    switch (loop.backend) {
        .io_uring => if (completion.isSplice())
            loop.io.uring.submitSplice(loop, completion)
        else
            loop.io.uring.submit(completion),
        .epoll => loop.io.epoll.submit(loop, completion),
        .sim => loop.io.sim.submit(completion),
    }
}

/// Sets the operation up and takes its socket's reader or writer slot.
fn attach(
    loop: *Loop,
    completion: *Completion,
    operation: Completion.Operation,
    context: ?*anyopaque,
    callback: Completion.Callback,
) void {
    _ = loop;
    assert(completion.state == .idle); // Not pending: one operation per completion at a time.
    assert(completion.next == null);
    completion.* = .{ .operation = operation, .context = context, .callback = callback };
    const socket = completion.operation.socket();
    assert(socket.fd >= 0);
    const slot = socket.slot(completion.operation.direction());
    assert(slot.* == null); // One pending operation per direction per socket.
    slot.* = completion;
}

/// First tick: pin the loop's address, enable the ring on this thread, arm the wake-up read.
fn start(loop: *Loop) TickError!void {
    if (loop.started) |started| {
        assert(started == loop); // The Loop moved after its first tick.
        return;
    }
    switch (loop.backend) {
        .io_uring => loop.io.uring.start() catch return error.Unexpected,
        .epoll => {},
        .sim => {
            loop.started = loop;
            return; // No eventfd: `wake` is a flag.
        },
    }
    loop.started = loop;
    loop.armWakeRead();
}

fn armWakeRead(loop: *Loop) void {
    const buffer = std.mem.asBytes(&loop.wake_buffer);
    const erased = erasedCallback(Loop, "read", wakeReadCallback);
    const operation: Completion.Operation = .{
        .read = .{ .socket = &loop.wake_socket, .buffer = buffer },
    };
    loop.submit(&loop.wake_completion, operation, loop, erased);
}

fn wakeReadCallback(loop: *Loop, result: sys.ReadError!usize) void {
    const bytes = result catch |err| switch (err) {
        // epoll: another wake-up's event consumed the count first. io_uring never says so.
        error.WouldBlock => return loop.armWakeRead(),
        // Nothing cancels the wake-up read; anything else would make wake() silently dead.
        error.Canceled, error.Unexpected => std.debug.panic("wake eventfd read: {t}", .{err}),
    };
    assert(bytes == @sizeOf(u64));
    assert(loop.wake_buffer > 0);
    loop.armWakeRead();
    if (loop.wake_callback) |callback| callback(loop.wake_context);
}

/// Runs the callbacks that were ready when this phase began; those queued meanwhile wait for
/// the next tick, so a busy socket cannot starve the rest and callbacks never nest.
fn runReady(loop: *Loop) void {
    var batch = loop.ready;
    loop.ready = .{};
    while (batch.pop()) |completion| loop.complete(completion);
}

/// Fires expired timers in deadline order across all queues (ties: the queue registered
/// first, then arm order), merging the sorted queues by their heads: O(queues) per timer.
fn expireTimers(loop: *Loop) void {
    // Bounded: a timer re-armed by a callback gets a deadline after now (duration > 0), so
    // each pass removes one timer armed before this phase began.
    while (loop.earliestQueue()) |queue| {
        const timer = queue.head.?;
        if (timer.deadline_ns > loop.now_ns) break;
        queue.remove(timer);
        timer.callback(timer.context);
    }
}

/// The monotonic clock: the kernel's, or the simulation's.
fn clock(loop: *const Loop) u64 {
    if (loop.backend == .sim) return loop.io.sim.now_ns;
    return sys.clockMonotonicNs();
}

fn earliestDeadline(loop: *const Loop) ?u64 {
    const queue = loop.earliestQueue() orelse return null;
    return queue.earliestDeadline().?;
}

/// The registered queue whose head timer has the earliest deadline, if any timer is armed.
fn earliestQueue(loop: *const Loop) ?*TimerQueue {
    var earliest: ?*TimerQueue = null;
    for (loop.timer_queues[0..loop.timer_queues_count]) |queue| {
        const deadline = queue.earliestDeadline() orelse continue;
        if (earliest) |e| {
            if (deadline >= e.earliestDeadline().?) continue;
        }
        earliest = queue;
    }
    return earliest;
}

fn timerQueueIsRegistered(loop: *const Loop, queue: *const TimerQueue) bool {
    for (loop.timer_queues[0..loop.timer_queues_count]) |registered| {
        if (registered == queue) return true;
    }
    return false;
}

/// `field` names both the operation and its result type in `Completion.Result`.
fn erasedCallback(
    comptime Context: type,
    comptime field: []const u8,
    comptime callback: fn (*Context, @FieldType(Completion.Result, field)) void,
) Completion.Callback {
    return struct {
        fn call(context: ?*anyopaque, completion: *Completion) void {
            // Read before calling: the callback may resubmit and overwrite the completion.
            const result = @field(completion.result, field);
            callback(@ptrCast(@alignCast(context.?)), result);
        }
    }.call;
}

fn erasedContextCallback(
    comptime Context: type,
    comptime callback: fn (*Context) void,
) *const fn (?*anyopaque) void {
    return struct {
        fn call(context: ?*anyopaque) void {
            callback(@ptrCast(@alignCast(context.?)));
        }
    }.call;
}

test "loop: hot struct sizes" {
    // One Completion per in-flight operation, several per session: growth is a decision.
    // Safe builds carry a hidden tag for the untagged `result` union.
    // A connect holds a pointer to its address (a Unix socket's is 112 bytes).
    const completion_size: usize = if (std.debug.runtime_safety) 96 else 88;
    try std.testing.expectEqual(completion_size, @sizeOf(Completion));
    try std.testing.expectEqual(48, @sizeOf(Timer));
    try std.testing.expect(builtin.os.tag == .linux);
}
