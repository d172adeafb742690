//! One HTTP/2 client connection's protocol state, served by nghttp2, driven with memory: the
//! connection hands in the bytes it received (`receive`) and room for the bytes to send
//! (`send`), and hears what the client did through its `Handler` (a request's head, body
//! bytes, trailers, the end of a request, a stream closed, a GOAWAY). It answers with
//! `respond` (a response whose body the handler supplies when nghttp2 has window for it, or
//! defers for backpressure, with optional trailers), `reset` and `goaway`.
//!
//! Decisions:
//! - nghttp2 never sees a socket or the general heap: bytes cross through the caller's
//!   slices, and its memory is the worker's `memory.Pool` (an exhausted pool fails the session
//!   with `error.OutOfMemory`).
//! - Flow control follows backpressure per stream: the connection's window is given back as
//!   soon as DATA arrives (what bounds a connection's buffered bytes is every stream's own
//!   window), a stream's only when the handler says its consumer took the bytes (`consume`).
//!   A slow backend stalls its own stream, never its neighbours.
//! - Every limit is counted (`Counters`, one per worker, shared by its sessions). nghttp2's own
//!   defences (CONTINUATION count, queued ACKs, SETTINGS entries, reset and "glitch" rate
//!   limits) are configured from `Limits`; what it does not count or word as sluice wants is
//!   done here: the header list's size and field count (answered 431), the rate of client
//!   RST_STREAM frames and of SETTINGS and PING frames per window (GOAWAY ENHANCE_YOUR_CALM).
//! - Fields: nghttp2's HTTP messaging checks stay on (RFC 9113 §8.2). A stream whose
//!   pseudo-fields are malformed, or with an uppercase field name, is reset; a regular field
//!   whose name is not a lowercase token or whose value holds a control byte, DEL or edge
//!   whitespace is dropped, never handed over. What the handler hears is a valid HTTP/1.1 field
//!   line too, so it need not scan the bytes again (a test pins this with hostile fields).
//! - A header block is received into one block from the pool, fields pointing at nghttp2's
//!   reference-counted buffers (no copy): HPACK decodes one block at a time per connection, so
//!   a session needs one, only while a block is in flight.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("nghttp2");
const memory = @import("memory.zig");
const wire = @import("wire.zig");
const HeaderBlock = @import("HeaderBlock.zig");
const Counter = @import("../stdx/Counter.zig");

const ServerSession = @This();

session: *c.nghttp2_session,
setup: *const Setup,
pool: *memory.Pool,
handler: Handler,
counters: *Counters,
/// Output nghttp2 produced that `send` has not copied out yet: points into nghttp2's own
/// buffer, valid until the next `nghttp2_session_mem_send2`.
pending: []const u8 = &.{},
/// The header block being received, if any.
block: ?*HeaderBlock = null,
/// Request streams open now (begun and not closed): nghttp2 does not say.
streams_open: u32 = 0,
/// The caller's clock at the last `receive`.
now_ns: u64 = 0,
resets: Window = .{},
control_frames: Window = .{},
/// A HEADERS or DATA frame went out since the client's last PING: its next PING is an answer
/// to data (below, `control_frames_per_window_max`) and is not counted.
sent_since_ping: bool = false,
/// The streams this side reset most recently: frames the client had already sent on them
/// are ignored (RFC 9113 §5.1, "closed"), where frames on other closed streams end the
/// connection.
resets_sent: [resets_remembered]StreamId = @splat(0),
resets_sent_next: u32 = 0,
/// Where the client's bytes are, frame by frame (`receive`).
scan: Scan = .{},
/// The last stream a GOAWAY of this side named: frames on streams above it are ignored
/// (RFC 9113 §6.8), whatever they are.
goaway_last: ?StreamId = null,
/// Which limit ended the session, if one did.
ended: ?End = null,
/// A failure inside a callback, returned by `receive`.
failure: ?Error = null,

pub const StreamId = wire.StreamId;
pub const ErrorCode = wire.ErrorCode;

pub const Error = error{
    /// The pool is exhausted (counted): close the connection.
    OutOfMemory,
    /// A limit was passed and the session ended with GOAWAY (counted): send what is left,
    /// then close.
    Flooded,
    /// The client broke the protocol (not an HTTP/2 preface, a malformed frame nghttp2 could
    /// not answer with a GOAWAY): close.
    Protocol,
};

pub const Field = wire.Field;

/// A request's head. Every slice is valid during the handler's call only.
pub const Request = struct {
    stream: StreamId,
    method: []const u8,
    scheme: []const u8,
    /// Empty when the client sent none (a Host field may be among `fields`).
    authority: []const u8,
    path: []const u8,
    /// Regular fields in the order received (cookie crumbs each as its own field).
    fields: []const Field,
    /// END_STREAM was on the head: no body follows (an `.end` event follows).
    end_stream: bool,
};

/// What the client did, in order. Slices are valid during the handler's call only.
pub const Event = union(enum) {
    request: Request,
    /// Request body bytes. The stream's window opens again only by `consume`.
    data: struct { stream: StreamId, bytes: []const u8 },
    trailers: struct { stream: StreamId, fields: []const Field },
    /// The request is complete (END_STREAM).
    end: StreamId,
    /// The stream is closed: `no_error` when both sides ended it, else the code of the reset
    /// that ended it (the client's RST_STREAM, or ours). Nothing more comes for it. Only for
    /// streams whose `request` the handler heard. A session that is over (`wantsRead` and
    /// `wantsWrite` false after a fatal error or a GOAWAY with an error) closes no stream: the
    /// connection ends every exchange it still holds.
    closed: struct { stream: StreamId, error_code: ErrorCode },
    goaway: struct { last_stream: StreamId, error_code: ErrorCode },
};

/// The next piece of a response body, written by the handler into nghttp2's frame buffer.
pub const BodyChunk = wire.BodyChunk;

