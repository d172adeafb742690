//! One engine instance (one per worker): the value stack, the frames, the handler stack, the
//! loaded program and the run's heap. Everything is allocated by `init`, once; a run
//! allocates nothing from the process heap, only bump-allocates in its Heap.
//!
//! The interpreter loop is in interpreter.zig; the language's abstract operations in
//! operations.zig. This file holds the machinery around them: calls (from bytecode and from
//! natives), frames, exceptions and their unwinding, and the limits.
//!
//! Limits end a run cleanly: running out of heap is a catchable RangeError (the heap keeps a
//! reserve to build it); too deep a call stack is a RangeError as in V8; running out of
//! budget, or past the deadline, is a termination that no `catch` sees.
//!
//! Time is metered (meter.zig): the interpreter charges ticks for the bytecode it runs and
//! every builtin and primitive for the work it does, and `charge` checks the meter. When the
//! slice of budget it handed out is spent, `checkpoint` settles it against the budget, reads
//! the clock against the deadline, and hands out the next slice: the clock is read once per
//! `check_interval_ticks`, never per instruction.
const std = @import("std");
const assert = std.debug.assert;

const Heap = @import("Heap.zig");
const value_mod = @import("value.zig");
const Value = value_mod.Value;
const Cell = value_mod.Cell;
const string = @import("string.zig");
const String = string.String;
const object = @import("object.zig");
const Object = object.Object;
const Program = @import("Program.zig");
const bytecode = @import("bytecode.zig");
const names = @import("names.zig");
const builtins = @import("builtins.zig");
const interpreter = @import("interpreter.zig");
const ops = @import("operations.zig");
const regexp = @import("regexp.zig");
const meter = @import("meter.zig");
const HostOps = @import("HostOps.zig");
const changes = @import("builtin_changes.zig");

const Vm = @This();

heap: *Heap,
program: *const Program = undefined,
/// Headers for the program's string constants, made at load time.
constants: []String = &.{},
owns_constants: bool = false,
/// Objects and cells at or above this address belong to the module and are read-only while
/// a request runs; the maximum address means no module is sealed.
module_floor: usize = std.math.maxInt(usize),
stack: []Value,
frames: []Frame,
frame_count: u32 = 0,
handlers: []Handler,
handler_count: u32 = 0,
/// The exception being thrown (valid while `error.Throw` propagates).
exception: Value = Value.undefined_value,
/// Where the exception was thrown from, for reports.
throw_site: ?Site = null,
termination: ?Termination = null,
/// Budget ticks not yet handed to the meter.
budget_left: u64 = 0,
/// The ticks handed to the meter at the last checkpoint.
slice: u64 = 0,
/// When the run's deadline passes (monotonic nanoseconds), set at its first checkpoint; 0
/// until then, or when there is no deadline.
deadline_at_ns: u64 = 0,
/// The monotonic clock the deadline is read from (a test's own, in tests).
clock: *const fn () u64 = monotonicNs,
native_depth: u32 = 0,
/// The lowest native stack address this run may reach (the stack grows down): natives that
/// recurse (a callback calling a builtin calling a callback...) check it, as V8 checks its
/// stack limit, so that no input can overflow the thread's stack.
stack_floor: usize = 0,
limits: Limits,
/// The module's exports, by export index, once the top level has run.
exports: []Value,
host: *const builtins.Host = &builtins.Host.none,
/// Values of the host globals the program names, bound at load.
host_globals: []Value,
/// console.log's destination, and console.error's.
out: *std.Io.Writer,
err_out: *std.Io.Writer,
random_state: u64,
/// crypto.randomUUID's generator (builtins/webcrypto.zig): seeded from the kernel on first
/// use, so an engine that never asks pays no system call.
csprng: ?std.Random.ChaCha = null,
/// The microtask queue (builtins/promises.zig), in the run's heap.
jobs_head: ?*object.Job = null,
jobs_tail: ?*object.Job = null,
/// Promises rejected while nobody handled them, newest first.
rejected_head: ?*object.Promise = null,
/// RegExps compiled in this run, by the identity of their pattern and flags strings: a
/// literal evaluated in a loop compiles once and its objects share the program and the
/// matcher's scratch (builtins/regexps.zig). Emptied at the start of every run, so no entry
/// outlives the arena memory it points into.
regexp_cache: [regexp_cache_len]RegExpCacheEntry = @splat(.{}),
/// `Symbol.for`'s registry (symbol.zig), newest first.
symbol_registry: ?*@import("symbol.zig").Registered = null,
/// The timers the run set (builtins/timers.zig), in its heap, soonest first.
timers_head: ?*builtins.timers.Timer = null,
/// The id the next setTimeout returns (ids start at 1 in each run and its resumptions).
timer_next_id: u32 = 1,
/// Promises only the host can settle (a handler's fetches: HostOps.zig), in flight.
host_ops: HostOps = .{},
/// What the run changed of the builtins (builtin_changes.zig), newest first; a run starts
/// from the module's list, which its top level left.
builtin_changes: ?*const changes.Change = null,
module_builtin_changes: ?*const changes.Change = null,
/// Whether setTimeout may be called: not while a handler's module runs its top level, whose
/// state outlives every request (Engine.runModule).
timers_allowed: bool = true,

pub const Error = error{ Throw, Terminate };

pub const Termination = enum {
    /// The instruction budget ran out.
    budget,
    /// The run went on past its deadline.
    deadline,
    /// The heap ran out while raising the out-of-memory error itself.
    memory,
    /// The bytecode did something the verifier should have refused (a bug, reported as such).
    invalid_bytecode,
    /// The top level needs more stack or handlers than the engine has.
    stack,

    pub fn message(t: Termination) []const u8 {
        return switch (t) {
            .budget => "execution budget exhausted: the script ran too long",
            .deadline => "deadline exceeded: the script ran longer than its time limit",
            .memory => "out of memory: the script exhausted its heap",
            .invalid_bytecode => "invalid bytecode",
            .stack => "the program's top level needs more stack than the engine's limits give",
        };
    }
};

