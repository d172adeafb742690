//! One try of an exchange as a stream on a shared HTTP/2 connection (Http2Backend.zig): the
//! codec between the exchange's operations and the stream, as UpstreamTls is between the
//! exchange and a TLS socket. Every connect, send and receive the exchange makes on the backend
//! comes here when its pool speaks h2c, and the exchange's framing, retries, deadlines and
//! relay stay as they are: the stream is presented to it as the HTTP/1.1 message it would
//! have read and written.
//!
//! - **Connect** completes when the shared connection is up (at once if it is).
//! - **The request head** the exchange composed (HTTP/1.1 text, with its forwarding fields and
//!   rules applied) becomes the stream's HEADERS: the request line gives `:method` and
//!   `:path`, Host `:authority`; names are lowercased and the fields HTTP/2 forbids dropped
//!   (RFC 9113 §8.2.2), `te: trailers` kept when the client sent it (gRPC servers ask for it).
//! - **The request body**, in the client's framing, is sent as DATA: a chunked one de-chunked
//!   on the way (nothing is rewritten in the client's buffer, which a retry may send again).
//!   A window is reported sent once nghttp2 copied it into frames.
//! - **The response head** is kept in the try's inbox (one buffer of the worker's) as its
//!   fields, which nghttp2 checked (lowercase names, no CR, LF or NUL in values, one valid
//!   content-length, no connection-specific field), and put into the exchange's response
//!   parser as the head it would have parsed (`takeHead`): no HTTP/1.1 text is printed or
//!   parsed for it. The downstream writes it out in its own protocol from the fields.
//! - **The body** goes to the exchange as data when it has a content-length, or when the
//!   client's protocol frames its own (an HTTP/2 client: `streamed`, the exchange's `.stream`
//!   framing), ended by the stream's clean end, with its trailers kept as fields
//!   (`takeTrailers`). For an HTTP/1.1 client or a fetch, a body without a length is written
//!   chunked, DATA as chunks and the trailers as the trailer section, which the exchange
//!   relays as an HTTP/1.1 backend's. The stream's window (`windowBytes`) opens again only as
//!   the exchange takes the bytes, so a slow client slows its own stream, not the connection.
//!
//! Operations that cannot complete yet are parked, and complete through the loop's ready
//! queue (`Loop.recvReady`, `sendReady`) on a stand-in socket of the try's: one callback per
//! operation, after the batch, as from the kernel; `cancel` completes them with
//! `error.Canceled`, so the exchange's abort and timeouts work unchanged.
//!
//! Cost of this shape: the body is copied twice (DATA into the inbox, then into the
//! exchange's buffer), since a receive completes into the exchange's buffer as a socket's
//! does (docs/HTTP2.md, "Cost").
const std = @import("std");
const assert = std.debug.assert;

const loop_ns = @import("../loop/loop.zig");
const Socket = loop_ns.Socket;
const sys = @import("../stdx/sys.zig");
const http = @import("../http/http.zig");
const h2 = @import("../h2/h2.zig");
const Exchange = @import("Exchange.zig");
const Http2Backend = @import("Http2Backend.zig");
const upstream_http1 = @import("upstream_http1.zig");

const ClientSession = h2.ClientSession;
const Field = ClientSession.Field;
const Http2Try = @This();

exchange: *Exchange,
link: ?*Http2Backend = null,
stream: ?ClientSession.StreamId = null,
/// The stand-in socket the try's operations complete on (nothing is read or written on it).
socket: Socket,
/// Parked operations.
connect_parked: bool = false,
recv_parked: bool = false,
recv_buffer: []u8 = &.{},
recv_callback: *const Exchange.RecvCallback = undefined,
/// The parked receive is for a head (`recvHead`), which it takes whole from the inbox.
recv_head: bool = false,
send_parked: bool = false,
send_window: []const u8 = "",
send_pos: usize = 0,
send_callback: *const Exchange.SendCallback = undefined,
/// The request: its head went out; its body's framing as the client sent it; nghttp2 was
/// told the body ended; nghttp2 waits for body bytes (`resumeBody` when a window comes).
head_sent: bool = false,
/// The head waits for a stream slot on its connection (`send_window` holds it).
head_waiting: bool = false,
body: RequestBody = .none,
body_ended: bool = false,
body_deferred: bool = false,
/// The response, in order: heads as `HeadRecord`s (`[pos..heads_end]`), body data
/// (`[..data_end]`, framed as it is handed over), then the end of a chunked body with its
/// trailers as HTTP/1.1 text (`[..end]`).
inbox: ?[]u8 = null,
pos: u32 = 0,
heads_end: u32 = 0,
data_end: u32 = 0,
end: u32 = 0,
/// The final head said no body may follow (HEAD, 204, 304): DATA is not expected.
no_body: bool = false,
final_head: bool = false,
/// The body goes chunked (no content-length from the backend); its end (the last chunk and
/// any trailers) is in the inbox.
chunked: bool = false,
/// The body has no length and the client's protocol frames its own (an HTTP/2 client's
/// stream, `Downstream.takesStreamedBody`): it goes over as data, unframed, and ends with the
/// stream (the exchange's `.stream` framing); its trailers wait in the inbox as a record
/// (`takeTrailers`). `chunked` is then false.
streamed: bool = false,
tail_written: bool = false,
/// END_STREAM arrived; the stream closed (and how); it failed on our side (a head past the
/// limits, an inbox that could not hold what arrived).
ended: bool = false,
closed: ?ClientSession.ErrorCode = null,
failed: bool = false,
/// Its connection's TLS handshake failed (Http2BackendTls.zig): the connect fails as a TLS one.
tls_failed: bool = false,
/// On the connection's list of tries.
next: ?*Http2Try = null,
prev: ?*Http2Try = null,