/// The connection's side, called during `receive`, `send` and the submit functions. Typed
/// where it is made (`Handler.of`), erased here.
pub const Handler = struct {
    context: *anyopaque,
    onEvent: *const fn (context: *anyopaque, session: *ServerSession, event: Event) void,
    readBody: *const fn (context: *anyopaque, session: *ServerSession, stream: StreamId, buffer: []u8) BodyChunk,

    /// `Context` has `h2Event(*Context, *ServerSession, Event) void` and
    /// `h2Body(*Context, *ServerSession, StreamId, []u8) BodyChunk`.
    pub fn of(comptime Context: type, context: *Context) Handler {
        const erased = struct {
            fn onEvent(pointer: *anyopaque, session: *ServerSession, event: Event) void {
                Context.h2Event(@ptrCast(@alignCast(pointer)), session, event);
            }
            fn readBody(pointer: *anyopaque, session: *ServerSession, stream: StreamId, buffer: []u8) BodyChunk {
                return Context.h2Body(@ptrCast(@alignCast(pointer)), session, stream, buffer);
            }
        };
        return .{ .context = context, .onEvent = erased.onEvent, .readBody = erased.readBody };
    }
};

/// Every limit, with its default and the reason for it. Relations are asserted in `Setup.init`.
pub const Limits = struct {
    /// SETTINGS_MAX_CONCURRENT_STREAMS. nginx (`http2_max_concurrent_streams`) advertises 128,
    /// HAProxy (`tune.h2.max-concurrent-streams`) and Envoy's edge recommendation 100: 100.
    /// Past it nghttp2 refuses the stream (REFUSED_STREAM) before our SETTINGS are
    /// acknowledged and ends the connection (GOAWAY PROTOCOL_ERROR) after.
    concurrent_streams_max: u32 = 100,
    /// SETTINGS_INITIAL_WINDOW_SIZE: request body bytes a stream may have in flight before
    /// the handler consumes them. 65,535 (the protocol's default, HAProxy's and nginx's
    /// `http2_body_preread_size` 64k): a connection then buffers at most 6.4 MB of bodies
    /// with the default stream count, and a backend's pace reaches the client within a
    /// window.
    stream_window_bytes: u32 = 65_535,
    /// SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §6.5.2: names, values and 32 per field), as
    /// HTTP/1.1's `header_bytes_max`: 16 KiB, answered 431 (RFC 9113 §10.5.1), which keeps the
    /// connection and says why; nginx used to end the connection with ENHANCE_YOUR_CALM past
    /// its `http2_max_header_size` (nginx mailing list, January 2016).
    header_list_bytes_max: u32 = 16 * 1024,
    /// Regular fields per header block (pseudo-fields not counted), as HTTP/1.1's
    /// `headers_count_max`: 100 (HAProxy's `tune.http.maxhdr` is 101, Envoy's 100): 431.
    header_fields_max: u32 = 100,
    /// CONTINUATION frames after one HEADERS (the 2024 CONTINUATION flood): nghttp2 (since
    /// 1.61) ends the session past it; its default, 8, with 16 KiB frames, is 144 KiB of
    /// header block, far above `header_list_bytes_max` (HPACK rarely grows a list).
    continuation_frames_max: u32 = 8,
    /// Client RST_STREAM frames, and streams nghttp2 reset because the client broke the
    /// protocol on them (MadeYouReset, CVE-2025-8671), per `window_ms` (Rapid Reset,
    /// CVE-2023-44487): past it, GOAWAY
    /// ENHANCE_YOUR_CALM. A browser cancels a few streams a second when a page changes; an
    /// attack sends tens of thousands. 100 per second; nghttp2's own token bucket stays
    /// behind it as a second line (a burst of 1,000 or twice this, refilled at this rate).
    resets_per_window_max: u32 = 100,
    /// SETTINGS and PING frames per `window_ms` (the 2019 SETTINGS and PING floods,
    /// CVE-2019-9512 and -9515): a client sends one SETTINGS and a few PINGs on a connection;
    /// past 100 a second, GOAWAY ENHANCE_YOUR_CALM. A PING that follows data this side sent
    /// is not counted: gRPC clients (grpc-go's BDP estimation) ping whenever data arrives and
    /// no ping of theirs is out, which at thousands of calls a second on a connection is
    /// thousands of pings; grpc-go's own server forgives pings that follow data the same way.
    /// A client that pings with no data coming has the 100.
    control_frames_per_window_max: u32 = 100,
    window_ms: u32 = 1000,
    /// SETTINGS and PING acknowledgements waiting to be sent (a client that floods them and
    /// does not read): nghttp2's `max_outbound_ack`; past it the session ends. nghttp2's
    /// default is 1,000; 100 is ample for a client that reads.
    outbound_acks_max: u32 = 100,
    /// Parameters in one SETTINGS frame: nghttp2's `max_settings`, its default, 32 (there are
    /// 7 defined).
    settings_entries_max: u32 = 32,
    /// nghttp2's "glitch" limit: a token bucket of suspicious frames (empty DATA without
    /// END_STREAM, DATA or HEADERS on a closed stream, PRIORITY, the 2019 empty-frame flood
    /// CVE-2019-9518); nghttp2's defaults, 1,000 and 33 a second. Past it, GOAWAY
    /// ENHANCE_YOUR_CALM.
    glitch_burst: u32 = 1000,
    glitch_per_second: u32 = 33,
};

/// Each limit that ended a session or refused a stream, per worker.
pub const Counters = struct {
    /// Streams past `concurrent_streams_max`.
    streams_refused: Counter = .{},
    /// Header blocks past `header_list_bytes_max` or `header_fields_max` (answered 431).
    header_lists_too_large: Counter = .{},
    continuation_floods: Counter = .{},
    reset_floods: Counter = .{},
    control_frame_floods: Counter = .{},
    ack_floods: Counter = .{},
    settings_too_large: Counter = .{},
    glitch_floods: Counter = .{},
    /// Sessions failed because the pool was empty.
    out_of_memory: Counter = .{},
};

