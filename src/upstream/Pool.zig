//! One pool, built from its configuration: the state every worker shares about its backends
//! (`Shared`: health, Maglev table, connection counts), one `LocalPool` per worker, and the
//! active health checker that runs on the control thread. It owns a copy of its configuration,
//! so it can outlive the generation it was built for: a reload that leaves the pool exactly
//! as it was reuses the instance (health, pooled connections, balancer cursors and counters
//! all carry on), and a changed pool gets a new instance that starts from the old one's health
//! for the backends both have.
//!
//! Owned by the control thread (runtime/generations.zig): built there, counted in `refs` by
//! the generations that use it, freed there when the last of them is.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const Shared = @import("Shared.zig");
const Checker = @import("../health/Checker.zig");
const LocalPool = @import("LocalPool.zig");
const BackendTls = @import("BackendTls.zig");
const Health = @import("../health/Health.zig");
const Members = @import("Members.zig");
const Address = @import("../stdx/Address.zig").Address;

const Pool = @This();

arena: std.heap.ArenaAllocator,
/// A deep copy: its strings live in `arena`.
config: Config.Pool,
shared: Shared,
/// One per worker, indexed by the worker's index.
locals: []LocalPool,
/// The worker timer queue slots (Generation.Timeouts) of `LocalPool.timeouts(&config)`.
queue_slots: [5]u8,
/// Null when the pool has no active checks, or before they start.
checker: ?*Checker = null,
/// How the workers speak TLS to the backends; null: plain TCP.
tls: ?*BackendTls = null,
/// Generations that use this instance (control thread only).
refs: u32 = 0,
/// Set when a reload built a successor (a changed pool of the same name): what of this
/// instance's counts the successor took (see `LocalPool.transferCounts`), in this instance's
/// arena. Its workers and, for the shared health counts, the control thread move what it
/// counts after that into whatever instance of the name is current then.
accounted: ?*Accounted = null,
/// By slot: the version of the first table without the member that left it (control thread),
/// allocated with `shared`'s slots by `initMembership`.
left_in: []u32 = &.{},
/// Checkers a membership change replaced, until they have stopped (control thread).
retired_checkers: [retired_checkers_max]*Checker = undefined,
retired_checkers_count: u32 = 0,

pub const Accounted = struct {
    /// By worker index, each written by its worker once the build is published.
    locals: []LocalPool.Accounted,
    health: Health.Stats = .{},
};

/// Copies `pool`'s strings into `arena`, so the copy does not depend on the config file's
/// memory.
pub fn copyConfig(arena: std.mem.Allocator, pool: *const Config.Pool) !Config.Pool {
    var copy = pool.*;
    copy.name = try arena.dupe(u8, pool.name);
    copy.backends_list = try arena.dupe(Config.Backend, pool.backends());
    copy.hash_name = try arena.dupe(u8, pool.hash_name);
    copy.sticky_cookie = try arena.dupe(u8, pool.sticky_cookie);
    copy.health.path = try arena.dupe(u8, pool.health.path);
    copy.health.host = try arena.dupe(u8, pool.health.host);
    inline for (.{ "ca", "server_name", "client_cert", "client_key" }) |name| {
        @field(copy.tls, name) = try arena.dupe(u8, @field(pool.tls, name));
    }
    return copy;
}

/// After `shared.init`: the control thread's per-slot bookkeeping, in the instance's arena.
pub fn initMembership(pool: *Pool, arena: std.mem.Allocator) error{OutOfMemory}!void {
    pool.left_in = try arena.alloc(u32, pool.shared.count());
    @memset(pool.left_in, 0);
}

/// Frees what the instance holds outside its arena (its membership tables, AWS-LC's context
/// and each worker's sessions), on the control thread once no worker uses the instance; the
/// arena goes next.
pub fn deinitOutsideArena(pool: *Pool) void {
    pool.shared.members.freeTables();
    const backend_tls = pool.tls orelse return;
    backend_tls.deinit();
    pool.tls = null;
}

