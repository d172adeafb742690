//! What the admin listener and the stats line show, as plain data: the process, its
//! configuration's reloads, every route, every pool and each pool's backends. The control
//! thread fills one (runtime/collector.zig sums the workers' counters into it) and this file
//! renders it as Prometheus text (`/metrics`), JSON (`/status`) or the stats line that SIGUSR2
//! and the exit log. Keeping the data plain keeps metrics/ below
//! every layer but stdx/ and lets the renderers be tested with made-up values.
//!
//! Sizing: a rendering needs at most `render_bytes_max` bytes: a fixed part plus a budget per
//! pool, per backend and per route, summed for the largest configuration a reload may bring
//! (`pools_max` pools, `backends_total_max` backends among them, `routes_max` routes), because the admin
//! sizes its buffers once, at start-up. A test renders that worst case (the longest names,
//! the largest values) and checks every part fits its budget with a quarter of it to spare.
const std = @import("std");
const assert = std.debug.assert;

const Histogram = @import("Histogram.zig");
const Prometheus = @import("Prometheus.zig");
const Json = @import("Json.zig");
pub const DnsNames = @import("DnsNames.zig");

const Snapshot = @This();

// Config's bounds (`pools_count_max`, `backends_count_max`, `routes_count_max` and the name
// lengths), repeated here so metrics/ does not import config/; runtime/collector.zig asserts they agree.
pub const pools_max = 16;
/// Members of one pool, and of all pools together (Config's `backends_count_max` and
/// `backends_total_max`).
pub const backends_max = 1024;
pub const backends_total_max = 2048;
pub const routes_max = 64;
/// A pool's name as validated by Config (`pool_name_bytes_max`).
pub const pool_name_bytes_max = 64;
/// A route's name as validated by Config (`route_name_bytes_max`); an unnamed route is
/// labelled by its position, "0" to "63", which is shorter.
pub const route_name_bytes_max = 64;
/// A Unix socket backend's "unix:" and a path of 107 bytes, longer than the longest IP address
/// ("[1111:2222:3333:4444:5555:6666:7777:8888]:65535", 47); its bytes need no escape in JSON
/// or a label (Address.parseUnix).
pub const address_bytes_max = 112;
pub const version_bytes_max = 32;
/// Config's `handlers_count_max` and `handler_name_bytes_max`.
pub const handlers_max = 8;
pub const handler_name_bytes_max = 64;
/// Why a handler gave no response (handler/Handler.zig `Failure`, in its order; the collector
/// asserts they agree): the `reason` label of `sluice_handler_failures_total`.
pub const handler_failure_reasons = [_][]const u8{
    "exception",    "memory",            "time", "deadline",  "depth", "response_too_large", "not_a_response",
    "unknown_pool", "request_too_large", "busy", "abandoned",
};

/// Response classes 1xx to 5xx.
pub const classes = [5][]const u8{ "1xx", "2xx", "3xx", "4xx", "5xx" };

version: []const u8 = "",
uptime_ns: u64 = 0,
workers_count: u32 = 0,
/// The workers' event loop backend, "io_uring" or "epoll".
io: []const u8 = "",
draining: bool = false,
heap_allocations_after_startup: u64 = 0,
connections_active: u64 = 0,
connections_accepted: u64 = 0,
buffers_in_use: u64 = 0,
/// Requests sluice refused itself (4xx), and those of them that were timeouts (408).
client_errors: u64 = 0,
client_timeouts: u64 = 0,
/// Idle client connections that returned their buffer (ARCHITECTURE.md, "Memory").
idle_parks: u64 = 0,
/// PROXY protocol headers taken, and connections refused for a missing or bad one.
proxy_headers: u64 = 0,
proxy_headers_refused: u64 = 0,
/// Requests refused with a 403 by an allow or deny list.
requests_forbidden: u64 = 0,
/// Requests refused with a 429 by a rate limit; buckets evicted before they were full again.
requests_rate_limited: u64 = 0,
rate_limit_evictions: u64 = 0,
access_log_dropped: u64 = 0,
buffers_trimmed: u64 = 0,
/// Requests no route matched, answered 404 by sluice.
requests_unrouted: u64 = 0,
/// Responses sluice made itself for a route: fixed responses and redirects.
local_responses: u64 = 0,
/// Request ids sluice generated (`request_id`, or a rule naming `$request_id`).
request_ids_generated: u64 = 0,
/// Responses gzipped, those that found every compressor slot busy, and the bytes in and out.
responses_compressed: u64 = 0,
compression_slots_full: u64 = 0,
compression_bytes_in: u64 = 0,
compression_bytes_out: u64 = 0,
/// TLS listeners: handshakes completed, of them resumed, and failed.
tls_handshakes: u64 = 0,
tls_resumptions: u64 = 0,
tls_handshakes_failed: u64 = 0,
/// Completed handshakes by protocol version.
tls_handshakes_tls12: u64 = 0,
tls_handshakes_tls13: u64 = 0,
/// HTTP/2 from clients: connections, streams, and each limit that refused a stream or ended
/// a connection (h2/ServerSession.zig, `Counters`).
http2_connections: u64 = 0,
http2_streams: u64 = 0,
http2_streams_refused: u64 = 0,
http2_header_lists_too_large: u64 = 0,
http2_reset_floods: u64 = 0,
http2_control_frame_floods: u64 = 0,
http2_continuation_floods: u64 = 0,
http2_ack_floods: u64 = 0,
http2_settings_too_large: u64 = 0,
http2_glitch_floods: u64 = 0,
http2_out_of_memory: u64 = 0,

/// The configuration in use: 1 as started, one more per reload applied.
config_generation: u64 = 1,
reloads_ok: u64 = 0,
reloads_failed: u64 = 0,
/// Whether the last reload was applied; true before any (the configuration in use loaded
/// without error), as Prometheus's own `config_last_reload_successful` reads.
last_reload_ok: bool = true,
/// When the last reload, applied or failed, ended (Unix time); 0: none yet.
last_reload_unix_seconds: u64 = 0,

pools_count: u32 = 0,
pools: [pools_max]Pool = undefined,
handlers_count: u32 = 0,
handlers: [handlers_max]Handler = undefined,
routes_count: u32 = 0,
routes: [routes_max]Route = undefined,
/// Backend names (runtime/Dns.zig), when a configuration has had one.
dns_names_count: u32 = 0,
dns_names: [DnsNames.names_max]DnsNames.Name = undefined,
/// Every pool's backends, one after the other (`Pool.backends`): `backends_total_max` of
/// them, allocated apart (untouched until used) and kept by whoever refills the snapshot.
backends_storage: []Backend = &.{},

