//! A socket fd as the loop sees it: the fd, its pending reader and writer, and the epoll
//! backend's cached readiness. Owned by the caller (inside a session or pool slot), like a
//! Completion, and must not move while an operation is pending or, with epoll, after its first
//! operation (the epoll registration points at it).
//!
//! Decision: one pending reader (accept, recv), one pending writer (send, connect) and one
//! watcher (pollReadable) per socket, on both backends. This is what a proxy needs, it lets
//! epoll keep three pointers instead of a waiter list, and it lets `Loop.close` assert that
//! nothing is pending. The watcher has its own slot so that an idle pooled connection's watch
//! can stay armed while a request uses the connection (see upstream/Connections.zig).
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;

const Completion = @import("Completion.zig");

const Socket = @This();

fd: linux.fd_t,
/// The pending read-direction completion, from submission until its callback runs.
reader: ?*Completion = null,
/// The pending write-direction completion, from submission until its callback runs.
writer: ?*Completion = null,
/// The pending watch (pollReadable), from submission until its callback runs.
watcher: ?*Completion = null,
/// epoll only: EPOLL_CTL_ADD done (once per fd lifetime; close(2) removes it).
registered: bool = false,
/// epoll only: cached readiness. Set by events, cleared by EAGAIN. Both start true (unknown):
/// the first operation tries its syscall at once, which saves a wait on a fresh connection.
readable: bool = true,
writable: bool = true,
/// epoll only: an event said the peer closed or the socket failed (RDHUP, HUP, ERR). That
/// stays to be reported however much is read, so a short read no longer means "drained".
input_ended: bool = false,

pub fn init(fd: linux.fd_t) Socket {
    assert(fd >= 0);
    return .{ .fd = fd };
}

/// The slot a pending operation of `direction` occupies.
pub fn slot(socket: *Socket, direction: Completion.Operation.Direction) *?*Completion {
    return switch (direction) {
        .read => &socket.reader,
        .write => &socket.writer,
        .watch => &socket.watcher,
    };
}

test "socket: size" {
    // Lives in every session for both its downstream and upstream sides.
    try std.testing.expectEqual(32, @sizeOf(Socket));
}