pub const Limits = struct {
    /// Values on the value stack: locals and operands of every frame.
    stack_values: u32 = 256 * 1024,
    /// Call depth.
    frames: u32 = 10_000,
    /// Exception handlers open at once, all frames together.
    handlers: u32 = 4096,
    /// Native functions calling back into JavaScript (`arr.map(f)` inside `f`...).
    native_depth: u32 = 200,
    /// Native stack a run may use below where it starts; past it, natives that recurse
    /// raise "Maximum call stack size exceeded". Must be less than the thread's stack.
    native_stack_bytes: usize = 1024 * 1024,
    /// Ticks per run: one per byte of loop body per iteration, a few per call, and what the
    /// builtins charge for their work (meter.zig).
    budget: u64 = 20_000_000_000,
    /// Wall-clock time per run, from its first checkpoint; 0: none.
    deadline_ns: u64 = 0,
    /// Exports a module may have.
    exports: u32 = 64,
    /// Host operations (HostOps.zig) a run may have in flight at once; 0: none.
    host_ops_max: u8 = 0,
};

pub const Frame = struct {
    function: *const Program.Function,
    closure: ?*object.Closure,
    /// The next instruction (the return address while a callee runs).
    pc: u32,
    /// Stack index of local 0.
    base: u32,
    /// Operand stack top, saved while the frame is not running.
    sp: u32,
    handler_base: u32,
    /// Stack index that receives the return value.
    result: u32,
    /// Returning from this frame returns from the `run` call that pushed it.
    entry: bool,
    /// Called by `new` (or `super()`): a result that is not an object gives way to `this`.
    construct: bool = false,
    this: Value = Value.undefined_value,
    new_target: Value = Value.undefined_value,
    /// How many arguments the call passed (read by `push_special` for the arguments object,
    /// at the function's entry only).
    argc: u32 = 0,
    /// The generator this frame runs for, once resumed by next() (null otherwise).
    generator: ?*object.Generator = null,
};

pub const Handler = struct {
    target: u32,
    sp: u32,
};

pub const Site = struct {
    function: *const Program.Function,
    pc: u32,
};

pub fn init(gpa: std.mem.Allocator, heap: *Heap, limits: Limits, out: *std.Io.Writer, err_out: *std.Io.Writer) error{OutOfMemory}!Vm {
    // The value stack and frames are sized for the deepest run and mostly never touched.
    const stack = try Heap.allocUntouched(gpa, Value, limits.stack_values);
    errdefer Heap.freeUntouched(gpa, Value, stack);
    const frames = try Heap.allocUntouched(gpa, Frame, limits.frames);
    errdefer Heap.freeUntouched(gpa, Frame, frames);
    const handlers = try gpa.alloc(Handler, limits.handlers);
    errdefer gpa.free(handlers);
    const exports = try gpa.alloc(Value, limits.exports);
    errdefer gpa.free(exports);
    const host_globals = try gpa.alloc(Value, 64);
    return .{
        .heap = heap,
        .stack = stack,
        .frames = frames,
        .handlers = handlers,
        .limits = limits,
        .exports = exports,
        .host_globals = host_globals,
        .out = out,
        .err_out = err_out,
        .random_state = 0x9E3779B97F4A7C15,
    };
}

pub fn deinit(vm: *Vm, gpa: std.mem.Allocator) void {
    Heap.freeUntouched(gpa, Value, vm.stack);
    Heap.freeUntouched(gpa, Frame, vm.frames);
    gpa.free(vm.handlers);
    gpa.free(vm.exports);
    gpa.free(vm.host_globals);
    if (vm.owns_constants) gpa.free(vm.constants);
    vm.* = undefined;
}

/// Headers for a verified program's string constants: hashed, with their array index and
/// builtin name id computed, so that nothing ever writes to them again and engines on
/// several threads can share them. Set-up time, not run time.
pub fn makeConstants(gpa: std.mem.Allocator, program: *const Program) error{OutOfMemory}![]String {
    const constants = try gpa.alloc(String, program.strings.len);
    for (program.strings, constants) |c, *s| {
        const len: u32 = @intCast(if (c.wide) c.bytes.len / 2 else c.bytes.len);
        s.* = .{ .ptr = c.bytes.ptr, .len = len, .flags = .{ .wide = c.wide } };
        _ = s.hash();
        _ = s.arrayIndex();
        s.name_id = if (c.wide) String.name_none else (names.lookup(c.bytes) orelse String.name_none);
    }
    return constants;
}

pub const AttachError = error{ UnknownHostGlobal, TooManyExports, TooManyHostGlobals };

/// Makes a verified program (and its constants) the one this engine runs, binding the host
/// globals it names. Allocates nothing.
pub fn attach(vm: *Vm, program: *const Program, constants: []String, host: *const builtins.Host) AttachError!void {
    if (program.host_globals.len > vm.host_globals.len) return error.TooManyHostGlobals;
    if (program.exports.len > vm.exports.len) return error.TooManyExports;
    for (program.host_globals, 0..) |name_index, i| {
        const name = constants[name_index].latin1();
        vm.host_globals[i] = host.globalValue(name) orelse return error.UnknownHostGlobal;
    }
    vm.constants = constants;
    vm.program = program;
    vm.host = host;
    @memset(vm.exports, Value.undefined_value);
}

/// `makeConstants` and `attach`, with the constants owned by this engine.
pub fn load(vm: *Vm, gpa: std.mem.Allocator, program: *const Program, host: *const builtins.Host) (error{OutOfMemory} || AttachError)!void {
    if (vm.owns_constants) gpa.free(vm.constants);
    vm.owns_constants = false;
    const constants = try makeConstants(gpa, program);
    errdefer gpa.free(constants);
    try vm.attach(program, constants, host);
    vm.owns_constants = true;
}

