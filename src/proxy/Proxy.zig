//! One worker's proxy: its connection and exchange slots, buffers, timer queues, counters and
//! the configuration generations it serves: everything a `Connection` or an `Exchange`
//! reaches for. The pools'
//! per-worker state (connections, balancer, retry budget) is in `LocalPool`, one per pool
//! instance, reached through the generation. The worker (runtime/) owns the thread, the loop
//! and the listeners, hands accepted connections to `startSession`, hands new generations to
//! `adopt`, and is told through `on_slot_free` when a full proxy can take connections again.
//! Keeping this here keeps the layering one way: proxy/ never imports runtime/.
//!
//! Memory sizing (allocated in `init`, on the control thread, before the first accept):
//!   sessions        = ceil(connections_max / workers): connection slots, and as many
//!                     exchange slots (one exchange per HTTP/1.1 connection at a time)
//!   fetches         = sessions: slots of a handler's `fetch` in flight (Subrequest.zig),
//!                     each with an exchange slot of its own and `buffersPerFetch` buffers
//!                     (a fetch when all are taken is rejected, a TypeError)
//!   streams         = sessions: HTTP/2 stream slots, shared by the worker's HTTP/2
//!                     connections, each with an exchange slot of its own (a stream past
//!                     them is refused, REFUSED_STREAM, counted) and `buffersPerStream`
//!                     buffers; an HTTP/2 connection's slot (Http2.zig) is per session
//!   HTTP/2 memory   = an `h2.memory.Pool` with `h2_blocks_per_session` per session
//!                     (untouched until used)
//!   buffers         = 3 * sessions              (a connection's, its exchange's upstream
//!                                                side, a handler's copy of the head; an
//!                                                HTTP/2 connection's output instead of the
//!                                                second)
//!                   + buffersPerStream * streams
//!                   + buffersPerFetch * fetches
//!                   + 2 * sessions for TLS      (a TLS connection's ciphertext, each way)
//!                   + 2 * sessions for TLS to backends (an attempt's ciphertext, each way)
//!   buffer bytes    = max(header_bytes_max, response_header_bytes_max) + rewrite headroom,
//!                     rounded up to a page; with TLS reserved at least a whole record and
//!                     its overhead (`tls.Engine.record_bytes_max`, 16,709 bytes)
//!   TLS memory      = a `tls.memory.Pool`, its blocks per size class: sessions times the
//!                     blocks one handshake holds at its peak (`tls_blocks_per_session`),
//!                     and `upstreamTlsConnections` times a client connection's
//!                     (`tls_client_blocks_per_connection`); address space untouched until
//!                     used
//! A worker reserves the TLS buffers whether or not its start-up configuration has TLS, so that
//! a reload may add the first HTTPS listener or the first TLS pool (untouched address space
//! costs no memory); its TLS memory is made then, by that reload (`makeTlsPool`), when
//! start-up had no TLS (docs/TLS.md, "Memory").
//!   header fields   = sessions * (headers_count_max + response_headers_count_max): per
//!                     exchange slot its request's fields (kept for its whole life: routing,
//!                     replays, the log) and its response's
//! and with each pool instance (Pool, per worker):
//!   upstream conns  = sessions + backends * keepalive_max
//!
//! Generations: each exchange holds the generation it started on (`holdCurrent`), counted in
//! a per-worker `Hold`, so nothing shared is written per request. A generation the worker no
//! longer uses (not current, no exchange holds it, its retired pools quiet) is let go of
//! (`Generation.holders`), and the control thread frees it when every worker has.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const TimerQueue = loop_ns.TimerQueue;
const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const BufferPool = @import("../stdx/BufferPool.zig");
const FreeIndices = @import("../stdx/FreeIndices.zig");
const Config = @import("../config/Config.zig");
const http = @import("../http/http.zig");
const LocalPool = @import("../upstream/LocalPool.zig");
const Generation = @import("Generation.zig");
const AccessLog = @import("AccessLog.zig");
const Connection = @import("Connection.zig");
const Exchange = @import("Exchange.zig");
const Pipes = @import("Pipes.zig");
const Failure = @import("failure.zig").Failure;
const Histogram = @import("../metrics/Histogram.zig");
const Pool = @import("../upstream/Pool.zig");
const log = @import("../stdx/log.zig");
const Counter = @import("../stdx/Counter.zig");
const tls = @import("../tls/tls.zig");
const h2 = @import("../h2/h2.zig");
const Http2 = @import("Http2.zig");
const Http2Stream = @import("Http2Stream.zig");
const Http2Backend = @import("Http2Backend.zig");
const Http2Try = @import("Http2Try.zig");
const RequestIds = @import("../policy/RequestIds.zig");
const RateLimiter = @import("../policy/RateLimiter.zig");
const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const Compressor = @import("Compressor.zig");
const Subrequest = @import("Subrequest.zig");

const Proxy = @This();

