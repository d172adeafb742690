//! The one place that makes socket and fd syscalls (through `std.os.linux`, no libc) and turns
//! errno into small explicit error sets, so a Zig upgrade or a kernel surprise touches one file.
//!
//! Decision: every errno mapping is a pure `errnoToXError` function used both by the direct
//! syscall wrappers here and by the io_uring backend for CQE results (negative errno), so the
//! two event-loop backends cannot disagree about what an error means. Programmer errors (a bad
//! fd, a bad pointer, an fd that is not a socket) are asserted with `unreachable`; everything
//! the network can do to us is an error value; anything else is `error.Unexpected`.
const std = @import("std");
const builtin = @import("builtin");
const linux = std.os.linux;
const assert = std.debug.assert;

pub const fd_t = linux.fd_t;
pub const E = linux.E;

// ---------------------------------------------------------------------------------------------
// Error sets of the data plane: what a completion callback can receive.

pub const AcceptError = error{
    ConnectionAborted,
    ProcessFdQuotaExceeded,
    SystemFdQuotaExceeded,
    SystemResources,
    Canceled,
    WouldBlock,
    Unexpected,
};

pub const ConnectError = error{
    ConnectionRefused,
    /// A Unix socket's path does not exist (ENOENT, ENOTDIR).
    SocketFileMissing,
    /// A Unix socket's path or a directory on it is not writable by sluice's user (EACCES), or
    /// a firewall rule refused a TCP connect (EPERM).
    PermissionDenied,
    NetworkUnreachable,
    HostUnreachable,
    TimedOut,
    AddressNotAvailable,
    Canceled,
    Unexpected,
};

pub const RecvError = error{
    ConnectionResetByPeer,
    ConnectionRefused,
    TimedOut,
    WouldBlock,
    Canceled,
    Unexpected,
};

pub const SendError = error{
    BrokenPipe,
    ConnectionResetByPeer,
    WouldBlock,
    Canceled,
    Unexpected,
};

/// pollReadable has no failure of its own: an error on the socket makes it "ready".
pub const PollError = error{ Canceled, Unexpected };

/// Plain read(2), used for the event loop's wake-up eventfd.
pub const ReadError = error{ WouldBlock, Canceled, Unexpected };

/// Starting a nonblocking connect: `InProgress` is the normal answer for TCP.
pub const ConnectStartError = ConnectError || error{InProgress};

// ---------------------------------------------------------------------------------------------
// errno mappers, shared with the io_uring backend.

/// `res` as returned by a raw syscall wrapper or a CQE (`cqe.res`): negative errno or a value.
pub fn errnoFromResult(res: i32) E {
    assert(res < 0);
    assert(res > -4096);
    return @fromBackingInt(@intCast(-res));
}

pub fn errnoToAcceptError(e: E) AcceptError {
    return switch (e) {
        .SUCCESS => unreachable,
        .AGAIN => error.WouldBlock,
        .CANCELED => error.Canceled,
        .CONNABORTED => error.ConnectionAborted,
        // accept4(2): "Linux passes already-pending network errors on the new socket as an
        // error code from accept()". Each means this one connection is gone, not the listener.
        .PROTO, .NOPROTOOPT, .HOSTDOWN, .NONET, .HOSTUNREACH, .OPNOTSUPP, .NETUNREACH => {
            return error.ConnectionAborted;
        },
        // Firewall (netfilter) rules forbade the connection: also only this connection.
        .PERM => error.ConnectionAborted,
        .MFILE => error.ProcessFdQuotaExceeded,
        .NFILE => error.SystemFdQuotaExceeded,
        .NOBUFS, .NOMEM => error.SystemResources,
        .BADF, .FAULT, .NOTSOCK => unreachable, // Not our listening socket: a bug.
        // EINVAL: the socket is not listening, e.g. shut down during a drain. Not a bug we
        // can assert on: the listener may be shut down on purpose while an accept is pending.
        .INVAL => error.Unexpected,
        else => error.Unexpected,
    };
}