/// Streams reset by this side whose late frames are forgiven: more than a client has in flight
/// when a burst of its streams is refused or reset.
const resets_remembered = 128;

/// Why sluice ended a session.
const End = enum { reset_flood, control_frame_flood, continuation_flood, ack_flood, settings_too_large, glitch_flood, protocol };

/// A count of events in a fixed window of the caller's clock.
const Window = struct {
    start_ns: u64 = 0,
    count: u32 = 0,

    /// Counts one event at `now_ns`; true when the window holds more than `max`.
    fn exceeded(window: *Window, now_ns: u64, window_ns: u64, max: u32) bool {
        if (now_ns -| window.start_ns >= window_ns) window.* = .{ .start_ns = now_ns };
        window.count +|= 1;
        return window.count > max;
    }
};

/// What every session of a process shares: nghttp2's callbacks table and options, made once
/// at start-up (from the C heap, counted: `memory.heapAllocations`), and the limits.
pub const Setup = struct {
    callbacks: *c.nghttp2_session_callbacks,
    option: *c.nghttp2_option,
    limits: Limits,

    pub const InitError = error{OutOfMemory};

    /// `setup` must not move while sessions use it.
    pub fn init(setup: *Setup, limits: Limits) InitError!void {
        assert(limits.concurrent_streams_max > 0);
        assert(limits.header_fields_max > 0);
        assert(limits.window_ms > 0);
        // A header block is received into one pool block (`HeaderBlock`).
        assert(HeaderBlock.bytes(limits.header_fields_max) <= memory.payload_bytes_max);
        // SETTINGS_INITIAL_WINDOW_SIZE's range (RFC 9113 §6.5.2).
        assert(limits.stream_window_bytes <= std.math.maxInt(i32));

        var callbacks: ?*c.nghttp2_session_callbacks = null;
        if (c.nghttp2_session_callbacks_new(&callbacks) != 0) return error.OutOfMemory;
        errdefer c.nghttp2_session_callbacks_del(callbacks);
        const table = callbacks.?;
        c.nghttp2_session_callbacks_set_on_begin_frame_callback(table, beginFrameCallback);
        c.nghttp2_session_callbacks_set_on_begin_headers_callback(table, beginHeadersCallback);
        c.nghttp2_session_callbacks_set_on_header_callback2(table, headerCallback);
        c.nghttp2_session_callbacks_set_on_frame_recv_callback(table, frameReceivedCallback);
        c.nghttp2_session_callbacks_set_on_data_chunk_recv_callback(table, dataChunkCallback);
        c.nghttp2_session_callbacks_set_on_stream_close_callback(table, streamCloseCallback);
        c.nghttp2_session_callbacks_set_on_frame_send_callback(table, frameSentCallback);
        c.nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(table, invalidFrameCallback);

        var option: ?*c.nghttp2_option = null;
        if (c.nghttp2_option_new(&option) != 0) return error.OutOfMemory;
        const options = option.?;
        c.nghttp2_option_set_no_auto_window_update(options, 1);
        c.nghttp2_option_set_max_continuations(options, limits.continuation_frames_max);
        c.nghttp2_option_set_max_outbound_ack(options, limits.outbound_acks_max);
        c.nghttp2_option_set_max_settings(options, limits.settings_entries_max);
        // nghttp2's own bucket runs on its own clock (seconds of CLOCK_MONOTONIC): a backstop
        // with our rate and a burst of at least its default, so that ours (on the caller's
        // clock) is the one that trips.
        const resets_per_second = @max(1, @as(u64, limits.resets_per_window_max) * 1000 / limits.window_ms);
        c.nghttp2_option_set_stream_reset_rate_limit(options, @max(1000, @as(u64, limits.resets_per_window_max) * 2), resets_per_second);
        c.nghttp2_option_set_glitch_rate_limit(options, limits.glitch_burst, limits.glitch_per_second);
        setup.* = .{ .callbacks = table, .option = options, .limits = limits };
    }

    pub fn deinit(setup: *Setup) void {
        c.nghttp2_option_del(setup.option);
        c.nghttp2_session_callbacks_del(setup.callbacks);
        setup.* = undefined;
    }
};

/// A server session on `pool` that has queued its SETTINGS (the server's connection preface);
/// `session` must not move until `deinit`.
pub fn init(
    session: *ServerSession,
    setup: *const Setup,
    pool: *memory.Pool,
    counters: *Counters,
    handler: Handler,
) error{OutOfMemory}!void {
    session.* = .{
        .session = undefined,
        .setup = setup,
        .pool = pool,
        .handler = handler,
        .counters = counters,
    };
    var mem = pool.mem();
    var raw: ?*c.nghttp2_session = null;
    if (c.nghttp2_session_server_new3(&raw, setup.callbacks, session, setup.option, &mem) != 0) {
        counters.out_of_memory.add(1);
        return error.OutOfMemory;
    }
    session.session = raw.?;
    errdefer c.nghttp2_session_del(session.session);
    const limits = setup.limits;
    const settings = [_]c.nghttp2_settings_entry{
        .{ .settings_id = c.NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, .value = limits.concurrent_streams_max },
        .{ .settings_id = c.NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, .value = limits.stream_window_bytes },
        .{ .settings_id = c.NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, .value = limits.header_list_bytes_max },
        .{ .settings_id = c.NGHTTP2_SETTINGS_ENABLE_PUSH, .value = 0 },
    };
    if (c.nghttp2_submit_settings(session.session, c.NGHTTP2_FLAG_NONE, &settings, settings.len) != 0) {
        counters.out_of_memory.add(1);
        return error.OutOfMemory;
    }
    // The connection's window as wide as every stream's together (a WINDOW_UPDATE after the
    // SETTINGS): what bounds buffered bytes is each stream's window, and the connection's
    // default 65,535 would cap all uploads of a connection at 64 KiB per round trip (nginx
    // opens it to the maximum at the start, Envoy to 1 MiB).
    if (c.nghttp2_session_set_local_window_size(session.session, c.NGHTTP2_FLAG_NONE, 0, connectionWindow(limits)) != 0) {
        counters.out_of_memory.add(1);
        return error.OutOfMemory;
    }
}

