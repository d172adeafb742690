//! The embedding API: what a host (sluice's request handlers, issue 13) uses to run
//! JavaScript.
//!
//! - `Module` is a verified program, loaded once per process from an image (compiled at build
//!   time, or at start-up from a file). Its constants are read-only and shared by every
//!   engine.
//! - `Engine` is one per worker: it allocates its heap region and stacks once, in `init`, and
//!   never again. `runModule` runs the top-level code once and seals what it built: from then
//!   on the module's objects and bindings are read-only (writing to them is a TypeError that
//!   says so), and each request's objects live above a mark that `beginRequest` returns to.
//!   A request therefore costs no heap allocation, and nothing survives it.
//! - A request whose handler awaits a timer (later, a `fetch`) is **suspended**: `call`
//!   returns a `Ticket`, the request keeps its own heap (a slot), and other requests run on
//!   the engine meanwhile; the host comes back with `resumeTimers` when the ticket's `wakeAt`
//!   comes, or gives the request up with `cancel`. An engine holds at most
//!   `Limits.suspended_max` suspended requests, each in a heap of its own carved out of the
//!   region at `init` (so suspending allocates nothing either), plus the one running.
//!
//! ```
//! var module = try Module.fromSource(gpa, source, "app.js", &host, &failure);
//! var engine = try Engine.init(gpa, &module, .{});
//! _ = engine.runModule();
//! const handler = engine.exportValue("default").?;
//! engine.beginRequest();
//! const request = try engine.newObject();
//! ... fill it in, then:
//! switch (engine.call(handler, &.{request})) {
//!     .value => ..., .exception => ..., .terminated => ..., .busy => ...,
//!     .suspended => |ticket| ... at engine.wakeAt(ticket): engine.resumeTimers(ticket),
//! }
//! ```
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Heap = @import("Heap.zig");
const Program = @import("Program.zig");
const Compiler = @import("Compiler.zig");
const image = @import("image.zig");
const builtins = @import("builtins.zig");
const value_mod = @import("value.zig");
const Value = value_mod.Value;
const names = @import("names.zig");
const string = @import("string.zig");
const String = string.String;
const object = @import("object.zig");
const ops = @import("operations.zig");
const HostOps = @import("HostOps.zig");

const Engine = @This();

vm: Vm,
/// The running request's heap (the Vm's): a slot's, swapped in and out by `enter`.
heap: Heap,
region: []align(16) u8,
module: *const Module,
/// Where each request's memory starts (above the module's state).
request_mark: Heap.Mark,
/// One per request the engine can hold at once: `suspended_max` suspended and one running.
/// Slot 0's heap is the module's above `request_mark`, as a request's was before requests
/// could suspend; the others are regions of their own below the module's (so the module's
/// objects stay the ones at or above `Vm.module_floor`), each as large as slot 0's room.
slots: []Slot,
/// The slot whose heap is `heap`.
current: u16 = 0,
suspended_count: u32 = 0,
/// `Symbol.for`'s registry as the module's top level left it.
module_symbols: ?*@import("symbol.zig").Registered = null,
/// Drops console output, unless the host gives a writer.
discard: std.Io.Writer.Discarding,

pub const Limits = struct {
    /// The heap of one engine: the module's state plus one request's objects.
    heap_bytes: usize = 1024 * 1024,
    /// Value stack slots (8 bytes each).
    stack_values: u32 = 16 * 1024,
    /// Call depth.
    frames: u32 = 512,
    handlers: u32 = 256,
    native_depth: u32 = 64,
    /// Native stack one call may use: the thread's stack must be larger, by what the host
    /// itself uses below the call (sluice's workers have 256 KiB).
    native_stack_bytes: usize = 128 * 1024,
    /// Ticks per call (roughly bytecode bytes executed in loops, plus calls, plus what the
    /// builtins charge for their work).
    budget: u64 = 50_000_000,
    /// Wall-clock time per call (and for the module's top level); 0: none. It is noticed at
    /// the meter's next checkpoint (Vm.check_interval_ticks). A suspended request's runs the
    /// whole time, suspended or not.
    deadline_ns: u64 = 50 * std.time.ns_per_ms,
    /// Requests that may wait suspended at once (on a timer); each reserves `heap_bytes` of
    /// address space, touched only as it is used. 0: a call that would suspend is `busy`.
    suspended_max: u32 = 0,
    /// Host operations (a handler's fetches) one request may have in flight at once, at most
    /// `HostOps.ops_max`; 0: none.
    host_ops_max: u8 = 0,
};

/// A request's place in the engine: its heap, and while it is suspended what it keeps.
pub const Slot = struct {
    state: State = .free,
    /// Its heap while another slot's is the engine's.
    heap: Heap,
    /// Bumped when the slot is freed, so that a ticket of a request that ended is told apart.
    generation: u16 = 0,
    /// While suspended: the handler's promise, and the run's queue, timers and limits left.
    promise: Value = Value.undefined_value,
    suspension: Vm.Suspension = undefined,
    /// While the host waits on something that is not the request's own doing (its client's
    /// body arriving): when that wait began, or when what ran since last moved the deadline
    /// on (`pauseDeadline`).
    deadline_paused_at_ns: ?u64 = null,

    /// `kept`: the request ended, but the host still reads what it left in its heap (an answer
    /// larger than the host's buffer, sent out a window at a time: `keep`, `release`).
    pub const State = enum { free, running, suspended, kept };
};

/// A suspended request, for its host to come back to.
pub const Ticket = struct { slot: u16, generation: u16 };

/// What a call (or a resumption) comes to.
pub const Outcome = union(enum) {
    value: Value,
    /// An uncaught exception (`errorPosition` says where).
    exception: Value,
    terminated: Vm.Termination,
    /// The handler's promise waits on a timer: come back at `wakeAt(ticket)`.
    suspended: Ticket,
    /// It would have suspended, but `suspended_max` requests already are.
    busy,
};

