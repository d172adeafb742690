//! JSON config files into a `tree.Node`, by recursive descent over `std.json.Scanner` tokens.
//!
//! The one decision: the scanner validates, this file positions. Before each token the
//! parser peeks, which leaves the scanner's cursor on the token's first byte; that offset is
//! the node's position. When the scanner refuses a byte, the message comes from what this
//! parser was expecting there plus the last significant byte before the cursor (a `,` or a
//! `:` means a value or key was due), since the scanner itself only says `SyntaxError`.
//! Numbers must be integers; nesting is bounded by `tree.depth_max`, checked before the
//! scanner descends.
const std = @import("std");
const assert = std.debug.assert;
const Scanner = std.json.Scanner;
const tree = @import("tree.zig");

const Diagnostic = tree.Diagnostic;
const Node = tree.Node;
const ParseError = tree.ParseError;
const messages = tree.messages;

/// Parses `source` into a tree allocated in `arena`. On `error.Syntax`, `diagnostic` says
/// where and what.
pub fn parse(
    arena: std.mem.Allocator,
    source: []const u8,
    diagnostic: *Diagnostic,
) ParseError!Node {
    if (source.len > tree.source_bytes_max) {
        return tree.fail(diagnostic, .{ .line = 1, .column = 1 }, messages.too_large);
    }
    var parser: Parser = .{
        .arena = arena,
        .source = source,
        .scanner = .initCompleteInput(arena, source),
        .locator = .init(source),
        .diagnostic = diagnostic,
    };
    defer parser.scanner.deinit();
    try parser.scanner.ensureTotalStackCapacity(tree.depth_max);
    // RFC 8259 section 8.1: a parser may ignore a byte order mark, as Zig's tokenizer does.
    if (std.mem.startsWith(u8, source, byte_order_mark)) {
        parser.scanner.cursor = byte_order_mark.len;
    }

    const root = try parser.value(0, .document);
    const end = try parser.peek(.document_end);
    assert(end == .end_of_document); // Anything else is a `SyntaxError` at depth 0.
    assert(parser.scanner.stackHeight() == 0);
    return root;
}

const byte_order_mark = "\xEF\xBB\xBF";

/// Where the parser is, which decides what it expects next and so the error message.
const Context = enum {
    /// The whole document: one value.
    document,
    /// After the document's value: only whitespace.
    document_end,
    /// After `{`.
    object_first,
    /// After a member's value: `,` or `}`; after that `,`, a key.
    object_next,
    /// After a key: `:`; after that `:`, a value.
    member_value,
    /// After `[`.
    array_first,
    /// After an element: `,` or `]`; after that `,`, a value.
    array_next,
};

