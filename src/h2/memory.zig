//! nghttp2's allocator, routed to sluice's: a session gets an `nghttp2_mem` whose user data is
//! one worker's `Pool`, so everything the session allocates (itself, its streams, HPACK tables,
//! frame buffers, queued frames, received header fields) comes from that pool.
//!
//! Decision: a pool of its own rather than src/tls/memory.zig's, with the same shape (bounded
//! blocks per size class, carved from one region reserved at start-up and left untouched until
//! used, a 16-byte header per block naming its class) but simpler: nghttp2 is handed its pool
//! explicitly through `nghttp2_mem`, not found through a thread-local, and a session lives and
//! dies on its worker's thread, so there is no remote free. An empty class lends from the next
//! larger ones; when they are empty too the allocation fails, nghttp2 reports
//! `NGHTTP2_ERR_NOMEM`, and the session fails cleanly (`error.OutOfMemory`): an exhausted pool
//! sheds load, it never grows the heap.
//!
//! The only calls nghttp2 makes to the C heap (its default allocator, used where no
//! `nghttp2_mem` is passed, and the callbacks table, which `Setup` makes once at start-up)
//! come to the `sluice_h2_heap_*` functions below, compiled in through src/h2/nghttp2_malloc.h:
//! they count (`heapAllocations`), so a test proves a session never reaches the heap.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("nghttp2");
const Counter = @import("../stdx/Counter.zig");

/// Payload bytes of each size class. nghttp2's requests in an exchange (the tests print them
/// with `classAllocations`): the session (about 2.6 KB), streams and queued frames (100-300
/// bytes), HPACK table entries and header fields (their length plus about 40 bytes), the
/// inflater's and deflater's rings (powers of two), the map of streams (powers of two) and the
/// outbound frame buffer (16,384 bytes of payload plus a frame header and padding room: the
/// 16,416-byte class).
pub const class_payload_bytes = [_]u32{
    32,    64,    96,    128,   192,    256,  384,  512,
    768,   1024,  1536,  2048,  3072,   4096, 6144, 8192,
    12288, 16416, 32768, 65536, 131072,
};
pub const class_count = class_payload_bytes.len;
pub const header_bytes = @sizeOf(Header);
/// The largest allocation a pool can serve (nghttp2's largest field is 64 KiB plus its rcbuf).
pub const payload_bytes_max = class_payload_bytes[class_count - 1];
/// malloc's promise (max_align_t), which nghttp2 relies on.
const alignment: std.mem.Alignment = .@"16";

comptime {
    assert(header_bytes == 16);
    for (class_payload_bytes, 0..) |bytes, index| {
        assert(bytes % alignment.toByteUnits() == 0);
        if (index > 0) assert(bytes > class_payload_bytes[index - 1]);
    }
}

/// In front of every block nghttp2 gets.
const Header = extern struct {
    pool: *Pool,
    /// The class index, with `in_use_flag` while handed out.
    word: u64,

    const in_use_flag: u64 = 1 << 63;
};

const FreeBlock = struct {
    next: ?*FreeBlock,
};

var heap_allocations: std.atomic.Value(u64) = .init(0);

/// nghttp2's calls to the C heap since start: its callbacks tables (one per `Setup`) and
/// anything that reached its default allocator (nothing, while every session has a pool).
pub fn heapAllocations() u64 {
    return heap_allocations.load(.monotonic);
}

