//! An upgraded exchange (a real 101, for a request that asked for it): after the head, bytes
//! flow both ways untouched until each side has closed. The exchange keeps its try's upstream
//! connection and buffer (`ubuf` holds the backend's bytes on their way to the client, the
//! downstream's own buffer the client's on their way to the backend); the downstream's tunnel
//! idle timer is the only deadline.
const assert = @import("std").debug.assert;

const sys = @import("../stdx/sys.zig");
const Connections = @import("../upstream/Connections.zig");
const Exchange = @import("Exchange.zig");
const upstream_http1 = @import("upstream_http1.zig");

/// A 101 arrived (its head is `head_len` bytes at the front of the response buffer): relayed,
/// and the tunnel starts, unless the client did not ask for it or its body is not all sent.
pub fn start(exchange: *Exchange, head_len: u32) void {
    const attempt = &exchange.attempt;
    // A 101 the client did not ask for, or before its body was sent, is not a valid answer.
    if (!exchange.request.upgrade_allowed or !exchange.request_done) {
        exchange.report(.reset);
        return exchange.failMidExchange(.upstream_bad_response);
    }
    attempt.state = .tunnel;
    exchange.response = .started;
    exchange.report(.success);
    exchange.countResponse(101);
    exchange.log.status = 101;
    // The histogram times the upgrade; the access log line waits for the tunnel to end.
    exchange.observeLatency(exchange.loop().now() -| exchange.log.started_ns);
    exchange.loop().timerCancel(&exchange.total_timer); // A tunnel lives as long as it is used.
    exchange.loop().timerCancel(&attempt.timer); // The downstream's tunnel idle timer rules.
    exchange.localPool().stats.upgrades.add(1);
    exchange.downstream.startTunnel(exchange.view(head_len, 0, false));
}

/// Tunnel bytes from the client, to send to the backend; `Downstream.tunnelSent` when sent.
pub fn toUpstream(exchange: *Exchange, bytes: []const u8) void {
    assert(exchange.attempt.state == .tunnel);
    exchange.attempt.outgoing = .{ .bytes = bytes };
    sendRest(exchange);
}

fn sendRest(exchange: *Exchange) void {
    upstream_http1.send(exchange, exchange.attempt.outgoing.rest(), sendCallback);
}

fn sendCallback(exchange: *Exchange, result: sys.SendError!usize) void {
    if (exchange.opDone()) return;
    const n = result catch return exchange.abortWith(null);
    const outgoing = &exchange.attempt.outgoing;
    outgoing.sent += @intCast(n);
    exchange.downstream.tunnelProgress();
    if (outgoing.rest().len > 0) return sendRest(exchange);
    exchange.downstream.tunnelSent();
}

/// The downstream is ready for more tunnel bytes from the backend.
pub fn recv(exchange: *Exchange) void {
    assert(exchange.attempt.state == .tunnel);
    upstream_http1.recv(exchange, exchange.ubuf.?, recvCallback);
}

fn recvCallback(exchange: *Exchange, result: sys.RecvError!usize) void {
    if (exchange.opDone()) return;
    const n = result catch return exchange.abortWith(null);
    if (n == 0) return exchange.downstream.tunnelUpstreamClosed();
    exchange.downstream.tunnelToClient(exchange.ubuf.?[0..n]);
}

/// The client closed its side of the tunnel: so does the backend's.
pub fn clientClosed(exchange: *Exchange) void {
    // The peer may be gone already; the close that follows cleans up either way.
    const connection = exchange.attempt.connection orelse return;
    // Its close_notify first, unless tunnel bytes are still being sent (it would come before
    // them); the half-close alone says the same to a backend that reads to the end.
    if (connection.tls) |*engine| if (connection.socket.writer == null) {
        Connections.closeNotify(exchange.loop(), &connection.socket, engine);
    };
    exchange.loop().shutdownWrite(&connection.socket) catch {};
}
