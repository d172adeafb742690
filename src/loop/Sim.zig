//! The simulated kernel: the third Loop backend, for the deterministic simulator (src/sim/).
//! Sockets are fake fds into an in-memory network of TCP connections; completions are
//! delivered in an order, and with delays and partial results, drawn from a seeded PRNG; time
//! is simulated (nothing sleeps: an idle tick jumps the clock to the next deadline).
//!
//! Decisions a reader must know:
//! - The Loop's contract is kept exactly, and checked: one callback per operation, callbacks
//!   only from `tick`, a cancel completes with Canceled unless the operation already finished,
//!   and `close` requires that no operation on the fd still waits for its callback (cancelled
//!   and detached ones included). A close that breaks that rule, an operation on a closed or
//!   unknown fd, and a second close panic: the "no fd used after release" invariant. So does
//!   a send whose buffer changes between its submission and the moment the kernel reads it.
//! - Only what a real kernel could do happens here: bytes arrive in any split, sends are
//!   partial under a window, a close with unread bytes resets the connection and loses what
//!   was in flight to the peer (as Linux does), and a cancel is decided when it is asked: the
//!   operation had already finished (its effect happens then, before anything submitted
//!   later) or it is cancelled; only its callback may come later. Misbehaving HTTP peers are
//!   the simulator's (src/sim/); this file knows nothing of HTTP.
//! - Every performed operation gets a number (`sequence`), kept per connection for the
//!   latest ones, so peers can tell when a byte they read was sent (src/sim/Ledger.zig).
//! - fds are never reused: an fd is `serial << slot_bits | slot`, so a stale fd is caught.
//! - Everything is allocated by `init`; `reset` starts a new seed without allocating.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Completion = @import("Completion.zig");
const Socket = @import("Socket.zig");
const Loop = @import("Loop.zig");

const Sim = @This();

pub const connections_max = 1 << slot_bits;
const slot_bits = 10;
/// Bytes a direction of a connection can hold in flight (its socket buffers, together).
pub const pipe_bytes_max = 16 * 1024;
/// Pipes (for splices) open at once, and what each holds: small, so that bodies take many.
pub const pipes_max = 64;
pub const pipe_capacity = 8 * 1024;
/// Pipe fds are numbered apart from connections': base | serial << 7 | index << 1 | end.
const pipe_fd_base: linux.fd_t = 1 << 30;
/// Operations in flight: at most a reader, a writer and a watcher per fd, plus cancelled ones.
const inflight_max = 5 * connections_max;

now_ns: u64 = 0,
prng: std.Random.DefaultPrng,
faults: Faults = .{},
connections: []Connection,
/// Backing bytes of every pipe: two per connection slot.
pipe_memory: []u8,
free_slots: []u16,
free_count: u32 = 0,
/// Proxy-side fds open, by kind.
open_counts: [2]u32 = .{ 0, 0 },
serial: u32 = 1,
inflight: []Inflight,
inflight_count: u32 = 0,
/// Counts performed operations: a total order of everything the kernel did.
sequence: u64 = 0,
/// The earliest time the simulator's own actors want to run: an idle tick never jumps past it.
horizon_ns: u64 = std.math.maxInt(u64),
/// `Loop.wake` was called: the wake callback runs at the next tick.
woken: bool = false,
connector: Connector,
pipes: [pipes_max]SimPipe = @splat(.{}),
pipe_serial: u32 = 1,
stats: Stats = .{},
/// Print every operation's outcome on stderr (the simulator's `--trace`).
tracing: bool = false,

/// Socket-level faults and latencies, chosen per seed by the simulator (swarm testing).
pub const Faults = struct {
    /// Per tick, the chance that an operation able to complete does: the rest wait a tick.
    deliver_percent: u8 = 100,
    /// A receive that could take more takes a random part of it.
    short_read_percent: u8 = 0,
    /// A send that could put more in flight takes a random part of it.
    short_write_percent: u8 = 0,
    /// The send window of a connection (bytes in flight per direction), drawn per connection.
    window_min: u32 = pipe_bytes_max,
    window_max: u32 = pipe_bytes_max,
    /// A cancel's callback comes at a later tick (as with io_uring's asynchronous cancel).
    cancel_late_percent: u8 = 0,
    /// A cancelled operation that could complete delivers its real result instead.
    cancel_race_percent: u8 = 0,
    /// socket(2) fails (EMFILE/ENOMEM).
    socket_fail_percent: u8 = 0,
    /// How long a connect takes to be answered.
    connect_latency_max_ns: u64 = 0,
    /// How much the clock moves per busy tick.
    tick_ns_max: u64 = 100 * std.time.ns_per_us,
};

/// What the simulated network answers a connect to an address (the simulator decides).
pub const Verdict = enum { accept, refuse, unreachable_host, timeout, blackhole };

pub const Connector = struct {
    context: *anyopaque,
    /// Called when a connect is submitted; with `.accept`, the peer end (`fd`) is the
    /// callee's to serve from now on.
    function: *const fn (context: *anyopaque, address: *const Address, fd: linux.fd_t) Verdict,
};

pub const Kind = enum { client, upstream };

/// An operation the kernel has and whose callback has not been queued yet.
const Inflight = struct {
    completion: *Completion,
    /// A send's buffer, hashed at submission: it must not change until the kernel reads it.
    checksum: u64,
};