pub fn constantString(vm: *Vm, index: u16) *String {
    return &vm.constants[index];
}

/// A closure's `name`: the one given at run time (a computed key), else its function's,
/// else "".
pub fn closureName(vm: *Vm, c: *const object.Closure) *String {
    if (c.name) |n| return n;
    if (c.function.name == Program.no_name) return string.empty;
    return vm.constantString(c.function.name);
}

/// Forgets every object of the last run (not the module's, below `mark`).
pub fn resetHeap(vm: *Vm) void {
    vm.heap.reset();
}

// ---------------------------------------------------------------------------------------
// Running.

pub const Outcome = union(enum) {
    value: Value,
    /// An uncaught exception; `throw_site` says where.
    exception: Value,
    terminated: Termination,
};

/// Runs the program's top-level code.
pub fn runMain(vm: *Vm) Outcome {
    vm.module_builtin_changes = null;
    vm.startRun();
    defer vm.module_builtin_changes = vm.builtin_changes;
    const f = &vm.program.functions[0];
    if (!vm.roomFor(0, f) or f.handler_max > vm.handlers.len) {
        vm.termination = .stack;
        return .{ .terminated = .stack };
    }
    vm.frames[0] = .{
        .function = f,
        .closure = null,
        .pc = 0,
        .base = 0,
        .sp = f.local_count,
        .handler_base = 0,
        .result = 0,
        .entry = true,
    };
    @memset(vm.stack[0..f.local_count], Value.undefined_value);
    vm.frame_count = 1;
    const result = interpreter.run(vm);
    return vm.outcome(vm.settleRun(result, false));
}

/// Calls a function value from the host (an export, with arguments the host built). A
/// Promise it returns is settled by draining the microtask queue, and its value (or its
/// rejection, as an exception) is the call's outcome.
pub fn callFunction(vm: *Vm, callee: Value, args: []const Value) Outcome {
    vm.startRun();
    const result = vm.call(callee, Value.undefined_value, args);
    return vm.outcome(vm.settleRun(result, true));
}

/// The end of a run: the microtask queue drained, then `settle`.
fn settleRun(vm: *Vm, result: Error!Value, unwrap: bool) Error!Value {
    const v = try result;
    if (vm.jobs_head != null) try builtins.promises.drain(vm);
    return vm.settle(v, unwrap);
}

/// What a run's code leaves once its queue is drained: the value it returned (a promise's,
/// when `unwrap`), or the first promise rejected with no handler, as node reports it. A
/// promise still pending while timers are set is returned as it is: the run is not over, and
/// its host comes back when a timer is due (`suspendRun`, `runTimers`).
fn settle(vm: *Vm, v: Value, unwrap: bool) Error!Value {
    if (unwrap) {
        if (v.objectOf(.promise)) |o| {
            const p = o.as(object.Promise);
            switch (p.state) {
                .fulfilled => return p.result,
                .rejected => {
                    p.handled = true;
                    return vm.throwValue(p.result);
                },
                .pending => if (vm.timers_head == null and !vm.host_ops.pending()) {
                    return vm.throwMessage(.type_error, "the handler's Promise is still pending with no work left that could settle it");
                },
            }
        }
    }
    if (vm.rejected_head != null) {
        if (builtins.promises.unhandledRejection(vm)) |p| return vm.throwValue(p.result);
    }
    return v;
}

// ---------------------------------------------------------------------------------------
// Suspended runs: a run whose code returned with timers set goes on later.

/// What a run keeps while it waits for a timer and other runs use the engine (Engine.zig
/// keeps one per suspended request, with the heap these point into).
pub const Suspension = struct {
    jobs_head: ?*object.Job,
    jobs_tail: ?*object.Job,
    rejected_head: ?*object.Promise,
    symbol_registry: ?*@import("symbol.zig").Registered,
    timers_head: ?*builtins.timers.Timer,
    timer_next_id: u32,
    host_ops: HostOps,
    /// What is left of the run's budget: it bounds the whole run, across its suspensions.
    budget_left: u64,
    /// When the run's deadline passes; 0: it has none.
    deadline_at_ns: u64,
    builtin_changes: ?*const changes.Change,

    /// When the run wants to go on: its first timer's time, or its deadline if sooner.
    pub fn wakeAt(s: *const Suspension) u64 {
        const due = s.firstTimer();
        return if (s.deadline_at_ns != 0) @min(due, s.deadline_at_ns) else due;
    }

    /// Its first timer's time; the largest u64 when it has none.
    pub fn firstTimer(s: *const Suspension) u64 {
        return builtins.timers.firstDue(s.timers_head) orelse std.math.maxInt(u64);
    }
};

/// Ends a run that returned with timers set: settles the meter into the budget, starts the
/// deadline if no checkpoint has yet (so it runs while the run waits: at most one slice after
/// the run's true start, docs/JS.md "The deadline"), and hands back what the run keeps.
pub fn suspendRun(vm: *Vm) Suspension {
    assert(vm.frame_count == 0);
    assert(vm.timers_head != null or vm.host_ops.pending());
    vm.budget_left -|= vm.sliceUsed();
    vm.slice = 0;
    meter.fuel = 0;
    if (vm.limits.deadline_ns > 0 and vm.deadline_at_ns == 0) {
        vm.deadline_at_ns = vm.clock() +| vm.limits.deadline_ns;
    }
    return .{
        .jobs_head = vm.jobs_head,
        .jobs_tail = vm.jobs_tail,
        .rejected_head = vm.rejected_head,
        .symbol_registry = vm.symbol_registry,
        .timers_head = vm.timers_head,
        .timer_next_id = vm.timer_next_id,
        .host_ops = vm.host_ops,
        .budget_left = vm.budget_left,
        .deadline_at_ns = vm.deadline_at_ns,
        .builtin_changes = vm.builtin_changes,
    };
}