const RequestBody = union(enum) {
    none,
    length: u64,
    chunked: http.ChunkedDecoder,
};

/// Room in the inbox kept beside a window of DATA: a response head and the end of a chunked
/// body with its trailers, as the exchange's limits allow (a larger one fails the stream).
/// A head's record is smaller than its HTTP/2 header list size (RFC 9113 §6.5.2 counts 32
/// bytes per field, a record 8), which nghttp2 bounds by the response head limit.
pub const text_room_bytes = 8 * 1024;

/// The response bytes a stream may have in flight: what its inbox holds beside the heads.
pub fn windowBytes(buffer_bytes: u32) u32 {
    assert(buffer_bytes > 2 * text_room_bytes);
    return buffer_bytes - text_room_bytes;
}

/// Chunk framing around `n` data bytes: a size line of up to 16 hex digits and two CRLFs.
const chunk_framing_bytes = 16 + 4;

// ---------------------------------------------------------------------------------------------
// The exchange's operations

/// The try begins on `backend` of its pool: attached to a shared connection, with a "connect"
/// that completes when it is up (`connectCallback` of the exchange, one operation).
pub fn start(exchange: *Exchange, backend: u16) void {
    const proxy = exchange.proxy;
    const attempt = proxy.h2TrySlot(exchange);
    attempt.* = .{ .exchange = exchange, .socket = .{ .fd = 0 } };
    exchange.attempt.h2 = attempt;
    const link = Http2Backend.attachTry(proxy, exchange.localPool(), backend, attempt) catch |err| {
        exchange.attempt.h2 = null;
        return exchange.h2Unavailable(err == error.AtBackendCap);
    };
    attempt.link = link;
    attempt.socket.fd = link.connection.socket.fd;
    exchange.submit();
    attempt.connect_parked = true;
    if (link.usable()) attempt.connected(.up);
}

/// How the parked connect ends.
pub const Connected = enum { up, failed, tls_failed, canceled };

/// The shared connection is up (or failed): the parked connect completes.
pub fn connected(attempt: *Http2Try, result: Connected) void {
    if (!attempt.connect_parked) return;
    attempt.connect_parked = false;
    attempt.tls_failed = result == .tls_failed;
    const value: sys.SendError!usize = switch (result) {
        .up => 0,
        .canceled => error.Canceled,
        .failed, .tls_failed => error.ConnectionResetByPeer,
    };
    const exchange = attempt.exchange;
    exchange.loop().sendReady(&exchange.attempt.send, &attempt.socket, "", value, Exchange, exchange, connectDone);
}

fn connectDone(exchange: *Exchange, result: sys.SendError!usize) void {
    const tls_failed = if (exchange.attempt.h2) |attempt| attempt.tls_failed else false;
    if (tls_failed) {
        if (exchange.opDone()) return;
        return exchange.connectFailed(.upstream_tls_failed);
    }
    upstream_http1.connected(exchange, if (result) |_| {} else |err| switch (err) {
        error.Canceled => error.Canceled,
        else => error.ConnectionRefused,
    });
}

/// A send: the request head (the first), then windows of its body.
pub fn send(exchange: *Exchange, bytes: []const u8, comptime callback: Exchange.SendCallback) void {
    const attempt = exchange.attempt.h2.?;
    if (!attempt.head_sent) {
        attempt.head_sent = true;
        const link = attempt.link.?;
        if (link.usable() and !link.session.canOpen() and !link.session.goaway_received) {
            // Every stream the backend takes is open (tries attached before its SETTINGS said
            // how many): the head waits for one to close, under the exchange's deadlines.
            attempt.head_waiting = true;
            attempt.send_window = bytes;
            attempt.send_callback = callback;
            attempt.send_parked = true;
            return;
        }
        const sent = attempt.submitHead(bytes);
        exchange.loop().sendReady(&exchange.attempt.send, &attempt.socket, bytes, if (sent) bytes.len else error.ConnectionResetByPeer, Exchange, exchange, callback);
        return;
    }
    assert(!attempt.send_parked);
    attempt.send_window = bytes;
    attempt.send_pos = 0;
    attempt.send_callback = callback;
    attempt.send_parked = true;
    if (attempt.stream == null or attempt.closed != null) return attempt.finishSend(attempt.bodyUnwanted());
    if (attempt.body_deferred) {
        attempt.body_deferred = false;
        attempt.link.?.session.resumeBody(attempt.stream.?) catch {};
    }
    attempt.link.?.flush();
}