/// One worker's memory for nghttp2: bounded blocks per size class. One thread only.
pub const Pool = struct {
    region: []align(std.heap.page_size_min) u8,
    classes: [class_count]Class,
    /// Allocations served; those that found their class and every larger one empty (or were
    /// larger than the largest class); bytes handed out now, headers and rounding included,
    /// and the most there were at once.
    allocations: Counter = .{},
    failures: Counter = .{},
    bytes_in_use: Counter = .{},
    bytes_high_water: Counter = .{},

    const Class = struct {
        base: [*]u8,
        block_bytes: u32,
        capacity: u32,
        /// Blocks never handed out: `base[fresh * block_bytes..]` onwards.
        fresh: u32 = 0,
        free: ?*FreeBlock = null,
        in_use: u32 = 0,
        allocations: Counter = .{},
    };

    /// How many blocks of each class.
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

    /// Reserves the region (untouched: fresh pages cost nothing until written). At start-up;
    /// `pool` must not move afterwards (blocks and sessions point at it).
    pub fn init(pool: *Pool, backing: std.mem.Allocator, options: Options) error{OutOfMemory}!void {
        const region_bytes = options.regionBytes();
        assert(region_bytes > 0);
        const bytes = backing.rawAlloc(@intCast(region_bytes), .fromByteUnits(std.heap.page_size_min), @returnAddress()) orelse
            return error.OutOfMemory;
        pool.* = .{ .region = @alignCast(bytes[0..@intCast(region_bytes)]), .classes = undefined };
        var offset: usize = 0;
        for (&pool.classes, options.blocks, class_payload_bytes) |*class, count, payload| {
            class.* = .{ .base = bytes + offset, .block_bytes = payload + header_bytes, .capacity = count };
            offset += @as(usize, count) * class.block_bytes;
        }
        assert(offset == region_bytes);
    }

    /// Every block must have come back (a pool outlives every session made from it).
    pub fn deinit(pool: *Pool, backing: std.mem.Allocator) void {
        assert(pool.bytes_in_use.load() == 0);
        backing.rawFree(pool.region, .fromByteUnits(std.heap.page_size_min), @returnAddress());
        pool.* = undefined;
    }

    /// The allocator to hand nghttp2 for a session on this pool's thread.
    pub fn mem(pool: *Pool) c.nghttp2_mem {
        return .{
            .mem_user_data = pool,
            .malloc = mallocHook,
            .free = freeHook,
            .calloc = callocHook,
            .realloc = reallocHook,
        };
    }

    /// A block for sluice's own per-session state (a header block being received), from the
    /// same bounded classes; null when the pool is exhausted.
    pub fn allocBytes(pool: *Pool, len: usize) ?[*]u8 {
        return pool.allocate(len);
    }

    pub fn freeBytes(pool: *Pool, payload: [*]u8) void {
        pool.release(headerOf(payload));
    }

    pub fn bytesInUse(pool: *const Pool) u64 {
        return pool.bytes_in_use.load();
    }

    pub fn bytesHighWater(pool: *const Pool) u64 {
        return pool.bytes_high_water.load();
    }

    pub fn resetHighWater(pool: *Pool) void {
        pool.bytes_high_water.set(pool.bytes_in_use.load());
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
        for (first..class_count) |class_index| {
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
        class.in_use += 1;
        class.allocations.add(1);
        pool.allocations.add(1);
        pool.bytes_in_use.add(class.block_bytes);
        if (pool.bytes_in_use.load() > pool.bytes_high_water.load()) {
            pool.bytes_high_water.set(pool.bytes_in_use.load());
        }
        return payloadOf(header);
    }

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
        class.in_use -= 1;
        pool.bytes_in_use.sub(class.block_bytes);
    }
};

/// The smallest class whose blocks hold `len` bytes: looked up by 32-byte step up to 8 KiB
/// (every allocation nghttp2 makes runs this; a walk of the classes cost about 100
/// instructions per request), the few larger classes walked.
fn classOf(len: usize) ?usize {
    assert(len > 0);
    if (len <= step_table_bytes) return class_by_step[(len - 1) / step_bytes];
    if (len > payload_bytes_max) return null;
    for (class_payload_bytes[step_table_classes..], step_table_classes..) |bytes, index| {
        if (len <= bytes) return index;
    }
    unreachable;
}

const step_bytes = 32;
const step_table_bytes = 8192;
/// The classes the table can name (those up to `step_table_bytes`).
const step_table_classes = std.mem.indexOfScalar(u32, &class_payload_bytes, step_table_bytes).? + 1;
/// A step's lengths share one class: every class up to the table's end is a multiple of a step.
const class_by_step: [step_table_bytes / step_bytes]u8 = table: {
    var table: [step_table_bytes / step_bytes]u8 = undefined;
    var class: usize = 0;
    for (&table, 0..) |*entry, step| {
        const top = (step + 1) * step_bytes;
        while (class_payload_bytes[class] < top) class += 1;
        entry.* = class;
    }
    break :table table;
};

comptime {
    for (class_payload_bytes[0..step_table_classes]) |bytes| assert(bytes % step_bytes == 0);
}

fn headerOf(payload: anytype) *Header {
    return @ptrFromInt(@intFromPtr(payload) - header_bytes);
}

fn payloadOf(header: *Header) [*]u8 {
    return @as([*]u8, @ptrCast(header)) + header_bytes;
}

fn poolOf(user_data: ?*anyopaque) *Pool {
    return @ptrCast(@alignCast(user_data.?));
}

fn mallocHook(len: usize, user_data: ?*anyopaque) callconv(.c) ?*anyopaque {
    // malloc(0) may return a block, and nghttp2 takes NULL for a failure: the smallest block.
    return poolOf(user_data).allocate(@max(len, 1));
}

fn callocHook(count: usize, len: usize, user_data: ?*anyopaque) callconv(.c) ?*anyopaque {
    const total = std.math.mul(usize, count, len) catch return null;
    const payload = poolOf(user_data).allocate(@max(total, 1)) orelse return null;
    @memset(payload[0..total], 0);
    return payload;
}

fn freeHook(payload: ?*anyopaque, user_data: ?*anyopaque) callconv(.c) void {
    poolOf(user_data).release(headerOf(payload orelse return));
}

