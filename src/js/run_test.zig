//! End-to-end tests: source in, console output out.
const std = @import("std");
const js = @import("js.zig");

fn expectOutput(source: []const u8, expected: []const u8) !void {
    const gpa = std.testing.allocator;
    var arena_state = std.heap.ArenaAllocator.init(gpa);
    defer arena_state.deinit();
    var failure: js.Compiler.Failure = undefined;
    const program = js.Compiler.compile(arena_state.allocator(), source, .{}, &failure) catch |err| {
        std.debug.print("compile error {d}:{d}: {s}\n", .{ failure.line, failure.column, failure.message });
        return err;
    };
    const region = try gpa.alignedAlloc(u8, .@"16", 1 << 20);
    defer gpa.free(region);
    var heap = js.Heap.init(region);
    var out_buf: [16 * 1024]u8 = undefined;
    var out: std.Io.Writer = .fixed(&out_buf);
    var vm = try js.Vm.init(gpa, &heap, .{ .stack_values = 4096, .frames = 256 }, &out, &out);
    defer vm.deinit(gpa);
    try vm.load(gpa, &program, &js.builtins.Host.none);
    const outcome = vm.runMain();
    switch (outcome) {
        .value => {},
        .exception => |e| {
            std.debug.print("uncaught: {any}\n", .{e});
            return error.Uncaught;
        },
        .terminated => return error.Terminated,
    }
    try std.testing.expectEqualStrings(expected, out.buffered());
}

test "run: console.log of primitives" {
    try expectOutput("console.log(1, 'a', true, null, undefined, 0.1 + 0.2, -0)", "1 a true null undefined 0.30000000000000004 -0\n");
}

test "inspect: string escapes pick their quotes as node does" {
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = js.Heap.init(&region);
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    const gpa = arena_state.allocator();
    const cases = .{
        .{ "abc", "'abc'" },
        .{ "it's", "\"it's\"" },
        .{ "it's \"x\"", "`it's \"x\"`" },
        .{ "a\nb\\", "'a\\nb\\\\'" },
        .{ "\x1b", "'\\x1B'" },
    };
    inline for (cases) |case| {
        var out: std.ArrayList(u8) = .empty;
        const s = try js.string.fromUtf8(&heap, case[0]);
        try js.inspect.strEscape(gpa, &out, s, 0, s.len);
        try std.testing.expectEqualStrings(case[1], out.items);
    }
}

test "run: docs/JS.md's examples print what the document says" {
    // Read at run time (tests run from the project root); skipped when run elsewhere.
    const gpa = std.testing.allocator;
    const linux = std.os.linux;
    const rc = linux.open("docs/JS.md", .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    if (linux.errno(rc) != .SUCCESS) return error.SkipZigTest;
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    var doc: std.ArrayList(u8) = .empty;
    defer doc.deinit(gpa);
    var buf: [4096]u8 = undefined;
    while (true) {
        const n = linux.read(fd, &buf, buf.len);
        if (linux.errno(n) != .SUCCESS or n == 0) break;
        try doc.appendSlice(gpa, buf[0..n]);
    }
    var rest = doc.items;
    var examples: usize = 0;
    while (std.mem.indexOf(u8, rest, "```js\n")) |start| {
        rest = rest[start + 6 ..];
        const code_end = std.mem.indexOf(u8, rest, "```\n").?;
        const code = rest[0..code_end];
        rest = rest[code_end + 4 ..];
        const marker = "\n```text\n";
        if (!std.mem.startsWith(u8, rest, marker)) continue;
        rest = rest[marker.len..];
        const text_end = std.mem.indexOf(u8, rest, "```\n").?;
        try expectOutput(code, rest[0..text_end]);
        rest = rest[text_end..];
        examples += 1;
    }
    try std.testing.expect(examples >= 2);
}

// Semantics whose expected output was taken from node 20.

test "run: closures in loops capture their own iteration" {
    try expectOutput(
        \\const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); for (const x of ["a", "b"]) fs.push(() => x); console.log(fs.map(f => f()));
    ,
        \\[ 0, 1, 2, 'a', 'b' ]
        \\
    );
}

