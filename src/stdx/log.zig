//! Lines for the operator on stderr, each prefixed `sluice: `, one per event. Formatted into a
//! stack buffer and written with one write(2), so lines from different threads never
//! interleave and logging never allocates. (The access log is separate: proxy/AccessLog.zig.)
//!
//! Levels: `err` (sluice could not do what it was asked: start, reload, keep a listener),
//! `warn` (something degraded that an operator may have to act on: a backend down or
//! ejected, a drain cut short, a fallback), `info` (the normal life of the process:
//! listening, reloaded, draining, counters). Errors and warnings say so after the prefix
//! (`sluice: error: ...`, `sluice: warn: ...`) so they can be grepped; `--log-level` hides
//! the levels below the one asked for.
const std = @import("std");
const builtin = @import("builtin");
const linux = std.os.linux;

const line_bytes_max = 1024;

pub const Level = enum(u8) { @"error", warn, info };

/// The least severe level written; set at start-up and on reload.
var threshold: std.atomic.Value(Level) = .init(.info);

pub fn setLevel(level: Level) void {
    threshold.store(level, .monotonic);
}

fn enabled(level: Level) bool {
    return @backingInt(level) <= @backingInt(threshold.load(.monotonic));
}

pub fn err(comptime fmt: []const u8, args: anytype) void {
    if (enabled(.@"error")) prefixed("sluice: error: ", fmt, args);
}

pub fn warn(comptime fmt: []const u8, args: anytype) void {
    if (enabled(.warn)) prefixed("sluice: warn: ", fmt, args);
}

pub fn info(comptime fmt: []const u8, args: anytype) void {
    if (enabled(.info)) prefixed("sluice: ", fmt, args);
}

/// A line without the prefix, on stderr: for lines that have their own (`FILE:LINE:COL: ...`,
/// the form editors and CI annotate).
pub fn plain(comptime fmt: []const u8, args: anytype) void {
    prefixed("", fmt, args);
}

/// One line, cut with "..." if longer than `line_bytes_max`, written with one write(2).
fn prefixed(comptime prefix: []const u8, comptime fmt: []const u8, args: anytype) void {
    // Unit tests exercise paths that log; their output is the test runner's.
    if (builtin.is_test) return;
    var buffer: [line_bytes_max]u8 = undefined;
    @memcpy(buffer[0..prefix.len], prefix);
    const body = std.fmt.bufPrint(buffer[prefix.len .. buffer.len - 1], fmt, args) catch blk: {
        const cut = "...";
        @memcpy(buffer[buffer.len - 1 - cut.len .. buffer.len - 1], cut);
        break :blk buffer[prefix.len .. buffer.len - 1];
    };
    const end = prefix.len + body.len;
    buffer[end] = '\n';
    writeAll(2, buffer[0 .. end + 1]);
}

/// Writes to stdout without the prefix (help text, version).
pub fn stdout(text: []const u8) void {
    writeAll(1, text);
}

fn writeAll(fd: linux.fd_t, bytes: []const u8) void {
    var rest = bytes;
    while (rest.len > 0) {
        const rc = linux.write(fd, rest.ptr, rest.len);
        switch (linux.errno(rc)) {
            .SUCCESS => rest = rest[rc..],
            .INTR => continue,
            else => return, // Nowhere left to report a failing stderr.
        }
    }
}
