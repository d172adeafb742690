//! One try of an exchange on one backend: the upstream connection it holds, how far its
//! request got, what came back, and the completions and timer of its socket operations.
//!
//! Decision: a retry starts a fresh `Attempt` wholesale (`exchange.attempt.reset(...)`),
//! with nothing copied field by field: what must survive a retry (the request, the backends
//! tried, the failure to answer with) belongs to the `Exchange`, and a field added here is
//! reset for every try by construction.
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const Completion = loop_ns.Completion;
const Timer = loop_ns.Timer;
const http = @import("../http/http.zig");
const Connections = @import("../upstream/Connections.zig");
const UpstreamTls = @import("UpstreamTls.zig");
const Http2Try = @import("Http2Try.zig");

const Attempt = @This();

backend_index: u16,
state: State = .connecting,
/// The upstream connection, busy while this attempt holds it.
connection: ?*Connections.Connection = null,
/// Holds a lease on its backend (`LocalPool.acquire`), until `LocalPool.release`.
leased: bool = false,
/// Its outcome went to the pool's health (once per try).
reported: bool = false,
/// The response is a 5xx: reported as such when it is complete.
server_error: bool = false,
/// The connect timer fired and cancelled the connect.
connect_timed_out: bool = false,
/// The TLS engine refused what the backend sent (an alert, such as TLS 1.3's "certificate
/// required", which comes after the client's side of the handshake is done; a bad record):
/// a failure before any response byte is then `upstream_tls_failed`, not a reset.
tls_failed: bool = false,
/// Bytes of the composed request head sent.
head_sent: u32 = 0,
/// Response bytes received into the exchange's upstream buffer (at its headroom, until the
/// head is complete). Nonzero means the backend answered: no stale-connection retry, no
/// replay (Exchange.upstreamFailed).
received: u32 = 0,
/// The connection can carry another request once this response is done.
reusable: bool = false,
/// The request body (or tunnel) bytes being sent (upstream_http1.sendBody, tunnel.toUpstream).
outgoing: Outgoing = .{},
/// The response body's framing as the backend sent it, from its final head on
/// (upstream_http1.startBody; trailers dropped on the way unless `Exchange.relay_trailers`).
response_body: Framing = .none,
response_parser: http.ResponseParser,
/// Receives on the upstream socket; sends (and the connect, a socket's first write).
recv: Completion = .{},
send: Completion = .{},
/// Connect, response and body-gap deadlines of this try (`tries.rearmAttemptTimer`).
timer: Timer = .{},
/// With TLS to the backend: the codec between the socket and the exchange (its buffers are
/// this try's; the engine is the connection's).
tls: ?UpstreamTls = null,
/// With a multiplexed (h2c) pool: the try's stream on a shared connection, in the worker's
/// slot beside this exchange's (Proxy.h2_tries); `connection` is then null.
h2: ?*Http2Try = null,

/// A window of bytes to the backend: a slice of the downstream's buffer, which it keeps in
/// place until told it was sent.
pub const Outgoing = struct {
    bytes: []const u8 = "",
    /// A window is at most a buffer.
    sent: u32 = 0,
    /// The window ends the request body.
    last: bool = false,

    pub fn rest(outgoing: *const Outgoing) []const u8 {
        return outgoing.bytes[outgoing.sent..];
    }
};

pub const Framing = union(enum) {
    none,
    length: u64,
    chunked: http.ChunkedDecoder,
    close_delimited,
    /// An HTTP/2 stream's body without a length, to a client whose protocol frames its own
    /// (Http2Try.streamed): data as it came, ended by the stream's clean end, its trailers
    /// apart (`Http2Try.takeTrailers`).
    stream,
};

/// Where the try is; each transition is asserted where it happens (Exchange).
pub const State = enum {
    /// Connecting a fresh socket.
    connecting,
    /// The TLS handshake on a fresh connection, under the connect deadline.
    handshaking,
    /// Sending the composed request head.
    sending_head,
    /// Head sent: request body (if any) and response head under way at once.
    awaiting_response,
    /// The response timed out before its head, with the request whole and a retry reserved:
    /// the head's receive is cancelled, and its callback sends the request elsewhere
    /// (`tries.receiveCancelled`). No deadline runs meanwhile.
    cancelling_for_retry,
    /// A 1xx is being relayed; the final response follows.
    relaying_interim,
    /// The final head is relayed; its body streams to the client.
    relaying_body,
    /// After a 101: bytes both ways, untouched.
    tunnel,
    /// Over: the response is complete, or the try failed.
    done,
};

