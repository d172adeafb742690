//! Signals are blocked in every thread (workers inherit the mask from the control thread,
//! which sets it before spawning them) and read by the control thread from a signalfd, so a
//! handler never runs in the middle of a worker's event loop.
const std = @import("std");
const linux = std.os.linux;

pub const Signal = enum { terminate, interrupt, hangup, user1, user2 };

/// Blocks the signals we handle (and SIGPIPE, which we never want: sends use MSG_NOSIGNAL,
/// this is belt and braces) in the calling thread; threads started afterwards inherit it.
/// Called first thing in main, before any thread exists.
pub fn block() !void {
    var mask = linux.sigemptyset();
    linux.sigaddset(&mask, .TERM);
    linux.sigaddset(&mask, .INT);
    linux.sigaddset(&mask, .HUP);
    linux.sigaddset(&mask, .USR1);
    linux.sigaddset(&mask, .USR2);
    linux.sigaddset(&mask, .PIPE);
    if (linux.errno(linux.sigprocmask(linux.SIG.BLOCK, &mask, null)) != .SUCCESS) {
        return error.SignalMask;
    }
}

pub const Set = struct {
    fd: linux.fd_t,

    /// Opens a signalfd for the signals we handle. `block` must have run first, before any
    /// thread was started.
    pub fn init() !Set {
        var fd_mask = linux.sigemptyset();
        linux.sigaddset(&fd_mask, .TERM);
        linux.sigaddset(&fd_mask, .INT);
        linux.sigaddset(&fd_mask, .HUP);
        linux.sigaddset(&fd_mask, .USR1);
        linux.sigaddset(&fd_mask, .USR2);
        const rc = linux.signalfd(-1, &fd_mask, linux.SFD.CLOEXEC | linux.SFD.NONBLOCK);
        if (linux.errno(rc) != .SUCCESS) return error.SignalFd;
        return .{ .fd = @intCast(rc) };
    }

    /// Waits up to `timeout_ms` for one signal. Null on timeout.
    pub fn wait(set: *Set, timeout_ms: i32) ?Signal {
        var pfd = [1]linux.pollfd{.{ .fd = set.fd, .events = linux.POLL.IN, .revents = 0 }};
        const rc = linux.poll(&pfd, 1, timeout_ms);
        if (linux.errno(rc) != .SUCCESS or rc == 0) return null;
        var info: linux.signalfd_siginfo = undefined;
        const n = linux.read(set.fd, @ptrCast(&info), @sizeOf(linux.signalfd_siginfo));
        if (linux.errno(n) != .SUCCESS or n != @sizeOf(linux.signalfd_siginfo)) return null;
        const sig: linux.SIG = @fromBackingInt(@intCast(info.signo));
        return switch (sig) {
            .TERM => .terminate,
            .INT => .interrupt,
            .HUP => .hangup,
            .USR1 => .user1,
            .USR2 => .user2,
            else => null,
        };
    }
};
