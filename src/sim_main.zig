//! `zig build sim`: the deterministic simulator of the data plane (docs/ARCHITECTURE.md,
//! "Tests").
//!
//!   zig build sim -- --seed N [--ticks N]       one seed, its options printed first
//!   zig build sim -- --seeds N [--first N] [--ticks N]
//!                                               N seeds from `first` (random unless given)
//!
//! A failure (a broken invariant, a safety panic, a fault) prints the seed and the command
//! that replays it, then the panic and its trace. Same seed, same run: byte for byte.
const std = @import("std");
const builtin = @import("builtin");
const linux = std.os.linux;
const posix = std.posix;

const log = @import("stdx/log.zig");
const Simulator = @import("sim/Simulator.zig");
const Options = @import("sim/Options.zig");

pub const panic = std.debug.FullPanic(panicWithSeed);

const ticks_default = 2_000;

/// The seed running now, for the panic and fault handlers.
var current_seed: ?u64 = null;
var current_ticks: u64 = ticks_default;

pub fn main(init: std.process.Init) !void {
    comptime std.debug.assert(std.debug.runtime_safety); // Its assertions are the point.
    var seed: ?u64 = null;
    var seeds: ?u64 = null;
    var first: ?u64 = null;
    var ticks: u64 = ticks_default;
    var verbose = false;
    var tracing = false;
    var args = init.minimal.args.iterate();
    _ = args.skip();
    while (args.next()) |arg| {
        if (std.mem.eql(u8, arg, "--seed")) {
            seed = parseArg(args.next());
        } else if (std.mem.eql(u8, arg, "--seeds")) {
            seeds = parseArg(args.next());
        } else if (std.mem.eql(u8, arg, "--first")) {
            first = parseArg(args.next());
        } else if (std.mem.eql(u8, arg, "--ticks")) {
            ticks = parseArg(args.next());
        } else if (std.mem.eql(u8, arg, "--verbose")) {
            verbose = true;
        } else if (std.mem.eql(u8, arg, "--trace")) {
            tracing = true;
        } else {
            std.process.fatal("sim: unknown argument '{s}'; usage: sim [--seed N | --seeds N [--first N]] [--ticks N]", .{arg});
        }
    }
    current_ticks = ticks;
    // The proxy's warnings (502s, ejections) are the simulation's normal life.
    log.setLevel(.@"error");
    attachFaultHandler();

    const allocator = std.heap.page_allocator;
    const world = try Simulator.create(allocator);
    defer world.destroy(allocator);
    world.tracing = tracing;
    world.sim.tracing = tracing;
    const start = std.Io.Clock.awake.now(init.io);

    var total: Simulator.Summary = .{};
    if (seed) |one| {
        const options = Options.generate(one, ticks);
        std.debug.print("sim: seed={d} ticks={d}\n", .{ one, ticks });
        printOptions(&options);
        current_seed = one;
        total = world.run(one, ticks);
        current_seed = null;
    } else {
        const count = seeds orelse 1;
        const base = first orelse base: {
            var bytes: [8]u8 = undefined;
            init.io.random(&bytes);
            break :base std.mem.readInt(u64, &bytes, .little) >> 16;
        };
        std.debug.print("sim: seeds {d}..{d} ticks={d}\n", .{ base, base + count - 1, ticks });
        for (0..count) |i| {
            current_seed = base + i;
            const summary = world.run(base + i, ticks);
            if (verbose) std.debug.print("sim: seed {d}: {d} requests, {d} steps\n", .{ base + i, summary.requests, summary.steps });
            total.add(&summary);
        }
        current_seed = null;
    }
    const elapsed = start.durationTo(std.Io.Clock.awake.now(init.io));
    printSummary(&total, seeds orelse 1, @intCast(@divTrunc(elapsed.nanoseconds, std.time.ns_per_ms)));
}

fn parseArg(text: ?[]const u8) u64 {
    const t = text orelse std.process.fatal("sim: missing number after flag", .{});
    return std.fmt.parseInt(u64, t, 10) catch std.process.fatal("sim: '{s}' is not a number", .{t});
}

fn printOptions(options: *const Options) void {
    inline for (@typeInfo(Options).@"struct".field_names) |name| {
        const value = @field(options, name);
        if (comptime std.mem.eql(u8, name, "sim")) {
            inline for (@typeInfo(@TypeOf(value)).@"struct".field_names) |fault| {
                std.debug.print("  sim.{s}={d}\n", .{ fault, @field(value, fault) });
            }
        } else {
            std.debug.print("  {s}={any}\n", .{ name, value });
        }
    }
}