pub fn errnoToConnectError(e: E) ConnectError {
    return switch (e) {
        .SUCCESS => unreachable,
        .CANCELED => error.Canceled,
        .CONNREFUSED => error.ConnectionRefused,
        // A reset during the handshake (e.g. a SYN-ACK answered by RST, or a backend whose
        // accept queue overflowed with tcp_abort_on_overflow): to the caller it is a refusal.
        .CONNRESET => error.ConnectionRefused,
        .NETUNREACH, .NETDOWN => error.NetworkUnreachable,
        .HOSTUNREACH, .HOSTDOWN => error.HostUnreachable,
        .TIMEDOUT => error.TimedOut,
        .ADDRNOTAVAIL => error.AddressNotAvailable,
        // For TCP, EAGAIN from connect(2) means "no more free local ports": the same trouble as
        // EADDRNOTAVAIL from the caller's point of view (ephemeral port exhaustion). For a Unix
        // socket it means the listener's backlog is full (unix(7)): callers that know the
        // address say so.
        .AGAIN => error.AddressNotAvailable,
        .NOENT, .NOTDIR => error.SocketFileMissing,
        .ACCES, .PERM => error.PermissionDenied,
        .BADF, .FAULT, .NOTSOCK => unreachable, // Not our socket or address: a bug.
        // EALREADY/EISCONN: a second connect on the same socket, which the loop's one-writer
        // rule already asserts against.
        else => error.Unexpected,
    };
}

pub fn errnoToRecvError(e: E) RecvError {
    return switch (e) {
        .SUCCESS => unreachable,
        .AGAIN => error.WouldBlock,
        .CANCELED => error.Canceled,
        .CONNRESET => error.ConnectionResetByPeer,
        // A connect that failed asynchronously reports its error on the next recv.
        .CONNREFUSED => error.ConnectionRefused,
        // Keep-alive probes or retransmissions gave up on the peer.
        .TIMEDOUT => error.TimedOut,
        // An ICMP error for the peer arrived on an established connection: it is gone.
        .HOSTUNREACH, .NETUNREACH, .PIPE => error.ConnectionResetByPeer,
        .BADF, .FAULT, .NOTSOCK => unreachable, // Not our socket or buffer: a bug.
        // ENOTCONN means recv before connect completed (a caller bug we do not crash for),
        // EINTR only comes from io_uring when its worker is torn down; ENOMEM is transient.
        else => error.Unexpected,
    };
}

pub fn errnoToSendError(e: E) SendError {
    return switch (e) {
        .SUCCESS => unreachable,
        .AGAIN => error.WouldBlock,
        .CANCELED => error.Canceled,
        .PIPE => error.BrokenPipe,
        .CONNRESET => error.ConnectionResetByPeer,
        // The peer stopped answering (keep-alive or retransmission timeout) or became
        // unreachable: the connection is gone just as surely as after a reset.
        .TIMEDOUT, .HOSTUNREACH, .NETUNREACH => error.ConnectionResetByPeer,
        .BADF, .FAULT, .NOTSOCK => unreachable, // Not our socket or buffer: a bug.
        // MSG.NOSIGNAL is always set, so EPIPE arrives as an error and never as SIGPIPE.
        // ENOTCONN (send before connect completed) and ENOBUFS/ENOMEM are unexpected here.
        else => error.Unexpected,
    };
}

pub fn errnoToPollError(e: E) PollError {
    return switch (e) {
        .SUCCESS => unreachable,
        .CANCELED => error.Canceled,
        .BADF, .FAULT => unreachable, // Not our fd: a bug.
        else => error.Unexpected,
    };
}

pub fn errnoToReadError(e: E) ReadError {
    return switch (e) {
        .SUCCESS => unreachable,
        .AGAIN => error.WouldBlock,
        .CANCELED => error.Canceled,
        .BADF, .FAULT => unreachable, // Not our fd or buffer: a bug.
        // EINVAL: an eventfd read with a buffer under 8 bytes, which we never do.
        else => error.Unexpected,
    };
}

// ---------------------------------------------------------------------------------------------
// Data-plane syscalls (nonblocking; the epoll backend's way of doing I/O).

/// Accepts one connection as a nonblocking, close-on-exec socket.
pub fn accept4(listener: fd_t) AcceptError!fd_t {
    while (true) {
        const rc = linux.accept4(listener, null, null, linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC);
        switch (linux.errno(rc)) {
            .SUCCESS => return @intCast(rc),
            .INTR => continue,
            else => |e| return errnoToAcceptError(e),
        }
    }
}

/// Starts a connect on a nonblocking socket: success, `error.InProgress`, or a failure.
pub fn connect(
    fd: fd_t,
    address: *const linux.sockaddr,
    len: linux.socklen_t,
) ConnectStartError!void {
    const rc = linux.connect(fd, address, len);
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        // EINTR on a nonblocking connect: the handshake goes on in the background, exactly
        // as with EINPROGRESS (connect(2): "the connection is established asynchronously").
        .INPROGRESS, .INTR => error.InProgress,
        else => |e| errnoToConnectError(e),
    };
}

