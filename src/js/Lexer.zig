//! Turns UTF-8 source into tokens, one at a time, on the parser's demand.
//!
//! The lexer never decides between a regular expression and a division: `/` is always an
//! operator, and the parser refuses a `/` where an expression must start (regular expressions
//! are outside the language). Template literals are lexed in pieces: the parser asks for the
//! continuation after each `${ expression }`. Every token records whether a line break came
//! before it, which is all automatic semicolon insertion needs.
const std = @import("std");
const assert = std.debug.assert;

const casing = @import("casing.zig");

const Lexer = @This();

source: []const u8,
/// Byte offset of the next character to read.
pos: u32 = 0,
/// Cooked string and template values, kept for the parser (compile-time memory).
arena: std.mem.Allocator,
/// Set when a token cannot be read; the parser reports it with the token's position.
failure: ?Failure = null,

pub const Failure = struct { pos: u32, message: []const u8 };

pub const Error = error{ SyntaxError, OutOfMemory };

pub const Kind = enum(u8) {
    eof,
    identifier,
    keyword,
    number,
    string,
    /// A template with no substitution: `abc`.
    template_full,
    /// The head of a template up to its first `${`.
    template_head,
    /// Between two substitutions: `}...${`.
    template_middle,
    /// From the last substitution to the closing backquote: `}...`.
    template_tail,
    private_name,
    // Punctuators.
    l_brace,
    r_brace,
    l_paren,
    r_paren,
    l_bracket,
    r_bracket,
    semicolon,
    comma,
    dot,
    ellipsis,
    question,
    question_dot,
    question_question,
    question_question_assign,
    colon,
    arrow,
    assign,
    eq,
    ne,
    strict_eq,
    strict_ne,
    lt,
    gt,
    le,
    ge,
    plus,
    minus,
    star,
    slash,
    percent,
    star_star,
    plus_plus,
    minus_minus,
    shl,
    sar,
    shr,
    amp,
    pipe,
    caret,
    bang,
    tilde,
    amp_amp,
    pipe_pipe,
    plus_assign,
    minus_assign,
    star_assign,
    slash_assign,
    percent_assign,
    star_star_assign,
    shl_assign,
    sar_assign,
    shr_assign,
    amp_assign,
    pipe_assign,
    caret_assign,
    amp_amp_assign,
    pipe_pipe_assign,
    at,
    hash,
};

pub const Token = struct {
    kind: Kind,
    start: u32,
    end: u32,
    newline_before: bool = false,
    /// Numbers: the value.
    number: f64 = 0,
    /// Strings and templates: the cooked value in WTF-8 (a lone surrogate escape is kept as
    /// its three-byte encoding); identifiers with escapes: the name.
    text: []const u8 = "",
    /// Identifiers and keywords written with a `\u` escape (a keyword so written is an error).
    escaped: bool = false,
};

pub fn init(arena: std.mem.Allocator, source: []const u8) Lexer {
    var lexer: Lexer = .{ .source = source, .arena = arena };
    // A hashbang line, as node accepts.
    if (std.mem.startsWith(u8, source, "#!")) {
        while (lexer.pos < source.len and source[lexer.pos] != '\n') lexer.pos += 1;
    }
    // A UTF-8 byte order mark.
    if (std.mem.startsWith(u8, source[lexer.pos..], "\xEF\xBB\xBF")) lexer.pos += 3;
    return lexer;
}

fn fail(lexer: *Lexer, pos: u32, message: []const u8) Error {
    lexer.failure = .{ .pos = pos, .message = message };
    return error.SyntaxError;
}

const keywords = std.StaticStringMap(void).initComptime(.{
    .{"break"},    .{"case"},    .{"catch"},      .{"class"}, .{"const"},    .{"continue"},
    .{"debugger"}, .{"default"}, .{"delete"},     .{"do"},    .{"else"},     .{"export"},
    .{"extends"},  .{"false"},   .{"finally"},    .{"for"},   .{"function"}, .{"if"},
    .{"import"},   .{"in"},      .{"instanceof"}, .{"new"},   .{"null"},     .{"return"},
    .{"super"},    .{"switch"},  .{"this"},       .{"throw"}, .{"true"},     .{"try"},
    .{"typeof"},   .{"var"},     .{"void"},       .{"while"}, .{"with"},     .{"enum"},
});

pub fn isKeyword(name: []const u8) bool {
    return keywords.has(name);
}

