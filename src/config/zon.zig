//! ZON config files into a `tree.Node`: std's own tokenizer and parser (`std.zig.Ast` in
//! `.zon` mode), then a walk of the syntax tree that keeps every value's position.
//!
//! The one decision: every token is checked against a short list of what a config file may
//! hold *before* std's parser sees it. That parser recurses once per brace, bracket, paren or
//! prefix operator, so a corrupt or hostile file such as `------1` or ten thousand `.{` could
//! overflow the stack; after the check only braces nest, at most `tree.depth_max` deep, and a
//! `-` must sit right before an integer. The same check gives clear messages for what ZON
//! allows but sluice does not (`1 + 2`, `@import`, `'c'`). Syntax std's parser rejects is
//! reported with std's own words. The cost: a disallowed token late in the file is reported
//! before a missing comma earlier on.
const std = @import("std");
const assert = std.debug.assert;
const Ast = std.zig.Ast;
const Token = std.zig.Token;
const tree = @import("tree.zig");

const Diagnostic = tree.Diagnostic;
const Node = tree.Node;
const ParseError = tree.ParseError;
const messages = tree.messages;

/// Parses `source` into a tree allocated in `arena`, which also holds std's syntax tree until
/// the caller frees the arena. On `error.Syntax`, `diagnostic` says where and what.
pub fn parse(
    arena: std.mem.Allocator,
    source: [:0]const u8,
    diagnostic: *Diagnostic,
) ParseError!Node {
    if (source.len > tree.source_bytes_max) {
        return tree.fail(diagnostic, .{ .line = 1, .column = 1 }, messages.too_large);
    }
    const tokens = try tokenize(arena, source, diagnostic);
    assert(tokens.items(.tag)[tokens.len - 1] == .eof);

    const ast = try Ast.parseTokens(arena, source, tokens, .{ .mode = .zon, .recover = false });
    if (ast.errors.len > 0) return failAst(arena, &ast, diagnostic);

    var walker: Walker = .{
        .arena = arena,
        .ast = &ast,
        .locator = .init(source),
        .diagnostic = diagnostic,
    };
    return walker.value(ast.nodeData(.root).node, 0);
}

const allowed_message = "a config file holds only literals: .{ ... }, strings, integers, " ++
    "true, false, null and .enum_literals";

/// Tokenizes the whole file, refusing any token outside the list a config file needs.
fn tokenize(
    arena: std.mem.Allocator,
    source: [:0]const u8,
    diagnostic: *Diagnostic,
) ParseError!Ast.TokenList.Slice {
    var tokens: Ast.TokenList = .empty;
    // Like `Ast.parse`: about one token per eight bytes of source.
    try tokens.ensureTotalCapacity(arena, source.len / 8 + 1);

    var tokenizer: std.zig.Tokenizer = .init(source);
    var depth: u32 = 0;
    var previous: Token = .{ .tag = .eof, .loc = .{ .start = 0, .end = 0 } };
    // Bounded: every token but the last consumes at least one byte.
    while (tokens.len <= source.len) {
        const token = tokenizer.next();
        try checkToken(arena, source, previous, token, &depth, diagnostic);
        try tokens.append(arena, .{ .tag = token.tag, .start = @intCast(token.loc.start) });
        if (token.tag == .eof) return tokens.toOwnedSlice();
        previous = token;
    }
    unreachable; // The tokenizer always ends with `.eof`.
}

