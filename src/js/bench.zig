//! `zig build bench` (bench-js): the engine's cost for a handler-like function.
//!
//! Reports engine set-up time per worker (Engine.init + the module's top level), time per
//! call (with and without building the request object), heap allocations per call (counted
//! by a wrapping allocator: the target is zero) and heap bytes per call. Then runs the same
//! loop, written in JavaScript, under node, Bun and Deno when they are found (node on the
//! PATH; Bun and Deno from their npm packages, installed on first use into
//! .zig-cache/js-bench-peers unless --no-install is given), and prints their time per call.
//!
//! Method: warm up, then several rounds, the median quoted. Nothing is timed through a pipe.
const std = @import("std");
const js = @import("js.zig");
const Engine = js.Engine;

const handler_source =
    \\export default function handler(request) {
    \\  const { method, path, query, headers } = request;
    \\  const body = { hello: query.name ?? "world", via: headers["user-agent"], method, path, ok: true, n: 42 };
    \\  return JSON.stringify(body);
    \\}
;

/// The same loop, for the other engines: it builds the request in JavaScript.
const peer_loop =
    \\function handler(request) {
    \\  const { method, path, query, headers } = request;
    \\  const body = { hello: query.name ?? "world", via: headers["user-agent"], method, path, ok: true, n: 42 };
    \\  return JSON.stringify(body);
    \\}
    \\const calls = 1000000;
    \\let sink = 0;
    \\const rounds = [];
    \\for (let r = 0; r < 7; r++) {
    \\  const start = performance.now();
    \\  for (let i = 0; i < calls; i++) {
    \\    const request = { method: "GET", path: "/api/hello", query: { name: "sluice" }, headers: { "user-agent": "bench/1.0", accept: "*/*" } };
    \\    sink += handler(request).length;
    \\  }
    \\  rounds.push((performance.now() - start) * 1e6 / calls);
    \\}
    \\rounds.sort((a, b) => a - b);
    \\console.log(rounds[3].toFixed(1), sink > 0 ? "" : "!");
    \\
;

const calls_per_round = 200_000;
const rounds = 7;

const Counting = struct {
    child: std.mem.Allocator,
    count: usize = 0,

    fn allocator(self: *Counting) std.mem.Allocator {
        return .{ .ptr = self, .vtable = &.{ .alloc = alloc, .resize = resize, .remap = remap, .free = free } };
    }
    fn alloc(ctx: *anyopaque, len: usize, a: std.mem.Alignment, ra: usize) ?[*]u8 {
        const self: *Counting = @ptrCast(@alignCast(ctx));
        self.count += 1;
        return self.child.rawAlloc(len, a, ra);
    }
    fn resize(ctx: *anyopaque, m: []u8, a: std.mem.Alignment, n: usize, ra: usize) bool {
        const self: *Counting = @ptrCast(@alignCast(ctx));
        self.count += 1;
        return self.child.rawResize(m, a, n, ra);
    }
    fn remap(ctx: *anyopaque, m: []u8, a: std.mem.Alignment, n: usize, ra: usize) ?[*]u8 {
        const self: *Counting = @ptrCast(@alignCast(ctx));
        self.count += 1;
        return self.child.rawRemap(m, a, n, ra);
    }
    fn free(ctx: *anyopaque, m: []u8, a: std.mem.Alignment, ra: usize) void {
        const self: *Counting = @ptrCast(@alignCast(ctx));
        self.child.rawFree(m, a, ra);
    }
};

fn buildRequest(e: *Engine) !js.Value {
    const request = try e.newRequestObject();
    try e.setProperty(request, "method", try e.newString("GET"));
    try e.setProperty(request, "path", try e.newString("/api/hello"));
    const query = try e.newObject();
    try e.setProperty(query, "name", try e.newString("sluice"));
    try e.setProperty(request, "query", query);
    const headers = try e.newObject();
    try e.setProperty(headers, "user-agent", try e.newString("bench/1.0"));
    try e.setProperty(headers, "accept", try e.newString("*/*"));
    try e.setProperty(request, "headers", headers);
    return request;
}

fn median(values: []u64) u64 {
    std.mem.sort(u64, values, {}, std.sort.asc(u64));
    return values[values.len / 2];
}

fn now(io: std.Io) std.Io.Clock.Timestamp {
    return std.Io.Clock.Timestamp.now(io, .awake);
}

fn nsSince(io: std.Io, start: std.Io.Clock.Timestamp) u64 {
    const d = start.durationTo(now(io));
    return @intCast(d.raw.nanoseconds);
}

