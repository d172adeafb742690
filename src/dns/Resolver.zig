//! An asynchronous stub resolver on a `Loop` (the control loop): `resolve(name, kind)` looks in
//! /etc/hosts, then asks the nameservers of resolv.conf in order over UDP, with a timeout per
//! try and `attempts` rounds, over TCP when the UDP answer is truncated, through the search
//! list as ndots says, and calls back once with the records and their TTL or a failure.
//!
//! Decisions a caller must know:
//! - Every try has its own connected UDP socket (a fresh ephemeral port per try). Connected,
//!   the kernel delivers only datagrams whose source address and port are the server's, so a
//!   reply from anywhere else never reaches us; a datagram from the server that is not a
//!   well-formed reply to this query (wrong ID, wrong question, malformed) is ignored and the
//!   try keeps waiting until its timeout. IDs come from a ChaCha CSPRNG seeded by getrandom(2).
//! - No allocation after `init`: the caller gives the slots (one per resolution in flight;
//!   `resolve` answers `error.Busy` when all are taken) and each resolution's `Reply`.
//! - Callbacks run from the loop's tick, never from inside `resolve`; an answer found in
//!   /etc/hosts is returned by `resolve` itself (`.from_hosts`) and has no callback.
const Resolver = @This();

const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;

const loop_namespace = @import("../loop/loop.zig");
const Loop = loop_namespace.Loop;
const Completion = loop_namespace.Completion;
const Socket = loop_namespace.Socket;
const Timer = loop_namespace.Timer;
const TimerQueue = loop_namespace.TimerQueue;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const message = @import("message.zig");
const ResolvConf = @import("ResolvConf.zig");
const Hosts = @import("Hosts.zig");

loop: *Loop,
conf: ResolvConf,
hosts: ?Hosts,
csprng: std.Random.DefaultCsprng,
try_queue: TimerQueue,
slots: []Slot,

/// The UDP payload we advertise with `options edns0` (the DNS Flag Day 2020 size).
pub const edns_udp_bytes = 1232;
/// The largest reply read over TCP; a longer one fails the try. A/AAAA/SRV answers for a pool
/// are far below it (32 records of ~40 bytes).
pub const tcp_reply_bytes_max = 8 * 1024;

pub const Options = struct {
    /// How long one try waits for its reply; resolv.conf's `timeout` when null. glibc doubles
    /// it each round; we do not (a pool's re-resolution has its own period).
    try_timeout_ns: ?u64 = null,
};

pub const Failure = enum {
    /// Every name of the search list was answered NXDOMAIN or without records of the kind.
    not_found,
    /// Some server failed (SERVFAIL, refused, unreachable, malformed, timed out) on every try.
    servers_failed,
};

pub const Outcome = union(enum) {
    /// The `Reply` given to `resolve` holds the records (at least one) and their TTL.
    answer,
    failure: Failure,
};

pub const Started = enum { pending, from_hosts };

pub const ResolveError = error{ Busy, NameInvalid };

/// One resolution in flight and its current try. Caller-owned memory, initialised by `init`.
pub const Slot = struct {
    resolver: *Resolver = undefined,
    state: State = .free,
    request: Request = undefined,
    /// Where the resolution is: which name of the search list, which round, which server.
    candidate: u8 = 0,
    round: u8 = 0,
    server: u8 = 0,
    /// Set when a name of the search list got no answer from any server on any round.
    server_failed: bool = false,
    /// The name was given with a trailing dot: the search list does not apply.
    absolute: bool = false,
    /// The current try (reset at each).
    id: u16 = 0,
    socket: Socket = .{ .fd = -1 },
    write_completion: Completion = .{},
    read_completion: Completion = .{},
    timer: Timer = .{},
    /// What to do once the pending operations of an ended try have called back.
    then: Then = .next_server,
    query_len: u16 = 0,
    received: u32 = 0,
    /// The query, after two bytes for TCP's length prefix (RFC 1035 §4.2.2).
    query: [2 + message.query_bytes_max]u8 = undefined,
    buffer: [2 + tcp_reply_bytes_max]u8 = undefined,
    name: message.Name = .{},

    const State = enum { free, udp, tcp, closing };
    const Then = enum { next_server, next_candidate, tcp, answered };
};

