//! AWS-LC's allocator, routed to sluice's: every `OPENSSL_malloc`, `realloc` and `free` in the
//! process comes here (`CRYPTO_set_mem_functions`, installed by `tls.init` before AWS-LC
//! allocates anything), and so do the record buffers, which AWS-LC allocates with malloc()
//! (tools/aws_lc.zig compiles that file with src/tls/aws_lc_malloc.h, which renames them).
//!
//! Decision: a thread that has entered a `Pool` (a worker) allocates from it, and nothing else;
//! any other thread (the control thread at start-up and reload) allocates from the general
//! heap, counted. A pool is bounded per size class: each class has a fixed number of blocks,
//! carved from one region reserved at start-up and left untouched until used, so resident
//! memory follows use. An empty class lends from the next larger ones; when they are empty too
//! the allocation fails (AWS-LC then fails that handshake or connection with a malloc
//! failure, which sluice reports as `error.OutOfMemory`): an exhausted pool sheds load, it
//! never grows the heap. Every block carries a 16-byte header naming its pool and class, so
//! `free` needs no lookup and a block freed on another thread (an `SSL_CTX` whose last
//! reference a worker drops, a connection freed at exit) goes back to its own pool through a
//! lock-free stack that the owner drains.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("aws_lc");
const Counter = @import("../stdx/Counter.zig");

/// Payload bytes of each size class: spaced about 20% apart, with a class just above each
/// size AWS-LC asks for often in a handshake (`zig build tls-bench -- --sizes` counts them:
/// 224, 248, 264, 456, 524, 532, 616, 684, 692, 808, 1,648 bytes) and one for a full record's
/// buffer (16,768: 16 KiB of plaintext sealed, or the largest record received). A class is
/// cheap (its blocks are untouched address space until used); rounding up is not (it is
/// resident for as long as the block lives).
pub const class_payload_bytes = [_]u32{
    16,    32,    48,    64,    80,    96,   112,  128,
    160,   192,   224,   256,   272,   320,  384,  464,
    512,   544,   640,   704,   768,   816,  960,  1280,
    1664,  2048,  2560,  3328,  4096,  5120, 6144, 8192,
    12288, 16384, 16768, 32768, 65536,
};
pub const class_count = class_payload_bytes.len;
pub const header_bytes = @sizeOf(Header);
/// The largest allocation a pool can serve.
pub const payload_bytes_max = class_payload_bytes[class_count - 1];
/// malloc's promise (max_align_t), which AWS-LC relies on.
const alignment: std.mem.Alignment = .@"16";

comptime {
    assert(header_bytes == 16);
    for (class_payload_bytes, 0..) |bytes, index| {
        assert(bytes % alignment.toByteUnits() == 0);
        if (index > 0) assert(bytes > class_payload_bytes[index - 1]);
    }
}

/// In front of every block AWS-LC gets. `word` is the class index (pool blocks, with
/// `in_use_flag` while handed out) or the block's whole length (heap blocks, `pool` null).
const Header = extern struct {
    pool: ?*Pool,
    word: u64,

    const in_use_flag: u64 = 1 << 63;
};

/// A free block's payload: the link of its class's free list, or of the remote-free stack.
const FreeBlock = struct {
    next: ?*FreeBlock,
};

/// The pool of the thread that runs AWS-LC now; null allocates from the general heap.
threadlocal var current: ?*Pool = null;

/// The general heap: libc's malloc unless `install` says otherwise; must be thread-safe
/// (a worker may free the last reference to something the control thread made).
var heap: std.mem.Allocator = std.heap.c_allocator;
var heap_allocations: std.atomic.Value(u64) = .init(0);
var heap_bytes: std.atomic.Value(u64) = .init(0);

/// Makes `heap` the allocator of threads without a pool, and this file AWS-LC's allocator.
/// Called once by `tls.init`, before anything else in AWS-LC; returns false if the hooks were
/// set already (then it is too late to route its memory).
pub fn install(general: std.mem.Allocator) bool {
    heap = general;
    return c.CRYPTO_set_mem_functions(mallocHook, reallocHook, freeHook) == 1;
}

/// Allocations from the general heap since start: threads without a pool, and nothing else.
pub fn heapAllocations() u64 {
    return heap_allocations.load(.monotonic);
}

