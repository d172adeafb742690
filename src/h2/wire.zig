//! What both sides' sessions share: the protocol's names (stream ids, error codes, fields),
//! the next piece of a body as a handler supplies it, and nghttp2's field and result mapping.
const std = @import("std");
const c = @import("nghttp2");

pub const StreamId = u31;

/// RFC 9113 §7.
pub const ErrorCode = enum(u32) {
    no_error = 0x0,
    protocol_error = 0x1,
    internal_error = 0x2,
    flow_control_error = 0x3,
    settings_timeout = 0x4,
    stream_closed = 0x5,
    frame_size_error = 0x6,
    refused_stream = 0x7,
    cancel = 0x8,
    compression_error = 0x9,
    connect_error = 0xa,
    enhance_your_calm = 0xb,
    inadequate_security = 0xc,
    http_1_1_required = 0xd,
    _,
};

pub const Field = struct {
    name: []const u8,
    value: []const u8,
};

/// The next piece of a body, written by the handler into nghttp2's frame buffer.
pub const BodyChunk = union(enum) {
    /// This many bytes were written; more follow.
    bytes: usize,
    /// Nothing is ready: the stream waits (sending nothing) until `resumeBody`.
    wait,
    /// This many bytes were written, and they end the body.
    last: usize,
    /// This many bytes were written, and the message ends with these trailer fields (valid
    /// during the call).
    last_with_trailers: struct { len: usize, fields: []const Field },
};

pub const SubmitError = error{ OutOfMemory, StreamClosed, TooManyFields };

/// Most fields in one submitted head or trailer block.
pub const submitted_fields_max = 128;

/// The array a head or trailer block is submitted from, one per thread: nghttp2 copies the
/// fields before `nghttp2_submit_*` returns, so one array serves every submission a worker
/// makes. Not on the submitter's stack: safe builds fill undefined stack memory with 0xAA, 5 KiB
/// per head (measured: about 500 instructions per HTTP/2 response).
pub threadlocal var nva_scratch: [submitted_fields_max]c.nghttp2_nv = undefined;

/// A field for nghttp2, which copies it.
pub fn nv(name: []const u8, value: []const u8) c.nghttp2_nv {
    return .{
        .name = @constCast(name.ptr),
        .value = @constCast(value.ptr),
        .namelen = name.len,
        .valuelen = value.len,
        .flags = c.NGHTTP2_NV_FLAG_NONE,
    };
}

pub fn submitResult(rv: c_int) SubmitError!void {
    if (rv == 0) return;
    return switch (rv) {
        c.NGHTTP2_ERR_NOMEM => error.OutOfMemory,
        // The stream is gone, or not one that can take this (closed, reset).
        c.NGHTTP2_ERR_INVALID_ARGUMENT, c.NGHTTP2_ERR_STREAM_CLOSED, c.NGHTTP2_ERR_DATA_EXIST, c.NGHTTP2_ERR_INVALID_STREAM_STATE, c.NGHTTP2_ERR_STREAM_SHUT_WR => error.StreamClosed,
        else => std.debug.panic("nghttp2: unexpected submit result {d}", .{rv}),
    };
}

/// Copies what nghttp2 has to send into `out`, keeping what does not fit of its own buffer in
/// `session.pending` for the next call; returns how many bytes (0: nothing to send now). For
/// either side's session: `Session` has `session`, `pending`, `takeFailure()` and `fail(rv)`.
pub fn send(comptime Session: type, session: *Session, out: []u8) Session.Error!usize {
    var written: usize = 0;
    while (written < out.len) {
        if (session.pending.len == 0) {
            var data: [*c]const u8 = null;
            const result = c.nghttp2_session_mem_send2(session.session, &data);
            if (session.takeFailure()) |failure| return failure;
            if (result < 0) return session.fail(@intCast(result));
            if (result == 0) break;
            session.pending = data[0..@intCast(result)];
        }
        const n = @min(out.len - written, session.pending.len);
        @memcpy(out[written..][0..n], session.pending[0..n]);
        session.pending = session.pending[n..];
        written += n;
    }
    std.debug.assert(written <= out.len);
    return written;
}

/// A body chunk without trailers as nghttp2's data source callback answers it.
pub fn bodyResult(chunk: BodyChunk, length: usize, data_flags: [*c]u32) c.nghttp2_ssize {
    switch (chunk) {
        .bytes => |n| {
            std.debug.assert(n <= length);
            return @intCast(n);
        },
        .wait => return c.NGHTTP2_ERR_DEFERRED,
        .last => |n| {
            std.debug.assert(n <= length);
            data_flags.* |= c.NGHTTP2_DATA_FLAG_EOF;
            return @intCast(n);
        },
        .last_with_trailers => unreachable, // The caller submits trailers itself.
    }
}

pub fn streamOf(id: i32) StreamId {
    std.debug.assert(id > 0);
    return @intCast(id);
}
