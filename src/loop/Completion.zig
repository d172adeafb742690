//! One asynchronous operation and the callback that receives its result. Completions live
//! inside their owner (a session, a pool slot) and are reused for its whole life: the loop
//! never allocates one, it only links them into intrusive queues.
//!
//! Decision: the callback is typed where the operation is scheduled (`Loop.recv` and friends)
//! and erased here to a `*const fn (?*anyopaque, *Completion)` that reads the result field of
//! its own operation. The result is stored already mapped to its error set, so both backends
//! hand the same values to the same wrapper.
//!
//! Users see only `isPending`. A completion must start as `.{}` and may be submitted again
//! from inside its own callback (the state is `.idle` by the time the callback runs).
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Socket = @import("Socket.zig");

const Completion = @This();

operation: Operation = .none,
/// Written once, when the operation finishes (or is canceled); the active field is the one
/// named like `operation`'s tag.
result: Result = undefined,
context: ?*anyopaque = null,
callback: Callback = undefined,
/// Intrusive link: the loop's ready queue, or the io_uring backlog.
next: ?*Completion = null,
state: State = .idle,
/// io_uring only: whether an IORING_OP_ASYNC_CANCEL for this completion is on its way.
cancel: Cancel = .none,
/// io_uring only: the kernel answered EAGAIN, so the operation waits for readiness with a
/// POLL_ADD first (see Uring.zig); the real operation is submitted again afterwards.
poll_first: bool = false,
/// Cancelled and already released from its socket's reader/writer slot (see Loop.cancel).
detached: bool = false,

pub const Callback = *const fn (context: ?*anyopaque, completion: *Completion) void;

pub const State = enum(u8) {
    /// No operation: the completion may be submitted.
    idle,
    /// io_uring: queued in the backlog because no SQE could be had.
    backlog,
    /// io_uring: an SQE carries it; the kernel owns the operation until its CQE.
    submitted,
    /// epoll: parked on its Socket until the socket's readiness changes.
    waiting,
    /// The result is set and the completion is in the loop's ready queue.
    ready,
};

pub const Cancel = enum(u8) {
    none,
    /// An ASYNC_CANCEL SQE was written (and is or will be submitted before any later SQE).
    submitted,
    /// No SQE could be had: the completion sits in the backlog as a cancel request.
    backlogged,
};

pub const Operation = union(enum) {
    none,
    accept: struct { socket: *Socket },
    /// The address is the caller's, and must stay as it is until the completion is called back
    /// (its owner is the socket's: see Loop.connect).
    connect: struct { socket: *Socket, address: *const Address },
    /// `later`: the bytes most likely have not arrived yet (the peer answers what was just
    /// sent to it): io_uring waits for readiness before trying (`Loop.recvLater`).
    /// `datagram`: one receive is one datagram, so a short one does not mean the socket was
    /// drained (`Loop.recvDatagram`).
    recv: struct { socket: *Socket, buffer: []u8, later: bool = false, datagram: bool = false },
    send: struct { socket: *Socket, buffer: []const u8 },
    poll_readable: struct { socket: *Socket },
    /// Socket to pipe (splice(2)): like `recv`, without the bytes passing through user memory.
    /// Done as a nonblocking system call when the socket is ready (see Loop.spliceIn).
    splice_in: struct { socket: *Socket, pipe: linux.fd_t, len: u32 },
    /// Pipe to socket: like `send`, from bytes already in the pipe.
    splice_out: struct { socket: *Socket, pipe: linux.fd_t, len: u32 },
    /// Internal: the wake-up eventfd.
    read: struct { socket: *Socket, buffer: []u8 },

    /// A watch has a slot of its own: it may be pending beside a receive (Socket.zig).
    pub const Direction = enum { read, write, watch };

    pub fn socket(operation: *const Operation) *Socket {
        return switch (operation.*) {
            .none => unreachable,
            inline else => |payload| payload.socket,
        };
    }

    /// Each Socket has at most one pending operation per direction.
    pub fn direction(operation: *const Operation) Direction {
        return switch (operation.*) {
            .none => unreachable,
            .accept, .recv, .splice_in, .read => .read,
            .connect, .send, .splice_out => .write,
            .poll_readable => .watch,
        };
    }
};

pub const Result = union {
    accept: sys.AcceptError!linux.fd_t,
    connect: sys.ConnectError!void,
    recv: sys.RecvError!usize,
    send: sys.SendError!usize,
    poll_readable: sys.PollError!void,
    splice_in: sys.RecvError!usize,
    splice_out: sys.SendError!usize,
    read: sys.ReadError!usize,
};

pub fn isPending(completion: *const Completion) bool {
    return completion.state != .idle;
}

