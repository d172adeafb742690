//! Recursive descent from tokens to the tree (ast.zig), for the language of docs/JS.md.
//!
//! Everything outside the language is refused here with its position and a message naming
//! the construct (`var`, classes, `this`, generators...), so that later stages only ever see
//! the subset. Syntax errors use V8's wording where the subset reaches them.
//!
//! Arrow parameters and destructuring assignments are parsed as expressions first (the
//! spec's cover grammar) and reinterpreted as patterns when the `=>` or `=` that follows says
//! so (`toPattern`). All code is strict mode.
const std = @import("std");
const assert = std.debug.assert;

const ast = @import("ast.zig");
const Node = ast.Node;
const Lexer = @import("Lexer.zig");
const Token = Lexer.Token;
const Kind = Lexer.Kind;
const number = @import("number.zig");
const regexp = @import("regexp.zig");

const Parser = @This();

arena: std.mem.Allocator,
lexer: Lexer,
token: Token,
/// End offset of the previous token, for node ends.
previous_end: u32 = 0,
/// Start offset of the previous token (V8 reports some errors there).
previous_start: u32 = 0,
failure: ?Failure = null,
context: Context = .{},
/// Nesting depth of expressions and statements, bounded so that deep input cannot overflow
/// the native stack.
depth: u32 = 0,
/// The lowest native stack address the parse may reach (see Compiler.Options).
stack_floor: usize = 0,
exports: std.ArrayList(ast.Export) = .empty,
is_module: bool = false,
/// Array literals with a comma after a spread element (`[...a, ]`): fine as expressions,
/// not as patterns.
comma_after_spread: std.AutoHashMapUnmanaged(*Node, void) = .empty,
/// The labels around the statement being parsed, innermost last.
labels: std.ArrayList(ActiveLabel) = .empty,

pub const Failure = struct { pos: u32, message: []const u8 };

pub const Error = error{ SyntaxError, OutOfMemory };

/// Deeper nesting than this is refused; each level costs a few hundred bytes of native
/// stack in the parser, resolver and compiler.
pub const depth_max = 400;
/// Sources over this size are refused before lexing.
pub const source_bytes_max = 4 * 1024 * 1024;

/// What kind of body a function has: `yield` in a generator's, `await` in an async one's,
/// both in an async generator's.
const Flavor = enum { plain, generator, async, async_generator };

const Context = struct {
    in_function: bool = false,
    /// In a generator's body, where `yield` is an expression.
    in_generator: bool = false,
    /// In an async function's body, where `await` is an expression.
    in_async: bool = false,
    loop_depth: u32 = 0,
    breakable_depth: u32 = 0,
    /// Where this function's labels start in `labels` (a label never crosses a function).
    labels_start: u32 = 0,
};

/// A label whose statement is being parsed: `break name` may leave it, and `continue name`
/// may continue it when it labels a loop.
const ActiveLabel = struct { name: []const u8, loop: bool };

pub fn parse(arena: std.mem.Allocator, source: []const u8, stack_floor: usize, failure: *Failure) Error!*ast.Program {
    var p: Parser = .{
        .arena = arena,
        .lexer = Lexer.init(arena, source),
        .token = undefined,
        .stack_floor = stack_floor,
    };
    const program = p.parseProgram() catch |err| {
        if (err == error.SyntaxError) failure.* = p.failure orelse .{ .pos = 0, .message = "syntax error" };
        return err;
    };
    return program;
}

fn parseProgram(p: *Parser) Error!*ast.Program {
    if (p.lexer.source.len > source_bytes_max) return p.failAt(0, "the source is larger than 4 MiB");
    try p.advance();
    var body: std.ArrayList(*Node) = .empty;
    while (p.token.kind != .eof) {
        if (p.isKeyword("export")) {
            try body.append(p.arena, try p.exportDeclaration());
        } else {
            try body.append(p.arena, try p.parseStatement());
        }
    }
    const function = try p.arena.create(ast.Function);
    function.* = .{
        .name = null,
        .pos = 0,
        .end = @intCast(p.lexer.source.len),
        .parameters = &.{},
        .rest = null,
        .body = body.items,
        .is_arrow = false,
        .is_declaration = false,
        .kind = .top_level,
    };
    const program = try p.arena.create(ast.Program);
    program.* = .{
        .body = body.items,
        .exports = p.exports.items,
        .is_module = p.is_module,
        .function = function,
    };
    return program;
}

// ---------------------------------------------------------------------------------------
// Tokens.

fn advance(p: *Parser) Error!void {
    p.previous_end = if (p.lexer.pos > 0) p.token.end else 0;
    p.previous_start = if (p.lexer.pos > 0) p.token.start else 0;
    p.token = p.lexer.next() catch |err| return p.lexerError(err);
}

fn lexerError(p: *Parser, err: Lexer.Error) Error {
    switch (err) {
        error.SyntaxError => {
            const f = p.lexer.failure orelse Lexer.Failure{ .pos = p.lexer.pos, .message = "Invalid or unexpected token" };
            return p.failAt(f.pos, f.message);
        },
        error.OutOfMemory => return error.OutOfMemory,
    }
}

/// The token after the current one, without consuming anything.
fn peek(p: *Parser) Error!Token {
    const saved = p.lexer.pos;
    defer p.lexer.pos = saved;
    return p.lexer.next() catch |err| p.lexerError(err);
}

fn failAt(p: *Parser, pos: u32, message: []const u8) Error {
    p.failure = .{ .pos = pos, .message = message };
    return error.SyntaxError;
}

fn failFmt(p: *Parser, pos: u32, comptime fmt: []const u8, args: anytype) Error {
    return p.failAt(pos, try std.fmt.allocPrint(p.arena, fmt, args));
}

fn text(p: *const Parser, token: Token) []const u8 {
    return p.lexer.source[token.start..token.end];
}

/// V8's message for a token that cannot come here.
fn unexpected(p: *Parser) Error {
    const t = p.token;
    return switch (t.kind) {
        .eof => p.failAt(t.start, "Unexpected end of input"),
        .identifier => if (isStrictReserved(t.text))
            p.failAt(t.start, "Unexpected strict mode reserved word")
        else
            p.failFmt(t.start, "Unexpected identifier '{s}'", .{t.text}),
        .number => p.failAt(t.start, "Unexpected number"),
        .string => p.failAt(t.start, "Unexpected string"),
        .template_full, .template_head, .template_middle, .template_tail => p.failAt(t.start, "Unexpected template string"),
        else => p.failFmt(t.start, "Unexpected token '{s}'", .{p.text(t)}),
    };
}

fn expect(p: *Parser, kind: Kind) Error!void {
    if (p.token.kind != kind) return p.unexpected();
    try p.advance();
}

fn eat(p: *Parser, kind: Kind) Error!bool {
    if (p.token.kind != kind) return false;
    try p.advance();
    return true;
}

fn isKeyword(p: *const Parser, word: []const u8) bool {
    return p.token.kind == .keyword and std.mem.eql(u8, p.token.text, word);
}

fn isIdentifierNamed(p: *const Parser, word: []const u8) bool {
    return p.token.kind == .identifier and !p.token.escaped and std.mem.eql(u8, p.token.text, word);
}

/// Automatic semicolon insertion: a `;`, or a line break, `}` or the end before the token.
fn semicolon(p: *Parser) Error!void {
    if (try p.eat(.semicolon)) return;
    if (p.token.kind == .r_brace or p.token.kind == .eof or p.token.newline_before) return;
    return p.unexpected();
}

fn newNode(p: *Parser, pos: u32, data: ast.Data) Error!*Node {
    const n = try p.arena.create(Node);
    n.* = .{ .pos = pos, .data = data };
    return n;
}

fn enter(p: *Parser) Error!void {
    p.depth += 1;
    if (p.depth > depth_max or @frameAddress() < p.stack_floor) {
        return p.failAt(p.token.start, "the program is nested too deeply");
    }
}

fn leave(p: *Parser) void {
    p.depth -= 1;
}

fn isStrictReserved(name: []const u8) bool {
    const words = [_][]const u8{ "implements", "interface", "let", "package", "private", "protected", "public", "static", "yield" };
    for (words) |w| {
        if (std.mem.eql(u8, name, w)) return true;
    }
    return false;
}

/// The name of a binding being declared, checked against strict mode's reserved words.
fn bindingName(p: *Parser) Error![]const u8 {
    const t = p.token;
    if (t.kind != .identifier) {
        return p.unexpected();
    }
    try p.checkIdentifier(t);
    try p.advance();
    return t.text;
}

fn checkIdentifier(p: *Parser, t: Token) Error!void {
    if (t.escaped and Lexer.isKeyword(t.text)) return p.failAt(t.start, "Keyword must not contain escaped characters");
    if (isStrictReserved(t.text)) return p.failAt(t.start, "Unexpected strict mode reserved word");
    if (std.mem.eql(u8, t.text, "await")) return p.failAt(t.start, "await is not supported (async functions are outside the language)");
    if (std.mem.eql(u8, t.text, "eval") or std.mem.eql(u8, t.text, "arguments")) {
        return p.failAt(t.start, "Unexpected eval or arguments in strict mode");
    }
}

// ---------------------------------------------------------------------------------------
// Statements.

fn parseStatement(p: *Parser) Error!*Node {
    try p.enter();
    defer p.leave();
    const t = p.token;
    switch (t.kind) {
        .l_brace => return p.parseBlock(),
        .semicolon => {
            try p.advance();
            return p.newNode(t.start, .empty_statement);
        },
        .keyword => {
            const word = t.text;
            if (std.mem.eql(u8, word, "const")) return p.declarationStatement(.@"const");
            if (std.mem.eql(u8, word, "var")) return p.declarationStatement(.@"var");
            if (std.mem.eql(u8, word, "function")) return p.functionDeclaration();
            if (std.mem.eql(u8, word, "if")) return p.ifStatement();
            if (std.mem.eql(u8, word, "for")) return p.forStatement();
            if (std.mem.eql(u8, word, "while")) return p.whileStatement();
            if (std.mem.eql(u8, word, "do")) return p.doWhileStatement();
            if (std.mem.eql(u8, word, "return")) return p.returnStatement();
            if (std.mem.eql(u8, word, "break")) return p.jumpStatement(true);
            if (std.mem.eql(u8, word, "continue")) return p.jumpStatement(false);
            if (std.mem.eql(u8, word, "throw")) return p.throwStatement();
            if (std.mem.eql(u8, word, "try")) return p.tryStatement();
            if (std.mem.eql(u8, word, "switch")) return p.switchStatement();
            if (std.mem.eql(u8, word, "class")) {
                const class = try p.parseClass(true);
                return p.newNode(t.start, .{ .class_declaration = class });
            }
            if (std.mem.eql(u8, word, "with")) return p.failAt(t.start, "with is not supported");
            if (std.mem.eql(u8, word, "import")) return p.failAt(t.start, "import is not supported yet");
            if (std.mem.eql(u8, word, "export")) return p.failAt(t.start, "export is only allowed at the top level of a module");
            if (std.mem.eql(u8, word, "enum")) return p.unexpected();
            if (std.mem.eql(u8, word, "debugger")) {
                try p.advance();
                try p.semicolon();
                return p.newNode(t.start, .empty_statement);
            }
        },
        .identifier => {
            if (!t.escaped and std.mem.eql(u8, t.text, "let")) {
                const next = try p.peek();
                if (next.kind == .identifier or next.kind == .l_bracket or next.kind == .l_brace or
                    (next.kind == .keyword and (std.mem.eql(u8, next.text, "yield") or std.mem.eql(u8, next.text, "await"))))
                {
                    return p.declarationStatement(.let);
                }
            }
            if (!t.escaped and std.mem.eql(u8, t.text, "async")) {
                const next = try p.peek();
                if (next.kind == .keyword and std.mem.eql(u8, next.text, "function") and !next.newline_before) {
                    const f = try p.parseFunctionOf(true, false, true);
                    return p.newNode(t.start, .{ .function_declaration = f });
                }
            }
            if ((try p.peek()).kind == .colon) return p.labeledStatement();
        },
        else => {},
    }
    const expression = try p.parseExpression(false);
    try p.semicolon();
    return p.newNode(t.start, .{ .expression_statement = expression });
}

