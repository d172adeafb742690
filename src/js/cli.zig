//! `sluice js run FILE` and `sluice js check FILE...`.
//!
//! `run` behaves as `node FILE` does for the language's programs: console.log to stdout, exit
//! status 0; an uncaught exception ends the run with status 1 and stderr's first line
//! `Uncaught ` and what node prints for it (`TypeError: bad`, or the thrown value). A compile
//! error is `FILE:LINE:COLUMN: message` on stderr, status 1. Every program goes through the
//! same path as a handler's: compiled, written as an image, loaded and verified, then run.
const std = @import("std");
const linux = std.os.linux;

const Compiler = @import("Compiler.zig");
const Program = @import("Program.zig");
const Heap = @import("Heap.zig");
const Vm = @import("Vm.zig");
const builtins = @import("builtins.zig");
const image = @import("image.zig");
const string = @import("string.zig");
const object = @import("object.zig");
const inspect = @import("builtins/inspect.zig");
const ops = @import("operations.zig");
const Value = @import("value.zig").Value;

pub const usage =
    \\usage: sluice js run [--heap-mb N] [--budget N] [--deadline-ms N] FILE
    \\       sluice js check FILE...
    \\
;

/// Writes to a file descriptor through a buffer.
pub const FdWriter = struct {
    fd: linux.fd_t,
    writer: std.Io.Writer,

    pub fn init(fd: linux.fd_t, buffer: []u8) FdWriter {
        return .{ .fd = fd, .writer = .{ .buffer = buffer, .vtable = &.{ .drain = drain } } };
    }

    fn drain(w: *std.Io.Writer, data: []const []const u8, splat: usize) std.Io.Writer.Error!usize {
        const self: *FdWriter = @fieldParentPtr("writer", w);
        try writeAll(self.fd, w.buffer[0..w.end]);
        w.end = 0;
        var written: usize = 0;
        for (data[0 .. data.len - 1]) |chunk| {
            try writeAll(self.fd, chunk);
            written += chunk.len;
        }
        const last = data[data.len - 1];
        for (0..splat) |_| {
            try writeAll(self.fd, last);
            written += last.len;
        }
        return written;
    }

    fn writeAll(fd: linux.fd_t, bytes: []const u8) std.Io.Writer.Error!void {
        var rest = bytes;
        while (rest.len > 0) {
            const rc = linux.write(fd, rest.ptr, rest.len);
            switch (linux.errno(rc)) {
                .SUCCESS => rest = rest[rc..],
                .INTR, .AGAIN => continue,
                else => return error.WriteFailed,
            }
        }
    }
};

pub fn main(gpa: std.mem.Allocator, args: []const []const u8) u8 {
    var err_buffer: [4096]u8 = undefined;
    var stderr = FdWriter.init(2, &err_buffer);
    defer stderr.writer.flush() catch {}; // Nowhere left to report a failing stderr.
    if (args.len == 0) {
        stderr.writer.writeAll(usage) catch {};
        return 2;
    }
    if (std.mem.eql(u8, args[0], "run")) return run(gpa, args[1..], &stderr.writer);
    if (std.mem.eql(u8, args[0], "check")) return check(gpa, args[1..], &stderr.writer);
    if (std.mem.eql(u8, args[0], "dump") and args.len == 2) return dump(gpa, args[1], &stderr.writer);
    stderr.writer.writeAll(usage) catch {};
    return 2;
}

const Options = struct {
    heap_bytes: usize = 512 * 1024 * 1024,
    budget: u64 = 50_000_000_000,
    /// None by default: a script run from the command line may take its time.
    deadline_ns: u64 = 0,
    path: ?[]const u8 = null,
};

fn run(gpa: std.mem.Allocator, args: []const []const u8, stderr: *std.Io.Writer) u8 {
    var options: Options = .{};
    var i: usize = 0;
    while (i < args.len) : (i += 1) {
        const a = args[i];
        if (std.mem.eql(u8, a, "--heap-mb") and i + 1 < args.len) {
            i += 1;
            const mb = std.fmt.parseInt(usize, args[i], 10) catch 0;
            if (mb == 0 or mb > 64 * 1024) {
                stderr.writeAll("sluice js: --heap-mb takes a number of MiB between 1 and 65536\n") catch {};
                return 2;
            }
            options.heap_bytes = mb * 1024 * 1024;
        } else if (std.mem.eql(u8, a, "--budget") and i + 1 < args.len) {
            i += 1;
            options.budget = std.fmt.parseInt(u64, args[i], 10) catch {
                stderr.writeAll("sluice js: --budget takes a number\n") catch {};
                return 2;
            };
        } else if (std.mem.eql(u8, a, "--deadline-ms") and i + 1 < args.len) {
            i += 1;
            const ms = std.fmt.parseInt(u64, args[i], 10) catch 0;
            if (ms == 0 or ms > std.math.maxInt(u32)) {
                stderr.writeAll("sluice js: --deadline-ms takes a number of milliseconds, 1 or more\n") catch {};
                return 2;
            }
            options.deadline_ns = ms * std.time.ns_per_ms;
        } else if (options.path == null) {
            options.path = a;
        } else {
            stderr.writeAll(usage) catch {};
            return 2;
        }
    }
    const path = options.path orelse {
        stderr.writeAll(usage) catch {};
        return 2;
    };
    var arena_state = std.heap.ArenaAllocator.init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const source = readFile(arena, path) catch |err| {
        stderr.print("sluice js: cannot read {s}: {s}\n", .{ path, @errorName(err) }) catch {};
        return 1;
    };
    const program = compileToImage(arena, source, path, stderr) orelse return 1;
    // The program runs on a thread of its own with a large stack, so that recursion through
    // builtins (a callback of map calling map...) goes as deep as in node; the engine's own
    // stack guard stops it well before the end of that stack.
    var job: Job = .{ .gpa = gpa, .program = &program, .options = options, .path = path, .stderr = stderr };
    const thread = std.Thread.spawn(.{ .stack_size = thread_stack_bytes }, Job.run, .{&job}) catch {
        return job.execute();
    };
    thread.join();
    return job.status;
}

