//! An exchange whose target is a JavaScript handler (handler/Handler.zig): the request body is
//! gathered whole first (into the downstream's buffer, behind the head), then the handler runs
//! and answers, fails (a 500), or hands the request to a pool with `Response.proxy`, after
//! which the exchange goes on as a route to that pool would.
//!
//! A handler that awaits a timer suspends: its engine keeps the request's state, and the
//! exchange gives its buffer back and arms one wake-up timer (on the worker's queue of any
//! deadline) for the handler's next timer or its deadline, whichever is sooner; the worker
//! serves other requests meanwhile. The wake-up resumes the call, which answers, fails,
//! proxies or suspends again. An exchange that ends while suspended (its client closed, the
//! worker stops) cancels the timer and abandons the call in `Exchange.release`, before its
//! generation hold (and so the engine) is let go of: nothing runs for it afterwards.
//!
//! A handler's `fetch` is the other thing it may wait on: each is a sub-request of its own
//! (Subrequest.zig) that this exchange starts when the call suspends and settles when it ends,
//! on the same wake-up path as a timer (docs/ARCHITECTURE.md, "`fetch` to pools"). Whenever
//! the call ends otherwise, or the exchange does, its fetches still in flight are detached.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const http = @import("../http/http.zig");
const Handler = @import("../handler/Handler.zig");
const rewrite = @import("rewrite.zig");
const Exchange = @import("Exchange.zig");
const Subrequest = @import("Subrequest.zig");
const upstream_http1 = @import("upstream_http1.zig");

/// A body (up to the handler's `body_max`) that fits the room behind the head in the
/// downstream's buffer is received first, so that the handler sees it as `request.body` and a
/// `Response.proxy` can still send it on from there. A larger one is left unread: the handler
/// runs at once, with `request.body` null, and a `Response.proxy` streams the body to the pool
/// as a route's request would.
pub fn start(exchange: *Exchange, handler: *Handler) void {
    if (!exchange.downstream.requestBodyPending()) return respond(exchange, handler);
    if (handler.body_bytes_max == 0) return exchange.fail(.request_body_too_large);
    if (exchange.body_bytes_max == 0 or exchange.body_bytes_max > handler.body_bytes_max) {
        exchange.body_bytes_max = handler.body_bytes_max; // The connection checks chunked bodies.
    }
    if (exchange.bodyOverLimit()) return exchange.fail(.request_body_too_large);
    if (!bodyFits(exchange)) return respond(exchange, handler);
    exchange.state = .body;
    // The body will be read: a client waiting on `Expect: 100-continue` is told to send it. An
    // over-limit Content-Length got its 413 above instead, without reading the body.
    if (exchange.request_head.expect_continue) return exchange.downstream.sendContinue();
    exchange.downstream.pullRequestBody();
}

/// Whether the request's body is read before the handler runs: a declared length that fits
/// behind the head. One of unknown length (chunked) is not: it might not fit.
fn bodyFits(exchange: *const Exchange) bool {
    return switch (exchange.request_head.body) {
        .content_length => |length| length <= exchange.downstream.requestBodyRoom(),
        .chunked => false,
        .none, .close_delimited => unreachable, // No body pending.
    };
}

/// The 100 Continue a handler's request asked for is out: its body comes next (read before
/// the call, or for the call's `request.text()`).
pub fn continueSent(exchange: *Exchange) void {
    if (exchange.state == .body) return exchange.downstream.pullRequestBody();
    const read = exchange.body_read orelse return; // The exchange ended meanwhile.
    assert(read.state == .continuing);
    read.state = .pulling;
    const wake_deferred = read.wake_deferred;
    read.wake_deferred = false;
    exchange.downstream.pullRequestBody();
    // The wake-up waited for the 100's write, whose completion the answer needs.
    if (wake_deferred and exchange.state == .suspended) wakeCallback(exchange);
}

// ---------------------------------------------------------------------------------------------
// The body read for the call (request.text(), .json(), .arrayBuffer(): handler/request_body.zig)

