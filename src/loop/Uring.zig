//! The io_uring backend: each operation is one SQE whose user_data is the Completion's address;
//! each CQE is mapped through the shared errno mappers and handed to its callback after the
//! batch of CQEs has been copied out of the ring.
//!
//! Decisions:
//! - The wait timeout rides in io_uring_enter (IORING_ENTER_EXT_ARG), never as a timeout SQE.
//! - Set-up prefers SINGLE_ISSUER | DEFER_TASKRUN (completions are only produced when we ask,
//!   inside our own enter), created disabled (R_DISABLED) and enabled by the first tick, so the
//!   thread that ticks becomes the single issuer even if another thread called `Loop.init`.
//! - A full SQ is flushed with a plain submit and retried. Only if the kernel refuses (memory
//!   pressure, overflowed CQ) does the completion wait in `backlog`, an intrusive FIFO drained
//!   before the next enter; once the backlog is non-empty every new SQE goes behind it, so
//!   SQE order always equals call order.
//! - cancel is IORING_OP_ASYNC_CANCEL keyed by the target's user_data; its own CQE carries the
//!   reserved user_data 0 and is ignored. Because SQEs are issued in order and a completion can
//!   only be resubmitted after its CQE was dispatched, a cancel can never hit the next
//!   operation of the same completion (see `cancel`).
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;

const sys = @import("../stdx/sys.zig");
const Completion = @import("Completion.zig");
const Loop = @import("Loop.zig");

const Uring = @This();

ring: linux.IoUring,
backlog: Completion.Fifo = .{},
/// False until the first tick enables a ring created with IORING_SETUP_R_DISABLED; nothing
/// may enter the ring before that.
enabled: bool,
/// Bounds the CQE draining of one tick: a full CQ's worth of batches, plus one.
cqe_batches_max: u32,
/// The kernel takes IORING_RECVSEND_POLL_FIRST (5.19) and IOSQE_CQE_SKIP_SUCCESS (5.17):
/// true on every kernel that accepted one of the first two flag sets of `init`.
modern: bool,
/// CQEs copied out of the ring per batch. Kept here, not on `reap`'s stack: safe builds fill
/// undefined stack memory with 0xAA, 4 KiB on every tick.
cqes: [cqe_batch_len]linux.io_uring_cqe = undefined,

/// The user_data of ASYNC_CANCEL SQEs. No Completion lives at address 0.
const cancel_user_data: u64 = 0;

/// CQEs copied out of the ring per batch: 256 × 16 bytes = 4 KiB.
const cqe_batch_len = 256;

/// More operations are in flight than SQEs are written per tick (one pending recv per idle
/// connection, one accept per listener), so the CQ is made 4× the SQ. The kernel clamps it to
/// its maximum (IORING_SETUP_CLAMP), and keeps overflowed CQEs (IORING_FEAT_NODROP) in any case.
const cq_entries_per_sq_entry = 4;

pub const InitError = error{
    /// io_uring_setup(2) is missing (ENOSYS) or the kernel predates Linux 5.4.
    IoUringNotSupported,
    /// The kernel lacks IORING_FEAT_EXT_ARG (Linux 5.11), which the timed wait relies on.
    IoUringFeatureMissing,
    /// EPERM: a seccomp profile (Docker's default) or sysctl kernel.io_uring_disabled.
    PermissionDenied,
    ProcessFdQuotaExceeded,
    SystemFdQuotaExceeded,
    /// ENOMEM: before Linux 5.12 rings are charged to RLIMIT_MEMLOCK, often tiny in containers.
    SystemResources,
    Unexpected,
};

