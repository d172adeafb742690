//! The drain and the exit: every worker stops accepting and lets its in-flight exchanges
//! finish; the control thread waits for them, up to `--drain-timeout`, while the admin
//! listener keeps answering (`/healthz` says 503) and the access log keeps being written. A
//! second SIGTERM or SIGINT exits at once. The exit codes (see docs/ARCHITECTURE.md,
//! "Operations"): 0 after a drain, also when its deadline passed; 1 after a second signal.
//! Either way the stats line is logged with `exit` as its label, from the same collector as
//! SIGUSR2's (runtime/collector.zig).
const std = @import("std");

const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");
const Worker = @import("Worker.zig");
const PidFile = @import("PidFile.zig");
const signals = @import("signals.zig");
const Runtime = @import("Runtime.zig");
const Supervisor = @import("Supervisor.zig");
const collector = @import("collector.zig");
const reload = @import("reload.zig");
const reload_outcome = @import("reload_outcome.zig");

/// How often the control thread looks at the workers while draining.
pub const drain_poll_ms = 20;

/// Stops accepting, lets in-flight exchanges finish, waits for the workers. Returns the exit
/// code. `reason` names what asked for it, for the log.
pub fn drain(runtime: *Runtime, reason: []const u8) u8 {
    const supervisor = &runtime.supervisor;
    log.info("{s}: draining (deadline {d} ms); a second signal exits at once", .{
        reason,
        runtime.config.drain_timeout_ns / std.time.ns_per_ms,
    });
    if (runtime.notifier) |*notifier| notifier.stopping(reason);
    for (runtime.workers) |*worker| worker.requestDrain();
    if (supervisor.admin) |admin| admin.draining = true;
    const start_ns = sys.clockMonotonicNs();
    while (true) {
        if (allFinished(runtime.workers)) break;
        const elapsed_ns = sys.clockMonotonicNs() - start_ns;
        if (elapsed_ns >= runtime.config.drain_timeout_ns) {
            log.warn(
                "drain deadline passed with {d} connections open; closing them",
                .{runtime.connectionsActive()},
            );
            if (supervisor.access_log) |writer| writer.flush(); // What was handed over.
            collector.logStats(runtime, "exit");
            return 0;
        }
        if (waitDuringDrain(runtime)) |second| switch (second) {
            .terminate, .interrupt => {
                log.warn(
                    "second signal: exiting now with {d} connections open",
                    .{runtime.connectionsActive()},
                );
                if (supervisor.access_log) |writer| writer.flush();
                collector.logStats(runtime, "exit");
                return 1;
            },
            .user2 => collector.logStats(runtime, "stats"),
            .user1 => if (supervisor.access_log) |writer| writer.reopen(),
            // Refused ("draining"), so that `sluice reload --pid-file` hears why.
            .hangup => reload.reloadAndLog(runtime),
        };
        // The control loop may not tick while draining: keep the workers' lines moving.
        if (supervisor.access_log) |writer| writer.flush();
    }
    for (runtime.workers) |*worker| if (worker.thread) |thread| thread.join();
    if (supervisor.access_log) |writer| writer.finish();
    if (runtime.options.pid_file) |path| {
        PidFile.remove(path);
        reload_outcome.remove(path);
    }
    log.info("drained", .{});
    collector.logStats(runtime, "exit");
    return 0;
}

/// Waits up to `drain_poll_ms` for a signal. With an admin listener the control loop ticks
/// meanwhile, so the listener keeps answering (`/healthz` says 503) while the workers finish.
fn waitDuringDrain(runtime: *Runtime) ?signals.Signal {
    const supervisor = &runtime.supervisor;
    const admin = supervisor.admin orelse return runtime.signal_set.wait(drain_poll_ms);
    if (!admin.running()) return runtime.signal_set.wait(drain_poll_ms);
    const loop = supervisor.loop;
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
