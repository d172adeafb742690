//! One JavaScript request handler on one worker: the worker's engine for the handler's module,
//! and the one verb an exchange calls, `respond`, which builds the `request` object, calls the
//! module's default export and writes the Response it returns into the exchange's own buffer
//! as fields and body (`http.LocalResponse`), which the client's protocol frames.
//!
//! Decision: everything is allocated before the first call. The module (bytecode, constants)
//! is compiled and verified once per configuration generation that changes it
//! (handler/Instance.zig: at start-up, and at a reload whose file or limits differ) and shared
//! read-only by the workers; each worker has its own engine (`init`: a heap region and stacks,
//! allocated untouched) whose module state was built and sealed then. A request resets the
//! engine's arena in O(1) (`Engine.beginRequest`), so a call allocates nothing from the
//! process heap and nothing survives it. A call that waits on a timer is suspended (its
//! request keeps a slot of the engine: `Outcome.suspended`), and the exchange comes back with
//! `resumeTimers` or gives it up with `abandon`. A response that does not fit the buffer is a 500
//! (the writer is bounded in every build mode), never a larger buffer.
const std = @import("std");
const assert = std.debug.assert;

const js = @import("../js/js.zig");
const Engine = js.Engine;
const Value = js.Value;
const string = js.string;
const object = @import("../js/object.zig");
const http = @import("../http/http.zig");
const log = @import("../stdx/log.zig");
const Counter = @import("../stdx/Counter.zig");
const host = @import("host.zig");
const fetch = @import("fetch.zig");
const request_body = @import("request_body.zig");
const request_object = @import("request_object.zig");

const Handler = @This();

/// A suspended call, as the engine knows it (js/Engine.zig).
pub const Ticket = Engine.Ticket;

/// The handler's name (a metrics label, the log's).
name: []const u8,
engine: *Engine,
/// The largest request body the exchange reads for a call; 0: none (a body is a 413).
body_bytes_max: u64,
/// The call's deadline, for the log line of a call it stops.
deadline_ns: u64,
/// The module's default export, a function.
function: Value,
/// This worker's counters and log limiter for the handler's name: they outlive the engine, so
/// a reload that compiles the handler again carries its counts on (runtime/generations.zig).
tally: *Tally,

/// Why a call gave no response; each is a 500 for the client, a log line and a counter.
pub const Failure = enum {
    /// An exception the handler did not catch.
    exception,
    /// The memory limit: the engine's heap is full.
    memory,
    /// The work limit: the call's execution budget ran out.
    time,
    /// The wall-clock limit: the call ran past its deadline.
    deadline,
    /// The depth limit: call depth or native stack.
    depth,
    /// The Response does not fit the exchange's buffer.
    response_too_large,
    /// The handler returned something other than a Response.
    not_a_response,
    /// `Response.proxy` named a pool the configuration does not have.
    unknown_pool,
    /// The request `Response.proxy` rewrote does not fit the buffer its head is written into.
    request_too_large,
    /// The call would have waited on a timer, but the worker's engine already holds
    /// `suspended_max` waiting requests: a 503, not a 500.
    busy,
    /// The client went away (or the worker stopped) while the handler waited: no answer.
    abandoned,

    pub const count = @typeInfo(Failure).@"enum".field_names.len;
};

/// Written by the worker only, read by the collector.
pub const Stats = struct {
    requests: Counter = .{},
    failures: [Failure.count]Counter = @splat(.{}),
};

/// One worker's record of one handler name: its counters, and its log limiter (at most one
/// line per failure reason per second, with a count of the rest). All zeros is a fresh one,
/// so a table of them can be allocated untouched.
pub const Tally = struct {
    stats: Stats = .{},
    last_log_ns: [Failure.count]u64 = @splat(0),
    suppressed: [Failure.count]u32 = @splat(0),
};

/// What a handler's configuration sets of its engine's limits (config's handler settings).
pub const Limits = struct {
    heap_bytes: u64 = 1024 * 1024,
    /// Ticks per call (docs/JS.md, "Limits").
    budget: u64 = 50_000_000,
    /// Wall-clock time per call and for the module's top level (docs/JS.md, "Limits").
    deadline_ns: u64 = 50 * std.time.ns_per_ms,
    /// Call depth: JavaScript frames.
    depth: u32 = 512,
    /// The largest request body read before the call (the exchange checks it); 0: none.
    body_bytes_max: u64 = 64 * 1024,
    /// Requests that may wait on a timer at once, per worker (Engine.Limits.suspended_max).
    suspended_max: u32 = 64,
    /// Fetches one request may have in flight at once (Engine.Limits.host_ops_max).
    fetch_max: u8 = 8,

    /// The engine's limits: the value stack grows with the depth (32 slots a frame, as the
    /// defaults have), the rest are the engine's defaults for handlers.
    pub fn engine(limits: Limits) Engine.Limits {
        const defaults: Engine.Limits = .{};
        return .{
            .heap_bytes = @intCast(limits.heap_bytes),
            .budget = limits.budget,
            .deadline_ns = limits.deadline_ns,
            .frames = limits.depth,
            .stack_values = @max(defaults.stack_values, limits.depth * 32),
            .suspended_max = limits.suspended_max,
            // The fetches, and the read of the request body (request_body.zig).
            .host_ops_max = limits.fetch_max + 1,
        };
    }
};

