//! Sets of backends as `u64` bit masks (a pool has at most 64 backends): bit i is backend i.
//! Balancers, health and sessions all speak this one representation.
const std = @import("std");
const assert = std.debug.assert;

pub const bits = 64;

pub fn bit(index: u16) u64 {
    assert(index < bits);
    return @as(u64, 1) << @intCast(index);
}

/// The set of the first `count` backends.
pub fn first(count: u32) u64 {
    assert(count >= 1 and count <= bits);
    const shift: u6 = @intCast(bits - count);
    return @as(u64, std.math.maxInt(u64)) >> shift;
}

test "mask: bits and prefixes" {
    try std.testing.expectEqual(@as(u64, 1), bit(0));
    try std.testing.expectEqual(@as(u64, 1) << 63, bit(63));
    try std.testing.expectEqual(@as(u64, 0b111), first(3));
    try std.testing.expectEqual(~@as(u64, 0), first(64));
}
