//! Active HTTP health checks for one pool: every backend gets a probe (connect, send a small
//! request, read the status line, close) `interval_ns` after its previous one finished, and
//! every result goes to a listener that owns the pool's health state. Runs on the control
//! thread's loop, never a worker's, and allocates only in `init`.
//!
//! Decisions a reader must know:
//! - A backend starts up (a cold start must not wait for probes). `rise` passes in a row bring
//!   a down backend up, `fall` failures in a row take an up one down. Every result is reported
//!   (passes end passive ejections), with `changed` set on the one result that flips the state.
//! - One probe per backend at a time and one operation per probe at a time (connect, then
//!   send, then recv), so a probe needs one Completion, and between callbacks "the socket is
//!   open" is exactly "an operation is pending". A deadline or `stop` cancels that operation
//!   and its callback closes the socket: nothing ever closes a socket with an operation on it.
//! - Only the status line is read. The socket is closed as soon as it is in, and whatever else
//!   the backend sends is dropped (unread bytes make the kernel answer with a reset).
//! - The listener runs only from loop callbacks, never inside `start` or `stop`: even a
//!   socket(2) failure waits for the probe's deadline to be reported.
//! - A pool that speaks TLS to its backends is probed over TLS too, with the pool's context
//!   (verification, SNI, client certificate): a backend whose certificate fails is down, with
//!   AWS-LC's reason. Each probe keeps its backend's newest session, so probes after the
//!   first resume. AWS-LC's memory here comes from one bounded pool of the control thread's
//!   (`Tls.memory`), entered around every call, so probes never touch the general heap.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Completion = loop_ns.Completion;
const Socket = loop_ns.Socket;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("../config/Config.zig");
const tls_ns = @import("../tls/tls.zig");
const http2_probe = @import("http2_probe.zig");
const proxy_protocol = @import("../policy/proxy_protocol.zig");

const Checker = @This();

loop: *Loop,
listener: Listener,
probes: []Probe,
/// Every probe's composed request: `requestBytesMax` bytes per backend.
requests: []u8,
/// Between probes: every timer in it waits `interval_ns`.
interval_queue: TimerQueue,
/// During a probe: every timer in it waits `timeout_ns`, from connect start to status line.
timeout_queue: TimerQueue,
status_min: u16,
status_max: u16,
rise: u8,
fall: u8,
state: State,
/// "timed out after N ms", the same for every probe, composed once.
timeout_reason_buffer: [reason_bytes_max]u8,
timeout_reason_len: u8,
/// Probes speak TLS (the pool's); null: plain TCP.
tls: ?Tls = null,
/// Probes speak HTTP/2 (http2_probe.zig), for members that speak only that.
http2: bool = false,
/// Each probe connection starts with a PROXY protocol v2 LOCAL header, before TLS if any: the
/// pool sends one on every connection (`send_proxy`), and a backend that requires it drops a
/// connection without one. Set before `start`.
send_proxy: bool = false,
/// The memory the checker lives in, when its owner gave it its own (set after `init`): a
/// membership change replaces the checker, as often as a backend name's addresses change,
/// so a replaced one gives its memory back (`destroy`).
arena: ?std.heap.ArenaAllocator = null,

/// How probes speak TLS to a pool's backends.
pub const Tls = struct {
    context: *tls_ns.ClientContext,
    /// Per backend: the name its certificate must carry (SNI unless an IP address).
    names: []const []const u8,
    /// The control thread's memory for AWS-LC (outlives the checker).
    memory: *tls_ns.memory.Pool,
};

pub const Report = struct {
    backend_index: u16,
    passed: bool,
    /// This result flipped the backend's active state (rise passes in a row brought it up, or
    /// fall failures in a row took it down).
    changed: bool,
    /// The active state after this result.
    up: bool,
    /// Why it failed, for a log line; empty when passed. Valid only during the callback.
    reason: []const u8,
};