/// What a handler sees of a request, as slices of the connection's buffer.
pub const Request = struct {
    method: []const u8,
    /// As the client sent it.
    target: []const u8,
    /// The path and query of the target (an absolute-form target's authority removed).
    path_and_query: []const u8,
    headers: []const http.Header,
    /// The client's address, without the port.
    ip: []const u8,
    /// The request body as it came, whole (a slice of the connection's buffer); empty when
    /// there is none.
    body: []const u8 = "",
    /// `body` is in chunked framing (checked by the connection): decoded for `request.body`.
    body_chunked: bool = false,
    /// The body was not read before the call (it is larger than the room behind the head):
    /// `request.body` is null.
    body_unread: bool = false,
};

/// How the response is written.
pub const Reply = struct {
    /// HEAD: the head a GET would get, no body.
    head_only: bool,
};

pub const Outcome = union(enum) {
    /// `len` bytes of `out`: the head and as much of the body as fits; `rest`, the body's
    /// bytes after those, in the request's heap, which the engine keeps (`kept`) until the
    /// exchange has sent them and calls `releaseBody`.
    response: Response,
    /// `Response.proxy`: the request goes on to a pool.
    proxy: Proxied,
    failed: Failure,
    /// The handler waits on a timer: come back with `resumeTimers` at `wakeAt`, or `abandon`.
    suspended: Engine.Ticket,
    /// A response whose body is a fetched body still at the pool: `len` bytes of `out` are its
    /// head as HTTP/1.1 with the pool's framing (a pool's response head, for the downstream
    /// to rewrite as it rewrites any), and the body is relayed from fetch slot `slot`.
    stream: Streamed,
};

pub const Streamed = struct {
    status: u16,
    len: usize,
    slot: u32,
};

pub const Response = struct {
    /// Its fields and first body bytes are `out`'s; the client's protocol frames them.
    local: http.LocalResponse,
    kept: ?*Kept = null,
};

/// The body bytes of a response not sent yet, and the engine slot that keeps them; in that
/// slot's heap itself, so that an exchange holds only a pointer.
pub const Kept = struct {
    rest: []const u8,
    ticket: Engine.Ticket,
};

/// What `Response.proxy` asked for. The strings live in the engine's arena: they are valid
/// until the handler's next call, so the exchange writes the upstream head from them at once.
pub const Proxied = struct {
    pool: []const u8,
    /// The origin-form target to send instead of the client's; null: the client's.
    path: ?[]const u8,
    /// Fields replacing the client's of the same name (case-insensitive), or added.
    headers: []const http.Header,
    /// Names whose client fields are not sent (a `null` in `headers`).
    removed: []const []const u8 = &.{},
};

pub const LoadError = error{ OutOfMemory, CannotRead, Compile, Load };

/// Compiles and loads a handler's file: one module, shared by the workers. A mistake is
/// written to `diagnostic` as one line, `FILE:LINE:COL: message` for a compile error.
pub fn load(gpa: std.mem.Allocator, path: []const u8, diagnostic: *std.Io.Writer) LoadError!js.Engine.Module {
    const source = readSource(gpa, path) catch |err| {
        diagnostic.print("{s}: cannot read the handler: {s}", .{ path, @errorName(err) }) catch {}; // Cut at the buffer's end.
        return error.CannotRead;
    };
    defer gpa.free(source);
    return loadSource(gpa, source, path, diagnostic);
}

/// Compiles and loads a handler's text; `path` names it in messages and positions.
pub fn loadSource(gpa: std.mem.Allocator, source: []const u8, path: []const u8, diagnostic: *std.Io.Writer) LoadError!js.Engine.Module {
    var failure: js.Compiler.Failure = undefined;
    return Engine.Module.fromSource(gpa, source, path, &host.host, &failure) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.SyntaxError => {
            diagnostic.print("{s}:{d}:{d}: {s}", .{ path, failure.line, failure.column, failure.message }) catch {}; // Cut, as above.
            return error.Compile;
        },
        else => {
            diagnostic.print("{s}: cannot load the compiled handler: {s}", .{ path, @errorName(err) }) catch {}; // Cut, as above.
            return error.Load;
        },
    };
}

/// Loads a handler compiled in at build time (`-Dhandler`): the image is verified again, as
/// every image is.
pub fn loadImage(gpa: std.mem.Allocator, name: []const u8, image: []const u8, diagnostic: *std.Io.Writer) LoadError!js.Engine.Module {
    var problem: js.image.Problem = .{};
    return Engine.Module.fromImage(gpa, image, &host.host, &problem) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => {
            diagnostic.print("handler {s}: the compiled-in image does not load: {s} ({s})", .{ name, problem.message, @errorName(err) }) catch {}; // Cut, as above.
            return error.Load;
        },
    };
}