fn checkToken(
    arena: std.mem.Allocator,
    source: [:0]const u8,
    previous: Token,
    token: Token,
    depth: *u32,
    diagnostic: *Diagnostic,
) ParseError!void {
    assert(depth.* <= tree.depth_max);
    assert(token.loc.start <= source.len);
    const start = token.loc.start;
    if (previous.tag == .minus and token.tag != .number_literal) {
        return failAt(diagnostic, source, previous.loc.start, "expected an integer after '-'");
    }
    switch (token.tag) {
        .period,
        .comma,
        .equal,
        .identifier,
        .string_literal,
        .multiline_string_literal_line,
        .number_literal,
        .minus,
        .eof,
        => {},
        .l_brace => {
            depth.* += 1;
            if (depth.* > tree.depth_max) {
                return failAt(diagnostic, source, start, messages.too_deep);
            }
        },
        .r_brace => depth.* -|= 1, // An unmatched '}' is std's parser's to report.
        .invalid => return failInvalid(source, start, diagnostic),
        .char_literal => return failAt(
            diagnostic,
            source,
            start,
            "character literals are not supported: write a string",
        ),
        .doc_comment, .container_doc_comment => return failAt(
            diagnostic,
            source,
            start,
            "doc comments ('///', '//!') are not allowed here: write '//' comments",
        ),
        else => {
            const text = source[start..token.loc.end];
            const message = try std.fmt.allocPrint(arena, "'{s}' is not allowed: {s}", .{
                text, allowed_message,
            });
            return failAt(diagnostic, source, start, message);
        },
    }
}

/// Fails at a byte offset; the position is counted only now, as it costs a pass over the
/// source up to `offset`.
fn failAt(
    diagnostic: *Diagnostic,
    source: []const u8,
    offset: usize,
    message: []const u8,
) ParseError {
    return tree.fail(diagnostic, tree.positionOf(source, offset), message);
}

/// The tokenizer's `.invalid` covers strings cut by a newline or the end of the file, raw
/// control characters in strings, and stray bytes: tell them apart for the message.
fn failInvalid(source: [:0]const u8, start: usize, diagnostic: *Diagnostic) ParseError {
    assert(start < source.len);
    const quote = if (source[start] == '@' and start + 1 < source.len) start + 1 else start;
    if (source[quote] != '"') {
        return failAt(diagnostic, source, start, "unexpected character");
    }
    var index = quote + 1;
    while (index < source.len) : (index += 1) {
        switch (source[index]) {
            '\n', '"' => break,
            '\\' => index += 1,
            0...0x09, 0x0b...0x1f, 0x7f => return failAt(
                diagnostic,
                source,
                index,
                "control characters in strings must be escaped",
            ),
            else => {},
        }
    }
    return failAt(diagnostic, source, start, "unterminated string");
}

/// Reports the first error std's parser found, in its own words.
fn failAst(arena: std.mem.Allocator, ast: *const Ast, diagnostic: *Diagnostic) ParseError {
    assert(ast.errors.len > 0);
    const parse_error = ast.errors[0];
    assert(!parse_error.is_note);
    if (ast.tokenTag(0) == .eof) {
        return tree.fail(diagnostic, .{ .line = 1, .column = 1 }, messages.empty);
    }
    const token = parse_error.token;
    if (parse_error.tag == .expected_comma_after_initializer and token >= 2 and
        ast.tokenTag(token) == .equal and ast.tokenTag(token - 1) == .identifier and
        ast.tokenTag(token - 2) == .period)
    {
        // `.a = 1 .b = 2` parses `1 .b` as a field access and trips over the second '=':
        // point at the field that lacks its comma instead.
        const position = tree.positionOf(ast.source, ast.tokenStart(token - 2));
        return tree.fail(diagnostic, position, "expected ',' before this field");
    }
    var message: std.Io.Writer.Allocating = .init(arena);
    ast.renderError(parse_error, &message.writer) catch return error.OutOfMemory;
    const offset = ast.tokenStart(token) + ast.errorOffset(parse_error);
    const position = tree.positionOf(ast.source, offset);
    return tree.fail(diagnostic, position, try message.toOwnedSlice());
}

