//! Promise, queueMicrotask and the microtask queue.
//!
//! The queue is a FIFO of jobs in the run's heap (Vm.jobs_head/jobs_tail). A run drains it
//! when its code returns (the module's top level, or a handler call: Vm.runMain and
//! Vm.callFunction), every job charged to the budget, so that `for (;;) await null` or a
//! promise chain that never ends stops at the budget or the deadline like any loop. The
//! jobs follow the spec's order (PromiseReactionJob, PromiseResolveThenableJob), so that
//! output interleaves as node's does.
//!
//! What settles a promise is a job, the script, or a host operation: a timer (timers.zig),
//! whose callback the host runs when it is due, after which the queue is drained again with
//! what is left of the run's budget and deadline. A run that ends its drain with its promise
//! pending and timers set is suspended meanwhile (Vm.suspendRun, Engine.zig; docs/JS.md,
//! "Timers and suspended requests").
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const Promise = object.Promise;
const PromiseFunction = object.PromiseFunction;
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;
const async_generators = @import("async_generators.zig");
const generators = @import("generators.zig");

/// What a job costs beyond the calls it makes.
const job_ticks = 16;

pub fn newPromise(vm: *Vm) Error!*Promise {
    const p = vm.heap.create(Promise) catch return vm.outOfMemory();
    p.* = .{ .object = .{ .kind = .promise } };
    return p;
}

fn enqueue(vm: *Vm, what: @FieldType(object.Job, "what")) Error!void {
    const job = vm.heap.create(object.Job) catch return vm.outOfMemory();
    job.* = .{ .what = what };
    if (vm.jobs_tail) |tail| tail.next = job else vm.jobs_head = job;
    vm.jobs_tail = job;
}

/// Runs jobs until none is left. An exception a job lets out (a queueMicrotask callback's)
/// ends the drain as an uncaught exception, as it ends node's process.
pub fn drain(vm: *Vm) Error!void {
    while (vm.jobs_head) |job| {
        vm.jobs_head = job.next;
        if (vm.jobs_head == null) vm.jobs_tail = null;
        try vm.charge(job_ticks);
        try runJob(vm, job);
    }
}

/// The first promise rejected with no handler by the end of a drain, if any.
pub fn unhandledRejection(vm: *Vm) ?*Promise {
    var p = vm.rejected_head;
    while (p) |r| : (p = r.next_rejected) {
        if (!r.handled) return r;
    }
    return null;
}

fn runJob(vm: *Vm, job: *object.Job) Error!void {
    switch (job.what) {
        .reaction => |r| {
            const reaction = r.reaction;
            if (reaction.generator) |gen| return resumeAsync(vm, gen, r.argument, r.rejected);
            const handler = if (r.rejected) reaction.on_rejected else reaction.on_fulfilled;
            const derived = reaction.derived;
            if (!ops.isCallable(handler)) {
                const d = derived orelse return;
                return if (r.rejected) rejectPromise(vm, d, r.argument) else resolvePromise(vm, d, r.argument);
            }
            const result = vm.call(handler, Value.undefined_value, &.{r.argument}) catch |err| switch (err) {
                error.Throw => {
                    if (derived) |d| return rejectPromise(vm, d, vm.exception);
                    return;
                },
                error.Terminate => return err,
            };
            if (derived) |d| try resolvePromise(vm, d, result);
        },
        .thenable => |t| {
            const fns = try resolvingFunctions(vm, t.promise);
            _ = vm.call(t.then, t.thenable, &.{ fns.resolve, fns.reject }) catch |err| switch (err) {
                error.Throw => _ = try vm.call(fns.reject, Value.undefined_value, &.{vm.exception}),
                error.Terminate => return err,
            };
        },
        .callback => |f| _ = try vm.call(f, Value.undefined_value, &.{}),
        .resume_async => |a| return resumeAsync(vm, a.generator, a.argument, a.rejected),
    }
}

// ---------------------------------------------------------------------------------------
// Settling.

pub fn makeFunction(vm: *Vm, action: PromiseFunction.Action, promise: ?*Promise) Error!*PromiseFunction {
    const f = vm.heap.create(PromiseFunction) catch return vm.outOfMemory();
    f.* = .{ .object = .{ .kind = .promise_function }, .action = action, .promise = promise };
    return f;
}

pub const Resolvers = struct { resolve: Value, reject: Value };

/// CreateResolvingFunctions: resolve and reject, sharing one "already resolved" flag.
pub fn resolvingFunctions(vm: *Vm, p: *Promise) Error!Resolvers {
    const already = vm.heap.create(bool) catch return vm.outOfMemory();
    already.* = false;
    const resolve = try makeFunction(vm, .resolve, p);
    const reject = try makeFunction(vm, .reject, p);
    resolve.already = already;
    reject.already = already;
    return .{ .resolve = Value.obj(&resolve.object), .reject = Value.obj(&reject.object) };
}

