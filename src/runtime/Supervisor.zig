//! The control thread after start-up: its own event loop and what runs on it until a drain
//! begins. Signals come from a signalfd (blocked in every thread, runtime/signals.zig):
//! SIGTERM and SIGINT ask for the drain (runtime/shutdown.zig, where a second one exits at
//! once), SIGUSR2 logs the stats line (runtime/collector.zig), SIGUSR1 reopens the access
//! log, SIGHUP reloads the configuration file (runtime/reload.zig). The loop also carries the
//! pools' active health checkers, the access-log writer, the reaper that frees what old
//! generations leave behind, and, when `--admin` asks for one, the admin listener
//! (runtime/Admin.zig), which answers until the process exits, through the drain (its
//! `/healthz` then says 503). Checks and the admin listener start only in `run`, once every
//! worker accepts, so probes and the admin bind never delay the first accept.
//!
//! Decision: the control loop is always epoll, whatever `--io` says. It carries a few probes
//! a second and the signalfd, epoll costs one cheap syscall to create (an io_uring costs more
//! at start-up), and the workers' choice of backend stays theirs.
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");
const Generation = @import("../proxy/Generation.zig");
const Pool = @import("../upstream/Pool.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Generations = @import("generations.zig").Generations;
const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const tls = @import("../tls/tls.zig");
const TimerQueue = loop_ns.TimerQueue;
const Health = @import("../health/Health.zig");
const Config = @import("../config/Config.zig");
const Checker = @import("../health/Checker.zig");
const AccessLogWriter = @import("AccessLogWriter.zig");
const Admin = @import("Admin.zig");
const Runtime = @import("Runtime.zig");
const collector = @import("collector.zig");
const reload = @import("reload.zig");
const shutdown = @import("shutdown.zig");
const Dns = @import("Dns.zig");

const Supervisor = @This();

runtime: *Runtime,
/// Made before the first generation (runtime/startup.zig), since resolving backend names
/// runs on it; never moves.
loop: *Loop,
/// Null until a configuration has a backend by name (runtime/Dns.zig).
dns: ?*Dns = null,
/// Null without `--admin`.
admin: ?*Admin = null,
/// Null without `--access-log`.
access_log: ?*AccessLogWriter = null,
/// While draining with an admin listener, the loop ticks at least this often
/// (`shutdown.zig`).
drain_poll_queue: TimerQueue = .init(shutdown.drain_poll_ms * std.time.ns_per_ms),
drain_poll_timer: Timer = .{},
/// While old generations or retired pools wait to be freed (`Generations.reap`).
reap_queue: TimerQueue = .init(reap_ms * std.time.ns_per_ms),
reap_timer: Timer = .{},
/// With TLS listeners: a new session-ticket key every `TicketKeys.rotation_interval_s`.
ticket_rotation_queue: TimerQueue = .init(tls.TicketKeys.rotation_interval_s * std.time.ns_per_s),
ticket_rotation_timer: Timer = .{},
signal_socket: Socket,
signal_completion: Completion = .{},
/// What asked for the drain, once something has.
drain_reason: ?[]const u8 = null,
/// AWS-LC's memory for the health probes of pools that speak TLS to their backends: bounded,
/// made at start-up, never freed (AWS-LC's state for the control thread may live in it).
probe_tls_memory: ?*tls.memory.Pool = null,

/// How often it looks for old generations to free after a reload.
const reap_ms = 100;

/// In place (the loop holds pointers to the timer queues): the control loop, the admin
/// listener's memory and the first generation's health checkers, none of them started yet.
pub fn init(
    supervisor: *Supervisor,
    allocator: std.mem.Allocator,
    runtime: *Runtime,
    loop: *Loop,
    dns: ?*Dns,
    first: *const Generation,
) !void {
    supervisor.* = .{
        .runtime = runtime,
        .loop = loop,
        .dns = dns,
        .signal_socket = Socket.init(runtime.signal_set.fd),
    };
    supervisor.loop.timerQueueRegister(&supervisor.drain_poll_queue);
    supervisor.loop.timerQueueRegister(&supervisor.reap_queue);
    supervisor.loop.timerQueueRegister(&supervisor.ticket_rotation_queue);
    const config = runtime.config;
    if (config.admin.enabled) {
        // Allocated now, with everything else; bound once the workers accept.
        const admin = try allocator.create(Admin);
        try admin.init(allocator, supervisor.loop, .{
            .address = config.admin.listen,
            .snapshot = runtime.snapshot,
            .collector = .{ .context = runtime, .function = collector.adminCollect },
            .reloader = .{ .context = runtime, .function = reload.adminReload },
        });
        supervisor.admin = admin;
    }
    // Made whether or not a pool has TLS now (a reload may add one): untouched address space
    // until probes use it.
    const memory = try allocator.create(tls.memory.Pool);
    try memory.init(std.heap.page_allocator, Proxy.tlsClientPoolOptions(probeTlsConnections(config)));
    supervisor.probe_tls_memory = memory;
    for (first.pools) |instance| try initChecker(supervisor.loop, instance, supervisor.probe_tls_memory);
}

/// Health probes over TLS at once, counted as whole client connections: one per backend of
/// each TLS pool with checks, and as much again for its sessions kept and for the pools a
/// reload may add (beyond that, a probe fails for want of memory: its backend is reported
/// down with that reason, and the heap never grows). At least 64.
fn probeTlsConnections(config: *const @import("../config/Config.zig")) u32 {
    var probes: u32 = 0;
    for (config.pools()) |*pool| {
        if (pool.tls.enabled and pool.health.enabled()) probes += pool.backends_count;
    }
    return @max(64, 2 * probes);
}

/// Starts what waits for the workers to accept, then runs the control loop until a drain is
/// asked for, and drains. Returns the process exit code.
pub fn run(supervisor: *Supervisor) u8 {
    const runtime = supervisor.runtime;
    for (runtime.generations.current().generation.pools) |instance| {
        if (instance.checker) |checker| checker.start();
    }
    if (supervisor.access_log) |writer| writer.start(supervisor.loop);
    if (supervisor.admin) |admin| {
        admin.start() catch |err| {
            var text: [Address.text_bytes_max]u8 = undefined;
            log.err("cannot listen on {s} (admin): {s}; draining", .{
                admin.address.toText(&text), sys.listenerErrorText(err),
            });
            supervisor.stopChecks();
            _ = shutdown.drain(runtime, "admin listener failure");
            return 1; // A run-time failure, as a port in use for the proxy is.
        };
        var text: [Address.text_bytes_max]u8 = undefined;
        log.info("admin listening on {s}", .{admin.address.toText(&text)});
    }
    supervisor.armSignals();
    if (runtime.tls_ticket_keys != null) supervisor.armTicketRotation();
    if (runtime.notifier) |*notifier| notifier.ready(runtime.generations.current().generation.number);
    while (supervisor.drain_reason == null) {
        supervisor.loop.tick() catch |err| {
            log.err("control loop failed: {s}; draining", .{@errorName(err)});
            supervisor.drain_reason = "control loop failure";
        };
    }
    supervisor.stopChecks();
    return shutdown.drain(runtime, supervisor.drain_reason.?);
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
        .user2 => collector.logStats(runtime, "stats"),
        .user1 => if (supervisor.access_log) |writer| writer.reopen(),
        .hangup => reload.reloadAndLog(runtime),
    };
    if (supervisor.drain_reason != null) return; // The drain reads the signalfd itself.
    supervisor.armSignals();
}

