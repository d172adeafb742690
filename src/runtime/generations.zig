//! Configuration generations on the control thread: building one from a `Config` (at start-up,
//! and on every reload), publishing it to the workers, and freeing the old ones once every
//! worker has let go of them.
//!
//! What a reload keeps (the point of building generations this way):
//! - a pool whose settings are all unchanged keeps its `Pool`: health, active checker,
//!   pooled connections, balancer cursors and counters carry on as if nothing happened;
//! - a changed pool gets a new instance, whose backends start from the health the previous
//!   instance had for the same address (up or down, ejected or not);
//! - a JavaScript handler whose file (its contents) and limits are unchanged keeps its module
//!   and engines; a changed one is compiled again, and a mistake refuses the reload (the
//!   running one keeps serving); its counters go on by name either way;
//! - a listener whose address is unchanged keeps its sockets (its accept queues never close,
//!   so no connection is refused or reset by the reload); a new one is bound before the
//!   generation is published, and one that is gone is closed by each worker when it adopts.
//!
//! Memory: each generation and each pool instance has its own arena on the page allocator,
//! freed whole. A reload allocates; the request path still never does (the exchange holds
//! its generation, see proxy/Proxy.zig).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const Config = @import("../config/Config.zig");
const Loop = @import("../loop/Loop.zig");
const Generation = @import("../proxy/Generation.zig");
const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const AccessPolicy = @import("../policy/AccessPolicy.zig");
const RateLimits = @import("../policy/RateLimits.zig");
const Counter = @import("../stdx/Counter.zig");
const Pool = @import("../upstream/Pool.zig");
const LocalPool = @import("../upstream/LocalPool.zig");
const BackendTls = @import("../upstream/BackendTls.zig");
const tls = @import("../tls/tls.zig");
const HandlerInstance = @import("../handler/Instance.zig");
const Proxy = @import("../proxy/Proxy.zig");
const Dns = @import("Dns.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const log = @import("../stdx/log.zig");

/// The sockets of every listener, by worker listener slot. A slot is bound once and kept as
/// long as some live generation has its address; workers own the descriptors once they
/// accept on them.
pub const ListenerTable = struct {
    slots: [slots_max]Slot = @splat(.{}),

    /// Room for every listener of the live generations (a reload may replace all of them).
    pub const slots_max = 2 * Config.listeners_count_max;

    pub const Slot = struct {
        /// Live generations that use it; 0: free.
        refs: u32 = 0,
        /// As configured (port 0 stays 0: an unchanged config keeps the chosen port).
        configured: Address = undefined,
        /// As bound.
        bound: Address = undefined,
        fds: [Config.workers_count_max]linux.fd_t = undefined,
    };
};

pub const Built = struct {
    arena: std.heap.ArenaAllocator,
    generation: Generation,
    /// Listener slots this generation bound (the others it shares with the previous one).
    opened: u32 = 0,
    /// Pools it built anew (the others it kept).
    pools_new: u32 = 0,
    /// Handlers it compiled (the others it kept).
    handlers_new: u32 = 0,
};

pub const Problem = struct {
    buffer: [512]u8 = undefined,
    len: usize = 0,
    /// The configuration is at fault (a certificate file), not the machine (an address in
    /// use, memory): start-up exits 2, as for any configuration mistake.
    config_mistake: bool = false,

    pub fn text(problem: *const Problem) []const u8 {
        return problem.buffer[0..problem.len];
    }

    fn setMistake(problem: *Problem, comptime format: []const u8, args: anytype) error{BuildFailed} {
        problem.config_mistake = true;
        return problem.set(format, args);
    }

    fn set(problem: *Problem, comptime format: []const u8, args: anytype) error{BuildFailed} {
        const written = std.fmt.bufPrint(&problem.buffer, format, args) catch problem.buffer[0..];
        problem.len = written.len;
        return error.BuildFailed;
    }
};

pub const Generations = struct {
    /// Workers' loops, by worker index (the loops need not be running yet).
    loops: []const *Loop,
    sessions_count: u32,
    timeouts: Generation.Timeouts = .{},
    listeners: ListenerTable = .{},
    /// Oldest first; the last is the current one.
    live: [Proxy.holds_max]*Built = undefined,
    live_count: u32 = 0,
    /// Instances no generation uses, freed once their checker has stopped.
    retired: [retired_max]*Pool = undefined,
    retired_count: u32 = 0,
    next_number: u64 = 1,
    /// The process's session-ticket keys when it started with HTTPS listeners (every
    /// generation's TLS contexts seal tickets with them, so a ticket outlives a reload); null:
    /// started without, and a reload may not add HTTPS (the workers sized no TLS memory).
    ticket_keys: ?*tls.TicketKeys = null,
    /// Set once a configuration has a backend by name: pools with names are built with the
    /// addresses known for them (runtime/Dns.zig).
    dns: ?*Dns = null,
    /// TLS contexts of freed generations that open connections still use (a WebSocket may
    /// outlive many reloads), freed once their last engine has ended. Kept apart from the
    /// generations so that a long connection holds its few KiB of context, not a generation
    /// slot (`Proxy.holds_max` bounds those, and reloads are refused past it).
    retired_servers: [retired_servers_max]*tls.ServerContext = undefined,
    retired_servers_count: u32 = 0,
    /// Every handler name a generation has had, by tally slot (`HandlerInstance.slots_max`):
    /// a name keeps its slot, so its counters go on across reloads.
    handler_names: [HandlerInstance.slots_max]HandlerName = undefined,
    handler_names_count: u32 = 0,
    /// Each worker's handler tallies, by worker index (written by that worker only); empty
    /// when the workers were made without (a test's generations).
    handler_tallies: []HandlerInstance.TallyRow = &.{},
    /// Requests each route took in the generations freed so far (runtime/collector.zig).
    route_totals: RouteTotals = .{},
    /// The same for requests refused by a route's rate limits.
    route_rate_limited_totals: RouteTotals = .{},

    const retired_servers_max = 8 * Config.listeners_count_max;
    const retired_max = Proxy.holds_max * Config.pools_count_max;

    /// A new `Generations` in `memory`, which must read zero (fresh pages from the kernel,
    /// `StaticAllocator.allocUntouched`): the fields whose defaults are zero or undefined are
    /// left as they are, so the listener table's ~20 KB cost no page fault at start-up until
    /// a slot is bound. Assigning `.{ ... }` would write all of it (undefined is 0xAA in safe
    /// builds).
    /// `handler_tallies` must read zero too (a fresh `Tally` is all zeros), one row per loop.
    pub fn initZeroed(
        memory: *Generations,
        loops: []const *Loop,
        sessions_count: u32,
        handler_tallies: []HandlerInstance.TallyRow,
    ) void {
        assert(memory.live_count == 0 and memory.retired_count == 0 and memory.timeouts.count == 0);
        assert(memory.handler_names_count == 0 and handler_tallies.len == loops.len);
        memory.loops = loops;
        memory.sessions_count = sessions_count;
        memory.next_number = 1;
        memory.handler_tallies = handler_tallies;
    }

    pub fn current(generations: *const Generations) *Built {
        assert(generations.live_count > 0);
        return generations.live[generations.live_count - 1];
    }

    /// One `listening on` line per listener `built` opened (not those it kept), in its
    /// config's order: at start-up every listener, at a reload the new ones.
    pub fn logOpened(generations: *const Generations, built: *const Built, workers_count: u32, io: []const u8) void {
        const listeners = built.generation.config.listeners();
        for (listeners, built.generation.listener_slots) |*listener, slot| {
            if (built.opened & (@as(u32, 1) << @intCast(slot)) == 0) continue;
            var text: [Address.text_bytes_max]u8 = undefined;
            const address = generations.listeners.slots[slot].bound.toText(&text);
            if (listener.name.len > 0) {
                log.info("listening on {s} (workers={d}, io={s}) listener={s}", .{ address, workers_count, io, listener.name });
            } else {
                log.info("listening on {s} (workers={d}, io={s})", .{ address, workers_count, io });
            }
        }
    }

    /// Builds the next generation from `config`, which lives in `arena` (or longer), and makes
    /// it the current one; workers are told by the caller (`Worker.publish`). On failure
    /// nothing changed and `problem` says why.
    pub fn build(
        generations: *Generations,
        arena_in: std.heap.ArenaAllocator,
        config: *const Config,
        problem: *Problem,
    ) error{BuildFailed}!*Built {
        var arena_state = arena_in;
        errdefer arena_state.deinit();
        if (generations.live_count == Proxy.holds_max) {
            return problem.set("{d} older generations are still finishing requests; try again shortly", .{Proxy.holds_max - 1});
        }
        const arena = arena_state.allocator();
        const built = arena.create(Built) catch return outOfMemory(problem);
        built.* = .{ .arena = undefined, .generation = undefined };
        const previous: ?*Built = if (generations.live_count > 0) generations.current() else null;
        const workers_count = generations.loops.len;

        // Handlers first: a mistake in one refuses the build before anything is bound.
        const handlers = arena.alloc(*HandlerInstance, config.handlers_count) catch return outOfMemory(problem);
        var handlers_built: usize = 0;
        errdefer for (handlers[0..handlers_built]) |instance| instance.unref();
        for (config.handlers(), handlers) |*handler, *slot| {
            slot.* = try generations.handlerFor(handler, previous, problem);
            slot.*.refs += 1;
            handlers_built += 1;
            if (slot.*.refs == 1) built.handlers_new += 1;
        }

        const pools = arena.alloc(*Pool, config.pools_count) catch return outOfMemory(problem);
        var pools_built: usize = 0;
        errdefer for (pools[0..pools_built]) |instance| generations.unref(instance);
        const timeouts_before = generations.timeouts;
        errdefer generations.timeouts = timeouts_before;
        for (config.pools(), pools) |*pool, *slot| {
            slot.* = try generations.poolFor(pool, previous, problem);
            slot.*.refs += 1;
            pools_built += 1;
            if (slot.*.refs == 1) built.pools_new += 1;
        }

        const listener_slots = arena.alloc(u8, config.listeners().len) catch return outOfMemory(problem);
        var listeners_taken: usize = 0;
        errdefer for (listener_slots[0..listeners_taken]) |slot| generations.unrefSlot(slot);
        for (config.listeners(), listener_slots) |*listener, *slot| {
            const reused = generations.findSlot(previous, &listener.address);
            slot.* = reused orelse try generations.openSlot(&listener.address, workers_count, problem);
            if (reused == null) built.opened |= @as(u32, 1) << @intCast(slot.*);
            generations.listeners.slots[slot.*].refs += 1;
            listeners_taken += 1;
        }

        const tls_servers = arena.alloc(?*tls.ServerContext, config.listeners().len) catch return outOfMemory(problem);
        @memset(tls_servers, null);
        errdefer for (tls_servers) |server| if (server) |s| freeServer(s);
        for (tls_servers, 0..) |*server, i| {
            const settings = config.listenerTls(i) orelse continue;
            server.* = try generations.loadServer(settings, config.listenerHttp2(i), problem);
        }

        // Tunnels' idle timeouts, the default's and each route's, share the upstream queues.
        const tunnel_slots = arena.alloc(u8, config.routes_count + 1) catch return outOfMemory(problem);
        for (tunnel_slots, 0..) |*slot, i| {
            const route: ?*const Config.Route = if (i < config.routes_count) &config.routes()[i] else null;
            slot.* = generations.timeouts.slot(config.tunnelIdleTimeoutNs(route)) orelse return problem.set(
                "more than {d} distinct upstream and tunnel timeouts since start-up; restart to apply this one",
                .{Generation.Timeouts.count_max},
            );
        }

        const header_policies = HeaderPolicy.buildAll(arena, config) catch return outOfMemory(problem);
        const access = AccessPolicy.build(arena, config) catch return outOfMemory(problem);
        const rate_limits = RateLimits.build(arena, config, @intCast(workers_count)) catch return outOfMemory(problem);

        const rows = routeCounters(arena, workers_count, config.routes_count) catch return outOfMemory(problem);
        const limited_rows = if (rate_limits == null) &.{} else routeCounters(arena, workers_count, config.routes_count) catch return outOfMemory(problem);

        built.generation = .{
            .number = generations.next_number,
            .config = config,
            .pools = pools,
            .handlers = handlers,
            .listener_slots = listener_slots,
            .tls_servers = tls_servers,
            .timeouts = &generations.timeouts,
            .timeouts_count = generations.timeouts.count,
            .tunnel_slots = tunnel_slots,
            .holders = .init(@intCast(workers_count)),
            .route_requests = rows,
            .header_policies = header_policies,
            .access = access,
            .rate_limits = rate_limits,
            .route_rate_limited = limited_rows,
        };
        built.arena = arena_state;
        generations.next_number += 1;
        generations.live[generations.live_count] = built;
        generations.live_count += 1;
        return built;
    }

    /// The instance for `pool`: the previous generation's with the same name if every setting
    /// is the same, else a new one that starts from the old one's health.
    fn poolFor(
        generations: *Generations,
        written: *const Config.Pool,
        previous: ?*Built,
        problem: *Problem,
    ) error{BuildFailed}!*Pool {
        // A pool with names is built with their addresses known now (`Dns.expand`), in slots
        // for as many as they may bring.
        var effective = written.*;
        if (Dns.hasNames(written)) {
            const members = generations.dns.?.expand(written);
            effective.backends_list = members;
            effective.backends_count = @intCast(members.len);
            effective.member_slots = Dns.slotsFor(written);
        }
        const pool = &effective;
        var old: ?*Pool = null;
        if (previous) |built| for (built.generation.pools) |instance| {
            if (std.mem.eql(u8, instance.config.name, pool.name)) old = instance;
        };
        if (old) |instance| if (Pool.samePolicy(&instance.config, pool)) {
            // The same settings, and the TLS files (if any) still hold what it was built from.
            const files_same = if (instance.tls) |backend_tls| backend_tls.sameFiles(&pool.tls) else true;
            // A changed member list that fits the instance's slots changes its membership
            // after the build (`changeMembers`); one that does not builds a new instance.
            if (files_same and (instance.sameMembers(pool.backends()) or instance.membersFit(pool.backends()))) return instance;
        };

        var slots: [5]u8 = undefined;
        for (LocalPool.timeouts(pool), &slots) |duration, *slot| {
            slot.* = generations.timeouts.slot(duration) orelse return problem.set(
                "more than {d} distinct upstream timeouts since start-up; restart to apply this one",
                .{Generation.Timeouts.count_max},
            );
        }
        var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
        errdefer arena_state.deinit();
        const arena = arena_state.allocator();
        const instance = arena.create(Pool) catch return problem.set("out of memory building pool {s}", .{pool.name});
        instance.* = .{
            .arena = undefined,
            .config = Pool.copyConfig(arena, pool) catch return problem.set("out of memory building pool {s}", .{pool.name}),
            .shared = undefined,
            .locals = arena.alloc(LocalPool, generations.loops.len) catch return problem.set("out of memory building pool {s}", .{pool.name}),
            .queue_slots = slots,
        };
        instance.shared.init(arena, &instance.config) catch return problem.set("out of memory building pool {s}", .{pool.name});
        errdefer instance.deinitOutsideArena(); // Its tables, and its TLS once made.
        instance.initMembership(arena) catch return problem.set("out of memory building pool {s}", .{pool.name});
        if (instance.config.tls.enabled) {
            const backend_tls = arena.create(BackendTls) catch return problem.set("out of memory building pool {s}", .{pool.name});
            var diagnostic: tls.certificate.Diagnostic = .{};
            backend_tls.init(arena, &instance.config, instance.shared.count(), generations.loops.len, &diagnostic) catch |err| return switch (err) {
                error.OutOfMemory => problem.set("out of memory building pool {s}", .{pool.name}),
                error.Invalid => problem.set("pool {s}: tls: {s}", .{ pool.name, diagnostic.message() }),
            };
            instance.tls = backend_tls;
        }
        if (old) |from| for (instance.config.backends(), 0..) |*backend, index| {
            const from_index = Pool.backendIndexIn(from, backend) orelse continue;
            instance.shared.health.carryOver(@intCast(index), &from.shared.health, from_index);
        };
        const now_ns = sys.clockMonotonicNs();
        for (instance.locals, generations.loops, 0..) |*upstream, loop, worker_index| {
            upstream.init(arena, loop, &instance.config, &instance.shared, Proxy.exchangesCount(generations.sessions_count), worker_index, now_ns) catch
                return problem.set("out of memory building pool {s}", .{pool.name});
            if (instance.tls) |backend_tls| upstream.initTls(backend_tls, worker_index);
        }
        if (old) |from| {
            // The pool's counters go on from where they were, for the backends that stay; what
            // the old instance counts from now on moves over when it is let go of.
            const accounted = generations.accountedOf(from) catch return problem.set("out of memory building pool {s}", .{pool.name});
            var map: [Config.backends_count_max]?u16 = undefined;
            const backend_map = Pool.backendMap(instance, from, &map);
            for (instance.locals, from.locals, accounted.locals) |*upstream, *before, *done| {
                upstream.transferCounts(.carry, before, done, backend_map);
            }
            instance.shared.health.stats.transfer(.carry, &from.shared.health.stats, &accounted.health);
        }
        instance.arena = arena_state;
        return instance;
    }

    /// The instance for `handler`: the previous generation's of the same name when its file and
    /// limits are unchanged, else a new one (compiled, every worker's engine made). A mistake
    /// is the problem, as `sluice check` words it (`FILE:LINE:COL: message` for a compile
    /// error).
    fn handlerFor(
        generations: *Generations,
        handler: *const Config.Handler,
        previous: ?*Built,
        problem: *Problem,
    ) error{BuildFailed}!*HandlerInstance {
        const slot = generations.handlerSlot(handler.name) orelse return problem.set(
            "more than {d} handler names since start-up; restart to add handler {s}",
            .{ HandlerInstance.slots_max, handler.name },
        );
        const old = if (previous) |built| built.generation.handlerNamed(handler.name) else null;
        var diagnostic: std.Io.Writer = .fixed(&problem.buffer);
        return HandlerInstance.make(std.heap.page_allocator, handler, old, slot, generations.handler_tallies, &diagnostic) catch |err| switch (err) {
            error.OutOfMemory => problem.set("out of memory compiling handler {s}", .{handler.name}),
            error.Invalid => {
                problem.len = diagnostic.end;
                problem.config_mistake = true;
                return error.BuildFailed;
            },
        };
    }

    /// The tally slot of a handler name, taken now if the name is new; null when every slot
    /// has a name.
    fn handlerSlot(generations: *Generations, name: []const u8) ?u8 {
        if (generations.handlerSlotOf(name)) |slot| return slot;
        if (generations.handler_names_count == HandlerInstance.slots_max) return null;
        const slot = &generations.handler_names[generations.handler_names_count];
        assert(name.len <= slot.bytes.len); // Config.validate.
        @memcpy(slot.bytes[0..name.len], name);
        slot.len = @intCast(name.len);
        generations.handler_names_count += 1;
        return @intCast(generations.handler_names_count - 1);
    }

    /// The tally slot of a handler name a generation has had.
    pub fn handlerSlotOf(generations: *const Generations, name: []const u8) ?u8 {
        for (generations.handler_names[0..generations.handler_names_count], 0..) |*known, i| {
            if (std.mem.eql(u8, known.text(), name)) return @intCast(i);
        }
        return null;
    }

    /// The previous generation's slot for `address`. Only the previous generation's: a slot
    /// an older one had and it dropped has been closed by the workers that adopted it.
    /// The live listener a reload keeps for `address`: the one configured the same, or the one
    /// bound there (a listener configured with port 0, now named by the port it got). Opening
    /// a second socket on an address that one holds, then closing the old, would reset the
    /// connections waiting in the old socket's accept queue.
    fn findSlot(generations: *const Generations, previous: ?*Built, address: *const Address) ?u8 {
        const built = previous orelse return null;
        for (built.generation.listener_slots) |index| {
            const slot = &generations.listeners.slots[index];
            if (slot.configured.eql(address)) return index;
            if (address.getPort() != 0 and slot.bound.eql(address)) return index;
        }
        return null;
    }

    /// Binds one socket per worker (SO_REUSEPORT) in a free slot: the first one alone
    /// (`listenFirst`), so an address another process holds is refused, then the others join
    /// it. Port 0: the first socket's port is every other's.
    fn openSlot(generations: *Generations, address: *const Address, workers_count: usize, problem: *Problem) error{BuildFailed}!u8 {
        const index = for (&generations.listeners.slots, 0..) |*slot, i| {
            if (slot.refs == 0) break i;
        } else return problem.set("more than {d} listeners in use across generations", .{ListenerTable.slots_max});
        const slot = &generations.listeners.slots[index];
        slot.configured = address.*;
        slot.bound = address.*;
        for (slot.fds[0..workers_count], 0..) |*fd, i| {
            const opened = if (i == 0) generations.listenFirst(&slot.bound) else listen(&slot.bound, .join);
            fd.* = opened catch |err| {
                for (slot.fds[0..i]) |done| sys.close(done);
                var text: [Address.text_bytes_max]u8 = undefined;
                return problem.set("cannot listen on {s}: {s}", .{ slot.bound.toText(&text), sys.listenerErrorText(err) });
            };
            if (i == 0 and slot.bound.getPort() == 0) {
                var storage: linux.sockaddr.storage = undefined;
                _ = sys.getsockname(fd.*, &storage) catch |err| {
                    sys.close(fd.*);
                    return problem.set("getsockname failed: {s}", .{@errorName(err)});
                };
                slot.bound.setPort(Address.fromStorage(&storage).getPort());
            }
        }
        return @intCast(index);
    }

    /// The first socket of a new slot, bound without SO_REUSEPORT: the bind fails when any
    /// other socket holds the port, so a second sluice (or anything else) on the address is
    /// refused instead of silently sharing its traffic through SO_REUSEPORT.
    ///
    /// Exception: when one of our own live slots has the port (a reload moves `127.0.0.1:P` to
    /// `0.0.0.0:P`, or adds back an address a worker has not yet closed after the previous
    /// reload dropped it; or one file lists both), our own sockets are what refused it, so it
    /// binds again joining with SO_REUSEPORT, as before this check. That join can only succeed
    /// beside sockets that also set SO_REUSEPORT under our user, and sockets on a different
    /// address of the same port do not share its traffic.
    fn listenFirst(generations: *const Generations, address: *const Address) sys.ListenerError!linux.fd_t {
        return listen(address, .exclusive) catch |err| switch (err) {
            error.AddressInUse => if (generations.holdsPort(address.getPort())) listen(address, .join) else err,
            else => err,
        };
    }

    /// Whether a live slot of ours is bound to `port` (on any address).
    fn holdsPort(generations: *const Generations, port: u16) bool {
        if (port == 0) return false;
        for (&generations.listeners.slots) |*slot| {
            if (slot.refs > 0 and slot.bound.getPort() == port) return true;
        }
        return false;
    }

    /// A slot a failed build had taken: closed if the build had opened it.
    fn unrefSlot(generations: *Generations, index: u8) void {
        const slot = &generations.listeners.slots[index];
        slot.refs -= 1;
        if (slot.refs > 0) return;
        // No worker has seen it: its descriptors are still ours.
        for (slot.fds[0..generations.loops.len]) |fd| sys.close(fd);
    }

    /// A pool instance no generation uses any more: every worker is done with it (or none
    /// ever saw it, after a failed build). Freed now, or once its checker has stopped.
    /// Where `from` records what its successors took of its counts, made in its own arena the
    /// first time a reload replaces it.
    fn accountedOf(generations: *const Generations, from: *Pool) error{OutOfMemory}!*Pool.Accounted {
        if (from.accounted) |accounted| return accounted;
        const arena = from.arena.allocator();
        const accounted = try arena.create(Pool.Accounted);
        accounted.* = .{ .locals = try arena.alloc(LocalPool.Accounted, generations.loops.len) };
        @memset(accounted.locals, .{});
        for (accounted.locals) |*local| try local.stats.initBackends(arena, from.shared.count());
        from.accounted = accounted;
        return accounted;
    }

    fn unref(generations: *Generations, instance: *Pool) void {
        instance.refs -= 1;
        if (instance.refs > 0) return;
        if (instance.checker == null and instance.retired_checkers_count == 0) return generations.freeInstance(instance);
        if (instance.checker) |checker| checker.stop();
        assert(generations.retired_count < retired_max);
        generations.retired[generations.retired_count] = instance;
        generations.retired_count += 1;
    }

    /// Frees every old generation no worker holds any more, and every retired pool instance
    /// whose checker has stopped. True while something is still waiting.
    pub fn reap(generations: *Generations) bool {
        var kept: u32 = 0;
        for (generations.live[0..generations.live_count], 0..) |built, i| {
            const is_current = i == generations.live_count - 1;
            // A generation whose TLS contexts would not fit among the retired ones waits (with
            // its contexts) until some of theirs end: bounded either way.
            if (!is_current and built.generation.holders.load(.acquire) == 0 and
                tlsInUse(built) <= retired_servers_max - generations.retired_servers_count)
            {
                generations.free(built);
                continue;
            }
            generations.live[kept] = built;
            kept += 1;
        }
        generations.live_count = kept;
        kept = 0;
        for (generations.retired[0..generations.retired_count]) |instance| {
            const checker_stopped = if (instance.checker) |checker| checker.stopped() else true;
            // The checkers a membership change replaced, stopped with it: freed as they stop.
            const replaced_waiting = instance.reapCheckers();
            if (!checker_stopped or replaced_waiting) {
                generations.retired[kept] = instance;
                kept += 1;
                continue;
            }
            if (instance.checker) |checker| checker.destroy();
            generations.freeInstance(instance);
        }
        generations.retired_count = kept;
        kept = 0;
        for (generations.retired_servers[0..generations.retired_servers_count]) |server| {
            if (server.engines_live.load(.acquire) == 0) {
                freeServer(server);
                continue;
            }
            generations.retired_servers[kept] = server;
            kept += 1;
        }
        generations.retired_servers_count = kept;
        // The current pools' membership: old tables, draining slots, replaced checkers.
        var members_waiting = false;
        if (generations.live_count > 0) for (generations.current().generation.pools) |instance| {
            if (instance.reapMembers()) members_waiting = true;
        };
        return generations.live_count > 1 or generations.retired_count > 0 or kept > 0 or members_waiting;
    }

    /// No generation uses `instance` and its checker has stopped: its health counts since a
    /// successor took them move into the instance of its name current now, and it is freed.
    /// (Its workers moved their own counts as they let go of it: Proxy.releaseIdleHolds.)
    fn freeInstance(generations: *Generations, instance: *Pool) void {
        if (instance.accounted) |accounted| if (generations.currentPool(instance.config.name)) |to| {
            if (to != instance) to.shared.health.stats.transfer(.move, &instance.shared.health.stats, &accounted.health);
        };
        instance.deinitOutsideArena();
        var arena = instance.arena;
        arena.deinit();
    }

    /// The current generation's pool named `name`, if it has one.
    fn currentPool(generations: *const Generations, name: []const u8) ?*Pool {
        if (generations.live_count == 0) return null;
        for (generations.current().generation.pools) |instance| {
            if (std.mem.eql(u8, instance.config.name, name)) return instance;
        }
        return null;
    }

    fn free(generations: *Generations, built: *Built) void {
        const config = built.generation.config;
        for (0..config.routes_count) |index| {
            const label = config.routeLabel(index);
            const newest = generations.current().generation.config;
            generations.route_totals.add(label, built.generation.routeRequests(label), newest);
            generations.route_rate_limited_totals.add(label, built.generation.routeRateLimited(label), newest);
        }
        for (built.generation.pools) |instance| generations.unref(instance);
        for (built.generation.handlers) |instance| instance.unref();
        for (built.generation.tls_servers) |server| if (server) |s| {
            if (s.engines_live.load(.acquire) == 0) {
                freeServer(s);
            } else {
                assert(generations.retired_servers_count < retired_servers_max); // `reap` made room.
                generations.retired_servers[generations.retired_servers_count] = s;
                generations.retired_servers_count += 1;
            }
        };
        // Every worker adopted a newer generation: those without a slot closed its sockets.
        for (built.generation.listener_slots) |index| generations.listeners.slots[index].refs -= 1;
        var arena = built.arena;
        arena.deinit();
    }

    fn alpnProtocols(http2: bool, http1: bool) []const []const u8 {
        if (http2 and http1) return &.{ "h2", "http/1.1" };
        if (http2) return &.{"h2"};
        if (http1) return &.{"http/1.1"};
        return &.{};
    }

    /// A listener's TLS context, its files read now (so a reload picks up renewed
    /// certificates); a file that cannot be read or loaded refuses the build, naming the file.
    fn loadServer(generations: *const Generations, settings: *const Config.Tls, http2: bool, problem: *Problem) error{BuildFailed}!*tls.ServerContext {
        // Made at start-up, or by the reload that brings the first HTTPS listener.
        const keys = generations.ticket_keys.?;
        var files_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
        defer files_state.deinit(); // AWS-LC keeps what it parsed; the text is not needed after.
        const files = files_state.allocator();
        var sources: [Config.certificates_count_max]tls.certificate.Source = undefined;
        for (settings.certificates(), sources[0..settings.certificates_count]) |*certificate, *source| {
            source.* = .{
                .cert_pem = try readFile(files, certificate.cert, problem),
                .key_pem = try readFile(files, certificate.key, problem),
                .cert_name = certificate.cert,
                .key_name = certificate.key,
            };
            if (certificate.ocsp.len > 0) {
                source.ocsp_der = try readFile(files, certificate.ocsp, problem);
                source.ocsp_name = certificate.ocsp;
            }
        }
        const client_certificates: ?tls.ServerContext.ClientCertificates = if (settings.client_ca.len > 0) .{
            .ca_pem = try readFile(files, settings.client_ca, problem),
            .ca_name = settings.client_ca,
            .verify = switch (settings.client_verify) {
                .required => .required,
                .optional => .optional,
            },
        } else null;
        const server = std.heap.page_allocator.create(tls.ServerContext) catch return outOfMemory(problem);
        errdefer std.heap.page_allocator.destroy(server);
        var diagnostic: tls.certificate.Diagnostic = .{};
        server.init(std.heap.page_allocator, .{
            .certificates = sources[0..settings.certificates_count],
            // Server preference: h2 first, as nginx, HAProxy and Caddy prefer it.
            .alpn = alpnProtocols(http2, settings.alpn_http1),
            .min_version = switch (settings.min_version) {
                .@"1.2" => .tls1_2,
                .@"1.3" => .tls1_3,
            },
            .ticket_keys = keys,
            .client_certificates = client_certificates,
        }, &diagnostic) catch |err| switch (err) {
            error.OutOfMemory => return outOfMemory(problem),
            error.Invalid => return problem.setMistake("{s}", .{diagnostic.message()}),
        };
        return server;
    }
};

/// Requests each route took in generations already freed, by the route's label (its name,
/// else its position): `/metrics` adds the live generations' counts to these, so a route's
/// count goes on across reloads and none is lost with the generation that counted it.
/// One counter per route per worker, each worker's row on cache lines of its own (each row is
/// written by one worker).
fn routeCounters(arena: std.mem.Allocator, workers_count: usize, routes_count: u32) error{OutOfMemory}![]const []Counter {
    const rows = try arena.alloc([]Counter, workers_count);
    for (rows) |*row| {
        const cells = std.mem.alignForward(usize, @max(1, routes_count), 8);
        const cells_aligned = try arena.alignedAlloc(Counter, .@"64", cells);
        @memset(cells_aligned, .{});
        row.* = cells_aligned[0..routes_count];
    }
    return rows;
}

pub const RouteTotals = struct {
    entries: [entries_max]Entry = undefined,
    count: u32 = 0,

    /// Room for every label of several configurations: a reload renames at most 64 routes.
    pub const entries_max = 4 * Config.routes_count_max;

    const Entry = struct {
        label: [Config.route_name_bytes_max]u8,
        label_len: u8,
        requests: u64,

        fn text(entry: *const Entry) []const u8 {
            return entry.label[0..entry.label_len];
        }
    };

    pub fn get(totals: *const RouteTotals, label: []const u8) u64 {
        const entry = totals.find(label) orelse return 0;
        return entry.requests;
    }

    /// Adds to `label`'s total. With the table full, the entry of a label that `current` does
    /// not have is given to it: that label's count restarts if a later reload brings it back.
    pub fn add(totals: *RouteTotals, label: []const u8, requests: u64, current: *const Config) void {
        assert(label.len <= Config.route_name_bytes_max);
        if (requests == 0) return;
        if (@constCast(totals.find(label))) |entry| {
            entry.requests += requests;
            return;
        }
        const entry = if (totals.count < entries_max) blk: {
            totals.count += 1;
            break :blk &totals.entries[totals.count - 1];
        } else totals.unused(current) orelse return; // Unreachable: `current` has 64 labels at most.
        entry.* = .{ .label = undefined, .label_len = @intCast(label.len), .requests = requests };
        @memcpy(entry.label[0..label.len], label);
    }

    fn find(totals: *const RouteTotals, label: []const u8) ?*const Entry {
        for (totals.entries[0..totals.count]) |*entry| {
            if (std.mem.eql(u8, entry.text(), label)) return entry;
        }
        return null;
    }

    fn unused(totals: *RouteTotals, current: *const Config) ?*Entry {
        entries: for (totals.entries[0..totals.count]) |*entry| {
            for (0..current.routes_count) |index| {
                if (std.mem.eql(u8, current.routeLabel(index), entry.text())) continue :entries;
            }
            return entry;
        }
        return null;
    }
};

/// A handler name, kept by its tally slot.
pub const HandlerName = struct {
    bytes: [Config.handler_name_bytes_max]u8,
    len: u8,

    pub fn text(name: *const HandlerName) []const u8 {
        return name.bytes[0..name.len];
    }
};

/// How many of the generation's TLS contexts a connection still uses (its engine reads the
/// context: the SNI callback, and the count it gives back when it ends).
fn tlsInUse(built: *const Built) u32 {
    var count: u32 = 0;
    for (built.generation.tls_servers) |server| if (server) |s| {
        if (s.engines_live.load(.acquire) > 0) count += 1;
    };
    return count;
}

fn freeServer(server: *tls.ServerContext) void {
    server.deinit();
    std.heap.page_allocator.destroy(server);
}

fn readFile(arena: std.mem.Allocator, path: []const u8, problem: *Problem) error{BuildFailed}![]const u8 {
    var why: []const u8 = undefined;
    return tls.certificate.readFileOrWhy(arena, path, &why) catch |err| switch (err) {
        error.OutOfMemory => outOfMemory(problem),
        error.CannotRead => problem.setMistake("{s}: {s}", .{ path, why }),
    };
}

fn outOfMemory(problem: *Problem) error{BuildFailed} {
    return problem.set("out of memory building the configuration", .{});
}

const listen_backlog = 4096;

/// How a listening socket binds its address.
pub const Bind = enum {
    /// Without SO_REUSEPORT, which is set only after the bind: the bind fails if any other
    /// socket holds the port (a plain listener, or another process's reuseport group), and
    /// for port 0 the kernel picks a port nobody holds (with SO_REUSEPORT set first, Linux may
    /// hand out a port one of our other reuseport listeners already has).
    exclusive,
    /// With SO_REUSEPORT set first: joins the group a socket of ours already bound.
    join,
};

/// A listening socket for `address`, SO_REUSEPORT so every worker can bind its own.
pub fn listen(address: *const Address, mode: Bind) sys.ListenerError!linux.fd_t {
    assert(mode == .exclusive or address.getPort() != 0);
    const fd = try sys.socket(
        address.family(),
        linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC,
        0,
    );
    errdefer sys.close(fd);
    // SO_REUSEADDR: connections of an earlier process still in TIME_WAIT do not block a
    // restart. (It never lets a bind succeed beside a listening socket.)
    try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEADDR, 1);
    if (mode == .join) try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEPORT, 1);
    try sys.bind(fd, address.sockaddr(), address.socklen());
    if (mode == .exclusive) try sys.setsockoptInt(fd, linux.SOL.SOCKET, linux.SO.REUSEPORT, 1);
    try sys.listen(fd, listen_backlog);
    return fd;
}