fn printSummary(total: *const Simulator.Summary, seeds: u64, elapsed_ms: u64) void {
    std.debug.print("sim: {d} seeds passed in {d} ms ({d} clean): {d} steps, {d} s simulated\n", .{
        seeds, elapsed_ms, total.clean, total.steps, total.simulated_ns / std.time.ns_per_s,
    });
    std.debug.print("sim: traffic: {d} clients, {d} requests, {d} answered, {d} sent to a backend more " ++
        "than once ({d} not ordered), {d} access log lines checked\n", .{
        total.clients,           total.requests,         total.answered, total.resent,
        total.resends_unordered, total.access_log_lines,
    });
    std.debug.print("sim: handler route: {d} answered by the handler, {d} by a backend after Response.proxy, " ++
        "{d} 100 Continue sent; {d} responses gzipped ({d} close-delimited ones cut by a backend)\n", .{
        total.handler_answered, total.handler_proxied, total.continues, total.gzipped, total.gzipped_cut,
    });
    std.debug.print("sim: HTTP/2: {d} clients, {d} streams, {d} reset by their client, {d} reset by sluice, " ++
        "{d} refused (never seen by a backend), {d} GOAWAYs received, {d} close-delimited bodies cut\n", .{
        total.http2_clients,       total.http2_streams, total.http2_client_resets,
        total.http2_sluice_resets, total.http2_refused, total.http2_goaways,
        total.http2_cut,
    });
    std.debug.print("sim: HTTP/2 backends: {d} connections, {d} streams, {d} refused (REFUSED_STREAM or above a " ++
        "GOAWAY), {d} GOAWAYs sent, {d} streams reset by the backend, {d} responses taken (WINDOW_UPDATE)\n", .{
        total.http2_backend_conns,   total.http2_backend_streams, total.http2_backend_refused,
        total.http2_backend_goaways, total.http2_backend_resets,  total.http2_backend_taken,
    });
    std.debug.print("sim: events: {d} reloads ({d} refused, {d} changing only members), {d} health flips, {d} backend flips\n", .{
        total.reloads, total.reloads_refused, total.member_reloads, total.health_flips, total.backend_flips,
    });
    std.debug.print("sim: resolution changes (members in place, no reload): {d} ({d} to no member, {d} put off until they fit)\n", .{
        total.resolution_changes, total.resolution_changes_to_none, total.resolution_changes_deferred,
    });
    std.debug.print("sim: races: clean seeds lost {d} requests to a reset on close (bytes sluice had " ++
        "not read; RFC 9112 9.6), {d} unsolicited backend bytes relayed as an answer\n", .{
        total.clean_lost_to_reset, total.unsolicited_relayed,
    });
    const s = &total.sim;
    std.debug.print("sim: kernel: {d} completions, {d} short reads, {d} short writes, {d} cancels " ++
        "({d} late, {d} lost the race), {d} connects, {d} resets on close, {d} sockets refused, " ++
        "{d} clock jumps, {d} splices\n", .{
        s.completions,       s.short_reads, s.short_writes,    s.cancels,        s.cancels_late,
        s.cancels_lost_race, s.connects,    s.resets_on_close, s.sockets_failed, s.clock_jumps,
        s.splices,
    });
}

fn printSeed() void {
    const seed = current_seed orelse return;
    std.debug.print("\nsim: FAILED at seed {d}; replay: zig build sim -- --seed {d} --ticks {d}\n", .{ seed, seed, current_ticks });
    printOptions(&Options.generate(seed, current_ticks));
}

fn panicWithSeed(message: []const u8, first_trace_address: ?usize) noreturn {
    printSeed();
    std.debug.defaultPanic(message, first_trace_address);
}

var previous_fault_action: posix.Sigaction = undefined;

/// A fault (a use after free of a quarantined generation, say) prints the seed too, then goes
/// to the standard handler for its trace.
fn attachFaultHandler() void {
    const action: posix.Sigaction = .{
        .handler = .{ .sigaction = handleFault },
        .mask = posix.sigemptyset(),
        .flags = posix.SA.SIGINFO | posix.SA.RESETHAND,
    };
    posix.sigaction(.SEGV, &action, &previous_fault_action);
    posix.sigaction(.BUS, &action, null);
}

fn handleFault(sig: posix.SIG, info: *const posix.siginfo_t, context: ?*anyopaque) callconv(.c) void {
    printSeed();
    if (previous_fault_action.handler.sigaction) |previous| {
        if (previous_fault_action.flags & posix.SA.SIGINFO != 0) return previous(sig, info, context);
    }
}