pub fn init(entries: u16) InitError!Uring {
    assert(std.math.isPowerOfTwo(entries));
    // Best first; each later set is for a kernel that refused (EINVAL) the one before:
    // DEFER_TASKRUN needs 6.1, COOP_TASKRUN 5.19.
    const flag_sets = [_]u32{
        linux.IORING_SETUP_SINGLE_ISSUER | linux.IORING_SETUP_DEFER_TASKRUN |
            linux.IORING_SETUP_R_DISABLED,
        linux.IORING_SETUP_COOP_TASKRUN,
        0,
    };
    for (flag_sets) |flags| {
        var params = std.mem.zeroInit(linux.io_uring_params, .{
            .flags = flags | linux.IORING_SETUP_CQSIZE | linux.IORING_SETUP_CLAMP,
            .cq_entries = @as(u32, entries) * cq_entries_per_sq_entry,
        });
        var ring = linux.IoUring.init_params(entries, &params) catch |err| switch (err) {
            error.ArgumentsInvalid => continue,
            error.SystemOutdated => return error.IoUringNotSupported,
            error.PermissionDenied => return error.PermissionDenied,
            error.ProcessFdQuotaExceeded => return error.ProcessFdQuotaExceeded,
            error.SystemFdQuotaExceeded => return error.SystemFdQuotaExceeded,
            error.SystemResources => return error.SystemResources,
            else => return error.Unexpected,
        };
        errdefer ring.deinit();
        if (ring.features & linux.IORING_FEAT_EXT_ARG == 0) return error.IoUringFeatureMissing;
        // Without NODROP a CQ overflow would lose completions, and a lost completion is a
        // session that never finishes. EXT_ARG (5.11) implies NODROP (5.5); assert it anyway.
        assert(ring.features & linux.IORING_FEAT_NODROP != 0);
        return .{
            .ring = ring,
            .enabled = flags & linux.IORING_SETUP_R_DISABLED == 0,
            .cqe_batches_max = @intCast(ring.cq.cqes.len / cqe_batch_len + 1),
            .modern = flags != 0,
        };
    }
    // Every flag set refused with EINVAL: far older than anything with io_uring worth using.
    return error.IoUringNotSupported;
}

pub fn deinit(uring: *Uring) void {
    // Closing the ring cancels whatever is still in flight; no callback runs for it.
    uring.ring.deinit();
    uring.* = undefined;
}

/// The static text Loop.fallback_reason shows for an InitError.
pub fn reason(err: InitError) []const u8 {
    return switch (err) {
        error.IoUringNotSupported => "io_uring_setup: ENOSYS (kernel too old, or no io_uring)",
        error.IoUringFeatureMissing => "kernel lacks IORING_FEAT_EXT_ARG (needs Linux 5.11)",
        error.PermissionDenied => "io_uring_setup: EPERM (seccomp, or kernel.io_uring_disabled)",
        error.ProcessFdQuotaExceeded => "io_uring_setup: EMFILE",
        error.SystemFdQuotaExceeded => "io_uring_setup: ENFILE",
        error.SystemResources => "io_uring_setup: ENOMEM (RLIMIT_MEMLOCK too low?)",
        error.Unexpected => "io_uring_setup: unexpected error",
    };
}

/// Called by the first tick, on the thread that will tick from now on.
pub fn start(uring: *Uring) sys.IoUringRegisterError!void {
    if (uring.enabled) return;
    try sys.ioUringEnableRings(uring.ring.fd);
    uring.enabled = true;
}

/// Writes the completion's SQE, or queues it in the backlog. Never fails.
pub fn submit(uring: *Uring, completion: *Completion) void {
    assert(completion.state == .idle);
    assert(completion.cancel == .none);
    if (uring.backlog.isEmpty()) {
        if (uring.getSqe()) |sqe| {
            uring.prep(sqe, completion);
            completion.state = .submitted;
            return;
        }
    }
    completion.state = .backlog;
    uring.backlog.push(completion);
}

/// A splice is a nonblocking system call made when its socket is ready: tried at once (a
/// socket usually is), else after a POLL_ADD (`poll_first`), again and again until it moves
/// bytes. IORING_OP_SPLICE itself is not used: the kernel always hands it to an io-wq worker
/// thread, a context switch per chunk.
pub fn submitSplice(uring: *Uring, loop: *Loop, completion: *Completion) void {
    assert(completion.state == .idle);
    if (completion.trySplice()) return loop.pushReady(completion);
    completion.poll_first = true;
    uring.submit(completion);
}

