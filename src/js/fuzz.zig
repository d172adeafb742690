//! Seeded fuzzer of the engine: `zig build js-fuzz -- [--seed N] [--iterations N]`.
//!
//! Four kinds of input, in turn: random bytes, random token streams, programs from a small
//! grammar of the language (which must compile), and compiled images mutated at the byte
//! level (with the checksum fixed up most of the time, so that mutations reach the verifier).
//! Whatever compiles or loads is run with small limits. The property: every input ends in a
//! compile error, a load error, a value, an exception or a termination; never a crash (the
//! program is built ReleaseSafe, so any safety check that trips is a crash). The seed is
//! printed first; `--seed` replays a run, and `--print` shows each input before it runs.
const std = @import("std");
const js = @import("js.zig");
const Compiler = js.Compiler;
const Engine = js.Engine;
const image = js.image;

const iterations_default = 20_000;

pub fn main(init: std.process.Init) !void {
    var seed_arg: ?u64 = null;
    var iterations: u64 = iterations_default;
    var print = false;
    var args = init.minimal.args.iterate();
    _ = args.skip();
    while (args.next()) |arg| {
        if (std.mem.eql(u8, arg, "--seed")) {
            seed_arg = std.fmt.parseInt(u64, args.next() orelse "", 10) catch std.process.fatal("js-fuzz: --seed takes a number", .{});
        } else if (std.mem.eql(u8, arg, "--print")) {
            print = true;
        } else if (std.mem.eql(u8, arg, "--iterations")) {
            iterations = std.fmt.parseInt(u64, args.next() orelse "", 10) catch std.process.fatal("js-fuzz: --iterations takes a number", .{});
        } else {
            std.process.fatal("js-fuzz: unknown argument '{s}'; usage: js-fuzz [--seed N] [--iterations N] [--print]", .{arg});
        }
    }
    const seed = seed_arg orelse seed: {
        var bytes: [8]u8 = undefined;
        init.io.random(&bytes);
        break :seed std.mem.readInt(u64, &bytes, .little);
    };
    std.debug.print("js-fuzz: seed={d}\n", .{seed});
    var prng = std.Random.DefaultPrng.init(seed);
    var stats: Stats = .{};
    // One arena, reset between inputs, and smp_allocator rather than page_allocator: a fresh
    // mapping per input made the kernel's time three times the fuzzer's own.
    const gpa = std.heap.smp_allocator;
    var arena_state = std.heap.ArenaAllocator.init(gpa);
    defer arena_state.deinit();
    // A run whose budget is not charged loops for ever; the watchdog turns that into a
    // failure that names the seed and the iteration, instead of a CI job that times out.
    watchdog.seed = seed;
    const dog = try std.Thread.spawn(.{ .stack_size = 64 * 1024 }, watchdog.run, .{});
    dog.detach();
    for (0..iterations) |i| {
        watchdog.iteration.store(i, .monotonic);
        _ = arena_state.reset(.{ .retain_with_limit = 16 << 20 });
        const arena = arena_state.allocator();
        const random = prng.random();
        const source = switch (i % 4) {
            0 => randomBytes(arena, random),
            1 => try randomTokens(arena, random),
            2 => try randomProgram(arena, random),
            else => {
                if (print) std.debug.print("js-fuzz: iteration {d}: a mutated image\n", .{i});
                try fuzzImage(arena, random, &stats);
                continue;
            },
        };
        // With --print, each input goes to stderr before it runs, to find the one that crashes.
        if (print) std.debug.print("js-fuzz: iteration {d}:\n{s}\n", .{ i, source });
        try fuzzSource(arena, source, &stats, i % 4 == 2);
    }
    std.debug.print("js-fuzz: {d} iterations: {d} compiled ({d} of {d} generated programs), {d} compile errors, " ++
        "{d} images mutated ({d} refused, {d} ran), runs ended: {d} values, {d} exceptions, {d} terminations, {d} suspensions\n", .{
        iterations,           stats.compiled,   stats.generated_compiled, stats.generated,
        stats.compile_errors, stats.images,     stats.images_refused,     stats.images_ran,
        stats.values,         stats.exceptions, stats.terminations,       stats.suspensions,
    });
}