/// The first setting a reload may not change (they size the workers or are opened once: the
/// rows of config/settings.zig marked `.restart`) that differs, by its key in a config file;
/// null when none changed.
pub fn restartOnlyChange(old: *const Config, new: *const Config) ?[]const u8 {
    const settings = @import("../config/settings.zig");
    inline for (settings.table) |setting| {
        if (setting.scope == .global and setting.reload == .restart and !settings.sameValue(setting, old, new)) {
            return comptime restartName(setting);
        }
    }
    return null;
}

/// A setting as a reload's refusal names it: its file key, or its flag when it has none.
fn restartName(comptime setting: @import("../config/settings.zig").Setting) []const u8 {
    return if (setting.key) |key| key else "--" ++ setting.flag.?;
}

test "generations: restart-only settings are named by their key" {
    var a: Config = .{};
    var b: Config = .{};
    try std.testing.expectEqual(@as(?[]const u8, null), restartOnlyChange(&a, &b));
    b.workers_count = 2;
    try std.testing.expectEqualStrings("workers", restartOnlyChange(&a, &b).?);
    b = .{};
    b.header_bytes_max = 8192;
    try std.testing.expectEqualStrings("limits.header_bytes_max", restartOnlyChange(&a, &b).?);
    b = .{};
    b.access_log.target = "stdout";
    try std.testing.expectEqualStrings("access_log.target", restartOnlyChange(&a, &b).?);
    b = .{};
    b.admin.enabled = true;
    try std.testing.expectEqualStrings("admin", restartOnlyChange(&a, &b).?);
    b = .{};
    try b.addTrustedProxy(try @import("../config/Cidr.zig").parse("10.0.0.0/8"));
    try std.testing.expectEqualStrings("trusted_proxies", restartOnlyChange(&a, &b).?);
    a = b;
    _ = a.quickPool(); // Pools, listeners and routes may change.
    try std.testing.expectEqual(@as(?[]const u8, null), restartOnlyChange(&a, &b));
    // So may the settings read per request from the generation, and the log level.
    b.header_underscores = .allow;
    b.request_body_bytes_max = 1024;
    b.tunnel_idle_timeout_ns = std.time.ns_per_s;
    b.log_level = .warn;
    try std.testing.expectEqual(@as(?[]const u8, null), restartOnlyChange(&a, &b));
}

