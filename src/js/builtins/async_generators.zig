//! Async generators (ES §27.6) and `for await`'s iterators. An async generator is a
//! generator (Vm.resumeGenerator runs its frame) with a queue of next/return/throw requests
//! (object.AsyncGeneratorState), each answered through the promise it returned. Its frame
//! suspends two ways: at an `await` (the `yield` instruction, as in an async function: the
//! awaited promise's reaction resumes it) and at a `yield` (yield_async: the value answers
//! the request at the queue's head). Requests, their promises and the queue live in the
//! run's heap, like every promise: nothing here touches the general heap.
//!
//! Also %AsyncFromSyncIteratorPrototype%.next, for `for await` over a sync iterable: the
//! sync result's value is awaited before the loop sees it.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const Generator = object.Generator;
const AsyncGeneratorState = object.AsyncGeneratorState;
const names = @import("../names.zig");
const ops = @import("../operations.zig");
const symbol = @import("../symbol.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;
const promises = @import("promises.zig");
const generators = @import("generators.zig");

/// generator_start of an async generator's function: the generator gets its queue.
pub fn start(vm: *Vm, gen: *Generator) Error!void {
    const state = vm.heap.create(AsyncGeneratorState) catch return vm.outOfMemory();
    state.* = .{};
    gen.async_generator = state;
}

fn asyncGeneratorOf(this: Value) ?*Generator {
    const o = this.objectOf(.generator) orelse return null;
    const gen = o.as(Generator);
    if (gen.async_generator == null) return null;
    return gen;
}

pub fn next(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return request(vm, this, arg(args, 0), .next, "next");
}

pub fn returnMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return request(vm, this, arg(args, 0), .@"return", "return");
}

pub fn throwMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return request(vm, this, arg(args, 0), .throw, "throw");
}

/// AsyncGenerator.prototype.next/return/throw: queue the request and, if the generator is
/// suspended, resume it now. A wrong receiver rejects the promise (it does not throw).
fn request(vm: *Vm, this: Value, value: Value, mode: AsyncGeneratorState.Mode, comptime method: []const u8) Error!Value {
    const p = try promises.newPromise(vm);
    const result = Value.obj(&p.object);
    const gen = asyncGeneratorOf(this) orelse {
        const err = vm.throwFmt(.type_error, "Method [AsyncGenerator].prototype.{s} called on incompatible receiver {f}", .{ method, ops.ShortFormat{ .vm = vm, .v = this } });
        return rejectWith(vm, p, err, result);
    };
    const ag = gen.async_generator.?;
    switch (mode) {
        .next => if (ag.state == .completed) {
            try promises.resolvePromise(vm, p, try generators.iteratorResult(vm, Value.undefined_value, true));
            return result;
        },
        .throw => {
            if (ag.state == .suspended_start) ag.state = .completed;
            if (ag.state == .completed) {
                try promises.rejectPromise(vm, p, value);
                return result;
            }
        },
        .@"return" => {},
    }
    const r = vm.heap.create(AsyncGeneratorState.Request) catch return vm.outOfMemory();
    r.* = .{ .mode = mode, .value = value, .promise = p };
    if (ag.tail) |t| t.next = r else ag.head = r;
    ag.tail = r;
    switch (ag.state) {
        .suspended_start, .completed => if (mode == .@"return") {
            ag.state = .awaiting_return;
            try awaitReturn(vm, gen, value);
        } else {
            try resumeStep(vm, gen, value, if (mode == .throw) .throw else .next);
        },
        .suspended_yield => if (mode == .@"return") {
            ag.state = .executing;
            try awaitResumption(vm, gen, value);
        } else {
            try resumeStep(vm, gen, value, if (mode == .throw) .throw else .next);
        },
        .executing, .awaiting_return => {},
    }
    return result;
}

fn rejectWith(vm: *Vm, p: *object.Promise, err: Error, result: Value) Error!Value {
    switch (err) {
        error.Throw => try promises.rejectPromise(vm, p, vm.exception),
        error.Terminate => return err,
    }
    return result;
}