loop: *Loop,
/// The process-wide settings (limits, client timeouts, trusted proxies): the start-up
/// configuration, which a reload may not change. Routes and pools come from `generation`.
config: *const Config,
/// This worker's index: its `LocalPool` in each pool instance.
worker_index: u32,
/// The newest generation adopted: new exchanges use it.
generation: *const Generation,
/// Generations this worker still uses; `holds[current_hold]` is `generation`'s.
holds: [holds_max]Hold = @splat(.{}),
current_hold: u8 = 0,
/// Queues for upstream timeouts, by `Generation.Timeouts` slot; `[0..pool_queues_count]` are
/// registered with the loop.
pool_queues: [Generation.Timeouts.count_max]TimerQueue = undefined,
pool_queues_count: u32 = 0,
/// Client connection slots. A slot is initialized when first used (`free_connections` says
/// which uses are first ones), so the pages of slots a quiet worker never needs are never
/// touched and idle RSS follows peak concurrency, not the limit.
connections: []Connection,
free_connections: FreeIndices,
/// Exchange slots, one per connection slot (an HTTP/1.1 connection has at most one exchange
/// at a time), taken when a request head starts and given back when it ends. The free list
/// is a stack, so a worker keeps reusing the same few hot slots and their field arrays.
exchanges: []Exchange,
free_exchanges: FreeIndices,
/// The exchange slots of HTTP/2 streams: `exchanges[sessions..]`, indexed from there.
free_stream_exchanges: FreeIndices,
/// A handler's fetches in flight, each with the exchange slot `exchanges[2 * sessions + i]`.
fetches: []Subrequest,
free_fetches: FreeIndices,
/// HTTP/2: the worker's nghttp2 state (null in the simulator, which runs HTTP/1.1 only), an
/// HTTP/2 connection's slot per session, and the stream slots.
http2: ?*Http2.Worker = null,
http2_slots: []Http2,
free_http2: FreeIndices,
streams: []Http2Stream,
free_streams: FreeIndices,
/// Per exchange slot: its request fields, then its response fields.
request_fields: []http.Header,
response_fields: []http.Header,
/// Where routing writes a request's normalised path (Router.Request.fromHead); one per worker,
/// as routing finishes before anything else runs on the loop.
path_scratch: []u8,
buffers: BufferPool,
/// Pipes for spliced response bodies, opened on first need (Pipes.zig).
pipes: Pipes = .{},
queues: Queues,
buffer_trim_timer: loop_ns.Timer = .{},
generations_timer: loop_ns.Timer = .{},
/// Null when access logging is off.
access_log: ?AccessLog = null,
access_log_timer: loop_ns.Timer = .{},
/// Set by `drain`: finish what is in flight, take nothing new, keep nothing alive.
draining: bool = false,
/// Read by the control thread.
connections_active: std.atomic.Value(u32) = .init(0),
stats: Stats = .{},
warn_limiter: WarnLimiter = .{},
on_slot_free: SlotFreeCallback,
/// AWS-LC's memory on this worker: entered by the worker's thread before its first accept.
tls_pool: ?*tls.memory.Pool = null,
/// A client certificate's subject and fingerprint while one request head is composed or one
/// log line written (nothing keeps them past that call). Here rather than on the stack: safe
/// builds fill undefined stack memory with 0xAA, a kilobyte per use.
peer_scratch: tls.Engine.PeerCertificate = .{},
/// This worker's request ids (used only when a generation asks for them: HeaderPolicy).
request_ids: RequestIds,
/// This worker's rate-limit buckets (policy/RateLimiter.zig), whatever the config: a reload
/// may add a limit. Untouched until a limit is checked.
rate_limiter: RateLimiter,
/// Per exchange slot: the header policy it applies (HeaderPolicy.Applied), untouched until a
/// generation with rules is used.
policy_slots: []HeaderPolicy.Applied,
/// HTTP/2 to backends (`protocol = h2c`): shared connections' slots, those open, and per
/// exchange slot its try's stream state (untouched until used).
h2_backends: []Http2Backend,
free_h2_backends: FreeIndices,
h2_backends_open: ?*Http2Backend = null,
h2_tries: []Http2Try,
/// Gzip for responses (`compression.slots` of them, untouched until used; Compressor.zig).
compressors: Compressor.Slots,

/// Generations a worker may hold at once: the current one and those whose exchanges are still
/// finishing. The control thread refuses a reload while as many are alive.
pub const holds_max = 8;

pub const Hold = struct {
    generation: ?*const Generation = null,
    /// Exchanges that started on it and have not ended.
    users: u32 = 0,
};

pub const SlotFreeCallback = struct {
    context: *anyopaque,
    function: *const fn (*anyopaque) void,
};

/// The timer queues sessions use; the owner registers them with the loop (`timerQueues`).
pub const Queues = struct {
    client_header: TimerQueue,
    /// The idle wait after the hot period: `client_idle - client_short`.
    client_idle_rest: TimerQueue,
    client_idle: TimerQueue,
    /// `min(1 s, client_idle)`: the hot idle period, and the linger after an error response.
    client_short: TimerQueue,
    /// How often cold free buffers give their pages back (`trimBuffersCallback`).
    buffer_trim: TimerQueue,
    /// How often the access log hands its lines to the control thread.
    access_log_publish: TimerQueue,
    /// While old generations are held: how often to see whether they can be let go of.
    generations: TimerQueue,
    /// Exchanges whose JavaScript handler waits suspended: each wakes at its next timer or its
    /// deadline, any time the script chose (proxy/handler_target.zig).
    handler_wake: TimerQueue,
};

/// Worker-wide counters (written by the worker, read by the control thread: `Counter`); a
/// pool's are in its `LocalPool.stats`.
pub const Stats = struct {
    client_errors: Counter = .{},
    client_timeouts: Counter = .{},
    idle_parks: Counter = .{},
    /// PROXY protocol headers taken on listeners that ask for them, and connections refused
    /// there for a missing, malformed or late one.
    proxy_headers: Counter = .{},
    proxy_headers_refused: Counter = .{},
    /// Requests refused with a 403 by an allow or deny list.
    requests_forbidden: Counter = .{},
    /// Requests refused with a 429 by a rate limit, and buckets forgotten before they were
    /// full again (the table's eviction: policy/RateLimiter.zig).
    requests_rate_limited: Counter = .{},
    rate_limit_evictions: Counter = .{},
    buffers_trimmed: Counter = .{},
    /// Requests no route matched (answered 404 by sluice).
    requests_unrouted: Counter = .{},
    /// Fixed responses and redirects answered by sluice itself, the 404s above included.
    local_responses: Counter = .{},
    /// Request fields dropped because their name has an underscore (`header_underscores`).
    underscore_fields_dropped: Counter = .{},
    /// Request ids sluice made (the client sent none in the request id field, or one that
    /// was not plain: policy/HeaderPolicy.zig).
    request_ids_generated: Counter = .{},
    /// TLS listeners: handshakes completed (and of them resumed), and failed (timed out,
    /// refused, not TLS at all, or no pool memory).
    tls_handshakes: Counter = .{},
    tls_resumptions: Counter = .{},
    tls_handshakes_failed: Counter = .{},
    /// Completed handshakes by protocol version.
    tls_handshakes_tls12: Counter = .{},
    tls_handshakes_tls13: Counter = .{},
    /// Responses gzipped (proxy/Compressor.zig), those that would have been but found every
    /// slot busy (they passed as sent), and the body bytes in and gzip bytes out (counted when
    /// each response ends).
    responses_compressed: Counter = .{},
    compression_slots_full: Counter = .{},
    compression_bytes_in: Counter = .{},
    compression_bytes_out: Counter = .{},
    /// Requests refused with an error before they reached a pool (bad requests, timeouts
    /// reading the head): their durations.
    latency: Histogram = .{},
};