pub const Connection = struct {
    state: enum { free, used } = .free,
    kind: Kind = .client,
    fd: linux.fd_t = -1,
    /// The proxy's end: open until `Loop.close`.
    proxy_open: bool = false,
    /// The peer's end exists and is not closed.
    peer_open: bool = false,
    connect: ConnectState = .none,
    /// What the network answers the connect (decided when it is submitted), and when.
    connect_verdict: Verdict = .accept,
    connect_due_ns: u64 = 0,
    window: u32 = pipe_bytes_max,
    to_proxy: Pipe = .{},
    to_peer: Pipe = .{},
    /// The peer shut down its sending side (or closed): the proxy reads EOF after the data.
    to_proxy_eof: bool = false,
    /// The proxy shut down its sending side (or closed).
    to_peer_eof: bool = false,
    /// The proxy's side has seen a reset: its receives and sends fail.
    proxy_reset: bool = false,
    /// The peer's side has seen a reset.
    peer_reset: bool = false,
    /// Operations on the proxy's fd whose callback has not run yet.
    ops_pending: u32 = 0,
    /// Bytes the proxy has received on this connection (a stream offset peers compare with).
    proxy_read_total: u64 = 0,
    /// Where the last receive the proxy had not cancelled ended: bytes taken by a cancelled
    /// receive that won the race were not asked for.
    proxy_read_committed: u64 = 0,
    /// Bytes the peer has written towards the proxy.
    peer_written_total: u64 = 0,
    /// Bytes the proxy has sent on this connection.
    proxy_sent_total: u64 = 0,
    /// When (`Sim.sequence`) the proxy's latest sends and receives on this connection were
    /// performed, by the stream offset they ended at: peers learn when a byte moved.
    sends: Marks = .{},
    recvs: Marks = .{},

    pub const ConnectState = enum { none, pending, connected, failed };
};

/// The latest operations on one direction of a connection: (stream end, sequence) pairs.
pub const Marks = struct {
    ends: [marks_max]u64 = undefined,
    sequences: [marks_max]u64 = undefined,
    count: u64 = 0,

    const marks_max = 64;

    fn add(marks: *Marks, end: u64, sequence: u64) void {
        const at = marks.count % marks_max;
        marks.ends[at] = end;
        marks.sequences[at] = sequence;
        marks.count += 1;
    }

    /// The sequence of the operation that moved byte `offset`: the earliest kept one that
    /// ended past it. Null when none did yet, or when the one that did may be forgotten.
    fn find(marks: *const Marks, offset: u64) ?u64 {
        const kept = @min(marks.count, marks_max);
        var found: ?u64 = null;
        var back: u64 = 0;
        while (back < kept) : (back += 1) {
            const at = (marks.count - 1 - back) % marks_max;
            if (marks.ends[at] <= offset) return found;
            found = marks.sequences[at];
        }
        // Every kept operation ended past `offset`: an older, forgotten one may have moved it.
        return if (marks.count > marks_max) null else found;
    }
};

/// A pipe the proxy opened (Loop.openPipe), for splices.
const SimPipe = struct {
    open: bool = false,
    /// The read end; the write end is one more.
    fd: linux.fd_t = -1,
    ring: Pipe = .{},
    memory: [pipe_capacity]u8 = undefined,
};

/// One direction's bytes in flight: a ring over a fixed slice.
pub const Pipe = struct {
    bytes: []u8 = &.{},
    head: u32 = 0,
    len: u32 = 0,

    fn push(pipe: *Pipe, data: []const u8) void {
        assert(pipe.len + data.len <= pipe.bytes.len);
        for (data) |byte| {
            const at = (pipe.head + pipe.len) % pipe.bytes.len;
            pipe.bytes[at] = byte;
            pipe.len += 1;
        }
    }

    fn pop(pipe: *Pipe, out: []u8) u32 {
        const n: u32 = @intCast(@min(out.len, pipe.len));
        for (out[0..n]) |*byte| {
            byte.* = pipe.bytes[pipe.head];
            pipe.head = @intCast((pipe.head + 1) % pipe.bytes.len);
        }
        pipe.len -= n;
        return n;
    }

    /// Copies up to `out.len` bytes from the front without taking them.
    fn peek(pipe: *const Pipe, out: []u8) u32 {
        const n: u32 = @intCast(@min(out.len, pipe.len));
        for (out[0..n], 0..) |*byte, i| byte.* = pipe.bytes[(pipe.head + i) % pipe.bytes.len];
        return n;
    }

    fn drop(pipe: *Pipe, n: u32) void {
        assert(n <= pipe.len);
        pipe.head = @intCast((pipe.head + n) % pipe.bytes.len);
        pipe.len -= n;
    }

    fn clear(pipe: *Pipe) void {
        pipe.head = 0;
        pipe.len = 0;
    }
};

pub const Stats = struct {
    completions: u64 = 0,
    short_reads: u64 = 0,
    short_writes: u64 = 0,
    cancels: u64 = 0,
    cancels_late: u64 = 0,
    cancels_lost_race: u64 = 0,
    /// The proxy closed a connection with bytes it had not read: the peer got a reset.
    resets_on_close: u64 = 0,
    /// The proxy sent after shutting down its own sending side.
    sends_after_shutdown: u64 = 0,
    connects: u64 = 0,
    sockets_failed: u64 = 0,
    clock_jumps: u64 = 0,
    /// Splices performed (socket to pipe, pipe to socket).
    splices: u64 = 0,
    /// Idle pooled connections checked before carrying a request (Loop.isQuiet).
    idle_checks: u64 = 0,
};

