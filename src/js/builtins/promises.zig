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
//!
//! The statics, `then` and `finally` work for any constructor as `this` (a subclass, or a
//! function that hands its executor's arguments out): NewPromiseCapability, GetPromiseResolve,
//! Invoke of `then` and SpeciesConstructor make the spec's observable Gets and Calls. A plain
//! promise (one that inherits Promise.prototype as made, with no own property, in a run that
//! changed no builtin) answers every such Get with the builtin, so for it and for %Promise%
//! itself they are skipped: `await fetch(...)` and `Promise.all([fetch(a), fetch(b)])` add
//! their reactions directly, as before.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const Promise = object.Promise;
const PromiseFunction = object.PromiseFunction;
const Capability = object.Capability;
const classes = @import("../classes.zig");
const symbol = @import("../symbol.zig");
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
            if (!ops.isCallable(handler)) return settleDerived(vm, reaction, r.argument, r.rejected);
            const result = vm.call(handler, Value.undefined_value, &.{r.argument}) catch |err| switch (err) {
                error.Throw => return settleDerived(vm, reaction, vm.exception, true),
                error.Terminate => return err,
            };
            return settleDerived(vm, reaction, result, false);
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

/// The promise a reaction's `then` made takes the handler's outcome: settled directly when
/// %Promise% made it, else through its capability's functions (what they throw ends the job
/// as any exception a job lets out).
fn settleDerived(vm: *Vm, reaction: *const object.Reaction, v: Value, rejected: bool) Error!void {
    if (reaction.derived) |d| return if (rejected) rejectPromise(vm, d, v) else resolvePromise(vm, d, v);
    const cap = reaction.capability orelse return;
    _ = try vm.call(if (rejected) cap.reject else cap.resolve, Value.undefined_value, &.{v});
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
    return addReaction(vm, p, .{
        .derived = derived,
        .on_fulfilled = if (ops.isCallable(on_fulfilled)) on_fulfilled else Value.undefined_value,
        .on_rejected = if (ops.isCallable(on_rejected)) on_rejected else Value.undefined_value,
        .generator = generator,
    });
}

/// PerformPromiseThen with a capability that another constructor made.
fn performThenCapability(vm: *Vm, p: *Promise, on_fulfilled: Value, on_rejected: Value, cap: *Capability) Error!void {
    return addReaction(vm, p, .{
        .derived = null,
        .on_fulfilled = if (ops.isCallable(on_fulfilled)) on_fulfilled else Value.undefined_value,
        .on_rejected = if (ops.isCallable(on_rejected)) on_rejected else Value.undefined_value,
        .capability = cap,
    });
}