/// A receive of the response body's next bytes, in HTTP/1.1 framing, when there are some.
pub fn recv(exchange: *Exchange, buffer: []u8, comptime callback: Exchange.RecvCallback) void {
    const attempt = exchange.attempt.h2.?;
    assert(!attempt.recv_parked);
    attempt.recv_buffer = buffer;
    attempt.recv_callback = callback;
    attempt.recv_parked = true;
    attempt.recv_head = false;
    attempt.deliver();
}

/// A receive of the next response head (an interim one, or the final one): it completes with
/// the length of the head's record in the inbox, which `takeHead` then puts in the exchange's
/// response parser; with 0 or an error when the stream ended or failed first.
pub fn recvHead(exchange: *Exchange, comptime callback: Exchange.RecvCallback) void {
    const attempt = exchange.attempt.h2.?;
    assert(!attempt.recv_parked);
    attempt.recv_buffer = &.{};
    attempt.recv_callback = callback;
    attempt.recv_parked = true;
    attempt.recv_head = true;
    attempt.deliver();
}

/// The head whose receive completed goes into the exchange's response parser, as the parser
/// would have left it after reading it as text; or why it is refused. Its fields point into
/// the inbox, where nothing is written until the next event from the stream: after the
/// exchange's synchronous use of the head (the downstream copies or writes it out at once).
pub fn takeHead(exchange: *Exchange) ?http.Reject {
    const attempt = exchange.attempt.h2.?;
    const inbox = attempt.inbox.?;
    assert(attempt.pos < attempt.heads_end);
    const parser = &exchange.attempt.response_parser;
    var reader: HeadRecord.Reader = .{ .bytes = inbox[attempt.pos..attempt.heads_end] };
    const record = reader.header();
    const fields = parser.headersBuffer();
    assert(record.count <= fields.len); // nghttp2's block holds at most as many.
    for (fields[0..record.count]) |*field| field.* = reader.field();
    attempt.pos += @intCast(reader.at);
    if (attempt.pos == attempt.end) attempt.emptyInbox();
    if (record.reject) |reject| return reject;
    parser.setHead(.{
        .version = .http11,
        .status = record.status,
        .reason = "",
        .headers = fields[0..record.count],
        .body = record.body,
        // A stream's end is the message's; the connection is the shared one's.
        .keep_alive = true,
        .upgrade = false,
        .has_connection = false,
    });
    return null;
}

/// Whether a receive is parked (for the exchange's deadlines, as `isPending` for a socket's).
pub fn receiving(attempt: *const Http2Try) bool {
    return attempt.recv_parked;
}

/// The exchange cancels what it has pending: parked operations complete with Canceled.
pub fn cancel(exchange: *Exchange) void {
    const attempt = exchange.attempt.h2.?;
    if (attempt.connect_parked) attempt.connected(.canceled);
    if (attempt.recv_parked) attempt.finishRecv(error.Canceled);
    if (attempt.send_parked) attempt.finishSend(error.Canceled);
    // What is already in the loop's ready queue comes back as it is.
    if (exchange.attempt.recv.isPending()) exchange.loop().cancel(&exchange.attempt.recv);
    if (exchange.attempt.send.isPending()) exchange.loop().cancel(&exchange.attempt.send);
}

/// The try is over (`clean`: its response was complete): the stream is reset if it is still
/// open, the try leaves its connection, and the inbox goes back.
pub fn finish(exchange: *Exchange, clean: bool) void {
    const attempt = exchange.attempt.h2 orelse return;
    assert(!attempt.connect_parked and !attempt.recv_parked and !attempt.send_parked);
    if (attempt.link) |link| {
        if (attempt.stream) |stream| if (attempt.closed == null) {
            // Whatever still comes on the stream (the reset may wait behind frames the backend
            // is slow to take, and its answer may be on its way) is dropped: this try's slot
            // may be another exchange's by then.
            link.session.forget(stream);
            link.session.reset(stream, if (clean) .no_error else .cancel) catch {};
            link.flush();
        };
        link.detach(attempt);
        attempt.link = null;
    }
    attempt.stream = null;
    if (attempt.inbox) |inbox| exchange.proxy.buffers.release(inbox);
    attempt.inbox = null;
    exchange.attempt.h2 = null;
}

/// What a body window gets once the stream is closed: after a complete response, the backend
/// did not need the rest (RFC 9113 §8.1: a server may answer before the request ends, then
/// reset the stream with NO_ERROR), so it is dropped as sent; else the stream failed.
fn bodyUnwanted(attempt: *const Http2Try) sys.SendError!usize {
    return if (attempt.ended) attempt.send_window.len else error.ConnectionResetByPeer;
}

fn finishRecv(attempt: *Http2Try, result: sys.RecvError!usize) void {
    attempt.recv_parked = false;
    attempt.recv_head = false;
    const exchange = attempt.exchange;
    exchange.loop().recvReady(&exchange.attempt.recv, &attempt.socket, attempt.recv_buffer, result, Exchange, exchange, recvDelivered);
}

