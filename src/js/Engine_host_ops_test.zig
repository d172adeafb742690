//! Tests of host operations through the embedding API (Engine.zig, HostOps.zig): a request
//! that waits on promises only its host can settle suspends, other requests run meanwhile, the
//! host settles each operation with a value built in the request's own heap, and the limits
//! (operations in flight, the deadline) hold.
const std = @import("std");

const Engine = @import("Engine.zig");
const Vm = @import("Vm.zig");
const builtins = @import("builtins.zig");
const Compiler = @import("Compiler.zig");
const Value = @import("value.zig").Value;
const promises = @import("builtins/promises.zig");

/// `ask(x)`: a promise the host settles, recording `x` for it to read.
fn ask(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = this;
    const p = try promises.newPromise(vm);
    if (vm.host_ops.begin(vm.limits.host_ops_max, p, builtins.arg(args, 0)) == null) {
        vm.throwMessage(.type_error, "ask: too many in flight") catch {}; // Caught: it is the reason.
        const reason = vm.exception;
        vm.exception = Value.undefined_value;
        try promises.rejectPromise(vm, p, reason);
    }
    return Value.obj(&p.object);
}

const host: builtins.Host = .{
    .natives = &.{.{ .name = "ask", .length = 1, .func = ask }},
    .functions = &.{.{ .name = "ask", .native = 0 }},
};

const source =
    \\export const both = async (r) => {
    \\  const [a, b] = await Promise.all([ask(r.tag + "1"), ask(r.tag + "2")]);
    \\  return a + "," + b + ":" + typeof ask;
    \\}
    \\export const chain = async (r) => {
    \\  const a = await ask("first");
    \\  const b = await ask(a + "+second");
    \\  return b;
    \\}
    \\export const flood = async () => {
    \\  const asked = [];
    \\  for (let i = 0; i < 5; i++) asked.push(ask(String(i)).catch((e) => e.message));
    \\  return (await Promise.all(asked)).join("|");
    \\}
    \\export const refused = async () => {
    \\  try { await ask("x"); } catch (e) { return "caught " + e; }
    \\}
;

const ManualClock = struct {
    var now_ns: u64 = 1_000_000_000;

    fn read() u64 {
        return now_ns;
    }
};

fn makeEngine(gpa: std.mem.Allocator, module: *Engine.Module, limits: Engine.Limits) !*Engine {
    var failure: Compiler.Failure = undefined;
    module.* = Engine.Module.fromSource(gpa, source, "ask.js", &host, &failure) catch |err| {
        std.debug.print("{d}:{d}: {s}\n", .{ failure.line, failure.column, failure.message });
        return err;
    };
    errdefer module.deinit();
    const engine = try Engine.init(gpa, module, limits);
    engine.vm.clock = ManualClock.read;
    try std.testing.expect(engine.runModule() == .value);
    return engine;
}

fn requestWithTag(e: *Engine, tag: []const u8) !Value {
    const request = try e.newObject();
    try e.setProperty(request, "tag", try e.newString(tag));
    return request;
}

fn text(v: Value) []const u8 {
    return v.asString().latin1();
}

/// The text a test settles an operation with, made in the request's heap as a host would
/// make a Response; a null text rejects it with a TypeError.
const Reply = struct {
    text: ?[]const u8,

    fn build(context: *const anyopaque, vm: *Vm) Vm.Error!Value {
        const reply: *const Reply = @ptrCast(@alignCast(context));
        const t = reply.text orelse return vm.throwMessage(.type_error, "no pool");
        return Value.string(try vm.newLatin1(t));
    }
};

/// Answers operation `op` of `ticket` with its request's text and `suffix`.
fn answer(e: *Engine, ticket: Engine.Ticket, op: Engine.HostOp, suffix: []const u8) !Engine.Outcome {
    var buffer: [64]u8 = undefined;
    const reply: Reply = .{ .text = try std.fmt.bufPrint(&buffer, "{s}{s}", .{ text(op.request), suffix }) };
    return e.settleHostOp(ticket, op.index, .{ .context = &reply, .build = Reply.build });
}

