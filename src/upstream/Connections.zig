//! One worker's connections to one pool's backends: a fixed array of `Connection` slots, a
//! free list, and per backend an idle list of keep-alive connections ready for reuse.
//!
//! A connection that a backend closed, or on which it sent bytes nobody asked for, must never
//! carry a request: the bytes would be read as its response. So an idle connection is watched
//! (a pending pollReadable, in the socket's watcher slot), and one whose watch fires is closed
//! here; and it has an idle timer so we close it before a typical backend keep-alive timeout
//! does. Taking it for a request does not cancel the watch: it stays armed while the
//! connection is busy (its response's arrival fires it, which is then noise) and watches the
//! next idle period too, so a reused connection costs no cancel and, until the watch fires,
//! no new watch (docs/ARCHITECTURE.md, "Keep-alive CPU"). What the backend already knows
//! without a system call is checked when a connection is taken (`Loop.seemsQuiet`: epoll's
//! cached readiness). The slot cannot be freed until the watch's callback has run, so
//! `Connection.watching` is tracked, a discard cancels the watch, and the close waits for
//! that callback.
//!
//! Sizing: `exchanges + backends * keepalive` slots, so an exchange never finds them all taken
//! (at most one busy connection per exchange, at most `keepalive` idle per backend).
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
const tls = @import("../tls/tls.zig");

const Connections = @This();

pub const Connection = struct {
    socket: Socket,
    /// What `socket` connects to, copied from the member's slot at `open`: the connect's
    /// completion points here (Loop.connect), and the slot may be given to another member.
    address: Address,
    backend_index: u16,
    /// The generation of the member in slot `backend_index` it was made to
    /// (upstream/Members.zig): one whose slot another member took is never reused.
    generation: u32,
    state: State,
    /// Served at least one response: a failure before the first response byte may be the
    /// backend closing an idle connection as we reused it (the stale keep-alive race).
    reused: bool,
    watching: bool,
    /// The pending watch was armed before the connection last carried a request, so it may
    /// fire for what arrived then (its response): when it fires while the connection is idle,
    /// a fresh watch is armed to tell, rather than the connection closed.
    watch_stale: bool,
    /// TLS to the backend: the connection's state, kept while it is idle (its session with
    /// it); its buffers belong to the attempt that uses it (proxy/UpstreamTls.zig).
    tls: ?tls.Engine,
    watch: Completion,
    idle_timer: Timer,
    connections: *Connections,
    /// Free list or idle list link.
    next: ?*Connection,
    prev: ?*Connection,

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
slots: []Connection,
/// Released slots; `slots[slots_touched..]` have never been used (and their pages never
/// touched), so they are handed out in order once the free list is empty.
free_list: ?*Connection,
slots_touched: u32 = 0,
idle_heads: []?*Connection,
idle_counts: []u32,
/// Per backend: connections open here that many tries share (HTTP/2, `LocalPool.openShared`).
shared_counts: []u32,
idle_max: u32,
idle_queue: *TimerQueue,
/// Watches submitted and not yet called back: the set is quiet (safe to stop the loop) only
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
    slots_count: u32,
    backends_count: u32,
    idle_max: u32,
) !Connections {
    assert(slots_count > 0);
    assert(backends_count > 0);
    // Slots are initialized on first use (`acquireSlot`), so their pages stay untouched.
    const slots = try StaticAllocator.allocUntouched(allocator, Connection, null, slots_count);
    errdefer allocator.free(slots);
    const idle_heads = try allocator.alloc(?*Connection, backends_count);
    errdefer allocator.free(idle_heads);
    const idle_counts = try allocator.alloc(u32, backends_count);
    errdefer allocator.free(idle_counts);
    const shared_counts = try allocator.alloc(u32, backends_count);
    @memset(idle_heads, null);
    @memset(idle_counts, 0);
    @memset(shared_counts, 0);
    return .{
        .loop = loop,
        .shared = shared,
        .slots = slots,
        .free_list = null,
        .idle_heads = idle_heads,
        .idle_counts = idle_counts,
        .shared_counts = shared_counts,
        .idle_max = idle_max,
        .idle_queue = idle_queue,
    };
}