/// The request body being gathered into the request's heap for the suspended call. The record
/// is in that heap too (the exchange holds a pointer), and goes with the request.
pub const BodyRead = struct {
    op: Handler.BodyRead,
    state: State = .start,
    /// Room in the request's heap; the first `len` bytes are the body's data so far.
    room: []align(8) u8,
    len: usize = 0,
    /// A body of unknown length comes chunked (HTTP/1.1's framing, or an h2 body framed so by
    /// its stream): decoded as it comes.
    dechunk: ?http.ChunkedDecoder,
    /// The body outgrew the handler's memory: nothing more is pulled, and the read rejects.
    over_memory: bool = false,
    /// The wake-up came while the 100 Continue was being written: it goes on once that is out.
    wake_deferred: bool = false,

    pub const State = enum { start, continuing, pulling, done };
};

/// Room for a body of unknown length at first; it doubles as the body grows.
const unknown_length_room_bytes = 64 * 1024;

const over_memory = "request body: it does not fit the handler's memory (its `memory` setting bounds what a request holds)";

/// Starts reading the body for the call: room in the request's heap for it (its length, or a
/// first guess), then the pull begins when the call waits (`wait`). Null, or the result of a
/// read that cannot start.
fn startBodyRead(exchange: *Exchange, handler: *Handler, ticket: Handler.Ticket, op: Handler.BodyRead) ?Handler.BodyResult {
    assert(exchange.body_read == null);
    assert(exchange.downstream.requestBodyPending()); // Else the request had `request.body`.
    const head = exchange.request_head;
    const room_bytes: u64 = switch (head.body) {
        .content_length => |length| length,
        else => @min(exchange.body_bytes_max, unknown_length_room_bytes),
    };
    const record = handler.fetchBytes(ticket, @sizeOf(BodyRead)) orelse return .{ .failed = over_memory };
    const room = handler.fetchBytes(ticket, @intCast(room_bytes)) orelse return .{ .failed = over_memory };
    const read: *BodyRead = @ptrCast(@alignCast(record.ptr)); // As large, 8-byte aligned.
    read.* = .{ .op = op, .room = room, .dechunk = if (head.body == .chunked) .init(.{}) else null };
    exchange.body_read = read;
    return null;
}

/// The call waits: the body's first window is asked for (after a 100 Continue if the client
/// waits for one).
fn startPull(exchange: *Exchange) void {
    const read = exchange.body_read.?;
    assert(read.state == .start and exchange.state == .suspended);
    if (exchange.request_head.expect_continue) {
        read.state = .continuing;
        return exchange.downstream.sendContinue();
    }
    read.state = .pulling;
    exchange.downstream.pullRequestBody();
}

/// A window of the body (Exchange.sendRequestBody): copied into the request's heap and
/// acknowledged, so the next comes. After the last, or a failure, the call goes on at the next
/// turn of the loop. A window that comes after the call ended (it stopped waiting for its
/// read) is left where it is: the connection closes after the answer.
pub fn gatherWindow(exchange: *Exchange, window: []const u8, last: bool) void {
    const read = exchange.body_read orelse return;
    assert(exchange.state == .suspended and read.state == .pulling);
    keepWindow(exchange, read, window) catch {
        read.over_memory = true;
        read.state = .done;
        return bodyEnded(exchange);
    };
    exchange.downstream.requestBodySent(); // The next window may come at once.
    if (!last) return;
    read.state = .done;
    bodyEnded(exchange);
}

fn keepWindow(exchange: *Exchange, read: *BodyRead, window: []const u8) error{OutOfMemory}!void {
    if (window.len > read.room.len - read.len) try grow(exchange, read, read.len + window.len);
    const raw = read.room[read.len..][0..window.len];
    @memcpy(raw, window);
    const decoder = &(read.dechunk orelse {
        read.len += window.len;
        return;
    });
    // The downstream checked the framing (and the limit) already: a reject here is a bug's.
    const decoded = decoder.decodeInPlace(raw);
    assert(decoded.reject == null);
    read.len += decoded.data_len;
}

/// More room for a body of unknown length: twice as much (the old room is left in the heap,
/// which the request's end frees), bounded by the handler's memory.
fn grow(exchange: *Exchange, read: *BodyRead, needed: usize) error{OutOfMemory}!void {
    const handler = exchange.target.handler;
    const room = handler.fetchBytes(exchange.handler_ticket.?, @max(needed, read.room.len * 2)) orelse return error.OutOfMemory;
    @memcpy(room[0..read.len], read.room[0..read.len]);
    read.room = room;
}