pub fn main(init: std.process.Init) !void {
    const io = init.io;
    const gpa = init.gpa;
    var install = true;
    var args = init.minimal.args.iterate();
    _ = args.skip();
    while (args.next()) |a| {
        if (std.mem.eql(u8, a, "--no-install")) install = false;
    }
    var counting: Counting = .{ .child = gpa };
    const counted = counting.allocator();

    var failure: js.Compiler.Failure = undefined;
    var module = try Engine.Module.fromSource(gpa, handler_source, "bench.js", &js.builtins.Host.none, &failure);
    defer module.deinit();

    // Set-up per worker: engine init plus the module's top level.
    var setup: [rounds]u64 = undefined;
    for (&setup) |*s| {
        const start = now(io);
        const e = try Engine.init(gpa, &module, .{});
        _ = e.runModule();
        s.* = nsSince(io, start);
        e.deinit(gpa);
    }

    const engine = try Engine.init(counted, &module, .{});
    defer engine.deinit(counted);
    _ = engine.runModule();
    const handler = engine.exportValue("default").?;

    // Warm up, and check the answer once.
    for (0..10_000) |_| {
        engine.beginRequest();
        _ = engine.call(handler, &.{try buildRequest(engine)});
    }
    engine.beginRequest();
    const check = engine.call(handler, &.{try buildRequest(engine)});
    var answer_buf: [256]u8 = undefined;
    var answer: std.Io.Writer = .fixed(&answer_buf);
    try Engine.writeString(check.value, &answer);

    const allocations_before = counting.count;
    var with_request: [rounds]u64 = undefined;
    var call_only: [rounds]u64 = undefined;
    var heap_bytes: usize = 0;
    for (0..rounds) |r| {
        var start = now(io);
        for (0..calls_per_round) |_| {
            engine.beginRequest();
            const request = try buildRequest(engine);
            _ = engine.call(handler, &.{request});
        }
        with_request[r] = nsSince(io, start) * 1000 / calls_per_round;
        // The call alone: the request is built once, and the heap rewound to just after it.
        engine.beginRequest();
        const request = try buildRequest(engine);
        const after_request = engine.heap.mark();
        start = now(io);
        for (0..calls_per_round) |_| {
            engine.heap.resetTo(after_request);
            _ = engine.call(handler, &.{request});
        }
        call_only[r] = nsSince(io, start) * 1000 / calls_per_round;
        heap_bytes = engine.heap.usedBytes() - (after_request.low + (engine.heap.region.len - after_request.high));
    }
    const allocations = counting.count - allocations_before;

    var out_buf: [4096]u8 = undefined;
    var out: std.Io.Writer = .fixed(&out_buf);
    try out.print("js engine (sluice):\n", .{});
    try out.print("  handler answer            {s}\n", .{answer.buffered()});
    try out.print("  set-up per worker         {d:.1} us (median of {d})\n", .{ @as(f64, @floatFromInt(median(&setup))) / 1000, rounds });
    try out.print("  time per call             {d:.3} us (call and JSON.stringify)\n", .{@as(f64, @floatFromInt(median(&call_only))) / 1e6});
    try out.print("  time per call + request   {d:.3} us (the host building the request object too)\n", .{@as(f64, @floatFromInt(median(&with_request))) / 1e6});
    try out.print("  heap allocations per call {d} ({d} in {d} calls)\n", .{ allocations / (rounds * calls_per_round * 2), allocations, rounds * calls_per_round * 2 });
    try out.print("  arena bytes per call      {d}\n", .{heap_bytes});
    try std.Io.File.stdout().writeStreamingAll(io, out.buffered());

    try comparePeers(init, install);
}

fn comparePeers(init: std.process.Init, install: bool) !void {
    const io = init.io;
    const gpa = init.gpa;
    const dir = ".zig-cache/js-bench-peers";
    std.Io.Dir.cwd().createDirPath(io, dir) catch {};
    const script_path = dir ++ "/loop.mjs";
    try std.Io.Dir.cwd().writeFile(io, .{ .sub_path = script_path, .data = peer_loop });
    if (install) {
        const bun = std.Io.Dir.cwd().access(io, dir ++ "/node_modules/@oven/bun-linux-x64/bin/bun", .{});
        const deno = std.Io.Dir.cwd().access(io, dir ++ "/node_modules/@deno/linux-x64-glibc/deno", .{});
        if (bun == error.FileNotFound or deno == error.FileNotFound) {
            _ = run(gpa, io, &.{ "npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, "@oven/bun-linux-x64", "@deno/linux-x64-glibc" }) catch null;
        }
    }
    const peers = [_]struct { name: []const u8, argv: []const []const u8 }{
        .{ .name = "node", .argv = &.{ "node", script_path } },
        .{ .name = "bun", .argv = &.{ dir ++ "/node_modules/@oven/bun-linux-x64/bin/bun", script_path } },
        .{ .name = "deno", .argv = &.{ dir ++ "/node_modules/@deno/linux-x64-glibc/deno", "run", "--quiet", script_path } },
    };
    var out_buf: [1024]u8 = undefined;
    var out: std.Io.Writer = .fixed(&out_buf);
    try out.print("the same loop elsewhere (ns per call, the request built in JavaScript):\n", .{});
    for (peers) |peer| {
        const text = run(gpa, io, peer.argv) catch {
            try out.print("  {s:<5} not found\n", .{peer.name});
            continue;
        };
        defer gpa.free(text);
        const line = std.mem.trim(u8, text, " \n");
        try out.print("  {s:<5} {s} ns\n", .{ peer.name, std.mem.trimEnd(u8, line, " !") });
    }
    try std.Io.File.stdout().writeStreamingAll(io, out.buffered());
}

fn run(gpa: std.mem.Allocator, io: std.Io, argv: []const []const u8) ![]u8 {
    const result = try std.process.run(gpa, io, .{ .argv = argv });
    defer gpa.free(result.stderr);
    errdefer gpa.free(result.stdout);
    switch (result.term) {
        .exited => |code| if (code != 0) return error.Failed,
        else => return error.Failed,
    }
    return result.stdout;
}
