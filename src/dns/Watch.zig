//! Keeps a fixed list of names (a pool's backends by name) resolved on the control loop: each
//! is asked for A then AAAA when its TTL, held between a floor and a ceiling, runs out. A
//! failed resolution keeps the last good set of addresses and is tried again after
//! `retry_ns`; the owner hears once of each change of a name's set and once of each change of
//! its state (so it logs a change of state, not every try), and reads the counts and the last
//! resolution from the entries (for /status and /metrics).
//!
//! This is the part that does not know about pools: the owner turns a changed set into a
//! membership change (`Pool.changeMembers`) and wakes the workers.
//!
//! Memory: the caller gives the entries, one per name (each holds its own `Reply` and two
//! address sets), as many as may ever be watched: a name is added once (`add`) and keeps its
//! entry, and so its text's address, for the watch's life; a name no longer wanted is not
//! asked again (`unwantAll`, then `add` for those still wanted). Nothing is allocated. One timer queue: a tick every `tick_ns` starts the
//! resolutions that are due (TTLs are whole seconds, so a tick of 100 ms adds at most that).
const Watch = @This();

const std = @import("std");
const assert = std.debug.assert;

const loop_namespace = @import("../loop/loop.zig");
const Loop = loop_namespace.Loop;
const Timer = loop_namespace.Timer;
const TimerQueue = loop_namespace.TimerQueue;
const Address = @import("../stdx/Address.zig").Address;
const message = @import("message.zig");
const Resolver = @import("Resolver.zig");

loop: *Loop,
resolver: *Resolver,
/// The entries in use; `storage` holds them and the free ones after.
entries: []Entry,
storage: []Entry,
options: Options,
tick_queue: TimerQueue,
tick_timer: Timer = .{},
stopping: bool = false,
context: *anyopaque,
report: *const fn (*anyopaque, Report) void,

/// A name's set: its A and its AAAA records, each capped by the `Reply`.
pub const addresses_max = 2 * message.records_max;

const ns_per_ms = std.time.ns_per_ms;
const ns_per_s = std.time.ns_per_s;

pub const Options = struct {
    /// A TTL below the floor is read as the floor (0 would ask at every tick).
    ttl_floor_ns: u64 = 1 * ns_per_s,
    /// A TTL above the ceiling is read as the ceiling, so a change is seen within it.
    ttl_ceiling_ns: u64 = 300 * ns_per_s,
    /// After a failed resolution, the next one starts this much later.
    retry_ns: u64 = 5 * ns_per_s,
    /// How often due names are looked for.
    tick_ns: u64 = 100 * ns_per_ms,
};

pub const State = enum {
    /// No resolution has ended yet.
    pending,
    /// The last resolution gave addresses.
    resolved,
    /// The last resolution said the name has no address (NXDOMAIN or no records).
    not_found,
    /// The last resolution got no answer (every server failed, timed out or refused).
    failing,
};

/// What the owner hears after a resolution that changed something.
pub const Report = struct {
    index: u32,
    /// The set of addresses differs from the one before (in any order).
    set_changed: bool,
    /// `state` differs from `previous`.
    state_changed: bool,
    previous: State,
};