pub fn readSource(gpa: std.mem.Allocator, path: []const u8) ![]u8 {
    const io = std.Io.Threaded.global_single_threaded.io();
    return std.Io.Dir.cwd().readFileAlloc(io, path, gpa, .limited(js_source_bytes_max));
}

/// The compiler's own bound on a source (docs/JS.md, "Limits"): a longer file is refused here.
const js_source_bytes_max = @import("../js/Parser.zig").source_bytes_max;

pub const InitError = error{ OutOfMemory, Module, NoDefaultExport };

/// The worker's engine for `module`: allocated once, its top-level code run and sealed. Why it
/// cannot serve (its top-level code throws, it has no default function) is written to
/// `diagnostic` as one line.
pub fn init(
    gpa: std.mem.Allocator,
    module: *const Engine.Module,
    name: []const u8,
    limits: Limits,
    tally: *Tally,
    diagnostic: *std.Io.Writer,
) InitError!Handler {
    const engine = Engine.init(gpa, module, limits.engine()) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        // The module was loaded with this host, and the settings' minimums are the engine's.
        error.UnknownHostGlobal, error.TooManyExports, error.TooManyHostGlobals, error.LimitTooSmall => unreachable,
    };
    errdefer engine.deinit(gpa);
    const outcome = engine.runModule();
    switch (outcome) {
        .value => {},
        .exception, .terminated => {
            var buffer: [256]u8 = undefined;
            var w: std.Io.Writer = .fixed(&buffer);
            switch (outcome) {
                .exception => |x| describe(x, &w),
                .terminated => |t| w.writeAll(t.message()) catch {}, // Cut at the buffer's end.
                .value => unreachable,
            }
            const where = engine.errorPosition();
            diagnostic.print("handler {s}: its top-level code failed at {s}:{d}:{d}: {s}", .{
                name,
                module.program.source_name,
                if (where) |p| p.line else 0,
                if (where) |p| p.column else 0,
                w.buffered(),
            }) catch {}; // Cut at the buffer's end.
            return error.Module;
        },
    }
    const function = engine.exportValue("default") orelse {
        diagnostic.print("handler {s}: {s} has no `export default function`", .{ name, module.program.source_name }) catch {}; // Cut, as above.
        return error.NoDefaultExport;
    };
    if (!function.isObject() or function.asObject().kind != .closure) {
        diagnostic.print("handler {s}: the default export of {s} is not a function", .{ name, module.program.source_name }) catch {}; // Cut, as above.
        return error.NoDefaultExport;
    }
    return .{
        .name = name,
        .engine = engine,
        .function = function,
        .body_bytes_max = limits.body_bytes_max,
        .deadline_ns = limits.deadline_ns,
        .tally = tally,
    };
}

pub fn deinit(handler: *Handler, gpa: std.mem.Allocator) void {
    handler.engine.deinit(gpa);
    handler.* = undefined;
}

/// Runs the handler for `request` and writes its response into `out`. `scratch` holds a
/// decoded query name or value (at least the target's length).
pub fn respond(handler: *Handler, request: *const Request, reply: Reply, out: []u8, scratch: []u8, now_ns: u64) Outcome {
    assert(scratch.len >= request.path_and_query.len);
    handler.tally.stats.requests.add(1);
    const engine = handler.engine;
    engine.beginRequest();
    // Everything below lives in the engine's arena until the next call resets it.
    const request_value = request_object.build(engine, request, scratch) catch
        return handler.fail(.memory, now_ns, "the request does not fit the handler's heap");
    return handler.conclude(engine.call(handler.function, &.{request_value}), reply, out, now_ns);
}

/// When a suspended call wants to go on (monotonic nanoseconds): its next timer or its
/// deadline.
pub fn wakeAt(handler: *const Handler, ticket: Engine.Ticket) u64 {
    return handler.engine.wakeAt(ticket);
}

/// The call waits on its client's body: its deadline stops until `resumeDeadline`, since the
/// client's pace is not the handler's doing (the client's timeouts bound it).
pub fn pauseDeadline(handler: *Handler, ticket: Engine.Ticket) void {
    handler.engine.pauseDeadline(ticket);
}

pub fn resumeDeadline(handler: *Handler, ticket: Engine.Ticket) void {
    handler.engine.resumeDeadline(ticket);
}

/// Goes on with a suspended call (its timers are due, or its deadline passed), as `respond`
/// would have: a response in `out`, a proxy, a failure, or suspended again.
pub fn resumeTimers(handler: *Handler, ticket: Engine.Ticket, reply: Reply, out: []u8, now_ns: u64) Outcome {
    return handler.conclude(handler.engine.resumeTimers(ticket), reply, out, now_ns);
}

/// A fetch the suspended call made and the exchange has not started yet (each is returned
/// once): its index for `settleFetch`, and what it asks for, in the request's heap.
pub const Fetch = struct { index: u8, request: fetch.Request };