/// Warnings about failures are rate limited per kind: at most one line per kind per second
/// per worker, with a count of those not shown, so a backend failing every request does not
/// flood the log while its first failure is still seen at once.
pub const WarnLimiter = struct {
    last_ns: [kinds_count]u64 = @splat(0),
    suppressed: [kinds_count]u32 = @splat(0),

    pub const kinds_count = @typeInfo(@typeInfo(Failure).@"union".tag_type.?).@"enum".field_names.len + 4;
    /// The extra kinds: request fields dropped for an underscore; TLS with a backend failing;
    /// a client's certificate refused; a connection without a good PROXY protocol header.
    pub const underscore_kind = kinds_count - 1;
    pub const upstream_tls_kind = kinds_count - 2;
    pub const client_certificate_kind = kinds_count - 3;
    pub const proxy_header_kind = kinds_count - 4;
    const interval_ns = std.time.ns_per_s;

    /// Whether to write a line for `kind` now; if so, `suppressed` says how many were not.
    fn allow(limiter: *WarnLimiter, kind: usize, now_ns: u64) ?u32 {
        if (limiter.last_ns[kind] != 0 and now_ns -| limiter.last_ns[kind] < interval_ns) {
            limiter.suppressed[kind] +|= 1;
            return null;
        }
        limiter.last_ns[kind] = @max(now_ns, 1);
        const suppressed = limiter.suppressed[kind];
        limiter.suppressed[kind] = 0;
        return suppressed;
    }
};

/// Counts a failure where it belongs: the pool's counters when the exchange had one.
/// `answered`: the client gets the failure's response (nothing of another had started).
pub fn countFailure(proxy: *Proxy, upstream: ?*LocalPool, failure: Failure, answered: bool) void {
    const status = failure.status();
    const stats = if (upstream) |u| &u.stats else {
        if (status < 500) proxy.stats.client_errors.add(1);
        return;
    };
    if (answered) stats.own_responses[status / 100 - 1].add(1);
    if (failure == .no_backend_available or failure == .no_members) stats.no_backend_available.add(1);
    switch (status) {
        503 => stats.overloaded.add(1),
        500...502, 504...599 => stats.upstream_errors.add(1),
        else => proxy.stats.client_errors.add(1),
    }
}

/// Two short waits share one queue: how long a connection
/// waiting for its next request keeps its buffer before returning it to the pool
/// (Connection.parkBuffer), long enough that a client sending requests back to back never pays
/// for it; and how long an error response may take to be read before we close (the linger).
/// Both shrink with a client idle timeout under a second.
const short_ns = 1 * std.time.ns_per_s;

/// Exchange slots of a worker with `sessions` sessions: one per connection slot, one per
/// HTTP/2 stream slot (as many) and one per fetch slot (as many).
pub fn exchangesCount(sessions: u32) u32 {
    return 2 * sessions + fetchesCount(sessions);
}

/// A handler's fetches a worker may have in flight at once: as many as it has sessions, so
/// every request may wait on one, and a few on several.
pub fn fetchesCount(sessions: u32) u32 {
    return sessions;
}

/// Buffers a fetch slot may hold at once: its request's strings and body, its exchange's
/// upstream side, and with TLS to backends the try's ciphertext each way.
pub fn buffersPerFetch(upstream_tls: bool) u32 {
    return 2 + @as(u32, if (upstream_tls) 2 else 0);
}

pub fn sessionsCount(config: *const Config, workers_count: u32) u32 {
    return std.math.divCeil(u32, config.connections_max, workers_count) catch unreachable;
}