// ---------------------------------------------------------------------------------------------
// Health checkers

/// Sets up and starts the checker of a pool instance a reload built anew (a kept instance
/// keeps its running checker). A pool without checks gets none.
pub fn startChecker(supervisor: *Supervisor, instance: *Pool) !void {
    try initChecker(supervisor.loop, instance, supervisor.probe_tls_memory);
    if (instance.checker) |checker| checker.start();
}

/// The pool's active checker, if it has checks, over the members of its newest table,
/// seeded with what their health already says (a rebuilt pool keeps a down backend down until
/// `rise` passes, and so does a member that stays through a membership change).
fn initChecker(loop: *Loop, instance: *Pool, probe_tls_memory: ?*tls.memory.Pool) !void {
    if (!instance.config.health.enabled()) return;
    const shared = &instance.shared;
    const table = shared.members.newest();
    var backends: [Config.backends_count_max]Config.Backend = undefined;
    var slots: [Config.backends_count_max]u16 = undefined;
    var count: u16 = 0;
    for (0..shared.count()) |i| {
        if (!table.isPresent(@intCast(i))) continue;
        backends[count] = .{ .address = shared.addresses[i] };
        slots[count] = @intCast(i);
        count += 1;
    }
    assert(count == table.members_count);
    if (count == 0) return; // Names not resolved yet: a checker comes with the first members.
    // Its own memory, freed with it (`Checker.destroy`), not the pool's arena: a pool whose
    // names change every TTL replaces its checker as often.
    var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    errdefer arena_state.deinit();
    const arena = arena_state.allocator();
    const checker = try arena.create(Checker);
    const probe_tls: ?Checker.Tls = if (instance.tls) |backend_tls| .{
        .context = &backend_tls.context,
        .names = backend_tls.names,
        // The process started with TLS to a backend, or a reload adding it was refused.
        .memory = probe_tls_memory.?,
    } else null;
    try checker.init(arena, loop, &instance.config.health, backends[0..count], .{
        .context = &shared.health,
        .function = healthReportCallback,
    }, probe_tls, instance.config.protocol.multiplexed());
    for (slots[0..count], 0..) |slot, position| {
        checker.reindex(@intCast(position), slot);
        checker.setInitialUp(@intCast(position), shared.health.backends[slot].active_up.load(.acquire));
    }
    checker.send_proxy = instance.config.send_proxy == .v2;
    checker.arena = arena_state; // Nothing more is allocated in it.
    instance.checker = checker;
}

