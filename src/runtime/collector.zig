//! The one collector: the only code that reads the workers' and the pools' counters. It fills
//! a `metrics/Snapshot`, and everything that reports counters renders that snapshot:
//! `/metrics` and `/status` (runtime/Admin.zig) and the stats line, which SIGUSR2 and the exit
//! log (`Snapshot.writeStats`). So the three can never sum over different things.
//!
//! Decision: the scope is the current generation. Its pools and routes are the configuration
//! the operator has now, in which every pool name and backend address is unique: each figure
//! has one label set in `/metrics` and one place in `/status`, and the stats line is the sum of
//! those same figures. A pool instance a reload retired (an old generation still finishing
//! exchanges) is left out: shown beside the current instance of the same name it would be a
//! second series with the same labels, and merged into it, a mix of two configurations'
//! backends. A retired instance only finishes what it started, and is freed once the workers
//! let go of it (runtime/generations.zig). (The stats line used to sum every live
//! generation's pools for some fields and the current one's for others, and missed a kept
//! pool's ejections while an older generation was still live.)
//!
//! How counters are read: worker and pool counters are `stdx/Counter`s, words written by one
//! worker and read here with relaxed loads, so each is at most a moment old; two counters may
//! be read a few requests apart (see metrics/Histogram.zig for the histogram). Health and
//! connection counts are already shared atomics (`Health`, `Shared`).
const std = @import("std");
const assert = std.debug.assert;

const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const log = @import("../stdx/log.zig");
const Config = @import("../config/Config.zig");
const Generation = @import("../proxy/Generation.zig");
const Pool = @import("../upstream/Pool.zig");
const Snapshot = @import("../metrics/Snapshot.zig");
const Worker = @import("Worker.zig");
const tls = @import("../tls/tls.zig");
const Handler = @import("../handler/Handler.zig");
const Runtime = @import("Runtime.zig");
const Dns = @import("Dns.zig");
const Generations = @import("generations.zig").Generations;
const RouteTotals = @import("generations.zig").RouteTotals;

comptime {
    // metrics/ does not import config/: its bounds must be the configuration's.
    assert(Snapshot.backends_max == Config.backends_count_max);
    assert(Snapshot.backends_total_max == Config.backends_total_max);
    assert(Snapshot.pool_name_bytes_max == Config.pool_name_bytes_max);
    assert(Snapshot.address_bytes_max == Address.text_bytes_max);
    assert(Snapshot.pools_max == Config.pools_count_max);
    assert(Snapshot.routes_max == Config.routes_count_max);
    assert(Snapshot.route_name_bytes_max == Config.route_name_bytes_max);
    assert(Snapshot.handlers_max == Config.handlers_count_max);
    assert(Snapshot.handler_name_bytes_max == Config.handler_name_bytes_max);
    assert(Snapshot.handler_failure_reasons.len == Handler.Failure.count);
    for (Snapshot.handler_failure_reasons, 0..) |reason, i| {
        assert(std.mem.eql(u8, reason, @tagName(@as(Handler.Failure, @fromBackingInt(@intCast(i))))));
    }
}

/// Fills `snapshot` with the process's figures and the current generation's pools and routes,
/// summed over the workers.
pub fn collect(runtime: *const Runtime, snapshot: *Snapshot) void {
    const generation = &runtime.generations.current().generation;
    assert(runtime.options.version.len <= Snapshot.version_bytes_max);
    const backends_storage = snapshot.backends_storage;
    assert(backends_storage.len == Snapshot.backends_total_max);
    snapshot.* = .{
        .backends_storage = backends_storage,
        .version = runtime.options.version,
        .uptime_ns = sys.clockMonotonicNs() -| runtime.started_ns,
        .workers_count = @intCast(runtime.workers.len),
        .io = runtime.io,
        // sluice's own, and AWS-LC's from the general heap (workers allocate from their
        // TLS pools, never from it).
        .heap_allocations_after_startup = runtime.static.allocationsAfterStartup() +
            (tls.memory.heapAllocations() - runtime.tls_heap_allocations_uncounted),
        .connections_active = runtime.connectionsActive(),
        .config_generation = generation.number,
        .reloads_ok = runtime.reloads.ok,
        .reloads_failed = runtime.reloads.failed,
        .last_reload_ok = runtime.reloads.last_ok,
        .last_reload_unix_seconds = runtime.reloads.last_unix_seconds,
        .pools_count = @intCast(generation.pools.len),
        .routes_count = generation.config.routes_count,
    };
    for (runtime.workers) |*worker| addWorker(snapshot, worker);
    addHandlers(snapshot, runtime);
    if (runtime.supervisor.dns) |dns| addDnsNames(snapshot, dns);
    var backends_used: usize = 0;
    for (generation.pools, snapshot.pools[0..generation.pools.len]) |instance, *pool| {
        // Config.validate bounds the pools' backends together by `backends_total_max`.
        const members_count = instance.shared.members.newest().members_count;
        addPool(pool, backends_storage[backends_used..][0..members_count], instance);
        backends_used += members_count;
    }
    for (snapshot.routes[0..generation.config.routes_count], 0..) |*route, index| {
        const label = generation.config.routeLabel(index);
        route.* = .{
            .name = label,
            .requests = routeTotal(runtime.generations, &runtime.generations.route_totals, Generation.routeRequests, label),
            .rate_limited = routeTotal(runtime.generations, &runtime.generations.route_rate_limited_totals, Generation.routeRateLimited, label),
        };
    }
}