fn parseBlock(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.expect(.l_brace);
    var body: std.ArrayList(*Node) = .empty;
    while (p.token.kind != .r_brace) {
        if (p.token.kind == .eof) return p.unexpected();
        try body.append(p.arena, try p.parseStatement());
    }
    try p.advance();
    return p.newNode(start, .{ .block = .{ .body = body.items } });
}

fn declarationStatement(p: *Parser, kind: ast.DeclarationKind) Error!*Node {
    const start = p.token.start;
    try p.advance();
    const node = try p.declarationList(start, kind, false);
    try p.checkInitializers(node);
    try p.semicolon();
    return node;
}

/// `a = 1, {b} = c` after `let` or `const`; `no_in` inside a for head.
fn declarationList(p: *Parser, start: u32, kind: ast.DeclarationKind, no_in: bool) Error!*Node {
    var declarators: std.ArrayList(ast.Declarator) = .empty;
    while (true) {
        const target = try p.bindingTarget();
        var init: ?*Node = null;
        if (try p.eat(.assign)) {
            init = try p.parseAssignment(no_in);
        }
        try declarators.append(p.arena, .{ .target = target, .init = init });
        if (!try p.eat(.comma)) break;
    }
    return p.newNode(start, .{ .declaration = .{ .kind = kind, .declarators = declarators.items } });
}

/// Checks the initialisers a declaration needs once the for head is known not to be for-in/of.
fn checkInitializers(p: *Parser, node: *Node) Error!void {
    const d = node.data.declaration;
    for (d.declarators) |declarator| {
        if (declarator.init != null) continue;
        if (d.kind == .@"const") return p.failAt(declarator.target.pos, "Missing initializer in const declaration");
        if (declarator.target.data != .identifier) return p.failAt(declarator.target.pos, "Missing initializer in destructuring declaration");
    }
}

/// An identifier or a destructuring pattern, in a declaration or parameter list.
fn bindingTarget(p: *Parser) Error!*Node {
    const start = p.token.start;
    switch (p.token.kind) {
        .l_bracket, .l_brace => {
            const literal = try p.parsePrimary();
            return p.toPattern(literal, true);
        },
        else => {
            const name = try p.bindingName();
            return p.identifierNode(start, name);
        },
    }
}

fn identifierNode(p: *Parser, pos: u32, name: []const u8) Error!*Node {
    const id = try p.arena.create(ast.Identifier);
    id.* = .{ .name = name };
    return p.newNode(pos, .{ .identifier = id });
}

fn functionDeclaration(p: *Parser) Error!*Node {
    const start = p.token.start;
    const f = try p.parseFunction(true, false);
    return p.newNode(start, .{ .function_declaration = f });
}

fn ifStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    try p.expect(.l_paren);
    const condition = try p.parseExpression(false);
    try p.expect(.r_paren);
    const then = try p.substatement();
    var otherwise: ?*Node = null;
    if (p.isKeyword("else")) {
        try p.advance();
        otherwise = try p.substatement();
    }
    return p.newNode(start, .{ .if_statement = .{ .condition = condition, .then = then, .otherwise = otherwise } });
}

/// The body of an if or a loop: a statement, but not a declaration.
fn substatement(p: *Parser) Error!*Node {
    const t = p.token;
    if (t.kind == .keyword and (std.mem.eql(u8, t.text, "const") or std.mem.eql(u8, t.text, "function") or std.mem.eql(u8, t.text, "class"))) {
        if (std.mem.eql(u8, t.text, "function")) {
            return p.failAt(t.start, "In strict mode code, functions can only be declared at top level or inside a block.");
        }
        return p.failAt(t.start, "Lexical declaration cannot appear in a single-statement context");
    }
    if (t.kind == .identifier and !t.escaped and std.mem.eql(u8, t.text, "async")) {
        const next = try p.peek();
        if (next.kind == .keyword and std.mem.eql(u8, next.text, "function") and !next.newline_before) {
            return p.failAt(t.start, "Async functions can only be declared at the top level or inside a block.");
        }
    }
    if (t.kind == .identifier and std.mem.eql(u8, t.text, "let")) {
        const next = try p.peek();
        if (next.kind == .identifier or next.kind == .l_bracket or next.kind == .l_brace) {
            return p.failAt(t.start, "Lexical declaration cannot appear in a single-statement context");
        }
    }
    return p.parseStatement();
}

fn loopBody(p: *Parser) Error!*Node {
    p.context.loop_depth += 1;
    p.context.breakable_depth += 1;
    defer {
        p.context.loop_depth -= 1;
        p.context.breakable_depth -= 1;
    }
    return p.substatement();
}

fn forStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    // `for await (x of xs)`, in an async function or generator (top-level await is out).
    const is_await = p.isIdentifierNamed("await");
    if (is_await) {
        if (!p.context.in_async) return p.failAt(p.token.start, "for await is only valid in async functions (top-level await is not supported)");
        try p.advance();
    }
    try p.expect(.l_paren);
    var init: ?*Node = null;
    var declaration_kind: ?ast.DeclarationKind = null;
    const init_start = p.token.start;
    if (p.isKeyword("const") or p.isKeyword("var") or (p.isIdentifierNamed("let") and isDeclarationStart((try p.peek()).kind))) {
        declaration_kind = if (p.isKeyword("const")) .@"const" else if (p.isKeyword("var")) .@"var" else .let;
        try p.advance();
        init = try p.declarationList(init_start, declaration_kind.?, true);
    } else if (p.token.kind != .semicolon) {
        init = try p.parseExpression(true);
    }
    const of = p.isIdentifierNamed("of");
    if (is_await and !of) return p.unexpected();
    if (of or p.isKeyword("in")) {
        const head = init orelse return p.unexpected();
        var target: *Node = undefined;
        if (declaration_kind != null) {
            const declarators = head.data.declaration.declarators;
            if (declarators.len != 1) {
                return p.failAt(head.pos, if (of)
                    "Invalid left-hand side in for-of loop: Must have a single binding."
                else
                    "Invalid left-hand side in for-in loop: Must have a single binding.");
            }
            if (declarators[0].init != null) {
                return p.failAt(head.pos, if (of)
                    "for-of loop variable declaration may not have an initializer."
                else
                    "for-in loop variable declaration may not have an initializer.");
            }
            target = declarators[0].target;
        } else {
            target = p.toPattern(head, false) catch
                return p.failAt(head.pos, if (of) "Invalid left-hand side in for-of loop" else "Invalid left-hand side in for-in loop");
        }
        try p.advance();
        const iterable = if (of) try p.parseAssignment(false) else try p.parseExpression(false);
        try p.expect(.r_paren);
        const body = try p.loopBody();
        const each: ast.ForEach = .{ .kind = declaration_kind, .target = target, .iterable = iterable, .body = body, .is_await = is_await };
        return p.newNode(start, if (of) .{ .for_of = each } else .{ .for_in = each });
    }
    if (declaration_kind != null) try p.checkInitializers(init.?);
    if (init) |i| {
        if (declaration_kind == null) init = try p.newNode(i.pos, .{ .expression_statement = i });
    }
    try p.expect(.semicolon);
    const condition = if (p.token.kind == .semicolon) null else try p.parseExpression(false);
    try p.expect(.semicolon);
    const update = if (p.token.kind == .r_paren) null else try p.parseExpression(false);
    try p.expect(.r_paren);
    const body = try p.loopBody();
    return p.newNode(start, .{ .for_statement = .{ .init = init, .condition = condition, .update = update, .body = body } });
}

fn isDeclarationStart(kind: Kind) bool {
    return kind == .identifier or kind == .l_bracket or kind == .l_brace;
}

fn whileStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    try p.expect(.l_paren);
    const condition = try p.parseExpression(false);
    try p.expect(.r_paren);
    const body = try p.loopBody();
    return p.newNode(start, .{ .while_statement = .{ .condition = condition, .body = body } });
}

fn doWhileStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    const body = try p.loopBody();
    if (!p.isKeyword("while")) return p.unexpected();
    try p.advance();
    try p.expect(.l_paren);
    const condition = try p.parseExpression(false);
    try p.expect(.r_paren);
    // A semicolon after do-while is optional even on the same line.
    _ = try p.eat(.semicolon);
    return p.newNode(start, .{ .do_while = .{ .condition = condition, .body = body } });
}

fn returnStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    if (!p.context.in_function) return p.failAt(start, "Illegal return statement");
    try p.advance();
    var value: ?*Node = null;
    if (p.token.kind != .semicolon and p.token.kind != .r_brace and p.token.kind != .eof and !p.token.newline_before) {
        value = try p.parseExpression(false);
    }
    try p.semicolon();
    return p.newNode(start, .{ .return_statement = value });
}

fn jumpStatement(p: *Parser, is_break: bool) Error!*Node {
    const start = p.token.start;
    try p.advance();
    var label: ?[]const u8 = null;
    if (p.token.kind == .identifier and !p.token.newline_before) {
        const name = p.token.text;
        const active = p.findLabel(name) orelse return p.failFmt(p.token.start, "Undefined label '{s}'", .{name});
        if (!is_break and !active.loop) {
            return p.failFmt(p.token.start, "Illegal continue statement: '{s}' does not denote an iteration statement", .{name});
        }
        label = name;
        try p.advance();
    } else if (is_break and p.context.breakable_depth == 0) {
        return p.failAt(start, "Illegal break statement");
    } else if (!is_break and p.context.loop_depth == 0) {
        return p.failAt(start, "Illegal continue statement: no surrounding iteration statement");
    }
    try p.semicolon();
    return p.newNode(start, if (is_break) .{ .break_statement = label } else .{ .continue_statement = label });
}

/// `a: b: statement`, from the first label: the labels are active while the statement is
/// parsed, and are loop labels (which `continue` may name) when it is a loop.
fn labeledStatement(p: *Parser) Error!*Node {
    const first = p.labels.items.len;
    defer p.labels.items.len = first;
    var starts: std.ArrayList(u32) = .empty;
    while (p.token.kind == .identifier and (try p.peek()).kind == .colon) {
        const name = try p.bindingName();
        if (p.findLabel(name) != null) return p.failFmt(p.previous_start, "Label '{s}' has already been declared", .{name});
        try p.labels.append(p.arena, .{ .name = name, .loop = false });
        try starts.append(p.arena, p.previous_start);
        try p.expect(.colon);
    }
    const loop = p.isKeyword("for") or p.isKeyword("while") or p.isKeyword("do");
    for (p.labels.items[first..]) |*l| l.loop = loop;
    var node = try p.substatement();
    var i = p.labels.items.len;
    while (i > first) {
        i -= 1;
        node = try p.newNode(starts.items[i - first], .{ .labeled = .{ .label = p.labels.items[i].name, .body = node } });
    }
    return node;
}

fn findLabel(p: *const Parser, name: []const u8) ?ActiveLabel {
    for (p.labels.items[p.context.labels_start..]) |l| {
        if (std.mem.eql(u8, l.name, name)) return l;
    }
    return null;
}