/// Allocates everything the proxy will ever use but its pools' state (allocated with each pool
/// instance). `proxy` must be at its final address, and `loop` may still be uninitialized (it
/// is created on the worker's thread); the worker adopts `generation` there (`adopt`).
pub fn init(
    proxy: *Proxy,
    allocator: std.mem.Allocator,
    loop: *Loop,
    config: *const Config,
    generation: *const Generation,
    worker_index: u32,
    sessions_count: u32,
    on_slot_free: SlotFreeCallback,
    /// Reserve TLS buffers, for listeners and for backends, whatever `config` has: a reload
    /// may add either (the workers do; the simulator, which runs no TLS, does not). TLS memory
    /// is made now only when `config` has TLS; else by the reload that adds it.
    tls_reserved: bool,
    /// Make the HTTP/2 state (the workers do; the simulator, which runs HTTP/1.1, does not).
    http2_enabled: bool,
) !void {
    const buffers_per_session = buffersPerSession(tls_reserved, tls_reserved);
    const streams_count = sessions_count;
    const exchanges_count = exchangesCount(sessions_count);
    const fetches_count = fetchesCount(sessions_count);
    const buffers_count = buffers_per_session * sessions_count + buffersPerStream(tls_reserved) * streams_count +
        buffersPerFetch(tls_reserved) * fetches_count +
        (if (http2_enabled) buffersForHttp2Backends(sessions_count, tls_reserved) else 0);
    const buffer_bytes = if (tls_reserved)
        @max(config.bufferBytes(), std.mem.alignForward(u32, tls.Engine.record_bytes_max, 4096))
    else
        config.bufferBytes();
    const tls_pool: ?*tls.memory.Pool = if (tls_reserved and (config.hasTls() or config.usesUpstreamTls()))
        try makeTlsPool(allocator, config, sessions_count)
    else
        null;
    errdefer if (tls_pool) |pool| {
        pool.deinit(std.heap.page_allocator);
        allocator.destroy(pool);
    };

    // Untouched until used: slots are initialized on first use (`startSession`,
    // `acquireExchange`).
    const connections = try StaticAllocator.allocUntouched(allocator, Connection, null, sessions_count);
    errdefer allocator.free(connections);
    var free_connections: FreeIndices = try .init(allocator, sessions_count);
    errdefer free_connections.deinit(allocator);
    const exchanges = try StaticAllocator.allocUntouched(allocator, Exchange, null, exchanges_count);
    errdefer allocator.free(exchanges);
    var free_exchanges: FreeIndices = try .init(allocator, sessions_count);
    errdefer free_exchanges.deinit(allocator);
    var free_stream_exchanges: FreeIndices = try .init(allocator, streams_count);
    errdefer free_stream_exchanges.deinit(allocator);
    const fetches = try StaticAllocator.allocUntouched(allocator, Subrequest, null, fetches_count);
    errdefer allocator.free(fetches);
    var free_fetches: FreeIndices = try .init(allocator, fetches_count);
    errdefer free_fetches.deinit(allocator);
    const http2_slots = try StaticAllocator.allocUntouched(allocator, Http2, null, sessions_count);
    errdefer allocator.free(http2_slots);
    var free_http2: FreeIndices = try .init(allocator, sessions_count);
    errdefer free_http2.deinit(allocator);
    const streams = try StaticAllocator.allocUntouched(allocator, Http2Stream, null, streams_count);
    errdefer allocator.free(streams);
    var free_streams: FreeIndices = try .init(allocator, streams_count);
    errdefer free_streams.deinit(allocator);
    const request_fields_count = @as(usize, exchanges_count) * config.headers_count_max;
    const request_fields = try StaticAllocator.allocUntouched(allocator, http.Header, null, request_fields_count);
    errdefer allocator.free(request_fields);
    const response_fields_count = @as(usize, exchanges_count) * config.response_headers_count_max;
    const response_fields = try StaticAllocator.allocUntouched(allocator, http.Header, null, response_fields_count);
    errdefer allocator.free(response_fields);
    const path_scratch_bytes = http.path.growth_factor_max * @as(usize, config.target_bytes_max);
    const path_scratch = try StaticAllocator.allocUntouched(allocator, u8, null, path_scratch_bytes);
    errdefer allocator.free(path_scratch);
    const policy_slots = try StaticAllocator.allocUntouched(allocator, HeaderPolicy.Applied, null, exchanges_count);
    errdefer allocator.free(policy_slots);
    const h2_backends_count = h2BackendsCount(sessions_count);
    const h2_backends = try StaticAllocator.allocUntouched(allocator, Http2Backend, null, h2_backends_count);
    errdefer allocator.free(h2_backends);
    var free_h2_backends: FreeIndices = try .init(allocator, h2_backends_count);
    errdefer free_h2_backends.deinit(allocator);
    const h2_tries = try StaticAllocator.allocUntouched(allocator, Http2Try, null, exchanges_count);
    errdefer allocator.free(h2_tries);
    const rate_slots = try StaticAllocator.allocUntouched(allocator, RateLimiter.Slot, null, RateLimiter.slots_count);
    errdefer allocator.free(rate_slots);
    var buffers = try BufferPool.init(allocator, buffers_count, buffer_bytes);
    errdefer buffers.deinit(allocator);
    // A compressor takes windows of at most a buffer (Exchange.relayBody).
    var compressors: Compressor.Slots = try .init(allocator, config.compression.slots, buffer_bytes);
    errdefer compressors.deinit(allocator);

    proxy.* = .{
        .loop = loop,
        .config = config,
        .worker_index = worker_index,
        .generation = generation,
        .connections = connections,
        .free_connections = free_connections,
        .exchanges = exchanges,
        .free_exchanges = free_exchanges,
        .free_stream_exchanges = free_stream_exchanges,
        .fetches = fetches,
        .free_fetches = free_fetches,
        .http2_slots = http2_slots,
        .free_http2 = free_http2,
        .streams = streams,
        .free_streams = free_streams,
        .request_fields = request_fields,
        .response_fields = response_fields,
        .path_scratch = path_scratch,
        .buffers = buffers,
        .queues = .{
            .client_header = .init(config.client_header_timeout_ns),
            .client_idle_rest = .init(@max(1, config.client_idle_timeout_ns -| short_ns)),
            .client_idle = .init(config.client_idle_timeout_ns),
            .client_short = .init(@min(short_ns, config.client_idle_timeout_ns)),
            .buffer_trim = .init(buffer_trim_interval_ns),
            .access_log_publish = .init(access_log_publish_ns),
            .generations = .init(generations_check_ns),
            .handler_wake = .initAnyDeadline(),
        },
        .on_slot_free = on_slot_free,
        .tls_pool = tls_pool,
        .policy_slots = policy_slots,
        .h2_backends = h2_backends,
        .free_h2_backends = free_h2_backends,
        .h2_tries = h2_tries,
        .request_ids = .init(RequestIds.seedFor(worker_index, sys.clockRealtimeMs(), sys.clockMonotonicNs())),
        .rate_limiter = .init(rate_slots),
        .compressors = compressors,
    };
    if (config.access_log.enabled()) {
        proxy.access_log = try AccessLog.init(allocator, config.access_log.format);
    }
    if (http2_enabled) proxy.http2 = try makeHttp2(allocator, config, sessions_count, buffer_bytes);
    // Lowest index on top: new slots are taken in order, so `*_touched` is a prefix.
    assert(proxy.buffers.availableCount() == buffers_count);
}

/// The worker's nghttp2 setup and memory (Http2.zig): made at start-up whatever the listeners
/// say, so that a reload may turn HTTP/2 on; the memory is untouched address space until used.
fn makeHttp2(allocator: std.mem.Allocator, config: *const Config, sessions_count: u32, buffer_bytes: u32) !*Http2.Worker {
    const worker = try allocator.create(Http2.Worker);
    errdefer allocator.destroy(worker);
    worker.* = .{ .setup = undefined, .client_setup = undefined, .pool = undefined };
    assert(Http2Stream.segments_max * buffer_bytes >= Http2.window_bytes);
    try worker.setup.init(Http2.limits(config));
    errdefer worker.setup.deinit();
    try worker.client_setup.init(Http2Backend.limits(config.response_header_bytes_max, config.response_headers_count_max, buffer_bytes));
    errdefer worker.client_setup.deinit();
    // Client connections' sessions, and the shared connections to backends' (whose streams
    // carry a pool's worth of tries each: the same blocks per connection, generously).
    const sessions_served = sessions_count + h2BackendsCount(sessions_count);
    var options: h2.memory.Pool.Options = undefined;
    for (&options.blocks, h2_blocks_per_session) |*count, per_session| count.* = per_session * sessions_served + 4;
    try worker.pool.init(std.heap.page_allocator, options);
    return worker;
}

/// nghttp2's blocks per HTTP/2 connection, by size class (h2/memory.zig): an idle session is
/// about 22 KB (its 16 KiB output frame buffer, the session, HPACK tables); each request in
/// flight adds its stream, queued frames and the fields of the header block being decoded
/// (an allocation per name and per value). Classes lend to larger ones' borrowers.
const h2_blocks_per_session = [h2.memory.class_count]u32{
    48, 96, 48, 48, 24, 24, 12, 12, 6, 6, 3, 3, 2, 3, 1, 1, 1, 2, 0, 0, 0,
};

/// Buffers an HTTP/2 stream slot may hold at once: the request's head, its body (a window's
/// worth, `Http2Stream.segments_max`), its exchange's upstream side and a handler's copy of
/// the head, and with TLS to backends the try's ciphertext each way.
pub fn buffersPerStream(upstream_tls: bool) u32 {
    return 3 + Http2Stream.segments_max + @as(u32, if (upstream_tls) 2 else 0);
}

