//! What the admin listener shows, as plain data: the process, its pool, each backend. The
//! control thread fills one (runtime/control.zig sums the workers' counters into it) and this
//! file renders it as Prometheus text (`/metrics`) or JSON (`/status`). Keeping the data
//! plain keeps metrics/ below every other layer (it imports only std) and lets the renderers be
//! tested with made-up values.
//!
//! Sizing: a rendering needs at most `renderBytesMax(backends)` bytes, a fixed part plus a
//! budget per backend; a test renders the worst case (64 backends, the longest names and
//! values) and checks it fits.
const std = @import("std");
const assert = std.debug.assert;

const Histogram = @import("Histogram.zig");
const Prometheus = @import("Prometheus.zig");
const Json = @import("Json.zig");

const Snapshot = @This();

pub const backends_max = 64;
/// A pool's name as validated by Config (`pool_name_bytes_max`).
pub const pool_name_bytes_max = 64;
/// "[1111:2222:3333:4444:5555:6666:7777:8888]:65535".
pub const address_bytes_max = 47;
pub const version_bytes_max = 32;

/// Response classes 1xx to 5xx.
pub const classes = [5][]const u8{ "1xx", "2xx", "3xx", "4xx", "5xx" };

version: []const u8 = "",
uptime_ns: u64 = 0,
workers_count: u32 = 0,
/// The workers' event loop backend, "io_uring" or "epoll".
io: []const u8 = "",
config_generation: u64 = 1,
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
access_log_dropped: u64 = 0,
buffers_trimmed: u64 = 0,
pool: Pool = .{},

pub const Pool = struct {
    name: []const u8 = "",
    strategy: []const u8 = "",
    counters: Counters = .{},
    /// Request durations, head parsed to exchange over, all workers.
    latency: Histogram = .{},
    backends_count: u32 = 0,
    backends: [backends_max]Backend = undefined,

    pub fn backendsSlice(pool: *const Pool) []const Backend {
        return pool.backends[0..pool.backends_count];
    }

    /// Responses relayed from the pool's backends by class: the sum over its backends.
    pub fn responses(pool: *const Pool) [classes.len]u64 {
        var total: [classes.len]u64 = @splat(0);
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
};

/// The fixed part: the process and pool families with their HELP and TYPE lines, about
/// 13 KiB at worst today (the test below measures it), with room to grow.
pub const render_bytes_fixed = 64 * 1024;
/// Per backend: eleven samples of at most about 250 bytes each in Prometheus text (the pool
/// name escaped to twice its length, the longest address, a class label, a 20-digit value),
/// 2.7 KiB at worst, more than its JSON object takes.
pub const render_bytes_per_backend = 4 * 1024;

pub fn renderBytesMax(backends_count: u32) u32 {
    assert(backends_count <= backends_max);
    return render_bytes_fixed + render_bytes_per_backend * backends_count;
}

// ---------------------------------------------------------------------------------------------
// Prometheus text (/metrics)

/// Process-wide families first, then the pool's, then per backend. Names follow the usual
/// conventions: `sluice_` prefix, base units (seconds), `_total` on counters.
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
    try writePoolPrometheus(&snapshot.pool, &p);
}

/// Field of Snapshot, metric name, help.
const process_gauges = [_]struct { []const u8, []const u8, []const u8 }{
    .{ "config_generation", "sluice_config_generation", "Configuration generation; 1 until reload exists." },
    .{ "workers_count", "sluice_workers", "Worker threads." },
    .{ "draining", "sluice_draining", "1 once a drain (SIGTERM, SIGINT) began." },
    .{ "heap_allocations_after_startup", "sluice_heap_allocations_after_startup", "Heap allocations since start-up ended; 0 by design." },
    .{ "connections_active", "sluice_connections_active", "Client connections open now." },
    .{ "buffers_in_use", "sluice_buffers_in_use", "Connection buffers taken from the buffer pools now." },
};

const process_counters = [_]struct { []const u8, []const u8, []const u8 }{
    .{ "connections_accepted", "sluice_connections_accepted_total", "Client connections accepted." },
    .{ "client_errors", "sluice_client_errors_total", "Requests answered with a 4xx by sluice itself (malformed, too large, timed out)." },
    .{ "client_timeouts", "sluice_client_timeouts_total", "Clients too slow to send a request head or body (408)." },
    .{ "idle_parks", "sluice_idle_parks_total", "Idle client connections that returned their buffer to the pool." },
    .{ "access_log_dropped", "sluice_access_log_lines_dropped_total", "Access-log lines dropped because the log writer fell behind." },
    .{ "buffers_trimmed", "sluice_buffers_trimmed_total", "Free buffers whose pages were given back to the kernel." },
};