/// The ready receive's callback: the exchange's own, kept at `recv`.
fn recvDelivered(exchange: *Exchange, result: sys.RecvError!usize) void {
    exchange.attempt.h2.?.recv_callback(exchange, result);
}

fn sendDelivered(exchange: *Exchange, result: sys.SendError!usize) void {
    exchange.attempt.h2.?.send_callback(exchange, result);
}

/// A stream slot came free on the connection: the waiting head goes out now.
pub fn sendWaitingHead(attempt: *Http2Try) void {
    assert(attempt.head_waiting and attempt.send_parked);
    attempt.head_waiting = false;
    attempt.send_parked = false;
    // As a head that did not wait: nothing parked, no body window (nghttp2 may ask for body
    // bytes as soon as the stream opens, and the head is not among them).
    const bytes = attempt.send_window;
    attempt.send_window = "";
    const sent = attempt.submitHead(bytes);
    const exchange = attempt.exchange;
    exchange.loop().sendReady(&exchange.attempt.send, &attempt.socket, bytes, if (sent) bytes.len else error.ConnectionResetByPeer, Exchange, exchange, sendDelivered);
}

/// The backend said GOAWAY before the waiting head went out: not sent, so not processed, and
/// sent again elsewhere as a refused stream is (`refused`).
pub fn refuseWaitingHead(attempt: *Http2Try) void {
    assert(attempt.head_waiting and attempt.send_parked);
    attempt.head_waiting = false;
    attempt.closed = .refused_stream;
    attempt.finishSend(error.ConnectionResetByPeer);
}

fn finishSend(attempt: *Http2Try, result: sys.SendError!usize) void {
    attempt.head_waiting = false;
    attempt.send_parked = false;
    const exchange = attempt.exchange;
    exchange.loop().sendReady(&exchange.attempt.send, &attempt.socket, attempt.send_window, result, Exchange, exchange, sendDelivered);
}

// ---------------------------------------------------------------------------------------------
// The request

/// The composed HTTP/1.1 head as HEADERS: false when it cannot go (no stream may be opened,
/// or nghttp2 is out of memory), which the exchange sees as a reset before any response.
fn submitHead(attempt: *Http2Try, bytes: []const u8) bool {
    const exchange = attempt.exchange;
    const link = attempt.link.?;
    if (link.state != .ready or !link.session.canOpen()) return false;
    // The worker's scratch (Http2.Worker): nghttp2 copies the fields when they are submitted.
    const fields = exchange.proxy.http2.?.fields_scratch[0..ClientSession.request_fields_max];
    var count: usize = 0;
    var lines: http.chars.CrlfLines = .init(bytes);
    // The exchange wrote this head: a request line, then well-formed field lines.
    const request_line = lines.next().?;
    const method_end = std.mem.indexOfScalar(u8, request_line, ' ').?;
    const target_end = std.mem.lastIndexOfScalar(u8, request_line, ' ').?;
    var authority: []const u8 = "";
    while (lines.next()) |line| {
        if (line.len == 0) break;
        const colon = std.mem.indexOfScalar(u8, line, ':').?;
        const name = @constCast(line[0..colon]);
        for (name) |*c| c.* = http.chars.toLower(c.*);
        const value = http.chars.trimWhitespace(line[colon + 1 ..]);
        if (std.mem.eql(u8, name, "host")) {
            authority = value;
            continue;
        }
        if (forbidden(name)) continue;
        if (count == fields.len) return false;
        fields[count] = .{ .name = name, .value = value };
        count += 1;
    }
    if (clientTakesTrailers(exchange) and count < fields.len) {
        fields[count] = .{ .name = "te", .value = "trailers" };
        count += 1;
    }
    attempt.body = switch (exchange.request_head.body) {
        .none, .close_delimited => .none,
        .content_length => |length| .{ .length = length },
        .chunked => .{ .chunked = .init(.{}) },
    };
    const request: ClientSession.RequestHead = .{
        .method = request_line[0..method_end],
        .scheme = "http",
        .authority = authority,
        .path = request_line[method_end + 1 .. target_end],
        .fields = fields[0..count],
    };
    const stream = link.session.request(request, attempt.body != .none, attempt) catch return false;
    attempt.stream = stream;
    attempt.inbox = exchange.proxy.buffers.acquire() orelse {
        attempt.failed = true;
        return false;
    };
    link.flush();
    return true;
}

/// RFC 9113 §8.2.2: connection-specific fields are not sent in HTTP/2 (te is added back alone
/// when the client takes trailers).
fn forbidden(name: []const u8) bool {
    const known = [_][]const u8{ "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te" };
    for (known) |k| if (std.mem.eql(u8, name, k)) return true;
    return false;
}

fn clientTakesTrailers(exchange: *const Exchange) bool {
    const te = exchange.request_head.get("te") orelse return false;
    return http.field_values.listHasToken(te, "trailers");
}