fn throwStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    if (p.token.newline_before) return p.failAt(p.token.start, "Illegal newline after throw");
    const value = try p.parseExpression(false);
    try p.semicolon();
    return p.newNode(start, .{ .throw_statement = value });
}

fn tryStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    const body = try p.parseBlock();
    var parameter: ?*Node = null;
    var handler: ?*Node = null;
    var finalizer: ?*Node = null;
    if (p.isKeyword("catch")) {
        try p.advance();
        if (try p.eat(.l_paren)) {
            parameter = try p.bindingTarget();
            try p.expect(.r_paren);
        }
        handler = try p.parseBlock();
    }
    if (p.isKeyword("finally")) {
        try p.advance();
        finalizer = try p.parseBlock();
    }
    if (handler == null and finalizer == null) return p.failAt(p.token.start, "Missing catch or finally after try");
    return p.newNode(start, .{ .try_statement = .{
        .block = body,
        .parameter = parameter,
        .handler = handler,
        .finalizer = finalizer,
    } });
}

fn switchStatement(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    try p.expect(.l_paren);
    const discriminant = try p.parseExpression(false);
    try p.expect(.r_paren);
    try p.expect(.l_brace);
    p.context.breakable_depth += 1;
    defer p.context.breakable_depth -= 1;
    var cases: std.ArrayList(ast.Case) = .empty;
    var has_default = false;
    while (p.token.kind != .r_brace) {
        const case_start = p.token.start;
        var test_value: ?*Node = null;
        if (p.isKeyword("case")) {
            try p.advance();
            test_value = try p.parseExpression(false);
        } else if (p.isKeyword("default")) {
            if (has_default) return p.failAt(case_start, "More than one default clause in switch statement");
            has_default = true;
            try p.advance();
        } else return p.unexpected();
        try p.expect(.colon);
        var body: std.ArrayList(*Node) = .empty;
        while (p.token.kind != .r_brace and !p.isKeyword("case") and !p.isKeyword("default")) {
            if (p.token.kind == .eof) return p.unexpected();
            try body.append(p.arena, try p.parseStatement());
        }
        try cases.append(p.arena, .{ .test_value = test_value, .body = body.items, .pos = case_start });
    }
    try p.advance();
    return p.newNode(start, .{ .switch_statement = .{ .discriminant = discriminant, .cases = cases.items } });
}

fn exportDeclaration(p: *Parser) Error!*Node {
    const start = p.token.start;
    p.is_module = true;
    try p.advance();
    if (p.isKeyword("default")) {
        try p.advance();
        if (p.isKeyword("function")) {
            const f = try p.parseFunction(true, true);
            try p.exports.append(p.arena, .{ .name = "default", .local = f.name.?, .pos = start });
            return p.newNode(start, .{ .function_declaration = f });
        }
        if (p.isKeyword("class")) {
            const class = try p.parseClass(false);
            if (class.name == null) class.name = "*default*";
            try p.exports.append(p.arena, .{ .name = "default", .local = class.name.?, .pos = start });
            return p.newNode(start, .{ .class_declaration = class });
        }
        if (p.isIdentifierNamed("async")) {
            const next = try p.peek();
            if (next.kind == .keyword and std.mem.eql(u8, next.text, "function") and !next.newline_before) {
                const f = try p.parseFunctionOf(true, true, true);
                try p.exports.append(p.arena, .{ .name = "default", .local = f.name.?, .pos = start });
                return p.newNode(start, .{ .function_declaration = f });
            }
        }
        // `export default expression;` binds a hidden const.
        const value = try p.parseAssignment(false);
        try p.semicolon();
        const target = try p.identifierNode(start, "*default*");
        const declarators = try p.arena.alloc(ast.Declarator, 1);
        declarators[0] = .{ .target = target, .init = value };
        try p.exports.append(p.arena, .{ .name = "default", .local = "*default*", .pos = start });
        return p.newNode(start, .{ .declaration = .{ .kind = .@"const", .declarators = declarators } });
    }
    if (p.isKeyword("function")) {
        const f = try p.parseFunction(true, false);
        try p.exports.append(p.arena, .{ .name = f.name.?, .local = f.name.?, .pos = start });
        return p.newNode(start, .{ .function_declaration = f });
    }
    if (p.isKeyword("const") or p.isKeyword("var") or p.isIdentifierNamed("let")) {
        const kind: ast.DeclarationKind = if (p.isKeyword("const")) .@"const" else if (p.isKeyword("var")) .@"var" else .let;
        const node = try p.declarationStatement(kind);
        for (node.data.declaration.declarators) |declarator| try p.exportNames(declarator.target, start);
        return node;
    }
    if (p.token.kind == .l_brace) {
        try p.advance();
        var keyword_local = false;
        while (p.token.kind != .r_brace) {
            const local_token = p.token;
            if (local_token.kind != .identifier and local_token.kind != .keyword) return p.unexpected();
            // `export { default } from "m"` names a keyword; only a re-export may.
            if (local_token.kind == .keyword) keyword_local = true;
            try p.advance();
            var name = local_token.text;
            if (p.isIdentifierNamed("as")) {
                try p.advance();
                if (p.token.kind != .identifier and p.token.kind != .keyword) return p.unexpected();
                name = p.token.text;
                try p.advance();
            }
            try p.exports.append(p.arena, .{ .name = name, .local = local_token.text, .pos = local_token.start });
            if (!try p.eat(.comma)) break;
        }
        try p.expect(.r_brace);
        if (p.isIdentifierNamed("from")) return p.failAt(p.token.start, "import is not supported yet");
        if (keyword_local) return p.failAt(start, "Unexpected reserved word in export");
        try p.semicolon();
        return p.newNode(start, .empty_statement);
    }
    if (p.isKeyword("class")) {
        const class = try p.parseClass(true);
        try p.exports.append(p.arena, .{ .name = class.name.?, .local = class.name.?, .pos = start });
        return p.newNode(start, .{ .class_declaration = class });
    }
    if (p.token.kind == .star) return p.failAt(p.token.start, "import is not supported yet");
    return p.unexpected();
}

fn exportNames(p: *Parser, target: *Node, pos: u32) Error!void {
    switch (target.data) {
        .identifier => |id| try p.exports.append(p.arena, .{ .name = id.name, .local = id.name, .pos = pos }),
        .with_default => |d| try p.exportNames(d.target, pos),
        .array_pattern => |a| {
            for (a.elements) |e| if (e) |element| try p.exportNames(element, pos);
            if (a.rest) |r| try p.exportNames(r, pos);
        },
        .object_pattern => |o| {
            for (o.properties) |property| try p.exportNames(property.value, pos);
            if (o.rest) |r| try p.exportNames(r, pos);
        },
        else => unreachable, // Declaration targets only.
    }
}

// ---------------------------------------------------------------------------------------
// Functions.

/// `function name(params) { body }`, from the `function` keyword.
fn parseFunction(p: *Parser, is_declaration: bool, name_optional: bool) Error!*ast.Function {
    return p.parseFunctionOf(is_declaration, name_optional, false);
}

/// `async function` from `async`, or `function` from `function`.
fn parseFunctionOf(p: *Parser, is_declaration: bool, name_optional: bool, is_async: bool) Error!*ast.Function {
    const start = p.token.start;
    if (is_async) try p.advance();
    try p.advance();
    const generator = try p.eat(.star);
    var name: ?[]const u8 = null;
    if (p.token.kind == .identifier) {
        name = try p.bindingName();
    } else if (is_declaration and !name_optional) {
        return p.failAt(p.token.start, "Function statements require a function name");
    }
    if (is_declaration and name == null) name = "*default*";
    try p.expect(.l_paren);
    var parameters: std.ArrayList(ast.Parameter) = .empty;
    var rest: ?*Node = null;
    while (p.token.kind != .r_paren) {
        if (try p.eat(.ellipsis)) {
            rest = try p.bindingTarget();
            if (p.token.kind == .assign) return p.failAt(p.token.start, "Rest parameter may not have a default initializer");
            if (p.token.kind != .r_paren) return p.failAt(p.token.start, "Rest parameter must be last formal parameter");
            break;
        }
        const target = try p.bindingTarget();
        var default: ?*Node = null;
        if (try p.eat(.assign)) default = try p.parseAssignment(false);
        try parameters.append(p.arena, .{ .target = target, .default = default });
        if (!try p.eat(.comma)) break;
    }
    try p.expect(.r_paren);
    const flavor: Flavor = if (generator and is_async) .async_generator else if (generator) .generator else if (is_async) .async else .plain;
    const body = try p.functionBody(flavor);
    try p.checkDirectives(parameters.items, rest, body);
    const f = try p.arena.create(ast.Function);
    f.* = .{
        .name = name,
        .pos = start,
        .end = p.previous_end,
        .parameters = parameters.items,
        .rest = rest,
        .body = body,
        .is_arrow = false,
        .is_declaration = is_declaration,
        .kind = switch (flavor) {
            .plain => .normal,
            .generator => .generator,
            .async => .async_function,
            .async_generator => .async_generator,
        },
    };
    return f;
}

/// A "use strict" directive is an error in a function whose parameters are not all plain
/// names (everything is strict here anyway, but the rule is the language's).
fn checkDirectives(p: *Parser, parameters: []const ast.Parameter, rest: ?*Node, body: []const *Node) Error!void {
    var simple = rest == null;
    for (parameters) |param| {
        if (param.default != null or param.target.data != .identifier) simple = false;
    }
    if (simple) return;
    for (body) |statement| {
        if (statement.data != .expression_statement) return;
        const e = statement.data.expression_statement;
        if (e.data != .string or e.parenthesized) return;
        if (std.mem.eql(u8, e.data.string, "use strict")) {
            return p.failAt(statement.pos, "Illegal 'use strict' directive in function with non-simple parameter list");
        }
    }
}

fn functionBody(p: *Parser, flavor: Flavor) Error![]const *Node {
    const saved = p.context;
    p.context = .{
        .in_function = true,
        .in_generator = flavor == .generator or flavor == .async_generator,
        .in_async = flavor == .async or flavor == .async_generator,
        .labels_start = @intCast(p.labels.items.len),
    };
    defer p.context = saved;
    try p.expect(.l_brace);
    var body: std.ArrayList(*Node) = .empty;
    while (p.token.kind != .r_brace) {
        if (p.token.kind == .eof) return p.unexpected();
        try body.append(p.arena, try p.parseStatement());
    }
    try p.advance();
    return body.items;
}

/// The rest of an arrow function after its parameters, from the `=>`.
fn arrowFunction(p: *Parser, start: u32, parameters: []const ast.Parameter, rest: ?*Node) Error!*Node {
    return p.arrowFunctionOf(start, parameters, rest, false);
}

fn arrowFunctionOf(p: *Parser, start: u32, parameters: []const ast.Parameter, rest: ?*Node, is_async: bool) Error!*Node {
    if (p.token.newline_before) return p.unexpected();
    try p.expect(.arrow);
    var body: []const *Node = undefined;
    if (p.token.kind == .l_brace) {
        body = try p.functionBody(if (is_async) .async else .plain);
        try p.checkDirectives(parameters, rest, body);
    } else {
        const saved = p.context;
        p.context = .{ .in_function = true, .in_async = is_async, .labels_start = @intCast(p.labels.items.len) };
        defer p.context = saved;
        const value = try p.parseAssignment(false);
        const ret = try p.newNode(value.pos, .{ .return_statement = value });
        const items = try p.arena.alloc(*Node, 1);
        items[0] = ret;
        body = items;
    }
    const f = try p.arena.create(ast.Function);
    f.* = .{
        .name = null,
        .pos = start,
        .end = p.previous_end,
        .parameters = parameters,
        .rest = rest,
        .body = body,
        .is_arrow = true,
        .is_declaration = false,
        .kind = if (is_async) .async_function else .normal,
    };
    try p.checkParameterNames(f);
    return p.newNode(start, .{ .function = f });
}

