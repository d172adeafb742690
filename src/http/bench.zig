//! Micro-benchmark of the request head parser: `zig build bench`, or
//! `zig run -OReleaseFast src/http/bench.zig`.
//!
//! Parses one browser-like request head (ten fields, about 460 bytes) in one piece, again and
//! again for about a second, and prints the time per head and the throughput. The head is fed
//! whole because that is the common case (one read holds the head); the split cost is the same
//! loop entered more often, checked by the fuzz program for correctness, not speed here.

const std = @import("std");
const assert = std.debug.assert;

const http = @import("http.zig");

const request_head =
    "GET /assets/app.js?v=1712345678 HTTP/1.1\r\n" ++
    "Host: www.example.com\r\n" ++
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0\r\n" ++
    "Accept: */*\r\n" ++
    "Accept-Language: en-GB,en;q=0.7,fr;q=0.3\r\n" ++
    "Accept-Encoding: gzip, deflate, br, zstd\r\n" ++
    "Referer: https://www.example.com/products/widgets?page=2\r\n" ++
    "Connection: keep-alive\r\n" ++
    "Cookie: session=3f7a9c2e4b1d8f6a0e5c; theme=dark; consent=1; _ga=GA1.2.1234567890\r\n" ++
    "Sec-Fetch-Dest: script\r\n" ++
    "Sec-Fetch-Mode: no-cors\r\n" ++
    "\r\n";

const limits: http.Limits = .{
    .header_bytes_max = 16 * 1024,
    .headers_count_max = 64,
    .target_bytes_max = 8 * 1024,
};

const duration_target_ns = std.time.ns_per_s;
/// Heads parsed between two clock reads, so reading the clock costs nothing measurable.
const batch_count = 4096;

pub fn main(init: std.process.Init) !void {
    var headers_buffer: [limits.headers_count_max]http.Header = undefined;
    var parser = http.RequestParser.init(&headers_buffer, limits);
    // Warm caches and branch predictors, and check the head parses at all: in ReleaseFast an
    // assert would not.
    for (0..batch_count) |_| {
        if (parseOnce(&parser) != .complete) std.process.fatal("bench: head did not parse", .{});
    }

    const start = std.Io.Clock.awake.now(init.io);
    var elapsed_ns: u64 = 0;
    var count: u64 = 0;
    while (elapsed_ns < duration_target_ns) {
        for (0..batch_count) |_| _ = parseOnce(&parser);
        count += batch_count;
        const now = std.Io.Clock.awake.now(init.io);
        elapsed_ns = @intCast(start.durationTo(now).nanoseconds);
    }
    assert(count > 0);
    const ns_per_op = @as(f64, @floatFromInt(elapsed_ns)) / @as(f64, @floatFromInt(count));
    const bytes_total: f64 = @floatFromInt(count * request_head.len);
    const mb_per_s = bytes_total / (@as(f64, @floatFromInt(elapsed_ns)) / std.time.ns_per_s) / 1e6;

    var line: [128]u8 = undefined;
    const text = try std.fmt.bufPrint(
        &line,
        "parse_request_head: {d:.1} ns/op, {d:.0} MB/s ({d} bytes, {d} fields)\n",
        .{ ns_per_op, mb_per_s, request_head.len, parser.head.headers.len },
    );
    try std.Io.File.stdout().writeStreamingAll(init.io, text);
}

fn parseOnce(parser: *http.RequestParser) http.RequestParser.Result {
    parser.reset();
    // Launder the input so the optimiser cannot hoist the parse out of the loop.
    var input: []const u8 = request_head;
    std.mem.doNotOptimizeAway(&input);
    const result = parser.feed(input);
    std.mem.doNotOptimizeAway(&parser.head);
    return result;
}

test "bench: the benchmark head is a valid head with ten fields" {
    var headers_buffer: [limits.headers_count_max]http.Header = undefined;
    var parser = http.RequestParser.init(&headers_buffer, limits);
    try std.testing.expectEqual(
        http.RequestParser.Result{ .complete = request_head.len },
        parser.feed(request_head),
    );
    try std.testing.expectEqual(@as(usize, 10), parser.head.headers.len);
}