test "generations: a change to any restart-only setting refuses the reload, naming it" {
    const settings = @import("../config/settings.zig");
    inline for (settings.table) |setting| {
        if (setting.reload != .restart) continue;
        var changed: Config = .{};
        const field = settings.fieldPointer(setting.fields[0], &changed);
        switch (@typeInfo(@TypeOf(field.*))) {
            .int => field.* +%= 1,
            .@"enum" => for (std.enums.values(@TypeOf(field.*))) |tag| {
                if (tag == field.*) continue;
                field.* = tag;
                break;
            },
            .pointer => field.* = "changed",
            .@"struct" => field.enabled = !field.enabled, // The admin listener.
            .array => if (comptime std.mem.eql(u8, setting.fields[0], "resolvers_buffer"))
                try changed.addResolver("10.0.0.2")
            else
                try changed.addTrustedProxy(try @import("../config/Cidr.zig").parse("10.0.0.0/8")),
            else => comptime unreachable,
        }
        try std.testing.expectEqualStrings(comptime restartName(setting), restartOnlyChange(&.{}, &changed).?);
    }
    // Handlers, their files and their limits may change: a reload compiles them again.
    var before: Config = .{};
    try before.setHandler(.{ .name = "app", .path = "app.js" });
    var after = before;
    after.handlers_buffer[0].depth += 1;
    after.handlers_buffer[0].path = "other.js";
    try after.setHandler(.{ .name = "other", .path = "other.js" });
    try std.testing.expectEqual(@as(?[]const u8, null), restartOnlyChange(&before, &after));
}