/// Every input ends well inside a second (its budget is 200,000 units); one still running
/// after `stall_s` seconds is a hang, and the whole run fails with its seed and iteration.
const watchdog = struct {
    const stall_s = 60;
    var seed: u64 = 0;
    var iteration: std.atomic.Value(u64) = .init(0);

    fn run() void {
        const linux = std.os.linux;
        var seen = iteration.load(.monotonic);
        var still: u32 = 0;
        while (true) {
            const second: linux.timespec = .{ .sec = 1, .nsec = 0 };
            _ = linux.nanosleep(&second, null);
            const now = iteration.load(.monotonic);
            if (now != seen) {
                seen = now;
                still = 0;
                continue;
            }
            still += 1;
            if (still >= stall_s) {
                std.debug.print("js-fuzz: iteration {d} still runs after {d} s: a hang; replay with --seed {d} --iterations {d} --print\n", .{ now, stall_s, seed, now + 1 });
                std.process.exit(1);
            }
        }
    }
};

const Stats = struct {
    compiled: u64 = 0,
    compile_errors: u64 = 0,
    generated: u64 = 0,
    generated_compiled: u64 = 0,
    images: u64 = 0,
    images_refused: u64 = 0,
    images_ran: u64 = 0,
    values: u64 = 0,
    exceptions: u64 = 0,
    terminations: u64 = 0,
    /// Calls that waited on a timer (cancelled at once), or would have with no slot free.
    suspensions: u64 = 0,
};

const limits: Engine.Limits = .{
    .heap_bytes = 256 * 1024,
    .stack_values = 4096,
    .frames = 64,
    .handlers = 64,
    .native_depth = 8,
    .budget = 200_000,
    // The budget alone: a run's outcome must not depend on the machine's speed, so that a
    // seed replays what it found.
    .deadline_ns = 0,
};

fn fuzzSource(arena: std.mem.Allocator, source: []const u8, stats: *Stats, generated: bool) !void {
    if (generated) stats.generated += 1;
    var failure: Compiler.Failure = undefined;
    var module = Engine.Module.fromSource(arena, source, "fuzz.js", &js.builtins.Host.none, &failure) catch |err| switch (err) {
        error.SyntaxError => {
            stats.compile_errors += 1;
            if (generated) {
                std.debug.print("js-fuzz: a generated program does not compile: {d}:{d}: {s}\n{s}\n", .{ failure.line, failure.column, failure.message, source });
                return error.FuzzPropertyFailed;
            }
            return;
        },
        error.InvalidImage => {
            std.debug.print("js-fuzz: the compiler made an image the verifier refuses:\n{s}\n", .{source});
            return error.FuzzPropertyFailed;
        },
        else => return err,
    };
    defer module.deinit();
    stats.compiled += 1;
    if (generated) stats.generated_compiled += 1;
    try runModule(arena, &module, stats);
}

fn runModule(arena: std.mem.Allocator, module: *const Engine.Module, stats: *Stats) !void {
    _ = arena;
    const engine = try Engine.init(std.heap.smp_allocator, module, limits);
    defer engine.deinit(std.heap.smp_allocator);
    count(stats, engine.runModule());
    // Call every export too, with no arguments.
    for (0..module.program.exports.len) |i| {
        engine.beginRequest();
        const f = engine.vm.exports[i];
        switch (engine.call(f, &.{})) {
            .value => stats.values += 1,
            .exception => stats.exceptions += 1,
            .terminated => stats.terminations += 1,
            // A call that waits on a timer: given up at once, as a client that left would be.
            .suspended => |ticket| {
                stats.suspensions += 1;
                engine.cancel(ticket);
            },
            .busy => stats.suspensions += 1,
        }
    }
}