/// Whether two pool configurations are the same in every setting (then a reload keeps the
/// pool).
pub fn sameConfig(a: *const Config.Pool, b: *const Config.Pool) bool {
    return Config.deepEql(Config.Pool, a, b);
}

/// Whether two pool configurations are the same in every setting but their member lists: then
/// a reload keeps the pool and changes its membership (`changeMembers`).
pub fn samePolicy(a: *const Config.Pool, b: *const Config.Pool) bool {
    var a_policy = a.*;
    var b_policy = b.*;
    a_policy.backends_list = &.{};
    a_policy.backends_count = 0;
    a_policy.member_slots = 0;
    b_policy.backends_list = &.{};
    b_policy.backends_count = 0;
    b_policy.member_slots = 0;
    return Config.deepEql(Config.Pool, &a_policy, &b_policy);
}

/// Whether `list` is exactly the pool's membership now: the same members (address and caps)
/// with the same weights, in any order. Control thread; O(n log n).
pub fn sameMembers(pool: *const Pool, list: []const Config.Backend) bool {
    const table = pool.shared.members.newest();
    if (table.members_count != list.len) return false;
    for (list) |*backend| {
        const index = pool.memberIndex(backend) orelse return false;
        if (table.weights[index] != backend.weight) return false;
    }
    return true;
}

/// Whether `changeMembers(list)` would fit: enough free slots for the members to add, and
/// room for another table. Control thread; changes nothing.
pub fn membersFit(pool: *const Pool, list: []const Config.Backend) bool {
    const members = &pool.shared.members;
    if (members.live_count == Members.live_max) return false;
    if (pool.retired_checkers_count == retired_checkers_max) return false;
    var to_add: u32 = 0;
    for (list) |*backend| to_add += @intFromBool(pool.memberIndex(backend) == null);
    var free: u32 = 0;
    for (members.states) |state| free += @intFromBool(state == .free);
    return to_add <= free;
}

/// Health checkers a membership change replaced, stopping: freed by `reapMembers`.
pub const retired_checkers_max = 4;

/// Makes `list` the pool's membership (upstream/Members.zig): members that stay keep their
/// slot (health, idle connections, counters); those that left drain; those added take free
/// slots with fresh health, and the next table is published. The caller checked
/// `membersFit`, then wakes the workers (and replaces the health checker: `checker`). Control
/// thread.
pub fn changeMembers(pool: *Pool, list: []const Config.Backend) error{ Full, Busy, OutOfMemory }!Members.Change {
    const shared = &pool.shared;
    if (shared.members.live_count == Members.live_max) return error.Busy;
    var change: Members.Change = undefined;
    try shared.members.apply(list, pool, &change);
    for (change.joined[0..change.joined_count], change.joined_from[0..change.joined_count]) |slot, from| {
        const backend = &list[from];
        shared.setIdentity(slot, backend);
        shared.health.join(slot, &backend.address);
        if (pool.tls) |backend_tls| try backend_tls.setName(pool.arena.allocator(), &pool.config.tls, slot, backend);
    }
    const table = try shared.members.publishNext(pool.config.strategy, shared.ids);
    for (change.left[0..change.left_count]) |slot| {
        shared.health.leave(slot);
        pool.left_in[slot] = table.version;
    }
    shared.table.store(table, .release);
    return change;
}

/// `Members.apply`'s questions: whether slot `index` holds `backend` (address and caps), and
/// which member slot holds it.
pub fn same(pool: *const Pool, index: u16, backend: *const Config.Backend) bool {
    return pool.shared.same(index, backend);
}

pub fn find(pool: *const Pool, backend: *const Config.Backend) ?u16 {
    return pool.memberIndex(backend);
}

