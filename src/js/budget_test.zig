//! The budget's tests across the library: every builtin whose work grows with its input pays
//! for that work (meter.zig), so that looping on one exhausts a budget as fast as a plain loop
//! does. Each case calls a builtin once on an input of 100,000 units or elements (or 2,000
//! keys) built by the module's top level, and must charge at least a stated share of it.
const std = @import("std");

const Engine = @import("Engine.zig");
const Vm = @import("Vm.zig");
const Compiler = @import("Compiler.zig");
const builtins = @import("builtins.zig");

const inputs =
    \\const N = 100000;
    \\const S = "x".repeat(N);
    \\const T = "x".repeat(N);
    \\const W = "\u0100".repeat(N);
    \\const SP = " ".repeat(N) + "1";
    \\const A = new Array(N).fill(1);
    \\const STRS = [];
    \\for (let i = 0; i < 2000; i++) STRS.push("item" + (i * 7919 % 2000));
    \\const O = {};
    \\for (let i = 0; i < 2000; i++) O["k" + i] = i;
    \\const M = new Map();
    \\for (let i = 0; i < N; i++) { M.set(i, i); M.delete(i); }
    \\const B64 = "QUJD".repeat(N / 4);
    \\const Q = "a=b&".repeat(N / 4);
    \\const P = new URLSearchParams(Q);
    \\const HP = [];
    \\for (let i = 0; i < 2000; i++) HP.push(["x-" + i, "v"]);
    \\export function base() { return 0 }
    \\
;

const Case = struct {
    name: []const u8,
    /// The export's body.
    body: []const u8,
    /// The fewest ticks it must charge beyond `base()`.
    ticks_min: u64,
};

const n = 100_000;

