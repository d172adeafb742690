//! `sluice reload`: asks a running instance to load its config file again, either by sending
//! SIGHUP to the pid in its `--pid-file` (the outcome is in that instance's log), or through
//! its admin listener's `POST /reload`, which answers with the outcome: this command prints
//! it and exits 0 when the new configuration was applied, 1 otherwise.
const std = @import("std");
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const log = @import("../stdx/log.zig");
const PidFile = @import("PidFile.zig");

pub fn signalPid(path: []const u8) u8 {
    const pid = PidFile.read(path) catch |err| {
        log.err("reload: cannot read the pid file {s}: {s}", .{ path, @errorName(err) });
        return 1;
    };
    if (linux.errno(linux.kill(pid, linux.SIG.HUP)) != .SUCCESS) {
        log.err("reload: cannot signal pid {d} (from {s}): is sluice running?", .{ pid, path });
        return 1;
    }
    var text: [64]u8 = undefined;
    log.stdout(std.fmt.bufPrint(&text, "sent SIGHUP to {d}\n", .{pid}) catch unreachable);
    return 0;
}

const request = "POST /reload HTTP/1.1\r\nHost: sluice\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const response_bytes_max = 16 * 1024;
const timeout_seconds = 30;

pub fn askAdmin(address: *const Address) u8 {
    var text: [Address.text_bytes_max]u8 = undefined;
    const name = address.toText(&text);
    var response: [response_bytes_max]u8 = undefined;
    const len = exchange(address, &response) catch |err| {
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
fn exchange(address: *const Address, response: []u8) !usize {
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
