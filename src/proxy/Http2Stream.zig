//! One HTTP/2 request stream, as the downstream of its exchange (downstream.zig's `.h2`): what
//! Connection.zig is to an HTTP/1.1 exchange, for one stream of an `Http2` connection. It turns
//! the stream's HEADERS into the protocol-neutral request the exchange reads, hands it the body
//! that DATA frames bring, and turns the exchange's response (a backend's HTTP/1.1 head and
//! body, a failure, a response sluice made) into HEADERS and DATA.
//!
//! Buffers (each from the worker's pool, sized in Proxy.zig): `head` holds the request's
//! strings, copied out of nghttp2's (which are valid during its callback only), for the whole
//! exchange (routing, replays, the log read them); `body` holds received request body bytes
//! until the exchange has sent them, taken at the first DATA. The stream's flow-control window
//! is at most a buffer (`Http2.windowBytes`), so what the client may send always fits: the
//! window opens again only when the bytes have gone upstream (`requestBodySent`), which is the
//! backpressure RFC 9113 §5.2 asks for, per stream.
//!
//! Conversions (RFC 9113 §8.2.2 and §8.3): the pseudo-fields become the request line and
//! Host, cookie crumbs are joined with "; " into one field, a body without Content-Length is
//! sent chunked; the response's connection-specific fields are dropped, its names lowercased,
//! and a chunked body is de-chunked into DATA.
//!
//! Lifetime: a slot of the worker (`Proxy.acquireStream`), taken when a request's HEADERS
//! complete, given back when both nghttp2 has closed the stream and its exchange (if it had
//! one) has been released.
const std = @import("std");
const assert = std.debug.assert;

const http = @import("../http/http.zig");
const compression = @import("../policy/compression.zig");
const h2 = @import("../h2/h2.zig");
const tls = @import("../tls/tls.zig");
const Failure = @import("failure.zig").Failure;
const rewrite = @import("rewrite.zig");
const AccessLog = @import("AccessLog.zig");
const Connection = @import("Connection.zig");
const DownstreamTls = @import("DownstreamTls.zig");
const Downstream = @import("downstream.zig").Downstream;
const Exchange = @import("Exchange.zig");
const Http2 = @import("Http2.zig");

const ServerSession = h2.ServerSession;
const Stream = @This();

http2: *Http2 = undefined,
id: ServerSession.StreamId = 0,
/// The exchange of this stream's request, until it is released.
exchange: ?*Exchange = null,
/// nghttp2 closed the stream: nothing more comes for it, and nothing can be sent.
closed: bool = false,
/// The request's strings; its fields are in the exchange slot's array.
head: ?[]u8 = null,
head_len: u32 = 0,
request: http.Request = undefined,
body: Body = .{},
response: Response = .{},
/// The connection's list of its streams.
next: ?*Stream = null,
prev: ?*Stream = null,
/// On the connection's list of streams whose response window nghttp2 took (`Http2.flush`).
drained_next: ?*Stream = null,
drained: bool = false,

const Body = struct {
    /// Received bytes, in order across these buffers (taken as they fill): one window's worth
    /// (`Http2.window_bytes`) fits, whatever the buffer size.
    segments: [segments_max]?[]u8 = @splat(null),
    /// `pos..len` (offsets across the segments) has been received and not yet handed to the
    /// exchange.
    len: u32 = 0,
    pos: u32 = 0,
    /// End of the window handed to the exchange.
    window_end: u32 = 0,
    /// END_STREAM arrived: `len` is all there is.
    ended: bool = false,
    /// Every byte went to the exchange, and it sent them.
    done: bool = true,
    /// The buffer was reused for later bytes: the body cannot be sent again.
    overwritten: bool = false,
    /// The exchange asked for a window and none was there: the next DATA is its.
    wanted: bool = false,
    /// The body failed (too large, too slow): what still arrives is dropped.
    discard: bool = false,
    /// Sent chunked (no Content-Length): each window is framed as one chunk, in three pieces
    /// (`stage`), then the last chunk.
    chunked: bool = false,
    stage: Stage = .size_line,
    size_line: [20]u8 = undefined,
    /// With Content-Length: bytes still to come.
    remaining: u64 = 0,
    /// Bytes received, for the access log.
    received: u64 = 0,

    const Stage = enum { size_line, data, crlf, last_chunk, sent_last };
};

/// Buffers a stream's body may take: a window (65,535 bytes) over the smallest buffer there is
/// (Config.bufferBytes: at least 16 KiB).
pub const segments_max = 4;

const Response = struct {
    /// The response head went to nghttp2.
    started: bool = false,
    /// The window being sent: a slice of the exchange's buffer, or of sluice's own text (a
    /// failure's body) when `own`.
    window: []const u8 = "",
    pos: usize = 0,
    /// The window is the last of the body.
    last: bool = false,
    own: bool = false,
    /// nghttp2 asked for body bytes and there were none: `resumeBody` when there are.
    deferred: bool = false,
    /// The window was taken whole and is (being) handed back to the exchange.
    handed_back: bool = false,
    /// The end of the body went to nghttp2.
    ended: bool = false,
    /// A chunked response from the backend, de-chunked for DATA.
    dechunk: ?http.ChunkedDecoder = null,
    /// Its trailer section's field lines (the exchange relays them to a client that sent
    /// `TE: trailers`), collected in `head` after the request's strings, sent as the closing
    /// HEADERS; or dropped whole if they do not fit there (`trailers_dropped`).
    trailer_len: u32 = 0,
    trailers_dropped: bool = false,
};