pub const Entry = struct {
    watch: *Watch = undefined,
    name: message.Name = .{},
    /// 0: `name` is an SRV name, each of its targets giving its own port and weight.
    port: u16 = 0,
    /// Resolved again when due; false once no pool names it (it keeps its last set).
    wanted: bool = true,
    state: State = .pending,
    /// The last good set (kept through failures), in answer order with duplicates removed,
    /// and for an SRV name each address's weight (its target's).
    addresses: [addresses_max]Address = undefined,
    weights: [addresses_max]u16 = undefined,
    addresses_count: u8 = 0,
    /// The TTL of the last answer, as the server gave it (seconds), and when it came
    /// (`Loop.now_ns`; 0: never).
    ttl_s: u32 = 0,
    resolved_ns: u64 = 0,
    /// When the next resolution starts (`Loop.now_ns`).
    due_ns: u64 = 0,
    /// Resolutions ended, and those of them that failed (not found or no answer).
    resolutions: u64 = 0,
    failures: u64 = 0,
    last_failure: ?Resolver.Failure = null,
    /// The resolution in flight: which question, and the set it is building.
    phase: Phase = .idle,
    next: [addresses_max]Address = undefined,
    next_weights: [addresses_max]u16 = undefined,
    next_count: u8 = 0,
    next_ttl_s: u32 = std.math.maxInt(u32),
    servers_failed: bool = false,
    /// The current name's address came from /etc/hosts: its other family is not asked.
    from_hosts: bool = false,
    reply: message.Reply = .{},
    /// An SRV name's targets of the lowest priority in its answer, and the one being asked.
    targets: [message.records_max]message.Srv = undefined,
    targets_count: u8 = 0,
    target_index: u8 = 0,

    const Phase = enum { idle, a, aaaa, srv, target_a, target_aaaa };

    pub fn slice(entry: *const Entry) []const Address {
        return entry.addresses[0..entry.addresses_count];
    }

    pub fn isSrv(entry: *const Entry) bool {
        return entry.port == 0;
    }

    /// An SRV address's weight (RFC 2782's, 0 to 65535); 0 for a name's own addresses.
    pub fn weightOf(entry: *const Entry, index: usize) u16 {
        return if (entry.isSrv()) entry.weights[index] else 0;
    }

    /// Whether a set was ever found: a name that never resolved has no members.
    pub fn everResolved(entry: *const Entry) bool {
        return entry.resolved_ns != 0;
    }
};

/// A name and its port; port 0 asks SRV records for the name.
pub const Name = struct { name: []const u8, port: u16 };

/// Fills the first of `storage` from `names` and starts the tick; every name is due at once.
/// `error.NameInvalid` for a name that is not a valid DNS name (the caller validated it).
pub fn init(
    watch: *Watch,
    loop: *Loop,
    resolver: *Resolver,
    names: []const Name,
    storage: []Entry,
    options: Options,
    comptime Context: type,
    context: *Context,
    comptime report: fn (*Context, Report) void,
) error{NameInvalid}!void {
    assert(names.len <= storage.len);
    assert(options.ttl_floor_ns > 0 and options.ttl_floor_ns <= options.ttl_ceiling_ns);
    const Erased = struct {
        fn call(erased: *anyopaque, event: Report) void {
            report(@ptrCast(@alignCast(erased)), event);
        }
    };
    for (names, storage[0..names.len]) |name, *entry| try fill(entry, watch, name);
    watch.* = .{
        .loop = loop,
        .resolver = resolver,
        .entries = storage[0..names.len],
        .storage = storage,
        .options = options,
        .tick_queue = .init(options.tick_ns),
        .context = context,
        .report = Erased.call,
    };
    loop.timerQueueRegister(&watch.tick_queue);
    watch.startDue();
    watch.armTick();
}

fn fill(entry: *Entry, watch: *Watch, name: Name) error{NameInvalid}!void {
    var scratch: [message.name_wire_bytes_max]u8 = undefined;
    _ = message.encodeName(&scratch, name.name) catch return error.NameInvalid;
    entry.* = .{ .watch = watch, .port = name.port };
    @memcpy(entry.name.bytes[0..name.name.len], name.name);
    entry.name.len = @intCast(name.name.len);
}

/// The entry of `name` (ASCII case aside) with `port`, wanted from now on: the one it had, or a
/// new one, due at once. `error.Full` when every entry of the storage has been used.
pub fn add(watch: *Watch, name: Name) error{ Full, NameInvalid }!u32 {
    if (watch.find(name)) |index| {
        watch.entries[index].wanted = true;
        return index;
    }
    if (watch.entries.len == watch.storage.len) return error.Full;
    const index: u32 = @intCast(watch.entries.len);
    try fill(&watch.storage[index], watch, name);
    watch.entries = watch.storage[0 .. index + 1];
    return index;
}

pub fn find(watch: *const Watch, name: Name) ?u32 {
    for (watch.entries, 0..) |*entry, i| {
        if (entry.port == name.port and std.ascii.eqlIgnoreCase(entry.name.slice(), name.name)) return @intCast(i);
    }
    return null;
}

/// No entry is resolved again until `add` wants it (a reload marks what its pools name).
pub fn unwantAll(watch: *Watch) void {
    for (watch.entries) |*entry| entry.wanted = false;
}

/// No resolution may be in flight: `stop`, then tick the loop until `idle`.
pub fn deinit(watch: *Watch) void {
    assert(watch.stopping and watch.idle());
    watch.loop.timerQueueUnregister(&watch.tick_queue);
    watch.* = undefined;
}