/// The blocks of each size class one TLS connection may hold at once: its handshake's peak on
/// the server side (`zig build tls-bench -- --sizes`, AWS-LC, ECDSA and RSA, TLS 1.2 and 1.3;
/// an RSA signature with AVX-512 takes a 12 KiB scratch block), doubled, and a full record's
/// buffer each way. An idle connection holds far less (~5 KB);
/// the pool is sized so that every connection slot can be mid-handshake at once, so it sheds
/// nothing below the connection limit. Classes not listed lend to and borrow from their
/// neighbours.
const tls_blocks_per_session = classBlocks(&.{
    .{ 16, 32 },   .{ 32, 64 },   .{ 48, 16 },  .{ 64, 16 },  .{ 80, 8 },
    .{ 96, 2 },    .{ 112, 8 },   .{ 128, 24 }, .{ 160, 12 }, .{ 192, 4 },
    .{ 224, 8 },   .{ 256, 24 },  .{ 272, 8 },  .{ 320, 8 },  .{ 384, 4 },
    .{ 464, 4 },   .{ 512, 8 },   .{ 544, 4 },  .{ 640, 8 },  .{ 704, 4 },
    .{ 816, 4 },   .{ 960, 4 },   .{ 1280, 2 }, .{ 1664, 4 }, .{ 2560, 2 },
    .{ 12288, 2 }, .{ 16768, 2 },
});

/// The same for a connection to a backend (the client side), measured the same way: a full
/// handshake's peak, which holds the backend's certificate chain as it is verified (~28 KB for
/// the test chains; real chains of bigger certificates take more, so this is four times the
/// measured peak), and a full record's buffer each way; an idle one keeps ~16 KB (its session
/// and the chain).
const tls_client_blocks_per_connection = classBlocks(&.{
    .{ 16, 256 },  .{ 32, 448 }, .{ 48, 256 }, .{ 64, 48 },  .{ 80, 32 },
    .{ 96, 8 },    .{ 112, 32 }, .{ 128, 16 }, .{ 160, 8 },  .{ 192, 24 },
    .{ 224, 32 },  .{ 256, 32 }, .{ 272, 16 }, .{ 320, 16 }, .{ 384, 8 },
    .{ 464, 8 },   .{ 512, 16 }, .{ 544, 8 },  .{ 640, 16 }, .{ 704, 8 },
    .{ 768, 8 },   .{ 816, 8 },  .{ 960, 8 },  .{ 1280, 4 }, .{ 1664, 8 },
    .{ 2048, 4 },  .{ 2560, 2 }, .{ 3328, 2 }, .{ 4096, 2 }, .{ 8192, 1 },
    .{ 16768, 2 },
});

/// A worker's TLS memory for `config`: every session mid-handshake on a listener, and the
/// connections to TLS backends `upstreamTlsConnections` counts. Untouched address space:
/// AWS-LC's blocks cost pages only once used. At start-up (`init`), or on the control thread by
/// the reload that brings the first TLS to a process started without (from the general heap: a
/// reload's allocations are the control plane's).
pub fn makeTlsPool(allocator: std.mem.Allocator, config: *const Config, sessions_count: u32) !*tls.memory.Pool {
    const pool = try allocator.create(tls.memory.Pool);
    errdefer allocator.destroy(pool);
    const upstream = upstreamTlsConnections(config, sessions_count);
    try pool.init(std.heap.page_allocator, tlsPoolOptions(sessions_count, upstream));
    return pool;
}

/// Blocks per size class from (payload bytes, blocks) pairs; classes not named get none.
fn classBlocks(comptime peak: []const struct { u32, u32 }) [tls.memory.class_count]u32 {
    var blocks: [tls.memory.class_count]u32 = @splat(0);
    for (peak) |entry| {
        const index = std.mem.indexOfScalar(u32, &tls.memory.class_payload_bytes, entry[0]).?;
        blocks[index] = entry[1];
    }
    return blocks;
}

/// Buffers each session reserves: its connection's, its exchange's, and the copy of the head
/// a handler's `Response.proxy` keeps for retries (`Exchange.head_copy`); two more (the
/// ciphertext each way) for a TLS listener and for TLS to backends. Every buffer a session can
/// hold at once is reserved, so the acquisitions that cannot wait (a connection's buffer at
/// accept, when it wakes from parked, a TLS connection's) always find one: a third buffer
/// taken beyond the reserve once starved a parked connection's wake-up (the simulator found
/// it). Untouched address space until used: idle memory does not change.
pub fn buffersPerSession(listener_tls: bool, upstream_tls: bool) u32 {
    return 3 + @as(u32, if (listener_tls) 2 else 0) + @as(u32, if (upstream_tls) 2 else 0);
}

/// Buffers for HTTP/2 to backends: an inbox per exchange slot (Http2Try.zig), and two per
/// shared connection (Http2Backend.zig), four when it may speak TLS (Http2BackendTls.zig).
fn buffersForHttp2Backends(sessions: u32, upstream_tls: bool) u32 {
    const per_connection: u32 = if (upstream_tls) 4 else 2;
    return exchangesCount(sessions) + per_connection * h2BackendsCount(sessions);
}

/// The TLS connections to backends one worker may hold at once, counted as whole client
/// connections at their handshake's peak (generous: address space, untouched until used):
///   sessions                       one try per exchange, each possibly mid-handshake
///   + per TLS pool, its backends * keepalive_max idle connections, each with its session
///   + per TLS pool, its backends * sessions kept to resume (a session is about half an
///     idle connection: `Resumption.sessions_max / 2`)
/// From the start-up configuration (without TLS pools there: `sessions`, one handshake per
/// session): a reload that adds TLS backends beyond it sheds their handshakes when the pool
/// runs out (counted, and a 503), never grows the heap.
fn upstreamTlsConnections(config: *const Config, sessions: u32) u32 {
    var total: u32 = sessions;
    for (config.pools()) |*pool| {
        if (!pool.tls.enabled) continue;
        const per_backend = pool.keepalive_max + tls.ClientContext.Resumption.sessions_max / 2;
        total +|= pool.backends_count * per_backend;
    }
    return total;
}

/// Blocks for `listener_sessions` server connections and `upstream` client connections, plus
/// a fixed reserve for what AWS-LC keeps per thread and process (made by the first
/// handshake on the worker, kept for good).
fn tlsPoolOptions(listener_sessions: u32, upstream: u32) tls.memory.Pool.Options {
    var options: tls.memory.Pool.Options = .{ .blocks = undefined };
    for (&options.blocks, tls_blocks_per_session, tls_client_blocks_per_connection) |*count, server, client| {
        count.* = server * listener_sessions + client * upstream + 64;
    }
    return options;
}

/// A pool for `connections` client connections alone (the control thread's, for health
/// probes over TLS).
pub fn tlsClientPoolOptions(connections: u32) tls.memory.Pool.Options {
    return tlsPoolOptions(0, connections);
}