fn connectionWindow(limits: Limits) i32 {
    const all_streams = @as(u64, limits.concurrent_streams_max) * limits.stream_window_bytes;
    return @intCast(@min(@max(all_streams, 65_535), std.math.maxInt(i32)));
}

pub fn deinit(session: *ServerSession) void {
    session.releaseBlock();
    c.nghttp2_session_del(session.session);
    session.* = undefined;
}

/// Feeds bytes the client sent, at `now_ns` on the caller's monotonic clock; the handler hears
/// what they complete. All of `bytes` is taken. After an error, `send` what is left (a GOAWAY)
/// and close.
pub fn receive(session: *ServerSession, bytes: []const u8, now_ns: u64) Error!void {
    assert(session.failure == null);
    session.now_ns = now_ns;
    // nghttp2 drops some frames the RFC has an endpoint answer before any callback sees them
    // (`Scan`): the bytes are walked frame by frame first, and those frames are checked at
    // the point where nghttp2 has taken everything before them.
    var fed: usize = 0;
    var at: usize = 0;
    while (session.scan.next(bytes, &at)) |frame| {
        switch (frame.kind) {
            .data_head => {
                try session.feed(bytes[fed..frame.start]);
                fed = frame.start;
                session.checkNotClosed(frame.stream);
            },
            .priority => if (frame.value & 0x7fff_ffff == @as(u32, @bitCast(frame.stream))) {
                // RFC 9113 §5.3.1: a stream that depends on itself is a stream error; it is a
                // connection error here (§5.4.1 allows it), as nghttp2 drops PRIORITY unread.
                try session.feed(bytes[fed..at]);
                fed = at;
                session.endProtocol(.protocol_error);
            },
            .window_update => {
                try session.feed(bytes[fed..frame.start]);
                fed = frame.start;
                if (session.streamWindowOverflows(frame.stream, frame.value & 0x7fff_ffff)) fed = at;
            },
        }
    }
    try session.feed(bytes[fed..]);
}

fn feed(session: *ServerSession, bytes: []const u8) Error!void {
    if (bytes.len == 0) return;
    const result = c.nghttp2_session_mem_recv2(session.session, bytes.ptr, bytes.len);
    if (session.takeFailure()) |failure| return failure;
    if (result >= 0) {
        assert(@as(usize, @intCast(result)) == bytes.len);
        return;
    }
    return session.fail(@intCast(result));
}

/// A WINDOW_UPDATE that would take an open stream's window past 2^31-1 is a stream error
/// FLOW_CONTROL_ERROR (RFC 9113 §6.9.1), where nghttp2 ends the whole connection: the stream
/// is reset here and the frame is not given to nghttp2 (true). Only for a frame whole in one
/// read; one split across reads gets nghttp2's connection error, which §5.4.1 allows.
fn streamWindowOverflows(session: *ServerSession, stream_id: i32, increment: u32) bool {
    if (session.ended != null) return false;
    const window = c.nghttp2_session_get_stream_remote_window_size(session.session, stream_id);
    if (window < 0) return false; // Not an open stream: nghttp2 answers.
    if (@as(u64, @intCast(window)) + increment <= std.math.maxInt(i32)) return false;
    _ = c.nghttp2_submit_rst_stream(session.session, c.NGHTTP2_FLAG_NONE, stream_id, @backingInt(ErrorCode.flow_control_error));
    return true;
}

