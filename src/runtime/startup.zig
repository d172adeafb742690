//! The one start-up path: size and allocate every worker and start its thread (which makes its
//! event loop meanwhile), build the first configuration generation (its pools, and its
//! listeners bound: the first socket decides the port when 0 was asked for;
//! runtime/generations.zig), let the workers go and wait until each accepts,
//! then set up the control loop (runtime/Supervisor.zig) and seal the allocator. What the
//! control loop runs (health checks, the admin listener) starts only after that, in
//! `Supervisor.run`, so nothing of it delays the first accept.
//!
//! The main program and the end-to-end benchmark both come through here: `run` for the
//! process, `start` for a runtime driven in-process.
const std = @import("std");
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");
const Config = @import("../config/Config.zig");
const Loop = @import("../loop/loop.zig").Loop;
const Proxy = @import("../proxy/Proxy.zig");
const Snapshot = @import("../metrics/Snapshot.zig");
const Worker = @import("Worker.zig");
const generations_ns = @import("generations.zig");
const Generations = generations_ns.Generations;
const PidFile = @import("PidFile.zig");
const signals = @import("signals.zig");
const InitTrace = @import("InitTrace.zig");
const AccessLogWriter = @import("AccessLogWriter.zig");
const Notifier = @import("Notifier.zig");
const Runtime = @import("Runtime.zig");
const Supervisor = @import("Supervisor.zig");
const Dns = @import("Dns.zig");
const reload = @import("reload.zig");
const tls = @import("../tls/tls.zig");
const HandlerInstance = @import("../handler/Instance.zig");

pub const Options = struct {
    /// Print how to try the demo once the port is known.
    demo: bool = false,
    /// The program's version, for `/metrics` and `/status`.
    version: []const u8 = "unknown",
    /// Written once the listeners accept, removed at a clean exit.
    pid_file: ?[]const u8 = null,
    /// What SIGHUP and `POST /reload` read again; null without a configuration file.
    reload_source: ?reload.Source = null,
    /// `$NOTIFY_SOCKET`, when systemd runs sluice with `Type=notify` (runtime/Notifier.zig).
    notify_socket: ?[]const u8 = null,
};

/// Runs until drained. Returns the process exit code.
pub fn run(static: *StaticAllocator, config: *Config, options: Options) u8 {
    const runtime = switch (start(static, config, options)) {
        .running => |runtime| runtime,
        .failed => |exit_code| return exit_code,
    };
    return runtime.supervisor.run();
}

pub const Started = union(enum) {
    running: *Runtime,
    /// Start-up failed (already logged); the process exit code.
    failed: u8,
};