/// Bytes the general heap holds for AWS-LC now.
pub fn heapBytes() u64 {
    return heap_bytes.load(.monotonic);
}

/// The pool of the calling thread, if it has entered one.
pub fn currentPool() ?*Pool {
    return current;
}

/// One worker's memory for AWS-LC: bounded blocks per size class.
pub const Pool = struct {
    region: []align(std.heap.page_size_min) u8,
    classes: [class_count]Class,
    /// Blocks other threads freed, waiting for the owner to file them (`collect`).
    remote: std.atomic.Value(?*FreeBlock) = .init(null),
    /// Allocations served; those that found their class and every larger one empty (or were
    /// larger than the largest class); bytes handed out now, headers and rounding included,
    /// and the most there were at once since `resetHighWater`.
    allocations: Counter = .{},
    failures: Counter = .{},
    bytes_in_use: Counter = .{},
    bytes_high_water: Counter = .{},

    const Class = struct {
        /// The first block of the class in `region`.
        base: [*]u8,
        block_bytes: u32,
        capacity: u32,
        /// Blocks never handed out: `base[fresh * block_bytes..]` onwards.
        fresh: u32 = 0,
        free: ?*FreeBlock = null,
        in_use: Counter = .{},
        high_water: Counter = .{},
        allocations: Counter = .{},
    };

    /// How many blocks of each class. A block costs address space until first used, and
    /// then its pages stay with the pool.
    pub const Options = struct {
        blocks: [class_count]u32,

        /// The same number of blocks in every class.
        pub fn uniform(count: u32) Options {
            return .{ .blocks = @splat(count) };
        }

        pub fn regionBytes(options: Options) u64 {
            var total: u64 = 0;
            for (options.blocks, class_payload_bytes) |count, payload| {
                total += @as(u64, count) * (payload + header_bytes);
            }
            return total;
        }
    };

    /// Reserves the region (untouched: fresh pages cost nothing until written). On the
    /// control thread at start-up; `pool` must not move afterwards (blocks point back at it).
    pub fn init(pool: *Pool, backing: std.mem.Allocator, options: Options) error{OutOfMemory}!void {
        const region_bytes = options.regionBytes();
        assert(region_bytes > 0);
        const bytes = backing.rawAlloc(@intCast(region_bytes), .fromByteUnits(std.heap.page_size_min), @returnAddress()) orelse
            return error.OutOfMemory;
        pool.* = .{ .region = @alignCast(bytes[0..@intCast(region_bytes)]), .classes = undefined };
        var offset: usize = 0;
        for (&pool.classes, options.blocks, class_payload_bytes) |*class, count, payload| {
            const block_bytes: u32 = payload + header_bytes;
            class.* = .{ .base = bytes + offset, .block_bytes = block_bytes, .capacity = count };
            offset += @as(usize, count) * block_bytes;
        }
        assert(offset == region_bytes);
    }

    /// Every block must have come back (a pool outlives everything AWS-LC made from it).
    pub fn deinit(pool: *Pool, backing: std.mem.Allocator) void {
        pool.collect();
        assert(pool.bytes_in_use.load() == 0);
        if (current == pool) current = null;
        backing.rawFree(pool.region, .fromByteUnits(std.heap.page_size_min), @returnAddress());
        pool.* = undefined;
    }

    /// From now on AWS-LC calls on this thread allocate from `pool`.
    pub fn enter(pool: *Pool) void {
        current = pool;
    }

    /// This thread allocates from the general heap again.
    pub fn leave(pool: *Pool) void {
        assert(current == pool);
        current = null;
    }

    /// Files the blocks other threads freed back into their classes. The owner only.
    pub fn collect(pool: *Pool) void {
        var list = pool.remote.swap(null, .acquire);
        while (list) |block| {
            list = block.next;
            pool.release(headerOf(block));
        }
    }

    pub fn bytesInUse(pool: *const Pool) u64 {
        return pool.bytes_in_use.load();
    }

    /// The most bytes handed out at once since the last reset: a handshake's peak, measured by
    /// resetting before it.
    pub fn bytesHighWater(pool: *const Pool) u64 {
        return pool.bytes_high_water.load();
    }

    /// The owner only.
    pub fn resetHighWater(pool: *Pool) void {
        pool.bytes_high_water.set(pool.bytes_in_use.load());
    }

    /// Blocks of the class of `payload` handed out now.
    pub fn classInUse(pool: *const Pool, class: usize) u64 {
        return pool.classes[class].in_use.load();
    }

    pub fn classHighWater(pool: *const Pool, class: usize) u64 {
        return pool.classes[class].high_water.load();
    }

    pub fn classAllocations(pool: *const Pool, class: usize) u64 {
        return pool.classes[class].allocations.load();
    }

    fn allocate(pool: *Pool, len: usize) ?[*]u8 {
        assert(len > 0);
        const first = classOf(len) orelse {
            pool.failures.add(1);
            return null;
        };
        var class_index = first;
        while (class_index < class_count) : (class_index += 1) {
            if (pool.take(class_index)) |payload| return payload;
        }
        // Blocks freed on other threads may be waiting; file them and try once more.
        pool.collect();
        class_index = first;
        while (class_index < class_count) : (class_index += 1) {
            if (pool.take(class_index)) |payload| return payload;
        }
        pool.failures.add(1);
        return null;
    }

    fn take(pool: *Pool, class_index: usize) ?[*]u8 {
        const class = &pool.classes[class_index];
        const header: *Header = if (class.free) |block| blk: {
            class.free = block.next;
            break :blk headerOf(block);
        } else if (class.fresh < class.capacity) blk: {
            const block = class.base + @as(usize, class.fresh) * class.block_bytes;
            class.fresh += 1;
            break :blk @ptrCast(@alignCast(block));
        } else return null;
        header.* = .{ .pool = pool, .word = class_index | Header.in_use_flag };
        class.in_use.add(1);
        if (class.in_use.load() > class.high_water.load()) class.high_water.set(class.in_use.load());
        class.allocations.add(1);
        pool.allocations.add(1);
        pool.bytes_in_use.add(class.block_bytes);
        if (pool.bytes_in_use.load() > pool.bytes_high_water.load()) {
            pool.bytes_high_water.set(pool.bytes_in_use.load());
        }
        return payloadOf(header);
    }

    /// A block of this pool comes back, on the owner's thread.
    fn release(pool: *Pool, header: *Header) void {
        assert(header.pool == pool);
        assert(header.word & Header.in_use_flag != 0); // a double free
        const class_index: usize = @intCast(header.word & ~Header.in_use_flag);
        const class = &pool.classes[class_index];
        assert(@intFromPtr(header) >= @intFromPtr(class.base));
        assert(@intFromPtr(header) < @intFromPtr(class.base) + @as(usize, class.fresh) * class.block_bytes);
        header.word = class_index;
        const block: *FreeBlock = @ptrCast(@alignCast(payloadOf(header)));
        block.next = class.free;
        class.free = block;
        class.in_use.sub(1);
        pool.bytes_in_use.sub(class.block_bytes);
    }

    /// A block of this pool freed on another thread: pushed for the owner to file.
    fn releaseRemote(pool: *Pool, header: *Header) void {
        assert(header.word & Header.in_use_flag != 0);
        const block: *FreeBlock = @ptrCast(@alignCast(payloadOf(header)));
        var head = pool.remote.load(.monotonic);
        while (true) {
            block.next = head;
            head = pool.remote.cmpxchgWeak(head, block, .release, .monotonic) orelse return;
        }
    }
};