pub const Pool = struct {
    name: []const u8 = "",
    strategy: []const u8 = "",
    counters: Counters = .{},
    /// Request durations, head parsed to exchange over, all workers.
    latency: Histogram = .{},
    /// Responses sluice answered itself for the pool's requests, by class.
    own_responses: [classes.len]u64 = @splat(0),
    backends_count: u32 = 0,
    /// In the snapshot's `backends_storage`.
    backends: []Backend = &.{},

    pub fn backendsSlice(pool: *const Pool) []const Backend {
        assert(pool.backends_count <= backends_max);
        return pool.backends[0..pool.backends_count];
    }

    /// Every response sent for the pool: relayed from its backends, or answered by sluice
    /// itself (a 502 for a failed backend, a 503 with none available, a 413...).
    pub fn responses(pool: *const Pool) [classes.len]u64 {
        var total: [classes.len]u64 = pool.own_responses;
        for (pool.backendsSlice()) |*backend| {
            for (&total, backend.responses) |*sum, n| sum.* +%= n;
        }
        return total;
    }

    pub fn backendsAvailable(pool: *const Pool) u32 {
        var count: u32 = 0;
        for (pool.backendsSlice()) |*backend| count += @intFromBool(backend.available);
        return count;
    }
};

/// Counters of one pool, all workers together. Each becomes `sluice_NAME_total{pool}`.
pub const Counters = struct {
    requests: u64 = 0,
    upstream_connect_failures: u64 = 0,
    upstream_errors: u64 = 0,
    upstream_stale_retries: u64 = 0,
    upstream_stale_closes: u64 = 0,
    upstream_tls_handshakes: u64 = 0,
    upstream_tls_resumptions: u64 = 0,
    retries: u64 = 0,
    retries_refused_by_budget: u64 = 0,
    overloaded: u64 = 0,
    no_backend_available: u64 = 0,
    upgrades: u64 = 0,
    upstream_pool_hits: u64 = 0,
    upstream_pool_misses: u64 = 0,
    upstream_idle_closed_by_backend: u64 = 0,
    upstream_idle_closed_timeout: u64 = 0,
    ejections: u64 = 0,
    ejections_refused_by_cap: u64 = 0,
    ejection_trials: u64 = 0,
};

pub const BackendState = enum { serving, ejected, trial };

pub const Backend = struct {
    address: []const u8,
    weight: u16,
    /// Takes new requests: active checks say up and not ejected.
    available: bool,
    /// What active checks say (up when they are off).
    active_up: bool,
    state: BackendState,
    /// Open connections to it (busy and idle), all workers.
    connections_open: u64,
    /// Requests sent to it whose response is not complete, all workers.
    in_flight: u64,
    /// Responses relayed from it, by class.
    responses: [classes.len]u64,
    /// Tries sent to it (retries count on the backend they went to).
    requests: u64 = 0,
};

pub const Route = struct {
    /// The configured name, or the route's position ("0", "1", ...) when it has none.
    name: []const u8,
    /// Requests the route matched, all workers, whatever its action.
    requests: u64,
    /// Of those, the ones its rate limit (or the top level's) refused with a 429.
    rate_limited: u64 = 0,
};

/// One JavaScript handler, all workers.
pub const Handler = struct {
    name: []const u8,
    /// Calls of the handler.
    requests: u64 = 0,
    /// Calls answered 500 instead, by reason (`handler_failure_reasons`).
    failures: [handler_failure_reasons.len]u64 = @splat(0),
};

pub fn dnsNamesSlice(snapshot: *const Snapshot) []const DnsNames.Name {
    assert(snapshot.dns_names_count <= DnsNames.names_max);
    return snapshot.dns_names[0..snapshot.dns_names_count];
}

pub fn handlersSlice(snapshot: *const Snapshot) []const Handler {
    assert(snapshot.handlers_count <= handlers_max);
    return snapshot.handlers[0..snapshot.handlers_count];
}

pub fn poolsSlice(snapshot: *const Snapshot) []const Pool {
    assert(snapshot.pools_count <= pools_max);
    return snapshot.pools[0..snapshot.pools_count];
}

pub fn routesSlice(snapshot: *const Snapshot) []const Route {
    assert(snapshot.routes_count <= routes_max);
    return snapshot.routes[0..snapshot.routes_count];
}

// The budgets, measured by the last test below at worst (Prometheus text is the larger format
// for all but routes): each is at least a third above what it takes today.

/// The process and configuration families: 6.7 KiB (HTTP/2's eleven counters came to 1.6 KiB).
pub const render_bytes_fixed = 12 * 1024;
/// Per pool, without its backends: 39 samples of at most about 250 bytes (the pool name
/// escaped to twice its length, a `le` or class label, a 20-digit value), 10 KiB with the
/// HELP and TYPE lines of the pool families counted in.
pub const render_bytes_per_pool = 16 * 1024;
/// Per backend: eleven samples of at most about 330 bytes (the pool name escaped, the longest
/// address, a Unix socket's 112 bytes, a class label, a 20-digit value): 3.6 KiB.
pub const render_bytes_per_backend = 5 * 1024;
/// Per route: its JSON object, whose name may escape to six bytes a byte, 430 bytes (the
/// Prometheus sample takes 190).
pub const render_bytes_per_route = 768;
/// Per handler: twelve samples of at most about 200 bytes (the name escaped, a reason label, a
/// 20-digit value), 2.5 KiB.
pub const render_bytes_per_handler = 4 * 1024;

/// The largest rendering, in either format, of any configuration a reload may bring: 10.7 MiB
/// (about 7.3 MiB measured, every backend a Unix socket of the longest path). The admin
/// reserves this much address space per connection, untouched until a response is rendered
/// into it, so only what a response uses becomes resident.
pub const render_bytes_max: u32 =
    render_bytes_fixed +
    // Every pool, whatever its backends.
    pools_max * render_bytes_per_pool +
    // Every backend of every pool: 2,048 of them, 10 MiB, the bulk of it.
    backends_total_max * render_bytes_per_backend +
    // Every route.
    routes_max * render_bytes_per_route +
    // Every handler, and the HELP and TYPE lines of their two families.
    handlers_max * render_bytes_per_handler + 1024 +
    // Every backend name, and their four families' HELP and TYPE lines.
    DnsNames.names_max * DnsNames.render_bytes_per_name + 1024;

comptime {
    assert(render_bytes_max == 10910 * 1024);
    assert(backends_total_max >= backends_max);
}

// ---------------------------------------------------------------------------------------------
// Prometheus text (/metrics)