/// Readies the engine to go on with a suspended run (its heap must be the engine's again):
/// as `startRun`, but with the run's queue, timers, and what is left of its budget and time.
pub fn resumeRun(vm: *Vm, s: *const Suspension) void {
    vm.startRun();
    vm.jobs_head = s.jobs_head;
    vm.jobs_tail = s.jobs_tail;
    vm.rejected_head = s.rejected_head;
    vm.symbol_registry = s.symbol_registry;
    vm.timers_head = s.timers_head;
    vm.timer_next_id = s.timer_next_id;
    vm.host_ops = s.host_ops;
    vm.budget_left = s.budget_left;
    vm.deadline_at_ns = s.deadline_at_ns;
    vm.builtin_changes = s.builtin_changes;
    // An empty slice sends the first charge to a checkpoint, which stops a spent budget.
    vm.slice = @min(check_interval_ticks, vm.budget_left);
    meter.fuel = @intCast(vm.slice);
}

/// Runs the timers due by `now_ns` (each followed by a microtask drain, as node runs them),
/// then settles as a call does: `awaited` is the call's promise (a handler's), null for a
/// module's top level (`sluice js run`). Past the deadline, the timers that were due by it
/// still run (a wake-up may come late), and a run still waiting after them ends there.
pub fn runTimers(vm: *Vm, awaited: ?Value, now_ns: u64) Outcome {
    const past_deadline = vm.deadline_at_ns != 0 and now_ns >= vm.deadline_at_ns;
    const due_by = if (past_deadline) vm.deadline_at_ns else now_ns;
    const result: Error!Value = blk: {
        builtins.timers.runDue(vm, due_by) catch |err| break :blk err;
        const v = vm.settle(awaited orelse Value.undefined_value, awaited != null) catch |err| break :blk err;
        if (past_deadline and (vm.timers_head != null or vm.host_ops.pending())) break :blk vm.terminate(.deadline);
        break :blk v;
    };
    return vm.outcome(result);
}

/// What a host settles an operation with: `build` makes the value in the run's heap (a fetched
/// Response); the operation is fulfilled with it, or rejected with what it throws.
pub const HostValue = struct {
    context: *const anyopaque,
    build: *const fn (context: *const anyopaque, vm: *Vm) Error!Value,
};

/// Settles host operation `index` with `value`, drains the microtask queue, then settles as a
/// call does with `awaited`, the call's promise. A run resumed past its deadline ends there,
/// before anything of it runs.
pub fn settleHostOp(vm: *Vm, awaited: Value, index: u8, value: HostValue) Outcome {
    const result: Error!Value = blk: {
        if (vm.deadline_at_ns != 0 and vm.clock() >= vm.deadline_at_ns) break :blk vm.terminate(.deadline);
        const p = vm.host_ops.finish(index);
        const settled = if (value.build(value.context, vm)) |v|
            builtins.promises.resolvePromise(vm, p, v)
        else |err| switch (err) {
            error.Throw => rejected: {
                const reason = vm.exception;
                vm.exception = Value.undefined_value;
                vm.throw_site = null;
                break :rejected builtins.promises.rejectPromise(vm, p, reason);
            },
            error.Terminate => break :blk err,
        };
        settled catch |err| break :blk err;
        if (vm.jobs_head != null) builtins.promises.drain(vm) catch |err| break :blk err;
        break :blk vm.settle(awaited, true);
    };
    return vm.outcome(result);
}

/// Readies the engine for a run: its limits afresh, the meter filled with the first slice.
pub const regexp_cache_len = 16;

pub const RegExpCacheEntry = struct {
    pattern: ?*const String = null,
    flags: ?*const String = null,
    program: ?*const regexp.Program = null,
    scratch: ?*regexp.Scratch = null,
};

pub fn startRun(vm: *Vm) void {
    vm.regexp_cache = @splat(.{});
    vm.stack_floor = @frameAddress() -| vm.limits.native_stack_bytes;
    vm.budget_left = vm.limits.budget;
    vm.slice = @min(check_interval_ticks, vm.budget_left);
    meter.fuel = @intCast(vm.slice);
    vm.deadline_at_ns = 0;
    vm.termination = null;
    vm.throw_site = null;
    vm.frame_count = 0;
    vm.handler_count = 0;
    vm.native_depth = 0;
    vm.jobs_head = null;
    vm.jobs_tail = null;
    vm.rejected_head = null;
    vm.timers_head = null;
    vm.timer_next_id = 1;
    vm.host_ops = .{};
    vm.builtin_changes = vm.module_builtin_changes;
}

fn outcome(vm: *Vm, result: Error!Value) Outcome {
    return if (result) |v| .{ .value = v } else |err| switch (err) {
        error.Throw => .{ .exception = vm.exception },
        error.Terminate => .{ .terminated = vm.termination.? },
    };
}

/// Whether a frame for `f` fits at stack index `base`.
fn roomFor(vm: *const Vm, base: usize, f: *const Program.Function) bool {
    return base + @as(usize, f.local_count) + f.stack_max <= vm.stack.len;
}

/// The first stack index above everything the running frame may use.
fn top(vm: *const Vm) u32 {
    if (vm.frame_count == 0) return 0;
    const frame = &vm.frames[vm.frame_count - 1];
    return frame.base + frame.function.local_count + frame.function.stack_max;
}

