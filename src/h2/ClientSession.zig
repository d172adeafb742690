//! One HTTP/2 connection to a backend, as its client, served by nghttp2 and driven with memory
//! as `ServerSession` is: the connection hands in the bytes it received (`receive`) and room
//! for the bytes to send (`send`). Requests go out with `request` (a head, and a body the
//! handler supplies when the stream's window allows, or defers for backpressure); what the
//! backend answers reaches the handler as events (a response head, interim ones included,
//! body bytes, trailers, the end, a stream closed, a GOAWAY).
//!
//! Decisions:
//! - The same border as `ServerSession`: no socket, no general heap (the worker's
//!   `memory.Pool`), one header block held at a time (`HeaderBlock`).
//! - Flow control follows backpressure per stream, the other way round: a response's window
//!   opens only when the handler says its client took the bytes (`consume`), so a slow client
//!   slows its own stream on the backend connection, never the streams beside it. The
//!   connection's window is given back as DATA arrives.
//! - A backend is trusted to speak HTTP/2 but not to be reasonable: its header blocks are held
//!   to the response limits (past them the stream is reset and the handler told why), and
//!   nghttp2's bounds on SETTINGS entries and unread acknowledgements apply as to clients.
//! - A stream may be opened only while `canOpen` (no GOAWAY from the backend, fewer streams
//!   open than both its SETTINGS_MAX_CONCURRENT_STREAMS and ours, stream ids left).
const std = @import("std");
const assert = std.debug.assert;
const c = @import("nghttp2");
const memory = @import("memory.zig");
const wire = @import("wire.zig");
const HeaderBlock = @import("HeaderBlock.zig");

const ClientSession = @This();

session: *c.nghttp2_session,
setup: *const Setup,
pool: *memory.Pool,
handler: Handler,
/// Output nghttp2 produced that `send` has not copied out yet (nghttp2's buffer, valid until
/// the next `nghttp2_session_mem_send2`).
pending: []const u8 = &.{},
/// The header block being received, if any.
block: ?*HeaderBlock = null,
/// Streams opened and not closed.
streams_open: u32 = 0,
/// The backend sent GOAWAY: no new stream may be opened on this connection.
goaway_received: bool = false,
/// The backend's SETTINGS arrived: its limit on concurrent streams is known (before it,
/// nghttp2 assumes none, and streams past the backend's limit would be refused).
settings_received: bool = false,
/// A failure inside a callback, returned by `receive` or `send`.
failure: ?Error = null,

pub const StreamId = wire.StreamId;
pub const ErrorCode = wire.ErrorCode;
pub const Field = wire.Field;
pub const BodyChunk = wire.BodyChunk;
pub const SubmitError = wire.SubmitError;

pub const Error = error{
    /// The pool is exhausted: close the connection.
    OutOfMemory,
    /// The backend broke the protocol (nghttp2 answered with GOAWAY where it could): close
    /// once what is left is sent.
    Protocol,
};

/// A response head (a 1xx one included). Slices are valid during the handler's call only.
pub const Response = struct {
    stream: StreamId,
    status: u16,
    fields: []const Field,
    /// END_STREAM was on the head: no body follows (an `.end` event follows).
    end_stream: bool,
};

/// What the backend did, in order. Slices are valid during the handler's call only.
pub const Event = union(enum) {
    response: Response,
    /// Response body bytes. The stream's window opens again only by `consume`.
    data: struct { stream: StreamId, bytes: []const u8 },
    trailers: struct { stream: StreamId, fields: []const Field },
    /// The response is complete (END_STREAM).
    end: StreamId,
    /// A header block past the response limits: the stream is reset (a `.closed` follows).
    head_too_large: StreamId,
    /// The stream is closed: `no_error` when both sides ended it, else the reset's code.
    /// Nothing more comes for it.
    closed: struct { stream: StreamId, error_code: ErrorCode },
    /// No new stream may be opened; streams above `last_stream` were not processed and may be
    /// sent again elsewhere (RFC 9113 §6.8); they are closed (REFUSED_STREAM) after this.
    goaway: struct { last_stream: StreamId, error_code: ErrorCode },
};