/// The next token, skipping white space and comments.
pub fn next(lexer: *Lexer) Error!Token {
    const newline = try lexer.skipSpace();
    const start = lexer.pos;
    var token: Token = .{ .kind = .eof, .start = start, .end = start, .newline_before = newline };
    if (start >= lexer.source.len) return token;
    const s = lexer.source;
    const c = s[start];
    lexer.pos += 1;
    token.kind = switch (c) {
        '{' => .l_brace,
        '}' => .r_brace,
        '(' => .l_paren,
        ')' => .r_paren,
        '[' => .l_bracket,
        ']' => .r_bracket,
        ';' => .semicolon,
        ',' => .comma,
        ':' => .colon,
        '~' => .tilde,
        '@' => .at,
        '.' => blk: {
            if (lexer.peekIs(0, '.') and lexer.peekIs(1, '.')) {
                lexer.pos += 2;
                break :blk .ellipsis;
            }
            if (lexer.peekDigit(0)) {
                lexer.pos = start;
                return lexer.number(token);
            }
            break :blk .dot;
        },
        '?' => blk: {
            if (lexer.eat('?')) break :blk if (lexer.eat('=')) .question_question_assign else .question_question;
            // `a?.5:b` is a conditional, not an optional chain.
            if (lexer.peekIs(0, '.') and !lexer.peekDigit(1)) {
                lexer.pos += 1;
                break :blk .question_dot;
            }
            break :blk .question;
        },
        '=' => if (lexer.eat('>')) .arrow else if (lexer.eat('=')) (if (lexer.eat('=')) .strict_eq else .eq) else .assign,
        '!' => if (lexer.eat('=')) (if (lexer.eat('=')) .strict_ne else .ne) else .bang,
        '<' => if (lexer.eat('<')) (if (lexer.eat('=')) .shl_assign else .shl) else if (lexer.eat('=')) .le else .lt,
        '>' => blk: {
            if (lexer.eat('>')) {
                if (lexer.eat('>')) break :blk if (lexer.eat('=')) .shr_assign else .shr;
                break :blk if (lexer.eat('=')) .sar_assign else .sar;
            }
            break :blk if (lexer.eat('=')) .ge else .gt;
        },
        '+' => if (lexer.eat('+')) .plus_plus else if (lexer.eat('=')) .plus_assign else .plus,
        '-' => if (lexer.eat('-')) .minus_minus else if (lexer.eat('=')) .minus_assign else .minus,
        '*' => if (lexer.eat('*')) (if (lexer.eat('=')) .star_star_assign else .star_star) else if (lexer.eat('=')) .star_assign else .star,
        '/' => if (lexer.eat('=')) .slash_assign else .slash,
        '%' => if (lexer.eat('=')) .percent_assign else .percent,
        '&' => if (lexer.eat('&')) (if (lexer.eat('=')) .amp_amp_assign else .amp_amp) else if (lexer.eat('=')) .amp_assign else .amp,
        '|' => if (lexer.eat('|')) (if (lexer.eat('=')) .pipe_pipe_assign else .pipe_pipe) else if (lexer.eat('=')) .pipe_assign else .pipe,
        '^' => if (lexer.eat('=')) .caret_assign else .caret,
        '#' => blk: {
            if (lexer.pos < s.len and (isIdentStart(s[lexer.pos]) or s[lexer.pos] == '\\')) {
                // `#name`, escapes and Unicode as in any identifier: the text is `#` and the
                // name's value (`#\u{6F}` is `#o`).
                var name = try lexer.identifier(token);
                name.kind = .private_name;
                name.text = try std.mem.concat(lexer.arena, u8, &.{ "#", name.text });
                name.escaped = false;
                return name;
            }
            break :blk .hash;
        },
        '"', '\'' => {
            lexer.pos = start;
            return lexer.string(token);
        },
        '`' => return lexer.template(token, .template_full),
        '0'...'9' => {
            lexer.pos = start;
            return lexer.number(token);
        },
        else => {
            lexer.pos = start;
            if (c >= 0x80 and !isIdentifierStartCodePoint(decodeAt(s, start).cp)) {
                return lexer.fail(start, "Invalid or unexpected token");
            }
            return lexer.identifier(token);
        },
    };
    token.end = lexer.pos;
    return token;
}