pub const Listener = struct {
    context: *anyopaque,
    function: *const fn (*anyopaque, Report) void,
};

pub const State = enum { initialized, running, stopping };

/// Config validation caps the probe's path and Host at these; the requests are sized from them.
pub const path_bytes_max = 1024;
pub const host_bytes_max = 1024;

/// A status line and then some: more than this without its CRLF is a malformed response.
const response_bytes_max = 512;
/// The longest reason composed at run time: "timed out after " + 20 digits + " ms".
const reason_bytes_max = 48;

// The request, in the order it is written (RFC 9112 §3: request-line, then fields).
const request_version = " HTTP/1.1\r\n";
const request_host = "Host: ";
const request_rest = "\r\nUser-Agent: sluice-health-check\r\nConnection: close\r\n\r\n";

pub const reason_malformed = "malformed response";
pub const reason_closed = "closed before a status line";
pub const reason_refused = "refused by the server's GOAWAY or RST_STREAM";
const reason_reset = "connection reset";

pub const InitError = std.mem.Allocator.Error || error{ HealthPathInvalid, HealthHostInvalid };

/// In place: the Checker must not move after this (its probes point at it, and once started
/// the loop holds its timer queues). `check` and `backends` need not outlive this call.
pub fn init(
    checker: *Checker,
    allocator: std.mem.Allocator,
    loop: *Loop,
    check: *const Config.HealthCheck,
    backends: []const Config.Backend,
    listener: Listener,
    probe_tls: ?Tls,
    /// The pool's members speak HTTP/2 (`protocol = h2c` or `h2`): probes do too.
    http2: bool,
) InitError!void {
    assert(check.enabled());
    assert(backends.len > 0 and backends.len <= Config.backends_count_max);
    assert(check.path.len <= path_bytes_max and check.host.len <= host_bytes_max);
    assert(check.rise > 0 and check.fall > 0);
    assert(check.status_min <= check.status_max);
    // Bytes that would split or end the request line or the Host field (request smuggling
    // into our own probe) are refused here, whatever the config layer checked.
    if (check.path[0] != '/' or !isVisible(check.path)) return error.HealthPathInvalid;
    if (!isVisible(check.host)) return error.HealthHostInvalid;

    const request_bytes = if (http2)
        http2_probe.requestBytesMax(check.path.len, check.host.len)
    else
        requestBytesMax(check.path.len, check.host.len);
    const probes = try allocator.alloc(Probe, backends.len);
    errdefer allocator.free(probes);
    const requests = try allocator.alloc(u8, request_bytes * backends.len);
    errdefer allocator.free(requests);

    checker.* = .{
        .loop = loop,
        .listener = listener,
        .probes = probes,
        .requests = requests,
        .interval_queue = .init(check.interval_ns),
        .timeout_queue = .init(check.timeout_ns),
        .status_min = check.status_min,
        .status_max = check.status_max,
        .rise = check.rise,
        .fall = check.fall,
        .state = .initialized,
        .timeout_reason_buffer = undefined,
        .timeout_reason_len = 0,
        .tls = probe_tls,
        .http2 = http2,
    };
    const timeout_ms = std.math.divCeil(u64, check.timeout_ns, std.time.ns_per_ms) catch
        unreachable; // The divisor is not zero.
    const timeout_reason = std.fmt.bufPrint(
        &checker.timeout_reason_buffer,
        "timed out after {d} ms",
        .{timeout_ms},
    ) catch unreachable; // Sized for a u64.
    checker.timeout_reason_len = @intCast(timeout_reason.len);

    for (probes, backends, 0..) |*probe, *backend, index| {
        const buffer = requests[index * request_bytes ..][0..request_bytes];
        probe.* = .{
            .checker = checker,
            .address = backend.address,
            .request = if (http2)
                http2_probe.compose(buffer, check, &backend.address, probe_tls != null)
            else
                composeRequest(buffer, check, &backend.address),
            .index = @intCast(index),
        };
        if (probe_tls != null) {
            const record_bytes = tls_ns.Engine.record_bytes_max;
            probe.tls = .{ .stream = .{ .records = .{
                .in = try allocator.alloc(u8, record_bytes),
                .out = try allocator.alloc(u8, record_bytes),
            } } };
        }
    }
}