/// Arrow parameters come from the cover grammar; their names were not checked as bindings.
fn checkParameterNames(p: *Parser, f: *const ast.Function) Error!void {
    for (f.parameters) |parameter| try p.checkBindingNames(parameter.target);
    if (f.rest) |r| try p.checkBindingNames(r);
}

fn checkBindingNames(p: *Parser, target: *const Node) Error!void {
    switch (target.data) {
        .identifier => |id| try p.checkIdentifier(.{ .kind = .identifier, .start = target.pos, .end = target.pos, .text = id.name }),
        .with_default => |d| try p.checkBindingNames(d.target),
        .array_pattern => |a| {
            for (a.elements) |e| if (e) |element| try p.checkBindingNames(element);
            if (a.rest) |r| try p.checkBindingNames(r);
        },
        .object_pattern => |o| {
            for (o.properties) |property| try p.checkBindingNames(property.value);
            if (o.rest) |r| try p.checkBindingNames(r);
        },
        else => return p.failAt(target.pos, "Invalid destructuring assignment target"),
    }
}

// ---------------------------------------------------------------------------------------
// Expressions.

fn parseExpression(p: *Parser, no_in: bool) Error!*Node {
    const start = p.token.start;
    const first = try p.parseAssignment(no_in);
    if (p.token.kind != .comma) return first;
    var items: std.ArrayList(*Node) = .empty;
    try items.append(p.arena, first);
    while (try p.eat(.comma)) try items.append(p.arena, try p.parseAssignment(no_in));
    return p.newNode(start, .{ .sequence = items.items });
}

fn assignmentOperator(kind: Kind) ?ast.BinaryOp {
    return switch (kind) {
        .plus_assign => .add,
        .minus_assign => .sub,
        .star_assign => .mul,
        .slash_assign => .div,
        .percent_assign => .mod,
        .star_star_assign => .pow,
        .shl_assign => .shl,
        .sar_assign => .sar,
        .shr_assign => .shr,
        .amp_assign => .bit_and,
        .pipe_assign => .bit_or,
        .caret_assign => .bit_xor,
        .amp_amp_assign => .and_,
        .pipe_pipe_assign => .or_,
        .question_question_assign => .nullish,
        else => null,
    };
}

fn parseAssignment(p: *Parser, no_in: bool) Error!*Node {
    try p.enter();
    defer p.leave();
    const start = p.token.start;
    // `x => ...`
    if (p.token.kind == .identifier) {
        const next = try p.peek();
        if (next.kind == .arrow and !next.newline_before) {
            // `async => ...` is an arrow whose parameter is named async, not an async arrow.
            const name = try p.bindingName();
            const parameters = try p.arena.alloc(ast.Parameter, 1);
            parameters[0] = .{ .target = try p.identifierNode(start, name), .default = null };
            return p.arrowFunction(start, parameters, null);
        }
        if (std.mem.eql(u8, p.token.text, "async") and !next.newline_before and !p.token.escaped) {
            if (next.kind == .identifier) {
                // `async x => ...`
                try p.advance();
                const name_start = p.token.start;
                const name = try p.bindingName();
                const parameters = try p.arena.alloc(ast.Parameter, 1);
                parameters[0] = .{ .target = try p.identifierNode(name_start, name), .default = null };
                return p.arrowFunctionOf(start, parameters, null, true);
            }
        }
        if (std.mem.eql(u8, p.token.text, "yield") and p.context.in_generator) return p.parseYield();
    }
    const lhs = try p.parseConditional(no_in);
    if (isBareArrow(lhs)) return lhs;
    const kind = p.token.kind;
    if (kind == .assign) {
        const target = p.toPattern(lhs, false) catch |err| switch (err) {
            error.SyntaxError => return p.failAt(lhs.pos, p.failure.?.message),
            else => return err,
        };
        try p.advance();
        const value = try p.parseAssignment(no_in);
        return p.newNode(start, .{ .assign = .{ .op = null, .target = target, .value = value } });
    }
    if (assignmentOperator(kind)) |op| {
        if (!isSimpleTarget(lhs)) return p.failAt(lhs.pos, "Invalid left-hand side in assignment");
        try p.advance();
        const value = try p.parseAssignment(no_in);
        return p.newNode(start, .{ .assign = .{ .op = op, .target = lhs, .value = value } });
    }
    return lhs;
}

/// An arrow function not in parentheses: its body took everything after it, so no operator
/// or call can follow it.
fn isBareArrow(node: *const Node) bool {
    return node.data == .function and node.data.function.is_arrow and !node.parenthesized;
}

fn isSimpleTarget(node: *const Node) bool {
    return switch (node.data) {
        .identifier => true,
        .member => |m| !m.optional,
        .index => |i| !i.optional,
        else => false,
    };
}

fn parseConditional(p: *Parser, no_in: bool) Error!*Node {
    const start = p.token.start;
    const condition = try p.parseBinary(0, no_in);
    if (isBareArrow(condition)) return condition;
    if (p.token.kind != .question) return condition;
    try p.advance();
    // The middle operand allows `in` even in a for head.
    const then = try p.parseAssignment(false);
    try p.expect(.colon);
    const otherwise = try p.parseAssignment(no_in);
    return p.newNode(start, .{ .conditional = .{ .condition = condition, .then = then, .otherwise = otherwise } });
}

const BinaryInfo = struct { precedence: u8, op: ast.BinaryOp };

fn binaryInfo(p: *const Parser, no_in: bool) ?BinaryInfo {
    const t = p.token;
    return switch (t.kind) {
        .question_question => .{ .precedence = 1, .op = .nullish },
        .pipe_pipe => .{ .precedence = 2, .op = .or_ },
        .amp_amp => .{ .precedence = 3, .op = .and_ },
        .pipe => .{ .precedence = 4, .op = .bit_or },
        .caret => .{ .precedence = 5, .op = .bit_xor },
        .amp => .{ .precedence = 6, .op = .bit_and },
        .eq => .{ .precedence = 7, .op = .eq },
        .ne => .{ .precedence = 7, .op = .ne },
        .strict_eq => .{ .precedence = 7, .op = .strict_eq },
        .strict_ne => .{ .precedence = 7, .op = .strict_ne },
        .lt => .{ .precedence = 8, .op = .lt },
        .gt => .{ .precedence = 8, .op = .gt },
        .le => .{ .precedence = 8, .op = .le },
        .ge => .{ .precedence = 8, .op = .ge },
        .keyword => if (std.mem.eql(u8, t.text, "instanceof"))
            .{ .precedence = 8, .op = .instanceof }
        else if (std.mem.eql(u8, t.text, "in") and !no_in)
            .{ .precedence = 8, .op = .in }
        else
            null,
        .shl => .{ .precedence = 9, .op = .shl },
        .sar => .{ .precedence = 9, .op = .sar },
        .shr => .{ .precedence = 9, .op = .shr },
        .plus => .{ .precedence = 10, .op = .add },
        .minus => .{ .precedence = 10, .op = .sub },
        .star => .{ .precedence = 11, .op = .mul },
        .slash => .{ .precedence = 11, .op = .div },
        .percent => .{ .precedence = 11, .op = .mod },
        .star_star => .{ .precedence = 12, .op = .pow },
        else => null,
    };
}

/// Precedence climbing over the binary operators with precedence above `min`.
fn parseBinary(p: *Parser, min: u8, no_in: bool) Error!*Node {
    try p.enter();
    defer p.leave();
    const start = p.token.start;
    var lhs = try p.parseUnary();
    if (isBareArrow(lhs)) return lhs;
    while (p.binaryInfo(no_in)) |info| {
        if (info.precedence <= min) break;
        const op_pos = p.token.start;
        try p.advance();
        if (info.op == .pow) {
            // `-2 ** 2` is an error: the operand of ** may not be a unary expression.
            if (lhs.data == .unary and !lhs.parenthesized) {
                return p.failAt(op_pos, "Unary operator used immediately before exponentiation expression. Parenthesis must be used to disambiguate operator precedence");
            }
            const rhs = try p.parseBinary(info.precedence - 1, no_in); // Right associative.
            if (isBareArrow(rhs)) return p.failAt(rhs.pos, "Malformed arrow function parameter list");
            lhs = try p.newNode(start, .{ .binary = .{ .op = .pow, .lhs = lhs, .rhs = rhs } });
            continue;
        }
        const rhs = try p.parseBinary(info.precedence, no_in);
        if (isBareArrow(rhs)) return p.failAt(rhs.pos, "Malformed arrow function parameter list");
        const logical = info.op == .and_ or info.op == .or_ or info.op == .nullish;
        if (logical) {
            // `??` does not mix with `&&` or `||` without parentheses.
            if (info.op == .nullish and (isUnparenthesizedLogical(lhs, .and_, .or_) or isUnparenthesizedLogical(rhs, .and_, .or_)) or
                (info.op != .nullish and (isUnparenthesizedLogical(lhs, .nullish, .nullish) or isUnparenthesizedLogical(rhs, .nullish, .nullish))))
            {
                return p.failAt(op_pos, "Unexpected token");
            }
            lhs = try p.newNode(start, .{ .logical = .{ .op = info.op, .lhs = lhs, .rhs = rhs } });
        } else {
            lhs = try p.newNode(start, .{ .binary = .{ .op = info.op, .lhs = lhs, .rhs = rhs } });
        }
    }
    return lhs;
}

fn isUnparenthesizedLogical(node: *const Node, a: ast.BinaryOp, b: ast.BinaryOp) bool {
    if (node.data != .logical or node.parenthesized) return false;
    const l = node.data.logical;
    return l.op == a or l.op == b;
}

fn parseUnary(p: *Parser) Error!*Node {
    try p.enter();
    defer p.leave();
    const t = p.token;
    const op: ?ast.UnaryOp = switch (t.kind) {
        .minus => .negate,
        .plus => .plus,
        .bang => .not,
        .tilde => .bit_not,
        .keyword => if (std.mem.eql(u8, t.text, "typeof"))
            .typeof
        else if (std.mem.eql(u8, t.text, "void"))
            .void
        else if (std.mem.eql(u8, t.text, "delete"))
            .delete
        else
            null,
        else => null,
    };
    if (op) |o| {
        try p.advance();
        const operand = try p.parseUnary();
        if (isBareArrow(operand)) return p.failAt(operand.pos, "Malformed arrow function parameter list");
        if (o == .delete and operand.data == .identifier) {
            return p.failAt(t.start, "Delete of an unqualified identifier in strict mode.");
        }
        return p.newNode(t.start, .{ .unary = .{ .op = o, .operand = operand } });
    }
    if (t.kind == .plus_plus or t.kind == .minus_minus) {
        try p.advance();
        const operand = try p.parseUnary();
        if (!isSimpleTarget(operand)) return p.failAt(operand.pos, "Invalid left-hand side expression in prefix operation");
        return p.newNode(t.start, .{ .update = .{ .increment = t.kind == .plus_plus, .prefix = true, .target = operand } });
    }
    if (t.kind == .identifier and std.mem.eql(u8, t.text, "await") and !t.escaped) {
        if (!p.context.in_async) return p.failAt(t.start, "await is only valid in async functions (top-level await is not supported)");
        try p.advance();
        const operand = try p.parseUnary();
        return p.newNode(t.start, .{ .yield_expression = .{ .argument = operand, .delegate = false, .is_await = true } });
    }
    const operand = try p.parsePostfix();
    return operand;
}

