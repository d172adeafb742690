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

pub fn streamOf(id: i32) StreamId {
    std.debug.assert(id > 0);
    return @intCast(id);
}
