//! The epoll backend: readiness translated into completions.
//!
//! Decisions:
//! - Each Socket is registered once, on its first operation, for IN | OUT | RDHUP, edge
//!   triggered, with the Socket's address as event data: one epoll_ctl per fd lifetime, never
//!   a MOD, and close(2) removes the registration.
//! - The Socket caches readiness: events set `readable`/`writable`, EAGAIN clears them. An
//!   operation submitted while its direction is ready does its syscall at once (in the
//!   submitting call) and only its callback waits for the end of the tick; otherwise it parks
//!   as the socket's reader or writer until an event arrives.
//! - Results never run callbacks from here: they go to the loop's ready queue.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const Completion = @import("Completion.zig");
const Socket = @import("Socket.zig");
const Loop = @import("Loop.zig");

const Epoll = @This();

epoll_fd: linux.fd_t,
/// What one epoll_wait fills. Kept here, not on `tick`'s stack: safe builds fill undefined
/// stack memory with 0xAA, 3 KiB on every tick.
events: [events_per_wait_max]linux.epoll_event = undefined,

/// Events taken per epoll_wait: 256 × 12 bytes = 3 KiB.
const events_per_wait_max = 256;

pub const InitError = sys.EpollCreateError;

pub fn init() InitError!Epoll {
    return .{ .epoll_fd = try sys.epoll_create1(linux.EPOLL.CLOEXEC) };
}

pub fn deinit(epoll: *Epoll) void {
    sys.close(epoll.epoll_fd);
    epoll.* = undefined;
}

/// Tries the operation now if its direction is ready, else parks it on its socket.
pub fn submit(epoll: *Epoll, loop: *Loop, completion: *Completion) void {
    assert(completion.state == .idle);
    const socket = completion.operation.socket();
    epoll.register(socket) catch |err| switch (err) {
        // ENOMEM, or ENOSPC (fs.epoll.max_user_watches): this operation fails, mapped like an
        // ENOMEM from its own syscall (SystemResources for accept, Unexpected otherwise).
        error.SystemResources, error.Unexpected => {
            completion.setResultRaw(-@as(i32, @backingInt(linux.E.NOMEM)));
            return loop.pushReady(completion);
        },
    };
    switch (completion.operation) {
        // connect(2) always starts at once; only its outcome waits for writability.
        .connect => |*op| {
            if (sys.connect(socket.fd, op.address.sockaddr(), op.address.socklen())) {
                completion.result = .{ .connect = {} };
                return loop.pushReady(completion);
            } else |err| switch (err) {
                error.InProgress => socket.writable = false,
                else => |e| {
                    completion.result = .{ .connect = e };
                    return loop.pushReady(completion);
                },
            }
        },
        else => {
            const ready = switch (completion.operation.direction()) {
                .read, .watch => &socket.readable,
                .write => &socket.writable,
            };
            if (ready.*) {
                if (perform(completion)) return loop.pushReady(completion);
                ready.* = false;
            }
        },
    }
    completion.state = .waiting;
}

/// See Loop.cancel. A parked completion is completed with Canceled (through the ready queue);
/// one whose syscall already ran keeps its real result.
pub fn cancel(loop: *Loop, target: *Completion) void {
    switch (target.state) {
        .idle, .ready => {},
        .backlog, .submitted => unreachable, // io_uring states.
        .waiting => {
            target.setCanceled();
            loop.pushReady(target);
        },
    }
}

