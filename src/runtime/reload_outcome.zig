//! The outcome of the last reload, in a small file beside the pid file (`PATH.reload` for
//! `--pid-file PATH`), so that `sluice reload --pid-file PATH` can wait for the outcome of the
//! SIGHUP it sent and exit 1 with the reason when the reload was refused, as `sluice reload
//! --admin` does, without an admin listener.
//!
//! Decision: a file replaced by rename after every reload (SIGHUP or `POST /reload`), polled by
//! the command. Its first line says when the reload started, on CLOCK_MONOTONIC, which every
//! process of the host shares: the command notes that clock before it sends the signal and
//! waits for an outcome that started after it. So two SIGHUPs that the kernel merged into one,
//! or a reload someone else asked for meanwhile, still answer each command with a reload that
//! read the file after the command was run; a sequence number would not say that. The rename
//! makes a reader see the old file or the new one, never half of one. The alternatives were
//! worse: a signal back to the sender (`ssi_pid`) carries no reason and cannot reach a command
//! run by root from a service's own user, and a control socket is a second admin listener.
//!
//! The file: `started_ns=N generation=G result=applied|refused`, a line feed, then the text
//! `POST /reload` answers (what was applied, or every reason it was refused).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

pub const Outcome = struct {
    /// CLOCK_MONOTONIC when the reload began.
    started_ns: u64,
    /// The generation serving after it (the old one when refused).
    generation: u64,
    applied: bool,
    /// What was applied, or why not; one or more lines.
    text: []const u8,
};

/// The pid file's path, then `.reload.tmp`.
const path_bytes_max = 4095;
const suffix = ".reload";
const temporary_suffix = ".reload.tmp";
/// The first line, and a reload's text (`reload.zig` writes at most 8 KiB of it).
pub const file_bytes_max = 128 + 8 * 1024;

pub const WriteError = error{ PathTooLong, CannotWrite };
pub const ReadError = error{ PathTooLong, Missing, CannotRead, Malformed };

/// Writes the outcome to a temporary file and renames it over `PID_PATH.reload`.
pub fn write(pid_path: []const u8, outcome: *const Outcome) WriteError!void {
    var temporary_buffer: [path_bytes_max + 1]u8 = undefined;
    var final_buffer: [path_bytes_max + 1]u8 = undefined;
    const temporary = try pathWith(pid_path, temporary_suffix, &temporary_buffer);
    const final = try pathWith(pid_path, suffix, &final_buffer);
    const flags: linux.O = .{ .ACCMODE = .WRONLY, .CREAT = true, .TRUNC = true, .CLOEXEC = true };
    const rc = linux.open(temporary, flags, 0o644);
    if (linux.errno(rc) != .SUCCESS) return error.CannotWrite;
    const fd: linux.fd_t = @intCast(rc);
    var head_buffer: [128]u8 = undefined;
    const head = std.fmt.bufPrint(&head_buffer, "started_ns={d} generation={d} result={s}\n", .{
        outcome.started_ns,
        outcome.generation,
        if (outcome.applied) "applied" else "refused",
    }) catch unreachable; // Three numbers and a word.
    var parts = [_]std.posix.iovec_const{
        .{ .base = head.ptr, .len = head.len },
        .{ .base = outcome.text.ptr, .len = outcome.text.len },
    };
    const written = linux.writev(fd, &parts, parts.len);
    const complete = linux.errno(written) == .SUCCESS and written == head.len + outcome.text.len;
    _ = linux.close(fd); // A regular file: nothing to report that the write did not.
    if (!complete or linux.errno(linux.rename(temporary, final)) != .SUCCESS) {
        _ = linux.unlink(temporary); // Best effort: the next reload writes it again.
        return error.CannotWrite;
    }
}

/// The last outcome written beside `pid_path`; its text is a slice of `buffer`.
pub fn read(pid_path: []const u8, buffer: []u8) ReadError!Outcome {
    var path_buffer: [path_bytes_max + 1]u8 = undefined;
    const path = try pathWith(pid_path, suffix, &path_buffer);
    const rc = linux.open(path, .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .NOENT => return error.Missing, // No reload yet, or sluice is older than this command.
        else => return error.CannotRead,
    }
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    var len: usize = 0;
    while (len < buffer.len) {
        const n = linux.read(fd, buffer[len..].ptr, buffer.len - len);
        if (linux.errno(n) != .SUCCESS) return error.CannotRead;
        if (n == 0) break;
        len += n;
    }
    return parse(buffer[0..len]);
}