/// What a suspended call asked of the exchange and the exchange has not started yet (each is
/// returned once): a fetch, or the read of its request body (request_body.zig).
pub const Op = union(enum) {
    fetch: Fetch,
    body: BodyRead,
    /// The read of a fetched body still at the pool (fetch.zig's body streams).
    fetched_body: FetchedRead,
};

/// The read of a fetched body: its operation's index, the body stream, and the worker's fetch
/// slot that holds the body, for `settleFetchedBody`.
pub const FetchedRead = struct { index: u8, stream: Value, slot: u32 };

/// The read of the request body: its operation's index and the request object, for
/// `settleBody`.
pub const BodyRead = struct { index: u8, request: Value };

pub fn nextOp(handler: *Handler, ticket: Engine.Ticket) ?Op {
    const op = handler.engine.takeHostOp(ticket) orelse return null;
    if (request_body.isRead(op.request)) return .{ .body = .{ .index = op.index, .request = op.request } };
    if (fetch.isBodyRead(op.request)) {
        const slot = fetch.streamPending(fetch.streamOf(op.request).?).slot;
        return .{ .fetched_body = .{ .index = op.index, .stream = op.request, .slot = slot } };
    }
    return .{ .fetch = .{ .index = op.index, .request = .of(op.request) } };
}

/// How a body read ended: the bytes (in the request's heap, from `fetchBytes`), or why not.
pub const BodyResult = union(enum) {
    bytes: []align(8) u8,
    failed: []const u8,
};

/// Goes on with a suspended call whose body read ended, as `settleFetch` does: its promise
/// settles with the text, JSON or ArrayBuffer, or rejects with a TypeError.
pub fn settleBody(handler: *Handler, ticket: Engine.Ticket, read: BodyRead, result: *const BodyResult, reply: Reply, out: []u8, now_ns: u64) Outcome {
    const Read = SettledRead(request_body.settle, request_body.fail);
    const settled: Read = .{ .target = read.request, .result = result };
    const outcome = handler.engine.settleHostOp(ticket, read.index, .{ .context = &settled, .build = Read.build });
    return handler.conclude(outcome, reply, out, now_ns);
}

/// The same for the read of a fetched body (fetch.zig's body streams).
pub fn settleFetchedBody(handler: *Handler, ticket: Engine.Ticket, read: FetchedRead, result: *const BodyResult, reply: Reply, out: []u8, now_ns: u64) Outcome {
    const Read = SettledRead(fetch.settleRead, fetch.failRead);
    const settled: Read = .{ .target = read.stream, .result = result };
    const outcome = handler.engine.settleHostOp(ticket, read.index, .{ .context = &settled, .build = Read.build });
    return handler.conclude(outcome, reply, out, now_ns);
}

/// A read's settlement: `settle` builds the value from the bytes, `fail` throws the message,
/// each on the object the read was recorded with (the request, or a body stream).
fn SettledRead(
    comptime settle: fn (*js.Vm, Value, []align(8) u8) js.Vm.Error!Value,
    comptime fail_read: fn (*js.Vm, Value, []const u8) js.Vm.Error!Value,
) type {
    return struct {
        target: Value,
        result: *const BodyResult,

        fn build(context: *const anyopaque, vm: *js.Vm) js.Vm.Error!Value {
            const settled: *const @This() = @ptrCast(@alignCast(context));
            return switch (settled.result.*) {
                .bytes => |bytes| settle(vm, settled.target, bytes),
                .failed => |message| fail_read(vm, settled.target, message),
            };
        }
    };
}

/// Room in the suspended call's heap for what a fetch brings back (its fields, its body):
/// null when the handler's memory limit leaves none.
pub fn fetchBytes(handler: *Handler, ticket: Engine.Ticket, len: usize) ?[]align(8) u8 {
    return handler.engine.hostBytes(ticket, len);
}

/// How a fetch ended: the pool's answer, or why there is none (a TypeError's message).
pub const FetchResult = union(enum) {
    answer: fetch.Answer,
    failed: []const u8,
};

/// Goes on with a suspended call whose fetch `index` (of `url`) ended, as `resumeTimers` does:
/// its promise settles with a Response, or rejects with a TypeError, and the call runs on.
pub fn settleFetch(handler: *Handler, ticket: Engine.Ticket, index: u8, url: *const string.String, result: *const FetchResult, reply: Reply, out: []u8, now_ns: u64) Outcome {
    const settled: Settled = .{ .url = url, .result = result };
    const outcome = handler.engine.settleHostOp(ticket, index, .{ .context = &settled, .build = Settled.build });
    return handler.conclude(outcome, reply, out, now_ns);
}

const Settled = struct {
    url: *const string.String,
    result: *const FetchResult,

    fn build(context: *const anyopaque, vm: *js.Vm) js.Vm.Error!Value {
        const settled: *const Settled = @ptrCast(@alignCast(context));
        return switch (settled.result.*) {
            .answer => |*answer| fetch.newResponse(vm, answer, settled.url),
            .failed => |message| vm.throwMessage(.type_error, message),
        };
    }
};

