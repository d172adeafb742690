//! What one seed simulates: the proxy's limits, the traffic, and which faults are on and how
//! often (swarm testing: each fault is on for about half the seeds, at a rate drawn per seed,
//! so some seeds hammer one fault and others combine several). About one seed in eight is
//! clean: every fault off, so the strictest checks apply (no request may be lost or answered
//! by sluice itself).
const std = @import("std");
const assert = std.debug.assert;

const Sim = @import("../loop/Sim.zig");

const Options = @This();

/// No fault of any kind: every request sluice reads must be answered by its backend.
clean: bool,

// Proxy limits (start-up settings).
sessions: u32,
header_bytes_max: u32,
headers_count_max: u16,
response_header_bytes_max: u32,
response_headers_count_max: u16,
client_header_timeout_ns: u64,
client_idle_timeout_ns: u64,
tunnel_idle_timeout_ns: u64,
/// 0: no limit.
request_body_bytes_max: u64,
/// Response bodies spliced once this much is left (0: never); small, as simulated bodies are.
splice_min_bytes: u64,
/// Clients 192.0.2.1-127 are trusted proxies (their X-Forwarded-For is kept).
trusted_clients: bool,
/// Request fields with `_` in their name are kept (else dropped).
underscores_allowed: bool,
access_log: enum { off, combined, json },

// Topology.
backends_count: u8,
pools_count: u8,
/// Routes by path prefix, plus a fixed response, a redirect and 404s; else one pool, no routes.
routed: bool,
/// Change pools (backends, strategy, retries, timeouts) by reloads during the run.
reloads_percent: u8,
/// Change a pool's members in place with no reload, as a backend name's new answer does
/// (runtime/Dns.zig), now and then to none (a name not resolved yet); per 10,000 steps.
resolution_changes_per_10k: u16,
/// When the drain starts, in steps from the start: at the end, or half-way or later.
drain_step: u64,

// Traffic.
clients_concurrent_max: u32,
client_arrival_ns_max: u64,
requests_per_client_max: u8,
pipeline_percent: u8,
body_percent: u8,
body_bytes_max: u32,
chunked_percent: u8,
upgrade_percent: u8,
local_percent: u8,
idle_gap_percent: u8,
idle_gap_ns_max: u64,
hop_fields_percent: u8,
trailer_percent: u8,
/// Clients speaking HTTP/1.0 (keep-alive only when asked for, no chunked, no 1xx).
http10_percent: u8,
/// Requests carry a hash key field and a sticky cookie.
affinity_percent: u8,
/// Requests carry fields a proxy rewrites: X-Forwarded-For, a name with `_`, an
/// absolute-form target.
forwarding_percent: u8,
/// Backends send 100 or 103 before their answer.
interim_percent: u8,
/// Gzip is on (`compression.*`, level and slots drawn), backends label their bodies
/// text/plain, and this share of HTTP/1.1 requests take gzip; 0: compression off, and the
/// bytes both ways are as they were before it existed.
compress_percent: u8,
compress_level: u4,
compress_slots: u32,
compress_min_bytes: u64,
/// HTTP/2 (h2c with prior knowledge, Http2Client.zig) is on, and this share of clients speak
/// it; 0: HTTP/2 off, and the run is as it was before it existed.
http2_percent: u8,
/// Streams an HTTP/2 client keeps open at once, at most (each draws its own).
http2_streams_max: u8,
/// sluice's SETTINGS_MAX_CONCURRENT_STREAMS (`http2_streams_max`): small in some seeds, so
/// that streams opened before the SETTINGS arrive are refused.
http2_streams_allowed: u32,
/// The clients' SETTINGS_INITIAL_WINDOW_SIZE: small in a share of seeds (window stalls).
http2_window_bytes: u32,
/// Streams an HTTP/2 client resets (RST_STREAM CANCEL), in percent (a fault).
http2_reset_percent: u8,
/// HTTP/2 clients that hand back their window only after a while, in percent.
http2_consume_late_percent: u8,
/// Pools that speak h2c to their backends (Http2Server.zig), in percent of pools; 0: none.
backend_h2_percent: u8,
/// The HTTP/2 backends' SETTINGS_MAX_CONCURRENT_STREAMS (1 to `Http2Server.streams_max`)
/// and SETTINGS_INITIAL_WINDOW_SIZE (request body bytes in flight per stream).
backend_h2_streams: u32,
backend_h2_window_bytes: u32,
/// Per stream: refused (REFUSED_STREAM), or a GOAWAY that leaves it unprocessed (faults).
backend_h2_refuse_percent: u8,
backend_h2_goaway_percent: u8,
/// Per DATA frame: the backend hands its window back only after a while.
backend_h2_consume_late_percent: u8,

// Client faults.
client_vanish_percent: u8,
client_half_close_percent: u8,
client_stall_percent: u8,
client_slow_percent: u8,
client_malformed_percent: u8,
/// Request heads padded up to and past the limits (431).
client_big_head_percent: u8,