/// A loaded, verified program and its constant strings, shared by every engine.
pub const Module = struct {
    program: Program,
    constants: []String,
    /// The Latin-1 string constants by text, so that keys the host makes are the program's
    /// own strings and property lookups hit on the first (pointer) comparison.
    constant_index: std.StringHashMapUnmanaged(u16) = .empty,
    host: *const builtins.Host,
    /// Owns the tables `image.load` made (and the compiler's output, from source).
    arena: std.heap.ArenaAllocator,

    pub const LoadError = image.LoadError || error{ UnknownHostGlobal, TooManyExports, TooManyHostGlobals };

    /// Loads an image. `bytes` must outlive the module (the code is not copied).
    pub fn fromImage(gpa: std.mem.Allocator, bytes: []const u8, host: *const builtins.Host, problem: *image.Problem) LoadError!Module {
        var arena = std.heap.ArenaAllocator.init(gpa);
        errdefer arena.deinit();
        const program = try image.load(arena.allocator(), bytes, problem);
        const constants = try Vm.makeConstants(arena.allocator(), &program);
        for (program.host_globals) |name_index| {
            if (host.globalValue(constants[name_index].latin1()) == null) {
                problem.message = "the program names a host global this host does not have";
                return error.UnknownHostGlobal;
            }
        }
        var module: Module = .{ .program = program, .constants = constants, .host = host, .arena = arena };
        try module.indexConstants();
        return module;
    }

    /// Compiles source into an image and loads it (start-up compilation, `--handler-file`).
    pub fn fromSource(gpa: std.mem.Allocator, source: []const u8, name: []const u8, host: *const builtins.Host, failure: *Compiler.Failure) (Compiler.Error || LoadError)!Module {
        var scratch = std.heap.ArenaAllocator.init(gpa);
        defer scratch.deinit();
        var names_buf: [64][]const u8 = undefined;
        if (host.globalsCount() > names_buf.len) return error.TooManyHostGlobals;
        const bytes = compileImage(scratch.allocator(), source, .{
            .source_name = name,
            .host_globals = host.globalNames(&names_buf),
        }, failure) catch |err| {
            // The message may be text in `scratch`, freed on return.
            if (err == error.SyntaxError) failure.keep();
            return err;
        };
        var arena = std.heap.ArenaAllocator.init(gpa);
        errdefer arena.deinit();
        const kept = try arena.allocator().dupe(u8, bytes);
        var problem: image.Problem = .{};
        const program = try image.load(arena.allocator(), kept, &problem);
        const constants = try Vm.makeConstants(arena.allocator(), &program);
        var module: Module = .{ .program = program, .constants = constants, .host = host, .arena = arena };
        try module.indexConstants();
        return module;
    }

    fn indexConstants(m: *Module) error{OutOfMemory}!void {
        for (m.constants, 0..) |*c, i| {
            if (c.flags.wide) continue;
            try m.constant_index.put(m.arena.allocator(), c.latin1(), @intCast(i));
        }
    }

    /// The program's own string for `text`, if it has one.
    pub fn constant(m: *const Module, text: []const u8) ?*String {
        const i = m.constant_index.get(text) orelse return null;
        return &m.constants[i];
    }

    pub fn deinit(m: *Module) void {
        m.arena.deinit();
        m.* = undefined;
    }

    /// The index of an export by name ("default" for `export default`).
    pub fn exportIndex(m: *const Module, name: []const u8) ?u16 {
        for (m.program.exports, 0..) |e, i| {
            if (m.constants[e].eqlLatin1(name)) return @intCast(i);
        }
        return null;
    }
};

/// Compiles source to image bytes (at build time, from build.zig, or at start-up).
pub fn compileImage(gpa: std.mem.Allocator, source: []const u8, options: Compiler.Options, failure: *Compiler.Failure) Compiler.Error![]u8 {
    var arena = std.heap.ArenaAllocator.init(gpa);
    defer arena.deinit();
    const program = try Compiler.compile(arena.allocator(), source, options, failure);
    return image.write(gpa, &program);
}

pub const InitError = error{ OutOfMemory, UnknownHostGlobal, TooManyExports, TooManyHostGlobals, LimitTooSmall };

/// The smallest limits an engine accepts (a configuration below them is refused, not trusted).
pub const limits_min: Limits = .{
    .heap_bytes = 64 * 1024,
    .stack_values = 256,
    .frames = 8,
    .handlers = 8,
    .native_depth = 2,
    .native_stack_bytes = 64 * 1024,
    .budget = 1000,
    .deadline_ns = 0,
    .suspended_max = 0,
    .host_ops_max = 0,
};

/// Most suspended requests per engine: slots are numbered in a u16, and each reserves its
/// heap's address space.
pub const suspended_max_max = 4096;

pub fn init(gpa: std.mem.Allocator, module: *const Module, limits: Limits) InitError!*Engine {
    inline for (comptime std.meta.fieldNames(Limits)) |name| {
        if (@field(limits, name) < @field(limits_min, name)) return error.LimitTooSmall;
    }
    if (limits.suspended_max > suspended_max_max) return error.LimitTooSmall;
    if (limits.host_ops_max > HostOps.ops_max) return error.LimitTooSmall;
    const e = try gpa.create(Engine);
    errdefer gpa.destroy(e);
    // The module's heap is the last stride; the slots' own heaps the strides below it.
    const stride = std.mem.alignForward(usize, limits.heap_bytes, std.heap.page_size_min);
    const region = try Heap.allocUntouched(gpa, u8, stride * (@as(usize, limits.suspended_max) + 1));
    errdefer Heap.freeUntouched(gpa, u8, region);
    const slots = try gpa.alloc(Slot, limits.suspended_max + 1);
    errdefer gpa.free(slots);
    const module_region: []align(16) u8 = @alignCast(region[stride * limits.suspended_max ..][0..limits.heap_bytes]);
    e.* = .{
        .vm = undefined,
        .heap = Heap.init(module_region),
        .region = region,
        .module = module,
        .request_mark = undefined,
        .slots = slots,
        .discard = .init(&.{}),
    };
    e.vm = try Vm.init(gpa, &e.heap, .{
        .stack_values = limits.stack_values,
        .frames = limits.frames,
        .handlers = limits.handlers,
        .native_depth = limits.native_depth,
        .native_stack_bytes = limits.native_stack_bytes,
        .budget = limits.budget,
        .deadline_ns = limits.deadline_ns,
        .host_ops_max = limits.host_ops_max,
    }, &e.discard.writer, &e.discard.writer);
    errdefer e.vm.deinit(gpa);
    try e.vm.attach(&module.program, module.constants, module.host);
    e.request_mark = e.heap.mark();
    e.carveSlots();
    return e;
}

pub fn deinit(e: *Engine, gpa: std.mem.Allocator) void {
    e.vm.deinit(gpa);
    gpa.free(e.slots);
    Heap.freeUntouched(gpa, u8, e.region);
    gpa.destroy(e);
}

/// Gives each slot its heap: slot 0 the module's above `request_mark`, the others as much room
/// of their own, so a request has the same memory in any slot. Made again after the module's
/// top level has run (it sets the mark).
fn carveSlots(e: *Engine) void {
    assert(e.suspended_count == 0);
    const stride = std.mem.alignForward(usize, e.heap.region.len, std.heap.page_size_min);
    const room = @max(e.request_mark.high - e.request_mark.low, 2 * Heap.reserve_bytes_default);
    const room_aligned = std.mem.alignBackward(usize, @min(room, stride), 16);
    e.current = 0;
    e.slots[0] = .{ .heap = e.heap };
    for (e.slots[1..], 0..) |*slot, i| {
        slot.* = .{ .heap = Heap.init(@alignCast(e.region[i * stride ..][0..room_aligned])) };
    }
    assert(e.slots.len == 1 or @intFromPtr(e.slots[e.slots.len - 1].heap.region.ptr) < @intFromPtr(e.heap.region.ptr));
}