fn addReaction(vm: *Vm, p: *Promise, r: object.Reaction) Error!void {
    const reaction = vm.heap.create(object.Reaction) catch return vm.outOfMemory();
    reaction.* = r;
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

/// PromiseResolve(%Promise%, v): v itself if it is a promise whose `constructor` is Promise.
pub fn promiseResolve(vm: *Vm, v: Value) Error!*Promise {
    if (v.objectOf(.promise)) |o| {
        if (plainPromise(vm, v) != null) return o.as(Promise);
        if (isIntrinsic(try ops.getField(vm, v, names.string("constructor")))) return o.as(Promise);
    }
    const p = try newPromise(vm);
    try resolvePromise(vm, p, v);
    return p;
}

/// PromiseResolve(C, x) (ES §27.2.4.7.1): x itself when it is a promise whose `constructor`
/// is C, else a new promise of C resolved with x.
pub fn promiseResolveWith(vm: *Vm, c: Value, x: Value) Error!Value {
    if (isIntrinsic(c)) return Value.obj(&(try promiseResolve(vm, x)).object);
    if (x.objectOf(.promise) != null) {
        if ((try ops.getField(vm, x, names.string("constructor"))).eqlBits(c)) return x;
    }
    const cap = try newCapability(vm, c);
    _ = try vm.call(cap.resolve, Value.undefined_value, &.{x});
    return cap.promise;
}

// ---------------------------------------------------------------------------------------
// Other constructors: capabilities, species, Invoke.

fn isIntrinsic(c: Value) bool {
    return c.eqlBits(Value.builtin(comptime builtins.builtinId("Promise")));
}

/// A promise whose every Get the spec makes (`then`, `constructor`, its species) answers the
/// builtin: it inherits Promise.prototype as made, has no own property, and the run changed
/// no builtin.
fn plainPromise(vm: *Vm, v: Value) ?*Promise {
    const o = v.objectOf(.promise) orelse return null;
    if (!o.proto.isUndefined() or o.properties.len != 0 or vm.builtin_changes != null) return null;
    return o.as(Promise);
}

/// NewPromiseCapability(C) (ES §27.2.1.5): C constructs a promise with a
/// GetCapabilitiesExecutor function, which records the resolve and reject it is given. For
/// %Promise% no executor is made: the promise's own resolving functions are the record's.
pub fn newCapability(vm: *Vm, c: Value) Error!*Capability {
    const cap = vm.heap.create(Capability) catch return vm.outOfMemory();
    cap.* = .{};
    if (isIntrinsic(c)) {
        const p = try newPromise(vm);
        const fns = try resolvingFunctions(vm, p);
        cap.* = .{ .promise = Value.obj(&p.object), .resolve = fns.resolve, .reject = fns.reject };
        return cap;
    }
    if (!classes.isConstructor(c)) return vm.throwNotConstructor(c);
    const executor = try makeFunction(vm, .capability_executor, null);
    executor.capability = cap;
    const promise = try vm.construct(c, &.{Value.obj(&executor.object)}, c);
    if (!ops.isCallable(cap.resolve) or !ops.isCallable(cap.reject)) {
        return vm.throwMessage(.type_error, "Promise resolve or reject function is not callable");
    }
    cap.promise = promise;
    return cap;
}

/// SpeciesConstructor(p, %Promise%) (ES §7.3.22). %Promise%[Symbol.species] is a getter
/// that returns its receiver, and this engine has no builtin accessors: a constructor that
/// inherits it (Promise, or a class extending it, with no species of its own) is its own
/// species. Partial: one whose own `[Symbol.species]` is undefined gets itself, not Promise.
fn speciesConstructor(vm: *Vm, p: Value) Error!Value {
    const intrinsic = Value.builtin(comptime builtins.builtinId("Promise"));
    if (plainPromise(vm, p) != null) return intrinsic;
    const c = try ops.getField(vm, p, names.string("constructor"));
    if (c.isUndefined()) return intrinsic;
    if (!ops.isObjectLike(c)) return vm.throwMessage(.type_error, "The .constructor property is not an object");
    const s = try ops.getField(vm, c, symbol.wellKnown("@@species"));
    if (s.isUndefined() and (isIntrinsic(c) or ops.inherits(c, intrinsic))) return c;
    if (s.isNullish()) return intrinsic;
    if (classes.isConstructor(s)) return s;
    return vm.throwMessage(.type_error, "object.constructor[Symbol.species] is not a constructor");
}

/// GetPromiseResolve(C) (ES §27.2.4.1.1): `C.resolve`, read once per combinator call.
fn getPromiseResolve(vm: *Vm, c: Value) Error!Value {
    const resolve = try ops.getField(vm, c, names.string("resolve"));
    if (!ops.isCallable(resolve)) return vm.throwMessage(.type_error, "Promise resolve or reject function is not callable");
    return resolve;
}

/// Call(promiseResolve, C, «v»); null stands for the builtin Promise.resolve on %Promise%,
/// run directly.
fn callPromiseResolve(vm: *Vm, c: Value, resolve: ?Value, v: Value) Error!Value {
    const f = resolve orelse return Value.obj(&(try promiseResolve(vm, v)).object);
    return vm.call(f, c, &.{v});
}

/// Invoke(p, "then", «on_fulfilled, on_rejected») for a combinator, whose result it drops: a
/// plain promise gets the reaction directly (the promise its `then` would make is never seen).
fn invokeThen(vm: *Vm, p: Value, on_fulfilled: Value, on_rejected: Value) Error!void {
    if (plainPromise(vm, p)) |plain| return performThen(vm, plain, on_fulfilled, on_rejected, null, null);
    const then_method = try ops.getField(vm, p, names.string("then"));
    _ = try vm.call(then_method, p, &.{ on_fulfilled, on_rejected });
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
            const p = try promiseResolveWith(vm, f.constructor, result);
            const thunk = try makeFunction(vm, if (f.action == .finally_fulfilled) .value_thunk else .thrower, null);
            thunk.value = v;
            if (plainPromise(vm, p)) |plain| {
                const derived = try newPromise(vm);
                try performThen(vm, plain, Value.obj(&thunk.object), Value.undefined_value, derived, null);
                return Value.obj(&derived.object);
            }
            const then_method = try ops.getField(vm, p, names.string("then"));
            return vm.call(then_method, p, &.{Value.obj(&thunk.object)});
        },
        .capability_executor => {
            const cap = f.capability.?;
            if (!cap.resolve.isUndefined() or !cap.reject.isUndefined()) {
                return vm.throwMessage(.type_error, "Promise executor has already been invoked with non-undefined arguments");
            }
            cap.resolve = v;
            cap.reject = arg(args, 1);
            return Value.undefined_value;
        },
        .value_thunk => return f.value,
        .thrower => return vm.throwValue(f.value),
        .all_element, .all_settled_fulfilled, .all_settled_rejected, .any_rejected => {
            // allSettled's two functions for one element share the fulfilled one's flag.
            const called = f.already orelse &f.called;
            if (called.*) return Value.undefined_value;
            called.* = true;
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
    const cap = shared.capability;
    if (!is_any) {
        _ = try vm.call(cap.resolve, Value.undefined_value, &.{Value.obj(&shared.values.object)});
        return;
    }
    _ = try vm.call(cap.reject, Value.undefined_value, &.{try aggregateError(vm, shared.values)});
}

/// V8's AggregateError for Promise.any, with its `errors`.
fn aggregateError(vm: *Vm, errors: *object.Array) Error!Value {
    const e = try vm.newError(.aggregate_error, "All promises were rejected");
    try builtins.errors.defineErrors(vm, e, errors);
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
    if (!ops.isObjectLike(this)) return vm.throwMessage(.type_error, "PromiseResolve called on non-object");
    return promiseResolveWith(vm, this, arg(args, 0));
}

pub fn rejectStatic(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (isIntrinsic(this)) {
        const p = try newPromise(vm);
        try rejectPromise(vm, p, arg(args, 0));
        return Value.obj(&p.object);
    }
    const cap = try newCapability(vm, this);
    _ = try vm.call(cap.reject, Value.undefined_value, &.{arg(args, 0)});
    return cap.promise;
}

fn thisPromise(vm: *Vm, this: Value, comptime method: []const u8) Error!*Promise {
    if (this.objectOf(.promise)) |o| return o.as(Promise);
    return vm.throwFmt(.type_error, "Method Promise.prototype." ++ method ++ " called on incompatible receiver {f}", .{ops.ValueText{ .vm = vm, .v = this }});
}

pub fn then(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const p = try thisPromise(vm, this, "then");
    const c = try speciesConstructor(vm, this);
    if (isIntrinsic(c)) {
        const derived = try newPromise(vm);
        try performThen(vm, p, arg(args, 0), arg(args, 1), derived, null);
        return Value.obj(&derived.object);
    }
    const cap = try newCapability(vm, c);
    try performThenCapability(vm, p, arg(args, 0), arg(args, 1), cap);
    return cap.promise;
}

/// `catch(f)` is `this.then(undefined, f)` on any object (ES §27.2.5.1).
pub fn catchMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (plainPromise(vm, this)) |p| {
        const derived = try newPromise(vm);
        try performThen(vm, p, Value.undefined_value, arg(args, 0), derived, null);
        return Value.obj(&derived.object);
    }
    const then_method = try ops.getField(vm, this, names.string("then"));
    return vm.call(then_method, this, &.{ Value.undefined_value, arg(args, 0) });
}