pub fn init(allocator: std.mem.Allocator, connector: Connector) !Sim {
    const connections = try allocator.alloc(Connection, connections_max);
    errdefer allocator.free(connections);
    const pipe_memory = try allocator.alloc(u8, connections_max * 2 * pipe_bytes_max);
    errdefer allocator.free(pipe_memory);
    const free_slots = try allocator.alloc(u16, connections_max);
    errdefer allocator.free(free_slots);
    const inflight = try allocator.alloc(Inflight, inflight_max);
    var sim: Sim = .{
        .prng = .init(0),
        .connections = connections,
        .pipe_memory = pipe_memory,
        .free_slots = free_slots,
        .inflight = inflight,
        .connector = connector,
    };
    sim.reset(0, .{});
    return sim;
}

pub fn deinit(sim: *Sim, allocator: std.mem.Allocator) void {
    allocator.free(sim.inflight);
    allocator.free(sim.free_slots);
    allocator.free(sim.pipe_memory);
    allocator.free(sim.connections);
    sim.* = undefined;
}

/// A new seed: everything closed and forgotten, the clock at a fixed start.
pub fn reset(sim: *Sim, seed: u64, faults: Faults) void {
    assert(faults.window_min > 0 and faults.window_min <= faults.window_max);
    assert(faults.window_max <= pipe_bytes_max);
    sim.prng = .init(seed);
    sim.faults = faults;
    // Not 0: the proxy reads 0 as "no time recorded".
    sim.now_ns = 1000 * std.time.ns_per_s;
    sim.serial = 1;
    sim.open_counts = .{ 0, 0 };
    sim.inflight_count = 0;
    sim.sequence = 0;
    sim.horizon_ns = std.math.maxInt(u64);
    sim.woken = false;
    sim.stats = .{};
    sim.pipe_serial = 1;
    for (&sim.pipes) |*pipe| pipe.* = .{};
    for (sim.connections, 0..) |*connection, slot| {
        const memory = sim.pipe_memory[slot * 2 * pipe_bytes_max ..][0 .. 2 * pipe_bytes_max];
        connection.* = .{
            .to_proxy = .{ .bytes = memory[0..pipe_bytes_max] },
            .to_peer = .{ .bytes = memory[pipe_bytes_max..] },
        };
    }
    // Lowest slot on top.
    for (sim.free_slots, 0..) |*slot, i| slot.* = @intCast(connections_max - 1 - i);
    sim.free_count = connections_max;
}

pub fn random(sim: *Sim) std.Random {
    return sim.prng.random();
}

fn chance(sim: *Sim, percent: u8) bool {
    if (percent == 0) return false;
    if (percent >= 100) return true;
    return sim.random().uintLessThan(u8, 100) < percent;
}

// ---------------------------------------------------------------------------------------------
// The Loop's side (called by Loop.zig only)

pub fn submit(sim: *Sim, completion: *Completion) void {
    assert(completion.state == .idle);
    const socket = completion.operation.socket();
    const connection = sim.lookup(socket.fd, "an operation was submitted on");
    switch (completion.operation) {
        .none => unreachable,
        .accept, .read => std.debug.panic("sim: {t} is not simulated", .{completion.operation}),
        .connect => |*op| {
            if (connection.kind != .upstream or connection.connect != .none) {
                std.debug.panic("sim: fd {d}: connect on a socket that is not fresh", .{socket.fd});
            }
            sim.startConnect(connection, op.address);
        },
        .recv, .send, .poll_readable, .splice_in, .splice_out => if (connection.connect != .connected) {
            std.debug.panic("sim: fd {d}: {t} on a socket that is not connected ({t})", .{
                socket.fd, completion.operation, connection.connect,
            });
        },
    }
    switch (completion.operation) {
        // The contract of Loop.spliceIn/spliceOut: into an empty pipe, out of what it holds.
        .splice_in => |op| if (sim.pipeEnd(op.pipe, .write).ring.len != 0) {
            std.debug.panic("sim: fd {d}: splice into pipe {d}, which is not empty", .{ socket.fd, op.pipe });
        },
        .splice_out => |op| if (sim.pipeEnd(op.pipe, .read).ring.len < op.len) {
            std.debug.panic("sim: fd {d}: splice of {d} bytes out of pipe {d}, which holds {d}", .{
                socket.fd, op.len, op.pipe, sim.pipeEnd(op.pipe, .read).ring.len,
            });
        },
        else => {},
    }
    connection.ops_pending += 1;
    completion.state = .submitted;
    if (sim.inflight_count == sim.inflight.len) @panic("sim: too many operations in flight");
    sim.inflight[sim.inflight_count] = .{ .completion = completion, .checksum = checksum(completion) };
    sim.inflight_count += 1;
}

/// See Loop.recvReady and sendReady: no kernel operation, but the fd counts it until its
/// callback runs, so a close before then is caught as for any other operation.
pub fn submitReady(sim: *Sim, completion: *Completion) void {
    const connection = sim.lookup(completion.operation.socket().fd, "a ready operation was queued on");
    connection.ops_pending += 1;
}