/// Frees the tables every worker has moved past, the retired checkers that stopped, and the
/// draining slots nothing is left of (so new members may take them). Control thread, on the
/// reaper's tick; true while something still waits.
pub fn reapMembers(pool: *Pool) bool {
    const shared = &pool.shared;
    var oldest: u32 = std.math.maxInt(u32);
    for (pool.locals) |*local| oldest = @min(oldest, local.table_adopted.load(.acquire));
    shared.members.freeAdopted(oldest);
    for (shared.members.states, 0..) |*state, i| {
        if (state.* != .draining) continue;
        const slot: u16 = @intCast(i);
        if (oldest < pool.left_in[slot] or !pool.slotQuiet(slot)) continue;
        state.* = .free;
    }
    const checkers_waiting = pool.reapCheckers();
    return shared.members.live_count > 1 or shared.members.anyDraining() or checkers_waiting;
}

/// Frees the replaced checkers that have stopped; true while some have not.
pub fn reapCheckers(pool: *Pool) bool {
    var kept: u32 = 0;
    for (pool.retired_checkers[0..pool.retired_checkers_count]) |checker| {
        if (!checker.stopped()) {
            pool.retired_checkers[kept] = checker;
            kept += 1;
            continue;
        }
        checker.destroy();
    }
    pool.retired_checkers_count = kept;
    return kept > 0;
}

/// Nothing of slot `index` is left on any worker: no request in flight, no connection open
/// (busy, idle or closing), nothing counted against its pending cap. Read after every worker
/// acknowledged a table without the slot (acquire), so nothing starts on it again.
fn slotQuiet(pool: *const Pool, index: u16) bool {
    const shared = &pool.shared;
    if (shared.connections[index].load(.monotonic) != 0) return false;
    if (shared.pending[index].load(.monotonic) != 0) return false;
    for (pool.locals) |*local| {
        if (@atomicLoad(u32, &local.inflight[index], .monotonic) != 0) return false;
    }
    return true;
}

/// A checker a membership change replaced: stopped now, freed once it has (`reapMembers`).
pub fn retireChecker(pool: *Pool, checker: *Checker) void {
    assert(pool.retired_checkers_count < retired_checkers_max); // `membersFit`.
    checker.stop();
    pool.retired_checkers[pool.retired_checkers_count] = checker;
    pool.retired_checkers_count += 1;
}

/// `to`'s members' slots in `from` (`backendIndexIn`), by `to`'s slot, for moving counts
/// between instances; null for a slot without a member or one `from` lacks.
pub fn backendMap(to: *const Pool, from: *const Pool, map: *[Config.backends_count_max]?u16) []const ?u16 {
    const slots_count = to.shared.count();
    const table = to.shared.members.newest();
    for (map[0..slots_count], 0..) |*slot, i| {
        slot.* = if (table.isPresent(@intCast(i))) from.slotOf(&to.shared.addresses[i]) else null;
    }
    return map[0..slots_count];
}

/// Moves what `from` (an instance a reload replaced) counted since its successor was built
/// into `to`, the instance of its name current now: on `worker_index`'s thread, for its own
/// counts, once it no longer uses `from`.
pub fn moveWorkerCounts(to: *Pool, from: *const Pool, worker_index: usize) void {
    assert(to != from);
    const accounted = from.accounted orelse return; // No successor was ever built.
    var map: [Config.backends_count_max]?u16 = undefined;
    const backend_map = backendMap(to, from, &map);
    to.locals[worker_index].transferCounts(.move, &from.locals[worker_index], &accounted.locals[worker_index], backend_map);
}

/// The backends' stable identity (address) in both pools: `from`'s slot for `backend`, or
/// null. O(log n): by its id in `from`'s newest table, then the address itself.
pub fn backendIndexIn(from: *const Pool, backend: *const Config.Backend) ?u16 {
    return from.slotOf(&backend.address);
}

/// The slot of the member with this address in the newest table, if any.
fn slotOf(pool: *const Pool, address: *const Address) ?u16 {
    const index = pool.shared.members.newest().findId(Shared.backendId(address)) orelse return null;
    if (!pool.shared.addresses[index].eql(address)) return null; // A collision.
    return index;
}

/// The slot of the member `backend` is (address and caps), if it is one now.
fn memberIndex(pool: *const Pool, backend: *const Config.Backend) ?u16 {
    const index = pool.slotOf(&backend.address) orelse return null;
    return if (pool.shared.same(index, backend)) index else null;
}