/// The most fields of a response head sent on (the exchange's response field array bounds
/// it first).
const fields_max = ServerSession.submitted_fields_max - 2;
comptime {
    assert(http.LocalResponse.fields_max + 1 <= fields_max); // And content-length.
}

// ---------------------------------------------------------------------------------------------
// The request

pub const BeginError = error{ TooLarge, Malformed };

/// A request's HEADERS completed on `http2`: copies what the exchange will read into `head`
/// and builds the neutral request over it, its fields in `fields`.
pub fn begin(stream: *Stream, http2: *Http2, request: *const ServerSession.Request, head: []u8, fields: []http.Header) BeginError!void {
    stream.* = .{ .http2 = http2, .id = request.stream, .head = head };
    // Names and values become HTTP/1.1 field lines unchecked here: the session hands over
    // only what HTTP/1.1 allows too (ServerSession.zig, "Fields"), and a test pins it.
    var copier: Copier = .{ .buffer = head };
    const method_text = try copier.copy(request.method);
    const path = try copier.copy(request.path);
    const authority = try copier.copy(request.authority);
    var count: usize = 0;
    var host_field: ?[]const u8 = null;
    var content_length: ?[]const u8 = null;
    var cookies: usize = 0;
    for (request.fields) |field| {
        if (std.mem.eql(u8, field.name, "cookie")) {
            cookies += 1;
            continue;
        }
        if (count == fields.len) return error.TooLarge;
        const name = try copier.copy(field.name);
        const value = try copier.copy(field.value);
        if (std.mem.eql(u8, name, "host")) host_field = value;
        if (std.mem.eql(u8, name, "content-length")) content_length = value;
        fields[count] = .{ .name = name, .value = value };
        count += 1;
    }
    if (cookies > 0) {
        // RFC 9113 §8.2.3: crumbs are joined with "; " for HTTP/1.1, which allows one field.
        if (count == fields.len) return error.TooLarge;
        const start = copier.end;
        var first = true;
        for (request.fields) |field| {
            if (!std.mem.eql(u8, field.name, "cookie")) continue;
            if (!first) _ = try copier.copy("; ");
            _ = try copier.copy(field.value);
            first = false;
        }
        fields[count] = .{ .name = "cookie", .value = head[start..copier.end] };
        count += 1;
    }
    const method = http.Method.parse(method_text);
    const target_form: http.TargetForm = if (std.mem.eql(u8, path, "*")) .asterisk else .origin;
    // nghttp2 checked the pseudo-fields' presence and characters (RFC 9113 §8.3.1); sluice
    // holds the target to HTTP/1.1's rules too, since it becomes a request line.
    if (method == .connect) {
        // Extended CONNECT is not offered (SETTINGS_ENABLE_CONNECT_PROTOCOL stays 0): a plain
        // CONNECT has no :path, and the exchange answers it 405 as it does for HTTP/1.1.
    } else if (target_form == .asterisk) {
        if (method != .options) return error.Malformed;
    } else if (path.len == 0 or path[0] != '/' or http.chars.findNonTargetByte(path) != null) {
        return error.Malformed;
    }
    for (method_text) |c| if (!http.chars.isTchar(c)) return error.Malformed;
    const body: http.Body = blk: {
        if (content_length) |text| {
            const length = std.fmt.parseUnsigned(u64, text, 10) catch return error.Malformed;
            break :blk if (length == 0) .none else .{ .content_length = length };
        }
        break :blk if (request.end_stream) .none else .chunked;
    };
    stream.request = .{
        .method = method,
        .method_text = method_text,
        .target = path,
        .target_form = target_form,
        .version = .http11,
        .headers = fields[0..count],
        // RFC 9113 §8.3.1: :authority, when present, names the target; Host only without it.
        .host = if (authority.len > 0) authority else host_field,
        .body = body,
        .keep_alive = true,
        .expect_continue = false,
        .upgrade = false,
        .has_connection = false,
    };
    stream.head_len = @intCast(copier.end);
    stream.body = .{
        .done = body == .none,
        .ended = request.end_stream,
        .chunked = body == .chunked,
        .remaining = switch (body) {
            .content_length => |length| length,
            else => 0,
        },
    };
}

/// Bytes of the head as copied: the access log's `request_bytes` for the head.
pub fn headLen(stream: *const Stream) u32 {
    return stream.head_len;
}

const Copier = struct {
    buffer: []u8,
    end: usize = 0,

    fn copy(copier: *Copier, bytes: []const u8) BeginError![]const u8 {
        if (bytes.len > copier.buffer.len - copier.end) return error.TooLarge;
        const out = copier.buffer[copier.end..][0..bytes.len];
        @memcpy(out, bytes);
        copier.end += bytes.len;
        return out;
    }
};

