//! The memory of one run: a fixed region, given once, bump-allocated from both ends and reset
//! (never freed) when the run is over. There is no garbage collector: a request handler's
//! objects all die together, so the arena is the collector.
//!
//! String bytes grow up from the bottom and everything else (objects, headers, arrays) grows
//! down from the top. Keeping string bytes apart is what makes `s += x` in a loop linear: when
//! `s`'s bytes are the last ones written, the concatenation appends in place.
//!
//! Running out is an operating condition (the script allocated too much), reported as
//! `error.OutOfMemory` for the interpreter to turn into a catchable RangeError. A reserve at
//! the top stays closed until then, so that the error object itself can still be built.
const std = @import("std");
const assert = std.debug.assert;

const Heap = @This();

region: []align(16) u8,
/// Next free byte for string data (grows up).
low: usize,
/// One past the last free byte for objects (grows down).
high: usize,
/// The bottom bytes below which `high` may not go while the reserve is closed.
reserve_bytes: usize,
reserve_open: bool,
/// The highest use seen since init, for reports.
used_max: usize = 0,

pub const Error = error{OutOfMemory};

pub const reserve_bytes_default = 16 * 1024;

/// `n` items of `T` from `gpa`, untouched. `Allocator.alloc` and `free` fill the memory with
/// 0xaa in safe builds, which writes every page of a region that a run mostly never uses: for
/// `sluice js run`'s 512 MiB heap that was 130,000 page faults and a quarter of a second per
/// run, and a worker's engine would pay the same at start-up. Pages the kernel maps stay
/// unwritten (and unbacked) until the engine writes them. Free with `freeUntouched`.
pub fn allocUntouched(gpa: std.mem.Allocator, comptime T: type, n: usize) error{OutOfMemory}![]align(@max(16, @alignOf(T))) T {
    const alignment = comptime std.mem.Alignment.fromByteUnits(@max(16, @alignOf(T)));
    const bytes = std.math.mul(usize, n, @sizeOf(T)) catch return error.OutOfMemory;
    if (bytes == 0) return &.{};
    const ptr = gpa.rawAlloc(bytes, alignment, @returnAddress()) orelse return error.OutOfMemory;
    const items: [*]align(@max(16, @alignOf(T))) T = @ptrCast(@alignCast(ptr));
    return items[0..n];
}

/// Gives back what `allocUntouched` returned, without writing to it first.
pub fn freeUntouched(gpa: std.mem.Allocator, comptime T: type, items: []T) void {
    if (items.len == 0) return;
    const alignment = comptime std.mem.Alignment.fromByteUnits(@max(16, @alignOf(T)));
    gpa.rawFree(std.mem.sliceAsBytes(items), alignment, @returnAddress());
}

pub fn init(region: []align(16) u8) Heap {
    assert(region.len >= 2 * reserve_bytes_default);
    return .{
        .region = region,
        .low = 0,
        .high = region.len,
        .reserve_bytes = reserve_bytes_default,
        .reserve_open = false,
    };
}

/// Forgets everything allocated since init (or since `mark`), in O(1).
pub fn reset(heap: *Heap) void {
    heap.noteUse();
    heap.low = 0;
    heap.high = heap.region.len;
    heap.reserve_open = false;
}

pub const Mark = struct { low: usize, high: usize };

/// A point to come back to: a module's state stays below it while each request's objects are
/// forgotten above it.
pub fn mark(heap: *const Heap) Mark {
    return .{ .low = heap.low, .high = heap.high };
}

pub fn resetTo(heap: *Heap, m: Mark) void {
    assert(m.low <= heap.low and m.high >= heap.high);
    heap.noteUse();
    heap.low = m.low;
    heap.high = m.high;
    heap.reserve_open = false;
}

/// Lets the next allocations use the reserve, for raising the out-of-memory error itself.
pub fn openReserve(heap: *Heap) void {
    heap.reserve_open = true;
}

pub fn usedBytes(heap: *const Heap) usize {
    return heap.low + (heap.region.len - heap.high);
}