pub fn init(backend_index: u16, fields: []http.Header, limits: http.Limits) Attempt {
    return .{
        .backend_index = backend_index,
        .response_parser = .init(fields, limits),
    };
}

/// `init` in place: a call's result is built on the stack and copied, and safe builds fill its
/// undefined parts with 0xAA first (about 200 instructions per try, measured with callgrind).
pub fn reset(attempt: *Attempt, backend_index: u16, fields: []http.Header, limits: http.Limits) void {
    attempt.* = .{
        .backend_index = backend_index,
        .response_parser = .init(fields, limits),
    };
}

/// Operations of this try still pending (each gets exactly one callback).
pub fn pendingOps(attempt: *const Attempt) u8 {
    return @as(u8, @intFromBool(attempt.recv.isPending())) + @intFromBool(attempt.send.isPending());
}

test "attempt: a fresh attempt has nothing carried over" {
    var fields: [4]http.Header = undefined;
    const limits: http.Limits = .{ .header_bytes_max = 1024, .headers_count_max = 4, .target_bytes_max = 512 };
    var attempt: Attempt = .init(3, &fields, limits);
    attempt.received = 10;
    attempt.reported = true;
    attempt = .init(4, &fields, limits);
    try std.testing.expectEqual(@as(u32, 0), attempt.received);
    try std.testing.expect(!attempt.reported and attempt.state == .connecting);
    try std.testing.expectEqual(@as(u8, 0), attempt.pendingOps());
}

test "attempt: its size is pinned (it lives in every exchange slot)" {
    // The TLS codec's state (112 bytes, and its optional's tag) came with TLS to backends: a
    // pooled connection's engine lives in the connection, the buffers are taken per try.
    try std.testing.expectEqual(@as(usize, 112), @sizeOf(UpstreamTls));
    // 560 before the parser's `connection_present`, 568 before `h2` (a try's stream on a shared
    // HTTP/2 connection: its state is in the worker's slot beside the exchange's). 656 once the
    // request window being sent and the response body's framing moved here from the exchange
    // (upstream_http1.zig: they are the try's own state; the exchange slot did not grow).
    errdefer std.debug.print("the attempt is {d} bytes, the exchange slot {d}\n", .{ @sizeOf(Attempt), @sizeOf(@import("Exchange.zig")) });
    try std.testing.expect(@sizeOf(Attempt) <= 656);
    // The exchange's 1,176 bytes include `head_copy`, the head a handler's Response.proxy
    // keeps for retries (merged beside TLS to backends, which had pinned 1,152), and 16 for
    // the parsers' `connection_present`, and 8 for `request_head`, the protocol-neutral head
    // the exchange reads (the HTTP/1.1 parser that fills it stays in the slot), 8 for the
    // downstream's tag now that it has two cases (HTTP/1.1, an HTTP/2 stream), 8 for the
    // header policy it applies (the policy's own state is in `Proxy.policy_slots`: a bigger
    // slot made every exchange's initial copy longer, 34 instructions a request in callgrind),
    // and 16 for the tried members as a list of 12 (a set of bits stopped at 64 members).
    // And 8 for the attempt's `h2` (HTTP/2 to backends), and 8 more once the membership
    // table (issue 23) and the PROXY protocol and rate limits (issue 24) were merged beside it
    // (1,232 measured with all three). A suspended handler call's ticket (6 bytes, 2-aligned)
    // fits in what padding there was. And 24 for compression (issue 24): the route's settings
    // and the response's coding with its compressor slot (the slot's state is in
    // `Proxy.compressors`, the chunk waiting behind the head in the slot too). And 8 for
    // `fetches`, a handler's sub-requests in flight (their state is in `Proxy.fetches`), and 8
    // for `relay`, the fetched body a handler returned, streamed from its sub-exchange.
    errdefer std.debug.print("the exchange slot is {d} bytes\n", .{@sizeOf(@import("Exchange.zig"))});
    try std.testing.expect(@sizeOf(@import("Exchange.zig")) <= 1272);
}