/// After the `}` that closes a substitution: the template's next piece.
pub fn templateContinuation(lexer: *Lexer, close_brace: Token) Error!Token {
    assert(close_brace.kind == .r_brace);
    lexer.pos = close_brace.end;
    const token: Token = .{ .kind = .template_middle, .start = close_brace.start, .end = close_brace.end };
    return lexer.template(token, .template_middle);
}

fn eat(lexer: *Lexer, c: u8) bool {
    if (lexer.pos < lexer.source.len and lexer.source[lexer.pos] == c) {
        lexer.pos += 1;
        return true;
    }
    return false;
}

fn peekIs(lexer: *const Lexer, offset: u32, c: u8) bool {
    const i = lexer.pos + offset;
    return i < lexer.source.len and lexer.source[i] == c;
}

fn peekDigit(lexer: *const Lexer, offset: u32) bool {
    const i = lexer.pos + offset;
    return i < lexer.source.len and std.ascii.isDigit(lexer.source[i]);
}

/// Skips white space and comments; true if a line terminator was among them.
fn skipSpace(lexer: *Lexer) Error!bool {
    const s = lexer.source;
    var newline = false;
    while (lexer.pos < s.len) {
        const c = s[lexer.pos];
        switch (c) {
            ' ', '\t', 0x0B, 0x0C => lexer.pos += 1,
            '\n', '\r' => {
                newline = true;
                lexer.pos += 1;
            },
            '/' => {
                if (lexer.peekIs(1, '/')) {
                    lexer.pos += 2;
                    while (lexer.pos < s.len and s[lexer.pos] != '\n') {
                        if (lineSeparatorAt(s, lexer.pos)) break;
                        lexer.pos += 1;
                    }
                } else if (lexer.peekIs(1, '*')) {
                    const open = lexer.pos;
                    lexer.pos += 2;
                    while (true) {
                        if (lexer.pos + 1 >= s.len) {
                            return lexer.fail(open, "Invalid or unexpected token");
                        }
                        if (s[lexer.pos] == '*' and s[lexer.pos + 1] == '/') {
                            lexer.pos += 2;
                            break;
                        }
                        if (s[lexer.pos] == '\n' or lineSeparatorAt(s, lexer.pos)) newline = true;
                        lexer.pos += 1;
                    }
                } else break;
            },
            0xC2 => {
                // U+00A0 no-break space.
                if (lexer.peekIs(1, 0xA0)) lexer.pos += 2 else break;
            },
            0xE2, 0xE3, 0xE1, 0xEF => {
                const width = unicodeSpaceAt(s, lexer.pos);
                if (width == 0) break;
                if (lineSeparatorAt(s, lexer.pos)) newline = true;
                lexer.pos += width;
            },
            else => break,
        }
    }
    return newline;
}

/// U+2028 or U+2029.
fn lineSeparatorAt(s: []const u8, i: usize) bool {
    return i + 2 < s.len and s[i] == 0xE2 and s[i + 1] == 0x80 and (s[i + 2] == 0xA8 or s[i + 2] == 0xA9);
}

