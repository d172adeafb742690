//! The control thread's half of the access log (the workers' half is proxy/AccessLog.zig):
//! every 100 ms, and when a worker wakes it with a full buffer, it writes out the buffers
//! workers have published and hands them back, so a slow disk delays this thread, never a
//! worker. The buffers of every worker go out together, oldest first per worker, in one
//! `writev` of up to `iovecs_max` buffers (16 MiB): a flush is one system call however many
//! workers have lines. SIGUSR1 reopens the file (log rotation: move the file away, send
//! SIGUSR1, the next lines go to a new file at the configured path).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const log = @import("../stdx/log.zig");
const Worker = @import("Worker.zig");
const AccessLog = @import("../proxy/AccessLog.zig");
const Config = @import("../config/Config.zig");

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
/// Buffers per `writev`, below the kernel's IOV_MAX (1024); more wait for the next one.
const iovecs_max = 256;
/// A flush looks again for buffers published while it wrote, at most this many times (a
/// worker does not wake the writer while its earlier buffers wait).
const flush_passes_max = 4;

comptime {
    assert(iovecs_max >= AccessLog.buffers_count - 1); // One worker's ring fits one writev.
}

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

/// Writes out what the workers published (any thread but the workers', one at a time), again
/// while a pass finds more: a worker wakes the writer only for its first waiting buffer.
pub fn flush(writer: *AccessLogWriter) void {
    var passes: u32 = 0;
    while (passes < flush_passes_max and writer.flushOnce() > 0) : (passes += 1) {}
}

/// One pass over the workers: their published buffers gathered into `writev`s of at most
/// `iovecs_max`, each worker's buffers handed back once they are written. Returns how many
/// buffers were written.
fn flushOnce(writer: *AccessLogWriter) u32 {
    var iovecs: [iovecs_max]std.posix.iovec_const = undefined;
    var iovecs_count: usize = 0;
    // How many buffers each worker from `batch_first` on has in `iovecs`.
    var counts_buffer: [Config.workers_count_max]u8 = undefined;
    var batch_first: usize = 0;
    var written: u32 = 0;
    for (writer.workers, 0..) |*worker, index| {
        const access_log = if (worker.proxy.access_log) |*l| l else continue;
        if (iovecs_count + AccessLog.buffers_count - 1 > iovecs.len) {
            writer.writeAll(iovecs[0..iovecs_count]);
            writer.releaseBatch(batch_first, index, &counts_buffer);
            written += @intCast(iovecs_count);
            iovecs_count = 0;
            batch_first = index;
        }
        var slices: [AccessLog.buffers_count - 1][]const u8 = undefined;
        const count = access_log.collect(&slices);
        counts_buffer[(index - batch_first)] = count;
        for (slices[0..count]) |bytes| {
            iovecs[iovecs_count] = .{ .base = bytes.ptr, .len = bytes.len };
            iovecs_count += 1;
        }
    }
    writer.writeAll(iovecs[0..iovecs_count]);
    writer.releaseBatch(batch_first, writer.workers.len, &counts_buffer);
    return written + @as(u32, @intCast(iovecs_count));
}

/// Hands back what workers `first..end` collected into the batch just written.
fn releaseBatch(writer: *AccessLogWriter, first: usize, end: usize, counts: *const [Config.workers_count_max]u8) void {
    for (writer.workers[first..end], counts[0 .. end - first]) |*worker, count| {
        if (worker.proxy.access_log) |*access_log| access_log.release(count);
    }
}

/// After the workers have exited: every line they still hold.
pub fn finish(writer: *AccessLogWriter) void {
    for (writer.workers) |*worker| {
        if (worker.proxy.access_log) |*access_log| access_log.drainAll(writer, writeBytes);
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

/// For `drainAll`, buffer by buffer.
fn writeBytes(writer: *AccessLogWriter, bytes: []const u8) void {
    var one = [_]std.posix.iovec_const{.{ .base = bytes.ptr, .len = bytes.len }};
    writer.writeAll(&one);
}

/// Writes every byte of `iovecs` (which it consumes), continuing after a short write. On an
/// error the rest is lost, and the first failure is logged.
fn writeAll(writer: *AccessLogWriter, iovecs: []std.posix.iovec_const) void {
    var rest = iovecs;
    while (rest.len > 0) {
        if (rest[0].len == 0) {
            rest = rest[1..];
            continue;
        }
        const rc = linux.writev(writer.fd, rest.ptr, rest.len);
        switch (linux.errno(rc)) {
            .SUCCESS => {
                var done: usize = rc;
                while (rest.len > 0 and done >= rest[0].len) {
                    done -= rest[0].len;
                    rest = rest[1..];
                }
                if (done > 0) {
                    rest[0].base += done;
                    rest[0].len -= done;
                }
            },
            .INTR => continue,
            else => |errno| {
                if (!writer.write_failed) log.warn("access log write failed: {s}; lines are lost until it works", .{@tagName(errno)});
                writer.write_failed = true;
                return;
            },
        }
    }
}
