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

/// Frees what the instance holds outside its arena (AWS-LC's context and each worker's
/// sessions), on the control thread once no worker uses the instance; the arena goes next.
pub fn deinitOutsideArena(pool: *Pool) void {
    const backend_tls = pool.tls orelse return;
    backend_tls.deinit();
    pool.tls = null;
}

/// Whether two pool configurations are the same in every setting (then a reload keeps the
/// pool).
pub fn sameConfig(a: *const Config.Pool, b: *const Config.Pool) bool {
    return Config.deepEql(Config.Pool, a, b);
}

/// `to`'s backends' indexes in `from` (`backendIndexIn`), for moving counts between instances.
pub fn backendMap(to: *const Pool, from: *const Pool, map: *[Config.backends_count_max]?u16) []const ?u16 {
    for (to.config.backends(), map[0..to.config.backends_count]) |*backend, *slot| slot.* = backendIndexIn(from, backend);
    return map[0..to.config.backends_count];
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

/// The backends' stable identity (address) in both pools: `from`'s index for `backend`, or
/// null. O(log n): by its id in `from`'s sorted ids, then the address itself.
pub fn backendIndexIn(from: *const Pool, backend: *const Config.Backend) ?u16 {
    const index = from.shared.findId(Shared.backendId(&backend.address)) orelse return null;
    if (!from.config.backends()[index].address.eql(&backend.address)) return null; // A collision.
    return index;
}
