//! One worker's connections to its backends: a fixed array of `Conn` slots, a free list, and
//! per backend an idle list of keep-alive connections ready for reuse.
//!
//! An idle connection is watched (a pending pollReadable) so a backend that closes it, or
//! sends bytes nobody asked for, gets it closed here rather than handed to a request; and it
//! has an idle timer so we close it before a typical backend keep-alive timeout does.
//! Taking an idle connection cancels the watch; the slot cannot be freed until the watch's
//! callback has run, so `Conn.watching` is tracked and a discard that races it defers the
//! close to that callback.
//!
//! Sizing: `sessions + backends * keepalive` slots, so a session never finds the pool empty
//! (at most one busy connection per session, at most `keepalive` idle per backend).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;
const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const Shared = @import("Shared.zig");
const Counter = @import("../stdx/Counter.zig");

const Pool = @This();

pub const Conn = struct {
    socket: Socket,
    backend_index: u16,
    state: State,
    /// Served at least one response: a failure before the first response byte may be the
    /// backend closing an idle connection as we reused it (the stale keep-alive race).
    reused: bool,
    watching: bool,
    watch: Completion,
    idle_timer: Timer,
    pool: *Pool,
    /// Free list or idle list link.
    next: ?*Conn,
    prev: ?*Conn,

    pub const State = enum { free, busy, idle, closing };
};

/// Written by the worker, read by the control thread (`Counter`).
pub const Stats = struct {
    reused: Counter = .{},
    opened: Counter = .{},
    closed_idle_by_backend: Counter = .{},
    closed_idle_timeout: Counter = .{},
};

loop: *Loop,
/// Counts every open connection per backend across workers (`max_connections`).
shared: *Shared,
conns: []Conn,
/// Released slots; `conns[conns_touched..]` have never been used (and their pages never
/// touched), so they are handed out in order once the free list is empty.
free_list: ?*Conn,
conns_touched: u32 = 0,
idle_heads: []?*Conn,
idle_counts: []u32,
idle_max: u32,
idle_queue: *TimerQueue,
/// Watches submitted and not yet called back: the pool is quiet (safe to stop the loop) only
/// when this is zero.
watches_pending: u32 = 0,
/// Set by `closeIdle` (drain): nothing is kept idle from then on.
closing_all: bool = false,
stats: Stats = .{},

pub fn init(
    allocator: std.mem.Allocator,
    loop: *Loop,
    shared: *Shared,
    idle_queue: *TimerQueue,
    conns_count: u32,
    backends_count: u32,
    idle_max: u32,
) !Pool {
    assert(conns_count > 0);
    assert(backends_count > 0);
    // Slots are initialized on first use (`acquireSlot`), so their pages stay untouched.
    const conns = try StaticAllocator.allocUntouched(allocator, Conn, null, conns_count);
    errdefer allocator.free(conns);
    const idle_heads = try allocator.alloc(?*Conn, backends_count);
    errdefer allocator.free(idle_heads);
    const idle_counts = try allocator.alloc(u32, backends_count);
    @memset(idle_heads, null);
    @memset(idle_counts, 0);
    return .{
        .loop = loop,
        .shared = shared,
        .conns = conns,
        .free_list = null,
        .idle_heads = idle_heads,
        .idle_counts = idle_counts,
        .idle_max = idle_max,
        .idle_queue = idle_queue,
    };
}

/// A free slot: a released one, else one never used. Null when all are busy or idle.
fn acquireSlot(pool: *Pool) ?*Conn {
    if (pool.free_list) |conn| {
        assert(conn.state == .free);
        pool.free_list = conn.next;
        return conn;
    }
    if (pool.conns_touched == pool.conns.len) return null;
    const conn = &pool.conns[pool.conns_touched];
    pool.conns_touched += 1;
    conn.* = .{
        .socket = undefined,
        .backend_index = 0,
        .state = .free,
        .reused = false,
        .watching = false,
        .watch = .{},
        .idle_timer = .{},
        .pool = pool,
        .next = null,
        .prev = null,
    };
    return conn;
}

pub fn deinit(pool: *Pool, allocator: std.mem.Allocator) void {
    allocator.free(pool.conns);
    allocator.free(pool.idle_heads);
    allocator.free(pool.idle_counts);
    pool.* = undefined;
}

/// The most recently parked idle connection to this backend, now busy; null if none.
pub fn takeIdle(pool: *Pool, backend_index: u16) ?*Conn {
    const conn = pool.idle_heads[backend_index] orelse return null;
    assert(conn.state == .idle);
    pool.idleUnlink(conn);
    pool.loop.timerCancel(&conn.idle_timer);
    if (conn.watching) pool.loop.cancel(&conn.watch);
    conn.state = .busy;
    conn.reused = true;
    pool.stats.reused.add(1);
    return conn;
}

pub const OpenError = error{ NoCapacity, AtBackendCap, SocketFailed };