fn parsePostfix(p: *Parser) Error!*Node {
    const operand = try p.leftHandSide();
    if ((p.token.kind == .plus_plus or p.token.kind == .minus_minus) and !p.token.newline_before) {
        if (!isSimpleTarget(operand)) return p.failAt(operand.pos, "Invalid left-hand side expression in postfix operation");
        const increment = p.token.kind == .plus_plus;
        try p.advance();
        return p.newNode(operand.pos, .{ .update = .{ .increment = increment, .prefix = false, .target = operand } });
    }
    return operand;
}

/// Member accesses, calls and optional chains after a primary (or `new`) expression.
fn leftHandSide(p: *Parser) Error!*Node {
    const start = p.token.start;
    var node = if (p.isKeyword("new")) try p.newExpression() else try p.parsePrimary();
    if (isBareArrow(node)) return node;
    var in_chain = false;
    while (true) {
        switch (p.token.kind) {
            .dot => {
                try p.advance();
                node = try p.memberName(start, node, false);
            },
            .question_dot => {
                try p.advance();
                in_chain = true;
                switch (p.token.kind) {
                    .l_paren => node = try p.parseCall(start, node, true),
                    .l_bracket => node = try p.indexAccess(start, node, true),
                    .template_full, .template_head => return p.failAt(p.token.start, "Invalid tagged template on optional chain"),
                    else => node = try p.memberName(start, node, true),
                }
            },
            .l_bracket => node = try p.indexAccess(start, node, false),
            .l_paren => node = try p.parseCall(start, node, false),
            .template_full, .template_head => {
                if (in_chain) return p.failAt(p.token.start, "Invalid tagged template on optional chain");
                node = try p.taggedTemplate(start, node);
            },
            else => break,
        }
    }
    if (in_chain) node = try p.newNode(start, .{ .chain = node });
    return node;
}

fn memberName(p: *Parser, start: u32, object: *Node, optional: bool) Error!*Node {
    const t = p.token;
    if (t.kind == .private_name) {
        // `o.#x` reads the property keyed by the private name's hidden binding.
        try p.advance();
        const key = try p.identifierNode(t.start, t.text);
        return p.newNode(start, .{ .index = .{ .object = object, .key = key, .optional = optional } });
    }
    if (t.kind != .identifier and t.kind != .keyword) return p.unexpected();
    try p.advance();
    return p.newNode(start, .{ .member = .{ .object = object, .name = t.text, .name_pos = t.start, .optional = optional } });
}

fn indexAccess(p: *Parser, start: u32, object: *Node, optional: bool) Error!*Node {
    try p.expect(.l_bracket);
    const key = try p.parseExpression(false);
    try p.expect(.r_bracket);
    return p.newNode(start, .{ .index = .{ .object = object, .key = key, .optional = optional } });
}

fn parseCall(p: *Parser, start: u32, callee: *Node, optional: bool) Error!*Node {
    if (callee.data == .identifier and std.mem.eql(u8, callee.data.identifier.name, "async") and !optional) {
        const args = try p.parseArguments();
        if (p.token.kind == .arrow and !p.token.newline_before) return p.asyncArrow(start, args);
        return p.newNode(start, .{ .call = .{ .callee = callee, .arguments = args, .optional = optional } });
    }
    const args = try p.parseArguments();
    return p.newNode(start, .{ .call = .{ .callee = callee, .arguments = args, .optional = optional } });
}

/// `async (a, b = 1, ...rest) => body`: the call's arguments become the parameters.
fn asyncArrow(p: *Parser, start: u32, args: []const *Node) Error!*Node {
    var parameters: std.ArrayList(ast.Parameter) = .empty;
    var rest: ?*Node = null;
    for (args, 0..) |item, i| {
        if (item.data == .spread) {
            if (i + 1 != args.len) return p.failAt(item.pos, "Rest parameter must be last formal parameter");
            rest = try p.toPattern(item.data.spread, true);
        } else if (item.data == .assign and item.data.assign.op == null) {
            const target = try p.toPattern(item.data.assign.target, true);
            try parameters.append(p.arena, .{ .target = target, .default = item.data.assign.value });
        } else {
            try parameters.append(p.arena, .{ .target = try p.toPattern(item, true), .default = null });
        }
    }
    return p.arrowFunctionOf(start, parameters.items, rest, true);
}

fn parseArguments(p: *Parser) Error![]const *Node {
    try p.expect(.l_paren);
    var args: std.ArrayList(*Node) = .empty;
    while (p.token.kind != .r_paren) {
        const arg_start = p.token.start;
        if (try p.eat(.ellipsis)) {
            const value = try p.parseAssignment(false);
            try args.append(p.arena, try p.newNode(arg_start, .{ .spread = value }));
        } else {
            try args.append(p.arena, try p.parseAssignment(false));
        }
        if (p.token.kind != .r_paren) {
            // V8 points at the last token of the argument.
            if (p.token.kind != .comma) return p.failAt(p.previous_start, "missing ) after argument list");
            try p.advance();
        }
    }
    try p.advance();
    if (args.items.len > 255) return p.failAt(p.previous_end, "too many arguments in a call (at most 255)");
    return args.items;
}

fn newExpression(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    if (p.token.kind == .dot) {
        try p.advance();
        if (!p.isIdentifierNamed("target")) return p.unexpected();
        try p.advance();
        return p.identifierNode(start, "new.target");
    }
    const callee_start = p.token.start;
    var callee = if (p.isKeyword("new")) try p.newExpression() else try p.parsePrimary();
    while (true) {
        switch (p.token.kind) {
            .dot => {
                try p.advance();
                callee = try p.memberName(callee_start, callee, false);
            },
            .l_bracket => callee = try p.indexAccess(callee_start, callee, false),
            // `new tag`x`` constructs what the tag returns.
            .template_full, .template_head => callee = try p.taggedTemplate(callee_start, callee),
            .question_dot => return p.failAt(p.token.start, "Invalid optional chain from new expression"),
            else => break,
        }
    }
    const args: []const *Node = if (p.token.kind == .l_paren) try p.parseArguments() else &.{};
    return p.newNode(start, .{ .new = .{ .callee = callee, .arguments = args } });
}

fn parsePrimary(p: *Parser) Error!*Node {
    try p.enter();
    defer p.leave();
    const t = p.token;
    if (t.kind == .identifier and !t.escaped and std.mem.eql(u8, t.text, "async")) {
        const next = try p.peek();
        if (next.kind == .keyword and std.mem.eql(u8, next.text, "function") and !next.newline_before) {
            const f = try p.parseFunctionOf(false, false, true);
            return p.newNode(t.start, .{ .function = f });
        }
    }
    switch (t.kind) {
        .number => {
            try p.advance();
            return p.newNode(t.start, .{ .number = t.number });
        },
        .string => {
            try p.advance();
            return p.newNode(t.start, .{ .string = t.text });
        },
        .template_full, .template_head => return p.parseTemplate(),
        .identifier => {
            try p.checkIdentifierReference(t);
            try p.advance();
            return p.identifierNode(t.start, t.text);
        },
        .l_paren => return p.parenthesized(),
        .l_bracket => return p.arrayLiteral(),
        .l_brace => return p.objectLiteral(),
        .slash, .slash_assign => return p.regExpLiteral(t.start),
        .private_name => {
            // `#x in o`, the only place a private name stands alone.
            try p.advance();
            if (!p.isKeyword("in")) return p.failAt(t.start, "Unexpected private field");
            return p.identifierNode(t.start, t.text);
        },
        .hash => return p.unexpected(),
        .at => return p.failAt(t.start, "decorators are not supported"),
        .keyword => {
            const word = t.text;
            if (std.mem.eql(u8, word, "function")) {
                const f = try p.parseFunction(false, false);
                return p.newNode(t.start, .{ .function = f });
            }
            if (std.mem.eql(u8, word, "true")) {
                try p.advance();
                return p.newNode(t.start, .true_literal);
            }
            if (std.mem.eql(u8, word, "false")) {
                try p.advance();
                return p.newNode(t.start, .false_literal);
            }
            if (std.mem.eql(u8, word, "null")) {
                try p.advance();
                return p.newNode(t.start, .null_literal);
            }
            if (std.mem.eql(u8, word, "this")) {
                try p.advance();
                return p.identifierNode(t.start, "this");
            }
            if (std.mem.eql(u8, word, "class")) {
                const class = try p.parseClass(false);
                return p.newNode(t.start, .{ .class = class });
            }
            if (std.mem.eql(u8, word, "super")) return p.parseSuper();
            if (std.mem.eql(u8, word, "import")) return p.failAt(t.start, "import is not supported yet");
            return p.unexpected();
        },
        else => return p.unexpected(),
    }
}

fn checkIdentifierReference(p: *Parser, t: Token) Error!void {
    if (t.escaped and Lexer.isKeyword(t.text)) return p.failAt(t.start, "Keyword must not contain escaped characters");
    if (std.mem.eql(u8, t.text, "yield")) {
        if (p.context.in_generator) return p.failAt(t.start, "Yield expression not allowed in formal parameter");
        return p.failAt(t.start, "Unexpected strict mode reserved word");
    }
    if (isStrictReserved(t.text)) return p.failAt(t.start, "Unexpected strict mode reserved word");
    if (std.mem.eql(u8, t.text, "await")) return p.failAt(t.start, "await is not supported (async functions are outside the language)");
}

/// `yield`, `yield value` or `yield* iterable`, in a generator's body.
fn parseYield(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    var delegate = false;
    var argument: ?*Node = null;
    if (!p.token.newline_before) {
        if (try p.eat(.star)) {
            delegate = true;
            argument = try p.parseAssignment(false);
        } else switch (p.token.kind) {
            .r_paren, .r_bracket, .r_brace, .comma, .semicolon, .colon, .eof => {},
            else => if (!(p.token.kind == .identifier and std.mem.eql(u8, p.token.text, "in"))) {
                argument = try p.parseAssignment(false);
            },
        }
    }
    return p.newNode(start, .{ .yield_expression = .{ .argument = argument, .delegate = delegate } });
}

/// `/pattern/flags`, where an expression starts. The pattern is compiled here too, so that a
/// malformed one, or one that uses a refused feature, is an error at its line and column,
/// as node reports a literal's SyntaxError before running anything.
fn regExpLiteral(p: *Parser, start: u32) Error!*Node {
    const source = p.lexer.source;
    var i: usize = start + 1;
    var in_class = false;
    while (true) : (i += 1) {
        if (i >= source.len or source[i] == '\n' or source[i] == '\r') {
            return p.failAt(start, "Invalid regular expression: missing /");
        }
        switch (source[i]) {
            '\\' => {
                i += 1;
                if (i >= source.len or source[i] == '\n' or source[i] == '\r') {
                    return p.failAt(start, "Invalid regular expression: missing /");
                }
            },
            '[' => in_class = true,
            ']' => in_class = false,
            '/' => if (!in_class) break,
            else => {},
        }
    }
    const pattern = source[start + 1 .. i];
    var end = i + 1;
    while (end < source.len and (std.ascii.isAlphanumeric(source[end]) or source[end] == '_' or source[end] == '$')) end += 1;
    const flags_text = source[i + 1 .. end];
    const flags = regexp.Flags.parse(flags_text) orelse
        return p.failAt(@intCast(i + 1), "Invalid regular expression flags");
    const units = std.unicode.wtf8ToWtf16LeAlloc(p.arena, pattern) catch
        return p.failAt(start, "Invalid regular expression: the pattern is not valid UTF-8");
    var failure: regexp.Failure = .{ .message = "" };
    _ = regexp.compile(p.arena, units, flags, &failure) catch |err| switch (err) {
        error.SyntaxError => return p.failFmt(start, "Invalid regular expression: /{s}/{s}: {s}", .{ pattern, flags_text, failure.message }),
        error.OutOfMemory => return error.OutOfMemory,
    };
    p.lexer.pos = @intCast(end);
    try p.advance();
    return p.newNode(start, .{ .regexp = .{ .pattern = pattern, .flags = flags_text } });
}