test "run: var is function scoped, hoisted as undefined, and one binding for a loop's closures" {
    try expectOutput(
        \\console.log(a); var a = 1;
        \\function f(x) { if (x) { var y = x; } for (var i = 0; i < 2; i++) {} return [y, i]; }
        \\const fs = []; for (var j = 0; j < 3; j++) fs.push(() => j);
        \\try { throw 1; } catch (e) { var e = 2; }
        \\function extra(a) { var unset; var captured; return [unset, (() => captured)()]; }
        \\console.log(f(5), f(0), fs.map((g) => g()), e, typeof e, extra(1, 2, 3));
    ,
        \\undefined
        \\[ 5, 2 ] [ undefined, 2 ] [ 3, 3, 3 ] undefined undefined [ undefined, undefined ]
        \\
    );
}

fn expectCompileError(source: []const u8, line: u32, column: u32, message: []const u8) !void {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    var failure: js.Compiler.Failure = undefined;
    _ = js.Compiler.compile(arena_state.allocator(), source, .{}, &failure) catch |err| {
        try std.testing.expectEqual(error.SyntaxError, err);
        try std.testing.expectEqualStrings(message, failure.message);
        try std.testing.expectEqual(line, failure.line);
        try std.testing.expectEqual(column, failure.column);
        return;
    };
    return error.TestUnexpectedSuccess;
}

test "run: var may repeat a var, a parameter or a function, never a lexical binding (positions from node 20)" {
    try expectOutput("var x = 1; var x; function f(p) { var p; function p() {} return typeof p; } console.log(x, f(1));", "1 function\n");
    try expectCompileError("let x; var x;", 1, 12, "Identifier 'x' has already been declared");
    try expectCompileError("var x; let x;", 1, 12, "Identifier 'x' has already been declared");
    try expectCompileError("{ let x; { var x; } }", 1, 16, "Identifier 'x' has already been declared");
    try expectCompileError("{ function f() {} var f; }", 1, 23, "Identifier 'f' has already been declared");
    try expectCompileError("try {} catch ([e]) { var e; }", 1, 26, "Identifier 'e' has already been declared");
    try expectCompileError("switch (1) { case 1: let s; case 2: var s; }", 1, 41, "Identifier 's' has already been declared");
}

test "run: finally runs on every way out of a try" {
    try expectOutput(
        \\function f(n) { const log = []; for (let i = 0; i < n; i++) { try { if (i === 1) continue; if (i === 3) break; if (i === 2) { try { throw new Error("e" + i) } finally { log.push("inner") } } log.push(i) } catch (e) { log.push(e.message) } finally { log.push("f" + i) } } return log } function g() { try { return "try" } finally { console.log("cleanup") } } function h() { try { throw 1 } finally { return "finally wins" } } console.log(f(5), g(), h());
    ,
        \\cleanup
        \\[ 0, 'f0', 'f1', 'inner', 'e2', 'f2', 'f3' ] try finally wins
        \\
    );
}

test "run: an exception closes the iterator of the for...of or array pattern it leaves, once, and goes on (output from node 20)" {
    try expectOutput(
        \\const log = []; function it(name, items) { let i = 0; return { [Symbol.iterator]() { return this }, next() { if (items[i] === "bad") throw new Error(name + " next"); return { value: items[i], done: i++ >= items.length } }, return() { log.push(name + " return"); throw new Error("ignored") } } }
        \\function f(body) { try { body() } catch (e) { log.push(e.message) } }
        \\f(() => { for (const x of it("a", [1, 2])) for (const y of it("b", [3])) throw new Error("body " + x + y) });
        \\f(() => { for (const x of it("c", [1, "bad"])) log.push(x) });
        \\f(() => { const [p, q = (() => { throw new Error("default") })()] = it("d", [1, undefined]) });
        \\f(() => { let o = null; [o.x] = it("e", [1]) });
        \\f(() => { for (const x of [1, 2]) { try { throw new Error("inner " + x) } catch (e) { log.push(e.message) } } });
        \\console.log(log.join("; "));
    ,
        \\b return; a return; body 13; 1; c next; d return; default; e return; Cannot set properties of null (setting 'x'); inner 1; inner 2
        \\
    );
}