/// Calls any callable value with a receiver (natives see it; closures have no `this`).
pub fn call(vm: *Vm, callee: Value, this: Value, args: []const Value) Error!Value {
    if (callee.objectOf(.closure)) |o| {
        const closure = o.as(object.Closure);
        if (vm.native_depth >= vm.limits.native_depth) return vm.throwStackOverflow();
        try vm.checkNativeStack();
        const start = vm.top();
        if (start + args.len + 1 > vm.stack.len) return vm.throwStackOverflow();
        // Entering the interpreter from a builtin costs more than a call from bytecode.
        try vm.charge(callback_ticks);
        vm.stack[start] = callee;
        @memcpy(vm.stack[start + 1 ..][0..args.len], args);
        try vm.pushFrame(closure, start + 1, @intCast(args.len), start, true, this);
        vm.native_depth += 1;
        defer vm.native_depth -= 1;
        return interpreter.run(vm);
    }
    // A builtin calling a native back (`a.forEach(Math.abs)`) pays for the call as a
    // JavaScript callee would: no frame is pushed to charge it.
    try vm.charge(call_ticks);
    return vm.callNative(callee, this, args, null);
}

/// `new callee(...args)` from a builtin, with `new_target` (Reflect-like): runs a closure's
/// constructor to completion.
pub fn construct(vm: *Vm, callee: Value, args: []const Value, new_target: Value) Error!Value {
    const closure = (callee.objectOf(.closure) orelse return builtins.construct(vm, callee, args)).as(object.Closure);
    if (!closure.function.kind.isConstructor()) return vm.throwNotConstructor(callee);
    if (vm.native_depth >= vm.limits.native_depth) return vm.throwStackOverflow();
    try vm.checkNativeStack();
    const start = vm.top();
    if (start + args.len + 1 > vm.stack.len) return vm.throwStackOverflow();
    try vm.charge(callback_ticks);
    const this = try vm.constructThis(closure, new_target);
    vm.stack[start] = callee;
    @memcpy(vm.stack[start + 1 ..][0..args.len], args);
    try vm.pushConstructFrame(closure, start + 1, @intCast(args.len), start, true, this, new_target);
    vm.native_depth += 1;
    defer vm.native_depth -= 1;
    return interpreter.run(vm);
}

/// The object `new` makes for a constructor (undefined for a derived class's, whose `this`
/// comes from `super()`), inheriting from `new_target.prototype`.
pub fn constructThis(vm: *Vm, closure: *object.Closure, new_target: Value) Error!Value {
    if (closure.function.kind == .derived_constructor) return Value.undefined_value;
    const o = try vm.newObject(0);
    o.proto = try ops.prototypeForNew(vm, new_target);
    return Value.obj(o);
}

/// pushFrame for `new`: the frame returns its `this` unless the body returns an object.
pub fn pushConstructFrame(vm: *Vm, closure: *object.Closure, args: u32, argc: u32, result: u32, entry: bool, this: Value, new_target: Value) Error!void {
    try vm.pushFrameFor(closure, args, argc, result, entry, this, new_target);
    const frame = &vm.frames[vm.frame_count - 1];
    frame.construct = true;
}

pub fn throwNotConstructor(vm: *Vm, callee: Value) Error {
    return vm.throwFmt(.type_error, "{f} is not a constructor", .{ops.ShortFormat{ .vm = vm, .v = callee }});
}

/// Calls a native or builtin callable; anything else is a TypeError naming `site`.
pub fn callNative(vm: *Vm, callee: Value, this: Value, args: []const Value, site: ?*String) Error!Value {
    if (callee.is(.native)) {
        const native = builtins.native(vm, @intCast(callee.payload()));
        return native.func(vm, this, args);
    }
    if (callee.is(.builtin)) {
        if (builtins.callBehavior(vm, @intCast(callee.payload()))) |native| {
            return native.func(vm, this, args);
        }
    }
    if (callee.objectOf(.bound_function)) |o| return vm.callBound(o.as(object.BoundFunction), args);
    if (callee.objectOf(.promise_function)) |o| return builtins.promises.callFunction(vm, o.as(object.PromiseFunction), this, args);
    return vm.throwNotFunction(callee, site);
}

/// Calls a bound function: its target with its receiver, its arguments and then these.
fn callBound(vm: *Vm, bound: *object.BoundFunction, args: []const Value) Error!Value {
    try vm.checkNativeStack();
    return vm.call(bound.target, bound.this, try vm.boundArguments(bound, args));
}

/// A bound function's arguments followed by the call's, in the heap.
pub fn boundArguments(vm: *Vm, bound: *const object.BoundFunction, args: []const Value) Error![]const Value {
    const all = vm.heap.alloc(Value, bound.args.len + args.len) catch return vm.outOfMemory();
    try vm.charge(meter.elementsCost(all.len));
    @memcpy(all[0..bound.args.len], bound.args);
    @memcpy(all[bound.args.len..], args);
    return all;
}

pub fn throwNotFunction(vm: *Vm, callee: Value, site: ?*String) Error {
    if (site) |s| return vm.throwFmt(.type_error, "{f} is not a function", .{ops.StringFormat{ .s = s }});
    return vm.throwFmt(.type_error, "{f} is not a function", .{ops.ShortFormat{ .vm = vm, .v = callee }});
}

/// Pushes a frame for a call (not `new`) of a closure whose arguments are at
/// stack[args..args+argc].
pub fn pushFrame(vm: *Vm, closure: *object.Closure, args: u32, argc: u32, result: u32, entry: bool, this: Value) Error!void {
    if (closure.function.kind.isClassConstructor()) {
        return vm.throwFmt(.type_error, "Class constructor {f} cannot be invoked without 'new'", .{ops.StringFormat{ .s = vm.closureName(closure) }});
    }
    return vm.pushFrameFor(closure, args, argc, result, entry, this, Value.undefined_value);
}