/// nghttp2 has room for DATA of the request: the window's body bytes, its framing left out.
pub fn readBody(attempt: *Http2Try, buffer: []u8) ClientSession.BodyChunk {
    if (!attempt.send_parked) {
        attempt.body_deferred = true;
        return .wait;
    }
    const window = attempt.send_window;
    var written: usize = 0;
    var done = false;
    while (attempt.send_pos < window.len and written < buffer.len and !done) {
        const rest = window[attempt.send_pos..];
        switch (attempt.body) {
            .none => unreachable, // No body, no provider.
            .length => |*remaining| {
                const n = @min(rest.len, buffer.len - written, remaining.*);
                @memcpy(buffer[written..][0..n], rest[0..n]);
                written += n;
                attempt.send_pos += n;
                remaining.* -= n;
                done = remaining.* == 0;
            },
            .chunked => |*decoder| {
                const ahead = decoder.dataAhead();
                const n: usize = if (ahead > 0) @intCast(@min(ahead, rest.len, buffer.len - written)) else 1;
                switch (decoder.feed(rest[0..n])) {
                    .need_more => {},
                    .done => done = true,
                    .invalid => done = true, // The downstream checked the body already.
                }
                if (ahead > 0) {
                    @memcpy(buffer[written..][0..n], rest[0..n]);
                    written += n;
                }
                attempt.send_pos += n;
            },
        }
    }
    if (attempt.send_pos == window.len or done) {
        attempt.finishSend(window.len);
    } else if (written > 0) {
        // Part of the window is framed: progress, as a partial send is on HTTP/1.1. A backend
        // whose stream window takes a few bytes at a time sets the pace, under the response
        // timeout from its last grant rather than from the window's start.
        attempt.exchange.rearmAttemptTimer();
    }
    if (done) {
        attempt.body_ended = true;
        return .{ .last = written };
    }
    if (written == 0) {
        attempt.body_deferred = true;
        return .wait;
    }
    return .{ .bytes = written };
}

// ---------------------------------------------------------------------------------------------
// The response

pub fn onEvent(attempt: *Http2Try, event: ClientSession.Event) void {
    switch (event) {
        .response => |response| attempt.responseHead(response),
        .data => |data| attempt.append(data.bytes, .data),
        .trailers => |block| attempt.trailerSection(block.fields),
        .end => attempt.endOfStream(),
        .head_too_large => attempt.failed = true,
        .closed => |closed| {
            attempt.closed = closed.error_code;
            if (!attempt.ended) attempt.failed = true;
            if (attempt.send_parked) attempt.finishSend(attempt.bodyUnwanted());
        },
        .goaway => unreachable, // Http2Backend handles it.
    }
    attempt.deliver();
}

fn responseHead(attempt: *Http2Try, response: ClientSession.Response) void {
    if (attempt.final_head) return attempt.fail(); // A second final head: nghttp2 refuses it.
    var record: HeadRecord = .{ .status = response.status, .body = .none, .count = 0 };
    // A body that ends with the head and says no length: `content-length: 0`, written for
    // the client as a backend's own (the body ends with the stream, not the connection).
    var zero_length = false;
    if (response.status < 100 or response.status > 599) {
        record.reject = .status_code_invalid; // RFC 9110 §15; nghttp2 checks three digits.
    } else if (response.status >= 200) {
        attempt.final_head = true;
        const framing = attempt.finalFraming(response);
        record.body = framing.body;
        record.reject = framing.reject;
        zero_length = framing.zero_length;
    }
    const count = response.fields.len + @intFromBool(zero_length);
    // The exchange's parser holds as many fields as nghttp2's block: one added may not fit.
    if (count > attempt.exchange.attempt.response_parser.headersBuffer().len) record.reject = .too_many_fields;
    if (record.reject != null) return attempt.appendHead(record, &.{}, false);
    record.count = @intCast(count);
    attempt.appendHead(record, response.fields, zero_length);
}

/// Appends a head's record: `record`, `fields`, and `content-length: 0` when `zero_length`.
fn appendHead(attempt: *Http2Try, record: HeadRecord, fields: []const Field, zero_length: bool) void {
    if (attempt.failed) return;
    assert(record.count == fields.len + @intFromBool(zero_length));
    var len: usize = HeadRecord.header_bytes;
    for (fields) |field| len += HeadRecord.field_header_bytes + field.name.len + field.value.len;
    if (zero_length) len += HeadRecord.field_header_bytes + "content-length0".len;
    const out = attempt.reserve(len) orelse return attempt.fail();
    var writer: HeadRecord.Writer = .{ .bytes = out };
    writer.header(record);
    for (fields) |field| writer.field(field.name, field.value);
    if (zero_length) writer.field("content-length", "0");
    assert(writer.at == len);
    attempt.commit(len, .heads);
}

const Framing = struct {
    body: http.Body = .none,
    /// `content-length: 0` is added to the fields.
    zero_length: bool = false,
    reject: ?http.Reject = null,
};

