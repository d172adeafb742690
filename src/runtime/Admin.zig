//! The admin listener: a small HTTP/1.1 server on the control thread's loop (never a worker's)
//! with three read-only resources, `/healthz` (`200 ok`, or `503 draining` once a drain
//! began), `/metrics` (Prometheus text) and `/status` (JSON), for GET and HEAD, and one
//! action, `POST /reload`: the configuration file is read again and applied through a
//! `Reloader` (runtime/reload.zig), answered 200 with its result text when applied, 422 with
//! the text when refused (the running configuration stays), 404 when there is no file.
//!
//! Decisions a reader must know:
//! - One request per connection, answered with `Connection: close`: scrapers open a
//!   connection per scrape anyway, and it keeps a connection to one operation at a time
//!   (receive the head, send the response, then read until the client closes), so a
//!   connection needs one Completion, and "its socket is open" is "an operation is pending or
//!   it is in a callback". A deadline, an eviction or `stop` cancels that operation and its
//!   callback closes the socket: nothing closes a socket with an operation on it. A request
//!   body (a POST's) is never parsed: what follows the head is read and dropped until the
//!   client closes, so it cannot be taken for a next request.
//! - `/healthz` is what a load balancer in front polls, so idle or slow clients must not be
//!   able to keep it from answering. A connection has `head_timeout_ns` (2 s) from accept to
//!   a whole head, however its bytes trickle in (a slowloris sending a byte every 0.5 s is
//!   closed at 2 s), then `response_timeout_ns` to send the response and `linger_ns` to close.
//!   At most `connections_max` connections at once, and the listener always accepts: a
//!   connection arriving while every slot is taken closes the one that has waited longest on
//!   its client (any phase waits on the client: for its head, for it to read, or for it to
//!   close), once that one has waited `evict_wait_min_ns`, so a new request is never left in
//!   the kernel's backlog behind idle ones, and a burst of scrapes is still answered in turn.
//! - The listener is reachable from a browser on the operator's machine, so it refuses what
//!   only a browser sends: a Host that is not an IP address or `localhost` (a DNS-rebinding
//!   page sends its own name; 421), any `Origin` field (browsers add it to cross-origin
//!   requests and to every POST; 403), and a `POST /reload` without `Sluice-Reload: 1` (a
//!   custom field makes a browser ask with a CORS preflight first, which this listener
//!   never grants; 403). See docs/ARCHITECTURE.md, "Admin listener and metrics".
//! - A reload runs synchronously inside the request's callback, on the control thread: the
//!   loop waits for it, and two reloads never overlap. Its text is written straight into the
//!   connection's response buffer, at most `reload_text_bytes_max` bytes; a longer one is cut
//!   and says so, since a cut report is better than none.
//! - Nothing is allocated after `init`: every connection owns its request buffer and a
//!   response buffer of `response_bytes` (head room plus Snapshot.render_bytes_max, the
//!   largest rendering of any configuration a reload may bring, since the admin cannot grow
//!   later), allocated untouched so a buffer costs memory only where a response was rendered
//!   into it. A response that does not fit (a bug in the sizing sum) is answered 500 and
//!   logged once.
//! - The counters are read from the control thread while workers write them; see
//!   metrics/Histogram.zig for why relaxed loads of single-writer words are enough.
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
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const log = @import("../stdx/log.zig");
const http = @import("../http/http.zig");
const Snapshot = @import("../metrics/Snapshot.zig");
const Prometheus = @import("../metrics/Prometheus.zig");
const Json = @import("../metrics/Json.zig");

const Admin = @This();

loop: *Loop,
/// As configured until `start`, then as bound (the port the kernel chose for port 0).
address: Address,
listener: Socket = .{ .fd = -1 },
accept_completion: Completion = .{},
/// Armed after accept ran out of file descriptors: accepting again at once would spin.
accept_backoff_timer: Timer = .{},
state: State = .initialized,
collector: Collector,
/// Null without a configuration file: `POST /reload` answers 404.
reloader: ?Reloader,
/// Set by the control thread when a drain begins: `/healthz` answers 503 from then on.
draining: bool = false,
connections: [connections_max]Connection,
free: [connections_max]u8,
free_count: u8,
/// A connection accepted while every slot was taken: it gets the slot of the connection
/// evicted for it, once that one has closed. Accepting waits meanwhile. -1: none.
waiting_fd: linux.fd_t = -1,
/// Accept to a whole head.
head_queue: TimerQueue,
/// Head received to response sent.
response_queue: TimerQueue,
/// Response sent to the client's close; also the accept back-off.
linger_queue: TimerQueue,
/// While a connection waits for a slot and none is old enough to be evicted.
evict_queue: TimerQueue = .init(evict_wait_min_ns),
evict_timer: Timer = .{},
/// Filled by `collector` for each `/metrics` and `/status`. Not the Admin's own: the runtime's
/// one snapshot, which its stats line is rendered from too (runtime/collector.zig).
snapshot: *Snapshot,
/// `connections_max` response buffers of `response_bytes` each.
responses: []u8,
overflow_logged: bool = false,