/// The smallest class whose blocks hold `len` bytes.
fn classOf(len: usize) ?usize {
    if (len > payload_bytes_max) return null;
    // 37 classes in three cache lines: a linear scan beats anything cleverer at this size.
    for (class_payload_bytes, 0..) |bytes, index| {
        if (len <= bytes) return index;
    }
    unreachable;
}

fn headerOf(payload: anytype) *Header {
    const address = @intFromPtr(payload) - header_bytes;
    return @ptrFromInt(address);
}

fn payloadOf(header: *Header) [*]u8 {
    return @as([*]u8, @ptrCast(header)) + header_bytes;
}

/// The payload bytes a block holds, for realloc.
fn payloadBytes(header: *const Header) usize {
    if (header.pool == null) return @intCast(header.word - header_bytes);
    return class_payload_bytes[@intCast(header.word & ~Header.in_use_flag)];
}

fn allocate(len: usize) ?[*]u8 {
    // malloc(0) may return a block, and AWS-LC takes NULL for a failure: the smallest block.
    if (current) |pool| return pool.allocate(@max(len, 1));
    const total = std.math.add(usize, len, header_bytes) catch return null;
    const bytes = heap.rawAlloc(total, alignment, @returnAddress()) orelse return null;
    const header: *Header = @ptrCast(@alignCast(bytes));
    header.* = .{ .pool = null, .word = total };
    _ = heap_allocations.fetchAdd(1, .monotonic);
    _ = heap_bytes.fetchAdd(total, .monotonic);
    return payloadOf(header);
}

