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
    var out_buf: [4096]u8 = undefined;
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
