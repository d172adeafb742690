//! sluice: an HTTP/1.1 load balancer and reverse proxy. This file only turns the command line
//! into a Config and hands it to the one start-up path in runtime/control.zig.
const std = @import("std");
const builtin = @import("builtin");

const cli = @import("config/cli.zig");
const config_file = @import("config/file.zig");
/// The config compiled in with `zig build -Dconfig=FILE`, if any (src/config/bake.zig).
const baked = @import("baked_config");
const Config = @import("config/Config.zig");
const StaticAllocator = @import("stdx/StaticAllocator.zig");
const control = @import("runtime/control.zig");
const log = @import("stdx/log.zig");
const signals = @import("runtime/signals.zig");
const DemoBackend = @import("demo/Backend.zig");
const Address = @import("stdx/Address.zig").Address;
const InitTrace = @import("runtime/InitTrace.zig");
const reload_command = @import("runtime/reload_command.zig");
const js_cli = @import("js/cli.zig");

pub const version = "0.1.0";

comptime {
    const pinned = std.SemanticVersion.parse("0.17.1") catch unreachable;
    if (builtin.zig_version.order(pinned) != .eq) @compileError("sluice needs Zig 0.17.1");
}

var static_allocator: StaticAllocator = undefined;
var demo_backends: [2]DemoBackend = undefined;

pub fn main(init: std.process.Init.Minimal) u8 {
    // `sluice js ...` is the JavaScript engine's own command line (src/js/cli.zig).
    if (jsArguments(init)) |args| return js_cli.main(std.heap.page_allocator, args);
    // Before anything else, so the trace's total covers all of start-up. Parsing the flag
    // itself is part of the first phase.
    var scan = init.args.iterate();
    while (scan.next()) |arg| {
        if (std.mem.eql(u8, arg, "--trace-init")) InitTrace.global.enabled = true;
    }
    InitTrace.global.begin();
    static_allocator = .init(std.heap.page_allocator);
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
    var diagnostic: cli.Diagnostic = .{};
    var parsed = cli.parseOnto(args, baked_config, &diagnostic) catch {
        log.err("{s}: {s}", .{ diagnostic.flag, diagnostic.message() });
        return 2;
    };
    if (parsed.command == .check) return checkFile(parsed.config_path.?);
    if (parsed.command == .reload) {
        if (parsed.reload_admin) |*address| return reload_command.askAdmin(address);
        return reload_command.signalPid(parsed.pid_file.?);
    }
    if (parsed.config_path) |path| {
        // The file first, then the flags again on top of it.
        var base: Config = .{};
        if (!loadFile(path, &base)) return 2;
        parsed = cli.parseOnto(args, base, &diagnostic) catch {
            log.err("{s}: {s}", .{ diagnostic.flag, diagnostic.message() });
            return 2;
        };
    }
    switch (parsed.command) {
        .help => {
            log.stdout(cli.usage);
            return 0;
        },
        .version => {
            log.stdout("sluice " ++ version ++ "\n");
            return 0;
        },
        .demo => if (!startDemo(&parsed.config)) return 1,
        .run => {},
        .check, .reload => unreachable, // Answered above.
    }
    InitTrace.global.mark("config");
    log.setLevel(parsed.config.log_level);
    reload_args = args;
    reload_path = parsed.config_path orelse "";
    return control.run(&static_allocator, &parsed.config, .{
        .demo = parsed.command == .demo,
        .version = version,
        .pid_file = parsed.pid_file,
        .loader = if (parsed.config_path) |path| .{ .path = path, .function = reloadConfig } else null,
    });
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

/// The command line and the config file, kept for reloads: the flags go over the file again,
/// as at start-up.
var reload_args: []const []const u8 = &.{};
var reload_path: []const u8 = "";

/// `control.Loader`: the config file again, then the flags over it, as at start-up.
fn reloadConfig(context: ?*anyopaque, arena: std.mem.Allocator, config: *Config, out: *std.Io.Writer) bool {
    _ = context;
    var diagnostic: cli.Diagnostic = .{};
    const path = reload_path;
    var problems: config_file.Problems = .{};
    var base: Config = .{};
    config_file.load(arena, path, &base, &problems) catch |err| {
        for (problems.slice()) |problem| {
            out.print("{s}:{d}:{d}: {s}\n", .{ path, problem.position.line, problem.position.column, problem.message }) catch {};
        }
        if (problems.dropped > 0) out.print("{s}: {d} more problems\n", .{ path, problems.dropped }) catch {};
        if (err == error.OutOfMemory) out.print("{s}: out of memory reading it\n", .{path}) catch {};
        return false;
    };
    const parsed = cli.parseOnto(reload_args, base, &diagnostic) catch {
        out.print("{s}: {s}\n", .{ diagnostic.flag, diagnostic.message() }) catch {};
        return false;
    };
    config.* = parsed.config;
    return true;
}

/// Config text and the strings Config points into live for the process: an arena that is
/// never freed, allocated from before the allocator is sealed.
var config_arena: std.heap.ArenaAllocator = undefined;

/// Evaluated by the compiler: a baked config is already a value in the binary's data, and one
/// that does not validate fails the build.
const baked_config: Config = if (baked.present) blk: {
    const config = baked.build(Config);
    config.validate() catch |err| @compileError("baked config: " ++ @errorName(err));
    break :blk config;
} else .{};

/// `sluice check FILE`: every problem as `FILE:LINE:COLUMN: message`, exit 1; else exit 0.
fn checkFile(path: []const u8) u8 {
    var config: Config = .{};
    if (!loadFile(path, &config)) return 1;
    log.stdout(path);
    log.stdout(": ok\n");
    return 0;
}

fn loadFile(path: []const u8, config: *Config) bool {
    config_arena = .init(static_allocator.allocator());
    var problems: config_file.Problems = .{};
    config_file.load(config_arena.allocator(), path, config, &problems) catch |err| {
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

/// Two built-in backends on loopback, with the proxy in front on 127.0.0.1:8080 unless
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
        pool.addBackend(.{ .address = backend.address }) catch unreachable; // Two fit.
    }
    return true;
}

test {
    _ = @import("unit_tests.zig");
}