/// The read ended: the call's deadline runs again, and the call goes on at the next turn of
/// the loop, as after a fetch.
fn bodyEnded(exchange: *Exchange) void {
    exchange.target.handler.resumeDeadline(exchange.handler_ticket.?);
    if (!exchange.total_timer.isArmed()) return; // Waking: `wake` settles it.
    exchange.loop().timerArmAt(&exchange.proxy.queues.handler_wake, &exchange.total_timer, 0, Exchange, exchange, wakeCallback);
}

/// Settles the body read if it ended: null when it has not.
fn settleBodyRead(exchange: *Exchange, handler: *Handler, ticket: Handler.Ticket, reply: Handler.Reply) ?Handler.Outcome {
    const read = exchange.body_read orelse return null;
    if (read.state != .done) return null;
    exchange.body_read = null;
    const result: Handler.BodyResult = if (read.over_memory) .{ .failed = over_memory } else .{ .bytes = read.room[0..read.len] };
    return handler.settleBody(ticket, read.op, &result, reply, handlerOut(exchange), exchange.loop().now());
}

/// A window of the handler's request body: it stays where it is, and the next is asked for;
/// after the last the handler runs. A body that outgrew the room behind the head (the
/// downstream reused its buffer) is a 413 (the handler never saw any of it).
pub fn keepBody(exchange: *Exchange, last: bool) void {
    assert(exchange.state == .body);
    if (!exchange.downstream.requestBodyWhole()) return exchange.fail(.request_body_too_large);
    const handler = exchange.target.handler;
    exchange.downstream.requestBodySent(); // Asks for the next window, which may come at once.
    if (last) respond(exchange, handler);
}

/// A JavaScript handler's response (handler/Handler.zig), written into `ubuf` and handed to
/// the downstream like a route's own; a handler that fails is a 500 and a log line.
fn respond(exchange: *Exchange, handler: *Handler) void {
    const proxy = exchange.proxy;
    exchange.state = .local;
    const ubuf = proxy.buffers.acquire() orelse return exchange.fail(.overloaded);
    exchange.ubuf = ubuf;
    const head = exchange.request_head;
    const unread = exchange.downstream.requestBodyPending();
    const request: Handler.Request = .{
        .method = head.method_text,
        .target = head.target,
        .path_and_query = rewrite.originForm(head).path,
        .headers = head.headers,
        .ip = exchange.downstream.client().ip,
        .body = if (head.body == .none or unread) "" else exchange.downstream.requestBodyBytes(),
        .body_chunked = head.body != .none and !unread and exchange.downstream.requestBodyChunked(),
        .body_unread = unread,
    };
    const reply = replyOf(exchange);
    conclude(exchange, handler, reply, handler.respond(&request, reply, handlerOut(exchange), proxy.path_scratch, exchange.loop().now()));
}

fn replyOf(exchange: *Exchange) Handler.Reply {
    return .{ .head_only = exchange.request.method == .head };
}

/// Where the handler writes its answer: `ubuf` behind the room the client's protocol frames
/// it in (http/LocalResponse.zig).
fn handlerOut(exchange: *Exchange) []u8 {
    return exchange.ubuf.?[http.LocalResponse.head_room..];
}

/// What the handler's call (or its resumption) came to. A call that waits starts the fetches
/// it made and settles those that already ended (or could not start) before it waits, each
/// settlement a resumption of its own; anything else ends its fetches still in flight.
fn conclude(exchange: *Exchange, handler: *Handler, reply: Handler.Reply, first: Handler.Outcome) void {
    assert(exchange.state == .local and exchange.ubuf != null);
    var outcome = first;
    while (true) {
        const ticket = switch (outcome) {
            .suspended => |ticket| ticket,
            else => break,
        };
        if (startFetches(exchange, handler, ticket, reply)) |next| {
            outcome = next;
            continue;
        }
        if (settleEnded(exchange, handler, ticket, reply)) |next| {
            outcome = next;
            continue;
        }
        return wait(exchange, handler, ticket);
    }
    // A returned fetched body is relayed: its fetch leaves the list before the rest are let go.
    const relay: ?*Subrequest = switch (outcome) {
        .stream => |streamed| blk: {
            const sub = fetchIn(exchange, streamed.slot) orelse break :blk null;
            if (sub.state != .held) break :blk null; // Broken off meanwhile (`body_done`).
            unlink(exchange, sub);
            break :blk sub;
        },
        else => null,
    };
    if (exchange.fetches != null) detachFetches(exchange);
    exchange.body_read = null; // A window still coming is left unread (`gatherWindow`).
    switch (outcome) {
        .response => |response| {
            exchange.log.status = response.local.status;
            exchange.response = .complete;
            exchange.handler_unsent = response.kept;
            // As the connection is now: a drain may have begun while the handler waited.
            exchange.downstream.sendLocal(.{
                .response = response.local,
                .buffer = exchange.ubuf.?,
                .more = response.kept != null,
                .close_after = exchange.downstream.closesAfterLocal(exchange.request.keep_alive),
            });
        },
        .proxy => |proxied| proxyTo(exchange, handler, proxied),
        .stream => |streamed| startRelay(exchange, relay orelse return exchange.fail(.handler_failed), streamed),
        .failed => |failure| exchange.fail(if (failure == .busy) .handler_busy else .handler_failed),
        .suspended => unreachable, // Waited above.
    }
}

