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