/// Everything up to the first accept: size, allocate, bind, start the workers, set up the
/// control loop, seal the allocator.
pub fn start(static: *StaticAllocator, config: *Config, options: Options) Started {
    const started_ns = sys.clockMonotonicNs();
    const allocator = static.allocator();
    if (config.workers_count == 0) {
        const cpus = std.Thread.getCpuCount() catch 1;
        config.workers_count = @intCast(std.math.clamp(cpus, 1, Config.workers_count_max));
    }
    config.validate() catch |err| {
        log.err("invalid configuration: {s}", .{@import("../config/file.zig").validateMessage(err)});
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
    // The threads start now and make their loops while this one starts AWS-LC, compiles the
    // handlers (with the first generation), binds and allocates; they accept once told to go
    // (`releaseWorkers`), and end if start-up fails before that.
    const spawned = spawnWorkers(workers, config) orelse return .{ .failed = 1 };
    var released = false;
    defer if (!released) for (spawned) |*worker| worker.abort();

    const ticket_keys: ?*tls.TicketKeys = if (config.hasTls()) startTls() catch |err| {
        log.err("cannot start TLS: {s}", .{startTlsReason(err)});
        return .{ .failed = 2 };
    } else null;
    const generations = initGenerations(allocator, config, workers) catch {
        log.err("out of memory allocating the workers' loops", .{});
        return .{ .failed = 1 };
    };
    generations.ticket_keys = ticket_keys;
    // The control loop, made now because backend names are resolved on it before the first
    // build (which looks them up), at most `Dns.startup_wait_ns`; none: no wait at all.
    const control_loop = allocator.create(Loop) catch {
        log.err("out of memory allocating the control loop", .{});
        return .{ .failed = 1 };
    };
    control_loop.* = Loop.init(.{ .mode = .epoll }) catch |err| {
        log.err("cannot set up the control loop: {s}", .{@errorName(err)});
        return .{ .failed = 1 };
    };
    const dns: ?*Dns = if (config.usesDns()) startDns(control_loop, config) orelse return .{ .failed = 1 } else null;
    generations.dns = dns;
    // The first generation compiles the handlers (and makes each worker's engines) before it
    // binds anything: a mistake refuses to start with its FILE:LINE:COL.
    var problem: generations_ns.Problem = .{};
    const first = generations.build(.init(std.heap.page_allocator), config, &problem) catch {
        log.err("{s}", .{problem.text()});
        return .{ .failed = if (problem.config_mistake) 2 else 1 };
    };
    for (workers, 0..) |*worker, i| {
        worker.init(allocator, config, &first.generation, &generations.listeners, config.workers_count) catch |err| {
            log.err(
                "cannot allocate worker {d} ({d} connections): {s}",
                .{ i, Proxy.sessionsCount(config, config.workers_count), @errorName(err) },
            );
            return .{ .failed = 1 };
        };
    }
    trace.mark("listen+allocate");
    released = true;
    if (!releaseWorkers(workers)) return .{ .failed = 1 };
    trace.mark("workers ready");
    logAccepting(generations, first, workers, options.demo);
    const runtime = initRuntime(allocator, .{
        .static = static,
        .config = config,
        .generations = generations,
        .workers = workers,
        .signal_set = signal_set,
        .io = @tagName(workers[0].loop.backend),
        .supervisor = undefined, // Set up in place below: the loop must not move.
        .snapshot = undefined,
        .options = options,
        .started_ns = started_ns,
        .tls_ticket_keys = ticket_keys,
        .tls_memory = config.hasTls() or config.usesUpstreamTls(),
        .notifier = if (options.notify_socket) |path| Notifier.init(path) else null,
    }) catch {
        log.err("out of memory setting up the control loop", .{});
        return .{ .failed = 1 };
    };
    if (dns) |d| d.attach(Supervisor, &runtime.supervisor, Supervisor.applyNames);
    runtime.supervisor.init(allocator, runtime, control_loop, dns, &first.generation) catch |err| {
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
        runtime.supervisor.access_log = writer;
    }
    static.seal();
    runtime.tls_heap_allocations_uncounted = tls.memory.heapAllocations(); // Start-up's.
    trace.mark("control loop");
    if (options.pid_file) |path| {
        PidFile.write(path, linux.getpid()) catch |err| {
            log.err("cannot write the pid file {s}: {s}", .{ path, @errorName(err) });
            return .{ .failed = 1 };
        };
    }
    return .{ .running = runtime };
}

/// The resolver for backend names, and their first answers: start-up waits for them at most
/// `Dns.startup_wait_ns`, then goes on without those still missing (logged; their pools get
/// them when they come).
fn startDns(loop: *Loop, config: *const Config) ?*Dns {
    const d = Dns.create(loop, config) catch |err| {
        log.err("cannot start resolving backend names: {s}", .{Dns.initErrorText(err)});
        return null;
    };
    d.waitSettled(Dns.startup_wait_ns);
    for (d.names()) |*entry| {
        if (entry.state != .pending) continue;
        var label: [Dns.label_bytes_max]u8 = undefined;
        log.warn("dns {s}: no answer within {d} ms of start-up; its pools start without it", .{
            Dns.label(entry, &label), Dns.startup_wait_ns / std.time.ns_per_ms,
        });
    }
    return d;
}

/// Starts every worker's thread (`Worker.spawn`). Null when one could not start (logged; those
/// started are aborted).
fn spawnWorkers(workers: []Worker, config: *const Config) ?[]Worker {
    for (workers, 0..) |*worker, i| {
        worker.spawn(config, @intCast(i)) catch |err| {
            log.err("cannot start worker thread: {s}", .{@errorName(err)});
            for (workers[0..i]) |*started| started.abort();
            return null;
        };
    }
    return workers;
}

/// Lets every worker accept and waits until each does. False when one could not start its
/// loop (logged).
fn releaseWorkers(workers: []Worker) bool {
    for (workers) |*worker| worker.go();
    for (workers) |*worker| {
        _ = worker.waitReady(); // A failure to start leaves `init_error`.
        if (worker.init_error) |err| {
            log.err(
                "worker {d}: cannot start the event loop: {s}",
                .{ worker.index, Loop.initErrorReason(err) },
            );
            return false;
        }
    }
    return true;
}

/// The lines that say the workers accept: which event loop they got, each listener, and for
/// the demo, what to try.
fn logAccepting(generations: *const Generations, first: *const generations_ns.Built, workers: []Worker, demo: bool) void {
    const first_loop = &workers[0].loop;
    if (first_loop.fallback_reason) |reason| {
        log.warn("io_uring unavailable ({s}), using epoll", .{reason});
    }
    generations.logOpened(first, @intCast(workers.len), @tagName(first_loop.backend));
    if (demo) {
        var text: [Address.text_bytes_max]u8 = undefined;
        const address = &generations.listeners.slots[first.generation.listener_slots[0]].bound;
        const shown = address.toText(&text);
        log.info("demo: try `curl http://{s}/` a few times and watch the backends alternate, and " ++
            "`curl http://{s}/hello?name=you`, answered by a JavaScript handler (src/demo/hello.js)", .{ shown, shown });
    }
}

fn initGenerations(allocator: std.mem.Allocator, config: *const Config, workers: []Worker) !*Generations {
    const loops = try allocator.alloc(*Loop, workers.len);
    for (loops, workers) |*loop, *worker| loop.* = &worker.loop;
    const generations = &(try StaticAllocator.allocUntouched(allocator, Generations, null, 1))[0];
    // Zeroed, untouched: a worker's row costs a page only once it counts a handler's call.
    const tallies = try StaticAllocator.allocUntouched(allocator, HandlerInstance.TallyRow, null, workers.len);
    generations.initZeroed(loops, Proxy.sessionsCount(config, @intCast(workers.len)), tallies);
    return generations;
}

/// The runtime and the collector's snapshot, which is allocated untouched with its backends'
/// storage (`Snapshot.backends_total_max` of them, 200 KiB): they cost pages only once
/// something is collected into them, and only as far as the pools' backends reach.
fn initRuntime(allocator: std.mem.Allocator, fields: Runtime) !*Runtime {
    const runtime = try allocator.create(Runtime);
    runtime.* = fields;
    const snapshots = try StaticAllocator.allocUntouched(allocator, Snapshot, null, 1);
    runtime.snapshot = &snapshots[0];
    const backends = try StaticAllocator.allocUntouched(allocator, Snapshot.Backend, null, Snapshot.backends_total_max);
    runtime.snapshot.backends_storage = backends;
    return runtime;
}

pub const StartTlsError = error{ LibraryInit, OutOfMemory, RandomFailed };

/// For the first HTTPS listener (`Config.hasTls`), at start-up or at the reload that adds it:
/// AWS-LC started (its memory routed: `tls.init`) and the process's session-ticket keys made,
/// which every generation's TLS contexts share and the supervisor rotates. Once per process.
/// The certificates are loaded with each generation (generations.zig `loadServer`), so a
/// reload reads them again.
pub fn startTls() StartTlsError!*tls.TicketKeys {
    tls.init(.{}) catch |err| return switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.TooLate, error.LibraryInit => error.LibraryInit,
    };
    const keys = try std.heap.page_allocator.create(tls.TicketKeys);
    errdefer std.heap.page_allocator.destroy(keys);
    keys.init() catch return error.RandomFailed;
    return keys;
}