/// Sets the result from a raw syscall or CQE result: a value, or a negative errno.
pub fn setResultRaw(completion: *Completion, res: i32) void {
    completion.result = switch (completion.operation) {
        .none => unreachable,
        .accept => .{ .accept = if (res >= 0) res else sys.errnoToAcceptError(errno(res)) },
        .connect => .{ .connect = if (res >= 0) {} else sys.errnoToConnectError(errno(res)) },
        .recv => .{ .recv = if (res >= 0) @intCast(res) else sys.errnoToRecvError(errno(res)) },
        .send => .{ .send = if (res >= 0) @intCast(res) else sys.errnoToSendError(errno(res)) },
        // POLL_ADD answers with the ready mask: any mask is "readable, EOF, HUP or error".
        .poll_readable => .{
            .poll_readable = if (res >= 0) {} else sys.errnoToPollError(errno(res)),
        },
        .splice_in => .{ .splice_in = if (res >= 0) @intCast(res) else sys.errnoToRecvError(errno(res)) },
        .splice_out => .{ .splice_out = if (res >= 0) @intCast(res) else sys.errnoToSendError(errno(res)) },
        .read => .{ .read = if (res >= 0) @intCast(res) else sys.errnoToReadError(errno(res)) },
    };
}

/// A splice operation's nonblocking system call (both real backends do splices this way:
/// io_uring's own SPLICE always runs on a kernel worker thread). False when it would block
/// (result untouched), true when the result is set.
pub fn trySplice(completion: *Completion) bool {
    switch (completion.operation) {
        .splice_in => |op| {
            const result = sys.spliceIn(op.socket.fd, op.pipe, op.len);
            if (result) |_| {} else |err| if (err == error.WouldBlock) return false;
            completion.result = .{ .splice_in = result };
        },
        .splice_out => |op| {
            const result = sys.spliceOut(op.pipe, op.socket.fd, op.len);
            if (result) |_| {} else |err| if (err == error.WouldBlock) return false;
            completion.result = .{ .splice_out = result };
        },
        else => unreachable,
    }
    return true;
}

pub fn isSplice(completion: *const Completion) bool {
    return completion.operation == .splice_in or completion.operation == .splice_out;
}

pub fn setCanceled(completion: *Completion) void {
    completion.setResultRaw(-@as(i32, @backingInt(linux.E.CANCELED)));
}

fn errno(res: i32) linux.E {
    return sys.errnoFromResult(res);
}

/// An intrusive FIFO through `Completion.next`. O(1) push and pop; `remove` is O(n) and only
/// used on the io_uring backlog, which is empty unless the kernel refused submissions.
pub const Fifo = struct {
    head: ?*Completion = null,
    tail: ?*Completion = null,

    pub fn isEmpty(fifo: *const Fifo) bool {
        assert((fifo.head == null) == (fifo.tail == null));
        return fifo.head == null;
    }

    pub fn push(fifo: *Fifo, completion: *Completion) void {
        assert(completion.next == null);
        assert(fifo.tail != completion);
        if (fifo.tail) |tail| tail.next = completion else fifo.head = completion;
        fifo.tail = completion;
    }

    pub fn peek(fifo: *const Fifo) ?*Completion {
        return fifo.head;
    }

    pub fn pop(fifo: *Fifo) ?*Completion {
        const head = fifo.head orelse return null;
        fifo.head = head.next;
        if (fifo.head == null) fifo.tail = null;
        head.next = null;
        return head;
    }

    /// Asserts that `completion` is in the queue.
    pub fn remove(fifo: *Fifo, completion: *Completion) void {
        var previous: ?*Completion = null;
        var cursor = fifo.head;
        while (cursor) |current| : ({
            previous = current;
            cursor = current.next;
        }) {
            if (current != completion) continue;
            if (previous) |p| p.next = current.next else fifo.head = current.next;
            if (fifo.tail == current) fifo.tail = previous;
            current.next = null;
            return;
        }
        unreachable; // Not in the queue: the caller's state tracking is wrong.
    }
};

test "completion: the FIFO keeps order and removes from any position" {
    var completions: [4]Completion = @splat(.{});
    var fifo: Fifo = .{};
    try std.testing.expect(fifo.isEmpty());
    for (&completions) |*c| fifo.push(c);
    fifo.remove(&completions[2]);
    fifo.remove(&completions[3]);
    fifo.push(&completions[3]);
    fifo.remove(&completions[0]);
    try std.testing.expectEqual(&completions[1], fifo.pop().?);
    try std.testing.expectEqual(&completions[3], fifo.pop().?);
    try std.testing.expectEqual(@as(?*Completion, null), fifo.pop());
    try std.testing.expect(fifo.isEmpty());
}

test "completion: raw results map through the shared errno mappers" {
    var socket = Socket.init(3);
    var buffer: [4]u8 = undefined;
    var c: Completion = .{ .operation = .{ .recv = .{ .socket = &socket, .buffer = &buffer } } };
    c.setResultRaw(3);
    try std.testing.expectEqual(@as(usize, 3), try c.result.recv);
    c.setCanceled();
    try std.testing.expectError(error.Canceled, c.result.recv);
    c.setResultRaw(-@as(i32, @backingInt(linux.E.CONNRESET)));
    try std.testing.expectError(error.ConnectionResetByPeer, c.result.recv);
}