const thread_stack_bytes = 512 * 1024 * 1024;

const Job = struct {
    gpa: std.mem.Allocator,
    program: *const Program,
    options: Options,
    path: []const u8,
    stderr: *std.Io.Writer,
    status: u8 = 1,

    fn run(job: *Job) void {
        job.status = job.execute();
    }

    fn execute(job: *Job) u8 {
        return runProgram(job.gpa, job.program, job.options, job.path, job.stderr);
    }
};

fn runProgram(gpa: std.mem.Allocator, program: *const Program, options: Options, path: []const u8, stderr: *std.Io.Writer) u8 {
    const region = Heap.allocUntouched(gpa, u8, options.heap_bytes) catch {
        stderr.writeAll("sluice js: cannot allocate the heap\n") catch {};
        return 1;
    };
    defer Heap.freeUntouched(gpa, u8, region);
    var heap = Heap.init(region);
    var out_buffer: [64 * 1024]u8 = undefined;
    var stdout = FdWriter.init(1, &out_buffer);
    var vm = Vm.init(gpa, &heap, .{
        .stack_values = 1 << 20,
        .frames = 20_000,
        .native_depth = 100_000,
        .native_stack_bytes = thread_stack_bytes - 16 * 1024 * 1024,
        .budget = options.budget,
        .deadline_ns = options.deadline_ns,
    }, &stdout.writer, stderr) catch {
        stderr.writeAll("sluice js: out of memory\n") catch {};
        return 1;
    };
    defer vm.deinit(gpa);
    vm.load(gpa, program, &builtins.Host.none) catch |err| {
        stderr.print("sluice js: cannot load {s}: {s}\n", .{ path, @errorName(err) }) catch {};
        return 1;
    };
    var outcome = vm.runMain();
    if (outcome == .value) outcome = runTimers(&vm, &stdout.writer);
    stdout.writer.flush() catch {}; // A closed stdout is the reader's choice.
    switch (outcome) {
        .value => return 0,
        .exception => |e| {
            reportUncaught(&vm, e, stderr);
            return 1;
        },
        .terminated => |why| {
            stderr.print("sluice js: {s}: terminated: {s}\n", .{ path, why.message() }) catch {};
            return 1;
        },
    }
}

/// As node does after the main script: while timers are set, sleep until the first is due and
/// run those due, each followed by its microtasks. The budget and the deadline (which starts
/// here if no checkpoint started it) bound the whole program, sleeps included.
fn runTimers(vm: *Vm, stdout: *std.Io.Writer) Vm.Outcome {
    while (vm.timers_head != null) {
        const suspension = vm.suspendRun();
        stdout.flush() catch {}; // A closed stdout is the reader's choice.
        sleepUntil(vm, suspension.wakeAt());
        vm.resumeRun(&suspension);
        const outcome = vm.runTimers(null, vm.clock());
        if (outcome != .value) return outcome;
    }
    return .{ .value = Value.undefined_value };
}

fn sleepUntil(vm: *Vm, at_ns: u64) void {
    const now = vm.clock();
    if (at_ns <= now) return;
    const wait = at_ns - now;
    var request: linux.timespec = .{ .sec = @intCast(wait / std.time.ns_per_s), .nsec = @intCast(wait % std.time.ns_per_s) };
    while (true) {
        var remaining: linux.timespec = undefined;
        switch (linux.errno(linux.nanosleep(&request, &remaining))) {
            .INTR => request = remaining,
            else => return, // Done; nothing else can fail with a valid interval.
        }
    }
}