/// The Promise Resolve Functions' steps: a thenable is followed in a job, anything else
/// fulfills.
pub fn resolvePromise(vm: *Vm, p: *Promise, resolution: Value) Error!void {
    if (resolution.objectOf(.promise) == &p.object) {
        const e = try vm.newError(.type_error, "Chaining cycle detected for promise #<Promise>");
        return rejectPromise(vm, p, Value.obj(&e.object));
    }
    if (!resolution.is(.object)) return settle(vm, p, resolution, .fulfilled);
    const then_method = ops.getField(vm, resolution, names.string("then")) catch |err| switch (err) {
        error.Throw => return rejectPromise(vm, p, vm.exception),
        error.Terminate => return err,
    };
    if (!ops.isCallable(then_method)) return settle(vm, p, resolution, .fulfilled);
    try enqueue(vm, .{ .thenable = .{ .promise = p, .thenable = resolution, .then = then_method } });
}

pub fn rejectPromise(vm: *Vm, p: *Promise, reason: Value) Error!void {
    return settle(vm, p, reason, .rejected);
}

fn settle(vm: *Vm, p: *Promise, v: Value, state: Promise.State) Error!void {
    if (p.state != .pending) return;
    try ops.checkModuleWrite(vm, p);
    p.state = state;
    p.result = v;
    var reaction = p.reactions;
    p.reactions = null;
    p.reactions_tail = null;
    while (reaction) |r| : (reaction = r.next) {
        try vm.charge(meter.elementsCost(1));
        try enqueue(vm, .{ .reaction = .{ .reaction = r, .argument = v, .rejected = state == .rejected } });
    }
    if (state == .rejected and !p.handled) {
        p.next_rejected = vm.rejected_head;
        vm.rejected_head = p;
    }
}

/// PerformPromiseThen: a reaction now if settled, or when it settles.
pub fn performThen(vm: *Vm, p: *Promise, on_fulfilled: Value, on_rejected: Value, derived: ?*Promise, generator: ?*object.Generator) Error!void {
    const reaction = vm.heap.create(object.Reaction) catch return vm.outOfMemory();
    reaction.* = .{
        .derived = derived,
        .on_fulfilled = if (ops.isCallable(on_fulfilled)) on_fulfilled else Value.undefined_value,
        .on_rejected = if (ops.isCallable(on_rejected)) on_rejected else Value.undefined_value,
        .generator = generator,
    };
    switch (p.state) {
        .pending => {
            // A module's pending promise cannot hold a request's reactions.
            try ops.checkModuleWrite(vm, p);
            if (p.reactions_tail) |tail| tail.next = reaction else p.reactions = reaction;
            p.reactions_tail = reaction;
        },
        .fulfilled, .rejected => try enqueue(vm, .{ .reaction = .{ .reaction = reaction, .argument = p.result, .rejected = p.state == .rejected } }),
    }
    // Marking a module's settled promise handled is harmless and not a write the script sees.
    if (@intFromPtr(p) < vm.module_floor) p.handled = true;
}

/// PromiseResolve(%Promise%, v): v itself if it is a promise.
pub fn promiseResolve(vm: *Vm, v: Value) Error!*Promise {
    if (v.objectOf(.promise)) |o| return o.as(Promise);
    const p = try newPromise(vm);
    try resolvePromise(vm, p, v);
    return p;
}

// ---------------------------------------------------------------------------------------
// Async functions: a generator whose `await` suspends it (see interpreter's await).

/// Resumes an async function's frame with an awaited value (or throws it in), then waits on
/// what it awaits next, or settles its promise.
pub fn resumeAsync(vm: *Vm, gen: *object.Generator, argument: Value, rejected: bool) Error!void {
    if (gen.async_generator != null) return async_generators.resumeStep(vm, gen, argument, if (rejected) .throw else .next);
    const p = gen.promise orelse return vm.terminate(.invalid_bytecode);
    const step = vm.resumeGenerator(gen, argument, if (rejected) .throw else .next) catch |err| switch (err) {
        error.Throw => return rejectPromise(vm, p, vm.exception),
        error.Terminate => return err,
    };
    if (step.done) return resolvePromise(vm, p, step.value);
    const awaited = promiseResolve(vm, step.value) catch |err| switch (err) {
        error.Throw => return enqueue(vm, .{ .resume_async = .{ .generator = gen, .argument = vm.exception, .rejected = true } }),
        error.Terminate => return err,
    };
    try performThen(vm, awaited, Value.undefined_value, Value.undefined_value, null, gen);
}

