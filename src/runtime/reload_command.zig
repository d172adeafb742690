//! `sluice reload`: asks a running instance to load its config file again and reports the
//! outcome, printing what was applied (exit 0) or why it was refused (exit 1). Two ways in:
//! SIGHUP to the pid in its `--pid-file`, then waiting for the outcome the instance writes
//! beside that file (runtime/reload_outcome.zig); or its admin listener's `POST /reload`,
//! which answers with the outcome.
const std = @import("std");
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");
const PidFile = @import("PidFile.zig");
const reload_outcome = @import("reload_outcome.zig");
const Admin = @import("Admin.zig");

/// How long either way waits for the outcome: a reload is synchronous and takes milliseconds
/// (tens with many handlers to compile), so this only bounds a stuck or too old instance.
const timeout_seconds = 30;
/// Between two reads of the outcome file.
const poll_interval_ns = 10 * std.time.ns_per_ms;

pub fn signalPid(path: []const u8) u8 {
    const pid = PidFile.read(path) catch |err| {
        log.err("reload: cannot read the pid file {s}: {s}", .{ path, @errorName(err) });
        return 1;
    };
    // Before the signal: an outcome that started after this is the answer to it.
    const asked_ns = sys.clockMonotonicNs();
    if (linux.errno(linux.kill(pid, linux.SIG.HUP)) != .SUCCESS) {
        log.err("reload: cannot signal pid {d} (from {s}): is sluice running?", .{ pid, path });
        return 1;
    }
    var buffer: [reload_outcome.file_bytes_max]u8 = undefined;
    while (true) {
        if (reload_outcome.read(path, &buffer)) |outcome| {
            if (outcome.started_ns >= asked_ns) {
                log.stdout(outcome.text);
                return if (outcome.applied) 0 else 1;
            }
        } else |err| switch (err) {
            error.Missing => {}, // No reload since start-up yet.
            error.PathTooLong, error.CannotRead, error.Malformed => {
                log.err("reload: sent SIGHUP to {d}, but cannot read its outcome beside {s}: {s}", .{ pid, path, @errorName(err) });
                return 1;
            },
        }
        if (sys.clockMonotonicNs() - asked_ns > timeout_seconds * std.time.ns_per_s) {
            log.err("reload: sent SIGHUP to {d}, but no outcome appeared beside {s} within {d} s " ++
                "(a sluice older than this command writes none; see its log)", .{ pid, path, timeout_seconds });
            return 1;
        }
        if (linux.errno(linux.kill(pid, @fromBackingInt(@intCast(0)))) == .SRCH) {
            log.err("reload: pid {d} exited before reporting the reload's outcome", .{pid});
            return 1;
        }
        const pause: linux.timespec = .{ .sec = 0, .nsec = poll_interval_ns };
        _ = linux.nanosleep(&pause, null); // Woken early by a signal: read again sooner.
    }
}

const response_bytes_max = 16 * 1024;

pub fn askAdmin(address: *const Address) u8 {
    var text: [Address.text_bytes_max]u8 = undefined;
    const name = address.toText(&text);
    // The Host the admin listener takes (an address, never a name) and the field it needs
    // for a reload (runtime/Admin.zig says why).
    var request_buffer: [256]u8 = undefined;
    const request = std.fmt.bufPrint(&request_buffer, "POST /reload HTTP/1.1\r\nHost: {s}\r\n" ++
        "{s}: {s}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", .{
        name,
        Admin.reload_field,
        Admin.reload_field_value,
    }) catch unreachable; // An address is at most 48 bytes.
    var response: [response_bytes_max]u8 = undefined;
    const len = exchange(address, request, &response) catch |err| {
        log.err("reload: admin listener {s}: {s}", .{ name, @errorName(err) });
        return 1;
    };
    const head_end = std.mem.indexOf(u8, response[0..len], "\r\n\r\n") orelse {
        log.err("reload: admin listener {s}: malformed response", .{name});
        return 1;
    };
    log.stdout(response[head_end + 4 .. len]);
    const applied = std.mem.startsWith(u8, response[0..len], "HTTP/1.1 200 ");
    return if (applied) 0 else 1;
}

/// Sends the request on a blocking socket and reads until the server closes.
fn exchange(address: *const Address, request: []const u8, response: []u8) !usize {
    // Blocking, with timeouts: a one-shot command has nothing else to do meanwhile.
    const rc = linux.socket(address.family(), linux.SOCK.STREAM | linux.SOCK.CLOEXEC, 0);
    if (linux.errno(rc) != .SUCCESS) return error.SocketFailed;
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    const timeout: linux.timeval = .{ .sec = timeout_seconds, .usec = 0 };
    _ = linux.setsockopt(fd, linux.SOL.SOCKET, linux.SO.RCVTIMEO, std.mem.asBytes(&timeout), @sizeOf(linux.timeval));
    _ = linux.setsockopt(fd, linux.SOL.SOCKET, linux.SO.SNDTIMEO, std.mem.asBytes(&timeout), @sizeOf(linux.timeval));
    if (linux.errno(linux.connect(fd, address.sockaddr(), address.socklen())) != .SUCCESS) return error.ConnectionRefused;
    var sent: usize = 0;
    while (sent < request.len) {
        const n = linux.write(fd, request[sent..].ptr, request.len - sent);
        if (linux.errno(n) != .SUCCESS) return error.SendFailed;
        sent += n;
    }
    var len: usize = 0;
    while (len < response.len) {
        const n = linux.read(fd, response[len..].ptr, response.len - len);
        if (linux.errno(n) != .SUCCESS) return error.NoAnswer; // Including the timeout.
        if (n == 0) break;
        len += n;
    }
    return len;
}