/// On the loop's thread, after its last tick: the pipes are closed.
pub fn stop(proxy: *Proxy) void {
    proxy.pipes.closeAll(proxy.loop);
}

pub fn deinit(proxy: *Proxy, allocator: std.mem.Allocator) void {
    // `tls_pool` is not freed: AWS-LC's per-thread and process state made on this worker
    // lives in it for the rest of the process.
    if (proxy.access_log) |*access_log| access_log.deinit(allocator);
    proxy.buffers.deinit(allocator);
    allocator.free(proxy.path_scratch);
    allocator.free(proxy.policy_slots);
    proxy.compressors.deinit(allocator);
    allocator.free(proxy.h2_tries);
    proxy.free_h2_backends.deinit(allocator);
    allocator.free(proxy.h2_backends);
    allocator.free(proxy.rate_limiter.slots);
    allocator.free(proxy.response_fields);
    allocator.free(proxy.request_fields);
    proxy.free_exchanges.deinit(allocator);
    proxy.free_stream_exchanges.deinit(allocator);
    proxy.free_fetches.deinit(allocator);
    allocator.free(proxy.fetches);
    allocator.free(proxy.exchanges);
    proxy.free_http2.deinit(allocator);
    allocator.free(proxy.http2_slots);
    proxy.free_streams.deinit(allocator);
    allocator.free(proxy.streams);
    if (proxy.http2) |worker| {
        worker.pool.deinit(std.heap.page_allocator);
        worker.setup.deinit();
        worker.client_setup.deinit();
        allocator.destroy(worker);
    }
    proxy.free_connections.deinit(allocator);
    allocator.free(proxy.connections);
    proxy.* = undefined;
}

/// Registers the session timer queues with the loop and adopts the first generation (on the
/// loop's thread).
pub fn start(proxy: *Proxy) void {
    inline for (@typeInfo(Queues).@"struct".field_names) |name| {
        proxy.loop.timerQueueRegister(&@field(proxy.queues, name));
    }
    const first = proxy.generation;
    proxy.adopt(first);
    proxy.loop.timerArm(&proxy.queues.buffer_trim, &proxy.buffer_trim_timer, Proxy, proxy, trimBuffersCallback);
    if (proxy.access_log != null) {
        proxy.loop.timerArm(&proxy.queues.access_log_publish, &proxy.access_log_timer, Proxy, proxy, publishAccessLogCallback);
    }
}

const access_log_publish_ns = 200 * std.time.ns_per_ms;

fn publishAccessLogCallback(proxy: *Proxy) void {
    proxy.access_log.?.publishIfCaughtUp(); // Else the next period tries again.
    proxy.loop.timerArm(&proxy.queues.access_log_publish, &proxy.access_log_timer, Proxy, proxy, publishAccessLogCallback);
}

/// Buffers a burst touched once go back to the kernel when they have been free for a while
/// (stdx/BufferPool.zig `trim`); the most recently used stay warm for the next requests.
const buffer_trim_interval_ns = 5 * std.time.ns_per_s;
const buffers_kept_warm = 64;

fn trimBuffersCallback(proxy: *Proxy) void {
    proxy.stats.buffers_trimmed.add(proxy.buffers.trim(buffers_kept_warm));
    proxy.loop.timerArm(&proxy.queues.buffer_trim, &proxy.buffer_trim_timer, Proxy, proxy, trimBuffersCallback);
}

pub fn hasFreeSession(proxy: *const Proxy) bool {
    return proxy.free_connections.available() > 0;
}

/// Serves an accepted connection. The caller checked `hasFreeSession`.
pub fn startSession(proxy: *Proxy, fd: linux.fd_t, peer: Address, listener_slot: u8) void {
    assert(!proxy.draining);
    const taken = proxy.free_connections.take().?; // The caller checked.
    const connection = &proxy.connections[taken.index];
    if (taken.fresh) connection.* = .{ .proxy = proxy };
    _ = proxy.connections_active.fetchAdd(1, .monotonic);
    connection.start(fd, peer, listener_slot);
}

/// Called by a connection once it is finalized.
pub fn releaseSession(proxy: *Proxy, connection: *Connection) void {
    assert(connection.state == .free);
    proxy.free_connections.give(@intCast(connection - proxy.connections.ptr));
    _ = proxy.connections_active.fetchSub(1, .monotonic);
    proxy.on_slot_free.function(proxy.on_slot_free.context);
}

/// An exchange slot for a request whose head begins. There is one per connection slot and an
/// HTTP/1.1 connection has at most one exchange, so one is always free.
/// The header policy slot beside `exchange`'s slot.
pub fn policySlot(proxy: *Proxy, exchange: *const Exchange) *HeaderPolicy.Applied {
    return &proxy.policy_slots[proxy.exchangeIndex(exchange)];
}

/// The stream state of `exchange`'s try on a shared HTTP/2 connection.
pub fn h2TrySlot(proxy: *Proxy, exchange: *const Exchange) *Http2Try {
    return &proxy.h2_tries[proxy.exchangeIndex(exchange)];
}

fn exchangeIndex(proxy: *const Proxy, exchange: *const Exchange) usize {
    const index = (@intFromPtr(exchange) - @intFromPtr(proxy.exchanges.ptr)) / @sizeOf(Exchange);
    assert(&proxy.exchanges[index] == exchange);
    return index;
}

/// Shared HTTP/2 connections to backends a worker may hold: each carries up to
/// `Http2Backend.streams_max` tries, so a sixteenth of the exchange slots covers every try in
/// flight on few members, with room for more members than that. At least 64 (128 buffers,
/// 2 MiB of address space at 16 KiB): a member whose SETTINGS take one or a few streams at a
/// time needs a connection per few requests. Past the table, a try queues on the member's
/// least busy connection (Http2Backend.attachTry), or is shed (503) if it has none.
pub fn h2BackendsCount(sessions: u32) u32 {
    return @max(64, sessions / 16);
}

pub fn acquireExchange(proxy: *Proxy) *Exchange {
    const taken = proxy.free_exchanges.take().?; // One per connection slot.
    return proxy.exchangeSlot(taken.index, taken.fresh);
}

/// The exchange slot of an HTTP/2 stream slot just taken (there is one per stream slot).
pub fn acquireStreamExchange(proxy: *Proxy) *Exchange {
    const taken = proxy.free_stream_exchanges.take().?; // One per stream slot.
    return proxy.exchangeSlot(proxy.free_exchanges.capacity() + taken.index, taken.fresh);
}

