//! Request ids, one worker's: 32 lower-case hex digits (128 bits) per request, from a
//! xoshiro256** generator seeded at start-up with the wall clock, the monotonic clock and the
//! worker's index. Ids need to be unique, not secret: a log is searched by them, nothing is
//! authorised by them, so a fast generator without system calls is the right tool (nginx's
//! `$request_id` is 16 random bytes in hex as well).
const std = @import("std");
const assert = std.debug.assert;

const RequestIds = @This();

prng: std.Random.DefaultPrng,

pub const bytes = 32;

pub fn init(seed: u64) RequestIds {
    return .{ .prng = .init(seed) };
}

/// A seed that differs between workers and between starts.
pub fn seedFor(worker_index: u32, realtime_ms: i64, monotonic_ns: u64) u64 {
    const wall: u64 = @bitCast(realtime_ms);
    return std.hash.Wyhash.hash(worker_index, std.mem.asBytes(&[2]u64{ wall, monotonic_ns }));
}

/// The next id, written into `out`.
pub fn next(ids: *RequestIds, out: *[bytes]u8) []const u8 {
    const digits = "0123456789abcdef";
    const halves = [2]u64{ ids.prng.next(), ids.prng.next() };
    for (halves, 0..) |half, h| {
        for (0..16) |i| out[h * 16 + i] = digits[@intCast((half >> @intCast(60 - 4 * i)) & 0xf)];
    }
    assert(out.len == bytes);
    return out;
}

test "request ids: hex, 32 digits, distinct between calls and between seeds" {
    var a: RequestIds = .init(seedFor(0, 1, 2));
    var b: RequestIds = .init(seedFor(1, 1, 2));
    var x: [bytes]u8 = undefined;
    var y: [bytes]u8 = undefined;
    var z: [bytes]u8 = undefined;
    _ = a.next(&x);
    _ = a.next(&y);
    _ = b.next(&z);
    try std.testing.expect(!std.mem.eql(u8, &x, &y));
    try std.testing.expect(!std.mem.eql(u8, &x, &z));
    for (x) |c| try std.testing.expect(std.ascii.isHex(c) and !std.ascii.isUpper(c));
}