pub const State = enum { initialized, running, stopping };

/// Fills a snapshot with the process's current state (runtime/collector.zig).
pub const Collector = struct {
    context: *anyopaque,
    function: *const fn (*anyopaque, *Snapshot) void,
};

/// Reloads the configuration (runtime/reload.zig), on the control thread, before it
/// returns: true when the new configuration was applied. Either way it writes what happened,
/// for a human, into `out`, whose writes do not fail: past `reload_text_bytes_max` the text
/// is dropped and the response says it was cut. It must not tick the control loop (the
/// admin is inside one of its callbacks).
pub const Reloader = struct {
    context: *anyopaque,
    function: *const fn (context: *anyopaque, out: *std.Io.Writer) bool,
};

pub const Options = struct {
    address: Address,
    /// What `collector` fills; it must outlive the Admin.
    snapshot: *Snapshot,
    collector: Collector,
    reloader: ?Reloader = null,
    /// Accept to a whole head: short, since a head is one packet from any real client.
    head_timeout_ns: u64 = 2 * std.time.ns_per_s,
    response_timeout_ns: u64 = 5 * std.time.ns_per_s,
    linger_ns: u64 = 1 * std.time.ns_per_s,
};

pub const connections_max = 16;
/// A connection is evicted for a newer one only once it has waited this long on its client:
/// a burst of clients is answered in turn (each is served within a tick or two of its
/// accept) instead of evicting each other, while idle ones still make room within this time.
const evict_wait_min_ns = 100 * std.time.ns_per_ms;
const listen_backlog = 64;
/// A request head: a request line and a few fields. Larger is 431 (or 414).
pub const request_bytes = 4096;
const limits: http.Limits = .{
    // Below the buffer, so a head that does not fit is refused by the parser, never cut.
    .header_bytes_max = request_bytes - 1,
    .headers_count_max = 32,
    .target_bytes_max = 1024,
};
/// Room for the response head in front of the body (the body is rendered first, at this
/// offset, so that its length is known when the head is written).
const head_room = 256;
/// A connection's response buffer: the head room and the largest body, 4.3 MiB.
pub const response_bytes = head_room + Snapshot.render_bytes_max;
/// The most a reload's result text takes in a response; the rest is cut.
pub const reload_text_bytes_max = 8 * 1024;
pub const reload_cut_note = std.fmt.comptimePrint(
    "\n(cut: the result is longer than {d} bytes)\n",
    .{reload_text_bytes_max},
);

comptime {
    assert(limits.header_bytes_max < request_bytes);
    assert(connections_max <= std.math.maxInt(u8));
    // A reload's text, the note saying it was cut and a final line feed fit in any body.
    assert(reload_text_bytes_max + reload_cut_note.len + 1 <= Snapshot.render_bytes_max);
}

/// In place: the Admin must not move after this (its connections point at it, and once
/// started the loop holds its timer queues and sockets).
pub fn init(
    admin: *Admin,
    allocator: std.mem.Allocator,
    loop: *Loop,
    options: Options,
) std.mem.Allocator.Error!void {
    assert(options.head_timeout_ns > 0 and options.response_timeout_ns > 0);
    assert(options.linger_ns > 0);
    // 16 connections x (256 B of head room + 10.7 MiB of body, for 2,048 backends): 171 MiB
    // of address space, touched only as responses are rendered. Connections are taken lowest
    // index first, so with one scraper at a time only the first buffer's leading pages become
    // resident, a few tens of KiB for a pool of a few backends.
    comptime assert(connections_max * response_bytes <= 172 * 1024 * 1024);
    const responses = try StaticAllocator.allocUntouched(
        allocator,
        u8,
        null,
        @as(usize, connections_max) * response_bytes,
    );
    errdefer allocator.free(responses);
    admin.* = .{
        .loop = loop,
        .address = options.address,
        .snapshot = options.snapshot,
        .collector = options.collector,
        .reloader = options.reloader,
        .connections = undefined,
        .free = undefined,
        .free_count = connections_max,
        .head_queue = .init(options.head_timeout_ns),
        .response_queue = .init(options.response_timeout_ns),
        .linger_queue = .init(options.linger_ns),
        .responses = responses,
    };
    for (&admin.connections, 0..) |*connection, index| {
        connection.* = .{
            .admin = admin,
            .parser = undefined,
            .response_buffer = responses[index * response_bytes ..][0..response_bytes],
        };
        connection.parser = .init(&connection.headers, limits);
        // Lowest index on top: the buffers used are a prefix.
        admin.free[index] = @intCast(connections_max - 1 - index);
    }
}