/// After `stopped()`: its timer queues leave the loop and its memory is freed.
pub fn deinit(checker: *Checker, allocator: std.mem.Allocator) void {
    assert(checker.stopped());
    for (checker.probes) |*probe| assert(!probe.timer.isArmed());
    if (checker.interval_queue.registered) checker.loop.timerQueueUnregister(&checker.interval_queue);
    if (checker.timeout_queue.registered) checker.loop.timerQueueUnregister(&checker.timeout_queue);
    if (checker.tls) |probe_tls| {
        probe_tls.memory.enter();
        defer probe_tls.memory.leave();
        for (checker.probes) |*probe| {
            const t = &probe.tls.?;
            assert(t.engine == null);
            t.resumption.forget();
            allocator.free(t.stream.records.in);
            allocator.free(t.stream.records.out);
        }
    }
    allocator.free(checker.probes);
    allocator.free(checker.requests);
    checker.* = undefined;
}

/// `deinit` for a checker that lives in its own `arena`, which is freed with it.
pub fn destroy(checker: *Checker) void {
    var arena = checker.arena.?;
    checker.deinit(arena.allocator());
    arena.deinit();
}

/// Probe `position` (the `position`th of the `backends` given to `init`) reports as member
/// `index` of its pool: a pool whose members sit in slots (upstream/Members.zig) probes only
/// the slots that hold one. Before `start`.
pub fn reindex(checker: *Checker, position: u16, index: u16) void {
    assert(checker.state == .initialized);
    checker.probes[position].index = index;
}

/// A backend's active state before the first probe, when it is already known (a reload that
/// rebuilt the pool keeps what the previous checks found): `rise` passes bring a down one up.
pub fn setInitialUp(checker: *Checker, position: u16, up: bool) void {
    assert(checker.state == .initialized);
    checker.probes[position].streak.up = up;
}

/// Registers its timer queues with the loop and sends the first probe to every backend at once.
/// Call on the loop's thread, after the proxy's listeners are up.
pub fn start(checker: *Checker) void {
    assert(checker.state == .initialized);
    assert(checker.probes.len > 0);
    checker.loop.timerQueueRegister(&checker.interval_queue);
    checker.loop.timerQueueRegister(&checker.timeout_queue);
    checker.state = .running;
    for (checker.probes) |*probe| probe.begin();
}

/// Cancels everything; once `stopped()` is true (after enough ticks), deinit is safe. The
/// listener hears nothing more, not even about probes that were in flight. Idempotent.
pub fn stop(checker: *Checker) void {
    if (checker.state != .running) {
        checker.state = .stopping;
        return;
    }
    checker.state = .stopping;
    for (checker.probes) |*probe| {
        checker.loop.timerCancel(&probe.timer);
        // Its callback sees `.stopping` and closes the socket.
        if (probe.completion.isPending()) checker.loop.cancel(&probe.completion);
    }
}

pub fn stopped(checker: *const Checker) bool {
    if (checker.state == .running) return false;
    for (checker.probes) |*probe| {
        if (probe.completion.isPending()) return false;
        assert(probe.socket.fd == -1);
    }
    return true;
}

fn timeoutReason(checker: *const Checker) []const u8 {
    assert(checker.timeout_reason_len > 0);
    return checker.timeout_reason_buffer[0..checker.timeout_reason_len];
}

// --- One probe ----------------------------------------------------------------------------