fn count(stats: *Stats, outcome: js.Vm.Outcome) void {
    switch (outcome) {
        .value => stats.values += 1,
        .exception => stats.exceptions += 1,
        .terminated => stats.terminations += 1,
    }
}

fn randomBytes(arena: std.mem.Allocator, random: std.Random) []const u8 {
    const len = random.uintLessThan(usize, 200);
    const bytes = arena.alloc(u8, len) catch return "";
    const alphabet = "(){}[];,.=+-*/%<>!&|?:'\"`${}\\ \n\tabcxyz019_";
    for (bytes) |*b| {
        b.* = if (random.uintLessThan(u8, 4) == 0) random.int(u8) else alphabet[random.uintLessThan(usize, alphabet.len)];
    }
    return bytes;
}

const tokens = [_][]const u8{
    "let",   "const",     "function", "return",   "if",     "else",  "for",     "of",    "in",
    "while", "do",        "break",    "continue", "try",    "catch", "finally", "throw", "switch",
    "case",  "default",   "new",      "typeof",   "delete", "void",  "export",  "null",  "true",
    "false", "undefined", "x",        "y",        "f",      "a",     "Math",    "JSON",  "console",
    "log",   "Map",       "Set",      "Error",    "length", "push",  "map",     "0",     "1",
    "2.5",   "1e3",       "\"s\"",    "'t'",      "`u${",   "}`",    "`v`",     "(",     ")",
    "{",     "}",         "[",        "]",        ";",      ",",     ".",       "...",   "=",
    "+=",    "-=",        "==",       "===",      "!==",    "<",     ">=",      "+",     "-",
    "*",     "/",         "%",        "**",       "&&",     "||",    "??",      "?.",    "?",
    ":",     "=>",        "!",        "~",        "++",     "--",    "&",       "|",     "^",
    "<<",    ">>>",       "\n",
};

fn randomTokens(arena: std.mem.Allocator, random: std.Random) ![]const u8 {
    var out: std.ArrayList(u8) = .empty;
    const n = random.uintLessThan(usize, 60);
    for (0..n) |_| {
        try out.appendSlice(arena, tokens[random.uintLessThan(usize, tokens.len)]);
        try out.append(arena, ' ');
    }
    return out.items;
}

// ---------------------------------------------------------------------------------------
// Programs from a grammar of the language: they must compile.