/// See Loop.cancel. The outcome is decided now: the operation had already finished (its
/// effect happens now, before anything submitted after the cancel) if it could complete and
/// wins the race, else it is cancelled. The callback comes now, or at a later tick (as with
/// io_uring's asynchronous cancel).
pub fn cancel(sim: *Sim, loop: *Loop, target: *Completion) void {
    switch (target.state) {
        .idle, .ready => {},
        .backlog, .waiting => unreachable, // io_uring's and epoll's states.
        .submitted => {
            if (target.cancel != .none) return; // Already decided.
            sim.stats.cancels += 1;
            const index = sim.inflightIndex(target);
            target.cancel = .submitted;
            if (sim.isReady(target) and sim.chance(sim.faults.cancel_race_percent)) {
                sim.stats.cancels_lost_race += 1;
                sim.perform(sim.inflight[index]);
            } else {
                if (target.operation == .connect) {
                    const connection = sim.lookup(target.operation.socket().fd, "a connect is pending on");
                    connection.connect = .failed;
                }
                target.setCanceled();
            }
            if (sim.chance(sim.faults.cancel_late_percent)) {
                sim.stats.cancels_late += 1;
                return;
            }
            sim.inflightRemoveAt(index);
            sim.deliver(loop, target);
        },
    }
}

/// Delivers a seeded subset of the operations able to complete, in a seeded order, then
/// moves the clock: a little when anything is going on, else to the next event.
pub fn tick(sim: *Sim, loop: *Loop, timeout_ns: ?u64) void {
    if (sim.woken) {
        sim.woken = false;
        if (loop.wake_callback) |callback| callback(loop.wake_context);
    }
    var able: u32 = 0;
    sim.random().shuffle(Inflight, sim.inflight[0..sim.inflight_count]);
    var i = sim.inflight_count;
    while (i > 0) {
        i -= 1;
        const entry = sim.inflight[i];
        const completion = entry.completion;
        // A cancelled operation has its outcome already; it only waits for its callback.
        const decided = completion.cancel != .none;
        const ready = decided or sim.isReady(completion);
        if (!ready) continue;
        able += 1;
        if (!sim.chance(sim.faults.deliver_percent)) continue;
        // Swap-remove: the element moved into `i` has been looked at already.
        sim.inflightRemoveAt(i);
        if (!decided) sim.perform(entry);
        sim.deliver(loop, completion);
    }
    const busy = able > 0 or !loop.ready.isEmpty() or timeout_ns == @as(?u64, 0);
    if (busy) {
        sim.now_ns += sim.random().uintAtMost(u64, sim.faults.tick_ns_max);
    } else {
        var next = sim.horizon_ns;
        if (timeout_ns) |ns| next = @min(next, sim.now_ns + ns);
        for (sim.inflight[0..sim.inflight_count]) |entry| {
            const completion = entry.completion;
            if (completion.operation != .connect) continue;
            const connection = sim.lookup(completion.operation.socket().fd, "a connect is pending on");
            if (connection.connect_due_ns != std.math.maxInt(u64)) next = @min(next, connection.connect_due_ns);
        }
        if (next == std.math.maxInt(u64)) next = sim.now_ns + std.time.ns_per_s;
        if (next > sim.now_ns) {
            sim.now_ns = next;
            sim.stats.clock_jumps += 1;
        }
    }
    loop.now_ns = sim.now_ns;
}

/// Loop.complete calls this before a callback runs: the operation is over for the fd.
pub fn callbackStarting(sim: *Sim, completion: *Completion) void {
    const connection = sim.lookup(completion.operation.socket().fd, "a callback ran for");
    assert(connection.ops_pending > 0);
    connection.ops_pending -= 1;
}

pub fn wake(sim: *Sim) void {
    sim.woken = true;
}

pub fn openSocket(sim: *Sim) sys.SocketError!Socket {
    if (sim.chance(sim.faults.socket_fail_percent)) {
        sim.stats.sockets_failed += 1;
        return error.ProcessFdQuotaExceeded;
    }
    const connection = sim.allocate(.upstream);
    connection.proxy_open = true;
    sim.open_counts[@backingInt(Kind.upstream)] += 1;
    return .init(connection.fd);
}

/// See Loop.seemsQuiet: the simulated kernel answers as epoll would (it knows) or as io_uring
/// would (it does not: true), seeded half and half, so both the check that finds bytes and
/// the race it cannot close are exercised.
pub fn seemsQuiet(sim: *Sim, socket: *Socket) bool {
    const connection = sim.lookup(socket.fd, "an idle check was made on");
    sim.stats.idle_checks += 1;
    if (sim.random().boolean()) return true;
    return !(connection.proxy_reset or connection.to_proxy.len > 0 or connection.to_proxy_eof);
}

pub fn shutdownWrite(sim: *Sim, socket: *Socket) sys.ShutdownError!void {
    const connection = sim.lookup(socket.fd, "shutdown was called on");
    if (connection.connect != .connected) return error.SocketNotConnected;
    if (connection.proxy_reset) return error.SocketNotConnected;
    connection.to_peer_eof = true;
}

