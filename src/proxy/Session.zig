//! One client connection, from accept to close, and the exchanges it carries.
//!
//! A session owns: the client socket, two buffers (client side `cbuf`, upstream side `ubuf`),
//! four completions (recv and send on each side), one timer, and while an exchange runs one
//! upstream connection borrowed from the proxy's pool. It belongs to one worker for its life.
//!
//! An exchange runs two pumps at once once the request head has been forwarded: the request
//! pump moves body bytes client -> backend through `cbuf`, and the response pump moves the
//! response backend -> client through `ubuf`. Running both is what makes `Expect:
//! 100-continue`, early responses and upgrades fall out naturally. Pipelined requests wait in
//! `cbuf` behind the current one and are parsed when its response is done, so responses stay
//! in order.
//!
//! Lifetime rule: every submitted operation is counted in `pending_ops` and every callback
//! starts with `opDone`. `close` cancels what is pending and the slot is finalized (fds closed,
//! buffers returned) only when the count reaches zero, so no callback ever sees a freed slot.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const http = @import("../http/http.zig");
const Pool = @import("../upstream/Pool.zig");
const Config = @import("../config/Config.zig");
const Health = @import("../health/Health.zig");
const rewrite = @import("rewrite.zig");
const affinity = @import("affinity.zig");
const mask = @import("../stdx/mask.zig");
const Failure = @import("failure.zig").Failure;
const Proxy = @import("Proxy.zig");
const Upstream = @import("Upstream.zig");
const Router = @import("Router.zig");
const local = @import("local.zig");

const Session = @This();

proxy: *Proxy,
state: State = .free,
/// Operations submitted and not yet called back.
pending_ops: u8 = 0,
phase: Phase = .idle,
requests_served: u32 = 0,

client: Socket = undefined,
client_address: Address = undefined,
/// The worker listener slot the connection came in on (routes may depend on it).
listener_slot: u8 = 0,
/// The generation hold (Proxy.holdCurrent) of the exchange under way, if any.
hold: ?u8 = null,
/// The peer as X-Forwarded-For text, and whether it is a trusted proxy: facts of the
/// connection, worked out once at accept rather than per request.
client_ip_buffer: [Address.host_text_bytes_max]u8 = undefined,
client_ip_len: u8 = 0,
client_trusted: bool = false,
client_recv: Completion = .{},
client_send: Completion = .{},
/// Client-side buffer: `cbuf[0..c_len]` is valid; `c_pos` is the next byte not yet consumed
/// (head parsed or body forwarded). A new request head always starts at offset 0.
cbuf: ?[]u8 = null,
c_len: u32 = 0,
c_pos: u32 = 0,

conn: ?*Pool.Conn = null,
upstream_recv: Completion = .{},
upstream_send: Completion = .{},
/// Upstream-side buffer: first the composed request head, then the response.
ubuf: ?[]u8 = null,
u_len: u32 = 0,

timer: Timer = .{},
/// The pool's total timeout for the exchange, across its retries (armed only when set).
total_timer: Timer = .{},
/// The idle receive was cancelled to return the buffer (see `parkBuffer`).
parking: bool = false,
request_parser: http.RequestParser,
response_parser: http.ResponseParser,
exchange: Exchange = .{},

pub const State = enum { free, active, failing, closing };

/// What the one timer currently guards; decides what its expiry means.
/// `idle_hot`: waiting for a request with the buffer still held, for a short while;
/// `idle`: waiting with the buffer returned to the pool (see `parkBuffer`);
/// `body`: the request body is still arriving, so the client sets the pace (client idle
/// timeout); `exchange`: the request is complete and the backend sets it (response timeout).
/// `response_body`: the response is being relayed, the backend sets the pace between bytes.
pub const Phase = enum {
    idle_hot,
    idle,
    header,
    connect,
    body,
    exchange,
    response_body,
    tunnel,
    linger,
    /// Sending a response sluice made itself (`respondLocal`).
    local,
};

/// Per-request state, reset when a request head is parsed.
const Exchange = struct {
    method: http.Method = .get,
    version: http.Version = .http11,
    client_keep_alive: bool = false,
    upgrade_requested: bool = false,
    head_len: u32 = 0,
    /// The loop's clock when the head was parsed; 0 once the duration was recorded (or
    /// before an exchange starts). See `recordDuration`.
    started_ns: u64 = 0,
    /// For the access log: slices of the request head in `cbuf` (kept until the next head is
    /// read), the status answered and the bytes sent to the client.
    log_method: []const u8 = "",
    log_target: []const u8 = "",
    log_referer: []const u8 = "",
    log_user_agent: []const u8 = "",
    status: u16 = 0,
    bytes_sent: u64 = 0,
    /// Composed head in `ubuf[0..upstream_head_len]`; `progress` counts bytes sent.
    upstream_head_len: u32 = 0,
    progress: u32 = 0,

    request_body: Framing = .none,
    request_done: bool = false,
    /// Body bytes already sent upstream were received into `cbuf` over the head: the request
    /// can no longer be replayed.
    request_body_overwritten: bool = false,
    /// End of the window of `cbuf` being sent upstream.
    request_window_end: u32 = 0,
    request_window_last: bool = false,

    response_started: bool = false,
    response_body: Framing = .none,
    response_done: bool = false,
    response_window_len: u32 = 0,
    response_window_last: bool = false,
    response_interim: bool = false,
    /// A 1xx went to the client: the exchange can no longer be replayed.
    interim_relayed: bool = false,
    interim_rest_start: u32 = 0,

    close_client: bool = false,
    upstream_reusable: bool = false,

    /// The pool the route chose; null for a response sluice makes itself (`respondLocal`).
    upstream: ?*Upstream = null,
    /// The route taken (null: none configured, or none matched) and what it sets.
    route: ?*const Config.Route = null,
    /// Where an upgraded connection's idle timer goes (the route's tunnel idle timeout).
    tunnel_queue: ?*loop_ns.TimerQueue = null,
    /// The request body limit in bytes; 0: none.
    body_bytes_max: u64 = 0,
    /// Bytes read from the client for this exchange: head, body, and tunnelled bytes.
    request_bytes: u64 = 0,

    /// Where the request may go: `hash`'s key and the backend a `sticky` cookie names.
    key: u64 = 0,
    preferred: ?u16 = null,
    /// Backends tried so far (a bit each) and how many tries that was.
    tried: u64 = 0,
    tries: u8 = 0,
    backend_index: u16 = 0,
    /// `backend_index` is counted in the proxy's in-flight counts (`least_conn`).
    inflight_counted: bool = false,
    /// This try's outcome went to the pool's health (`report`).
    reported: bool = false,
    /// The response is a 5xx: reported as such when it is complete.
    server_error: bool = false,
    connect_timed_out: bool = false,
    last_failure: Failure = .upstream_refused,
    retried_stale: bool = false,
    /// The response timed out and a retry is reserved: the cancelled receive's callback
    /// sends the request again.
    retry_after_cancel: bool = false,

    tunnel: bool = false,
    tunnel_client_done: bool = false,
    tunnel_upstream_done: bool = false,
    error_sent: bool = false,
    lingering: bool = false,
    /// Why the backend's response head was refused (for the log line), if it was.
    response_reject: ?http.Reject = null,
    head_rewrite_failed: bool = false,
    /// Why sluice ended the exchange itself (a `Failure`'s name), for the access log.
    end_reason: []const u8 = "",
    /// The latency histogram has this exchange (`observeLatency`).
    latency_observed: bool = false,
    /// The loop's clock when the first try began; 0 before any.
    upstream_started_ns: u64 = 0,
};

const Framing = union(enum) {
    none,
    length: u64,
    chunked: http.ChunkedDecoder,
    /// Chunked from the backend, bare data to an HTTP/1.0 client (ChunkedDecoder.decodeInPlace).
    dechunked: http.ChunkedDecoder,
    close_delimited,
};

const headroom = rewrite.response_headroom_bytes;

pub fn init(proxy: *Proxy, headers: []http.Header) Session {
    const limits = proxy.httpLimits();
    return .{
        .proxy = proxy,
        .request_parser = .init(headers, limits),
        .response_parser = .init(headers, proxy.responseLimits()),
    };
}

// ---------------------------------------------------------------------------------------------
// Accept and the request head