/// Walks std's syntax tree in source order, so positions come from one forward pass.
const Walker = struct {
    arena: std.mem.Allocator,
    ast: *const Ast,
    locator: tree.Locator,
    diagnostic: *Diagnostic,

    fn value(walker: *Walker, node: Ast.Node.Index, depth: u32) ParseError!Node {
        // `tokenize` bounded the braces, and only braces nest.
        assert(depth <= tree.depth_max);
        const ast = walker.ast;
        const position = walker.positionOfToken(ast.firstToken(node));
        const result: tree.Value = switch (ast.nodeTag(node)) {
            .struct_init_dot_two,
            .struct_init_dot_two_comma,
            .struct_init_dot,
            .struct_init_dot_comma,
            => .{ .object = try walker.object(node, depth) },
            .array_init_dot_two,
            .array_init_dot_two_comma,
            .array_init_dot,
            .array_init_dot_comma,
            => .{ .array = try walker.array(node, depth) },
            .string_literal, .multiline_string_literal => .{ .string = try walker.string(node) },
            .number_literal => .{ .integer = try walker.integer(node, .positive) },
            .negation => .{ .integer = try walker.integer(ast.nodeData(node).node, .negative) },
            .identifier => try walker.identifier(node),
            .enum_literal => .{ .enum_literal = try walker.name(ast.nodeMainToken(node)) },
            else => return tree.fail(walker.diagnostic, position, allowed_message),
        };
        return .{ .position = position, .value = result };
    }

    fn object(walker: *Walker, node: Ast.Node.Index, depth: u32) ParseError![]const tree.Field {
        const ast = walker.ast;
        var buffer: [2]Ast.Node.Index = undefined;
        const full = ast.fullStructInit(&buffer, node).?;
        assert(full.ast.type_expr == .none); // The tag was `struct_init_dot_*`.

        const fields = try walker.arena.alloc(tree.Field, full.ast.fields.len);
        for (fields, full.ast.fields) |*field, field_node| {
            // `.name = value`: the name is two tokens before the value, its dot three.
            const name_token = ast.firstToken(field_node) - 2;
            assert(ast.tokenTag(name_token - 1) == .period);
            assert(ast.tokenTag(name_token + 1) == .equal);
            field.name_position = walker.positionOfToken(name_token - 1);
            field.name = try walker.name(name_token);
            field.node = try walker.value(field_node, depth + 1);
        }
        return fields;
    }

    fn array(walker: *Walker, node: Ast.Node.Index, depth: u32) ParseError![]const Node {
        const ast = walker.ast;
        var buffer: [2]Ast.Node.Index = undefined;
        const full = ast.fullArrayInit(&buffer, node).?;
        assert(full.ast.type_expr == .none); // The tag was `array_init_dot_*`.
        assert(full.ast.elements.len > 0); // `.{}` is a struct init.

        const items = try walker.arena.alloc(Node, full.ast.elements.len);
        for (items, full.ast.elements) |*item, item_node| {
            item.* = try walker.value(item_node, depth + 1);
        }
        return items;
    }

    fn string(walker: *Walker, node: Ast.Node.Index) ParseError![]const u8 {
        const ast = walker.ast;
        const token = ast.nodeMainToken(node);
        var text: std.Io.Writer.Allocating = try .initCapacity(walker.arena, 16);
        const result = std.zig.ZonGen.parseStrLit(ast, node, &text.writer) catch
            return error.OutOfMemory;
        switch (result) {
            .success => return text.toOwnedSlice(),
            .failure => |err| return walker.failEscape(token, 0, err),
        }
    }

    /// A field name or enum literal: `name` or `@"any text"`.
    fn name(walker: *Walker, token: Ast.TokenIndex) ParseError![]const u8 {
        const ast = walker.ast;
        assert(ast.tokenTag(token) == .identifier);
        const text = ast.tokenSlice(token);
        if (text[0] != '@') return walker.arena.dupe(u8, text); // The tree outlives `source`.

        const quoted = text[1..];
        var unescaped: std.Io.Writer.Allocating = try .initCapacity(walker.arena, quoted.len);
        const result = std.zig.string_literal.parseWrite(&unescaped.writer, quoted) catch
            return error.OutOfMemory;
        switch (result) {
            .success => {},
            .failure => |err| return walker.failEscape(token, 1, err),
        }
        if (unescaped.written().len == 0) {
            return tree.fail(walker.diagnostic, walker.positionOfToken(token), "empty name");
        }
        return unescaped.toOwnedSlice();
    }

    fn integer(
        walker: *Walker,
        number_node: Ast.Node.Index,
        sign: enum { positive, negative },
    ) ParseError!i64 {
        const ast = walker.ast;
        const token = ast.nodeMainToken(number_node);
        if (ast.nodeTag(number_node) != .number_literal) {
            // `tokenize` let '-' through only before a number, but `-1.x` is a field access.
            return tree.fail(walker.diagnostic, walker.positionOfToken(token), allowed_message);
        }
        const text = ast.tokenSlice(token);
        const position = walker.positionOfToken(token);
        const magnitude: u64 = switch (std.zig.parseNumberLiteral(text)) {
            .int => |int| int,
            .big_int => return tree.fail(walker.diagnostic, position, messages.integer_range),
            .float => return tree.fail(walker.diagnostic, position, messages.float),
            .failure => |err| return tree.fail(walker.diagnostic, position, numberMessage(err)),
        };
        const signed: i65 = switch (sign) {
            .positive => magnitude,
            .negative => -@as(i65, magnitude),
        };
        return std.math.cast(i64, signed) orelse
            tree.fail(walker.diagnostic, position, messages.integer_range);
    }

    fn identifier(walker: *Walker, node: Ast.Node.Index) ParseError!tree.Value {
        const ast = walker.ast;
        const token = ast.nodeMainToken(node);
        const text = ast.tokenSlice(token);
        assert(text.len > 0);
        if (std.mem.eql(u8, text, "true")) return .{ .bool = true };
        if (std.mem.eql(u8, text, "false")) return .{ .bool = false };
        if (std.mem.eql(u8, text, "null")) return .null;
        const position = walker.positionOfToken(token);
        if (std.mem.eql(u8, text, "inf") or std.mem.eql(u8, text, "nan")) {
            return tree.fail(walker.diagnostic, position, messages.float);
        }
        const message = try std.fmt.allocPrint(
            walker.arena,
            "unknown identifier '{s}': write a string \"{s}\" or an enum literal .{s}",
            .{ text, text, text },
        );
        return tree.fail(walker.diagnostic, position, message);
    }

    fn failEscape(
        walker: *Walker,
        token: Ast.TokenIndex,
        prefix_bytes: u32,
        err: std.zig.string_literal.Error,
    ) ParseError {
        const raw = walker.ast.tokenSlice(token)[prefix_bytes..];
        const offset = walker.ast.tokenStart(token) + prefix_bytes + err.offset();
        const message = try std.fmt.allocPrint(walker.arena, "{f}", .{err.fmt(raw)});
        return tree.fail(walker.diagnostic, tree.positionOf(walker.ast.source, offset), message);
    }

    fn positionOfToken(walker: *Walker, token: Ast.TokenIndex) tree.Position {
        return walker.locator.position(walker.ast.tokenStart(token));
    }
};