/// The client's byte stream cut into frames, as far as `receive` needs: after the 24-byte
/// preface, each frame's 9-byte header, then its payload passed over (a PRIORITY's or a
/// WINDOW_UPDATE's first 4 bytes kept). Headers and payloads may be split across reads
/// anywhere. What nghttp2 checks itself (sizes, stream ids, padding) is left to it.
const Scan = struct {
    preface_left: u8 = 24,
    head: [9]u8 = undefined,
    head_len: u8 = 0,
    payload_left: u32 = 0,
    /// The frame under way: its type, stream, and where it started in this read (null: in
    /// an earlier one).
    kind: u8 = 0,
    stream: i32 = 0,
    start: ?u32 = null,
    /// A PRIORITY's dependency or a WINDOW_UPDATE's increment, big-endian, as it arrives.
    value: [4]u8 = undefined,
    value_len: u8 = 0,
    keep_value: bool = false,

    const Kind = enum { data_head, priority, window_update };
    const Frame = struct { kind: Kind, stream: i32, start: u32, value: u32 = 0 };

    /// Walks `bytes` from `at.*` to the next frame `receive` checks, and returns it with
    /// `at.*` just past its header (DATA) or its end; null at the end of `bytes`. A frame
    /// that began in an earlier read reports `start` as 0 (all before it was fed).
    fn next(scan: *Scan, bytes: []const u8, at: *usize) ?Frame {
        while (at.* < bytes.len) {
            if (scan.preface_left > 0) {
                const n: u8 = @intCast(@min(scan.preface_left, bytes.len - at.*));
                scan.preface_left -= n;
                at.* += n;
                continue;
            }
            if (scan.payload_left == 0 and scan.head_len == 0 and bytes.len - at.* >= 9) {
                // The usual case: a whole header in this read, read where it is.
                scan.start = @intCast(at.*);
                const head = bytes[at.*..][0..9];
                at.* += 9;
                scan.head_len = 9;
                if (scan.begin(head)) |frame| return frame;
                if (scan.payload_left == 0) if (scan.end()) |frame| return frame;
                continue;
            }
            if (scan.payload_left == 0 and scan.head_len < 9) {
                if (scan.head_len == 0) scan.start = @intCast(at.*);
                const n: u8 = @intCast(@min(9 - scan.head_len, bytes.len - at.*));
                @memcpy(scan.head[scan.head_len..][0..n], bytes[at.*..][0..n]);
                scan.head_len += n;
                at.* += n;
                if (scan.head_len < 9) continue; // The read ended in it.
                if (scan.begin(&scan.head)) |frame| return frame;
                if (scan.payload_left == 0) if (scan.end()) |frame| return frame;
                continue;
            }
            const n: u32 = @intCast(@min(scan.payload_left, bytes.len - at.*));
            if (scan.keep_value and scan.value_len < 4) {
                const kept: u8 = @intCast(@min(4 - scan.value_len, n));
                @memcpy(scan.value[scan.value_len..][0..kept], bytes[at.*..][0..kept]);
                scan.value_len += kept;
            }
            scan.payload_left -= n;
            at.* += n;
            if (scan.payload_left == 0) if (scan.end()) |frame| return frame;
        }
        scan.start = null; // The next read continues this frame.
        return null;
    }

    /// A frame's header is whole.
    fn begin(scan: *Scan, head: *const [9]u8) ?Frame {
        const length = std.mem.readInt(u24, head[0..3], .big);
        scan.kind = head[3];
        scan.stream = @intCast(std.mem.readInt(u32, head[5..9], .big) & 0x7fff_ffff);
        scan.payload_left = length;
        scan.value_len = 0;
        scan.keep_value = (scan.kind == c.NGHTTP2_PRIORITY and length == 5) or
            (scan.kind == c.NGHTTP2_WINDOW_UPDATE and length == 4 and scan.stream != 0);
        if (scan.kind == c.NGHTTP2_DATA and scan.stream != 0) return .{ .kind = .data_head, .stream = scan.stream, .start = scan.start orelse 0 };
        return null;
    }

    /// A frame's payload is whole: the next byte begins a header.
    fn end(scan: *Scan) ?Frame {
        scan.head_len = 0;
        if (!scan.keep_value or scan.value_len < 4) return null;
        const value = std.mem.readInt(u32, &scan.value, .big);
        // A frame that began in an earlier read was partly fed: only a whole one is held back.
        if (scan.kind == c.NGHTTP2_WINDOW_UPDATE) {
            const start = scan.start orelse return null;
            return .{ .kind = .window_update, .stream = scan.stream, .start = start, .value = value };
        }
        return .{ .kind = .priority, .stream = scan.stream, .start = scan.start orelse 0, .value = value };
    }
};

/// Copies bytes to send into `out`; returns how many (0: nothing to send now).
pub fn send(session: *ServerSession, out: []u8) Error!usize {
    return wire.send(ServerSession, session, out);
}

/// The session has more to read; when neither this nor `wantsWrite` holds, it is over (both
/// sides said GOAWAY and no stream is open, or a fatal error): close the connection.
pub fn wantsRead(session: *const ServerSession) bool {
    return c.nghttp2_session_want_read(session.session) != 0;
}

pub fn wantsWrite(session: *const ServerSession) bool {
    return session.pending.len > 0 or c.nghttp2_session_want_write(session.session) != 0;
}

pub const SubmitError = wire.SubmitError;

/// Most fields in one response head or trailer block.
pub const submitted_fields_max = wire.submitted_fields_max;

/// Queues the response head of `stream`: `status` and `fields` (copied). With `body`, the
/// handler's `readBody` supplies it when the stream's window allows; without, the head ends
/// the stream.
pub fn respond(session: *ServerSession, stream: StreamId, status: u16, fields: []const Field, body: bool) SubmitError!void {
    assert(status >= 100 and status <= 999);
    if (fields.len + 1 > submitted_fields_max) return error.TooManyFields;
    const nva = &wire.nva_scratch;
    var status_text: [3]u8 = undefined;
    _ = std.fmt.bufPrint(&status_text, "{d}", .{status}) catch unreachable;
    nva[0] = nv(":status", &status_text);
    for (fields, nva[1..][0..fields.len]) |field, *entry| entry.* = nv(field.name, field.value);
    const provider: c.nghttp2_data_provider2 = .{
        .source = .{ .ptr = null },
        .read_callback = readBodyCallback,
    };
    const rv = c.nghttp2_submit_response2(session.session, stream, nva, fields.len + 1, if (body) &provider else null);
    return submitResult(rv);
}

/// Queues an interim (1xx) response head on `stream` (100 Continue, 103 Early Hints): a
/// HEADERS frame without END_STREAM before the final `respond` (RFC 9113 §8.1).
pub fn interim(session: *ServerSession, stream: StreamId, status: u16, fields: []const Field) SubmitError!void {
    assert(status >= 100 and status < 200 and status != 101);
    if (fields.len + 1 > submitted_fields_max) return error.TooManyFields;
    const nva = &wire.nva_scratch;
    var status_text: [3]u8 = undefined;
    _ = std.fmt.bufPrint(&status_text, "{d}", .{status}) catch unreachable;
    nva[0] = nv(":status", &status_text);
    for (fields, nva[1..][0..fields.len]) |field, *entry| entry.* = nv(field.name, field.value);
    const rv = c.nghttp2_submit_headers(session.session, c.NGHTTP2_FLAG_NONE, stream, null, nva, fields.len + 1, null);
    return submitResult(rv);
}

/// A stream whose body waited (`BodyChunk.wait`) has bytes again.
pub fn resumeBody(session: *ServerSession, stream: StreamId) SubmitError!void {
    return submitResult(c.nghttp2_session_resume_data(session.session, stream));
}

/// The handler's consumer took `bytes` of `stream`'s request body: its window opens by as much
/// (a WINDOW_UPDATE once enough is consumed). Nothing happens for a stream that is gone.
pub fn consume(session: *ServerSession, stream: StreamId, bytes: usize) error{OutOfMemory}!void {
    const rv = c.nghttp2_session_consume_stream(session.session, stream, bytes);
    switch (rv) {
        0 => {},
        // Queuing the WINDOW_UPDATE: the pool is empty.
        c.NGHTTP2_ERR_NOMEM => {
            session.counters.out_of_memory.add(1);
            return error.OutOfMemory;
        },
        else => std.debug.panic("nghttp2: unexpected consume result {d}", .{rv}),
    }
}

