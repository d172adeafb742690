//! sluice: an HTTP/1.1 load balancer and reverse proxy. This file only turns the command line
//! into a Config and hands it to the one start-up path in runtime/startup.zig, with what a
//! reload reads again (the file's path and the command line) as an argument: nothing the
//! runtime uses is kept in a global here.
const std = @import("std");
const builtin = @import("builtin");

const cli = @import("config/cli.zig");
const config_file = @import("config/file.zig");
/// The config compiled in with `zig build -Dconfig=FILE`, if any (src/config/bake.zig).
const baked = @import("baked_config");
/// The JavaScript handlers compiled in with `zig build -Dhandler=FILE` (build.zig).
const embedded = @import("embedded_handlers");
const Config = @import("config/Config.zig");
const sys = @import("stdx/sys.zig");
const StaticAllocator = @import("stdx/StaticAllocator.zig");
const startup = @import("runtime/startup.zig");
const log = @import("stdx/log.zig");
const signals = @import("runtime/signals.zig");
const DemoBackend = @import("demo/Backend.zig");
const Address = @import("stdx/Address.zig").Address;
const InitTrace = @import("runtime/InitTrace.zig");
const reload_command = @import("runtime/reload_command.zig");
const js_cli = @import("js/cli.zig");
const js_webcrypto = @import("js/builtins/webcrypto.zig");
const BackendTls = @import("upstream/BackendTls.zig");
const tls = @import("tls/tls.zig");
const HandlerInstance = @import("handler/Instance.zig");

pub const version = "0.1.0";

/// The alternate signal stack that std gives every thread, so that a stack overflow still
/// prints its stack trace, is a thread-local array, and std zeroes a thread's whole TLS block
/// when it creates the thread: at the default 256 KiB that is 64 pages written before `main`
/// and 64 more by the control thread before each worker starts, on the cold-start path
/// (docs/ARCHITECTURE.md, "Start-up"). 32 KiB is what printing the trace of an overflow took in
/// a ReleaseSafe build with debug info; 64 KiB leaves it twice that.
pub const std_options: std.Options = .{ .signal_stack_size = 64 * 1024 };

comptime {
    const pinned = std.SemanticVersion.parse("0.17.1") catch unreachable;
    if (builtin.zig_version.order(pinned) != .eq) @compileError("sluice needs Zig 0.17.1");
}

/// The demo's backends run on threads of their own until the process exits, after `main` has
/// returned its exit code: they live outside `main`'s frame.
var demo_backends: [2]DemoBackend = undefined;
/// The command line, parsed onto the baked config or the file: the configuration the process
/// runs with, static because it lives as long as the process. A `Config` is ~55 KB, and a
/// function whose frame holds one makes the stack probe touch all of its pages when it is
/// called (a fault per page). So `main` holds none: parsing, the paths with a `Config` of their
/// own (a config file, `check`, `reload`) and the rest of start-up are calls never inlined into
/// it. Inlined, they made its frame 334 KB, 82 faults before its first line ran
/// (docs/ARCHITECTURE.md, "Start-up"). It starts as the baked config, a value in the binary's
/// data: the flags are parsed onto it in place, so start-up writes only the pages they change
/// (copying a `Config` in would write all 14).
var command_line: cli.Parsed = .{ .command = .run, .config = baked_config };

