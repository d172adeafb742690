//! The client side of an exchange, whatever the client speaks: the one type through which
//! Exchange.zig reaches its client: HTTP/1.1 (`Connection`, with TLS or not underneath), an
//! HTTP/2 stream, and a handler's `fetch` (`Subrequest`), whose "client" is the handler. The
//! exchange calls these and reads no field of the connection behind them, so a new protocol
//! is a new case here and a codec that implements the same calls, with nothing in the
//! exchange to change.
//!
//! A tagged union rather than a table of function pointers: the cases are known when sluice is
//! compiled, each call is a switch the compiler can see through (with one case, no dispatch at
//! all), and a case that misses a call fails to compile.
const std = @import("std");
const linux = std.os.linux;
const Address = @import("../stdx/Address.zig").Address;

const http = @import("../http/http.zig");
const tls = @import("../tls/tls.zig");
const Failure = @import("failure.zig").Failure;
const rewrite = @import("rewrite.zig");
const AccessLog = @import("AccessLog.zig");
const Connection = @import("Connection.zig");
const DownstreamTls = @import("DownstreamTls.zig");
const Exchange = @import("Exchange.zig");
const Http2Stream = @import("Http2Stream.zig");
const Subrequest = @import("Subrequest.zig");

pub const Downstream = union(enum) {
    http1: *Connection,
    h2: *Http2Stream,
    /// A JavaScript handler's `fetch` to a pool: the response is gathered for the handler.
    fetch: *Subrequest,

    /// What the exchange needs to know of its client: facts of the connection, fixed while
    /// the exchange runs.
    pub const Client = struct {
        /// The client's address (the peer's, or its PROXY protocol header's), and as
        /// X-Forwarded-For text.
        address: *const Address,
        ip: []const u8,
        /// The client connection's socket: its local address is the PROXY protocol's
        /// destination (`send_proxy`).
        fd: linux.fd_t,
        /// The peer is a trusted proxy: its forwarding fields are kept and appended to.
        trusted: bool,
        /// The client connection is TLS (the forwarded scheme is https).
        tls: bool,
        /// The worker listener slot the connection came in on (routes may depend on it).
        listener_slot: u8,
        /// The client has sent requests on this connection before this one: it reused it (the
        /// stale keep-alive race is answered differently then: Exchange.mayReuse).
        reused: bool,
    };

    /// Inline: called a few times per request, each for a field or two, so each call site keeps
    /// only what it reads (a call that built all of it was 44 instructions a request).
    pub inline fn client(downstream: Downstream) Client {
        return switch (downstream) {
            .http1 => |c| .{
                .address = &c.address,
                .ip = c.clientIp(),
                .fd = c.socket.fd,
                .trusted = c.client_trusted,
                .tls = c.tls != null,
                .listener_slot = c.listener_slot,
                .reused = c.requests_served > 0,
            },
            .h2 => |stream| stream.client(),
            .fetch => |sub| sub.client(),
        };
    }

    /// The verified client certificate's fields to forward, when the listener asks for them
    /// and the client presented one (`peer` holds the text they point into).
    pub fn certificateFields(downstream: Downstream, peer: *tls.Engine.PeerCertificate) ?rewrite.CertificateFields {
        return switch (downstream) {
            // A plain connection has none: no call for the common case.
            .http1 => |c| if (c.tls == null) null else DownstreamTls.certificateFields(c, peer),
            .h2 => |stream| stream.certificateFields(peer),
            .fetch => |sub| sub.certificateFields(peer),
        };
    }

    /// The access log's facts of the client: its address, the TLS session's, and the body
    /// bytes taken from it for this request (framing included).
    pub fn logFacts(downstream: Downstream, peer: *tls.Engine.PeerCertificate) AccessLog.ClientFacts {
        return switch (downstream) {
            inline else => |d| d.logFacts(peer),
        };
    }

    // The request body.

    pub fn pullRequestBody(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.pullRequestBody(),
        }
    }

    pub fn requestBodySent(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.requestBodySent(),
        }
    }

    pub fn bufferedBodyReject(downstream: Downstream) ?http.Reject {
        return switch (downstream) {
            inline else => |d| d.bufferedBodyReject(),
        };
    }

    pub fn requestBodyPending(downstream: Downstream) bool {
        return switch (downstream) {
            inline else => |d| d.requestBodyPending(),
        };
    }

    pub fn requestBodyWhole(downstream: Downstream) bool {
        return switch (downstream) {
            inline else => |d| d.requestBodyWhole(),
        };
    }

    /// The most body bytes that can be received whole behind the head, for `requestBodyBytes`
    /// (a handler's body that fits is read before it runs).
    pub fn requestBodyRoom(downstream: Downstream) u64 {
        return switch (downstream) {
            inline else => |d| d.requestBodyRoom(),
        };
    }

    pub fn requestBodyBytes(downstream: Downstream) []const u8 {
        return switch (downstream) {
            inline else => |d| d.requestBodyBytes(),
        };
    }

    /// Whether `requestBodyBytes` are chunked as HTTP/1.1 framed them (a handler decodes them).
    pub fn requestBodyChunked(downstream: Downstream) bool {
        return switch (downstream) {
            inline else => |d| d.requestBodyChunked(),
        };
    }

    pub fn requestBodyReplayable(downstream: Downstream) bool {
        return switch (downstream) {
            inline else => |d| d.requestBodyReplayable(),
        };
    }

    pub fn rewindRequestBody(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.rewindRequestBody(),
        }
    }

    // The response.

    pub const Local = struct {
        response: http.LocalResponse,
        /// Its bytes are `buffer[LocalResponse.head_room..][0..response.len]`; the room in
        /// front is the downstream's to frame them in.
        buffer: []u8,
        /// More body follows in `sendResponseBody` windows, each acknowledged with
        /// `Exchange.responseSent` as a relayed body's are (a handler's answer larger than a
        /// buffer).
        more: bool,
        /// The client connection closes after this response.
        close_after: bool,

        /// The producer's bytes: the field lines, then the body's first bytes.
        pub fn text(local: Local) []u8 {
            return local.buffer[http.LocalResponse.head_room..][0..local.response.len];
        }
    };

    pub fn sendInterim(downstream: Downstream, view: Exchange.ResponseView) void {
        switch (downstream) {
            inline else => |d| d.sendInterim(view),
        }
    }

    pub fn sendContinue(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.sendContinue(),
        }
    }

    pub fn sendResponse(downstream: Downstream, view: Exchange.ResponseView, extra_field: []const u8) void {
        switch (downstream) {
            inline else => |d| d.sendResponse(view, extra_field),
        }
    }

    pub fn sendResponseBody(downstream: Downstream, window: []u8, last: bool) void {
        switch (downstream) {
            inline else => |d| d.sendResponseBody(window, last),
        }
    }

    /// Whether a body without a length may come as data with no framing, ended by the backend's
    /// stream (Http2Try.streamed), its trailers by `keepTrailers`: for a client whose protocol
    /// frames its own. An HTTP/1.1 client's is the backend's chunked framing, relayed; a
    /// fetch's body may go on to one.
    pub fn takesStreamedBody(downstream: Downstream) bool {
        return downstream == .h2;
    }

    /// A streamed body's trailers, before its last (empty) window: for a client that takes
    /// them (`Exchange.relay_trailers`). They point into the try's memory, kept until the
    /// exchange ends.
    pub fn keepTrailers(downstream: Downstream, fields: []const http.Header) void {
        switch (downstream) {
            .h2 => |stream| stream.keepTrailers(fields),
            .http1, .fetch => unreachable, // `takesStreamedBody` is false.
        }
    }

    pub fn sendResponseFromPipe(downstream: Downstream, pipe_read: linux.fd_t, len: u32) void {
        switch (downstream) {
            inline else => |d| d.sendResponseFromPipe(pipe_read, len),
        }
    }

    pub fn takesSplice(downstream: Downstream) bool {
        return switch (downstream) {
            inline else => |d| d.takesSplice(),
        };
    }

    /// A response sluice made itself (a route's, the 404, a handler's): the downstream frames
    /// it for its protocol (http/LocalResponse.zig).
    pub fn sendLocal(downstream: Downstream, local: Local) void {
        switch (downstream) {
            inline else => |d| d.sendLocal(local),
        }
    }

    /// While the exchange's handler waits: notice a client that goes away meanwhile.
    pub fn watchClient(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.watchClient(),
        }
    }

    /// The handler is to answer: stop watching. True: the exchange waits for
    /// `Exchange.clientWatchStopped` before it answers.
    pub fn stopWatching(downstream: Downstream) bool {
        return switch (downstream) {
            inline else => |d| d.stopWatching(),
        };
    }

    pub fn closesAfterLocal(downstream: Downstream, keep_alive: bool) bool {
        return switch (downstream) {
            inline else => |d| d.closesAfterLocal(keep_alive),
        };
    }

    /// The number of bytes the client is sent for `failure` (the access log's `bytes`).
    pub fn errorResponseLen(downstream: Downstream, failure: Failure) usize {
        return switch (downstream) {
            inline else => |d| d.errorResponse(failure).len,
        };
    }

    // A tunnel after a 101.

    pub fn startTunnel(downstream: Downstream, view: Exchange.ResponseView) void {
        switch (downstream) {
            inline else => |d| d.startTunnel(view),
        }
    }

    pub fn tunnelToClient(downstream: Downstream, bytes: []const u8) void {
        switch (downstream) {
            inline else => |d| d.tunnelToClient(bytes),
        }
    }

    pub fn tunnelSent(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.tunnelSent(),
        }
    }

    pub fn tunnelProgress(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.tunnelProgress(),
        }
    }

    pub fn tunnelUpstreamClosed(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.tunnelUpstreamClosed(),
        }
    }

    // The end of the exchange.

    pub fn exchangeFinished(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.exchangeFinished(),
        }
    }

    pub fn closeAfterEarlyResponse(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.closeAfterEarlyResponse(),
        }
    }

    pub fn exchangeFailed(downstream: Downstream, failure: ?Failure, response_started: bool) void {
        switch (downstream) {
            inline else => |d| d.exchangeFailed(failure, response_started),
        }
    }

    pub fn exchangeReleased(downstream: Downstream) void {
        switch (downstream) {
            inline else => |d| d.exchangeReleased(),
        }
    }
};