/// The proxy closes its fd. Nothing may still wait for a callback on it; unread bytes make
/// the close a reset, as on Linux (what sluice's lingering close exists to avoid).
pub fn close(sim: *Sim, socket: *Socket) void {
    const connection = sim.lookup(socket.fd, "close was called on");
    if (sim.tracing) std.debug.print("                   kernel fd {d}: close by sluice ({d} unread)\n", .{ socket.fd, connection.to_proxy.len });
    if (connection.ops_pending != 0) {
        std.debug.panic("sim: fd {d} closed while {d} operation(s) on it have not called back " ++
            "(the fd would be released while the kernel may still use it)", .{ socket.fd, connection.ops_pending });
    }
    connection.proxy_open = false;
    sim.open_counts[@backingInt(connection.kind)] -= 1;
    if (connection.peer_open and !connection.peer_reset) {
        if (connection.to_proxy.len > 0) {
            sim.stats.resets_on_close += 1;
            connection.peer_reset = true;
            connection.to_peer.clear();
        } else {
            connection.to_peer_eof = true;
        }
    }
    sim.maybeFree(connection);
}

// ---------------------------------------------------------------------------------------------
// The peers' side (the simulator's clients and backends)

/// A connection from a simulated client: the fd is handed to the proxy (Proxy.startSession),
/// the same number names the peer's end here.
pub fn openClient(sim: *Sim) linux.fd_t {
    const connection = sim.allocate(.client);
    connection.proxy_open = true;
    sim.open_counts[@backingInt(Kind.client)] += 1;
    connection.peer_open = true;
    connection.connect = .connected;
    return connection.fd;
}

pub const PeerRead = union(enum) {
    /// Nothing to read yet.
    none,
    bytes: u32,
    eof,
    reset,
};

pub fn peerRead(sim: *Sim, fd: linux.fd_t, buffer: []u8) PeerRead {
    const connection = sim.peer(fd);
    if (connection.peer_reset) return .reset;
    if (connection.to_peer.len > 0) return .{ .bytes = connection.to_peer.pop(buffer) };
    if (connection.to_peer_eof) return .eof;
    return .none;
}

/// Bytes waiting for the peer.
pub fn peerAvailable(sim: *Sim, fd: linux.fd_t) u32 {
    return sim.peer(fd).to_peer.len;
}

pub const PeerWrite = union(enum) {
    /// Taken (0 when the window is full).
    bytes: u32,
    /// The proxy's end is closed or reset: nothing will be read.
    closed,
};

pub fn peerWrite(sim: *Sim, fd: linux.fd_t, bytes: []const u8) PeerWrite {
    const connection = sim.peer(fd);
    assert(!connection.to_proxy_eof); // The peer shut down its own sending side.
    if (connection.peer_reset or !connection.proxy_open) {
        // Linux answers data for a closed socket with a reset.
        connection.peer_reset = true;
        return .closed;
    }
    const space = connection.window -| connection.to_proxy.len;
    const n: u32 = @intCast(@min(space, bytes.len));
    connection.to_proxy.push(bytes[0..n]);
    connection.peer_written_total += n;
    return .{ .bytes = n };
}

/// shutdown(SHUT_WR) by the peer: the proxy reads EOF after what was sent.
pub fn peerShutdown(sim: *Sim, fd: linux.fd_t) void {
    sim.peer(fd).to_proxy_eof = true;
}

/// close(2) by the peer: a FIN, or a reset when it leaves bytes unread. The fd is gone.
pub fn peerClose(sim: *Sim, fd: linux.fd_t) void {
    const connection = sim.peer(fd);
    if (connection.to_peer.len > 0 and !connection.peer_reset) return sim.peerReset(fd);
    connection.peer_open = false;
    connection.to_proxy_eof = true;
    sim.maybeFree(connection);
}

/// An abortive close (SO_LINGER 0): the proxy's side sees a reset, and bytes in flight to it
/// are lost. The fd is gone.
pub fn peerReset(sim: *Sim, fd: linux.fd_t) void {
    const connection = sim.peer(fd);
    connection.peer_open = false;
    connection.to_proxy_eof = true;
    if (connection.proxy_open) {
        connection.proxy_reset = true;
        connection.to_proxy.clear();
    }
    sim.maybeFree(connection);
}

/// Whether the proxy has closed its end (the peer then reads EOF or a reset).
pub fn proxyClosed(sim: *Sim, fd: linux.fd_t) bool {
    return !sim.peer(fd).proxy_open;
}

/// Bytes the proxy has received on the connection: a peer compares it with the offsets of
/// what it wrote to learn what has arrived.
pub fn proxyReadTotal(sim: *Sim, fd: linux.fd_t) u64 {
    return sim.peer(fd).proxy_read_total;
}

/// Where the last receive the proxy did not cancel ended (see `Connection`).
pub fn proxyReadCommitted(sim: *Sim, fd: linux.fd_t) u64 {
    return sim.peer(fd).proxy_read_committed;
}

/// When (`sequence`) the proxy sent byte `offset` of its stream to the peer; null if not yet
/// or too far back to know.
pub fn sentAt(sim: *Sim, fd: linux.fd_t, offset: u64) ?u64 {
    return sim.peer(fd).sends.find(offset);
}

/// When the proxy received byte `offset` of the peer's stream; null if not yet, or too far
/// back to know.
pub fn receivedAt(sim: *Sim, fd: linux.fd_t, offset: u64) ?u64 {
    return sim.peer(fd).recvs.find(offset);
}

pub fn peerWrittenTotal(sim: *Sim, fd: linux.fd_t) u64 {
    return sim.peer(fd).peer_written_total;
}