/// `finally(f)` (ES §27.2.5.3): `this.then` of two functions that call f, then resolve with
/// the species constructor of `this` and pass the outcome on.
pub fn finallyMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (!ops.isObjectLike(this)) {
        return vm.throwFmt(.type_error, "Method Promise.prototype.finally called on incompatible receiver {f}", .{ops.ValueText{ .vm = vm, .v = this }});
    }
    const c = try speciesConstructor(vm, this);
    const f = arg(args, 0);
    var on_fulfilled = f;
    var on_rejected = f;
    if (ops.isCallable(f)) {
        const then_finally = try makeFunction(vm, .finally_fulfilled, null);
        const catch_finally = try makeFunction(vm, .finally_rejected, null);
        then_finally.value = f;
        then_finally.constructor = c;
        catch_finally.value = f;
        catch_finally.constructor = c;
        on_fulfilled = Value.obj(&then_finally.object);
        on_rejected = Value.obj(&catch_finally.object);
    }
    if (plainPromise(vm, this)) |p| {
        const derived = try newPromise(vm);
        try performThen(vm, p, on_fulfilled, on_rejected, derived, null);
        return Value.obj(&derived.object);
    }
    const then_method = try ops.getField(vm, this, names.string("then"));
    return vm.call(then_method, this, &.{ on_fulfilled, on_rejected });
}