/// The connection's side, called during `receive`, `send` and the submit functions.
pub const Handler = struct {
    context: *anyopaque,
    onEvent: *const fn (context: *anyopaque, session: *ClientSession, event: Event) void,
    readBody: *const fn (context: *anyopaque, session: *ClientSession, stream: StreamId, buffer: []u8) BodyChunk,

    /// `Context` has `h2Event(*Context, *ClientSession, Event) void` and
    /// `h2Body(*Context, *ClientSession, StreamId, []u8) BodyChunk`.
    pub fn of(comptime Context: type, context: *Context) Handler {
        const erased = struct {
            fn onEvent(pointer: *anyopaque, session: *ClientSession, event: Event) void {
                Context.h2Event(@ptrCast(@alignCast(pointer)), session, event);
            }
            fn readBody(pointer: *anyopaque, session: *ClientSession, stream: StreamId, buffer: []u8) BodyChunk {
                return Context.h2Body(@ptrCast(@alignCast(pointer)), session, stream, buffer);
            }
        };
        return .{ .context = context, .onEvent = erased.onEvent, .readBody = erased.readBody };
    }
};

pub const Limits = struct {
    /// Our SETTINGS_MAX_CONCURRENT_STREAMS bound on what we open, whatever the backend allows
    /// (nginx's grpc and HAProxy's h2 backends default to 100 as well).
    streams_max: u32 = 100,
    /// SETTINGS_INITIAL_WINDOW_SIZE: response bytes a stream may have in flight before its
    /// client took them.
    stream_window_bytes: u32 = 65_535,
    /// SETTINGS_MAX_HEADER_LIST_SIZE, and the regular fields per block: the response limits.
    header_list_bytes_max: u32 = 16 * 1024,
    header_fields_max: u32 = 100,
    outbound_acks_max: u32 = 100,
    settings_entries_max: u32 = 32,
};

/// What every client session of a process shares: callbacks, options (made once at start-up
/// from the C heap) and the limits.
pub const Setup = struct {
    callbacks: *c.nghttp2_session_callbacks,
    option: *c.nghttp2_option,
    limits: Limits,

    /// `setup` must not move while sessions use it.
    pub fn init(setup: *Setup, limits: Limits) error{OutOfMemory}!void {
        assert(limits.streams_max > 0 and limits.header_fields_max > 0);
        assert(HeaderBlock.bytes(limits.header_fields_max) <= memory.payload_bytes_max);
        assert(limits.stream_window_bytes <= std.math.maxInt(i32));
        var callbacks: ?*c.nghttp2_session_callbacks = null;
        if (c.nghttp2_session_callbacks_new(&callbacks) != 0) return error.OutOfMemory;
        errdefer c.nghttp2_session_callbacks_del(callbacks);
        const table = callbacks.?;
        c.nghttp2_session_callbacks_set_on_begin_headers_callback(table, beginHeadersCallback);
        c.nghttp2_session_callbacks_set_on_header_callback2(table, headerCallback);
        c.nghttp2_session_callbacks_set_on_frame_recv_callback(table, frameReceivedCallback);
        c.nghttp2_session_callbacks_set_on_data_chunk_recv_callback(table, dataChunkCallback);
        c.nghttp2_session_callbacks_set_on_stream_close_callback(table, streamCloseCallback);
        var option: ?*c.nghttp2_option = null;
        if (c.nghttp2_option_new(&option) != 0) return error.OutOfMemory;
        const options = option.?;
        c.nghttp2_option_set_no_auto_window_update(options, 1);
        c.nghttp2_option_set_max_outbound_ack(options, limits.outbound_acks_max);
        c.nghttp2_option_set_max_settings(options, limits.settings_entries_max);
        setup.* = .{ .callbacks = table, .option = options, .limits = limits };
    }

    pub fn deinit(setup: *Setup) void {
        c.nghttp2_option_del(setup.option);
        c.nghttp2_session_callbacks_del(setup.callbacks);
        setup.* = undefined;
    }
};

