//! The one start-up path and the control thread. Start-up: size and allocate every worker,
//! build the first configuration generation (its pools, and its listeners bound: the first
//! socket decides the port when 0 was asked for; runtime/generations.zig), start the workers
//! and wait until each accepts, then set up the control loop and the health checkers and seal
//! the allocator. After that the control thread runs its own event loop: active health checks
//! (started only now, so probes never delay the first accept) and signals: SIGTERM/SIGINT
//! drain (a second one exits at once), SIGUSR2 prints counters, SIGUSR1 reopens the access
//! log, SIGHUP reloads the config file (`reload`), and the admin listener when `--admin` asks
//! for one (runtime/Admin.zig), which is opened only now too and answers until the process
//! exits, through the drain (its `/healthz` then says 503).
//!
//! Decision: the control loop is always epoll, whatever `--io` says. It carries a few probes
//! a second and the signalfd, epoll costs one cheap syscall to create (an io_uring costs more
//! at start-up), and the workers' choice of backend stays theirs.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const sys = @import("../stdx/sys.zig");
const Config = @import("../config/Config.zig");
const Worker = @import("Worker.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Generation = @import("../proxy/Generation.zig");
const Pool = @import("../upstream/Pool.zig");
const generations_ns = @import("generations.zig");
const Generations = generations_ns.Generations;
const PidFile = @import("PidFile.zig");
const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const Health = @import("../health/Health.zig");
const Checker = @import("../health/Checker.zig");
const signals = @import("signals.zig");
const InitTrace = @import("InitTrace.zig");
const AccessLogWriter = @import("AccessLogWriter.zig");
const Admin = @import("Admin.zig");
const Snapshot = @import("../metrics/Snapshot.zig");
const log = @import("../stdx/log.zig");

/// How often the control thread looks at the workers while draining.
const drain_poll_ms = 20;
/// How often it looks for old generations to free after a reload.
const reap_ms = 100;

comptime {
    // metrics/ does not import config/: its bounds must be the configuration's.
    assert(Snapshot.backends_max == Config.backends_count_max);
    assert(Snapshot.pool_name_bytes_max == Config.pool_name_bytes_max);
    assert(Snapshot.address_bytes_max == Address.text_bytes_max);
    assert(Snapshot.pools_max == Config.pools_count_max);
    assert(Snapshot.routes_max == Config.routes_count_max);
    assert(Snapshot.route_name_bytes_max == Config.route_name_bytes_max);
}

pub const Runtime = struct {
    static: *StaticAllocator,
    /// The start-up configuration: what a reload may not change is read from here.
    config: *Config,
    generations: *Generations,
    workers: []Worker,
    signal_set: signals.Set,
    supervisor: *Supervisor,
    /// What `/metrics` and `/status` report.
    version: []const u8,
    started_ns: u64,
    options: Options,
    reloads: ReloadStats = .{},
};

pub const ReloadStats = struct {
    ok: u64 = 0,
    failed: u64 = 0,
    last_ok: bool = true,
    last_unix_seconds: u64 = 0,
};

/// The control thread's event loop and what runs on it until a drain begins.
pub const Supervisor = struct {
    loop: Loop,
    /// Null without `--admin`.
    admin: ?*Admin,
    /// Null without `--access-log`.
    access_log: ?*AccessLogWriter = null,
    /// While draining with an admin listener, the loop ticks at least this often (see
    /// `waitDuringDrain`).
    drain_poll_queue: TimerQueue = .init(drain_poll_ms * std.time.ns_per_ms),
    drain_poll_timer: Timer = .{},
    /// While old generations or retired pools wait to be freed (`Generations.reap`).
    reap_queue: TimerQueue = .init(reap_ms * std.time.ns_per_ms),
    reap_timer: Timer = .{},
    signal_socket: Socket,
    signal_completion: Completion = .{},
    /// Set by the supervision loop before it ticks.
    runtime: *Runtime = undefined,
    /// What asked for the drain, once something has.
    drain_reason: ?[]const u8 = null,
};

pub const Options = struct {
    /// Print how to try the demo once the port is known.
    demo: bool = false,
    /// The program's version, for `/metrics` and `/status`.
    version: []const u8 = "unknown",
    /// Written once the listeners accept, removed at a clean exit.
    pid_file: ?[]const u8 = null,
    /// How to load the configuration again (SIGHUP, `POST /reload`); null without a file.
    loader: ?Loader = null,
};

/// Loads the configuration file again, with the command line's flags over it as at start-up,
/// into `config`, whose strings go into `arena`. False when it has mistakes: each is a line
/// in `out` (`FILE:LINE:COLUMN: message`, as `sluice check` prints).
pub const Loader = struct {
    path: []const u8,
    context: ?*anyopaque = null,
    function: *const fn (context: ?*anyopaque, arena: std.mem.Allocator, config: *Config, out: *std.Io.Writer) bool,
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
    const started_ns = sys.clockMonotonicNs();
    const allocator = static.allocator();
    if (config.workers_count == 0) {
        const cpus = std.Thread.getCpuCount() catch 1;
        config.workers_count = @intCast(std.math.clamp(cpus, 1, Config.workers_count_max));
    }
    config.validate() catch |err| {
        log.err("invalid configuration: {s}", .{@errorName(err)});
        return .{ .failed = 2 };
    };
    const signal_set = signals.Set.init() catch |err| {
        log.err("cannot set up signal handling: {s}", .{@errorName(err)});
        return .{ .failed = 1 };
    };
    const trace = &InitTrace.global;
    trace.mark("validate");

    const workers = allocator.alloc(Worker, config.workers_count) catch {
        log.err("out of memory allocating {d} workers", .{config.workers_count});
        return .{ .failed = 1 };
    };
    const generations = initGenerations(allocator, config, workers) catch {
        log.err("out of memory allocating the workers' loops", .{});
        return .{ .failed = 1 };
    };
    var problem: generations_ns.Problem = .{};
    const first = generations.build(.init(std.heap.page_allocator), config, &problem) catch {
        log.err("{s}", .{problem.text()});
        return .{ .failed = 1 };
    };
    for (workers, 0..) |*worker, i| {
        worker.init(allocator, config, &first.generation, &generations.listeners, @intCast(i), config.workers_count) catch |err| {
            log.err(
                "cannot allocate worker {d} ({d} connections): {s}",
                .{ i, Proxy.sessionsCount(config, config.workers_count), @errorName(err) },
            );
            return .{ .failed = 1 };
        };
    }
    trace.mark("listen+allocate");
    for (workers) |*worker| {
        worker.spawn() catch |err| {
            log.err("cannot start worker thread: {s}", .{@errorName(err)});
            return .{ .failed = 1 };
        };
    }
    for (workers) |*worker| {
        _ = worker.waitReady(); // A failure to start leaves `init_error`.
        if (worker.init_error) |err| {
            log.err(
                "worker {d}: cannot start the event loop: {s}",
                .{ worker.index, Loop.initErrorReason(err) },
            );
            return .{ .failed = 1 };
        }
    }
    trace.mark("workers ready");
    const first_loop = &workers[0].loop;
    if (first_loop.fallback_reason) |reason| {
        log.warn("io_uring unavailable ({s}), using epoll", .{reason});
    }
    logListeners(generations, first, @intCast(workers.len), @tagName(first_loop.backend));
    if (options.demo) {
        var text: [Address.text_bytes_max]u8 = undefined;
        const address = &generations.listeners.slots[first.generation.listener_slots[0]].bound;
        log.info(
            "demo: try `curl http://{s}/` a few times and watch the backends alternate",
            .{address.toText(&text)},
        );
    }
    const supervisor = initSupervisor(allocator, config, &first.generation, signal_set) catch |err| {
        log.err("cannot set up the control loop: {s}", .{@errorName(err)});
        return .{ .failed = 1 };
    };
    if (config.access_log.enabled()) {
        // Opened once the listeners accept: a log file never delays the first request.
        const writer = allocator.create(AccessLogWriter) catch {
            log.err("out of memory setting up the access log", .{});
            return .{ .failed = 1 };
        };
        writer.* = AccessLogWriter.init(allocator, config.access_log.target, workers) catch
            return .{ .failed = 1 }; // Logged by init.
        supervisor.access_log = writer;
    }
    static.seal();
    trace.mark("control loop");
    if (options.pid_file) |path| {
        PidFile.write(path, linux.getpid()) catch |err| {
            log.err("cannot write the pid file {s}: {s}", .{ path, @errorName(err) });
            return .{ .failed = 1 };
        };
    }
    return .{ .running = .{
        .static = static,
        .config = config,
        .generations = generations,
        .workers = workers,
        .signal_set = signal_set,
        .supervisor = supervisor,
        .version = options.version,
        .started_ns = started_ns,
        .options = options,
    } };
}

/// Where the first listener of the current generation is bound (its port chosen, if 0 was
/// asked for).
pub fn firstListenAddress(runtime: *const Runtime) Address {
    const generations = runtime.generations;
    const slot = generations.current().generation.listener_slots[0];
    return generations.listeners.slots[slot].bound;
}

fn initGenerations(allocator: std.mem.Allocator, config: *const Config, workers: []Worker) !*Generations {
    const loops = try allocator.alloc(*Loop, workers.len);
    for (loops, workers) |*loop, *worker| loop.* = &worker.loop;
    const generations = try allocator.create(Generations);
    generations.* = .{
        .loops = loops,
        .sessions_count = Proxy.sessionsCount(config, @intCast(workers.len)),
    };
    return generations;
}

/// One line per listener a generation opened, in its config's order.
fn logListeners(generations: *const Generations, built: *const generations_ns.Built, workers_count: u32, io: []const u8) void {
    const listeners = built.generation.config.listeners();
    for (listeners, built.generation.listener_slots) |*listener, slot| {
        if (built.opened & (@as(u32, 1) << @intCast(slot)) == 0) continue;
        var text: [Address.text_bytes_max]u8 = undefined;
        const address = generations.listeners.slots[slot].bound.toText(&text);
        if (listener.name.len > 0) {
            log.info("listening on {s} (workers={d}, io={s}) listener={s}", .{ address, workers_count, io, listener.name });
        } else {
            log.info("listening on {s} (workers={d}, io={s})", .{ address, workers_count, io });
        }
    }
}

fn initSupervisor(
    allocator: std.mem.Allocator,
    config: *const Config,
    first: *const Generation,
    signal_set: signals.Set,
) !*Supervisor {
    const supervisor = try allocator.create(Supervisor);
    supervisor.* = .{
        .loop = try Loop.init(.{ .mode = .epoll }),
        .admin = null,
        .signal_socket = Socket.init(signal_set.fd),
    };
    supervisor.loop.timerQueueRegister(&supervisor.drain_poll_queue);
    supervisor.loop.timerQueueRegister(&supervisor.reap_queue);
    if (config.admin.enabled) {
        // Allocated now, with everything else; bound once the workers accept.
        const admin = try allocator.create(Admin);
        try admin.init(allocator, &supervisor.loop, .{
            .address = config.admin.listen,
            .collector = .{ .context = supervisor, .function = collectSnapshot },
            .reloader = .{ .context = supervisor, .function = adminReloadCallback },
        });
        supervisor.admin = admin;
    }
    // Started once the workers accept (`superviseUntilDrained`).
    for (first.pools) |instance| try initChecker(&supervisor.loop, instance);
    return supervisor;
}

/// The pool's active checker, if it has checks, seeded with what its backends' health already
/// says (a rebuilt pool keeps a down backend down until `rise` passes).
fn initChecker(loop: *Loop, instance: *Pool) !void {
    if (!instance.config.health.enabled()) return;
    const arena = instance.arena.allocator();
    const checker = try arena.create(Checker);
    try checker.init(arena, loop, &instance.config.health, instance.config.backends(), .{
        .context = &instance.shared.health,
        .function = healthReportCallback,
    });
    for (0..instance.config.backends_count) |index| {
        const up = instance.shared.health.backends[index].active_up.load(.acquire);
        checker.setInitialUp(@intCast(index), up);
    }
    instance.checker = checker;
}

/// An active check's result, handed to the pool's health (see health/Health.zig for how
/// active and passive results are reconciled).
fn healthReportCallback(context: *anyopaque, report: Checker.Report) void {
    const health: *Health = @ptrCast(@alignCast(context));
    if (report.changed) health.setActive(report.backend_index, report.up, report.reason);
    if (report.passed) health.activePassed(report.backend_index) else health.activeFailed(report.backend_index);
}

fn superviseUntilDrained(runtime: *Runtime) u8 {
    const supervisor = runtime.supervisor;
    supervisor.runtime = runtime;
    for (runtime.generations.current().generation.pools) |instance| {
        if (instance.checker) |checker| checker.start();
    }
    if (supervisor.access_log) |writer| writer.start(&supervisor.loop);
    if (supervisor.admin) |admin| {
        admin.start() catch |err| {
            var text: [Address.text_bytes_max]u8 = undefined;
            log.err("cannot listen on {s} (admin): {s}; draining", .{
                admin.address.toText(&text), sys.listenerErrorText(err),
            });
            stopChecks(supervisor);
            _ = drain(runtime, "admin listener failure");
            return 1; // A run-time failure, as a port in use for the proxy is.
        };
        var text: [Address.text_bytes_max]u8 = undefined;
        log.info("admin listening on {s}", .{admin.address.toText(&text)});
    }
    armSignals(supervisor);
    while (supervisor.drain_reason == null) {
        supervisor.loop.tick() catch |err| {
            log.err("control loop failed: {s}; draining", .{@errorName(err)});
            supervisor.drain_reason = "control loop failure";
        };
    }
    stopChecks(supervisor);
    return drain(runtime, supervisor.drain_reason.?);
}

fn armSignals(supervisor: *Supervisor) void {
    supervisor.loop.pollReadable(
        &supervisor.signal_completion,
        &supervisor.signal_socket,
        Supervisor,
        supervisor,
        signalReadableCallback,
    );
}

fn signalReadableCallback(supervisor: *Supervisor, result: loop_ns.PollError!void) void {
    result catch |err| {
        log.err("cannot read signals: {s}; draining", .{@errorName(err)});
        supervisor.drain_reason = "signalfd failure";
        return;
    };
    const runtime = supervisor.runtime;
    while (runtime.signal_set.wait(0)) |signal| switch (signal) {
        .terminate => supervisor.drain_reason = "SIGTERM",
        .interrupt => supervisor.drain_reason = "SIGINT",
        .user2 => printStats(runtime, "stats"),
        .user1 => if (supervisor.access_log) |writer| writer.reopen(),
        .hangup => reloadAndLog(runtime),
    };
    if (supervisor.drain_reason != null) return; // drain() reads the signalfd itself.
    armSignals(supervisor);
}

// ---------------------------------------------------------------------------------------------
// Reload

/// SIGHUP: reload, and log the outcome (one line per problem when it fails).
fn reloadAndLog(runtime: *Runtime) void {
    var buffer: [8 * 1024]u8 = undefined;
    var out: std.Io.Writer = .fixed(&buffer);
    _ = reload(runtime, &out);
}

/// `POST /reload` on the admin listener: the same, with the outcome as the response.
fn adminReloadCallback(context: *anyopaque, out: *std.Io.Writer) bool {
    const supervisor: *Supervisor = @ptrCast(@alignCast(context));
    return reload(supervisor.runtime, out);
}

/// Loads the config file again and, when it is valid and changes nothing that needs a restart,
/// builds and publishes the next generation. The outcome is logged and written to `out`; on
/// failure nothing changed and the current generation keeps serving.
fn reload(runtime: *Runtime, out: *std.Io.Writer) bool {
    const succeeded = tryReload(runtime, out);
    runtime.reloads.last_ok = succeeded;
    runtime.reloads.last_unix_seconds = @intCast(@max(0, sys.clockRealtimeSeconds()));
    if (succeeded) runtime.reloads.ok += 1 else runtime.reloads.failed += 1;
    const current = runtime.generations.current().generation.number;
    var lines = std.mem.splitScalar(u8, out.buffered(), '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        if (succeeded) log.info("{s}", .{line}) else log.err("reload failed: {s}", .{line});
    }
    if (!succeeded) {
        log.err("reload failed: still serving generation {d}", .{current});
        out.print("still serving generation {d}\n", .{current}) catch {};
    }
    return succeeded;
}

fn tryReload(runtime: *Runtime, out: *std.Io.Writer) bool {
    const loader = runtime.options.loader orelse {
        out.writeAll("nothing to reload: sluice was started without --config\n") catch {};
        return false;
    };
    if (runtime.supervisor.drain_reason != null) {
        out.writeAll("draining: not reloading\n") catch {};
        return false;
    }
    var arena: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    var keep_arena = false;
    defer if (!keep_arena) arena.deinit();
    const config = arena.allocator().create(Config) catch {
        out.writeAll("out of memory loading the configuration\n") catch {};
        return false;
    };
    config.* = .{};
    if (!loader.function(loader.context, arena.allocator(), config, out)) return false;
    if (config.workers_count == 0) config.workers_count = runtime.config.workers_count; // As resolved.
    config.validate() catch |err| {
        out.print("{s}: invalid configuration: {s}\n", .{ loader.path, @errorName(err) }) catch {};
        return false;
    };
    if (generations_ns.restartOnlyChange(runtime.config, config)) |name| {
        out.print("{s}: {s} changed, which needs a restart (see docs/CONFIG.md, Reload)\n", .{ loader.path, name }) catch {};
        return false;
    }
    var problem: generations_ns.Problem = .{};
    keep_arena = true; // The build owns it now, failing or not.
    const built = runtime.generations.build(arena, config, &problem) catch {
        out.print("{s}\n", .{problem.text()}) catch {};
        return false;
    };
    const generation = &built.generation;
    const supervisor = runtime.supervisor;
    for (generation.pools) |instance| {
        if (instance.refs != 1 or instance.checker != null) continue; // Kept, with its checker.
        initChecker(&supervisor.loop, instance) catch {
            log.warn("pool {s}: out of memory for its health checker; no active checks", .{instance.config.name});
            continue;
        };
        if (instance.checker) |checker| checker.start(); // Null: the pool has no checks.
    }
    for (runtime.workers) |*worker| worker.publish(&built.generation);
    log.setLevel(config.log_level);
    logListeners(runtime.generations, built, @intCast(runtime.workers.len), @tagName(runtime.workers[0].loop.backend));
    armReap(supervisor);
    out.print("reloaded {s}: generation {d} ({d} pools: {d} kept, {d} rebuilt; {d} listeners, {d} opened; {d} routes)\n", .{
        loader.path,
        generation.number,
        generation.pools.len,
        generation.pools.len - built.pools_new,
        built.pools_new,
        generation.listener_slots.len,
        @popCount(built.opened),
        generation.config.routes_count,
    }) catch {};
    return true;
}

fn armReap(supervisor: *Supervisor) void {
    if (supervisor.reap_timer.isArmed()) return;
    supervisor.loop.timerArm(&supervisor.reap_queue, &supervisor.reap_timer, Supervisor, supervisor, reapCallback);
}

/// Frees what the workers have let go of; again shortly while something is left.
fn reapCallback(supervisor: *Supervisor) void {
    if (supervisor.runtime.generations.reap()) armReap(supervisor);
}

/// Health checks end when the drain begins: their sockets close, nothing probes a backend
/// of a proxy that is going away.
fn stopChecks(supervisor: *Supervisor) void {
    const generations = supervisor.runtime.generations;
    for (generations.live[0..generations.live_count]) |built| {
        for (built.generation.pools) |instance| if (instance.checker) |checker| checker.stop();
    }
    var ticks: u32 = 0;
    while (ticks < 100 and !checksStopped(generations)) : (ticks += 1) {
        supervisor.loop.tick() catch break; // Exiting anyway; the kernel closes what is left.
    }
}

fn checksStopped(generations: *const Generations) bool {
    for (generations.live[0..generations.live_count]) |built| {
        for (built.generation.pools) |instance| {
            if (instance.checker) |checker| if (!checker.stopped()) return false;
        }
    }
    return true;
}

/// Stops accepting, lets in-flight exchanges finish, waits for the workers. Returns the exit
/// code. `reason` names what asked for it, for the log.
pub fn drain(runtime: *Runtime, reason: []const u8) u8 {
    log.info("{s}: draining (deadline {d} ms); a second signal exits at once", .{
        reason,
        runtime.config.drain_timeout_ns / std.time.ns_per_ms,
    });
    for (runtime.workers) |*worker| worker.requestDrain();
    if (runtime.supervisor.admin) |admin| admin.draining = true;
    const start_ns = sys.clockMonotonicNs();
    while (true) {
        if (allFinished(runtime.workers)) break;
        const elapsed_ns = sys.clockMonotonicNs() - start_ns;
        if (elapsed_ns >= runtime.config.drain_timeout_ns) {
            log.warn(
                "drain deadline passed with {d} connections open; closing them",
                .{connectionsActive(runtime.workers)},
            );
            if (runtime.supervisor.access_log) |writer| writer.flush(); // What was handed over.
            printStats(runtime, "exit");
            return 0;
        }
        if (waitDuringDrain(runtime)) |second| switch (second) {
            .terminate, .interrupt => {
                log.warn(
                    "second signal: exiting now with {d} connections open",
                    .{connectionsActive(runtime.workers)},
                );
                if (runtime.supervisor.access_log) |writer| writer.flush();
                printStats(runtime, "exit");
                return 1;
            },
            .user2 => printStats(runtime, "stats"),
            .user1 => if (runtime.supervisor.access_log) |writer| writer.reopen(),
            .hangup => {},
        };
        // The control loop may not tick while draining: keep the workers' lines moving.
        if (runtime.supervisor.access_log) |writer| writer.flush();
    }
    for (runtime.workers) |*worker| if (worker.thread) |thread| thread.join();
    if (runtime.supervisor.access_log) |writer| writer.finish();
    if (runtime.options.pid_file) |path| PidFile.remove(path);
    log.info("drained", .{});
    printStats(runtime, "exit");
    return 0;
}

/// Waits up to `drain_poll_ms` for a signal. With an admin listener the control loop ticks
/// meanwhile, so the listener keeps answering (`/healthz` says 503) while the workers finish.
fn waitDuringDrain(runtime: *Runtime) ?signals.Signal {
    const supervisor = runtime.supervisor;
    const admin = supervisor.admin orelse return runtime.signal_set.wait(drain_poll_ms);
    if (!admin.running()) return runtime.signal_set.wait(drain_poll_ms);
    const loop = &supervisor.loop;
    loop.timerArm(&supervisor.drain_poll_queue, &supervisor.drain_poll_timer, Supervisor, supervisor, drainPollCallback);
    loop.tick() catch |err| {
        log.err("control loop failed during the drain: {s}", .{@errorName(err)});
        admin.stop(); // Nothing ticks it again; its sockets close with the process.
    };
    loop.timerCancel(&supervisor.drain_poll_timer);
    return runtime.signal_set.wait(0);
}

/// Only bounds the tick in `waitDuringDrain`.
fn drainPollCallback(supervisor: *Supervisor) void {
    _ = supervisor;
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

/// One line of counters (SIGUSR2, and at exit). Worker counters are `Counter`s, read with
/// relaxed loads: each is a word written by one thread, so a read is at worst a moment old.
/// Pool counters are the current generation's pools'.
fn printStats(runtime: *Runtime, label: []const u8) void {
    var buffers_in_use: u32 = 0;
    for (runtime.workers) |*worker| {
        const buffers = &worker.proxy.buffers;
        buffers_in_use += buffers.totalCount() - buffers.availableCount();
    }
    var retries: u64 = 0;
    var retries_refused: u64 = 0;
    var inflight: u64 = 0;
    var upstream_open: u64 = 0;
    var ejections: u64 = 0;
    var available: u64 = 0;
    const generations = runtime.generations;
    var seen: [Proxy.holds_max * Config.pools_count_max]*const Pool = undefined;
    var seen_count: usize = 0;
    for (generations.live[0..generations.live_count], 0..) |built, i| {
        for (built.generation.pools) |instance| {
            // An instance kept by several live generations is counted once.
            if (std.mem.indexOfScalar(*const Pool, seen[0..seen_count], instance) != null) continue;
            seen[seen_count] = instance;
            seen_count += 1;
            for (instance.locals) |*upstream| {
                retries += upstream.stats.retries.load();
                retries_refused += upstream.stats.retries_refused_by_budget.load();
                for (&upstream.inflight) |*count| inflight += @atomicLoad(u32, count, .monotonic);
            }
            const shared = &instance.shared;
            for (shared.connections[0..instance.config.backends_count]) |*count| {
                upstream_open += count.load(.monotonic);
            }
            if (i == generations.live_count - 1) {
                ejections += shared.health.stats.ejections.load(.monotonic);
                available += @popCount(shared.health.available.load(.monotonic));
            }
        }
    }
    log.info("{s} heap_allocations_after_startup={d} connections_active={d} buffers_in_use={d} " ++
        "upstream_requests_in_flight={d} upstream_connections_open={d} retries={d} " ++
        "retries_refused_by_budget={d} ejections={d} backends_available={d} config_generation={d}", .{
        label,
        runtime.static.allocationsAfterStartup(),
        connectionsActive(runtime.workers),
        buffers_in_use,
        inflight,
        upstream_open,
        retries,
        retries_refused,
        ejections,
        available,
        generations.current().generation.number,
    });
}

/// Fills the admin listener's snapshot (`Admin.Collector`): what `printStats` prints and
/// more, summed over the workers, for the current generation's pools and routes. Worker
/// counters are read as `printStats` reads them (see there, and metrics/Histogram.zig for the
/// histogram).
fn collectSnapshot(context: *anyopaque, snapshot: *Snapshot) void {
    const supervisor: *Supervisor = @ptrCast(@alignCast(context));
    const runtime = supervisor.runtime;
    const generation = &runtime.generations.current().generation;
    assert(runtime.version.len <= Snapshot.version_bytes_max);
    snapshot.* = .{
        .version = runtime.version,
        .uptime_ns = sys.clockMonotonicNs() -| runtime.started_ns,
        .workers_count = @intCast(runtime.workers.len),
        .io = @tagName(runtime.workers[0].loop.backend),
        .heap_allocations_after_startup = runtime.static.allocationsAfterStartup(),
        .connections_active = connectionsActive(runtime.workers),
        .config_generation = generation.number,
        .reloads_ok = runtime.reloads.ok,
        .reloads_failed = runtime.reloads.failed,
        .last_reload_ok = runtime.reloads.last_ok,
        .last_reload_unix_seconds = runtime.reloads.last_unix_seconds,
        .pools_count = @intCast(generation.pools.len),
        .routes_count = generation.config.routes_count,
    };
    for (runtime.workers) |*worker| addWorker(snapshot, worker);
    for (generation.pools, snapshot.pools[0..generation.pools.len]) |instance, *pool| addPool(pool, instance);
    for (snapshot.routes[0..generation.config.routes_count], 0..) |*route, index| {
        route.* = .{ .name = routeName(generation, index), .requests = 0 };
        for (generation.route_requests) |row| route.requests += row[index].load();
    }
}

/// A route's label: its name, else its position.
fn routeName(generation: *const Generation, index: usize) []const u8 {
    const route = &generation.config.routes()[index];
    if (route.name.len > 0) return route.name;
    const positions = comptime blk: {
        @setEvalBranchQuota(100_000);
        var names: [Config.routes_count_max][]const u8 = undefined;
        for (&names, 0..) |*name, i| name.* = std.fmt.comptimePrint("{d}", .{i});
        break :blk names;
    };
    return positions[index];
}

fn addPool(pool: *Snapshot.Pool, instance: *const Pool) void {
    const config = &instance.config;
    const shared = &instance.shared;
    assert(config.name.len <= Snapshot.pool_name_bytes_max); // Config.validate.
    pool.* = .{
        .name = config.name,
        .strategy = @tagName(config.strategy),
        .backends_count = config.backends_count,
    };
    for (pool.backends[0..config.backends_count], config.backends(), 0..) |*backend, *configured, i| {
        const health = &shared.health.backends[i];
        backend.* = .{
            .address = health.name(),
            .weight = configured.weight,
            .available = shared.health.isAvailable(@intCast(i)),
            .active_up = health.active_up.load(.acquire),
            .state = switch (health.state.load(.acquire)) {
                .serving => .serving,
                .ejected => .ejected,
                .trial => .trial,
            },
            .connections_open = shared.connections[i].load(.monotonic),
            .in_flight = 0,
            .responses = @splat(0),
        };
    }
    const counters = &pool.counters;
    for (instance.locals) |*upstream| {
        const stats = &upstream.stats;
        counters.requests += stats.requests.load();
        counters.upstream_connect_failures += stats.upstream_connect_failures.load();
        counters.upstream_errors += stats.upstream_errors.load();
        counters.upstream_stale_retries += stats.upstream_stale_retries.load();
        counters.retries += stats.retries.load();
        counters.retries_refused_by_budget += stats.retries_refused_by_budget.load();
        counters.overloaded += stats.overloaded.load();
        counters.no_backend_available += stats.no_backend_available.load();
        counters.upgrades += stats.upgrades.load();
        const conns = &upstream.connections.stats;
        counters.upstream_pool_hits += conns.reused.load();
        counters.upstream_pool_misses += conns.opened.load();
        counters.upstream_idle_closed_by_backend += conns.closed_idle_by_backend.load();
        counters.upstream_idle_closed_timeout += conns.closed_idle_timeout.load();
        pool.latency.addRelaxed(&stats.latency);
        for (&pool.own_responses, &stats.own_responses) |*sum, *count| sum.* += count.load();
        for (pool.backends[0..pool.backends_count], 0..) |*backend, i| {
            backend.in_flight += @atomicLoad(u32, &upstream.inflight[i], .monotonic);
            backend.requests += stats.backend_requests[i].load();
            for (&backend.responses, &stats.backend_responses[i]) |*sum, *count| sum.* += count.load();
        }
    }
    const health_stats = &shared.health.stats;
    counters.ejections = health_stats.ejections.load(.monotonic);
    counters.ejections_refused_by_cap = health_stats.ejections_refused_by_cap.load(.monotonic);
    counters.ejection_trials = health_stats.trials.load(.monotonic);
}

/// Adds one worker's own counters into `snapshot`.
fn addWorker(snapshot: *Snapshot, worker: *Worker) void {
    const proxy = &worker.proxy;
    const stats = &proxy.stats;
    snapshot.connections_accepted += worker.connections_accepted.load();
    snapshot.buffers_in_use += proxy.buffers.totalCount() - proxy.buffers.availableCount();
    snapshot.client_errors += stats.client_errors.load();
    snapshot.client_timeouts += stats.client_timeouts.load();
    snapshot.idle_parks += stats.idle_parks.load();
    snapshot.buffers_trimmed += stats.buffers_trimmed.load();
    snapshot.requests_unrouted += stats.requests_unrouted.load();
    snapshot.local_responses += stats.local_responses.load();
    if (proxy.access_log) |*access_log| snapshot.access_log_dropped += access_log.dropped.load(.monotonic);
}