test "run: the temporal dead zone and const assignment throw as in V8" {
    try expectOutput(
        \\"use strict"; try { x; let x = 1 } catch (e) { console.log(e.name, e.message) } try { const c = 1; c = 2 } catch (e) { console.log(e.name, e.message) } try { (() => y)(); let y } catch (e) { console.log(e.message) } try { undeclared = 1 } catch (e) { console.log(e.message) }
    ,
        \\ReferenceError Cannot access 'x' before initialization
        \\TypeError Assignment to constant variable.
        \\Cannot access 'y' before initialization
        \\undeclared is not defined
        \\
    );
}

test "run: property order puts integer keys first" {
    try expectOutput(
        \\const o = { b: 1, 2: "two", a: 2, 1: "one", "-1": "neg", "01": "lead" }; o[0] = "zero"; console.log(Object.keys(o), JSON.stringify(o));
    ,
        \\[
        \\  '0',  '1', '2',
        \\  'b',  'a', '-1',
        \\  '01'
        \\] {"0":"zero","1":"one","2":"two","b":1,"a":2,"-1":"neg","01":"lead"}
        \\
    );
}

test "run: sort is stable and orders strings by code units" {
    try expectOutput(
        \\const people = [["ann", 3], ["bob", 1], ["cid", 3], ["dan", 1], ["eve", 2]]; console.log(people.sort((a, b) => a[1] - b[1]).map(p => p[0]).join(" "), ["b", "B", "a", "é", "Z", "10", "9"].sort(), [10, 9, 1].sort());
    ,
        \\bob dan eve ann cid [
        \\  '10', '9', 'B',
        \\  'Z',  'a', 'b',
        \\  'é'
        \\] [ 1, 10, 9 ]
        \\
    );
}

test "run: strings index UTF-16 code units" {
    try expectOutput(
        \\const s = "aé😀"; console.log(s.length, s[2], s.charCodeAt(2), s.codePointAt(2), [...s].length, s.split(""), JSON.stringify(s.slice(0, 3)), encodeURIComponent(s));
    ,
        \\4 � 55357 128512 3 [ 'a', 'é', '\ud83d', '\ude00' ] "aé\ud83d" a%C3%A9%F0%9F%98%80
        \\
    );
}

test "run: destructuring, spread and defaults" {
    try expectOutput(
        \\const { a, b: { c = 5 } = {}, ...rest } = { a: 1, d: 4, e: 5 }; const [x, , y = 3, ...zs] = "hello"; function f(p, { q = 2 } = {}, ...more) { return [p, q, more] } console.log(a, c, rest, x, y, zs, f(1), f(1, { q: 9 }, 7, 8), Math.max(...[1, 5, 3]), [..."ab", ...new Set([1, 1])]);
    ,
        \\1 5 { d: 4, e: 5 } h l [ 'l', 'o' ] [ 1, 2, [] ] [ 1, 9, [ 7, 8 ] ] 5 [ 'a', 'b', 1 ]
        \\
    );
}