/// The outcome of a nonblocking connect once the socket became writable (SO_ERROR).
pub fn getsockoptError(fd: fd_t) ConnectError!void {
    var value: c_int = 0;
    var len: linux.socklen_t = @sizeOf(c_int);
    const rc = linux.getsockopt(fd, linux.SOL.SOCKET, linux.SO.ERROR, @ptrCast(&value), &len);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .BADF, .FAULT, .NOTSOCK, .INVAL, .NOPROTOOPT => unreachable, // Bad fd or option: a bug.
        else => return error.Unexpected,
    }
    assert(len == @sizeOf(c_int));
    if (value == 0) return;
    assert(value > 0);
    return errnoToConnectError(@fromBackingInt(@intCast(value)));
}

/// Receives into `buffer`; 0 is an orderly EOF.
pub fn recv(fd: fd_t, buffer: []u8) RecvError!usize {
    return recvFlags(fd, buffer, 0);
}

/// recv(2) that never waits: what has arrived, or `WouldBlock`.
pub fn recvNoWait(fd: fd_t, buffer: []u8) RecvError!usize {
    return recvFlags(fd, buffer, linux.MSG.DONTWAIT);
}

/// Would a read not block (data, an EOF or a pending error to report)? poll(2) without
/// waiting, so it answers for any fd: sockets and the signalfd alike.
pub fn peekReadable(fd: fd_t) bool {
    var pfd = [1]linux.pollfd{.{ .fd = fd, .events = linux.POLL.IN, .revents = 0 }};
    while (true) {
        const rc = linux.poll(&pfd, 1, 0);
        switch (linux.errno(rc)) {
            .SUCCESS => return rc > 0,
            .INTR => continue,
            else => return true, // Let the reader's own syscall report it.
        }
    }
}

fn recvFlags(fd: fd_t, buffer: []u8, flags: u32) RecvError!usize {
    while (true) {
        const rc = linux.recvfrom(fd, buffer.ptr, buffer.len, flags, null, null);
        switch (linux.errno(rc)) {
            .SUCCESS => return rc,
            .INTR => continue,
            else => |e| return errnoToRecvError(e),
        }
    }
}

/// Sends from `buffer`, possibly partially. Always MSG.NOSIGNAL: a dead peer is an error
/// value, never a SIGPIPE that kills the process.
pub fn send(fd: fd_t, buffer: []const u8) SendError!usize {
    while (true) {
        const rc = linux.sendto(fd, buffer.ptr, buffer.len, linux.MSG.NOSIGNAL, null, 0);
        switch (linux.errno(rc)) {
            .SUCCESS => return rc,
            .INTR => continue,
            else => |e| return errnoToSendError(e),
        }
    }
}

pub fn read(fd: fd_t, buffer: []u8) ReadError!usize {
    while (true) {
        const rc = linux.read(fd, buffer.ptr, buffer.len);
        switch (linux.errno(rc)) {
            .SUCCESS => return rc,
            .INTR => continue,
            else => |e| return errnoToReadError(e),
        }
    }
}

/// Moves up to `len` bytes from a socket into a pipe without copying them through user
/// memory (splice(2), nonblocking on both ends). 0 is the socket's orderly EOF. The caller
/// splices into an empty pipe only, so WouldBlock always means "the socket has nothing yet".
pub fn spliceIn(socket_fd: fd_t, pipe_write: fd_t, len: u32) RecvError!usize {
    while (true) {
        const rc = spliceRaw(socket_fd, pipe_write, len);
        switch (linux.errno(rc)) {
            .SUCCESS => return rc,
            .INTR => continue,
            else => |e| return errnoToRecvError(e),
        }
    }
}

/// Moves up to `len` bytes from a pipe into a socket (splice(2), nonblocking). The caller
/// splices out of a pipe that holds at least `len` bytes, so WouldBlock always means "the
/// socket's send buffer is full". SIGPIPE is blocked on every thread (runtime/signals.zig),
/// so a dead peer is EPIPE here, as with `send`.
pub fn spliceOut(pipe_read: fd_t, socket_fd: fd_t, len: u32) SendError!usize {
    while (true) {
        const rc = spliceRaw(pipe_read, socket_fd, len);
        switch (linux.errno(rc)) {
            .SUCCESS => return rc,
            .INTR => continue,
            else => |e| return errnoToSendError(e),
        }
    }
}