/// Process-wide families first, then the configuration's, the routes', the pools' and their
/// backends'. Each family's HELP and TYPE lines come once, followed by its samples for every
/// route, pool or backend; a family with nothing to sample (no route configured) is left out,
/// since a family without samples says nothing. Names follow the usual conventions: `sluice_`
/// prefix, base units (seconds), `_total` on counters.
pub fn writePrometheus(snapshot: *const Snapshot, w: *std.Io.Writer) Prometheus.Error!void {
    var p: Prometheus = .init(w);
    try p.family("sluice_build_info", .gauge, "The running version; always 1.");
    try p.sample("sluice_build_info", &.{.{ .name = "version", .value = snapshot.version }}, 1);
    inline for (process_gauges) |gauge| {
        try p.family(gauge[1], .gauge, gauge[2]);
        try p.sample(gauge[1], &.{}, number(@field(snapshot, gauge[0])));
    }
    try p.family("sluice_uptime_seconds", .gauge, "Seconds since the process started.");
    try p.sampleSeconds("sluice_uptime_seconds", &.{}, snapshot.uptime_ns);
    inline for (process_counters) |counter| {
        try p.family(counter[1], .counter, counter[2]);
        try p.sample(counter[1], &.{}, @field(snapshot, counter[0]));
    }
    const by_version = "sluice_tls_handshakes_by_version_total";
    try p.family(by_version, .counter, "TLS handshakes completed on listeners, by protocol version.");
    try p.sample(by_version, &.{.{ .name = "version", .value = "TLSv1.2" }}, snapshot.tls_handshakes_tls12);
    try p.sample(by_version, &.{.{ .name = "version", .value = "TLSv1.3" }}, snapshot.tls_handshakes_tls13);
    try writeConfigPrometheus(snapshot, &p);
    try writeRoutesPrometheus(snapshot, &p);
    try writeHandlersPrometheus(snapshot, &p);
    try DnsNames.writePrometheus(snapshot.dnsNamesSlice(), &p);
    try writePoolsPrometheus(snapshot, &p);
    try writeBackendsPrometheus(snapshot, &p);
}

/// Field of Snapshot, metric name, help.
const process_gauges = [_]struct { []const u8, []const u8, []const u8 }{
    .{ "workers_count", "sluice_workers", "Worker threads." },
    .{ "draining", "sluice_draining", "1 once a drain (SIGTERM, SIGINT) began." },
    .{ "heap_allocations_after_startup", "sluice_heap_allocations_after_startup", "Heap allocations of the request path since start-up ended (a reload's, made and freed by the control thread, are not counted); 0 by design." },
    .{ "connections_active", "sluice_connections_active", "Client connections open now." },
    .{ "buffers_in_use", "sluice_buffers_in_use", "Connection buffers taken from the buffer pools now." },
};

const process_counters = [_]struct { []const u8, []const u8, []const u8 }{
    .{ "connections_accepted", "sluice_connections_accepted_total", "Client connections accepted." },
    .{ "client_errors", "sluice_client_errors_total", "Requests answered with a 4xx by sluice itself (malformed, too large, timed out)." },
    .{ "client_timeouts", "sluice_client_timeouts_total", "Clients too slow to send a request head or body (408), or, over HTTP/2, to open their window for a response (RST_STREAM)." },
    .{ "requests_unrouted", "sluice_requests_unrouted_total", "Requests no route matched, answered 404 by sluice." },
    .{ "local_responses", "sluice_local_responses_total", "Responses made by sluice itself for a route: fixed responses and redirects." },
    .{ "request_ids_generated", "sluice_request_ids_generated_total", "Request ids sluice generated: the client sent none, or one that was not plain." },
    .{ "responses_compressed", "sluice_responses_compressed_total", "Responses gzipped on their way to the client." },
    .{ "compression_slots_full", "sluice_compression_slots_full_total", "Responses that would have been gzipped but passed as sent: every compressor slot of the worker was busy." },
    .{ "compression_bytes_in", "sluice_compression_bytes_in_total", "Response body bytes that went into gzip (counted when each response ends)." },
    .{ "compression_bytes_out", "sluice_compression_bytes_out_total", "Gzip bytes that came out of it, chunk framing not counted." },
    .{ "idle_parks", "sluice_idle_parks_total", "Idle client connections that returned their buffer to the pool." },
    .{ "proxy_headers", "sluice_proxy_protocol_headers_total", "PROXY protocol headers taken on listeners that ask for them." },
    .{ "requests_forbidden", "sluice_requests_forbidden_total", "Requests answered 403 because an allow or deny list refused the client's address." },
    .{ "requests_rate_limited", "sluice_requests_rate_limited_total", "Requests answered 429 because a rate limit's bucket was empty." },
    .{ "rate_limit_evictions", "sluice_rate_limit_evictions_total", "Rate-limit buckets forgotten before they were full again, to make room in a worker's table." },
    .{ "proxy_headers_refused", "sluice_proxy_protocol_refused_total", "Connections refused on PROXY protocol listeners: no header, a malformed one, or none before the head deadline." },
    .{ "access_log_dropped", "sluice_access_log_lines_dropped_total", "Access-log lines dropped because the log writer fell behind." },
    .{ "buffers_trimmed", "sluice_buffers_trimmed_total", "Free buffers whose pages were given back to the kernel." },
    .{ "tls_handshakes", "sluice_tls_handshakes_total", "TLS handshakes completed on listeners." },
    .{ "tls_resumptions", "sluice_tls_resumptions_total", "TLS handshakes on listeners that resumed a session (a ticket)." },
    .{ "tls_handshakes_failed", "sluice_tls_handshakes_failed_total", "TLS handshakes on listeners that failed, timed out or were not TLS." },
    .{ "http2_connections", "sluice_http2_connections_total", "Client connections that spoke HTTP/2." },
    .{ "http2_streams", "sluice_http2_streams_total", "HTTP/2 request streams served as exchanges." },
    .{ "http2_streams_refused", "sluice_http2_streams_refused_total", "HTTP/2 streams refused: past the concurrent streams limit, or no stream slot free." },
    .{ "http2_header_lists_too_large", "sluice_http2_header_lists_too_large_total", "HTTP/2 header blocks past the header limits (answered 431)." },
    .{ "http2_reset_floods", "sluice_http2_reset_floods_total", "HTTP/2 connections ended for resetting streams too fast (Rapid Reset)." },
    .{ "http2_control_frame_floods", "sluice_http2_control_frame_floods_total", "HTTP/2 connections ended for a flood of SETTINGS or PING frames." },
    .{ "http2_continuation_floods", "sluice_http2_continuation_floods_total", "HTTP/2 connections ended for too many CONTINUATION frames." },
    .{ "http2_ack_floods", "sluice_http2_ack_floods_total", "HTTP/2 connections ended with too many acknowledgements unread." },
    .{ "http2_settings_too_large", "sluice_http2_settings_too_large_total", "HTTP/2 connections ended for a SETTINGS frame with too many entries." },
    .{ "http2_glitch_floods", "sluice_http2_glitch_floods_total", "HTTP/2 connections ended for too many suspicious frames (empty DATA, frames on closed streams)." },
    .{ "http2_out_of_memory", "sluice_http2_out_of_memory_total", "HTTP/2 connections failed because the worker's HTTP/2 memory was exhausted." },
};

fn number(value: anytype) u64 {
    return switch (@TypeOf(value)) {
        bool => @intFromBool(value),
        else => value,
    };
}