test "run: number formatting matches Number::toString" {
    try expectOutput(
        \\console.log(0.1 + 0.2, 1e21, 1e20, 1e-7, 1e-6, -0, [-0], 123456789.123456789, 2 ** 53 + 1, 1 / 3, 5e-324, (0.000001234).toString(), (1234.5678).toFixed(2), (1e21).toFixed(2), (255).toString(2));
    ,
        \\0.30000000000000004 1e+21 100000000000000000000 1e-7 0.000001 -0 [ -0 ] 123456789.12345679 9007199254740992 0.3333333333333333 5e-324 0.000001234 1234.57 1e+21 11111111
        \\
    );
}

test "run: optional chaining and nullish coalescing short-circuit" {
    try expectOutput(
        \\const o = { a: { b: null, f() { return "called" } } }; console.log(o?.a?.b?.c, o.x?.y.z, o.a.f?.(), o.a.g?.(), o.a.b ?? "default", 0 ?? 1, "" || "empty", null?.[0]);
    ,
        \\undefined undefined called undefined default 0 empty undefined
        \\
    );
}

test "run: Map and Set keep insertion order through mutation" {
    try expectOutput(
        \\const m = new Map([["x", 1]]); m.set("y", 2).set("x", 3); m.delete("y"); m.set("y", 4); const seen = []; for (const [k, v] of m) { seen.push(k + v); if (k === "x") m.set("z", 5) } const s = new Set([3, 1, 3, 2]); console.log(seen, [...s], m.size, s.has(2), m);
    ,
        \\[ 'x3', 'y4', 'z5' ] [ 3, 1, 2 ] 3 true Map(3) { 'x' => 3, 'y' => 4, 'z' => 5 }
        \\
    );
}

test "run: String(f) is the function's source text, as in JavaScript (output from node 20)" {
    try expectOutput(
        \\const f = (a, b) => a + b;
        \\function g(x) {
        \\  return x * 2; // é
        \\}
        \\console.log(String(f), `${g}`, "" + ((y) => y));
        \\console.log(String(Math.max), String(console.log), [f, f].join(";"));
    ,
        \\(a, b) => a + b function g(x) {
        \\  return x * 2; // é
        \\} (y) => y
        \\function max() { [native code] } function () { [native code] } (a, b) => a + b;(a, b) => a + b
        \\
    );
}

test "run: console.log's %d, %i, %f and %s convert as node's util.format (output from node 20)" {
    try expectOutput(
        \\console.log("%d %i %f|", [], [], []);
        \\console.log("%d %i %f|", [5], [" 7 "], ["1.5x"]);
        \\console.log("%d %i %f|", true, true, null);
        \\console.log("%d %i %f|", 1e21, 5e-7, -0);
        \\console.log("%s|%s|%s", { toString: () => "custom" }, (x) => x, { a: 1 });
    ,
        \\0 NaN NaN|
        \\5 7 1.5|
        \\1 NaN NaN|
        \\1e+21 5 0|
        \\custom|(x) => x|{ a: 1 }
        \\
    );
}

test "run: builtins name a bad callback as V8 does, and builtin objects convert and answer `in` (output from node 20)" {
    try expectOutput(
        \\"use strict";
        \\const t = (f) => { try { return f(); } catch (e) { return e.message; } };
        \\console.log(t(() => [1].map("s")), t(() => [1].map([])), t(() => [1].map(new Map())), t(() => [1].map(Math)));
        \\console.log(t(() => [1].map(new Error("boom"))), t(() => new Set([1]).forEach("s")), t(() => new Map([[1, 1]]).forEach([])));
        \\console.log(t(() => ({}) instanceof ((x) => x)), ({}) instanceof function f() {}, "max" in Math, "a" in JSON, "name" in Math.max);
        \\console.log(Math + 1, `${JSON}`, Math == "[object Math]", Math.max + "");
    ,
        \\s is not a function [object Array] is not a function #<Map> is not a function #<Object> is not a function
        \\Error: boom is not a function string "s" is not a function object is not a function
        \\Function has non-object prototype 'undefined' in instanceof check false true false true
        \\[object Math]1 [object JSON] true function max() { [native code] }
        \\
    );
}
