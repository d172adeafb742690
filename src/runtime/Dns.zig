//! Backends by name (`--backend api.internal:8080`): the control thread keeps every name the
//! pools give resolved (dns/Watch.zig on the control loop, with our own resolver), and turns
//! each change of a name's addresses into a membership change of the pools that name it
//! (`Pool.changeMembers`, the path a reload that edits a member list takes), then wakes the
//! workers. A pool's members are its addresses as written plus, for each name, one member per
//! address it resolves to, with that entry's weight and caps (`expand`).
//!
//! Decisions:
//! - Made only when a configuration has a name (at start-up, or by the first reload that
//!   brings one), so a process with addresses alone reads no resolv.conf and opens nothing.
//! - Start-up waits for the first answers at most `startup_wait_ns`; a name still without one
//!   leaves its pool without those members (a pool with none answers 503, saying why) until it
//!   resolves. Cold start with addresses alone does not wait at all.
//! - A failed resolution keeps the last good set (dns/Watch.zig), so a DNS outage never empties
//!   a pool. Each change of a name's state is logged once.
//! - A name is watched from the first configuration that gives it for the process's life (its
//!   entry's text is what the members' `host_name` point to, for SNI); one that no pool names
//!   any more is simply not asked again. At most `names_max` names (with their port) since
//!   start-up: a reload past it is refused, as one past the distinct timeouts is.
//! - A change that does not fit the pool's slots now (members that left are still draining)
//!   is tried again every second until it does.
//!
//! Memory: made once, in pages untouched until used: `names_max` watch entries (21 KiB
//! each: a reply of 32 records, two sets of 64 addresses, an SRV name's 32 targets),
//! `slots_count` resolver slots (9.1 KiB each), /etc/hosts' 64 KiB and resolv.conf's 16 KiB
//! buffers, and the 64 KiB list a pool's members are expanded into.
const Dns = @This();

const std = @import("std");

const log = @import("../stdx/log.zig");
const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("../config/Config.zig");
const Members = @import("../upstream/Members.zig");
const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Timer = loop_ns.Timer;
const TimerQueue = loop_ns.TimerQueue;
const dns = @import("../dns/dns.zig");
const Resolver = dns.Resolver;
const Watch = dns.Watch;
const ResolvConf = dns.ResolvConf;
const Hosts = dns.Hosts;

loop: *Loop,
resolver: Resolver,
watch: Watch,
entries: []Watch.Entry,
slots: []Resolver.Slot,
conf_buffer: [ResolvConf.file_bytes_max]u8,
hosts_buffer: [Hosts.file_bytes_max]u8,
/// Where `expand` writes a pool's members: one list at a time, on the control thread, used
/// before the next (in the untouched pages with the rest, so a process without names and a
/// build of a pool without them never touch it).
scratch: [Config.backends_count_max]Config.Backend,
/// Set by a change that did not fit a pool; `retry_timer` applies them again.
retry_queue: TimerQueue = .init(retry_ns),
retry_timer: Timer = .{},
/// What applies a changed set to the pools: the supervisor (runtime/Supervisor.zig), once
/// there are pools (`attach`); start-up's first answers are read by the first build instead.
context: ?*anyopaque = null,
apply: *const fn (*anyopaque) void = undefined,

/// Distinct names (with their port) since start-up.
pub const names_max = 64;
/// Resolutions in flight at once; a name due while all are busy waits for the next tick.
pub const slots_count = 16;
pub const startup_wait_ns = 2 * std.time.ns_per_s;
const retry_ns = std.time.ns_per_s;

pub const InitError = error{ OutOfMemory, ResolvConfInvalid, HostsInvalid, TooManyNames };