/// The previous window of a large answer is out (Exchange.responseSent): the next is copied
/// into `ubuf` and sent, with the downstream's backpressure. The slot is let go of as soon as
/// the last bytes are copied out of it.
pub fn sendMore(exchange: *Exchange) void {
    assert(exchange.state == .local);
    const unsent = exchange.handler_unsent.?;
    assert(unsent.rest.len > 0);
    const ubuf = exchange.ubuf.?;
    const n = @min(ubuf.len, unsent.rest.len);
    @memcpy(ubuf[0..n], unsent.rest[0..n]);
    unsent.rest = unsent.rest[n..];
    const last = unsent.rest.len == 0;
    if (last) releaseUnsent(exchange);
    exchange.downstream.sendResponseBody(ubuf[0..n], last);
}

/// The large answer is sent (or the exchange ends before it is: its client left, the worker
/// stops): the engine slot holding its bytes is free again.
pub fn releaseUnsent(exchange: *Exchange) void {
    const ticket = exchange.handler_unsent.?.ticket;
    exchange.handler_unsent = null;
    exchange.target.handler.releaseBody(ticket);
}

// ---------------------------------------------------------------------------------------------
// A fetched body returned: relayed from the pool to the client (docs/ARCHITECTURE.md, "`fetch`
// to pools")

/// The handler returned a fetched body the pool still holds: the head it wrote (with the
/// pool's framing) is parsed as a pool's response head and goes to the downstream as one, so
/// every client protocol frames it as it frames a relayed response; then each window of the
/// sub-exchange goes on as it comes, acknowledged back only when the client took it.
fn startRelay(exchange: *Exchange, sub: *Subrequest, streamed: Handler.Streamed) void {
    assert(exchange.state == .local and exchange.relay == null);
    sub.parent = exchange;
    sub.startRelay();
    exchange.relay = sub;
    exchange.log.status = streamed.status;
    // The head is the handler's, not a backend's: nothing of it is reported to a pool's health
    // (the exchange has no try; the sub-exchange reports its own).
    exchange.attempt.reported = true;
    const ubuf = exchange.ubuf.?;
    const head_start = upstream_http1.headroom;
    const written = handlerOut(exchange)[0..streamed.len];
    if (head_start + streamed.len > ubuf.len) return exchange.fail(.handler_failed);
    @memmove(ubuf[head_start..][0..streamed.len], written);
    const parser = &exchange.attempt.response_parser;
    parser.reset();
    const head_len = switch (parser.feed(ubuf[head_start..][0..streamed.len], exchange.request.method)) {
        .complete => |len| len,
        // The handler's fields past the parser's limits (their count): not a response sluice
        // can send.
        .incomplete, .invalid => return exchange.fail(.handler_failed),
    };
    assert(head_len == streamed.len);
    // The held window goes behind the head when it fits, in the same write.
    var body_len: u32 = 0;
    if (sub.held.len <= ubuf.len - head_start - head_len) {
        const window = sub.takeHeld();
        @memcpy(ubuf[head_start + head_len ..][0..window.len], window);
        body_len = @intCast(window.len);
    }
    exchange.response = .started;
    exchange.downstream.sendResponse(.{
        .head = &parser.head,
        .buffer = ubuf,
        .head_start = head_start,
        .head_len = head_len,
        .received = head_len + body_len,
        .body_len = body_len,
        .body_last = false,
        .close_delimited = parser.head.body == .close_delimited,
    }, "");
}

/// A window of the relayed body (Subrequest.sendResponseBody): straight to the downstream, from
/// the sub-exchange's buffer.
pub fn relayWindow(exchange: *Exchange, window: []u8, last: bool) void {
    assert(exchange.relay != null);
    if (last) exchange.response = .complete;
    exchange.downstream.sendResponseBody(window, last);
}