test "generations: a listener refuses a port another socket holds and joins its own" {
    var address = try Address.parse("127.0.0.1:0");
    const first = try listen(&address, .exclusive);
    defer sys.close(first);
    var storage: linux.sockaddr.storage = undefined;
    _ = try sys.getsockname(first, &storage);
    address.setPort(Address.fromStorage(&storage).getPort());

    // Another worker of ours joins the group.
    const worker = try listen(&address, .join);
    defer sys.close(worker);
    // A second sluice binds alone first, and is refused.
    try std.testing.expectError(error.AddressInUse, listen(&address, .exclusive));
    // The same port on every address overlaps ours too.
    var wildcard = try Address.parse(":0");
    wildcard.setPort(address.getPort());
    try std.testing.expectError(error.AddressInUse, listen(&wildcard, .exclusive));

    // A plain listener (no SO_REUSEPORT) cannot be joined either.
    const plain = try sys.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC, 0);
    defer sys.close(plain);
    var other = try Address.parse("127.0.0.1:0");
    try sys.bind(plain, other.sockaddr(), other.socklen());
    try sys.listen(plain, 1);
    _ = try sys.getsockname(plain, &storage);
    other.setPort(Address.fromStorage(&storage).getPort());
    try std.testing.expectError(error.AddressInUse, listen(&other, .exclusive));
    try std.testing.expectError(error.AddressInUse, listen(&other, .join));
}

