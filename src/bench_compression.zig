//! `zig build bench` (compression part): what gzip costs a response, with the compressor the
//! exchange uses (`proxy/Compressor.zig`): a 1 MiB body fed in 36 KiB windows (the default
//! exchange buffer), each compressed and flushed as one chunk, at levels 1, 5 and 9, for text
//! (HTML-like words and markup) and for incompressible bytes. Prints MiB per second of input,
//! CPU nanoseconds per KiB, and the output's size as a share of the input, the median of 5 runs;
//! then what the flush per window costs in size (the same text compressed in one window).
//!
//! A micro-benchmark on a warm cache: the compressor's own cost, what a compressed response
//! adds to a proxied one, not a substitute for bench/compression.sh (end to end, beside nginx).
const std = @import("std");

const sys = @import("stdx/sys.zig");
const Compressor = @import("proxy/Compressor.zig");

const runs = 5;
const body_bytes = 1 << 20;
const window_bytes = 36 * 1024;

pub fn main() !void {
    var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const text = try arena.alloc(u8, body_bytes);
    fillText(text);
    const noise = try arena.alloc(u8, body_bytes);
    var prng: std.Random.DefaultPrng = .init(11);
    prng.random().bytes(noise);
    var slots: Compressor.Slots = try .init(arena, 1, window_bytes);
    const window = try arena.alloc(u8, window_bytes);

    std.debug.print("gzip, 1 MiB in {d} KiB windows, median of {d} runs\n", .{ window_bytes / 1024, runs });
    std.debug.print("{s:<8} {s:>5} {s:>10} {s:>10} {s:>8}\n", .{ "body", "level", "MiB/s", "ns/KiB", "out %" });
    for ([_]struct { []const u8, []const u8 }{ .{ "text", text }, .{ "random", noise } }) |body| {
        for ([_]Compressor.Level{ 1, 5, 9 }) |level| {
            var ns: [runs]u64 = undefined;
            var out_bytes: u64 = 0;
            for (&ns) |*sample| {
                const start = sys.clockMonotonicNs();
                out_bytes = try compressOnce(&slots, window, body[1], level);
                sample.* = sys.clockMonotonicNs() - start;
            }
            std.mem.sort(u64, &ns, {}, std.sort.asc(u64));
            const median = ns[runs / 2];
            const mib_per_s = @as(f64, body_bytes) / (1024.0 * 1024.0) / (@as(f64, @floatFromInt(median)) / 1e9);
            const ns_per_kib = median / (body_bytes / 1024);
            const share = 100.0 * @as(f64, @floatFromInt(out_bytes)) / @as(f64, body_bytes);
            std.debug.print("{s:<8} {d:>5} {d:>10.1} {d:>10} {d:>7.1}%\n", .{ body[0], level, mib_per_s, ns_per_kib, share });
        }
    }
    // What flushing every window costs in size: the same text in one window, no flush.
    var whole_slots: Compressor.Slots = try .init(arena, 1, body_bytes);
    const whole = try arena.alloc(u8, body_bytes);
    for ([_]Compressor.Level{ 1, 5 }) |level| {
        const windowed = try compressOnce(&slots, window, text, level);
        const one = try compressOnce(&whole_slots, whole, text, level);
        std.debug.print("text, level {d}: {d} bytes in {d} KiB windows, {d} in one ({d:.2}% more)\n", .{
            level,                                                                            windowed, window_bytes / 1024, one,
            100.0 * (@as(f64, @floatFromInt(windowed)) / @as(f64, @floatFromInt(one)) - 1.0),
        });
    }
}

/// The whole body through one compressor, window by window; the gzip bytes out.
fn compressOnce(slots: *Compressor.Slots, window: []u8, body: []const u8, level: Compressor.Level) !u64 {
    const compressor = slots.acquire().?;
    defer slots.release(compressor);
    compressor.start(level, false);
    var at: usize = 0;
    while (at < body.len) {
        const n = @min(window.len, body.len - at);
        @memcpy(window[0..n], body[at..][0..n]);
        at += n;
        _ = try compressor.compress(window[0..n], at == body.len);
    }
    return compressor.bytes_out;
}

/// HTML-like text: tags, words and numbers drawn from small sets, as a page or JSON would be.
fn fillText(out: []u8) void {
    const pieces = [_][]const u8{
        "<div class=\"item\">", "</div>\n", "<a href=\"/products/", "\">",     "</a>",     "price ",
        "sluice ",              "gzip ",    "window ",              "stream ", "backend ", "{\"id\": ",
        ", \"name\": \"",       "\"}, ",
    };
    var prng: std.Random.DefaultPrng = .init(5);
    const random = prng.random();
    var at: usize = 0;
    while (at < out.len) {
        var piece_buffer: [24]u8 = undefined;
        const piece = if (random.uintLessThan(u8, 4) == 0)
            std.fmt.bufPrint(&piece_buffer, "{d}", .{random.uintLessThan(u32, 100_000)}) catch unreachable
        else
            pieces[random.uintLessThan(usize, pieces.len)];
        const n = @min(piece.len, out.len - at);
        @memcpy(out[at..][0..n], piece[0..n]);
        at += n;
    }
}