/// A client session on `pool` that has queued its connection preface and SETTINGS;
/// `session` must not move until `deinit`.
pub fn init(session: *ClientSession, setup: *const Setup, pool: *memory.Pool, handler: Handler) error{OutOfMemory}!void {
    session.* = .{ .session = undefined, .setup = setup, .pool = pool, .handler = handler };
    var mem = pool.mem();
    var raw: ?*c.nghttp2_session = null;
    if (c.nghttp2_session_client_new3(&raw, setup.callbacks, session, setup.option, &mem) != 0) return error.OutOfMemory;
    session.session = raw.?;
    errdefer c.nghttp2_session_del(session.session);
    const limits = setup.limits;
    const settings = [_]c.nghttp2_settings_entry{
        .{ .settings_id = c.NGHTTP2_SETTINGS_ENABLE_PUSH, .value = 0 },
        .{ .settings_id = c.NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, .value = limits.stream_window_bytes },
        .{ .settings_id = c.NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, .value = limits.header_list_bytes_max },
    };
    if (c.nghttp2_submit_settings(session.session, c.NGHTTP2_FLAG_NONE, &settings, settings.len) != 0) return error.OutOfMemory;
    // The connection's window as wide as every stream's together: each stream's own window is
    // what bounds the bytes held for slow clients (as `ServerSession` does for uploads).
    const all_streams = @as(u64, limits.streams_max) * limits.stream_window_bytes;
    const window: i32 = @intCast(@min(@max(all_streams, 65_535), std.math.maxInt(i32)));
    if (c.nghttp2_session_set_local_window_size(session.session, c.NGHTTP2_FLAG_NONE, 0, window) != 0) return error.OutOfMemory;
}

pub fn deinit(session: *ClientSession) void {
    session.releaseBlock();
    c.nghttp2_session_del(session.session);
    session.* = undefined;
}

/// Feeds bytes the backend sent; the handler hears what they complete. All of `bytes` is
/// taken. After an error, `send` what is left and close.
pub fn receive(session: *ClientSession, bytes: []const u8) Error!void {
    assert(session.failure == null);
    const result = c.nghttp2_session_mem_recv2(session.session, bytes.ptr, bytes.len);
    if (session.takeFailure()) |failure| return failure;
    if (result >= 0) {
        assert(@as(usize, @intCast(result)) == bytes.len);
        return;
    }
    return session.fail(@intCast(result));
}

/// Copies bytes to send into `out`; returns how many (0: nothing to send now).
pub fn send(session: *ClientSession, out: []u8) Error!usize {
    return wire.send(ClientSession, session, out);
}

pub fn wantsRead(session: *const ClientSession) bool {
    return c.nghttp2_session_want_read(session.session) != 0;
}

pub fn wantsWrite(session: *const ClientSession) bool {
    return session.pending.len > 0 or c.nghttp2_session_want_write(session.session) != 0;
}

/// Whether a new stream may be opened now.
pub fn canOpen(session: *const ClientSession) bool {
    if (session.goaway_received) return false;
    if (c.nghttp2_session_get_next_stream_id(session.session) > std.math.maxInt(i31)) return false;
    return session.streams_open < session.streamsAllowed();
}

/// Streams that may be open at once: the backend's SETTINGS_MAX_CONCURRENT_STREAMS, at most
/// ours.
pub fn streamsAllowed(session: *const ClientSession) u32 {
    return @min(session.setup.limits.streams_max, c.nghttp2_session_get_remote_settings(session.session, c.NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS));
}

/// Most regular fields a request may carry (beside its four pseudo-fields).
pub const request_fields_max = wire.submitted_fields_max - 4;

/// A request's head, as it goes out.
pub const RequestHead = struct {
    method: []const u8,
    scheme: []const u8,
    authority: []const u8,
    path: []const u8,
    fields: []const Field,
};

/// Opens a stream with `head` (copied); with `body`, the handler's `readBody` supplies it when
/// the stream's window allows, else the head ends the request. `context` is the handler's
/// for this stream (`streamContext`) until its `closed` event.
pub fn request(session: *ClientSession, head: RequestHead, body: bool, context: *anyopaque) SubmitError!StreamId {
    assert(session.canOpen());
    if (head.fields.len + 4 > wire.submitted_fields_max) return error.TooManyFields;
    const nva = &wire.nva_scratch;
    nva[0] = wire.nv(":method", head.method);
    nva[1] = wire.nv(":scheme", head.scheme);
    nva[2] = wire.nv(":authority", head.authority);
    nva[3] = wire.nv(":path", head.path);
    for (head.fields, nva[4..][0..head.fields.len]) |field, *entry| entry.* = wire.nv(field.name, field.value);
    const provider: c.nghttp2_data_provider2 = .{ .source = .{ .ptr = null }, .read_callback = readBodyCallback };
    const id = c.nghttp2_submit_request2(session.session, null, nva, head.fields.len + 4, if (body) &provider else null, context);
    if (id < 0) {
        try wire.submitResult(@intCast(id));
        unreachable; // A negative id is an error.
    }
    session.streams_open += 1;
    return wire.streamOf(id);
}