/// A free slot: a released one, else one never used. Null when all are busy or idle.
fn acquireSlot(connections: *Connections) ?*Connection {
    if (connections.free_list) |connection| {
        assert(connection.state == .free);
        connections.free_list = connection.next;
        return connection;
    }
    if (connections.slots_touched == connections.slots.len) return null;
    const connection = &connections.slots[connections.slots_touched];
    connections.slots_touched += 1;
    connection.* = .{
        .socket = undefined,
        .address = undefined,
        .backend_index = 0,
        .generation = 0,
        .state = .free,
        .reused = false,
        .watching = false,
        .watch_stale = false,
        .tls = null,
        .watch = .{},
        .idle_timer = .{},
        .connections = connections,
        .next = null,
        .prev = null,
    };
    return connection;
}

pub fn deinit(connections: *Connections, allocator: std.mem.Allocator) void {
    allocator.free(connections.slots);
    allocator.free(connections.idle_heads);
    allocator.free(connections.idle_counts);
    allocator.free(connections.shared_counts);
    connections.* = undefined;
}

/// The most recently parked idle connection to this backend (the member of `generation` in
/// that slot) that still seems clean, now busy; null if none. Those known to have bytes, an
/// EOF or an error waiting, and any made to an earlier member of the slot, are closed on the
/// way (bounded by the idle list's length).
pub fn takeIdle(connections: *Connections, backend_index: u16, generation: u32) ?*Connection {
    while (connections.idle_heads[backend_index]) |connection| {
        assert(connection.state == .idle);
        assert(connection.watching);
        connections.idleUnlink(connection);
        connections.loop.timerCancel(&connection.idle_timer);
        connection.state = .busy;
        connection.watch_stale = true;
        if (connection.generation != generation) {
            connections.discard(connection); // Stale: its slot holds another member now.
            continue;
        }
        if (!connections.loop.seemsQuiet(&connection.socket)) {
            connections.stats.closed_idle_by_backend.add(1);
            connections.discard(connection);
            continue;
        }
        connection.reused = true;
        connections.stats.reused.add(1);
        return connection;
    }
    return null;
}

pub const OpenError = error{ NoCapacity, AtBackendCap, SocketFailed };

/// A fresh, unconnected socket for `address` (the member of `generation` in slot
/// `backend_index`); the caller connects it with its own completion.
pub fn open(connections: *Connections, backend_index: u16, address: *const Address, generation: u32) OpenError!*Connection {
    if (!connections.shared.tryOpen(backend_index)) return error.AtBackendCap;
    const connection = connections.acquireSlot() orelse {
        connections.shared.closed(backend_index);
        return error.NoCapacity;
    };
    connection.socket = connections.loop.openSocket(address.family()) catch {
        connections.shared.closed(backend_index);
        connection.next = connections.free_list;
        connections.free_list = connection;
        return error.SocketFailed;
    };
    connection.address = address.*;
    connection.backend_index = backend_index;
    connection.generation = generation;
    connection.state = .busy;
    connection.reused = false;
    connection.watching = false;
    connection.watch_stale = false;
    connection.tls = null;
    connection.next = null;
    connection.prev = null;
    connections.stats.opened.add(1);
    return connection;
}

/// Returns a busy connection after a clean exchange. Keeps it idle if there is room, watched
/// (by the watch it had, if that has not fired).
pub fn park(connections: *Connections, connection: *Connection) void {
    assert(connection.state == .busy);
    const full = connections.idle_counts[connection.backend_index] >= connections.idle_max;
    if (full or connections.closing_all) return connections.discard(connection);
    connection.state = .idle;
    connections.idlePush(connection);
    connections.loop.timerArm(connections.idle_queue, &connection.idle_timer, Connection, connection, idleTimerCallback);
    if (!connection.watching) connections.watch(connection);
}

fn watch(connections: *Connections, connection: *Connection) void {
    assert(!connection.watching);
    connection.watching = true;
    connection.watch_stale = false;
    connections.watches_pending += 1;
    connections.loop.pollReadable(&connection.watch, &connection.socket, Connection, connection, watchCallback);
}

/// Closes a busy connection (broken, or not reusable). The caller has no operation pending
/// on its socket but the watch, which is cancelled here.
pub fn discard(connections: *Connections, connection: *Connection) void {
    assert(connection.state == .busy);
    if (connection.watching) {
        connection.state = .closing; // The watch callback finishes the job.
        connections.loop.cancel(&connection.watch);
        return;
    }
    connections.release(connection);
}

/// Closes every idle connection and keeps none from now on (drain).
pub fn closeIdle(connections: *Connections) void {
    connections.closing_all = true;
    for (connections.idle_heads, 0..) |_, backend_index| connections.closeIdleOf(@intCast(backend_index));
}