pub fn start(session: *Session, fd: linux.fd_t, peer: Address, listener_slot: u8) void {
    assert(session.state == .free);
    assert(session.pending_ops == 0);
    assert(session.hold == null);
    session.state = .active;
    session.client = Socket.init(fd);
    session.client_address = peer;
    session.listener_slot = listener_slot;
    session.client_ip_len = @intCast(peer.formatHost(&session.client_ip_buffer).len);
    session.client_trusted = session.proxy.config.isTrustedProxy(&peer);
    session.requests_served = 0;
    session.c_len = 0;
    session.c_pos = 0;
    // Sizing guarantees two buffers per session slot (asserted in Worker.init).
    session.cbuf = session.proxy.buffers.acquire().?;
    session.readRequest();
}

/// Starts (or resumes, with pipelined bytes already buffered) reading the next request head.
fn readRequest(session: *Session) void {
    assert(session.state == .active);
    assert(session.conn == null and session.ubuf == null);
    session.releaseHold();
    session.exchange = .{};
    session.request_parser.reset();
    session.compactClientBuffer();
    if (session.c_len > 0) {
        session.armTimer(.header);
        return session.parseRequest();
    }
    if (session.proxy.draining and session.requests_served > 0) return session.close();
    // Waiting for a first byte is idle time, on a new connection too (browsers open
    // connections speculatively): the head deadline starts with the head's first byte.
    session.armTimer(.idle_hot);
    session.recvClientHead();
}

fn compactClientBuffer(session: *Session) void {
    const cbuf = session.cbuf.?;
    assert(session.c_pos <= session.c_len);
    const rest = session.c_len - session.c_pos;
    if (session.c_pos > 0 and rest > 0) {
        std.mem.copyForwards(u8, cbuf[0..rest], cbuf[session.c_pos..session.c_len]);
    }
    session.c_len = rest;
    session.c_pos = 0;
}

fn recvClientHead(session: *Session) void {
    const cbuf = session.cbuf.?;
    assert(session.c_len < cbuf.len);
    session.recvClient(cbuf[session.c_len..], recvClientHeadCallback);
}

fn recvClientHeadCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(false)) return;
    const parking = session.parking;
    session.parking = false;
    const n = result catch |err| switch (err) {
        error.Canceled => if (parking) return session.parkBuffer() else return session.close(),
        else => return session.close(), // Reset or similar: nothing to answer.
    };
    if (n == 0) return session.close(); // Closed between requests, or mid-head: either way, done.
    if (session.c_len == 0) session.armTimer(.header); // First byte: the head deadline starts.
    session.c_len += @intCast(n);
    session.parseRequest();
}

/// The connection has been idle for a while: give its buffer back and wait for readiness
/// without one. An idle keep-alive connection then holds only its slot, not 20 KiB.
/// Hot connections never come here, so the common path keeps a single receive per request.
fn parkBuffer(session: *Session) void {
    assert(session.c_len == 0 and session.c_pos == 0);
    assert(session.phase == .idle);
    session.proxy.buffers.release(session.cbuf.?);
    session.cbuf = null;
    session.proxy.stats.idle_parks.add(1);
    session.submit();
    session.loop().pollReadable(&session.client_recv, &session.client, Session, session, idleReadableCallback);
}

fn idleReadableCallback(session: *Session, result: loop_ns.PollError!void) void {
    if (session.opDone(false)) return;
    result catch return session.close();
    // Two buffers per session slot are reserved at start-up, so one is always there.
    session.cbuf = session.proxy.buffers.acquire().?;
    session.recvClientHead(); // Data, or the EOF that made it readable: both are handled there.
}

fn parseRequest(session: *Session) void {
    const cbuf = session.cbuf.?;
    switch (session.request_parser.feed(cbuf[0..session.c_len])) {
        .incomplete => {
            // The parser rejects a head over header_bytes_max, which is below the buffer size.
            assert(session.c_len < cbuf.len);
            session.recvClientHead();
        },
        .invalid => |reject| session.fail(.{ .bad_request = reject }),
        .complete => |head_len| session.startExchange(head_len),
    }
}

// ---------------------------------------------------------------------------------------------
// Forwarding the head

fn startExchange(session: *Session, head_len: u32) void {
    const head = &session.request_parser.head;
    if (head.method == .connect) return session.fail(.method_not_allowed);
    // The host forwarded, whichever field it came from (an absolute-form target's authority
    // overrides Host): bounded, as X-Forwarded-Host copies it.
    if (rewrite.requestHost(head)) |host| {
        if (host.len > rewrite.host_bytes_max) return session.fail(.host_too_long);
    }
    const proxy = session.proxy;
    assert(!session.exchange.inflight_counted);
    assert(session.hold == null);
    session.hold = proxy.holdCurrent();
    session.exchange = .{
        .method = head.method,
        .version = head.version,
        .client_keep_alive = head.keep_alive,
        .upgrade_requested = rewrite.upgradeAllowed(head),
        .head_len = head_len,
        .started_ns = session.loop().now(),
        .request_bytes = head_len,
    };
    assert(session.exchange.started_ns > 0);
    if (proxy.access_log != null) {
        // Fields live in the parser's array, which the response parser reuses: keep slices.
        session.exchange.log_method = head.method_text;
        session.exchange.log_target = head.target;
        session.exchange.log_referer = head.get("referer") orelse "";
        session.exchange.log_user_agent = head.get("user-agent") orelse "";
    }
    session.initRequestFraming();
    session.c_pos = head_len;
    const upstream_chosen = session.route() orelse return;
    if (session.bodyOverLimit()) return session.fail(.request_body_too_large);
    session.exchange.upstream = upstream_chosen;
    upstream_chosen.stats.requests.add(1);
    upstream_chosen.retry_budget.deposit();
    session.findAffinity();
    session.ubuf = proxy.buffers.acquire() orelse return session.fail(.overloaded);
    session.u_len = 0; // No response byte yet (see `upstreamFailed`).
    if (!session.composeUpstreamHead()) return session.fail(.head_too_large_to_forward);
    if (upstream_chosen.pool.total_timeout_ns > 0) {
        session.loop().timerArm(upstream_chosen.queues.total, &session.total_timer, Session, session, totalTimerCallback);
    }
    session.connectUpstream();
}

/// Follows the current generation's routes: the pool's `Upstream` for a pool route, or null
/// when sluice answers itself (a fixed response, a redirect, or 404 when no route matches),
/// which has then begun.
fn route(session: *Session) ?*Upstream {
    const proxy = session.proxy;
    const generation = proxy.generation;
    const routes = generation.config.routes();
    if (routes.len == 0) {
        session.routeSettings(null, generation.tunnel_slots[0]);
        return &generation.pools[0].upstreams[proxy.worker_index];
    }
    const listener = std.mem.indexOfScalar(u8, generation.listener_slots, session.listener_slot) orelse {
        // The connection's listener is gone from the configuration: its routes are those
        // without a listener condition.
        const orphan = Router.Request.fromHead(&session.request_parser.head, 31, proxy.path_scratch);
        return session.routeMatched(Router.match(routes, &orphan));
    };
    const request = Router.Request.fromHead(&session.request_parser.head, @intCast(listener), proxy.path_scratch);
    return session.routeMatched(Router.match(routes, &request));
}

fn routeMatched(session: *Session, index: ?u32) ?*Upstream {
    const proxy = session.proxy;
    const generation = proxy.generation;
    const matched = index orelse {
        proxy.stats.requests_unrouted.add(1);
        session.respondLocal(null);
        return null;
    };
    generation.route_requests[proxy.worker_index][matched].add(1);
    const chosen = &generation.config.routes()[matched];
    session.routeSettings(chosen, generation.tunnel_slots[matched]);
    switch (chosen.action) {
        .pool => return &generation.pools[chosen.pool].upstreams[proxy.worker_index],
        .respond, .redirect => {
            session.respondLocal(chosen);
            return null;
        },
    }
}

/// What the route taken (or, with none, the configuration) sets for this exchange.
fn routeSettings(session: *Session, chosen: ?*const Config.Route, tunnel_slot: u8) void {
    const proxy = session.proxy;
    const exchange = &session.exchange;
    exchange.route = chosen;
    exchange.tunnel_queue = &proxy.pool_queues[tunnel_slot];
    exchange.body_bytes_max = proxy.generation.config.requestBodyBytesMax(chosen);
}

/// A declared length over the limit is refused before anything is sent; a chunked body is
/// counted as it streams (`pumpRequestBody`).
fn bodyOverLimit(session: *const Session) bool {
    const max = session.exchange.body_bytes_max;
    if (max == 0) return false;
    return switch (session.request_parser.head.body) {
        .content_length => |length| length > max,
        .none, .chunked, .close_delimited => false,
    };
}