/// Made in pages from `page_allocator`, untouched until used (see the header). Reads
/// resolv.conf (its nameservers replaced by `--resolver`s when given) and /etc/hosts, and
/// starts watching the names `config` gives. A mistake in either file is logged with its line.
pub fn create(loop: *Loop, config: *const Config) InitError!*Dns {
    // Counted first: once the watch is on the loop, nothing here may fail and free it.
    if (namesCount(config) > names_max) return error.TooManyNames;
    const page = std.heap.page_allocator;
    const d = &(try StaticAllocator.allocUntouched(page, Dns, null, 1))[0];
    errdefer page.free(@as([*]Dns, @ptrCast(d))[0..1]);
    const entries = try StaticAllocator.allocUntouched(page, Watch.Entry, null, names_max);
    errdefer page.free(entries);
    const slots = try StaticAllocator.allocUntouched(page, Resolver.Slot, null, slots_count);
    errdefer page.free(slots);
    d.loop = loop;
    d.entries = entries;
    d.slots = slots;
    d.retry_queue = .init(retry_ns);
    d.retry_timer = .{};
    d.context = null;

    var diagnostic: dns.Diagnostic = .{};
    var conf = ResolvConf.load(ResolvConf.path_default, &d.conf_buffer, &diagnostic) catch |err| switch (err) {
        // No resolv.conf: the libcs' defaults (nameserver 127.0.0.1).
        error.CannotRead => ResolvConf.parse("", ResolvConf.path_default, &diagnostic) catch unreachable,
        error.Invalid => {
            log.err("{f}", .{diagnostic});
            return error.ResolvConfInvalid;
        },
    };
    if (config.resolvers_count > 0) {
        for (config.resolvers(), 0..) |address, i| conf.nameservers[i] = address;
        conf.nameservers_count = @intCast(config.resolvers_count);
    }
    const hosts: ?Hosts = Hosts.load("/etc/hosts", &d.hosts_buffer, &diagnostic) catch |err| switch (err) {
        error.CannotRead => null,
        error.Invalid => {
            log.err("{f}", .{diagnostic});
            return error.HostsInvalid;
        },
    };
    d.resolver.init(loop, conf, hosts, slots, .{});
    d.watch.init(loop, &d.resolver, &.{}, entries, watchOptions(config), Dns, d, reported) catch unreachable; // No names yet.
    loop.timerQueueRegister(&d.retry_queue);
    d.want(config) catch unreachable; // Counted above.
    d.watch.startDue();
    return d;
}

/// Distinct names (with their port) in `config`'s pools, counted up to one past `names_max`.
/// Quadratic over the entries, on the control thread at start-up or a reload.
fn namesCount(config: *const Config) usize {
    var count: usize = 0;
    for (config.pools(), 0..) |*pool, p| for (pool.backends(), 0..) |*backend, b| {
        if (!backend.by_name) continue;
        if (seenBefore(config, p, b)) continue;
        count += 1;
        if (count > names_max) return count; // Enough to refuse.
    };
    return count;
}

fn seenBefore(config: *const Config, pool_index: usize, backend_index: usize) bool {
    const named = &config.pools()[pool_index].backends()[backend_index];
    for (config.pools()[0 .. pool_index + 1], 0..) |*pool, p| {
        const end = if (p == pool_index) backend_index else pool.backends().len;
        for (pool.backends()[0..end]) |*other| {
            if (other.by_name and other.port == named.port and std.ascii.eqlIgnoreCase(other.host_name, named.host_name)) return true;
        }
    }
    return false;
}

/// From now on a change of a name's set calls `apply(context)`.
pub fn attach(d: *Dns, comptime Context: type, context: *Context, comptime apply: fn (*Context) void) void {
    const Erased = struct {
        fn call(erased: *anyopaque) void {
            apply(@ptrCast(@alignCast(erased)));
        }
    };
    d.context = context;
    d.apply = Erased.call;
}

/// Waits on the loop until every name has had its first outcome or `timeout_ns` passed.
pub fn waitSettled(d: *Dns, timeout_ns: u64) void {
    const deadline = d.loop.now_ns + timeout_ns;
    while (!d.settled() and d.loop.now_ns < deadline) {
        d.loop.tick() catch return; // Start-up goes on; the watch resolves later.
    }
}

