//! Removes chunked framing in place, for the one case where sluice must re-frame a body: a
//! backend that answers an HTTP/1.0 request with `Transfer-Encoding: chunked` (which RFC 9112
//! §6.1 forbids, since a 1.0 client cannot read it). The client then gets the bare data,
//! delimited by closing the connection. Every other body is forwarded byte for byte.
//!
//! It drives the ordinary framing scanner (`http.ChunkedDecoder`), so validation is the same
//! as for a forwarded chunked body: chunk data is handed over a whole read at a time and
//! framing bytes one at a time (framing lines are short).
const std = @import("std");
const assert = std.debug.assert;
const http = @import("../http/http.zig");

pub const Result = struct {
    /// Bytes of the input that belong to the body (framing included); the rest, if any,
    /// follows the message.
    consumed: usize,
    /// Data bytes, now at the front of the input.
    data_len: usize,
    done: bool,
    reject: ?http.Reject = null,
};

pub fn dechunkInPlace(decoder: *http.ChunkedDecoder, bytes: []u8) Result {
    var read: usize = 0;
    var written: usize = 0;
    while (read < bytes.len) {
        if (decoder.state == .data) {
            const take: usize = @intCast(@min(decoder.size, bytes.len - read));
            switch (decoder.feed(bytes[read..][0..take])) {
                .need_more => {},
                .done, .invalid => unreachable, // Data bytes never end or break a body.
            }
            std.mem.copyForwards(u8, bytes[written..][0..take], bytes[read..][0..take]);
            written += take;
            read += take;
            continue;
        }
        switch (decoder.feed(bytes[read..][0..1])) {
            .need_more => read += 1,
            .done => |n| {
                assert(n == 1);
                return .{ .consumed = read + 1, .data_len = written, .done = true };
            },
            .invalid => |reject| return .{
                .consumed = read,
                .data_len = written,
                .done = false,
                .reject = reject,
            },
        }
    }
    assert(written <= read);
    return .{ .consumed = read, .data_len = written, .done = false };
}

test "dechunk: data survives any split and framing is removed" {
    const body = "4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\nNEXT";
    const expected = "Wikipedia in \r\n\r\nchunks.";
    for (0..body.len - "NEXT".len) |split| {
        var copy: [body.len]u8 = body.*;
        var decoder: http.ChunkedDecoder = .init(.{});
        var out: [body.len]u8 = undefined;
        var out_len: usize = 0;
        const first = dechunkInPlace(&decoder, copy[0..split]);
        try std.testing.expect(!first.done);
        @memcpy(out[0..first.data_len], copy[0..first.data_len]);
        out_len = first.data_len;
        const second = dechunkInPlace(&decoder, copy[split..]);
        try std.testing.expect(second.done);
        try std.testing.expectEqual(body.len - "NEXT".len - split, second.consumed);
        @memcpy(out[out_len..][0..second.data_len], copy[split..][0..second.data_len]);
        out_len += second.data_len;
        try std.testing.expectEqualStrings(expected, out[0..out_len]);
    }
}

test "dechunk: a malformed size is rejected like a forwarded body would be" {
    var bytes = "zz\r\nabc".*;
    var decoder: http.ChunkedDecoder = .init(.{});
    const result = dechunkInPlace(&decoder, &bytes);
    try std.testing.expect(result.reject != null);
}