pub fn reset(session: *ServerSession, stream: StreamId, code: ErrorCode) SubmitError!void {
    return submitResult(c.nghttp2_submit_rst_stream(session.session, c.NGHTTP2_FLAG_NONE, stream, @backingInt(code)));
}

/// Says no new stream will be served: the streams begun so far complete; once they are closed
/// the session is over (`wantsRead` and `wantsWrite` false). `no_error` for a drain or reload.
pub fn goaway(session: *ServerSession, code: ErrorCode) SubmitError!void {
    const last = c.nghttp2_session_get_last_proc_stream_id(session.session);
    return session.goawayAfter(streamOf(last), code);
}

/// As `goaway`, naming `last` as the last stream taken: the caller's, not nghttp2's, whose last
/// processed stream counts one whose HEADERS have begun and not ended. Such a stream is not
/// taken (the caller refuses streams once it goes away), so the GOAWAY must not name it: the
/// client would wait for it, or never know it may send it again (RFC 9113 §6.8).
pub fn goawayAfter(session: *ServerSession, last: StreamId, code: ErrorCode) SubmitError!void {
    session.goaway_last = @min(session.goaway_last orelse last, last);
    return submitResult(c.nghttp2_submit_goaway(session.session, c.NGHTTP2_FLAG_NONE, last, @backingInt(code), null, 0));
}

/// Remembers the handler's own state for `stream` (its exchange), for `streamContext`, from its
/// `request` event until its `closed` one.
pub fn setStreamContext(session: *ServerSession, stream: StreamId, context: *anyopaque) void {
    assert(session.announced(stream));
    const rv = c.nghttp2_session_set_stream_user_data(session.session, stream, context);
    assert(rv == 0);
}

/// What `setStreamContext` remembered; null before that, or for a stream that is gone.
pub fn streamContext(session: *ServerSession, stream: StreamId) ?*anyopaque {
    const data = c.nghttp2_session_get_stream_user_data(session.session, stream) orelse return null;
    return if (data == @as(*anyopaque, &announced_marker)) null else data;
}

/// The client's window for `stream`'s response body, and what it may still send us.
pub fn streamSendWindow(session: *const ServerSession, stream: StreamId) i32 {
    return c.nghttp2_session_get_stream_remote_window_size(session.session, stream);
}

pub fn streamReceiveWindow(session: *const ServerSession, stream: StreamId) i32 {
    return c.nghttp2_session_get_stream_local_window_size(session.session, stream);
}

// --- Helpers --------------------------------------------------------------------------------

const nv = wire.nv;
const submitResult = wire.submitResult;
const streamOf = wire.streamOf;

/// A fatal result of nghttp2, counted, and the session ended where it still can be.
pub fn fail(session: *ServerSession, rv: c_int) Error {
    switch (rv) {
        c.NGHTTP2_ERR_NOMEM => {
            session.counters.out_of_memory.add(1);
            return error.OutOfMemory;
        },
        c.NGHTTP2_ERR_FLOODED => {
            session.counters.ack_floods.add(1);
            session.endCalm(.ack_flood);
            return error.Flooded;
        },
        c.NGHTTP2_ERR_TOO_MANY_CONTINUATIONS => {
            session.counters.continuation_floods.add(1);
            session.endCalm(.continuation_flood);
            return error.Flooded;
        },
        // Not an HTTP/2 client, or a frame nghttp2 gave up on: there is nothing to answer.
        else => return error.Protocol,
    }
}

/// DATA or HEADERS on a stream the client opened before and that is closed now: unless this
/// side reset it (then the client may have sent them before it knew), a connection error
/// STREAM_CLOSED (RFC 9113 §5.1), which nghttp2 leaves to the application (it ignores such
/// frames, counting them towards its glitch limit). A HEADERS on a lower id never used is one
/// too: that stream was closed implicitly (§5.1.1).
fn checkNotClosed(session: *ServerSession, stream_id: i32) void {
    if (stream_id <= 0 or @mod(stream_id, 2) == 0) return; // nghttp2 answers those itself
    if (stream_id > c.nghttp2_session_get_last_proc_stream_id(session.session)) return; // new
    // A stream above the last one this side's GOAWAY named: never taken, its frames ignored.
    if (session.goaway_last) |last| if (streamOf(stream_id) > last) return;
    if (c.nghttp2_session_find_stream(session.session, stream_id)) |stream| {
        if (c.nghttp2_stream_get_state(stream) != c.NGHTTP2_STREAM_STATE_CLOSED) return;
    }
    for (session.resets_sent) |reset_id| if (reset_id == stream_id) return;
    session.endProtocol(.stream_closed);
}

/// Remembers a stream this side reset (`checkNotClosed`).
fn rememberReset(session: *ServerSession, stream_id: i32) void {
    session.resets_sent[session.resets_sent_next % resets_remembered] = streamOf(stream_id);
    session.resets_sent_next +%= 1;
}

/// A connection error the client caused: GOAWAY with `code`, then nothing more is read.
fn endProtocol(session: *ServerSession, code: ErrorCode) void {
    if (session.ended == null) session.ended = .protocol;
    _ = c.nghttp2_session_terminate_session(session.session, @backingInt(code));
}

/// GOAWAY ENHANCE_YOUR_CALM: nghttp2 ignores everything received after it.
fn endCalm(session: *ServerSession, why: End) void {
    if (session.ended == null) session.ended = why;
    // Only a session out of memory cannot queue it; the connection closes all the same.
    _ = c.nghttp2_session_terminate_session(session.session, @backingInt(ErrorCode.enhance_your_calm));
}

/// A failure a callback recorded during the call into nghttp2 that just returned.
pub fn takeFailure(session: *ServerSession) ?Error {
    const failure = session.failure orelse return null;
    session.failure = null;
    return failure;
}