fn numberMessage(err: std.zig.number_literal.Error) []const u8 {
    return switch (err) {
        .leading_zero => "leading zeros are not allowed (write 0o17 for octal)",
        .digit_after_base => "expected a digit after the base prefix",
        .upper_case_base => "the base prefix must be lowercase",
        .invalid_float_base, .duplicate_period, .duplicate_exponent => messages.float,
        .repeated_underscore => "repeated digit separator '_'",
        .invalid_underscore_after_special => "expected a digit before '_'",
        .invalid_digit => "invalid digit for the number's base",
        .invalid_digit_exponent,
        .exponent_after_underscore,
        .invalid_exponent_sign,
        .period_after_exponent,
        => messages.float,
        .special_after_underscore => "expected a digit after '_'",
        .trailing_special => "expected a digit at the end of the number",
        .trailing_underscore => "trailing digit separator '_'",
        .invalid_character => "invalid character in number",
    };
}

// Tests.

const testing = std.testing;

/// Parses `source`, which must be valid.
fn parseValid(arena: std.mem.Allocator, source: [:0]const u8) !Node {
    return tree.parseValidWith(parse, arena, source);
}

/// Expects `source` to fail at `line:column` with a message containing `message_part`.
fn expectSyntaxError(source: [:0]const u8, line: u32, column: u32, message_part: []const u8) !void {
    return tree.expectSyntaxErrorWith(parse, source, line, column, message_part);
}