/// The exchange has ended: its generation may be let go of.
fn releaseHold(session: *Session) void {
    const index = session.hold orelse return;
    session.hold = null;
    session.proxy.releaseHold(index);
}

// ---------------------------------------------------------------------------------------------
// Responses sluice makes itself: fixed responses, redirects, and 404 for no route

/// Sends a route's own response (or, with no route, 404). The connection stays open for the
/// next request, unless the request has a body: sluice does not read it, so the connection is
/// closed once the response is out (after a linger, like an error response).
fn respondLocal(session: *Session, chosen: ?*const Config.Route) void {
    const proxy = session.proxy;
    const exchange = &session.exchange;
    proxy.stats.local_responses.add(1);
    const ubuf = proxy.buffers.acquire() orelse return session.fail(.overloaded);
    session.ubuf = ubuf;
    exchange.close_client = !exchange.client_keep_alive or proxy.draining or !exchange.request_done;
    const head = &session.request_parser.head;
    const response = local.compose(ubuf, chosen, .{
        .target = rewrite.originForm(head),
        .head_only = exchange.method == .head,
        .version = exchange.version,
        .close = exchange.close_client,
    }) catch return session.fail(.local_response_too_large);
    exchange.status = response.status;
    exchange.response_started = true;
    exchange.progress = 0;
    exchange.response_window_len = @intCast(response.len);
    session.armTimer(.local); // The client must read it at a reasonable pace.
    session.sendLocal();
}

fn sendLocal(session: *Session) void {
    const exchange = &session.exchange;
    const window = session.ubuf.?[exchange.progress..exchange.response_window_len];
    session.sendClient(window, sendLocalCallback);
}

fn sendLocalCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(false)) return;
    const exchange = &session.exchange;
    const n = result catch return session.close(); // The client went away.
    exchange.progress += @intCast(n);
    exchange.bytes_sent += n;
    if (exchange.progress < exchange.response_window_len) return session.sendLocal();
    session.recordDuration();
    session.loop().timerCancel(&session.timer);
    session.proxy.buffers.release(session.ubuf.?);
    session.ubuf = null;
    session.requests_served += 1;
    if (!exchange.request_done) {
        // An unread body follows: discard it until the client closes, as `fail` does.
        session.state = .failing;
        session.armTimer(.linger);
        return session.lingerAfterResponse();
    }
    if (exchange.close_client) return session.closeAfterResponse();
    session.readRequest();
}

/// Sets the request body framing from the parsed head (again, when replaying).
fn initRequestFraming(session: *Session) void {
    const exchange = &session.exchange;
    exchange.request_body = switch (session.request_parser.head.body) {
        .none, .close_delimited => .none,
        .content_length => |length| if (length == 0) .none else .{ .length = length },
        .chunked => .{ .chunked = .init(.{}) },
    };
    exchange.request_done = exchange.request_body == .none;
}

fn findAffinity(session: *Session) void {
    const pool = session.upstream().pool;
    const head = &session.request_parser.head;
    switch (pool.strategy) {
        .hash => {
            const client_ip = session.client_ip_buffer[0..session.client_ip_len];
            session.exchange.key = affinity.requestKey(head, pool, client_ip);
        },
        .sticky => {
            const value = affinity.cookieValue(head.headers, pool.sticky_cookie) orelse return;
            session.exchange.preferred = session.upstream().shared.findIdText(value, pool.backends_count);
        },
        .round_robin, .weighted, .least_conn, .random => {},
    }
}

fn composeUpstreamHead(session: *Session) bool {
    const forwarding: rewrite.Forwarding = .{
        .client_ip = session.clientIp(),
        .trusted = session.client_trusted,
        .allow_underscores = session.proxy.generation.config.header_underscores == .allow,
    };
    const head = &session.request_parser.head;
    const composed = rewrite.composeRequest(session.ubuf.?, head, forwarding) catch return false;
    session.exchange.upstream_head_len = @intCast(composed.len);
    if (composed.underscore_fields_dropped > 0) {
        session.proxy.noteUnderscoreFields(composed.underscore_fields_dropped, session.clientIp());
    }
    return true;
}

/// Picks a backend and reaches it: a pooled idle connection if one exists, else a new one.
/// A retry has been reserved (`reserveRetry`) before it comes here again.
fn connectUpstream(session: *Session) void {
    assert(session.conn == null);
    assert(!session.exchange.inflight_counted);
    const exchange = &session.exchange;
    const index = session.pickBackend() orelse return session.fail(exchange.last_failure);
    if (exchange.tries == 0) exchange.upstream_started_ns = session.loop().now();
    exchange.tries += 1;
    exchange.tried |= mask.bit(index);
    exchange.backend_index = index;
    session.upstream().stats.backend_requests[index].add(1);
    // A new try: its outcome has not been reported yet (a failed connect reported its own).
    exchange.reported = false;
    exchange.server_error = false;
    if (!session.upstream().shared.tryBeginRequest(index)) {
        // Another worker took the last pending slot since the pick looked.
        if (exchange.tries == 1) exchange.last_failure = .backends_at_capacity;
        return session.connectUpstream();
    }
    exchange.inflight_counted = true;
    session.upstream().inflightAdd(index, 1);
    if (session.upstream().conns.takeIdle(index)) |conn| {
        session.conn = conn;
        return session.sendUpstreamHead();
    }
    session.connectFresh();
}

/// The backend for the next try: among those up, not ejected, not drained, under their
/// connection cap and not tried yet; a backend whose half-open trial this worker just
/// claimed goes first. Null (with `last_failure` saying why, on a first try) when none is.
fn pickBackend(session: *Session) ?u16 {
    const exchange = &session.exchange;
    const count = session.upstream().pool.backends_count;
    const available = session.upstream().shared.health.candidates(session.loop().now());
    const untried = available.mask & ~exchange.tried;
    var candidates = untried;
    var full = session.upstream().shared.atCapacity();
    while (full != 0) : (full &= full - 1) {
        const index: u16 = @ctz(full);
        // At its cap, but an idle connection to it here needs no new one.
        if (!session.upstream().conns.hasIdle(index)) candidates &= ~mask.bit(index);
    }
    candidates &= ~session.upstream().shared.atPendingCap();
    if (candidates == 0) {
        if (exchange.tries == 0) {
            exchange.last_failure = if (untried == 0) .no_backend_available else .backends_at_capacity;
        }
        return null;
    }
    if (available.trial) |trial| {
        if (candidates & mask.bit(trial) != 0) return trial;
    }
    return session.upstream().balancer.pick(.{
        .candidates = candidates,
        .key = exchange.key,
        .preferred = exchange.preferred,
        .inflight = session.upstream().inflight[0..count],
    }) orelse blk: {
        // Only drained (weight 0) backends are left.
        if (exchange.tries == 0) exchange.last_failure = .no_backend_available;
        break :blk null;
    };
}

/// Whether another try is allowed: tries left, another backend to try, and the pool's retry
/// budget has a retry to spare (taken here).
fn reserveRetry(session: *Session) bool {
    const exchange = &session.exchange;
    if (exchange.tries >= session.upstream().pool.retry.tries_max) return false;
    // Without claiming a trial (the next pick may): available or ejected, not tried.
    if (session.upstream().shared.health.mayTakeRequests() & ~exchange.tried == 0) return false;
    if (!session.upstream().retry_budget.withdraw(session.loop().now())) {
        session.upstream().stats.retries_refused_by_budget.add(1);
        return false;
    }
    session.upstream().stats.retries.add(1);
    return true;
}

/// The exchange is done with its backend (finished, failed over, or the session closes).
fn releaseBackend(session: *Session) void {
    const exchange = &session.exchange;
    if (!exchange.inflight_counted) return;
    exchange.inflight_counted = false;
    session.upstream().inflightAdd(exchange.backend_index, -1);
    session.upstream().shared.endRequest(exchange.backend_index);
}

/// Tells the pool's health how this try went, once per try: a failure when it happens, a
/// success (or a 5xx) when the response is complete, so a backend that breaks off its
/// responses half-way counts as failing.
fn report(session: *Session, outcome: Health.Outcome) void {
    const exchange = &session.exchange;
    if (exchange.reported) return;
    exchange.reported = true;
    const health = &session.upstream().shared.health;
    health.report(exchange.backend_index, outcome, session.loop().now());
}