/// A fresh, unconnected socket for `address`; the caller connects it with its own completion.
pub fn open(pool: *Pool, backend_index: u16, address: *const Address) OpenError!*Conn {
    if (!pool.shared.tryOpen(backend_index)) return error.AtBackendCap;
    const conn = pool.acquireSlot() orelse {
        pool.shared.closed(backend_index);
        return error.NoCapacity;
    };
    conn.socket = pool.loop.openSocket(address.family()) catch {
        pool.shared.closed(backend_index);
        conn.next = pool.free_list;
        pool.free_list = conn;
        return error.SocketFailed;
    };
    conn.backend_index = backend_index;
    conn.state = .busy;
    conn.reused = false;
    conn.watching = false;
    conn.next = null;
    conn.prev = null;
    pool.stats.opened.add(1);
    return conn;
}

/// Returns a busy connection after a clean exchange. Keeps it idle if there is room.
pub fn park(pool: *Pool, conn: *Conn) void {
    assert(conn.state == .busy);
    const full = pool.idle_counts[conn.backend_index] >= pool.idle_max;
    if (full or conn.watching or pool.closing_all) {
        // A watch still being cancelled cannot be re-armed yet; rare, so just close.
        return pool.discard(conn);
    }
    conn.state = .idle;
    pool.idlePush(conn);
    pool.loop.timerArm(pool.idle_queue, &conn.idle_timer, Conn, conn, idleTimerCallback);
    conn.watching = true;
    pool.watches_pending += 1;
    pool.loop.pollReadable(&conn.watch, &conn.socket, Conn, conn, watchCallback);
}

/// Closes a busy connection (broken, or not reusable). The caller has no operation pending
/// on its socket.
pub fn discard(pool: *Pool, conn: *Conn) void {
    assert(conn.state == .busy);
    if (conn.watching) {
        conn.state = .closing; // The watch callback finishes the job.
        return;
    }
    pool.release(conn);
}

/// Closes every idle connection and keeps none from now on (drain).
pub fn closeIdle(pool: *Pool) void {
    pool.closing_all = true;
    for (pool.idle_heads, 0..) |_, backend_index| {
        while (pool.idle_heads[backend_index]) |conn| {
            pool.idleUnlink(conn);
            pool.loop.timerCancel(&conn.idle_timer);
            conn.state = .closing;
            assert(conn.watching);
            pool.loop.cancel(&conn.watch);
        }
    }
}

/// No connection is idle or being closed: nothing of the pool's is left on the loop.
pub fn isQuiet(pool: *const Pool) bool {
    return pool.watches_pending == 0;
}

pub fn hasIdle(pool: *const Pool, backend_index: u16) bool {
    return pool.idle_heads[backend_index] != null;
}

pub fn idleCount(pool: *const Pool) u32 {
    var count: u32 = 0;
    for (pool.idle_counts) |c| count += c;
    return count;
}

fn watchCallback(conn: *Conn, result: loop_ns.PollError!void) void {
    const pool = conn.pool;
    assert(conn.watching);
    conn.watching = false;
    pool.watches_pending -= 1;
    switch (conn.state) {
        // Taken for a request while the cancel was in flight: the session owns it now.
        .busy => {},
        .closing => pool.release(conn),
        .idle => {
            // Readable while idle: the backend closed it, or sent bytes nobody asked for.
            // Either way it must not carry a request. (A Canceled here cannot happen: only
            // takeIdle and closeIdle cancel, and both leave the idle state first.)
            _ = result catch {}; // Any outcome means the same: close it.
            pool.stats.closed_idle_by_backend.add(1);
            pool.idleUnlink(conn);
            pool.loop.timerCancel(&conn.idle_timer);
            pool.release(conn);
        },
        .free => unreachable,
    }
}

fn idleTimerCallback(conn: *Conn) void {
    const pool = conn.pool;
    assert(conn.state == .idle);
    assert(conn.watching);
    pool.stats.closed_idle_timeout.add(1);
    pool.idleUnlink(conn);
    conn.state = .closing;
    pool.loop.cancel(&conn.watch);
}

fn release(pool: *Pool, conn: *Conn) void {
    assert(!conn.watching);
    assert(!conn.idle_timer.isArmed());
    pool.loop.close(&conn.socket);
    pool.shared.closed(conn.backend_index);
    conn.state = .free;
    conn.next = pool.free_list;
    conn.prev = null;
    pool.free_list = conn;
}

fn idlePush(pool: *Pool, conn: *Conn) void {
    const head = &pool.idle_heads[conn.backend_index];
    conn.prev = null;
    conn.next = head.*;
    if (head.*) |old| old.prev = conn;
    head.* = conn;
    pool.idle_counts[conn.backend_index] += 1;
}

fn idleUnlink(pool: *Pool, conn: *Conn) void {
    const head = &pool.idle_heads[conn.backend_index];
    if (conn.prev) |prev| prev.next = conn.next else head.* = conn.next;
    if (conn.next) |next| next.prev = conn.prev;
    conn.next = null;
    conn.prev = null;
    pool.idle_counts[conn.backend_index] -= 1;
}
