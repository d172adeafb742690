//! Readiness for systemd's `Type=notify`: when `$NOTIFY_SOCKET` names a socket, sluice sends it
//! the state changes sd_notify(3) describes, one datagram each, written here (the protocol is a
//! few `KEY=VALUE` lines to a Unix datagram socket; libsystemd would be a second C library for
//! it): `READY=1` with `MAINPID=` once every listener accepts and the admin listener is up,
//! `RELOADING=1` with `MONOTONIC_USEC=` (systemd 253 and later want the time with it) when a
//! reload begins and `READY=1` when it ends, applied or refused, with a `STATUS=` line saying
//! which and why, and `STOPPING=1` when a drain begins.
//!
//! Decision: a notification that cannot be sent is logged once and otherwise ignored, as
//! sd_notify does: systemd may have gone away, and serving traffic matters more. Only path
//! sockets and abstract ones (`@name`) are understood; another form (systemd's `vsock:`) is
//! logged at start-up and nothing is sent.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");

const Notifier = @This();

fd: linux.fd_t,
address: linux.sockaddr.un,
address_len: linux.socklen_t,
send_failed_logged: bool = false,

/// The longest message: a status line carries the first line of a reload's refusal, cut.
const message_bytes_max = 512;
const status_bytes_max = 400;

/// A notifier for `socket_path` (`$NOTIFY_SOCKET`); null, after saying why, when the path is
/// not a form sluice can send to or no socket could be made.
pub fn init(socket_path: []const u8) ?Notifier {
    var notifier: Notifier = .{ .fd = -1, .address = .{ .path = @splat(0) }, .address_len = 0 };
    const path = &notifier.address.path;
    const abstract = socket_path.len > 0 and socket_path[0] == '@';
    if (socket_path.len < 2 or (!abstract and socket_path[0] != '/') or socket_path.len >= path.len) {
        log.warn("NOTIFY_SOCKET={s}: not a Unix socket path or an @abstract name sluice can " ++
            "use; systemd is not told when sluice is ready", .{socket_path});
        return null;
    }
    @memcpy(path[0..socket_path.len], socket_path);
    if (abstract) path[0] = 0; // Linux's abstract namespace: a leading NUL, no terminator.
    const terminator: usize = if (abstract) 0 else 1;
    notifier.address_len = @intCast(@offsetOf(linux.sockaddr.un, "path") + socket_path.len + terminator);
    const rc = linux.socket(linux.AF.UNIX, linux.SOCK.DGRAM | linux.SOCK.CLOEXEC, 0);
    if (linux.errno(rc) != .SUCCESS) {
        log.warn("NOTIFY_SOCKET: cannot make a socket ({s}); systemd is not told when sluice " ++
            "is ready", .{@tagName(linux.errno(rc))});
        return null;
    }
    notifier.fd = @intCast(rc);
    return notifier;
}

pub fn deinit(notifier: *Notifier) void {
    sys.close(notifier.fd);
    notifier.* = undefined;
}

/// Every listener accepts (and the admin listener, if any): systemd's start job is done.
pub fn ready(notifier: *Notifier, generation: u64) void {
    notifier.print("READY=1\nMAINPID={d}\nSTATUS=serving generation {d}\n", .{ linux.getpid(), generation });
}

/// A reload begins; systemd shows the unit as reloading until `reloaded`.
pub fn reloading(notifier: *Notifier) void {
    const usec = sys.clockMonotonicNs() / std.time.ns_per_us;
    notifier.print("RELOADING=1\nMONOTONIC_USEC={d}\nSTATUS=reloading\n", .{usec});
}

/// The reload ended; `text` is its outcome as `POST /reload` answers it, whose first line
/// (cut to fit) becomes the status when it was refused.
pub fn reloaded(notifier: *Notifier, applied: bool, generation: u64, text: []const u8) void {
    if (applied) return notifier.print("READY=1\nSTATUS=reloaded: serving generation {d}\n", .{generation});
    const first_line = text[0 .. std.mem.findScalar(u8, text, '\n') orelse text.len];
    const reason = first_line[0..@min(first_line.len, status_bytes_max)];
    notifier.print("READY=1\nSTATUS=reload refused, still serving generation {d}: {s}\n", .{ generation, reason });
}

/// A drain began (`reason`: what asked for it).
pub fn stopping(notifier: *Notifier, reason: []const u8) void {
    notifier.print("STOPPING=1\nSTATUS=draining ({s})\n", .{reason});
}

fn print(notifier: *Notifier, comptime fmt: []const u8, args: anytype) void {
    comptime assert(std.mem.startsWith(u8, fmt, "READY=1\n") or
        std.mem.startsWith(u8, fmt, "RELOADING=1\n") or std.mem.startsWith(u8, fmt, "STOPPING=1\n"));
    var buffer: [message_bytes_max]u8 = undefined;
    const message = std.fmt.bufPrint(&buffer, fmt, args) catch unreachable; // Reasons are cut to fit.
    const address: *const linux.sockaddr = @ptrCast(&notifier.address);
    const rc = linux.sendto(notifier.fd, message.ptr, message.len, linux.MSG.NOSIGNAL, address, notifier.address_len);
    if (linux.errno(rc) == .SUCCESS or notifier.send_failed_logged) return;
    notifier.send_failed_logged = true;
    log.warn("cannot notify systemd through NOTIFY_SOCKET: {s} (logged once)", .{@tagName(linux.errno(rc))});
}

const testing = std.testing;

test "notifier: datagrams reach a path socket and an abstract one, each state on its own" {
    inline for (.{ "/tmp/sluice-notifier-test.sock", "@sluice-notifier-test" }) |name| {
        const rc = linux.socket(linux.AF.UNIX, linux.SOCK.DGRAM | linux.SOCK.CLOEXEC, 0);
        try testing.expect(linux.errno(rc) == .SUCCESS);
        const listener: linux.fd_t = @intCast(rc);
        defer sys.close(listener);
        if (name[0] == '/') _ = linux.unlink(name);
        defer if (name[0] == '/') {
            _ = linux.unlink(name);
        };
        var notifier = Notifier.init(name).?;
        defer notifier.deinit();
        const bound = linux.bind(listener, @ptrCast(&notifier.address), notifier.address_len);
        try testing.expect(linux.errno(bound) == .SUCCESS);

        notifier.ready(1);
        notifier.reloading();
        notifier.reloaded(false, 1, "x.zon:1:4: unknown key \"workerz\"\nstill serving generation 1\n");
        notifier.stopping("SIGTERM");
        var buffer: [message_bytes_max]u8 = undefined;
        const expected = [_][]const u8{ "READY=1\nMAINPID=", "RELOADING=1\nMONOTONIC_USEC=", "READY=1\nSTATUS=reload refused, still serving generation 1: x.zon:1:4: unknown key \"workerz\"\n", "STOPPING=1\nSTATUS=draining (SIGTERM)\n" };
        for (expected) |prefix| {
            const n = linux.recvfrom(listener, &buffer, buffer.len, linux.MSG.DONTWAIT, null, null);
            try testing.expect(linux.errno(n) == .SUCCESS);
            try testing.expect(std.mem.startsWith(u8, buffer[0..n], prefix));
        }
    }
    try testing.expect(Notifier.init("relative/path") == null);
    try testing.expect(Notifier.init("vsock:2:1234") == null);
}