/// Closes the idle connections to one slot (its member left the pool).
pub fn closeIdleOf(connections: *Connections, backend_index: u16) void {
    while (connections.idle_heads[backend_index]) |connection| {
        connections.idleUnlink(connection);
        connections.loop.timerCancel(&connection.idle_timer);
        connection.state = .closing;
        assert(connection.watching);
        connections.loop.cancel(&connection.watch);
    }
}

/// No connection is idle or being closed: nothing of these is left on the loop.
pub fn isQuiet(connections: *const Connections) bool {
    return connections.watches_pending == 0;
}

pub fn hasIdle(connections: *const Connections, backend_index: u16) bool {
    return connections.idle_heads[backend_index] != null;
}

/// A connection to the backend that many tries share is open here: a try may join it.
pub fn hasShared(connections: *const Connections, backend_index: u16) bool {
    return connections.shared_counts[backend_index] > 0;
}

pub fn idleCount(connections: *const Connections) u32 {
    var count: u32 = 0;
    for (connections.idle_counts) |c| count += c;
    return count;
}

fn watchCallback(connection: *Connection, result: loop_ns.PollError!void) void {
    const connections = connection.connections;
    assert(connection.watching);
    connection.watching = false;
    connections.watches_pending -= 1;
    switch (connection.state) {
        // Fired while a request uses it: its response arriving, or whatever a receive
        // already took (noise); `park` watches again.
        .busy => {},
        .closing => connections.release(connection),
        // Armed before the last request: it may have fired for that request's response. A
        // fresh watch says whether anything is there now (at once, if so).
        .idle => if (connection.watch_stale) connections.watch(connection) else {
            // Readable while idle: the backend closed it, or sent bytes nobody asked for.
            // Either way it must not carry a request. (A Canceled here cannot happen: only
            // discard and closeIdle cancel, and both leave the idle state first.)
            _ = result catch {}; // Any outcome means the same: close it.
            connections.stats.closed_idle_by_backend.add(1);
            connections.idleUnlink(connection);
            connections.loop.timerCancel(&connection.idle_timer);
            connections.release(connection);
        },
        .free => unreachable,
    }
}

fn idleTimerCallback(connection: *Connection) void {
    const connections = connection.connections;
    assert(connection.state == .idle);
    assert(connection.watching);
    connections.stats.closed_idle_timeout.add(1);
    connections.idleUnlink(connection);
    connection.state = .closing;
    connections.loop.cancel(&connection.watch);
}

fn release(connections: *Connections, connection: *Connection) void {
    assert(!connection.watching);
    assert(!connection.idle_timer.isArmed());
    if (connection.tls) |*engine| {
        closeNotify(connections.loop, &connection.socket, engine);
        engine.deinit();
        connection.tls = null;
    }
    connections.loop.close(&connection.socket);
    connections.shared.closed(connection.backend_index);
    connection.state = .free;
    connection.next = connections.free_list;
    connection.prev = null;
    connections.free_list = connection;
}

/// Before a TLS connection closes: its close_notify, so the backend can tell our close from a
/// truncation (RFC 8446 §6.1). Best effort: one non-blocking send of a few dozen bytes; a
/// backend that is gone, or a full socket buffer, just sees the close.
pub fn closeNotify(loop: *Loop, socket: *Socket, engine: *tls.Engine) void {
    if (engine.state != .open) return; // No handshake finished, or closed already.
    var alert: [64]u8 = undefined; // A close_notify record: 24 to 31 bytes with our ciphers.
    var wire: tls.Engine.Wire = .{ .output = &alert };
    const progress = engine.close(&wire) catch return; // A failed engine has nothing to say.
    if (progress != .done or wire.produced == 0) return;
    _ = loop.sendNow(socket, wire.written()) catch {}; // Best effort (above).
}

fn idlePush(connections: *Connections, connection: *Connection) void {
    const head = &connections.idle_heads[connection.backend_index];
    connection.prev = null;
    connection.next = head.*;
    if (head.*) |old| old.prev = connection;
    head.* = connection;
    connections.idle_counts[connection.backend_index] += 1;
}

fn idleUnlink(connections: *Connections, connection: *Connection) void {
    const head = &connections.idle_heads[connection.backend_index];
    if (connection.prev) |prev| prev.next = connection.next else head.* = connection.next;
    if (connection.next) |next| next.prev = connection.prev;
    connection.next = null;
    connection.prev = null;
    connections.idle_counts[connection.backend_index] -= 1;
}