/// After `stopped()`, or before `start`.
pub fn deinit(admin: *Admin, allocator: std.mem.Allocator) void {
    assert(admin.state == .initialized or admin.stopped());
    allocator.free(admin.responses);
    admin.* = undefined;
}

pub const StartError = sys.SocketError || sys.SetsockoptError || sys.BindError ||
    sys.ListenError || sys.GetsocknameError;

/// Binds, listens and starts accepting. Call on the loop's thread, once the workers accept.
pub fn start(admin: *Admin) StartError!void {
    assert(admin.state == .initialized);
    const fd = try sys.socket(
        admin.address.family(),
        linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC,
        0,
    );
    errdefer sys.close(fd);
    // No SO_REUSEPORT (unlike the workers' listeners): a second process asking for the same
    // admin port must fail, not share it.
    try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEADDR, 1);
    try sys.bind(fd, admin.address.sockaddr(), admin.address.socklen());
    try sys.listen(fd, listen_backlog);
    var storage: linux.sockaddr.storage = undefined;
    _ = try sys.getsockname(fd, &storage);
    admin.address = Address.fromStorage(&storage);
    admin.listener = .init(fd);
    admin.loop.timerQueueRegister(&admin.head_queue);
    admin.loop.timerQueueRegister(&admin.response_queue);
    admin.loop.timerQueueRegister(&admin.linger_queue);
    admin.loop.timerQueueRegister(&admin.evict_queue);
    admin.state = .running;
    admin.acceptNext();
}

pub fn running(admin: *const Admin) bool {
    return admin.state == .running;
}

/// Cancels everything; once `stopped()` is true (after enough ticks), deinit is safe.
pub fn stop(admin: *Admin) void {
    if (admin.state != .running) {
        admin.state = .stopping;
        return;
    }
    admin.state = .stopping;
    admin.loop.timerCancel(&admin.accept_backoff_timer);
    admin.loop.timerCancel(&admin.evict_timer);
    // The accept's callback closes the listener.
    if (admin.accept_completion.isPending()) {
        admin.loop.cancel(&admin.accept_completion);
    } else {
        admin.closeListener();
    }
    if (admin.waiting_fd >= 0) {
        sys.close(admin.waiting_fd); // Never answered: stopping.
        admin.waiting_fd = -1;
    }
    for (&admin.connections) |*connection| {
        if (connection.phase == .free) continue;
        admin.loop.timerCancel(&connection.timer);
        // Every open connection has its one operation pending; its callback closes it. One
        // already cut short (evicted) had its operation cancelled then.
        assert(connection.completion.isPending());
        if (!connection.ending) admin.loop.cancel(&connection.completion);
    }
}

pub fn stopped(admin: *const Admin) bool {
    if (admin.state == .running) return false;
    if (admin.listener.fd >= 0 or admin.accept_completion.isPending()) return false;
    assert(admin.waiting_fd < 0);
    return admin.free_count == connections_max;
}

fn closeListener(admin: *Admin) void {
    if (admin.listener.fd < 0) return;
    admin.loop.close(&admin.listener);
}

/// Accepting goes on whether slots are free or not (a full admin makes room by eviction);
/// it waits only while a connection accepted that way waits for its slot.
fn acceptNext(admin: *Admin) void {
    assert(admin.state == .running);
    assert(!admin.accept_completion.isPending());
    if (admin.waiting_fd >= 0) return; // `release` resumes.
    admin.loop.accept(&admin.accept_completion, &admin.listener, Admin, admin, acceptCallback);
}