fn free(payload: [*]u8) void {
    const header = headerOf(payload);
    if (header.pool) |pool| {
        if (current == pool) pool.release(header) else pool.releaseRemote(header);
        return;
    }
    const total: usize = @intCast(header.word);
    _ = heap_bytes.fetchSub(total, .monotonic);
    const bytes: [*]u8 = @ptrCast(header);
    heap.rawFree(bytes[0..total], alignment, @returnAddress());
}

fn mallocHook(len: usize, file: [*c]const u8, line: c_int) callconv(.c) ?*anyopaque {
    _ = file;
    _ = line;
    return allocate(len);
}

fn reallocHook(old: ?*anyopaque, len: usize, file: [*c]const u8, line: c_int) callconv(.c) ?*anyopaque {
    _ = file;
    _ = line;
    const payload: [*]u8 = @ptrCast(old orelse return allocate(len));
    const header = headerOf(payload);
    const old_len = payloadBytes(header);
    // A pool block that already holds `len` stays where it is.
    if (header.pool != null and len <= old_len) return payload;
    const new = allocate(len) orelse return null;
    @memcpy(new[0..@min(old_len, len)], payload[0..@min(old_len, len)]);
    free(payload);
    return new;
}

fn freeHook(payload: ?*anyopaque, file: [*c]const u8, line: c_int) callconv(.c) void {
    _ = file;
    _ = line;
    free(@ptrCast(payload orelse return));
}

// --- Tests: the allocator alone, through the same hooks AWS-LC calls -----------------------

const testing = std.testing;

fn testPool(blocks: u32) !*Pool {
    const pool = try testing.allocator.create(Pool);
    errdefer testing.allocator.destroy(pool);
    try pool.init(testing.allocator, .uniform(blocks));
    return pool;
}

fn destroyTestPool(pool: *Pool) void {
    pool.deinit(testing.allocator);
    testing.allocator.destroy(pool);
}

test "memory: a block comes from the smallest class that holds it, aligned, and goes back" {
    const pool = try testPool(4);
    defer destroyTestPool(pool);
    pool.enter();
    defer pool.leave();
    const a = mallocHook(100, "t", 0) orelse return error.TestUnexpectedNull;
    try testing.expectEqual(@as(usize, 0), @intFromPtr(a) % 16);
    const class = classOf(100).?;
    try testing.expectEqual(@as(u32, 112), class_payload_bytes[class]);
    try testing.expectEqual(@as(u64, 1), pool.classInUse(class));
    try testing.expectEqual(@as(u64, 112 + header_bytes), pool.bytesInUse());
    freeHook(a, "t", 0);
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
    try testing.expectEqual(@as(u64, 112 + header_bytes), pool.bytesHighWater());
    pool.resetHighWater();
    try testing.expectEqual(@as(u64, 0), pool.bytesHighWater());
    // LIFO: the block just freed is the next one handed out.
    try testing.expectEqual(a, mallocHook(112, "t", 0).?);
    freeHook(a, "t", 0);
    // malloc(0) gives the smallest block, which AWS-LC frees like any other.
    const empty = mallocHook(0, "t", 0) orelse return error.TestUnexpectedNull;
    try testing.expectEqual(@as(u64, 1), pool.classInUse(0));
    freeHook(empty, "t", 0);
}

test "memory: an empty class lends from larger ones, then the pool says no and counts it" {
    const pool = try testPool(1);
    defer destroyTestPool(pool);
    pool.enter();
    defer pool.leave();
    var blocks: [class_count]*anyopaque = undefined;
    // Every class has one block: as many allocations of 16 bytes take all of them, smallest first.
    for (&blocks, 0..) |*block, index| {
        block.* = mallocHook(16, "t", 0) orelse return error.TestUnexpectedNull;
        try testing.expectEqual(@as(u64, 1), pool.classInUse(index));
    }
    try testing.expectEqual(@as(?*anyopaque, null), mallocHook(16, "t", 0));
    try testing.expectEqual(@as(?*anyopaque, null), mallocHook(payload_bytes_max + 1, "t", 0));
    try testing.expectEqual(@as(u64, 2), pool.failures.load());
    for (blocks) |block| freeHook(block, "t", 0);
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
}

