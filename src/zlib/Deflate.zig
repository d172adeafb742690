//! One gzip stream on zlib's deflate: the one module that calls zlib (a guest: Zig types at the
//! border, its memory ours, its return codes our errors here).
//!
//! Decision: zlib allocates through the stream's `zalloc`, which carves its five blocks (the
//! state, the window, the two hash chains, the pending buffer) from `memory`, a fixed region
//! inside this struct, and `zfree` does nothing: `start` begins a new stream by resetting the
//! region and calling `deflateInit2` again, so a stream never reaches the heap and never needs
//! `deflateEnd`. The window (32 KiB, `window_bits`) and the hash (`mem_level` 8) are zlib's
//! defaults, what nginx uses for a response of unknown or large length; the region is sized
//! for exactly those (`memory_bytes`), and a level or size that did not fit would be our
//! mistake, asserted.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("zlib");

const Deflate = @This();

stream: c.z_stream,
/// zlib's memory for this stream; `memory_used` bytes of it are handed out.
memory: [memory_bytes]u8 align(alignment),
memory_used: u32,

/// 2^15: a 32 KiB window, deflate's largest.
const window_bits = 15;
/// zlib's default: a hash of 2^(8+7) heads and a buffer of 2^(8+6) symbols per block.
const mem_level = 8;
/// 16 added to the window's bits asks zlib for the gzip container (header and CRC-32 trailer).
const gzip_wrapper = 16;
/// What malloc would promise; zlib's blocks hold shorts and pointers.
const alignment = 16;

/// zlib's `deflateInit2` for these parameters: the state (about 5.9 KB on 64-bit; 8 KiB allowed),
/// the window (two of its size), `prev` (one `Pos`, two bytes, per window byte), `head` (one
/// `Pos` per hash head) and the pending buffer (four bytes per symbol of a block: the symbols
/// and the output being built), each rounded up to the alignment.
pub const memory_bytes = 8 * 1024 + // the state,
    2 * (1 << window_bits) + // the window,
    2 * (1 << window_bits) + // prev,
    2 * (1 << (mem_level + 7)) + // head,
    4 * (1 << (mem_level + 6)) + // the pending buffer,
    5 * alignment; // what rounding each of the five up can add.

comptime {
    assert(memory_bytes == 270_416);
}

pub const Level = u4;

pub const Error = error{
    /// The output buffer was full before the input was consumed and flushed (the caller sized
    /// it from `outputBound`: a bug, contained).
    OutputFull,
};

/// Begins a gzip stream at `level` (1 fastest to 9 smallest); whatever this struct held before
/// is forgotten.
pub fn start(deflate: *Deflate, level: Level) void {
    assert(level >= 1 and level <= 9);
    deflate.memory_used = 0;
    deflate.stream = std.mem.zeroes(c.z_stream);
    deflate.stream.zalloc = zalloc;
    deflate.stream.zfree = zfree;
    deflate.stream.@"opaque" = deflate;
    const rc = c.deflateInit2_(&deflate.stream, level, c.Z_DEFLATED, window_bits + gzip_wrapper, mem_level, c.Z_DEFAULT_STRATEGY, c.ZLIB_VERSION, @sizeOf(c.z_stream));
    // The only failures are bad parameters, a version mismatch and a memory error: each our
    // own mistake (the region is sized for these parameters).
    assert(rc == c.Z_OK);
    assert(deflate.memory_used <= memory_bytes);
}

/// Compresses all of `input` into `output` and flushes: with `last`, the stream ends (the rest
/// of deflate's output and the gzip trailer); otherwise a sync flush ends what was written on a
/// byte boundary, so the bytes can be sent and decoded now. Returns the bytes written.
pub fn compress(deflate: *Deflate, input: []const u8, output: []u8, last: bool) Error!usize {
    assert(deflate.stream.state != null); // Started.
    assert(input.len > 0 or last); // zlib refuses a second flush with nothing new.
    const stream = &deflate.stream;
    stream.next_in = @constCast(input.ptr); // zlib's `z_const` is off: it only reads input.
    stream.avail_in = @intCast(input.len);
    stream.next_out = output.ptr;
    stream.avail_out = @intCast(output.len);
    const rc = c.deflate(stream, if (last) c.Z_FINISH else c.Z_SYNC_FLUSH);
    const written = output.len - stream.avail_out;
    switch (rc) {
        // Done only when everything went in and out: a full buffer may hold back the rest.
        c.Z_OK => if (last or stream.avail_in != 0 or stream.avail_out == 0) return error.OutputFull,
        c.Z_STREAM_END => assert(last),
        // No room for any progress.
        c.Z_BUF_ERROR => return error.OutputFull,
        else => unreachable, // Z_STREAM_ERROR: a corrupt state, our mistake.
    }
    assert(stream.avail_in == 0);
    return written;
}