const fieldNode = tree.fieldNode;

/// A test fixture, shared with the JSON tests, which hold its JSON twin.
pub const example_sluice_config =
    \\.{
    \\    // comments are allowed in ZON
    \\    .listeners = .{ .{ .address = "0.0.0.0:8080" } },
    \\    .workers = 4,
    \\    .io = .auto,
    \\    .pools = .{
    \\        .app = .{
    \\            .backends = .{
    \\                .{ .address = "10.0.0.5:9000", .weight = 3 },
    \\                .{ .address = "10.0.0.6:9000" },
    \\            },
    \\            .strategy = .least_conn,
    \\            .health = .{ .path = "/healthz", .interval = "2s" },
    \\        },
    \\    },
    \\    .routes = .{ .{ .host = "*.example.com", .path = "/api/", .pool = "app" } },
    \\}
    \\
;

test "zon: every value kind, with positions" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const source =
        \\.{
        \\    .nothing = null, .yes = true, .no = false,
        \\    .int = 42, .negative = -7, .hex = 0xff, .grouped = 1_000_000,
        \\    .smallest = -9223372036854775808,
        \\    .text = "tab\there \u{e9}",
        \\    .lines =
        \\        \\first
        \\        \\second
        \\    ,
        \\    .mode = .round_robin, .@"quoted name" = .@"quoted value",
        \\    .list = .{ 1, "two", .{} },
        \\    .empty = .{},
        \\}
    ;
    const root = try parseValid(arena_state.allocator(), source);
    try testing.expectEqual(tree.Position{ .line = 1, .column = 1 }, root.position);
    try testing.expectEqual(14, root.value.object.len);

    try testing.expectEqual(.null, std.meta.activeTag((try fieldNode(root, "nothing")).value));
    try testing.expect((try fieldNode(root, "yes")).value.bool);
    try testing.expect(!(try fieldNode(root, "no")).value.bool);
    try testing.expectEqual(42, (try fieldNode(root, "int")).value.integer);
    try testing.expectEqual(-7, (try fieldNode(root, "negative")).value.integer);
    try testing.expectEqual(255, (try fieldNode(root, "hex")).value.integer);
    try testing.expectEqual(1_000_000, (try fieldNode(root, "grouped")).value.integer);
    try testing.expectEqual(std.math.minInt(i64), (try fieldNode(root, "smallest")).value.integer);
    try testing.expectEqualStrings("tab\there é", (try fieldNode(root, "text")).value.string);
    try testing.expectEqualStrings("first\nsecond", (try fieldNode(root, "lines")).value.string);
    try testing.expectEqualStrings("round_robin", (try fieldNode(root, "mode")).value.enum_literal);
    try testing.expectEqualStrings(
        "quoted value",
        (try fieldNode(root, "quoted name")).value.enum_literal,
    );
    try testing.expectEqual(0, (try fieldNode(root, "empty")).value.object.len);

    const negative = try fieldNode(root, "negative");
    try testing.expectEqual(tree.Position{ .line = 3, .column = 28 }, negative.position);
    const lines = try fieldNode(root, "lines");
    try testing.expectEqual(tree.Position{ .line = 7, .column = 9 }, lines.position);
    const mode_field = root.value.object[10];
    try testing.expectEqualStrings("mode", mode_field.name);
    try testing.expectEqual(tree.Position{ .line = 10, .column = 5 }, mode_field.name_position);
    try testing.expectEqual(tree.Position{ .line = 10, .column = 13 }, mode_field.node.position);

    const list = (try fieldNode(root, "list")).value.array;
    try testing.expectEqual(3, list.len);
    try testing.expectEqual(1, list[0].value.integer);
    try testing.expectEqualStrings("two", list[1].value.string);
    try testing.expectEqual(tree.Position{ .line = 11, .column = 26 }, list[2].position);
}