/// A count of the route labelled `label` since start-up (requests it routed, or refused with a
/// 429): the freed generations' total and every live generation's count (an old one still
/// finishing requests too).
fn routeTotal(
    generations: *const Generations,
    freed: *const RouteTotals,
    count: fn (*const Generation, []const u8) u64,
    label: []const u8,
) u64 {
    var total = freed.get(label);
    for (generations.live[0..generations.live_count]) |built| {
        total += count(&built.generation, label);
    }
    return total;
}

/// The stats line (SIGUSR2, and at exit): `LABEL heap_allocations_after_startup=N ...`.
pub fn logStats(runtime: *Runtime, label: []const u8) void {
    collect(runtime, runtime.snapshot);
    var buffer: [Snapshot.stats_bytes_max]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    runtime.snapshot.writeStats(&w) catch unreachable; // The buffer is sized for the longest.
    log.info("{s} {s}", .{ label, w.buffered() });
}

/// `Admin.Collector`: the admin listener renders `/metrics` and `/status` from `snapshot`,
/// which is the runtime's own (the admin was given it at start-up).
pub fn adminCollect(context: *anyopaque, snapshot: *Snapshot) void {
    const runtime: *Runtime = @ptrCast(@alignCast(context));
    assert(snapshot == runtime.snapshot);
    collect(runtime, snapshot);
}

/// The current generation's handlers, summed over the workers. A handler's counts are kept by
/// name, so they go on across the reloads that compile it again.
fn addHandlers(snapshot: *Snapshot, runtime: *const Runtime) void {
    const generations = runtime.generations;
    const handlers = generations.current().generation.config.handlers();
    snapshot.handlers_count = @intCast(handlers.len);
    for (snapshot.handlers[0..handlers.len], handlers) |*sum, *handler| {
        sum.* = .{ .name = handler.name };
        const slot = generations.handlerSlotOf(handler.name).?; // Every built handler has one.
        for (generations.handler_tallies) |*row| {
            const stats = &row.tallies[slot].stats;
            sum.requests += stats.requests.load();
            for (&sum.failures, &stats.failures) |*total, *count| total.* += count.load();
        }
    }
}

/// The names the configuration in force gives (those no pool names any more are left out).
/// Control thread, as the resolver's writes are: what it points to stays put until the next
/// tick of the loop, and the snapshot is rendered before that.
fn addDnsNames(snapshot: *Snapshot, dns: *const Dns) void {
    comptime assert(Snapshot.DnsNames.names_max == Dns.names_max);
    const now_ns = dns.loop.now_ns;
    for (dns.names()) |*entry| {
        if (!entry.wanted) continue;
        snapshot.dns_names[snapshot.dns_names_count] = .{
            .name = entry.name.slice(),
            .port = entry.port,
            .state = @tagName(entry.state),
            .addresses = entry.slice(),
            .ttl_s = entry.ttl_s,
            .age_ns = if (entry.everResolved()) now_ns -| entry.resolved_ns else null,
            .resolutions = entry.resolutions,
            .failures = entry.failures,
            .last_failure = if (entry.last_failure) |failure| @tagName(failure) else "",
        };
        snapshot.dns_names_count += 1;
    }
}

