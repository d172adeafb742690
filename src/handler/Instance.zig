//! One JavaScript handler as configuration generations serve it: its module, compiled once, and
//! one engine per worker made from it (`Handler`). Built on the control thread with a
//! generation, at start-up and at every reload (runtime/generations.zig), and shared by
//! consecutive generations while its text and limits are the same, as a pool instance is.
//!
//! Decision: a handler belongs to the generation, not to the worker. A reload compiles a
//! changed file (`--handler-file`, a file's `.handlers`) into a new instance before anything
//! is published; a compile error or a failing top-level refuses the reload and the running
//! instance keeps serving. An exchange holds the generation it started on (proxy/Proxy.zig,
//! holds), so the engine it calls is never freed under it: an instance is freed, whole with
//! its arena, when the last generation that uses it is freed. No lock and no message to the
//! workers: they pick the new engines up with the generation.
//!
//! Memory: an instance's arena holds the text, the module and the engines (each engine's heap
//! region is allocated untouched: a worker that never calls the handler costs it no pages).
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const Engine = @import("../js/js.zig").Engine;
const Handler = @import("Handler.zig");

const Instance = @This();

arena: std.heap.ArenaAllocator,
/// Generations that use it (the control thread's count).
refs: u32 = 0,
/// Its configuration, strings in the arena: the next reload compares with it.
config: Config.Handler,
/// SHA-256 of the file compiled (a handler with a `path`): a reload compiles again only when
/// the file's contents changed. A compiled-in image or source is the binary's own and never
/// changes.
digest: [Sha256.digest_length]u8 = @splat(0),
module: Engine.Module,
/// One per worker, by worker index.
workers: []Handler,

const Sha256 = std.crypto.hash.sha2.Sha256;

/// How many names the tallies remember (runtime/generations.zig): each name a generation had
/// keeps its row, so a handler's counters go on across reloads. A reload that would need
/// another is refused.
pub const slots_max = 2 * Config.handlers_count_max;

/// One worker's tallies, by slot; a cache line of its own (each row is written by its worker).
pub const TallyRow = struct {
    tallies: [slots_max]Handler.Tally align(64),
};

pub const Error = error{ OutOfMemory, Invalid };

/// The instance for `config` in the next generation: `previous` (the current generation's of
/// the same name) when its settings are the same and its file still holds what it was compiled
/// from, else a new one, compiled and with every worker's engine made, in an arena on
/// `backing` (the page allocator; the simulator's quarantine). `tallies` are the workers' rows
/// and `slot` the name's. A mistake (`Invalid`) is one line in `diagnostic`.
pub fn make(
    backing: std.mem.Allocator,
    config: *const Config.Handler,
    previous: ?*Instance,
    slot: u8,
    tallies: []TallyRow,
    diagnostic: *std.Io.Writer,
) Error!*Instance {
    var arena_state: std.heap.ArenaAllocator = .init(backing);
    errdefer arena_state.deinit();
    const arena = arena_state.allocator();
    const text = try readText(arena, config, diagnostic);
    var digest: [Sha256.digest_length]u8 = @splat(0);
    if (config.path.len > 0) Sha256.hash(text, &digest, .{});
    if (previous) |old| if (sameSettings(&old.config, config) and std.mem.eql(u8, &old.digest, &digest)) {
        arena_state.deinit();
        return old;
    };

    const instance = try arena.create(Instance);
    instance.* = .{
        .arena = undefined,
        .config = try copyConfig(arena, config),
        .digest = digest,
        .module = compile(arena, config, text, diagnostic) catch |err| return switch (err) {
            error.OutOfMemory => error.OutOfMemory,
            error.CannotRead, error.Compile, error.Load => error.Invalid,
        },
        .workers = try arena.alloc(Handler, tallies.len),
    };
    const limits = limitsOf(config);
    for (instance.workers, tallies) |*handler, *row| {
        handler.* = Handler.init(arena, &instance.module, instance.config.name, limits, &row.tallies[slot], diagnostic) catch |err| return switch (err) {
            error.OutOfMemory => reservationRefused(config, diagnostic),
            error.Module, error.NoDefaultExport => error.Invalid, // Said in `diagnostic`.
        };
    }
    instance.arena = arena_state;
    return instance;
}

/// An engine's heaps are one reservation of `memory` × (`suspended_max` + 1) bytes, untouched
/// until used; a kernel that will not map that much (a small machine, heuristic overcommit) is
/// answered with the two settings to lower, not a bare "out of memory".
fn reservationRefused(config: *const Config.Handler, diagnostic: *std.Io.Writer) Error {
    const mib = config.heap_bytes * (@as(u64, config.suspended_max) + 1) / (1024 * 1024);
    diagnostic.print("handler {s}: its engine cannot reserve {d} MiB of address space on a worker " ++
        "(memory x (suspended_max + 1)); lower memory or suspended_max", .{ config.name, mib }) catch {}; // Cut at the buffer's end.
    return error.Invalid;
}

/// Frees the module, the engines and the arena: no generation uses it any more, so no
/// exchange on any worker can be calling it.
pub fn destroy(instance: *Instance) void {
    assert(instance.refs == 0);
    var arena = instance.arena;
    arena.deinit();
}

/// A generation that used the instance is freed (or its build failed): one reference less,
/// and the instance freed with the last (every worker has let go of every generation that had
/// it, or none ever saw it).
pub fn unref(instance: *Instance) void {
    instance.refs -= 1;
    if (instance.refs == 0) instance.destroy();
}

/// The handler's engine on worker `worker_index`.
pub fn on(instance: *const Instance, worker_index: u32) *Handler {
    return &instance.workers[worker_index];
}

