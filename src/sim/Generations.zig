//! Configuration generations for the simulated worker, built the way runtime/generations.zig
//! builds them (pool instances kept when a pool is unchanged, health carried over otherwise,
//! one timer queue per distinct timeout, handlers compiled again only when their source or
//! limits change, generations freed once the worker lets go of them),
//! without what needs a kernel: no listener sockets (a generation's listeners are slot
//! numbers) and no active health checker (the simulator flips health itself).
//!
//! Freed memory is not given back during a seed: it is made inaccessible (`Quarantine`), so a
//! proxy that still used a generation or a pool instance after letting go of it would fault
//! at once, with the seed printed, instead of reading whatever was allocated there next.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const Config = @import("../config/Config.zig");
const Loop = @import("../loop/Loop.zig");
const Generation = @import("../proxy/Generation.zig");
const Pool = @import("../upstream/Pool.zig");
const LocalPool = @import("../upstream/LocalPool.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Counter = @import("../stdx/Counter.zig");
const HandlerInstance = @import("../handler/Instance.zig");

const Generations = @This();

loop: *Loop,
sessions_count: u32,
quarantine: *Quarantine,
timeouts: Generation.Timeouts = .{},
/// Oldest first; the last is the current one.
live: [Proxy.holds_max]*Built = undefined,
live_count: u32 = 0,
next_number: u64 = 1,
/// The one worker's handler tallies; the simulator has one handler name, so slot 0.
handler_tallies: [1]HandlerInstance.TallyRow = std.mem.zeroes([1]HandlerInstance.TallyRow),

pub const Built = struct {
    arena: std.heap.ArenaAllocator,
    config: Config,
    generation: Generation,
};

pub const BuildError = error{ TooManyGenerations, TooManyTimeouts, OutOfMemory };

pub fn current(generations: *const Generations) *Built {
    assert(generations.live_count > 0);
    return generations.live[generations.live_count - 1];
}

/// Builds the next generation from a copy of `config` and makes it current; the caller has the
/// worker adopt it. Refused (nothing changed) when as many generations are alive as a worker
/// may hold, or the timer queues would run out: the control thread's rules.
pub fn build(generations: *Generations, config: *const Config, now_ns: u64) BuildError!*Built {
    if (generations.live_count == Proxy.holds_max) return error.TooManyGenerations;
    var arena_state: std.heap.ArenaAllocator = .init(generations.quarantine.allocator());
    errdefer arena_state.deinit();
    const arena = arena_state.allocator();
    const built = try arena.create(Built);
    built.config = config.*;
    const previous: ?*Built = if (generations.live_count > 0) generations.current() else null;

    const timeouts_before = generations.timeouts;
    errdefer generations.timeouts = timeouts_before;
    const pools = try arena.alloc(*Pool, config.pools_count);
    var pools_built: usize = 0;
    errdefer for (pools[0..pools_built]) |instance| generations.unref(instance);
    for (built.config.pools(), pools) |*pool, *slot| {
        slot.* = try generations.poolFor(pool, previous, now_ns);
        slot.*.refs += 1;
        pools_built += 1;
    }
    const handlers = try arena.alloc(*HandlerInstance, built.config.handlers_count);
    var handlers_built: usize = 0;
    errdefer for (handlers[0..handlers_built]) |instance| instance.unref();
    for (built.config.handlers(), handlers) |*handler, *slot| {
        slot.* = try generations.handlerFor(handler, previous);
        slot.*.refs += 1;
        handlers_built += 1;
    }
    // Listener i is slot i: sockets are the simulator's business, not the generation's.
    const listener_slots = try arena.alloc(u8, built.config.listeners().len);
    for (listener_slots, 0..) |*slot, i| slot.* = @intCast(i);
    const tunnel_slots = try arena.alloc(u8, built.config.routes_count + 1);
    for (tunnel_slots, 0..) |*slot, i| {
        const route: ?*const Config.Route = if (i < built.config.routes_count) &built.config.routes()[i] else null;
        slot.* = generations.timeouts.slot(built.config.tunnelIdleTimeoutNs(route)) orelse return error.TooManyTimeouts;
    }
    const rows = try arena.alloc([]Counter, 1);
    const cells = try arena.alignedAlloc(Counter, .@"64", @max(1, built.config.routes_count));
    @memset(cells, .{});
    rows[0] = cells[0..built.config.routes_count];
    built.generation = .{
        .number = generations.next_number,
        .config = &built.config,
        .pools = pools,
        .handlers = handlers,
        .listener_slots = listener_slots,
        .timeouts = &generations.timeouts,
        .timeouts_count = generations.timeouts.count,
        .tunnel_slots = tunnel_slots,
        .holders = .init(1),
        .route_requests = rows,
        .header_policies = try HeaderPolicy.buildAll(arena, &built.config),
    };
    built.arena = arena_state;
    generations.next_number += 1;
    generations.live[generations.live_count] = built;
    generations.live_count += 1;
    changeMembers(built);
    return built;
}

/// The pools this build kept whose member list changed get the new list as a membership change
/// (runtime/reload.zig's `changeMembers`; the simulator has no active checker to replace).
fn changeMembers(built: *Built) void {
    for (built.generation.pools, built.config.pools()) |instance, *pool| {
        if (instance.refs == 1 or instance.sameMembers(pool.backends())) continue;
        _ = instance.changeMembers(pool.backends()) catch |err| switch (err) {
            error.OutOfMemory => std.debug.panic("sim: out of memory", .{}),
            error.Full, error.Busy => unreachable, // `membersFit` said it fits.
        };
    }
}

/// The previous generation's instance of the pool if nothing in it changed, else a new one
/// starting from the old one's health.
fn poolFor(generations: *Generations, pool: *const Config.Pool, previous: ?*Built, now_ns: u64) BuildError!*Pool {
    var old: ?*Pool = null;
    if (previous) |built| for (built.generation.pools) |instance| {
        if (std.mem.eql(u8, instance.config.name, pool.name)) old = instance;
    };
    // The same policy: the same instance, its member list changed in place after the build
    // (`changeMembers`) when it differs and fits, as runtime/generations.zig does.
    if (old) |instance| if (Pool.samePolicy(&instance.config, pool)) {
        if (instance.sameMembers(pool.backends()) or instance.membersFit(pool.backends())) return instance;
    };

    var slots: [5]u8 = undefined;
    for (LocalPool.timeouts(pool), &slots) |duration, *slot| {
        slot.* = generations.timeouts.slot(duration) orelse return error.TooManyTimeouts;
    }
    var arena_state: std.heap.ArenaAllocator = .init(generations.quarantine.allocator());
    errdefer arena_state.deinit();
    const arena = arena_state.allocator();
    const instance = try arena.create(Pool);
    instance.* = .{
        .arena = undefined,
        .config = try Pool.copyConfig(arena, pool),
        .shared = undefined,
        .locals = try arena.alloc(LocalPool, 1),
        .queue_slots = slots,
    };
    try instance.shared.init(arena, &instance.config);
    errdefer instance.shared.members.freeTables();
    try instance.initMembership(arena);
    if (old) |from| for (instance.config.backends(), 0..) |*backend, index| {
        const from_index = Pool.backendIndexIn(from, backend) orelse continue;
        instance.shared.health.carryOver(@intCast(index), &from.shared.health, from_index);
    };
    try instance.locals[0].init(arena, generations.loop, &instance.config, &instance.shared, Proxy.exchangesCount(generations.sessions_count), 0, now_ns);
    instance.arena = arena_state;
    return instance;
}

/// The previous generation's instance of the handler when its source and limits are the same,
/// else a new one, compiled, in quarantined memory like a pool instance. The simulator's
/// sources are its own and valid: a failure to compile one is the simulator's bug.
fn handlerFor(generations: *Generations, handler: *const Config.Handler, previous: ?*Built) BuildError!*HandlerInstance {
    const old = if (previous) |built| built.generation.handlerNamed(handler.name) else null;
    var text: [512]u8 = undefined;
    var diagnostic = std.Io.Writer.fixed(&text);
    const instance = HandlerInstance.make(generations.quarantine.allocator(), handler, old, 0, &generations.handler_tallies, &diagnostic) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Invalid => std.debug.panic("sim: handler {s}: {s}", .{ handler.name, diagnostic.buffered() }),
    };
    // The engine's deadline reads the simulated clock: on the machine's, a request's fate
    // would depend on how fast the simulator ran (a body trickled over minutes of simulated
    // time passed or missed a 50 ms deadline by the real time it took to simulate).
    clock_loop = generations.loop;
    for (instance.workers) |*worker| worker.engine.vm.clock = simulatedClock;
    return instance;
}