/// How the final head's body is framed for the exchange (`http.Body`, as its parser reads an
/// HTTP/1.1 head: RFC 9112 §6.3), or why the head is refused. Sets what the DATA and the end
/// of the stream become in the inbox.
fn finalFraming(attempt: *Http2Try, response: ClientSession.Response) Framing {
    const method = attempt.exchange.request.method;
    const status = response.status;
    attempt.no_body = method == .head or status == 204 or status == 304;
    var length: ?u64 = null;
    for (response.fields) |field| {
        if (!std.mem.eql(u8, field.name, "content-length")) continue;
        if (length != null) return .{ .reject = .content_length_repeated };
        length = std.fmt.parseUnsigned(u64, field.value, 10) catch return .{ .reject = .content_length_invalid };
    }
    // The parser's items 1 and 2: no content whatever the fields say; a 2xx to CONNECT.
    if (attempt.no_body or (method == .connect and status < 300)) return .{};
    if (length) |n| return .{ .body = if (n == 0) .none else .{ .content_length = n } };
    if (response.end_stream) return .{ .zero_length = true };
    if (attempt.exchange.downstream.takesStreamedBody()) {
        // No length and no framing: the nearest `http.Body` (it ends with the stream).
        attempt.streamed = true;
        return .{ .body = .close_delimited };
    }
    attempt.chunked = true;
    return .{ .body = .chunked };
}

fn trailerSection(attempt: *Http2Try, fields: []const Field) void {
    if (attempt.streamed) return attempt.trailerRecord(fields);
    if (!attempt.chunked or attempt.tail_written) return; // A body with a length has nowhere to carry them.
    var writer: std.Io.Writer = .fixed(attempt.textScratch());
    writer.writeAll("0\r\n") catch return attempt.fail();
    for (fields) |field| {
        // The exchange's decoder refuses these names in a trailer section.
        if (trailerForbidden(field.name)) continue;
        writer.print("{s}: {s}\r\n", .{ field.name, field.value }) catch return attempt.fail();
    }
    writer.writeAll("\r\n") catch return attempt.fail();
    attempt.append(writer.buffered(), .tail);
    attempt.tail_written = true;
}

/// A streamed body's trailers, kept as a record after its data for `takeTrailers`: without
/// the fields RFC 9110 §6.5.1 keeps out of a trailer section that say how to frame or route
/// (a chunked body's decoder refuses them).
fn trailerRecord(attempt: *Http2Try, fields: []const Field) void {
    if (attempt.tail_written) return;
    attempt.tail_written = true;
    var count: usize = 0;
    var len: usize = HeadRecord.header_bytes;
    for (fields) |field| {
        if (trailerForbidden(field.name)) continue;
        count += 1;
        len += HeadRecord.field_header_bytes + field.name.len + field.value.len;
    }
    if (count == 0) return;
    // nghttp2's block holds no more than the response field limit.
    assert(count <= attempt.exchange.attempt.response_parser.headersBuffer().len);
    if (attempt.failed) return;
    const bytes = attempt.reserve(len) orelse return attempt.fail();
    var writer: HeadRecord.Writer = .{ .bytes = bytes };
    writer.header(.{ .status = 0, .body = .none, .count = @intCast(count) });
    for (fields) |field| if (!trailerForbidden(field.name)) writer.field(field.name, field.value);
    assert(writer.at == len);
    attempt.commit(len, .tail);
}

fn trailerForbidden(name: []const u8) bool {
    return std.mem.eql(u8, name, "content-length") or std.mem.eql(u8, name, "host");
}

/// A streamed body's trailers (`streamed`), once its data was taken to the end: in the
/// exchange's response field array (the head's use of it is over), pointing into the inbox,
/// which stays until the try ends. Empty when none came.
pub fn takeTrailers(exchange: *Exchange) []const http.Header {
    const attempt = exchange.attempt.h2.?;
    assert(attempt.streamed and attempt.pos == attempt.data_end);
    if (attempt.data_end == attempt.end) return &.{};
    const fields = exchange.attempt.response_parser.headersBuffer();
    var reader: HeadRecord.Reader = .{ .bytes = attempt.inbox.?[attempt.data_end..attempt.end] };
    const record = reader.header();
    assert(record.count <= fields.len); // `trailerRecord` checked.
    for (fields[0..record.count]) |*field| field.* = reader.field();
    return fields[0..record.count];
}

/// The worker's room for one trailer section as text (Http2.Worker.text_scratch), for
/// the length of one call: not the stack, which safe builds fill with 0xAA when undefined.
fn textScratch(attempt: *Http2Try) []u8 {
    return &attempt.exchange.proxy.http2.?.text_scratch;
}

fn endOfStream(attempt: *Http2Try) void {
    attempt.ended = true;
    if (!attempt.chunked or attempt.tail_written) return;
    attempt.append("0\r\n\r\n", .tail);
    attempt.tail_written = true;
}

fn fail(attempt: *Http2Try) void {
    attempt.failed = true;
}

const Part = enum { heads, data, tail };

/// Appends response data or text to the inbox; a try whose inbox cannot hold it fails.
fn append(attempt: *Http2Try, bytes: []const u8, part: Part) void {
    if (attempt.failed) return;
    if (part == .data and attempt.no_body) return;
    const out = attempt.reserve(bytes.len) orelse return attempt.fail();
    @memcpy(out, bytes);
    attempt.commit(bytes.len, part);
}