/// `Uncaught ` and node's first line for the value: `Name: message` for errors, the
/// inspected value (strings as they are) for anything else.
fn reportUncaught(vm: *Vm, e: Value, stderr: *std.Io.Writer) void {
    stderr.writeAll("Uncaught ") catch return;
    if (e.objectOf(.error_object)) |o| {
        // The error's toString as it is when printed (V8 formats the stack's first line
        // when it is first read): `e.name = ""` prints the message alone.
        if (builtins.errors.errorToString(vm, e)) |text| {
            const head = builtins.errors.inspectHead(vm, o.as(object.ErrorObject), text) catch text;
            string.writeUtf8(stderr, head) catch return;
        } else |_| {
            stderr.writeAll(o.as(object.ErrorObject).error_kind.name()) catch return;
        }
        stderr.writeAll("\n") catch return;
    } else if (e.isString() or e.isNumber()) {
        // node prints a thrown primitive as String() does (`throw -0` prints 0).
        const text = ops.toString(vm, e) catch return;
        string.writeUtf8(stderr, text) catch return;
        stderr.writeAll("\n") catch return;
    } else {
        const heap = vm.heap;
        var scratch = std.heap.FixedBufferAllocator.init(heap.region[heap.low..heap.high]);
        var in = inspect.init(vm, scratch.allocator());
        // node inspects an uncaught value with depth max(2, 5).
        in.depth = 5;
        const text = in.inspect(e) catch "(value too large to show)";
        stderr.print("{s}\n", .{text}) catch return;
    }
    if (vm.throw_site) |site| {
        if (Vm.sitePosition(site)) |p| {
            stderr.print("    at {s}:{d}:{d}\n", .{ vm.program.source_name, p.line, p.column }) catch return;
        }
    }
}

fn check(gpa: std.mem.Allocator, paths: []const []const u8, stderr: *std.Io.Writer) u8 {
    if (paths.len == 0) {
        stderr.writeAll(usage) catch {};
        return 2;
    }
    var status: u8 = 0;
    for (paths) |path| {
        var arena_state = std.heap.ArenaAllocator.init(gpa);
        defer arena_state.deinit();
        const arena = arena_state.allocator();
        const source = readFile(arena, path) catch |err| {
            stderr.print("{s}:1:1: cannot read the file: {s}\n", .{ path, @errorName(err) }) catch {};
            status = 1;
            continue;
        };
        if (compileToImage(arena, source, path, stderr) == null) status = 1;
    }
    return status;
}

/// `sluice js dump FILE`: the compiled bytecode, for debugging.
fn dump(gpa: std.mem.Allocator, path: []const u8, stderr: *std.Io.Writer) u8 {
    var arena_state = std.heap.ArenaAllocator.init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const source = readFile(arena, path) catch |err| {
        stderr.print("sluice js: cannot read {s}: {s}\n", .{ path, @errorName(err) }) catch {};
        return 1;
    };
    var failure: Compiler.Failure = undefined;
    const program = Compiler.compile(arena, source, .{ .source_name = path, .native_stack_bytes = 4 * 1024 * 1024 }, &failure) catch {
        stderr.print("{s}:{d}:{d}: {s}\n", .{ path, failure.line, failure.column, failure.message }) catch {};
        return 1;
    };
    var out_buffer: [4096]u8 = undefined;
    var stdout = FdWriter.init(1, &out_buffer);
    @import("disassemble.zig").program(&stdout.writer, &program) catch {};
    stdout.writer.flush() catch {};
    return 0;
}

/// Compiles, writes the image and loads it back verified (the path every program takes).
fn compileToImage(arena: std.mem.Allocator, source: []const u8, path: []const u8, stderr: *std.Io.Writer) ?Program {
    var failure: Compiler.Failure = undefined;
    const program = Compiler.compile(arena, source, .{ .source_name = path, .native_stack_bytes = 4 * 1024 * 1024 }, &failure) catch |err| {
        switch (err) {
            error.SyntaxError => stderr.print("{s}:{d}:{d}: {s}\n", .{ path, failure.line, failure.column, failure.message }) catch {},
            error.OutOfMemory => stderr.print("{s}:1:1: out of memory compiling it\n", .{path}) catch {},
        }
        return null;
    };
    const bytes = image.write(arena, &program) catch {
        stderr.print("{s}:1:1: out of memory writing its image\n", .{path}) catch {};
        return null;
    };
    var problem: image.Problem = .{};
    const loaded = image.load(arena, bytes, &problem) catch {
        stderr.print("{s}:1:1: internal error: the compiled image does not verify: {s}\n", .{ path, problem.message }) catch {};
        return null;
    };
    return loaded;
}

fn readFile(arena: std.mem.Allocator, path: []const u8) ![]const u8 {
    const path_z = try arena.dupeSentinel(u8, path, 0);
    const rc = linux.open(path_z, .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    if (linux.errno(rc) != .SUCCESS) return error.CannotOpen;
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    var out: std.ArrayList(u8) = .empty;
    var buf: [64 * 1024]u8 = undefined;
    while (true) {
        const n = linux.read(fd, &buf, buf.len);
        switch (linux.errno(n)) {
            .SUCCESS => {},
            .INTR => continue,
            else => return error.CannotRead,
        }
        if (n == 0) break;
        if (out.items.len + n > @import("Parser.zig").source_bytes_max) return error.FileTooLarge;
        try out.appendSlice(arena, buf[0..n]);
    }
    return out.items;
}