fn acceptCallback(admin: *Admin, result: sys.AcceptError!linux.fd_t) void {
    if (admin.state == .stopping) {
        if (result) |fd| sys.close(fd) else |_| {} // Stopping: whatever came is dropped.
        return admin.closeListener();
    }
    const fd = result catch |err| switch (err) {
        error.Canceled => unreachable, // Only `stop` cancels the accept.
        error.ConnectionAborted, error.WouldBlock => return admin.acceptNext(),
        error.ProcessFdQuotaExceeded,
        error.SystemFdQuotaExceeded,
        error.SystemResources,
        error.Unexpected,
        => {
            // Out of descriptors or memory: try again a little later (the linger period).
            const queue = &admin.linger_queue;
            const timer = &admin.accept_backoff_timer;
            return admin.loop.timerArm(queue, timer, Admin, admin, acceptBackoffCallback);
        },
    };
    assert(admin.waiting_fd < 0); // Accepting waits while one does.
    if (admin.free_count == 0) {
        // Full: the newcomer waits for the slot of the connection that has waited longest on
        // its client, which closes in its callback (soon: its operation is cancelled now).
        admin.waiting_fd = fd;
        return admin.evictOne();
    }
    admin.begin(fd);
    admin.acceptNext();
}

fn acceptBackoffCallback(admin: *Admin) void {
    assert(admin.state == .running); // `stop` cancels the timer.
    if (!admin.accept_completion.isPending()) admin.acceptNext();
}

/// Gives `fd` a free slot and starts reading its head.
fn begin(admin: *Admin, fd: linux.fd_t) void {
    assert(admin.free_count > 0);
    admin.free_count -= 1;
    const connection = &admin.connections[admin.free[admin.free_count]];
    connection.begin(fd);
}

/// Every slot is taken and a new connection waits: cut short the connection that has waited
/// longest on its client, unless one is already closing (its slot is about to be free) or
/// none has waited `evict_wait_min_ns` yet (then look again when one has).
fn evictOne(admin: *Admin) void {
    assert(admin.free_count == 0);
    assert(admin.waiting_fd >= 0);
    var oldest: ?*Connection = null;
    for (&admin.connections) |*connection| {
        assert(connection.phase != .free);
        if (connection.ending) return; // Its callback frees a slot.
        if (oldest == null or connection.since_ns < oldest.?.since_ns) oldest = connection;
    }
    const victim = oldest.?;
    if (victim.since_ns + evict_wait_min_ns > admin.loop.now()) {
        if (admin.evict_timer.isArmed()) return;
        const queue = &admin.evict_queue;
        return admin.loop.timerArm(queue, &admin.evict_timer, Admin, admin, evictCallback);
    }
    victim.cutShort();
}

fn evictCallback(admin: *Admin) void {
    assert(admin.state == .running); // `stop` cancels the timer.
    assert(admin.waiting_fd >= 0); // `release` cancels it when the waiting one gets a slot.
    admin.evictOne();
}

/// A connection closed: its slot is free, for the connection waiting for one if there is one;
/// accepting resumes if it had paused.
fn release(admin: *Admin, connection: *Connection) void {
    const index: u8 = @intCast(connection - &admin.connections[0]);
    assert(admin.free_count < connections_max);
    admin.free[admin.free_count] = index;
    admin.free_count += 1;
    if (admin.state != .running) return;
    if (admin.waiting_fd >= 0) {
        const fd = admin.waiting_fd;
        admin.waiting_fd = -1;
        admin.loop.timerCancel(&admin.evict_timer);
        admin.begin(fd);
    }
    if (admin.accept_completion.isPending() or admin.accept_backoff_timer.isArmed()) return;
    admin.acceptNext();
}

// --- One connection ------------------------------------------------------------------------