/// Request body bytes from a DATA frame (valid during the call): kept until the exchange sent
/// them. The window guarantees room; a peer past it broke flow control, which nghttp2 answers
/// before this is called, so running out of room here is a bug, answered with a reset.
pub fn received(stream: *Stream, bytes: []const u8) void {
    const body = &stream.body;
    // Nobody reads it (the exchange ended): dropped, and the stream is reset once its
    // response is out (`maybeFree`).
    if (stream.exchange == null or body.done or body.discard) return;
    const segment_bytes = stream.http2.segmentBytes();
    if (bytes.len > segments_max * segment_bytes - body.len) return stream.refuse(.flow_control_error);
    var rest = bytes;
    while (rest.len > 0) {
        const segment = &body.segments[body.len / segment_bytes];
        if (segment.* == null) {
            segment.* = stream.http2.acquireBuffer() orelse return stream.refuse(.internal_error);
        }
        const offset = body.len % segment_bytes;
        const n = @min(rest.len, segment_bytes - offset);
        @memcpy(segment.*.?[offset..][0..n], rest[0..n]);
        body.len += @intCast(n);
        rest = rest[n..];
    }
    body.received += bytes.len;
    // A body without a length is counted against the limit as it arrives (one with a length
    // was refused before anything was sent: `Exchange.bodyOverLimit`).
    const max = stream.exchange.?.body_bytes_max;
    if (body.chunked and max > 0 and body.received > max) return stream.failBody(.request_body_too_large);
    if (body.wanted) {
        stream.setWanted(false);
        stream.pullRequestBody();
    }
}

/// The exchange waits for body bytes (`Http2` counts such streams: its body timeout).
fn setWanted(stream: *Stream, wanted: bool) void {
    if (stream.body.wanted == wanted) return;
    stream.body.wanted = wanted;
    if (wanted) stream.http2.body_waits += 1 else stream.http2.body_waits -= 1;
}

/// The request body failed on the client's side (over the limit, too slow): the exchange
/// ends, counted and logged, and the client is answered if nothing of a response started.
pub fn failBody(stream: *Stream, failure: Failure) void {
    stream.setWanted(false);
    stream.body.discard = true;
    const exchange = stream.exchange orelse return;
    const can_answer = !stream.response.started;
    exchange.failByDownstream(failure); // Released now or when its operations call back.
    if (stream.closed) return;
    if (can_answer) stream.answerFailure(failure) else stream.reset(.internal_error);
}

pub fn waitsForBody(stream: *const Stream) bool {
    return stream.body.wanted;
}

/// END_STREAM: the body is complete.
pub fn ended(stream: *Stream) void {
    const body = &stream.body;
    body.ended = true;
    if (body.wanted) {
        stream.setWanted(false);
        stream.pullRequestBody();
    }
}

/// The exchange is ready for the next window of request body bytes.
pub fn pullRequestBody(stream: *Stream) void {
    const body = &stream.body;
    assert(!body.done);
    const exchange = stream.exchange.?;
    // Between chunks: mid-chunk, `requestBodySent` goes on with it, and after the last chunk
    // the body is done.
    assert(!body.chunked or body.stage == .size_line);
    if (body.pos == body.len) {
        if (body.chunked and body.ended) {
            body.stage = .last_chunk;
            return exchange.sendRequestBody("0\r\n\r\n", true);
        }
        assert(!body.ended or body.chunked); // With a length, the last window ended it.
        stream.setWanted(true);
        stream.http2.flush(); // The body timeout starts (`Http2.idle`).
        return;
    }
    const window = stream.windowAt(body.pos);
    body.window_end = body.pos + @as(u32, @intCast(window.len));
    if (body.chunked) {
        // The size line goes first; the data and its CRLF follow (`requestBodySent`).
        const line = std.fmt.bufPrint(&body.size_line, "{x}\r\n", .{window.len}) catch unreachable;
        return exchange.sendRequestBody(line, false);
    }
    if (window.len > body.remaining) return stream.refuse(.protocol_error); // nghttp2 checks it
    body.remaining -= window.len;
    exchange.sendRequestBody(window, body.remaining == 0);
}

/// The exchange sent the window it was given.
pub fn requestBodySent(stream: *Stream) void {
    const body = &stream.body;
    if (body.chunked) {
        switch (body.stage) {
            .size_line => {
                body.stage = .data;
                // The window the size line counted: more may have arrived behind it since.
                const window = stream.windowAt(body.pos)[0 .. body.window_end - body.pos];
                return stream.exchange.?.sendRequestBody(window, false);
            },
            .data => {
                body.stage = .crlf;
                return stream.exchange.?.sendRequestBody("\r\n", false);
            },
            .crlf => body.stage = .size_line,
            .last_chunk => {
                body.stage = .sent_last;
                body.done = true;
                return;
            },
            .sent_last => unreachable,
        }
    }
    body.pos = body.window_end;
    if (!body.chunked and body.remaining == 0) {
        body.done = true;
        return;
    }
    // A whole window came and all of it went on: the client waits for a WINDOW_UPDATE, and
    // the buffers are reused for what it sends next. Until then the bytes are kept, for a
    // replay.
    if (body.pos == body.len and body.len >= Http2.window_bytes) {
        stream.http2.consume(stream.id, body.len);
        body.overwritten = true;
        body.pos = 0;
        body.len = 0;
        body.window_end = 0;
    }
    stream.pullRequestBody();
}