fn writeConfigPrometheus(snapshot: *const Snapshot, p: *Prometheus) Prometheus.Error!void {
    const generation = "sluice_config_generation";
    try p.family(generation, .gauge, "Configuration generation: 1 as started, one more per reload applied.");
    try p.sample(generation, &.{}, snapshot.config_generation);
    const reloads = "sluice_config_reloads_total";
    try p.family(reloads, .counter, "Configuration reloads, by result (failed: the old configuration stayed).");
    try p.sample(reloads, &.{.{ .name = "result", .value = "ok" }}, snapshot.reloads_ok);
    try p.sample(reloads, &.{.{ .name = "result", .value = "failed" }}, snapshot.reloads_failed);
    const successful = "sluice_config_last_reload_successful";
    try p.family(successful, .gauge, "0 when the last reload failed, 1 when it was applied or none was tried.");
    try p.sample(successful, &.{}, @intFromBool(snapshot.last_reload_ok));
    const timestamp = "sluice_config_last_reload_timestamp_seconds";
    try p.family(timestamp, .gauge, "Unix time at which the last reload, applied or failed, ended; 0 before any.");
    try p.sample(timestamp, &.{}, snapshot.last_reload_unix_seconds);
}

fn writeRoutesPrometheus(snapshot: *const Snapshot, p: *Prometheus) Prometheus.Error!void {
    const routes = snapshot.routesSlice();
    if (routes.len == 0) return;
    const requests = "sluice_route_requests_total";
    try p.family(requests, .counter, "Requests a route matched, whatever its action (proxied, answered or redirected).");
    for (routes) |*route| {
        try p.sample(requests, &.{.{ .name = "route", .value = route.name }}, route.requests);
    }
    const limited = "sluice_route_rate_limited_total";
    try p.family(limited, .counter, "Requests a route matched that a rate limit refused with a 429.");
    for (routes) |*route| {
        try p.sample(limited, &.{.{ .name = "route", .value = route.name }}, route.rate_limited);
    }
}

fn writeHandlersPrometheus(snapshot: *const Snapshot, p: *Prometheus) Prometheus.Error!void {
    const handlers = snapshot.handlersSlice();
    if (handlers.len == 0) return;
    const requests = "sluice_handler_requests_total";
    try p.family(requests, .counter, "Requests a JavaScript handler was called for.");
    for (handlers) |*handler| {
        try p.sample(requests, &.{.{ .name = "handler", .value = handler.name }}, handler.requests);
    }
    const failures = "sluice_handler_failures_total";
    try p.family(failures, .counter, "Handler calls answered 500 instead: an uncaught exception, a memory, time or " ++
        "depth limit, a response too large for its buffer, not a Response, or a Response.proxy to an unknown pool or too large to send; " ++
        "busy: a 503, suspended_max requests waited; abandoned: the client left while it waited.");
    for (handlers) |*handler| {
        for (handler_failure_reasons, handler.failures) |reason, count| {
            try p.sample(failures, &.{ .{ .name = "handler", .value = handler.name }, .{ .name = "reason", .value = reason } }, count);
        }
    }
}

const pool_counters = [_]struct { []const u8, []const u8, []const u8 }{
    .{ "requests", "sluice_requests_total", "Requests whose head was parsed and that went to the pool." },
    .{ "upstream_connect_failures", "sluice_upstream_connect_failures_total", "Connections to a backend that failed or timed out." },
    .{ "upstream_errors", "sluice_upstream_errors_total", "Requests answered 502 or 504 by sluice (backend failed, timed out or sent garbage)." },
    .{ "retries", "sluice_retries_total", "Tries after the first, on another backend." },
    .{ "retries_refused_by_budget", "sluice_retries_refused_by_budget_total", "Retries not made because the retry budget was spent." },
    .{ "upstream_stale_retries", "sluice_upstream_stale_retries_total", "Requests sent again on a fresh connection after a reused one failed before any response byte." },
    .{ "upstream_stale_closes", "sluice_upstream_stale_closes_total", "Requests that could not be sent again after a reused connection failed before any response byte: their client connection was closed unanswered, for the client to retry." },
    .{ "upstream_tls_handshakes", "sluice_upstream_tls_handshakes_total", "TLS handshakes completed with a backend (a pool's tls), on new connections." },
    .{ "upstream_tls_resumptions", "sluice_upstream_tls_resumptions_total", "Of those, the handshakes that resumed a session kept from an earlier one." },
    .{ "overloaded", "sluice_overloaded_total", "Requests answered 503 by sluice (no backend available, caps or buffers exhausted)." },
    .{ "no_backend_available", "sluice_no_backend_available_total", "Requests answered 503 because no backend was available." },
    .{ "upgrades", "sluice_upgrades_total", "Connections upgraded (101) and tunnelled." },
    .{ "upstream_pool_hits", "sluice_upstream_pool_hits_total", "Requests sent on a reused idle backend connection." },
    .{ "upstream_pool_misses", "sluice_upstream_pool_misses_total", "Backend connections opened." },
    .{ "ejections", "sluice_ejections_total", "Backends ejected by passive outlier detection." },
    .{ "ejections_refused_by_cap", "sluice_ejections_refused_by_cap_total", "Ejections not made because the ejection cap was reached." },
    .{ "ejection_trials", "sluice_ejection_trials_total", "Half-open trial requests sent to an ejected backend." },
};

/// The pool families, each with one sample (or series) per pool, labelled `pool`.
fn writePoolsPrometheus(snapshot: *const Snapshot, p: *Prometheus) Prometheus.Error!void {
    const pools = snapshot.poolsSlice();
    if (pools.len == 0) return;
    inline for (pool_counters) |counter| {
        try p.family(counter[1], .counter, counter[2]);
        for (pools) |*pool| {
            try p.sample(counter[1], &poolLabel(pool), @field(pool.counters, counter[0]));
        }
    }
    const idle_closed = "sluice_upstream_idle_closed_total";
    try p.family(idle_closed, .counter, "Idle pooled backend connections closed, by why.");
    for (pools) |*pool| {
        const reasons = [_]struct { []const u8, u64 }{
            .{ "backend", pool.counters.upstream_idle_closed_by_backend },
            .{ "timeout", pool.counters.upstream_idle_closed_timeout },
        };
        for (reasons) |reason| {
            const labels = [_]Prometheus.Label{
                .{ .name = "pool", .value = pool.name },
                .{ .name = "reason", .value = reason[0] },
            };
            try p.sample(idle_closed, &labels, reason[1]);
        }
    }
    const responses = "sluice_responses_total";
    try p.family(responses, .counter, "Responses for the pool's requests, by status class: relayed from its backends or answered by sluice (502, 503, 504, 413).");
    for (pools) |*pool| {
        for (pool.responses(), classes) |count, class| {
            const labels = [_]Prometheus.Label{
                .{ .name = "pool", .value = pool.name },
                .{ .name = "class", .value = class },
            };
            try p.sample(responses, &labels, count);
        }
    }
    const duration = "sluice_request_duration_seconds";
    try p.family(duration, .histogram, "From the request head parsed to the response sent, the error answered or the connection closed.");
    for (pools) |*pool| try p.histogram(duration, &poolLabel(pool), &pool.latency);
    const available = "sluice_backends_available";
    try p.family(available, .gauge, "Backends that take new requests now.");
    for (pools) |*pool| try p.sample(available, &poolLabel(pool), pool.backendsAvailable());
}

