//! The ciphertext one TLS connection holds between socket operations: records received and not
//! yet taken by its `Engine`, and records the engine wrote that are not on the wire yet. The
//! two buffers are the caller's (a worker's buffer pool, a probe's own); this keeps the
//! positions in them, so each driver of an engine (a connection to a backend, a health probe)
//! says only when to receive and send.
const std = @import("std");
const assert = std.debug.assert;
const Engine = @import("Engine.zig");
const BufferPool = @import("../stdx/BufferPool.zig");

const Ciphertext = @This();

/// Received, not yet taken by the engine: `in[0..in_len]`.
in: []u8,
in_len: u32 = 0,
/// To send: `out[out_pos..out_len]`.
out: []u8,
out_pos: u32 = 0,
out_len: u32 = 0,
/// The socket read end-of-file.
peer_closed: bool = false,

/// Two buffers from `buffers`; null when it has fewer than two free.
pub fn acquire(buffers: *BufferPool) ?Ciphertext {
    const in = buffers.acquire() orelse return null;
    const out = buffers.acquire() orelse {
        buffers.release(in);
        return null;
    };
    return .{ .in = in, .out = out };
}

/// Gives `acquire`'s buffers back.
pub fn release(ciphertext: *Ciphertext, buffers: *BufferPool) void {
    buffers.release(ciphertext.in);
    buffers.release(ciphertext.out);
    ciphertext.* = undefined;
}

/// What the engine may take and where it may write, for one call.
pub fn wire(ciphertext: *Ciphertext) Engine.Wire {
    return .{
        .input = ciphertext.in[0..ciphertext.in_len],
        .input_closed = ciphertext.peer_closed,
        .output = ciphertext.out[ciphertext.out_len..],
    };
}

/// After the call: drops what the engine took and keeps what it wrote.
pub fn settle(ciphertext: *Ciphertext, w: *const Engine.Wire) void {
    const consumed: u32 = @intCast(w.consumed);
    if (consumed > 0) {
        const in = ciphertext.in;
        std.mem.copyForwards(u8, in[0 .. ciphertext.in_len - consumed], in[consumed..ciphertext.in_len]);
        ciphertext.in_len -= consumed;
    }
    ciphertext.out_len += @intCast(w.produced);
    assert(ciphertext.out_len <= ciphertext.out.len);
}

pub fn outputPending(ciphertext: *const Ciphertext) bool {
    return ciphertext.out_pos < ciphertext.out_len;
}

/// What is still to send.
pub fn unsent(ciphertext: *const Ciphertext) []const u8 {
    return ciphertext.out[ciphertext.out_pos..ciphertext.out_len];
}

/// `n` bytes of `unsent()` went out.
pub fn sent(ciphertext: *Ciphertext, n: usize) void {
    ciphertext.out_pos += @intCast(n);
    assert(ciphertext.out_pos <= ciphertext.out_len);
}

/// Everything was sent (or is given up): the output buffer is empty again.
pub fn clearOutput(ciphertext: *Ciphertext) void {
    ciphertext.out_pos = 0;
    ciphertext.out_len = 0;
}

/// Where the next receive goes; never empty (a buffer holds the largest record, and the
/// engine takes every whole record it is given).
pub fn room(ciphertext: *const Ciphertext) []u8 {
    assert(ciphertext.in_len < ciphertext.in.len);
    return ciphertext.in[ciphertext.in_len..];
}

/// A receive into `room()` got `n` bytes; 0 is the end of the stream.
pub fn received(ciphertext: *Ciphertext, n: usize) void {
    if (n == 0) ciphertext.peer_closed = true else ciphertext.in_len += @intCast(n);
    assert(ciphertext.in_len <= ciphertext.in.len);
}

test "ciphertext: settle drops what was taken and keeps what was written" {
    var in: [8]u8 = "abcdefgh".*;
    var out: [8]u8 = undefined;
    var ciphertext: Ciphertext = .{ .in = &in, .out = &out };
    ciphertext.received(5);
    var w = ciphertext.wire();
    w.consumed = 2;
    @memcpy(w.output[0..3], "xyz");
    w.produced = 3;
    ciphertext.settle(&w);
    try std.testing.expectEqualStrings("cde", ciphertext.in[0..ciphertext.in_len]);
    try std.testing.expectEqualStrings("xyz", ciphertext.unsent());
    ciphertext.sent(3);
    try std.testing.expect(!ciphertext.outputPending());
    ciphertext.received(0);
    try std.testing.expect(ciphertext.peer_closed);
}