pub fn initErrorText(err: InitError) []const u8 {
    return switch (err) {
        error.OutOfMemory => "out of memory",
        error.ResolvConfInvalid => "/etc/resolv.conf cannot be read (logged)",
        error.HostsInvalid => "/etc/hosts cannot be read (logged)",
        error.TooManyNames => std.fmt.comptimePrint("more than {d} backend names", .{names_max}),
    };
}

/// The TTL bounds; a failure is asked again after 5 s, or within the bounds when they say
/// otherwise (a name kept at most 1 s is asked again 1 s after a failure).
fn watchOptions(config: *const Config) Watch.Options {
    const floor = config.dns_ttl_min_ns;
    const ceiling = @max(floor, config.dns_ttl_max_ns);
    return .{
        .ttl_floor_ns = floor,
        .ttl_ceiling_ns = ceiling,
        .retry_ns = std.math.clamp(failure_retry_ns, floor, ceiling),
    };
}

const failure_retry_ns = 5 * std.time.ns_per_s;

/// Watches every name `config`'s pools give, besides those already watched (a reload calls it
/// before building, so that the pools it builds find their names; `settle` after).
pub fn want(d: *Dns, config: *const Config) error{TooManyNames}!void {
    for (config.pools()) |*pool| for (pool.backends()) |*backend| {
        if (!backend.by_name) continue;
        _ = d.watch.add(.{ .name = backend.host_name, .port = backend.port }) catch |err| switch (err) {
            error.Full => return error.TooManyNames,
            error.NameInvalid => unreachable, // Config.parseBackendAddress checked it.
        };
    };
}

/// `config` is the one in force: only its names are asked again, with its TTL bounds.
pub fn settle(d: *Dns, config: *const Config) void {
    d.watch.unwantAll();
    d.want(config) catch unreachable; // `want` took them before the build.
    d.watch.options = watchOptions(config);
}

/// Whether every wanted name has had an answer or a failure (start-up's wait).
pub fn settled(d: *const Dns) bool {
    return d.watch.settled();
}

/// `pool`'s members now: its list as written when it has no names (or there is no `Dns`),
/// else `expand`'s.
pub fn membersOf(maybe: ?*Dns, pool: *const Config.Pool) []const Config.Backend {
    const d = maybe orelse return pool.backends();
    if (!hasNames(pool)) return pool.backends();
    return d.expand(pool);
}

/// `pool`'s members now: its addresses as written, then each name's addresses (with the
/// name's entry's weight and caps, `host_name` the watch's stable copy of the name), without
/// duplicates, at most `backends_count_max`, in `scratch` (valid until the next call). A name
/// not resolved yet adds nothing.
pub fn expand(d: *Dns, pool: *const Config.Pool) []const Config.Backend {
    const out = &d.scratch;
    var count: usize = 0;
    for (pool.backends()) |*backend| {
        if (!backend.by_name) {
            if (count == out.len) break;
            out[count] = backend.*;
            count += 1;
            continue;
        }
        const index = d.watch.find(.{ .name = backend.host_name, .port = backend.port }) orelse continue;
        const entry = &d.watch.entries[index];
        const scale = srvScale(entry);
        for (entry.slice(), 0..) |address, i| {
            if (count == out.len) break;
            if (contains(out[0..count], &address)) continue;
            out[count] = backend.*;
            out[count].address = address;
            // An SRV target's certificate is checked against the SRV name, which is stable
            // (the targets change with every answer; `.tls.server_name` overrides it).
            out[count].host_name = entry.name.slice();
            out[count].by_name = false;
            out[count].port = 0;
            if (entry.isSrv()) out[count].weight = srvWeight(entry.weightOf(i), scale);
            count += 1;
        }
    }
    return out[0..count];
}

/// RFC 2782 weights (0 to 65535) as member weights (1 to 1,000): scaled down when the largest
/// is over 1,000, and 0 (a small chance, not none) is 1.
const weight_max: u32 = @import("../config/settings.zig").lookup(.backend, "weight").value.count.max;