fn poolLabel(pool: *const Pool) [1]Prometheus.Label {
    return .{.{ .name = "pool", .value = pool.name }};
}

const backend_gauges = [_]struct { []const u8, []const u8 }{
    .{ "sluice_backend_up", "1 when the backend takes new requests (active checks pass, not ejected)." },
    .{ "sluice_backend_health_check_up", "1 when active health checks say up (always 1 without them)." },
    .{ "sluice_backend_ejected", "1 while ejected by passive outlier detection (cool-down or trial)." },
    .{ "sluice_backend_weight", "The backend's configured weight (0 drains it)." },
    .{ "sluice_upstream_connections_open", "Connections open to the backend, busy and idle, all workers." },
    .{ "sluice_upstream_requests_in_flight", "Requests sent to the backend whose response is not complete." },
};

/// The backend families, each with one sample (or series) per backend of every pool,
/// labelled `pool` and `backend`.
fn writeBackendsPrometheus(snapshot: *const Snapshot, p: *Prometheus) Prometheus.Error!void {
    const pools = snapshot.poolsSlice();
    const any = for (pools) |*pool| {
        if (pool.backends_count > 0) break true;
    } else false;
    if (!any) return;
    inline for (backend_gauges) |gauge| {
        try p.family(gauge[0], .gauge, gauge[1]);
        for (pools) |*pool| {
            for (pool.backendsSlice()) |*backend| {
                const value = backendGauge(backend, gauge[0]);
                try p.sample(gauge[0], &backendLabels(pool, backend), value);
            }
        }
    }
    const requests = "sluice_backend_requests_total";
    try p.family(requests, .counter, "Tries sent to the backend (a retry counts on the backend it went to).");
    for (pools) |*pool| {
        for (pool.backendsSlice()) |*backend| try p.sample(requests, &backendLabels(pool, backend), backend.requests);
    }
    const responses = "sluice_backend_responses_total";
    try p.family(responses, .counter, "Responses relayed from the backend, by status class.");
    for (pools) |*pool| {
        for (pool.backendsSlice()) |*backend| {
            for (backend.responses, classes) |count, class| {
                const labels = [_]Prometheus.Label{
                    .{ .name = "pool", .value = pool.name },
                    .{ .name = "backend", .value = backend.address },
                    .{ .name = "class", .value = class },
                };
                try p.sample(responses, &labels, count);
            }
        }
    }
}

fn backendLabels(pool: *const Pool, backend: *const Backend) [2]Prometheus.Label {
    return .{
        .{ .name = "pool", .value = pool.name },
        .{ .name = "backend", .value = backend.address },
    };
}

fn backendGauge(backend: *const Backend, comptime name: []const u8) u64 {
    const eql = std.mem.eql;
    if (comptime eql(u8, name, "sluice_backend_up")) return @intFromBool(backend.available);
    if (comptime eql(u8, name, "sluice_backend_health_check_up")) return @intFromBool(backend.active_up);
    if (comptime eql(u8, name, "sluice_backend_ejected")) return @intFromBool(backend.state != .serving);
    if (comptime eql(u8, name, "sluice_backend_weight")) return backend.weight;
    if (comptime eql(u8, name, "sluice_upstream_connections_open")) return backend.connections_open;
    if (comptime eql(u8, name, "sluice_upstream_requests_in_flight")) return backend.in_flight;
    @compileError("no such backend gauge: " ++ name);
}

// ---------------------------------------------------------------------------------------------
// JSON (/status)

/// One object: the process, `config` (the generation and the reloads), `pools` (an array,
/// each pool with its backends), `routes` (an array, in configuration order) and `handlers`
/// (an array: calls and failures by reason).
pub fn writeStatus(snapshot: *const Snapshot, w: *std.Io.Writer) Json.Error!void {
    var json: Json = .init(w);
    try json.beginObject();
    try json.fieldString("version", snapshot.version);
    try json.key("uptime_seconds");
    try json.seconds(snapshot.uptime_ns);
    try json.fieldInt("workers", snapshot.workers_count);
    try json.fieldString("io", snapshot.io);
    try json.fieldBool("draining", snapshot.draining);
    try json.fieldInt("connections_active", snapshot.connections_active);
    try json.fieldInt("heap_allocations_after_startup", snapshot.heap_allocations_after_startup);
    try json.fieldInt("requests_unrouted", snapshot.requests_unrouted);
    try json.fieldInt("local_responses", snapshot.local_responses);
    try json.key("config");
    try json.beginObject();
    try json.fieldInt("generation", snapshot.config_generation);
    try json.fieldInt("reloads_ok", snapshot.reloads_ok);
    try json.fieldInt("reloads_failed", snapshot.reloads_failed);
    try json.fieldBool("last_reload_ok", snapshot.last_reload_ok);
    try json.fieldInt("last_reload_unix_seconds", snapshot.last_reload_unix_seconds);
    try json.endObject();
    try json.key("pools");
    try json.beginArray();
    for (snapshot.poolsSlice()) |*pool| try writePoolStatus(pool, &json);
    try json.endArray();
    try json.key("routes");
    try json.beginArray();
    for (snapshot.routesSlice()) |*route| {
        try json.beginObject();
        try json.fieldString("name", route.name);
        try json.fieldInt("requests", route.requests);
        try json.endObject();
    }
    try json.endArray();
    try json.key("handlers");
    try json.beginArray();
    for (snapshot.handlersSlice()) |*handler| {
        try json.beginObject();
        try json.fieldString("name", handler.name);
        try json.fieldInt("requests", handler.requests);
        try json.key("failures");
        try json.beginObject();
        inline for (handler_failure_reasons, 0..) |reason, i| try json.fieldInt(reason, handler.failures[i]);
        try json.endObject();
        try json.endObject();
    }
    try json.endArray();
    try DnsNames.writeStatus(snapshot.dnsNamesSlice(), &json);
    try json.endObject();
    assert(json.done());
    try w.writeByte('\n');
}

fn writePoolStatus(pool: *const Pool, json: *Json) Json.Error!void {
    try json.beginObject();
    try json.fieldString("name", pool.name);
    try json.fieldString("strategy", pool.strategy);
    try json.fieldInt("requests", pool.counters.requests);
    try json.fieldInt("backends_available", pool.backendsAvailable());
    try json.fieldInt("ejections", pool.counters.ejections);
    try json.key("backends");
    try json.beginArray();
    for (pool.backendsSlice()) |*backend| {
        try json.beginObject();
        try json.fieldString("address", backend.address);
        try json.fieldInt("weight", backend.weight);
        try json.fieldBool("available", backend.available);
        try json.fieldBool("active_up", backend.active_up);
        try json.fieldBool("ejected", backend.state != .serving);
        try json.fieldString("state", @tagName(backend.state));
        try json.fieldInt("connections_open", backend.connections_open);
        try json.fieldInt("in_flight", backend.in_flight);
        try json.endObject();
    }
    try json.endArray();
    try json.endObject();
}

// ---------------------------------------------------------------------------------------------
// The stats line (SIGUSR2, and at exit)