/// The most bytes deflate writes for `input_bytes` of input in one `compress` call (zlib's
/// `deflateBound` for these parameters, with room for the sync flush and the gzip container):
/// a block is stored when compressing would grow it, and a stored block costs 5 bytes per
/// 64 KiB and per flush (far under `input_bytes / 1024`).
pub fn outputBound(input_bytes: u32) u32 {
    return input_bytes + // the bytes themselves, stored,
        input_bytes / 1024 + // each stored block's header,
        10 + 8 + // the gzip header and trailer,
        6 + 6 + // the last block and the sync flush's empty stored block,
        32; // the bits a block may leave before the flush aligns them, and a margin.
}

fn zalloc(context: ?*anyopaque, items: c_uint, size: c_uint) callconv(.c) ?*anyopaque {
    const deflate: *Deflate = @ptrCast(@alignCast(context.?));
    const bytes = std.mem.alignForward(usize, @as(usize, items) * size, alignment);
    if (deflate.memory_used + bytes > memory_bytes) return null;
    const block = &deflate.memory[deflate.memory_used];
    deflate.memory_used += @intCast(bytes);
    return block;
}

/// The region is reset as a whole by the next `start`.
fn zfree(context: ?*anyopaque, block: ?*anyopaque) callconv(.c) void {
    _ = context;
    _ = block;
}

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

/// Tests' gunzip: std's inflate, a decoder independent of zlib.
pub fn testGunzip(gzipped: []const u8, out: []u8) ![]u8 {
    var reader: std.Io.Reader = .fixed(gzipped);
    var window: [std.compress.flate.max_window_len]u8 = undefined;
    var decompress: std.compress.flate.Decompress = .init(&reader, .gzip, &window);
    var writer: std.Io.Writer = .fixed(out);
    _ = try decompress.reader.streamRemaining(&writer);
    return writer.buffered();
}

test "Deflate: every level fits its region, and a stream restarts in it" {
    const deflate = try testing.allocator.create(Deflate);
    defer testing.allocator.destroy(deflate);
    var out: [256]u8 = undefined;
    var plain: [64]u8 = undefined;
    for (1..10) |level| {
        deflate.start(@intCast(level));
        // The five blocks deflateInit2 takes, and nothing else.
        try testing.expect(deflate.memory_used > memory_bytes - 8 * 1024);
        const n = try deflate.compress("hello, hello, hello", &out, true);
        try testing.expectEqualStrings("hello, hello, hello", try testGunzip(out[0..n], &plain));
    }
}

test "Deflate: a full output buffer is an error, never an overrun" {
    const deflate = try testing.allocator.create(Deflate);
    defer testing.allocator.destroy(deflate);
    var noise: [4096]u8 = undefined;
    var prng: std.Random.DefaultPrng = .init(testing.random_seed);
    prng.random().bytes(&noise);
    var out: [outputBound(noise.len) + 8]u8 = @splat(0xAA);
    deflate.start(1);
    try testing.expectError(error.OutputFull, deflate.compress(&noise, out[0..1000], false));
    deflate.start(1);
    try testing.expectError(error.OutputFull, deflate.compress(&noise, out[0..4000], true));
    // With the bound's room, random bytes fit, flushed and finished.
    deflate.start(9);
    const n = try deflate.compress(&noise, out[0..outputBound(noise.len)], true);
    try testing.expect(n <= outputBound(noise.len));
    try testing.expect(std.mem.allEqual(u8, out[outputBound(noise.len)..], 0xAA));
    var plain: [noise.len]u8 = undefined;
    try testing.expectEqualSlices(u8, &noise, try testGunzip(out[0..n], &plain));
}