pub fn main(init: std.process.Init.Minimal) u8 {
    sys.adoptAuxv(); // Before any clock is read: the vDSO's clock, not a system call.
    // Before any engine exists: crypto.subtle.digest hashes with the TLS library.
    js_webcrypto.digest_hook = tls.digest.digestByName;
    // `sluice js ...` is the JavaScript engine's own command line (src/js/cli.zig), never
    // inlined here, so that its frame does not become main's (see `command_line`).
    if (jsArguments(init)) |args| return @call(.never_inline, js_cli.main, .{ std.heap.page_allocator, args });
    // Before anything else, so the trace's total covers all of start-up. Parsing the flag
    // itself is part of the first phase.
    var scan = init.args.iterate();
    while (scan.next()) |arg| {
        if (std.mem.eql(u8, arg, "--trace-init")) InitTrace.global.enabled = true;
    }
    InitTrace.global.begin();
    // Both live in this frame: `startup.run` returns only as the process exits, and nothing
    // uses an allocator after start-up but the control thread.
    var static_allocator: StaticAllocator = .init(std.heap.page_allocator);
    // Config text and the strings Config points into, for the process.
    var config_arena: std.heap.ArenaAllocator = .init(static_allocator.allocator());
    signals.block() catch {
        log.err("cannot block signals", .{});
        return 1;
    };
    var args_buffer: [256][]const u8 = undefined;
    var args_count: usize = 0;
    var iterator = init.args.iterate();
    _ = iterator.skip(); // argv[0]
    while (iterator.next()) |arg| {
        if (args_count == args_buffer.len) {
            log.err("too many arguments (at most {d})", .{args_buffer.len});
            return 2;
        }
        args_buffer[args_count] = arg;
        args_count += 1;
    }
    const args = args_buffer[0..args_count];
    const never_inline: std.builtin.CallModifier = .never_inline; // See `command_line`.
    const arena = config_arena.allocator();
    if (!@call(never_inline, parseArgs, .{ arena, args })) return 2;
    if (command_line.command == .check) {
        return @call(never_inline, checkFile, .{ arena, command_line.config_path.? });
    }
    if (command_line.command == .settings) {
        log.stdout(cli.settings_listing);
        return 0;
    }
    if (command_line.command == .reload) {
        if (command_line.reload_admin) |*address| {
            return @call(never_inline, reload_command.askAdmin, .{address});
        }
        return @call(never_inline, reload_command.signalPid, .{command_line.pid_file.?});
    }
    if (command_line.config_path) |path| {
        if (!@call(never_inline, parseFileAndArgs, .{ arena, path, args })) return 2;
    }
    switch (command_line.command) {
        .help => {
            log.stdout(cli.usage);
            return 0;
        },
        .version => {
            // The TLS library too: "sluice 0.1.0 (AWS-LC 5.12.0)".
            log.stdout("sluice " ++ version ++ " (");
            log.stdout(tls.libraryVersion());
            log.stdout(")\n");
            return 0;
        },
        .demo => if (!@call(never_inline, startDemo, .{&command_line.config})) return 1,
        .run => {},
        .check, .reload, .settings => unreachable, // Answered above.
    }
    InitTrace.global.mark("config");
    log.setLevel(command_line.config.log_level);
    const options: startup.Options = .{
        .demo = command_line.command == .demo,
        .version = version,
        .pid_file = command_line.pid_file,
        // `args` is in this frame too, and its strings are the process's arguments.
        // The demo's configuration is made by `startDemo`: there is nothing to read again.
        .reload_source = if (command_line.command == .demo)
            null
        else
            .{ .path = command_line.config_path, .built_in = &baked_config, .args = args, .embedded = embedded_handlers },
        .notify_socket = init.environ.getPosix("NOTIFY_SOCKET"),
    };
    return @call(never_inline, startup.run, .{ &static_allocator, &command_line.config, options });
}

var js_args_buffer: [256][]const u8 = undefined;

/// The arguments after `js`, when the command is `sluice js ...`.
fn jsArguments(init: std.process.Init.Minimal) ?[]const []const u8 {
    var iterator = init.args.iterate();
    _ = iterator.skip(); // argv[0]
    const first = iterator.next() orelse return null;
    if (!std.mem.eql(u8, first, "js")) return null;
    var count: usize = 0;
    while (iterator.next()) |arg| {
        if (count == js_args_buffer.len) break;
        js_args_buffer[count] = arg;
        count += 1;
    }
    return js_args_buffer[0..count];
}

/// The command line over the baked config, into `command_line`. False (after saying why) on
/// a usage error.
fn parseArgs(arena: std.mem.Allocator, args: []const []const u8) bool {
    var diagnostic: cli.Diagnostic = .{};
    cli.parseInPlace(arena, args, &command_line, &diagnostic) catch {
        log.err("{s}: {s}", .{ diagnostic.flag, diagnostic.message() });
        return false;
    };
    return true;
}

/// `--config FILE`: the file first, then the flags again on top of it, into `command_line`.
fn parseFileAndArgs(arena: std.mem.Allocator, path: []const u8, args: []const []const u8) bool {
    command_line = .{ .command = .run, .config = .{} };
    const base = &command_line.config;
    for (embedded_handlers) |handler| base.setHandler(handler) catch unreachable; // They fit: see baked_config.
    if (!loadFile(arena, path, base)) return false;
    var diagnostic: cli.Diagnostic = .{};
    cli.parseInPlace(arena, args, &command_line, &diagnostic) catch {
        log.err("{s}: {s}", .{ diagnostic.flag, diagnostic.message() });
        return false;
    };
    return true;
}

/// Evaluated by the compiler: a baked config is already a value in the binary's data, and one
/// that does not validate fails the build.
const baked_config: Config = blk: {
    var config: Config = if (baked.present) baked.build(Config) else .{};
    for (embedded_handlers) |handler| config.setHandler(handler) catch @compileError("more -Dhandler than a config holds");
    if (baked.present) config.validate() catch |err| @compileError("baked config: " ++ @errorName(err));
    break :blk config;
};

/// The handlers compiled in, as a configuration names them: every configuration starts with
/// them (the command line's, a file's, a reload's), so routes and `--handler` can name them.
const embedded_handlers: []const Config.Handler = blk: {
    var list: [embedded.handlers.len]Config.Handler = undefined;
    for (&list, embedded.handlers) |*handler, compiled| {
        handler.* = .{ .name = compiled.name, .path = "", .image = compiled.image };
    }
    const final = list;
    break :blk &final;
};

