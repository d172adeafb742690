//! One pool as one worker sees it, and the one API an exchange calls to use it: a try
//! `acquire`s a lease on a member (the member chosen, counted as a request to it, and a
//! connection to it: pooled, or fresh to connect), tells its health how it went (`report`),
//! and `release`s it with what becomes of the connection (kept idle for the next request, or
//! closed); `reserveRetry` says whether another try is allowed. The exchange never touches the
//! balancer, the counts or the connection lists itself. Behind it: the balancer's cursor, the
//! retry budget, the requests in flight per member, the pool's timer queues and counters, the
//! worker's connections to the members (`connections`), and the state every worker shares
//! about the pool (`Shared`: health, caps, ids).
//!
//! A `LocalPool` belongs to a `Pool` (one per worker), allocated by the control thread with
//! the pool and touched only by its worker. A reload that leaves a pool unchanged keeps it,
//! and with it these connections, cursors and counters.
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const TimerQueue = loop_ns.TimerQueue;
const Config = @import("../config/Config.zig");
const Address = @import("../stdx/Address.zig").Address;
const Connections = @import("Connections.zig");
const Shared = @import("Shared.zig");
const Balancer = @import("../balance/Balancer.zig");
const Health = @import("../health/Health.zig");
const RetryBudget = @import("RetryBudget.zig");
const Histogram = @import("../metrics/Histogram.zig");
const Counter = @import("../stdx/Counter.zig");
const BitSet = @import("../stdx/BitSet.zig");
const tls_ns = @import("../tls/tls.zig");
const BackendTls = @import("BackendTls.zig");
const Members = @import("Members.zig");

const LocalPool = @This();

config: *const Config.Pool,
shared: *Shared,
/// The membership table this worker uses (upstream/Members.zig): the newest it has adopted.
table: *const Members.Table,
/// `table`'s version, for the control thread: a table is freed once every worker has
/// acknowledged a newer one, and a removed member's slot is reused only then.
table_adopted: std.atomic.Value(u32),
connections: Connections,
balancer: Balancer,
retry_budget: RetryBudget,
/// Requests this worker has in flight to each backend (`least_conn`); see `inflightAdd`.
/// One per slot, allocated with the pool.
inflight: []u32,
/// Set when the worker adopts a generation with this pool (`bindQueues`): queues are the
/// worker's, shared by every pool with the same timeout.
queues: Queues = undefined,
/// Set when the worker adopts a generation without this pool: its idle connections are
/// closed and it only finishes what it has in flight.
retired: bool = false,
/// TLS to the backends (the pool instance's, shared), and this worker's sessions to resume
/// with each backend, by index; empty without TLS.
tls: ?*BackendTls = null,
resumptions: []tls_ns.ClientContext.Resumption = &.{},
/// Connections open that many tries share (`openShared`): they hold this pool's state, so
/// a retired pool is not quiet until they have closed.
shared_open: u32 = 0,
stats: Stats = .{},

pub const Queues = struct {
    connect: *TimerQueue,
    /// Request sent -> response head.
    response: *TimerQueue,
    /// Gaps between response body bytes.
    body: *TimerQueue,
    /// The whole exchange (only armed when the pool sets a total timeout).
    total: *TimerQueue,
    idle: *TimerQueue,
};

/// The pool's timeouts, in `Queues` order: what the worker needs a queue for.
pub fn timeouts(pool: *const Config.Pool) [5]u64 {
    return .{
        pool.connect_timeout_ns,
        pool.response_timeout_ns,
        pool.body_timeout_ns,
        @max(1, pool.total_timeout_ns),
        pool.idle_timeout_ns,
    };
}

