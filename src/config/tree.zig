//! The document tree both config formats parse into, so one mapper turns either into a
//! `Config`. The parsers only check syntax; every node and field name remembers its
//! `Position`, because every later complaint (unknown key, bad duration, wrong type) must name
//! `file:line:column`. Everything a parse returns lives in the caller's arena: drop the arena
//! and the tree, its strings and the diagnostic message go with it.
const std = @import("std");
const assert = std.debug.assert;

/// The nesting both parsers accept: 64 levels of objects and arrays. A real config nests four
/// or five deep; the bound keeps recursion, and so the stack, small whatever the file says.
pub const depth_max: u32 = 64;

/// Larger files are refused before parsing; the loader should read the file with this same
/// limit. A real config is a few KiB. A parse takes about 18 bytes of arena per source byte
/// (measured on a dense 12 MB file in each format: std's token and node arrays for ZON, the
/// growth of field lists for JSON), so the arena's budget for one parse is about 20 MiB.
pub const source_bytes_max: u32 = 1024 * 1024;

comptime {
    assert(depth_max >= 8);
    assert(source_bytes_max < std.math.maxInt(u32));
}

/// What both parsers say about the same mistake, so the two formats word it the same way.
pub const messages = struct {
    pub const empty = "the file is empty";
    pub const too_large = std.fmt.comptimePrint(
        "the file is larger than {d} KiB",
        .{source_bytes_max / 1024},
    );
    pub const too_deep = std.fmt.comptimePrint(
        "nesting is deeper than {d} levels",
        .{depth_max},
    );
    pub const float = "floats are not supported: write durations and sizes as strings " ++
        "such as \"1500ms\" or \"16KiB\"";
    pub const integer_range = "integer does not fit in 64 bits";
};

/// 1-based; `column` counts bytes from the start of the line, so a tab or a multi-byte
/// UTF-8 character each advance it by their byte length.
pub const Position = struct { line: u32, column: u32 };

pub const Node = struct {
    /// The first byte of the value as written: `"`, `{`, `[`, `.{`, the `.` of `.name`, the
    /// `-` of a negative integer.
    position: Position,
    value: Value,
};

pub const Value = union(enum) {
    null,
    bool: bool,
    /// Integers as written, sign allowed. Both parsers refuse floats: sluice has no fractional
    /// setting, and durations and sizes are strings such as "1500ms" or "16KiB".
    integer: i64,
    /// Unescaped, in the arena.
    string: []const u8,
    /// ZON `.{ .a = 1 }`, JSON `{"a": 1}`: fields in source order, duplicates kept so the
    /// mapper can report them. ZON's empty `.{}` is an empty object, because the syntax cannot
    /// tell an empty struct from an empty tuple: the mapper must accept an empty object where
    /// it expects an array, and read it as an empty array.
    object: []const Field,
    /// ZON `.{ 1, 2 }`, JSON `[1, 2]`.
    array: []const Node,
    /// ZON `.round_robin`, without the dot. JSON has none, so the mapper accepts a string or
    /// an enum literal wherever an enum is expected.
    enum_literal: []const u8,
};

pub const Field = struct {
    /// Unescaped (`.@"a b"` in ZON, `"a\u0020b"` in JSON), in the arena.
    name: []const u8,
    /// The `.` of `.name` in ZON, the opening `"` of the key in JSON.
    name_position: Position,
    node: Node,
};

/// A syntax error: where, and what was expected. `message` is static text or lives in the
/// arena passed to `parse`.
pub const Diagnostic = struct {
    position: Position,
    message: []const u8,

    pub const empty: Diagnostic = .{ .position = .{ .line = 1, .column = 1 }, .message = "" };
};

/// `Syntax` means `Diagnostic` was filled; `OutOfMemory` means the arena ran out.
pub const ParseError = error{ Syntax, OutOfMemory };

/// Turns byte offsets into positions in one forward pass, as long as offsets arrive in
/// order, which both parsers' walks guarantee for their nodes. An offset behind the last one
/// restarts from the top, so any order is correct and in-order is linear.
pub const Locator = struct {
    source: []const u8,
    offset: usize,
    line: u32,
    line_start: usize,

    pub fn init(source: []const u8) Locator {
        assert(source.len <= source_bytes_max);
        return .{ .source = source, .offset = 0, .line = 1, .line_start = 0 };
    }

    pub fn position(locator: *Locator, byte_offset: usize) Position {
        assert(byte_offset <= locator.source.len);
        if (byte_offset < locator.offset) locator.* = .init(locator.source);

        const before = locator.source[0..byte_offset];
        var cursor = locator.offset;
        while (std.mem.findScalarPos(u8, before, cursor, '\n')) |newline| {
            locator.line += 1;
            locator.line_start = newline + 1;
            cursor = newline + 1;
        }
        locator.offset = byte_offset;
        assert(locator.line_start <= byte_offset);
        return .{ .line = locator.line, .column = @intCast(byte_offset - locator.line_start + 1) };
    }
};