/// Open proxy-side fds of a kind (the simulator compares them with the proxy's own counts).
pub fn openCount(sim: *const Sim, kind: Kind) u32 {
    return sim.open_counts[@backingInt(kind)];
}

/// Connection slots still in use (by the proxy or a peer).
pub fn usedCount(sim: *const Sim) u32 {
    return @intCast(connections_max - sim.free_count);
}

pub fn isOpen(sim: *const Sim, fd: linux.fd_t) bool {
    if (fd < 0) return false;
    const connection = &sim.connections[@as(u32, @intCast(fd)) & (connections_max - 1)];
    return connection.state == .used and connection.fd == fd and connection.proxy_open;
}

/// Whether an operation is in flight on `fd` (submitted, callback not run).
pub fn hasPending(sim: *const Sim, fd: linux.fd_t) bool {
    if (!sim.isOpen(fd)) return false;
    return sim.connections[@as(u32, @intCast(fd)) & (connections_max - 1)].ops_pending > 0;
}

// ---------------------------------------------------------------------------------------------
// Internals

fn allocate(sim: *Sim, kind: Kind) *Connection {
    if (sim.free_count == 0) @panic("sim: out of connection slots");
    sim.free_count -= 1;
    const slot = sim.free_slots[sim.free_count];
    const connection = &sim.connections[slot];
    assert(connection.state == .free);
    const serial = sim.serial;
    sim.serial += 1;
    assert(serial < (1 << (31 - slot_bits)));
    const window = sim.random().intRangeAtMost(u32, sim.faults.window_min, sim.faults.window_max);
    connection.* = .{
        .state = .used,
        .kind = kind,
        .fd = @intCast(serial << slot_bits | slot),
        .window = window,
        .to_proxy = .{ .bytes = connection.to_proxy.bytes },
        .to_peer = .{ .bytes = connection.to_peer.bytes },
    };
    return connection;
}

fn maybeFree(sim: *Sim, connection: *Connection) void {
    if (connection.proxy_open or connection.peer_open) return;
    assert(connection.ops_pending == 0);
    const slot: u16 = @intCast(connection - sim.connections.ptr);
    connection.state = .free;
    connection.fd = -1;
    sim.free_slots[sim.free_count] = slot;
    sim.free_count += 1;
}

/// The connection behind a proxy fd that must be open: anything else is a use after release.
fn lookup(sim: *Sim, fd: linux.fd_t, comptime what: []const u8) *Connection {
    if (fd < 0) std.debug.panic("sim: " ++ what ++ " fd {d}, which is not a socket", .{fd});
    const connection = &sim.connections[@as(u32, @intCast(fd)) & (connections_max - 1)];
    if (connection.state != .used or connection.fd != fd or !connection.proxy_open) {
        std.debug.panic("sim: " ++ what ++ " fd {d} after it was closed (used after release)", .{fd});
    }
    return connection;
}

/// The connection behind a peer's end: a simulator bug if it is not the peer's.
fn peer(sim: *Sim, fd: linux.fd_t) *Connection {
    const connection = &sim.connections[@as(u32, @intCast(fd)) & (connections_max - 1)];
    if (connection.state != .used or connection.fd != fd or !connection.peer_open) {
        std.debug.panic("sim: peer end of fd {d} used after the peer closed it", .{fd});
    }
    return connection;
}

fn startConnect(sim: *Sim, connection: *Connection, address: *const Address) void {
    sim.stats.connects += 1;
    const latency = sim.random().uintAtMost(u64, sim.faults.connect_latency_max_ns);
    connection.connect = .pending;
    connection.connect_due_ns = sim.now_ns + latency;
    const verdict = sim.connector.function(sim.connector.context, address, connection.fd);
    connection.connect_verdict = verdict;
    switch (verdict) {
        .accept => connection.peer_open = true,
        .blackhole => connection.connect_due_ns = std.math.maxInt(u64),
        .refuse, .unreachable_host, .timeout => {},
    }
}

fn isReady(sim: *Sim, completion: *const Completion) bool {
    const connection = sim.lookup(completion.operation.socket().fd, "an operation is pending on");
    return switch (completion.operation) {
        .none, .accept, .read => unreachable,
        .connect => connection.connect_verdict != .blackhole and sim.now_ns >= connection.connect_due_ns,
        .recv, .poll_readable, .splice_in => connection.proxy_reset or connection.to_proxy.len > 0 or
            connection.to_proxy_eof,
        .send, .splice_out => connection.proxy_reset or connection.to_peer_eof or !connection.peer_open or
            connection.to_peer.len < connection.window,
    };
}

