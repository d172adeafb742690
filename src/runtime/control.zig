//! The one start-up path and the control thread. Start-up: size and allocate every worker,
//! bind every listener (the first decides the port when 0 was asked for), start the workers
//! and wait until each accepts, then set up the control loop and the health checker and seal
//! the allocator. After that the control thread runs its own event loop: active health checks
//! (started only now, so probes never delay the first accept) and signals: SIGTERM/SIGINT
//! drain (a second one exits at once), SIGUSR2 prints counters, SIGHUP is acknowledged
//! (reload arrives with config files, issue 4), and the admin listener when `--admin` asks for
//! one (runtime/Admin.zig), which is opened only now too and answers until the process exits,
//! through the drain (its `/healthz` then says 503).
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
const Shared = @import("../upstream/Shared.zig");
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

comptime {
    // metrics/ imports only std: its bounds must be the configuration's.
    assert(Snapshot.backends_max == Config.backends_count_max);
    assert(Snapshot.pool_name_bytes_max == Config.pool_name_bytes_max);
    assert(Snapshot.address_bytes_max == Address.text_bytes_max);
}

pub const Runtime = struct {
    static: *StaticAllocator,
    config: *Config,
    shared: *Shared,
    workers: []Worker,
    signal_set: signals.Set,
    listen_address: Address,
    supervisor: *Supervisor,
    /// What `/metrics` and `/status` report.
    version: []const u8,
    started_ns: u64,
};

/// The control thread's event loop and what runs on it until a drain begins.
pub const Supervisor = struct {
    loop: Loop,
    /// Null when the pool has no active checks.
    checker: ?*Checker,
    /// Null without `--admin`.
    admin: ?*Admin,
    /// Null without `--access-log`.
    access_log: ?*AccessLogWriter = null,
    /// While draining with an admin listener, the loop ticks at least this often (see
    /// `waitDuringDrain`).
    drain_poll_queue: TimerQueue = .init(drain_poll_ms * std.time.ns_per_ms),
    drain_poll_timer: Timer = .{},
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
        log.line("invalid configuration: {s}", .{@errorName(err)});
        return .{ .failed = 2 };
    };
    const signal_set = signals.Set.init() catch |err| {
        log.line("cannot set up signal handling: {s}", .{@errorName(err)});
        return .{ .failed = 1 };
    };
    const trace = &InitTrace.global;
    trace.mark("validate");

    const shared = allocator.create(Shared) catch {
        log.line("out of memory allocating the pool state", .{});
        return .{ .failed = 1 };
    };
    shared.init(allocator, &config.pool) catch {
        log.line("out of memory allocating the pool state", .{});
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
        worker.init(allocator, config, shared, @intCast(i), config.workers_count, fd) catch |err| {
            log.line(
                "cannot allocate worker {d} ({d} connections): {s}",
                .{ i, Proxy.sessionsCount(config, config.workers_count), @errorName(err) },
            );
            return .{ .failed = 1 };
        };
    }
    trace.mark("listen+allocate");
    for (workers) |*worker| {
        worker.spawn() catch |err| {
            log.line("cannot start worker thread: {s}", .{@errorName(err)});
            return .{ .failed = 1 };
        };
    }
    for (workers) |*worker| {
        _ = worker.waitReady(); // A failure to start leaves `init_error`.
        if (worker.init_error) |err| {
            log.line(
                "worker {d}: cannot start the event loop: {s}",
                .{ worker.index, Loop.initErrorReason(err) },
            );
            return .{ .failed = 1 };
        }
    }
    trace.mark("workers ready");
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
    const supervisor = initSupervisor(allocator, config, shared, signal_set) catch |err| {
        log.line("cannot set up the control loop: {s}", .{@errorName(err)});
        return .{ .failed = 1 };
    };
    if (config.access_log.enabled()) {
        // Opened once the listeners accept: a log file never delays the first request.
        const writer = allocator.create(AccessLogWriter) catch {
            log.line("out of memory setting up the access log", .{});
            return .{ .failed = 1 };
        };
        writer.* = AccessLogWriter.init(allocator, config.access_log.target, workers) catch
            return .{ .failed = 1 }; // Logged by init.
        supervisor.access_log = writer;
    }
    static.seal();
    trace.mark("control loop");
    return .{ .running = .{
        .static = static,
        .config = config,
        .shared = shared,
        .workers = workers,
        .signal_set = signal_set,
        .listen_address = listen_address,
        .supervisor = supervisor,
        .version = options.version,
        .started_ns = started_ns,
    } };
}