const Parser = struct {
    arena: std.mem.Allocator,
    source: []const u8,
    scanner: Scanner,
    locator: tree.Locator,
    diagnostic: *Diagnostic,

    /// The value that starts at the next token, `depth` containers deep.
    fn value(parser: *Parser, depth: u32, context: Context) ParseError!Node {
        assert(depth <= tree.depth_max);
        const token_type = try parser.peek(context);
        const start = parser.scanner.cursor;
        const position = parser.locator.position(start);
        const result: tree.Value = switch (token_type) {
            .object_begin => .{ .object = try parser.object(depth) },
            .array_begin => .{ .array = try parser.array(depth) },
            .string => .{ .string = try parser.string() },
            .number => .{ .integer = try parser.integer() },
            .true, .false, .null => try parser.literal(),
            // The closing bracket of the wrong kind: `{"a": 1]` or `[1}`.
            .object_end, .array_end, .end_of_document => return parser.failExpected(context),
        };
        assert(parser.scanner.cursor > start);
        return .{ .position = position, .value = result };
    }

    fn object(parser: *Parser, depth: u32) ParseError![]const tree.Field {
        if (depth == tree.depth_max) return parser.failAt(parser.scanner.cursor, messages.too_deep);
        const begin = try parser.next();
        assert(begin == .object_begin);

        var fields: std.ArrayList(tree.Field) = .empty;
        var context: Context = .object_first;
        // Bounded: every member consumes bytes of a source no longer than `source_bytes_max`.
        while (true) {
            switch (try parser.peek(context)) {
                .object_end => break,
                .string => {},
                else => return parser.failExpected(context),
            }
            const name_position = parser.locator.position(parser.scanner.cursor);
            const name = try parser.string();
            const node = try parser.value(depth + 1, .member_value);
            try fields.append(parser.arena, .{
                .name = name,
                .name_position = name_position,
                .node = node,
            });
            context = .object_next;
        }
        const end = try parser.next();
        assert(end == .object_end);
        return fields.toOwnedSlice(parser.arena);
    }

    fn array(parser: *Parser, depth: u32) ParseError![]const Node {
        if (depth == tree.depth_max) return parser.failAt(parser.scanner.cursor, messages.too_deep);
        const begin = try parser.next();
        assert(begin == .array_begin);

        var items: std.ArrayList(Node) = .empty;
        var context: Context = .array_first;
        // Bounded: every element consumes bytes of a source no longer than `source_bytes_max`.
        while (try parser.peek(context) != .array_end) {
            try items.append(parser.arena, try parser.value(depth + 1, context));
            context = .array_next;
        }
        const end = try parser.next();
        assert(end == .array_end);
        return items.toOwnedSlice(parser.arena);
    }

    /// A string value or key, unescaped into the arena.
    fn string(parser: *Parser) ParseError![]const u8 {
        const quote = parser.scanner.cursor;
        assert(parser.source[quote] == '"');
        // Unescaping never lengthens a string, so the source length is never exceeded.
        const token = parser.scanner.nextAllocMax(parser.arena, .alloc_always, parser.source.len);
        switch (token catch |err| return parser.failString(err, quote)) {
            .allocated_string => |text| return text,
            else => unreachable, // `.alloc_always` on a string.
        }
    }

    fn integer(parser: *Parser) ParseError!i64 {
        const start = parser.scanner.cursor;
        const scanner = &parser.scanner;
        const token = scanner.nextAllocMax(parser.arena, .alloc_if_needed, parser.source.len);
        const text = switch (token catch |err| return parser.failNumber(err, start)) {
            .number => |text| text,
            else => unreachable, // The input is complete, so the number is one slice.
        };
        assert(text.len > 0);
        const position = parser.locator.position(start);
        if (std.mem.findAny(u8, text, ".eE") != null) {
            return tree.fail(parser.diagnostic, position, messages.float);
        }
        return std.fmt.parseInt(i64, text, 10) catch |err| switch (err) {
            error.Overflow => tree.fail(parser.diagnostic, position, messages.integer_range),
            error.InvalidCharacter => unreachable, // The scanner checked the digits.
        };
    }

    fn literal(parser: *Parser) ParseError!tree.Value {
        const start = parser.scanner.cursor;
        const token = parser.scanner.next() catch |err| switch (err) {
            error.SyntaxError, error.UnexpectedEndOfInput => {
                return parser.failAt(start, "expected true, false or null");
            },
            error.OutOfMemory => |e| return e,
            error.BufferUnderrun => unreachable, // The input is complete.
        };
        return switch (token) {
            .true => .{ .bool = true },
            .false => .{ .bool = false },
            .null => .null,
            else => unreachable, // `peek` saw 't', 'f' or 'n'.
        };
    }

    /// The type of the next token, with the cursor moved onto its first byte.
    fn peek(parser: *Parser, context: Context) ParseError!std.json.TokenType {
        return parser.scanner.peekNextTokenType() catch |err| switch (err) {
            error.SyntaxError, error.UnexpectedEndOfInput => |e| parser.failScanner(e, context),
            error.BufferUnderrun => unreachable, // The input is complete.
        };
    }

    /// The next structural token, already seen by `peek`, so only memory can fail.
    fn next(parser: *Parser) ParseError!std.json.Token {
        return parser.scanner.next() catch |err| switch (err) {
            error.OutOfMemory => |e| e,
            error.SyntaxError, error.UnexpectedEndOfInput => unreachable, // Peeked already.
            error.BufferUnderrun => unreachable, // The input is complete.
        };
    }

    fn failScanner(parser: *Parser, err: Scanner.Error, context: Context) ParseError {
        const cursor = parser.scanner.cursor;
        const wanted = expected(context, previousByte(parser.source, cursor));
        const message = switch (err) {
            error.SyntaxError => switch (context) {
                .document_end => "unexpected data after the document",
                else => try std.fmt.allocPrint(parser.arena, "expected {s}", .{wanted}),
            },
            error.UnexpectedEndOfInput => switch (context) {
                .document => return parser.failAt(0, messages.empty), // Only whitespace.
                .document_end => unreachable, // The document was complete.
                else => try std.fmt.allocPrint(
                    parser.arena,
                    "expected {s}, found the end of the file",
                    .{wanted},
                ),
            },
        };
        return tree.fail(parser.diagnostic, parser.locator.position(cursor), message);
    }

    /// A token of the wrong kind where `context` wanted another, such as `]` inside `{}`.
    fn failExpected(parser: *Parser, context: Context) ParseError {
        return parser.failScanner(error.SyntaxError, context);
    }

    fn failString(parser: *Parser, err: Scanner.AllocError, quote: usize) ParseError {
        switch (err) {
            error.OutOfMemory => |e| return e,
            error.ValueTooLong => unreachable, // The limit is the whole source.
            error.UnexpectedEndOfInput => return parser.failAt(quote, "unterminated string"),
            error.SyntaxError => {},
        }
        const cursor = parser.scanner.cursor;
        assert(cursor < parser.source.len); // The scanner refused a byte it saw.
        assert(cursor > quote);
        const byte = parser.source[cursor];
        // A raw newline most likely means the closing quote is missing.
        if (byte == '\n') return parser.failAt(quote, "unterminated string");
        const message = if (byte < 0x20)
            "control characters in strings must be escaped"
        else
            "invalid escape sequence or invalid UTF-8 in string";
        return parser.failAt(cursor, message);
    }

    fn failNumber(parser: *Parser, err: Scanner.AllocError, start: usize) ParseError {
        switch (err) {
            error.OutOfMemory => |e| return e,
            error.ValueTooLong => unreachable, // The limit is the whole source.
            error.SyntaxError, error.UnexpectedEndOfInput => {
                // `-`, `1.`, `1e`: the scanner stopped where a digit was due.
                assert(parser.scanner.cursor > start);
                return parser.failAt(parser.scanner.cursor, "invalid number: expected a digit");
            },
        }
    }

    fn failAt(parser: *Parser, offset: usize, message: []const u8) ParseError {
        return tree.fail(parser.diagnostic, parser.locator.position(offset), message);
    }
};