/// Sets the result of an operation that is ready, with its effect on the connection.
fn perform(sim: *Sim, entry: Inflight) void {
    const completion = entry.completion;
    if (checksum(completion) != entry.checksum) {
        std.debug.panic("sim: fd {d}: the buffer of a pending send changed before the kernel read it", .{
            completion.operation.socket().fd,
        });
    }
    const connection = sim.lookup(completion.operation.socket().fd, "an operation is pending on");
    sim.sequence += 1;
    switch (completion.operation) {
        .none, .accept, .read => unreachable,
        .connect => {
            completion.result = .{ .connect = switch (connection.connect_verdict) {
                .accept => {},
                .refuse => error.ConnectionRefused,
                .unreachable_host => error.HostUnreachable,
                .timeout => error.TimedOut,
                .blackhole => unreachable,
            } };
            connection.connect = if (connection.connect_verdict == .accept) .connected else .failed;
        },
        .poll_readable => completion.result = .{ .poll_readable = {} },
        .recv => |op| completion.result = .{ .recv = sim.performRecv(connection, op.buffer, completion.cancel != .none) },
        .send => |op| completion.result = .{ .send = sim.performSend(connection, op.buffer) },
        .splice_in => |op| {
            sim.stats.splices += 1;
            const pipe = sim.pipeEnd(op.pipe, .write);
            var bytes: [pipe_capacity]u8 = undefined;
            const room = @min(op.len, pipe_capacity - pipe.ring.len);
            const result = sim.performRecv(connection, bytes[0..room], completion.cancel != .none);
            if (result) |n| pipe.ring.push(bytes[0..n]) else |_| {}
            completion.result = .{ .splice_in = result };
        },
        .splice_out => |op| {
            sim.stats.splices += 1;
            const pipe = sim.pipeEnd(op.pipe, .read);
            var bytes: [pipe_capacity]u8 = undefined;
            const held = pipe.ring.peek(bytes[0..op.len]);
            const result = sim.performSend(connection, bytes[0..held]);
            if (result) |n| pipe.ring.drop(@intCast(n)) else |_| {}
            completion.result = .{ .splice_out = result };
        },
    }
}

pub fn openPipe(sim: *Sim) sys.PipeError!Loop.Pipe {
    if (sim.chance(sim.faults.socket_fail_percent)) {
        sim.stats.sockets_failed += 1;
        return error.ProcessFdQuotaExceeded;
    }
    for (&sim.pipes, 0..) |*pipe, index| {
        if (pipe.open) continue;
        pipe.* = .{ .open = true, .fd = pipe_fd_base | @as(linux.fd_t, @intCast((sim.pipe_serial << 7) | (index << 1))) };
        pipe.ring = .{ .bytes = &pipe.memory };
        sim.pipe_serial = (sim.pipe_serial + 1) % (1 << 22);
        return .{ .read = pipe.fd, .write = pipe.fd + 1, .capacity = pipe_capacity };
    }
    return error.ProcessFdQuotaExceeded;
}

/// Closes both ends. No pending splice may name it.
pub fn closePipe(sim: *Sim, read_fd: linux.fd_t) void {
    const pipe = sim.pipeEnd(read_fd, .read);
    // A cancelled splice has its outcome already and will not touch the pipe again.
    for (sim.inflight[0..sim.inflight_count]) |entry| if (entry.completion.cancel == .none) switch (entry.completion.operation) {
        .splice_in => |op| if (op.pipe == read_fd + 1) std.debug.panic("sim: pipe {d} closed under a pending splice", .{read_fd}),
        .splice_out => |op| if (op.pipe == read_fd) std.debug.panic("sim: pipe {d} closed under a pending splice", .{read_fd}),
        else => {},
    };
    pipe.* = .{};
}

/// Open pipes (the simulator's leak check).
pub fn openPipes(sim: *const Sim) u32 {
    var count: u32 = 0;
    for (&sim.pipes) |*pipe| count += @intFromBool(pipe.open);
    return count;
}

/// The pipe an fd names, checked: an unknown or stale fd, or the wrong end, is a bug.
fn pipeEnd(sim: *Sim, fd: linux.fd_t, end: enum { read, write }) *SimPipe {
    if (fd >= pipe_fd_base) {
        const index: usize = @intCast((fd >> 1) & (pipes_max - 1));
        const pipe = &sim.pipes[index];
        const read_fd = fd - @intFromBool(end == .write);
        if (pipe.open and pipe.fd == read_fd and (fd & 1) == @intFromBool(end == .write)) return pipe;
    }
    std.debug.panic("sim: fd {d} is not the {t} end of an open pipe", .{ fd, end });
}

fn performRecv(sim: *Sim, connection: *Connection, buffer: []u8, cancelled: bool) sys.RecvError!usize {
    // What arrived before a reset is read first (Linux reads the queue, then the error).
    if (connection.to_proxy.len == 0) {
        if (connection.proxy_reset) return error.ConnectionResetByPeer;
        assert(connection.to_proxy_eof);
        return 0;
    }
    var n: u32 = @intCast(@min(buffer.len, connection.to_proxy.len));
    if (n > 1 and sim.chance(sim.faults.short_read_percent)) {
        n = sim.random().intRangeAtMost(u32, 1, n - 1);
        sim.stats.short_reads += 1;
    }
    assert(connection.to_proxy.pop(buffer[0..n]) == n);
    connection.proxy_read_total += n;
    if (!cancelled) connection.proxy_read_committed = connection.proxy_read_total;
    connection.recvs.add(connection.proxy_read_total, sim.sequence);
    return n;
}

fn performSend(sim: *Sim, connection: *Connection, buffer: []const u8) sys.SendError!usize {
    if (connection.to_peer_eof) {
        // Sending after our own shutdown(SHUT_WR): EPIPE.
        sim.stats.sends_after_shutdown += 1;
        return error.BrokenPipe;
    }
    if (connection.proxy_reset) {
        return if (sim.random().boolean()) error.ConnectionResetByPeer else error.BrokenPipe;
    }
    if (!connection.peer_open) {
        // The peer closed: these bytes go out, and its kernel answers with a reset.
        connection.proxy_reset = true;
        return buffer.len;
    }
    const space = connection.window - connection.to_peer.len;
    var n: u32 = @intCast(@min(buffer.len, space));
    if (n > 1 and sim.chance(sim.faults.short_write_percent)) {
        n = sim.random().intRangeAtMost(u32, 1, n - 1);
        sim.stats.short_writes += 1;
    }
    connection.to_peer.push(buffer[0..n]);
    connection.proxy_sent_total += n;
    connection.sends.add(connection.proxy_sent_total, sim.sequence);
    return n;
}