/// A stream whose body waited (`BodyChunk.wait`) has bytes again.
pub fn resumeBody(session: *ClientSession, stream: StreamId) SubmitError!void {
    return wire.submitResult(c.nghttp2_session_resume_data(session.session, stream));
}

/// The handler's client took `bytes` of `stream`'s response body: its window opens by as much.
pub fn consume(session: *ClientSession, stream: StreamId, bytes: usize) error{OutOfMemory}!void {
    const rv = c.nghttp2_session_consume_stream(session.session, stream, bytes);
    switch (rv) {
        0 => {},
        c.NGHTTP2_ERR_NOMEM => return error.OutOfMemory,
        else => std.debug.panic("nghttp2: unexpected consume result {d}", .{rv}),
    }
}

/// Ends `stream` (the exchange gave up on it: its client went away, a timeout).
pub fn reset(session: *ClientSession, stream: StreamId, code: ErrorCode) SubmitError!void {
    return wire.submitResult(c.nghttp2_submit_rst_stream(session.session, c.NGHTTP2_FLAG_NONE, stream, @backingInt(code)));
}

/// Says this side is done with the connection (it was idle too long, or the worker drains):
/// once the streams open are closed the session is over.
pub fn goaway(session: *ClientSession, code: ErrorCode) SubmitError!void {
    return wire.submitResult(c.nghttp2_submit_goaway(session.session, c.NGHTTP2_FLAG_NONE, 0, @backingInt(code), null, 0));
}

/// The `context` given to `request` for `stream`; null for a stream that is gone.
pub fn streamContext(session: *ClientSession, stream: StreamId) ?*anyopaque {
    const data = c.nghttp2_session_get_stream_user_data(session.session, stream) orelse return null;
    return if (data == @as(*anyopaque, &forgotten_marker)) null else data;
}

/// The handler is done with `stream` before it closed (it is being reset): nothing more is
/// heard of it, while it still counts as open until nghttp2 closes it.
pub fn forget(session: *ClientSession, stream: StreamId) void {
    // Also for a stream whose HEADERS still wait in nghttp2's queue (no stream object yet: the
    // user data is the queued frame's, given to the stream when it goes). A stream already
    // closed has nothing to change.
    _ = c.nghttp2_session_set_stream_user_data(session.session, stream, &forgotten_marker);
}

/// The user data of a forgotten stream: known (its close is counted), with no context.
var forgotten_marker: u8 = 0;

// --- Helpers --------------------------------------------------------------------------------

pub fn fail(_: *ClientSession, rv: c_int) Error {
    return if (rv == c.NGHTTP2_ERR_NOMEM) error.OutOfMemory else error.Protocol;
}

pub fn takeFailure(session: *ClientSession) ?Error {
    const failure = session.failure orelse return null;
    session.failure = null;
    return failure;
}

fn releaseBlock(session: *ClientSession) void {
    const block = session.block orelse return;
    block.destroy(session.pool);
    session.block = null;
}

fn emit(session: *ClientSession, event: Event) void {
    session.handler.onEvent(session.handler.context, session, event);
}

fn sessionOf(user_data: ?*anyopaque) *ClientSession {
    return @ptrCast(@alignCast(user_data.?));
}

fn callbackOutOfMemory(session: *ClientSession) c_int {
    session.failure = error.OutOfMemory;
    return c.NGHTTP2_ERR_CALLBACK_FAILURE;
}

/// Whether the handler still has `stream` (it had a context and it was not closed).
fn known(session: *ClientSession, stream_id: i32) bool {
    return c.nghttp2_session_get_stream_user_data(session.session, stream_id) != null;
}

// --- nghttp2's callbacks --------------------------------------------------------------------

fn beginHeadersCallback(_: ?*c.nghttp2_session, frame: [*c]const c.nghttp2_frame, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    session.releaseBlock();
    const headers = &frame.*.headers;
    // A response head, or (HCAT_HEADERS) the final head after a 1xx or the trailers: which one
    // is known from `:status` when the block is complete.
    const block = HeaderBlock.create(session.pool, wire.streamOf(headers.hd.stream_id), false, session.setup.limits.header_fields_max) orelse
        return session.callbackOutOfMemory();
    session.block = block;
    return 0;
}