/// Room for `len` more bytes at the inbox's end, moving what is left of it to the front when
/// the end is reached; null when there is none (or no inbox).
fn reserve(attempt: *Http2Try, len: usize) ?[]u8 {
    const inbox = attempt.inbox orelse return null;
    if (attempt.end + len > inbox.len and attempt.pos > 0) {
        const kept = attempt.end - attempt.pos;
        std.mem.copyForwards(u8, inbox[0..kept], inbox[attempt.pos..attempt.end]);
        attempt.heads_end -|= attempt.pos;
        attempt.data_end -|= attempt.pos;
        attempt.end = kept;
        attempt.pos = 0;
    }
    if (attempt.end + len > inbox.len) return null;
    return inbox[attempt.end..][0..len];
}

/// The `len` bytes written at the end (`reserve`) are the inbox's, as `part`.
fn commit(attempt: *Http2Try, len: usize, part: Part) void {
    attempt.end += @intCast(len);
    switch (part) {
        .heads => {
            attempt.heads_end = attempt.end;
            attempt.data_end = attempt.end;
        },
        .data => attempt.data_end = attempt.end,
        .tail => {},
    }
}

/// Everything in the inbox was handed over: the next bytes go at its front.
fn emptyInbox(attempt: *Http2Try) void {
    attempt.pos = 0;
    attempt.heads_end = 0;
    attempt.data_end = 0;
    attempt.end = 0;
}

/// A response head in the inbox: this header, then `count` fields, each two little-endian u32
/// lengths (a value may be as long as the response head limit, up to 1 MiB) and the name's
/// and the value's bytes.
const HeadRecord = struct {
    status: u16,
    body: http.Body,
    count: u16,
    reject: ?http.Reject = null,

    /// Status, body kind, reject (0: none, else its value + 1), length, count.
    const header_bytes = 2 + 1 + 1 + 8 + 2;
    const field_header_bytes = 8;

    const Writer = struct {
        bytes: []u8,
        at: usize = 0,

        inline fn header(w: *Writer, record: HeadRecord) void {
            w.int(u16, record.status);
            w.int(u8, switch (record.body) {
                .none => 0,
                .content_length => 1,
                .chunked => 2,
                .close_delimited => 3, // A streamed body: it ends with the stream.
            });
            w.int(u8, if (record.reject) |reject| @as(u8, @backingInt(reject)) + 1 else 0);
            w.int(u64, switch (record.body) {
                .content_length => |n| n,
                else => 0,
            });
            w.int(u16, record.count);
        }

        fn field(w: *Writer, name: []const u8, value: []const u8) void {
            w.int(u32, @intCast(name.len));
            w.int(u32, @intCast(value.len));
            @memcpy(w.bytes[w.at..][0..name.len], name);
            @memcpy(w.bytes[w.at + name.len ..][0..value.len], value);
            w.at += name.len + value.len;
        }

        fn int(w: *Writer, comptime T: type, value: T) void {
            std.mem.writeInt(T, w.bytes[w.at..][0..@sizeOf(T)], value, .little);
            w.at += @sizeOf(T);
        }
    };

    const Reader = struct {
        bytes: []u8,
        at: usize = 0,

        inline fn header(r: *Reader) HeadRecord {
            const status = r.int(u16);
            const kind = r.int(u8);
            const reject = r.int(u8);
            const length = r.int(u64);
            return .{
                .status = status,
                .body = switch (kind) {
                    0 => .none,
                    1 => .{ .content_length = length },
                    2 => .chunked,
                    3 => .close_delimited,
                    else => unreachable, // Written by `Writer.header`.
                },
                .reject = if (reject == 0) null else @fromBackingInt(@intCast(reject - 1)),
                .count = r.int(u16),
            };
        }

        inline fn field(r: *Reader) http.Header {
            const name_len = r.int(u32);
            const value_len = r.int(u32);
            const name = r.bytes[r.at..][0..name_len];
            const value = r.bytes[r.at + name_len ..][0..value_len];
            r.at += name_len + value_len;
            return .{ .name = name, .value = value };
        }

        fn int(r: *Reader, comptime T: type) T {
            const value = std.mem.readInt(T, r.bytes[r.at..][0..@sizeOf(T)], .little);
            r.at += @sizeOf(T);
            return value;
        }
    };
};