/// Where console.log writes (nothing, by default).
pub fn setOutput(e: *Engine, out: *std.Io.Writer, err_out: *std.Io.Writer) void {
    e.vm.out = out;
    e.vm.err_out = err_out;
}

/// Runs the module's top-level code, then seals its state: what it built stays, read-only.
pub fn runModule(e: *Engine) Vm.Outcome {
    assert(e.suspended_count == 0 and e.current == 0);
    e.vm.module_floor = std.math.maxInt(usize);
    e.heap.reset();
    e.vm.symbol_registry = null;
    e.vm.timers_allowed = false;
    const outcome = e.vm.runMain();
    e.vm.timers_allowed = true;
    e.request_mark = e.heap.mark();
    e.module_symbols = e.vm.symbol_registry;
    // Objects grow down from the top: the module's are at or above the mark.
    e.vm.module_floor = @intFromPtr(e.heap.region.ptr) + e.request_mark.high;
    e.carveSlots();
    return outcome;
}

/// An export's value (after `runModule`).
pub fn exportValue(e: *Engine, name: []const u8) ?Value {
    const index = e.module.exportIndex(name) orelse return null;
    return e.vm.exports[index];
}

/// Starts a request in a free slot (the lowest, so a worker whose requests never suspend
/// uses slot 0's warm pages only), its heap emptied in O(1). There is always one: at most
/// `suspended_max` are suspended, and the last request to run has ended.
pub fn beginRequest(e: *Engine) void {
    const index: u16 = for (e.slots, 0..) |*slot, i| {
        if (slot.state == .free) break @intCast(i);
    } else unreachable; // One slot more than may be suspended or kept.
    assert(e.slots[index].state == .free);
    e.enter(index);
    if (index == 0) e.heap.resetTo(e.request_mark) else e.heap.reset();
    e.slots[index].state = .running;
    e.vm.symbol_registry = e.module_symbols;
}

/// Calls a function with arguments the host built in this request. A promise it returns is
/// the outcome once settled; still pending with timers set, the request is suspended.
pub fn call(e: *Engine, callee: Value, args: []const Value) Outcome {
    assert(e.slots[e.current].state == .running);
    return e.finish(e.vm.callFunction(callee, args));
}

/// When a suspended request wants to go on (monotonic nanoseconds, the clock of
/// `Vm.clock`): its first timer's time, or its deadline's if sooner.
pub fn wakeAt(e: *const Engine, ticket: Ticket) u64 {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    if (slot.deadline_paused_at_ns != null) return slot.suspension.firstTimer();
    return slot.suspension.wakeAt();
}

/// Stops a suspended request's deadline while the host waits on what only the client
/// controls (its request body arriving: the client's timeouts bound that, as they bound any
/// body). Its timers still fire on time; what runs meanwhile sees the deadline moved on by
/// the time paused so far. `resumeDeadline` starts it again.
pub fn pauseDeadline(e: *Engine, ticket: Ticket) void {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    if (slot.deadline_paused_at_ns == null) slot.deadline_paused_at_ns = e.vm.clock();
}

pub fn resumeDeadline(e: *Engine, ticket: Ticket) void {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    e.foldPause(slot);
    slot.deadline_paused_at_ns = null;
}

/// Moves the deadline on by the time paused since the pause began (or was last folded).
fn foldPause(e: *const Engine, slot: *Slot) void {
    const since = slot.deadline_paused_at_ns orelse return;
    const now = e.vm.clock();
    if (slot.suspension.deadline_at_ns != 0) slot.suspension.deadline_at_ns +|= now -| since;
    slot.deadline_paused_at_ns = now;
}

/// Goes on with a suspended request: its timers due by now run (each followed by its
/// microtasks), with what is left of its budget; past its deadline, it ends `.terminated`.
/// Its values stay valid, as a call's do, until the engine's next request begins.
pub fn resumeTimers(e: *Engine, ticket: Ticket) Outcome {
    const slot = e.resumeSlot(ticket);
    return e.finish(e.vm.runTimers(slot.promise, e.vm.clock()));
}

/// Makes a suspended request the running one again, with what its run kept.
fn resumeSlot(e: *Engine, ticket: Ticket) *Slot {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    e.foldPause(slot);
    e.enter(ticket.slot);
    slot.state = .running;
    e.suspended_count -= 1;
    e.vm.resumeRun(&slot.suspension);
    return slot;
}

/// A host operation the suspended request started and the host has not taken yet (each is
/// returned once): its index, for `settleHostOp`, and what the native recorded of it, in the
/// request's heap (valid until the request ends).
pub fn takeHostOp(e: *Engine, ticket: Ticket) ?HostOp {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    const table = &slot.suspension.host_ops;
    const index = table.takeRequested() orelse return null;
    return .{ .index = index, .request = table.ops[index].request };
}

pub const HostOp = struct { index: u8, request: Value };

/// `len` bytes in a suspended request's heap, for what the host gathers for it (a fetched
/// body), 8-byte aligned; null when its memory limit does not leave room. They stay until the
/// request ends.
pub fn hostBytes(e: *Engine, ticket: Ticket, len: usize) ?[]align(8) u8 {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    // The last request to run keeps the engine's heap until another enters.
    const heap = if (ticket.slot == e.current) &e.heap else &slot.heap;
    // In words, as an ArrayBuffer's bytes are: they may become one's.
    const words = heap.alloc(u64, std.math.divCeil(usize, len, 8) catch unreachable) catch return null;
    return std.mem.sliceAsBytes(words)[0..len];
}

/// Goes on with a suspended request because the host settles its operation `index`:
/// `value.build` makes the value in the request's heap (the operation is fulfilled with it, or
/// rejected with what it throws), then what that lets run runs. The same outcomes as a call.
pub fn settleHostOp(e: *Engine, ticket: Ticket, index: u8, value: Vm.HostValue) Outcome {
    const slot = e.resumeSlot(ticket);
    return e.finish(e.vm.settleHostOp(slot.promise, index, value));
}

/// Keeps the heap of the request that just ended (its values, such as the bytes of its
/// answer, stay valid) until `release`: the host sends them out over time, while other
/// requests run. A kept slot counts as a suspended one against `suspended_max`; null when
/// there is no room for it (the host answers as it would `busy`).
pub fn keep(e: *Engine) ?Ticket {
    const slot = &e.slots[e.current];
    assert(slot.state == .free); // `finish` freed it; nothing has begun since.
    if (e.suspended_count == e.slots.len - 1) return null;
    slot.state = .kept;
    e.suspended_count += 1;
    return .{ .slot = e.current, .generation = slot.generation };
}

