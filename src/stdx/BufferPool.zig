//! Fixed-size I/O buffers carved from one slab allocated at start-up. `acquire` returns the
//! most recently released buffer (LIFO), so a lightly loaded worker keeps touching the same
//! few pages and idle RSS stays small even when the pool is sized for the connection limit.
//! An empty pool is an operating condition the caller handles (shed load), never a heap grow.
//!
//! A burst of connections touches many buffers once; when they go idle the buffers come back
//! but their pages stay resident. `trim`, run from a timer off the request path, gives the
//! pages of cold free buffers back to the kernel (MADV_DONTNEED: the next use faults in a zero
//! page), keeping the most recently released ones warm.
const std = @import("std");
const StaticAllocator = @import("StaticAllocator.zig");
const FreeIndices = @import("FreeIndices.zig");
const assert = std.debug.assert;

const BufferPool = @This();

slab: []align(4096) u8,
buffer_bytes: u32,
/// The free buffers: never-used ones lowest first, released ones most recent first.
free: FreeIndices,
/// Debug aid and double-release guard: which buffers are out.
in_use: std.DynamicBitSetUnmanaged,
/// Buffers used since their pages were last given back (`trim`).
dirty: std.DynamicBitSetUnmanaged,

pub fn init(allocator: std.mem.Allocator, buffers_count: u32, buffer_bytes: u32) !BufferPool {
    assert(buffers_count > 0);
    assert(buffer_bytes > 0 and buffer_bytes % 64 == 0);
    const slab = try StaticAllocator.allocUntouched(
        allocator,
        u8,
        .fromByteUnits(4096),
        @as(usize, buffers_count) * buffer_bytes,
    );
    errdefer allocator.free(slab);
    var free: FreeIndices = try .init(allocator, buffers_count);
    errdefer free.deinit(allocator);
    var in_use = try std.DynamicBitSetUnmanaged.initEmpty(allocator, buffers_count);
    errdefer in_use.deinit(allocator);
    var dirty = try std.DynamicBitSetUnmanaged.initEmpty(allocator, buffers_count);
    errdefer dirty.deinit(allocator);
    return .{
        .slab = slab,
        .buffer_bytes = buffer_bytes,
        .free = free,
        .in_use = in_use,
        .dirty = dirty,
    };
}

pub fn deinit(pool: *BufferPool, allocator: std.mem.Allocator) void {
    allocator.free(pool.slab);
    pool.free.deinit(allocator);
    pool.in_use.deinit(allocator);
    pool.dirty.deinit(allocator);
    pool.* = undefined;
}

pub fn acquire(pool: *BufferPool) ?[]u8 {
    const index = (pool.free.take() orelse return null).index;
    assert(!pool.in_use.isSet(index));
    pool.in_use.set(index);
    return pool.slab[@as(usize, index) * pool.buffer_bytes ..][0..pool.buffer_bytes];
}

pub fn release(pool: *BufferPool, buffer: []u8) void {
    assert(buffer.len == pool.buffer_bytes);
    const offset = @intFromPtr(buffer.ptr) - @intFromPtr(pool.slab.ptr);
    assert(offset % pool.buffer_bytes == 0);
    const index: u32 = @intCast(offset / pool.buffer_bytes);
    assert(pool.in_use.isSet(index)); // Released twice?
    pool.in_use.unset(index);
    pool.dirty.set(index);
    pool.free.give(index);
}

/// Gives back the pages of free buffers used since the last trim, except the `keep_hot` most
/// recently released (the top of the LIFO stack, the next to be handed out). Returns how many
/// buffers were trimmed. One madvise per trimmed buffer; nothing when the pool is quiet.
pub fn trim(pool: *BufferPool, keep_hot: u32) u32 {
    assert(pool.buffer_bytes % std.heap.page_size_min == 0);
    const released = pool.free.releasedSlice(); // Never-used buffers have no pages to give.
    const cold_count = released.len -| keep_hot;
    var trimmed: u32 = 0;
    for (released[0..cold_count]) |index| {
        if (!pool.dirty.isSet(index)) continue;
        const buffer = pool.slab[@as(usize, index) * pool.buffer_bytes ..][0..pool.buffer_bytes];
        // Advice only: if it fails, the pages merely stay resident.
        _ = std.os.linux.madvise(@alignCast(buffer.ptr), buffer.len, std.os.linux.MADV.DONTNEED);
        pool.dirty.unset(index);
        trimmed += 1;
    }
    return trimmed;
}

/// May be called from any thread (a snapshot for stats).
pub fn availableCount(pool: *const BufferPool) u32 {
    return pool.free.available();
}

pub fn totalCount(pool: *const BufferPool) u32 {
    return pool.free.capacity();
}

test "buffer pool: model check against a set of held buffers" {
    const allocator = std.testing.allocator;
    var pool = try BufferPool.init(allocator, 8, 64);
    defer pool.deinit(allocator);
    var held: [8][]u8 = undefined;
    var held_count: usize = 0;
    var prng = std.Random.DefaultPrng.init(0x5111ce);
    const random = prng.random();
    for (0..10_000) |_| {
        if (random.boolean()) {
            if (pool.acquire()) |buffer| {
                for (held[0..held_count]) |other| try std.testing.expect(other.ptr != buffer.ptr);
                held[held_count] = buffer;
                held_count += 1;
            } else try std.testing.expectEqual(@as(usize, 8), held_count);
        } else if (held_count > 0) {
            const i = random.uintLessThan(usize, held_count);
            pool.release(held[i]);
            held[i] = held[held_count - 1];
            held_count -= 1;
        }
        try std.testing.expectEqual(8 - held_count, pool.availableCount());
    }
}

test "buffer pool: trim gives back cold dirty buffers, keeps the hot ones, reads back zero" {
    const allocator = std.testing.allocator;
    var pool = try BufferPool.init(allocator, 4, 4096);
    defer pool.deinit(allocator);
    var held: [4][]u8 = undefined;
    for (&held) |*buffer| {
        buffer.* = pool.acquire().?;
        @memset(buffer.*, 0xab);
    }
    for (held) |buffer| pool.release(buffer);
    try std.testing.expectEqual(@as(u32, 3), pool.trim(1));
    try std.testing.expectEqual(@as(u32, 0), pool.trim(1)); // Nothing used since.
    // The hot one keeps its bytes; a trimmed one reads back zero.
    try std.testing.expectEqual(@as(u8, 0xab), held[3][0]);
    try std.testing.expectEqual(@as(u8, 0), held[0][0]);
}

test "buffer pool: LIFO hands back the buffer just released" {
    const allocator = std.testing.allocator;
    var pool = try BufferPool.init(allocator, 4, 64);
    defer pool.deinit(allocator);
    const a = pool.acquire().?;
    const b = pool.acquire().?;
    pool.release(b);
    try std.testing.expectEqual(b.ptr, pool.acquire().?.ptr);
    try std.testing.expectEqual(pool.slab.ptr, a.ptr);
}