fn releaseBlock(session: *ServerSession) void {
    const block = session.block orelse return;
    block.destroy(session.pool);
    session.block = null;
}

fn fieldsMax(session: *const ServerSession) u32 {
    return session.setup.limits.header_fields_max;
}

fn sessionOf(user_data: ?*anyopaque) *ServerSession {
    return @ptrCast(@alignCast(user_data.?));
}

// --- nghttp2's callbacks --------------------------------------------------------------------

fn beginFrameCallback(_: ?*c.nghttp2_session, hd: [*c]const c.nghttp2_frame_hd, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    const limits = session.setup.limits;
    switch (hd.*.type) {
        c.NGHTTP2_SETTINGS, c.NGHTTP2_PING => {
            if (hd.*.flags & c.NGHTTP2_FLAG_ACK != 0) return 0; // answers to ours
            if (hd.*.type == c.NGHTTP2_PING and session.sent_since_ping) {
                session.sent_since_ping = false; // One ping per batch of data sent.
                return 0;
            }
            if (session.control_frames.exceeded(session.now_ns, @as(u64, limits.window_ms) * std.time.ns_per_ms, limits.control_frames_per_window_max)) {
                if (session.ended == null) session.counters.control_frame_floods.add(1);
                session.endCalm(.control_frame_flood);
            }
        },
        c.NGHTTP2_HEADERS => {
            // A new stream past the limit: nghttp2 refuses it (see `Limits`); counted here,
            // where it is known to be a new stream.
            const last = c.nghttp2_session_get_last_proc_stream_id(session.session);
            if (hd.*.stream_id > last and session.streams_open >= limits.concurrent_streams_max) {
                session.counters.streams_refused.add(1);
            }
            session.checkNotClosed(hd.*.stream_id);
        },
        // DATA is checked before nghttp2 sees it (`receive`): it drops DATA on a closed
        // stream without a callback.
        // RFC 9113 §6.3: PRIORITY on stream 0 is a connection error (nghttp2, which ignores
        // the deprecated priorities, drops it unread).
        c.NGHTTP2_PRIORITY => if (hd.*.stream_id == 0) session.endProtocol(.protocol_error),
        else => {},
    }
    return 0;
}

fn beginHeadersCallback(_: ?*c.nghttp2_session, frame: [*c]const c.nghttp2_frame, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    const headers = &frame.*.headers;
    // One block at a time (HPACK): one left by a stream closed mid-block goes now.
    session.releaseBlock();
    const trailers = headers.cat == c.NGHTTP2_HCAT_HEADERS;
    const block = HeaderBlock.create(session.pool, streamOf(headers.hd.stream_id), trailers, session.fieldsMax()) orelse
        return session.callbackOutOfMemory();
    session.block = block;
    if (headers.cat == c.NGHTTP2_HCAT_REQUEST) session.streams_open += 1;
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
    const block = session.block.?;
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
            assert(block.stream == hd.stream_id);
            defer session.releaseBlock();
            if (block.too_large) {
                session.counters.header_lists_too_large.add(1);
                return session.refuseTooLarge(block, end_stream);
            }
            const fields = block.regular();
            if (block.trailers) {
                session.emit(.{ .trailers = .{ .stream = block.stream, .fields = fields } });
            } else {
                const rv = c.nghttp2_session_set_stream_user_data(session.session, block.stream, &announced_marker);
                assert(rv == 0);
                session.emit(.{ .request = .{
                    .stream = block.stream,
                    .method = block.get(.method),
                    .scheme = block.get(.scheme),
                    .authority = block.get(.authority),
                    .path = block.get(.path),
                    .fields = fields,
                    .end_stream = end_stream,
                } });
            }
            if (end_stream) session.emit(.{ .end = streamOf(hd.stream_id) });
        },
        c.NGHTTP2_DATA => if (end_stream and session.announced(hd.stream_id)) session.emit(.{ .end = streamOf(hd.stream_id) }),
        c.NGHTTP2_RST_STREAM => session.countReset(),
        c.NGHTTP2_GOAWAY => session.emit(.{ .goaway = .{
            .last_stream = @intCast(@max(0, frame.*.goaway.last_stream_id)),
            .error_code = @fromBackingInt(@intCast(frame.*.goaway.error_code)),
        } }),
        else => {},
    }
    return 0;
}

/// A header block past the limits. A request's head is answered 431 by the session itself
/// and, if the client has more to send, RST_STREAM NO_ERROR after it (RFC 9113 §8.1: a complete
/// response may ask the client to stop sending); the handler never hears of the stream. A trailer
/// block's stream is the handler's already: it is reset (INTERNAL_ERROR, as nghttp2 resets a
/// stream whose header callback fails), and the handler hears it closed.
fn refuseTooLarge(session: *ServerSession, block: *const HeaderBlock, end_stream: bool) c_int {
    const stream = block.stream;
    if (block.trailers) {
        session.reset(stream, .internal_error) catch |err| switch (err) {
            error.OutOfMemory => return session.callbackOutOfMemory(),
            error.StreamClosed => {}, // gone already
            error.TooManyFields => unreachable,
        };
        return 0;
    }
    const fields = [_]Field{.{ .name = "content-length", .value = "0" }};
    session.respond(stream, 431, &fields, false) catch |err| switch (err) {
        error.OutOfMemory => return session.callbackOutOfMemory(),
        error.StreamClosed, error.TooManyFields => unreachable, // a new stream, one field
    };
    // RST_STREAM once the 431 is sent (`frameSentCallback`): submitted now, nghttp2 would
    // mark the stream closing and drop the 431.
    if (!end_stream) {
        const rv = c.nghttp2_session_set_stream_user_data(session.session, stream, &refused_marker);
        assert(rv == 0);
    }
    return 0;
}

/// The user data of a stream answered 431 whose client has more to send.
var refused_marker: u8 = 0;