/// What `context` wants next, given the last significant byte before the failure.
fn expected(context: Context, previous: u8) []const u8 {
    return switch (context) {
        .document => "a value",
        .document_end => "the end of the file",
        .object_first => "a string key or '}'",
        .object_next => if (previous == ',') "a string key" else "',' or '}'",
        .member_value => if (previous == ':') "a value" else "':' after the key",
        .array_first => "a value or ']'",
        .array_next => if (previous == ',') "a value" else "',' or ']'",
    };
}

/// The last byte before `cursor` that is not JSON whitespace, or 0 at the start.
fn previousByte(source: []const u8, cursor: usize) u8 {
    assert(cursor <= source.len);
    var index = cursor;
    while (index > 0) {
        index -= 1;
        switch (source[index]) {
            ' ', '\t', '\r', '\n' => {},
            else => |byte| return byte,
        }
    }
    return 0;
}

// Tests.

const testing = std.testing;
const zon = @import("zon.zig");

/// Parses `source`, which must be valid.
fn parseValid(arena: std.mem.Allocator, source: []const u8) !Node {
    return tree.parseValidWith(parse, arena, source);
}

/// Expects `source` to fail at `line:column` with a message containing `message_part`.
fn expectSyntaxError(source: []const u8, line: u32, column: u32, message_part: []const u8) !void {
    return tree.expectSyntaxErrorWith(parse, source, line, column, message_part);
}

const fieldNode = tree.fieldNode;

/// `zon.example_sluice_config` in JSON, with its enum literals as strings.
const example_sluice_config =
    \\{
    \\  "listeners": [{ "address": "0.0.0.0:8080" }],
    \\  "workers": 4,
    \\  "io": "auto",
    \\  "pools": {
    \\    "app": {
    \\      "backends": [
    \\        { "address": "10.0.0.5:9000", "weight": 3 },
    \\        { "address": "10.0.0.6:9000" }
    \\      ],
    \\      "strategy": "least_conn",
    \\      "health": { "path": "/healthz", "interval": "2s" }
    \\    }
    \\  },
    \\  "routes": [{ "host": "*.example.com", "path": "/api/", "pool": "app" }]
    \\}
    \\
;