test "engine: host operations suspend a request, run together, and settle in its own heap" {
    const gpa = std.testing.allocator;
    var module: Engine.Module = undefined;
    const engine = try makeEngine(gpa, &module, .{ .suspended_max = 2, .host_ops_max = 4, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    for (0..10) |_| {
        engine.beginRequest();
        const ticket = engine.call(engine.exportValue("both").?, &.{try requestWithTag(engine, "a")}).suspended;
        // Both were asked before the request waited (Promise.all).
        const first = engine.takeHostOp(ticket).?;
        const second = engine.takeHostOp(ticket).?;
        try std.testing.expect(engine.takeHostOp(ticket) == null);
        // Another request runs meanwhile and suspends in the other slot.
        engine.beginRequest();
        const other = engine.call(engine.exportValue("chain").?, &.{try requestWithTag(engine, "b")}).suspended;
        const other_op = engine.takeHostOp(other).?;
        // A bigger answer lands in the first request's heap while the other's is current.
        const bytes = engine.hostBytes(ticket, 4096).?;
        @memset(bytes, 'z');
        // The second answer comes first; the request waits on.
        const waiting = try answer(engine, ticket, second, "!");
        try std.testing.expect(waiting == .suspended);
        try std.testing.expect(engine.takeHostOp(waiting.suspended) == null);
        const done = try answer(engine, waiting.suspended, first, "?");
        try std.testing.expectEqualStrings("a1?,a2!:function", text(done.value));
        // The chain asks again after its first answer.
        const next = (try answer(engine, other, other_op, "")).suspended;
        const second_op = engine.takeHostOp(next).?;
        try std.testing.expectEqualStrings("first+second", text(second_op.request));
        const chained = try answer(engine, next, second_op, ".");
        try std.testing.expectEqualStrings("first+second.", text(chained.value));
        try std.testing.expectEqual(@as(u32, 0), engine.suspendedCount());
    }
}

test "engine: no more host operations in flight than the limit, and a rejection is the script's" {
    const gpa = std.testing.allocator;
    var module: Engine.Module = undefined;
    const engine = try makeEngine(gpa, &module, .{ .suspended_max = 1, .host_ops_max = 3, .deadline_ns = 0 });
    defer module.deinit();
    defer engine.deinit(gpa);
    engine.beginRequest();
    const ticket = engine.call(engine.exportValue("flood").?, &.{}).suspended;
    var taken: [3]Engine.HostOp = undefined;
    for (&taken) |*op| op.* = engine.takeHostOp(ticket).?;
    try std.testing.expect(engine.takeHostOp(ticket) == null);
    try std.testing.expect((try answer(engine, ticket, taken[1], "")) == .suspended);
    try std.testing.expect((try answer(engine, ticket, taken[0], "")) == .suspended);
    const flooded = try answer(engine, ticket, taken[2], "");
    try std.testing.expectEqualStrings("0|1|2|ask: too many in flight|ask: too many in flight", text(flooded.value));
    engine.beginRequest();
    const refused = engine.call(engine.exportValue("refused").?, &.{}).suspended;
    const op = engine.takeHostOp(refused).?;
    const reply: Reply = .{ .text = null };
    const outcome = engine.settleHostOp(refused, op.index, .{ .context = &reply, .build = Reply.build });
    try std.testing.expectEqualStrings("caught TypeError: no pool", text(outcome.value));
}

test "engine: a request waiting on host operations ends at its deadline" {
    const gpa = std.testing.allocator;
    var module: Engine.Module = undefined;
    const engine = try makeEngine(gpa, &module, .{ .suspended_max = 1, .host_ops_max = 2, .deadline_ns = 10 * std.time.ns_per_ms });
    defer module.deinit();
    defer engine.deinit(gpa);
    engine.beginRequest();
    const ticket = engine.call(engine.exportValue("chain").?, &.{try requestWithTag(engine, "c")}).suspended;
    // Only the deadline wakes it.
    try std.testing.expectEqual(ManualClock.now_ns + 10 * std.time.ns_per_ms, engine.wakeAt(ticket));
    const op = engine.takeHostOp(ticket).?;
    ManualClock.now_ns += 11 * std.time.ns_per_ms;
    // An answer after the deadline runs nothing.
    const late = try answer(engine, ticket, op, "");
    try std.testing.expectEqual(Vm.Termination.deadline, late.terminated);
    try std.testing.expectEqual(@as(u32, 0), engine.suspendedCount());
    // And the timer path ends one the same way.
    engine.beginRequest();
    const again = engine.call(engine.exportValue("chain").?, &.{try requestWithTag(engine, "d")}).suspended;
    ManualClock.now_ns = engine.wakeAt(again);
    try std.testing.expectEqual(Vm.Termination.deadline, engine.resumeTimers(again).terminated);
}