fn connectFresh(session: *Session) void {
    const index = session.exchange.backend_index;
    const address = &session.upstream().pool.backends()[index];
    session.conn = session.upstream().conns.open(index, &address.address) catch |err| switch (err) {
        error.NoCapacity, error.SocketFailed => return session.fail(.overloaded),
        error.AtBackendCap => {
            // Another worker took the last connection this backend may have.
            session.exchange.last_failure = .backends_at_capacity;
            session.releaseBackend();
            return session.connectUpstream();
        },
    };
    session.exchange.connect_timed_out = false;
    session.armTimer(.connect);
    session.submit();
    const socket = &session.conn.?.socket;
    const completion = &session.upstream_send; // A connect is the socket's first write.
    session.loop().connect(completion, socket, &address.address, Session, session, connectCallback);
}

fn connectCallback(session: *Session, result: sys.ConnectError!void) void {
    if (session.opDone(false)) return;
    result catch |err| {
        // Nothing reached the backend, so trying another one is always safe.
        session.exchange.last_failure = switch (err) {
            error.Canceled => if (session.exchange.connect_timed_out)
                .upstream_connect_timeout
            else
                .upstream_refused,
            error.TimedOut => .upstream_connect_timeout,
            else => .upstream_refused,
        };
        session.upstream().stats.upstream_connect_failures.add(1);
        session.report(.connect);
        session.upstream().conns.discard(session.conn.?);
        session.conn = null;
        session.releaseBackend();
        const retry_on = session.upstream().pool.retry.on;
        if (!retry_on.connect or !session.reserveRetry()) return session.fail(session.exchange.last_failure);
        return session.connectUpstream();
    };
    session.sendUpstreamHead();
}

fn sendUpstreamHead(session: *Session) void {
    session.armTimer(.exchange);
    session.exchange.progress = 0;
    session.sendUpstreamHeadRest();
}

fn sendUpstreamHeadRest(session: *Session) void {
    const head = session.ubuf.?[session.exchange.progress..session.exchange.upstream_head_len];
    session.sendUpstream(head, sendUpstreamHeadCallback);
}

fn sendUpstreamHeadCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch return session.upstreamFailed(.reset, .upstream_reset);
    session.exchange.progress += @intCast(n);
    const exchange = &session.exchange;
    if (exchange.progress < exchange.upstream_head_len) return session.sendUpstreamHeadRest();
    // The head is out: the response pump and the request pump run from here on.
    session.u_len = 0;
    session.response_parser.reset();
    session.rearmProgress();
    session.recvUpstreamHead();
    if (!session.exchange.request_done) session.pumpRequestBody();
}

/// The backend failed before any byte of its response reached the client: it reset or
/// closed the connection, sent a malformed head, or timed out. On a reused connection a reset
/// is usually the backend closing an idle connection as we sent on it (the stale keep-alive
/// race): that is not the backend's fault and is retried once on a fresh connection to the same
/// backend. Otherwise the failure counts against the backend, and the request goes to another
/// one when the pool retries this kind and replaying it is safe (`replayable`).
fn upstreamFailed(session: *Session, outcome: Health.Outcome, failure: Failure) void {
    const exchange = &session.exchange;
    const conn = session.conn.?;
    assert(!exchange.response_started);
    exchange.last_failure = failure;
    // A response byte means the backend took the request: not a stale connection, and not
    // replayed (a malformed or cut-off response is the backend's answer, not a lost request).
    const response_arrived = session.u_len > 0;
    const stale = outcome == .reset and conn.reused and !exchange.retried_stale and !response_arrived;
    if (!stale) session.report(outcome);
    if (!session.replayable() or response_arrived) return session.failMidExchange(failure);
    if (stale) {
        exchange.retried_stale = true;
        session.upstream().stats.upstream_stale_retries.add(1);
        session.dropUpstream();
        session.prepareReplay();
        return session.connectFresh();
    }
    if (!outcome.isIn(session.upstream().pool.retry.on)) return session.failMidExchange(failure);
    if (!session.reserveRetry()) return session.failMidExchange(failure);
    session.retryElsewhere();
}

/// Sending the request again is safe: its method is idempotent (RFC 9110 §9.2.2), nothing of a
/// response was relayed, every body byte sent is still in `cbuf` (bodies larger than the buffer
/// are streamed through it and cannot be replayed), and no operation is in flight.
fn replayable(session: *const Session) bool {
    const exchange = &session.exchange;
    return exchange.method.isIdempotent() and !exchange.response_started and
        !exchange.interim_relayed and !exchange.request_body_overwritten and
        session.pending_ops == 0;
}

/// Sends the request to another backend, the retry already reserved.
fn retryElsewhere(session: *Session) void {
    session.dropUpstream();
    session.releaseBackend();
    session.prepareReplay();
    session.connectUpstream();
}

/// Closes the connection of a failed try (it is never reused).
fn dropUpstream(session: *Session) void {
    session.upstream().conns.discard(session.conn.?);
    session.conn = null;
    session.loop().timerCancel(&session.timer);
}

/// Puts the request back as it was before its first try: head composed again, body from its
/// first byte, response state cleared. What the tries have learnt is kept.
fn prepareReplay(session: *Session) void {
    const exchange = &session.exchange;
    assert(session.conn == null);
    assert(session.pending_ops == 0);
    // Re-parse the head (still in cbuf) and compose it again: the parser's field array is
    // shared with the response parser, which may have been used since.
    session.request_parser.reset();
    switch (session.request_parser.feed(session.cbuf.?[0..exchange.head_len])) {
        .complete => |len| assert(len == exchange.head_len),
        .incomplete, .invalid => unreachable, // It parsed before; the parser is deterministic.
    }
    if (!session.composeUpstreamHead()) unreachable; // It fitted before.
    const kept = exchange.*;
    exchange.* = .{
        .method = kept.method,
        .version = kept.version,
        .client_keep_alive = kept.client_keep_alive,
        .upgrade_requested = kept.upgrade_requested,
        .head_len = kept.head_len,
        .started_ns = kept.started_ns,
        .log_method = kept.log_method,
        .log_target = kept.log_target,
        .log_referer = kept.log_referer,
        .log_user_agent = kept.log_user_agent,
        .upstream_head_len = kept.upstream_head_len,
        .key = kept.key,
        .preferred = kept.preferred,
        .tried = kept.tried,
        .tries = kept.tries,
        .backend_index = kept.backend_index,
        .inflight_counted = kept.inflight_counted,
        .last_failure = kept.last_failure,
        .retried_stale = kept.retried_stale,
        .upstream = kept.upstream,
        .route = kept.route,
        .tunnel_queue = kept.tunnel_queue,
        .body_bytes_max = kept.body_bytes_max,
        .request_bytes = kept.request_bytes,
        .upstream_started_ns = kept.upstream_started_ns,
    };
    session.initRequestFraming();
    session.c_pos = exchange.head_len;
    session.u_len = 0;
}

// ---------------------------------------------------------------------------------------------
// Request pump: body bytes client -> backend through cbuf

fn pumpRequestBody(session: *Session) void {
    const exchange = &session.exchange;
    assert(!exchange.request_done);
    const cbuf = session.cbuf.?;
    if (session.c_pos == session.c_len) {
        // Everything buffered has been forwarded: receive more behind it while there is room,
        // so a body that fits stays whole for a replay. The head itself is never written over:
        // the access log, routing and a replay read it until the exchange ends.
        const body_start = exchange.head_len;
        assert(session.c_len >= body_start);
        if (session.c_len == cbuf.len) {
            exchange.request_body_overwritten = true;
            session.c_pos = body_start;
            session.c_len = body_start;
        }
        return session.recvClient(cbuf[session.c_len..], recvRequestBodyCallback);
    }
    const available = cbuf[session.c_pos..session.c_len];
    var take: usize = available.len;
    var skip: usize = 0;
    var last = false;
    switch (exchange.request_body) {
        .length => |*remaining| {
            take = @min(available.len, remaining.*);
            remaining.* -= take;
            last = remaining.* == 0;
        },
        .chunked => |*decoder| {
            const filtered = decoder.feedDroppingTrailers(available);
            switch (filtered.result) {
                .need_more => {},
                .done => |n| {
                    take = n;
                    last = true;
                },
                .invalid => |reject| return session.failMidExchange(.{ .bad_request_body = reject }),
            }
            skip = filtered.dropped; // Trailer lines, moved out of the window's front.
            // The body bytes in cbuf were changed in place: they cannot be sent again.
            if (skip > 0) exchange.request_body_overwritten = true;
            const max = exchange.body_bytes_max;
            if (max > 0 and decoder.data_bytes > max) return session.failMidExchange(.request_body_too_large);
        },
        .none, .close_delimited, .dechunked => unreachable, // Not request framings.
    }
    exchange.request_window_end = session.c_pos + @as(u32, @intCast(take));
    exchange.request_window_last = last;
    session.c_pos += @intCast(skip);
    if (session.c_pos == exchange.request_window_end) {
        assert(!last); // The final CRLF is always forwarded.
        return session.pumpRequestBody();
    }
    session.sendRequestWindow();
}