pub fn requestBodyPending(stream: *const Stream) bool {
    return !stream.body.done;
}

/// Whether the body is whole in one buffer, as a handler reads it.
pub fn requestBodyWhole(stream: *const Stream) bool {
    return !stream.body.overwritten and stream.body.len <= stream.http2.segmentBytes();
}

/// A body of at most one buffer is received whole (`requestBodyWhole`).
pub fn requestBodyRoom(stream: *const Stream) u64 {
    return stream.http2.segmentBytes();
}

/// The request body as received, whole (a handler's `request.body`): bare data, never framed.
pub fn requestBodyBytes(stream: *const Stream) []const u8 {
    const body = &stream.body;
    assert(body.done and stream.requestBodyWhole());
    const first = body.segments[0] orelse return "";
    return first[0..body.len];
}

/// The received bytes from `at` to the end of the received part of its segment.
fn windowAt(stream: *const Stream, at: u32) []const u8 {
    const body = &stream.body;
    const segment_bytes = stream.http2.segmentBytes();
    const offset = at % segment_bytes;
    const end = @min(body.len - (at - offset), segment_bytes);
    return body.segments[at / segment_bytes].?[offset..end];
}

pub fn requestBodyChunked(stream: *const Stream) bool {
    _ = stream;
    return false;
}

pub fn requestBodyReplayable(stream: *const Stream) bool {
    return !stream.body.overwritten;
}

pub fn rewindRequestBody(stream: *Stream) void {
    const body = &stream.body;
    assert(!body.overwritten);
    body.pos = 0;
    body.window_end = 0;
    stream.setWanted(false);
    body.stage = .size_line;
    body.done = stream.request.body == .none;
    body.remaining = switch (stream.request.body) {
        .content_length => |length| length,
        else => 0,
    };
}

// ---------------------------------------------------------------------------------------------
// The response

/// A 1xx (100 Continue, 103 Early Hints): relayed as a HEADERS frame without END_STREAM, its
/// fields converted as a final head's; the bytes after it go back to the exchange for the final
/// response.
pub noinline fn sendInterim(stream: *Stream, view: Exchange.ResponseView) void {
    const fields = stream.fieldsScratch();
    const count = convertFields(view.head, fields) orelse return stream.exchange.?.responseHeadTooLarge();
    if (!stream.closed) {
        stream.http2.session.interim(stream.id, view.head.status, fields[0..count]) catch |err| switch (err) {
            error.StreamClosed => {},
            error.OutOfMemory, error.TooManyFields => return stream.refuse(.internal_error),
        };
        stream.http2.flush();
    }
    stream.exchange.?.interimSent(view.head_start + view.head_len, view.received - view.head_len);
}

/// The worker's room for one head's fields (Http2.Worker.fields_scratch), for the length of
/// one call: nghttp2 copies them when the head is submitted.
fn fieldsScratch(stream: *Stream) *[fields_max]ServerSession.Field {
    return stream.http2.connection.proxy.http2.?.fields_scratch[0..fields_max];
}

/// `kept` (a prefix of `fields`) without the fields `rules` drop, then the fields they write,
/// their names lowercased and values expanded into `scratch`; the new count, or null when
/// they do not fit.
fn applyRules(rules: *const rewrite.Rules, kept: []const ServerSession.Field, fields: []ServerSession.Field, scratch: []u8) ?usize {
    var count: usize = 0;
    for (kept) |field| {
        if (rules.side.drops(field.name)) continue;
        fields[count] = field; // count <= index: moving left in place
        count += 1;
    }
    var used: usize = 0;
    for (rules.side.written) |rule| {
        if (count == fields.len) return null;
        const name_start = used;
        if (rule.name.len > scratch.len - used) return null;
        for (rule.name, scratch[used..][0..rule.name.len]) |c, *out| out.* = http.chars.toLower(c);
        used += rule.name.len;
        const value_start = used;
        if (rule.variables) {
            var pieces = rules.variables.pieces(rule.value);
            while (pieces.next()) |piece| {
                if (piece.len > scratch.len - used) return null;
                @memcpy(scratch[used..][0..piece.len], piece);
                used += piece.len;
            }
        } else {
            if (rule.value.len > scratch.len - used) return null;
            @memcpy(scratch[used..][0..rule.value.len], rule.value);
            used += rule.value.len;
        }
        fields[count] = .{ .name = scratch[name_start..value_start], .value = scratch[value_start..used] };
        count += 1;
    }
    return count;
}

/// The fields of a backend's head as HTTP/2 sends them: connection-specific ones and those
/// the Connection field names dropped, names lowercased (in place: the head is used once).
/// Null when there are more than an HTTP/2 head carries.
fn convertFields(head: *const http.ResponseParser.Head, fields: []ServerSession.Field) ?usize {
    var count: usize = 0;
    const names_fields = head.connectionNamesFields();
    for (head.headers) |field| {
        if (connectionSpecific(field.name)) continue;
        if (names_fields and head.connectionHasToken(field.name)) continue;
        if (count == fields.len) return null;
        lowercase(@constCast(field.name));
        fields[count] = .{ .name = field.name, .value = field.value };
        count += 1;
    }
    return count;
}