/// Runs the generator's frame from where it is suspended until it awaits, yields with no
/// request left, returns or throws; a yield answers the head request, and the next request
/// in the queue (if any) resumes it at once (ES §27.6.3.8 AsyncGeneratorYield).
pub fn resumeStep(vm: *Vm, gen: *Generator, sent: Value, mode: Vm.ResumeMode) Error!void {
    const ag = gen.async_generator.?;
    var value = sent;
    var m = mode;
    while (true) {
        assert(ag.head != null);
        ag.state = .executing;
        gen.yielded = false;
        const r = vm.resumeGenerator(gen, value, m) catch |err| switch (err) {
            error.Throw => {
                ag.state = .completed;
                try completeStep(vm, ag, .throw, vm.exception, true);
                return drainQueue(vm, gen);
            },
            error.Terminate => return err,
        };
        if (r.done) {
            ag.state = .completed;
            try completeStep(vm, ag, .next, r.value, true);
            return drainQueue(vm, gen);
        }
        if (!gen.yielded) return awaitValue(vm, gen, r.value);
        try completeStep(vm, ag, .next, r.value, false);
        const head = ag.head orelse {
            ag.state = .suspended_yield;
            return;
        };
        // AsyncGeneratorUnwrapYieldResumption: a return awaits its value first.
        if (head.mode == .@"return") return awaitResumption(vm, gen, head.value);
        value = head.value;
        m = if (head.mode == .throw) .throw else .next;
    }
}

/// An `await` inside the body: the awaited promise's reaction resumes the frame
/// (promises.resumeAsync, which comes back to resumeStep).
fn awaitValue(vm: *Vm, gen: *Generator, v: Value) Error!void {
    const awaited = promises.promiseResolve(vm, v) catch |err| switch (err) {
        error.Throw => return promises.enqueueResume(vm, gen, vm.exception, true),
        error.Terminate => return err,
    };
    try promises.performThen(vm, awaited, Value.undefined_value, Value.undefined_value, null, gen);
}

/// return(v) to a generator suspended at a yield: awaits v, then resumes the frame with a
/// return (its finally blocks run), or throws the rejection into it.
fn awaitResumption(vm: *Vm, gen: *Generator, v: Value) Error!void {
    const awaited = promises.promiseResolve(vm, v) catch |err| switch (err) {
        error.Throw => return promises.enqueueResume(vm, gen, vm.exception, true),
        error.Terminate => return err,
    };
    try thenOnGenerator(vm, awaited, gen, .async_generator_resume_return, .async_generator_resume_throw);
}

fn thenOnGenerator(vm: *Vm, p: *object.Promise, gen: *Generator, fulfilled: object.PromiseFunction.Action, rejected: object.PromiseFunction.Action) Error!void {
    const on_fulfilled = try promises.makeFunction(vm, fulfilled, null);
    on_fulfilled.generator = gen;
    const on_rejected = try promises.makeFunction(vm, rejected, null);
    on_rejected.generator = gen;
    try promises.performThen(vm, p, Value.obj(&on_fulfilled.object), Value.obj(&on_rejected.object), null, null);
}

/// AsyncGeneratorAwaitReturn: a return(v) to a generator that is not running its body (not
/// started, or finished) answers with v awaited.
fn awaitReturn(vm: *Vm, gen: *Generator, v: Value) Error!void {
    const ag = gen.async_generator.?;
    assert(ag.state == .awaiting_return);
    const awaited = promises.promiseResolve(vm, v) catch |err| switch (err) {
        error.Throw => return awaitReturnSettled(vm, gen, vm.exception, true),
        error.Terminate => return err,
    };
    try thenOnGenerator(vm, awaited, gen, .async_generator_return_fulfilled, .async_generator_return_rejected);
}

pub fn awaitReturnSettled(vm: *Vm, gen: *Generator, v: Value, rejected: bool) Error!void {
    const ag = gen.async_generator.?;
    assert(ag.state == .awaiting_return);
    ag.state = .completed;
    try completeStep(vm, ag, if (rejected) .throw else .next, v, true);
    return drainQueue(vm, gen);
}

/// AsyncGeneratorDrainQueue: a finished generator answers what is queued, up to a return,
/// which it awaits.
fn drainQueue(vm: *Vm, gen: *Generator) Error!void {
    const ag = gen.async_generator.?;
    assert(ag.state == .completed);
    while (ag.head) |head| {
        switch (head.mode) {
            .@"return" => {
                ag.state = .awaiting_return;
                return awaitReturn(vm, gen, head.value);
            },
            .throw => try completeStep(vm, ag, .throw, head.value, true),
            .next => try completeStep(vm, ag, .next, Value.undefined_value, true),
        }
    }
}