const Request = struct {
    name: message.Name,
    kind: message.Kind,
    reply: *message.Reply,
    context: ?*anyopaque,
    callback: *const fn (?*anyopaque, Outcome) void,
};

pub fn init(
    resolver: *Resolver,
    loop: *Loop,
    conf: ResolvConf,
    hosts: ?Hosts,
    slots: []Slot,
    options: Options,
) void {
    assert(slots.len > 0);
    assert(conf.nameservers_count > 0);
    var seed: [std.Random.DefaultCsprng.secret_seed_length]u8 = undefined;
    var filled: usize = 0;
    while (filled < seed.len) {
        const rc = linux.getrandom(seed[filled..].ptr, seed.len - filled, 0);
        switch (linux.errno(rc)) {
            .SUCCESS => filled += rc,
            .INTR => {},
            else => @panic("getrandom failed: no secure seed for DNS IDs"),
        }
    }
    const timeout_ns = options.try_timeout_ns orelse @as(u64, conf.timeout_s) * std.time.ns_per_s;
    resolver.* = .{
        .loop = loop,
        .conf = conf,
        .hosts = hosts,
        .csprng = .init(seed),
        .try_queue = .init(timeout_ns),
        .slots = slots,
    };
    for (slots) |*slot| slot.* = .{ .resolver = resolver };
    loop.timerQueueRegister(&resolver.try_queue);
}

/// No resolution may be in flight (their sockets would have operations pending).
pub fn deinit(resolver: *Resolver) void {
    for (resolver.slots) |*slot| assert(slot.state == .free);
    resolver.loop.timerQueueUnregister(&resolver.try_queue);
    resolver.* = undefined;
}

/// Starts resolving `name` for `kind`. `.from_hosts`: /etc/hosts answered, `reply` is filled
/// and there is no callback. `.pending`: `callback` runs once from the loop, and `reply` must
/// stay valid until then.
pub fn resolve(
    resolver: *Resolver,
    name: []const u8,
    kind: message.Kind,
    reply: *message.Reply,
    comptime Context: type,
    context: *Context,
    comptime callback: fn (*Context, Outcome) void,
) ResolveError!Started {
    var scratch: [message.name_wire_bytes_max]u8 = undefined;
    _ = message.encodeName(&scratch, name) catch return error.NameInvalid;
    if (resolver.hosts) |*hosts| {
        if (hosts.lookup(name, kind, reply)) return .from_hosts;
    }
    const slot = for (resolver.slots) |*slot| {
        if (slot.state == .free) break slot;
    } else return error.Busy;
    const Erased = struct {
        fn call(erased: ?*anyopaque, outcome: Outcome) void {
            callback(@ptrCast(@alignCast(erased.?)), outcome);
        }
    };
    slot.request = .{
        .name = .{},
        .kind = kind,
        .reply = reply,
        .context = context,
        .callback = Erased.call,
    };
    const trimmed = std.mem.trimEnd(u8, name, ".");
    @memcpy(slot.request.name.bytes[0..trimmed.len], trimmed);
    slot.request.name.len = @intCast(trimmed.len);
    slot.candidate = 0;
    slot.round = 0;
    slot.server = 0;
    slot.server_failed = false;
    slot.absolute = std.mem.endsWith(u8, name, ".");
    // The first candidate always exists: the name itself, or itself plus a search domain
    // (skipped to the next when too long, and the name as given comes last).
    const found = candidateName(slot);
    assert(found);
    startTry(slot);
    return .pending;
}

/// The number of names the search list gives `name`: itself, and each search domain appended
/// unless the name is absolute. glibc's order (res_search): with at least `ndots` dots the name
/// as given comes first, otherwise last.
fn candidatesCount(resolver: *const Resolver, absolute: bool) u8 {
    if (absolute) return 1;
    return 1 + resolver.conf.search_count;
}

const Candidate = union(enum) { as_given, search: u8 };

fn candidateAt(resolver: *const Resolver, name: []const u8, index: u8) Candidate {
    const dots = std.mem.count(u8, name, ".");
    const given_first = dots >= resolver.conf.ndots;
    if (given_first) return if (index == 0) .as_given else .{ .search = index - 1 };
    return if (index == resolver.conf.search_count) .as_given else .{ .search = index };
}