pub fn startTlsReason(err: StartTlsError) []const u8 {
    return switch (err) {
        error.LibraryInit => "AWS-LC could not be started",
        error.OutOfMemory => "out of memory",
        error.RandomFailed => "cannot make session-ticket keys: AWS-LC's random generator failed",
    };
}

/// `sluice check`: every listener's certificate and key files (readable, parsed, the key
/// matches, the chain in order, not expired, accepted by the TLS policy, days left), each
/// finding on its own line and naming its file; a warning (expiry within 30 days) does not
/// fail the check. False when any certificate has an error.
pub fn checkCertificates(arena: std.mem.Allocator, config: *const Config) bool {
    if (!config.hasTls()) return true;
    tls.init(.{}) catch |err| {
        log.err("cannot start AWS-LC: {s}", .{@errorName(err)});
        return false;
    };
    var ok = true;
    var checked: std.ArrayList([]const u8) = .empty;
    for (0..config.listeners().len) |i| {
        const settings = config.listenerTls(i) orelse continue;
        for (settings.certificates()) |*certificate| {
            if (contains(checked.items, certificate.cert)) continue; // Listed by another listener.
            checked.append(arena, certificate.cert) catch {};
            const ocsp: ?[]const u8 = if (certificate.ocsp.len > 0) certificate.ocsp else null;
            const report = tls.certificate.check(arena, certificate.cert, certificate.key, .{ .ocsp_path = ocsp }) catch {
                log.err("{s}: out of memory checking it", .{certificate.cert});
                return false;
            };
            for (report.findings) |finding| switch (finding.severity) {
                .err => log.plain("error: {s}", .{finding.message}),
                .warning => log.plain("warning: {s}", .{finding.message}),
            };
            if (report.failed()) {
                ok = false;
            } else if (report.days_left) |days| {
                log.plain("{s}: {d} days left", .{ certificate.cert, days });
            }
        }
        if (settings.client_ca.len > 0 and !contains(checked.items, settings.client_ca)) {
            checked.append(arena, settings.client_ca) catch {};
            if (!checkClientCa(arena, settings.client_ca)) ok = false;
        }
    }
    return ok;
}