/// The stats line's fields, after its label: process figures as they are, pool figures summed
/// over the pools. They are the values `/metrics` and `/status` show for the same snapshot, so
/// the line and a scrape never disagree about scope (both are the current generation's; see
/// runtime/collector.zig).
pub fn writeStats(snapshot: *const Snapshot, w: *std.Io.Writer) std.Io.Writer.Error!void {
    var in_flight: u64 = 0;
    var connections_open: u64 = 0;
    var retries: u64 = 0;
    var retries_refused_by_budget: u64 = 0;
    var ejections: u64 = 0;
    var backends_available: u64 = 0;
    for (snapshot.poolsSlice()) |*pool| {
        retries += pool.counters.retries;
        retries_refused_by_budget += pool.counters.retries_refused_by_budget;
        ejections += pool.counters.ejections;
        backends_available += pool.backendsAvailable();
        for (pool.backendsSlice()) |*backend| {
            in_flight += backend.in_flight;
            connections_open += backend.connections_open;
        }
    }
    try w.print("heap_allocations_after_startup={d} connections_active={d} buffers_in_use={d} " ++
        "upstream_requests_in_flight={d} upstream_connections_open={d} retries={d} " ++
        "retries_refused_by_budget={d} ejections={d} backends_available={d} config_generation={d}", .{
        snapshot.heap_allocations_after_startup,
        snapshot.connections_active,
        snapshot.buffers_in_use,
        in_flight,
        connections_open,
        retries,
        retries_refused_by_budget,
        ejections,
        backends_available,
        snapshot.config_generation,
    });
}

/// The longest stats line `writeStats` writes: every value at 20 digits.
pub const stats_bytes_max = 10 * (20 + 1) + "heap_allocations_after_startup=connections_active=".len +
    "buffers_in_use=upstream_requests_in_flight=upstream_connections_open=retries=".len +
    "retries_refused_by_budget=ejections=backends_available=config_generation=".len;

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

/// Two pools with different backends ("app": two, the second ejected; "static": one) and two
/// routes, one named and one known by its position.
fn testSnapshot(snapshot: *Snapshot, storage: []Backend) void {
    snapshot.* = .{
        .backends_storage = storage,
        .version = "0.1.0",
        .uptime_ns = 3 * std.time.ns_per_s + 250 * std.time.ns_per_ms,
        .workers_count = 2,
        .io = "epoll",
        .connections_active = 3,
        .requests_unrouted = 5,
        .local_responses = 6,
        .config_generation = 3,
        .reloads_ok = 2,
        .reloads_failed = 1,
        .last_reload_ok = false,
        .last_reload_unix_seconds = 1_700_000_000,
        .pools_count = 2,
        .routes_count = 2,
    };
    snapshot.pools[0] = .{ .name = "app", .strategy = "round_robin" };
    snapshot.pools[1] = .{ .name = "static", .strategy = "least_connections" };
    snapshot.routes[0] = .{ .name = "api", .requests = 7 };
    snapshot.routes[1] = .{ .name = "1", .requests = 3 };
    setBackends(&snapshot.pools[0], snapshot.backends_storage[0..], &.{ "10.0.0.5:9000", "10.0.0.6:9000" });
    setBackends(&snapshot.pools[1], snapshot.backends_storage[2..], &.{"10.0.1.7:80"});
    snapshot.pools[0].backends[1].available = false;
    snapshot.pools[0].backends[1].state = .ejected;
    snapshot.pools[0].backends[1].responses[4] = 1;
}

fn setBackends(pool: *Pool, storage: []Backend, addresses: []const []const u8) void {
    pool.backends = storage[0..addresses.len];
    pool.backends_count = @intCast(addresses.len);
    for (pool.backends[0..addresses.len], addresses) |*backend, address| {
        backend.* = .{
            .address = address,
            .weight = 1,
            .available = true,
            .active_up = true,
            .state = .serving,
            .connections_open = 4,
            .in_flight = 1,
            .responses = .{ 0, 10, 0, 1, 0 },
        };
    }
}

fn expectLines(text: []const u8, expected: []const []const u8) !void {
    for (expected) |line| {
        if (std.mem.find(u8, text, line) == null) {
            std.debug.print("missing: {s}in:\n{s}\n", .{ line, text });
            return error.TestUnexpectedResult;
        }
    }
}

/// Every sample follows the TYPE line of its own family, and each family has one HELP and
/// one TYPE line, whatever the number of pools. Returns how many families there are.
fn expectFamiliesOnce(text: []const u8) !usize {
    var typed: [96][]const u8 = undefined;
    var typed_count: usize = 0;
    var helped: usize = 0;
    var lines = std.mem.splitScalar(u8, text, '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        if (std.mem.startsWith(u8, line, "# HELP ")) {
            helped += 1;
            continue;
        }
        if (std.mem.startsWith(u8, line, "# TYPE ")) {
            const name = line[7..std.mem.findScalarPos(u8, line, 7, ' ').?];
            for (typed[0..typed_count]) |seen| {
                if (std.mem.eql(u8, seen, name)) {
                    std.debug.print("family {s} typed twice\n", .{name});
                    return error.TestUnexpectedResult;
                }
            }
            typed[typed_count] = name;
            typed_count += 1;
            continue;
        }
        try testing.expect(line[0] != '#');
        const name = line[0..std.mem.findAny(u8, line, "{ ").?];
        const family = typed[typed_count - 1];
        const suffixes = [_][]const u8{ "", "_bucket", "_sum", "_count" };
        const matches = for (suffixes) |suffix| {
            if (std.mem.startsWith(u8, name, family) and std.mem.eql(u8, name[family.len..], suffix)) break true;
        } else false;
        if (!matches) {
            std.debug.print("sample {s} after TYPE {s}\n", .{ name, family });
            return error.TestUnexpectedResult;
        }
    }
    try testing.expectEqual(typed_count, helped);
    return typed_count;
}