/// `fields[0..count]` as compression changes them (policy/compression.zig's `HeadChange`):
/// gzipped, without Content-Length (the DATA frames carry the compressed bytes, their length
/// unknown before they have gone) and with `content-encoding`; `vary` added; the ETag dropped
/// or replaced by the weak one. The new count, or null when they do not fit.
fn applyChange(change: *const compression.HeadChange, fields: []ServerSession.Field, count: usize) ?usize {
    var kept: usize = 0;
    for (fields[0..count]) |field| {
        if (change.gzip and http.chars.eqlIgnoreCase(field.name, "content-length")) continue;
        if (change.drops(field.name)) continue;
        fields[kept] = field;
        kept += 1;
    }
    const added = [_]struct { bool, ServerSession.Field }{
        .{ change.gzip, .{ .name = "content-encoding", .value = "gzip" } },
        .{ change.vary, .{ .name = "vary", .value = "Accept-Encoding" } },
        .{ change.weak_etag.len > 0, .{ .name = "etag", .value = change.weak_etag } },
    };
    for (added) |entry| {
        if (!entry[0]) continue;
        if (kept == fields.len) return null;
        fields[kept] = entry[1];
        kept += 1;
    }
    assert(kept <= fields.len);
    return kept;
}

/// An HTTP/2 client does not wait for 100 Continue (the request never asks: `expect_continue`
/// is HTTP/1.1's).
pub fn sendContinue(stream: *Stream) void {
    stream.exchange.?.continueSent();
}

/// The backend's final response head, with the first body bytes that came with it.
pub noinline fn sendResponse(stream: *Stream, view: Exchange.ResponseView, extra_field: []const u8) void {
    const head = view.head;
    const fields = stream.fieldsScratch();
    // RFC 9113 §8.2.1: names are lowercase.
    var count = convertFields(head, fields) orelse return stream.exchange.?.responseHeadTooLarge();
    // The route's response header rules (policy/HeaderPolicy.zig), as HTTP/1.1 applies them:
    // the fields they set or remove dropped, then theirs, values expanded into the worker's
    // scratch.
    if (view.rules) |rules| {
        const scratch = &stream.http2.connection.proxy.http2.?.rules_scratch;
        count = applyRules(rules, fields[0..count], fields, scratch) orelse return stream.exchange.?.responseHeadTooLarge();
    }
    // Compression's fields (Exchange.chooseEncoding): after the rules, as HTTP/1.1 writes them.
    if (view.change) |change| count = applyChange(change, fields, count) orelse return stream.exchange.?.responseHeadTooLarge();
    if (extra_field.len > 0) {
        // "Name: value\r\n", composed by the exchange (a sticky cookie).
        const colon = std.mem.indexOfScalar(u8, extra_field, ':').?;
        if (count == fields.len) return stream.exchange.?.responseHeadTooLarge();
        const name = @constCast(extra_field[0..colon]);
        lowercase(name);
        fields[count] = .{ .name = name, .value = std.mem.trim(u8, extra_field[colon + 1 ..], " \r\n") };
        count += 1;
    }
    const body = view.buffer[view.head_start + view.head_len ..][0..view.body_len];
    stream.response.dechunk = if (head.body == .chunked) .init(.{}) else null;
    const data = stream.dechunked(body) orelse return;
    const has_body = !(view.body_last and data.len == 0 and stream.response.trailer_len == 0);
    stream.respond(head.status, fields[0..count], has_body);
    stream.setWindow(data, view.body_last, false);
}

/// More of the response body (`last`: the rest of it, possibly empty).
pub fn sendResponseBody(stream: *Stream, window: []u8, last: bool) void {
    const data = stream.dechunked(window) orelse return;
    stream.setWindow(data, last, false);
}

pub fn sendResponseFromPipe(stream: *Stream, pipe_read: std.os.linux.fd_t, len: u32) void {
    _ = stream;
    _ = pipe_read;
    _ = len;
    unreachable; // `takesSplice` is false: DATA frames are written by sluice.
}

pub fn takesSplice(stream: *const Stream) bool {
    _ = stream;
    return false;
}

/// A response sluice made itself (a route's, the 404, a handler's): its field lines become the
/// stream's HEADERS and its length `content-length` (http/LocalResponse.zig); its body goes
/// as DATA, the rest of a larger one in `sendResponseBody` windows. A stream ends; the
/// connection goes on, whatever `close_after` says.
pub noinline fn sendLocal(stream: *Stream, local: Downstream.Local) void {
    const fields = stream.fieldsScratch();
    var count: usize = 0;
    var length_text: [20]u8 = undefined;
    if (local.response.content_length) |length| {
        fields[0] = .{ .name = "content-length", .value = std.fmt.bufPrint(&length_text, "{d}", .{length}) catch unreachable };
        count = 1;
    }
    var lines = local.response.fieldLines(local.text());
    while (lines.next()) |field| {
        // A route's own fields may name one HTTP/1.1 means for the connection (Keep-Alive).
        if (connectionSpecific(field.name)) continue;
        // More than HEADERS can carry (a route's fields; a handler writes at most
        // `LocalResponse.fields_max`): refused, not cut short.
        if (count == fields.len) return stream.refuse(.internal_error);
        lowercase(field.name); // RFC 9113 §8.2.1.
        fields[count] = .{ .name = field.name, .value = field.value };
        count += 1;
    }
    stream.response.dechunk = null;
    const body = local.response.body(local.text());
    stream.respond(local.response.status, fields[0..count], body.len > 0 or local.more);
    stream.setWindow(body, !local.more, false);
}