const Connection = struct {
    admin: *Admin,
    socket: Socket = .{ .fd = -1 },
    /// The one operation in flight: receive the head, send the response, then read until
    /// the client closes.
    completion: Completion = .{},
    /// In the head queue until the head is whole, the response queue until the response is
    /// sent, then the linger queue.
    timer: Timer = .{},
    phase: Phase = .free,
    /// The loop's clock when the connection began waiting on its client in this phase: the
    /// one that has waited longest is evicted first.
    since_ns: u64 = 0,
    /// Cut short with an operation in flight (its deadline passed, or a new connection took
    /// its slot): that operation is cancelled and its callback closes the connection.
    ending: bool = false,
    /// The request is a HEAD: its response, an error as much as a success, is the head
    /// alone, with the length the body would have had (RFC 9110 §9.3.2).
    head_only: bool = false,
    request_len: u32 = 0,
    parser: http.RequestParser,
    headers: [limits.headers_count_max]http.Header = undefined,
    request: [request_bytes]u8 = undefined,
    /// Head room, then the rendered body: this connection's part of `Admin.responses`.
    response_buffer: []u8,
    /// What is sent: a slice of `response_buffer`.
    response: []const u8 = "",
    sent: u32 = 0,

    const Phase = enum { free, reading, writing, lingering };

    fn begin(connection: *Connection, fd: linux.fd_t) void {
        assert(connection.phase == .free);
        assert(!connection.completion.isPending() and !connection.timer.isArmed());
        // The response is one write; it must not wait for Nagle.
        sys.setsockoptInt(fd, linux.IPPROTO.TCP, linux.TCP.NODELAY, 1) catch {}; // Latency only.
        connection.socket = .init(fd);
        connection.phase = .reading;
        connection.since_ns = connection.admin.loop.now();
        connection.ending = false;
        connection.head_only = false;
        connection.request_len = 0;
        connection.response = "";
        connection.sent = 0;
        connection.parser.reset();
        connection.arm(&connection.admin.head_queue);
        connection.receive();
    }

    fn receive(connection: *Connection) void {
        assert(connection.request_len < connection.request.len);
        const free = connection.request[connection.request_len..];
        const loop = connection.admin.loop;
        loop.recv(&connection.completion, &connection.socket, free, Connection, connection, receiveCallback);
    }

    fn receiveCallback(connection: *Connection, result: sys.RecvError!usize) void {
        if (connection.interrupted()) return;
        const received = result catch return connection.close(); // Reset: nobody to answer.
        if (received == 0) return connection.close(); // Closed before a whole head.
        connection.request_len += @intCast(received);
        assert(connection.request_len <= connection.request.len);
        switch (connection.parser.feed(connection.request[0..connection.request_len])) {
            // The parser refuses a head over `header_bytes_max`, below the buffer's size.
            .incomplete => connection.receive(),
            .invalid => |reject| connection.respondError(reject.status(), null),
            .complete => {
                connection.phase = .writing;
                connection.since_ns = connection.admin.loop.now();
                connection.arm(&connection.admin.response_queue);
                connection.respond(&connection.parser.head);
            },
        }
    }

    /// Refuses what only a browser sends (see the file's comment), then routes the request:
    /// an unknown path is 404, a method the resource does not take 405.
    fn respond(connection: *Connection, head: *const http.Request) void {
        connection.head_only = head.method == .head;
        if (!namesAnAddress(head)) return connection.respondText(421, refusal_host);
        if (head.get("origin") != null) return connection.respondText(403, refusal_origin);
        const route = Route.of(head) orelse return connection.respondError(404, null);
        switch (route) {
            .healthz, .metrics, .status => switch (head.method) {
                .get, .head => connection.respondRead(route),
                else => connection.respondError(405, route.allow()),
            },
            .reload => switch (head.method) {
                // Any body stays unread in `request`, after the head; the linger phase drops
                // the rest of it.
                .post => if (reloadAsked(head))
                    connection.respondReload()
                else
                    connection.respondText(403, refusal_reload),
                else => connection.respondError(405, route.allow()),
            },
        }
    }

    /// Renders `/healthz`, `/metrics` or `/status`.
    fn respondRead(connection: *Connection, route: Route) void {
        assert(route != .reload);
        const admin = connection.admin;
        var body: std.Io.Writer = .fixed(connection.response_buffer[head_room..]);
        const content_type = switch (route) {
            .reload => unreachable,
            .healthz => blk: {
                const text = if (admin.draining) "draining\n" else "ok\n";
                body.writeAll(text) catch unreachable; // A few bytes.
                break :blk text_plain;
            },
            .metrics, .status => blk: {
                admin.collector.function(admin.collector.context, admin.snapshot);
                admin.snapshot.draining = admin.draining;
                const rendered = if (route == .metrics)
                    admin.snapshot.writePrometheus(&body)
                else
                    admin.snapshot.writeStatus(&body);
                rendered catch return connection.overflow(route);
                break :blk if (route == .metrics) Prometheus.content_type else Json.content_type;
            },
        };
        const status: u16 = if (route == .healthz and admin.draining) 503 else 200;
        connection.finish(.{
            .status = status,
            .content_type = content_type,
            .body_len = body.buffered().len,
        });
    }

    /// Runs the reloader and answers with its text: 200 applied, 422 refused; 404 when
    /// there is no configuration file to reload.
    fn respondReload(connection: *Connection) void {
        const body = connection.response_buffer[head_room..];
        const reloader = connection.admin.reloader orelse {
            const text = "no config file to reload (start with --config)\n";
            @memcpy(body[0..text.len], text);
            return connection.finish(.{ .status = 404, .body_len = text.len });
        };
        var out: Truncating = .init(body[0..reload_text_bytes_max]);
        const applied = reloader.function(reloader.context, &out.writer);
        assert(out.writer.end <= reload_text_bytes_max);
        // The comptime assert on `reload_text_bytes_max` leaves room for what follows.
        var text: std.Io.Writer = .fixed(body);
        text.end = out.writer.end;
        if (text.end == 0) {
            text.writeAll(if (applied) "reload applied\n" else "reload failed\n") catch unreachable;
        }
        if (out.truncated) text.writeAll(reload_cut_note) catch unreachable;
        if (text.buffered()[text.end - 1] != '\n') text.writeByte('\n') catch unreachable;
        connection.finish(.{ .status = if (applied) 200 else 422, .body_len = text.end });
    }

    fn overflow(connection: *Connection, route: Route) void {
        const admin = connection.admin;
        if (!admin.overflow_logged) {
            admin.overflow_logged = true;
            log.warn("admin: the {s} response did not fit in {d} bytes; answered 500 " ++
                "(logged once)", .{ @tagName(route), connection.response_buffer.len - head_room });
        }
        connection.respondError(500, null);
    }

    /// An error status with its reason phrase, lower case, as the body; a 405 says which
    /// methods the resource takes (`allow`, RFC 9110 §15.5.6).
    fn respondError(connection: *Connection, status: u16, allow: ?[]const u8) void {
        assert(status >= 400);
        assert((status == 405) == (allow != null));
        const phrase = reasonPhrase(status);
        const body = connection.response_buffer[head_room..][0 .. phrase.len + 1];
        for (body[0..phrase.len], phrase) |*c, p| c.* = std.ascii.toLower(p);
        body[phrase.len] = '\n';
        connection.finish(.{ .status = status, .body_len = body.len, .allow = allow });
    }

    /// A refusal whose body says why and what to do instead.
    fn respondText(connection: *Connection, status: u16, text: []const u8) void {
        assert(status >= 400);
        assert(text.len > 0 and text[text.len - 1] == '\n');
        const body = connection.response_buffer[head_room..][0..text.len];
        @memcpy(body, text);
        connection.finish(.{ .status = status, .body_len = body.len });
    }

    const Answer = struct {
        status: u16,
        content_type: []const u8 = text_plain,
        body_len: usize,
        /// The Allow field's value, for a 405.
        allow: ?[]const u8 = null,
    };

    /// Writes the head in front of the body already rendered at `head_room` and sends both.
    fn finish(connection: *Connection, answer: Answer) void {
        assert(connection.phase == .reading or connection.phase == .writing);
        assert(answer.body_len <= connection.response_buffer.len - head_room);
        var head_buffer: [head_room]u8 = undefined;
        const head = std.fmt.bufPrint(&head_buffer, "HTTP/1.1 {d} {s}\r\nContent-Type: {s}\r\n" ++
            "Content-Length: {d}\r\nCache-Control: no-store\r\n{s}{s}{s}Connection: close\r\n\r\n", .{
            answer.status,
            reasonPhrase(answer.status),
            answer.content_type,
            answer.body_len,
            if (answer.allow != null) "Allow: " else "",
            answer.allow orelse "",
            if (answer.allow != null) "\r\n" else "",
        }) catch unreachable; // The longest head is about 200 bytes.
        const head_start = head_room - head.len;
        const buffer = connection.response_buffer;
        @memcpy(buffer[head_start..head_room], head);
        const end = head_room + (if (connection.head_only) 0 else answer.body_len);
        assert(end <= buffer.len);
        connection.response = buffer[head_start..end];
        connection.sent = 0;
        if (connection.phase == .reading) { // Refused before the head was whole.
            connection.phase = .writing;
            connection.since_ns = connection.admin.loop.now();
            connection.arm(&connection.admin.response_queue);
        }
        connection.sendRest();
    }

    fn sendRest(connection: *Connection) void {
        const rest = connection.response[connection.sent..];
        assert(rest.len > 0);
        const loop = connection.admin.loop;
        loop.send(&connection.completion, &connection.socket, rest, Connection, connection, sendCallback);
    }

    fn sendCallback(connection: *Connection, result: sys.SendError!usize) void {
        if (connection.interrupted()) return;
        const sent = result catch return connection.close(); // The client went away.
        connection.sent += @intCast(sent);
        assert(connection.sent <= connection.response.len);
        if (connection.sent < connection.response.len) return connection.sendRest();
        // Half-close, then read until the client closes: closing with unread bytes (a body,
        // a pipelined request) queued would send a reset that can destroy the response.
        sys.shutdown(connection.socket.fd, linux.SHUT.WR) catch return connection.close();
        connection.phase = .lingering;
        connection.since_ns = connection.admin.loop.now();
        connection.arm(&connection.admin.linger_queue);
        connection.drainInput();
    }

    fn drainInput(connection: *Connection) void {
        const loop = connection.admin.loop;
        const buffer = &connection.request;
        loop.recv(&connection.completion, &connection.socket, buffer, Connection, connection, drainInputCallback);
    }

    fn drainInputCallback(connection: *Connection, result: sys.RecvError!usize) void {
        if (connection.interrupted()) return;
        const received = result catch return connection.close();
        if (received == 0) return connection.close();
        connection.drainInput();
    }

    /// Every I/O callback starts here. True when the connection ended while its operation
    /// was in flight (the admin is stopping, its deadline passed, or it was evicted): it is
    /// closed now.
    fn interrupted(connection: *Connection) bool {
        assert(connection.phase != .free);
        assert(!connection.completion.isPending());
        if (connection.admin.state == .stopping or connection.ending) {
            connection.close();
            return true;
        }
        return false;
    }

    fn arm(connection: *Connection, queue: *TimerQueue) void {
        const loop = connection.admin.loop;
        loop.timerArm(queue, &connection.timer, Connection, connection, deadlineCallback);
    }

    fn deadlineCallback(connection: *Connection) void {
        connection.cutShort();
    }

    /// Cuts the connection short: its operation is cancelled and its callback closes it.
    fn cutShort(connection: *Connection) void {
        assert(connection.phase != .free);
        assert(!connection.ending);
        // Between callbacks an open connection always has its operation pending.
        assert(connection.completion.isPending());
        const loop = connection.admin.loop;
        loop.timerCancel(&connection.timer);
        connection.ending = true;
        loop.cancel(&connection.completion); // Its callback closes.
    }

    fn close(connection: *Connection) void {
        assert(connection.phase != .free);
        assert(!connection.completion.isPending());
        const admin = connection.admin;
        admin.loop.timerCancel(&connection.timer);
        admin.loop.close(&connection.socket);
        connection.phase = .free;
        admin.release(connection);
    }
};