test "snapshot: /metrics names every family once, then samples it for every pool and route" {
    var snapshot: Snapshot = undefined;
    const storage = try testing.allocator.alloc(Backend, backends_total_max);
    defer testing.allocator.free(storage);
    testSnapshot(&snapshot, storage);
    snapshot.pools[0].counters.requests = 12;
    snapshot.pools[1].counters.requests = 4;
    snapshot.pools[0].latency.observe(std.time.ns_per_ms);
    snapshot.pools[1].latency.observe(20 * std.time.ns_per_ms);
    var buffer: [64 * 1024]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try snapshot.writePrometheus(&w);
    const text = w.buffered();
    try expectLines(text, &.{
        "sluice_build_info{version=\"0.1.0\"} 1\n",
        "sluice_uptime_seconds 3.250000000\n",
        "sluice_heap_allocations_after_startup 0\n",
        "sluice_requests_unrouted_total 5\n",
        "sluice_local_responses_total 6\n",
        "sluice_config_generation 3\n",
        "sluice_config_reloads_total{result=\"ok\"} 2\n",
        "sluice_config_reloads_total{result=\"failed\"} 1\n",
        "sluice_config_last_reload_successful 0\n",
        "sluice_config_last_reload_timestamp_seconds 1700000000\n",
        "sluice_route_requests_total{route=\"api\"} 7\n",
        "sluice_route_requests_total{route=\"1\"} 3\n",
        "sluice_route_rate_limited_total{route=\"api\"} 0\n",
        "sluice_requests_total{pool=\"app\"} 12\n",
        "sluice_requests_total{pool=\"static\"} 4\n",
        "sluice_responses_total{pool=\"app\",class=\"2xx\"} 20\n",
        "sluice_responses_total{pool=\"app\",class=\"5xx\"} 1\n",
        "sluice_responses_total{pool=\"static\",class=\"2xx\"} 10\n",
        "sluice_responses_total{pool=\"static\",class=\"5xx\"} 0\n",
        "sluice_request_duration_seconds_bucket{pool=\"app\",le=\"0.001\"} 1\n",
        "sluice_request_duration_seconds_bucket{pool=\"static\",le=\"0.001\"} 0\n",
        "sluice_request_duration_seconds_bucket{pool=\"static\",le=\"0.025\"} 1\n",
        "sluice_request_duration_seconds_count{pool=\"app\"} 1\n",
        "sluice_request_duration_seconds_count{pool=\"static\"} 1\n",
        "sluice_backends_available{pool=\"app\"} 1\n",
        "sluice_backends_available{pool=\"static\"} 1\n",
        "sluice_backend_up{pool=\"app\",backend=\"10.0.0.5:9000\"} 1\n",
        "sluice_backend_up{pool=\"app\",backend=\"10.0.0.6:9000\"} 0\n",
        "sluice_backend_up{pool=\"static\",backend=\"10.0.1.7:80\"} 1\n",
        "sluice_backend_ejected{pool=\"app\",backend=\"10.0.0.6:9000\"} 1\n",
        "sluice_upstream_connections_open{pool=\"static\",backend=\"10.0.1.7:80\"} 4\n",
        "sluice_backend_responses_total{pool=\"app\",backend=\"10.0.0.6:9000\",class=\"5xx\"} 1\n",
        "sluice_backend_responses_total{pool=\"static\",backend=\"10.0.1.7:80\",class=\"2xx\"} 10\n",
        "sluice_upstream_pool_hits_total{pool=\"static\"} 0\n",
        "sluice_upstream_idle_closed_total{pool=\"app\",reason=\"timeout\"} 0\n",
        "sluice_upstream_idle_closed_total{pool=\"static\",reason=\"backend\"} 0\n",
    });
    // One HELP per family, though two pools sample it.
    const helps = [_][]const u8{
        "# HELP sluice_requests_total ",
        "# HELP sluice_request_duration_seconds ",
        "# HELP sluice_backend_up ",
        "# HELP sluice_backend_responses_total ",
        "# HELP sluice_route_requests_total ",
    };
    for (helps) |help| try testing.expectEqual(@as(usize, 1), std.mem.count(u8, text, help));
    _ = try expectFamiliesOnce(text);
}

test "snapshot: families with nothing to sample are left out" {
    var snapshot: Snapshot = undefined;
    const storage = try testing.allocator.alloc(Backend, backends_total_max);
    defer testing.allocator.free(storage);
    testSnapshot(&snapshot, storage);
    snapshot.routes_count = 0;
    var buffer: [64 * 1024]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try snapshot.writePrometheus(&w);
    const with_pools = try expectFamiliesOnce(w.buffered());
    try testing.expect(std.mem.find(u8, w.buffered(), "sluice_route_requests_total") == null);
    snapshot.pools_count = 0;
    w = .fixed(&buffer);
    try snapshot.writePrometheus(&w);
    const without = try expectFamiliesOnce(w.buffered());
    const per_pool = pool_counters.len + 4 + backend_gauges.len + 2;
    try testing.expectEqual(with_pools - per_pool, without);
    try testing.expect(std.mem.find(u8, w.buffered(), "pool=") == null);
}

test "snapshot: /status is JSON that lists every pool, backend and route" {
    var snapshot: Snapshot = undefined;
    const storage = try testing.allocator.alloc(Backend, backends_total_max);
    defer testing.allocator.free(storage);
    testSnapshot(&snapshot, storage);
    snapshot.pools[0].name = "quote\"d";
    var buffer: [16 * 1024]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try snapshot.writeStatus(&w);
    var parsed = try std.json.parseFromSlice(std.json.Value, testing.allocator, w.buffered(), .{});
    defer parsed.deinit();
    const root = parsed.value.object;
    try testing.expectEqualStrings("0.1.0", root.get("version").?.string);
    try testing.expectEqual(@as(i64, 2), root.get("workers").?.integer);
    try testing.expectEqual(@as(i64, 5), root.get("requests_unrouted").?.integer);
    try testing.expectEqual(@as(i64, 6), root.get("local_responses").?.integer);
    const config = root.get("config").?.object;
    try testing.expectEqual(@as(i64, 3), config.get("generation").?.integer);
    try testing.expectEqual(@as(i64, 2), config.get("reloads_ok").?.integer);
    try testing.expectEqual(@as(i64, 1), config.get("reloads_failed").?.integer);
    try testing.expectEqual(false, config.get("last_reload_ok").?.bool);
    const last_reload = config.get("last_reload_unix_seconds").?.integer;
    try testing.expectEqual(@as(i64, 1_700_000_000), last_reload);

    const pools = root.get("pools").?.array.items;
    try testing.expectEqual(@as(usize, 2), pools.len);
    try testing.expectEqualStrings("quote\"d", pools[0].object.get("name").?.string);
    const backends = pools[0].object.get("backends").?.array.items;
    try testing.expectEqual(@as(usize, 2), backends.len);
    try testing.expectEqualStrings("10.0.0.6:9000", backends[1].object.get("address").?.string);
    try testing.expectEqual(false, backends[1].object.get("available").?.bool);
    try testing.expectEqualStrings("ejected", backends[1].object.get("state").?.string);
    try testing.expectEqualStrings("static", pools[1].object.get("name").?.string);
    try testing.expectEqualStrings("least_connections", pools[1].object.get("strategy").?.string);
    const static_backends = pools[1].object.get("backends").?.array.items;
    try testing.expectEqual(@as(usize, 1), static_backends.len);
    const static_address = static_backends[0].object.get("address").?.string;
    try testing.expectEqualStrings("10.0.1.7:80", static_address);

    const routes = root.get("routes").?.array.items;
    try testing.expectEqual(@as(usize, 2), routes.len);
    try testing.expectEqualStrings("api", routes[0].object.get("name").?.string);
    try testing.expectEqual(@as(i64, 7), routes[0].object.get("requests").?.integer);
    try testing.expectEqualStrings("1", routes[1].object.get("name").?.string);
}