fn pushFrameFor(vm: *Vm, closure: *object.Closure, args: u32, argc: u32, result: u32, entry: bool, this: Value, new_target: Value) Error!void {
    const f = closure.function;
    if (vm.frame_count >= vm.frames.len or !vm.roomFor(args, f) or
        vm.handler_count + @as(usize, f.handler_max) > vm.handlers.len)
    {
        return vm.throwStackOverflow();
    }
    try vm.charge(call_ticks);
    const params = f.param_count;
    const locals = vm.stack[args..][0..f.local_count];
    if (f.has_rest) {
        const extra = if (argc > params) argc - params else 0;
        const rest = vm.newArray(extra) catch |err| return err;
        if (extra > 0) {
            @memcpy(rest.items[0..extra], vm.stack[args + params ..][0..extra]);
            rest.len = extra;
        }
        if (argc < params) @memset(locals[argc..params], Value.undefined_value);
        locals[params] = Value.obj(&rest.object);
        @memset(locals[params + 1 ..], Value.undefined_value);
    } else if (argc < f.local_count) {
        @memset(locals[argc..], Value.undefined_value);
    }
    vm.frames[vm.frame_count] = .{
        .function = f,
        .closure = closure,
        .pc = 0,
        .base = args,
        .sp = args + f.local_count,
        .handler_base = vm.handler_count,
        .result = result,
        .entry = entry,
        .this = this,
        .new_target = new_target,
        .argc = argc,
    };
    vm.frame_count += 1;
}

// ---------------------------------------------------------------------------------------
// Generators.

/// generator_start: a new generator holding the running frame, to resume at `pc`.
pub fn newGenerator(vm: *Vm, frame: *const Frame, pc: u32) Error!*object.Generator {
    const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
    const f = frame.function;
    const gen = vm.heap.create(object.Generator) catch return vm.outOfMemory();
    const values = vm.heap.alloc(Value, @as(usize, f.local_count) + f.stack_max) catch return vm.outOfMemory();
    const handlers = vm.heap.alloc(object.Generator.SavedHandler, f.handler_max) catch return vm.outOfMemory();
    gen.* = .{ .object = .{ .kind = .generator }, .closure = closure, .this = frame.this, .values = values.ptr, .handlers = handlers.ptr };
    // OrdinaryCreateFromConstructor: the function's `prototype` if it is still an object (it
    // is writable), else %GeneratorPrototype% (the kind's, left undefined).
    if (closure.object.properties.find(names.string("prototype"))) |i| {
        const prototype = closure.object.properties.items[i].value;
        if (prototype.is(.object)) gen.object.proto = prototype;
    }
    vm.saveFrame(gen, frame, pc);
    return gen;
}

/// Copies a frame's locals, operands and handlers into its generator.
pub fn saveFrame(vm: *Vm, gen: *object.Generator, frame: *const Frame, pc: u32) void {
    const f = frame.function;
    const n = frame.sp - frame.base;
    assert(n <= @as(u32, f.local_count) + f.stack_max);
    assert(vm.handler_count - frame.handler_base <= f.handler_max);
    meter.charge(meter.elementsCost(n));
    @memcpy(gen.values[0..n], vm.stack[frame.base..][0..n]);
    gen.values_len = n;
    gen.handlers_len = vm.handler_count - frame.handler_base;
    for (vm.handlers[frame.handler_base..vm.handler_count], gen.handlers[0..gen.handlers_len]) |h, *saved| {
        saved.* = .{ .target = h.target, .sp = h.sp - frame.base };
    }
    gen.pc = pc;
}

pub const ResumeMode = enum { next, throw, @"return" };
pub const Resumed = struct { value: Value, done: bool };

/// next(v), throw(e), return(v): runs the generator's frame until it yields, returns or
/// throws. return(v) on a generator suspended inside `try` unwinds its frame with the return
/// signal (Value.generator_return), which runs the `finally` blocks (catch blocks rethrow
/// it) and becomes `{ value: v, done: true }` when it leaves the frame.
pub fn resumeGenerator(vm: *Vm, gen: *object.Generator, sent: Value, mode: ResumeMode) Error!Resumed {
    switch (gen.state) {
        .running => return vm.throwMessage(.type_error, "Generator is already running"),
        .done => return switch (mode) {
            .next => .{ .value = Value.undefined_value, .done = true },
            .@"return" => .{ .value = sent, .done = true },
            .throw => vm.throwValue(sent),
        },
        .suspended_start, .suspended_yield => if ((mode == .@"return" and (gen.state == .suspended_start or gen.handlers_len == 0)) or
            (mode == .throw and gen.state == .suspended_start))
        {
            gen.state = .done;
            if (mode == .throw) return vm.throwValue(sent);
            return .{ .value = sent, .done = true };
        },
    }
    try ops.checkModuleWrite(vm, gen);
    if (vm.native_depth >= vm.limits.native_depth) return vm.throwStackOverflow();
    try vm.checkNativeStack();
    const f = gen.closure.function;
    const start = vm.top();
    if (vm.frame_count >= vm.frames.len or !vm.roomFor(start + 1, f) or
        vm.handler_count + @as(usize, f.handler_max) > vm.handlers.len)
    {
        return vm.throwStackOverflow();
    }
    try vm.charge(callback_ticks + meter.elementsCost(gen.values_len));
    const base = start + 1;
    @memcpy(vm.stack[base..][0..gen.values_len], gen.values[0..gen.values_len]);
    var sp = base + gen.values_len;
    const handler_base = vm.handler_count;
    for (gen.handlers[0..gen.handlers_len]) |h| {
        vm.handlers[vm.handler_count] = .{ .target = h.target, .sp = base + h.sp };
        vm.handler_count += 1;
    }
    if (gen.state == .suspended_yield) {
        vm.stack[sp] = sent;
        sp += 1;
    }
    vm.frames[vm.frame_count] = .{
        .function = f,
        .closure = gen.closure,
        .pc = gen.pc,
        .base = base,
        .sp = sp,
        .handler_base = handler_base,
        .result = start,
        .entry = true,
        .this = gen.this,
        .generator = gen,
    };
    vm.frame_count += 1;
    gen.state = .running;
    vm.native_depth += 1;
    defer vm.native_depth -= 1;
    if (mode != .next) {
        if (mode == .@"return") gen.return_value = sent;
        vm.exception = if (mode == .throw) sent else Value.generator_return;
        if (!vm.unwind()) {
            gen.state = .done;
            if (vm.exception.eqlBits(Value.generator_return)) return .{ .value = gen.return_value, .done = true };
            return error.Throw;
        }
    }
    const result = interpreter.run(vm) catch |err| {
        gen.state = .done;
        if (err == error.Throw and vm.exception.eqlBits(Value.generator_return)) {
            return .{ .value = gen.return_value, .done = true };
        }
        return err;
    };
    if (gen.state == .running) {
        gen.state = .done;
        return .{ .value = result, .done = true };
    }
    assert(gen.state == .suspended_yield);
    return .{ .value = result, .done = false };
}