/// One backend's probe and its rise/fall streak. Lives in `Checker.probes`, which never moves:
/// the loop holds pointers to its socket, completion and timer.
const Probe = struct {
    checker: *Checker,
    address: Address,
    /// This backend's composed request, inside `Checker.requests`.
    request: []const u8,
    /// fd -1 between probes.
    socket: Socket = .{ .fd = -1 },
    /// The one operation in flight: connect, then send, then recv.
    completion: Completion = .{},
    /// In the timeout queue during a probe, in the interval queue between probes.
    timer: Timer = .{},
    /// Monotonic, read from the clock in `begin`: the loop's `now` is stale outside a tick.
    started_ns: u64 = 0,
    sent_bytes: u32 = 0,
    received_bytes: u32 = 0,
    /// The deadline passed with an operation in flight: its callback reports the timeout.
    timed_out: bool = false,
    /// socket(2) failed in `begin`: reported when the deadline comes.
    socket_failure: ?[]const u8 = null,
    streak: Streak = .{},
    index: u16,
    response: [response_bytes_max]u8 = undefined,
    reason_buffer: [reason_bytes_max]u8 = undefined,
    /// With TLS: the probe's engine, records and session (see `ProbeTls`).
    tls: ?ProbeTls = null,

    fn begin(probe: *Probe) void {
        const checker = probe.checker;
        assert(checker.state == .running);
        assert(probe.socket.fd == -1);
        assert(!probe.completion.isPending());
        probe.sent_bytes = 0;
        probe.received_bytes = 0;
        probe.timed_out = false;
        probe.socket_failure = null;
        probe.started_ns = sys.clockMonotonicNs();
        probe.armDeadline();
        const flags = linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC;
        const fd = sys.socket(probe.address.family(), flags, 0) catch |err| {
            probe.socket_failure = socketReason(err);
            return;
        };
        // The request is one small write: it must not wait for Nagle (which a Unix socket has not).
        if (!probe.address.isUnix()) sys.setsockoptInt(fd, linux.IPPROTO.TCP, linux.TCP.NODELAY, 1) catch {};
        probe.socket = .init(fd);
        const loop = checker.loop;
        const address = &probe.address;
        loop.connect(&probe.completion, &probe.socket, address, Probe, probe, connectCallback);
    }

    fn connectCallback(probe: *Probe, result: sys.ConnectError!void) void {
        if (probe.interrupted()) return;
        result catch |err| return probe.finish(connectReason(err, &probe.address));
        if (probe.checker.send_proxy) {
            // 16 bytes into a new socket's empty buffer: taken whole, or the probe fails.
            const sent = probe.checker.loop.sendNow(&probe.socket, proxy_protocol.v2_local) catch 0;
            if (sent != proxy_protocol.v2_local.len) return probe.finish("cannot send the PROXY protocol header");
        }
        if (probe.tls != null) return probe.tlsStart();
        probe.sendRest();
    }

    fn sendRest(probe: *Probe) void {
        assert(probe.sent_bytes < probe.request.len);
        const rest = probe.request[probe.sent_bytes..];
        if (probe.tls != null) return TlsStream.send(probe, rest, sendRestCallback);
        const loop = probe.checker.loop;
        loop.send(&probe.completion, &probe.socket, rest, Probe, probe, sendRestCallback);
    }

    fn sendRestCallback(probe: *Probe, result: sys.SendError!usize) void {
        if (probe.interrupted()) return;
        const sent = result catch |err| return probe.finish(sendReason(err));
        probe.sent_bytes += @intCast(sent);
        assert(probe.sent_bytes <= probe.request.len);
        if (probe.sent_bytes < probe.request.len) return probe.sendRest();
        probe.receive();
    }

    fn receive(probe: *Probe) void {
        assert(probe.received_bytes < probe.response.len);
        const free = probe.response[probe.received_bytes..];
        if (probe.tls != null) return TlsStream.recv(probe, free, receiveCallback);
        const loop = probe.checker.loop;
        loop.recv(&probe.completion, &probe.socket, free, Probe, probe, receiveCallback);
    }

    fn receiveCallback(probe: *Probe, result: sys.RecvError!usize) void {
        if (probe.interrupted()) return;
        const received = result catch |err| return probe.finish(recvReason(err));
        if (received == 0) return probe.finish(reason_closed);
        probe.received_bytes += @intCast(received);
        probe.judgeReceived();
    }

    /// Judges the status line once it is in; else reads on.
    fn judgeReceived(probe: *Probe) void {
        assert(probe.received_bytes <= probe.response.len);
        if (probe.checker.http2) return probe.judgeReceivedHttp2();
        switch (parseStatusLine(probe.response[0..probe.received_bytes])) {
            .status => |status| probe.judge(status),
            .malformed => probe.finish(reason_malformed),
            // A status line longer than the buffer is not one a health endpoint sends.
            .incomplete => probe.readOn(),
        }
    }

    /// The same for an HTTP/2 answer: the frames before its HEADERS are dropped as they are
    /// read, so only one of them (small, from a server's first flight) must fit the buffer.
    fn judgeReceivedHttp2(probe: *Probe) void {
        switch (http2_probe.read(probe.response[0..probe.received_bytes])) {
            .status => |status| probe.judge(status),
            .malformed => probe.finish(reason_malformed),
            .refused => probe.finish(reason_refused),
            .incomplete => |more| {
                const kept = probe.received_bytes - more.skip;
                std.mem.copyForwards(u8, probe.response[0..kept], probe.response[more.skip..probe.received_bytes]);
                probe.received_bytes = @intCast(kept);
                probe.readOn();
            },
        }
    }

    fn readOn(probe: *Probe) void {
        const full = probe.received_bytes == probe.response.len;
        if (full) return probe.finish(reason_malformed);
        probe.receive();
    }

    fn judge(probe: *Probe, status: u16) void {
        const checker = probe.checker;
        assert(status >= 100 and status <= 599);
        const passed = status >= checker.status_min and status <= checker.status_max;
        if (passed) return probe.finish(null);
        const reason = std.fmt.bufPrint(&probe.reason_buffer, "status {d}", .{status}) catch
            unreachable; // Three digits.
        probe.finish(reason);
    }

    // --- Over TLS: the handshake (tls.stream), then the request and the response through it

    fn tlsStart(probe: *Probe) void {
        const checker_tls = probe.checker.tls.?;
        const t = &probe.tls.?;
        t.* = .{ .stream = .{ .records = .{ .in = t.stream.records.in, .out = t.stream.records.out } }, .resumption = t.resumption };
        t.engine = blk: {
            checker_tls.memory.enter();
            defer checker_tls.memory.leave();
            break :blk tls_ns.Engine.initClient(checker_tls.context, .{
                .server_name = checker_tls.names[probe.index],
                .resumption = &t.resumption,
            }) catch null;
        };
        if (t.engine == null) return probe.finish("TLS: out of memory for the probe");
        TlsStream.handshakeStep(probe);
    }

    fn tlsState(probe: *Probe) *tls_ns.stream.State(Probe) {
        return &probe.tls.?.stream;
    }

    fn tlsEngine(probe: *Probe) *tls_ns.Engine {
        return &probe.tls.?.engine.?;
    }

    fn tlsSocket(probe: *Probe) *Socket {
        return &probe.socket;
    }

    fn tlsLoop(probe: *Probe) *Loop {
        return probe.checker.loop;
    }

    /// One operation at a time: the receives and the sends share the probe's completion.
    fn tlsCompletion(probe: *Probe) *Completion {
        return &probe.completion;
    }

    /// The checker counts no operations: "an operation is pending" is the completion's own.
    fn tlsSubmit(_: *Probe) void {}

    /// The deadline passed or the checker is stopping: the probe's callback says which.
    fn tlsEnding(probe: *Probe) bool {
        return probe.timed_out or probe.checker.state == .stopping;
    }

    fn tlsMemory(probe: *Probe) *tls_ns.memory.Pool {
        return probe.checker.tls.?.memory;
    }

    fn tlsHandshakeFailed(probe: *Probe, _: tls_ns.Failure) void {
        const memory = probe.checker.tls.?.memory;
        const reason = blk: {
            memory.enter();
            defer memory.leave();
            break :blk probe.tls.?.describe(&probe.tls.?.engine.?);
        };
        probe.finish(reason);
    }

    fn tlsHandshakeBroken(probe: *Probe, broken: tls_ns.stream.Broken) void {
        probe.finish(switch (broken) {
            .send => |err| sendReason(err),
            .recv => |err| recvReason(err),
        });
    }

    /// The probe's engine goes (its session stays with the probe, for the next one).
    fn tlsEnd(probe: *Probe) void {
        const t = &(probe.tls orelse return);
        var engine = t.engine orelse return;
        const memory = probe.checker.tls.?.memory;
        memory.enter();
        defer memory.leave();
        engine.deinit();
        t.engine = null;
    }

    /// Every I/O callback starts here. True when the probe ended while its operation was in
    /// flight: the checker is stopping (the socket is closed, and that is all) or the deadline
    /// passed (the timeout is reported, whatever the operation's own result was).
    fn interrupted(probe: *Probe) bool {
        const checker = probe.checker;
        assert(!probe.completion.isPending());
        assert(probe.socket.fd >= 0);
        switch (checker.state) {
            .initialized => unreachable, // Nothing is submitted before `start`.
            .stopping => {
                probe.tlsEnd();
                checker.loop.close(&probe.socket);
                return true;
            },
            .running => {},
        }
        if (!probe.timed_out) return false;
        probe.finish(checker.timeoutReason());
        return true;
    }

    /// Ends the probe (null `failure`: it passed): closes the socket, counts the result, arms the
    /// next probe, then tells the listener, which may call `stop`.
    fn finish(probe: *Probe, failure: ?[]const u8) void {
        const checker = probe.checker;
        assert(checker.state == .running);
        assert(!probe.completion.isPending());
        probe.tlsEnd();
        if (probe.socket.fd >= 0) checker.loop.close(&probe.socket);
        const passed = failure == null;
        const changed = probe.streak.record(passed, checker.rise, checker.fall);
        probe.armInterval();
        checker.listener.function(checker.listener.context, .{
            .backend_index = probe.index,
            .passed = passed,
            .changed = changed,
            .up = probe.streak.up,
            .reason = failure orelse "",
        });
    }

    fn armDeadline(probe: *Probe) void {
        const checker = probe.checker;
        const queue = &checker.timeout_queue;
        checker.loop.timerArm(queue, &probe.timer, Probe, probe, armDeadlineCallback);
    }

    fn armDeadlineCallback(probe: *Probe) void {
        const checker = probe.checker;
        assert(checker.state == .running); // `stop` cancels every timer.
        // `start` arms deadlines outside a tick, from the loop's clock as of its last tick,
        // which may be long ago: a timeout must never be reported before it has passed.
        const elapsed_ns = checker.loop.now() -| probe.started_ns;
        if (elapsed_ns < checker.timeout_queue.duration_ns) return probe.armDeadline();
        if (probe.completion.isPending()) {
            assert(probe.socket.fd >= 0);
            probe.timed_out = true;
            checker.loop.cancel(&probe.completion); // Its callback reports the timeout.
            return;
        }
        // Nothing in flight during a probe only when socket(2) failed in `begin`.
        assert(probe.socket.fd == -1);
        probe.finish(probe.socket_failure.?);
    }

    fn armInterval(probe: *Probe) void {
        const checker = probe.checker;
        const queue = &checker.interval_queue;
        checker.loop.timerArm(queue, &probe.timer, Probe, probe, armIntervalCallback);
    }

    fn armIntervalCallback(probe: *Probe) void {
        assert(probe.checker.state == .running); // `stop` cancels every timer.
        assert(probe.socket.fd == -1);
        probe.begin();
    }
};