/// No new resolution starts; those in flight end (without a report).
pub fn stop(watch: *Watch) void {
    watch.stopping = true;
    watch.loop.timerCancel(&watch.tick_timer);
}

pub fn idle(watch: *const Watch) bool {
    for (watch.entries) |*entry| if (entry.phase != .idle) return false;
    return true;
}

/// Every name has had an outcome (for start-up's bounded wait).
pub fn settled(watch: *const Watch) bool {
    for (watch.entries) |*entry| if (entry.wanted and entry.state == .pending) return false;
    return true;
}

fn armTick(watch: *Watch) void {
    watch.loop.timerArm(&watch.tick_queue, &watch.tick_timer, Watch, watch, tickCallback);
}

fn tickCallback(watch: *Watch) void {
    if (watch.stopping) return;
    watch.startDue();
    watch.armTick();
}

pub fn startDue(watch: *Watch) void {
    const now_ns = watch.loop.now_ns;
    for (watch.entries) |*entry| {
        if (!entry.wanted or entry.phase != .idle or entry.due_ns > now_ns) continue;
        entry.next_count = 0;
        entry.next_ttl_s = std.math.maxInt(u32);
        entry.servers_failed = false;
        entry.from_hosts = false;
        entry.targets_count = 0;
        entry.phase = if (entry.isSrv()) .srv else .a;
        // All resolver slots busy: the entry stays due and is tried at the next tick.
        if (ask(entry) == .busy) entry.phase = .idle;
    }
}

const Asked = enum { started, busy };

/// Asks the question of the entry's phase. An answer from /etc/hosts comes back at once
/// (`step` runs before this returns); a target name that is not a name (an SRV target of
/// ".", "no service here") is skipped as if not found.
fn ask(entry: *Entry) Asked {
    const resolver = entry.watch.resolver;
    const name, const kind = question(entry);
    const started = resolver.resolve(name, kind, &entry.reply, Entry, entry, resolved) catch |err| switch (err) {
        error.Busy => return .busy,
        error.NameInvalid => {
            assert(entry.phase == .target_a or entry.phase == .target_aaaa); // `init` checked ours.
            step(entry, .{ .failure = .not_found });
            return .started;
        },
    };
    if (started == .from_hosts) {
        entry.from_hosts = true;
        step(entry, .answer);
    }
    return .started;
}

fn question(entry: *const Entry) struct { []const u8, message.Kind } {
    return switch (entry.phase) {
        .a => .{ entry.name.slice(), .a },
        .aaaa => .{ entry.name.slice(), .aaaa },
        .srv => .{ entry.name.slice(), .srv },
        .target_a => .{ entry.targets[entry.target_index].target.slice(), .a },
        .target_aaaa => .{ entry.targets[entry.target_index].target.slice(), .aaaa },
        .idle => unreachable,
    };
}

fn resolved(entry: *Entry, outcome: Resolver.Outcome) void {
    step(entry, outcome);
}

/// Takes the outcome of the phase's question, then asks the next one, or finishes.
fn step(entry: *Entry, outcome: Resolver.Outcome) void {
    switch (outcome) {
        .answer => switch (entry.phase) {
            .a, .aaaa => collect(entry, entry.port, 0),
            .target_a, .target_aaaa => {
                const target = &entry.targets[entry.target_index];
                collect(entry, target.port, target.weight);
            },
            .srv => takeTargets(entry),
            .idle => unreachable,
        },
        .failure => |failure| entry.servers_failed = entry.servers_failed or failure == .servers_failed,
    }
    if (entry.watch.stopping) return finish(entry);
    entry.phase = nextPhase(entry) orelse return finish(entry);
    // No slot free (the resolver's slots are sized for one question a name, so this is a
    // resolver shared with more): what was found so far, this time.
    if (ask(entry) == .busy) finish(entry);
}

fn nextPhase(entry: *Entry) ?Entry.Phase {
    switch (entry.phase) {
        .a => return if (entry.from_hosts) null else .aaaa,
        .aaaa => return null,
        .srv => {
            entry.target_index = 0;
            return if (entry.targets_count > 0) .target_a else null;
        },
        .target_a => if (!entry.from_hosts) return .target_aaaa,
        .target_aaaa => {},
        .idle => unreachable,
    }
    entry.from_hosts = false;
    entry.target_index += 1;
    return if (entry.target_index < entry.targets_count) .target_a else null;
}