const cases = [_]Case{
    .{ .name = "indexOf", .body = "return S.indexOf('y')", .ticks_min = n / 8 },
    .{ .name = "lastIndexOf", .body = "return S.lastIndexOf('y')", .ticks_min = n },
    .{ .name = "includes", .body = "return S.includes('xy')", .ticks_min = 10 * n },
    .{ .name = "wideIndexOf", .body = "return W.indexOf('y')", .ticks_min = n / 4 },
    .{ .name = "split", .body = "return S.split('y').length", .ticks_min = n / 8 },
    .{ .name = "replace", .body = "return S.replace('y', 'z').length", .ticks_min = n / 8 },
    .{ .name = "startsWith", .body = "return S.startsWith(T)", .ticks_min = n },
    .{ .name = "strictEquals", .body = "return S === T", .ticks_min = n / 8 },
    .{ .name = "lessThan", .body = "return S < T", .ticks_min = n / 8 },
    .{ .name = "trim", .body = "return SP.trim().length", .ticks_min = n },
    .{ .name = "toUpperCase", .body = "return S.toUpperCase().length", .ticks_min = 8 * n },
    .{ .name = "localeCompare", .body = "return S.localeCompare(T)", .ticks_min = 10 * n },
    .{ .name = "repeat", .body = "return 'ab'.repeat(N).length", .ticks_min = n },
    .{ .name = "padStart", .body = "return 'ab'.padStart(N).length", .ticks_min = 2 * n - 4 },
    .{ .name = "concat", .body = "return (S + W).length", .ticks_min = n / 4 },
    .{ .name = "template", .body = "return `${S}${T}${S}`.length", .ticks_min = 3 * n / 8 },
    .{ .name = "parseInt", .body = "return parseInt(SP)", .ticks_min = n },
    .{ .name = "toNumber", .body = "return +SP", .ticks_min = 2 * n },
    .{ .name = "encodeURIComponent", .body = "return encodeURIComponent(S).length", .ticks_min = 3 * n },
    .{ .name = "fromCharCode", .body = "return String.fromCharCode(...A).length", .ticks_min = 2 * n },
    .{ .name = "JSON.parse", .body = "return JSON.parse(SP)", .ticks_min = n },
    .{ .name = "JSON.stringify", .body = "return JSON.stringify(O).length", .ticks_min = 2000 * 24 },
    .{ .name = "Array includes", .body = "return A.includes(2)", .ticks_min = 2 * n },
    .{ .name = "Array indexOf", .body = "return A.indexOf(2)", .ticks_min = 2 * n },
    .{ .name = "Array lastIndexOf", .body = "return A.lastIndexOf(2)", .ticks_min = 2 * n },
    .{ .name = "join", .body = "return A.join('').length", .ticks_min = 3 * n },
    .{ .name = "sort", .body = "return STRS.slice().sort().length", .ticks_min = 2000 * 9 * 16 },
    .{ .name = "sort with a comparator", .body = "return STRS.slice().sort((a, b) => a < b ? -1 : 1).length", .ticks_min = 2000 * 9 * 40 },
    .{ .name = "fill", .body = "return A.slice().fill(0).length", .ticks_min = 2 * n },
    .{ .name = "reverse", .body = "return A.slice().reverse().length", .ticks_min = 2 * n },
    .{ .name = "shift", .body = "const a = A.slice(); a.shift(); return a.length", .ticks_min = 2 * n },
    .{ .name = "Array concat", .body = "return A.concat(A).length", .ticks_min = 2 * n },
    .{ .name = "spread", .body = "return [...A].length", .ticks_min = n },
    .{ .name = "Array.from", .body = "return Array.from(A).length", .ticks_min = n },
    .{ .name = "flat", .body = "return [A, A].flat().length", .ticks_min = 2 * n },
    .{ .name = "map with a builtin", .body = "return A.map(Math.abs).length", .ticks_min = 9 * n },
    .{ .name = "Math.max", .body = "return Math.max(...A)", .ticks_min = 2 * n },
    .{ .name = "new Set", .body = "return new Set(A).size", .ticks_min = n },
    .{ .name = "RegExp test", .body = "return /(x*)*y/.test(S)", .ticks_min = 2 * n },
    .{ .name = "RegExp scan", .body = "return /y/.test(S)", .ticks_min = n / 8 },
    .{ .name = "RegExp replace", .body = "return S.replace(/x/g, 'ab').length", .ticks_min = 2 * n },
    .{ .name = "RegExp split", .body = "return S.split(/(?:)/).length", .ticks_min = 2 * n },
    .{ .name = "RegExp match", .body = "return S.match(/x/g).length", .ticks_min = 2 * n },
    .{ .name = "Object.keys", .body = "return Object.keys(O).length", .ticks_min = 2000 },
    .{ .name = "Object.entries", .body = "return Object.entries(O).length", .ticks_min = 2 * 2000 },
    .{ .name = "Object.assign", .body = "return Object.keys(Object.assign({}, O)).length", .ticks_min = 2 * 2000 },
    .{ .name = "object spread", .body = "return Object.keys({ ...O }).length", .ticks_min = 2 * 2000 },
    .{ .name = "Map with deleted entries", .body = "let k = 0; for (const e of M) k++; return k", .ticks_min = 2 * n },
    .{ .name = "Map forEach", .body = "M.forEach(() => 0); return 0", .ticks_min = n },
    .{ .name = "console.log", .body = "console.log(O); return 0", .ticks_min = 2000 * 8 },
    .{ .name = "toFixed", .body = "return (1.5e20).toFixed(100).length", .ticks_min = 16 * 120 },
    .{ .name = "toString(3)", .body = "return (1.7976931348623157e308).toString(3).length", .ticks_min = 16 * 600 },
    .{ .name = "atob", .body = "return atob(B64).length", .ticks_min = n },
    .{ .name = "btoa", .body = "return btoa(S).length", .ticks_min = n },
    .{ .name = "URLSearchParams parse", .body = "return new URLSearchParams(Q).size", .ticks_min = n },
    .{ .name = "URLSearchParams toString", .body = "return P.toString().length", .ticks_min = n },
    .{ .name = "Headers from pairs", .body = "return new Headers(HP).has('x-1')", .ticks_min = 2 * 2000 },
    .{ .name = "structuredClone", .body = "return structuredClone(A).length", .ticks_min = n },
    // 2,000 integer keys inserted from the highest down: each moves the ones before it.
    .{ .name = "integer keys", .body = "const o = {}; for (let i = 2000; i > 0; i--) o[i] = i; return 0", .ticks_min = 2000 * 1999 / 2 },
};