/// Written by the worker, read by the control thread (`Counter`).
pub const Stats = struct {
    requests: Counter = .{},
    upgrades: Counter = .{},
    upstream_errors: Counter = .{},
    upstream_connect_failures: Counter = .{},
    upstream_stale_retries: Counter = .{},
    /// Requests that met the stale race and could not be sent again: their client connection
    /// was closed unanswered (Exchange.closeUnanswered).
    upstream_stale_closes: Counter = .{},
    /// TLS to the backends: handshakes completed on fresh connections, and of them resumed.
    tls_handshakes: Counter = .{},
    tls_resumptions: Counter = .{},
    retries: Counter = .{},
    retries_refused_by_budget: Counter = .{},
    no_backend_available: Counter = .{},
    overloaded: Counter = .{},
    /// How long exchanges took, from the request head parsed to the response sent (or the
    /// error answered, or the connection closed).
    latency: Histogram = .{},
    /// Final responses relayed from each backend, by status class 1xx..5xx (a 101 counts as
    /// 1xx; sluice's own error responses are in `own_responses`). One per member
    /// (`initBackends`).
    backend_responses: [][5]Counter = &.{},
    /// Tries sent to each backend (a retry counts on the backend it went to).
    backend_requests: []Counter = &.{},

    /// Responses sluice answered itself for requests routed to this pool (502, 503, 504,
    /// 413...), by status class.
    own_responses: [5]Counter = @splat(.{}),

    /// The per-member counters, one per member of a pool of `members_count`.
    pub fn initBackends(stats: *Stats, allocator: std.mem.Allocator, members_count: u32) error{OutOfMemory}!void {
        assert(stats.backend_requests.len == 0);
        stats.backend_responses = try allocator.alloc([5]Counter, members_count);
        @memset(stats.backend_responses, @splat(.{}));
        stats.backend_requests = try allocator.alloc(Counter, members_count);
        @memset(stats.backend_requests, .{});
    }

    /// A new member took slot `index` (this worker adopted the table that says so): its
    /// counters start at 0, a new series for `/metrics` under the new member's address.
    fn resetBackend(stats: *Stats, index: u16) void {
        stats.backend_requests[index].set(0);
        for (&stats.backend_responses[index]) |*counter| counter.set(0);
    }

    /// `Counter.transfer` of every counter of `from` (the same pool's previous instance, on
    /// this worker): every pool-wide counter, and each backend's that is still in the pool
    /// (`backend_map[i]`: the index in `from` of this instance's backend i, if it had it).
    fn transfer(stats: *Stats, comptime how: Counter.Transfer, from: *const Stats, accounted: *Stats, backend_map: []const ?u16) void {
        inline for (comptime std.meta.fieldNames(Stats)) |name| {
            if (@FieldType(Stats, name) != Counter) continue;
            @field(stats, name).transfer(how, &@field(from, name), &@field(accounted, name));
        }
        stats.latency.transfer(how, &from.latency, &accounted.latency);
        for (&stats.own_responses, &from.own_responses, &accounted.own_responses) |*to, *source, *done| {
            to.transfer(how, source, done);
        }
        for (backend_map, 0..) |from_index, i| {
            const old = from_index orelse continue;
            stats.backend_requests[i].transfer(how, &from.backend_requests[old], &accounted.backend_requests[old]);
            for (&stats.backend_responses[i], &from.backend_responses[old], &accounted.backend_responses[old]) |*to, *source, *done| {
                to.transfer(how, source, done);
            }
        }
    }
};

/// What of an instance's counts is in a successor already (`transferCounts`).
pub const Accounted = struct {
    stats: Stats = .{},
    connections: Connections.Stats = .{},
};

/// A reload replaced `from` (the same pool's previous instance, on this worker) with `local`:
/// `.carry` when `local` is built, on the control thread before any worker sees it, so that
/// `/metrics` goes on from where it was; `.move`, by this worker, for what `from` counted
/// after that (exchanges that still held the old generation), once it lets go of it
/// (Proxy.releaseIdleHolds). So every request is counted once, whatever reloads happen.
pub fn transferCounts(
    local: *LocalPool,
    comptime how: Counter.Transfer,
    from: *const LocalPool,
    accounted: *Accounted,
    backend_map: []const ?u16,
) void {
    local.stats.transfer(how, &from.stats, &accounted.stats, backend_map);
    const to = &local.connections.stats;
    inline for (comptime std.meta.fieldNames(Connections.Stats)) |name| {
        @field(to, name).transfer(how, &@field(from.connections.stats, name), &@field(accounted.connections, name));
    }
}