fn parseTemplate(p: *Parser) Error!*Node {
    return p.parseTemplateRaw(null);
}

/// A template literal; with `raw`, each piece's source text is appended to it too.
fn parseTemplateRaw(p: *Parser, raw: ?*std.ArrayList([]const u8)) Error!*Node {
    const start = p.token.start;
    var quasis: std.ArrayList([]const u8) = .empty;
    var expressions: std.ArrayList(*Node) = .empty;
    try quasis.append(p.arena, p.token.text);
    if (raw) |r| try r.append(p.arena, try p.rawPiece(p.token));
    if (p.token.kind == .template_full) {
        try p.advance();
        return p.newNode(start, .{ .template = .{ .quasis = quasis.items, .expressions = expressions.items } });
    }
    try p.advance();
    while (true) {
        try expressions.append(p.arena, try p.parseExpression(false));
        if (p.token.kind != .r_brace) return p.unexpected();
        const piece = p.lexer.templateContinuation(p.token) catch |err| return p.lexerError(err);
        try quasis.append(p.arena, piece.text);
        if (raw) |r| try r.append(p.arena, try p.rawPiece(piece));
        p.token = piece;
        try p.advance();
        if (piece.kind == .template_tail) break;
    }
    return p.newNode(start, .{ .template = .{ .quasis = quasis.items, .expressions = expressions.items } });
}

/// The source text of a template piece between its delimiters, CR and CRLF read as LF.
fn rawPiece(p: *Parser, t: Token) Error![]const u8 {
    const last = t.kind == .template_full or t.kind == .template_tail;
    const piece = p.lexer.source[t.start + 1 .. t.end - @as(u32, if (last) 1 else 2)];
    if (std.mem.indexOfScalar(u8, piece, '\r') == null) return piece;
    var out: std.ArrayList(u8) = try .initCapacity(p.arena, piece.len);
    var i: usize = 0;
    while (i < piece.len) : (i += 1) {
        if (piece[i] != '\r') {
            out.appendAssumeCapacity(piece[i]);
            continue;
        }
        out.appendAssumeCapacity('\n');
        if (i + 1 < piece.len and piece[i + 1] == '\n') i += 1;
    }
    return out.items;
}

/// `` tag`a${x}b` ``: a call of the tag (a method call when it is a member) with the site's
/// strings object and the substitutions.
fn taggedTemplate(p: *Parser, start: u32, tag: *Node) Error!*Node {
    const site_pos = p.token.start;
    var raw: std.ArrayList([]const u8) = .empty;
    const literal = try p.parseTemplateRaw(&raw);
    const t = literal.data.template;
    assert(raw.items.len == t.quasis.len);
    const site = try p.arena.create(ast.TemplateObject);
    site.* = .{ .cooked = t.quasis, .raw = raw.items, .pos = site_pos };
    const arguments = try p.arena.alloc(*Node, t.expressions.len + 1);
    arguments[0] = try p.newNode(site_pos, .{ .template_object = site });
    @memcpy(arguments[1..], t.expressions);
    return p.newNode(start, .{ .call = .{ .callee = tag, .arguments = arguments } });
}

/// `( ... )`: a parenthesised expression, or the parameters of an arrow function.
fn parenthesized(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    var items: std.ArrayList(*Node) = .empty;
    var rest: ?*Node = null;
    var trailing_comma = false;
    while (p.token.kind != .r_paren) {
        if (p.token.kind == .ellipsis) {
            try p.advance();
            rest = try p.bindingTarget();
            if (p.token.kind != .r_paren) return p.failAt(p.token.start, "Rest parameter must be last formal parameter");
            break;
        }
        try items.append(p.arena, try p.parseAssignment(false));
        trailing_comma = false;
        if (p.token.kind == .comma) {
            try p.advance();
            trailing_comma = true;
        } else if (p.token.kind != .r_paren) {
            return p.unexpected();
        }
    }
    try p.advance();
    if (p.token.kind == .arrow and !p.token.newline_before) {
        var parameters: std.ArrayList(ast.Parameter) = .empty;
        for (items.items) |item| {
            if (item.data == .assign and item.data.assign.op == null) {
                const target = try p.toPattern(item.data.assign.target, true);
                try parameters.append(p.arena, .{ .target = target, .default = item.data.assign.value });
            } else {
                try parameters.append(p.arena, .{ .target = try p.toPattern(item, true), .default = null });
            }
        }
        return p.arrowFunction(start, parameters.items, rest);
    }
    if (rest != null or items.items.len == 0 or trailing_comma) {
        if (p.token.kind == .arrow) return p.unexpected();
        return p.failAt(p.token.start, if (items.items.len == 0) "Unexpected token ')'" else "Unexpected token '...'");
    }
    if (items.items.len == 1) {
        const inner = items.items[0];
        inner.parenthesized = true;
        return inner;
    }
    const sequence = try p.newNode(items.items[0].pos, .{ .sequence = items.items });
    sequence.parenthesized = true;
    return sequence;
}

fn arrayLiteral(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    var elements: std.ArrayList(*Node) = .empty;
    var comma_after_spread = false;
    while (p.token.kind != .r_bracket) {
        const element_start = p.token.start;
        if (p.token.kind == .comma) {
            try p.advance();
            try elements.append(p.arena, try p.newNode(element_start, .hole));
            continue;
        }
        var spread = false;
        if (try p.eat(.ellipsis)) {
            const value = try p.parseAssignment(false);
            try elements.append(p.arena, try p.newNode(element_start, .{ .spread = value }));
            spread = true;
        } else {
            try elements.append(p.arena, try p.parseAssignment(false));
        }
        if (p.token.kind != .r_bracket) {
            try p.expect(.comma);
            if (spread and p.token.kind == .r_bracket) comma_after_spread = true;
        }
    }
    try p.advance();
    const node = try p.newNode(start, .{ .array = elements.items });
    if (comma_after_spread) try p.comma_after_spread.put(p.arena, node, {});
    return node;
}

fn objectLiteral(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    var properties: std.ArrayList(ast.Property) = .empty;
    // `{ ...rest, }` is a fine literal but not a pattern: remembered for toPattern.
    var comma_after_spread = false;
    while (p.token.kind != .r_brace) {
        const property = try p.parseProperty();
        try properties.append(p.arena, property);
        if (p.token.kind != .r_brace) {
            try p.expect(.comma);
            if (property.kind == .spread and p.token.kind == .r_brace) comma_after_spread = true;
        }
    }
    try p.advance();
    const node = try p.newNode(start, .{ .object = properties.items });
    if (comma_after_spread) try p.comma_after_spread.put(p.arena, node, {});
    return node;
}

fn parseProperty(p: *Parser) Error!ast.Property {
    const t = p.token;
    if (try p.eat(.ellipsis)) {
        const value = try p.parseAssignment(false);
        return .{ .kind = .spread, .key = .{ .static = "" }, .value = value, .pos = t.start };
    }
    if (t.kind == .star) {
        try p.advance();
        const key = try p.propertyKey();
        const f = try p.methodFunctionOf(t.start, key, .generator);
        return .{ .kind = .method, .key = key, .value = try p.newNode(t.start, .{ .function = f }), .pos = t.start };
    }
    if (t.kind == .identifier and !t.escaped and
        (std.mem.eql(u8, t.text, "get") or std.mem.eql(u8, t.text, "set") or std.mem.eql(u8, t.text, "async")))
    {
        const next = try p.peek();
        const is_key_start = switch (next.kind) {
            .identifier, .keyword, .string, .number, .l_bracket, .star => true,
            else => false,
        };
        if (is_key_start) {
            if (std.mem.eql(u8, t.text, "async")) {
                try p.advance();
                const generator = try p.eat(.star);
                const key = try p.propertyKey();
                const f = try p.methodFunctionOf(t.start, key, if (generator) .async_generator else .async);
                return .{ .kind = .method, .key = key, .value = try p.newNode(t.start, .{ .function = f }), .pos = t.start };
            }
            const is_getter = std.mem.eql(u8, t.text, "get");
            try p.advance();
            if (p.token.kind == .star) return p.failAt(p.token.start, "generators are not supported");
            const key = try p.propertyKey();
            const f = try p.methodFunction(t.start, key);
            try p.checkAccessorArity(f, is_getter);
            f.name = if (key == .static) try std.fmt.allocPrint(p.arena, "{s} {s}", .{ t.text, key.static }) else null;
            return .{ .kind = if (is_getter) .getter else .setter, .key = key, .value = try p.newNode(t.start, .{ .function = f }), .pos = t.start };
        }
    }
    const key = try p.propertyKey();
    switch (p.token.kind) {
        .colon => {
            try p.advance();
            const value = try p.parseAssignment(false);
            return .{ .kind = .init, .key = key, .value = value, .pos = t.start };
        },
        .l_paren => {
            // A method: a function that cannot refer to `this`, like any other.
            const f = try p.methodFunction(t.start, key);
            return .{ .kind = .method, .key = key, .value = try p.newNode(t.start, .{ .function = f }), .pos = t.start };
        },
        else => {
            // Shorthand: `{ a }`, or `{ a = 1 }` as a pattern.
            if (t.kind != .identifier) return p.unexpected();
            try p.checkIdentifierReference(t);
            const value = try p.identifierNode(t.start, t.text);
            var default: ?*Node = null;
            if (p.token.kind == .assign) {
                try p.advance();
                default = try p.parseAssignment(false);
            }
            return .{ .kind = .shorthand, .key = key, .value = value, .shorthand_default = default, .pos = t.start };
        },
    }
}

fn methodFunction(p: *Parser, start: u32, key: ast.Key) Error!*ast.Function {
    return p.methodFunctionOf(start, key, .plain);
}

fn methodFunctionOf(p: *Parser, start: u32, key: ast.Key, flavor: Flavor) Error!*ast.Function {
    try p.expect(.l_paren);
    var parameters: std.ArrayList(ast.Parameter) = .empty;
    var rest: ?*Node = null;
    while (p.token.kind != .r_paren) {
        if (try p.eat(.ellipsis)) {
            rest = try p.bindingTarget();
            if (p.token.kind != .r_paren) return p.failAt(p.token.start, "Rest parameter must be last formal parameter");
            break;
        }
        const target = try p.bindingTarget();
        var default: ?*Node = null;
        if (try p.eat(.assign)) default = try p.parseAssignment(false);
        try parameters.append(p.arena, .{ .target = target, .default = default });
        if (!try p.eat(.comma)) break;
    }
    try p.expect(.r_paren);
    const body = try p.functionBody(flavor);
    try p.checkDirectives(parameters.items, rest, body);
    const f = try p.arena.create(ast.Function);
    f.* = .{
        .name = if (key == .static) key.static else null,
        .pos = start,
        .end = p.previous_end,
        .parameters = parameters.items,
        .rest = rest,
        .body = body,
        // No own name binding, and a `this`.
        .is_arrow = false,
        .is_declaration = false,
        .kind = switch (flavor) {
            .plain => .method,
            .generator => .generator_method,
            .async => .async_method,
            .async_generator => .async_generator_method,
        },
    };
    return f;
}

