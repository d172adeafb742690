//! What ResolvConf and Hosts share: reading a small system file into the caller's buffer
//! (bounded: a larger file is refused, not cut), and the `Diagnostic` that names the file and
//! the line of a mistake.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;
const sys = @import("../stdx/sys.zig");

pub const ReadError = error{CannotRead};

/// Where a file was refused and why, for the one log line that reports it.
pub const Diagnostic = struct {
    path: []const u8 = "",
    /// 0 when the whole file is at fault (cannot open, too large).
    line: u32 = 0,
    message_buffer: [160]u8 = undefined,
    message_len: u8 = 0,

    pub fn set(diagnostic: *Diagnostic, line: u32, comptime fmt: []const u8, args: anytype) void {
        diagnostic.line = line;
        const text = std.fmt.bufPrint(&diagnostic.message_buffer, fmt, args) catch
            diagnostic.message_buffer[0..]; // Cut: the start says enough.
        diagnostic.message_len = @intCast(text.len);
    }

    pub fn message(diagnostic: *const Diagnostic) []const u8 {
        return diagnostic.message_buffer[0..diagnostic.message_len];
    }

    pub fn format(diagnostic: *const Diagnostic, writer: *std.Io.Writer) std.Io.Writer.Error!void {
        try writer.print("{s}", .{diagnostic.path});
        if (diagnostic.line != 0) try writer.print(":{d}", .{diagnostic.line});
        try writer.print(": {s}", .{diagnostic.message()});
    }
};

/// The whole file at `path` in `buffer`; a file that does not fit is refused.
pub fn read(path: []const u8, buffer: []u8, diagnostic: *Diagnostic) ReadError![]const u8 {
    diagnostic.path = path;
    var path_z: [linux.PATH_MAX]u8 = undefined;
    if (path.len >= path_z.len) return cannot(diagnostic, "path too long", .{});
    @memcpy(path_z[0..path.len], path);
    path_z[path.len] = 0;
    const rc = linux.open(path_z[0..path.len :0], .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .NOENT => return cannot(diagnostic, "cannot open: no such file", .{}),
        .ACCES, .PERM => return cannot(diagnostic, "cannot open: permission denied", .{}),
        else => |errno| return cannot(diagnostic, "cannot open: {t}", .{errno}),
    }
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd); // Read only: nothing to lose at close.
    var len: usize = 0;
    while (true) {
        if (len == buffer.len) {
            var probe: [1]u8 = undefined;
            const more = sys.read(fd, &probe) catch return cannot(diagnostic, "cannot read", .{});
            if (more == 0) break;
            return cannot(diagnostic, "larger than {d} bytes", .{buffer.len});
        }
        const n = sys.read(fd, buffer[len..]) catch return cannot(diagnostic, "cannot read", .{});
        if (n == 0) break;
        len += n;
    }
    assert(len <= buffer.len);
    return buffer[0..len];
}

fn cannot(diagnostic: *Diagnostic, comptime fmt: []const u8, args: anytype) ReadError {
    diagnostic.set(0, fmt, args);
    return error.CannotRead;
}

/// The lines of a file with comments cut (from any byte of `comment_starts` to the end of the
/// line) and spaces and tabs trimmed; counts lines from 1.
pub const Lines = struct {
    rest: std.mem.SplitIterator(u8, .scalar),
    comment_starts: []const u8,
    number: u32 = 0,

    pub fn init(bytes: []const u8, comment_starts: []const u8) Lines {
        return .{ .rest = std.mem.splitScalar(u8, bytes, '\n'), .comment_starts = comment_starts };
    }

    pub fn next(lines: *Lines) ?[]const u8 {
        const raw = lines.rest.next() orelse return null;
        lines.number += 1;
        const cut = std.mem.indexOfAny(u8, raw, lines.comment_starts) orelse raw.len;
        return std.mem.trim(u8, raw[0..cut], " \t\r");
    }
};

pub fn fields(line: []const u8) std.mem.TokenIterator(u8, .any) {
    return std.mem.tokenizeAny(u8, line, " \t");
}

/// A test's file with one mistake: where it is and what the diagnostic must say.
pub const Mistake = struct { bytes: []const u8, line: u32, message: []const u8 };

/// Checks that `parse` (ResolvConf's or Hosts') refuses each case with its line and message.
pub fn expectMistakes(comptime parse: anytype, cases: []const Mistake) !void {
    for (cases) |case| {
        var diagnostic: Diagnostic = .{};
        try std.testing.expectError(error.Invalid, parse(case.bytes, "file", &diagnostic));
        try std.testing.expectEqual(case.line, diagnostic.line);
        try std.testing.expectEqualStrings(case.message, diagnostic.message());
    }
}

test "text file: a missing file and one too large are refused with the path" {
    var buffer: [8]u8 = undefined;
    var diagnostic: Diagnostic = .{};
    try std.testing.expectError(error.CannotRead, read("/nonexistent/resolv.conf", &buffer, &diagnostic));
    try std.testing.expectEqualStrings("cannot open: no such file", diagnostic.message());
    try std.testing.expectError(error.CannotRead, read("/proc/self/maps", &buffer, &diagnostic));
    try std.testing.expectEqualStrings("larger than 8 bytes", diagnostic.message());
}

test "text file: lines are numbered, comments cut and blanks trimmed" {
    var lines: Lines = .init("a b # c\n\t; x\n  d\r\n", "#;");
    try std.testing.expectEqualStrings("a b", lines.next().?);
    try std.testing.expectEqualStrings("", lines.next().?);
    try std.testing.expectEqualStrings("d", lines.next().?);
    try std.testing.expectEqual(@as(u32, 3), lines.number);
}