/// The host is done with a kept request's heap: the slot is free for the next.
pub fn release(e: *Engine, ticket: Ticket) void {
    const slot = e.slotOf(ticket);
    assert(slot.state == .kept);
    e.suspended_count -= 1;
    e.freeSlot(slot);
}

/// Gives up a suspended request (its client went away, or its host is going): its slot is
/// free, and nothing of it runs again.
pub fn cancel(e: *Engine, ticket: Ticket) void {
    const slot = e.slotOf(ticket);
    assert(slot.state == .suspended);
    e.suspended_count -= 1;
    e.freeSlot(slot);
}

pub fn suspendedCount(e: *const Engine) u32 {
    return e.suspended_count;
}

/// The end of a run in the current slot: suspended if its promise waits on timers (and
/// there is room), else the slot is free (its heap stays as it is until the next request).
fn finish(e: *Engine, outcome: Vm.Outcome) Outcome {
    const slot = &e.slots[e.current];
    assert(slot.state == .running);
    switch (outcome) {
        .value => |v| if (v.objectOf(.promise)) |p| if (p.as(object.Promise).state == .pending) {
            if (e.suspended_count == e.slots.len - 1) {
                e.freeSlot(slot);
                return .busy;
            }
            slot.promise = v;
            slot.suspension = e.vm.suspendRun();
            slot.state = .suspended;
            e.suspended_count += 1;
            return .{ .suspended = .{ .slot = e.current, .generation = slot.generation } };
        },
        else => {},
    }
    e.freeSlot(slot);
    return switch (outcome) {
        .value => |v| .{ .value = v },
        .exception => |x| .{ .exception = x },
        .terminated => |t| .{ .terminated = t },
    };
}

fn freeSlot(e: *Engine, slot: *Slot) void {
    _ = e;
    slot.state = .free;
    slot.generation +%= 1;
    slot.promise = Value.undefined_value;
    slot.deadline_paused_at_ns = null;
}

/// Makes slot `index`'s heap the running one, keeping the one it replaces in its slot.
fn enter(e: *Engine, index: u16) void {
    if (index == e.current) return;
    e.slots[e.current].heap = e.heap;
    e.heap = e.slots[index].heap;
    e.current = index;
}

fn slotOf(e: *const Engine, ticket: Ticket) *Slot {
    const slot = &e.slots[ticket.slot];
    assert(slot.generation == ticket.generation); // The host cancels what it gives up.
    return slot;
}

/// Where an uncaught exception or a termination was raised: file, line and column.
pub fn errorPosition(e: *const Engine) ?struct { file: []const u8, line: u32, column: u32 } {
    const site = e.vm.throw_site orelse return null;
    const p = Vm.sitePosition(site) orelse return null;
    return .{ .file = e.module.program.source_name, .line = p.line, .column = p.column };
}

// ---------------------------------------------------------------------------------------
// Building values in the current request, for the host.

pub const BuildError = error{OutOfMemory};

pub fn newObject(e: *Engine) BuildError!Value {
    const o = object.newPlain(&e.heap, 0) catch return error.OutOfMemory;
    return Value.obj(o);
}

/// A handler's `request`: a plain object inheriting from Request.prototype, so that
/// `request instanceof Request` holds and `text()` and `json()` are found there
/// (builtins/request.zig). Setting the link costs one store.
pub fn newRequestObject(e: *Engine) BuildError!Value {
    const o = object.newPlain(&e.heap, 12) catch return error.OutOfMemory;
    builtins.request.adopt(o);
    return Value.obj(o);
}

pub fn newString(e: *Engine, utf8: []const u8) BuildError!Value {
    return Value.string(string.fromUtf8(&e.heap, utf8) catch return error.OutOfMemory);
}

/// Sets `obj[name] = v` on an object the host made in this request.
pub fn setProperty(e: *Engine, obj: Value, comptime name: []const u8, v: Value) BuildError!void {
    const key = try e.keyString(name);
    obj.asObject().properties.put(&e.heap, key, v) catch return error.OutOfMemory;
}

/// Adds `name` to an object the host just made and has not given `name` yet (a request
/// object), without looking for it first.
pub fn addProperty(e: *Engine, obj: Value, comptime name: []const u8, v: Value, flags: object.PropertyFlags) BuildError!void {
    const key = try e.keyString(name);
    obj.asObject().properties.addNew(&e.heap, key, v, flags) catch return error.OutOfMemory;
}

/// A property key for `name`: the program's own constant if it has one (the script's reads
/// then match it by address), else the static string of a known name, else a new string.
pub fn keyString(e: *Engine, comptime name: []const u8) BuildError!*String {
    if (e.module.constant(name)) |key| return key;
    if (comptime names.lookup(name)) |id| return names.byId(id);
    return string.fromUtf8(&e.heap, name) catch error.OutOfMemory;
}

/// `obj[name]` of an object or array the script returned (own properties only); null if
/// absent or not an object.
pub fn getProperty(e: *Engine, obj: Value, name: []const u8) ?Value {
    _ = e;
    if (!obj.is(.object)) return null;
    var key: String = .{ .ptr = name.ptr, .len = @intCast(name.len) };
    return obj.asObject().properties.get(&key);
}

/// A string value's UTF-8 text, written to `w`.
pub fn writeString(v: Value, w: *std.Io.Writer) std.Io.Writer.Error!void {
    return string.writeUtf8(w, v.asString());
}

/// The function value of the host's native `index` (in `Host.natives`), for the host to
/// put on objects it builds (a request's `json()`, say). Natives get the object they were
/// called on as `this`.
pub fn hostFunction(e: *const Engine, index: u16) Value {
    assert(index < e.module.host.natives.len);
    return Value.native(builtins.natives_count + index);
}

/// For host natives: JSON.parse(text), with JSON.parse's errors (a SyntaxError thrown in
/// the script).
pub fn parseJson(vm: *Vm, text: Value) Vm.Error!Value {
    return @import("builtins/json.zig").parse(vm, Value.undefined_value, &.{text});
}

/// For host natives: JSON.stringify(v) (undefined for what JSON leaves out).
pub fn stringifyJson(vm: *Vm, v: Value) Vm.Error!Value {
    return @import("builtins/json.zig").stringify(vm, Value.undefined_value, &.{v});
}

/// JSON.stringify(v) as a string value (in the request's heap), or undefined.
pub fn stringify(e: *Engine, v: Value) Vm.Outcome {
    e.vm.startRun();
    const result = @import("builtins/json.zig").stringify(&e.vm, Value.undefined_value, &.{v});
    return if (result) |s| .{ .value = s } else |err| switch (err) {
        error.Throw => .{ .exception = e.vm.exception },
        error.Terminate => .{ .terminated = e.vm.termination.? },
    };
}