fn sendRequestWindow(session: *Session) void {
    const window = session.cbuf.?[session.c_pos..session.exchange.request_window_end];
    assert(window.len > 0);
    session.sendUpstream(window, sendRequestBodyCallback);
}

fn sendRequestBodyCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch {
        session.report(.reset);
        return session.failMidExchange(.upstream_reset);
    };
    session.c_pos += @intCast(n);
    session.rearmProgress();
    if (session.c_pos < session.exchange.request_window_end) return session.sendRequestWindow();
    if (!session.exchange.request_window_last) return session.pumpRequestBody();
    session.exchange.request_done = true;
    session.rearmProgress(); // From now on the backend sets the pace.
    session.maybeFinishExchange();
}

fn recvRequestBodyCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch return session.close();
    if (n == 0) return session.close(); // The client gave up mid-body; the backend's copy is cut.
    session.c_len += @intCast(n);
    session.exchange.request_bytes += n;
    session.rearmProgress();
    session.pumpRequestBody();
}

// ---------------------------------------------------------------------------------------------
// Response pump: backend -> client through ubuf

fn recvUpstreamHead(session: *Session) void {
    const ubuf = session.ubuf.?;
    const offset = headroom + session.u_len;
    assert(offset < ubuf.len);
    session.recvUpstream(ubuf[offset..], recvUpstreamHeadCallback);
}

fn recvUpstreamHeadCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(false)) return;
    if (session.exchange.retry_after_cancel) {
        const arrived = if (result) |n| n > 0 else |_| false;
        if (!arrived) return session.retryAfterCancel();
        // The receive finished before its cancel: a byte of the response arrived, so the
        // request is not sent again. It came after the deadline: a timeout all the same.
        session.exchange.retry_after_cancel = false;
        return session.failMidExchange(.upstream_response_timeout);
    }
    const n = result catch 0;
    if (n == 0) {
        // Reset or closed before a complete head.
        const failure: Failure = if (session.u_len == 0) .upstream_reset else .upstream_bad_response;
        return session.upstreamFailed(.reset, failure);
    }
    session.u_len += @intCast(n);
    session.rearmProgress();
    session.parseResponse();
}

fn parseResponse(session: *Session) void {
    const ubuf = session.ubuf.?;
    const bytes = ubuf[headroom..][0..session.u_len];
    switch (session.response_parser.feed(bytes, session.exchange.method)) {
        .incomplete => {
            // The parser's limit is below the buffer, so this is that limit, reached early
            // because the head did not start at the front (after a 1xx).
            const full = headroom + session.u_len == ubuf.len;
            if (full) return session.responseRefused(.head_too_large);
            session.recvUpstreamHead();
        },
        .invalid => |reject| session.responseRefused(reject),
        .complete => |head_len| {
            const head = &session.response_parser.head;
            if (head.status < 200 and head.status != 101) return session.relayInterim(head_len);
            session.exchange.server_error = head.status >= 500;
            if (head.status >= 500 and session.retryServerError()) return;
            if (head.status == 101) return session.startTunnel(head_len);
            session.relayResponseHead(head_len);
        },
    }
}

/// The backend's response head was refused. Over sluice's response limits it is a 502 that
/// does not count against the backend (it answered; the limit is ours, and the log line names
/// it); malformed, it is a 502 that does.
fn responseRefused(session: *Session, reject: http.Reject) void {
    session.exchange.response_reject = reject;
    switch (reject) {
        .head_too_large, .too_many_fields => {
            session.report(.success);
            session.failMidExchange(.upstream_head_too_large);
        },
        else => session.upstreamFailed(.reset, .upstream_bad_response),
    }
}

/// The head parsed but its rewrite would not fit the buffer (many fields that each grow by a
/// byte, plus the fields sluice adds): refused as over the limit, without writing anything.
fn responseHeadTooLarge(session: *Session) void {
    session.exchange.response_reject = null;
    session.exchange.head_rewrite_failed = true;
    session.report(.success);
    session.failMidExchange(.upstream_head_too_large);
}

/// A 5xx head arrived and nothing of it was relayed: when the pool retries 5xx and the request
/// can be replayed, it goes to another backend and this response is dropped. Otherwise the
/// client gets this response as it is.
fn retryServerError(session: *Session) bool {
    if (!session.upstream().pool.retry.on.status_5xx) return false;
    if (!session.replayable() or !session.reserveRetry()) return false;
    session.report(.status_5xx);
    session.exchange.last_failure = .upstream_bad_response;
    session.retryElsewhere();
    return true;
}

/// The response timed out before its head arrived. When the pool retries timeouts, the
/// request is replayable and only the head's receive is in flight, that receive is cancelled
/// and its callback sends the request to another backend (`retryAfterCancel`).
fn responseTimedOut(session: *Session) void {
    const exchange = &session.exchange;
    exchange.last_failure = .upstream_response_timeout;
    session.report(.timeout);
    const only_receiving = session.pending_ops == 1 and session.upstream_recv.isPending();
    const retry = session.upstream().pool.retry.on.timeout and exchange.request_done and
        exchange.method.isIdempotent() and !exchange.interim_relayed and
        !exchange.request_body_overwritten and only_receiving and session.u_len == 0;
    if (!retry or !session.reserveRetry()) return session.failMidExchange(.upstream_response_timeout);
    exchange.retry_after_cancel = true;
    session.loop().cancel(&session.upstream_recv);
}

fn retryAfterCancel(session: *Session) void {
    assert(session.pending_ops == 0);
    session.exchange.retry_after_cancel = false;
    session.retryElsewhere();
}

/// A 1xx other than 101 (100 Continue, 103 Early Hints): relayed, then the final response
/// follows on the same connection. HTTP/1.0 clients never see one (RFC 9110 §15.2).
fn relayInterim(session: *Session, head_len: u32) void {
    const exchange = &session.exchange;
    if (exchange.version == .http10) {
        exchange.interim_rest_start = headroom + head_len;
        return session.nextResponseHead();
    }
    const head = &session.response_parser.head;
    const len = rewrite.rewriteResponse(session.ubuf.?, headroom, head_len, session.u_len, head, .{
        .connection = .keep_alive_default,
    }) catch return session.responseHeadTooLarge();
    // What followed the interim head (the final response, perhaps) now follows the new head.
    exchange.interim_rest_start = @intCast(len);
    session.u_len -= head_len;
    exchange.response_interim = true;
    exchange.interim_relayed = true;
    exchange.progress = 0;
    exchange.response_window_len = @intCast(len);
    session.sendResponseWindow();
}

/// The bytes received after an interim response go back to where a response head is parsed.
/// After a relayed 1xx, `u_len` already counts only them.
fn nextResponseHead(session: *Session) void {
    const ubuf = session.ubuf.?;
    const exchange = &session.exchange;
    const rest_start = exchange.interim_rest_start;
    const rest_len = if (exchange.response_interim)
        session.u_len
    else
        headroom + session.u_len - rest_start;
    @memmove(ubuf[headroom..][0..rest_len], ubuf[rest_start..][0..rest_len]);
    session.u_len = rest_len;
    session.exchange.response_interim = false;
    session.response_parser.reset();
    if (session.u_len > 0) return session.parseResponse();
    session.recvUpstreamHead();
}