fn spliceRaw(in: fd_t, out: fd_t, len: u32) usize {
    const flags = splice_f_move | splice_f_nonblock;
    return linux.syscall6(.splice, @bitCast(@as(isize, in)), 0, @bitCast(@as(isize, out)), 0, len, flags);
}

const splice_f_move = 1;
const splice_f_nonblock = 2;

pub const PipeError = error{ ProcessFdQuotaExceeded, SystemFdQuotaExceeded, Unexpected };

/// A nonblocking, close-on-exec pipe sized for `bytes_wanted` when the system allows it
/// (F_SETPIPE_SZ; an unprivileged process gets up to /proc/sys/fs/pipe-max-size). Returns the
/// read end, the write end and the capacity it really has.
pub fn pipe(bytes_wanted: u32) PipeError!struct { read: fd_t, write: fd_t, capacity: u32 } {
    var fds: [2]fd_t = undefined;
    const rc = linux.pipe2(&fds, .{ .NONBLOCK = true, .CLOEXEC = true });
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .MFILE => return error.ProcessFdQuotaExceeded,
        .NFILE => return error.SystemFdQuotaExceeded,
        else => return error.Unexpected,
    }
    // A refused size (EPERM over the limit, EBUSY) keeps the default: ask what it is.
    _ = linux.fcntl(fds[1], linux.F.SETPIPE_SZ, bytes_wanted);
    const size = linux.fcntl(fds[1], linux.F.GETPIPE_SZ, 0);
    const capacity: u32 = switch (linux.errno(size)) {
        .SUCCESS => @intCast(@min(size, std.math.maxInt(u32))),
        else => 4096, // Cannot happen on a pipe; one page is the floor any pipe has.
    };
    return .{ .read = fds[0], .write = fds[1], .capacity = capacity };
}

pub const ShutdownError = error{ SocketNotConnected, Unexpected };

/// `how` is one of linux.SHUT.RD, WR, RDWR.
pub fn shutdown(fd: fd_t, how: i32) ShutdownError!void {
    const rc = linux.shutdown(fd, how);
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        // The peer reset the connection already: nothing left to shut down.
        .NOTCONN => error.SocketNotConnected,
        .BADF, .NOTSOCK, .INVAL => unreachable, // Not our socket, or a bad `how`: a bug.
        else => error.Unexpected,
    };
}

/// Closes an fd we own. Never fails from the caller's point of view.
pub fn close(fd: fd_t) void {
    assert(fd >= 0);
    switch (linux.errno(linux.close(fd))) {
        .SUCCESS => {},
        // Linux releases the fd even when close is interrupted; retrying could close an fd that
        // another thread has just been given. So EINTR means "closed".
        .INTR => {},
        .BADF => unreachable, // A double close: the classic ownership bug.
        // EIO/ENOSPC/EDQUOT only concern files with pending writes, never sockets or eventfds;
        // the fd is released anyway and there is nothing to retry.
        else => {},
    }
}

// ---------------------------------------------------------------------------------------------
// Set-up syscalls (listeners, upstream sockets).

pub const SocketError = error{
    AddressFamilyNotSupported,
    ProtocolNotSupported,
    PermissionDenied,
    ProcessFdQuotaExceeded,
    SystemFdQuotaExceeded,
    SystemResources,
    Unexpected,
};

/// Callers pass SOCK.NONBLOCK | SOCK.CLOEXEC in `socket_type`: the epoll backend needs the
/// former, and no fd of ours should leak into a child process.
pub fn socket(domain: u32, socket_type: u32, protocol: u32) SocketError!fd_t {
    assert(socket_type & linux.SOCK.NONBLOCK != 0);
    assert(socket_type & linux.SOCK.CLOEXEC != 0);
    const rc = linux.socket(domain, socket_type, protocol);
    return switch (linux.errno(rc)) {
        .SUCCESS => @intCast(rc),
        .AFNOSUPPORT => error.AddressFamilyNotSupported, // E.g. IPv6 disabled in a container.
        .PROTONOSUPPORT, .PROTOTYPE => error.ProtocolNotSupported,
        .ACCES, .PERM => error.PermissionDenied,
        .MFILE => error.ProcessFdQuotaExceeded,
        .NFILE => error.SystemFdQuotaExceeded,
        .NOBUFS, .NOMEM => error.SystemResources,
        .INVAL => unreachable, // Unknown flags in `socket_type`: a bug.
        else => error.Unexpected,
    };
}