const Combinator = enum { all, all_settled, any, race };

/// Promise.all and kin on constructor C (`this`): its capability (what NewPromiseCapability
/// throws is thrown), then a rejection for anything that goes wrong after
/// (IfAbruptRejectPromise).
fn combine(vm: *Vm, c: Value, args: []const Value, comptime which: Combinator) Error!Value {
    const cap = try newCapability(vm, c);
    combineInto(vm, c, cap, arg(args, 0), which) catch |err| switch (err) {
        error.Throw => _ = try vm.call(cap.reject, Value.undefined_value, &.{vm.exception}),
        error.Terminate => return err,
    };
    return cap.promise;
}

fn combineInto(vm: *Vm, c: Value, cap: *Capability, iterable: Value, comptime which: Combinator) Error!void {
    // %Promise% in a run that changed no builtin has the builtin `resolve`: the Get would
    // show nothing.
    const resolve: ?Value = if (isIntrinsic(c) and vm.builtin_changes == null) null else try getPromiseResolve(vm, c);
    var source = try ops.iterStart(vm, iterable, .{});
    combineEach(vm, c, cap, resolve, &source, which) catch |err| switch (err) {
        // IteratorClose with a throw completion: the exception stands whatever return() does.
        // A step that threw left the iterator done, so it is not closed.
        error.Throw => {
            const exception = vm.exception;
            ops.iterClose(vm, source) catch |close_err| switch (close_err) {
                error.Throw => {}, // The loop's exception wins (ES §7.4.11 step 5).
                error.Terminate => return close_err,
            };
            return vm.throwValue(exception);
        },
        error.Terminate => return err,
    };
}

/// PerformPromiseAll and kin: each value through C.resolve, then its `then` with the element
/// functions.
fn combineEach(vm: *Vm, c: Value, cap: *Capability, resolve: ?Value, source: *Value, comptime which: Combinator) Error!void {
    var cursor = Value.number(0);
    const shared = vm.heap.create(object.PromiseShared) catch return vm.outOfMemory();
    shared.* = .{ .capability = cap, .values = try vm.newArray(0), .remaining = 1 };
    var index: u32 = 0;
    while (try ops.iterNext(vm, source, &cursor)) |v| : (index += 1) {
        try vm.charge(meter.elementsCost(1));
        if (which != .race) shared.values.push(vm.heap, Value.undefined_value) catch return vm.outOfMemory();
        const next = try callPromiseResolve(vm, c, resolve, v);
        if (which == .race) {
            try invokeThen(vm, next, cap.resolve, cap.reject);
            continue;
        }
        const on_fulfilled: Value, const on_rejected: Value = switch (which) {
            .all => .{ Value.obj(&(try element(vm, .all_element, shared, index)).object), cap.reject },
            .all_settled => settled: {
                const fulfilled = try element(vm, .all_settled_fulfilled, shared, index);
                const rejected = try element(vm, .all_settled_rejected, shared, index);
                rejected.already = &fulfilled.called;
                break :settled .{ Value.obj(&fulfilled.object), Value.obj(&rejected.object) };
            },
            .any => .{ cap.resolve, Value.obj(&(try element(vm, .any_rejected, shared, index)).object) },
            .race => unreachable,
        };
        shared.remaining += 1;
        try invokeThen(vm, next, on_fulfilled, on_rejected);
    }
    if (which == .race) return;
    shared.remaining -= 1;
    if (shared.remaining == 0) try finishAll(vm, shared, which == .any);
}

fn element(vm: *Vm, action: PromiseFunction.Action, shared: *object.PromiseShared, index: u32) Error!*PromiseFunction {
    const f = try makeFunction(vm, action, null);
    f.shared = shared;
    f.index = index;
    return f;
}

pub fn all(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return combine(vm, this, args, .all);
}

pub fn allSettled(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return combine(vm, this, args, .all_settled);
}

pub fn any(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return combine(vm, this, args, .any);
}

pub fn race(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return combine(vm, this, args, .race);
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