/// The pool's members (the slots of its newest table, in slot order) and its counters.
/// `backends` has room for the members.
fn addPool(pool: *Snapshot.Pool, backends: []Snapshot.Backend, instance: *const Pool) void {
    const config = &instance.config;
    const shared = &instance.shared;
    const table = shared.members.newest();
    var slots_of: [Config.backends_count_max]u16 = undefined;
    assert(config.name.len <= Snapshot.pool_name_bytes_max); // Config.validate.
    assert(backends.len == table.members_count);
    pool.* = .{
        .name = config.name,
        .strategy = @tagName(config.strategy),
        .backends_count = table.members_count,
        .backends = backends,
    };
    var at: u32 = 0;
    for (0..shared.count()) |i| {
        if (!table.isPresent(@intCast(i))) continue;
        slots_of[at] = @intCast(i);
        const health = &shared.health.backends[i];
        backends[at] = .{
            .address = health.name(),
            .weight = table.weights[i],
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
        at += 1;
    }
    const counters = &pool.counters;
    for (instance.locals) |*local| {
        const stats = &local.stats;
        counters.requests += stats.requests.load();
        counters.upstream_connect_failures += stats.upstream_connect_failures.load();
        counters.upstream_errors += stats.upstream_errors.load();
        counters.upstream_stale_retries += stats.upstream_stale_retries.load();
        counters.upstream_stale_closes += stats.upstream_stale_closes.load();
        counters.upstream_tls_handshakes += stats.tls_handshakes.load();
        counters.upstream_tls_resumptions += stats.tls_resumptions.load();
        counters.retries += stats.retries.load();
        counters.retries_refused_by_budget += stats.retries_refused_by_budget.load();
        counters.overloaded += stats.overloaded.load();
        counters.no_backend_available += stats.no_backend_available.load();
        counters.upgrades += stats.upgrades.load();
        const connections = &local.connections.stats;
        counters.upstream_pool_hits += connections.reused.load();
        counters.upstream_pool_misses += connections.opened.load();
        counters.upstream_idle_closed_by_backend += connections.closed_idle_by_backend.load();
        counters.upstream_idle_closed_timeout += connections.closed_idle_timeout.load();
        pool.latency.addRelaxed(&stats.latency);
        for (&pool.own_responses, &stats.own_responses) |*sum, *count| sum.* += count.load();
        for (pool.backends[0..pool.backends_count], slots_of[0..pool.backends_count]) |*backend, i| {
            backend.in_flight += @atomicLoad(u32, &local.inflight[i], .monotonic);
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
fn addWorker(snapshot: *Snapshot, worker: *const Worker) void {
    const proxy = &worker.proxy;
    const stats = &proxy.stats;
    snapshot.connections_accepted += worker.connections_accepted.load();
    snapshot.buffers_in_use += proxy.buffers.totalCount() - proxy.buffers.availableCount();
    snapshot.client_errors += stats.client_errors.load();
    snapshot.client_timeouts += stats.client_timeouts.load();
    snapshot.idle_parks += stats.idle_parks.load();
    snapshot.proxy_headers += stats.proxy_headers.load();
    snapshot.proxy_headers_refused += stats.proxy_headers_refused.load();
    snapshot.requests_forbidden += stats.requests_forbidden.load();
    snapshot.requests_rate_limited += stats.requests_rate_limited.load();
    snapshot.rate_limit_evictions += stats.rate_limit_evictions.load();
    snapshot.buffers_trimmed += stats.buffers_trimmed.load();
    snapshot.requests_unrouted += stats.requests_unrouted.load();
    snapshot.local_responses += stats.local_responses.load();
    snapshot.request_ids_generated += stats.request_ids_generated.load();
    snapshot.responses_compressed += stats.responses_compressed.load();
    snapshot.compression_slots_full += stats.compression_slots_full.load();
    snapshot.compression_bytes_in += stats.compression_bytes_in.load();
    snapshot.compression_bytes_out += stats.compression_bytes_out.load();
    snapshot.tls_handshakes += stats.tls_handshakes.load();
    snapshot.tls_resumptions += stats.tls_resumptions.load();
    snapshot.tls_handshakes_failed += stats.tls_handshakes_failed.load();
    snapshot.tls_handshakes_tls12 += stats.tls_handshakes_tls12.load();
    snapshot.tls_handshakes_tls13 += stats.tls_handshakes_tls13.load();
    if (proxy.http2) |http2| {
        const limits = &http2.counters;
        snapshot.http2_connections += http2.connections.load();
        snapshot.http2_streams += http2.streams.load();
        snapshot.http2_streams_refused += http2.streams_refused.load() + limits.streams_refused.load();
        snapshot.http2_header_lists_too_large += limits.header_lists_too_large.load();
        snapshot.http2_reset_floods += limits.reset_floods.load();
        snapshot.http2_control_frame_floods += limits.control_frame_floods.load();
        snapshot.http2_continuation_floods += limits.continuation_floods.load();
        snapshot.http2_ack_floods += limits.ack_floods.load();
        snapshot.http2_settings_too_large += limits.settings_too_large.load();
        snapshot.http2_glitch_floods += limits.glitch_floods.load();
        snapshot.http2_out_of_memory += limits.out_of_memory.load();
    }
    if (proxy.access_log) |*access_log| snapshot.access_log_dropped += access_log.dropped.load(.monotonic);
}