fn srvScale(entry: *const Watch.Entry) u32 {
    var largest: u32 = 0;
    for (0..entry.addresses_count) |i| largest = @max(largest, entry.weightOf(i));
    return @max(largest, weight_max);
}

fn srvWeight(weight: u16, scale: u32) u16 {
    return @intCast(@max(1, @as(u32, weight) * weight_max / scale));
}

/// The slots a pool with names is built with: room for every address each name may have
/// (`Watch.addresses_max`) twice over, as for any pool (`Members.slotsFor`).
pub fn slotsFor(pool: *const Config.Pool) u32 {
    var members: u32 = 0;
    for (pool.backends()) |*backend| members += if (backend.by_name) Watch.addresses_max else 1;
    return Members.slotsFor(@min(members, Config.backends_count_max));
}

/// Whether one of `pool`'s names has had no outcome yet (a reload that just added it).
pub fn awaitsFirstAnswer(d: *const Dns, pool: *const Config.Pool) bool {
    for (pool.backends()) |*backend| {
        if (!backend.by_name) continue;
        const index = d.watch.find(.{ .name = backend.host_name, .port = backend.port }) orelse return true;
        if (d.watch.entries[index].state == .pending) return true;
    }
    return false;
}

pub fn hasNames(pool: *const Config.Pool) bool {
    for (pool.backends()) |*backend| if (backend.by_name) return true;
    return false;
}

fn contains(list: []const Config.Backend, address: *const Address) bool {
    for (list) |*backend| if (backend.address.eql(address)) return true;
    return false;
}

/// A change of a name's set or state (dns/Watch.zig): logged, and applied to the pools.
fn reported(d: *Dns, report: Watch.Report) void {
    const entry = &d.watch.entries[report.index];
    var label_buffer: [label_bytes_max]u8 = undefined;
    const name = label(entry, &label_buffer);
    if (report.state_changed) switch (entry.state) {
        .resolved => if (report.previous == .pending)
            log.info("dns {s}: {d} addresses (TTL {d} s)", .{ name, entry.addresses_count, entry.ttl_s })
        else
            log.info("dns {s}: resolves again: {d} addresses", .{ name, entry.addresses_count }),
        .not_found => log.warn("dns {s}: no such name or no address; {s}", .{ name, keeping(entry) }),
        .failing => log.warn("dns {s}: no answer from any server; {s}", .{ name, keeping(entry) }),
        .pending => unreachable,
    } else if (report.set_changed) {
        log.info("dns {s}: now {d} addresses (TTL {d} s)", .{ name, entry.addresses_count, entry.ttl_s });
    }
    if (report.set_changed) if (d.context) |context| d.apply(context);
}

pub const label_bytes_max = 253 + 6;

/// A name as the operator wrote it: `NAME:PORT`, or `srv+NAME`.
pub fn label(entry: *const Watch.Entry, buffer: *[label_bytes_max]u8) []const u8 {
    const name = entry.name.slice();
    return (if (entry.isSrv())
        std.fmt.bufPrint(buffer, "srv+{s}", .{name})
    else
        std.fmt.bufPrint(buffer, "{s}:{d}", .{ name, entry.port })) catch unreachable; // 253 + 6.
}

fn keeping(entry: *const Watch.Entry) []const u8 {
    return if (entry.everResolved()) "keeping its last addresses" else "its pools have no members from it";
}

/// A change did not fit some pool now: applied again in a second.
pub fn retryLater(d: *Dns) void {
    if (d.retry_timer.isArmed()) return;
    d.loop.timerArm(&d.retry_queue, &d.retry_timer, Dns, d, retryCallback);
}

fn retryCallback(d: *Dns) void {
    d.apply(d.context.?);
}

/// For /status and /metrics.
pub fn names(d: *const Dns) []const Watch.Entry {
    return d.watch.entries;
}