/// The exchange of a suspended call is going away (its client left, the worker stops): the
/// call's state is freed and counted, and nothing of it runs again. No log line: a client that
/// leaves is an ordinary event.
pub fn abandon(handler: *Handler, ticket: Engine.Ticket) void {
    handler.engine.cancel(ticket);
    handler.tally.stats.failures[@backingInt(Failure.abandoned)].add(1);
}

fn conclude(handler: *Handler, outcome: Engine.Outcome, reply: Reply, out: []u8, now_ns: u64) Outcome {
    return switch (outcome) {
        .value => |v| handler.write(v, reply, out, now_ns),
        .exception => |x| handler.failException(x, now_ns),
        .terminated => |why| handler.failTerminated(why, now_ns),
        .suspended => |ticket| .{ .suspended = ticket },
        .busy => handler.fail(.busy, now_ns, "it waits on a timer, and as many of its requests as `suspended_max` allows already do on this worker"),
    };
}

/// A call the engine stopped: its limit, named in the log line.
fn failTerminated(handler: *Handler, why: js.Vm.Termination, now_ns: u64) Outcome {
    const failure: Failure = switch (why) {
        .budget => .time,
        .deadline => .deadline,
        .memory => .memory,
        .stack => .depth,
        .invalid_bytecode => .exception, // A bug, reported as one by its message.
    };
    var buffer: [128]u8 = undefined;
    const detail = if (why == .deadline)
        std.fmt.bufPrint(&buffer, "deadline exceeded: the script ran longer than its {d} ms", .{
            @as(f64, @floatFromInt(handler.deadline_ns)) / std.time.ns_per_ms,
        }) catch why.message()
    else
        why.message();
    return handler.fail(failure, now_ns, detail);
}

// ---------------------------------------------------------------------------------------------
// The response

/// Writes the Response `v` into `out` (its fields and body, or a pool's head for a fetched
/// body still at the pool), or says where to proxy.
fn write(handler: *Handler, v: Value, reply: Reply, out: []u8, now_ns: u64) Outcome {
    if (!v.isObject() or v.asObject().class != host.response_class) {
        return handler.fail(.not_a_response, now_ns, "it returned something other than a Response (use Response.json, .text, .html, .redirect or .proxy)");
    }
    if (host.field(v, .pool) != null) {
        const proxied = handler.proxiedRequest(v) catch |err| switch (err) {
            error.OutOfMemory => return handler.fail(.memory, now_ns, "the proxied request's fields do not fit the handler's heap"),
            error.NotAResponse => return handler.fail(.not_a_response, now_ns, "the Response's pool, path or headers were changed to values it cannot send"),
        };
        return .{ .proxy = proxied };
    }
    const written = writeResponse(&handler.engine.heap, v, reply, out) catch |err| switch (err) {
        error.WriteFailed => return handler.fail(.response_too_large, now_ns, "the response head does not fit a connection buffer (limits.header_bytes_max)"),
        error.TooManyFields => return handler.fail(.response_too_large, now_ns, std.fmt.comptimePrint("the response has more than {d} header fields", .{http.LocalResponse.fields_max})),
        error.OutOfMemory => return handler.fail(.memory, now_ns, "the response body's UTF-8 bytes do not fit the handler's heap"),
        error.NotAResponse => return handler.fail(.not_a_response, now_ns, "the Response's status, body or headers were changed to values it cannot send"),
        error.BodyUsed => return handler.fail(.not_a_response, now_ns, "its Response's body was already used (a fetched body can be read or returned once)"),
    };
    const local = switch (written.head) {
        .stream => |streamed| return .{ .stream = streamed },
        .local => |local| local,
    };
    if (written.rest.len == 0) return .{ .response = .{ .local = local } };
    // The rest of the body stays in the request's heap until it is sent: the slot is kept.
    const kept = handler.engine.heap.create(Kept) catch
        return handler.fail(.memory, now_ns, "the response's record does not fit the handler's heap");
    const ticket = handler.engine.keep() orelse
        return handler.fail(.busy, now_ns, "its response is larger than a buffer, and as many of its requests as `suspended_max` allows already hold the engine on this worker");
    kept.* = .{ .rest = written.rest, .ticket = ticket };
    return .{ .response = .{ .local = local, .kept = kept } };
}

/// The exchange has sent the last byte of a response's `rest` (or gave up on it): the engine
/// slot that held it is free again.
pub fn releaseBody(handler: *Handler, ticket: Engine.Ticket) void {
    handler.engine.release(ticket);
}

const Written = struct {
    head: union(enum) {
        /// `out` holds the fields and the body's first bytes.
        local: http.LocalResponse,
        /// The body is a fetched one still at the pool: `out` holds the head alone.
        stream: Streamed,
    },
    /// The body bytes that did not fit, in the request's heap.
    rest: []const u8 = "",
};

const WriteError = error{ WriteFailed, TooManyFields, NotAResponse };