/// `exchanges_count`: the worker's exchange slots (at most one busy connection each).
pub fn init(
    local: *LocalPool,
    allocator: std.mem.Allocator,
    loop: *Loop,
    pool: *const Config.Pool,
    shared: *Shared,
    exchanges_count: u32,
    seed: u64,
    now_ns: u64,
) !void {
    const members_count = shared.count();
    assert(members_count >= pool.backends_count);
    const table = shared.table.load(.acquire);
    // At most one busy connection per exchange, at most `keepalive_max` idle per member. A
    // shared (HTTP/2) connection is busy while it is open, idle ones too: one per member with
    // no try (a try joins the one it finds), and one more while a member's old one closes
    // (after its GOAWAY).
    const shared_idle: u32 = if (pool.protocol.multiplexed()) 2 else 0;
    const slots_count = exchanges_count + members_count * (pool.keepalive_max + shared_idle);
    local.* = .{
        .config = pool,
        .shared = shared,
        .table = table,
        .table_adopted = .init(table.version),
        .connections = undefined,
        .balancer = try .init(allocator, pool.strategy, table.weights, table.maglev, seed),
        .retry_budget = .init(pool.retry.budget_percent, pool.retry.budget_min_per_second, now_ns),
        .inflight = try allocator.alloc(u32, members_count),
    };
    @memset(local.inflight, 0);
    try local.stats.initBackends(allocator, members_count);
    // The idle queue is the worker's; bound in `bindQueues` before any connection is parked.
    local.connections = try Connections.init(allocator, loop, shared, undefined, slots_count, members_count, pool.keepalive_max);
}

/// The pool speaks TLS (`backend_tls`, built with the pool instance): this worker's row of
/// sessions.
pub fn initTls(local: *LocalPool, backend_tls: *BackendTls, worker_index: usize) void {
    assert(local.tls == null);
    local.resumptions = backend_tls.resumptionsOf(worker_index);
    local.tls = backend_tls;
}

pub fn deinit(local: *LocalPool, allocator: std.mem.Allocator) void {
    local.connections.deinit(allocator);
    local.balancer.deinit(allocator);
    allocator.free(local.inflight);
    allocator.free(local.stats.backend_responses);
    allocator.free(local.stats.backend_requests);
    local.* = undefined;
}

pub fn bindQueues(local: *LocalPool, queues: Queues) void {
    local.queues = queues;
    local.connections.idle_queue = queues.idle;
}

/// The worker adopted a generation without this pool.
pub fn retire(local: *LocalPool) void {
    local.retired = true;
    local.connections.closeIdle();
}

/// Nothing of this pool's is left on the worker's loop once its exchanges are done: no
/// request in flight and no idle connection being closed. (Busy connections belong to
/// exchanges, which hold their generation until they let go of them.)
pub fn isQuiet(local: *const LocalPool) bool {
    if (local.shared_open > 0) return false;
    for (local.inflight) |count| if (count > 0) return false;
    return local.connections.isQuiet();
}

/// Adopts the newest membership table if the control thread published one since: idle
/// connections to members that left (or whose slot a new member took) close, the balancer
/// follows the new weights and Maglev table, the counters of a reused slot start at 0, and
/// the version is acknowledged. On the worker's thread, between events (at a wake-up, and
/// before every lease). One atomic load when nothing changed.
pub fn adoptMembers(local: *LocalPool) void {
    const newest = local.shared.table.load(.acquire);
    if (newest == local.table) return;
    const old = local.table;
    assert(newest.version > old.version);
    assert(newest.slotsCount() == old.slotsCount());
    for (0..newest.slotsCount()) |i| {
        const slot: u16 = @intCast(i);
        const stays = newest.isPresent(slot) and old.isPresent(slot) and
            newest.generations[slot] == old.generations[slot];
        if (stays) continue;
        if (old.isPresent(slot)) local.connections.closeIdleOf(slot);
        if (newest.isPresent(slot) and newest.generations[slot] != old.generations[slot]) {
            local.stats.resetBackend(slot);
            if (local.resumptions.len > 0) local.resumptions[slot].forget();
        }
    }
    local.balancer.adoptMembers(newest.weights, newest.maglev);
    local.table = newest;
    local.table_adopted.store(newest.version, .release);
}

/// Whether `connection` may go back to the idle list: its member is still in the pool, and
/// it is the member the connection was made to (the slot's generation).
fn keepsMember(local: *const LocalPool, connection: *const Connections.Connection) bool {
    const slot = connection.backend_index;
    return local.table.isPresent(slot) and local.table.generations[slot] == connection.generation;
}

// ---------------------------------------------------------------------------------------------
// Backend choice and retry policy: what an exchange asks