/// One probe's TLS: its engine while a probe runs, the ciphertext each way, and the newest
/// session with its backend.
const ProbeTls = struct {
    engine: ?tls_ns.Engine = null,
    stream: tls_ns.stream.State(Probe),
    resumption: tls_ns.ClientContext.Resumption = .{},
    reason_buffer: [160]u8 = undefined,

    /// AWS-LC's reason, as "TLS: certificate verify failed: self signed certificate".
    fn describe(t: *ProbeTls, engine: *const tls_ns.Engine) []const u8 {
        var reason: [128]u8 = undefined;
        return std.fmt.bufPrint(&t.reason_buffer, "TLS: {s}", .{engine.describe(&reason)}) catch "TLS: handshake failed";
    }
};

/// The probe's TLS: the handshake, the request sealed and the response read, as a client
/// connection's and a try's are (tls.stream), in the probes' memory.
const TlsStream = tls_ns.stream.Stream(Probe, .{
    .state = Probe.tlsState,
    .engine = Probe.tlsEngine,
    .socket = Probe.tlsSocket,
    .loop = Probe.tlsLoop,
    .recv_completion = Probe.tlsCompletion,
    .send_completion = Probe.tlsCompletion,
    .submit = Probe.tlsSubmit,
    .ending = Probe.tlsEnding,
    // Either way the probe fails "closed before a status line"; a read gets no answer out.
    .truncation = .end,
    .answers_alerts = false,
    .handshake_stops = Probe.interrupted,
    .handshake_done = Probe.sendRest,
    .handshake_failed = Probe.tlsHandshakeFailed,
    .handshake_broken = Probe.tlsHandshakeBroken,
    .memory = Probe.tlsMemory,
});