/// The loop whose time the handlers' engines read (one simulated worker at a time).
var clock_loop: ?*const Loop = null;

fn simulatedClock() u64 {
    return clock_loop.?.now();
}

/// Frees every old generation the worker has let go of, and the pool instances no generation
/// uses any more.
pub fn reap(generations: *Generations) void {
    var kept: u32 = 0;
    for (generations.live[0..generations.live_count], 0..) |built, i| {
        const is_current = i == generations.live_count - 1;
        if (!is_current and built.generation.holders.load(.acquire) == 0) {
            generations.free(built);
            continue;
        }
        generations.live[kept] = built;
        kept += 1;
    }
    generations.live_count = kept;
    // The current pools' membership: tables the worker has moved past, drained slots.
    if (kept > 0) for (generations.current().generation.pools) |instance| {
        _ = instance.reapMembers(); // Looked at again on the next step.
    };
}

/// Every generation, the current one included (the end of a seed).
pub fn freeAll(generations: *Generations) void {
    for (generations.live[0..generations.live_count]) |built| generations.free(built);
    generations.live_count = 0;
}

fn free(generations: *Generations, built: *Built) void {
    for (built.generation.pools) |instance| generations.unref(instance);
    for (built.generation.handlers) |instance| instance.unref();
    var arena = built.arena;
    arena.deinit();
}