/// What an exchange knows when it asks for a backend.
pub const Ask = struct {
    /// Backends tried so far by this exchange.
    tried: []const u16,
    /// `hash`'s key.
    key: u64 = 0,
    /// The backend a `sticky` cookie names, if any.
    preferred: ?u16 = null,
};

/// The members a request has tried, in order: kept by the exchange across its tries, written
/// by `acquire`. A list, not a set of bits: a pool may have 1,024 members and a request tries
/// a few (`retry.tries`, at most 10, plus the picks that lost a cap race before anything was
/// sent).
pub const Tried = struct {
    list: [count_max]u16 = undefined,
    count: u8 = 0,

    pub const count_max = 12;
    comptime {
        assert(count_max > 10); // settings.zig: `retry.tries` is at most 10.
    }

    pub fn slice(tried: *const Tried) []const u16 {
        return tried.list[0..tried.count];
    }
};

/// A try's hold on one member, from `acquire` to `release`: counted as a request to it (in
/// flight on this worker, and against its `max_pending` cap), with the connection it uses.
pub const Lease = struct {
    backend: u16,
    connection: *Connections.Connection,
    /// A fresh socket the caller connects (to the connection's `address`); else a pooled connection,
    /// ready for a request.
    fresh: bool,
};

pub const Acquired = union(enum) {
    lease: Lease,
    /// For a multiplexed pool (`Want.multiplexed`): a lease on this member without a
    /// connection of its own; the try runs as a stream on a shared one (proxy/Http2Backend.zig,
    /// which opens it with `openShared`). Released like any lease, with no connection.
    member: u16,
    /// Nothing to try: every member is down, ejected, drained or tried.
    none_available,
    /// Every member that could take it is at its connection or pending cap.
    at_capacity,
    /// No connection slot or socket on this worker: shed, not the member's fault.
    overloaded,
};

/// What the exchange says when it asks for a lease.
pub const Want = struct {
    key: u64 = 0,
    preferred: ?u16 = null,
    /// A pooled connection may carry the request (else a fresh one: Exchange.mayReuse).
    pooled: bool,
    /// The pool's backends take many requests on a connection (HTTP/2): no connection is
    /// taken here.
    multiplexed: bool = false,
};

/// A lease on the member for the next try, recorded in `tried`: the member `pick` chooses,
/// counted (`beginTry`), with a pooled connection when `want.pooled` and one is idle, else a
/// fresh socket. A member that another worker filled up since the pick looked (its last
/// pending slot, or its last connection under `max_connections`) is passed over for the next
/// one, within `Tried.count_max`.
pub fn acquire(local: *LocalPool, tried: *Tried, want: Want, now_ns: u64) Acquired {
    local.adoptMembers();
    var lost_race = false;
    while (tried.count < Tried.count_max) {
        const picked = local.pick(.{ .tried = tried.slice(), .key = want.key, .preferred = want.preferred }, now_ns);
        const index = switch (picked) {
            .backend => |index| index,
            .none_available => return if (lost_race) .at_capacity else .none_available,
            .at_capacity => return .at_capacity,
        };
        tried.list[tried.count] = index;
        tried.count += 1;
        if (!local.beginTry(index)) {
            lost_race = true;
            continue;
        }
        if (want.multiplexed) return .{ .member = index };
        if (want.pooled) {
            if (local.connections.takeIdle(index, local.table.generations[index])) |connection| {
                return .{ .lease = .{ .backend = index, .connection = connection, .fresh = false } };
            }
        }
        const connection = local.connections.open(index, local.backendAddress(index), local.table.generations[index]) catch |err| {
            local.endTry(index);
            switch (err) {
                error.NoCapacity, error.SocketFailed => return .overloaded,
                error.AtBackendCap => {
                    lost_race = true;
                    continue;
                },
            }
        };
        return .{ .lease = .{ .backend = index, .connection = connection, .fresh = true } };
    }
    return if (lost_race) .at_capacity else .none_available;
}

/// A fresh socket for `backend`, whose lease goes on (its connection failed in the stale
/// keep-alive race and the request is sent again to the same member).
pub fn reconnect(local: *LocalPool, backend: u16) Connections.OpenError!*Connections.Connection {
    return local.connections.open(backend, local.backendAddress(backend), local.table.generations[backend]);
}