/// AsyncGeneratorCompleteStep: the head request's promise settles, and it leaves the queue.
fn completeStep(vm: *Vm, ag: *AsyncGeneratorState, how: AsyncGeneratorState.Mode, value: Value, done: bool) Error!void {
    const head = ag.head.?;
    ag.head = head.next;
    if (ag.head == null) ag.tail = null;
    if (how == .throw) return promises.rejectPromise(vm, head.promise, value);
    try promises.resolvePromise(vm, head.promise, try generators.iteratorResult(vm, value, done));
}

// ---------------------------------------------------------------------------------------
// for await.

pub const AsyncIterator = struct { iterator: Value, next: Value };

/// GetIterator(v, async): v[Symbol.asyncIterator](), or v[Symbol.iterator]() behind
/// %AsyncFromSyncIteratorPrototype% (its `next` is a promise function over the sync one).
pub fn iteratorOf(vm: *Vm, v: Value, site: ops.IterationSite) Error!AsyncIterator {
    const method = try ops.getField(vm, v, symbol.wellKnown("@@asyncIterator"));
    if (!method.isNullish()) {
        if (!ops.isCallable(method)) return throwNotAsyncIterable(vm, v, site);
        const it = try vm.call(method, v, &.{});
        if (!ops.isObjectLike(it)) return vm.throwMessage(.type_error, "Result of the Symbol.asyncIterator method is not an object");
        return .{ .iterator = it, .next = try ops.getField(vm, it, names.string("next")) };
    }
    const sync_method = try ops.getField(vm, v, symbol.wellKnown("@@iterator"));
    if (!ops.isCallable(sync_method)) return throwNotAsyncIterable(vm, v, site);
    const it = try vm.call(sync_method, v, &.{});
    if (!ops.isObjectLike(it)) return vm.throwMessage(.type_error, "Result of the Symbol.iterator method is not an object");
    const wrapper = try promises.makeFunction(vm, .async_from_sync_next, null);
    wrapper.value = try ops.getField(vm, it, names.string("next"));
    return .{ .iterator = it, .next = Value.obj(&wrapper.object) };
}

fn throwNotAsyncIterable(vm: *Vm, v: Value, site: ops.IterationSite) Error {
    // yield* (a site with no text) calls the missing method as V8's desugaring does.
    if (site.mode == .value) return vm.throwMessage(.type_error, "undefined is not a function");
    const text = site.text orelse return vm.throwFmt(.type_error, "{f} is not async iterable", .{ops.DefaultSite{ .vm = vm, .v = v }});
    const shown = ops.StringFormat{ .s = text };
    if (site.mode == .call) return vm.throwFmt(.type_error, "{f} is not a function or its return value is not async iterable", .{shown});
    return vm.throwFmt(.type_error, "{f} is not async iterable", .{shown});
}

/// %AsyncFromSyncIteratorPrototype%.next: the sync iterator's next(), its value awaited,
/// as a promise of { value, done }. An abrupt step rejects the promise.
pub fn asyncFromSyncNext(vm: *Vm, sync_next: Value, iterator: Value, sent: Value) Error!Value {
    return asyncFromSyncCall(vm, sync_next, iterator, &.{sent});
}

/// A sync iterator's method called as %AsyncFromSyncIteratorPrototype% calls it (ES
/// §27.1.6.2.1-3 and AsyncFromSyncIteratorContinuation): a promise of { value, done }
/// with the result's value awaited; an abrupt call or a result that is not an object
/// rejects it.
fn asyncFromSyncCall(vm: *Vm, method: Value, iterator: Value, args: []const Value) Error!Value {
    const p = try promises.newPromise(vm);
    const result = Value.obj(&p.object);
    const unwrap = syncStep(vm, method, iterator, args) catch |err| return rejectWith(vm, p, err, result);
    try promises.performThen(vm, unwrap.awaited, Value.obj(&unwrap.on_fulfilled.object), Value.undefined_value, p, null);
    return result;
}

