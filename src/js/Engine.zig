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
//!
//! ```
//! var module = try Module.fromSource(gpa, source, "app.js", &host, &failure);
//! var engine = try Engine.init(gpa, &module, .{});
//! _ = engine.runModule();
//! const handler = engine.exportValue("default").?;
//! engine.beginRequest();
//! const request = try engine.newObject();
//! ... fill it in, then:
//! switch (engine.call(handler, &.{request})) { .value => ..., .exception => ..., .terminated => ... }
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
const string = @import("string.zig");
const String = string.String;
const object = @import("object.zig");
const ops = @import("operations.zig");

const Engine = @This();

vm: Vm,
heap: Heap,
region: []align(16) u8,
module: *const Module,
/// Where each request's memory starts (above the module's state).
request_mark: Heap.Mark,
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
    /// the meter's next checkpoint (Vm.check_interval_ticks).
    deadline_ns: u64 = 50 * std.time.ns_per_ms,
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
        if (host.objects.len > names_buf.len) return error.TooManyHostGlobals;
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
};

pub fn init(gpa: std.mem.Allocator, module: *const Module, limits: Limits) InitError!*Engine {
    inline for (comptime std.meta.fieldNames(Limits)) |name| {
        if (@field(limits, name) < @field(limits_min, name)) return error.LimitTooSmall;
    }
    const e = try gpa.create(Engine);
    errdefer gpa.destroy(e);
    const region = try Heap.allocUntouched(gpa, u8, limits.heap_bytes);
    errdefer Heap.freeUntouched(gpa, u8, region);
    e.* = .{
        .vm = undefined,
        .heap = Heap.init(region),
        .region = region,
        .module = module,
        .request_mark = undefined,
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
    }, &e.discard.writer, &e.discard.writer);
    errdefer e.vm.deinit(gpa);
    try e.vm.attach(&module.program, module.constants, module.host);
    e.request_mark = e.heap.mark();
    return e;
}

pub fn deinit(e: *Engine, gpa: std.mem.Allocator) void {
    e.vm.deinit(gpa);
    Heap.freeUntouched(gpa, u8, e.region);
    gpa.destroy(e);
}

/// Where console.log writes (nothing, by default).
pub fn setOutput(e: *Engine, out: *std.Io.Writer, err_out: *std.Io.Writer) void {
    e.vm.out = out;
    e.vm.err_out = err_out;
}

/// Runs the module's top-level code, then seals its state: what it built stays, read-only.
pub fn runModule(e: *Engine) Vm.Outcome {
    e.vm.module_floor = std.math.maxInt(usize);
    e.heap.reset();
    e.vm.symbol_registry = null;
    const outcome = e.vm.runMain();
    e.request_mark = e.heap.mark();
    e.module_symbols = e.vm.symbol_registry;
    // Objects grow down from the top: the module's are at or above the mark.
    e.vm.module_floor = @intFromPtr(e.heap.region.ptr) + e.request_mark.high;
    return outcome;
}

/// An export's value (after `runModule`).
pub fn exportValue(e: *Engine, name: []const u8) ?Value {
    const index = e.module.exportIndex(name) orelse return null;
    return e.vm.exports[index];
}

/// Forgets the last request's objects, in O(1).
pub fn beginRequest(e: *Engine) void {
    e.heap.resetTo(e.request_mark);
    e.vm.symbol_registry = e.module_symbols;
}

/// Calls a function with arguments the host built in this request.
pub fn call(e: *Engine, callee: Value, args: []const Value) Vm.Outcome {
    return e.vm.callFunction(callee, args);
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

pub fn newString(e: *Engine, utf8: []const u8) BuildError!Value {
    return Value.string(string.fromUtf8(&e.heap, utf8) catch return error.OutOfMemory);
}

/// Sets `obj[name] = v` on an object the host made in this request.
pub fn setProperty(e: *Engine, obj: Value, name: []const u8, v: Value) BuildError!void {
    const key = e.module.constant(name) orelse (string.fromUtf8(&e.heap, name) catch return error.OutOfMemory);
    obj.asObject().properties.put(&e.heap, key, v) catch return error.OutOfMemory;
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