/// The byte length of a Unicode space separator or line separator at `i`, or 0.
fn unicodeSpaceAt(s: []const u8, i: usize) u32 {
    if (i + 2 >= s.len) return 0;
    const cp = (@as(u32, s[i] & 0x0F) << 12) | (@as(u32, s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    if (s[i + 1] & 0xC0 != 0x80 or s[i + 2] & 0xC0 != 0x80) return 0;
    return switch (cp) {
        0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF => 3,
        else => 0,
    };
}

/// The code point at a byte offset of UTF-8 text, and its length (U+FFFD and 1 when the
/// bytes are not UTF-8).
fn decodeAt(s: []const u8, i: usize) struct { cp: u21, len: u32 } {
    const c = s[i];
    const len: u32 = if (c < 0x80) 1 else if (c & 0xE0 == 0xC0) 2 else if (c & 0xF0 == 0xE0) 3 else if (c & 0xF8 == 0xF0) 4 else 0;
    if (len == 0 or i + len > s.len) return .{ .cp = 0xFFFD, .len = 1 };
    const cp = std.unicode.utf8Decode(s[i .. i + len]) catch return .{ .cp = 0xFFFD, .len = 1 };
    return .{ .cp = cp, .len = len };
}

/// Identifier characters: Unicode's ID_Start (and `$`, `_`), as the spec asks.
pub fn isIdentifierStartCodePoint(cp: u21) bool {
    if (cp < 0x80) return isIdentStart(@intCast(cp));
    return casing.isIdStart(cp);
}

/// ID_Continue, `$`, and the joiners ZWNJ and ZWJ.
pub fn isIdentifierPartCodePoint(cp: u21) bool {
    if (cp < 0x80) return isIdentPart(@intCast(cp));
    return cp == 0x200C or cp == 0x200D or casing.isIdContinue(cp);
}

pub fn isIdentStart(c: u8) bool {
    return std.ascii.isAlphabetic(c) or c == '_' or c == '$' or c >= 0x80;
}

pub fn isIdentPart(c: u8) bool {
    return isIdentStart(c) or std.ascii.isDigit(c);
}

fn identifier(lexer: *Lexer, token_in: Token) Error!Token {
    var token = token_in;
    const s = lexer.source;
    const start = lexer.pos;
    var escaped = false;
    while (lexer.pos < s.len) {
        const c = s[lexer.pos];
        if (c == '\\') {
            escaped = true;
            lexer.pos += 1;
            if (!lexer.eat('u')) return lexer.fail(lexer.pos, "Invalid Unicode escape sequence");
            _ = lexer.unicodeEscape() catch return lexer.fail(lexer.pos, "Invalid Unicode escape sequence");
            continue;
        }
        if (c >= 0x80) {
            const decoded = decodeAt(s, lexer.pos);
            const ok = if (lexer.pos == start) isIdentifierStartCodePoint(decoded.cp) else isIdentifierPartCodePoint(decoded.cp);
            if (!ok) break;
            lexer.pos += decoded.len;
            continue;
        }
        if (!isIdentPart(c) or (lexer.pos == start and std.ascii.isDigit(c))) break;
        lexer.pos += 1;
    }
    if (lexer.pos == start) {
        return lexer.fail(start, "Invalid or unexpected token");
    }
    token.end = lexer.pos;
    token.text = s[start..lexer.pos];
    if (escaped) {
        token.escaped = true;
        token.text = try lexer.unescapeIdentifier(s[start..lexer.pos]);
    }
    token.kind = if (!escaped and keywords.has(token.text)) .keyword else .identifier;
    return token;
}

fn unescapeIdentifier(lexer: *Lexer, raw: []const u8) Error![]const u8 {
    var out: std.ArrayList(u8) = .empty;
    var i: usize = 0;
    while (i < raw.len) {
        if (raw[i] == '\\') {
            var sub: Lexer = .{ .source = raw, .pos = @intCast(i + 2), .arena = lexer.arena };
            const cp = sub.unicodeEscape() catch return lexer.fail(lexer.pos, "Invalid Unicode escape sequence");
            const ok = if (cp < 0x80)
                (if (out.items.len == 0) isIdentStart(@intCast(cp)) else isIdentPart(@intCast(cp)))
            else if (out.items.len == 0) isIdentifierStartCodePoint(cp) else isIdentifierPartCodePoint(cp);
            if (!ok) return lexer.fail(lexer.pos, "Invalid Unicode escape sequence");
            try appendCodePoint(lexer.arena, &out, cp);
            i = sub.pos;
        } else {
            try out.append(lexer.arena, raw[i]);
            i += 1;
        }
    }
    return out.items;
}

fn number(lexer: *Lexer, token_in: Token) Error!Token {
    var token = token_in;
    const s = lexer.source;
    const start = lexer.pos;
    token.kind = .number;
    if (s[start] == '0' and start + 1 < s.len) {
        const radix: ?u8 = switch (s[start + 1]) {
            'x', 'X' => 16,
            'o', 'O' => 8,
            'b', 'B' => 2,
            else => null,
        };
        if (radix) |r| {
            lexer.pos += 2;
            const digits = try lexer.scanDigits(r);
            if (digits.len == 0) return lexer.fail(start, "Invalid or unexpected token");
            token.number = @import("number.zig").integerValue(digits, r); // Correctly rounded.
            return lexer.finishNumber(token, start);
        }
        if (s[start + 1] == '_') return lexer.fail(start + 1, "Numeric separator can not be used after leading 0.");
        if (std.ascii.isDigit(s[start + 1])) {
            var i = start + 1;
            while (i < s.len and std.ascii.isDigit(s[i])) i += 1;
            const octal_like = for (s[start + 1 .. i]) |d| {
                if (d >= '8') break false;
            } else true;
            return lexer.fail(start, if (octal_like)
                "Octal literals are not allowed in strict mode."
            else
                "Decimals with leading zeros are not allowed in strict mode.");
        }
    }
    var text: std.ArrayList(u8) = .empty;
    try text.appendSlice(lexer.arena, try lexer.scanDigits(10));
    if (lexer.eat('.')) {
        try text.append(lexer.arena, '.');
        try text.appendSlice(lexer.arena, try lexer.scanDigits(10));
    }
    if (lexer.pos < s.len and (s[lexer.pos] == 'e' or s[lexer.pos] == 'E')) {
        lexer.pos += 1;
        try text.append(lexer.arena, 'e');
        if (lexer.pos < s.len and (s[lexer.pos] == '+' or s[lexer.pos] == '-')) {
            try text.append(lexer.arena, s[lexer.pos]);
            lexer.pos += 1;
        }
        const exponent = try lexer.scanDigits(10);
        if (exponent.len == 0) return lexer.fail(start, "Invalid or unexpected token");
        try text.appendSlice(lexer.arena, exponent);
    }
    token.number = std.fmt.parseFloat(f64, text.items) catch return lexer.fail(start, "Invalid or unexpected token");
    return lexer.finishNumber(token, start);
}

/// Digits of a radix with `_` separators between them; returns them without separators.
fn scanDigits(lexer: *Lexer, radix: u8) Error![]const u8 {
    const s = lexer.source;
    var out: std.ArrayList(u8) = .empty;
    var last_separator = false;
    while (lexer.pos < s.len) {
        const c = s[lexer.pos];
        if (c == '_') {
            if (out.items.len == 0 or last_separator) return lexer.fail(lexer.pos, "Numeric separators are not allowed here");
            last_separator = true;
            lexer.pos += 1;
            continue;
        }
        const d = std.fmt.charToDigit(c, 36) catch break;
        if (d >= radix) break;
        try out.append(lexer.arena, c);
        last_separator = false;
        lexer.pos += 1;
    }
    if (last_separator) return lexer.fail(lexer.pos - 1, "Numeric separators are not allowed at the end of numeric literals");
    return out.items;
}

fn finishNumber(lexer: *Lexer, token_in: Token, start: u32) Error!Token {
    var token = token_in;
    const s = lexer.source;
    if (lexer.pos < s.len and s[lexer.pos] == 'n') {
        return lexer.fail(start, "BigInt is not supported");
    }
    if (lexer.pos < s.len) {
        const c = s[lexer.pos];
        const ident = if (c >= 0x80) isIdentifierStartCodePoint(decodeAt(s, lexer.pos).cp) else (isIdentStart(c) or std.ascii.isDigit(c) or c == '\\');
        if (ident) return lexer.fail(start, "Invalid or unexpected token");
    }
    token.end = lexer.pos;
    return token;
}

fn string(lexer: *Lexer, token_in: Token) Error!Token {
    var token = token_in;
    const s = lexer.source;
    const start = lexer.pos;
    const quote = s[start];
    lexer.pos += 1;
    var out: std.ArrayList(u8) = .empty;
    while (true) {
        if (lexer.pos >= s.len) return lexer.fail(start, "Invalid or unexpected token");
        const c = s[lexer.pos];
        if (c == quote) {
            lexer.pos += 1;
            break;
        }
        if (c == '\n' or c == '\r') return lexer.fail(start, "Invalid or unexpected token");
        if (c == '\\') {
            lexer.pos += 1;
            try lexer.escape(&out, false);
            continue;
        }
        try out.append(lexer.arena, c);
        lexer.pos += 1;
    }
    token.kind = .string;
    token.end = lexer.pos;
    token.text = out.items;
    return token;
}

/// Reads a template piece after its opening "`" or "}", up to "`" or "${".
fn template(lexer: *Lexer, token_in: Token, first: Kind) Error!Token {
    var token = token_in;
    const s = lexer.source;
    var out: std.ArrayList(u8) = .empty;
    while (true) {
        if (lexer.pos >= s.len) return lexer.fail(token.start, "Unterminated template literal");
        const c = s[lexer.pos];
        if (c == '`') {
            lexer.pos += 1;
            token.kind = if (first == .template_full) .template_full else .template_tail;
            break;
        }
        if (c == '$' and lexer.peekIs(1, '{')) {
            lexer.pos += 2;
            token.kind = if (first == .template_full) .template_head else .template_middle;
            break;
        }
        if (c == '\\') {
            lexer.pos += 1;
            try lexer.escape(&out, true);
            continue;
        }
        if (c == '\r') {
            // CR and CRLF are read as LF in templates.
            lexer.pos += 1;
            _ = lexer.eat('\n');
            try out.append(lexer.arena, '\n');
            continue;
        }
        try out.append(lexer.arena, c);
        lexer.pos += 1;
    }
    token.end = lexer.pos;
    token.text = out.items;
    return token;
}

/// One escape sequence after its backslash, appended as WTF-8.
fn escape(lexer: *Lexer, out: *std.ArrayList(u8), in_template: bool) Error!void {
    const s = lexer.source;
    if (lexer.pos >= s.len) return lexer.fail(lexer.pos, "Invalid or unexpected token");
    const c = s[lexer.pos];
    const at = lexer.pos - 1;
    lexer.pos += 1;
    const simple: ?u8 = switch (c) {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => 0x08,
        'f' => 0x0C,
        'v' => 0x0B,
        '\'', '"', '\\', '`', '$' => c,
        else => null,
    };
    if (simple) |byte| return out.append(lexer.arena, byte);
    switch (c) {
        '\n' => return, // Line continuation.
        '\r' => {
            _ = lexer.eat('\n');
            return;
        },
        '0' => {
            if (lexer.peekDigit(0)) return lexer.fail(at, if (in_template)
                "Octal escape sequences are not allowed in template strings."
            else
                "Octal escape sequences are not allowed in strict mode.");
            return out.append(lexer.arena, 0);
        },
        '1'...'7' => return lexer.fail(at, if (in_template)
            "Octal escape sequences are not allowed in template strings."
        else
            "Octal escape sequences are not allowed in strict mode."),
        '8', '9' => return lexer.fail(at, if (in_template)
            "\\8 and \\9 are not allowed in template strings."
        else
            "\\8 and \\9 are not allowed in strict mode."),
        'x' => {
            const hi = lexer.hexDigit() orelse return lexer.fail(at, "Invalid hexadecimal escape sequence");
            const lo = lexer.hexDigit() orelse return lexer.fail(at, "Invalid hexadecimal escape sequence");
            return appendCodePoint(lexer.arena, out, hi * 16 + lo);
        },
        'u' => {
            const cp = lexer.unicodeEscape() catch return lexer.fail(at, "Invalid Unicode escape sequence");
            return appendCodePoint(lexer.arena, out, cp);
        },
        else => {
            // U+2028/2029 line continuations and identity escapes: the character itself.
            if (lineSeparatorAt(s, lexer.pos - 1)) {
                lexer.pos += 2;
                return;
            }
            try out.append(lexer.arena, c);
        },
    }
}

fn hexDigit(lexer: *Lexer) ?u21 {
    if (lexer.pos >= lexer.source.len) return null;
    const d = std.fmt.charToDigit(lexer.source[lexer.pos], 16) catch return null;
    lexer.pos += 1;
    return d;
}

/// `XXXX` or `{X...}` after `\u`.
fn unicodeEscape(lexer: *Lexer) error{SyntaxError}!u21 {
    if (lexer.eat('{')) {
        var cp: u32 = 0;
        var count: u32 = 0;
        while (!lexer.eat('}')) {
            const d = lexer.hexDigit() orelse return error.SyntaxError;
            cp = cp * 16 + d;
            count += 1;
            if (cp > 0x10FFFF) return error.SyntaxError;
        }
        if (count == 0) return error.SyntaxError;
        return @intCast(cp);
    }
    var cp: u21 = 0;
    for (0..4) |_| cp = cp * 16 + (lexer.hexDigit() orelse return error.SyntaxError);
    return cp;
}

/// Appends a code point as WTF-8 (surrogates get their own three-byte form). A high
/// surrogate followed by a low one written as two escapes stays two units either way.
pub fn appendCodePoint(arena: std.mem.Allocator, out: *std.ArrayList(u8), cp: u21) error{OutOfMemory}!void {
    var buf: [4]u8 = undefined;
    const n: usize = if (cp < 0x80) 1 else if (cp < 0x800) 2 else if (cp < 0x10000) 3 else 4;
    switch (n) {
        1 => buf[0] = @intCast(cp),
        2 => {
            buf[0] = @intCast(0xC0 | (cp >> 6));
            buf[1] = @intCast(0x80 | (cp & 0x3F));
        },
        3 => {
            buf[0] = @intCast(0xE0 | (cp >> 12));
            buf[1] = @intCast(0x80 | ((cp >> 6) & 0x3F));
            buf[2] = @intCast(0x80 | (cp & 0x3F));
        },
        else => {
            buf[0] = @intCast(0xF0 | (cp >> 18));
            buf[1] = @intCast(0x80 | ((cp >> 12) & 0x3F));
            buf[2] = @intCast(0x80 | ((cp >> 6) & 0x3F));
            buf[3] = @intCast(0x80 | (cp & 0x3F));
        },
    }
    try out.appendSlice(arena, buf[0..n]);
}

/// 1-based line and column (in UTF-16 units, as V8 counts them) of a byte offset.
pub fn lineColumn(source: []const u8, offset: u32) struct { line: u32, column: u32 } {
    var line: u32 = 1;
    var line_start: usize = 0;
    const end = @min(offset, source.len);
    for (source[0..end], 0..) |c, i| {
        if (c == '\n') {
            line += 1;
            line_start = i + 1;
        }
    }
    var column: u32 = 1;
    for (source[line_start..end]) |c| {
        // Count a code point's lead byte only; four-byte sequences are two UTF-16 units.
        if (c & 0xC0 != 0x80) column += 1;
        if (c >= 0xF0) column += 1;
    }
    return .{ .line = line, .column = column };
}

fn testKinds(source: []const u8, expected: []const Kind) !void {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    var lexer = Lexer.init(arena_state.allocator(), source);
    for (expected) |kind| {
        const token = try lexer.next();
        try std.testing.expectEqual(kind, token.kind);
    }
    try std.testing.expectEqual(Kind.eof, (try lexer.next()).kind);
}

test "lexer: punctuators, longest match first" {
    try testKinds("a >>>= b ?? c ?. d ... e => f", &.{
        .identifier, .shr_assign, .identifier, .question_question, .identifier, .question_dot,
        .identifier, .ellipsis,   .identifier, .arrow,             .identifier,
    });
    try testKinds("x?.5:1", &.{ .identifier, .question, .number, .colon, .number });
    try testKinds("a /* c \n */ b // d", &.{ .identifier, .identifier });
}

test "lexer: numbers" {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    const cases = .{ .{ "0x1F", 31 }, .{ "1_000", 1000 }, .{ ".5", 0.5 }, .{ "1e3", 1000 }, .{ "0b101", 5 }, .{ "0o17", 15 }, .{ "5.", 5 } };
    inline for (cases) |case| {
        var lexer = Lexer.init(arena_state.allocator(), case[0]);
        const token = try lexer.next();
        try std.testing.expectEqual(Kind.number, token.kind);
        try std.testing.expectEqual(@as(f64, case[1]), token.number);
    }
    for ([_][]const u8{ "017", "08", "1n", "3in", "1__0", "1_", "0x" }) |bad| {
        var lexer = Lexer.init(arena_state.allocator(), bad);
        try std.testing.expectError(error.SyntaxError, lexer.next());
    }
}

test "lexer: strings and escapes" {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    var lexer = Lexer.init(arena_state.allocator(), "'a\\n\\x41\\u0042\\u{1F600}\\'' \"\\uD800\"");
    const token = try lexer.next();
    try std.testing.expectEqualStrings("a\nAB😀'", token.text);
    const lone = try lexer.next();
    try std.testing.expectEqualStrings("\xED\xA0\x80", lone.text);
}

test "lexer: templates in pieces" {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    var lexer = Lexer.init(arena_state.allocator(), "`a${x}b${y}c`");
    const head = try lexer.next();
    try std.testing.expectEqual(Kind.template_head, head.kind);
    try std.testing.expectEqualStrings("a", head.text);
    _ = try lexer.next();
    const middle = try lexer.templateContinuation(try lexer.next());
    try std.testing.expectEqual(Kind.template_middle, middle.kind);
    try std.testing.expectEqualStrings("b", middle.text);
    _ = try lexer.next();
    const tail = try lexer.templateContinuation(try lexer.next());
    try std.testing.expectEqual(Kind.template_tail, tail.kind);
    try std.testing.expectEqualStrings("c", tail.text);
}

test "lexer: line and column count UTF-16 units" {
    const pos = lineColumn("ab\ncd😀e", 9);
    try std.testing.expectEqual(@as(u32, 2), pos.line);
    try std.testing.expectEqual(@as(u32, 5), pos.column);
}