pub const SetsockoptError = error{
    OptionNotSupported,
    PermissionDenied,
    SystemResources,
    Unexpected,
};

pub fn setsockoptInt(fd: fd_t, level: i32, name: u32, value: c_int) SetsockoptError!void {
    const rc = linux.setsockopt(fd, level, name, @ptrCast(&value), @sizeOf(c_int));
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        // The option does not exist on this kernel or protocol (e.g. TCP_FASTOPEN built out).
        .NOPROTOOPT, .OPNOTSUPP => error.OptionNotSupported,
        .PERM, .ACCES => error.PermissionDenied,
        .NOBUFS, .NOMEM => error.SystemResources,
        .BADF, .FAULT, .NOTSOCK => unreachable, // Not our socket: a bug.
        // EINVAL: a value out of range for this option. Reported, not asserted: valid ranges
        // differ between kernels.
        else => error.Unexpected,
    };
}

pub const BindError = error{ AddressInUse, AddressNotAvailable, PermissionDenied, Unexpected };

pub fn bind(fd: fd_t, address: *const linux.sockaddr, len: linux.socklen_t) BindError!void {
    const rc = linux.bind(fd, address, len);
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        .ADDRINUSE => error.AddressInUse,
        // An address that is not one of this host's (a typo, or an interface not up yet).
        .ADDRNOTAVAIL => error.AddressNotAvailable,
        .ACCES, .PERM => error.PermissionDenied, // A port under 1024 without the capability.
        .BADF, .FAULT, .NOTSOCK => unreachable, // Not our socket or address: a bug.
        // EINVAL: already bound or a bad length, both bugs we report rather than crash on
        // because the address may come from the operator.
        else => error.Unexpected,
    };
}

pub const ListenError = error{ AddressInUse, Unexpected };

pub fn listen(fd: fd_t, backlog: u31) ListenError!void {
    const rc = linux.listen(fd, backlog);
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        // Another socket listens on the same port (the implicit bind of an unbound socket).
        .ADDRINUSE => error.AddressInUse,
        .BADF, .NOTSOCK, .OPNOTSUPP => unreachable, // Not our TCP socket: a bug.
        else => error.Unexpected,
    };
}

/// Every way setting up a listening socket can fail.
pub const ListenerError = SocketError || SetsockoptError || BindError || ListenError ||
    GetsocknameError;

/// A failed listener set-up in the words an operator searches for (the strerror text for the
/// common ones, as nginx prints them).
pub fn listenerErrorText(err: ListenerError) []const u8 {
    return switch (err) {
        error.AddressInUse => "address already in use",
        error.AddressNotAvailable => "cannot assign requested address (not one of this host's)",
        error.PermissionDenied => "permission denied",
        error.AddressFamilyNotSupported => "address family not supported (IPv6 disabled?)",
        error.ProtocolNotSupported => "protocol not supported",
        error.ProcessFdQuotaExceeded => "too many open files (process limit)",
        error.SystemFdQuotaExceeded => "too many open files (system limit)",
        error.SystemResources => "out of kernel memory",
        error.OptionNotSupported => "a socket option is not supported by this kernel",
        error.Unexpected => "unexpected error",
    };
}

pub const GetsocknameError = error{ SystemResources, Unexpected };

/// Writes the bound address into `storage` and returns its length.
pub fn getsockname(fd: fd_t, storage: *linux.sockaddr.storage) GetsocknameError!linux.socklen_t {
    var len: linux.socklen_t = @sizeOf(linux.sockaddr.storage);
    const rc = linux.getsockname(fd, @ptrCast(storage), &len);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .NOBUFS => return error.SystemResources,
        .BADF, .FAULT, .NOTSOCK, .INVAL => unreachable, // Not our socket or buffer: a bug.
        else => return error.Unexpected,
    }
    assert(len <= @sizeOf(linux.sockaddr.storage));
    return len;
}

pub const GetpeernameError = error{ SocketNotConnected, SystemResources, Unexpected };

/// Writes the peer's address into `storage` and returns its length.
pub fn getpeername(fd: fd_t, storage: *linux.sockaddr.storage) GetpeernameError!linux.socklen_t {
    var len: linux.socklen_t = @sizeOf(linux.sockaddr.storage);
    const rc = linux.getpeername(fd, @ptrCast(storage), &len);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        // The peer reset a freshly accepted connection before we asked: nothing to serve.
        .NOTCONN => return error.SocketNotConnected,
        .NOBUFS => return error.SystemResources,
        .BADF, .FAULT, .NOTSOCK, .INVAL => unreachable, // Not our socket or buffer: a bug.
        else => return error.Unexpected,
    }
    assert(len <= @sizeOf(linux.sockaddr.storage));
    return len;
}