const Gen = struct {
    random: std.Random,
    out: std.ArrayList(u8) = .empty,
    arena: std.mem.Allocator,
    depth: u32 = 0,
    names: u32 = 0,

    fn put(g: *Gen, text: []const u8) !void {
        try g.out.appendSlice(g.arena, text);
    }

    fn pick(g: *Gen, n: usize) usize {
        return g.random.uintLessThan(usize, n);
    }

    fn variable(g: *Gen) ![]const u8 {
        const vars = [_][]const u8{ "a", "b", "c", "o", "arr", "s", "m" };
        return vars[g.pick(vars.len)];
    }

    fn expression(g: *Gen) anyerror!void {
        g.depth += 1;
        defer g.depth -= 1;
        if (g.depth > 5) return g.atom();
        switch (g.pick(16)) {
            0, 1, 2 => try g.atom(),
            3 => {
                try g.put("(");
                try g.expression();
                const ops = [_][]const u8{ " + ", " - ", " * ", " / ", " % ", " === ", " !== ", " < ", " && ", " || ", " ?? ", " & ", " | ", " << ", " ** ", " == " };
                try g.put(ops[g.pick(ops.len)]);
                try g.expression();
                try g.put(")");
            },
            4 => {
                try g.put("(");
                try g.expression();
                try g.put(" ? ");
                try g.expression();
                try g.put(" : ");
                try g.expression();
                try g.put(")");
            },
            5 => {
                try g.put("[");
                for (0..g.pick(4)) |i| {
                    if (i > 0) try g.put(", ");
                    if (g.pick(5) == 0) try g.put("...");
                    try g.expression();
                }
                try g.put("]");
            },
            6 => {
                try g.put("({ k: ");
                try g.expression();
                try g.put(", [\"q\" + 1]: ");
                try g.expression();
                if (g.pick(3) == 0) try g.put(", ...o");
                try g.put(" })");
            },
            7 => {
                try g.put(try g.variable());
                const members = [_][]const u8{ ".length", "?.k", "[0]", ".k", "?.[1]" };
                try g.put(members[g.pick(members.len)]);
            },
            8 => {
                const calls = [_][]const u8{ "Math.max(", "String(", "JSON.stringify(", "[1, 2].concat(", "Array.from(", "Object.keys(", "f(", "Number(" };
                try g.put(calls[g.pick(calls.len)]);
                try g.expression();
                try g.put(")");
            },
            9 => {
                try g.put("((x, y = 1) => ");
                try g.expression();
                try g.put(")(");
                try g.expression();
                try g.put(")");
            },
            10 => {
                try g.put("`t${");
                try g.expression();
                try g.put("}`");
            },
            11 => {
                const unary = [_][]const u8{ "!", "-", "typeof ", "~", "+", "void " };
                try g.put("(");
                try g.put(unary[g.pick(unary.len)]);
                try g.expression();
                try g.put(")");
            },
            12 => {
                try g.put("(");
                try g.put(try g.variable());
                const assigns = [_][]const u8{ " = ", " += ", " ??= ", " ||= " };
                try g.put(assigns[g.pick(assigns.len)]);
                try g.expression();
                try g.put(")");
            },
            13 => {
                try g.put("arr.map((v, i) => ");
                try g.expression();
                try g.put(")");
            },
            14 => {
                try g.put("new Map([[");
                try g.expression();
                try g.put(", 1]]).get(");
                try g.expression();
                try g.put(")");
            },
            else => {
                try g.put("s.slice(");
                try g.expression();
                try g.put(").padStart(3)");
            },
        }
    }

    fn atom(g: *Gen) !void {
        const atoms = [_][]const u8{ "0", "1", "(-1)", "2.5", "NaN", "null", "undefined", "true", "\"str\"", "'x'", "a", "b", "c", "o", "arr", "s", "1e21", "[]", "{}", "(-0)" };
        try g.put(atoms[g.pick(atoms.len)]);
    }

    fn statement(g: *Gen, in_loop: bool, in_function: bool) anyerror!void {
        g.depth += 1;
        defer g.depth -= 1;
        if (g.depth > 4) {
            try g.put("console.log(");
            try g.expression();
            return g.put(");\n");
        }
        switch (g.pick(13)) {
            0, 1 => {
                try g.put("console.log(");
                try g.expression();
                try g.put(");\n");
            },
            2 => {
                g.names += 1;
                try g.out.print(g.arena, "{s} v{d} = ", .{ if (g.pick(2) == 0) "let" else "const", g.names });
                try g.expression();
                try g.put(";\n");
            },
            3 => {
                try g.put("if (");
                try g.expression();
                try g.put(") {\n");
                try g.statement(in_loop, in_function);
                try g.put("} else {\n");
                try g.statement(in_loop, in_function);
                try g.put("}\n");
            },
            4 => {
                try g.put("for (let i = 0; i < 3; i++) {\n");
                try g.statement(true, in_function);
                try g.put("}\n");
            },
            5 => {
                try g.put("for (const e of [1, \"two\", null]) {\n");
                try g.statement(true, in_function);
                try g.put("}\n");
            },
            6 => {
                try g.put("try {\n");
                try g.statement(in_loop, in_function);
                try g.put("} catch (err) {\n  console.log(String(err));\n}");
                if (g.pick(2) == 0) {
                    try g.put(" finally {\n");
                    try g.statement(in_loop, in_function);
                    try g.put("}");
                }
                try g.put("\n");
            },
            7 => {
                try g.put(try g.variable());
                try g.put(" = ");
                try g.expression();
                try g.put(";\n");
            },
            8 => if (in_loop) try g.put(if (g.pick(2) == 0) "break;\n" else "continue;\n") else try g.put(";\n"),
            9 => if (in_function) {
                try g.put("return ");
                try g.expression();
                try g.put(";\n");
            } else try g.put("throw new Error(\"e\");\n"),
            10 => {
                try g.put("switch (");
                try g.expression();
                try g.put(") {\ncase 1: ");
                try g.statement(in_loop, in_function);
                try g.put("break;\ndefault: ");
                try g.statement(in_loop, in_function);
                try g.put("}\n");
            },
            11 => {
                try g.put("{ const [p, ...q] = arr; const { k = 1, ...r } = o; console.log(p, q, k, r); }\n");
            },
            else => {
                try g.put("while (c < 5) { c++;\n");
                try g.statement(true, in_function);
                try g.put("}\n");
            },
        }
    }
};