test "zon: fields keep source order and duplicates" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const root = try parseValid(arena_state.allocator(), ".{ .b = 1, .a = 2, .b = 3 }");
    const fields = root.value.object;
    try testing.expectEqual(3, fields.len);
    try testing.expectEqualStrings("b", fields[0].name);
    try testing.expectEqualStrings("a", fields[1].name);
    try testing.expectEqualStrings("b", fields[2].name);
    try testing.expectEqual(3, fields[2].node.value.integer);
    try testing.expectEqual(tree.Position{ .line = 1, .column = 20 }, fields[2].name_position);
}

test "zon: CRLF line ends and a byte order mark" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const source = "\xEF\xBB\xBF.{\r\n  .a = 1, // note\r\n" ++
        "  .b =\r\n    \\\\x\r\n    \\\\y\r\n  ,\r\n}\r\n";
    const root = try parseValid(arena_state.allocator(), source);
    try testing.expectEqual(tree.Position{ .line = 1, .column = 4 }, root.position);
    const a = root.value.object[0];
    try testing.expectEqual(tree.Position{ .line = 2, .column = 3 }, a.name_position);
    try testing.expectEqualStrings("x\ny", root.value.object[1].node.value.string);
    try expectSyntaxError("\xEF\xBB\xBF", 1, 1, messages.empty);
}

test "zon: the example sluice config, with nested positions" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const root = try parseValid(arena_state.allocator(), example_sluice_config);
    const app = try fieldNode(try fieldNode(root, "pools"), "app");
    const backends = (try fieldNode(app, "backends")).value.array;
    try testing.expectEqual(2, backends.len);
    try testing.expectEqual(
        tree.Position{ .line = 8, .column = 25 },
        (try fieldNode(app, "backends")).position,
    );
    try testing.expectEqual(3, (try fieldNode(backends[0], "weight")).value.integer);
    try testing.expectEqual(
        tree.Position{ .line = 9, .column = 58 },
        (try fieldNode(backends[0], "weight")).position,
    );
    const address = backends[0].value.object[0];
    try testing.expectEqual(tree.Position{ .line = 9, .column = 20 }, address.name_position);
    const strategy = try fieldNode(app, "strategy");
    try testing.expectEqualStrings("least_conn", strategy.value.enum_literal);
}

test "zon: syntax errors name their position" {
    try expectSyntaxError(".{ .a = 1 .b = 2 }", 1, 11, "expected ',' before this field");
    try expectSyntaxError(".{\n  .a = \"x\"\n  .b = 2,\n}", 3, 3, "expected ',' before this field");
    try expectSyntaxError(".{\n    .a = \"open,\n}", 2, 10, "unterminated string");
    try expectSyntaxError(".{ .a = \"open", 1, 9, "unterminated string");
    try expectSyntaxError(".{ .a = \"x\ty\" }", 1, 11, "control characters");
    try expectSyntaxError(".{ .a = \"\\q\" }", 1, 11, "invalid escape character");
    try expectSyntaxError(".{ .a = 1.5 }", 1, 9, "floats are not supported");
    try expectSyntaxError(".{ .a = 1e3 }", 1, 9, "floats are not supported");
    try expectSyntaxError(".{ .a = -inf }", 1, 9, "expected an integer after '-'");
    try expectSyntaxError(".{ .a = nan }", 1, 9, "floats are not supported");
    try expectSyntaxError(".{\n  .a = 1 + 2,\n}", 2, 10, "'+' is not allowed");
    try expectSyntaxError(".{ .a = --1 }", 1, 9, "expected an integer after '-'");
    try expectSyntaxError(".{ .a = @import(\"x\") }", 1, 9, "'@import' is not allowed");
    try expectSyntaxError(".{ .a = 'c' }", 1, 9, "character literals");
    try expectSyntaxError(".{ .a = round_robin }", 1, 9, "unknown identifier 'round_robin'");
    try expectSyntaxError(".{ .a = Foo{} }", 1, 9, "a config file holds only literals");
    try expectSyntaxError(".{ .a = 99999999999999999999 }", 1, 9, "does not fit in 64 bits");
    try expectSyntaxError(".{ .a = 9223372036854775808 }", 1, 9, "does not fit in 64 bits");
    try expectSyntaxError(".{ .a = 007 }", 1, 9, "leading zeros");
    try expectSyntaxError(".{ .@\"\" = 1 }", 1, 5, "empty name");
    try expectSyntaxError("/// doc\n.{}", 1, 1, "doc comments");
    try expectSyntaxError(".{ .a = 1 } .{}", 1, 13, "expected 'EOF'");
    try expectSyntaxError("", 1, 1, messages.empty);
    try expectSyntaxError("  // only a comment\n", 1, 1, messages.empty);
    try expectSyntaxError(".{ .a = 1, 2 }", 1, 12, "expected field initializer");
    try expectSyntaxError(".{ .a = 1", 1, 10, "expected ',' after initializer");
}

