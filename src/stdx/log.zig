//! Lines for the operator on stderr, each `TIMESTAMP sluice: ...`, one per event. Formatted
//! into a stack buffer and written with one write(2), so lines from different threads never
//! interleave and logging never allocates. (The access log is separate: proxy/AccessLog.zig.)
//!
//! The timestamp is RFC 3339 in UTC with milliseconds (`2026-11-23T14:48:03.123Z`), first on
//! the line as syslog, nginx's error log and journald's short-iso output put it: a plain file
//! reads well and sorts by time, and under systemd the journal's own stamp is merely repeated.
//! Lines written with `plain` (`FILE:LINE:COL: ...`) have none: editors and CI annotate that
//! form only at the start of a line.
//!
//! Levels: `err` (sluice could not do what it was asked: start, reload, keep a listener),
//! `warn` (something degraded that an operator may have to act on: a backend down or
//! ejected, a drain cut short, a fallback), `info` (the normal life of the process:
//! listening, reloaded, draining, counters). Errors and warnings say so after the prefix
//! (`sluice: error: ...`, `sluice: warn: ...`) so they can be grepped; `--log-level` hides
//! the levels below the one asked for.
const std = @import("std");
const builtin = @import("builtin");
const assert = std.debug.assert;
const linux = std.os.linux;

const sys = @import("sys.zig");

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
    if (enabled(.@"error")) line(.stamped, "sluice: error: ", fmt, args);
}

pub fn warn(comptime fmt: []const u8, args: anytype) void {
    if (enabled(.warn)) line(.stamped, "sluice: warn: ", fmt, args);
}

pub fn info(comptime fmt: []const u8, args: anytype) void {
    if (enabled(.info)) line(.stamped, "sluice: ", fmt, args);
}

/// A line without timestamp or prefix, on stderr: for lines that have their own
/// (`FILE:LINE:COL: ...`, the form editors and CI annotate).
pub fn plain(comptime fmt: []const u8, args: anytype) void {
    line(.bare, "", fmt, args);
}

/// One line, cut with "..." if longer than `line_bytes_max`, written with one write(2).
fn line(
    comptime stamp: enum { stamped, bare },
    comptime prefix: []const u8,
    comptime fmt: []const u8,
    args: anytype,
) void {
    // Unit tests exercise paths that log; their output is the test runner's.
    if (builtin.is_test) return;
    var buffer: [line_bytes_max]u8 = undefined;
    var start: usize = 0;
    if (stamp == .stamped) {
        formatTimestamp(buffer[0..timestamp_bytes], sys.clockRealtimeMs());
        buffer[timestamp_bytes] = ' ';
        start = timestamp_bytes + 1;
    }
    @memcpy(buffer[start..][0..prefix.len], prefix);
    start += prefix.len;
    const body = std.fmt.bufPrint(buffer[start .. buffer.len - 1], fmt, args) catch blk: {
        const cut = "...";
        @memcpy(buffer[buffer.len - 1 - cut.len .. buffer.len - 1], cut);
        break :blk buffer[start .. buffer.len - 1];
    };
    const end = start + body.len;
    buffer[end] = '\n';
    writeAll(2, buffer[0 .. end + 1]);
}

/// The length of `2026-11-23T14:48:03.123Z`.
pub const timestamp_bytes = 24;

/// RFC 3339 in UTC with milliseconds. Times before 1970 (a clock that was never set) print as
/// the epoch; after 9999 as 9999-12-31T23:59:59.999Z: the width is fixed either way.
pub fn formatTimestamp(out: *[timestamp_bytes]u8, unix_ms: i64) void {
    const last_ms = 253402300799999; // 9999-12-31T23:59:59.999Z
    const ms: u64 = @intCast(std.math.clamp(unix_ms, 0, last_ms));
    const epoch: std.time.epoch.EpochSeconds = .{ .secs = ms / std.time.ms_per_s };
    const year_day = epoch.getEpochDay().calculateYearDay();
    const month_day = year_day.calculateMonthDay();
    const day_seconds = epoch.getDaySeconds();
    const text = std.fmt.bufPrint(out, "{d:0>4}-{d:0>2}-{d:0>2}T{d:0>2}:{d:0>2}:{d:0>2}.{d:0>3}Z", .{
        year_day.year,                    month_day.month.numeric(),
        month_day.day_index + 1,          day_seconds.getHoursIntoDay(),
        day_seconds.getMinutesIntoHour(), day_seconds.getSecondsIntoMinute(),
        ms % std.time.ms_per_s,
    }) catch unreachable; // Every field has its fixed width within the clamped range.
    assert(text.len == timestamp_bytes);
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

test "log: timestamps are RFC 3339, UTC, milliseconds, fixed width" {
    const cases = [_]struct { ms: i64, text: []const u8 }{
        .{ .ms = 0, .text = "1970-01-01T00:00:00.000Z" },
        .{ .ms = 1795445283123, .text = "2026-11-23T14:48:03.123Z" },
        .{ .ms = 951782400007, .text = "2000-02-29T00:00:00.007Z" }, // A leap day.
        .{ .ms = 1704067199999, .text = "2023-12-31T23:59:59.999Z" },
        .{ .ms = -5, .text = "1970-01-01T00:00:00.000Z" }, // A clock never set.
        .{ .ms = std.math.maxInt(i64), .text = "9999-12-31T23:59:59.999Z" },
    };
    for (cases) |case| {
        var out: [timestamp_bytes]u8 = undefined;
        formatTimestamp(&out, case.ms);
        try std.testing.expectEqualStrings(case.text, &out);
    }
}
