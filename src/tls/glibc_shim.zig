//! Tests of `glibc_shim.c`, one per function, each against the contract glibc documents for
//! it: the checked functions do what the plain one does when the sizes allow it, and abort
//! (in a forked child, so the test survives to see it) when they do not. The shim itself is
//! C, because what it implements is a C ABI (variadic functions and `va_list`); build.zig
//! compiles it into every artifact that links OpenSSL.
const std = @import("std");
const c = std.c;

const VaList = std.lang.VaList;

extern fn __memcpy_chk(dest: [*]u8, src: [*]const u8, len: usize, destlen: usize) [*]u8;
extern fn __memset_chk(dest: [*]u8, byte: c_int, len: usize, destlen: usize) [*]u8;
extern fn __strcat_chk(dest: [*:0]u8, src: [*:0]const u8, destlen: usize) [*:0]u8;
extern fn __sprintf_chk(s: [*]u8, flag: c_int, slen: usize, format: [*:0]const u8, ...) c_int;
extern fn __fprintf_chk(stream: *c.FILE, flag: c_int, format: [*:0]const u8, ...) c_int;
extern fn __vfprintf_chk(stream: *c.FILE, flag: c_int, format: [*:0]const u8, ap: *VaList) c_int;
extern fn __syslog_chk(priority: c_int, flag: c_int, format: [*:0]const u8, ...) void;
extern fn __fdelt_chk(d: c_long) c_long;
extern fn __isoc99_sscanf(s: [*:0]const u8, format: [*:0]const u8, ...) c_int;
extern fn fopen64(path: [*:0]const u8, mode: [*:0]const u8) ?*c.FILE;
extern fn getcontext(ucp: *anyopaque) c_int;
extern fn makecontext(ucp: *anyopaque, func: *const fn () callconv(.c) void, argc: c_int, ...) void;
extern fn setcontext(ucp: *const anyopaque) c_int;
extern fn fflush(stream: ?*c.FILE) c_int;
extern fn fork() c_int;

const log_perror = 0x20; // <syslog.h> LOG_PERROR: also write the message to stderr
const log_user = 1 << 3;
const log_err = 3;
const sigabrt = 6;

/// Runs `function` in a forked child with stderr on a pipe and returns what the child wrote
/// there and how it ended. The child never returns into the test runner: it exits 0 if
/// `function` returned.
fn inChild(function: *const fn () void, stderr_buffer: []u8) !struct { signal: u32, exit: u32, stderr: []const u8 } {
    var fds: [2]c.fd_t = undefined;
    if (c.pipe(&fds) != 0) return error.Pipe;
    const pid = fork();
    if (pid < 0) return error.Fork;
    if (pid == 0) {
        _ = c.dup2(fds[1], 2);
        function();
        c._exit(0);
    }
    _ = c.close(fds[1]);
    var len: usize = 0;
    while (len < stderr_buffer.len) {
        const n = c.read(fds[0], stderr_buffer[len..].ptr, stderr_buffer.len - len);
        if (n <= 0) break;
        len += @intCast(n);
    }
    _ = c.close(fds[0]);
    var status: c_int = 0;
    if (c.waitpid(pid, &status, 0) != pid) return error.Wait;
    const s: u32 = @bitCast(status);
    const signal: u32 = if (s & 0x7f != 0 and s & 0x7f != 0x7f) s & 0x7f else 0;
    return .{ .signal = signal, .exit = (s >> 8) & 0xff, .stderr = stderr_buffer[0..len] };
}

fn expectAborts(function: *const fn () void) !void {
    var buffer: [256]u8 = undefined;
    const result = try inChild(function, &buffer);
    try std.testing.expectEqual(@as(u32, sigabrt), result.signal);
    try std.testing.expectEqualStrings("*** buffer overflow detected ***: terminated\n", result.stderr);
}

test "glibc shim: __memcpy_chk copies when the destination is large enough, aborts when not" {
    var dest = @as([8]u8, @splat(0));
    const returned = __memcpy_chk(&dest, "abcd", 4, dest.len);
    try std.testing.expectEqual(@as([*]u8, &dest), returned);
    try std.testing.expectEqualStrings("abcd", dest[0..4]);
    _ = __memcpy_chk(&dest, "12345678", 8, 8); // exactly full is allowed
    try std.testing.expectEqualStrings("12345678", &dest);
    try expectAborts(struct {
        fn run() void {
            var small: [4]u8 = undefined;
            _ = __memcpy_chk(&small, "abcde", 5, small.len);
        }
    }.run);
}

test "glibc shim: __memset_chk fills when the destination is large enough, aborts when not" {
    var dest = @as([8]u8, @splat(0));
    try std.testing.expectEqual(@as([*]u8, &dest), __memset_chk(&dest, 'x', 8, dest.len));
    try std.testing.expectEqualStrings("xxxxxxxx", &dest);
    try expectAborts(struct {
        fn run() void {
            var small: [4]u8 = undefined;
            _ = __memset_chk(&small, 0, 5, small.len);
        }
    }.run);
}

test "glibc shim: __strcat_chk appends when the result and its NUL fit, aborts when not" {
    var dest: [5:0]u8 = "ab\x00\x00\x00".*;
    const returned = __strcat_chk(&dest, "cd", 5); // "abcd" and its NUL: exactly 5
    try std.testing.expectEqual(@as([*:0]u8, &dest), returned);
    try std.testing.expectEqualStrings("abcd", std.mem.sliceTo(&dest, 0));
    try expectAborts(struct {
        fn run() void {
            var small: [4:0]u8 = "ab\x00\x00".*;
            _ = __strcat_chk(&small, "cd", 4); // needs 5
        }
    }.run);
}