/// Every pool, backend and route there may be, with the longest names made of `name_byte`
/// and the largest values.
fn worstSnapshot(snapshot: *Snapshot, storage: []Backend, name_byte: u8) void {
    const max = std.math.maxInt(u64);
    const Names = struct {
        var pool: [pool_name_bytes_max]u8 = undefined;
        var route: [route_name_bytes_max]u8 = undefined;
        var handler: [handler_name_bytes_max]u8 = undefined;
        var version: [version_bytes_max]u8 = undefined;
    };
    @memset(&Names.pool, name_byte);
    @memset(&Names.route, name_byte);
    @memset(&Names.handler, name_byte);
    @memset(&Names.version, name_byte);
    const long_address = "unix:/" ++ @as([address_bytes_max - "unix:/".len]u8, @splat('a'));
    snapshot.* = .{
        .version = &Names.version,
        .uptime_ns = max,
        .workers_count = std.math.maxInt(u32),
        .io = "io_uring",
        .pools_count = pools_max,
        .routes_count = routes_max,
        .handlers_count = handlers_max,
        .backends_storage = storage,
    };
    const info = @typeInfo(Snapshot).@"struct";
    inline for (info.field_names, info.field_types) |name, T| {
        if (T == u64) @field(snapshot, name) = max;
    }
    for (&snapshot.pools, 0..) |*pool, pool_index| {
        pool.* = .{ .name = &Names.pool, .strategy = "least_connections" };
        const per_pool = backends_total_max / pools_max;
        pool.backends = snapshot.backends_storage[pool_index * per_pool ..][0..per_pool];
        inline for (@typeInfo(Counters).@"struct".field_names) |name| {
            @field(pool.counters, name) = max;
        }
        for (&pool.latency.counts) |*count| count.set(max / Histogram.buckets_count);
        pool.latency.sum_ns.set(max);
        pool.backends_count = backends_total_max / pools_max;
        for (pool.backends) |*backend| backend.* = .{
            .address = long_address,
            .weight = std.math.maxInt(u16),
            .available = true,
            .active_up = true,
            .state = .serving,
            .connections_open = max,
            .in_flight = max,
            .responses = @splat(max / classes.len),
        };
    }
    for (&snapshot.routes) |*route| route.* = .{ .name = &Names.route, .requests = max };
    for (&snapshot.handlers) |*handler| handler.* = .{ .name = &Names.handler, .requests = max, .failures = @splat(max) };
}

test "snapshot: the worst case renders within render_bytes_max, each part within its budget" {
    const Format = enum { prometheus, json };
    const buffer = try testing.allocator.alloc(u8, render_bytes_max);
    defer testing.allocator.free(buffer);
    var snapshot: Snapshot = undefined;
    const storage = try testing.allocator.alloc(Backend, backends_total_max);
    defer testing.allocator.free(storage);
    // The byte each format escapes to the most: `"` doubles in Prometheus, a control byte
    // takes six in JSON.
    for ([_]Format{ .prometheus, .json }, [_]u8{ '"', 0x01 }) |format, name_byte| {
        worstSnapshot(&snapshot, storage, name_byte);
        const Render = struct {
            fn bytes(s: *const Snapshot, into: []u8, f: Format) !usize {
                var w: std.Io.Writer = .fixed(into);
                switch (f) {
                    .prometheus => try s.writePrometheus(&w),
                    .json => try s.writeStatus(&w),
                }
                return w.buffered().len;
            }
        };
        const all = try Render.bytes(&snapshot, buffer, format);
        snapshot.pools_count = 0;
        snapshot.routes_count = 0;
        snapshot.handlers_count = 0;
        const fixed = try Render.bytes(&snapshot, buffer, format);
        snapshot.handlers_count = handlers_max;
        const handlers = try Render.bytes(&snapshot, buffer, format);
        snapshot.handlers_count = 0;
        snapshot.pools_count = 1;
        snapshot.pools[0].backends_count = 0;
        const one_pool = try Render.bytes(&snapshot, buffer, format);
        snapshot.pools[0].backends_count = backends_total_max / pools_max;
        const one_full_pool = try Render.bytes(&snapshot, buffer, format);
        snapshot.pools_count = 0;
        snapshot.routes_count = routes_max;
        const routes = try Render.bytes(&snapshot, buffer, format);
        // Each budget a third above what it takes today. The family lines are counted in the
        // first pool, its backends and the routes, so the parts are measured high.
        const parts = [_]struct { []const u8, usize, usize }{
            .{ "fixed", fixed, render_bytes_fixed },
            .{ "per pool", one_pool - fixed, render_bytes_per_pool },
            .{ "per backend", (one_full_pool - one_pool) / (backends_total_max / pools_max), render_bytes_per_backend },
            .{ "per route", (routes - fixed) / routes_max, render_bytes_per_route },
            .{ "per handler", (handlers - fixed) / handlers_max, render_bytes_per_handler },
            .{ "all", all, render_bytes_max },
        };
        for (parts) |part| {
            errdefer std.debug.print("{t} {s}: {d} bytes, budget {d}\n", .{
                format, part[0], part[1], part[2],
            });
            try testing.expect(part[1] < part[2] / 4 * 3);
        }
    }
}

test "snapshot: the stats line sums the pools /metrics and /status show" {
    var snapshot: Snapshot = undefined;
    const storage = try testing.allocator.alloc(Backend, backends_total_max);
    defer testing.allocator.free(storage);
    testSnapshot(&snapshot, storage);
    snapshot.heap_allocations_after_startup = 1;
    snapshot.buffers_in_use = 2;
    snapshot.pools[0].counters.retries = 5;
    snapshot.pools[1].counters.retries = 2;
    snapshot.pools[1].counters.retries_refused_by_budget = 3;
    snapshot.pools[0].counters.ejections = 4;
    var buffer: [stats_bytes_max]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try snapshot.writeStats(&w);
    // Three backends, each with one request in flight and four connections; "app"'s second
    // is ejected.
    try testing.expectEqualStrings("heap_allocations_after_startup=1 connections_active=3 " ++
        "buffers_in_use=2 upstream_requests_in_flight=3 upstream_connections_open=12 retries=7 " ++
        "retries_refused_by_budget=3 ejections=4 backends_available=2 config_generation=3", w.buffered());

    // The largest values fit `stats_bytes_max`.
    snapshot.heap_allocations_after_startup = std.math.maxInt(u64);
    snapshot.connections_active = std.math.maxInt(u64);
    snapshot.buffers_in_use = std.math.maxInt(u64);
    snapshot.config_generation = std.math.maxInt(u64);
    snapshot.pools_count = 1;
    snapshot.pools[0].backends_count = 1;
    snapshot.pools[0].backends[0].in_flight = std.math.maxInt(u64);
    snapshot.pools[0].backends[0].connections_open = std.math.maxInt(u64);
    snapshot.pools[0].counters.retries = std.math.maxInt(u64);
    snapshot.pools[0].counters.retries_refused_by_budget = std.math.maxInt(u64);
    snapshot.pools[0].counters.ejections = std.math.maxInt(u64);
    w = .fixed(&buffer);
    try snapshot.writeStats(&w);
}