/// `sluice check FILE`: every problem as `FILE:LINE:COLUMN: message`, exit 1; else exit 0.
/// The handlers the file declares are compiled too, each mistake as `app.js:LINE:COLUMN: ...`,
/// and every listener's certificates checked, each finding naming its file.
fn checkFile(arena: std.mem.Allocator, path: []const u8) u8 {
    var config: Config = .{};
    for (embedded_handlers) |handler| config.setHandler(handler) catch unreachable; // They fit: see baked_config.
    if (!loadFile(arena, path, &config)) return 1;
    var handlers_ok = true;
    for (config.handlers()) |*handler| {
        if (!checkHandler(arena, handler)) handlers_ok = false;
    }
    if (!handlers_ok) return 1;
    if (!startup.checkCertificates(arena, &config)) return 1;
    if (!checkUpstreamTls(arena, path, &config)) return 1;
    if (!startup.checkUnixSockets(&config)) return 1;
    log.stdout(path);
    log.stdout(": ok\n");
    return 0;
}

/// A handler compiles as start-up would compile it; else its mistake is printed, as
/// `app.js:LINE:COLUMN: message` for a compile error.
fn checkHandler(arena: std.mem.Allocator, handler: *const Config.Handler) bool {
    var buffer: [1024]u8 = undefined;
    var diagnostic: std.Io.Writer = .fixed(&buffer);
    const compiled = if (HandlerInstance.readText(arena, handler, &diagnostic)) |text|
        HandlerInstance.compile(arena, handler, text, &diagnostic)
    else |err|
        err;
    if (compiled) |module| {
        var made = module;
        made.deinit();
        return true;
    } else |err| {
        if (err == error.OutOfMemory) diagnostic.print("handler {s}: out of memory compiling it", .{handler.name}) catch {}; // Cut at the buffer's end.
        log.plain("{s}", .{diagnostic.buffered()});
        return false;
    }
}

/// Each pool's TLS files are read and checked as start-up would (CA certificates, the client
/// certificate and its key), each mistake as `FILE: pool NAME: tls: ...`.
fn checkUpstreamTls(arena: std.mem.Allocator, path: []const u8, config: *const Config) bool {
    var ok = true;
    for (config.pools()) |*pool| {
        if (!pool.tls.enabled) continue;
        var backend_tls: BackendTls = undefined;
        var diagnostic: tls.certificate.Diagnostic = .{};
        backend_tls.init(arena, pool, pool.backends_count, 1, &diagnostic) catch |err| {
            ok = false;
            switch (err) {
                error.Invalid => log.plain("{s}: pool {s}: tls: {s}", .{ path, pool.name, diagnostic.message() }),
                error.OutOfMemory => log.err("{s}: out of memory checking pool {s}'s tls", .{ path, pool.name }),
            }
            continue;
        };
        backend_tls.deinit();
    }
    return ok;
}

/// Into `arena`, which is never freed: the config's strings point into it for the process.
fn loadFile(arena: std.mem.Allocator, path: []const u8, config: *Config) bool {
    var problems: config_file.Problems = .{};
    config_file.load(arena, path, config, &problems) catch |err| {
        for (problems.slice()) |problem| {
            log.plain("{s}:{d}:{d}: {s}", .{
                path, problem.position.line, problem.position.column, problem.message,
            });
        }
        if (problems.dropped > 0) log.plain("{s}: {d} more problems", .{ path, problems.dropped });
        if (err == error.OutOfMemory) log.err("{s}: out of memory reading it", .{path});
        return false;
    };
    return true;
}

/// Two built-in backends on loopback and a JavaScript handler on `/hello` (src/demo/hello.js),
/// with the proxy in front on 127.0.0.1:8080 unless
/// --listen says otherwise. One worker unless --workers says otherwise: round robin cursors
/// are per worker, and the demo is there to show the alternation plainly.
fn startDemo(config: *Config) bool {
    if (config.workers_count == 0) config.workers_count = 1;
    if (config.listeners_count == 0) config.setListener(Address.initIp4(.{ 127, 0, 0, 1 }, 8080));
    for (&demo_backends, 1..) |*backend, number| {
        backend.start(@intCast(number), config.io) catch |err| {
            log.err("cannot start demo backend {d}: {s}", .{ number, @errorName(err) });
            return false;
        };
        var text: [Address.text_bytes_max]u8 = undefined;
        log.info("demo backend {d} on {s}", .{ number, backend.address.toText(&text) });
        const pool = config.quickPool().?; // The demo takes no config file.
        // Start-up, before the allocator is sealed: a list of two, left to the process.
        pool.addBackend(std.heap.page_allocator, .{ .address = backend.address }) catch |err| {
            log.err("cannot add demo backend {d}: {s}", .{ number, @errorName(err) });
            return false;
        };
    }
    // `/hello` is answered by a JavaScript handler, the rest by the two backends.
    config.setHandler(.{ .name = "hello", .path = "", .source = @embedFile("demo/hello.js") }) catch {
        log.err("the demo's handler does not fit: give fewer --handler-file", .{});
        return false;
    };
    const hello = config.handlerIndex("hello").?;
    config.addRoute(.{ .name = "hello", .path_prefix = "/hello", .action = .handler, .handler = hello }) catch unreachable;
    config.addRoute(.{ .name = "backends", .action = .pool, .pool = 0 }) catch unreachable;
    return true;
}

test {
    _ = @import("unit_tests.zig");
}