test "glibc shim: __sprintf_chk formats like sprintf, aborts when the result does not fit" {
    var buffer: [16]u8 = undefined;
    const n = __sprintf_chk(&buffer, 1, buffer.len, "%d-%s", @as(c_int, 42), "ok");
    try std.testing.expectEqual(@as(c_int, 5), n);
    try std.testing.expectEqualStrings("42-ok", buffer[0..5]);
    try std.testing.expectEqual(@as(u8, 0), buffer[5]);
    // (size_t)-1 is "size unknown": plain sprintf.
    try std.testing.expectEqual(@as(c_int, 3), __sprintf_chk(&buffer, 1, std.math.maxInt(usize), "%s", "xyz"));
    try std.testing.expectEqualStrings("xyz", buffer[0..3]);
    try expectAborts(struct {
        fn run() void {
            var small: [4]u8 = undefined;
            _ = __sprintf_chk(&small, 1, small.len, "%s", "four"); // 4 bytes and a NUL
        }
    }.run);
    try expectAborts(struct {
        fn run() void {
            var small: [4]u8 = undefined;
            _ = __sprintf_chk(&small, 1, 0, "%s", "");
        }
    }.run);
}

test "glibc shim: __fprintf_chk writes like fprintf" {
    var buffer = @as([32]u8, @splat(0));
    const stream = c.fmemopen(&buffer, buffer.len, "w") orelse return error.Fmemopen;
    try std.testing.expectEqual(@as(c_int, 7), __fprintf_chk(stream, 1, "%s=%u", "key", @as(c_uint, 123)));
    _ = c.fclose(stream);
    try std.testing.expectEqualStrings("key=123", std.mem.sliceTo(&buffer, 0));
}

fn vfprintfThroughShim(stream: *c.FILE, format: [*:0]const u8, ...) callconv(.c) c_int {
    var ap = @cVaStart();
    defer @cVaEnd(&ap);
    return __vfprintf_chk(stream, 1, format, &ap);
}

test "glibc shim: __vfprintf_chk writes like vfprintf" {
    var buffer = @as([32]u8, @splat(0));
    const stream = c.fmemopen(&buffer, buffer.len, "w") orelse return error.Fmemopen;
    try std.testing.expectEqual(@as(c_int, 5), vfprintfThroughShim(stream, "%c%d%s", @as(c_int, 'a'), @as(c_int, -7), "zz"));
    _ = c.fclose(stream);
    try std.testing.expectEqualStrings("a-7zz", std.mem.sliceTo(&buffer, 0));
}

test "glibc shim: __syslog_chk logs like syslog" {
    // LOG_PERROR copies the message to stderr, which the child has on a pipe.
    var buffer: [256]u8 = undefined;
    const result = try inChild(struct {
        fn run() void {
            c.openlog("shim-test", log_perror, log_user);
            __syslog_chk(log_err, 1, "answer=%d", @as(c_int, 42));
        }
    }.run, &buffer);
    try std.testing.expectEqual(@as(u32, 0), result.signal);
    try std.testing.expect(std.mem.indexOf(u8, result.stderr, "answer=42") != null);
}

test "glibc shim: __fdelt_chk is the fd_set word of a descriptor, aborts outside fd_set" {
    try std.testing.expectEqual(@as(c_long, 0), __fdelt_chk(0));
    try std.testing.expectEqual(@as(c_long, 0), __fdelt_chk(63));
    try std.testing.expectEqual(@as(c_long, 1), __fdelt_chk(64));
    try std.testing.expectEqual(@as(c_long, 15), __fdelt_chk(1023));
    try expectAborts(struct {
        fn run() void {
            _ = __fdelt_chk(1024); // FD_SETSIZE
        }
    }.run);
    try expectAborts(struct {
        fn run() void {
            _ = __fdelt_chk(-1);
        }
    }.run);
}

test "glibc shim: __isoc99_sscanf scans like C99 sscanf" {
    var number: c_int = 0;
    var word: [8]u8 = undefined;
    try std.testing.expectEqual(@as(c_int, 2), __isoc99_sscanf("17 abc", "%d %7s", &number, &word));
    try std.testing.expectEqual(@as(c_int, 17), number);
    try std.testing.expectEqualStrings("abc", std.mem.sliceTo(&word, 0));
    try std.testing.expectEqual(@as(c_int, 0), __isoc99_sscanf("x", "%d", &number));
}

test "glibc shim: fopen64 opens like fopen" {
    const stream = fopen64("/proc/self/stat", "r") orelse return error.Fopen;
    _ = c.fclose(stream);
    try std.testing.expectEqual(@as(?*c.FILE, null), fopen64("/nonexistent/sluice-shim", "r"));
    try std.testing.expectEqual(@as(c_int, @backingInt(c.E.NOENT)), c._errno().*);
}

test "glibc shim: getcontext and setcontext fail with ENOSYS, makecontext does nothing" {
    // Larger than musl's ucontext_t (936 bytes on x86-64).
    var context = @as([1024]u8, @splat(0x5a));
    c._errno().* = 0;
    try std.testing.expectEqual(@as(c_int, -1), getcontext(&context));
    try std.testing.expectEqual(@as(c_int, @backingInt(c.E.NOSYS)), c._errno().*);
    makecontext(&context, struct {
        fn entry() callconv(.c) void {}
    }.entry, 0);
    for (context) |byte| try std.testing.expectEqual(@as(u8, 0x5a), byte);
    c._errno().* = 0;
    try std.testing.expectEqual(@as(c_int, -1), setcontext(&context));
    try std.testing.expectEqual(@as(c_int, @backingInt(c.E.NOSYS)), c._errno().*);
}
