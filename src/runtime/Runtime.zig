//! The process as the control thread holds it once start-up is over: what start-up built
//! (runtime/startup.zig) and what the supervisor (Supervisor.zig), reload (reload.zig), the
//! drain (shutdown.zig) and the collector (collector.zig) work on. Each of those takes the
//! `Runtime` as an argument; nothing reaches it through a global.
//!
//! One per process, allocated by start-up before the control loop is set up and never moved:
//! the control loop's callbacks (signals, the admin listener's collector and reloader, health
//! reports, the reaper) point into it.
const std = @import("std");

const Address = @import("../stdx/Address.zig").Address;
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const Config = @import("../config/Config.zig");
const Snapshot = @import("../metrics/Snapshot.zig");
const Worker = @import("Worker.zig");
const Generations = @import("generations.zig").Generations;
const signals = @import("signals.zig");
const Supervisor = @import("Supervisor.zig");
const startup = @import("startup.zig");
const reload = @import("reload.zig");
const Notifier = @import("Notifier.zig");
const tls = @import("../tls/tls.zig");

const Runtime = @This();

static: *StaticAllocator,
/// The start-up configuration: what a reload may not change is read from here.
config: *Config,
generations: *Generations,
workers: []Worker,
signal_set: signals.Set,
/// The workers' event loop backend, "io_uring" or "epoll", as their loops chose it at
/// start-up (`--io=auto` may fall back). Kept here because a worker's loop is gone once the
/// worker has drained, and the exit's stats line is collected after that.
io: []const u8,
/// The control loop and what runs on it; set up in place by `Supervisor.init`.
supervisor: Supervisor,
/// The one snapshot the collector fills, for `/metrics`, `/status` and the stats line alike
/// (runtime/collector.zig). 95 KiB, allocated untouched at start-up: a process that is never
/// scraped and never gets SIGUSR2 touches it only at exit.
snapshot: *Snapshot,
options: startup.Options,
started_ns: u64,
reloads: reload.Stats = .{},
/// The listeners' session-ticket keys (`--tls-cert`), which the supervisor rotates.
tls_ticket_keys: ?*tls.TicketKeys = null,
/// The workers have TLS memory: made at start-up when its configuration had TLS, else by the
/// reload that brought the first (reload.zig `startWorkerTls`). The control thread only.
tls_memory: bool = false,
/// AWS-LC's general-heap allocations (`tls.memory`) that are not the data plane's: all of
/// start-up's, and those the control thread makes later for reloads (new TLS contexts) and for
/// the reaper (`SSL_CTX_free` allocates while it flushes its session cache). The rest count as
/// heap allocations after start-up, which stand for the request path: workers allocate only
/// from their pools, so none of theirs is ever in this figure.
tls_heap_allocations_uncounted: u64 = 0,
/// Tells systemd when sluice is ready, reloading or stopping; null without `$NOTIFY_SOCKET`.
notifier: ?Notifier = null,

/// Where the first listener of the current generation is bound (its port chosen, if 0 was
/// asked for).
pub fn firstListenAddress(runtime: *const Runtime) Address {
    const generations = runtime.generations;
    const slot = generations.current().generation.listener_slots[0];
    return generations.listeners.slots[slot].bound;
}

/// Marks the start of control-plane work that may make AWS-LC allocate from the general heap;
/// pass the result to `tlsHeapUncount` when it is over.
pub fn tlsHeapMark(runtime: *const Runtime) u64 {
    _ = runtime;
    return tls.memory.heapAllocations();
}

/// AWS-LC's general-heap allocations since `mark` were the control plane's (this thread's
/// only: workers allocate from their pools): they are not counted as the request path's.
pub fn tlsHeapUncount(runtime: *Runtime, mark: u64) void {
    runtime.tls_heap_allocations_uncounted += tls.memory.heapAllocations() - mark;
}

/// Client connections open now, all workers.
pub fn connectionsActive(runtime: *const Runtime) u32 {
    var total: u32 = 0;
    for (runtime.workers) |*worker| total += worker.connectionsActive();
    return total;
}