/// The downstream sent what the relay gave it (Exchange.responseSent): the held window if it
/// did not go with the head, else the next is asked of the sub-exchange; after the last, the
/// sub-exchange finishes and false is returned: the exchange ends as after any response.
pub fn relaySent(exchange: *Exchange) bool {
    const sub = exchange.relay.?;
    if (exchange.response == .complete) {
        exchange.relay = null;
        sub.finishRelay();
        return false;
    }
    const held = sub.takeHeld();
    if (held.len > 0) {
        exchange.downstream.sendResponseBody(held, false);
        return true;
    }
    sub.relayWindowSent();
    return true;
}

/// The pool broke off the relayed body: the client is told by a close (or a reset stream), as
/// when a route's backend breaks off.
pub fn relayBroken(exchange: *Exchange) void {
    assert(exchange.relay != null);
    exchange.relay = null;
    exchange.log.end_reason = "upstream_response_incomplete";
    exchange.abortWith(null);
}

/// The exchange ends before its relay did (its client left, the worker stops): the
/// sub-exchange is aborted.
pub fn stopRelay(exchange: *Exchange) void {
    const sub = exchange.relay.?;
    exchange.relay = null;
    sub.stopRelay();
}

/// Starts each fetch the call made and has not been started: null when all are under way, or
/// the outcome of settling the first that cannot start (its rejection).
fn startFetches(exchange: *Exchange, handler: *Handler, ticket: Handler.Ticket, reply: Handler.Reply) ?Handler.Outcome {
    const proxy = exchange.proxy;
    while (handler.nextOp(ticket)) |op| switch (op) {
        .fetch => |fetch| {
            var message: [512]u8 = undefined;
            const why = startFetch(exchange, handler, ticket, fetch, &message) orelse continue;
            const result: Handler.FetchResult = .{ .failed = why };
            return handler.settleFetch(ticket, fetch.index, fetch.request.url, &result, reply, handlerOut(exchange), proxy.loop.now());
        },
        .body => |read| {
            const result = startBodyRead(exchange, handler, ticket, read) orelse continue;
            return handler.settleBody(ticket, read, &result, reply, handlerOut(exchange), proxy.loop.now());
        },
        .fetched_body => |read| {
            const refusal = startFetchedRead(exchange, read) orelse continue;
            // A broken-off fetch's message is in its slot: the slot goes back once it is read.
            defer if (refusal.broken) |sub| sub.free();
            const result: Handler.BodyResult = .{ .failed = refusal.why };
            return handler.settleFetchedBody(ticket, read, &result, reply, handlerOut(exchange), proxy.loop.now());
        },
    };
    return null;
}

/// The fetch of this exchange's call in worker fetch slot `slot`, if it is on the list.
fn fetchIn(exchange: *Exchange, slot: u32) ?*Subrequest {
    var it = exchange.fetches;
    while (it) |sub| : (it = sub.next) {
        if (sub.slotIndex() == slot) return sub;
    }
    return null;
}

/// Why a fetched body cannot be read; `broken`: the fetch that broke off meanwhile, off the
/// list, whose slot (holding `why`) the caller frees once the rejection is settled.
const FetchedReadRefusal = struct { why: []const u8, broken: ?*Subrequest = null };

/// Starts reading a fetched body the pool still holds: null, or why it cannot be read.
fn startFetchedRead(exchange: *Exchange, read: Handler.FetchedRead) ?FetchedReadRefusal {
    const used: FetchedReadRefusal = .{ .why = "Response: body already used" };
    const sub = fetchIn(exchange, read.slot) orelse return used;
    switch (sub.state) {
        .held => {
            sub.startRead(read);
            return null;
        },
        .body_done => {
            unlink(exchange, sub);
            return .{ .why = sub.failureMessage(), .broken = sub };
        },
        else => return used,
    }
}

/// Takes `sub` off the exchange's list.
fn unlink(exchange: *Exchange, sub: *Subrequest) void {
    var link = &exchange.fetches;
    while (link.*) |it| : (link = &it.next) {
        if (it != sub) continue;
        link.* = sub.next;
        sub.parent = null;
        sub.next = null;
        return;
    }
    unreachable; // `sub` is one of the exchange's.
}

