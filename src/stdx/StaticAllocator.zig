//! Wraps the process allocator and counts every allocation made after start-up. The data plane
//! holds no allocator at all, so the count stays zero by construction; the counter is the
//! check that keeps it so (tests read it before and after thousands of requests, and it is
//! printed at exit). After `seal` an allocation still succeeds, because failing a control-plane
//! path in production would be worse than the leak of rigour, but it is counted and logged.
//! Learned from TigerBeetle's static_allocator.zig, which fails instead.
const std = @import("std");
const Alignment = std.mem.Alignment;

const StaticAllocator = @This();

backing: std.mem.Allocator,
sealed: std.atomic.Value(bool) = .init(false),
allocations_after_startup: std.atomic.Value(u64) = .init(0),

pub fn init(backing: std.mem.Allocator) StaticAllocator {
    return .{ .backing = backing };
}

pub fn allocator(self: *StaticAllocator) std.mem.Allocator {
    return .{ .ptr = self, .vtable = &.{
        .alloc = alloc,
        .resize = resize,
        .remap = remap,
        .free = free,
    } };
}

/// Start-up is over: from now on every allocation is counted.
pub fn seal(self: *StaticAllocator) void {
    self.sealed.store(true, .release);
}

pub fn allocationsAfterStartup(self: *const StaticAllocator) u64 {
    return self.allocations_after_startup.load(.acquire);
}

/// Like `allocator.alignedAlloc`, but the memory is not written: in safe builds
/// `Allocator.alloc` fills new memory with 0xAA, which would touch every page of the
/// connection slabs at start-up (180 MB resident and ~40 ms per worker with the defaults).
/// Fresh pages from the kernel read as zero and cost nothing until first used, which is what
/// lets idle RSS follow peak concurrency. Freed with the usual `allocator.free`.
pub fn allocUntouched(
    backing: std.mem.Allocator,
    comptime T: type,
    comptime alignment: ?Alignment,
    n: usize,
) error{OutOfMemory}![]align(if (alignment) |a| a.toByteUnits() else @alignOf(T)) T {
    const byte_count = std.math.mul(usize, @sizeOf(T), n) catch return error.OutOfMemory;
    const a = alignment orelse Alignment.of(T);
    const bytes = backing.rawAlloc(byte_count, a, @returnAddress()) orelse return error.OutOfMemory;
    const typed: [*]align(if (alignment) |al| al.toByteUnits() else @alignOf(T)) T = @ptrCast(@alignCast(bytes));
    return typed[0..n];
}

fn count(self: *StaticAllocator) void {
    if (!self.sealed.load(.acquire)) return;
    _ = self.allocations_after_startup.fetchAdd(1, .acq_rel);
}

fn alloc(context: *anyopaque, len: usize, alignment: Alignment, ret_addr: usize) ?[*]u8 {
    const self: *StaticAllocator = @ptrCast(@alignCast(context));
    self.count();
    return self.backing.rawAlloc(len, alignment, ret_addr);
}

fn resize(context: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) bool {
    const self: *StaticAllocator = @ptrCast(@alignCast(context));
    if (new_len > memory.len) self.count();
    return self.backing.rawResize(memory, alignment, new_len, ret_addr);
}

fn remap(context: *anyopaque, memory: []u8, alignment: Alignment, new_len: usize, ret_addr: usize) ?[*]u8 {
    const self: *StaticAllocator = @ptrCast(@alignCast(context));
    if (new_len > memory.len) self.count();
    return self.backing.rawRemap(memory, alignment, new_len, ret_addr);
}

fn free(context: *anyopaque, memory: []u8, alignment: Alignment, ret_addr: usize) void {
    const self: *StaticAllocator = @ptrCast(@alignCast(context));
    self.backing.rawFree(memory, alignment, ret_addr);
}

test "static allocator: counts only what is allocated after seal" {
    var static = StaticAllocator.init(std.testing.allocator);
    const a = static.allocator();
    const before = try a.alloc(u8, 16);
    defer a.free(before);
    try std.testing.expectEqual(@as(u64, 0), static.allocationsAfterStartup());
    static.seal();
    const after = try a.alloc(u8, 16);
    a.free(after);
    try std.testing.expectEqual(@as(u64, 1), static.allocationsAfterStartup());
}