test "zon: nesting is bounded by depth_max" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const deepest = try nested(arena, tree.depth_max);
    var node = try parseValid(arena, deepest);
    var levels: u32 = 1;
    while (node.value.array.len > 0 and node.value.array[0].value == .array) : (levels += 1) {
        node = node.value.array[0];
    }
    try testing.expectEqual(tree.depth_max, levels);

    const too_deep = try nested(arena, tree.depth_max + 1);
    try expectSyntaxError(too_deep, 1, 2 * tree.depth_max + 2, "nesting is deeper than 64");
}

/// `depth` levels of `.{ .{ ... .{ 1 } ... } }`, written without spaces.
fn nested(arena: std.mem.Allocator, depth: u32) ![:0]const u8 {
    var text: std.ArrayList(u8) = .empty;
    for (0..depth) |_| try text.appendSlice(arena, ".{");
    try text.append(arena, '1');
    for (0..depth) |_| try text.append(arena, '}');
    return text.toOwnedSliceSentinel(arena, 0);
}

test "zon: hostile nesting and operator chains are refused before std's parser recurses" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const count = 100_000;
    const braces = try nested(arena, count);
    try expectSyntaxError(braces, 1, 2 * tree.depth_max + 2, "nesting is deeper than 64");

    const minuses = try arena.allocSentinel(u8, count + 1, 0);
    @memset(minuses[0..count], '-');
    minuses[count] = '1';
    try expectSyntaxError(minuses, 1, 1, "expected an integer after '-'");

    const parens = try arena.allocSentinel(u8, count, 0);
    @memset(parens, '(');
    try expectSyntaxError(parens, 1, 1, "'(' is not allowed");
}

test "zon: running out of memory anywhere is an error, not a crash" {
    try testing.checkAllAllocationFailures(testing.allocator, parseInArena, .{
        @as([:0]const u8, example_sluice_config),
    });
    try testing.checkAllAllocationFailures(testing.allocator, parseInArena, .{
        @as([:0]const u8, ".{ .a = 1 + 2 }"),
    });
}

fn parseInArena(allocator: std.mem.Allocator, source: [:0]const u8) !void {
    var arena_state: std.heap.ArenaAllocator = .init(allocator);
    defer arena_state.deinit();
    var diagnostic: Diagnostic = .empty;
    _ = parse(arena_state.allocator(), source, &diagnostic) catch |err| switch (err) {
        error.Syntax => {}, // The second source is meant to fail this way.
        error.OutOfMemory => |e| return e,
    };
}

test "zon: random mutations of the example never crash or leak" {
    try tree.expectSurvivesMutations(parse, example_sluice_config);
}
