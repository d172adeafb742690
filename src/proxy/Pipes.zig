//! One worker's pipes for splicing response bodies (upstream_http1.spliceBody): backend socket ->
//! pipe -> client socket with splice(2), so the bytes of a large body never pass through
//! sluice's memory (two copies per byte saved, the cost that dominates a 1 MiB response).
//!
//! Decisions:
//! - A pipe is two fds, so a worker keeps a few (`count_max`), opened on first need and kept:
//!   no system call per response to make one. When all are busy a body is copied as before.
//! - A pipe goes back clean (empty) or is closed: an exchange that ends with bytes still in
//!   its pipe (a client that went away mid-body) must not hand them to the next one.
//! - Capacity: `bytes_wanted` per pipe where the system allows (F_SETPIPE_SZ, up to
//!   /proc/sys/fs/pipe-max-size for an unprivileged process); the pages are the kernel's and
//!   are referenced only while a chunk is in flight.
const std = @import("std");
const assert = std.debug.assert;

const Loop = @import("../loop/loop.zig").Loop;

const Pipes = @This();

slots: [count_max]Slot = @splat(.{}),

pub const count_max = 16;
pub const bytes_wanted = 256 * 1024;

const Slot = struct {
    pipe: ?Loop.Pipe = null,
    busy: bool = false,
};

/// A free pipe, opened now if none is; null when all are busy or none could be opened (the
/// caller copies instead).
pub fn acquire(pipes: *Pipes, loop: *Loop) ?*const Loop.Pipe {
    var closed: ?*Slot = null;
    for (&pipes.slots) |*slot| {
        if (slot.busy) continue;
        if (slot.pipe) |*pipe| {
            slot.busy = true;
            return pipe;
        }
        if (closed == null) closed = slot;
    }
    const slot = closed orelse return null;
    slot.pipe = loop.openPipe(bytes_wanted) catch return null;
    slot.busy = true;
    return &slot.pipe.?;
}

/// `empty`: nothing is left in the pipe; otherwise it is closed (and opened again when next
/// needed). No splice naming it may be pending.
pub fn release(pipes: *Pipes, loop: *Loop, pipe: *const Loop.Pipe, empty: bool) void {
    const slot = pipes.slotOf(pipe);
    assert(slot.busy);
    slot.busy = false;
    if (!empty) {
        loop.closePipe(slot.pipe.?);
        slot.pipe = null;
    }
}

pub fn closeAll(pipes: *Pipes, loop: *Loop) void {
    for (&pipes.slots) |*slot| {
        assert(!slot.busy);
        if (slot.pipe) |pipe| loop.closePipe(pipe);
        slot.* = .{};
    }
}

pub fn busyCount(pipes: *const Pipes) u32 {
    var count: u32 = 0;
    for (&pipes.slots) |*slot| count += @intFromBool(slot.busy);
    return count;
}

fn slotOf(pipes: *Pipes, pipe: *const Loop.Pipe) *Slot {
    for (&pipes.slots) |*slot| {
        if (slot.pipe) |*p| if (p == pipe) return slot;
    }
    unreachable; // Not one of ours.
}

test "pipes: reused when returned empty, reopened when returned dirty, none when all busy" {
    var loop = try Loop.init(.{ .mode = .epoll });
    defer loop.deinit();
    var pipes: Pipes = .{};
    defer pipes.closeAll(&loop);
    const first = pipes.acquire(&loop).?;
    const read_fd = first.read;
    try std.testing.expect(first.capacity >= 4096);
    pipes.release(&loop, first, true);
    const again = pipes.acquire(&loop).?;
    try std.testing.expectEqual(read_fd, again.read); // Kept, not reopened.
    pipes.release(&loop, again, false);
    try std.testing.expect(pipes.slots[0].pipe == null); // Closed: it held bytes.
    var taken: [count_max]*const Loop.Pipe = undefined;
    for (&taken) |*p| p.* = pipes.acquire(&loop).?;
    try std.testing.expect(pipes.acquire(&loop) == null);
    try std.testing.expectEqual(@as(u32, count_max), pipes.busyCount());
    for (taken) |p| pipes.release(&loop, p, true);
}