/// The response's fields into `out`, then as much of its body as fits; what does not stays
/// where it is (bytes) or is encoded as UTF-8 into the request's heap (a string), to be sent
/// later. A fetched body still at the pool is streamed from there: its head is written alone,
/// as a pool's response head (`writeStreamedHead`).
fn writeResponse(heap: *js.Heap, v: Value, reply: Reply, out: []u8) (WriteError || error{ OutOfMemory, BodyUsed })!Written {
    const status_value = host.field(v, .status) orelse return error.NotAResponse;
    if (!status_value.isNumber()) return error.NotAResponse;
    const status_float = status_value.asNumber();
    if (@trunc(status_float) != status_float or status_float < 200 or status_float > 599) return error.NotAResponse;
    const status: u16 = @intFromFloat(status_float);
    const body_value = host.field(v, .body) orelse return error.NotAResponse;
    const stream = fetch.streamOf(body_value);
    if (stream) |s| if (fetch.streamStateOf(s) != .unread) return error.BodyUsed;
    // Bytes (`new Response(bytes)`, a fetched body that came whole) go as they are; none is
    // empty; a fetched body not here yet is pending.
    const body_bytes: ?[]const u8 = if (body_value.isNull()) "" else if (stream) |s| fetch.streamBytes(s) else fetch.bodyOf(v);
    const pending: ?fetch.Pending = if (stream != null and body_bytes == null) fetch.streamPending(stream.?) else null;
    if (body_bytes == null and pending == null and !body_value.isString()) return error.NotAResponse;
    // RFC 9110 §15.3.5, §15.4.5: these end with their head. A 204 has no Content-Length; a
    // 304's would have to be the length of the 200 it stands for (§8.6), which sluice does
    // not know, so it has none either, and it has no representation metadata but what the
    // handler wrote (ETag, Cache-Control...): no Content-Type of the helper's own
    // (`Response.text` and friends set one).
    const bodiless = status == 204 or status == 304;
    if (pending != null and !reply.head_only and !bodiless) return writeStreamedHead(v, status, pending.?, out);

    var w: std.Io.Writer = .fixed(out);
    var fields: FieldLines = .{ .w = &w };
    try fields.writeAll(v, status);
    try w.writeAll("\r\n");
    const len = if (body_bytes) |bytes| bytes.len else if (pending) |p| switch (p.framing) {
        .length => |length| length,
        .chunked, .close => 0, // A HEAD's, or a bodiless status's: no length is known.
    } else utf8Length(body_value.asString());
    var local: http.LocalResponse = .{
        .status = status,
        .content_length = if (bodiless or (pending != null and pending.?.framing != .length)) null else len,
        .fields_len = @intCast(w.end),
        .len = @intCast(w.end),
    };
    if (reply.head_only or bodiless or len == 0) return .{ .head = .{ .local = local } };
    if (len <= w.unusedCapacityLen()) {
        if (body_bytes) |bytes| try w.writeAll(bytes) else try string.writeUtf8(&w, body_value.asString());
        local.len = @intCast(w.end);
        return .{ .head = .{ .local = local } };
    }
    const bytes = body_bytes orelse try utf8Bytes(heap, body_value.asString(), @intCast(len));
    assert(bytes.len == len);
    const first = w.unusedCapacityLen();
    try w.writeAll(bytes[0..first]);
    local.len = @intCast(w.end);
    return .{ .head = .{ .local = local }, .rest = bytes[first..] };
}

/// The head of a response whose body is a fetched one still at the pool, written as the head of
/// a pool's response (HTTP/1.1 with the pool's framing): the exchange parses it as it parses
/// any backend's and relays the body from the sub-exchange (proxy/handler_target.zig), so
/// each protocol frames it as it frames a relayed response.
fn writeStreamedHead(v: Value, status: u16, pending: fetch.Pending, out: []u8) WriteError!Written {
    var w: std.Io.Writer = .fixed(out);
    const phrase = http.LocalResponse.standardPhrase(status);
    try w.print("HTTP/1.1 {d} {s}\r\n", .{ status, phrase });
    switch (pending.framing) {
        .length => |length| try w.print("Content-Length: {d}\r\n", .{length}),
        .chunked => try w.writeAll("Transfer-Encoding: chunked\r\n"),
        .close => {},
    }
    var fields: FieldLines = .{ .w = &w };
    try fields.writeAll(v, status);
    try w.writeAll("\r\n");
    return .{ .head = .{ .stream = .{ .status = status, .len = w.end, .slot = pending.slot } } };
}

