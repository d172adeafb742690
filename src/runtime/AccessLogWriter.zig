//! The control thread's half of the access log (the workers' half is proxy/AccessLog.zig):
//! every 100 ms it writes out the buffers workers have published and hands them back, so a
//! slow disk delays this thread, never a worker. SIGUSR1 reopens the file (log rotation: move
//! the file away, send SIGUSR1, the next lines go to a new file at the configured path).
const std = @import("std");
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const log = @import("../stdx/log.zig");
const Worker = @import("Worker.zig");

const AccessLogWriter = @This();

/// `stdout`, or a file opened for appending.
fd: linux.fd_t,
/// Null for stdout; a NUL-terminated copy of the path otherwise.
path: ?[:0]const u8,
workers: []Worker,
/// The control loop, once `start` ran.
loop: ?*Loop = null,
queue: TimerQueue = .init(flush_interval_ns),
timer: Timer = .{},
write_failed: bool = false,

const flush_interval_ns = 100 * std.time.ns_per_ms;

pub const OpenError = error{ CannotOpen, OutOfMemory };

pub fn init(allocator: std.mem.Allocator, target: []const u8, workers: []Worker) OpenError!AccessLogWriter {
    if (std.mem.eql(u8, target, "stdout")) return .{ .fd = 1, .path = null, .workers = workers };
    const path = try allocator.dupeSentinel(u8, target, 0);
    const fd = openFile(path) orelse return error.CannotOpen;
    return .{ .fd = fd, .path = path, .workers = workers };
}

fn openFile(path: [:0]const u8) ?linux.fd_t {
    const flags: linux.O = .{ .ACCMODE = .WRONLY, .APPEND = true, .CREAT = true, .CLOEXEC = true };
    const rc = linux.open(path, flags, 0o644);
    if (linux.errno(rc) != .SUCCESS) {
        log.err("cannot open access log {s}: {s}", .{ path, @tagName(linux.errno(rc)) });
        return null;
    }
    return @intCast(rc);
}

/// Starts the periodic flush on the control loop, and the flush a worker asks for when one of
/// its buffers fills (the control loop's wake-up is the access log's).
pub fn start(writer: *AccessLogWriter, loop: *Loop) void {
    writer.loop = loop;
    loop.timerQueueRegister(&writer.queue);
    loop.timerArm(&writer.queue, &writer.timer, AccessLogWriter, writer, flushCallback);
    loop.setWakeCallback(AccessLogWriter, writer, AccessLogWriter.flush);
    for (writer.workers) |*worker| {
        if (worker.proxy.access_log) |*access_log| access_log.writer_loop.store(loop, .release);
    }
}

fn flushCallback(writer: *AccessLogWriter) void {
    writer.flush();
    writer.loop.?.timerArm(&writer.queue, &writer.timer, AccessLogWriter, writer, flushCallback);
}

/// Writes out what the workers published (any thread but the workers', one at a time).
pub fn flush(writer: *AccessLogWriter) void {
    for (writer.workers) |*worker| {
        if (worker.proxy.access_log) |*access_log| access_log.drainPublished(writer, writeAll);
    }
}

/// After the workers have exited: every line they still hold.
pub fn finish(writer: *AccessLogWriter) void {
    for (writer.workers) |*worker| {
        if (worker.proxy.access_log) |*access_log| access_log.drainAll(writer, writeAll);
    }
}

/// SIGUSR1: a new file at the same path; on failure the old one stays in use.
pub fn reopen(writer: *AccessLogWriter) void {
    const path = writer.path orelse return; // stdout is not reopened.
    const fd = openFile(path) orelse return;
    writer.flush(); // What was published so far goes to the old file.
    _ = linux.close(writer.fd);
    writer.fd = fd;
    writer.write_failed = false;
    log.info("access log reopened: {s}", .{path});
}

fn writeAll(writer: *AccessLogWriter, bytes: []const u8) void {
    var rest = bytes;
    while (rest.len > 0) {
        const rc = linux.write(writer.fd, rest.ptr, rest.len);
        switch (linux.errno(rc)) {
            .SUCCESS => rest = rest[rc..],
            .INTR => continue,
            else => |errno| {
                if (!writer.write_failed) log.warn("access log write failed: {s}; lines are lost until it works", .{@tagName(errno)});
                writer.write_failed = true;
                return;
            },
        }
    }
}