fn deliver(sim: *Sim, loop: *Loop, completion: *Completion) void {
    if (sim.tracing) sim.traceResult(completion);
    completion.cancel = .none;
    sim.stats.completions += 1;
    loop.pushReady(completion);
}

fn traceResult(sim: *const Sim, completion: *const Completion) void {
    const fd = completion.operation.socket().fd;
    const ms = @as(f64, @floatFromInt((sim.now_ns - 1000 * std.time.ns_per_s) / std.time.ns_per_us)) / 1000;
    const cancelled = if (completion.cancel != .none) " (cancelled)" else "";
    switch (completion.operation) {
        .recv => std.debug.print("       {d:>10.3}ms kernel fd {d}: recv {any}{s}\n", .{ ms, fd, completion.result.recv, cancelled }),
        .send => std.debug.print("       {d:>10.3}ms kernel fd {d}: send {any}{s}\n", .{ ms, fd, completion.result.send, cancelled }),
        .connect => std.debug.print("       {d:>10.3}ms kernel fd {d}: connect {any}{s}\n", .{ ms, fd, completion.result.connect, cancelled }),
        .poll_readable => std.debug.print("       {d:>10.3}ms kernel fd {d}: poll {any}{s}\n", .{ ms, fd, completion.result.poll_readable, cancelled }),
        .splice_in => std.debug.print("       {d:>10.3}ms kernel fd {d}: splice in {any}{s}\n", .{ ms, fd, completion.result.splice_in, cancelled }),
        .splice_out => std.debug.print("       {d:>10.3}ms kernel fd {d}: splice out {any}{s}\n", .{ ms, fd, completion.result.splice_out, cancelled }),
        else => {},
    }
}

fn inflightIndex(sim: *const Sim, completion: *const Completion) usize {
    for (sim.inflight[0..sim.inflight_count], 0..) |entry, i| {
        if (entry.completion == completion) return i;
    }
    unreachable; // Submitted, so in flight.
}

fn inflightRemoveAt(sim: *Sim, index: usize) void {
    sim.inflight_count -= 1;
    sim.inflight[index] = sim.inflight[sim.inflight_count];
}

fn checksum(completion: *const Completion) u64 {
    return switch (completion.operation) {
        .send => |op| std.hash.Wyhash.hash(0, op.buffer),
        else => 0,
    };
}

test "sim: a peer's bytes arrive in order and in pieces; a cancel calls back once" {
    const allocator = std.testing.allocator;
    const Refuse = struct {
        fn connect(context: *anyopaque, address: *const Address, fd: linux.fd_t) Verdict {
            _ = .{ context, address, fd };
            return .refuse;
        }
    };
    var unused: u8 = 0;
    var sim: Sim = try .init(allocator, .{ .context = &unused, .function = Refuse.connect });
    defer sim.deinit(allocator);
    sim.reset(42, .{ .deliver_percent = 50, .short_read_percent = 100, .window_min = 7, .window_max = 7, .cancel_late_percent = 50 });
    var loop = Loop.initSim(&sim);
    defer loop.deinit();

    const Reader = struct {
        received: [64]u8 = undefined,
        len: usize = 0,
        callbacks: u32 = 0,
        last: ?sys.RecvError!usize = null,
        fn callback(reader: *@This(), result: sys.RecvError!usize) void {
            reader.callbacks += 1;
            reader.last = result;
            const n = result catch return;
            reader.len += n;
        }
    };
    const fd = sim.openClient();
    var socket: Socket = .init(fd);
    var completion: Completion = .{};
    var reader: Reader = .{};
    const text = "the quick brown fox jumps over the lazy dog";
    var written: usize = 0;
    while (reader.len < text.len) {
        if (written < text.len) switch (sim.peerWrite(fd, text[written..])) {
            .bytes => |n| written += n,
            .closed => unreachable,
        };
        if (!completion.isPending()) {
            loop.recv(&completion, &socket, reader.received[reader.len..], Reader, &reader, Reader.callback);
        }
        try loop.tick();
    }
    try std.testing.expectEqualStrings(text, reader.received[0..reader.len]);
    try std.testing.expect(reader.callbacks > 1); // Short reads and a window of 7 bytes.

    // Nothing to read: the cancel's callback is Canceled, exactly once.
    const before = reader.callbacks;
    loop.recv(&completion, &socket, reader.received[0..], Reader, &reader, Reader.callback);
    loop.cancel(&completion);
    for (0..20) |_| try loop.tick();
    try std.testing.expectEqual(before + 1, reader.callbacks);
    try std.testing.expectError(error.Canceled, reader.last.?);
    try std.testing.expect(!sim.hasPending(fd));
    loop.close(&socket);
    try std.testing.expect(sim.peerRead(fd, reader.received[0..]) == .eof);
    sim.peerClose(fd);
    try std.testing.expectEqual(@as(u32, 0), sim.usedCount());
}