/// The position of `byte_offset` (which may be `source.len`, the end of the file).
pub fn positionOf(source: []const u8, byte_offset: usize) Position {
    var locator: Locator = .init(source);
    return locator.position(byte_offset);
}

/// Fills `diagnostic` and returns the error to propagate, so a parser fails in one line.
pub fn fail(diagnostic: *Diagnostic, position: Position, message: []const u8) ParseError {
    assert(position.line >= 1 and position.column >= 1);
    assert(message.len > 0);
    diagnostic.* = .{ .position = position, .message = message };
    return error.Syntax;
}

/// A test helper: the trees are equal ignoring positions, with an enum literal equal to the
/// string of its name, so the same document written in ZON and in JSON compares equal. On a
/// difference it prints the path to it, such as `.pools.app.backends[1].address`.
pub fn expectEqualTrees(expected: Node, actual: Node) !void {
    var path: std.ArrayList(u8) = .empty;
    defer path.deinit(std.testing.allocator);
    if (try differs(&path, expected.value, actual.value)) {
        std.debug.print("trees differ at '{s}'\n", .{path.items});
        return error.TestExpectedEqual;
    }
}

/// Whether the values differ; if so `path` is left naming where.
fn differs(path: *std.ArrayList(u8), expected: Value, actual: Value) error{OutOfMemory}!bool {
    if (textOf(expected)) |expected_text| {
        const actual_text = textOf(actual) orelse return true;
        return !std.mem.eql(u8, expected_text, actual_text);
    }
    if (std.meta.activeTag(expected) != std.meta.activeTag(actual)) return true;
    switch (expected) {
        .null => return false,
        .bool => |b| return b != actual.bool,
        .integer => |i| return i != actual.integer,
        .string, .enum_literal => unreachable, // Compared as text above.
        .object => |fields| {
            if (fields.len != actual.object.len) return true;
            const path_len = path.items.len;
            for (fields, actual.object) |e, a| {
                path.shrinkRetainingCapacity(path_len);
                try path.print(std.testing.allocator, ".{s}", .{e.name});
                if (!std.mem.eql(u8, e.name, a.name)) return true;
                if (try differs(path, e.node.value, a.node.value)) return true;
            }
            path.shrinkRetainingCapacity(path_len);
            return false;
        },
        .array => |items| {
            if (items.len != actual.array.len) return true;
            const path_len = path.items.len;
            for (items, actual.array, 0..) |e, a, index| {
                path.shrinkRetainingCapacity(path_len);
                try path.print(std.testing.allocator, "[{d}]", .{index});
                if (try differs(path, e.value, a.value)) return true;
            }
            path.shrinkRetainingCapacity(path_len);
            return false;
        },
    }
}

fn textOf(value: Value) ?[]const u8 {
    return switch (value) {
        .string, .enum_literal => |text| text,
        else => null,
    };
}

/// A test helper for fuzzing the parsers: a copy of `source` in `buffer` with one to four
/// bytes replaced, inserted or deleted, often bytes that matter to ZON or JSON.
/// Test helper: `parse` (zon.parse or json.parse) accepts `source`; on failure the
/// diagnostic is printed.
pub fn parseValidWith(comptime parse: anytype, arena: std.mem.Allocator, source: anytype) !Node {
    var diagnostic: Diagnostic = .empty;
    return parse(arena, source, &diagnostic) catch |err| {
        std.debug.print("unexpected {t} at {d}:{d}: {s}\n", .{
            err,
            diagnostic.position.line,
            diagnostic.position.column,
            diagnostic.message,
        });
        return err;
    };
}

/// Test helper: `parse` refuses `source` at `line:column` with a message containing
/// `message_part`.
pub fn expectSyntaxErrorWith(
    comptime parse: anytype,
    source: anytype,
    line: u32,
    column: u32,
    message_part: []const u8,
) !void {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    var diagnostic: Diagnostic = .empty;
    const result = parse(arena_state.allocator(), source, &diagnostic);
    try std.testing.expectError(error.Syntax, result);
    const expected_position: Position = .{ .line = line, .column = column };
    std.testing.expectEqual(expected_position, diagnostic.position) catch |err| {
        std.debug.print("message: {s}\n", .{diagnostic.message});
        return err;
    };
    if (std.mem.find(u8, diagnostic.message, message_part) == null) {
        std.debug.print("'{s}' is not in '{s}'\n", .{ message_part, diagnostic.message });
        return error.TestUnexpectedMessage;
    }
}

/// Test helper: the value of the field called `field_name` of an object node.
pub fn fieldNode(node: Node, field_name: []const u8) !Node {
    for (node.value.object) |f| if (std.mem.eql(u8, f.name, field_name)) return f.node;
    return error.TestFieldMissing;
}