/// A suspended frame resumed by a job (an await whose operand could not become a promise).
pub fn enqueueResume(vm: *Vm, gen: *object.Generator, argument: Value, rejected: bool) Error!void {
    return enqueue(vm, .{ .resume_async = .{ .generator = gen, .argument = argument, .rejected = rejected } });
}

// ---------------------------------------------------------------------------------------
// The functions promises make.

pub fn callFunction(vm: *Vm, f: *PromiseFunction, this: Value, args: []const Value) Error!Value {
    const v = arg(args, 0);
    switch (f.action) {
        .async_from_sync_next => return async_generators.asyncFromSyncNext(vm, f.value, this, v),
        .async_from_sync_unwrap => return generators.iteratorResult(vm, v, f.called),
        .async_generator_return_fulfilled, .async_generator_return_rejected => {
            const gen = f.generator orelse return vm.terminate(.invalid_bytecode);
            try async_generators.awaitReturnSettled(vm, gen, v, f.action == .async_generator_return_rejected);
            return Value.undefined_value;
        },
        .async_generator_resume_return, .async_generator_resume_throw => {
            const gen = f.generator orelse return vm.terminate(.invalid_bytecode);
            try async_generators.resumeStep(vm, gen, v, if (f.action == .async_generator_resume_return) .@"return" else .throw);
            return Value.undefined_value;
        },
        .resolve, .reject => {
            const already = f.already.?;
            if (already.*) return Value.undefined_value;
            already.* = true;
            if (f.action == .resolve) try resolvePromise(vm, f.promise.?, v) else try rejectPromise(vm, f.promise.?, v);
            return Value.undefined_value;
        },
        .finally_fulfilled, .finally_rejected => {
            const result = try vm.call(f.value, Value.undefined_value, &.{});
            const p = try promiseResolve(vm, result);
            const thunk = try makeFunction(vm, if (f.action == .finally_fulfilled) .value_thunk else .thrower, null);
            thunk.value = v;
            const derived = try newPromise(vm);
            try performThen(vm, p, Value.obj(&thunk.object), Value.undefined_value, derived, null);
            return Value.obj(&derived.object);
        },
        .value_thunk => return f.value,
        .thrower => return vm.throwValue(f.value),
        .all_element, .all_settled_fulfilled, .all_settled_rejected, .any_rejected => {
            if (f.called) return Value.undefined_value;
            f.called = true;
            const shared = f.shared.?;
            const item = switch (f.action) {
                .all_settled_fulfilled => try settledRecord(vm, "fulfilled", "value", v),
                .all_settled_rejected => try settledRecord(vm, "rejected", "reason", v),
                else => v,
            };
            shared.values.items[f.index] = item;
            shared.remaining -= 1;
            if (shared.remaining == 0) try finishAll(vm, shared, f.action == .any_rejected);
            return Value.undefined_value;
        },
    }
}

fn settledRecord(vm: *Vm, comptime status: []const u8, comptime key: []const u8, v: Value) Error!Value {
    const o = try vm.newObject(2);
    o.properties.add(vm.heap, names.string("status"), Value.string(try vm.newLatin1(status))) catch return vm.outOfMemory();
    o.properties.add(vm.heap, names.string(key), v) catch return vm.outOfMemory();
    return Value.obj(o);
}

fn finishAll(vm: *Vm, shared: *object.PromiseShared, is_any: bool) Error!void {
    if (!is_any) return resolvePromise(vm, shared.promise, Value.obj(&shared.values.object));
    return rejectPromise(vm, shared.promise, try aggregateError(vm, shared.values));
}

/// V8's AggregateError for Promise.any, as an Error named AggregateError with `errors`.
fn aggregateError(vm: *Vm, errors: *object.Array) Error!Value {
    const e = try vm.newError(.@"error", "All promises were rejected");
    e.object.properties.define(vm.heap, names.string("name"), Value.string(try vm.newLatin1("AggregateError")), .hidden) catch return vm.outOfMemory();
    e.object.properties.define(vm.heap, names.string("errors"), Value.obj(&errors.object), .hidden) catch return vm.outOfMemory();
    return Value.obj(&e.object);
}

// ---------------------------------------------------------------------------------------
// The builtins.

pub fn requireNew(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Promise constructor cannot be invoked without 'new'");
}

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const executor = arg(args, 0);
    if (!ops.isCallable(executor)) {
        return vm.throwFmt(.type_error, "Promise resolver {f} is not a function", .{ops.ValueText{ .vm = vm, .v = executor }});
    }
    const p = try newPromise(vm);
    const fns = try resolvingFunctions(vm, p);
    _ = vm.call(executor, Value.undefined_value, &.{ fns.resolve, fns.reject }) catch |err| switch (err) {
        error.Throw => _ = try vm.call(fns.reject, Value.undefined_value, &.{vm.exception}),
        error.Terminate => return err,
    };
    return Value.obj(&p.object);
}