/// A fresh socket to `backend` for a connection that many tries share (HTTP/2): counted
/// against the member's `max_connections` like any other, held busy until `closeShared`.
pub fn openShared(local: *LocalPool, backend: u16) Connections.OpenError!*Connections.Connection {
    const connection = try local.connections.open(backend, local.backendAddress(backend), local.table.generations[backend]);
    local.shared_open += 1;
    local.connections.shared_counts[backend] += 1;
    return connection;
}

/// Whether a shared connection still reaches the member in its slot (not one that left, nor
/// one made to an earlier member of a reused slot): a try may join it.
pub fn sharedCurrent(local: *const LocalPool, connection: *const Connections.Connection) bool {
    return local.keepsMember(connection);
}

pub fn closeShared(local: *LocalPool, connection: *Connections.Connection) void {
    assert(local.shared_open > 0);
    local.shared_open -= 1;
    assert(local.connections.shared_counts[connection.backend_index] > 0);
    local.connections.shared_counts[connection.backend_index] -= 1;
    local.connections.discard(connection);
}

/// Closes a lease's connection that failed (the lease goes on, to `reconnect` or `release`).
pub fn drop(local: *LocalPool, connection: *Connections.Connection) void {
    local.connections.discard(connection);
}

pub const Keep = enum {
    /// A clean exchange: the connection may carry another request.
    idle,
    close,
};

/// The try is over: its connection (if it still has one) goes back to the idle list or is
/// closed, and the member's counts let go of it.
pub fn release(local: *LocalPool, backend: u16, connection: ?*Connections.Connection, keep: Keep) void {
    if (connection) |held| {
        assert(held.backend_index == backend);
        // A member that left the pool, or whose slot another member took, keeps nothing idle.
        const kept = if (local.keepsMember(held)) keep else .close;
        switch (kept) {
            .idle => local.connections.park(held),
            .close => local.connections.discard(held),
        }
    }
    local.endTry(backend);
}

pub const Pick = union(enum) {
    backend: u16,
    /// Nothing to try: every backend is down, ejected, drained or tried.
    none_available,
    /// Every backend that could take it is at its connection or pending cap.
    at_capacity,
};

/// The backend for the next try: among those up, not ejected, not drained, under their caps
/// and not tried yet; a backend whose half-open trial this worker just claimed goes first.
fn pick(local: *LocalPool, ask: Ask, now_ns: u64) Pick {
    var candidates: Candidates = .{ .local = local, .tried = ask.tried, .caps = true };
    if (local.shared.health.claimAnyTrial(now_ns)) |trial| {
        // A trial is claimed only for a member of this worker's table (not one that left).
        if (local.table.isPresent(trial) and candidates.eligible(trial)) return .{ .backend = trial };
    }
    const index = local.balancer.pick(candidates, .{
        .key = ask.key,
        .preferred = ask.preferred,
        .inflight = local.inflight,
    }) orelse {
        // Rare: say why. Untried members left but all at a cap, or none left at all.
        candidates.caps = false;
        return if (candidates.next(0) == null) .none_available else .at_capacity;
    };
    return .{ .backend = index };
}