/// See Loop.cancel for the contract. How each state resolves:
/// - backlog: the kernel never saw it: unlink and complete with Canceled locally.
/// - submitted: write an ASYNC_CANCEL SQE. If the operation finished already (its CQE waits in
///   the ring, or in the batch being dispatched), the cancel finds nothing (ENOENT) and the
///   real result is delivered. The cancel SQE precedes any SQE written later, and the target
///   can only be resubmitted after its CQE is dispatched, so the cancel is consumed by the
///   kernel before a resubmitted operation with the same user_data exists.
/// - ready: the result is already set; nothing to do.
pub fn cancel(uring: *Uring, loop: *Loop, target: *Completion) void {
    switch (target.state) {
        .idle, .ready => {},
        .waiting => unreachable, // An epoll state.
        .backlog => {
            uring.backlog.remove(target);
            target.setCanceled();
            loop.pushReady(target);
        },
        .submitted => switch (target.cancel) {
            .submitted, .backlogged => {}, // Already on its way.
            .none => {
                if (uring.backlog.isEmpty()) {
                    if (uring.getSqe()) |sqe| {
                        uring.prepCancel(sqe, target);
                        target.cancel = .submitted;
                        return;
                    }
                }
                // The target's `next` is free: a submitted completion is in no queue.
                target.cancel = .backlogged;
                uring.backlog.push(target);
            },
        },
    }
}

/// Submits everything queued and waits for at least one CQE, or until `timeout_ns` (null:
/// no limit), or not at all when `block` is false. Then dispatches every ready CQE.
pub fn tick(uring: *Uring, loop: *Loop, block: bool, timeout_ns: ?u64) Loop.TickError!void {
    assert(uring.enabled);
    uring.drainBacklog();
    // Never sleep while work is already waiting: CQEs in the ring, or a backlog that the
    // kernel should be asked to take again soon.
    const wait = block and uring.ring.cq_ready() == 0 and uring.backlog.isEmpty();
    const to_submit = uring.ring.flush_sq();
    // With DEFER_TASKRUN completions are only posted inside an enter with GETEVENTS, so even a
    // non-blocking tick enters once (wait_nr 0) to collect them.
    const wait_nr: u32 = @intFromBool(wait);
    const ring_fd = uring.ring.fd;
    _ = sys.ioUringEnterWait(ring_fd, to_submit, wait_nr, timeout_ns) catch |err| switch (err) {
        error.SystemResources => {}, // Reap, then submit again next tick.
        error.Unexpected => return error.Unexpected,
    };
    loop.now_ns = sys.clockMonotonicNs();
    try uring.reap(loop);
}

fn reap(uring: *Uring, loop: *Loop) Loop.TickError!void {
    var batches: u32 = 0;
    while (batches < uring.cqe_batches_max) : (batches += 1) {
        // wait_nr 0: copies what is ready, entering the kernel only to flush an overflow.
        const count = uring.ring.copy_cqes(&uring.cqes, 0) catch |err| switch (err) {
            error.SystemResources, error.CompletionQueueOvercommitted => break,
            error.SignalInterrupt => break,
            else => return error.Unexpected,
        };
        // Copy first, then dispatch: callbacks may submit, which may enter the kernel.
        for (uring.cqes[0..count]) |*cqe| uring.dispatch(loop, cqe);
        if (count < uring.cqes.len) break;
    }
}

fn dispatch(uring: *Uring, loop: *Loop, cqe: *const linux.io_uring_cqe) void {
    // ENOENT (already finished), EALREADY (running, will finish) or 0 (canceled): the
    // target's own CQE says everything, so a cancel's CQE is ignored.
    if (cqe.user_data == cancel_user_data) return;
    const completion: *Completion = @ptrFromInt(cqe.user_data);
    assert(completion.state == .submitted);
    const cancel_requested = completion.cancel != .none;
    switch (completion.cancel) {
        .none, .submitted => {},
        // Finished before its cancel could be written: the cancel is moot.
        .backlogged => uring.backlog.remove(completion),
    }
    completion.cancel = .none;

    const again = -@as(i32, @backingInt(linux.E.AGAIN));
    if (completion.poll_first) {
        // The POLL_ADD that stood in for the operation finished.
        completion.poll_first = false;
        if (cqe.res >= 0) {
            // Ready: run the real operation, unless a cancel was asked for meanwhile (its
            // ASYNC_CANCEL found the poll already done, so only we can honour it). A splice
            // runs here and now; if the readiness was taken by then, it waits again.
            if (cancel_requested) {
                completion.setCanceled();
            } else if (!completion.isSplice()) {
                return uring.resubmit(completion);
            } else if (!completion.trySplice()) {
                completion.poll_first = true;
                return uring.resubmit(completion);
            }
        } else {
            completion.setResultRaw(cqe.res);
        }
    } else if (cqe.res == again and retriesOnAgain(completion)) {
        // Some kernels answer EAGAIN instead of arming their internal poll for operations on
        // O_NONBLOCK files (accept on older kernels, an eventfd read without FMODE_NOWAIT).
        // Wait for readiness with a POLL_ADD on the same user_data, then try again: the caller
        // never sees WouldBlock. A pending cancel wins instead.
        if (cancel_requested) {
            completion.setCanceled();
        } else {
            completion.poll_first = true;
            return uring.resubmit(completion);
        }
    } else {
        completion.setResultRaw(cqe.res);
    }
    completion.state = .ready;
    loop.complete(completion);
}