/// Consecutive results and the active state they imply.
pub const Streak = struct {
    up: bool = true,
    passes: u8 = 0,
    failures: u8 = 0,

    /// Counts one result; true when it flipped `up`.
    pub fn record(streak: *Streak, passed: bool, rise: u8, fall: u8) bool {
        assert(rise > 0);
        assert(fall > 0);
        const was_up = streak.up;
        if (passed) {
            streak.failures = 0;
            streak.passes +|= 1;
            if (streak.passes >= rise) streak.up = true;
        } else {
            streak.passes = 0;
            streak.failures +|= 1;
            if (streak.failures >= fall) streak.up = false;
        }
        return streak.up != was_up;
    }
};

// --- Leaves: the request, the status line, the reasons --------------------------------------

/// The longest request for this path and Host; an empty host means the backend's address.
pub fn requestBytesMax(path_bytes: usize, host_bytes: usize) usize {
    assert(path_bytes <= path_bytes_max);
    assert(host_bytes <= host_bytes_max);
    const bytes = "HEAD".len + // The longer method.
        " ".len +
        path_bytes +
        request_version.len +
        request_host.len +
        (if (host_bytes > 0) host_bytes else Address.ip_text_bytes_max) + // Address.authority.
        request_rest.len;
    // About 2 KiB per backend at most, 64 backends: 140 KiB in the worst case.
    assert(bytes <= 4 + 1 + path_bytes_max + 11 + 6 + host_bytes_max + 56);
    return bytes;
}