test "json: every value kind, with positions" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const source =
        \\{
        \\  "nothing": null, "yes": true, "no": false,
        \\  "int": 42, "negative": -7, "zero": -0,
        \\  "smallest": -9223372036854775808,
        \\  "text": "tab\there \u00e9 \ud83d\ude00 \"q\" \\",
        \\  "list": [1, "two", {}, []],
        \\  "a\u0020b": "spaced key"
        \\}
    ;
    const root = try parseValid(arena_state.allocator(), source);
    try testing.expectEqual(tree.Position{ .line = 1, .column = 1 }, root.position);
    try testing.expectEqual(10, root.value.object.len);

    try testing.expectEqual(.null, std.meta.activeTag((try fieldNode(root, "nothing")).value));
    try testing.expect((try fieldNode(root, "yes")).value.bool);
    try testing.expect(!(try fieldNode(root, "no")).value.bool);
    try testing.expectEqual(42, (try fieldNode(root, "int")).value.integer);
    try testing.expectEqual(-7, (try fieldNode(root, "negative")).value.integer);
    try testing.expectEqual(0, (try fieldNode(root, "zero")).value.integer);
    try testing.expectEqual(std.math.minInt(i64), (try fieldNode(root, "smallest")).value.integer);
    try testing.expectEqualStrings(
        "tab\there é 😀 \"q\" \\",
        (try fieldNode(root, "text")).value.string,
    );
    try testing.expectEqualStrings("spaced key", (try fieldNode(root, "a b")).value.string);

    const negative = try fieldNode(root, "negative");
    try testing.expectEqual(tree.Position{ .line = 3, .column = 26 }, negative.position);
    const text_field = root.value.object[7];
    try testing.expectEqualStrings("text", text_field.name);
    try testing.expectEqual(tree.Position{ .line = 5, .column = 3 }, text_field.name_position);
    try testing.expectEqual(tree.Position{ .line = 5, .column = 11 }, text_field.node.position);

    const list = (try fieldNode(root, "list")).value.array;
    try testing.expectEqual(4, list.len);
    try testing.expectEqual(1, list[0].value.integer);
    try testing.expectEqualStrings("two", list[1].value.string);
    try testing.expectEqual(0, list[2].value.object.len);
    try testing.expectEqual(0, list[3].value.array.len);
    try testing.expectEqual(tree.Position{ .line = 6, .column = 22 }, list[2].position);
    try testing.expectEqual(tree.Position{ .line = 6, .column = 26 }, list[3].position);
}

test "json: fields keep source order and duplicates" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const root = try parseValid(arena_state.allocator(), "{\"b\": 1, \"a\": 2, \"b\": 3}");
    const fields = root.value.object;
    try testing.expectEqual(3, fields.len);
    try testing.expectEqualStrings("b", fields[0].name);
    try testing.expectEqualStrings("a", fields[1].name);
    try testing.expectEqualStrings("b", fields[2].name);
    try testing.expectEqual(3, fields[2].node.value.integer);
    try testing.expectEqual(tree.Position{ .line = 1, .column = 18 }, fields[2].name_position);
}

test "json: a scalar document and surrounding whitespace" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const root = try parseValid(arena_state.allocator(), "\n\n   \"alone\"  \n");
    try testing.expectEqualStrings("alone", root.value.string);
    try testing.expectEqual(tree.Position{ .line = 3, .column = 4 }, root.position);
}

test "json: CRLF line ends and a byte order mark" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const root = try parseValid(arena_state.allocator(), "\xEF\xBB\xBF{\r\n  \"a\": 1\r\n}\r\n");
    try testing.expectEqual(tree.Position{ .line = 1, .column = 4 }, root.position);
    const a = root.value.object[0];
    try testing.expectEqual(tree.Position{ .line = 2, .column = 3 }, a.name_position);
    try expectSyntaxError("\xEF\xBB\xBF", 1, 1, messages.empty);
}

test "json: the example sluice config equals its ZON twin" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const from_json = try parseValid(arena, example_sluice_config);
    var diagnostic: Diagnostic = .empty;
    const from_zon = try zon.parse(arena, zon.example_sluice_config, &diagnostic);
    try tree.expectEqualTrees(from_zon, from_json);

    const app = try fieldNode(try fieldNode(from_json, "pools"), "app");
    const backends = (try fieldNode(app, "backends")).value.array;
    const weight_field = backends[0].value.object[1];
    try testing.expectEqualStrings("weight", weight_field.name);
    try testing.expectEqual(tree.Position{ .line = 8, .column = 39 }, weight_field.name_position);
    try testing.expectEqual(tree.Position{ .line = 8, .column = 49 }, weight_field.node.position);
}