/// EAGAIN means "not ready" for these; for connect it means "no free local port" (an error).
fn retriesOnAgain(completion: *const Completion) bool {
    return switch (completion.operation) {
        .none => unreachable,
        .accept, .recv, .send, .read => true,
        .connect, .poll_readable => false,
        .splice_in, .splice_out => unreachable, // Never an SQE of their own.
    };
}

fn resubmit(uring: *Uring, completion: *Completion) void {
    completion.state = .idle;
    uring.submit(completion);
}

/// Gets a free SQE, flushing the SQ to the kernel once if it is full.
fn getSqe(uring: *Uring) ?*linux.io_uring_sqe {
    if (uring.ring.get_sqe()) |sqe| return sqe else |err| switch (err) {
        error.SubmissionQueueFull => {},
    }
    // Before the first tick the ring may still be disabled: the backlog takes the overflow.
    if (!uring.enabled) return null;
    _ = uring.ring.submit() catch |err| switch (err) {
        // The kernel would not take SQEs now: the backlog holds the completion until the tick.
        error.SystemResources, error.CompletionQueueOvercommitted, error.SignalInterrupt => {
            return null;
        },
        // Anything else is a bug in how the loop uses the ring (wrong thread, bad SQE).
        else => unreachable,
    };
    return uring.ring.get_sqe() catch null; // Still full: the kernel took nothing.
}

/// Moves backlog entries into free SQEs, in order, without entering the kernel.
fn drainBacklog(uring: *Uring) void {
    while (uring.backlog.peek()) |completion| {
        const sqe = uring.ring.get_sqe() catch break;
        _ = uring.backlog.pop();
        switch (completion.cancel) {
            .backlogged => {
                assert(completion.state == .submitted);
                uring.prepCancel(sqe, completion);
                completion.cancel = .submitted;
            },
            .none => {
                assert(completion.state == .backlog);
                uring.prep(sqe, completion);
                completion.state = .submitted;
            },
            .submitted => unreachable,
        }
    }
}

fn prepCancel(uring: *const Uring, sqe: *linux.io_uring_sqe, target: *Completion) void {
    sqe.prep_cancel(@intFromPtr(target), 0);
    sqe.user_data = cancel_user_data;
    // A cancel that found its target says nothing the target's own CQE will not: skip it.
    if (uring.modern) sqe.flags |= linux.IOSQE_CQE_SKIP_SUCCESS;
}