fn moduleSource(allocator: std.mem.Allocator) ![]u8 {
    var text: std.Io.Writer.Allocating = .init(allocator);
    errdefer text.deinit();
    try text.writer.writeAll(inputs);
    for (cases, 0..) |case, i| try text.writer.print("export function c{d}() {{ {s} }}\n", .{ i, case.body });
    return text.toOwnedSlice();
}

fn ticksOf(engine: *Engine, name: []const u8) !u64 {
    engine.beginRequest();
    const outcome = engine.call(engine.exportValue(name).?, &.{});
    if (outcome != .value) {
        std.debug.print("{s}: {s}\n", .{ name, @tagName(outcome) });
        return error.TestUnexpectedResult;
    }
    return engine.vm.ticksUsed();
}

test "budget: every builtin that scans, copies or sorts pays for its input" {
    const gpa = std.testing.allocator;
    const source = try moduleSource(gpa);
    defer gpa.free(source);
    var failure: Compiler.Failure = undefined;
    var module = Engine.Module.fromSource(gpa, source, "budget.js", &builtins.Host.none, &failure) catch |err| {
        std.debug.print("budget.js:{d}:{d}: {s}\n", .{ failure.line, failure.column, failure.message });
        return err;
    };
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{ .heap_bytes = 32 << 20, .budget = 1 << 40, .deadline_ns = 0 });
    defer engine.deinit(gpa);
    try std.testing.expect(engine.runModule() == .value);
    const base = try ticksOf(engine, "base");
    try std.testing.expect(base < 100);
    var failed: usize = 0;
    for (cases, 0..) |case, i| {
        var name_buf: [8]u8 = undefined;
        const ticks = try ticksOf(engine, try std.fmt.bufPrint(&name_buf, "c{d}", .{i})) - base;
        if (ticks < case.ticks_min) {
            std.debug.print("{s} charged {d} ticks, fewer than {d}\n", .{ case.name, ticks, case.ticks_min });
            failed += 1;
        }
    }
    try std.testing.expectEqual(@as(usize, 0), failed);
}

test "budget: a loop on a builtin exhausts a small budget after a few calls" {
    // 62,500 ticks a search: a budget of a million allows 16 of them. Each iteration prints a
    // line, so the output counts the calls made before the run was stopped.
    const gpa = std.testing.allocator;
    const source =
        \\const S = "x".repeat(500000);
        \\export function spin() { let k = 0; for (;;) { k += S.indexOf("y"); console.log(k); } }
    ;
    var failure: Compiler.Failure = undefined;
    var module = try Engine.Module.fromSource(gpa, source, "loop.js", &builtins.Host.none, &failure);
    defer module.deinit();
    const engine = try Engine.init(gpa, &module, .{ .heap_bytes = 4 << 20, .budget = 1_000_000, .deadline_ns = 0 });
    defer engine.deinit(gpa);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    engine.setOutput(&out.writer, &out.writer);
    engine.vm.limits.budget = 1 << 40; // The top level's "x".repeat(500000) is paid for too.
    try std.testing.expect(engine.runModule() == .value);
    engine.vm.limits.budget = 1_000_000;
    engine.beginRequest();
    const outcome = engine.call(engine.exportValue("spin").?, &.{});
    try std.testing.expectEqual(Vm.Termination.budget, outcome.terminated);
    const lines = std.mem.count(u8, out.written(), "\n");
    try std.testing.expect(lines >= 10 and lines <= 16);
}