fn headerCallback(
    _: ?*c.nghttp2_session,
    frame: [*c]const c.nghttp2_frame,
    name_buffer: ?*c.nghttp2_rcbuf,
    value_buffer: ?*c.nghttp2_rcbuf,
    _: u8,
    user_data: ?*anyopaque,
) callconv(.c) c_int {
    const session = sessionOf(user_data);
    const block = session.block orelse return 0;
    assert(block.stream == frame.*.hd.stream_id);
    block.add(name_buffer.?, value_buffer.?, session.setup.limits.header_list_bytes_max);
    return 0;
}

fn frameReceivedCallback(_: ?*c.nghttp2_session, frame: [*c]const c.nghttp2_frame, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    const hd = frame.*.hd;
    const end_stream = hd.flags & c.NGHTTP2_FLAG_END_STREAM != 0;
    switch (hd.type) {
        c.NGHTTP2_HEADERS => {
            const block = session.block orelse return 0;
            defer session.releaseBlock();
            if (!session.known(hd.stream_id)) return 0;
            const stream = block.stream;
            if (block.too_large) {
                session.emit(.{ .head_too_large = stream });
                wire.submitResult(c.nghttp2_submit_rst_stream(session.session, c.NGHTTP2_FLAG_NONE, stream, @backingInt(ErrorCode.internal_error))) catch |err| switch (err) {
                    error.OutOfMemory => return session.callbackOutOfMemory(),
                    error.StreamClosed, error.TooManyFields => {},
                };
                return 0;
            }
            const status_text = block.get(.status);
            if (status_text.len == 0) {
                session.emit(.{ .trailers = .{ .stream = stream, .fields = block.regular() } });
            } else {
                // nghttp2 checked that `:status` is three digits.
                const status = std.fmt.parseUnsigned(u16, status_text, 10) catch unreachable;
                session.emit(.{ .response = .{ .stream = stream, .status = status, .fields = block.regular(), .end_stream = end_stream } });
            }
            if (end_stream and session.known(hd.stream_id)) session.emit(.{ .end = stream });
        },
        c.NGHTTP2_DATA => if (end_stream and session.known(hd.stream_id)) session.emit(.{ .end = wire.streamOf(hd.stream_id) }),
        c.NGHTTP2_SETTINGS => if (hd.flags & c.NGHTTP2_FLAG_ACK == 0) {
            session.settings_received = true;
        },
        c.NGHTTP2_GOAWAY => {
            session.goaway_received = true;
            session.emit(.{ .goaway = .{
                .last_stream = @intCast(@max(0, frame.*.goaway.last_stream_id)),
                .error_code = @fromBackingInt(@intCast(frame.*.goaway.error_code)),
            } });
        },
        else => {},
    }
    return 0;
}

fn dataChunkCallback(_: ?*c.nghttp2_session, _: u8, stream_id: i32, data: [*c]const u8, len: usize, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    // The connection's window comes back at once; the stream's when the handler consumes.
    const rv = c.nghttp2_session_consume_connection(session.session, len);
    if (rv == c.NGHTTP2_ERR_NOMEM) return session.callbackOutOfMemory();
    assert(rv == 0);
    if (len > 0 and session.known(stream_id)) session.emit(.{ .data = .{ .stream = wire.streamOf(stream_id), .bytes = data[0..len] } });
    return 0;
}

fn streamCloseCallback(_: ?*c.nghttp2_session, stream_id: i32, error_code: u32, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    if (session.block) |block| {
        if (block.stream == stream_id) session.releaseBlock();
    }
    if (!session.known(stream_id)) return 0;
    assert(session.streams_open > 0);
    session.streams_open -= 1;
    session.emit(.{ .closed = .{ .stream = wire.streamOf(stream_id), .error_code = @fromBackingInt(@intCast(error_code)) } });
    return 0;
}

fn readBodyCallback(
    _: ?*c.nghttp2_session,
    stream_id: i32,
    buffer: [*c]u8,
    length: usize,
    data_flags: [*c]u32,
    _: [*c]c.nghttp2_data_source,
    user_data: ?*anyopaque,
) callconv(.c) c.nghttp2_ssize {
    const session = sessionOf(user_data);
    const chunk = session.handler.readBody(session.handler.context, session, wire.streamOf(stream_id), buffer[0..length]);
    // Request trailers are not sent on (docs/ARCHITECTURE.md, "Request trailers are dropped").
    return wire.bodyResult(chunk, length, data_flags);
}