fn unref(generations: *Generations, instance: *Pool) void {
    _ = generations;
    instance.refs -= 1;
    if (instance.refs > 0) return;
    instance.deinitOutsideArena();
    var arena = instance.arena;
    arena.deinit();
}

/// Every pool instance of the live generations, once each.
pub fn instances(generations: *const Generations, out: []*Pool) []*Pool {
    var count: usize = 0;
    for (generations.live[0..generations.live_count]) |built| {
        for (built.generation.pools) |instance| {
            if (std.mem.indexOfScalar(*Pool, out[0..count], instance) != null) continue;
            out[count] = instance;
            count += 1;
        }
    }
    return out[0..count];
}

/// Page memory whose frees make the pages inaccessible until `releaseAll`: a use after free
/// faults at the access.
pub const Quarantine = struct {
    regions: [regions_max][]u8 = undefined,
    count: u32 = 0,

    const regions_max = 16 * 1024;

    pub fn allocator(quarantine: *Quarantine) std.mem.Allocator {
        return .{ .ptr = quarantine, .vtable = &.{
            .alloc = alloc,
            .resize = resize,
            .remap = remap,
            .free = quarantineFree,
        } };
    }

    /// Unmaps everything freed so far.
    pub fn releaseAll(quarantine: *Quarantine) void {
        for (quarantine.regions[0..quarantine.count]) |region| {
            std.heap.page_allocator.rawFree(region, .fromByteUnits(std.heap.page_size_min), 0);
        }
        quarantine.count = 0;
    }

    fn alloc(context: *anyopaque, len: usize, alignment: std.mem.Alignment, ret_addr: usize) ?[*]u8 {
        _ = context;
        return std.heap.page_allocator.rawAlloc(len, alignment, ret_addr);
    }

    fn resize(context: *anyopaque, memory: []u8, alignment: std.mem.Alignment, new_len: usize, ret_addr: usize) bool {
        _ = context;
        return std.heap.page_allocator.rawResize(memory, alignment, new_len, ret_addr);
    }

    fn remap(context: *anyopaque, memory: []u8, alignment: std.mem.Alignment, new_len: usize, ret_addr: usize) ?[*]u8 {
        _ = .{ context, memory, alignment, new_len, ret_addr };
        return null; // Move by alloc, copy and free, so the old place is quarantined too.
    }

    fn quarantineFree(context: *anyopaque, memory: []u8, alignment: std.mem.Alignment, ret_addr: usize) void {
        const quarantine: *Quarantine = @ptrCast(@alignCast(context));
        if (quarantine.count == regions_max) {
            return std.heap.page_allocator.rawFree(memory, alignment, ret_addr);
        }
        const length = std.mem.alignForward(usize, memory.len, std.heap.pageSize());
        const rc = linux.mprotect(memory.ptr, length, .{});
        assert(linux.errno(rc) == .SUCCESS);
        quarantine.regions[quarantine.count] = memory;
        quarantine.count += 1;
    }
};
