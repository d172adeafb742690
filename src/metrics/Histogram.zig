//! A latency histogram with fixed buckets, one per worker: `observe` is a short compare loop,
//! one increment and one add on memory only its worker writes, so the request path pays a few
//! integer operations and no shared cache line. The control thread sums the workers' copies
//! with `addRelaxed` when it renders `/metrics`.
//!
//! Decision: counts are stored per bucket (not cumulative) and read without synchronisation
//! beyond relaxed loads, as the stats line reads the other worker counters: each field is an
//! aligned word written by one thread, so a reader sees every field at most a moment old, and
//! `_sum` may lag `_count` by the requests that finished while it read. The Prometheus
//! invariant that matters (`le="+Inf"` equals `_count`) holds by construction: both come from
//! the same bucket counts.
const std = @import("std");
const assert = std.debug.assert;
const Counter = @import("../stdx/Counter.zig");

const Histogram = @This();

/// Upper bounds (inclusive, Prometheus `le`) in nanoseconds; a last bucket, +Inf, follows.
pub const bounds_ns = [_]u64{
    500 * std.time.ns_per_us,
    1 * std.time.ns_per_ms,
    2500 * std.time.ns_per_us,
    5 * std.time.ns_per_ms,
    10 * std.time.ns_per_ms,
    25 * std.time.ns_per_ms,
    50 * std.time.ns_per_ms,
    100 * std.time.ns_per_ms,
    250 * std.time.ns_per_ms,
    500 * std.time.ns_per_ms,
    1 * std.time.ns_per_s,
    2500 * std.time.ns_per_ms,
    5 * std.time.ns_per_s,
    10 * std.time.ns_per_s,
};

/// The same bounds as `le` label values, in seconds.
pub const bounds_text = [bounds_ns.len][]const u8{
    "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
    "0.1",    "0.25",  "0.5",    "1",     "2.5",  "5",     "10",
};

pub const buckets_count = bounds_ns.len + 1;

comptime {
    for (bounds_ns[1..], bounds_ns[0 .. bounds_ns.len - 1]) |bound, previous| {
        assert(bound > previous);
    }
}

/// Observations per bucket: `counts[i]` are those above bucket i-1's bound and at most
/// bucket i's; the last is everything above the largest bound.
counts: [buckets_count]Counter = @splat(.{}),
/// Wraps after 584 years of summed latency, which is fine.
sum_ns: Counter = .{},

pub fn observe(histogram: *Histogram, duration_ns: u64) void {
    // Most requests land in the first buckets, so a linear scan beats a binary search.
    var index: usize = 0;
    while (index < bounds_ns.len and duration_ns > bounds_ns[index]) index += 1;
    histogram.counts[index].add(1);
    histogram.sum_ns.add(duration_ns);
}

/// Adds `other` (another thread's histogram) into `histogram` with relaxed loads.
pub fn addRelaxed(histogram: *Histogram, other: *const Histogram) void {
    for (&histogram.counts, &other.counts) |*total, *source| total.add(source.load());
    histogram.sum_ns.add(other.sum_ns.load());
}

/// `Counter.transfer` for every bucket and the sum.
pub fn transfer(histogram: *Histogram, comptime how: Counter.Transfer, from: *const Histogram, accounted: *Histogram) void {
    for (&histogram.counts, &from.counts, &accounted.counts) |*to, *source, *done| to.transfer(how, source, done);
    histogram.sum_ns.transfer(how, &from.sum_ns, &accounted.sum_ns);
}

pub fn count(histogram: *const Histogram) u64 {
    var total: u64 = 0;
    for (&histogram.counts) |*n| total +%= n.load();
    return total;
}

test "histogram: each observation lands in the first bucket whose bound is not below it" {
    var histogram: Histogram = .{};
    histogram.observe(0);
    histogram.observe(bounds_ns[0]); // Inclusive: `le` means at most.
    histogram.observe(bounds_ns[0] + 1);
    histogram.observe(bounds_ns[bounds_ns.len - 1]);
    histogram.observe(bounds_ns[bounds_ns.len - 1] + 1);
    histogram.observe(std.math.maxInt(u64) / 2);
    try std.testing.expectEqual(@as(u64, 2), histogram.counts[0].load());
    try std.testing.expectEqual(@as(u64, 1), histogram.counts[1].load());
    try std.testing.expectEqual(@as(u64, 1), histogram.counts[bounds_ns.len - 1].load());
    try std.testing.expectEqual(@as(u64, 2), histogram.counts[bounds_ns.len].load());
    try std.testing.expectEqual(@as(u64, 6), histogram.count());

    var total: Histogram = .{};
    total.addRelaxed(&histogram);
    total.addRelaxed(&histogram);
    try std.testing.expectEqual(@as(u64, 12), total.count());
    try std.testing.expectEqual(histogram.sum_ns.load() *% 2, total.sum_ns.load());
}

test "histogram: the le texts are the bounds in seconds" {
    for (bounds_ns, bounds_text) |bound, text| {
        // Parse "0.0025" as nanoseconds without floats: whole part and up to 9 decimals.
        const dot = std.mem.findScalar(u8, text, '.');
        const whole = try std.fmt.parseInt(u64, if (dot) |d| text[0..d] else text, 10);
        var ns = whole * std.time.ns_per_s;
        if (dot) |d| {
            const fraction = text[d + 1 ..];
            try std.testing.expect(fraction.len <= 9);
            var scale: u64 = std.time.ns_per_s;
            for (fraction) |digit| {
                scale /= 10;
                ns += (digit - '0') * scale;
            }
        }
        try std.testing.expectEqual(bound, ns);
    }
}