/// An SRV answer's targets of its lowest priority (RFC 2782: the others are for when those
/// cannot be reached; not kept, documented), in answer order, without the "." of a service
/// that is decidedly not there.
fn takeTargets(entry: *Entry) void {
    entry.next_ttl_s = @min(entry.next_ttl_s, entry.reply.ttl_s);
    var lowest: u16 = std.math.maxInt(u16);
    for (entry.reply.slice()) |record| switch (record) {
        .srv => |srv| lowest = @min(lowest, srv.priority),
        .a, .aaaa => {},
    };
    entry.targets_count = 0;
    for (entry.reply.slice()) |record| switch (record) {
        .srv => |srv| {
            if (srv.priority != lowest) continue;
            entry.targets[entry.targets_count] = srv;
            entry.targets_count += 1;
        },
        .a, .aaaa => {},
    };
}

/// Adds the reply's addresses to the set being built, without duplicates.
fn collect(entry: *Entry, port: u16, weight: u16) void {
    entry.next_ttl_s = @min(entry.next_ttl_s, entry.reply.ttl_s);
    for (entry.reply.slice()) |record| {
        const address: Address = switch (record) {
            .a => |bytes| .initIp4(bytes, port),
            .aaaa => |bytes| .initIp6(bytes, port),
            .srv => continue,
        };
        if (contains(entry.next[0..entry.next_count], &address)) continue;
        if (entry.next_count == addresses_max) return; // An SRV name's many targets: the first.
        entry.next[entry.next_count] = address;
        entry.next_weights[entry.next_count] = weight;
        entry.next_count += 1;
    }
}

fn finish(entry: *Entry) void {
    entry.phase = .idle;
    const watch = entry.watch;
    if (watch.stopping) return;
    const now_ns = watch.loop.now_ns;
    const previous = entry.state;
    var set_changed = false;
    entry.resolutions += 1;
    if (entry.servers_failed or entry.next_count == 0) {
        // A failure keeps the last good set: a transient failure must not empty a pool.
        const failure: Resolver.Failure = if (entry.servers_failed) .servers_failed else .not_found;
        entry.failures += 1;
        entry.last_failure = failure;
        entry.state = if (failure == .not_found) .not_found else .failing;
        entry.due_ns = now_ns + watch.options.retry_ns;
    } else {
        const count = entry.next_count;
        set_changed = !sameSet(entry.slice(), entry.weights[0..entry.addresses_count], entry.next[0..count], entry.next_weights[0..count]);
        @memcpy(entry.addresses[0..count], entry.next[0..count]);
        @memcpy(entry.weights[0..count], entry.next_weights[0..count]);
        entry.addresses_count = count;
        entry.ttl_s = entry.next_ttl_s;
        entry.resolved_ns = @max(now_ns, 1);
        entry.state = .resolved;
        entry.due_ns = now_ns + watch.holdNs(entry.ttl_s);
    }
    if (!set_changed and entry.state == previous) return;
    const index: u32 = @intCast((@intFromPtr(entry) - @intFromPtr(watch.entries.ptr)) / @sizeOf(Entry));
    watch.report(watch.context, .{
        .index = index,
        .set_changed = set_changed,
        .state_changed = entry.state != previous,
        .previous = previous,
    });
}

/// How long an answer with this TTL is kept: the TTL between the floor and the ceiling.
pub fn holdNs(watch: *const Watch, ttl_s: u32) u64 {
    const ttl_ns = @as(u64, ttl_s) * ns_per_s;
    return std.math.clamp(ttl_ns, watch.options.ttl_floor_ns, watch.options.ttl_ceiling_ns);
}

fn contains(set: []const Address, address: *const Address) bool {
    return indexOf(set, address) != null;
}

fn indexOf(set: []const Address, address: *const Address) ?usize {
    for (set, 0..) |*member, i| if (member.eql(address)) return i;
    return null;
}

/// The same addresses with the same weights, in any order (each set has no duplicates).
/// O(n²) with n ≤ 64, on the control thread once per resolution.
fn sameSet(a: []const Address, a_weights: []const u16, b: []const Address, b_weights: []const u16) bool {
    if (a.len != b.len) return false;
    for (a, a_weights) |*address, weight| {
        const at = indexOf(b, address) orelse return false;
        if (b_weights[at] != weight) return false;
    }
    return true;
}