fn relayResponseHead(session: *Session, head_len: u32) void {
    const exchange = &session.exchange;
    const head = &session.response_parser.head;
    session.countResponse(head.status);
    exchange.status = head.status;
    exchange.response_body = switch (head.body) {
        .none => .none,
        .content_length => |length| if (length == 0) .none else .{ .length = length },
        // A chunked answer to an HTTP/1.0 request breaks RFC 9112 §6.1; the client could not
        // read it, so it gets the bare data and a close.
        .chunked => if (exchange.version == .http10)
            .{ .dechunked = .init(.{}) }
        else
            .{ .chunked = .init(.{}) },
        .close_delimited => .close_delimited,
    };
    exchange.upstream_reusable = head.keep_alive and exchange.version == .http11 and
        exchange.response_body != .close_delimited;
    exchange.close_client = !exchange.client_keep_alive or session.proxy.draining or
        exchange.response_body == .close_delimited or exchange.response_body == .dechunked or
        !exchange.request_done;
    const connection: rewrite.ClientConnection = if (exchange.close_client)
        .close
    else if (exchange.version == .http10)
        .keep_alive_explicit
    else
        .keep_alive_default;
    const ubuf = session.ubuf.?;
    var cookie_buffer: [rewrite.extra_field_bytes_max]u8 = undefined;
    const new_len = rewrite.rewriteResponse(ubuf, headroom, head_len, session.u_len, head, .{
        .connection = connection,
        .keep_transfer_encoding = exchange.version == .http11,
        .extra_field = session.stickyCookie(&cookie_buffer),
    }) catch return session.responseHeadTooLarge();
    const body = ubuf[new_len..][0 .. session.u_len - head_len];
    const take = session.frameResponseBody(body) orelse return;
    exchange.response_started = true;
    exchange.progress = 0;
    exchange.response_window_len = @intCast(new_len + take);
    session.sendResponseWindow();
}

/// The Set-Cookie field that pins a `sticky` client to the backend that answered, when its
/// cookie named no backend or one that could not take the request; else empty.
fn stickyCookie(session: *const Session, buffer: *[rewrite.extra_field_bytes_max]u8) []const u8 {
    const pool = session.upstream().pool;
    if (pool.strategy != .sticky) return "";
    const index = session.exchange.backend_index;
    if (session.exchange.preferred == index) return "";
    const id = session.upstream().shared.idText(index);
    // Validation bounds the cookie name so that this always fits; if it did not, the
    // response goes without the cookie rather than with a cut one.
    return std.fmt.bufPrint(buffer, "Set-Cookie: {s}={s}; Path=/; HttpOnly\r\n", .{
        pool.sticky_cookie, &id,
    }) catch "";
}

/// How many bytes, from the front of `bytes`, go to the client; sets `response_window_last`
/// when they end the body. Null when the body is malformed (the session has been failed).
/// Bytes past the end of the message mean the backend sent more than it framed: that
/// connection is not reused.
fn frameResponseBody(session: *Session, bytes: []u8) ?usize {
    const exchange = &session.exchange;
    var take: usize = bytes.len;
    var data_len: ?usize = null;
    var last = false;
    switch (exchange.response_body) {
        .none => {
            take = 0;
            last = true;
        },
        .length => |*remaining| {
            take = @min(bytes.len, remaining.*);
            remaining.* -= take;
            last = remaining.* == 0;
        },
        .chunked => |*decoder| {
            const filtered = decoder.feedDroppingTrailers(bytes);
            switch (filtered.result) {
                .need_more => {},
                .done => |n| {
                    take = n;
                    last = true;
                },
                .invalid => {
                    session.report(.reset);
                    session.failMidExchange(.upstream_bad_response);
                    return null;
                },
            }
            if (filtered.dropped > 0) {
                // Trailer lines were taken out: the rest goes back to the front.
                const kept = take - filtered.dropped;
                @memmove(bytes[0..kept], bytes[filtered.dropped..take]);
                if (take < bytes.len) exchange.upstream_reusable = false;
                exchange.response_window_last = last;
                return kept;
            }
        },
        .dechunked => |*decoder| {
            const result = decoder.decodeInPlace(bytes);
            if (result.reject != null) {
                session.report(.reset);
                session.failMidExchange(.upstream_bad_response);
                return null;
            }
            take = result.consumed;
            data_len = result.data_len;
            last = result.done;
        },
        .close_delimited => {},
    }
    if (take < bytes.len) exchange.upstream_reusable = false;
    exchange.response_window_last = last;
    return data_len orelse take;
}

fn sendResponseWindow(session: *Session) void {
    const window = session.ubuf.?[session.exchange.progress..session.exchange.response_window_len];
    assert(window.len > 0);
    session.sendClient(window, sendResponseCallback);
}

fn sendResponseCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(false)) return;
    const exchange = &session.exchange;
    const n = result catch return session.close(); // The client went away.
    exchange.progress += @intCast(n);
    exchange.bytes_sent += n;
    session.rearmProgress();
    if (exchange.progress < exchange.response_window_len) return session.sendResponseWindow();
    if (exchange.response_interim) return session.nextResponseHead();
    if (!exchange.response_window_last) return session.recvUpstreamBody();
    exchange.response_done = true;
    // An early response (the backend answered before reading the whole body): the rest of
    // the request body has nowhere to go and the client connection cannot be reused.
    if (!exchange.request_done) return session.closeAfterResponse();
    session.maybeFinishExchange();
}

fn recvUpstreamBody(session: *Session) void {
    session.recvUpstream(session.ubuf.?, recvUpstreamBodyCallback);
}

fn recvUpstreamBodyCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(false)) return;
    const exchange = &session.exchange;
    const n = result catch return session.responseBroken(); // The client sees the close.
    if (n == 0) {
        if (exchange.response_body != .close_delimited) return session.responseBroken();
        exchange.response_done = true;
        return session.maybeFinishExchange();
    }
    session.rearmProgress();
    const take = session.frameResponseBody(session.ubuf.?[0..n]) orelse return;
    if (take == 0) {
        // Only framing bytes (de-chunking), or the end of a body that ended exactly here.
        if (!exchange.response_window_last) return session.recvUpstreamBody();
        exchange.response_done = true;
        return session.maybeFinishExchange();
    }
    exchange.progress = 0;
    exchange.response_window_len = @intCast(take);
    session.sendResponseWindow();
}

/// The backend broke off a response already under way: the client can only be told by a
/// close, and the backend's health hears of it.
fn responseBroken(session: *Session) void {
    session.exchange.end_reason = "upstream_response_incomplete";
    session.report(.reset);
    session.close();
}

fn maybeFinishExchange(session: *Session) void {
    const exchange = &session.exchange;
    if (!exchange.request_done or !exchange.response_done) return;
    assert(session.pending_ops == 0);
    session.recordDuration();
    session.loop().timerCancel(&session.timer);
    session.loop().timerCancel(&session.total_timer);
    session.report(if (exchange.server_error) .status_5xx else .success);
    session.releaseBackend();
    const conn = session.conn.?;
    session.conn = null;
    const conns = &session.upstream().conns;
    if (exchange.upstream_reusable) conns.park(conn) else conns.discard(conn);
    session.proxy.buffers.release(session.ubuf.?);
    session.ubuf = null;
    session.requests_served += 1;
    if (exchange.close_client) return session.closeAfterResponse();
    session.readRequest();
}

/// The response is out and the connection is to close. Bytes the client sent after its
/// request (pipelined requests, the rest of a body the backend did not wait for) would make
/// the close a reset that can destroy the response before the client reads it (RFC 9112
/// §9.6): then linger first, as after an error response.
fn closeAfterResponse(session: *Session) void {
    const unread = session.c_pos < session.c_len or !session.exchange.request_done;
    if (!unread) return session.close();
    session.recordDuration();
    session.loop().timerCancel(&session.total_timer);
    session.state = .failing;
    session.cancelPending(); // The request pump's: the linger reads into cbuf.
    session.armTimer(.linger);
    session.lingerAfterResponse();
}

// ---------------------------------------------------------------------------------------------
// Upgrade: after a real 101, bytes flow both ways untouched

fn startTunnel(session: *Session, head_len: u32) void {
    const exchange = &session.exchange;
    // A 101 the client did not ask for, or before its body was sent, is not a valid answer.
    if (!exchange.upgrade_requested or !exchange.request_done) {
        session.report(.reset);
        return session.failMidExchange(.upstream_bad_response);
    }
    const ubuf = session.ubuf.?;
    const head = &session.response_parser.head;
    const new_len = rewrite.rewriteResponse(ubuf, headroom, head_len, session.u_len, head, .{
        .connection = .upgrade,
    }) catch return session.responseHeadTooLarge();
    const rest_len = session.u_len - head_len;
    session.report(.success);
    session.countResponse(101);
    exchange.status = 101;
    // The histogram times the upgrade; the access log line waits for the tunnel to end, with
    // its bytes both ways (`close` writes it).
    session.observeLatency(session.loop().now() -| exchange.started_ns);
    exchange.tunnel = true;
    exchange.response_started = true;
    session.loop().timerCancel(&session.total_timer); // A tunnel lives as long as it is used.
    session.upstream().stats.upgrades.add(1);
    session.armTimer(.tunnel);
    exchange.progress = 0;
    exchange.response_window_len = @intCast(new_len + rest_len);
    session.tunnelSendToClient();
    // Bytes the client sent after its head are already in cbuf: they go first.
    if (session.c_pos < session.c_len) return session.tunnelSendToUpstream();
    session.tunnelRecvFromClient();
}

