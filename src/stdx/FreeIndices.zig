//! The free indices of a fixed set of slots `0..capacity`, handed out without writing anything
//! at start-up. Indices never used yet come from a counter, lowest first (`fresh`); released
//! ones go on a stack and are handed out again before any fresh one, most recent first, so a
//! lightly loaded worker keeps reusing the same few hot slots and pages.
//!
//! Why not a stack filled with every index at start: that writes 4 bytes per slot before the
//! first request (with the default limits, ~40 KiB and ~10 page faults per worker, each
//! ~1 µs of cold start on this VM). Here the stack's memory is untouched until a slot is
//! released, and a caller that initializes a slot on first use knows which ones are first uses
//! (`Taken.fresh`).
const std = @import("std");
const assert = std.debug.assert;
const StaticAllocator = @import("StaticAllocator.zig");

const FreeIndices = @This();

/// Released indices; `released[0..released_count]` are free, the top is the most recent.
released: []u32,
released_count: u32 = 0,
/// Indices `fresh..released.len` have never been handed out.
fresh: u32 = 0,

pub const Taken = struct {
    index: u32,
    /// First use of this index since `init`: its slot holds nothing yet.
    fresh: bool,
};

/// `count` slots, all free. The memory is not written (`StaticAllocator.allocUntouched`).
pub fn init(allocator: std.mem.Allocator, count: u32) error{OutOfMemory}!FreeIndices {
    return .{ .released = try StaticAllocator.allocUntouched(allocator, u32, null, count) };
}

pub fn deinit(free: *FreeIndices, allocator: std.mem.Allocator) void {
    allocator.free(free.released);
    free.* = undefined;
}

pub fn capacity(free: *const FreeIndices) u32 {
    return @intCast(free.released.len);
}

/// May be called from another thread for stats: both counters are stored atomically, and each
/// operation changes only one of them by one.
pub fn available(free: *const FreeIndices) u32 {
    const released_count = @atomicLoad(u32, &free.released_count, .monotonic);
    const fresh = @atomicLoad(u32, &free.fresh, .monotonic);
    return released_count + (free.capacity() - fresh);
}

/// Indices handed out at least once: the slots below it have been initialized by their users.
pub fn touched(free: *const FreeIndices) u32 {
    return free.fresh;
}

pub fn take(free: *FreeIndices) ?Taken {
    if (free.released_count > 0) {
        const count = free.released_count - 1;
        @atomicStore(u32, &free.released_count, count, .monotonic);
        return .{ .index = free.released[count], .fresh = false };
    }
    if (free.fresh == free.capacity()) return null;
    const index = free.fresh;
    @atomicStore(u32, &free.fresh, index + 1, .monotonic);
    return .{ .index = index, .fresh = true };
}

/// `index` must have been taken and not given back since (the callers check that with their
/// slots' states; a double release would hand one slot out twice).
pub fn give(free: *FreeIndices, index: u32) void {
    assert(index < free.fresh);
    assert(free.released_count < free.fresh);
    free.released[free.released_count] = index;
    @atomicStore(u32, &free.released_count, free.released_count + 1, .monotonic);
}

/// The released indices, least recently released first (the order `take` reaches them last).
pub fn releasedSlice(free: *const FreeIndices) []const u32 {
    return free.released[0..free.released_count];
}

test "fresh indices lowest first, then released ones most recent first" {
    var free: FreeIndices = try .init(std.testing.allocator, 4);
    defer free.deinit(std.testing.allocator);
    try std.testing.expectEqual(@as(u32, 4), free.available());
    try std.testing.expectEqual(Taken{ .index = 0, .fresh = true }, free.take().?);
    try std.testing.expectEqual(Taken{ .index = 1, .fresh = true }, free.take().?);
    try std.testing.expectEqual(Taken{ .index = 2, .fresh = true }, free.take().?);
    free.give(0);
    free.give(2);
    try std.testing.expectEqual(@as(u32, 3), free.available());
    try std.testing.expectEqual(@as(u32, 3), free.touched());
    try std.testing.expectEqualSlices(u32, &.{ 0, 2 }, free.releasedSlice());
    try std.testing.expectEqual(Taken{ .index = 2, .fresh = false }, free.take().?);
    try std.testing.expectEqual(Taken{ .index = 0, .fresh = false }, free.take().?);
    try std.testing.expectEqual(Taken{ .index = 3, .fresh = true }, free.take().?);
    try std.testing.expectEqual(@as(?Taken, null), free.take());
    try std.testing.expectEqual(@as(u32, 0), free.available());
    free.give(1);
    try std.testing.expectEqual(Taken{ .index = 1, .fresh = false }, free.take().?);
}