fn exchangeSlot(proxy: *Proxy, index: u32, fresh: bool) *Exchange {
    const exchange = &proxy.exchanges[index];
    if (fresh) {
        const request_count: usize = proxy.config.headers_count_max;
        const response_count: usize = proxy.config.response_headers_count_max;
        exchange.reset(
            proxy,
            undefined, // Set by `Exchange.open`.
            proxy.request_fields[index * request_count ..][0..request_count],
            proxy.response_fields[index * response_count ..][0..response_count],
        );
    }
    assert(exchange.state == .free);
    return exchange;
}

pub fn releaseExchange(proxy: *Proxy, exchange: *Exchange) void {
    assert(exchange.state == .free);
    assert(exchange.pending_ops == 0);
    const index: u32 = @intCast(exchange - proxy.exchanges.ptr);
    const sessions = proxy.free_exchanges.capacity();
    assert(index < 2 * sessions); // A fetch's exchange slot is its fetch slot's (`releaseFetch`).
    if (index < sessions) proxy.free_exchanges.give(index) else proxy.free_stream_exchanges.give(index - sessions);
}

/// A slot for a handler's fetch, with its exchange slot; null when every one is taken.
pub fn acquireFetch(proxy: *Proxy) ?*Subrequest {
    const taken = proxy.free_fetches.take() orelse return null;
    const sub = &proxy.fetches[taken.index];
    const exchange = proxy.exchangeSlot(2 * proxy.free_exchanges.capacity() + taken.index, taken.fresh);
    if (taken.fresh) sub.* = .{ .exchange = exchange };
    assert(sub.state == .free and sub.exchange == exchange);
    return sub;
}

pub fn releaseFetch(proxy: *Proxy, sub: *Subrequest) void {
    assert(sub.state == .free);
    assert(sub.exchange.state == .free);
    proxy.free_fetches.give(@intCast(sub - proxy.fetches.ptr));
}

/// An HTTP/2 connection's slot (one per connection slot).
pub fn acquireHttp2(proxy: *Proxy) ?*Http2 {
    const taken = proxy.free_http2.take() orelse return null;
    return &proxy.http2_slots[taken.index];
}

pub fn releaseHttp2(proxy: *Proxy, http2: *Http2) void {
    proxy.free_http2.give(@intCast(http2 - proxy.http2_slots.ptr));
}

/// A stream slot for a new HTTP/2 request; null when every one is taken (the stream is refused).
pub fn acquireStream(proxy: *Proxy) ?*Http2Stream {
    const taken = proxy.free_streams.take() orelse return null;
    return &proxy.streams[taken.index];
}

pub fn releaseStream(proxy: *Proxy, stream: *Http2Stream) void {
    proxy.free_streams.give(@intCast(stream - proxy.streams.ptr));
}

/// Stop keeping anything alive: idle client and upstream connections close now, the others
/// after their current response (sessions consult `draining`).
pub fn drain(proxy: *Proxy) void {
    proxy.draining = true;
    for (&proxy.holds) |*hold| {
        const generation = hold.generation orelse continue;
        for (generation.pools) |instance| instance.locals[proxy.worker_index].connections.closeIdle();
    }
    Http2Backend.closeIdle(proxy);
    for (proxy.connections[0..proxy.free_connections.touched()]) |*connection| connection.drain();
}