/// The members a pick may choose, as `Balancer.pick` asks about them: available (health),
/// not drained, not tried and (with `caps`) under their connection and pending caps, where
/// a member at its connection cap still counts when this worker has an idle or a shared
/// (HTTP/2) connection to it.
/// Nothing is copied: `next` reads the health and drain sets a word at a time.
pub const Candidates = struct {
    local: *const LocalPool,
    tried: []const u16,
    caps: bool,

    pub inline fn contains(candidates: Candidates, index: u16) bool {
        const shared = candidates.local.shared;
        return BitSet.isSetAtomic(shared.health.available, index) and
            BitSet.isSet(candidates.local.table.active, index) and candidates.eligible(index);
    }

    /// The first candidate at or after `from`, wrapping; null when there is none. Visits each
    /// word of the sets once (plus the first word's low bits at the end), and each set bit
    /// once: the tried and capped members it passes over are few.
    pub inline fn next(candidates: Candidates, from: u16) ?u16 {
        // The common case, round robin's cursor on an available member: no call, no walk.
        if (candidates.contains(from)) return from;
        return candidates.nextWalk(from);
    }

    fn nextWalk(candidates: Candidates, from: u16) ?u16 {
        const shared = candidates.local.shared;
        const count = shared.count();
        assert(from < count);
        const words_count = BitSet.wordsFor(count);
        var word_index: u32 = from / BitSet.word_bits;
        var bits = candidates.word(word_index) & ~(BitSet.bit(from) - 1);
        var visited: u32 = 0;
        while (visited <= words_count) : (visited += 1) {
            while (bits != 0) : (bits &= bits - 1) {
                const index: u16 = @intCast(word_index * BitSet.word_bits + @ctz(bits));
                assert(index < count);
                if (candidates.eligible(index)) return index;
            }
            word_index += 1;
            if (word_index == words_count) word_index = 0;
            bits = candidates.word(word_index);
        }
        return null;
    }

    fn word(candidates: Candidates, index: u32) u64 {
        const shared = candidates.local.shared;
        return shared.health.available[index].load(.acquire) & candidates.local.table.active[index];
    }

    /// Not tried, and (with `caps`) under its caps.
    inline fn eligible(candidates: Candidates, index: u16) bool {
        for (candidates.tried) |tried| if (tried == index) return false;
        if (!candidates.caps) return true;
        const local = candidates.local;
        const shared = local.shared;
        if (shared.any_capped.load(.monotonic) and shared.atConnectionCap(index)) {
            // At its cap, but an idle connection to it here needs no new one, nor does a
            // shared (HTTP/2) one, whose streams the try may queue for (Http2Backend.attachTry).
            if (!local.connections.hasIdle(index) and !local.connections.hasShared(index)) return false;
        }
        if (shared.any_pending_capped.load(.monotonic) and shared.atPendingCap(index)) return false;
        return true;
    }
};

/// A try on `index` begins: counted as a request to it, in flight here (`least_conn`) and
/// against its `max_pending` cap. False (nothing counted) when another worker took its last
/// pending slot since `pick` looked.
fn beginTry(local: *LocalPool, index: u16) bool {
    assert(local.table.isPresent(index));
    if (!local.shared.tryBeginRequest(index)) return false;
    local.inflightAdd(index, 1);
    local.stats.backend_requests[index].add(1);
    return true;
}

/// The try that `beginTry` counted is over (finished, failed, or its exchange ended).
fn endTry(local: *LocalPool, index: u16) void {
    local.inflightAdd(index, -1);
    local.shared.endRequest(index);
}

/// Tells the pool's health how a try went.
pub fn report(local: *LocalPool, index: u16, outcome: Health.Outcome, now_ns: u64) void {
    local.shared.health.report(index, outcome, now_ns);
}

/// Whether another try is allowed after those in `tried`: tries left, another member to try
/// (without claiming a trial: the next pick may), and the retry budget has a retry to spare,
/// which is taken here.
pub fn reserveRetry(local: *LocalPool, tried: *const Tried, now_ns: u64) bool {
    if (tried.count >= local.config.retry.tries_max) return false;
    if (!local.shared.health.mayTakeRequestsBeyond(tried.slice())) return false; // Members only.
    if (!local.retry_budget.withdraw(now_ns)) {
        local.stats.retries_refused_by_budget.add(1);
        return false;
    }
    local.stats.retries.add(1);
    return true;
}

pub fn backendAddress(local: *const LocalPool, index: u16) *const Address {
    return &local.shared.addresses[index];
}

/// The member a sticky cookie's value names, in this worker's table.
pub fn findIdText(local: *const LocalPool, text: []const u8) ?u16 {
    return Shared.findIdText(local.table, text);
}

/// A member's sticky cookie value (its slot's id is stable while a lease holds it, even if the
/// member has left since).
pub fn idText(local: *const LocalPool, index: u16) [Shared.id_text_bytes]u8 {
    return local.shared.idText(index);
}

/// The backend's address as text (logs, the access log).
pub fn backendName(local: *const LocalPool, index: u16) []const u8 {
    return local.shared.health.backends[index].name();
}

/// The worker's own count of its requests in flight to `index` (`least_conn` reads it as a
/// plain array); the control thread reads it too, so each write is a relaxed atomic store.
fn inflightAdd(local: *LocalPool, index: u16, delta: i2) void {
    const count = &local.inflight[index];
    assert(delta == 1 or count.* > 0);
    const next = if (delta == 1) count.* + 1 else count.* - 1;
    @atomicStore(u32, count, next, .monotonic);
}