fn initSupervisor(
    allocator: std.mem.Allocator,
    config: *const Config,
    shared: *Shared,
    signal_set: signals.Set,
) !*Supervisor {
    const supervisor = try allocator.create(Supervisor);
    supervisor.* = .{
        .loop = try Loop.init(.{ .mode = .epoll }),
        .checker = null,
        .admin = null,
        .signal_socket = Socket.init(signal_set.fd),
    };
    supervisor.loop.timerQueueRegister(&supervisor.drain_poll_queue);
    if (config.admin.enabled) {
        // Allocated now, with everything else; bound once the workers accept.
        const admin = try allocator.create(Admin);
        try admin.init(allocator, &supervisor.loop, .{
            .address = config.admin.listen,
            .backends_count = config.pool.backends_count,
            .collector = .{ .context = supervisor, .function = collectSnapshot },
        });
        supervisor.admin = admin;
    }
    if (config.pool.health.enabled()) {
        const checker = try allocator.create(Checker);
        try checker.init(allocator, &supervisor.loop, &config.pool.health, config.pool.backends(), .{
            .context = &shared.health,
            .function = healthReportCallback,
        });
        supervisor.checker = checker;
    }
    return supervisor;
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
    if (supervisor.checker) |checker| checker.start();
    if (supervisor.access_log) |writer| writer.start(&supervisor.loop);
    if (supervisor.admin) |admin| {
        admin.start() catch |err| {
            var text: [Address.text_bytes_max]u8 = undefined;
            log.line("cannot listen on {s} (admin): {s}; draining", .{
                admin.address.toText(&text), @errorName(err),
            });
            stopChecks(supervisor);
            _ = drain(runtime, "admin listener failure");
            return 1; // A run-time failure, as a port in use for the proxy is.
        };
        var text: [Address.text_bytes_max]u8 = undefined;
        log.line("admin listening on {s}", .{admin.address.toText(&text)});
    }
    armSignals(supervisor);
    while (supervisor.drain_reason == null) {
        supervisor.loop.tick() catch |err| {
            log.line("control loop failed: {s}; draining", .{@errorName(err)});
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
        log.line("cannot read signals: {s}; draining", .{@errorName(err)});
        supervisor.drain_reason = "signalfd failure";
        return;
    };
    const runtime = supervisor.runtime;
    while (runtime.signal_set.wait(0)) |signal| switch (signal) {
        .terminate => supervisor.drain_reason = "SIGTERM",
        .interrupt => supervisor.drain_reason = "SIGINT",
        .user2 => printStats(runtime, "stats"),
        .user1 => if (supervisor.access_log) |writer| writer.reopen(),
        .hangup => log.line("SIGHUP: nothing to reload without a config file", .{}),
    };
    if (supervisor.drain_reason != null) return; // drain() reads the signalfd itself.
    armSignals(supervisor);
}

/// Health checks end when the drain begins: their sockets close, nothing probes a backend
/// of a proxy that is going away.
fn stopChecks(supervisor: *Supervisor) void {
    const checker = supervisor.checker orelse return;
    checker.stop();
    var ticks: u32 = 0;
    while (!checker.stopped() and ticks < 100) : (ticks += 1) {
        supervisor.loop.tick() catch break; // Exiting anyway; the kernel closes what is left.
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
    if (runtime.supervisor.admin) |admin| admin.draining = true;
    const start_ns = sys.clockMonotonicNs();
    while (true) {
        if (allFinished(runtime.workers)) break;
        const elapsed_ns = sys.clockMonotonicNs() - start_ns;
        if (elapsed_ns >= runtime.config.drain_timeout_ns) {
            log.line(
                "drain deadline passed with {d} connections open; closing them",
                .{connectionsActive(runtime.workers)},
            );
            if (runtime.supervisor.access_log) |writer| writer.flush(); // What was handed over.
            printStats(runtime, "exit");
            return 0;
        }
        if (waitDuringDrain(runtime)) |second| switch (second) {
            .terminate, .interrupt => {
                log.line(
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
    log.line("drained", .{});
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
        log.line("control loop failed during the drain: {s}", .{@errorName(err)});
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

/// One line of counters (SIGUSR2, and at exit). Worker counters are read without
/// synchronisation: each is a word written by one thread, so a read is at worst a moment old.
fn printStats(runtime: *Runtime, label: []const u8) void {
    var buffers_in_use: u32 = 0;
    var retries: u64 = 0;
    var retries_refused: u64 = 0;
    var inflight: u64 = 0;
    for (runtime.workers) |*worker| {
        const buffers = &worker.proxy.buffers;
        buffers_in_use += buffers.totalCount() - buffers.availableCount();
        retries += @atomicLoad(u64, &worker.proxy.stats.retries, .monotonic);
        retries_refused += @atomicLoad(u64, &worker.proxy.stats.retries_refused_by_budget, .monotonic);
        for (&worker.proxy.inflight) |*count| inflight += @atomicLoad(u32, count, .monotonic);
    }
    const shared = runtime.shared;
    var upstream_open: u64 = 0;
    for (shared.connections[0..runtime.config.pool.backends_count]) |*count| {
        upstream_open += count.load(.monotonic);
    }
    log.line("{s} heap_allocations_after_startup={d} connections_active={d} buffers_in_use={d} " ++
        "upstream_requests_in_flight={d} upstream_connections_open={d} retries={d} " ++
        "retries_refused_by_budget={d} ejections={d} backends_available={d}", .{
        label,
        runtime.static.allocationsAfterStartup(),
        connectionsActive(runtime.workers),
        buffers_in_use,
        inflight,
        upstream_open,
        retries,
        retries_refused,
        shared.health.stats.ejections.load(.monotonic),
        @popCount(shared.health.available.load(.monotonic)),
    });
}

/// Fills the admin listener's snapshot (`Admin.Collector`): what `printStats` prints and
/// more, summed over the workers. Worker counters are read as `printStats` reads them (see
/// there, and metrics/Histogram.zig for the histogram).
fn collectSnapshot(context: *anyopaque, snapshot: *Snapshot) void {
    const supervisor: *Supervisor = @ptrCast(@alignCast(context));
    const runtime = supervisor.runtime;
    const config = runtime.config;
    const shared = runtime.shared;
    const backends_count = config.pool.backends_count;
    assert(backends_count <= Snapshot.backends_max);
    assert(runtime.version.len <= Snapshot.version_bytes_max);
    assert(config.pool.name.len <= Snapshot.pool_name_bytes_max); // Config.validate.
    snapshot.* = .{
        .version = runtime.version,
        .uptime_ns = sys.clockMonotonicNs() -| runtime.started_ns,
        .workers_count = @intCast(runtime.workers.len),
        .io = @tagName(runtime.workers[0].loop.backend),
        .heap_allocations_after_startup = runtime.static.allocationsAfterStartup(),
        .connections_active = connectionsActive(runtime.workers),
        .pool = .{
            .name = config.pool.name,
            .strategy = @tagName(config.pool.strategy),
            .backends_count = backends_count,
        },
    };
    const pool = &snapshot.pool;
    for (pool.backends[0..backends_count], config.pool.backends(), 0..) |*backend, *configured, i| {
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
    for (runtime.workers) |*worker| addWorker(snapshot, worker);
    const health_stats = &shared.health.stats;
    pool.counters.ejections = health_stats.ejections.load(.monotonic);
    pool.counters.ejections_refused_by_cap = health_stats.ejections_refused_by_cap.load(.monotonic);
    pool.counters.ejection_trials = health_stats.trials.load(.monotonic);
}

/// Adds one worker's counters into `snapshot`.
fn addWorker(snapshot: *Snapshot, worker: *Worker) void {
    const load = struct {
        fn word(value: *const u64) u64 {
            return @atomicLoad(u64, value, .monotonic);
        }
    }.word;
    const proxy = &worker.proxy;
    const stats = &proxy.stats;
    snapshot.connections_accepted += load(&worker.connections_accepted);
    snapshot.buffers_in_use += proxy.buffers.totalCount() - proxy.buffers.availableCount();
    snapshot.client_errors += load(&stats.client_errors);
    snapshot.client_timeouts += load(&stats.client_timeouts);
    snapshot.idle_parks += load(&stats.idle_parks);
    snapshot.buffers_trimmed += load(&stats.buffers_trimmed);
    if (proxy.access_log) |*access_log| snapshot.access_log_dropped += access_log.dropped.load(.monotonic);
    const pool = &snapshot.pool;
    const counters = &pool.counters;
    counters.requests += load(&stats.requests);
    counters.upstream_connect_failures += load(&stats.upstream_connect_failures);
    counters.upstream_errors += load(&stats.upstream_errors);
    counters.upstream_stale_retries += load(&stats.upstream_stale_retries);
    counters.retries += load(&stats.retries);
    counters.retries_refused_by_budget += load(&stats.retries_refused_by_budget);
    counters.overloaded += load(&stats.overloaded);
    counters.no_backend_available += load(&stats.no_backend_available);
    counters.upgrades += load(&stats.upgrades);
    const upstream = &proxy.upstream.stats;
    counters.upstream_pool_hits += load(&upstream.reused);
    counters.upstream_pool_misses += load(&upstream.opened);
    counters.upstream_idle_closed_by_backend += load(&upstream.closed_idle_by_backend);
    counters.upstream_idle_closed_timeout += load(&upstream.closed_idle_timeout);
    pool.latency.addRelaxed(&stats.latency);
    for (pool.backends[0..pool.backends_count], 0..) |*backend, i| {
        backend.in_flight += @atomicLoad(u32, &proxy.inflight[i], .monotonic);
        for (&backend.responses, &stats.backend_responses[i]) |*sum, *count| sum.* += load(count);
    }
}