fn number(value: anytype) u64 {
    return switch (@TypeOf(value)) {
        bool => @intFromBool(value),
        else => value,
    };
}

const pool_counters = [_]struct { []const u8, []const u8, []const u8 }{
    .{ "requests", "sluice_requests_total", "Requests whose head was parsed and that went to the pool." },
    .{ "upstream_connect_failures", "sluice_upstream_connect_failures_total", "Connections to a backend that failed or timed out." },
    .{ "upstream_errors", "sluice_upstream_errors_total", "Requests answered 502 or 504 by sluice (backend failed, timed out or sent garbage)." },
    .{ "retries", "sluice_retries_total", "Tries after the first, on another backend." },
    .{ "retries_refused_by_budget", "sluice_retries_refused_by_budget_total", "Retries not made because the retry budget was spent." },
    .{ "upstream_stale_retries", "sluice_upstream_stale_retries_total", "Requests sent again on a fresh connection after a reused one failed before any response byte." },
    .{ "overloaded", "sluice_overloaded_total", "Requests answered 503 by sluice (no backend available, caps or buffers exhausted)." },
    .{ "no_backend_available", "sluice_no_backend_available_total", "Requests answered 503 because no backend was available." },
    .{ "upgrades", "sluice_upgrades_total", "Connections upgraded (101) and tunnelled." },
    .{ "upstream_pool_hits", "sluice_upstream_pool_hits_total", "Requests sent on a reused idle backend connection." },
    .{ "upstream_pool_misses", "sluice_upstream_pool_misses_total", "Backend connections opened." },
    .{ "ejections", "sluice_ejections_total", "Backends ejected by passive outlier detection." },
    .{ "ejections_refused_by_cap", "sluice_ejections_refused_by_cap_total", "Ejections not made because the ejection cap was reached." },
    .{ "ejection_trials", "sluice_ejection_trials_total", "Half-open trial requests sent to an ejected backend." },
};

fn writePoolPrometheus(pool: *const Pool, p: *Prometheus) Prometheus.Error!void {
    const labels = [_]Prometheus.Label{.{ .name = "pool", .value = pool.name }};
    inline for (pool_counters) |counter| {
        try p.family(counter[1], .counter, counter[2]);
        try p.sample(counter[1], &labels, @field(pool.counters, counter[0]));
    }
    const idle_closed = "sluice_upstream_idle_closed_total";
    try p.family(idle_closed, .counter, "Idle pooled backend connections closed, by why.");
    const reasons = [_]struct { []const u8, u64 }{
        .{ "backend", pool.counters.upstream_idle_closed_by_backend },
        .{ "timeout", pool.counters.upstream_idle_closed_timeout },
    };
    for (reasons) |reason| {
        try p.sample(idle_closed, &.{ labels[0], .{ .name = "reason", .value = reason[0] } }, reason[1]);
    }
    try p.family("sluice_responses_total", .counter, "Responses relayed from the pool's backends, by status class.");
    for (pool.responses(), classes) |count, class| {
        try p.sample("sluice_responses_total", &.{ labels[0], .{ .name = "class", .value = class } }, count);
    }
    const duration = "sluice_request_duration_seconds";
    try p.family(duration, .histogram, "From the request head parsed to the response sent, the error answered or the connection closed.");
    try p.histogram(duration, &labels, &pool.latency);
    try p.family("sluice_backends_available", .gauge, "Backends that take new requests now.");
    try p.sample("sluice_backends_available", &labels, pool.backendsAvailable());
    try writeBackendsPrometheus(pool, p);
}

const backend_gauges = [_]struct { []const u8, []const u8 }{
    .{ "sluice_backend_up", "1 when the backend takes new requests (active checks pass, not ejected)." },
    .{ "sluice_backend_health_check_up", "1 when active health checks say up (always 1 without them)." },
    .{ "sluice_backend_ejected", "1 while ejected by passive outlier detection (cool-down or trial)." },
    .{ "sluice_backend_weight", "The backend's configured weight (0 drains it)." },
    .{ "sluice_upstream_connections_open", "Connections open to the backend, busy and idle, all workers." },
    .{ "sluice_upstream_requests_in_flight", "Requests sent to the backend whose response is not complete." },
};