fn tunnelSendToClient(session: *Session) void {
    const window = session.ubuf.?[session.exchange.progress..session.exchange.response_window_len];
    session.sendClient(window, tunnelSendToClientCallback);
}

fn tunnelSendToClientCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch return session.close();
    session.exchange.progress += @intCast(n);
    session.exchange.bytes_sent += n;
    session.rearmProgress();
    const exchange = &session.exchange;
    if (exchange.progress < exchange.response_window_len) return session.tunnelSendToClient();
    session.recvUpstream(session.ubuf.?, tunnelRecvFromUpstreamCallback);
}

fn tunnelRecvFromUpstreamCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch return session.close();
    if (n == 0) {
        session.exchange.tunnel_upstream_done = true;
        // The peer may be gone already; the close that follows cleans up either way.
        session.loop().shutdownWrite(&session.client) catch {};
        return session.maybeEndTunnel();
    }
    session.rearmProgress();
    session.exchange.progress = 0;
    session.exchange.response_window_len = @intCast(n);
    session.tunnelSendToClient();
}

/// Into the client buffer behind the request head, which the access log line written when
/// the tunnel ends still reads.
fn tunnelRecvFromClient(session: *Session) void {
    const body_start = session.exchange.head_len;
    session.c_pos = body_start;
    session.c_len = body_start;
    session.recvClient(session.cbuf.?[body_start..], tunnelRecvFromClientCallback);
}

fn tunnelRecvFromClientCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch return session.close();
    if (n == 0) {
        session.exchange.tunnel_client_done = true;
        session.loop().shutdownWrite(&session.conn.?.socket) catch {}; // As above: close follows.
        return session.maybeEndTunnel();
    }
    session.rearmProgress();
    session.c_len += @intCast(n);
    session.exchange.request_bytes += n;
    session.tunnelSendToUpstream();
}

fn tunnelSendToUpstream(session: *Session) void {
    const window = session.cbuf.?[session.c_pos..session.c_len];
    session.sendUpstream(window, tunnelSendToUpstreamCallback);
}

fn tunnelSendToUpstreamCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(false)) return;
    const n = result catch return session.close();
    session.c_pos += @intCast(n);
    session.rearmProgress();
    if (session.c_pos < session.c_len) return session.tunnelSendToUpstream();
    session.tunnelRecvFromClient();
}

fn maybeEndTunnel(session: *Session) void {
    const exchange = &session.exchange;
    if (exchange.tunnel_client_done and exchange.tunnel_upstream_done) session.close();
}

// ---------------------------------------------------------------------------------------------
// Failure, timers and close

/// Maps a failure to its response (see failure.zig), sends it if nothing of a response has
/// reached the client yet, then lingers briefly so the client reads it before our close.
fn fail(session: *Session, failure: Failure) void {
    assert(session.state == .active);
    // An interim response (1xx) still being relayed holds the client's send: as with a
    // response under way, the client is told by a close.
    const answer = !session.exchange.response_started and !session.client_send.isPending();
    session.proxy.countFailure(session.exchange.upstream, failure, answer);
    session.exchange.end_reason = failure.name();
    if (failure.status() == 502 or failure.status() == 504) session.warnFailure(failure);
    if (answer) {
        session.exchange.status = failure.status();
        session.exchange.bytes_sent = session.errorResponse(failure).len;
        // A request refused before it became an exchange (a malformed head, a head timeout)
        // is logged too, with what is known of it.
        if (session.exchange.started_ns == 0) session.logAccess(0);
    }
    session.recordDuration();
    session.loop().timerCancel(&session.total_timer);
    if (!answer) return session.close();
    session.state = .failing;
    session.cancelPending();
    session.armTimer(.linger);
    session.exchange.last_failure = failure;
    session.exchange.progress = 0;
    session.sendClient(session.errorResponse(failure), sendErrorCallback);
}

/// The bytes of a failure's response: its head only for a HEAD request (RFC 9110 §9.3.2; a
/// body there would be read as the next response). The method is known once the request
/// line parsed, even when a later part of the head was refused.
fn errorResponse(session: *const Session, failure: Failure) []const u8 {
    if (session.requestIsHead()) return failure.responseHead();
    return failure.response();
}

/// Whether the request being answered is a HEAD: from the parse, or, when the request line
/// itself was refused (too long, say), from its first bytes.
fn requestIsHead(session: *const Session) bool {
    if (session.request_parser.head.method == .head) return true;
    const cbuf = session.cbuf orelse return false;
    var bytes = cbuf[0..session.c_len];
    while (std.mem.startsWith(u8, bytes, "\r\n")) bytes = bytes[2..]; // Skipped empty lines.
    return std.mem.startsWith(u8, bytes, "HEAD ");
}

/// The rate-limited warning for a 502 or 504, with what explains it.
fn warnFailure(session: *Session, failure: Failure) void {
    const exchange = &session.exchange;
    const detail: []const u8 = if (exchange.response_reject) |reject|
        reject.reason()
    else if (exchange.head_rewrite_failed)
        "the response head would not fit a buffer once rewritten (raise --response-header-bytes-max)"
    else switch (failure) {
        .upstream_head_too_large => "over --response-header-bytes-max or --response-headers-count-max",
        .upstream_response_timeout => if (exchange.response_started)
            "no body byte within the body timeout"
        else
            "no response head within the response timeout",
        else => failure.response()[std.mem.indexOf(u8, failure.response(), "\r\n\r\n").? + 4 ..],
    };
    session.proxy.warnFailure(failure, .{
        .pool = if (exchange.upstream) |u| u.pool.name else "-",
        .backend = session.backendName() orelse "-",
        .tries = exchange.tries,
        .detail = std.mem.trimEnd(u8, detail, "\n"),
    });
}

/// A failure after the request head went upstream: same mapping, and the connection to the
/// backend is never reused.
fn failMidExchange(session: *Session, failure: Failure) void {
    session.exchange.upstream_reusable = false;
    session.fail(failure);
}

fn sendErrorCallback(session: *Session, result: sys.SendError!usize) void {
    if (session.opDone(true)) return;
    const n = result catch return session.close();
    const text = session.errorResponse(session.exchange.last_failure);
    session.exchange.progress += @intCast(n);
    if (session.exchange.progress < text.len) {
        return session.sendClient(text[session.exchange.progress..], sendErrorCallback);
    }
    session.lingerAfterResponse();
}

/// Our last response is out: half-close, then read and discard until the client closes or
/// the linger timer fires. Closing with unread bytes queued would send a reset that can
/// destroy the response before the client reads it.
fn lingerAfterResponse(session: *Session) void {
    assert(session.state == .failing);
    session.exchange.error_sent = true;
    session.loop().shutdownWrite(&session.client) catch return session.close();
    session.lingerIfIdle();
}

fn lingerIfIdle(session: *Session) void {
    assert(session.state == .failing);
    if (!session.exchange.error_sent or session.exchange.lingering) return;
    if (session.client_recv.isPending()) return; // Its (cancelled) callback comes back here.
    session.exchange.lingering = true;
    session.lingerRecv();
}

fn lingerRecv(session: *Session) void {
    session.recvClient(session.cbuf.?, lingerRecvCallback);
}

fn lingerRecvCallback(session: *Session, result: sys.RecvError!usize) void {
    if (session.opDone(true)) return;
    const n = result catch return session.close();
    if (n == 0) return session.close();
    session.lingerRecv();
}

fn armTimer(session: *Session, phase: Phase) void {
    session.phase = phase;
    const queues = &session.proxy.queues;
    const queue = switch (phase) {
        .idle_hot, .linger => &queues.client_short,
        .idle => &queues.client_idle_rest,
        .tunnel => session.exchange.tunnel_queue.?,
        .body, .local => &queues.client_idle,
        .header => &queues.client_header,
        .connect => session.upstream().queues.connect,
        .exchange => session.upstream().queues.response,
        .response_body => session.upstream().queues.body,
    };
    session.loop().timerArm(queue, &session.timer, Session, session, timerCallback);
}