// ---------------------------------------------------------------------------------------
// Exceptions.

/// Records the current position as where an exception starts its way out.
fn noteThrowSite(vm: *Vm) void {
    if (vm.frame_count == 0) return;
    const frame = &vm.frames[vm.frame_count - 1];
    vm.throw_site = .{ .function = frame.function, .pc = frame.pc };
}

pub fn throwValue(vm: *Vm, v: Value) Error {
    vm.exception = v;
    vm.noteThrowSite();
    return error.Throw;
}

/// Throws a new error object of `kind` with a formatted message.
pub fn throwFmt(vm: *Vm, kind: object.ErrorKind, comptime fmt: []const u8, args: anytype) Error {
    var buf: [512]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    w.print(fmt, args) catch {}; // A long message is cut, not lost.
    return vm.throwMessage(kind, w.buffered());
}

pub fn throwMessage(vm: *Vm, kind: object.ErrorKind, message: []const u8) Error {
    const e = vm.newError(kind, message) catch |err| return err;
    return vm.throwValue(Value.obj(&e.object));
}

/// Throws "Maximum call stack size exceeded" when the native stack is nearly used up
/// (natives that recurse call this on each level).
pub inline fn checkNativeStack(vm: *Vm) Error!void {
    if (@frameAddress() < vm.stack_floor) return vm.throwStackOverflow();
}

pub fn throwStackOverflow(vm: *Vm) Error {
    return vm.throwMessage(.range_error, "Maximum call stack size exceeded");
}

pub fn terminate(vm: *Vm, why: Termination) Error {
    vm.termination = why;
    vm.noteThrowSite();
    return error.Terminate;
}

// ---------------------------------------------------------------------------------------
// Time: the budget and the deadline.

/// Ticks between two readings of the clock. At 1 to 2 ns a tick that is 0.1 ms or less (a
/// reading costs about 20 ns through the vDSO: 0.02%), and it is the bound on how late the
/// deadline is noticed, with the largest single charge (docs/JS.md, "Limits").
pub const check_interval_ticks: u64 = 1 << 16;

/// What a call (JavaScript to JavaScript, or a builtin calling back) costs beyond its body.
pub const call_ticks: u64 = 8;

/// What a builtin calling a JavaScript function back (map's, sort's) costs beyond the call.
pub const callback_ticks: u64 = 16;

/// Charges `ticks` of work and ends the run if its budget is spent or its deadline passed.
/// Builtins call it before (or while) doing anything whose size the script chooses.
pub inline fn charge(vm: *Vm, ticks: u64) Error!void {
    meter.charge(ticks);
    if (meter.fuel <= 0) return vm.checkpoint();
}

/// The meter ran down: settles the slice against the budget, reads the clock against the
/// deadline (the first reading starts it), and hands the meter the next slice.
noinline fn checkpoint(vm: *Vm) Error!void {
    if (vm.termination) |why| return vm.terminate(why); // Stays stopped.
    assert(meter.fuel <= 0);
    const used = vm.slice +| @abs(meter.fuel);
    vm.slice = 0;
    meter.fuel = 0;
    if (used >= vm.budget_left) {
        vm.budget_left = 0;
        return vm.terminate(.budget);
    }
    vm.budget_left -= used;
    if (vm.limits.deadline_ns > 0) {
        const now = vm.clock();
        if (vm.deadline_at_ns == 0) {
            vm.deadline_at_ns = now +| vm.limits.deadline_ns;
        } else if (now >= vm.deadline_at_ns) {
            return vm.terminate(.deadline);
        }
    }
    vm.slice = @min(check_interval_ticks, vm.budget_left);
    assert(vm.slice > 0);
    meter.fuel = @intCast(vm.slice);
}

/// The ticks charged so far in this run (for tests and reports).
pub fn ticksUsed(vm: *const Vm) u64 {
    return (vm.limits.budget - vm.budget_left) +| vm.sliceUsed();
}

/// The ticks charged since the last checkpoint.
fn sliceUsed(vm: *const Vm) u64 {
    return if (meter.fuel >= 0) vm.slice -| @as(u64, @intCast(meter.fuel)) else vm.slice +| @abs(meter.fuel);
}

fn monotonicNs() u64 {
    var ts: std.os.linux.timespec = undefined;
    _ = std.os.linux.clock_gettime(.MONOTONIC, &ts); // Cannot fail with this clock and a valid pointer.
    return @as(u64, @intCast(ts.sec)) * std.time.ns_per_s + @as(u64, @intCast(ts.nsec));
}