/// A local response never closes an HTTP/2 connection; a body the exchange does not read is
/// refused with RST_STREAM (NO_ERROR) after the response (`exchangeFinished`).
/// A stream needs no watch while its handler waits: the connection reads frames throughout,
/// and a reset or a closed connection aborts the stream's exchange at once.
pub fn watchClient(stream: *Stream) void {
    _ = stream;
}

pub fn stopWatching(stream: *Stream) bool {
    _ = stream;
    return false;
}

pub fn closesAfterLocal(stream: *const Stream, keep_alive: bool) bool {
    _ = stream;
    _ = keep_alive;
    return false;
}

pub fn errorResponse(stream: *const Stream, failure: Failure) []const u8 {
    _ = stream;
    return failure.body();
}

fn respond(stream: *Stream, status: u16, fields: []const ServerSession.Field, has_body: bool) void {
    assert(!stream.response.started);
    stream.response.started = true;
    if (stream.closed) return;
    stream.http2.session.respond(stream.id, status, fields, has_body) catch |err| switch (err) {
        error.StreamClosed => {},
        error.OutOfMemory, error.TooManyFields => return stream.refuse(.internal_error),
    };
    if (!has_body) stream.response.ended = true;
}

/// Hands nghttp2 the next window of the body (it copies from it when the stream may send).
fn setWindow(stream: *Stream, window: []const u8, last: bool, own: bool) void {
    const response = &stream.response;
    response.window = window;
    response.pos = 0;
    response.last = last;
    response.own = own;
    response.handed_back = false;
    if (response.ended or stream.closed) {
        response.handed_back = true;
        // No DATA will be asked for (no body, or the stream is gone): the window is done.
        return stream.http2.markDrained(stream);
    }
    if (response.deferred) {
        response.deferred = false;
        stream.http2.session.resumeBody(stream.id) catch {};
    }
    stream.http2.flush();
}

/// nghttp2 has room for DATA of this stream: copies from the window into `buffer`. A window
/// taken whole (or an empty one) goes back to the exchange after the frames are made.
pub fn readBody(stream: *Stream, buffer: []u8) ServerSession.BodyChunk {
    const response = &stream.response;
    const left = response.window[response.pos..];
    const n = @min(left.len, buffer.len);
    @memcpy(buffer[0..n], left[0..n]);
    response.pos += n;
    if (n > 0) stream.http2.window_stall_since_ns = null; // Progress.
    if (stream.exchange) |exchange| if (!response.own) exchange.countSent(n);
    if (response.pos < response.window.len) return .{ .bytes = n };
    if (!response.handed_back) {
        response.handed_back = true;
        stream.http2.markDrained(stream);
    }
    if (response.last) {
        response.ended = true;
        if (response.trailer_len > 0) return stream.lastWithTrailers(n);
        return .{ .last = n };
    }
    if (n > 0) return .{ .bytes = n };
    response.deferred = true; // Until `setWindow` brings the next window.
    return .wait;
}

/// The window nghttp2 took whole has left the exchange's buffer (`Http2.flush` calls this
/// after the frames are written into its own): the exchange may reuse it.
pub fn windowSent(stream: *Stream) void {
    const own = stream.response.own;
    stream.response.window = "";
    stream.response.pos = 0;
    if (!own) if (stream.exchange) |exchange| {
        // An exchange aborted meanwhile (the client reset the stream) only waits for its
        // operations to call back.
        if (exchange.state == .upstream or exchange.state == .local) return exchange.responseSent();
    };
    stream.maybeFree();
}

/// For a chunked response: the data of `bytes` (framing removed in place). Null when the
/// framing is broken (refused by the exchange's own scan already, so a bug: the stream resets).
fn dechunked(stream: *Stream, bytes: []u8) ?[]u8 {
    const decoder = &(stream.response.dechunk orelse return bytes);
    const result = decoder.decodeInPlace(bytes);
    if (result.reject != null) {
        stream.refuse(.internal_error);
        return null;
    }
    if (result.trailer_len > 0) stream.keepTrailerBytes(bytes[result.trailer_start..][0..result.trailer_len]);
    return bytes[0..result.data_len];
}

/// Trailer field lines the exchange relays (it passes them only to a client that asked):
/// copied after the request's strings, which stay until the stream ends. The decoder bounds
/// the section (8 KiB); a section that does not fit the rest of the buffer is dropped whole
/// and counted, never cut.
fn keepTrailerBytes(stream: *Stream, bytes: []const u8) void {
    const response = &stream.response;
    if (response.trailers_dropped) return;
    const room = stream.head.?[stream.head_len + response.trailer_len ..];
    if (bytes.len > room.len) {
        response.trailers_dropped = true;
        response.trailer_len = 0;
        return;
    }
    @memcpy(room[0..bytes.len], bytes);
    response.trailer_len += @intCast(bytes.len);
}