/// A membership change (`Pool.changeMembers`): the pool's checker, if it has one, is replaced
/// by one over the new members (the old one stops, and is freed once it has).
pub fn replaceChecker(supervisor: *Supervisor, instance: *Pool) !void {
    if (instance.checker) |old| {
        instance.checker = null;
        instance.retireChecker(old);
    }
    try supervisor.startChecker(instance);
}

/// A backend name's addresses changed (runtime/Dns.zig): each pool of the current generation
/// that has names takes its members now, as a reload's member-list change does (members that
/// stay keep their slot, health and connections), and the workers are woken to adopt them.
/// A change that does not fit now (members that left still draining) is tried again later.
pub fn applyNames(supervisor: *Supervisor) void {
    const d = supervisor.dns.?;
    const runtime = supervisor.runtime;
    const generation = &runtime.generations.current().generation;
    var changed = false;
    var retry = false;
    for (generation.pools, generation.config.pools()) |instance, *pool| {
        if (!Dns.hasNames(pool)) continue;
        const members = d.expand(pool);
        if (instance.sameMembers(members)) continue;
        if (!instance.membersFit(members)) {
            retry = true;
            continue;
        }
        const change = instance.changeMembers(members) catch {
            retry = true;
            continue;
        };
        changed = true;
        log.info("pool {s}: {d} members joined, {d} left (draining), from DNS", .{ pool.name, change.joined_count, change.left_count });
        supervisor.replaceChecker(instance) catch {
            log.warn("pool {s}: out of memory for its health checker; no active checks", .{pool.name});
        };
    }
    if (changed) {
        for (runtime.workers) |*worker| worker.loop.wake();
        // The tables the workers move past, and the slots of members that left, are freed
        // by the reaper, as after a reload.
        supervisor.armReap();
    }
    if (retry) d.retryLater();
}

/// An active check's result, handed to the pool's health (see health/Health.zig for how
/// active and passive results are reconciled).
fn healthReportCallback(context: *anyopaque, report: Checker.Report) void {
    const health: *Health = @ptrCast(@alignCast(context));
    if (report.changed) health.setActive(report.backend_index, report.up, report.reason);
    if (report.passed) health.activePassed(report.backend_index) else health.activeFailed(report.backend_index);
}

/// Health checks end when the drain begins: their sockets close, nothing probes a backend
/// of a proxy that is going away.
pub fn stopChecks(supervisor: *Supervisor) void {
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

// ---------------------------------------------------------------------------------------------
// Session-ticket keys

/// Once the ticket keys exist: at start-up, or by the reload that adds the first HTTPS listener.
pub fn armTicketRotation(supervisor: *Supervisor) void {
    assert(supervisor.runtime.tls_ticket_keys != null);
    supervisor.loop.timerArm(&supervisor.ticket_rotation_queue, &supervisor.ticket_rotation_timer, Supervisor, supervisor, ticketRotationCallback);
}

/// A fresh key seals new tickets from now on; the two before it still open theirs (renewed),
/// the oldest is forgotten, so a stolen key opens at most 36 hours of tickets. The workers read
/// the keys through their sequence lock: nothing to tell them.
fn ticketRotationCallback(supervisor: *Supervisor) void {
    const keys = supervisor.runtime.tls_ticket_keys.?;
    keys.rotate() catch {
        // The old keys stay in use (still safe, only older); the next interval tries again.
        log.warn("cannot rotate the session-ticket keys: AWS-LC's random generator failed", .{});
    };
    supervisor.armTicketRotation();
}

// ---------------------------------------------------------------------------------------------
// Reaping old generations

/// Looks for old generations and retired pools to free, every `reap_ms` until none is left.
pub fn armReap(supervisor: *Supervisor) void {
    if (supervisor.reap_timer.isArmed()) return;
    supervisor.loop.timerArm(&supervisor.reap_queue, &supervisor.reap_timer, Supervisor, supervisor, reapCallback);
}

/// Frees what the workers have let go of; again shortly while something is left. Freeing a
/// TLS context can make the TLS library allocate (OpenSSL's `SSL_CTX_free` flushed its session
/// cache into a new stack): the control plane's, as the reload that made the context, so not counted as heap
/// allocations after start-up (it used to add one per reload with HTTPS listeners).
fn reapCallback(supervisor: *Supervisor) void {
    const runtime = supervisor.runtime;
    const tls_heap_mark = runtime.tlsHeapMark();
    defer runtime.tlsHeapUncount(tls_heap_mark);
    if (runtime.generations.reap()) supervisor.armReap();
}