/// Turns a heap failure into the script's RangeError, using the reserve to build it.
pub fn outOfMemory(vm: *Vm) Error {
    if (vm.heap.reserve_open) return vm.terminate(.memory);
    vm.heap.openReserve();
    return vm.throwFmt(.range_error, "Out of memory: the script's heap of {d} bytes is full", .{vm.heap.region.len});
}

/// Unwinds after an exception: to the innermost handler of a frame this `run` owns (true),
/// or out of the entry frame (false).
pub fn unwind(vm: *Vm) bool {
    while (vm.frame_count > 0) {
        const frame = &vm.frames[vm.frame_count - 1];
        if (vm.handler_count > frame.handler_base) {
            vm.handler_count -= 1;
            const h = vm.handlers[vm.handler_count];
            vm.stack[h.sp] = vm.exception;
            frame.sp = h.sp + 1;
            frame.pc = h.target;
            return true;
        }
        vm.frame_count -= 1;
        if (frame.entry) return false;
    }
    return false;
}

/// The source position of a site, for reports.
pub fn sitePosition(site: Site) ?Program.Position {
    return site.function.positionAt(site.pc);
}

// ---------------------------------------------------------------------------------------
// Allocation, with heap failure turned into the script's RangeError.

pub fn newObject(vm: *Vm, capacity: u32) Error!*Object {
    return object.newPlain(vm.heap, capacity) catch vm.outOfMemory();
}

pub fn newArray(vm: *Vm, capacity: usize) Error!*object.Array {
    if (capacity > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    return object.newArray(vm.heap, capacity) catch vm.outOfMemory();
}

pub fn newError(vm: *Vm, kind: object.ErrorKind, message: []const u8) Error!*object.ErrorObject {
    const msg = if (message.len == 0) null else (string.fromUtf8(vm.heap, message) catch return vm.outOfMemory());
    return vm.newErrorWith(kind, msg);
}

pub fn newErrorWith(vm: *Vm, kind: object.ErrorKind, message: ?*String) Error!*object.ErrorObject {
    const e = vm.heap.create(object.ErrorObject) catch return vm.outOfMemory();
    e.* = .{ .object = .{ .kind = .error_object }, .error_kind = kind, .message = message, .position = null };
    if (vm.frame_count > 0) {
        const frame = &vm.frames[vm.frame_count - 1];
        if (frame.function.positionAt(frame.pc)) |p| {
            var buf: [300]u8 = undefined;
            const text = std.fmt.bufPrint(&buf, "{s}:{d}:{d}", .{ vm.program.source_name, p.line, p.column }) catch null;
            if (text) |t| e.position = string.fromUtf8(vm.heap, t) catch null;
        }
    }
    return e;
}

pub fn newString(vm: *Vm, text: []const u8) Error!*String {
    return string.fromUtf8(vm.heap, text) catch vm.outOfMemory();
}

pub fn newLatin1(vm: *Vm, text: []const u8) Error!*String {
    return string.fromLatin1(vm.heap, text) catch vm.outOfMemory();
}

pub fn newClosure(vm: *Vm, f: *const Program.Function, captures: []*Cell) Error!*object.Closure {
    const c = vm.heap.create(object.Closure) catch return vm.outOfMemory();
    c.* = .{ .object = .{ .kind = .closure }, .function = f, .captures = captures.ptr };
    if (f.kind == .normal) try vm.givePrototype(c) else if (f.kind.isGenerator()) try vm.giveGeneratorPrototype(c);
    return c;
}

/// A generator function's own `prototype` (ES §27.3.4.3): a new object with no
/// `constructor`, inheriting %GeneratorPrototype% (or %AsyncGeneratorPrototype%), from which
/// the generator objects its calls make inherit (newGenerator).
fn giveGeneratorPrototype(vm: *Vm, c: *object.Closure) Error!void {
    const prototype = try vm.newObject(0);
    prototype.proto = Value.builtin(if (c.function.kind.isAsyncGenerator())
        comptime builtins.builtinId("%AsyncGenerator.prototype%")
    else
        comptime builtins.builtinId("%Generator.prototype%"));
    c.object.properties.reserveExact(vm.heap, 1) catch return vm.outOfMemory();
    const flags: object.PropertyFlags = .{ .not_enumerable = true, .not_configurable = true };
    c.object.properties.define(vm.heap, names.string("prototype"), Value.obj(prototype), flags) catch return vm.outOfMemory();
}

/// A `function`'s own `prototype`: a new object whose `constructor` is the function. Made
/// with the function (not on first use), so that a module's functions have theirs before
/// the module is sealed.
fn givePrototype(vm: *Vm, c: *object.Closure) Error!void {
    const prototype = try vm.newObject(0);
    prototype.properties.reserveExact(vm.heap, 1) catch return vm.outOfMemory();
    prototype.properties.define(vm.heap, names.string("constructor"), Value.obj(&c.object), .hidden) catch return vm.outOfMemory();
    c.object.properties.reserveExact(vm.heap, 1) catch return vm.outOfMemory();
    const flags: object.PropertyFlags = .{ .not_enumerable = true, .not_configurable = true };
    c.object.properties.define(vm.heap, names.string("prototype"), Value.obj(prototype), flags) catch return vm.outOfMemory();
}

pub fn newCell(vm: *Vm, v: Value) Error!*Cell {
    const c = vm.heap.create(Cell) catch return vm.outOfMemory();
    c.* = .{ .value = v };
    return c;
}

/// A fresh pseudo-random double in [0, 1) (xorshift64*; Math.random needs no more).
pub fn random(vm: *Vm) f64 {
    var x = vm.random_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    vm.random_state = x;
    const bits = (x *% 0x2545F4914F6CDD1D) >> 11;
    return @as(f64, @floatFromInt(bits)) / 9007199254740992.0;
}

pub fn seedRandom(vm: *Vm, seed: u64) void {
    vm.random_state = seed | 1;
}
