//! The one start-up path and the control thread. Start-up: size and allocate every worker,
//! bind every listener (the first decides the port when 0 was asked for), start the workers
//! and wait until each accepts, then seal the allocator. After that the control thread only
//! waits for signals: SIGTERM/SIGINT drain (a second one exits at once), SIGUSR2 prints
//! counters, SIGHUP is acknowledged (reload arrives with config files, issue 4).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const sys = @import("../stdx/sys.zig");
const Config = @import("../config/Config.zig");
const Worker = @import("Worker.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Loop = @import("../loop/loop.zig").Loop;
const signals = @import("signals.zig");
const log = @import("log.zig");

/// How often the control thread looks at the workers while draining.
const drain_poll_ms = 20;

pub const Runtime = struct {
    static: *StaticAllocator,
    config: *Config,
    workers: []Worker,
    signal_set: signals.Set,
    listen_address: Address,
};

pub const Options = struct {
    /// Print how to try the demo once the port is known.
    demo: bool = false,
};

/// Runs until drained. Returns the process exit code.
pub fn run(static: *StaticAllocator, config: *Config, options: Options) u8 {
    var runtime = switch (start(static, config, options)) {
        .running => |runtime| runtime,
        .failed => |exit_code| return exit_code,
    };
    return superviseUntilDrained(&runtime);
}

pub const Started = union(enum) {
    running: Runtime,
    /// Start-up failed (already logged); the process exit code.
    failed: u8,
};

/// Everything up to the first accept: size, allocate, bind, start the workers, seal the
/// allocator. Also used by the end-to-end benchmark, which drives the runtime in-process.
pub fn start(static: *StaticAllocator, config: *Config, options: Options) Started {
    const allocator = static.allocator();
    if (config.workers_count == 0) {
        const cpus = std.Thread.getCpuCount() catch 1;
        config.workers_count = @intCast(std.math.clamp(cpus, 1, Config.workers_count_max));
    }
    config.validate() catch |err| {
        log.line("invalid configuration: {s}", .{@errorName(err)});
        return .{ .failed = 2 };
    };
    const signal_set = signals.Set.init() catch |err| {
        log.line("cannot set up signal handling: {s}", .{@errorName(err)});
        return .{ .failed = 1 };
    };

    const workers = allocator.alloc(Worker, config.workers_count) catch {
        log.line("out of memory allocating {d} workers", .{config.workers_count});
        return .{ .failed = 1 };
    };
    var listen_address = config.listen;
    for (workers, 0..) |*worker, i| {
        const fd = Worker.listen(&listen_address) catch |err| {
            var text: [Address.text_bytes_max]u8 = undefined;
            log.line(
                "cannot listen on {s}: {s}",
                .{ listen_address.toText(&text), @errorName(err) },
            );
            return .{ .failed = 1 };
        };
        if (i == 0 and listen_address.getPort() == 0) {
            // Port 0: the kernel chose; every other worker binds the same port.
            var storage: linux.sockaddr.storage = undefined;
            _ = sys.getsockname(fd, &storage) catch |err| {
                log.line("getsockname failed: {s}", .{@errorName(err)});
                return .{ .failed = 1 };
            };
            listen_address.setPort(Address.fromStorage(&storage).getPort());
        }
        worker.init(allocator, config, @intCast(i), config.workers_count, fd) catch |err| {
            log.line(
                "cannot allocate worker {d} ({d} connections): {s}",
                .{ i, Proxy.sessionsCount(config, config.workers_count), @errorName(err) },
            );
            return .{ .failed = 1 };
        };
    }
    for (workers) |*worker| {
        worker.spawn() catch |err| {
            log.line("cannot start worker thread: {s}", .{@errorName(err)});
            return .{ .failed = 1 };
        };
    }
    for (workers) |*worker| {
        while (worker.ready.load(.acquire) == 0) std.Thread.yield() catch {}; // Start-up only.
        if (worker.init_error) |err| {
            log.line(
                "worker {d}: cannot start the event loop: {s}",
                .{ worker.index, Loop.initErrorReason(err) },
            );
            return .{ .failed = 1 };
        }
    }
    const first_loop = &workers[0].loop;
    if (first_loop.fallback_reason) |reason| {
        log.line("io_uring unavailable ({s}), using epoll", .{reason});
    }
    var text: [Address.text_bytes_max]u8 = undefined;
    log.line("listening on {s} (workers={d}, io={s})", .{
        listen_address.toText(&text),
        config.workers_count,
        @tagName(first_loop.backend),
    });
    if (options.demo) {
        log.line(
            "demo: try `curl http://{s}/` a few times and watch the backends alternate",
            .{listen_address.toText(&text)},
        );
    }
    static.seal();
    return .{ .running = .{
        .static = static,
        .config = config,
        .workers = workers,
        .signal_set = signal_set,
        .listen_address = listen_address,
    } };
}

fn superviseUntilDrained(runtime: *Runtime) u8 {
    while (true) {
        const signal = runtime.signal_set.wait(-1) orelse continue;
        switch (signal) {
            .terminate => return drain(runtime, "SIGTERM"),
            .interrupt => return drain(runtime, "SIGINT"),
            .user2 => printStats(runtime, "stats"),
            .hangup => log.line("SIGHUP: nothing to reload without a config file", .{}),
        }
    }
}

/// Stops accepting, lets in-flight exchanges finish, waits for the workers. Returns the exit
/// code. `reason` names what asked for it, for the log.
pub fn drain(runtime: *Runtime, reason: []const u8) u8 {
    log.line("{s}: draining (deadline {d} ms); a second signal exits at once", .{
        reason,
        runtime.config.drain_timeout_ns / std.time.ns_per_ms,
    });
    for (runtime.workers) |*worker| worker.requestDrain();
    const start_ns = sys.clockMonotonicNs();
    while (true) {
        if (allFinished(runtime.workers)) break;
        const elapsed_ns = sys.clockMonotonicNs() - start_ns;
        if (elapsed_ns >= runtime.config.drain_timeout_ns) {
            log.line(
                "drain deadline passed with {d} connections open; closing them",
                .{connectionsActive(runtime.workers)},
            );
            printStats(runtime, "exit");
            return 0;
        }
        if (runtime.signal_set.wait(drain_poll_ms)) |second| switch (second) {
            .terminate, .interrupt => {
                log.line(
                    "second signal: exiting now with {d} connections open",
                    .{connectionsActive(runtime.workers)},
                );
                printStats(runtime, "exit");
                return 1;
            },
            .user2 => printStats(runtime, "stats"),
            .hangup => {},
        };
    }
    for (runtime.workers) |*worker| if (worker.thread) |thread| thread.join();
    log.line("drained", .{});
    printStats(runtime, "exit");
    return 0;
}

fn allFinished(workers: []Worker) bool {
    for (workers) |*worker| if (!worker.finished.load(.acquire)) return false;
    return true;
}

fn connectionsActive(workers: []Worker) u32 {
    var total: u32 = 0;
    for (workers) |*worker| total += worker.connectionsActive();
    return total;
}

fn printStats(runtime: *Runtime, label: []const u8) void {
    var buffers_in_use: u32 = 0;
    for (runtime.workers) |*worker| {
        const buffers = &worker.proxy.buffers;
        buffers_in_use += buffers.totalCount() - buffers.availableCount();
    }
    log.line("{s} heap_allocations_after_startup={d} connections_active={d} buffers_in_use={d}", .{
        label,
        runtime.static.allocationsAfterStartup(),
        connectionsActive(runtime.workers),
        buffers_in_use,
    });
}