/// Completes the parked receive with what the inbox has: a head's record for a head's
/// receive; for the body's, a chunk of data in its framing (the stream's window opens by as
/// much), or the body's end as HTTP/1.1 text.
fn deliver(attempt: *Http2Try) void {
    if (!attempt.recv_parked) return;
    if (attempt.failed) return attempt.finishRecv(error.ConnectionResetByPeer);
    const inbox = attempt.inbox orelse return;
    if (attempt.recv_head) return attempt.deliverHead(inbox);
    // The exchange asks for the body only once it has taken the final head.
    assert(attempt.pos >= attempt.heads_end);
    const out = attempt.recv_buffer;
    var n: usize = 0;
    if (attempt.pos < attempt.data_end) {
        const framed = attempt.chunked;
        const room = if (framed) out.len -| chunk_framing_bytes else out.len;
        if (room == 0) return attempt.finishRecv(error.ConnectionResetByPeer);
        const take = @min(attempt.data_end - attempt.pos, room);
        const data = inbox[attempt.pos..][0..take];
        if (framed) {
            const line = std.fmt.bufPrint(out, "{x}\r\n", .{take}) catch unreachable;
            @memcpy(out[line.len..][0..take], data);
            @memcpy(out[line.len + take ..][0..2], "\r\n");
            n = line.len + take + 2;
        } else {
            @memcpy(out[0..take], data);
            n = take;
        }
        attempt.pos += @intCast(take);
        if (attempt.stream) |stream| if (attempt.closed == null) {
            attempt.link.?.session.consume(stream, take) catch {};
            attempt.link.?.flush();
        };
    } else if (attempt.pos < attempt.end and !attempt.streamed) {
        n = @min(attempt.end - attempt.pos, out.len);
        @memcpy(out[0..n], inbox[attempt.pos..][0..n]);
        attempt.pos += @intCast(n);
    } else if (attempt.closed != null or attempt.ended) {
        // Nothing more will come. A complete response was read whole by the exchange, which
        // asks no further; a stream that ended before it did is cut short. A streamed body
        // has no framing to tell: only END_STREAM ends it, and its end is this 0 (what is
        // left in the inbox is its trailers' record).
        const clean = if (attempt.streamed)
            attempt.ended
        else
            attempt.closed == null or attempt.closed.? == .no_error;
        return attempt.finishRecv(if (clean) 0 else error.ConnectionResetByPeer);
    } else return; // Parked until the next event.
    if (attempt.pos == attempt.end) attempt.emptyInbox();
    attempt.finishRecv(n);
}

/// A head's receive completes with the next head's record (`takeHead` reads it), or with the
/// stream's end before one came.
fn deliverHead(attempt: *Http2Try, inbox: []u8) void {
    if (attempt.pos < attempt.heads_end) {
        const record = inbox[attempt.pos..attempt.heads_end];
        attempt.recv_buffer = record;
        return attempt.finishRecv(record.len);
    }
    // Nothing but a head comes first (nghttp2 refuses DATA before one).
    assert(attempt.pos == attempt.end);
    if (attempt.closed != null or attempt.ended) return attempt.finishRecv(error.ConnectionResetByPeer);
}

/// The backend refused the stream before processing it (REFUSED_STREAM, which nghttp2 also
/// gives the streams above a GOAWAY's last one, and a request it could not send).
pub fn refused(attempt: *const Http2Try) bool {
    return attempt.closed == .refused_stream and !attempt.final_head;
}

/// The shared connection broke: what is parked fails as on a reset.
pub fn connectionBroken(attempt: *Http2Try) void {
    // A stream closed before keeps how (a refused one stays refused). A head still waiting for
    // a stream never left: unprocessed, as a refused stream is.
    if (attempt.closed == null) attempt.closed = if (attempt.head_waiting) .refused_stream else .internal_error;
    if (!attempt.ended) attempt.failed = true;
    attempt.stream = null;
    if (attempt.connect_parked) attempt.connected(.failed);
    if (attempt.send_parked) attempt.finishSend(error.ConnectionResetByPeer);
    attempt.deliver();
}

test "http2 try: a head's record reads back as written, a long value included" {
    var value: [70_000]u8 = undefined; // Past a u16: the response head limit goes to 1 MiB.
    @memset(&value, 'v');
    var bytes: [HeadRecord.header_bytes + 2 * HeadRecord.field_header_bytes + 64 + value.len]u8 = undefined;
    var writer: HeadRecord.Writer = .{ .bytes = &bytes };
    writer.header(.{ .status = 203, .body = .{ .content_length = 1 << 40 }, .count = 2 });
    writer.field("content-type", "text/plain");
    writer.field("x-long", &value);
    var reader: HeadRecord.Reader = .{ .bytes = bytes[0..writer.at] };
    const record = reader.header();
    try std.testing.expectEqual(@as(u16, 203), record.status);
    try std.testing.expectEqual(@as(u64, 1 << 40), record.body.content_length);
    try std.testing.expectEqual(@as(?http.Reject, null), record.reject);
    const first = reader.field();
    try std.testing.expectEqualStrings("content-type", first.name);
    try std.testing.expectEqualStrings("text/plain", first.value);
    const second = reader.field();
    try std.testing.expectEqualStrings("x-long", second.name);
    try std.testing.expectEqual(value.len, second.value.len);
    try std.testing.expectEqual(writer.at, reader.at);

    writer = .{ .bytes = &bytes };
    writer.header(.{ .status = 200, .body = .chunked, .count = 0, .reject = .content_length_repeated });
    reader = .{ .bytes = bytes[0..writer.at] };
    const turned_down = reader.header();
    try std.testing.expectEqual(@as(?http.Reject, .content_length_repeated), turned_down.reject);
    try std.testing.expect(turned_down.body == .chunked);
}