test "memory: realloc keeps a block that still fits, moves one that does not, with its bytes" {
    const pool = try testPool(2);
    defer destroyTestPool(pool);
    pool.enter();
    defer pool.leave();
    const a: [*]u8 = @ptrCast(reallocHook(null, 20, "t", 0) orelse return error.TestUnexpectedNull);
    @memcpy(a[0..5], "hello");
    try testing.expectEqual(@as(?*anyopaque, a), reallocHook(a, 32, "t", 0));
    const b: [*]u8 = @ptrCast(reallocHook(a, 1000, "t", 0) orelse return error.TestUnexpectedNull);
    try testing.expect(b != a);
    try testing.expectEqualStrings("hello", b[0..5]);
    try testing.expectEqual(@as(u64, 1), pool.classInUse(classOf(1000).?));
    // Shrinking to nothing keeps the block (it still fits); freeing it empties the pool.
    try testing.expectEqual(@as(?*anyopaque, b), reallocHook(b, 0, "t", 0));
    freeHook(b, "t", 0);
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
}

test "memory: without a pool, blocks come from the general heap and are counted" {
    const before = heapAllocations();
    const a: [*]u8 = @ptrCast(mallocHook(300, "t", 0) orelse return error.TestUnexpectedNull);
    @memset(a[0..300], 0xab);
    const b: [*]u8 = @ptrCast(reallocHook(a, 5000, "t", 0) orelse return error.TestUnexpectedNull);
    try testing.expectEqual(@as(u8, 0xab), b[299]);
    try testing.expectEqual(before + 2, heapAllocations());
    freeHook(b, "t", 0);
    freeHook(null, "t", 0);
}

test "memory: a block freed on another thread returns to its own pool" {
    const pool = try testPool(2);
    defer destroyTestPool(pool);
    pool.enter();
    const a = mallocHook(64, "t", 0) orelse return error.TestUnexpectedNull;
    pool.leave();
    const thread = try std.Thread.spawn(.{}, struct {
        fn run(block: *anyopaque) void {
            freeHook(block, "t", 0); // this thread has no pool: a remote free
        }
    }.run, .{a});
    thread.join();
    try testing.expectEqual(@as(u64, 64 + header_bytes), pool.bytesInUse());
    pool.enter();
    defer pool.leave();
    pool.collect();
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
}

test "memory: random allocations against a model: every live block is intact, counts add up" {
    const pool = try testPool(64);
    defer destroyTestPool(pool);
    pool.enter();
    defer pool.leave();
    const seed: u64 = 0x5eed_71f5;
    var prng: std.Random.DefaultPrng = .init(seed);
    const random = prng.random();
    const Live = struct { block: [*]u8, len: usize, fill: u8 };
    var live: [256]Live = undefined;
    var live_count: usize = 0;
    for (0..20_000) |step| {
        const grow = live_count == 0 or (live_count < live.len and random.boolean());
        if (grow) {
            const len = random.intRangeAtMost(usize, 1, 40_000);
            const block: [*]u8 = @ptrCast(mallocHook(len, "t", 0) orelse continue);
            const fill: u8 = @truncate(step);
            @memset(block[0..len], fill);
            live[live_count] = .{ .block = block, .len = len, .fill = fill };
            live_count += 1;
        } else {
            const index = random.uintLessThan(usize, live_count);
            const item = live[index];
            for (item.block[0..item.len]) |byte| try testing.expectEqual(item.fill, byte);
            freeHook(item.block, "t", 0);
            live[index] = live[live_count - 1];
            live_count -= 1;
        }
    }
    var expected: u64 = 0;
    for (live[0..live_count]) |item| {
        const header = headerOf(item.block);
        try testing.expect(header.word & Header.in_use_flag != 0);
        expected += class_payload_bytes[@intCast(header.word & ~Header.in_use_flag)] + header_bytes;
    }
    try testing.expectEqual(expected, pool.bytesInUse());
    for (live[0..live_count]) |item| freeHook(item.block, "t", 0);
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
}