/// Test helper: `parse` (zon.parse or json.parse) neither crashes nor leaks on random
/// mutations of `example`, and every syntax error it reports lies inside the input. The seed
/// is fixed, so a failure replays as it is; the failing input is printed.
pub fn expectSurvivesMutations(comptime parse: anytype, example: [:0]const u8) !void {
    const seed: u64 = 0x5_1ce;
    var prng: std.Random.DefaultPrng = .init(seed);
    const random = prng.random();
    var buffer: [4096:0]u8 = undefined;
    assert(example.len + 8 <= buffer.len);
    buffer[example.len + 8] = 0; // The sentinel of the slice handed to `mutate`.
    const iterations_max = 2_000;
    for (0..iterations_max) |iteration| {
        const source = mutate(random, example, buffer[0 .. example.len + 8 :0]);
        var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
        defer arena_state.deinit();
        var diagnostic: Diagnostic = .empty;
        errdefer std.debug.print("seed {d} iteration {d}: \"{f}\"\n", .{
            seed,
            iteration,
            std.zig.fmtString(source),
        });
        if (parse(arena_state.allocator(), source, &diagnostic)) |root| {
            try std.testing.expect(root.position.line >= 1 and root.position.column >= 1);
        } else |err| switch (err) {
            error.Syntax => {
                try std.testing.expect(diagnostic.message.len > 0);
                const end = positionOf(source, source.len);
                try std.testing.expect(diagnostic.position.line <= end.line);
                try std.testing.expect(diagnostic.position.column >= 1);
            },
            error.OutOfMemory => return err, // The testing allocator does not fail.
        }
    }
}

pub fn mutate(random: std.Random, source: []const u8, buffer: [:0]u8) [:0]const u8 {
    assert(buffer.len >= source.len + 4);
    var len = source.len;
    std.mem.copyForwards(u8, buffer[0..len], source); // `source` may be `buffer` itself.
    const interesting = "{}[]().,=-+:\"\\@'\n\x00\xff0123456789aeE";
    const mutations = random.intRangeAtMost(u32, 1, 4);
    for (0..mutations) |_| {
        const byte = if (random.boolean())
            interesting[random.uintLessThan(usize, interesting.len)]
        else
            random.int(u8);
        const index = random.uintAtMost(usize, len);
        switch (random.uintLessThan(u8, 3)) {
            0 => if (index < len) {
                buffer[index] = byte;
            },
            1 => if (len < buffer.len) {
                std.mem.copyBackwards(u8, buffer[index + 1 .. len + 1], buffer[index..len]);
                buffer[index] = byte;
                len += 1;
            },
            else => if (index < len) {
                std.mem.copyForwards(u8, buffer[index .. len - 1], buffer[index + 1 .. len]);
                len -= 1;
            },
        }
    }
    buffer[len] = 0;
    return buffer[0..len :0];
}

test "config tree: positions are 1-based lines and byte columns" {
    const source = "ab\n\tc\n\nd";
    try std.testing.expectEqual(Position{ .line = 1, .column = 1 }, positionOf(source, 0));
    try std.testing.expectEqual(Position{ .line = 1, .column = 3 }, positionOf(source, 2));
    try std.testing.expectEqual(Position{ .line = 2, .column = 1 }, positionOf(source, 3));
    try std.testing.expectEqual(Position{ .line = 2, .column = 2 }, positionOf(source, 4));
    try std.testing.expectEqual(Position{ .line = 3, .column = 1 }, positionOf(source, 6));
    try std.testing.expectEqual(Position{ .line = 4, .column = 2 }, positionOf(source, 8));
}

test "config tree: a locator gives the same answers in any order" {
    const source = "one\ntwo\r\nthree\n\nfour";
    var locator: Locator = .init(source);
    var offset: usize = 0;
    while (offset <= source.len) : (offset += 1) {
        try std.testing.expectEqual(positionOf(source, offset), locator.position(offset));
    }
    offset = source.len + 1;
    while (offset > 0) {
        offset -= 1;
        try std.testing.expectEqual(positionOf(source, offset), locator.position(offset));
    }
}

test "config tree: equal trees ignore positions and enum literal versus string" {
    const here: Position = .{ .line = 1, .column = 1 };
    const there: Position = .{ .line = 7, .column = 3 };
    const a_fields = [_]Field{
        .{ .name = "io", .name_position = here, .node = .{ .position = here, .value = .{
            .enum_literal = "auto",
        } } },
    };
    const b_fields = [_]Field{
        .{ .name = "io", .name_position = there, .node = .{ .position = there, .value = .{
            .string = "auto",
        } } },
    };
    const c_fields = [_]Field{
        .{ .name = "io", .name_position = there, .node = .{ .position = there, .value = .{
            .integer = 1,
        } } },
    };
    const a: Node = .{ .position = here, .value = .{ .object = &a_fields } };
    const b: Node = .{ .position = there, .value = .{ .object = &b_fields } };
    const c: Node = .{ .position = there, .value = .{ .object = &c_fields } };
    try expectEqualTrees(a, b);

    var path: std.ArrayList(u8) = .empty;
    defer path.deinit(std.testing.allocator);
    try std.testing.expect(try differs(&path, a.value, c.value));
    try std.testing.expectEqualStrings(".io", path.items);
}