/// A stream whose request the handler heard has user data: this marker, or the handler's
/// context (`setStreamContext`). Only such a stream's body, end and close reach the handler
/// (not one the session answered itself, nor one nghttp2 reset before its head was complete).
var announced_marker: u8 = 0;

fn announced(session: *ServerSession, stream_id: i32) bool {
    const data = c.nghttp2_session_get_stream_user_data(session.session, stream_id) orelse return false;
    return data != @as(*anyopaque, &refused_marker);
}

/// The pool ran out inside a callback: nghttp2 stops, and `receive` or `send` returns it.
fn callbackOutOfMemory(session: *ServerSession) c_int {
    session.counters.out_of_memory.add(1);
    session.failure = error.OutOfMemory;
    return c.NGHTTP2_ERR_CALLBACK_FAILURE;
}

fn dataChunkCallback(_: ?*c.nghttp2_session, _: u8, stream_id: i32, data: [*c]const u8, len: usize, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    // The connection's window comes back at once; the stream's when the handler consumes.
    const rv = c.nghttp2_session_consume_connection(session.session, len);
    assert(rv == 0 or rv == c.NGHTTP2_ERR_NOMEM);
    if (rv == c.NGHTTP2_ERR_NOMEM) return session.callbackOutOfMemory();
    if (len > 0 and session.announced(stream_id)) session.emit(.{ .data = .{ .stream = streamOf(stream_id), .bytes = data[0..len] } });
    return 0;
}

fn streamCloseCallback(_: ?*c.nghttp2_session, stream_id: i32, error_code: u32, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    if (session.block) |block| {
        if (block.stream == stream_id) session.releaseBlock();
    }
    assert(session.streams_open > 0);
    session.streams_open -= 1;
    if (!session.announced(stream_id)) return 0;
    session.emit(.{ .closed = .{ .stream = streamOf(stream_id), .error_code = @fromBackingInt(@intCast(error_code)) } });
    return 0;
}

/// A frame nghttp2 refused: for a stream, it resets the stream (a malformed head, a body past
/// its window...). A client can make the server reset streams as fast as it resets them itself
/// (MadeYouReset, CVE-2025-8671): these count with its RST_STREAM frames.
fn invalidFrameCallback(_: ?*c.nghttp2_session, frame: [*c]const c.nghttp2_frame, _: c_int, user_data: ?*anyopaque) callconv(.c) c_int {
    if (frame.*.hd.stream_id != 0) sessionOf(user_data).countReset();
    return 0;
}

/// One more stream reset by or because of the client in this window; past the limit, GOAWAY
/// ENHANCE_YOUR_CALM (Rapid Reset).
fn countReset(session: *ServerSession) void {
    const limits = session.setup.limits;
    if (!session.resets.exceeded(session.now_ns, @as(u64, limits.window_ms) * std.time.ns_per_ms, limits.resets_per_window_max)) return;
    if (session.ended == null) session.counters.reset_floods.add(1);
    session.endCalm(.reset_flood);
}

fn frameSentCallback(_: ?*c.nghttp2_session, frame: [*c]const c.nghttp2_frame, user_data: ?*anyopaque) callconv(.c) c_int {
    const session = sessionOf(user_data);
    const hd = frame.*.hd;
    if (hd.type == c.NGHTTP2_DATA or hd.type == c.NGHTTP2_HEADERS) session.sent_since_ping = true;
    if (hd.type == c.NGHTTP2_RST_STREAM) session.rememberReset(hd.stream_id);
    if (hd.type == c.NGHTTP2_HEADERS and c.nghttp2_session_get_stream_user_data(session.session, hd.stream_id) == @as(*anyopaque, &refused_marker)) {
        session.reset(streamOf(hd.stream_id), .no_error) catch |err| switch (err) {
            error.OutOfMemory => return session.callbackOutOfMemory(),
            error.StreamClosed => {}, // the client ended or reset it meanwhile
            error.TooManyFields => unreachable,
        };
        return 0;
    }
    const goaway_frame = &frame.*.goaway;
    if (frame.*.hd.type != c.NGHTTP2_GOAWAY or session.ended != null) return 0;
    if (goaway_frame.error_code != @backingInt(ErrorCode.enhance_your_calm)) return 0;
    // Not sluice's: nghttp2 ended the session on its own. It words the reason of its SETTINGS
    // limit in the GOAWAY's debug data (and checks it before any callback could count it);
    // its glitch limit has none. A test pins both.
    const reason: []const u8 = if (goaway_frame.opaque_data_len == 0) "" else goaway_frame.opaque_data[0..goaway_frame.opaque_data_len];
    if (std.mem.startsWith(u8, reason, "SETTINGS: too many")) {
        session.counters.settings_too_large.add(1);
        session.ended = .settings_too_large;
    } else {
        session.counters.glitch_floods.add(1);
        session.ended = .glitch_flood;
    }
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
    const stream = streamOf(stream_id);
    const chunk = session.handler.readBody(session.handler.context, session, stream, buffer[0..length]);
    switch (chunk) {
        .bytes, .wait, .last => return wire.bodyResult(chunk, length, data_flags),
        .last_with_trailers => |last| {
            assert(last.len <= length);
            data_flags.* |= c.NGHTTP2_DATA_FLAG_EOF;
            if (last.fields.len > submitted_fields_max) return c.NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            const nva = &wire.nva_scratch;
            for (last.fields, nva[0..last.fields.len]) |field, *entry| entry.* = nv(field.name, field.value);
            if (c.nghttp2_submit_trailer(session.session, stream_id, nva, last.fields.len) == 0) {
                data_flags.* |= c.NGHTTP2_DATA_FLAG_NO_END_STREAM;
            } else {
                // Out of memory: the body ends without its trailers, and the stream is reset.
                session.counters.out_of_memory.add(1);
                return c.NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            }
            return @intCast(last.len);
        },
    }
}

fn emit(session: *ServerSession, event: Event) void {
    session.handler.onEvent(session.handler.context, session, event);
}