// ---------------------------------------------------------------------------------------------
// Event-loop plumbing: eventfd, epoll and the monotonic clock.

pub const EventfdError = error{
    ProcessFdQuotaExceeded,
    SystemFdQuotaExceeded,
    SystemResources,
    Unexpected,
};

pub fn eventfd(initial: u32, flags: u32) EventfdError!fd_t {
    const rc = linux.eventfd(initial, flags);
    return switch (linux.errno(rc)) {
        .SUCCESS => @intCast(rc),
        .MFILE => error.ProcessFdQuotaExceeded,
        .NFILE => error.SystemFdQuotaExceeded,
        .NODEV, .NOMEM => error.SystemResources, // ENODEV: no anonymous inode could be mounted.
        .INVAL => unreachable, // Unknown flags: a bug.
        else => error.Unexpected,
    };
}

/// Adds 1 to an eventfd's counter, waking whoever polls it. Safe from any thread.
pub fn eventfdSignal(fd: fd_t) void {
    const one: u64 = 1;
    while (true) {
        const rc = linux.write(fd, @ptrCast(&one), @sizeOf(u64));
        switch (linux.errno(rc)) {
            .SUCCESS => return assert(rc == @sizeOf(u64)),
            .INTR => continue,
            // The counter would pass 2^64-2: that many wake-ups are already pending, so the
            // reader is certain to wake. Nothing is lost by dropping this one.
            .AGAIN => return,
            .BADF, .FAULT, .INVAL => unreachable, // Not our eventfd: a bug.
            else => unreachable, // write(2) on an eventfd has no other failure.
        }
    }
}

pub const EpollCreateError = error{
    ProcessFdQuotaExceeded,
    SystemFdQuotaExceeded,
    SystemResources,
    Unexpected,
};

pub fn epoll_create1(flags: u32) EpollCreateError!fd_t {
    const rc = linux.epoll_create1(flags);
    return switch (linux.errno(rc)) {
        .SUCCESS => @intCast(rc),
        .MFILE => error.ProcessFdQuotaExceeded,
        .NFILE => error.SystemFdQuotaExceeded,
        .NOMEM => error.SystemResources,
        .INVAL => unreachable, // Unknown flags: a bug.
        else => error.Unexpected,
    };
}

pub const EpollCtlError = error{
    /// ENOMEM, or ENOSPC: /proc/sys/fs/epoll/max_user_watches reached.
    SystemResources,
    Unexpected,
};

pub fn epoll_ctl(epoll_fd: fd_t, op: u32, fd: fd_t, event: ?*linux.epoll_event) EpollCtlError!void {
    const rc = linux.epoll_ctl(epoll_fd, op, fd, event);
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        .NOMEM, .NOSPC => error.SystemResources,
        // EBADF: a closed fd. EEXIST: registered twice. ENOENT: not registered. EPERM: an fd that
        // epoll cannot watch (a regular file). EINVAL: epoll_fd is not an epoll. All are bugs.
        .BADF, .EXIST, .NOENT, .PERM, .INVAL, .LOOP => unreachable,
        else => error.Unexpected,
    };
}

/// Waits up to `timeout_ms` (-1: forever, 0: poll) and returns how many events were written.
/// A signal ends the wait early with zero events, which the caller handles like a timeout.
pub fn epoll_wait(epoll_fd: fd_t, events: []linux.epoll_event, timeout_ms: i32) usize {
    assert(events.len > 0);
    assert(timeout_ms >= -1);
    const count_max: u32 = @intCast(@min(events.len, std.math.maxInt(i32)));
    const rc = linux.epoll_wait(epoll_fd, events.ptr, count_max, timeout_ms);
    return switch (linux.errno(rc)) {
        .SUCCESS => rc,
        .INTR => 0,
        .BADF, .FAULT, .INVAL => unreachable, // Not our epoll fd or event array: a bug.
        else => unreachable, // epoll_wait(2) documents no other error.
    };
}

pub const IoUringEnterError = error{
    /// EAGAIN or EBUSY: the kernel is short of memory for requests, or holds overflowed CQEs
    /// it wants reaped first. Reap what is there and submit again later.
    SystemResources,
    Unexpected,
};