fn noteUse(heap: *Heap) void {
    heap.used_max = @max(heap.used_max, heap.usedBytes());
}

fn floor(heap: *const Heap) usize {
    return heap.low + (if (heap.reserve_open) 0 else heap.reserve_bytes);
}

/// Room for `n` values of T from the top end.
pub fn alloc(heap: *Heap, comptime T: type, n: usize) Error![]T {
    const bytes = std.math.mul(usize, @sizeOf(T), n) catch return error.OutOfMemory;
    const ptr = try heap.allocTop(bytes, @alignOf(T));
    const items: [*]T = @ptrCast(@alignCast(ptr));
    return items[0..n];
}

pub fn create(heap: *Heap, comptime T: type) Error!*T {
    const ptr = try heap.allocTop(@sizeOf(T), @alignOf(T));
    return @ptrCast(@alignCast(ptr));
}

fn allocTop(heap: *Heap, bytes: usize, alignment: usize) Error![*]u8 {
    assert(std.math.isPowerOfTwo(alignment) and alignment <= 16);
    if (bytes > heap.high) return error.OutOfMemory;
    const start = (heap.high - bytes) & ~(alignment - 1);
    if (start < heap.floor()) return error.OutOfMemory;
    heap.high = start;
    return heap.region.ptr + start;
}

/// Room for string data from the bottom end; `alignment` is 1 or 2.
pub fn allocBytes(heap: *Heap, bytes: usize, alignment: usize) Error![]u8 {
    assert(alignment == 1 or alignment == 2);
    const start = std.mem.alignForward(usize, heap.low, alignment);
    const end = std.math.add(usize, start, bytes) catch return error.OutOfMemory;
    const ceiling = heap.high -| (if (heap.reserve_open) 0 else heap.reserve_bytes);
    if (end > ceiling) return error.OutOfMemory;
    heap.low = end;
    return heap.region[start..end];
}

/// Grows the bottom allocation ending at `end` by `extra` bytes in place, if it is the last
/// one and there is room. Returns the new bytes.
pub fn extendBytes(heap: *Heap, end: [*]const u8, extra: usize) ?[]u8 {
    if (@intFromPtr(end) != @intFromPtr(heap.region.ptr) + heap.low) return null;
    const start = heap.low;
    const new_end = std.math.add(usize, start, extra) catch return null;
    const ceiling = heap.high -| (if (heap.reserve_open) 0 else heap.reserve_bytes);
    if (new_end > ceiling) return null;
    heap.low = new_end;
    return heap.region[start..new_end];
}

/// Whether `ptr` points into this heap's region (used to tell module state from a request's).
pub fn contains(heap: *const Heap, ptr: *const anyopaque) bool {
    const address = @intFromPtr(ptr);
    const base = @intFromPtr(heap.region.ptr);
    return address >= base and address < base + heap.region.len;
}

test "heap: both ends meet, and the reserve opens only when asked" {
    const testing = std.testing;
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    const a = try heap.alloc(u64, 4);
    try testing.expectEqual(@as(usize, 4), a.len);
    const s = try heap.allocBytes(5, 1);
    try testing.expectEqual(@as(usize, 5), s.len);
    const more = heap.extendBytes(s.ptr + s.len, 3).?;
    try testing.expectEqual(@as(usize, 3), more.len);
    try testing.expectEqual(s.ptr + 5, more.ptr);
    try testing.expect(heap.extendBytes(s.ptr + 2, 1) == null);
    // Fill until the closed reserve stops us.
    while (true) _ = heap.alloc(u8, 1000) catch break;
    try testing.expect(heap.usedBytes() <= region.len - heap.reserve_bytes);
    heap.openReserve();
    _ = try heap.alloc(u8, 1000);
    heap.reset();
    try testing.expectEqual(@as(usize, 0), heap.usedBytes());
}

test "heap: a huge request fails without overflow" {
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    try std.testing.expectError(error.OutOfMemory, heap.alloc(u64, std.math.maxInt(usize) / 4));
    try std.testing.expectError(error.OutOfMemory, heap.allocBytes(std.math.maxInt(usize) - 1, 2));
}
