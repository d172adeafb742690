//! Round robin over a pool's backends, one cursor per worker (workers share nothing, so the
//! global order is only approximately round robin; each worker's own is exact).
//! The seam for the other strategies (issue 3): a strategy answers "which backend next,
//! given the ones already tried for this request"; `proxy/` decides how to reach it.
const std = @import("std");
const assert = std.debug.assert;

const RoundRobin = @This();

cursor: u32 = 0,

/// The next backend not in `tried` (a bit per backend index), or null when all were tried.
pub fn pick(rr: *RoundRobin, backends_count: u32, tried: u64) ?u32 {
    assert(backends_count > 0 and backends_count <= 64);
    var attempts: u32 = 0;
    while (attempts < backends_count) : (attempts += 1) {
        const index = rr.cursor % backends_count;
        rr.cursor +%= 1;
        if (tried & (@as(u64, 1) << @intCast(index)) == 0) return index;
    }
    return null;
}

test "round robin: every backend in turn, skipping the ones tried" {
    var rr: RoundRobin = .{};
    var counts: [3]u32 = @splat(0);
    for (0..300) |_| counts[rr.pick(3, 0).?] += 1;
    try std.testing.expectEqualSlices(u32, &.{ 100, 100, 100 }, &counts);
    try std.testing.expect(rr.pick(3, 0b010) != 1);
    try std.testing.expectEqual(@as(?u32, null), rr.pick(2, 0b11));
    try std.testing.expectEqual(@as(?u32, 0), rr.pick(1, 0));
}