/// Whether an async iteration's `next` is the wrapper iteratorOf puts over a sync iterator.
fn behindSyncIterator(next_method: Value) bool {
    const o = next_method.objectOf(.promise_function) orelse return false;
    return o.as(object.PromiseFunction).action == .async_from_sync_next;
}

const SyncStep = struct { awaited: *object.Promise, on_fulfilled: *object.PromiseFunction };

fn syncStep(vm: *Vm, method: Value, iterator: Value, args: []const Value) Error!SyncStep {
    const r = try vm.call(method, iterator, args);
    try checkResult(vm, r);
    const done = ops.toBoolean(try ops.getField(vm, r, names.string("done")));
    const value = try ops.getField(vm, r, names.string("value"));
    const awaited = try promises.promiseResolve(vm, value);
    const unwrap = try promises.makeFunction(vm, .async_from_sync_unwrap, null);
    unwrap.called = done;
    return .{ .awaited = awaited, .on_fulfilled = unwrap };
}

/// async_delegate_call: an async generator's `yield*` resumed by throw(e) or return(v) (the
/// return signal) calls the inner iterator's throw(e) or return(v) and gives what it
/// returned, to be awaited (ES §15.5.5 steps 7.b-c, generatorKind async).
pub fn delegateCall(vm: *Vm, iterator: Value, next_method: Value, exception: Value, gen: *Generator) Error!Value {
    const is_return = exception.eqlBits(Value.generator_return);
    const method = try ops.getField(vm, iterator, if (is_return) names.string("return") else names.string("throw"));
    if (method.isNullish()) {
        if (is_return) return vm.throwValue(exception);
        // AsyncIteratorClose, its result not awaited here (docs/JS.md says so).
        _ = try callReturn(vm, iterator, next_method);
        return vm.throwMessage(.type_error, "The iterator does not provide a 'throw' method.");
    }
    if (!ops.isCallable(method)) return vm.throwFmt(.type_error, "{f} is not a function", .{ops.DefaultSite{ .vm = vm, .v = method }});
    const args: []const Value = &.{if (is_return) gen.return_value else exception};
    if (behindSyncIterator(next_method)) return asyncFromSyncCall(vm, method, iterator, args);
    return vm.call(method, iterator, args);
}

/// async_delegate_result: the awaited result's value to yield again, or null when it is
/// done after a throw (the `yield*` ends with its value); done after a return, the
/// generator returns its value.
pub fn delegateResult(vm: *Vm, result: Value, is_return: bool, gen: *Generator) Error!?Value {
    try checkResult(vm, result);
    const done = ops.toBoolean(try ops.getField(vm, result, names.string("done")));
    if (!done) return try ops.getField(vm, result, names.string("value"));
    if (!is_return) return null;
    gen.return_value = try ops.getField(vm, result, names.string("value"));
    return vm.throwValue(Value.generator_return);
}

/// async_iter_done: an awaited iterator result's value, or null when it is done.
pub fn resultValue(vm: *Vm, result: Value) Error!?Value {
    try checkResult(vm, result);
    if (ops.toBoolean(try ops.getField(vm, result, names.string("done")))) return null;
    return try ops.getField(vm, result, names.string("value"));
}

/// async_iter_return: the iterator's return() result, or null when it has none. Behind a
/// sync iterator, a promise of its result with the value awaited (%AsyncFromSyncIterator-
/// Prototype%.return).
pub fn callReturn(vm: *Vm, iterator: Value, next_method: Value) Error!?Value {
    const method = try ops.getField(vm, iterator, names.string("return"));
    if (method.isNullish()) return null;
    if (!ops.isCallable(method)) return vm.throwFmt(.type_error, "{f} is not a function", .{ops.DefaultSite{ .vm = vm, .v = method }});
    if (behindSyncIterator(next_method)) return try asyncFromSyncCall(vm, method, iterator, &.{});
    return try vm.call(method, iterator, &.{});
}

/// iter_result_check: an iterator result must be an object.
pub fn checkResult(vm: *Vm, result: Value) Error!void {
    if (!ops.isObjectLike(result)) return vm.throwFmt(.type_error, "Iterator result {f} is not an object", .{ops.ShortFormat{ .vm = vm, .v = result }});
}