fn randomProgram(arena: std.mem.Allocator, random: std.Random) ![]const u8 {
    var g: Gen = .{ .random = random, .arena = arena };
    try g.put("let a = 1, b = \"b\", c = 0, o = { k: 2, n: { m: 3 } }, arr = [1, 2, 3], s = \"hello\", m = new Map();\n");
    try g.put("function f(x, ...rest) {\n");
    for (0..1 + g.pick(3)) |_| try g.statement(false, true);
    try g.put("return x;\n}\n");
    for (0..1 + g.pick(6)) |_| try g.statement(false, false);
    if (g.pick(2) == 0) try g.put("export function e1() { return f(a) }\nexport default function h(r) { return o }\n");
    return g.out.items;
}

// ---------------------------------------------------------------------------------------
// Mutated images.

const corpus = [_][]const u8{
    "let s = 0; for (let i = 0; i < 10; i++) s += i; console.log(s)",
    "function f(a, b = 2, ...r) { try { return a + b } finally { r.push(1) } } console.log(f(1))",
    "const o = { a: [1, 2, { b: 3 }] }; for (const k in o) console.log(k, JSON.stringify(o[k]))",
    "const m = new Map([[1, 'a']]); for (const [k, v] of m) console.log(k, v?.length ?? 0)",
    "let x = 1; const g = () => x++; g(); switch (x) { case 2: console.log('two'); break; default: throw new Error('x') }",
    "export default function h(r) { const { a = 1, ...rest } = r ?? {}; return [a, rest, `t${a}`] }",
};

fn fuzzImage(arena: std.mem.Allocator, random: std.Random, stats: *Stats) !void {
    stats.images += 1;
    var failure: Compiler.Failure = undefined;
    const source = corpus[random.uintLessThan(usize, corpus.len)];
    const bytes = try Engine.compileImage(arena, source, .{}, &failure);
    const mutations = 1 + random.uintLessThan(usize, 8);
    for (0..mutations) |_| {
        const at = random.uintLessThan(usize, bytes.len);
        switch (random.uintLessThan(u8, 4)) {
            0 => bytes[at] ^= @as(u8, 1) << random.int(u3),
            1 => bytes[at] = random.int(u8),
            2 => bytes[at] = if (random.boolean()) 0 else 0xFF,
            else => bytes[at] +%= 1,
        }
    }
    // Most of the time, make the checksum right again so the verifier sees the mutation.
    if (random.uintLessThan(u8, 8) != 0 and bytes.len >= 32) {
        std.mem.writeInt(u32, bytes[20..24], std.hash.Crc32.hash(bytes[32..]), .little);
    }
    var problem: image.Problem = .{};
    var module = Engine.Module.fromImage(arena, bytes, &js.builtins.Host.none, &problem) catch {
        stats.images_refused += 1;
        return;
    };
    defer module.deinit();
    stats.images_ran += 1;
    try runModule(arena, &module, stats);
}