/// Nothing of any pool's is left on the loop (see `LocalPool.isQuiet`).
pub fn upstreamsQuiet(proxy: *const Proxy) bool {
    for (&proxy.holds) |*hold| {
        const generation = hold.generation orelse continue;
        for (generation.pools) |instance| {
            if (!instance.locals[proxy.worker_index].isQuiet()) return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Generations

/// Makes `generation` the one new exchanges use (on the worker's thread). Its upstream timer
/// queues are registered, its pools' `LocalPool`s bound to them, and the pools of the previous
/// generation that it no longer has are retired: their idle connections close, their busy
/// ones finish their exchanges.
pub fn adopt(proxy: *Proxy, generation: *const Generation) void {
    while (proxy.pool_queues_count < generation.timeouts_count) {
        const slot = proxy.pool_queues_count;
        proxy.pool_queues[slot] = .init(generation.timeouts.durations[slot]);
        proxy.loop.timerQueueRegister(&proxy.pool_queues[slot]);
        proxy.pool_queues_count += 1;
    }
    for (generation.pools) |instance| {
        const slots = instance.queue_slots;
        instance.locals[proxy.worker_index].bindQueues(.{
            .connect = &proxy.pool_queues[slots[0]],
            .response = &proxy.pool_queues[slots[1]],
            .body = &proxy.pool_queues[slots[2]],
            .total = &proxy.pool_queues[slots[3]],
            .idle = &proxy.pool_queues[slots[4]],
        });
    }
    const previous = proxy.holds[proxy.current_hold].generation;
    if (previous) |old| if (old != generation) {
        for (old.pools) |instance| {
            if (std.mem.indexOfScalar(*Pool, generation.pools, instance) == null) {
                instance.locals[proxy.worker_index].retire();
            }
        }
        Http2Backend.closeIdle(proxy);
    };
    if (previous != generation) {
        const index = proxy.freeHold() orelse unreachable; // The control thread bounds holds.
        proxy.holds[index] = .{ .generation = generation };
        proxy.current_hold = index;
    }
    proxy.generation = generation;
    proxy.releaseIdleHolds();
    proxy.armGenerationsTimer();
}

/// Every pool of the current generation adopts its newest membership table, if the control
/// thread published one (LocalPool.adoptMembers): at each wake-up, so a worker without
/// traffic still closes its idle connections to members that left and acknowledges the table.
pub fn adoptMembers(proxy: *Proxy) void {
    for (proxy.generation.pools) |instance| instance.locals[proxy.worker_index].adoptMembers();
    Http2Backend.closeIdle(proxy); // Shared connections to members that left.
}

const generations_check_ns = 100 * std.time.ns_per_ms;

fn armGenerationsTimer(proxy: *Proxy) void {
    if (!proxy.holdsOld() or proxy.generations_timer.isArmed()) return;
    proxy.loop.timerArm(&proxy.queues.generations, &proxy.generations_timer, Proxy, proxy, generationsCallback);
}

fn generationsCallback(proxy: *Proxy) void {
    proxy.releaseIdleHolds();
    proxy.armGenerationsTimer();
}

fn freeHold(proxy: *const Proxy) ?u8 {
    for (&proxy.holds, 0..) |*hold, i| if (hold.generation == null) return @intCast(i);
    return null;
}

/// For an exchange starting now: the hold of the current generation.
pub fn holdCurrent(proxy: *Proxy) u8 {
    const hold = &proxy.holds[proxy.current_hold];
    assert(hold.generation == proxy.generation);
    hold.users += 1;
    return proxy.current_hold;
}

/// A fetch's exchange starting now, on the generation its parent holds (`index`): the pool it
/// goes to was looked up there.
pub fn holdAgain(proxy: *Proxy, index: u8) u8 {
    const hold = &proxy.holds[index];
    assert(hold.generation != null and hold.users > 0);
    hold.users += 1;
    return index;
}

/// An exchange that held `index` has ended.
pub fn releaseHold(proxy: *Proxy, index: u8) void {
    const hold = &proxy.holds[index];
    assert(hold.users > 0);
    hold.users -= 1;
    if (hold.users == 0 and index != proxy.current_hold) proxy.releaseIdleHolds();
}

/// Lets go of every old generation no exchange uses any more and whose retired pools are
/// quiet. Also called by the worker when a retired pool's last connection closes.
pub fn releaseIdleHolds(proxy: *Proxy) void {
    for (&proxy.holds, 0..) |*hold, i| {
        if (i == proxy.current_hold or hold.users > 0) continue;
        const generation = hold.generation orelse continue;
        if (!proxy.retiredPoolsQuiet(generation)) continue;
        proxy.moveRetiredCounts(generation);
        hold.* = .{};
        _ = @constCast(generation).holders.fetchSub(1, .release);
    }
}

/// This worker is done with `generation`: what its retired pools counted since a reload
/// built their successors (exchanges that finished on them late) moves into the current
/// instances of their names, so `/metrics` counts every request once.
fn moveRetiredCounts(proxy: *Proxy, generation: *const Generation) void {
    for (generation.pools) |instance| {
        if (!instance.locals[proxy.worker_index].retired) continue;
        for (proxy.generation.pools) |current| {
            if (current == instance or !std.mem.eql(u8, current.config.name, instance.config.name)) continue;
            current.moveWorkerCounts(instance, proxy.worker_index);
        }
    }
}

fn retiredPoolsQuiet(proxy: *const Proxy, generation: *const Generation) bool {
    for (generation.pools) |instance| {
        const upstream = &instance.locals[proxy.worker_index];
        if (upstream.retired and !upstream.isQuiet()) return false;
    }
    return true;
}

/// Old generations still held: the worker checks them again on its next wake-ups.
pub fn holdsOld(proxy: *const Proxy) bool {
    for (&proxy.holds, 0..) |*hold, i| {
        if (i != proxy.current_hold and hold.generation != null) return true;
    }
    return false;
}

pub fn httpLimits(proxy: *const Proxy) http.Limits {
    return .{
        .header_bytes_max = proxy.config.header_bytes_max,
        .headers_count_max = proxy.config.headers_count_max,
        .target_bytes_max = proxy.config.target_bytes_max,
    };
}

/// Response heads have limits of their own (`response_header_bytes_max`, and a count).
pub fn responseLimits(proxy: *const Proxy) http.Limits {
    const config = proxy.config;
    return .{
        .header_bytes_max = config.response_header_bytes_max,
        .headers_count_max = config.response_headers_count_max,
        .target_bytes_max = @min(config.target_bytes_max, config.response_header_bytes_max), // Unused.
    };
}

/// Counts request fields dropped for an underscore in their name, and says so (rate limited):
/// an application that relies on one sees why it is missing.
pub fn noteUnderscoreFields(proxy: *Proxy, count: u32, client_ip: []const u8) void {
    proxy.stats.underscore_fields_dropped.add(count);
    const suppressed = proxy.warn_limiter.allow(WarnLimiter.underscore_kind, proxy.loop.now()) orelse return;
    log.warn("dropped {d} request field(s) with '_' in the name from {s} (--header-underscores " ++
        "allow keeps them); {d} more such requests not shown", .{ count, client_ip, suppressed });
}

/// The one warning line for a 502 or 504 sluice answered (rate limited per kind): what
/// failed, on which backend, and the detail that explains it.
pub fn warnFailure(proxy: *Proxy, failure: Failure, context: FailureContext) void {
    const kind: usize = @backingInt(std.meta.activeTag(failure));
    const suppressed = proxy.warn_limiter.allow(kind, proxy.loop.now()) orelse return;
    log.warn("{d} {s}: pool {s}, backend {s}, tries {d}: {s}; {d} more not shown", .{
        failure.status(), failure.name(), context.pool, context.backend,
        context.tries,    context.detail, suppressed,
    });
}

/// The one warning line for TLS with a backend failing (rate limited): why, in AWS-LC's
/// words ("certificate verify failed: self signed certificate"), whether or not a retry then
/// answers the client.
pub fn warnUpstreamTls(proxy: *Proxy, pool: []const u8, backend: []const u8, when: []const u8, reason: []const u8) void {
    const suppressed = proxy.warn_limiter.allow(WarnLimiter.upstream_tls_kind, proxy.loop.now()) orelse return;
    log.warn("TLS with backend {s} of pool {s} failed {s}: {s}; {d} more not shown", .{
        backend, pool, when, reason, suppressed,
    });
}

/// The one warning line for a client whose certificate a listener refused (rate limited, as
/// the others): who, and why in AWS-LC's words ("certificate verify failed: unable to get
/// local issuer certificate", "peer did not return a certificate"). The client got the alert.
pub fn warnClientCertificate(proxy: *Proxy, client_ip: []const u8, reason: []const u8) void {
    const suppressed = proxy.warn_limiter.allow(WarnLimiter.client_certificate_kind, proxy.loop.now()) orelse return;
    log.warn("TLS client {s} refused: its certificate: {s}; {d} more not shown", .{ client_ip, reason, suppressed });
}

/// The one warning line for a connection a PROXY protocol listener refused (rate limited, as
/// the others): the peer (the load balancer, or whoever reached the port) and what was wrong.
pub fn warnProxyHeader(proxy: *Proxy, peer_ip: []const u8, reason: []const u8) void {
    const suppressed = proxy.warn_limiter.allow(WarnLimiter.proxy_header_kind, proxy.loop.now()) orelse return;
    log.warn("PROXY protocol: connection from {s} refused: {s}; {d} more not shown", .{ peer_ip, reason, suppressed });
}

pub const FailureContext = struct {
    pool: []const u8,
    /// "-" when no backend was tried.
    backend: []const u8,
    tries: u8,
    detail: []const u8,
};

/// Whether idle connections return their buffer: not when the idle timeout is so short that
/// the hot period would already end it.
pub fn parksIdleBuffers(proxy: *const Proxy) bool {
    return proxy.config.client_idle_timeout_ns > short_ns;
}