/// Progress on the exchange or tunnel pushes its deadline back ("between body bytes").
/// Until the response head arrives the backend has the response timeout; then each gap in
/// its body has the body timeout; while the request body is still arriving, the client sets
/// the pace.
fn rearmProgress(session: *Session) void {
    const exchange = &session.exchange;
    assert(session.phase == .exchange or session.phase == .response_body or
        session.phase == .body or session.phase == .tunnel);
    if (exchange.tunnel) return session.armTimer(.tunnel);
    if (!exchange.request_done) return session.armTimer(.body);
    session.armTimer(if (exchange.response_started) .response_body else .exchange);
}

fn totalTimerCallback(session: *Session) void {
    assert(session.state == .active);
    session.failMidExchange(.upstream_response_timeout);
}

fn timerCallback(session: *Session) void {
    assert(session.state == .active or session.state == .failing);
    if (session.state == .failing) return session.close(); // Linger is over.
    switch (session.phase) {
        .idle_hot => {
            if (!session.proxy.parksIdleBuffers()) return session.close(); // Idle timeout.
            // Still idle after the short hot period: park the buffer. The cancelled receive's
            // callback does it, unless data won the race (then it is simply processed).
            session.parking = true;
            session.loop().cancel(&session.client_recv);
            session.armTimer(.idle);
        },
        .idle, .tunnel, .linger, .local => session.close(),
        .header => {
            session.proxy.stats.client_timeouts.add(1);
            session.fail(.client_header_timeout);
        },
        .connect => {
            // The connect callback sees Canceled and moves on to the next backend.
            session.exchange.connect_timed_out = true;
            session.loop().cancel(&session.upstream_send);
            session.armTimer(.connect); // Bounds the wait for that callback, too.
        },
        .body => {
            session.proxy.stats.client_timeouts.add(1);
            session.failMidExchange(.client_body_timeout);
        },
        .exchange => session.responseTimedOut(),
        .response_body => {
            session.report(.timeout);
            session.failMidExchange(.upstream_response_timeout);
        },
    }
}

/// Drain: a connection waiting for its next request is closed now; others close after their
/// current response (relayResponseHead and readRequest consult `proxy.draining`).
pub fn drain(session: *Session) void {
    if (session.state != .active) return;
    if (session.phase == .idle or session.phase == .idle_hot) session.close();
}

pub fn close(session: *Session) void {
    if (session.state == .closing) return;
    assert(session.state == .active or session.state == .failing);
    session.recordDuration(); // An exchange cut short by a close still took this long.
    session.state = .closing;
    session.loop().timerCancel(&session.timer);
    session.loop().timerCancel(&session.total_timer);
    session.cancelPending();
    if (session.pending_ops == 0) session.finalize();
}

fn cancelPending(session: *Session) void {
    const completions = [_]*Completion{
        &session.client_recv,   &session.client_send,
        &session.upstream_recv, &session.upstream_send,
    };
    for (completions) |completion| {
        if (completion.isPending()) session.loop().cancel(completion);
    }
}

fn finalize(session: *Session) void {
    assert(session.state == .closing);
    assert(session.pending_ops == 0);
    const proxy = session.proxy;
    session.releaseBackend();
    if (session.conn) |conn| session.upstream().conns.discard(conn);
    session.conn = null;
    session.releaseHold();
    session.loop().close(&session.client);
    if (session.cbuf) |cbuf| proxy.buffers.release(cbuf);
    if (session.ubuf) |ubuf| proxy.buffers.release(ubuf);
    session.cbuf = null;
    session.ubuf = null;
    session.state = .free;
    proxy.releaseSession(session);
}

/// The exchange is over for its client (response sent, error answered, or connection closed;
/// for a tunnel, the tunnel closed): its duration goes into the worker's histogram and its
/// line into the access log, once.
fn recordDuration(session: *Session) void {
    const started_ns = session.exchange.started_ns;
    if (started_ns == 0) return; // No exchange, or recorded already.
    session.exchange.started_ns = 0;
    const duration_ns = session.loop().now() -| started_ns;
    if (!session.exchange.latency_observed) session.observeLatency(duration_ns);
    session.logAccess(duration_ns);
}

/// The latency histogram times the exchange up to its response; for an upgrade that is the
/// 101, not the life of the tunnel (which the access log line, written at its end, shows).
fn observeLatency(session: *Session, duration_ns: u64) void {
    assert(!session.exchange.latency_observed);
    session.exchange.latency_observed = true;
    const latency = if (session.exchange.upstream) |chosen| &chosen.stats.latency else &session.proxy.stats.latency;
    latency.observe(duration_ns);
}

/// The backend of the current or last try, by address; null before any try.
fn backendName(session: *const Session) ?[]const u8 {
    const exchange = &session.exchange;
    if (exchange.tries == 0) return null;
    return session.upstream().shared.health.backends[exchange.backend_index].name();
}

fn clientIp(session: *const Session) []const u8 {
    return session.client_ip_buffer[0..session.client_ip_len];
}

/// One access-log line for this exchange (when the log is on). Formatting happens here, on
/// the worker, into the worker's buffer; writing the buffer out is the control thread's job.
fn logAccess(session: *Session, duration_ns: u64) void {
    const log = &(session.proxy.access_log orelse return);
    const exchange = &session.exchange;
    const upstream_ns: ?u64 = if (exchange.upstream_started_ns == 0)
        null
    else
        session.loop().now() -| exchange.upstream_started_ns;
    log.append(&.{
        .client_ip = session.clientIp(),
        .method = if (exchange.log_method.len > 0) exchange.log_method else "-",
        .target = if (exchange.log_target.len > 0) exchange.log_target else "-",
        .version = if (exchange.version == .http10) "HTTP/1.0" else "HTTP/1.1",
        .status = exchange.status,
        .bytes_sent = exchange.bytes_sent,
        .duration_ns = duration_ns,
        .backend = session.backendName() orelse "",
        .upstream_ns = upstream_ns,
        .tries = exchange.tries,
        .reason = exchange.end_reason,
        .request_bytes = exchange.request_bytes,
        .referer = exchange.log_referer,
        .user_agent = exchange.log_user_agent,
    }, sys.clockRealtimeSeconds());
}

/// A final response from the backend is on its way to the client.
fn countResponse(session: *Session, status: u16) void {
    assert(status >= 100 and status <= 599); // The response parser refuses anything else.
    const class = status / 100 - 1;
    session.upstream().stats.backend_responses[session.exchange.backend_index][class].add(1);
}

// Every receive and send goes through these four, so each is counted in `pending_ops` and
// always uses the completion that belongs to its direction.

fn recvClient(session: *Session, buffer: []u8, comptime callback: RecvCallback) void {
    session.submit();
    session.loop().recv(&session.client_recv, &session.client, buffer, Session, session, callback);
}

fn sendClient(session: *Session, buffer: []const u8, comptime callback: SendCallback) void {
    session.submit();
    session.loop().send(&session.client_send, &session.client, buffer, Session, session, callback);
}

fn recvUpstream(session: *Session, buffer: []u8, comptime callback: RecvCallback) void {
    const socket = &session.conn.?.socket;
    session.submit();
    session.loop().recv(&session.upstream_recv, socket, buffer, Session, session, callback);
}

fn sendUpstream(session: *Session, buffer: []const u8, comptime callback: SendCallback) void {
    const socket = &session.conn.?.socket;
    session.submit();
    session.loop().send(&session.upstream_send, socket, buffer, Session, session, callback);
}

const RecvCallback = fn (*Session, sys.RecvError!usize) void;
const SendCallback = fn (*Session, sys.SendError!usize) void;

fn submit(session: *Session) void {
    session.pending_ops += 1;
    assert(session.pending_ops <= 4); // One per completion.
}

/// Every callback starts here. True means the callback must return at once: the session is
/// closing (and was finalized if this was its last operation), or it is failing and this
/// callback is not part of sending the error (`failing_ok`).
fn opDone(session: *Session, failing_ok: bool) bool {
    assert(session.pending_ops > 0);
    session.pending_ops -= 1;
    switch (session.state) {
        .active => return false,
        .failing => {
            if (failing_ok) return false;
            session.lingerIfIdle();
            return true;
        },
        .closing => {
            if (session.pending_ops == 0) session.finalize();
            return true;
        },
        .free => unreachable,
    }
}

fn loop(session: *Session) *Loop {
    return session.proxy.loop;
}

/// The pool of the exchange under way (its route's).
fn upstream(session: *const Session) *Upstream {
    return session.exchange.upstream.?;
}