fn prep(uring: *const Uring, sqe: *linux.io_uring_sqe, completion: *Completion) void {
    const socket = completion.operation.socket();
    assert(socket.fd >= 0);
    if (completion.poll_first) {
        const events: u32 = switch (completion.operation.direction()) {
            .read => linux.POLL.IN,
            .write => linux.POLL.OUT,
            .watch => unreachable, // A watch is a POLL_ADD already.
        };
        sqe.prep_poll_add(socket.fd, events);
    } else switch (completion.operation) {
        .none => unreachable,
        .accept => sqe.prep_accept(socket.fd, null, null, linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC),
        .connect => |*op| sqe.prep_connect(socket.fd, op.address.sockaddr(), op.address.socklen()),
        .recv => |op| {
            sqe.prep_recv(socket.fd, clamp(u8, op.buffer), 0);
            // Nothing is there yet: arm the poll at once rather than after a receive that
            // finds nothing (a lock of the socket and a copy attempt for no bytes).
            if (op.later and uring.modern) sqe.ioprio |= linux.IORING_RECVSEND_POLL_FIRST;
        },
        .send => |op| sqe.prep_send(socket.fd, clamp(u8, op.buffer), linux.MSG.NOSIGNAL),
        // ERR and HUP are always reported; RDHUP adds the peer's half-close.
        .poll_readable => sqe.prep_poll_add(socket.fd, linux.POLL.IN | linux.EPOLL.RDHUP),
        .splice_in, .splice_out => unreachable, // Always `poll_first` (submitSplice).
        // Offset -1: "the current position", the only meaningful one for an eventfd.
        .read => |op| sqe.prep_read(socket.fd, op.buffer, std.math.maxInt(u64)),
    }
    sqe.user_data = @intFromPtr(completion);
}

/// A CQE reports at most maxInt(i32) bytes; recv and send may transfer less than asked anyway.
fn clamp(comptime T: type, buffer: anytype) @TypeOf(buffer) {
    comptime assert(@typeInfo(@TypeOf(buffer)).pointer.child == T);
    return buffer[0..@min(buffer.len, std.math.maxInt(i32))];
}

test "uring: an EAGAIN result becomes a POLL_ADD, then the real operation runs" {
    // No kernel here answers EAGAIN for these operations, so the first CQE is forged.
    const TimerQueue = @import("TimerQueue.zig");
    const Timer = @import("Timer.zig");
    const Socket = @import("Socket.zig");
    var loop = Loop.init(.{ .mode = .uring, .entries = 16 }) catch return error.SkipZigTest;
    defer loop.deinit();
    var queue: TimerQueue = .init(std.time.ns_per_ms);
    loop.timerQueueRegister(&queue);
    var timer: Timer = .{};
    var fired = false;
    const Flag = struct {
        fn set(flag: *bool) void {
            flag.* = true;
        }
    };
    loop.timerArm(&queue, &timer, bool, &fired, Flag.set);
    while (!fired) try loop.tick(); // Enables the ring.

    const fd = try sys.eventfd(0, linux.EFD.NONBLOCK | linux.EFD.CLOEXEC);
    defer sys.close(fd);
    var socket: Socket = .init(fd);
    var value: u64 = 0;
    const Outcome = struct {
        result: ?sys.ReadError!usize = null,
        fn callback(context: ?*anyopaque, completion: *Completion) void {
            const outcome: *@This() = @ptrCast(@alignCast(context.?));
            outcome.result = completion.result.read;
        }
    };
    var outcome: Outcome = .{};
    var completion: Completion = .{
        .operation = .{ .read = .{ .socket = &socket, .buffer = std.mem.asBytes(&value) } },
        .context = &outcome,
        .callback = Outcome.callback,
        .state = .submitted, // As if the kernel had it.
    };
    socket.reader = &completion;
    const again = -@as(i32, @backingInt(linux.E.AGAIN));
    const user_data = @intFromPtr(&completion);
    const forged: linux.io_uring_cqe = .{ .user_data = user_data, .res = again, .flags = 0 };
    loop.io.uring.dispatch(&loop, &forged);
    try std.testing.expect(completion.poll_first);
    try std.testing.expectEqual(completion.state, .submitted);
    const ring = &loop.io.uring.ring;
    const last_sqe = &ring.sq.sqes[(ring.sq.sqe_tail -% 1) & ring.sq.mask];
    try std.testing.expectEqual(linux.IORING_OP.POLL_ADD, last_sqe.opcode);

    sys.eventfdSignal(fd);
    while (outcome.result == null) {
        fired = false;
        loop.timerArm(&queue, &timer, bool, &fired, Flag.set);
        try loop.tick();
    }
    try std.testing.expectEqual(@as(usize, 8), try outcome.result.?);
    try std.testing.expectEqual(@as(u64, 1), value);
    try std.testing.expect(!completion.poll_first);
    try std.testing.expect(socket.reader == null);
}