/// The response's field lines, each checked again as it is written, and at most
/// `LocalResponse.fields_max` of them.
const FieldLines = struct {
    w: *std.Io.Writer,
    count: u32 = 0,

    /// The Content-Type, Location and the handler's fields.
    fn writeAll(lines: *FieldLines, v: Value, status: u16) WriteError!void {
        const headers = host.field(v, .headers);
        const has_type = if (headers) |h| h.isObject() and hasField(h, "content-type") else false;
        if (!has_type and status != 304) if (host.field(v, .type)) |t| {
            if (!t.isString()) return error.NotAResponse;
            try lines.write("Content-Type", t.asString());
        };
        if (host.field(v, .location)) |location| {
            if (!location.isString()) return error.NotAResponse;
            try lines.write("Location", location.asString());
        }
        if (headers) |h| {
            if (!h.isObject()) return error.NotAResponse;
            if (js.builtins.headers.isHeaders(h.asObject())) {
                try lines.writeHeadersObject(h.asObject());
            } else for (h.asObject().properties.slice()) |property| {
                if (property.key.flags.wide or !property.value.isString()) return error.NotAResponse;
                try lines.write(property.key.latin1(), property.value.asString());
            }
        }
    }

    /// The fields of a `new Response`'s Headers (which the handler may have changed since the
    /// constructor checked them): a line per value, so that Set-Cookie's values stay apart
    /// (RFC 9110 section 5.3).
    fn writeHeadersObject(lines: *FieldLines, headers: *object.Object) WriteError!void {
        var fields = js.builtins.headers.fields(headers);
        while (fields.next()) |f| {
            if (f.name.flags.wide) return error.NotAResponse;
            for (f.values) |value| {
                if (!value.isString()) return error.NotAResponse;
                try lines.write(f.name.latin1(), value.asString());
            }
        }
    }

    /// A field, checked again as it is written: the natives checked what they were given
    /// (host.zig), but the handler may have changed the Response's properties since, and a CR
    /// or LF here would let it write fields (or a second response) of its own.
    fn write(lines: *FieldLines, name: []const u8, value: *const string.String) WriteError!void {
        if (!host.isToken(name) or host.isReserved(name) != null) return error.NotAResponse;
        if (!host.fieldValueValid(value)) return error.NotAResponse;
        if (lines.count == http.LocalResponse.fields_max) return error.TooManyFields;
        lines.count += 1;
        try http.chars.writeFieldLine(lines.w, name, value.latin1());
    }
};

/// A string body as UTF-8 bytes: its own when it is ASCII (nothing to encode), else encoded
/// into the request's heap, once, so that windows of it can be sent without encoding again.
fn utf8Bytes(heap: *js.Heap, s: *const string.String, utf8_len: usize) error{OutOfMemory}![]const u8 {
    if (!s.flags.wide and utf8_len == s.len) return s.latin1();
    const bytes = heap.allocBytes(utf8_len, 1) catch return error.OutOfMemory;
    var w: std.Io.Writer = .fixed(bytes);
    string.writeUtf8(&w, s) catch unreachable; // `utf8_len` is what it writes.
    assert(w.end == utf8_len);
    return bytes;
}

fn utf8Length(s: *const string.String) usize {
    var counter: std.Io.Writer.Discarding = .init(&.{});
    string.writeUtf8(&counter.writer, s) catch unreachable; // Discarding never fails.
    return counter.fullCount();
}

/// A `Response.proxy`'s pool, path and fields, checked again (the handler may have changed
/// the object since the native checked it): the fields as an array in the engine's arena.
fn proxiedRequest(handler: *Handler, v: Value) error{ OutOfMemory, NotAResponse }!Proxied {
    const pool = host.field(v, .pool).?;
    if (!pool.isString() or pool.asString().flags.wide) return error.NotAResponse;
    const pool_name = pool.asString().latin1();
    if (pool_name.len == 0 or pool_name.len > host.pool_name_bytes_max) return error.NotAResponse;
    var path: ?[]const u8 = null;
    if (host.field(v, .path)) |p| {
        if (!p.isString() or !host.proxyPathValid(p.asString())) return error.NotAResponse;
        path = p.asString().latin1();
    }
    var fields: []http.Header = &.{};
    var removed: [][]const u8 = &.{};
    if (host.field(v, .headers)) |h| {
        if (!h.isObject()) return error.NotAResponse;
        const properties = h.asObject().properties.slice();
        if (properties.len > host.proxy_fields_max) return error.NotAResponse;
        var removed_count: usize = 0;
        for (properties) |property| {
            if (property.value.isNull()) removed_count += 1;
        }
        const heap = &handler.engine.heap;
        fields = heap.alloc(http.Header, properties.len - removed_count) catch return error.OutOfMemory;
        removed = heap.alloc([]const u8, removed_count) catch return error.OutOfMemory;
        var set_count: usize = 0;
        removed_count = 0;
        for (properties) |property| {
            if (property.key.flags.wide) return error.NotAResponse;
            const name = property.key.latin1();
            if (!host.isToken(name) or host.isReservedIn(.request, name) != null) return error.NotAResponse;
            if (property.value.isNull()) {
                removed[removed_count] = name;
                removed_count += 1;
                continue;
            }
            if (!property.value.isString() or !host.fieldValueValid(property.value.asString())) return error.NotAResponse;
            fields[set_count] = .{ .name = name, .value = property.value.asString().latin1() };
            set_count += 1;
        }
    }
    return .{ .pool = pool_name, .path = path, .headers = fields, .removed = removed };
}