/// Compiles a handler as configured (`sluice check`, and `make`): its image verified, or its
/// text compiled. `text` is what `readText` returned for it.
pub fn compile(
    allocator: std.mem.Allocator,
    config: *const Config.Handler,
    text: []const u8,
    diagnostic: *std.Io.Writer,
) Handler.LoadError!Engine.Module {
    if (config.image.len > 0) return Handler.loadImage(allocator, config.name, config.image, diagnostic);
    if (config.source.len > 0) {
        const name = std.fmt.allocPrint(allocator, "{s}.js", .{config.name}) catch return error.OutOfMemory;
        return Handler.loadSource(allocator, text, name, diagnostic);
    }
    return Handler.loadSource(allocator, text, config.path, diagnostic);
}

/// What a handler compiles: its image, its source, or its file's contents, read now.
pub fn readText(allocator: std.mem.Allocator, config: *const Config.Handler, diagnostic: *std.Io.Writer) Error![]const u8 {
    if (config.image.len > 0) return config.image;
    if (config.source.len > 0) return config.source;
    return Handler.readSource(allocator, config.path) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => {
            diagnostic.print("{s}: cannot read the handler: {s}", .{ config.path, @errorName(err) }) catch {}; // Cut at the buffer's end.
            return error.Invalid;
        },
    };
}

comptime {
    // A handler's `fetch_max` fits the engine's table of host operations.
    assert(@import("../config/settings.zig").lookup(.handler, "fetch_max").value.count.max + 1 == @import("../js/js.zig").HostOps.ops_max);
}

/// The engine's limits as the handler's settings give them.
pub fn limitsOf(config: *const Config.Handler) Handler.Limits {
    return .{
        .heap_bytes = config.heap_bytes,
        .budget = config.budget_ticks,
        .deadline_ns = config.deadline_ns,
        .depth = config.depth,
        .body_bytes_max = config.body_bytes_max,
        .suspended_max = config.suspended_max,
        .fetch_max = @intCast(config.fetch_max), // At most the engine's table (below).
    };
}

/// The same name, the same file, image or source, and the same limits. An image or source is
/// the binary's own: the same one is at the same address.
fn sameSettings(a: *const Config.Handler, b: *const Config.Handler) bool {
    return std.mem.eql(u8, a.name, b.name) and std.mem.eql(u8, a.path, b.path) and
        a.image.ptr == b.image.ptr and a.image.len == b.image.len and
        a.source.ptr == b.source.ptr and a.source.len == b.source.len and
        a.heap_bytes == b.heap_bytes and a.budget_ticks == b.budget_ticks and a.deadline_ns == b.deadline_ns and
        a.depth == b.depth and a.body_bytes_max == b.body_bytes_max and a.suspended_max == b.suspended_max and
        a.fetch_max == b.fetch_max;
}

/// The strings a reload's configuration owns (its arena goes with its generation) copied into
/// the instance's, which may outlive it; the image and source stay the binary's.
fn copyConfig(arena: std.mem.Allocator, config: *const Config.Handler) error{OutOfMemory}!Config.Handler {
    var copy = config.*;
    copy.name = try arena.dupe(u8, config.name);
    copy.path = try arena.dupe(u8, config.path);
    return copy;
}

const testing = std.testing;

fn writeFile(path: [:0]const u8, text: []const u8) !void {
    const io = std.Io.Threaded.global_single_threaded.io();
    try std.Io.Dir.cwd().writeFile(io, .{ .sub_path = path, .data = text });
}

test "instance: kept while the file and limits are the same, compiled again when either changes" {
    const path = "/tmp/sluice-instance-test.js";
    defer std.Io.Dir.cwd().deleteFile(std.Io.Threaded.global_single_threaded.io(), path) catch {};
    try writeFile(path, "export default function h(r) { return Response.text('one'); }\n");
    var rows: [2]TallyRow = @splat(.{ .tallies = @splat(.{}) });
    var buffer: [256]u8 = undefined;
    var diagnostic: std.Io.Writer = .fixed(&buffer);
    var config: Config.Handler = .{ .name = "app", .path = path };

    const first = try make(testing.allocator, &config, null, 3, &rows, &diagnostic);
    first.refs = 1;
    defer if (first.refs == 1) {
        first.refs = 0;
        first.destroy();
    };
    try testing.expectEqual(@as(usize, 2), first.workers.len);
    try testing.expectEqual(&rows[1].tallies[3], first.on(1).tally);
    // Nothing changed: the same instance.
    try testing.expectEqual(first, try make(testing.allocator, &config, first, 3, &rows, &diagnostic));
    // The limits changed: a new one.
    config.depth += 1;
    const deeper = try make(testing.allocator, &config, first, 3, &rows, &diagnostic);
    try testing.expect(deeper != first);
    deeper.destroy();
    config.depth -= 1;
    // The file changed: a new one.
    try writeFile(path, "export default function h(r) { return Response.text('two'); }\n");
    const second = try make(testing.allocator, &config, first, 3, &rows, &diagnostic);
    try testing.expect(second != first);
    second.destroy();
    // A mistake: one line naming the place, and no instance.
    try writeFile(path, "export default function h(r) {\n  return 1 +;\n}\n");
    try testing.expectError(error.Invalid, make(testing.allocator, &config, first, 3, &rows, &diagnostic));
    try testing.expect(std.mem.startsWith(u8, diagnostic.buffered(), path ++ ":2:"));
    diagnostic.end = 0;
    try writeFile(path, "throw new Error('top');\nexport default function h(r) {}\n");
    try testing.expectError(error.Invalid, make(testing.allocator, &config, first, 3, &rows, &diagnostic));
    try testing.expect(std.mem.find(u8, diagnostic.buffered(), "its top-level code failed at " ++ path ++ ":1:") != null);
}