pub fn resolveStatic(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return Value.obj(&(try promiseResolve(vm, arg(args, 0))).object);
}

pub fn rejectStatic(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const p = try newPromise(vm);
    try rejectPromise(vm, p, arg(args, 0));
    return Value.obj(&p.object);
}

fn thisPromise(vm: *Vm, this: Value, comptime method: []const u8) Error!*Promise {
    if (this.objectOf(.promise)) |o| return o.as(Promise);
    return vm.throwFmt(.type_error, "Method Promise.prototype." ++ method ++ " called on incompatible receiver {f}", .{ops.ValueText{ .vm = vm, .v = this }});
}

pub fn then(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const p = try thisPromise(vm, this, "then");
    const derived = try newPromise(vm);
    try performThen(vm, p, arg(args, 0), arg(args, 1), derived, null);
    return Value.obj(&derived.object);
}

pub fn catchMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const p = try thisPromise(vm, this, "catch");
    const derived = try newPromise(vm);
    try performThen(vm, p, Value.undefined_value, arg(args, 0), derived, null);
    return Value.obj(&derived.object);
}

pub fn finallyMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const p = try thisPromise(vm, this, "finally");
    const f = arg(args, 0);
    const derived = try newPromise(vm);
    if (!ops.isCallable(f)) {
        try performThen(vm, p, f, f, derived, null);
        return Value.obj(&derived.object);
    }
    const on_fulfilled = try makeFunction(vm, .finally_fulfilled, null);
    const on_rejected = try makeFunction(vm, .finally_rejected, null);
    on_fulfilled.value = f;
    on_rejected.value = f;
    try performThen(vm, p, Value.obj(&on_fulfilled.object), Value.obj(&on_rejected.object), derived, null);
    return Value.obj(&derived.object);
}

const Combinator = enum { all, all_settled, any, race };

fn combine(vm: *Vm, args: []const Value, comptime which: Combinator) Error!Value {
    const result = try newPromise(vm);
    combineInto(vm, result, arg(args, 0), which) catch |err| switch (err) {
        // IfAbruptRejectPromise: a bad iterable rejects the result.
        error.Throw => try rejectPromise(vm, result, vm.exception),
        error.Terminate => return err,
    };
    return Value.obj(&result.object);
}

fn combineInto(vm: *Vm, result: *Promise, iterable: Value, comptime which: Combinator) Error!void {
    var source = try ops.iterStart(vm, iterable, .{});
    var cursor = Value.number(0);
    const shared = vm.heap.create(object.PromiseShared) catch return vm.outOfMemory();
    shared.* = .{ .promise = result, .values = try vm.newArray(0), .remaining = 1 };
    var index: u32 = 0;
    while (try ops.iterNext(vm, &source, &cursor)) |v| : (index += 1) {
        try vm.charge(meter.elementsCost(1));
        const next = try promiseResolve(vm, v);
        if (which == .race) {
            const fns = try resolvingFunctions(vm, result);
            try performThen(vm, next, fns.resolve, fns.reject, null, null);
            continue;
        }
        shared.values.push(vm.heap, Value.undefined_value) catch return vm.outOfMemory();
        shared.remaining += 1;
        const fns = try resolvingFunctions(vm, result);
        const on_fulfilled: Value, const on_rejected: Value = switch (which) {
            .all => .{ try element(vm, .all_element, shared, index), fns.reject },
            .all_settled => .{ try element(vm, .all_settled_fulfilled, shared, index), try element(vm, .all_settled_rejected, shared, index) },
            .any => .{ fns.resolve, try element(vm, .any_rejected, shared, index) },
            .race => unreachable,
        };
        try performThen(vm, next, on_fulfilled, on_rejected, null, null);
    }
    if (which == .race) return;
    shared.remaining -= 1;
    if (shared.remaining == 0) try finishAll(vm, shared, which == .any);
}

fn element(vm: *Vm, action: PromiseFunction.Action, shared: *object.PromiseShared, index: u32) Error!Value {
    const f = try makeFunction(vm, action, null);
    f.shared = shared;
    f.index = index;
    return Value.obj(&f.object);
}

pub fn all(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return combine(vm, args, .all);
}

pub fn allSettled(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return combine(vm, args, .all_settled);
}

pub fn any(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return combine(vm, args, .any);
}

pub fn race(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return combine(vm, args, .race);
}

pub fn queueMicrotask(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const f = arg(args, 0);
    if (!ops.isCallable(f)) {
        return vm.throwFmt(.type_error, "The \"callback\" argument must be of type function. Received {f}", .{ops.ValueText{ .vm = vm, .v = f }});
    }
    try enqueue(vm, .{ .callback = f });
    return Value.undefined_value;
}