/// A listener's client CA file: readable, every block a certificate, none expired.
fn checkClientCa(arena: std.mem.Allocator, path: []const u8) bool {
    const report = tls.certificate.checkCa(arena, path) catch {
        log.err("{s}: out of memory checking it", .{path});
        return false;
    };
    for (report.findings) |finding| switch (finding.severity) {
        .err => log.plain("error: {s}", .{finding.message}),
        .warning => log.plain("warning: {s}", .{finding.message}),
    };
    if (report.failed()) return false;
    log.plain("{s}: {d} CA certificates for clients", .{ path, report.names.len });
    return true;
}

fn contains(list: []const []const u8, item: []const u8) bool {
    for (list) |other| if (std.mem.eql(u8, other, item)) return true;
    return false;
}

/// `sluice check`: each Unix socket backend's path. A path that exists and is not a socket is
/// an error (a typo that names a file, or a directory); one that does not exist yet, or that
/// this user cannot reach, is a warning, since the application may simply not be running on
/// the machine that checks. At run time neither stops start-up: connects fail, the pool fails
/// over, and health checks say why. False when any path is an error.
pub fn checkUnixSockets(config: *const Config) bool {
    var ok = true;
    for (config.pools()) |*pool| {
        for (pool.backends()) |*backend| {
            if (!backend.address.isUnix()) continue;
            if (!checkUnixSocket(pool.name, &backend.address)) ok = false;
        }
    }
    return ok;
}

fn checkUnixSocket(pool_name: []const u8, address: *const Address) bool {
    const path: [*:0]const u8 = @ptrCast(&address.un.path); // NUL-terminated: Address.parseUnix.
    var status: linux.Statx = undefined;
    const rc = linux.statx(linux.AT.FDCWD, path, 0, .{ .TYPE = true }, &status);
    switch (linux.errno(rc)) {
        .SUCCESS => {},
        .NOENT, .NOTDIR => {
            log.plain("warning: pool {s}: {s}: no such socket file (yet): requests to it fail over until an application listens there", .{ pool_name, std.mem.span(path) });
            return true;
        },
        .ACCES => {
            log.plain("warning: pool {s}: {s}: a directory on the path cannot be searched by this user", .{ pool_name, std.mem.span(path) });
            return true;
        },
        else => |e| {
            log.plain("warning: pool {s}: {s}: cannot be examined ({t})", .{ pool_name, std.mem.span(path), e });
            return true;
        },
    }
    if (linux.S.ISSOCK(status.mode)) return true;
    const kind = switch (status.mode & linux.S.IFMT) {
        linux.S.IFREG => "a regular file",
        linux.S.IFDIR => "a directory",
        linux.S.IFIFO => "a FIFO",
        linux.S.IFCHR, linux.S.IFBLK => "a device",
        else => "another kind of file",
    };
    log.plain("error: pool {s}: {s}: not a socket ({s})", .{ pool_name, std.mem.span(path), kind });
    return false;
}
