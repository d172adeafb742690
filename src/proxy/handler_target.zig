//! An exchange whose target is a JavaScript handler (handler/Handler.zig): the request body is
//! gathered whole first (into the downstream's buffer, behind the head), then the handler runs
//! and answers, fails (a 500), or hands the request to a pool with `Response.proxy`, after
//! which the exchange goes on as a route to that pool would.
const assert = @import("std").debug.assert;

const Config = @import("../config/Config.zig");
const Handler = @import("../handler/Handler.zig");
const rewrite = @import("rewrite.zig");
const Exchange = @import("Exchange.zig");

/// A handler runs once the request is whole: a body (up to the handler's `body_max` and the
/// room behind the head in the downstream's buffer) is received first, so that the handler
/// sees it as `request.body` and a `Response.proxy` can still send it on from there.
pub fn start(exchange: *Exchange, handler: *Handler) void {
    if (!exchange.downstream.requestBodyPending()) return respond(exchange, handler);
    if (handler.body_bytes_max == 0) return exchange.fail(.request_body_too_large);
    if (exchange.body_bytes_max == 0 or exchange.body_bytes_max > handler.body_bytes_max) {
        exchange.body_bytes_max = handler.body_bytes_max; // The connection checks chunked bodies.
    }
    if (exchange.bodyOverLimit()) return exchange.fail(.request_body_too_large);
    exchange.state = .body;
    // The body will be read: a client waiting on `Expect: 100-continue` is told to send it. An
    // over-limit Content-Length got its 413 above instead, without reading the body.
    if (exchange.request_head.expect_continue) return exchange.downstream.sendContinue();
    exchange.downstream.pullRequestBody();
}

/// The 100 Continue a handler's request asked for is out: its body comes next.
pub fn continueSent(exchange: *Exchange) void {
    assert(exchange.state == .body);
    exchange.downstream.pullRequestBody();
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
    const close = exchange.downstream.closesAfterLocal(exchange.request.keep_alive);
    const head = exchange.request_head;
    const request: Handler.Request = .{
        .method = head.method_text,
        .target = head.target,
        .path_and_query = rewrite.originForm(head).path,
        .headers = head.headers,
        .ip = exchange.downstream.client().ip,
        .body = if (head.body == .none) "" else exchange.downstream.requestBodyBytes(),
        .body_chunked = head.body != .none and exchange.downstream.requestBodyChunked(),
    };
    const reply: Handler.Reply = .{
        .version = exchange.request.version,
        .head_only = exchange.request.method == .head,
        .close = close,
    };
    switch (handler.respond(&request, reply, ubuf, proxy.path_scratch, exchange.loop().now())) {
        .response => |response| {
            exchange.log.status = response.status;
            exchange.response = .complete;
            exchange.downstream.sendLocal(ubuf[0..response.len], close);
        },
        .proxy => |proxied| proxyTo(exchange, handler, proxied),
        .failed => exchange.fail(.handler_failed),
    }
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
    // The body the handler read goes on from its first byte, as a retry's would.
    if (exchange.request_head.body != .none) exchange.downstream.rewindRequestBody();
    if (!exchange.forward(.{ .target = proxied.path, .fields = proxied.headers, .removed = proxied.removed })) {
        _ = handler.failProxy(.request_too_large, now, proxied.pool, "");
        return exchange.fail(.handler_failed);
    }
}