/// Sets `slot.name` to the candidate at `slot.candidate` (skipping those too long); false
/// when there is none left.
fn candidateName(slot: *Slot) bool {
    const resolver = slot.resolver;
    const name = slot.request.name.slice();
    if (slot.candidate >= resolver.candidatesCount(slot.absolute)) return false;
    const candidate = if (slot.absolute) Candidate.as_given else resolver.candidateAt(name, slot.candidate);
    switch (candidate) {
        .as_given => slot.name = slot.request.name,
        .search => |index| {
            var domains = resolver.conf.searchIterator();
            var domain = domains.next().?;
            for (0..index) |_| domain = domains.next().?;
            // A name too long with this domain is skipped: the next candidate is tried.
            if (name.len + 1 + domain.len > message.name_text_bytes_max) {
                slot.candidate += 1;
                return candidateName(slot);
            }
            @memcpy(slot.name.bytes[0..name.len], name);
            slot.name.bytes[name.len] = '.';
            @memcpy(slot.name.bytes[name.len + 1 ..][0..domain.len], domain);
            slot.name.len = @intCast(name.len + 1 + domain.len);
        },
    }
    return true;
}

// --- One try: UDP, or TCP after a truncated UDP reply ---------------------------------------

fn startTry(slot: *Slot) void {
    const resolver = slot.resolver;
    assert(slot.state == .free or slot.state == .closing);
    slot.id = resolver.csprng.random().int(u16);
    const edns: ?u16 = if (resolver.conf.edns0) edns_udp_bytes else null;
    const query: message.Query = .{ .id = slot.id, .name = slot.name.slice(), .kind = slot.request.kind };
    const bytes = message.buildQuery(slot.query[2..], query, edns) catch unreachable; // Checked.
    slot.query_len = @intCast(bytes.len);
    std.mem.writeInt(u16, slot.query[0..2], slot.query_len, .big);
    slot.received = 0;
    slot.state = .udp;
    openAndConnect(slot, .udp);
}

fn openAndConnect(slot: *Slot, transport: enum { udp, tcp }) void {
    const loop = slot.resolver.loop;
    const server = &slot.resolver.conf.nameservers[slot.server];
    const opened = switch (transport) {
        .udp => loop.openDatagramSocket(server.family()),
        .tcp => loop.openSocket(server.family()),
    };
    slot.socket = opened catch {
        slot.socket = .{ .fd = -1 };
        // No socket (fd limits): this try fails now, from the next tick, through the timer.
        loop.timerArm(&slot.resolver.try_queue, &slot.timer, Slot, slot, timeoutCallback);
        return;
    };
    loop.timerArm(&slot.resolver.try_queue, &slot.timer, Slot, slot, timeoutCallback);
    loop.connect(&slot.write_completion, &slot.socket, server, Slot, slot, connectCallback);
}

fn connectCallback(slot: *Slot, result: sys.ConnectError!void) void {
    if (slot.state == .closing) return closed(slot);
    result catch return endTry(slot, .next_server);
    const loop = slot.resolver.loop;
    const query = switch (slot.state) {
        .udp => slot.query[2..][0..slot.query_len],
        .tcp => slot.query[0 .. 2 + slot.query_len],
        else => unreachable,
    };
    loop.send(&slot.write_completion, &slot.socket, query, Slot, slot, sendCallback);
    recvMore(slot);
}

fn receiveBuffer(slot: *Slot) []u8 {
    return switch (slot.state) {
        .udp => slot.buffer[0..tcp_reply_bytes_max],
        .tcp => slot.buffer[slot.received..],
        else => unreachable,
    };
}

fn sendCallback(slot: *Slot, result: sys.SendError!usize) void {
    if (slot.state == .closing) return closed(slot);
    const sent = result catch return endTry(slot, .next_server);
    const expected: usize = if (slot.state == .udp) slot.query_len else 2 + @as(usize, slot.query_len);
    // A datagram goes whole; 300 bytes on a fresh TCP connection do too in practice, and a
    // short write is treated as the server's failure rather than resumed.
    if (sent != expected) return endTry(slot, .next_server);
}