// ---------------------------------------------------------------------------------------
// Tests.

const CountingAllocator = struct {
    child: std.mem.Allocator,
    allocations: usize = 0,

    fn allocator(self: *CountingAllocator) std.mem.Allocator {
        return .{ .ptr = self, .vtable = &.{ .alloc = alloc, .resize = resize, .remap = remap, .free = free } };
    }

    fn alloc(ctx: *anyopaque, len: usize, alignment: std.mem.Alignment, ra: usize) ?[*]u8 {
        const self: *CountingAllocator = @ptrCast(@alignCast(ctx));
        self.allocations += 1;
        return self.child.rawAlloc(len, alignment, ra);
    }

    fn resize(ctx: *anyopaque, memory: []u8, alignment: std.mem.Alignment, new_len: usize, ra: usize) bool {
        const self: *CountingAllocator = @ptrCast(@alignCast(ctx));
        self.allocations += 1;
        return self.child.rawResize(memory, alignment, new_len, ra);
    }

    fn remap(ctx: *anyopaque, memory: []u8, alignment: std.mem.Alignment, new_len: usize, ra: usize) ?[*]u8 {
        const self: *CountingAllocator = @ptrCast(@alignCast(ctx));
        self.allocations += 1;
        return self.child.rawRemap(memory, alignment, new_len, ra);
    }

    fn free(ctx: *anyopaque, memory: []u8, alignment: std.mem.Alignment, ra: usize) void {
        const self: *CountingAllocator = @ptrCast(@alignCast(ctx));
        self.child.rawFree(memory, alignment, ra);
    }
};

const handler_source =
    \\const greeting = "hello";
    \\const routes = Object.freeze({ "/a": 1, "/b": 2 });
    \\let hits = 0;
    \\export default function handler(request) {
    \\  const { method, path, query } = request;
    \\  if (path === "/count") hits++;
    \\  const body = { greeting, method, route: routes[path] ?? null, name: query.name ?? "world", list: [1, 2, 3].map(x => x * 2) };
    \\  return JSON.stringify(body);
    \\}
;

fn buildRequest(e: *Engine, path: []const u8) !Value {
    const request = try e.newObject();
    try e.setProperty(request, "method", try e.newString("GET"));
    try e.setProperty(request, "path", try e.newString(path));
    const query = try e.newObject();
    try e.setProperty(query, "name", try e.newString("sluice"));
    try e.setProperty(request, "query", query);
    return request;
}

test "engine: a handler runs per request with no heap allocation after set-up" {
    var counting: CountingAllocator = .{ .child = std.testing.allocator };
    const gpa = counting.allocator();
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, handler_source, "app.js", &builtins.Host.none, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{});
    defer engine.deinit(gpa);
    try std.testing.expect(engine.runModule() == .value);
    const handler = engine.exportValue("default").?;
    const before = counting.allocations;
    for (0..1000) |_| {
        engine.beginRequest();
        const request = try buildRequest(engine, "/a");
        const outcome = engine.call(handler, &.{request});
        var buf: [256]u8 = undefined;
        var w: std.Io.Writer = .fixed(&buf);
        try writeString(outcome.value, &w);
        try std.testing.expectEqualStrings(
            \\{"greeting":"hello","method":"GET","route":1,"name":"sluice","list":[2,4,6]}
        , w.buffered());
    }
    try std.testing.expectEqual(before, counting.allocations);
}

test "engine: writing to module state from a request is an error that says so" {
    const gpa = std.testing.allocator;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, handler_source, "app.js", &builtins.Host.none, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{});
    defer engine.deinit(gpa);
    _ = engine.runModule();
    engine.beginRequest();
    const outcome = engine.call(engine.exportValue("default").?, &.{try buildRequest(engine, "/count")});
    const e = outcome.exception.asObject().as(object.ErrorObject);
    try std.testing.expect(std.mem.startsWith(u8, e.message.?.latin1(), "Cannot modify module state from a request"));
    const position = engine.errorPosition().?;
    try std.testing.expectEqual(@as(u32, 6), position.line);
}

test "engine: each limit ends a call cleanly" {
    const gpa = std.testing.allocator;
    const source =
        \\export function spin() { while (true) {} }
        \\export function deep() { return deep() + 1 }
        \\export function hog() { const a = []; while (true) a.push([1, 2, 3]) }
        \\export function hogCaught() { try { const a = []; while (true) a.push("x".repeat(100)) } catch (e) { return e.name + ": " + e.message } }
        \\export function fine() { return 42 }
    ;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, source, "limits.js", &builtins.Host.none, &failure);
    defer module.deinit();
    // No deadline: a debug build on a busy machine may take longer than 50 ms for the budget.
    const engine = try Engine.init(gpa, &module, .{ .heap_bytes = 256 * 1024, .budget = 1_000_000, .deadline_ns = 0 });
    defer engine.deinit(gpa);
    _ = engine.runModule();
    const cases = [_][]const u8{ "spin", "deep", "hog", "hogCaught" };
    for (cases) |name| {
        engine.beginRequest();
        const outcome = engine.call(engine.exportValue(name).?, &.{});
        switch (outcome) {
            .terminated => |why| try std.testing.expectEqual(Vm.Termination.budget, why),
            .exception => |x| {
                const e = x.asObject().as(object.ErrorObject);
                try std.testing.expectEqual(object.ErrorKind.range_error, e.error_kind);
            },
            .value => |v| try std.testing.expect(std.mem.startsWith(u8, v.asString().latin1(), "RangeError: Out of memory")),
            .suspended, .busy => return error.TestUnexpectedResult,
        }
        // The engine is fine afterwards.
        engine.beginRequest();
        try std.testing.expectEqual(@as(f64, 42), engine.call(engine.exportValue("fine").?, &.{}).value.asNumber());
    }
}

/// A test clock: each reading is 0.4 ms after the last.
const TestClock = struct {
    var now_ns: u64 = 0;
    var readings: u32 = 0;

    fn read() u64 {
        readings += 1;
        now_ns += 400 * std.time.ns_per_us;
        return now_ns;
    }
};