/// Starts one fetch: null, or why it cannot start (written into `message`).
fn startFetch(exchange: *Exchange, handler: *Handler, ticket: Handler.Ticket, fetch: Handler.Fetch, message: []u8) ?[]const u8 {
    const proxy = exchange.proxy;
    const pool_name = fetch.request.pool;
    // The generation the exchange holds, as for `Response.proxy`.
    const generation = proxy.holds[exchange.hold.?].generation.?;
    const index = generation.config.poolIndex(pool_name) orelse {
        var names: [Config.pool_names_text_bytes_max]u8 = undefined;
        return std.fmt.bufPrint(message, "fetch: no pool is named \"{s}\" (pools: {s})", .{ pool_name, generation.config.poolNames(&names) }) catch message;
    };
    const sub = proxy.acquireFetch() orelse
        return "fetch: every fetch slot of this worker is in use (as many as its connections): try again";
    const pool = &generation.pools[index].locals[proxy.worker_index];
    sub.start(exchange, handler, ticket, fetch, pool) catch |err| {
        proxy.releaseFetch(sub);
        return switch (err) {
            error.NoBuffer, error.NoSlot => "fetch: no buffer is free on this worker: try again",
            error.TooLarge => std.fmt.bufPrint(message, "fetch: the head of the request to pool \"{s}\" is too large (its method, target and fields take more than three quarters of a {d}-byte buffer, or more fields than a request may have)", .{ pool_name, proxy.buffers.buffer_bytes }) catch message,
        };
    };
    return null;
}

/// Settles the first of the call's fetches that has something to settle (its head came, its
/// exchange ended, or the read of its body did): null when none has. A fetch whose body still
/// waits at the pool stays on the list.
fn settleEnded(exchange: *Exchange, handler: *Handler, ticket: Handler.Ticket, reply: Handler.Reply) ?Handler.Outcome {
    var it = exchange.fetches;
    while (it) |sub| : (it = sub.next) {
        if (!sub.settles()) continue;
        const now = exchange.loop().now();
        if (sub.state == .body_done) {
            const read = sub.read.?;
            const result = sub.readResult();
            unlink(exchange, sub);
            defer sub.free();
            return handler.settleFetchedBody(ticket, read, &result, reply, handlerOut(exchange), now);
        }
        const index = sub.fetch.index;
        const url = sub.fetch.request.url;
        if (sub.state == .done) {
            const result = sub.result();
            unlink(exchange, sub);
            defer sub.free();
            return handler.settleFetch(ticket, index, url, &result, reply, handlerOut(exchange), now);
        }
        const result = sub.result(); // `held` from now on.
        return handler.settleFetch(ticket, index, url, &result, reply, handlerOut(exchange), now);
    }
    return null;
}

/// The call no longer waits on its fetches (it ended, or the exchange does): each one still
/// in flight is aborted, and settles nothing.
pub fn detachFetches(exchange: *Exchange) void {
    while (exchange.fetches) |sub| {
        exchange.fetches = sub.next;
        sub.detach();
    }
}

/// One of the exchange's fetches ended: the waiting call goes on at the next turn of the loop
/// (the wake-up path a timer takes). While the call runs, or a wake-up is already under way,
/// that settles it.
pub fn fetchEnded(exchange: *Exchange) void {
    if (exchange.state != .suspended) return;
    if (!exchange.total_timer.isArmed()) return; // Waking: `wake` settles it.
    exchange.loop().timerArmAt(&exchange.proxy.queues.handler_wake, &exchange.total_timer, 0, Exchange, exchange, wakeCallback);
}

/// The handler waits on a timer: the buffer goes back (the answer is written into one taken
/// again when it comes) and the wake-up is armed for its next timer or its deadline.
fn wait(exchange: *Exchange, handler: *Handler, ticket: Handler.Ticket) void {
    assert(exchange.state == .local);
    assert(exchange.handler_ticket == null and !exchange.total_timer.isArmed());
    exchange.proxy.buffers.release(exchange.ubuf.?);
    exchange.ubuf = null;
    exchange.state = .suspended;
    exchange.handler_ticket = ticket;
    // The deadline stops while the client sends the body (gatherWindow starts it again).
    if (exchange.body_read) |read| if (read.state == .start) handler.pauseDeadline(ticket);
    const loop = exchange.loop();
    loop.timerArmAt(&exchange.proxy.queues.handler_wake, &exchange.total_timer, handler.wakeAt(ticket), Exchange, exchange, wakeCallback);
    // While the body is read, the downstream's receive notices a client that leaves.
    if (exchange.body_read) |read| switch (read.state) {
        .start => return startPull(exchange),
        .continuing, .pulling => return,
        .done => {},
    };
    exchange.downstream.watchClient();
}