test "json: syntax errors name their position" {
    try expectSyntaxError("{\"a\": 1 \"b\": 2}", 1, 9, "expected ',' or '}'");
    try expectSyntaxError("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected ',' or '}'");
    try expectSyntaxError("[1 2]", 1, 4, "expected ',' or ']'");
    try expectSyntaxError("{\"a\": 1,}", 1, 9, "expected a string key");
    try expectSyntaxError("[1,]", 1, 4, "expected a value");
    try expectSyntaxError("{\"a\" 1}", 1, 6, "expected ':' after the key");
    try expectSyntaxError("{\"a\": }", 1, 7, "expected a value");
    try expectSyntaxError("{1: 2}", 1, 2, "expected a string key or '}'");
    try expectSyntaxError("[}", 1, 2, "expected a value or ']'");
    try expectSyntaxError("{\"a\": 1]", 1, 8, "expected ',' or '}'");
    try expectSyntaxError("{\"a\": \"open", 1, 7, "unterminated string");
    try expectSyntaxError("{\"a\": \"open,\n\"b\": 1}", 1, 7, "unterminated string");
    try expectSyntaxError("[\"x\ty\"]", 1, 4, "control characters");
    try expectSyntaxError("[\"\\q\"]", 1, 4, "invalid escape sequence");
    try expectSyntaxError("[\"\xff\"]", 1, 3, "invalid UTF-8");
    try expectSyntaxError("{\"interval\": 1.5}", 1, 14, "floats are not supported");
    try expectSyntaxError("[1e3]", 1, 2, "floats are not supported");
    try expectSyntaxError("[-]", 1, 3, "invalid number");
    try expectSyntaxError("[9223372036854775808]", 1, 2, "does not fit in 64 bits");
    try expectSyntaxError("[tru]", 1, 2, "expected true, false or null");
    try expectSyntaxError("{\"a\": 1} x", 1, 10, "unexpected data after the document");
    try expectSyntaxError("{} {}", 1, 4, "unexpected data after the document");
    try expectSyntaxError("", 1, 1, messages.empty);
    try expectSyntaxError(" \n ", 1, 1, messages.empty);
    try expectSyntaxError("{\"a\": [1, 2", 1, 12, "expected ',' or ']', found the end");
    try expectSyntaxError("// no comments\n{}", 1, 1, "expected a value");
}

test "json: nesting is bounded by depth_max" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var node = try parseValid(arena, try nested(arena, tree.depth_max));
    var levels: u32 = 1;
    while (node.value.array.len > 0 and node.value.array[0].value == .array) : (levels += 1) {
        node = node.value.array[0];
    }
    try testing.expectEqual(tree.depth_max, levels);

    const too_deep = try nested(arena, tree.depth_max + 1);
    try expectSyntaxError(too_deep, 1, tree.depth_max + 1, "nesting is deeper than 64");
    const hostile = try nested(arena, 100_000);
    try expectSyntaxError(hostile, 1, tree.depth_max + 1, "nesting is deeper than 64");
}

/// `depth` levels of `[[...[1]...]]`.
fn nested(arena: std.mem.Allocator, depth: u32) ![]const u8 {
    const text = try arena.alloc(u8, 2 * depth + 1);
    @memset(text[0..depth], '[');
    text[depth] = '1';
    @memset(text[depth + 1 ..], ']');
    return text;
}

test "json: random trees written as ZON and as JSON parse back to themselves" {
    // The model is the generated tree; both parsers must return it, positions aside. Empty
    // arrays are left out: ZON writes them `.{}`, which reads back as an empty object.
    const seed: u64 = 0x7_1ee;
    var prng: std.Random.DefaultPrng = .init(seed);
    const random = prng.random();
    const trees_count = 300;
    for (0..trees_count) |_| {
        var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
        defer arena_state.deinit();
        const arena = arena_state.allocator();
        const model = try randomNode(arena, random, 0);

        var zon_text: std.Io.Writer.Allocating = .init(arena);
        try writeZon(&zon_text.writer, model);
        var json_text: std.Io.Writer.Allocating = .init(arena);
        try writeJson(&json_text.writer, model);

        var diagnostic: Diagnostic = .empty;
        const zon_source = try arena.dupeSentinel(u8, zon_text.written(), 0);
        try tree.expectEqualTrees(model, try zon.parse(arena, zon_source, &diagnostic));
        try tree.expectEqualTrees(model, try parseValid(arena, json_text.written()));
    }
}

const random_depth_max = 5;
const random_width_max = 4;