/// io_uring_enter(2) with IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG: submits `to_submit`
/// SQEs and waits for `wait_nr` CQEs or until `timeout_ns` passes (null: no timeout). The
/// timeout rides in the enter itself (Linux 5.11, IORING_FEAT_EXT_ARG), so no timeout SQE is
/// spent per wait. Returns how many SQEs the kernel consumed.
pub fn ioUringEnterWait(
    ring_fd: fd_t,
    to_submit: u32,
    wait_nr: u32,
    timeout_ns: ?u64,
) IoUringEnterError!u32 {
    var timeout: linux.kernel_timespec = undefined;
    var arg: linux.io_uring_getevents_arg = .{ .sigmask = 0, .sigmask_sz = 0, .pad = 0, .ts = 0 };
    if (timeout_ns) |ns| {
        timeout = .{
            .sec = @intCast(ns / std.time.ns_per_s),
            .nsec = @intCast(ns % std.time.ns_per_s),
        };
        arg.ts = @intFromPtr(&timeout);
    }
    const flags: u32 = linux.IORING_ENTER_GETEVENTS | linux.IORING_ENTER_EXT_ARG;
    const rc = linux.syscall6(
        .io_uring_enter,
        @as(u32, @bitCast(ring_fd)),
        to_submit,
        wait_nr,
        flags,
        @intFromPtr(&arg),
        @sizeOf(linux.io_uring_getevents_arg),
    );
    return switch (linux.errno(rc)) {
        .SUCCESS => @intCast(rc),
        // ETIME: the timeout passed first. EINTR: a signal arrived. Both are a normal, empty
        // wake-up; the kernel consumed no SQEs in either case (it reports those first).
        .TIME, .INTR => 0,
        .AGAIN, .BUSY => error.SystemResources,
        // EBADF/EBADFD/ENXIO: not our ring, or not enabled. EFAULT/EINVAL: a bad argument
        // struct. EEXIST: entered from a thread other than the single issuer. All are bugs in
        // the loop, but a bug here should stop one worker's loop, not the process: report.
        else => error.Unexpected,
    };
}

pub const IoUringRegisterError = error{Unexpected};

/// Enables a ring set up with IORING_SETUP_R_DISABLED. With IORING_SETUP_SINGLE_ISSUER this
/// makes the calling thread the ring's only submitter.
pub fn ioUringEnableRings(ring_fd: fd_t) IoUringRegisterError!void {
    const rc = linux.io_uring_register(ring_fd, .REGISTER_ENABLE_RINGS, null, 0);
    return switch (linux.errno(rc)) {
        .SUCCESS => {},
        // EBADFD: the ring was already enabled. EINVAL/EBADF: not a ring. All loop bugs.
        else => error.Unexpected,
    };
}

/// CLOCK_MONOTONIC in nanoseconds, through the vDSO (no syscall on x86_64 and aarch64).
/// Sleeps while `word` holds `expected`, at most `timeout_ns` (spurious wake-ups are allowed:
/// callers re-check in a loop).
pub fn futexWait(word: *const std.atomic.Value(u32), expected: u32, timeout_ns: u64) void {
    const timeout: linux.timespec = .{
        .sec = @intCast(timeout_ns / std.time.ns_per_s),
        .nsec = @intCast(timeout_ns % std.time.ns_per_s),
    };
    const op: linux.FUTEX_OP = .{ .cmd = .WAIT, .private = true };
    _ = linux.futex_4arg(&word.raw, op, expected, &timeout); // EAGAIN, EINTR, ETIMEDOUT: re-check.
}

/// Wakes every thread waiting on `word`.
pub fn futexWake(word: *const std.atomic.Value(u32)) void {
    const op: linux.FUTEX_OP = .{ .cmd = .WAKE, .private = true };
    _ = linux.futex_3arg(&word.raw, op, std.math.maxInt(i32));
}

/// Wall-clock milliseconds since the epoch (vDSO), for stderr log timestamps only.
pub fn clockRealtimeMs() i64 {
    var ts: linux.timespec = undefined;
    _ = linux.clock_gettime(.REALTIME, &ts); // Cannot fail with a valid clock and pointer.
    return ts.sec * std.time.ms_per_s + @divTrunc(ts.nsec, std.time.ns_per_ms);
}

/// Wall-clock seconds since the epoch (vDSO), for log timestamps only.
pub fn clockRealtimeSeconds() i64 {
    var ts: linux.timespec = undefined;
    _ = linux.clock_gettime(.REALTIME, &ts); // Cannot fail with a valid clock and pointer.
    return ts.sec;
}