/// Removed with the pid file at a clean exit.
pub fn remove(pid_path: []const u8) void {
    var path_buffer: [path_bytes_max + 1]u8 = undefined;
    _ = linux.unlink(pathWith(pid_path, suffix, &path_buffer) catch return);
}

fn parse(bytes: []const u8) ReadError!Outcome {
    const line_end = std.mem.findScalar(u8, bytes, '\n') orelse return error.Malformed;
    var outcome: Outcome = .{ .started_ns = 0, .generation = 0, .applied = false, .text = bytes[line_end + 1 ..] };
    var seen: u8 = 0;
    var fields = std.mem.splitScalar(u8, bytes[0..line_end], ' ');
    while (fields.next()) |field| {
        const equals = std.mem.findScalar(u8, field, '=') orelse return error.Malformed;
        const key, const value = .{ field[0..equals], field[equals + 1 ..] };
        if (std.mem.eql(u8, key, "started_ns")) {
            outcome.started_ns = std.fmt.parseInt(u64, value, 10) catch return error.Malformed;
        } else if (std.mem.eql(u8, key, "generation")) {
            outcome.generation = std.fmt.parseInt(u64, value, 10) catch return error.Malformed;
        } else if (std.mem.eql(u8, key, "result")) {
            if (!std.mem.eql(u8, value, "applied") and !std.mem.eql(u8, value, "refused")) return error.Malformed;
            outcome.applied = std.mem.eql(u8, value, "applied");
        } else continue; // A key a newer sluice added.
        seen += 1;
    }
    if (seen != 3) return error.Malformed;
    return outcome;
}

fn pathWith(pid_path: []const u8, comptime tail: []const u8, buffer: *[path_bytes_max + 1]u8) error{PathTooLong}![:0]const u8 {
    if (pid_path.len + tail.len > path_bytes_max) return error.PathTooLong;
    @memcpy(buffer[0..pid_path.len], pid_path);
    @memcpy(buffer[pid_path.len..][0..tail.len], tail);
    buffer[pid_path.len + tail.len] = 0;
    return buffer[0 .. pid_path.len + tail.len :0];
}

const testing = std.testing;

test "reload outcome: written beside the pid file, read back, replaced, removed" {
    const pid_path = "/tmp/sluice-reload-outcome-test.pid";
    defer remove(pid_path);
    var buffer: [file_bytes_max]u8 = undefined;
    remove(pid_path);
    try testing.expectError(error.Missing, read(pid_path, &buffer));
    try write(pid_path, &.{ .started_ns = 12, .generation = 2, .applied = true, .text = "reloaded x\n" });
    const first = try read(pid_path, &buffer);
    try testing.expectEqual(@as(u64, 12), first.started_ns);
    try testing.expectEqual(@as(u64, 2), first.generation);
    try testing.expect(first.applied);
    try testing.expectEqualStrings("reloaded x\n", first.text);
    const reason = "x.zon:1:4: unknown key \"workerz\"\nstill serving generation 2\n";
    try write(pid_path, &.{ .started_ns = 40, .generation = 2, .applied = false, .text = reason });
    const second = try read(pid_path, &buffer);
    try testing.expectEqual(@as(u64, 40), second.started_ns);
    try testing.expect(!second.applied);
    try testing.expectEqualStrings(reason, second.text);
}

test "reload outcome: a first line that is not ours is refused, an unknown key skipped" {
    try testing.expectError(error.Malformed, parse("no line feed"));
    try testing.expectError(error.Malformed, parse("started_ns=1 generation=2\ntext"));
    try testing.expectError(error.Malformed, parse("started_ns=x generation=2 result=applied\n"));
    try testing.expectError(error.Malformed, parse("started_ns=1 generation=2 result=maybe\n"));
    const outcome = try parse("started_ns=1 generation=2 result=refused later=3\nwhy\n");
    try testing.expect(!outcome.applied);
    try testing.expectEqualStrings("why\n", outcome.text);
    assert(outcome.generation == 2);
}