fn randomNode(arena: std.mem.Allocator, random: std.Random, depth: u32) !Node {
    const kinds_count: u32 = if (depth < random_depth_max) 7 else 5;
    const value: tree.Value = switch (random.uintLessThan(u32, kinds_count)) {
        0 => .null,
        1 => .{ .bool = random.boolean() },
        2 => .{ .integer = if (random.boolean()) random.int(i64) else random.int(i8) },
        3 => .{ .string = try randomText(arena, random) },
        4 => .{ .enum_literal = try randomText(arena, random) },
        5 => .{ .object = fields: {
            const fields = try arena.alloc(tree.Field, random.uintAtMost(u32, random_width_max));
            for (fields) |*f| f.* = .{
                .name = try randomText(arena, random),
                .name_position = undefined,
                .node = try randomNode(arena, random, depth + 1),
            };
            break :fields fields;
        } },
        else => .{ .array = items: {
            const items = try arena.alloc(Node, random.intRangeAtMost(u32, 1, random_width_max));
            for (items) |*item| item.* = try randomNode(arena, random, depth + 1);
            break :items items;
        } },
    };
    return .{ .position = undefined, .value = value };
}

/// One to eight pieces that are tricky to escape in one format or the other.
fn randomText(arena: std.mem.Allocator, random: std.Random) ![]const u8 {
    const pieces = [_][]const u8{
        "a", "Z_9", " ", "\"", "\\", "\n", "\t", "\x01",
        "é",
        "😀",
        "@", "{",
    };
    var text: std.ArrayList(u8) = .empty;
    for (0..random.intRangeAtMost(u32, 1, 8)) |_| {
        try text.appendSlice(arena, pieces[random.uintLessThan(usize, pieces.len)]);
    }
    return text.items;
}

fn writeZon(writer: *std.Io.Writer, node: Node) std.Io.Writer.Error!void {
    switch (node.value) {
        .null => try writer.writeAll("null"),
        .bool => |b| try writer.print("{}", .{b}),
        .integer => |i| try writer.print("{d}", .{i}),
        .string => |text| try writer.print("\"{f}\"", .{std.zig.fmtString(text)}),
        .enum_literal => |text| try writer.print(".{f}", .{std.zig.fmtId(text)}),
        .object => |fields| {
            try writer.writeAll(".{");
            for (fields) |f| {
                try writer.print(" .{f} = ", .{std.zig.fmtId(f.name)});
                try writeZon(writer, f.node);
                try writer.writeByte(',');
            }
            try writer.writeAll(" }");
        },
        .array => |items| {
            try writer.writeAll(".{\n");
            for (items) |item| {
                try writeZon(writer, item);
                try writer.writeAll(",\n");
            }
            try writer.writeAll("}");
        },
    }
}

fn writeJson(writer: *std.Io.Writer, node: Node) std.Io.Writer.Error!void {
    switch (node.value) {
        .null => try writer.writeAll("null"),
        .bool => |b| try writer.print("{}", .{b}),
        .integer => |i| try writer.print("{d}", .{i}),
        .string, .enum_literal => |text| try std.json.Stringify.encodeJsonString(text, .{}, writer),
        .object => |fields| {
            try writer.writeAll("{");
            for (fields, 0..) |f, index| {
                if (index > 0) try writer.writeAll(",\n");
                try std.json.Stringify.encodeJsonString(f.name, .{}, writer);
                try writer.writeAll(": ");
                try writeJson(writer, f.node);
            }
            try writer.writeAll("}");
        },
        .array => |items| {
            try writer.writeAll("[");
            for (items, 0..) |item, index| {
                if (index > 0) try writer.writeAll(", ");
                try writeJson(writer, item);
            }
            try writer.writeAll("]");
        },
    }
}

test "json: running out of memory anywhere is an error, not a crash" {
    try testing.checkAllAllocationFailures(testing.allocator, parseInArena, .{
        @as([]const u8, example_sluice_config),
    });
    try testing.checkAllAllocationFailures(testing.allocator, parseInArena, .{
        @as([]const u8, "{\"a\": \"x\", \"a\": 1.5}"),
    });
}

fn parseInArena(allocator: std.mem.Allocator, source: []const u8) !void {
    var arena_state: std.heap.ArenaAllocator = .init(allocator);
    defer arena_state.deinit();
    var diagnostic: Diagnostic = .empty;
    _ = parse(arena_state.allocator(), source, &diagnostic) catch |err| switch (err) {
        error.Syntax => {}, // The second source is meant to fail this way.
        error.OutOfMemory => |e| return e,
    };
}

test "json: random mutations of the example never crash or leak" {
    try tree.expectSurvivesMutations(parse, example_sluice_config);
}