/// A streamed body's trailers (`Downstream.keepTrailers`, a backend stream's): kept as the
/// field lines `keepTrailerBytes` keeps of a chunked body's, in the same room and dropped
/// whole the same way when they do not fit.
pub fn keepTrailers(stream: *Stream, fields: []const http.Header) void {
    const response = &stream.response;
    if (response.trailers_dropped) return;
    var w: std.Io.Writer = .fixed(stream.head.?[stream.head_len + response.trailer_len ..]);
    for (fields) |field| http.chars.writeFieldLine(&w, field.name, field.value) catch {
        response.trailers_dropped = true;
        response.trailer_len = 0;
        return;
    };
    response.trailer_len += @intCast(w.end);
}

/// The body's last `n` bytes, then the trailer section as HEADERS with END_STREAM (RFC 9113
/// §8.1). The decoder checked each line ("name: value", a token, field-value bytes, and none
/// of the framing and routing names RFC 9110 §6.5.1 forbids there); names are lowercased, and
/// connection-specific fields dropped as in a head. The field list is laid out in `head` after
/// the lines (nghttp2 reads it after this returns); fields past the room there are dropped.
fn lastWithTrailers(stream: *Stream, n: usize) ServerSession.BodyChunk {
    const response = &stream.response;
    const head = stream.head.?;
    const lines_end = stream.head_len + response.trailer_len;
    const list_start = std.mem.alignForward(usize, @intFromPtr(head.ptr) + lines_end, @alignOf(ServerSession.Field)) - @intFromPtr(head.ptr);
    const room = if (list_start < head.len) (head.len - list_start) / @sizeOf(ServerSession.Field) else 0;
    const list: [*]ServerSession.Field = @ptrCast(@alignCast(head.ptr + list_start));
    const fields = list[0..@min(room, fields_max)];
    var count: usize = 0;
    var lines: http.chars.CrlfLines = .init(head[stream.head_len..lines_end]);
    while (lines.next()) |line| {
        if (line.len == 0) continue; // After the last CRLF.
        const colon = std.mem.indexOfScalar(u8, line, ':').?; // The decoder checked the line.
        const name = @constCast(line[0..colon]);
        if (connectionSpecific(name)) continue;
        if (count == fields.len) break; // The response's own bound on fields.
        lowercase(name);
        fields[count] = .{ .name = name, .value = http.chars.trimWhitespace(line[colon + 1 ..]) };
        count += 1;
    }
    if (count == 0) return .{ .last = n };
    return .{ .last_with_trailers = .{ .len = n, .fields = fields[0..count] } };
}

/// RFC 9113 §8.2.2: fields HTTP/2 forbids (connection-specific), dropped from a response.
fn connectionSpecific(name: []const u8) bool {
    const eql = http.chars.eqlIgnoreCase;
    return switch (name.len) {
        2 => eql(name, "te"),
        7 => eql(name, "upgrade"),
        10 => eql(name, "connection") or eql(name, "keep-alive"),
        16 => eql(name, "proxy-connection"),
        17 => eql(name, "transfer-encoding"),
        else => false,
    };
}

fn lowercase(name: []u8) void {
    for (name) |*c| c.* = http.chars.toLower(c.*);
}

// ---------------------------------------------------------------------------------------------
// The end of the exchange

pub fn exchangeFinished(stream: *Stream) void {
    stream.releaseExchange();
    stream.http2.connection.requests_served += 1;
    stream.maybeFree();
}

/// The backend answered before it read the whole request body: the rest has nowhere to go.
pub fn closeAfterEarlyResponse(stream: *Stream) void {
    stream.exchange.?.abort(); // Released now or when its operations call back.
    if (!stream.closed) stream.reset(.no_error);
}

/// The exchange failed: a failure's response when nothing of one started, else a reset.
pub fn exchangeFailed(stream: *Stream, failure: ?Failure, response_started: bool) void {
    if (stream.closed) return;
    const answer = failure orelse return stream.reset(.internal_error);
    if (response_started or stream.response.started) return stream.reset(.internal_error);
    stream.answerFailure(answer);
}

/// Answers with a failure's response (its text is static: nothing of the exchange is needed).
noinline fn answerFailure(stream: *Stream, failure: Failure) void {
    var fields: [3]ServerSession.Field = undefined;
    var count: usize = 0;
    fields[count] = .{ .name = "content-type", .value = "text/plain" };
    count += 1;
    var length_text: [20]u8 = undefined;
    const body = if (stream.request.method == .head) "" else failure.body();
    fields[count] = .{ .name = "content-length", .value = std.fmt.bufPrint(&length_text, "{d}", .{failure.body().len}) catch unreachable };
    count += 1;
    var name_buffer: [64]u8 = undefined;
    if (failure.extraField()) |extra| {
        const name = name_buffer[0..extra.name.len];
        for (name, extra.name) |*out, c| out.* = http.chars.toLower(c);
        fields[count] = .{ .name = name, .value = extra.value };
        count += 1;
    }
    stream.respond(failure.status(), fields[0..count], body.len > 0);
    if (body.len > 0) stream.setWindow(body, true, true) else stream.http2.flush();
}