test "engine: the deadline stops a run on the clock, which a short call never reads" {
    const gpa = std.testing.allocator;
    const source =
        \\export function spin() { let i = 0; while (true) i++ }
        \\export function fine() { let s = 0; for (let i = 0; i < 100; i++) s += i; return s }
    ;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, source, "deadline.js", &builtins.Host.none, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{ .deadline_ns = std.time.ns_per_ms, .budget = 1 << 40 });
    defer engine.deinit(gpa);
    engine.vm.clock = TestClock.read;
    _ = engine.runModule();
    TestClock.readings = 0;
    engine.beginRequest();
    try std.testing.expectEqual(@as(f64, 4950), engine.call(engine.exportValue("fine").?, &.{}).value.asNumber());
    try std.testing.expectEqual(@as(u32, 0), TestClock.readings);
    engine.beginRequest();
    const outcome = engine.call(engine.exportValue("spin").?, &.{});
    try std.testing.expectEqual(Vm.Termination.deadline, outcome.terminated);
    // The first reading starts the deadline; the fourth, 1.2 ms later, is past it.
    try std.testing.expectEqual(@as(u32, 4), TestClock.readings);
    try std.testing.expect(engine.vm.ticksUsed() <= 4 * Vm.check_interval_ticks + 64);
    try std.testing.expectEqual(@as(u32, 1), engine.errorPosition().?.line);
    // The engine serves on.
    engine.beginRequest();
    try std.testing.expectEqual(@as(f64, 4950), engine.call(engine.exportValue("fine").?, &.{}).value.asNumber());
}

/// A host's `Response.json(value, init?)`, as a handler host would write it: a Response
/// object (class 1) with `status` and `body`.
fn testResponseJson(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    const body = try @import("builtins/json.zig").stringify(vm, Value.undefined_value, args[0..@min(args.len, 1)]);
    const response = try vm.newObject(2);
    response.class = 1;
    var status = Value.number(200);
    if (args.len > 1 and args[1].is(.object)) {
        var status_key: String = .{ .ptr = "status", .len = 6 };
        if (args[1].asObject().properties.get(&status_key)) |s| status = s;
    }
    response.properties.put(vm.heap, try vm.newLatin1("status"), status) catch return vm.outOfMemory();
    response.properties.put(vm.heap, try vm.newLatin1("body"), body) catch return vm.outOfMemory();
    return Value.obj(response);
}

test "engine: a host global (Response) is bound by name and builds host objects" {
    const gpa = std.testing.allocator;
    const host: builtins.Host = .{
        .natives = &.{.{ .name = "json", .length = 2, .func = testResponseJson }},
        .objects = &.{.{ .name = "Response", .members = &.{.{ .name = "json", .native = 0 }} }},
        .class_names = &.{"Response"},
    };
    const source =
        \\export default function handler(request) {
        \\  return Response.json({ hello: request.name ?? "world" }, { status: 201 });
        \\}
    ;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, source, "app.js", &host, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{});
    defer engine.deinit(gpa);
    _ = engine.runModule();
    engine.beginRequest();
    const request = try engine.newObject();
    try engine.setProperty(request, "name", try engine.newString("sluice"));
    const response = engine.call(engine.exportValue("default").?, &.{request}).value;
    try std.testing.expectEqual(@as(u16, 1), response.asObject().class);
    try std.testing.expectEqual(@as(f64, 201), engine.getProperty(response, "status").?.asNumber());
    var buf: [64]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try writeString(engine.getProperty(response, "body").?, &w);
    try std.testing.expectEqualStrings("{\"hello\":\"sluice\"}", w.buffered());
}

/// A host's `request.json()`: parses the request's `body`.
fn testRequestJson(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    var body_key: String = .{ .ptr = "body", .len = 4 };
    const body = if (this.is(.object)) this.asObject().properties.get(&body_key) orelse Value.undefined_value else Value.undefined_value;
    return parseJson(vm, body);
}

test "engine: a host function on the request (request.json()) parses the body, and its errors are catchable" {
    const gpa = std.testing.allocator;
    const host: builtins.Host = .{
        .natives = &.{.{ .name = "json", .length = 0, .func = testRequestJson }},
    };
    const source =
        \\export default function handler(request) {
        \\  try {
        \\    const { user, items = [] } = request.json();
        \\    return `${user.name}:${items.length}`;
        \\  } catch (e) {
        \\    return e.name + ": " + e.message;
        \\  }
        \\}
    ;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, source, "app.js", &host, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{});
    defer engine.deinit(gpa);
    _ = engine.runModule();
    const cases = [_][2][]const u8{
        .{ "{\"user\":{\"name\":\"ada\"},\"items\":[1,2]}", "ada:2" },
        .{ "{\"user\":", "SyntaxError: Unexpected end of JSON input" },
    };
    for (cases) |case| {
        engine.beginRequest();
        const request = try engine.newObject();
        try engine.setProperty(request, "body", try engine.newString(case[0]));
        try engine.setProperty(request, "json", engine.hostFunction(0));
        const answer = engine.call(engine.exportValue("default").?, &.{request}).value;
        var buf: [64]u8 = undefined;
        var w: std.Io.Writer = .fixed(&buf);
        try writeString(answer, &w);
        try std.testing.expectEqualStrings(case[1], w.buffered());
    }
}

const StackJob = struct {
    engine: *Engine,
    results: [4]?object.ErrorKind = @splat(null),

    fn run(job: *StackJob) void {
        const names_list = [_][]const u8{ "viaMap", "deepJson", "deepClone", "deepParse" };
        for (names_list, 0..) |name, i| {
            job.engine.beginRequest();
            const outcome = job.engine.call(job.engine.exportValue(name).?, &.{});
            if (outcome == .exception and outcome.exception.objectOf(.error_object) != null) {
                job.results[i] = outcome.exception.asObject().as(object.ErrorObject).error_kind;
            }
        }
    }
};

test "engine: recursion through builtins stops at the native stack limit on a worker-sized stack" {
    const gpa = std.testing.allocator;
    const source =
        \\export function viaMap(n = 100000) { return n === 0 ? 0 : [n].map(x => viaMap(x - 1))[0] + 1 }
        \\export function deepJson() { let v = []; for (let i = 0; i < 100000; i++) v = [v]; return JSON.stringify(v).length }
        \\export function deepClone() { let v = []; for (let i = 0; i < 100000; i++) v = [v]; return structuredClone(v) }
        \\// JSON.parse does not recurse: it parses what the others cannot walk.
        \\export function deepParse() { return JSON.parse("[".repeat(50000) + "]".repeat(50000)) }
    ;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, source, "deep.js", &builtins.Host.none, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{ .native_depth = 100_000, .frames = 100_000, .stack_values = 1 << 20, .heap_bytes = 64 << 20, .deadline_ns = 0 });
    defer engine.deinit(gpa);
    _ = engine.runModule();
    var job: StackJob = .{ .engine = engine };
    // The size of a sluice worker's stack.
    const thread = try std.Thread.spawn(.{ .stack_size = 256 * 1024 }, StackJob.run, .{&job});
    thread.join();
    for (job.results[0..3]) |r| try std.testing.expectEqual(@as(?object.ErrorKind, .range_error), r);
    try std.testing.expectEqual(@as(?object.ErrorKind, null), job.results[3]);
}