pub fn composeRequest(
    buffer: []u8,
    check: *const Config.HealthCheck,
    address: *const Address,
) []const u8 {
    var address_text: [Address.text_bytes_max]u8 = undefined;
    const host = if (check.host.len > 0) check.host else address.authority(&address_text);
    var writer: std.Io.Writer = .fixed(buffer);
    writer.print("{s} {s}" ++ request_version ++ request_host ++ "{s}" ++ request_rest, .{
        @tagName(check.method),
        check.path,
        host,
    }) catch unreachable; // Sized by requestBytesMax.
    return writer.buffered();
}

/// Visible ASCII only (RFC 9110 §5.5 VCHAR), as Config validation requires too.
const isVisible = Config.isVisible;

pub const StatusLine = union(enum) {
    incomplete,
    malformed,
    status: u16,
};

/// RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF, strictly:
/// "HTTP/1.0" or "HTTP/1.1", exactly three digits, the second SP required, the reason phrase
/// HTAB / SP / VCHAR / obs-text, and a CRLF (no bare LF). Decides as soon as a byte is wrong.
pub fn parseStatusLine(bytes: []const u8) StatusLine {
    const template = "HTTP/1.x ddd ";
    const checked = @min(bytes.len, template.len);
    for (bytes[0..checked], template[0..checked]) |c, t| {
        const ok = switch (t) {
            'x' => c == '0' or c == '1',
            'd' => c >= '0' and c <= '9',
            else => c == t,
        };
        if (!ok) return .malformed;
    }
    if (bytes.len < template.len) return .incomplete;
    const status = std.fmt.parseInt(u16, bytes[9..12], 10) catch unreachable; // Three digits.
    // RFC 9110 §15: "Values outside the range 100..599 are invalid."
    if (status < 100 or status > 599) return .malformed;
    for (bytes[template.len..], template.len..) |c, index| {
        if (c == '\r') {
            if (index + 1 == bytes.len) return .incomplete;
            return if (bytes[index + 1] == '\n') .{ .status = status } else .malformed;
        }
        const reason_byte = c == '\t' or c == ' ' or (c >= 0x21 and c <= 0x7e) or c >= 0x80;
        if (!reason_byte) return .malformed;
    }
    return .incomplete;
}