/// The entries of the auxiliary vector std reads (`std.os.linux.getauxval`), as libc found them.
var auxv: [auxv_types.len + 1]std.elf.Auxv = undefined;
const auxv_types = [_]u64{
    std.elf.AT.SYSINFO_EHDR, std.elf.AT.PAGESZ, std.elf.AT.HWCAP, std.elf.AT.HWCAP2,
    std.elf.AT.MINSIGSTKSZ,  std.elf.AT.CLKTCK, std.elf.AT.PHDR,  std.elf.AT.PHNUM,
};

/// Gives std the auxiliary vector when libc is linked (AWS-LC needs musl), before anything
/// reads a clock. Zig's own start code, which records the vector for std, does not run then
/// (musl's does), so std found no vDSO and every `clock_gettime` was a system call: ~0.2 µs
/// each on the benchmark VM against 21 ns through the vDSO, about nine per request when
/// requests come one at a time (fewer under load, where the loop batches). With the vector,
/// std calls the vDSO's, as libc would.
pub fn adoptAuxv() void {
    if (!builtin.link_libc or linux.elf_aux_maybe != null) return;
    for (auxv[0..auxv_types.len], auxv_types) |*entry, kind| {
        entry.* = .{ .a_type = kind, .a_un = .{ .a_val = std.c.getauxval(kind) } };
    }
    auxv[auxv_types.len] = .{ .a_type = std.elf.AT.NULL, .a_un = .{ .a_val = 0 } };
    linux.elf_aux_maybe = &auxv;
}

test "sys: std reads the auxiliary vector libc found (the vDSO's address among it)" {
    adoptAuxv();
    if (builtin.link_libc) try std.testing.expect(linux.getauxval(std.elf.AT.SYSINFO_EHDR) == std.c.getauxval(std.elf.AT.SYSINFO_EHDR));
    try std.testing.expect(linux.getauxval(std.elf.AT.SYSINFO_EHDR) != 0);
    try std.testing.expectEqual(@as(usize, std.heap.pageSize()), linux.getauxval(std.elf.AT.PAGESZ));
}

pub fn clockMonotonicNs() u64 {
    var ts: linux.timespec = undefined;
    const rc = linux.clock_gettime(.MONOTONIC, &ts);
    // CLOCK_MONOTONIC always exists on Linux and `ts` is a valid pointer: no error is possible.
    assert(linux.errno(rc) == .SUCCESS);
    assert(ts.sec >= 0);
    return @as(u64, @intCast(ts.sec)) * std.time.ns_per_s + @as(u64, @intCast(ts.nsec));
}

test "sys: the monotonic clock never goes backwards" {
    var previous = clockMonotonicNs();
    for (0..1000) |_| {
        const current = clockMonotonicNs();
        try std.testing.expect(current >= previous);
        previous = current;
    }
}

test "sys: errno mappers classify what the network does and what the kernel reports" {
    try std.testing.expectEqual(error.WouldBlock, errnoToRecvError(.AGAIN));
    try std.testing.expectEqual(error.Canceled, errnoToRecvError(.CANCELED));
    try std.testing.expectEqual(error.ConnectionResetByPeer, errnoToRecvError(.CONNRESET));
    try std.testing.expectEqual(error.BrokenPipe, errnoToSendError(.PIPE));
    try std.testing.expectEqual(error.ConnectionRefused, errnoToConnectError(.CONNREFUSED));
    try std.testing.expectEqual(error.AddressNotAvailable, errnoToConnectError(.AGAIN));
    try std.testing.expectEqual(error.ProcessFdQuotaExceeded, errnoToAcceptError(.MFILE));
    try std.testing.expectEqual(error.ConnectionAborted, errnoToAcceptError(.PERM));
    const refused = -@as(i32, @backingInt(E.CONNREFUSED));
    try std.testing.expectEqual(E.CONNREFUSED, errnoFromResult(refused));
}

test "sys: an eventfd counts signals and reads back nonblocking" {
    const fd = try eventfd(0, linux.EFD.NONBLOCK | linux.EFD.CLOEXEC);
    defer close(fd);
    var value: u64 = 0;
    try std.testing.expectError(error.WouldBlock, read(fd, std.mem.asBytes(&value)));
    eventfdSignal(fd);
    eventfdSignal(fd);
    try std.testing.expectEqual(@as(usize, 8), try read(fd, std.mem.asBytes(&value)));
    try std.testing.expectEqual(@as(u64, 2), value);
}