/// Response bytes wait for nghttp2 to take them (checked while nothing is being written: the
/// client's window for the stream, or the connection's, is shut).
pub fn waitsForWindow(stream: *const Stream) bool {
    const response = &stream.response;
    return !stream.closed and response.started and !response.ended and response.pos < response.window.len;
}

/// The client kept the window shut for the client idle timeout: the stream ends.
pub fn windowTimedOut(stream: *Stream) void {
    stream.refuse(.cancel);
}

/// Ends the stream from sluice's side (RST_STREAM `code`), and its exchange with it.
fn refuse(stream: *Stream, code: ServerSession.ErrorCode) void {
    const exchange = stream.exchange;
    stream.reset(code);
    if (exchange) |running| running.abort(); // Released now or when its operations call back.
}

pub fn reset(stream: *Stream, code: ServerSession.ErrorCode) void {
    if (stream.closed) return;
    stream.http2.session.reset(stream.id, code) catch {};
    stream.http2.flush();
}

pub fn exchangeReleased(stream: *Stream) void {
    stream.releaseExchange();
    stream.maybeFree();
}

fn releaseExchange(stream: *Stream) void {
    stream.setWanted(false);
    const exchange = stream.exchange.?;
    assert(exchange.state == .free);
    stream.exchange = null;
    stream.http2.connection.proxy.releaseExchange(exchange);
}

/// nghttp2 closed the stream (both sides ended it, or a reset). The end of the response went
/// into frames already: the exchange finishes as usual when its last window is handed back
/// (`windowSent`, in the same `flush`). Otherwise the client gave up: its exchange is aborted.
pub fn streamClosed(stream: *Stream) void {
    stream.closed = true;
    stream.setWanted(false);
    const exchange = stream.exchange orelse return stream.maybeFree();
    if (stream.response.ended and stream.drained) return;
    exchange.abort(); // Released now or when its operations call back.
}

/// Once the exchange is gone: a client still sending a body nobody reads is stopped after the
/// response (RFC 9113 §8.1: RST_STREAM NO_ERROR), and the slot goes back once nghttp2 closed
/// the stream.
fn maybeFree(stream: *Stream) void {
    if (stream.exchange != null or stream.drained) return;
    if (stream.closed) return stream.http2.freeStream(stream);
    if (!stream.body.done and stream.response.ended) {
        stream.body.done = true; // Once.
        // The close this brings comes back through `streamClosed`, which frees the slot
        // (perhaps before this returns: nothing of the stream is touched after).
        stream.reset(.no_error);
    }
}

/// Let go of the buffers (the slot goes back by `Http2.freeStream`).
pub fn releaseBuffers(stream: *Stream) void {
    const buffers = &stream.http2.connection.proxy.buffers;
    if (stream.head) |head| buffers.release(head);
    stream.head = null;
    for (&stream.body.segments) |*segment| {
        if (segment.*) |buffer| buffers.release(buffer);
        segment.* = null;
    }
}

// ---------------------------------------------------------------------------------------------
// The client, as the exchange sees it

pub fn client(stream: *const Stream) Downstream.Client {
    const connection = stream.http2.connection;
    return .{
        .address = &connection.address,
        .ip = connection.clientIp(),
        .fd = connection.socket.fd,
        .trusted = connection.client_trusted,
        .tls = connection.tls != null,
        .listener_slot = connection.listener_slot,
        .reused = connection.requests_served > 0,
    };
}

pub fn certificateFields(stream: *const Stream, peer: *tls.Engine.PeerCertificate) ?rewrite.CertificateFields {
    return DownstreamTls.certificateFields(stream.http2.connection, peer);
}

pub fn logFacts(stream: *const Stream, peer: *tls.Engine.PeerCertificate) AccessLog.ClientFacts {
    var facts = stream.http2.connection.logFacts(peer);
    facts.request_body_bytes = stream.body.received;
    facts.http2 = true;
    return facts;
}

pub fn bufferedBodyReject(stream: *const Stream) ?http.Reject {
    _ = stream;
    return null; // DATA carries no framing of its own to be malformed.
}

// Tunnels: an HTTP/2 request never asks for an upgrade (`upgrade` is false), so a 101 is
// refused by the exchange before any of these could be called (tunnel.zig).

pub fn startTunnel(stream: *Stream, view: Exchange.ResponseView) void {
    _ = stream;
    _ = view;
    unreachable;
}

pub fn tunnelToClient(stream: *Stream, bytes: []const u8) void {
    _ = stream;
    _ = bytes;
    unreachable;
}

pub fn tunnelSent(stream: *Stream) void {
    _ = stream;
    unreachable;
}

pub fn tunnelProgress(stream: *Stream) void {
    _ = stream;
    unreachable;
}

pub fn tunnelUpstreamClosed(stream: *Stream) void {
    _ = stream;
    unreachable;
}