pub const text_plain = "text/plain; charset=utf-8";

/// The field `POST /reload` needs. Not one a browser may send cross-origin without asking
/// first (a CORS preflight, which this listener answers 404), and not one a plain HTML form
/// can set at all; a Content-Type check would not do, since a POST with no body needs none.
pub const reload_field = "Sluice-Reload";
pub const reload_field_value = "1";

pub const refusal_host = "refused: the Host field must be an IP address or localhost (with or " ++
    "without a port); another name is what a DNS-rebinding page sends\n";
pub const refusal_origin = "refused: the request carries an Origin field, so it comes from a " ++
    "web page; the admin listener answers programs only\n";
pub const refusal_reload = "refused: POST /reload needs the field `" ++ reload_field ++ ": " ++
    reload_field_value ++ "` (`sluice reload --admin ADDR` sends it), which a web page " ++
    "cannot send to another site\n";

/// The Host field, and an absolute-form target's authority, are an IP address or `localhost`.
/// An HTTP/1.0 request without Host names nothing and passes: browsers always send Host.
fn namesAnAddress(head: *const http.Request) bool {
    if (head.host) |host| if (!isAddressAuthority(host)) return false;
    if (head.target_form == .absolute) {
        const authority_start = (std.mem.find(u8, head.target, "://") orelse return false) + 3;
        const rest = head.target[authority_start..];
        const end = std.mem.findAny(u8, rest, "/?") orelse rest.len;
        if (!isAddressAuthority(rest[0..end])) return false;
    }
    return true;
}