test "engine: a compile error's message outlives the compiler's memory" {
    // "Unexpected token ';'" is formatted in the compiler's scratch arena, which `fromSource`
    // frees before it returns: the failure keeps its own copy (it was read after the free once,
    // and printing it crashed sluice at start-up).
    const source = "export default function h(r) { return f(; }\n";
    var failure: Compiler.Failure = undefined;
    try std.testing.expectError(error.SyntaxError, Module.fromSource(std.testing.allocator, source, "bad.js", &builtins.Host.none, &failure));
    try std.testing.expectEqualStrings("Unexpected token ';'", failure.message);
    try std.testing.expectEqual(@as(u32, 1), failure.line);
}

// ---------------------------------------------------------------------------------------
// Suspended requests.

/// A test clock the test moves by hand.
const ManualClock = struct {
    var now_ns: u64 = 1_000_000_000;

    fn read() u64 {
        return now_ns;
    }
};

const suspend_source =
    \\export const sleepy = async (request) => {
    \\  const before = request.tag + ":" + "x".repeat(1000);
    \\  await new Promise((resolve) => setTimeout(resolve, request.ms));
    \\  await new Promise((resolve) => setTimeout(resolve, request.ms));
    \\  return before.length + ":" + request.tag;
    \\}
    \\export function sync() { return "sync" }
    \\export const hog = async (request) => {
    \\  const kept = [];
    \\  for (;;) {
    \\    kept.push("y".repeat(10000) + kept.length);
    \\    await new Promise((resolve) => setTimeout(resolve, 1));
    \\  }
    \\}
    \\export const spend = async () => {
    \\  for (;;) {
    \\    let i = 0;
    \\    while (i < 20000) i++;
    \\    await new Promise((resolve) => setTimeout(resolve, 1));
    \\  }
    \\}
    \\export const forever = async () => { await new Promise((resolve) => setInterval(() => {}, 5)); }
    \\export const cleared = async () => { await new Promise((resolve) => clearTimeout(setTimeout(resolve, 5))); }
    \\export function timerOnly() { setTimeout(() => {}, 5); return "answered"; }
    \\export const nap = async () => { await new Promise((resolve) => setTimeout(resolve, 50)); return "rested"; }
    \\export const throws = async () => { await new Promise((resolve) => setTimeout(resolve, 1)); throw new Error("late"); }
;

fn suspendEngine(gpa: std.mem.Allocator, module: *Module, limits: Limits) !*Engine {
    var failure: Compiler.Failure = undefined;
    module.* = try Module.fromSource(gpa, suspend_source, "suspend.js", &builtins.Host.none, &failure);
    errdefer module.deinit();
    const engine = try Engine.init(gpa, module, limits);
    engine.vm.clock = ManualClock.read;
    try std.testing.expect(engine.runModule() == .value);
    return engine;
}

fn sleepyRequest(e: *Engine, tag: []const u8, ms: f64) !Value {
    const request = try e.newObject();
    try e.setProperty(request, "tag", try e.newString(tag));
    try e.setProperty(request, "ms", Value.number(ms));
    return request;
}

fn expectText(expected: []const u8, v: Value) !void {
    var buf: [64]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try writeString(v, &w);
    try std.testing.expectEqualStrings(expected, w.buffered());
}

test "engine: requests suspend on timers, others run meanwhile, and each resumes with its own heap" {
    var counting: CountingAllocator = .{ .child = std.testing.allocator };
    const gpa = counting.allocator();
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 3, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    const before = counting.allocations;
    for (0..20) |_| {
        var tickets: [3]Ticket = undefined;
        const tags = [_][]const u8{ "a", "b", "c" };
        for (&tickets, tags, 0..) |*ticket, tag, i| {
            engine.beginRequest();
            const outcome = engine.call(engine.exportValue("sleepy").?, &.{try sleepyRequest(engine, tag, @floatFromInt(10 * (i + 1)))});
            ticket.* = outcome.suspended;
            try std.testing.expectEqual(ManualClock.now_ns + 10 * (i + 1) * std.time.ns_per_ms, engine.wakeAt(ticket.*));
            // A request that does not suspend runs between them, in a free slot.
            engine.beginRequest();
            try expectText("sync", engine.call(engine.exportValue("sync").?, &.{}).value);
        }
        try std.testing.expectEqual(@as(u32, 3), engine.suspendedCount());
        // A fourth would suspend with no room: busy, and its slot is free again.
        engine.beginRequest();
        try std.testing.expect(engine.call(engine.exportValue("sleepy").?, &.{try sleepyRequest(engine, "d", 5)}) == .busy);
        // Resume in another order than they began; each wakes twice.
        const order = [_]usize{ 2, 0, 1 };
        for (order) |i| {
            ManualClock.now_ns = engine.wakeAt(tickets[i]);
            const again = engine.resumeTimers(tickets[i]);
            tickets[i] = again.suspended;
        }
        for (order) |i| {
            ManualClock.now_ns = @max(ManualClock.now_ns, engine.wakeAt(tickets[i]));
            const done = engine.resumeTimers(tickets[i]);
            var expected: [16]u8 = undefined;
            try expectText(try std.fmt.bufPrint(&expected, "1002:{s}", .{tags[i]}), done.value);
        }
        try std.testing.expectEqual(@as(u32, 0), engine.suspendedCount());
    }
    try std.testing.expectEqual(before, counting.allocations);
}

test "engine: a resumed call too early runs nothing and stays suspended" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 1, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    engine.beginRequest();
    const ticket = engine.call(engine.exportValue("sleepy").?, &.{try sleepyRequest(engine, "a", 10)}).suspended;
    const again = engine.resumeTimers(ticket).suspended;
    try std.testing.expectEqual(ManualClock.now_ns + 10 * std.time.ns_per_ms, engine.wakeAt(again));
    engine.cancel(again);
    try std.testing.expectEqual(@as(u32, 0), engine.suspendedCount());
}

test "engine: the memory limit holds across suspensions" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 2, .heap_bytes = 256 * 1024, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    // Fill slot 0 with a suspended request, then run the hog in slot 1 until its heap is full.
    engine.beginRequest();
    const other = engine.call(engine.exportValue("sleepy").?, &.{try sleepyRequest(engine, "keep", 1000)}).suspended;
    engine.beginRequest();
    var outcome = engine.call(engine.exportValue("hog").?, &.{try engine.newObject()});
    var wakes: u32 = 0;
    while (outcome == .suspended) : (wakes += 1) {
        ManualClock.now_ns = engine.wakeAt(outcome.suspended);
        outcome = engine.resumeTimers(outcome.suspended);
    }
    // About 256 KiB / 10 KB strings: it ran out after a couple of dozen suspensions, not at once.
    try std.testing.expect(wakes > 10 and wakes < 40);
    const e = outcome.exception.asObject().as(object.ErrorObject);
    try std.testing.expect(std.mem.startsWith(u8, e.message.?.latin1(), "Out of memory"));
    // The other request's heap was untouched: it finishes as it would have.
    ManualClock.now_ns = engine.wakeAt(other);
    const next = engine.resumeTimers(other).suspended;
    ManualClock.now_ns = engine.wakeAt(next);
    try expectText("1005:keep", engine.resumeTimers(next).value);
}