fn socketReason(err: sys.SocketError) []const u8 {
    return switch (err) {
        error.AddressFamilyNotSupported => "socket: address family not supported",
        error.ProtocolNotSupported => "socket: protocol not supported",
        error.PermissionDenied => "socket: permission denied",
        error.ProcessFdQuotaExceeded => "socket: out of file descriptors (EMFILE)",
        error.SystemFdQuotaExceeded => "socket: system out of file descriptors (ENFILE)",
        error.SystemResources => "socket: out of kernel memory",
        error.Unexpected => "socket: unexpected error",
    };
}

fn connectReason(err: sys.ConnectError, address: *const Address) []const u8 {
    const unix = address.isUnix();
    return switch (err) {
        error.ConnectionRefused => if (unix) "connection refused (no process listens on the socket)" else "connection refused",
        error.SocketFileMissing => "no such socket file",
        error.PermissionDenied => if (unix) "permission denied on the socket's path" else "connect not permitted",
        error.NetworkUnreachable => "network unreachable",
        error.HostUnreachable => "host unreachable",
        error.TimedOut => "connect timed out in the kernel",
        error.AddressNotAvailable => if (unix) "the socket's listen backlog is full" else "no local address or port available",
        // Only our own cancels, which `interrupted` handles first. A stray one from the kernel
        // is still a failed probe, not a reason to crash the control thread.
        error.Canceled => "connect canceled",
        error.Unexpected => "connect failed",
    };
}

fn sendReason(err: sys.SendError) []const u8 {
    return switch (err) {
        error.BrokenPipe, error.ConnectionResetByPeer => reason_reset,
        error.WouldBlock => unreachable, // The loop retries it; callbacks never see it.
        error.Canceled => "send canceled", // See connectReason.
        error.Unexpected => "send failed",
    };
}

fn recvReason(err: sys.RecvError) []const u8 {
    return switch (err) {
        error.ConnectionResetByPeer => reason_reset,
        error.ConnectionRefused => "connection refused",
        error.TimedOut => "connection timed out in the kernel",
        error.WouldBlock => unreachable, // The loop retries it; callbacks never see it.
        error.Canceled => "receive canceled", // See connectReason.
        error.Unexpected => "receive failed",
    };
}