fn writeBackendsPrometheus(pool: *const Pool, p: *Prometheus) Prometheus.Error!void {
    inline for (backend_gauges) |gauge| {
        try p.family(gauge[0], .gauge, gauge[1]);
        for (pool.backendsSlice()) |*backend| {
            const labels = [_]Prometheus.Label{
                .{ .name = "pool", .value = pool.name },
                .{ .name = "backend", .value = backend.address },
            };
            try p.sample(gauge[0], &labels, backendGauge(backend, gauge[0]));
        }
    }
    const responses = "sluice_backend_responses_total";
    try p.family(responses, .counter, "Responses relayed from the backend, by status class.");
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

/// One object: the process, then `pools` (an array, one pool for now), each with its
/// backends.
pub fn writeStatus(snapshot: *const Snapshot, w: *std.Io.Writer) Json.Error!void {
    var json: Json = .init(w);
    try json.beginObject();
    try json.fieldString("version", snapshot.version);
    try json.key("uptime_seconds");
    try json.seconds(snapshot.uptime_ns);
    try json.fieldInt("workers", snapshot.workers_count);
    try json.fieldString("io", snapshot.io);
    try json.fieldInt("config_generation", snapshot.config_generation);
    try json.fieldBool("draining", snapshot.draining);
    try json.fieldInt("connections_active", snapshot.connections_active);
    try json.fieldInt("heap_allocations_after_startup", snapshot.heap_allocations_after_startup);
    try json.key("pools");
    try json.beginArray();
    const pool = &snapshot.pool;
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
    try json.endArray();
    try json.endObject();
    assert(json.done());
    try w.writeByte('\n');
}

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

fn testSnapshot(snapshot: *Snapshot, backends_count: u32) void {
    snapshot.* = .{
        .version = "0.1.0",
        .uptime_ns = 3 * std.time.ns_per_s + 250 * std.time.ns_per_ms,
        .workers_count = 2,
        .io = "epoll",
        .connections_active = 3,
        .pool = .{ .name = "app", .strategy = "round_robin", .backends_count = backends_count },
    };
    const addresses = [_][]const u8{ "10.0.0.5:9000", "10.0.0.6:9000" };
    for (snapshot.pool.backends[0..backends_count], 0..) |*backend, i| {
        backend.* = .{
            .address = addresses[i % addresses.len],
            .weight = 1,
            .available = i != 1,
            .active_up = true,
            .state = if (i == 1) .ejected else .serving,
            .connections_open = 4,
            .in_flight = 1,
            .responses = .{ 0, 10, 0, 1, @intCast(i) },
        };
    }
}

test "snapshot: /metrics names every family once, before its samples" {
    var snapshot: Snapshot = undefined;
    testSnapshot(&snapshot, 2);
    snapshot.pool.counters.requests = 12;
    snapshot.pool.latency.observe(std.time.ns_per_ms);
    var buffer: [renderBytesMax(2)]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try snapshot.writePrometheus(&w);
    const text = w.buffered();
    const expected = [_][]const u8{
        "sluice_build_info{version=\"0.1.0\"} 1\n",
        "sluice_uptime_seconds 3.250000000\n",
        "sluice_requests_total{pool=\"app\"} 12\n",
        "sluice_responses_total{pool=\"app\",class=\"2xx\"} 20\n",
        "sluice_responses_total{pool=\"app\",class=\"5xx\"} 1\n",
        "sluice_request_duration_seconds_bucket{pool=\"app\",le=\"0.001\"} 1\n",
        "sluice_request_duration_seconds_count{pool=\"app\"} 1\n",
        "sluice_backends_available{pool=\"app\"} 1\n",
        "sluice_backend_up{pool=\"app\",backend=\"10.0.0.5:9000\"} 1\n",
        "sluice_backend_up{pool=\"app\",backend=\"10.0.0.6:9000\"} 0\n",
        "sluice_backend_ejected{pool=\"app\",backend=\"10.0.0.6:9000\"} 1\n",
        "sluice_upstream_connections_open{pool=\"app\",backend=\"10.0.0.5:9000\"} 4\n",
        "sluice_backend_responses_total{pool=\"app\",backend=\"10.0.0.6:9000\",class=\"5xx\"} 1\n",
        "sluice_upstream_pool_hits_total{pool=\"app\"} 0\n",
        "sluice_upstream_idle_closed_total{pool=\"app\",reason=\"timeout\"} 0\n",
        "sluice_heap_allocations_after_startup 0\n",
    };
    for (expected) |line| {
        if (std.mem.find(u8, text, line) == null) {
            std.debug.print("missing: {s}in:\n{s}\n", .{ line, text });
            return error.TestUnexpectedResult;
        }
    }
    // Every sample's family was announced by a TYPE line before it, exactly once.
    var typed: [64][]const u8 = undefined;
    var typed_count: usize = 0;
    var lines = std.mem.splitScalar(u8, text, '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        if (std.mem.startsWith(u8, line, "# TYPE ")) {
            const name = line[7..std.mem.findScalarPos(u8, line, 7, ' ').?];
            for (typed[0..typed_count]) |seen| try testing.expect(!std.mem.eql(u8, seen, name));
            typed[typed_count] = name;
            typed_count += 1;
            continue;
        }
        if (line[0] == '#') continue;
        const name_end = std.mem.findAny(u8, line, "{ ").?;
        const name = line[0..name_end];
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
}

test "snapshot: /status is JSON that lists every backend" {
    var snapshot: Snapshot = undefined;
    testSnapshot(&snapshot, 2);
    snapshot.pool.name = "quote\"d";
    var buffer: [renderBytesMax(2)]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try snapshot.writeStatus(&w);
    var parsed = try std.json.parseFromSlice(std.json.Value, testing.allocator, w.buffered(), .{});
    defer parsed.deinit();
    const root = parsed.value.object;
    try testing.expectEqualStrings("0.1.0", root.get("version").?.string);
    try testing.expectEqual(@as(i64, 2), root.get("workers").?.integer);
    const pool = root.get("pools").?.array.items[0].object;
    try testing.expectEqualStrings("quote\"d", pool.get("name").?.string);
    const backends = pool.get("backends").?.array.items;
    try testing.expectEqual(@as(usize, 2), backends.len);
    try testing.expectEqualStrings("10.0.0.6:9000", backends[1].object.get("address").?.string);
    try testing.expectEqual(false, backends[1].object.get("available").?.bool);
    try testing.expectEqualStrings("ejected", backends[1].object.get("state").?.string);
}

test "snapshot: the worst case renders within renderBytesMax, in both formats" {
    // The longest names and values everywhere; the fixed part measured with no backend.
    var snapshot: Snapshot = undefined;
    testSnapshot(&snapshot, backends_max);
    const max = std.math.maxInt(u64);
    const long_name: [pool_name_bytes_max]u8 = @splat('"'); // Escaped to two (six in JSON).
    const long_address = "[1111:2222:3333:4444:5555:6666:7777:8888]:65535";
    comptime assert(long_address.len == address_bytes_max);
    const long_version: [version_bytes_max]u8 = @splat('\\');
    snapshot.version = &long_version;
    snapshot.pool.name = &long_name;
    snapshot.uptime_ns = max;
    snapshot.connections_active = max;
    snapshot.connections_accepted = max;
    inline for (@typeInfo(Counters).@"struct".field_names) |name| {
        @field(snapshot.pool.counters, name) = max;
    }
    snapshot.pool.latency.counts = @splat(max / Histogram.buckets_count);
    snapshot.pool.latency.sum_ns = max;
    for (snapshot.pool.backends[0..backends_max]) |*backend| {
        backend.address = long_address;
        backend.weight = std.math.maxInt(u16);
        backend.connections_open = max;
        backend.in_flight = max;
        backend.responses = @splat(max / classes.len);
    }
    const bytes = renderBytesMax(backends_max);
    const buffer = try testing.allocator.alloc(u8, bytes);
    defer testing.allocator.free(buffer);

    var sizes: [2][2]usize = undefined; // [no backend, all][prometheus, json]
    for (&sizes, [_]u32{ 0, backends_max }) |*size, count| {
        snapshot.pool.backends_count = count;
        var w: std.Io.Writer = .fixed(buffer);
        try snapshot.writePrometheus(&w);
        size[0] = w.buffered().len;
        w = .fixed(buffer);
        try snapshot.writeStatus(&w);
        size[1] = w.buffered().len;
    }
    // About 13 KiB fixed and 2.7 KiB per backend today: a quarter of the budget to spare.
    for (0..2) |format| {
        const fixed = sizes[0][format];
        const per_backend = (sizes[1][format] - fixed) / backends_max;
        try testing.expect(fixed < render_bytes_fixed / 4 * 3);
        try testing.expect(per_backend < render_bytes_per_backend / 4 * 3);
    }
}