fn checkAccessorArity(p: *Parser, f: *const ast.Function, is_getter: bool) Error!void {
    if (is_getter and (f.parameters.len != 0 or f.rest != null)) return p.failAt(f.pos, "Getter must not have any formal parameters.");
    if (!is_getter and (f.parameters.len != 1 or f.rest != null)) return p.failAt(f.pos, "Setter must have exactly one formal parameter.");
}

/// `super(...)`, `super.name` or `super[key]`; where each may appear is the resolver's
/// business.
fn parseSuper(p: *Parser) Error!*Node {
    const start = p.token.start;
    try p.advance();
    switch (p.token.kind) {
        .l_paren => {
            const args = try p.parseArguments();
            return p.newNode(start, .{ .super_call = .{ .callee = try p.identifierNode(start, "super"), .arguments = args } });
        },
        .dot => {
            try p.advance();
            const t = p.token;
            if (t.kind == .private_name) return p.failAt(t.start, "Unexpected private field");
            if (t.kind != .identifier and t.kind != .keyword) return p.unexpected();
            try p.advance();
            const key = try p.newNode(t.start, .{ .string = t.text });
            return p.newNode(start, .{ .super_member = key });
        },
        .l_bracket => {
            try p.advance();
            const key = try p.parseExpression(false);
            try p.expect(.r_bracket);
            return p.newNode(start, .{ .super_member = key });
        },
        else => return p.failAt(start, "'super' keyword unexpected here"),
    }
}

/// `class Name extends Base { ... }`, from the `class` keyword. Fields become the body of a
/// method that each new instance runs; static fields and blocks, of one the class runs once.
fn parseClass(p: *Parser, name_required: bool) Error!*ast.Class {
    const start = p.token.start;
    try p.advance();
    var name: ?[]const u8 = null;
    if (p.token.kind == .identifier) {
        name = try p.bindingName();
    } else if (name_required) {
        return p.failAt(p.token.start, "Unexpected token");
    }
    var heritage: ?*Node = null;
    if (p.isKeyword("extends")) {
        try p.advance();
        heritage = try p.leftHandSide();
    }
    try p.expect(.l_brace);
    var members: std.ArrayList(ast.ClassMember) = .empty;
    var fields: std.ArrayList(*Node) = .empty;
    var statics: std.ArrayList(*Node) = .empty;
    var constructor: ?*ast.Function = null;
    var private_names: std.ArrayList([]const u8) = .empty;
    var computed_keys: std.ArrayList(ast.ComputedFieldKey) = .empty;
    while (p.token.kind != .r_brace) {
        if (p.token.kind == .eof) return p.unexpected();
        if (try p.eat(.semicolon)) continue;
        try p.classElement(.{
            .members = &members,
            .fields = &fields,
            .statics = &statics,
            .constructor = &constructor,
            .private_names = &private_names,
            .computed_keys = &computed_keys,
        }, heritage != null);
    }
    try p.advance();
    const class = try p.arena.create(ast.Class);
    class.* = .{
        .name = name,
        .pos = start,
        .heritage = heritage,
        .constructor = constructor orelse try p.defaultConstructor(start, heritage != null),
        .members = members.items,
        .fields = if (fields.items.len > 0) try p.initializerMethod(start, fields.items) else null,
        .statics = if (statics.items.len > 0) try p.initializerMethod(start, statics.items) else null,
        .private_names = private_names.items,
        .computed_field_keys = computed_keys.items,
    };
    class.constructor.name = name;
    class.constructor.end = p.previous_end;
    class.constructor.pos = start;
    return class;
}

/// What a class body collects while its elements are parsed.
const ClassParts = struct {
    members: *std.ArrayList(ast.ClassMember),
    fields: *std.ArrayList(*Node),
    statics: *std.ArrayList(*Node),
    constructor: *?*ast.Function,
    private_names: *std.ArrayList([]const u8),
    computed_keys: *std.ArrayList(ast.ComputedFieldKey),
};

fn classElement(p: *Parser, parts: ClassParts, derived: bool) Error!void {
    const members = parts.members;
    const fields = parts.fields;
    const statics = parts.statics;
    const constructor = parts.constructor;
    const private_names = parts.private_names;
    const t = p.token;
    var is_static = false;
    if (t.kind == .identifier and !t.escaped and std.mem.eql(u8, t.text, "static")) {
        const next = try p.peek();
        if (next.kind != .l_paren and next.kind != .assign and next.kind != .semicolon and next.kind != .r_brace) {
            try p.advance();
            is_static = true;
            if (p.token.kind == .l_brace) {
                // A static block is a function body of its own: the loops, switches and
                // labels around the class are not its to leave, and it has no `return`.
                const saved = p.context;
                p.context = .{ .labels_start = @intCast(p.labels.items.len) };
                defer p.context = saved;
                const block = try p.parseBlock();
                try statics.append(p.arena, block);
                return;
            }
        }
    }
    var kind: ast.ClassMemberKind = .method;
    const k = p.token;
    var is_async = false;
    var async_generator = false;
    const generator = try p.eat(.star);
    if (!generator and k.kind == .identifier and !k.escaped and (std.mem.eql(u8, k.text, "get") or std.mem.eql(u8, k.text, "set") or std.mem.eql(u8, k.text, "async"))) {
        const next = try p.peek();
        const is_key_start = switch (next.kind) {
            .identifier, .keyword, .string, .number, .l_bracket, .star, .private_name => !next.newline_before or std.mem.eql(u8, k.text, "get") or std.mem.eql(u8, k.text, "set"),
            else => false,
        };
        if (is_key_start) {
            try p.advance();
            if (std.mem.eql(u8, k.text, "async")) {
                is_async = true;
                if (try p.eat(.star)) async_generator = true;
            } else {
                kind = if (std.mem.eql(u8, k.text, "get")) .getter else .setter;
            }
        }
    }
    if (p.token.kind == .private_name) {
        const flavor: Flavor = if (async_generator) .async_generator else if (generator) .generator else if (is_async) .async else .plain;
        return p.privateElement(kind, flavor, is_static, fields, statics, private_names);
    }
    const key = try p.propertyKey();
    if (p.token.kind != .l_paren) {
        if (kind != .method or generator or is_async) return p.unexpected();
        // A field: `name = value;` or `name;`.
        if (key == .static and std.mem.eql(u8, key.static, "constructor")) return p.failAt(k.start, "Classes may not have a field named 'constructor'");
        var value: ?*Node = null;
        if (try p.eat(.assign)) value = try p.parseAssignment(false);
        try p.semicolon();
        const key_node = switch (key) {
            .static => |name| try p.newNode(k.start, .{ .string = name }),
            .computed => |expression| try p.computedFieldKey(parts.computed_keys, expression, k.start),
        };
        const field = try p.newNode(k.start, .{ .field_definition = .{ .key = key_node, .value = value, .pos = k.start } });
        try (if (is_static) statics else fields).append(p.arena, field);
        return;
    }
    const f = try p.methodFunctionOf(k.start, key, if (async_generator) .async_generator else if (generator) .generator else if (is_async) .async else .plain);
    if (kind != .method) {
        try p.checkAccessorArity(f, kind == .getter);
        if (key == .static) f.name = try std.fmt.allocPrint(p.arena, "{s} {s}", .{ if (kind == .getter) "get" else "set", key.static });
    }
    const is_constructor = !is_static and key == .static and std.mem.eql(u8, key.static, "constructor");
    if (is_constructor) {
        if (kind != .method) return p.failAt(k.start, "Class constructor may not be an accessor");
        if (constructor.* != null) return p.failAt(k.start, "A class may only have one constructor");
        f.kind = if (derived) .derived_constructor else .base_constructor;
        constructor.* = f;
        return;
    }
    if (is_static and key == .static and std.mem.eql(u8, key.static, "prototype")) {
        return p.failAt(k.start, "Classes may not have a static property named 'prototype'");
    }
    try members.append(p.arena, .{ .kind = kind, .is_static = is_static, .key = key, .function = f, .pos = k.start });
}

/// `[k] = v`: the key is evaluated with the class (ES 15.7.14, in order with the other
/// computed keys), into a hidden binding that the field's definition reads on each instance.
fn computedFieldKey(p: *Parser, keys: *std.ArrayList(ast.ComputedFieldKey), expression: *Node, pos: u32) Error!*Node {
    const name = try std.fmt.allocPrint(p.arena, "%key{d}", .{pos});
    try keys.append(p.arena, .{ .name = name, .expression = expression, .pos = pos });
    return p.identifierNode(pos, name);
}

/// A private field, method or accessor (`#x = 1`, `#m() {}`, `get #x() {}`): defined on
/// each instance with the fields (on the class, for a static one).
fn privateElement(
    p: *Parser,
    kind: ast.ClassMemberKind,
    flavor: Flavor,
    is_static: bool,
    fields: *std.ArrayList(*Node),
    statics: *std.ArrayList(*Node),
    private_names: *std.ArrayList([]const u8),
) Error!void {
    const t = p.token;
    const name = t.text;
    try p.advance();
    if (std.mem.eql(u8, name, "#constructor")) return p.failAt(t.start, "Classes may not have a private field named '#constructor'");
    try p.declarePrivate(private_names, name);
    const key = try p.identifierNode(t.start, name);
    var definition: ast.FieldDefinition = .{ .key = key, .value = null, .pos = t.start };
    if (p.token.kind == .l_paren) {
        const f = try p.methodFunctionOf(t.start, .{ .static = name }, flavor);
        definition.kind = switch (kind) {
            .method => .method,
            .getter => .getter,
            .setter => .setter,
        };
        if (kind != .method) {
            try p.checkAccessorArity(f, kind == .getter);
            f.name = try std.fmt.allocPrint(p.arena, "{s} {s}", .{ if (kind == .getter) "get" else "set", name });
        }
        definition.value = try p.newNode(t.start, .{ .function = f });
    } else {
        if (kind != .method or flavor != .plain) return p.unexpected();
        if (try p.eat(.assign)) definition.value = try p.parseAssignment(false);
        try p.semicolon();
    }
    const node = try p.newNode(t.start, .{ .field_definition = definition });
    // Private methods and accessors come before the fields, as the spec installs them.
    const list = if (is_static) statics else fields;
    if (definition.kind == .field) try list.append(p.arena, node) else try list.insert(p.arena, 0, node);
}

/// Records a private name once (a getter and a setter share theirs).
fn declarePrivate(p: *Parser, private_names: *std.ArrayList([]const u8), name: []const u8) Error!void {
    for (private_names.items) |existing| {
        if (std.mem.eql(u8, existing, name)) return;
    }
    try private_names.append(p.arena, name);
}

/// The constructor a class without one has: `constructor() {}`, or for a derived class
/// `constructor(...args) { super(...args); }`.
fn defaultConstructor(p: *Parser, pos: u32, derived: bool) Error!*ast.Function {
    if (!derived) {
        const f = try p.syntheticMethod(pos, &.{});
        f.kind = .base_constructor;
        return f;
    }
    const args_name = "*args*";
    const spread = try p.newNode(pos, .{ .spread = try p.identifierNode(pos, args_name) });
    const args = try p.arena.alloc(*Node, 1);
    args[0] = spread;
    const call = try p.newNode(pos, .{ .super_call = .{ .callee = try p.identifierNode(pos, "super"), .arguments = args } });
    const statements = try p.arena.alloc(*Node, 1);
    statements[0] = try p.newNode(pos, .{ .expression_statement = call });
    const f = try p.syntheticMethod(pos, statements);
    f.kind = .derived_constructor;
    f.rest = try p.identifierNode(pos, args_name);
    return f;
}