test "initZeroed: zeroed memory holds the same defined defaults as a literal" {
    const memory = try StaticAllocator.allocUntouched(std.testing.allocator, Generations, null, 1);
    defer std.testing.allocator.free(memory);
    @memset(std.mem.sliceAsBytes(memory), 0); // The test allocator's memory is not fresh.
    memory[0].initZeroed(&.{}, 7, &.{});
    const literal: Generations = .{ .loops = &.{}, .sessions_count = 7 };
    const zeroed = &memory[0];
    try std.testing.expectEqual(literal.sessions_count, zeroed.sessions_count);
    try std.testing.expectEqual(literal.next_number, zeroed.next_number);
    try std.testing.expectEqual(literal.live_count, zeroed.live_count);
    try std.testing.expectEqual(literal.retired_count, zeroed.retired_count);
    try std.testing.expectEqual(literal.timeouts.count, zeroed.timeouts.count);
    try std.testing.expectEqual(literal.handler_names_count, zeroed.handler_names_count);
    for (literal.listeners.slots, zeroed.listeners.slots) |want, got| try std.testing.expectEqual(want.refs, got.refs);
    // The handler tallies are made zeroed too: a fresh tally is all zeros.
    const fresh: HandlerInstance.TallyRow = .{ .tallies = @splat(.{}) };
    try std.testing.expect(std.mem.allEqual(u8, std.mem.asBytes(&fresh), 0));
}
test "generations: a new slot joins a port only when one of our live slots holds it" {
    var generations: Generations = .{ .loops = &.{}, .sessions_count = 1 };
    var address = try Address.parse("127.0.0.1:0");
    const ours = try listen(&address, .exclusive);
    defer sys.close(ours);
    var storage: linux.sockaddr.storage = undefined;
    _ = try sys.getsockname(ours, &storage);
    address.setPort(Address.fromStorage(&storage).getPort());
    var wildcard = try Address.parse(":0");
    wildcard.setPort(address.getPort());

    // Not ours (no live slot has the port): refused, as another process's would be.
    try std.testing.expectError(error.AddressInUse, generations.listenFirst(&wildcard));
    // Ours: a reload moving 127.0.0.1:P to 0.0.0.0:P binds beside the old slot.
    generations.listeners.slots[3] = .{ .refs = 1, .configured = address, .bound = address };
    const moved = try generations.listenFirst(&wildcard);
    sys.close(moved);
}