test "engine: the budget bounds the whole request across suspensions" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 1, .budget = 2_000_000, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    engine.beginRequest();
    var outcome = engine.call(engine.exportValue("spend").?, &.{});
    var wakes: u32 = 0;
    while (outcome == .suspended) : (wakes += 1) {
        ManualClock.now_ns = engine.wakeAt(outcome.suspended);
        outcome = engine.resumeTimers(outcome.suspended);
    }
    // Each run spends about 20,000 iterations' ticks: well under one run's budget, so only
    // the total stops it.
    try std.testing.expectEqual(Vm.Termination.budget, outcome.terminated);
    try std.testing.expect(wakes >= 3);
}

test "engine: a paused deadline does not run while the host waits on the client, and timers still fire" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const ms = std.time.ns_per_ms;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 1, .deadline_ns = 20 * ms });
    defer module.deinit();
    defer engine.deinit(gpa);
    engine.beginRequest();
    const start = ManualClock.now_ns;
    // A 50 ms nap under a 20 ms deadline: it would end `deadline exceeded` at start + 20 ms.
    const ticket = engine.call(engine.exportValue("nap").?, &.{}).suspended;
    try std.testing.expectEqual(start + 20 * ms, engine.wakeAt(ticket));
    // The host waits 40 ms on the client (a body arriving): only the timer wakes it meanwhile.
    engine.pauseDeadline(ticket);
    try std.testing.expectEqual(start + 50 * ms, engine.wakeAt(ticket));
    ManualClock.now_ns = start + 40 * ms;
    engine.resumeDeadline(ticket);
    // The deadline moved on by the 40 ms paused: start + 60 ms, after the timer.
    try std.testing.expectEqual(start + 50 * ms, engine.wakeAt(ticket));
    ManualClock.now_ns = start + 50 * ms;
    try expectText("rested", engine.resumeTimers(ticket).value);

    // Not paused, the same call ends at its deadline.
    engine.beginRequest();
    const again = engine.call(engine.exportValue("nap").?, &.{}).suspended;
    const deadline = ManualClock.now_ns + 20 * ms;
    try std.testing.expectEqual(deadline, engine.wakeAt(again));
    ManualClock.now_ns = deadline;
    try std.testing.expectEqual(Vm.Termination.deadline, engine.resumeTimers(again).terminated);
}

test "engine: the deadline runs while a request is suspended, from its start" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 1, .deadline_ns = 50 * std.time.ns_per_ms });
    defer module.deinit();
    defer engine.deinit(gpa);
    engine.beginRequest();
    const start = ManualClock.now_ns;
    var outcome = engine.call(engine.exportValue("forever").?, &.{});
    var wakes: u32 = 0;
    while (outcome == .suspended) : (wakes += 1) {
        const at = engine.wakeAt(outcome.suspended);
        try std.testing.expect(at <= start + 50 * std.time.ns_per_ms);
        ManualClock.now_ns = at;
        outcome = engine.resumeTimers(outcome.suspended);
    }
    try std.testing.expectEqual(Vm.Termination.deadline, outcome.terminated);
    try std.testing.expectEqual(start + 50 * std.time.ns_per_ms, ManualClock.now_ns);
    // The interval ran every 5 ms until then.
    try std.testing.expectEqual(@as(u32, 10), wakes);
    // The engine serves on.
    engine.beginRequest();
    try expectText("sync", engine.call(engine.exportValue("sync").?, &.{}).value);
}

test "engine: what cannot suspend answers as before" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 1, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    // A cleared timer leaves nothing that could settle the promise.
    engine.beginRequest();
    const pending = engine.call(engine.exportValue("cleared").?, &.{}).exception.asObject().as(object.ErrorObject);
    try std.testing.expect(std.mem.startsWith(u8, pending.message.?.latin1(), "the handler's Promise is still pending"));
    // A value returned at once is the answer, whatever timers are still set.
    engine.beginRequest();
    try expectText("answered", engine.call(engine.exportValue("timerOnly").?, &.{}).value);
    try std.testing.expectEqual(@as(u32, 0), engine.suspendedCount());
    // An exception after a suspension is the call's exception.
    engine.beginRequest();
    const ticket = engine.call(engine.exportValue("throws").?, &.{}).suspended;
    ManualClock.now_ns = engine.wakeAt(ticket);
    const late = engine.resumeTimers(ticket).exception.asObject().as(object.ErrorObject);
    try std.testing.expectEqualStrings("late", late.message.?.latin1());
}

test "engine: a timer due by the deadline fires even when the wake-up comes after it" {
    const gpa = std.testing.allocator;
    var module: Module = undefined;
    const engine = try suspendEngine(gpa, &module, .{ .suspended_max = 1, .deadline_ns = 50 * std.time.ns_per_ms });
    defer module.deinit();
    defer engine.deinit(gpa);
    // Two sleeps of 20 ms: the first is due by the 50 ms deadline, the second (at 40 + 20)
    // is not: the wake-up for it is the deadline, and ends the call.
    engine.beginRequest();
    const start = ManualClock.now_ns;
    const ticket = engine.call(engine.exportValue("sleepy").?, &.{try sleepyRequest(engine, "late", 20)}).suspended;
    ManualClock.now_ns = start + 40 * std.time.ns_per_ms;
    const again = engine.resumeTimers(ticket).suspended;
    try std.testing.expectEqual(start + 50 * std.time.ns_per_ms, engine.wakeAt(again));
    ManualClock.now_ns = start + 70 * std.time.ns_per_ms;
    try std.testing.expectEqual(Vm.Termination.deadline, engine.resumeTimers(again).terminated);
    // A 50 ms sleep under the 50 ms deadline, woken 10 ms late: its timer was due by the
    // deadline (which started when the call suspended), so it answers.
    engine.beginRequest();
    const second_start = ManualClock.now_ns;
    const short = engine.call(engine.exportValue("nap").?, &.{}).suspended;
    ManualClock.now_ns = second_start + 60 * std.time.ns_per_ms;
    try expectText("rested", engine.resumeTimers(short).value);
}

test "engine: a handler's top level cannot set a timer" {
    const gpa = std.testing.allocator;
    var failure: Compiler.Failure = undefined;
    var module = try Module.fromSource(gpa, "setTimeout(() => {}, 1);\nexport default function h() {}\n", "top.js", &builtins.Host.none, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{ .suspended_max = 1 });
    defer engine.deinit(gpa);
    const e = engine.runModule().exception.asObject().as(object.ErrorObject);
    try std.testing.expect(std.mem.startsWith(u8, e.message.?.latin1(), "timers belong to a request"));
}