/// `127.0.0.1`, `[::1]` or `localhost` (any case), each with or without `:PORT`. Any other
/// name is refused, whatever it resolves to: that is the whole of DNS rebinding.
pub fn isAddressAuthority(authority: []const u8) bool {
    if (std.mem.startsWith(u8, authority, "[")) {
        const close = std.mem.findScalar(u8, authority, ']') orelse return false;
        if (!isPortOrNothing(authority[close + 1 ..])) return false;
        _ = std.Io.net.Ip6Address.parse(authority[1..close], 0) catch return false;
        return true;
    }
    const colon = std.mem.findScalar(u8, authority, ':') orelse authority.len;
    if (!isPortOrNothing(authority[colon..])) return false;
    const name = authority[0..colon];
    if (std.ascii.eqlIgnoreCase(name, "localhost")) return true;
    _ = std.Io.net.Ip4Address.parse(name, 0) catch return false;
    return true;
}

/// Nothing, or `:` and one to five digits.
fn isPortOrNothing(text: []const u8) bool {
    if (text.len == 0) return true;
    if (text[0] != ':' or text.len < 2 or text.len > 6) return false;
    for (text[1..]) |c| if (!std.ascii.isDigit(c)) return false;
    return true;
}

fn reloadAsked(head: *const http.Request) bool {
    const value = head.get(reload_field) orelse return false;
    return std.mem.eql(u8, value, reload_field_value);
}

