//! `--pid-file PATH`: the running instance's pid, written once the listeners accept and removed
//! at a clean exit, so `sluice reload --pid-file PATH` (and scripts) can find it.
const std = @import("std");
const linux = std.os.linux;

const path_bytes_max = 4095;

pub const Error = error{ PathTooLong, CannotOpen, CannotWrite, CannotRead, NotAPid };

fn terminated(path: []const u8, buffer: *[path_bytes_max + 1]u8) Error![*:0]const u8 {
    if (path.len > path_bytes_max) return error.PathTooLong;
    @memcpy(buffer[0..path.len], path);
    buffer[path.len] = 0;
    return buffer[0..path.len :0];
}

pub fn write(path: []const u8, pid: linux.pid_t) Error!void {
    var buffer: [path_bytes_max + 1]u8 = undefined;
    const rc = linux.open(try terminated(path, &buffer), .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true, .CLOEXEC = true }, 0o644);
    if (linux.errno(rc) != .SUCCESS) return error.CannotOpen;
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    var text: [16]u8 = undefined;
    const line = std.fmt.bufPrint(&text, "{d}\n", .{pid}) catch unreachable;
    const written = linux.write(fd, line.ptr, line.len);
    if (linux.errno(written) != .SUCCESS or written != line.len) return error.CannotWrite;
}

pub fn remove(path: []const u8) void {
    var buffer: [path_bytes_max + 1]u8 = undefined;
    _ = linux.unlink(terminated(path, &buffer) catch return);
}

pub fn read(path: []const u8) Error!linux.pid_t {
    var buffer: [path_bytes_max + 1]u8 = undefined;
    const rc = linux.open(try terminated(path, &buffer), .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    if (linux.errno(rc) != .SUCCESS) return error.CannotOpen;
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    var text: [32]u8 = undefined;
    const n = linux.read(fd, &text, text.len);
    if (linux.errno(n) != .SUCCESS) return error.CannotRead;
    const trimmed = std.mem.trim(u8, text[0..n], " \t\r\n");
    const pid = std.fmt.parseInt(linux.pid_t, trimmed, 10) catch return error.NotAPid;
    if (pid <= 1) return error.NotAPid;
    return pid;
}

test "pid file: written, read back, removed" {
    const path = "/tmp/sluice-pid-file-test.pid";
    try write(path, 4242);
    try std.testing.expectEqual(@as(linux.pid_t, 4242), try read(path));
    remove(path);
    try std.testing.expectError(error.CannotOpen, read(path));
}