fn recvCallback(slot: *Slot, result: sys.RecvError!usize) void {
    if (slot.state == .closing) return closed(slot);
    const received = result catch return endTry(slot, .next_server);
    switch (slot.state) {
        .udp => receivedMessage(slot, slot.buffer[0..received], .udp),
        .tcp => {
            if (received == 0) return endTry(slot, .next_server); // Closed before the end.
            slot.received += @intCast(received);
            if (slot.received < 2) return recvMore(slot);
            const length = std.mem.readInt(u16, slot.buffer[0..2], .big);
            if (length > tcp_reply_bytes_max) return endTry(slot, .next_server);
            if (slot.received < 2 + @as(u32, length)) return recvMore(slot);
            if (slot.received > 2 + @as(u32, length)) return endTry(slot, .next_server);
            receivedMessage(slot, slot.buffer[2..][0..length], .tcp);
        },
        else => unreachable,
    }
}

fn recvMore(slot: *Slot) void {
    const loop = slot.resolver.loop;
    const completion = &slot.read_completion;
    switch (slot.state) {
        .udp => loop.recvDatagram(completion, &slot.socket, receiveBuffer(slot), Slot, slot, recvCallback),
        .tcp => loop.recv(completion, &slot.socket, receiveBuffer(slot), Slot, slot, recvCallback),
        else => unreachable,
    }
}

fn receivedMessage(slot: *Slot, bytes: []const u8, transport: enum { udp, tcp }) void {
    const reply = slot.request.reply;
    const query: message.Query = .{ .id = slot.id, .name = slot.name.slice(), .kind = slot.request.kind };
    message.parseReply(bytes, query, reply) catch {
        // Not a reply to this query: over UDP someone (or a late reply to an earlier try) may
        // have sent it; keep listening until the timeout. Over TCP the stream is the server's.
        if (transport == .tcp) return endTry(slot, .next_server);
        return recvMore(slot);
    };
    if (reply.truncated) {
        if (transport == .tcp) return endTry(slot, .next_server); // TC over TCP: nonsense.
        return endTry(slot, .tcp);
    }
    switch (reply.rcode) {
        .no_error => endTry(slot, if (reply.records_count > 0) .answered else .next_candidate),
        .nxdomain => endTry(slot, .next_candidate),
        .servfail, .other => endTry(slot, .next_server),
    }
}

fn timeoutCallback(slot: *Slot) void {
    assert(slot.state == .udp or slot.state == .tcp);
    endTry(slot, .next_server);
}

/// Ends the current try: cancels what is pending, and once every operation has called back
/// closes the socket and does `then`.
fn endTry(slot: *Slot, then: Slot.Then) void {
    assert(slot.state == .udp or slot.state == .tcp);
    const loop = slot.resolver.loop;
    loop.timerCancel(&slot.timer);
    slot.then = then;
    slot.state = .closing;
    if (slot.write_completion.isPending()) loop.cancel(&slot.write_completion);
    if (slot.read_completion.isPending()) loop.cancel(&slot.read_completion);
    closed(slot);
}

/// Called after each callback of a closing try; the last one closes and moves on.
fn closed(slot: *Slot) void {
    assert(slot.state == .closing);
    if (slot.write_completion.isPending() or slot.read_completion.isPending()) return;
    const loop = slot.resolver.loop;
    if (slot.socket.fd >= 0) loop.close(&slot.socket);
    switch (slot.then) {
        .answered => finish(slot, .answer),
        .tcp => {
            slot.state = .tcp;
            slot.received = 0;
            openAndConnect(slot, .tcp);
        },
        .next_server => nextServer(slot),
        .next_candidate => nextCandidate(slot),
    }
}

fn nextServer(slot: *Slot) void {
    const conf = &slot.resolver.conf;
    slot.server += 1;
    if (slot.server == conf.nameservers_count) {
        slot.server = 0;
        slot.round += 1;
        if (slot.round == conf.attempts) {
            // No server answered this name either way: the outcome cannot be "not found".
            slot.server_failed = true;
            return nextCandidate(slot);
        }
    }
    startTry(slot);
}

fn nextCandidate(slot: *Slot) void {
    slot.candidate += 1;
    slot.round = 0;
    slot.server = 0;
    if (!candidateName(slot)) return finish(slot, .{ .failure = if (slot.server_failed) .servers_failed else .not_found });
    startTry(slot);
}

fn finish(slot: *Slot, outcome: Outcome) void {
    assert(slot.state == .closing);
    assert(!slot.write_completion.isPending() and !slot.read_completion.isPending());
    const request = slot.request;
    if (outcome == .failure) request.reply.* = .{};
    slot.state = .free;
    request.callback(request.context, outcome);
}
