//! One response body being gzipped (zlib's deflate, through src/zlib/), and the worker's slots
//! for them (`Slots`), allocated at start-up and never grown: when every slot is busy a response
//! passes uncompressed and is counted.
//!
//! Decision: each window of body bytes the exchange receives is compressed and flushed at once
//! (a sync flush: the deflate bits so far end on a byte boundary and go out as one chunk). So
//! the compressor holds no body bytes between windows but the 32 KiB of history deflate keeps
//! for its matches, a slow backend's bytes (server-sent events, a long poll) reach the client as
//! they come, and what one window can become is bounded: zlib stores a block that compressing
//! would grow, so a window becomes at most its own bytes plus a few per block and the flush
//! (`Deflate.outputBound`). The output buffer is sized from that bound for the largest window
//! the exchange can receive (its buffer), so the output always fits; if it did not (a bug),
//! zlib stops at the buffer's end and the response is cut off with a close, never sent short
//! silently. The price is a block per window: under 1% of size (README "Benchmarks").
//!
//! Memory per slot (`bytes_per_slot`, pinned in a test): zlib's state, window, hash chains and
//! pending buffer (`Deflate.memory_bytes`, 264 KiB), the output buffer (the exchange buffer and
//! a margin: ~37 KiB with the default 36 KiB buffers), the chunked decoder for a chunked backend
//! body, and the weak ETag. Slots are untouched until used; only as many become resident as
//! were ever busy at once.
const std = @import("std");
const assert = std.debug.assert;