/// The method that runs a class's field initialisers (or its static ones and blocks).
fn initializerMethod(p: *Parser, pos: u32, body: []const *Node) Error!*ast.Function {
    const f = try p.syntheticMethod(pos, body);
    f.is_class_initializer = true;
    return f;
}

/// A method with no parameters around the given statements (fields' initialisers).
fn syntheticMethod(p: *Parser, pos: u32, body: []const *Node) Error!*ast.Function {
    const f = try p.arena.create(ast.Function);
    f.* = .{
        .name = null,
        .pos = pos,
        .end = pos,
        .parameters = &.{},
        .rest = null,
        .body = body,
        .is_arrow = false,
        .is_declaration = false,
        .kind = .method,
    };
    return f;
}

fn propertyKey(p: *Parser) Error!ast.Key {
    const t = p.token;
    switch (t.kind) {
        .identifier, .keyword => {
            try p.advance();
            return .{ .static = t.text };
        },
        .string => {
            try p.advance();
            return .{ .static = t.text };
        },
        .number => {
            try p.advance();
            var buf: [number.format_bytes_max]u8 = undefined;
            return .{ .static = try p.arena.dupe(u8, number.format(&buf, t.number)) };
        },
        .l_bracket => {
            try p.advance();
            const key = try p.parseAssignment(false);
            try p.expect(.r_bracket);
            return .{ .computed = key };
        },
        .private_name => return p.failFmt(t.start, "Unexpected identifier '{s}'", .{p.text(t)}),
        else => return p.unexpected(),
    }
}

// ---------------------------------------------------------------------------------------
// Patterns from the cover grammar.

/// Reinterprets an expression as an assignment or binding target. `binding` targets (in
/// declarations and parameters) may only contain identifiers; assignment targets may also
/// contain member accesses.
fn toPattern(p: *Parser, node: *Node, binding: bool) Error!*Node {
    if (node.parenthesized) {
        // `(a) = 1` and `[(a.b)] = c` are fine; a parenthesized pattern or default is not.
        const simple = node.data == .identifier or node.data == .member or node.data == .index;
        if (binding or !simple) return p.failAt(node.pos, "Invalid destructuring assignment target");
    }
    switch (node.data) {
        .identifier => |id| {
            if (std.mem.eql(u8, id.name, "eval") or std.mem.eql(u8, id.name, "arguments")) {
                return p.failAt(node.pos, "Unexpected eval or arguments in strict mode");
            }
            return node;
        },
        .member => |m| {
            if (binding or m.optional) return p.failAt(node.pos, "Invalid destructuring assignment target");
            return node;
        },
        .index => |i| {
            if (binding or i.optional) return p.failAt(node.pos, "Invalid destructuring assignment target");
            return node;
        },
        .array => |elements| {
            if (p.comma_after_spread.contains(node)) return p.failAt(node.pos, "Rest element must be last element");
            var targets: std.ArrayList(?*Node) = .empty;
            var rest: ?*Node = null;
            for (elements, 0..) |element, i| {
                switch (element.data) {
                    .hole => try targets.append(p.arena, null),
                    .spread => |inner| {
                        if (i + 1 != elements.len) return p.failAt(element.pos, "Rest element must be last element");
                        if (inner.data == .assign) return p.failAt(inner.pos, "Invalid destructuring assignment target");
                        rest = try p.toPattern(inner, binding);
                    },
                    else => try targets.append(p.arena, try p.toTarget(element, binding)),
                }
            }
            return p.newNode(node.pos, .{ .array_pattern = .{ .elements = targets.items, .rest = rest } });
        },
        .object => |properties| {
            if (p.comma_after_spread.contains(node)) {
                // V8 points at the rest element's target.
                return p.failAt(properties[properties.len - 1].value.pos, "Rest element must be last element");
            }
            var targets: std.ArrayList(ast.PatternProperty) = .empty;
            var rest: ?*Node = null;
            for (properties, 0..) |prop, i| {
                switch (prop.kind) {
                    .spread => {
                        if (i + 1 != properties.len) return p.failAt(prop.pos, "Rest element must be last element");
                        if (prop.value.data != .identifier and (binding or !isSimpleTarget(prop.value))) {
                            return p.failAt(prop.value.pos, "`...` must be followed by an assignable reference in assignment contexts");
                        }
                        rest = try p.toPattern(prop.value, binding);
                    },
                    .init => try targets.append(p.arena, .{ .key = prop.key, .value = try p.toTarget(prop.value, binding), .pos = prop.pos }),
                    .getter, .setter => return p.failAt(prop.pos, "Invalid destructuring assignment target"),
                    .shorthand => {
                        var target = try p.toPattern(prop.value, binding);
                        if (prop.shorthand_default) |d| {
                            target = try p.newNode(prop.pos, .{ .with_default = .{ .target = target, .value = d } });
                        }
                        try targets.append(p.arena, .{ .key = prop.key, .value = target, .pos = prop.pos });
                    },
                    .method => return p.failAt(prop.pos, "Invalid destructuring assignment target"),
                }
            }
            return p.newNode(node.pos, .{ .object_pattern = .{ .properties = targets.items, .rest = rest } });
        },
        .array_pattern, .object_pattern => return node,
        else => return p.failAt(node.pos, if (binding) "Invalid destructuring assignment target" else "Invalid left-hand side in assignment"),
    }
}

/// An element of a pattern: a target, with a default if written `target = value`.
fn toTarget(p: *Parser, node: *Node, binding: bool) Error!*Node {
    if (node.data == .assign and node.data.assign.op == null and !node.parenthesized) {
        const a = node.data.assign;
        const target = try p.toPattern(a.target, binding);
        return p.newNode(node.pos, .{ .with_default = .{ .target = target, .value = a.value } });
    }
    return p.toPattern(node, binding);
}

fn expectParseError(source: []const u8, message: []const u8) !void {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    var failure: Failure = undefined;
    try std.testing.expectError(error.SyntaxError, parse(arena_state.allocator(), source, 0, &failure));
    try std.testing.expectEqualStrings(message, failure.message);
}

fn expectParses(source: []const u8) !void {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    var failure: Failure = undefined;
    _ = parse(arena_state.allocator(), source, 0, &failure) catch |err| {
        std.debug.print("parse failed: {s} at {d}\n", .{ failure.message, failure.pos });
        return err;
    };
}

test "parser: the language parses" {
    try expectParses("let a = 1; const {b, c: [d = 2, ...e], ...f} = g;");
    try expectParses("const f = (a, {b} = {}, ...c) => a + b; const g = x => x * 2;");
    try expectParses("function h(a = 1, [b]) { return a ?? b?.c?.[0]?.(1); }");
    try expectParses("for (let i = 0; i < 3; i++) { if (i) continue; else break; }");
    try expectParses("for (const [k, v] of m) {} for (const k in o) {} for (x of y) {}");
    try expectParses("try { throw new Error('x') } catch ({message}) {} finally {}");
    try expectParses("switch (x) { case 1: let y = 2; break; default: }");
    try expectParses("[a, b] = [b, a]; ({a, b: c.d} = e);");
    try expectParses("const s = `a${b}c${`d${e}`}`; x ||= 1; y &&= 2; z ??= 3;");
    try expectParses("export default function handler(request) { return 1 }");
    try expectParses("const o = { a, 'b': 1, 2: 3, [k]: 4, ...p, m(x) { return x } };");
    try expectParses("a\n++b");
    try expectParses("let x = 1\nlet y = 2\n(function(){})");
    try expectParses("(-2) ** 2; (a ?? b) || c;");
}

test "parser: var declares in statements, for heads and exports" {
    try expectParses("var x = 1, y, [a, b] = [1, 2], { c } = {};");
    try expectParses("for (var i = 0; i < 3; i++) {} for (var k in {}) {} for (var [v] of []) {}");
    try expectParses("if (x) var z = 1;");
    try expectParses("export var e = 1;");
    try expectParseError("for (var k = 0 in {}) {}", "for-in loop variable declaration may not have an initializer.");
    try expectParseError("for (var a, b of []) {}", "Invalid left-hand side in for-of loop: Must have a single binding.");
    try expectParseError("var [a];", "Missing initializer in destructuring declaration");
}

test "parser: labels: break names any enclosing label, continue only a loop's, neither crosses a function" {
    try expectParses("a: b: for (;;) { continue a; } c: { break c; } d: if (x) break d;");
    try expectParseError("a: a: ;", "Label 'a' has already been declared");
    try expectParseError("a: { continue a; }", "Illegal continue statement: 'a' does not denote an iteration statement");
    try expectParseError("for (;;) break b;", "Undefined label 'b'");
    try expectParseError("x: for (;;) { function g() { break x; } }", "Undefined label 'x'");
    try expectParseError("a: { break; }", "Illegal break statement");
    try expectParseError("a: while (0) { class C { static { continue a; } } }", "Undefined label 'a'");
    try expectParseError("while (0) { class C { static { break; } } }", "Illegal break statement");
}

test "parser: a computed field name becomes a hidden binding the field reads" {
    try expectParses("class A { [k] = 1; static [k2] = 2; [k3]; ['constructor'] = 0 }");
    try expectParseError("class A { constructor = 1 }", "Classes may not have a field named 'constructor'");
}

test "parser: constructs outside the language are refused by name" {
    try expectParses("class A { *#g() {} async #a() {} async *#b() {} static async *#c() {} }");
    try expectParseError("async function* f() { for await (x in y) {} }", "Unexpected token 'in'");
    try expectParseError("function f() { for await (const x of y) {} }", "for await is only valid in async functions (top-level await is not supported)");
    try expectParses("async function* f() { yield* g(); for await (const x of y) yield await x; }");
    try expectParseError("await 1;", "await is only valid in async functions (top-level await is not supported)");
    try expectParseError("const r = /(a)\\1/;", "Invalid regular expression: /(a)\\1/: back-references (\\1, \\k<name>) are not supported: sluice runs regular expressions in linear time");
    try expectParseError("const r = /a(/;", "Invalid regular expression: /a(/: Unterminated group");
    try expectParseError("const r = /a/gg;", "Invalid regular expression flags");
    try expectParseError("const o = { get x(a) { return 1 } };", "Getter must not have any formal parameters.");
    try expectParseError("with (a) {}", "with is not supported");
    try expectParseError("const b = 1n;", "BigInt is not supported");
    try expectParses("tag`x`; o.m`a${1}b${2}c`; f()`\\u{41}`;");
}

test "parser: syntax errors as V8 words them" {
    try expectParseError("let x = ;", "Unexpected token ';'");
    try expectParseError("f(a b)", "missing ) after argument list");
    try expectParseError("const x;", "Missing initializer in const declaration");
    try expectParseError("break;", "Illegal break statement");
    try expectParseError("return 1", "Illegal return statement");
    try expectParseError("1 = 2", "Invalid left-hand side in assignment");
    try expectParseError("let a = (1", "Unexpected end of input");
    try expectParseError("a ?? b || c", "Unexpected token");
    try expectParseError("-2 ** 2", "Unary operator used immediately before exponentiation expression. Parenthesis must be used to disambiguate operator precedence");
}

test "parser: deep nesting is refused, not overflowed" {
    var source: [4000]u8 = undefined;
    @memset(source[0..2000], '(');
    @memset(source[2000..], ')');
    try expectParseError(&source, "the program is nested too deeply");
}