// Backend faults, per response (they add up to at most 100).
backend_5xx_percent: u8,
backend_stall_percent: u8,
backend_delay_percent: u8,
backend_garbage_percent: u8,
backend_close_percent: u8,
backend_reset_percent: u8,
backend_early_percent: u8,
/// Per idle keep-alive connection: the backend closes it, or sends unsolicited bytes.
backend_idle_close_percent: u8,
backend_unsolicited_percent: u8,
/// Response heads padded up to and past the limits, with fields that grow when rewritten.
backend_big_head_percent: u8,
/// Per request: the backend stops reading for a while after its head.
backend_read_pause_percent: u8,
/// Per tick, out of 10,000: a backend starts refusing, black-holing or comes back.
backend_flip_per_10k: u16,
/// Per tick, out of 10,000: active health marks a backend down or up.
health_flip_per_10k: u16,

// Socket-level faults (the simulated kernel).
sim: Sim.Faults,

pub fn generate(seed: u64, steps: u64) Options {
    var prng = std.Random.DefaultPrng.init(seed ^ 0x5eed_0071);
    const random = prng.random();
    const clean = random.uintLessThan(u8, 8) == 0;
    // A fault is on for about half the seeds (never when clean), at a rate up to `max`.
    const Swarm = struct {
        random: std.Random,
        clean: bool,
        fn percent(s: @This(), max: u8) u8 {
            if (s.clean or s.random.boolean()) return 0;
            return s.random.intRangeAtMost(u8, 1, max);
        }
    };
    const swarm: Swarm = .{ .random = random, .clean = clean };
    const header_bytes_max = random.intRangeAtMost(u32, 1024, 6 * 1024);
    const response_header_bytes_max = random.intRangeAtMost(u32, 1024, 6 * 1024);
    const buffer_bytes = std.mem.alignForward(u32, @max(header_bytes_max, response_header_bytes_max) + 1024, 4096);
    const routed = random.uintLessThan(u8, 4) != 0;
    var options: Options = .{
        .clean = clean,
        .sessions = random.intRangeAtMost(u32, 1, 24),
        .header_bytes_max = header_bytes_max,
        .headers_count_max = random.intRangeAtMost(u16, 16, 100),
        .response_header_bytes_max = response_header_bytes_max,
        .response_headers_count_max = random.intRangeAtMost(u16, 16, 256),
        .client_header_timeout_ns = random.intRangeAtMost(u64, 1, 10) * std.time.ns_per_s,
        .client_idle_timeout_ns = random.intRangeAtMost(u64, 500, 30_000) * std.time.ns_per_ms,
        .tunnel_idle_timeout_ns = random.intRangeAtMost(u64, 1, 30) * std.time.ns_per_s,
        .request_body_bytes_max = if (clean or random.uintLessThan(u8, 4) != 0) 0 else random.intRangeAtMost(u64, 1, 3 * buffer_bytes),
        .access_log = random.enumValue(@FieldType(Options, "access_log")),
        .trusted_clients = random.boolean(),
        .underscores_allowed = random.boolean(),
        .backends_count = random.intRangeAtMost(u8, 1, 6),
        .pools_count = if (routed) random.intRangeAtMost(u8, 1, 3) else 1,
        .routed = routed,
        .reloads_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 100),
        .drain_step = if (random.boolean()) steps else random.intRangeAtMost(u64, steps / 2, steps),
        .clients_concurrent_max = random.intRangeAtMost(u32, 1, 48),
        .client_arrival_ns_max = random.intRangeAtMost(u64, 1, 200) * std.time.ns_per_ms,
        .requests_per_client_max = random.intRangeAtMost(u8, 1, 8),
        .pipeline_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 100),
        .body_percent = random.uintAtMost(u8, 100),
        .body_bytes_max = random.intRangeAtMost(u32, 1, @min(24 * 1024, 3 * buffer_bytes)),
        .chunked_percent = random.uintAtMost(u8, 100),
        .upgrade_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 30),
        .local_percent = if (routed) random.uintAtMost(u8, 30) else 0,
        .idle_gap_percent = random.uintAtMost(u8, 50),
        .idle_gap_ns_max = random.intRangeAtMost(u64, 1, 5000) * std.time.ns_per_ms,
        .hop_fields_percent = random.uintAtMost(u8, 50),
        .trailer_percent = random.uintAtMost(u8, 30),
        .http10_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 30),
        .affinity_percent = random.uintAtMost(u8, 100),
        .forwarding_percent = random.uintAtMost(u8, 100),
        .interim_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 30),
        .client_vanish_percent = swarm.percent(30),
        .client_half_close_percent = swarm.percent(50),
        .client_stall_percent = swarm.percent(20),
        .client_slow_percent = swarm.percent(20),
        .client_malformed_percent = swarm.percent(10),
        .client_big_head_percent = swarm.percent(20),
        .backend_5xx_percent = swarm.percent(20),
        .backend_stall_percent = swarm.percent(10),
        .backend_delay_percent = swarm.percent(30),
        .backend_garbage_percent = swarm.percent(10),
        .backend_close_percent = swarm.percent(15),
        .backend_reset_percent = swarm.percent(15),
        .backend_early_percent = swarm.percent(20),
        .backend_idle_close_percent = swarm.percent(50),
        .backend_unsolicited_percent = swarm.percent(10),
        .backend_big_head_percent = swarm.percent(20),
        .backend_read_pause_percent = swarm.percent(20),
        .backend_flip_per_10k = if (clean or random.boolean()) 0 else random.intRangeAtMost(u16, 1, 50),
        .health_flip_per_10k = if (clean or random.boolean()) 0 else random.intRangeAtMost(u16, 1, 50),
        .sim = undefined,
        .splice_min_bytes = undefined,
        .resolution_changes_per_10k = undefined,
        .compress_percent = undefined,
        .compress_level = undefined,
        .compress_slots = undefined,
        .compress_min_bytes = undefined,
        .http2_percent = undefined,
        .http2_streams_max = undefined,
        .http2_streams_allowed = undefined,
        .http2_window_bytes = undefined,
        .http2_reset_percent = undefined,
        .http2_consume_late_percent = undefined,
        .backend_h2_percent = undefined,
        .backend_h2_streams = undefined,
        .backend_h2_window_bytes = undefined,
        .backend_h2_refuse_percent = undefined,
        .backend_h2_goaway_percent = undefined,
        .backend_h2_consume_late_percent = undefined,
    };
    // Delay is not a fault as such, but a delay past the response timeout is: clean seeds
    // answer promptly.
    const window_min = if (random.boolean()) random.intRangeAtMost(u32, 1, 256) else random.intRangeAtMost(u32, 256, Sim.pipe_bytes_max);
    options.sim = .{
        // Scheduling is never a fault: any order and split the kernel may choose is fair game.
        .deliver_percent = random.intRangeAtMost(u8, 20, 100),
        .short_read_percent = random.uintAtMost(u8, 100),
        .short_write_percent = random.uintAtMost(u8, 100),
        .window_min = window_min,
        .window_max = random.intRangeAtMost(u32, window_min, Sim.pipe_bytes_max),
        .cancel_late_percent = random.uintAtMost(u8, 100),
        .cancel_race_percent = random.uintAtMost(u8, 100),
        .socket_fail_percent = swarm.percent(5),
        .connect_latency_max_ns = random.uintAtMost(u64, 50) * std.time.ns_per_ms,
        .tick_ns_max = random.intRangeAtMost(u64, 1, 2000) * std.time.ns_per_us,
    };
    // Drawn last, so that the draws above (and the seeds the docs quote) stay as they were.
    options.splice_min_bytes = if (random.uintLessThan(u8, 4) == 0) 0 else random.intRangeAtMost(u64, 1, 16 * 1024);
    options.resolution_changes_per_10k = if (random.boolean()) 0 else random.intRangeAtMost(u16, 1, 100);
    options.compress_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 100);
    options.compress_level = random.intRangeAtMost(u4, 1, 9);
    options.compress_slots = random.intRangeAtMost(u32, 1, 4);
    options.compress_min_bytes = random.uintAtMost(u64, 2048);
    options.http2_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 100);
    options.http2_streams_max = random.intRangeAtMost(u8, 1, 8);
    options.http2_streams_allowed = if (random.uintLessThan(u8, 4) == 0) random.intRangeAtMost(u32, 1, 4) else 100;
    options.http2_window_bytes = drawWindow(random);
    options.http2_reset_percent = swarm.percent(30);
    options.http2_consume_late_percent = random.uintAtMost(u8, 100);
    options.backend_h2_percent = if (random.boolean()) 0 else random.intRangeAtMost(u8, 1, 100);
    options.backend_h2_streams = if (random.uintLessThan(u8, 4) == 0) random.intRangeAtMost(u32, 1, 4) else 16;
    options.backend_h2_window_bytes = drawWindow(random);
    options.backend_h2_refuse_percent = swarm.percent(10);
    options.backend_h2_goaway_percent = swarm.percent(5);
    options.backend_h2_consume_late_percent = random.uintAtMost(u8, 100);
    return options;
}

/// An HTTP/2 peer's SETTINGS_INITIAL_WINDOW_SIZE: 16-256 bytes in a quarter of the seeds, up to
/// 8 KiB in another (window stalls), else the protocol's default.
fn drawWindow(random: std.Random) u32 {
    return switch (random.uintLessThan(u8, 4)) {
        0 => random.intRangeAtMost(u32, 16, 256),
        1 => random.intRangeAtMost(u32, 257, 8192),
        else => 65_535,
    };
}