const http = @import("../http/http.zig");
const compression = @import("../policy/compression.zig");
const Deflate = @import("../zlib/Deflate.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const FreeIndices = @import("../stdx/FreeIndices.zig");

const Compressor = @This();

/// The gzip stream (zlib's state in its own fixed region).
deflate: Deflate,
/// This slot's output buffer (`Slots.out_bytes` of them): a chunk's size line, deflate's
/// bytes, the chunk's CRLF and, after the last, the last-chunk.
out: []u8,
/// The backend's body is chunked: its framing is taken off before compressing.
dechunk: ?http.ChunkedDecoder,
/// The chunk made of the body bytes that came with the response head, waiting for the head to
/// be sent (Exchange.sendPendingGzip); empty otherwise.
pending: []u8,
/// What the head gets (Content-Encoding, Vary, the weak ETag in `etag_buffer`).
change: compression.HeadChange,
etag_buffer: [compression.etag_bytes_max + 2]u8,
/// Body bytes in (decoded) and gzip bytes out, for the counters.
bytes_in: u64,
bytes_out: u64,
index: u32,

/// `<hex length>\r\n` before each chunk, 8 hex digits at most (a chunk is far smaller).
const chunk_head_bytes = 10;
/// `\r\n` after the data, then `0\r\n\r\n` after the last one.
const chunk_tail_bytes: u32 = 2 + last_chunk.len;
const last_chunk = "0\r\n\r\n";

pub const Error = Deflate.Error;

/// Output buffer bytes for windows of at most `input_bytes_max`: what deflate can make of one
/// window, and the chunk framing around it.
pub fn outBytes(input_bytes_max: u32) u32 {
    const sum = Deflate.outputBound(input_bytes_max) + chunk_head_bytes + chunk_tail_bytes;
    assert(sum > input_bytes_max);
    return sum;
}

pub const Level = Deflate.Level;

/// Starts a gzip stream at `level` (the gzip header goes out with the first chunk) for a body
/// that is chunked or not.
pub fn start(compressor: *Compressor, level: Level, chunked: bool) void {
    compressor.deflate.start(level);
    compressor.dechunk = if (chunked) .init(.{}) else null;
    compressor.bytes_in = 0;
    compressor.bytes_out = 0;
}

/// Compresses a window of the backend's body (framing and all: a chunked body is decoded here,
/// in place) and returns the chunk to send, in `out`: empty when there is nothing to send yet
/// (framing bytes only, or an empty window that is not the last). The returned bytes must be
/// sent before the next call, which reuses the buffer. `last`: the body ends with this window;
/// the gzip trailer and the last-chunk follow.
pub fn compress(compressor: *Compressor, window: []u8, last: bool) Error![]u8 {
    const data = compressor.decoded(window);
    compressor.bytes_in += data.len;
    if (data.len == 0 and !last) return compressor.out[0..0];
    const room = compressor.out[chunk_head_bytes .. compressor.out.len - chunk_tail_bytes];
    assert(Deflate.outputBound(@intCast(data.len)) <= room.len); // `outBytes` was sized for this window.
    const n = try compressor.deflate.compress(data, room, last);
    compressor.bytes_out += n;
    assert(n > 0); // A flush writes at least its empty block, `finish` the trailer.
    return compressor.frame(n, last);
}

/// The body bytes of `window`: itself, or for a chunked body its data moved to the front.
fn decoded(compressor: *Compressor, window: []u8) []u8 {
    const decoder = &(compressor.dechunk orelse return window);
    const result = decoder.decodeInPlace(window);
    // The exchange's own scan passed these bytes already (upstream_http1.frameBody), and it
    // dropped the trailer section: decoding cannot find a fault here.
    assert(result.reject == null);
    return window[0..result.data_len];
}

/// `n` bytes of deflate output at `out[chunk_head_bytes..]` as one chunk, with the last-chunk
/// after it when `last`.
fn frame(compressor: *Compressor, n: usize, last: bool) []u8 {
    const out = compressor.out;
    var digits: [8]u8 = undefined;
    const hex = std.fmt.bufPrint(&digits, "{x}", .{n}) catch unreachable; // n < 4 GiB.
    const start_at = chunk_head_bytes - hex.len - 2;
    @memcpy(out[start_at..][0..hex.len], hex);
    out[chunk_head_bytes - 2 ..][0..2].* = "\r\n".*;
    var end = chunk_head_bytes + n;
    out[end..][0..2].* = "\r\n".*;
    end += 2;
    if (last) {
        out[end..][0..last_chunk.len].* = last_chunk.*;
        end += last_chunk.len;
    }
    assert(end <= out.len);
    return out[start_at..end];
}

/// The worker's compressors: `count` slots, each with its output buffer, allocated untouched at
/// start-up.
pub const Slots = struct {
    compressors: []Compressor,
    outs: []u8,
    out_bytes: u32,
    free: FreeIndices,

    pub fn init(allocator: std.mem.Allocator, count: u32, input_bytes_max: u32) error{OutOfMemory}!Slots {
        const out_bytes = outBytes(input_bytes_max);
        const compressors = try StaticAllocator.allocUntouched(allocator, Compressor, null, count);
        errdefer allocator.free(compressors);
        const outs = try StaticAllocator.allocUntouched(allocator, u8, null, @as(usize, count) * out_bytes);
        errdefer allocator.free(outs);
        const free: FreeIndices = try .init(allocator, count);
        return .{ .compressors = compressors, .outs = outs, .out_bytes = out_bytes, .free = free };
    }

    pub fn deinit(slots: *Slots, allocator: std.mem.Allocator) void {
        slots.free.deinit(allocator);
        allocator.free(slots.outs);
        allocator.free(slots.compressors);
        slots.* = undefined;
    }

    /// A free compressor, not started; null when all are busy.
    pub fn acquire(slots: *Slots) ?*Compressor {
        const taken = slots.free.take() orelse return null;
        const compressor = &slots.compressors[taken.index];
        compressor.index = taken.index;
        compressor.out = slots.outs[@as(usize, taken.index) * slots.out_bytes ..][0..slots.out_bytes];
        compressor.change = .{};
        return compressor;
    }

    pub fn release(slots: *Slots, compressor: *Compressor) void {
        assert(&slots.compressors[compressor.index] == compressor);
        slots.free.give(compressor.index);
    }

    /// Bytes one slot takes (the file comment's sum).
    pub fn bytesPerSlot(slots: *const Slots) usize {
        return @sizeOf(Compressor) + slots.out_bytes;
    }
};

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

const testGunzip = Deflate.testGunzip;

/// Takes the chunked framing off `bytes` (the test's own client side).
fn testDechunk(bytes: []u8) []u8 {
    var decoder: http.ChunkedDecoder = .init(.{});
    const result = decoder.decodeInPlace(bytes);
    assert(result.reject == null);
    return bytes[0..result.data_len];
}

const TestRun = struct {
    slots: Slots,
    wire: std.ArrayList(u8) = .empty,

    fn deinit(run: *TestRun) void {
        run.wire.deinit(testing.allocator);
        run.slots.deinit(testing.allocator);
    }

    /// Compresses `body` in windows of `window_bytes` and checks it gunzips back.
    fn roundTrip(run: *TestRun, body: []const u8, window_bytes: usize, level: Level) !void {
        const compressor = run.slots.acquire().?;
        defer run.slots.release(compressor);
        compressor.start(level, false);
        var scratch: [64 * 1024]u8 = undefined;
        run.wire.clearRetainingCapacity();
        var at: usize = 0;
        while (true) {
            const n = @min(window_bytes, body.len - at);
            @memcpy(scratch[0..n], body[at..][0..n]);
            at += n;
            const last = at == body.len;
            const chunk = try compressor.compress(scratch[0..n], last);
            try run.wire.appendSlice(testing.allocator, chunk);
            if (last) break;
        }
        try testing.expectEqual(@as(u64, body.len), compressor.bytes_in);
        const gzipped = testDechunk(run.wire.items);
        try testing.expectEqual(@as(u64, gzipped.len), compressor.bytes_out);
        const plain = try testing.allocator.alloc(u8, body.len + 1);
        defer testing.allocator.free(plain);
        try testing.expectEqualSlices(u8, body, try testGunzip(gzipped, plain));
    }
};

test "Compressor: bodies of every kind round-trip through gunzip, in any window size" {
    var run: TestRun = .{ .slots = try .init(testing.allocator, 2, 20 * 1024) };
    defer run.deinit();
    var prng: std.Random.DefaultPrng = .init(testing.random_seed);
    const random = prng.random();
    const body = try testing.allocator.alloc(u8, 300 * 1024);
    defer testing.allocator.free(body);
    // Text-like: a few words repeated with noise.
    for (body, 0..) |*b, i| b.* = if (random.uintLessThan(u8, 8) == 0) random.int(u8) else "lorem ipsum dolor "[i % 18];
    for ([_]usize{ 1, 7, 1000, 16 * 1024, 20 * 1024 }) |window| {
        for ([_]Level{ 1, 6, 9 }) |level| try run.roundTrip(body[0 .. 4 * 1024 + window], window, level);
    }
    try run.roundTrip(body, 20 * 1024, 1);
    try run.roundTrip(body[0..0], 20 * 1024, 1); // An empty body is still a gzip stream.
}

test "Compressor: worst-case windows fit the output buffer (random bytes, costly matches)" {
    const input_max = 20 * 1024;
    var run: TestRun = .{ .slots = try .init(testing.allocator, 1, input_max) };
    defer run.deinit();
    var prng: std.Random.DefaultPrng = .init(testing.random_seed);
    const random = prng.random();
    const body = try testing.allocator.alloc(u8, 200 * 1024);
    defer testing.allocator.free(body);
    random.bytes(body);
    try run.roundTrip(body, input_max, 1);
    try run.roundTrip(body, input_max, 9);
    // Short matches at far distances: each 3-byte repeat of a random earlier spot.
    var i: usize = 32 * 1024;
    while (i + 4 <= body.len) : (i += 4) {
        const from = i - 30 * 1024 + random.uintLessThan(usize, 1024);
        @memcpy(body[i..][0..3], body[from..][0..3]);
    }
    try run.roundTrip(body, input_max, 9);
}

test "Compressor: a chunked body is decoded before it is compressed" {
    var run: TestRun = .{ .slots = try .init(testing.allocator, 1, 4096) };
    defer run.deinit();
    const compressor = run.slots.acquire().?;
    defer run.slots.release(compressor);
    compressor.start(1, true);
    var first = "5\r\nhello\r\n6\r\n worl".*;
    var second = "d\r\n0\r\n\r\n".*;
    try run.wire.appendSlice(testing.allocator, try compressor.compress(&first, false));
    try run.wire.appendSlice(testing.allocator, try compressor.compress(&second, true));
    var plain: [64]u8 = undefined;
    try testing.expectEqualStrings("hello world", try testGunzip(testDechunk(run.wire.items), &plain));
}

test "Compressor: slots run out and come back" {
    var slots: Slots = try .init(testing.allocator, 2, 4096);
    defer slots.deinit(testing.allocator);
    const a = slots.acquire().?;
    const b = slots.acquire().?;
    try testing.expect(slots.acquire() == null);
    try testing.expect(a != b);
    slots.release(a);
    try testing.expect(slots.acquire().? == a);
    slots.release(a);
    slots.release(b);
    // Pinned: growing a slot is a decision (the file comment states the sum).
    try testing.expect(@sizeOf(Compressor) < 300 * 1024);
    try testing.expect(slots.bytesPerSlot() < 300 * 1024 + outBytes(4096) + 1);
}

test "Compressor: a slot used again starts a fresh stream, whatever the last one left" {
    var run: TestRun = .{ .slots = try .init(testing.allocator, 1, 16 * 1024) };
    defer run.deinit();
    var body: [40 * 1024]u8 = undefined;
    var prng: std.Random.DefaultPrng = .init(testing.random_seed);
    for (&body, 0..) |*byte, i| byte.* = if (i % 7 == 0) prng.random().int(u8) else "sluice"[i % 6];
    // A stream abandoned half-way (a client gone), then whole ones at other levels in its slot.
    const compressor = run.slots.acquire().?;
    compressor.start(9, false);
    var copy = body;
    _ = try compressor.compress(copy[0 .. 16 * 1024], false);
    run.slots.release(compressor);
    try run.roundTrip(&body, 16 * 1024, 1);
    try run.roundTrip(body[0..5000], 16 * 1024, 6);
}