/// A writer over a fixed buffer that keeps what fits and drops the rest instead of failing,
/// so a reloader writes its report without handling a full buffer; `truncated` says whether
/// anything was dropped. The one way it fails: a caller asking for a writable slice longer
/// than what is left (std's text formatting writes through `write` and `writeSplat`).
pub const Truncating = struct {
    writer: std.Io.Writer,
    truncated: bool = false,

    pub fn init(buffer: []u8) Truncating {
        return .{ .writer = .{
            .vtable = &.{ .drain = drain, .flush = std.Io.Writer.noopFlush, .rebase = rebase },
            .buffer = buffer,
        } };
    }

    /// Called only with data that does not fit: keeps the prefix that does and reports all
    /// of it consumed.
    fn drain(w: *std.Io.Writer, data: []const []const u8, splat: usize) std.Io.Writer.Error!usize {
        const truncating: *Truncating = @alignCast(@fieldParentPtr("writer", w));
        var consumed: usize = 0;
        for (data[0 .. data.len - 1]) |bytes| consumed += truncating.keep(bytes);
        const pattern = data[data.len - 1];
        if (pattern.len > 0) {
            for (0..splat) |_| {
                if (w.end == w.buffer.len) break; // The rest is dropped.
                _ = truncating.keep(pattern);
            }
        }
        truncating.truncated = true;
        return consumed + pattern.len * splat;
    }

    fn keep(truncating: *Truncating, bytes: []const u8) usize {
        const w = &truncating.writer;
        const kept = @min(bytes.len, w.buffer.len - w.end);
        @memcpy(w.buffer[w.end..][0..kept], bytes[0..kept]);
        w.end += kept;
        return bytes.len;
    }

    fn rebase(w: *std.Io.Writer, preserve: usize, capacity: usize) std.Io.Writer.Error!void {
        _ = preserve;
        _ = capacity;
        const truncating: *Truncating = @alignCast(@fieldParentPtr("writer", w));
        truncating.truncated = true;
        return error.WriteFailed;
    }
};

const Route = enum {
    healthz,
    metrics,
    status,
    reload,

    const paths = std.StaticStringMap(Route).initComptime(.{
        .{ "/healthz", .healthz },
        .{ "/metrics", .metrics },
        .{ "/status", .status },
        .{ "/reload", .reload },
    });

    /// The methods the resource takes, as an Allow field lists them.
    fn allow(route: Route) []const u8 {
        return switch (route) {
            .healthz, .metrics, .status => "GET, HEAD",
            .reload => "POST",
        };
    }

    /// The resource a target names: its path, without the query; an absolute-form target's
    /// path is taken after its authority.
    fn of(head: *const http.Request) ?Route {
        const target = head.target;
        const path_start: usize = switch (head.target_form) {
            .origin => 0,
            .absolute => blk: {
                const authority = (std.mem.find(u8, target, "://") orelse return null) + 3;
                break :blk std.mem.findScalarPos(u8, target, authority, '/') orelse return null;
            },
            .authority, .asterisk => return null,
        };
        const rest = target[path_start..];
        const path_end = std.mem.findScalar(u8, rest, '?') orelse rest.len;
        return paths.get(rest[0..path_end]);
    }
};

fn reasonPhrase(status: u16) []const u8 {
    return switch (status) {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        414 => "URI Too Long",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        else => "Error",
    };
}