/// Waits for events up to `timeout_ns` (null: forever; 0: poll) and performs the operations
/// they make possible, queueing their callbacks.
pub fn tick(epoll: *Epoll, loop: *Loop, timeout_ns: ?u64) void {
    const timeout_ms: i32 = if (timeout_ns) |ns| timeoutMs(ns) else -1;
    const count = sys.epoll_wait(epoll.epoll_fd, &epoll.events, timeout_ms);
    loop.now_ns = sys.clockMonotonicNs();
    for (epoll.events[0..count]) |*event| {
        const socket: *Socket = @ptrFromInt(event.data.ptr);
        assert(socket.registered);
        const flags = event.events;
        // ERR and HUP make both directions "ready": the syscall will report what happened.
        const failed = flags & (linux.EPOLL.ERR | linux.EPOLL.HUP) != 0;
        const input = failed or flags & (linux.EPOLL.IN | linux.EPOLL.RDHUP) != 0;
        if (failed or flags & linux.EPOLL.RDHUP != 0) socket.input_ended = true;
        if (input) socket.readable = true;
        if (failed or flags & linux.EPOLL.OUT != 0) socket.writable = true;
        if (socket.readable) {
            if (socket.reader) |reader| attempt(loop, reader, &socket.readable);
        }
        // A watch is for a socket nobody reads: a receive, if pending, takes the bytes. The
        // event itself says the socket is readable, so no system call asks again.
        if (input and socket.reader == null) {
            if (socket.watcher) |watcher| if (watcher.state == .waiting) {
                watcher.result = .{ .poll_readable = {} };
                loop.pushReady(watcher);
            };
        }
        if (socket.writable) {
            if (socket.writer) |writer| attempt(loop, writer, &socket.writable);
        }
    }
}

/// Rounds up, so the wait never ends before the deadline it was sized for.
fn timeoutMs(timeout_ns: u64) i32 {
    const ms = std.math.divCeil(u64, timeout_ns, std.time.ns_per_ms) catch unreachable;
    return @intCast(@min(ms, std.math.maxInt(i32)));
}

fn attempt(loop: *Loop, completion: *Completion, ready: *bool) void {
    assert(ready.*);
    // A reader or writer that is already in the ready queue (performed at submission, or
    // canceled) stays attached to its socket until its callback runs; leave it alone.
    if (completion.state != .waiting) return;
    if (perform(completion)) {
        loop.pushReady(completion);
    } else {
        ready.* = false; // A spurious event, or another wake-up consumed the readiness.
    }
}

fn register(epoll: *Epoll, socket: *Socket) sys.EpollCtlError!void {
    if (socket.registered) return;
    var event: linux.epoll_event = .{
        .events = linux.EPOLL.IN | linux.EPOLL.OUT | linux.EPOLL.RDHUP | linux.EPOLL.ET,
        .data = .{ .ptr = @intFromPtr(socket) },
    };
    try sys.epoll_ctl(epoll.epoll_fd, linux.EPOLL.CTL_ADD, socket.fd, &event);
    socket.registered = true;
}

/// Does the operation's syscall. Returns false on EAGAIN (nothing done, result untouched),
/// true when the result is set.
fn perform(completion: *Completion) bool {
    const fd = completion.operation.socket().fd;
    switch (completion.operation) {
        .none => unreachable,
        .accept => {
            const result = sys.accept4(fd);
            if (wouldBlock(result)) return false;
            completion.result = .{ .accept = result };
        },
        // Reached only once the socket turned writable after EINPROGRESS.
        .connect => completion.result = .{ .connect = sys.getsockoptError(fd) },
        .recv => |op| {
            const result = sys.recv(fd, op.buffer);
            if (wouldBlock(result)) return false;
            completion.result = .{ .recv = result };
            // A short read drained the socket: what arrives after it is a new edge, which the
            // next wait reports. So the next receive waits for that instead of trying a
            // receive that would find nothing (one system call per request saved). Unless
            // the peer's close (or an error) was seen: that is still there to be read. Not for
            // datagrams: each receive takes one, however many are queued.
            const n = result catch return true;
            const socket = completion.operation.socket();
            if (n > 0 and n < op.buffer.len and !op.datagram and !socket.input_ended) socket.readable = false;
        },
        .send => |op| {
            const result = sys.send(fd, op.buffer);
            if (wouldBlock(result)) return false;
            completion.result = .{ .send = result };
        },
        .poll_readable => {
            // The cached flag may be stale-true (it starts true): ask the socket itself.
            if (!sys.peekReadable(fd)) return false;
            completion.result = .{ .poll_readable = {} };
        },
        .splice_in, .splice_out => return completion.trySplice(),
        .read => |op| {
            const result = sys.read(fd, op.buffer);
            if (wouldBlock(result)) return false;
            completion.result = .{ .read = result };
        },
    }
    return true;
}

fn wouldBlock(result: anytype) bool {
    _ = result catch |err| switch (err) {
        error.WouldBlock => return true,
        else => return false,
    };
    return false;
}