/// A suspended handler's timer (or its deadline) is due: the call goes on, once the client is
/// no longer watched (the watch's completion is the one the response is written with).
fn wakeCallback(exchange: *Exchange) void {
    assert(exchange.state == .suspended);
    if (exchange.body_read) |read| if (read.state == .continuing) {
        read.wake_deferred = true; // The 100's write holds the completion: `continueSent`.
        return;
    };
    if (exchange.downstream.stopWatching()) return; // Then `watchStopped`.
    wake(exchange);
}

/// The downstream's watch of the client ended after the wake-up asked it to.
pub fn watchStopped(exchange: *Exchange) void {
    assert(exchange.state == .suspended and !exchange.total_timer.isArmed());
    wake(exchange);
}

fn wake(exchange: *Exchange) void {
    assert(exchange.state == .suspended);
    const handler = exchange.target.handler;
    const ticket = exchange.handler_ticket.?;
    exchange.handler_ticket = null;
    exchange.state = .local;
    // Sizing gives every session its buffers (Proxy.buffersPerSession): this is a bug's
    // answer, not load's.
    exchange.ubuf = exchange.proxy.buffers.acquire() orelse {
        handler.abandon(ticket);
        return exchange.fail(.overloaded);
    };
    const reply = replyOf(exchange);
    const now = exchange.loop().now();
    // A fetch or the body's read that ended, else the timers (or the deadline) if due, else on
    // waiting.
    const outcome = settleEnded(exchange, handler, ticket, reply) orelse
        settleBodyRead(exchange, handler, ticket, reply) orelse if (handler.wakeAt(ticket) <= now)
        handler.resumeTimers(ticket, reply, handlerOut(exchange), now)
    else
        Handler.Outcome{ .suspended = ticket };
    conclude(exchange, handler, reply, outcome);
}

/// The exchange ends while its handler waits (Exchange.release): the call's state is freed.
/// The wake-up timer was stopped with the exchange's others.
pub fn abandon(exchange: *Exchange) void {
    assert(!exchange.total_timer.isArmed());
    exchange.target.handler.abandon(exchange.handler_ticket.?);
    exchange.handler_ticket = null;
    exchange.body_read = null; // Its bytes were in the request's heap.
}

/// `Response.proxy`: the handler's target becomes the named pool of the exchange's generation
/// and the exchange goes on as a route to that pool would, with its balancing, health and
/// retries; only the head it sends differs. The handler's strings live in its engine's arena
/// until its next call, so the head is composed here, before anything else runs on this
/// worker, and retries resend the composed head.
fn proxyTo(exchange: *Exchange, handler: *Handler, proxied: Handler.Proxied) void {
    assert(exchange.state == .local and exchange.ubuf != null);
    const now = exchange.loop().now();
    // The generation the exchange holds: a reload may have made another current while the
    // request body was arriving, and only the held one is kept alive for this exchange.
    const generation = exchange.proxy.holds[exchange.hold.?].generation.?;
    const index = generation.config.poolIndex(proxied.pool) orelse {
        var names: [Config.pool_names_text_bytes_max]u8 = undefined;
        _ = handler.failProxy(.unknown_pool, now, proxied.pool, generation.config.poolNames(&names));
        return exchange.fail(.handler_failed);
    };
    exchange.target = .{ .pool = &generation.pools[index].locals[exchange.proxy.worker_index] };
    exchange.head_copy = exchange.proxy.buffers.acquire() orelse return exchange.fail(.overloaded);
    // The body goes on from its first byte, as a retry's would: read before the call, or not
    // read at all. One the handler read and that outgrew the buffer is no longer there.
    if (exchange.request_head.body != .none) {
        if (!exchange.downstream.requestBodyReplayable()) {
            _ = handler.failBodyGone(now, proxied.pool);
            return exchange.fail(.handler_failed);
        }
        exchange.downstream.rewindRequestBody();
    }
    if (!exchange.forward(.{ .target = proxied.path, .fields = proxied.headers, .removed = proxied.removed })) {
        _ = handler.failProxy(.request_too_large, now, proxied.pool, "");
        return exchange.fail(.handler_failed);
    }
}