fn reallocHook(old: ?*anyopaque, len: usize, user_data: ?*anyopaque) callconv(.c) ?*anyopaque {
    const pool = poolOf(user_data);
    const payload: [*]u8 = @ptrCast(old orelse return pool.allocate(@max(len, 1)));
    const header = headerOf(payload);
    const old_len = class_payload_bytes[@intCast(header.word & ~Header.in_use_flag)];
    if (len <= old_len) return payload; // it still fits where it is
    const new = pool.allocate(len) orelse return null;
    @memcpy(new[0..old_len], payload[0..old_len]);
    pool.release(header);
    return new;
}

// The C heap as nghttp2 reaches it (src/h2/nghttp2_malloc.h), counted.

export fn sluice_h2_heap_malloc(len: usize) ?*anyopaque {
    _ = heap_allocations.fetchAdd(1, .monotonic);
    return std.c.malloc(len);
}

export fn sluice_h2_heap_calloc(count: usize, len: usize) ?*anyopaque {
    _ = heap_allocations.fetchAdd(1, .monotonic);
    return std.c.calloc(count, len);
}

export fn sluice_h2_heap_realloc(pointer: ?*anyopaque, len: usize) ?*anyopaque {
    _ = heap_allocations.fetchAdd(1, .monotonic);
    return std.c.realloc(pointer, len);
}

export fn sluice_h2_heap_free(pointer: ?*anyopaque) void {
    std.c.free(pointer);
}

// --- Tests: the allocator alone, through the hooks nghttp2 calls ----------------------------

const testing = std.testing;

test "memory: the class of every length is the smallest that holds it" {
    for (1..payload_bytes_max + 2) |len| {
        var expected: ?usize = null;
        for (class_payload_bytes, 0..) |bytes, index| {
            if (len <= bytes) {
                expected = index;
                break;
            }
        }
        try testing.expectEqual(expected, classOf(len));
    }
}

test "memory: blocks come from their class, then larger ones, then the pool refuses" {
    var pool: Pool = undefined;
    var options: Pool.Options = .uniform(0);
    options.blocks[classOf(100).?] = 1;
    options.blocks[classOf(1000).?] = 1;
    try pool.init(testing.allocator, options);
    defer pool.deinit(testing.allocator);
    const user = pool.mem().mem_user_data;
    const a = mallocHook(100, user) orelse return error.TestUnexpectedNull;
    const b = mallocHook(100, user) orelse return error.TestUnexpectedNull; // lent by 1024
    try testing.expectEqual(@as(?*anyopaque, null), mallocHook(100, user));
    try testing.expectEqual(@as(u64, 1), pool.failures.load());
    freeHook(a, user);
    const z: [*]u8 = @ptrCast(callocHook(4, 25, user) orelse return error.TestUnexpectedNull);
    for (z[0..100]) |byte| try testing.expectEqual(@as(u8, 0), byte);
    // Growing past the block moves it (the 1,024 class is taken: the pool refuses).
    try testing.expectEqual(@as(?*anyopaque, null), reallocHook(z, 500, user));
    try testing.expectEqual(@as(?*anyopaque, z), reallocHook(z, 120, user));
    freeHook(z, user);
    freeHook(b, user);
    freeHook(null, user);
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
    try testing.expectEqual(@as(?*anyopaque, null), mallocHook(payload_bytes_max + 1, user));
}

test "memory: random allocations against a model: every live block is intact, counts add up" {
    var pool: Pool = undefined;
    try pool.init(testing.allocator, .uniform(32));
    defer pool.deinit(testing.allocator);
    const user: ?*anyopaque = &pool;
    const seed: u64 = 0x5eed_4832;
    var prng: std.Random.DefaultPrng = .init(seed);
    const random = prng.random();
    const Live = struct { block: [*]u8, len: usize, fill: u8 };
    var live: [128]Live = undefined;
    var live_count: usize = 0;
    for (0..10_000) |step| {
        if (live_count == 0 or (live_count < live.len and random.boolean())) {
            const len = random.intRangeAtMost(usize, 1, 20_000);
            const block: [*]u8 = @ptrCast(mallocHook(len, user) orelse continue);
            const fill: u8 = @truncate(step);
            @memset(block[0..len], fill);
            live[live_count] = .{ .block = block, .len = len, .fill = fill };
            live_count += 1;
        } else {
            const index = random.uintLessThan(usize, live_count);
            const item = live[index];
            for (item.block[0..item.len]) |byte| try testing.expectEqual(item.fill, byte);
            freeHook(item.block, user);
            live[index] = live[live_count - 1];
            live_count -= 1;
        }
    }
    var expected: u64 = 0;
    for (live[0..live_count]) |item| {
        expected += class_payload_bytes[@intCast(headerOf(item.block).word & ~Header.in_use_flag)] + header_bytes;
    }
    try testing.expectEqual(expected, pool.bytesInUse());
    for (live[0..live_count]) |item| freeHook(item.block, user);
    try testing.expectEqual(@as(u64, 0), pool.bytesInUse());
}