/// The exchange could not send a `Response.proxy` on: counted and logged like the handler's
/// own failures, naming what it asked for (`subject`: the pool's name) and, for an unknown
/// pool, the pools there are (`known`: "the pools are a, b").
pub fn failProxy(handler: *Handler, failure: Failure, now_ns: u64, subject: []const u8, known: []const u8) Outcome {
    var buffer: [256 + 1200]u8 = undefined;
    const detail = switch (failure) {
        .unknown_pool => std.fmt.bufPrint(&buffer, "Response.proxy names pool \"{s}\", which the configuration does not have: {s}", .{ subject, known }),
        .request_too_large => std.fmt.bufPrint(&buffer, "the request proxied to pool \"{s}\" does not fit a connection buffer (limits.header_bytes_max)", .{subject}),
        else => unreachable, // The exchange reports only these.
    } catch buffer[0..]; // A pool name is at most 64 bytes, `known` at most 1,070: the line fits.
    return handler.fail(failure, now_ns, detail);
}

/// `Response.proxy` after the handler read a body larger than the buffer: its bytes are gone
/// from the downstream (counted as `request_too_large`, with a line that says why).
pub fn failBodyGone(handler: *Handler, now_ns: u64, pool: []const u8) Outcome {
    var buffer: [256]u8 = undefined;
    const detail = std.fmt.bufPrint(&buffer, "Response.proxy to pool \"{s}\" after the handler read a request body larger than the buffer: it cannot be sent again", .{pool}) catch buffer[0..];
    return handler.fail(.request_too_large, now_ns, detail);
}

/// Whether the headers object has a field of this (lower-case) name, in any case.
fn hasField(headers: Value, name: []const u8) bool {
    if (js.builtins.headers.isHeaders(headers.asObject())) return js.builtins.headers.hasName(headers.asObject(), name);
    for (headers.asObject().properties.slice()) |property| {
        if (!property.key.flags.wide and std.ascii.eqlIgnoreCase(property.key.latin1(), name)) return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// Failures

/// An uncaught exception: a limit's RangeError counts as that limit.
fn failException(handler: *Handler, exception: Value, now_ns: u64) Outcome {
    var buffer: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    describe(exception, &w);
    const text = w.buffered();
    const failure: Failure = if (std.mem.startsWith(u8, text, "RangeError: Out of memory"))
        .memory
    else if (std.mem.startsWith(u8, text, "RangeError: Maximum call stack size exceeded"))
        .depth
    else
        .exception;
    return handler.fail(failure, now_ns, text);
}

/// `TypeError: message` for an error, the value for a string, its type for anything else.
fn describe(exception: Value, w: *std.Io.Writer) void {
    if (exception.objectOf(.error_object)) |o| {
        const e = o.as(object.ErrorObject);
        w.writeAll(e.error_kind.name()) catch return;
        const message = e.message orelse return;
        w.writeAll(": ") catch return;
        string.writeUtf8(w, message) catch return; // Cut at the buffer's end.
    } else if (exception.isString()) {
        w.writeAll("a thrown string: ") catch return;
        string.writeUtf8(w, exception.asString()) catch return;
    } else {
        w.writeAll("a thrown value that is not an Error") catch return;
    }
}

/// Counts the failure and logs it (rate limited): the handler, the file, the line and the
/// column, and what went wrong. The client is told nothing more than 500.
fn fail(handler: *Handler, failure: Failure, now_ns: u64, detail: []const u8) Outcome {
    const index = @backingInt(failure);
    const tally = handler.tally;
    tally.stats.failures[index].add(1);
    const last = tally.last_log_ns[index];
    if (last != 0 and now_ns -| last < std.time.ns_per_s) {
        tally.suppressed[index] +|= 1;
        return .{ .failed = failure };
    }
    tally.last_log_ns[index] = @max(now_ns, 1);
    const suppressed = tally.suppressed[index];
    tally.suppressed[index] = 0;
    const file = handler.engine.module.program.source_name;
    // Only a failure that stopped the call has a position; after a call that returned, the
    // engine's is that of an exception the handler caught, if any, and would mislead.
    const where = switch (failure) {
        .exception, .memory, .time, .deadline, .depth => handler.engine.errorPosition(),
        .response_too_large, .not_a_response, .unknown_pool, .request_too_large, .busy, .abandoned => null,
    };
    const status: u16 = if (failure == .busy) 503 else 500;
    if (where) |p| {
        log.warn("{d} handler_{s}: handler {s} at {s}:{d}:{d}: {s}; {d} more not shown", .{
            status, @tagName(failure), handler.name, file, p.line, p.column, detail, suppressed,
        });
    } else {
        log.warn("{d} handler_{s}: handler {s} ({s}): {s}; {d} more not shown", .{
            status, @tagName(failure), handler.name, file, detail, suppressed,
        });
    }
    return .{ .failed = failure };
}
