//! Regular expressions that run in time linear in their input: a pattern is parsed into a
//! small tree, compiled to a program of NFA instructions, and run by a Pike VM (Thompson's
//! simulation with a capture array per thread). At each input position every live thread
//! advances once, and threads that reach the same instruction are merged (the first one, by
//! priority, wins), so a run costs at most (input length + 1) x (program size) thread steps,
//! whatever the pattern: `/(a*)*b/` on 100,000 `a`s is one pass, not 2^100,000 attempts.
//!
//! Decision: threads are kept in priority order (a greedy quantifier prefers another
//! iteration, a lazy one the exit, an alternation its left side), and a match cuts the threads
//! of lower priority, so the match and its captures are the ones a backtracking engine finds
//! (JavaScript's leftmost-first semantics). What needs backtracking is refused at compile time
//! with the feature's name: back-references, lookahead and lookbehind, and Unicode property
//! escapes (`\p{...}`, for want of the tables). A quantified group that matches the empty
//! string ends its loop there, as the spec's empty check does.
//!
//! Every size is bounded: the pattern's length (`pattern_units_max`), its nesting
//! (`depth_max`) and its program after counted repetitions are expanded (`insts_max`), each
//! checked in every build mode with a SyntaxError that says which.
const std = @import("std");
const assert = std.debug.assert;

const casing = @import("casing.zig");

pub const pattern_units_max: u32 = 64 * 1024;
pub const insts_max: u32 = 16 * 1024;
pub const depth_max: u32 = 256;
pub const groups_max: u32 = 1024;

pub const Flags = packed struct(u8) {
    has_indices: bool = false,
    global: bool = false,
    ignore_case: bool = false,
    multiline: bool = false,
    dot_all: bool = false,
    unicode: bool = false,
    /// `v`: unicode mode with class set operations (`--`, `&&`, nested classes, `\q{}`).
    unicode_sets: bool = false,
    sticky: bool = false,

    /// The flags in the order `flags` lists them.
    pub const letters = "dgimsuvy";

    /// Parses a flags string; null for an unknown or repeated letter, or both `u` and `v`.
    pub fn parse(units: anytype) ?Flags {
        var bits: u8 = 0;
        for (units) |u| {
            const i = std.mem.indexOfScalar(u8, letters, if (u < 128) @intCast(u) else 0) orelse return null;
            const bit = @as(u8, 1) << @intCast(i);
            if (bits & bit != 0) return null;
            bits |= bit;
        }
        var f: Flags = @bitCast(bits);
        if (f.unicode and f.unicode_sets) return null;
        if (f.unicode_sets) f.unicode = true;
        return f;
    }

    pub fn has(f: Flags, letter: u8) bool {
        if (letter == 'u' and f.unicode_sets) return false; // `v` implies unicode mode.
        const i = std.mem.indexOfScalar(u8, letters, letter).?;
        return @as(u8, @bitCast(f)) & (@as(u8, 1) << @intCast(i)) != 0;
    }

    /// Writes the flags as `flags` shows them; returns the length.
    pub fn write(f: Flags, buf: *[letters.len]u8) []const u8 {
        var n: usize = 0;
        for (letters) |l| {
            if (f.has(l)) {
                buf[n] = l;
                n += 1;
            }
        }
        return buf[0..n];
    }
};

pub const Op = enum(u8) {
    /// Matches the code point `a` (canonicalised when the program ignores case).
    char,
    /// Any code point but a line terminator.
    any_but_newline,
    any,
    /// A class: ranges[a .. a + b & count_mask], negated when `b & negated_bit`.
    class,
    /// Continue at `a` first, then at `b`.
    split,
    jump,
    /// Records the position in capture slot `a`.
    save,
    /// Clears capture slots a .. b (a quantified group's captures, at each iteration).
    reset,
    line_start,
    line_end,
    input_start,
    input_end,
    word_boundary,
    not_word_boundary,
    /// Slot `a` holds the position where this iteration of a loop began; a thread that
    /// would continue the loop without having consumed anything since ends (the empty check).
    loop_check,
    match,
};

pub const Inst = struct {
    op: Op,
    a: u32 = 0,
    b: u32 = 0,
};

pub const negated_bit: u32 = 1 << 31;
pub const count_mask: u32 = negated_bit - 1;

pub const Range = struct { lo: u21, hi: u21 };

pub const GroupName = struct {
    /// UTF-16 units.
    name: []const u16,
    group: u32,
};

pub const Program = struct {
    insts: []const Inst,
    ranges: []const Range,
    /// Capture groups, group 0 (the whole match) included.
    group_count: u32,
    /// Capture slots: two per group, then one per loop for the empty check.
    slot_count: u32,
    names: []const GroupName,
    flags: Flags,
    /// Per instruction: the capture slot where the innermost loop with an empty check that
    /// contains it recorded its iteration's start, or `no_loop`. A thread is merged with
    /// another at the same instruction only if both have, or both have not, consumed input
    /// in that iteration: the empty check treats them differently (`/(a?b??)*/` on "ab").
    loop_of: []const u32,
    /// The most entries the thread-adding stack can hold (each instruction is explored at
    /// most once per step, so this is a sum over the program).
    stack_max: u32,
};

pub const Failure = struct {
    message: []const u8,
};

pub const CompileError = error{ SyntaxError, OutOfMemory };

// ---------------------------------------------------------------------------------------
// Parsing.

const Node = union(enum) {
    empty,
    char: u21,
    any,
    class: Class,
    assertion: Op,
    group: Group,
    concat: []const *Node,
    alternation: []const *Node,
    repeat: Repeat,
};

const Class = struct { start: u32, len: u32, negated: bool };
const Group = struct { body: *Node, capture: ?u32 };
const Repeat = struct {
    body: *Node,
    min: u32,
    /// null: unbounded.
    max: ?u32,
    greedy: bool,
    /// The capture groups inside the body: first .. end.
    groups_first: u32,
    groups_end: u32,
};

const Parser = struct {
    gpa: std.mem.Allocator,
    src: []const u16,
    pos: usize = 0,
    unicode: bool,
    /// The `v` flag: classes are class set expressions.
    sets: bool = false,
    ignore_case: bool,
    dot_all: bool,
    multiline: bool,
    /// Named groups anywhere in the pattern (`\k` is then a back-reference).
    has_named: bool,
    groups_total: u32,
    group_next: u32 = 1,
    ranges: std.ArrayList(Range) = .empty,
    names: std.ArrayList(GroupName) = .empty,
    depth: u32 = 0,
    failure: []const u8 = "",

    fn fail(p: *Parser, message: []const u8) CompileError {
        p.failure = message;
        return error.SyntaxError;
    }

    fn atEnd(p: *const Parser) bool {
        return p.pos >= p.src.len;
    }

    fn peekUnit(p: *const Parser) ?u16 {
        return if (p.pos < p.src.len) p.src[p.pos] else null;
    }

    fn peekIs(p: *const Parser, u: u16) bool {
        return p.pos < p.src.len and p.src[p.pos] == u;
    }

    fn peekAt(p: *const Parser, offset: usize, u: u16) bool {
        return p.pos + offset < p.src.len and p.src[p.pos + offset] == u;
    }

    /// The next pattern character: a code point in unicode mode, a unit otherwise.
    fn nextChar(p: *Parser) u21 {
        const u = p.src[p.pos];
        p.pos += 1;
        if (p.unicode and isLead(u) and p.pos < p.src.len and isTrail(p.src[p.pos])) {
            const t = p.src[p.pos];
            p.pos += 1;
            return combine(u, t);
        }
        return u;
    }

    fn newNode(p: *Parser, n: Node) CompileError!*Node {
        const node = try p.gpa.create(Node);
        node.* = n;
        return node;
    }

    fn disjunction(p: *Parser) CompileError!*Node {
        p.depth += 1;
        defer p.depth -= 1;
        if (p.depth > depth_max) return p.fail("regular expression nested too deeply");
        var alternatives: std.ArrayList(*Node) = .empty;
        try alternatives.append(p.gpa, try p.alternative());
        while (p.peekIs('|')) {
            p.pos += 1;
            try alternatives.append(p.gpa, try p.alternative());
        }
        if (alternatives.items.len == 1) return alternatives.items[0];
        return p.newNode(.{ .alternation = alternatives.items });
    }

    fn alternative(p: *Parser) CompileError!*Node {
        var terms: std.ArrayList(*Node) = .empty;
        while (!p.atEnd() and !p.peekIs('|') and !p.peekIs(')')) {
            try terms.append(p.gpa, try p.term());
        }
        if (terms.items.len == 0) return p.newNode(.empty);
        if (terms.items.len == 1) return terms.items[0];
        return p.newNode(.{ .concat = terms.items });
    }

    fn term(p: *Parser) CompileError!*Node {
        const groups_first = p.group_next;
        const atom_start = p.pos;
        const node = try p.atom();
        const quantifiable = switch (node.*) {
            .assertion => false,
            else => true,
        };
        const q = try p.quantifier() orelse return node;
        if (!quantifiable) {
            p.pos = atom_start;
            return p.fail("Nothing to repeat");
        }
        return p.newNode(.{ .repeat = .{
            .body = node,
            .min = q.min,
            .max = q.max,
            .greedy = q.greedy,
            .groups_first = groups_first,
            .groups_end = p.group_next,
        } });
    }

    const Quantifier = struct { min: u32, max: ?u32, greedy: bool };

    fn quantifier(p: *Parser) CompileError!?Quantifier {
        const u = p.peekUnit() orelse return null;
        var q: Quantifier = switch (u) {
            '*' => .{ .min = 0, .max = null, .greedy = true },
            '+' => .{ .min = 1, .max = null, .greedy = true },
            '?' => .{ .min = 0, .max = 1, .greedy = true },
            '{' => (try p.braces()) orelse return null,
            else => return null,
        };
        if (u != '{') p.pos += 1;
        if (p.peekIs('?')) {
            p.pos += 1;
            q.greedy = false;
        }
        return q;
    }

    /// `{n}`, `{n,}`, `{n,m}`; null when the brace starts no quantifier (a literal `{`
    /// outside unicode mode).
    fn braces(p: *Parser) CompileError!?Quantifier {
        const start = p.pos;
        p.pos += 1;
        const min = p.decimal() orelse {
            p.pos = start;
            if (p.unicode) return p.fail("Incomplete quantifier");
            return null;
        };
        var max: ?u32 = min;
        if (p.peekIs(',')) {
            p.pos += 1;
            max = if (p.peekIs('}')) null else p.decimal() orelse {
                p.pos = start;
                if (p.unicode) return p.fail("Incomplete quantifier");
                return null;
            };
        }
        if (!p.peekIs('}')) {
            p.pos = start;
            if (p.unicode) return p.fail("Incomplete quantifier");
            return null;
        }
        p.pos += 1;
        if (max) |m| if (m < min) return p.fail("numbers out of order in {} quantifier");
        return .{ .min = min, .max = max, .greedy = true };
    }

    /// A decimal number, saturated (a count past the program limit fails later anyway).
    fn decimal(p: *Parser) ?u32 {
        const start = p.pos;
        var n: u32 = 0;
        while (p.peekUnit()) |u| {
            if (u < '0' or u > '9') break;
            n = n *| 10 +| (u - '0');
            p.pos += 1;
        }
        if (p.pos == start) return null;
        return n;
    }

    fn atom(p: *Parser) CompileError!*Node {
        const u = p.src[p.pos];
        switch (u) {
            '^' => {
                p.pos += 1;
                return p.newNode(.{ .assertion = if (p.multiline) .line_start else .input_start });
            },
            '$' => {
                p.pos += 1;
                return p.newNode(.{ .assertion = if (p.multiline) .line_end else .input_end });
            },
            '.' => {
                p.pos += 1;
                return p.newNode(.any);
            },
            '(' => return p.group(),
            '[' => return p.class(),
            '\\' => return p.atomEscape(),
            '*', '+', '?' => return p.fail("Nothing to repeat"),
            '{' => {
                if (p.unicode) return p.fail("Nothing to repeat");
                if ((try p.braces()) != null) return p.fail("Nothing to repeat");
                p.pos += 1;
                return p.literal('{');
            },
            ')' => return p.fail("Unmatched ')'"),
            ']', '}' => {
                if (p.unicode) return p.fail("Lone quantifier brackets");
                p.pos += 1;
                return p.literal(u);
            },
            else => return p.literal(p.nextChar()),
        }
    }

    fn literal(p: *Parser, c: u21) CompileError!*Node {
        return p.newNode(.{ .char = c });
    }

    fn group(p: *Parser) CompileError!*Node {
        p.pos += 1; // (
        var capture: ?u32 = null;
        if (p.peekIs('?')) {
            const kind = if (p.pos + 1 < p.src.len) p.src[p.pos + 1] else 0;
            switch (kind) {
                ':' => p.pos += 2,
                '=', '!' => return p.fail("lookahead assertions ((?=...) and (?!...)) are not supported: sluice runs regular expressions in linear time"),
                '<' => {
                    if (p.peekAt(2, '=') or p.peekAt(2, '!')) {
                        return p.fail("lookbehind assertions ((?<=...) and (?<!...)) are not supported: sluice runs regular expressions in linear time");
                    }
                    p.pos += 2;
                    const name = try p.groupName();
                    for (p.names.items) |existing| {
                        if (std.mem.eql(u16, existing.name, name)) return p.fail("Duplicate capture group name");
                    }
                    capture = p.group_next;
                    try p.names.append(p.gpa, .{ .name = name, .group = p.group_next });
                },
                else => return p.fail("Invalid group"),
            }
        } else {
            capture = p.group_next;
        }
        if (capture != null) {
            if (p.group_next >= groups_max) return p.fail("too many capture groups");
            p.group_next += 1;
        }
        const body = try p.disjunction();
        if (!p.peekIs(')')) return p.fail("Unterminated group");
        p.pos += 1;
        return p.newNode(.{ .group = .{ .body = body, .capture = capture } });
    }

    /// A group's name after `(?<` (or `\k<`), through its `>`.
    fn groupName(p: *Parser) CompileError![]const u16 {
        const start = p.pos;
        while (true) {
            if (p.atEnd()) return p.fail("Invalid capture group name");
            const at = p.pos;
            var c: u21 = p.nextCharAny();
            if (c == '>') break;
            if (c == '\\') {
                c = p.unicodeEscapeInName() orelse return p.fail("Invalid capture group name");
            }
            const ok = if (at == start) (c == '$' or c == '_' or casing.isIdStart(c)) else (c == '$' or c == '_' or c == 0x200C or c == 0x200D or casing.isIdContinue(c));
            if (!ok) return p.fail("Invalid capture group name");
        }
        const raw = p.src[start .. p.pos - 1];
        if (raw.len == 0) return p.fail("Invalid capture group name");
        if (std.mem.indexOfScalar(u16, raw, '\\') == null) return raw;
        // A name spelled with \u escapes is stored as its characters.
        var out: std.ArrayList(u16) = .empty;
        var i: usize = 0;
        var sub: Parser = p.*;
        sub.src = raw;
        sub.pos = 0;
        while (sub.pos < raw.len) : (i += 1) {
            var c: u21 = sub.nextCharAny();
            if (c == '\\') c = sub.unicodeEscapeInName().?;
            try appendCodePoint(&out, p.gpa, c);
        }
        return out.items;
    }

    /// A code point, surrogate pairs combined whatever the mode (group names are code points).
    fn nextCharAny(p: *Parser) u21 {
        const u = p.src[p.pos];
        p.pos += 1;
        if (isLead(u) and p.pos < p.src.len and isTrail(p.src[p.pos])) {
            p.pos += 1;
            return combine(u, p.src[p.pos - 1]);
        }
        return u;
    }

    fn unicodeEscapeInName(p: *Parser) ?u21 {
        if (!p.peekIs('u')) return null;
        p.pos += 1;
        const saved_unicode = p.unicode;
        p.unicode = true;
        defer p.unicode = saved_unicode;
        return p.unicodeEscape() catch null;
    }

    /// After `\u`: `XXXX` (a surrogate pair of two in unicode mode) or `{X...}` (unicode mode).
    fn unicodeEscape(p: *Parser) CompileError!?u21 {
        if (p.unicode and p.peekIs('{')) {
            const start = p.pos;
            p.pos += 1;
            var v: u32 = 0;
            var digits: u32 = 0;
            while (p.peekUnit()) |u| {
                const d = hexValue(u) orelse break;
                v = v * 16 + d;
                digits += 1;
                if (v > 0x10FFFF) return p.fail("Invalid Unicode escape");
                p.pos += 1;
            }
            if (digits == 0 or !p.peekIs('}')) {
                p.pos = start;
                return p.fail("Invalid Unicode escape");
            }
            p.pos += 1;
            return @intCast(v);
        }
        const first = p.hexDigits(4) orelse return null;
        if (p.unicode and isLead(@intCast(first)) and p.peekIs('\\') and p.peekAt(1, 'u')) {
            const saved = p.pos;
            p.pos += 2;
            if (p.hexDigits(4)) |second| {
                if (isTrail(@intCast(second))) return combine(@intCast(first), @intCast(second));
            }
            p.pos = saved;
        }
        return @intCast(first);
    }

    fn hexDigits(p: *Parser, n: usize) ?u32 {
        if (p.pos + n > p.src.len) return null;
        var v: u32 = 0;
        for (p.src[p.pos .. p.pos + n]) |u| v = v * 16 + (hexValue(u) orelse return null);
        p.pos += n;
        return v;
    }

    fn atomEscape(p: *Parser) CompileError!*Node {
        p.pos += 1; // backslash
        if (p.atEnd()) return p.fail("\\ at end of pattern");
        const u = p.src[p.pos];
        switch (u) {
            'b' => {
                p.pos += 1;
                return p.newNode(.{ .assertion = .word_boundary });
            },
            'B' => {
                p.pos += 1;
                return p.newNode(.{ .assertion = .not_word_boundary });
            },
            '1'...'9' => {
                const start = p.pos;
                const n = p.decimal().?;
                if (n <= p.groups_total) return p.fail("back-references (\\1, \\k<name>) are not supported: sluice runs regular expressions in linear time");
                if (p.unicode) return p.fail("Invalid escape");
                // Annex B: a number past the groups is an octal escape, or the digit 8 or 9.
                p.pos = start;
                if (u >= '8') {
                    p.pos += 1;
                    return p.literal(u);
                }
                return p.literal(p.legacyOctal());
            },
            'k' => {
                if (p.unicode or p.has_named) {
                    p.pos += 1;
                    if (!p.peekIs('<')) return p.fail("Invalid named reference");
                    return p.fail("back-references (\\1, \\k<name>) are not supported: sluice runs regular expressions in linear time");
                }
                p.pos += 1;
                return p.literal('k');
            },
            else => {},
        }
        var set: std.ArrayList(Range) = .empty;
        if (try p.classEscape(&set)) {
            return p.classNode(set.items, false);
        }
        return p.literal(try p.characterEscape(false));
    }

    /// \d \D \w \W \s \S (and \p, refused): adds the set's ranges; false if the escape is
    /// none of those (nothing consumed).
    fn classEscape(p: *Parser, set: *std.ArrayList(Range)) CompileError!bool {
        const u = p.src[p.pos];
        const base: []const Range = switch (u) {
            'd', 'D' => &digit_ranges,
            'w', 'W' => &word_ranges,
            's', 'S' => &space_ranges,
            'p', 'P' => {
                if (!p.unicode) return false;
                return p.fail("Unicode property escapes (\\p{...}) are not supported");
            },
            else => return false,
        };
        p.pos += 1;
        if (u >= 'a') {
            try set.appendSlice(p.gpa, base);
        } else {
            try appendComplement(set, p.gpa, base);
        }
        return true;
    }

    /// A character escape after the backslash: the code point it stands for.
    fn characterEscape(p: *Parser, in_class: bool) CompileError!u21 {
        const u = p.src[p.pos];
        p.pos += 1;
        switch (u) {
            't' => return '\t',
            'n' => return '\n',
            'v' => return 0x0B,
            'f' => return 0x0C,
            'r' => return '\r',
            'c' => {
                if (p.peekUnit()) |l| {
                    if ((l >= 'a' and l <= 'z') or (l >= 'A' and l <= 'Z')) {
                        p.pos += 1;
                        return l % 32;
                    }
                    if (in_class and !p.unicode and ((l >= '0' and l <= '9') or l == '_')) {
                        p.pos += 1;
                        return l % 32;
                    }
                }
                if (p.unicode) return p.fail("Invalid Unicode escape");
                p.pos -= 1; // `\c` is a backslash, then `c`.
                return '\\';
            },
            '0' => {
                if (p.peekUnit()) |d| if (d >= '0' and d <= '9') {
                    if (p.unicode) return p.fail(if (in_class) "Invalid class escape" else "Invalid decimal escape");
                    p.pos -= 1;
                    return p.legacyOctal();
                };
                return 0;
            },
            'x' => {
                if (p.hexDigits(2)) |v| return @intCast(v);
                if (p.unicode) return p.fail("Invalid escape");
                return 'x';
            },
            'u' => {
                if (try p.unicodeEscape()) |v| return v;
                if (p.unicode) return p.fail("Invalid Unicode escape");
                return 'u';
            },
            '-' => {
                if (p.unicode and !in_class) return p.fail("Invalid escape");
                return '-';
            },
            else => {
                if (p.unicode) {
                    if (std.mem.indexOfScalar(u8, "^$\\.*+?()[]{}|/", if (u < 128) @intCast(u) else 0) == null) {
                        return p.fail("Invalid escape");
                    }
                    return u;
                }
                if (in_class and u >= '1' and u <= '9') {
                    p.pos -= 1;
                    if (u >= '8') {
                        p.pos += 1;
                        return u;
                    }
                    return p.legacyOctal();
                }
                p.pos -= 1;
                return p.nextChar();
            },
        }
    }

    /// Annex B's octal escape: up to three octal digits, at most 0o377.
    fn legacyOctal(p: *Parser) u21 {
        var v: u21 = 0;
        var n: usize = 0;
        while (n < 3) : (n += 1) {
            const d = p.peekUnit() orelse break;
            if (d < '0' or d > '7') break;
            if (v * 8 + (d - '0') > 0o377) break;
            v = v * 8 + (d - '0');
            p.pos += 1;
        }
        return v;
    }

    fn class(p: *Parser) CompileError!*Node {
        p.pos += 1; // [
        var negated = false;
        if (p.peekIs('^')) {
            p.pos += 1;
            negated = true;
        }
        var set: std.ArrayList(Range) = .empty;
        if (p.sets) {
            const ranges = try p.classSetBody();
            return p.classNode(ranges, negated);
        }
        while (true) {
            if (p.atEnd()) return p.fail("Unterminated character class");
            if (p.peekIs(']')) {
                p.pos += 1;
                break;
            }
            const first = try p.classAtom(&set);
            if (p.peekIs('-') and !p.peekAt(1, ']') and p.pos + 1 < p.src.len) {
                p.pos += 1;
                const second = try p.classAtom(&set);
                if (first == null or second == null) {
                    if (p.unicode) return p.fail("Invalid character class");
                    // Annex B: `[\d-z]` is \d, `-` and z.
                    if (first) |c| try set.append(p.gpa, .{ .lo = c, .hi = c });
                    try set.append(p.gpa, .{ .lo = '-', .hi = '-' });
                    if (second) |c| try set.append(p.gpa, .{ .lo = c, .hi = c });
                    continue;
                }
                if (second.? < first.?) return p.fail("Range out of order in character class");
                try set.append(p.gpa, .{ .lo = first.?, .hi = second.? });
                continue;
            }
            if (first) |c| try set.append(p.gpa, .{ .lo = c, .hi = c });
        }
        return p.classNode(set.items, negated);
    }

    /// One class member: a character (returned), or a class escape (its ranges added, null).
    fn classAtom(p: *Parser, set: *std.ArrayList(Range)) CompileError!?u21 {
        if (p.atEnd()) return p.fail("Unterminated character class");
        if (!p.peekIs('\\')) return p.nextChar();
        p.pos += 1;
        if (p.atEnd()) return p.fail("\\ at end of pattern");
        if (try p.classEscape(set)) return null;
        if (p.peekIs('b')) {
            p.pos += 1;
            return 0x08;
        }
        if (p.unicode and p.peekIs('-')) {
            p.pos += 1;
            return '-';
        }
        if (!p.unicode and p.peekIs('k')) {
            p.pos += 1;
            return 'k';
        }
        return try p.characterEscape(true);
    }

    /// A class's contents in `v` mode, through its `]`: operands (characters, ranges,
    /// class escapes, nested classes, `\q{...}` of single characters) joined by union, or
    /// by one of `--` (difference) and `&&` (intersection) throughout. Returns sorted,
    /// merged ranges.
    fn classSetBody(p: *Parser) CompileError![]Range {
        p.depth += 1;
        defer p.depth -= 1;
        if (p.depth > depth_max) return p.fail("regular expression nested too deeply");
        var acc = try p.classSetOperand(true);
        const Operator = enum { none, difference, intersection };
        var operator: Operator = .none;
        while (true) {
            if (p.atEnd()) return p.fail("Unterminated character class");
            if (p.peekIs(']')) {
                p.pos += 1;
                return acc;
            }
            const next: Operator = if (p.peekIs('-') and p.peekAt(1, '-'))
                .difference
            else if (p.peekIs('&') and p.peekAt(1, '&'))
                .intersection
            else
                .none;
            if (operator != .none and next != operator) return p.fail("Invalid set operation in character class");
            if (next == .none) {
                const more = try p.classSetOperand(true);
                var joined: std.ArrayList(Range) = .empty;
                try joined.appendSlice(p.gpa, acc);
                try joined.appendSlice(p.gpa, more);
                acc = try normalise(p.gpa, joined.items);
                continue;
            }
            p.pos += 2;
            operator = next;
            const right = try p.classSetOperand(false);
            acc = if (next == .difference) try difference(p.gpa, acc, right) else try intersection(p.gpa, acc, right);
        }
    }

    fn classSetOperand(p: *Parser, range_allowed: bool) CompileError![]Range {
        if (p.atEnd()) return p.fail("Unterminated character class");
        var set: std.ArrayList(Range) = .empty;
        if (p.peekIs('[')) {
            p.pos += 1;
            var negated = false;
            if (p.peekIs('^')) {
                p.pos += 1;
                negated = true;
            }
            const inner = try p.classSetBody();
            if (!negated) return inner;
            try appendComplement(&set, p.gpa, inner);
            return set.items;
        }
        if (p.peekIs('\\') and p.peekAt(1, 'q')) {
            p.pos += 2;
            if (!p.peekIs('{')) return p.fail("Invalid escape");
            p.pos += 1;
            while (!p.peekIs('}')) {
                if (p.atEnd()) return p.fail("Invalid escape");
                const c = try p.classSetChar();
                if (!p.peekIs('|') and !p.peekIs('}')) return p.fail("strings in character classes (\\q{...} of more than one character) are not supported");
                try set.append(p.gpa, .{ .lo = c, .hi = c });
                if (p.peekIs('|')) p.pos += 1;
            }
            p.pos += 1;
            return normalise(p.gpa, set.items);
        }
        if (p.peekIs('\\')) {
            p.pos += 1;
            if (p.atEnd()) return p.fail("\\ at end of pattern");
            if (try p.classEscape(&set)) return normalise(p.gpa, set.items);
            p.pos -= 1;
        }
        const lo = try p.classSetChar();
        var hi = lo;
        if (range_allowed and p.peekIs('-') and !p.peekAt(1, '-')) {
            p.pos += 1;
            hi = try p.classSetChar();
            if (hi < lo) return p.fail("Range out of order in character class");
        }
        try set.append(p.gpa, .{ .lo = lo, .hi = hi });
        return set.items;
    }

    /// One character of a `v`-mode class: a literal (not one of the class syntax
    /// characters) or an escape.
    fn classSetChar(p: *Parser) CompileError!u21 {
        if (p.atEnd()) return p.fail("Unterminated character class");
        if (p.peekIs('\\')) {
            p.pos += 1;
            if (p.atEnd()) return p.fail("\\ at end of pattern");
            if (p.peekIs('b')) {
                p.pos += 1;
                return 0x08;
            }
            const u = p.src[p.pos];
            if (u < 128 and std.mem.indexOfScalar(u8, "&-!#%,:;<=>@`~", @intCast(u)) != null) {
                p.pos += 1;
                return u;
            }
            return p.characterEscape(true);
        }
        const u = p.src[p.pos];
        if (u < 128 and std.mem.indexOfScalar(u8, "()[]{}/-|", @intCast(u)) != null) return p.fail("Invalid set operation in character class");
        // The reserved double punctuators (`&&`, `!!`, `##`...) are errors, not two characters.
        if (u < 128 and std.mem.indexOfScalar(u8, "&!#$%*+,.:;<=>?@^`~", @intCast(u)) != null and p.peekAt(1, u)) {
            return p.fail("Invalid set operation in character class");
        }
        return p.nextChar();
    }

    fn classNode(p: *Parser, set: []const Range, negated: bool) CompileError!*Node {
        const start: u32 = @intCast(p.ranges.items.len);
        const merged = try normalise(p.gpa, set);
        try p.ranges.appendSlice(p.gpa, merged);
        return p.newNode(.{ .class = .{ .start = start, .len = @intCast(merged.len), .negated = negated } });
    }
};

/// Sorts and merges ranges.
fn normalise(gpa: std.mem.Allocator, set: []const Range) CompileError![]Range {
    const items = try gpa.dupe(Range, set);
    std.mem.sort(Range, items, {}, struct {
        fn less(_: void, a: Range, b: Range) bool {
            return a.lo < b.lo;
        }
    }.less);
    var n: usize = 0;
    for (items) |r| {
        if (n > 0 and @as(u32, r.lo) <= @as(u32, items[n - 1].hi) + 1) {
            items[n - 1].hi = @max(items[n - 1].hi, r.hi);
        } else {
            items[n] = r;
            n += 1;
        }
    }
    return items[0..n];
}

fn intersection(gpa: std.mem.Allocator, a: []const Range, b: []const Range) CompileError![]Range {
    var out: std.ArrayList(Range) = .empty;
    var i: usize = 0;
    var j: usize = 0;
    while (i < a.len and j < b.len) {
        const lo = @max(a[i].lo, b[j].lo);
        const hi = @min(a[i].hi, b[j].hi);
        if (lo <= hi) try out.append(gpa, .{ .lo = lo, .hi = hi });
        if (a[i].hi < b[j].hi) i += 1 else j += 1;
    }
    return out.items;
}

fn difference(gpa: std.mem.Allocator, a: []const Range, b: []const Range) CompileError![]Range {
    var complement: std.ArrayList(Range) = .empty;
    try appendComplement(&complement, gpa, b);
    return intersection(gpa, a, complement.items);
}

fn appendComplement(set: *std.ArrayList(Range), gpa: std.mem.Allocator, base: []const Range) CompileError!void {
    var next: u32 = 0;
    for (base) |r| {
        if (r.lo > next) try set.append(gpa, .{ .lo = @intCast(next), .hi = r.lo - 1 });
        next = @as(u32, r.hi) + 1;
    }
    if (next <= 0x10FFFF) try set.append(gpa, .{ .lo = @intCast(next), .hi = 0x10FFFF });
}

const digit_ranges = [_]Range{.{ .lo = '0', .hi = '9' }};
const word_ranges = [_]Range{
    .{ .lo = '0', .hi = '9' }, .{ .lo = 'A', .hi = 'Z' }, .{ .lo = '_', .hi = '_' }, .{ .lo = 'a', .hi = 'z' },
};
const space_ranges = [_]Range{
    .{ .lo = 0x09, .hi = 0x0D },     .{ .lo = ' ', .hi = ' ' },       .{ .lo = 0xA0, .hi = 0xA0 },
    .{ .lo = 0x1680, .hi = 0x1680 }, .{ .lo = 0x2000, .hi = 0x200A }, .{ .lo = 0x2028, .hi = 0x2029 },
    .{ .lo = 0x202F, .hi = 0x202F }, .{ .lo = 0x205F, .hi = 0x205F }, .{ .lo = 0x3000, .hi = 0x3000 },
    .{ .lo = 0xFEFF, .hi = 0xFEFF },
};

fn hexValue(u: u16) ?u32 {
    return switch (u) {
        '0'...'9' => u - '0',
        'a'...'f' => u - 'a' + 10,
        'A'...'F' => u - 'A' + 10,
        else => null,
    };
}

inline fn isLead(u: u32) bool {
    return u >= 0xD800 and u <= 0xDBFF;
}

inline fn isTrail(u: u32) bool {
    return u >= 0xDC00 and u <= 0xDFFF;
}

inline fn combine(lead: u32, trail: u32) u21 {
    return @intCast(0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00));
}

fn appendCodePoint(out: *std.ArrayList(u16), gpa: std.mem.Allocator, c: u21) CompileError!void {
    if (c < 0x10000) return out.append(gpa, @intCast(c));
    const v = c - 0x10000;
    try out.append(gpa, @intCast(0xD800 + (v >> 10)));
    try out.append(gpa, @intCast(0xDC00 + (v & 0x3FF)));
}

/// Counts the capturing groups of a pattern, and whether any is named, before parsing (a
/// `\2` before its group is a back-reference; `\k` means one only where names exist).
fn countGroups(src: []const u16) struct { count: u32, named: bool } {
    var count: u32 = 0;
    var named = false;
    var i: usize = 0;
    var in_class = false;
    while (i < src.len) : (i += 1) {
        switch (src[i]) {
            '\\' => i += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' => if (!in_class) {
                if (i + 1 < src.len and src[i + 1] == '?') {
                    if (i + 2 < src.len and src[i + 2] == '<' and i + 3 < src.len and src[i + 3] != '=' and src[i + 3] != '!') {
                        count += 1;
                        named = true;
                    }
                } else count += 1;
            },
            else => {},
        }
    }
    return .{ .count = count, .named = named };
}

// ---------------------------------------------------------------------------------------
// Compiling.

pub const no_loop: u32 = std.math.maxInt(u32);

/// Whether a node can match the empty string.
fn nullable(node: *const Node) bool {
    return switch (node.*) {
        .empty, .assertion => true,
        .char, .any, .class => false,
        .group => |g| nullable(g.body),
        .concat => |terms| for (terms) |t| {
            if (!nullable(t)) break false;
        } else true,
        .alternation => |alts| for (alts) |a| {
            if (nullable(a)) break true;
        } else false,
        .repeat => |r| r.min == 0 or nullable(r.body),
    };
}

const Emitter = struct {
    gpa: std.mem.Allocator,
    insts: std.ArrayList(Inst) = .empty,
    flags: Flags,
    /// The next free capture slot for a loop's empty check (after the groups' slots).
    loop_slot_next: u32,
    loop_slots: u32 = 0,
    /// Per instruction: the slot of the innermost checked loop around it.
    loop_of: std.ArrayList(u32) = .empty,

    fn emit(e: *Emitter, inst: Inst) CompileError!u32 {
        if (e.insts.items.len >= insts_max) return error.SyntaxError;
        try e.insts.append(e.gpa, inst);
        try e.loop_of.append(e.gpa, no_loop);
        return @intCast(e.insts.items.len - 1);
    }

    fn gen(e: *Emitter, node: *const Node) CompileError!void {
        switch (node.*) {
            .empty => {},
            .char => |c| _ = try e.emit(.{ .op = .char, .a = if (e.flags.ignore_case) canonicalize(c, e.flags.unicode) else c }),
            .any => _ = try e.emit(.{ .op = if (e.flags.dot_all) .any else .any_but_newline }),
            .class => |c| _ = try e.emit(.{ .op = .class, .a = c.start, .b = c.len | (if (c.negated) negated_bit else 0) }),
            .assertion => |op| _ = try e.emit(.{ .op = op }),
            .group => |g| {
                if (g.capture) |i| _ = try e.emit(.{ .op = .save, .a = 2 * i });
                try e.gen(g.body);
                if (g.capture) |i| _ = try e.emit(.{ .op = .save, .a = 2 * i + 1 });
            },
            .concat => |terms| for (terms) |t| try e.gen(t),
            .alternation => |alts| {
                // split L1, next; L1: a; jump end; next: split L2, ... ; last
                var jumps: std.ArrayList(u32) = .empty;
                for (alts, 0..) |alt, i| {
                    if (i + 1 < alts.len) {
                        const split = try e.emit(.{ .op = .split });
                        e.insts.items[split].a = split + 1;
                        try e.gen(alt);
                        try jumps.append(e.gpa, try e.emit(.{ .op = .jump }));
                        e.insts.items[split].b = @intCast(e.insts.items.len);
                    } else try e.gen(alt);
                }
                const end: u32 = @intCast(e.insts.items.len);
                for (jumps.items) |j| e.insts.items[j].a = end;
            },
            .repeat => |r| try e.repeat(r),
        }
    }

    fn resetGroups(e: *Emitter, r: Repeat) CompileError!void {
        if (r.groups_end > r.groups_first) {
            _ = try e.emit(.{ .op = .reset, .a = 2 * r.groups_first, .b = 2 * r.groups_end });
        }
    }

    fn repeat(e: *Emitter, r: Repeat) CompileError!void {
        var i: u32 = 0;
        while (i < r.min) : (i += 1) {
            try e.resetGroups(r);
            try e.gen(r.body);
        }
        // Only a body that can match the empty string needs the empty check.
        const checked = nullable(r.body);
        if (r.max) |max| {
            // Each optional copy: split (body, end); the skips all jump to the end.
            var splits: std.ArrayList(u32) = .empty;
            var k: u32 = r.min;
            while (k < max) : (k += 1) {
                const split = try e.emit(.{ .op = .split });
                try splits.append(e.gpa, split);
                try e.iteration(r, checked);
            }
            const end: u32 = @intCast(e.insts.items.len);
            for (splits.items) |s| e.setSplit(s, s + 1, end, r.greedy);
            return;
        }
        // L: split body, end; body: [save slot]; reset; body; [loop_check slot]; jump L
        const top = try e.emit(.{ .op = .split });
        try e.iteration(r, checked);
        _ = try e.emit(.{ .op = .jump, .a = top });
        e.setSplit(top, top + 1, @intCast(e.insts.items.len), r.greedy);
    }

    /// One iteration of a quantified body; with the empty check, its instructions are
    /// tagged with the loop's slot (see `Program.loop_of`).
    fn iteration(e: *Emitter, r: Repeat, checked: bool) CompileError!void {
        if (!checked) {
            try e.resetGroups(r);
            return e.gen(r.body);
        }
        const slot = try e.loopSlot();
        const start: u32 = @intCast(e.insts.items.len);
        _ = try e.emit(.{ .op = .save, .a = slot });
        try e.resetGroups(r);
        try e.gen(r.body);
        _ = try e.emit(.{ .op = .loop_check, .a = slot });
        for (e.loop_of.items[start + 1 ..]) |*tag| {
            if (tag.* == no_loop) tag.* = slot;
        }
    }

    fn loopSlot(e: *Emitter) CompileError!u32 {
        const slot = e.loop_slot_next;
        e.loop_slot_next += 1;
        e.loop_slots += 1;
        if (e.loop_slots > 4 * insts_max) return error.SyntaxError;
        return slot;
    }

    fn setSplit(e: *Emitter, at: u32, body: u32, exit: u32, greedy: bool) void {
        e.insts.items[at].a = if (greedy) body else exit;
        e.insts.items[at].b = if (greedy) exit else body;
    }
};

/// Compiles a pattern (UTF-16 units) with its flags. On a SyntaxError, `failure` says why
/// in V8's words (or names the refused feature).
pub fn compile(gpa: std.mem.Allocator, src: []const u16, flags: Flags, failure: *Failure) CompileError!*Program {
    if (src.len > pattern_units_max) {
        failure.* = .{ .message = "regular expression too large" };
        return error.SyntaxError;
    }
    const counted = countGroups(src);
    var p: Parser = .{
        .gpa = gpa,
        .src = src,
        .unicode = flags.unicode,
        .sets = flags.unicode_sets,
        .ignore_case = flags.ignore_case,
        .dot_all = flags.dot_all,
        .multiline = flags.multiline,
        .has_named = counted.named,
        .groups_total = counted.count,
    };
    const root = p.disjunction() catch |err| switch (err) {
        error.SyntaxError => {
            failure.* = .{ .message = p.failure };
            return err;
        },
        else => return err,
    };
    if (!p.atEnd()) {
        failure.* = .{ .message = "Unmatched ')'" };
        return error.SyntaxError;
    }
    const group_count = p.group_next;
    var e: Emitter = .{ .gpa = gpa, .flags = flags, .loop_slot_next = 2 * group_count };
    const body = blk: {
        _ = e.emit(.{ .op = .save, .a = 0 }) catch |err| break :blk err;
        e.gen(root) catch |err| break :blk err;
        _ = e.emit(.{ .op = .save, .a = 1 }) catch |err| break :blk err;
        _ = e.emit(.{ .op = .match }) catch |err| break :blk err;
    };
    _ = body catch |err| switch (err) {
        error.SyntaxError => {
            failure.* = .{ .message = "regular expression too large" };
            return err;
        },
        else => return err,
    };
    // Each marked instruction is explored at most twice per step (once with its loop's
    // iteration empty so far, once not); a loop check (unmarked) once per entry pushed for
    // it, which the others bound: four times their pushes is enough.
    var stack_max: u32 = 2;
    for (e.insts.items) |inst| {
        stack_max += switch (inst.op) {
            .split, .save, .loop_check => 2,
            .reset => inst.b - inst.a + 1,
            else => 1,
        };
    }
    const program = try gpa.create(Program);
    program.* = .{
        .insts = e.insts.items,
        .ranges = p.ranges.items,
        .group_count = group_count,
        .slot_count = e.loop_slot_next,
        .names = p.names.items,
        .flags = flags,
        .stack_max = 4 * stack_max,
        .loop_of = e.loop_of.items,
    };
    return program;
}

/// The canonical form of a character for case-insensitive matching: its simple upper case
/// (a non-unicode pattern keeps a character whose upper case is ASCII and it is not).
pub fn canonicalize(c: u21, unicode: bool) u21 {
    if (c < 128) return if (c >= 'a' and c <= 'z') c - 32 else c;
    if (isLead(c) or isTrail(c)) return c;
    if (unicode) {
        // Simple case folding, approximated by the lower case of the upper case.
        return casing.mapSimple(.upper, casing.mapSimple(.lower, casing.mapSimple(.upper, c)));
    }
    const upper = casing.mapSimple(.upper, c);
    if (upper < 128 or upper > 0xFFFF) return c;
    return upper;
}

// ---------------------------------------------------------------------------------------
// Matching.

/// What one run needs besides the program, sized for it once (a RegExp object keeps its
/// scratch, so a loop of `test` calls allocates nothing after the first).
pub const Scratch = struct {
    lists: [2]List,
    stack: []StackEntry,
    work: []i32,
    best: []i32,

    const List = struct {
        pcs: []u32,
        caps: []i32,
        mark: []u32,
        len: u32 = 0,
        generation: u32 = 1,

        fn clear(l: *List) void {
            l.len = 0;
            l.generation +%= 1;
            if (l.generation == 0) {
                @memset(l.mark, 0);
                l.generation = 1;
            }
        }
    };

    const StackEntry = struct {
        /// `explore`: the pc; `restore`: the slot.
        a: u32,
        value: i32,
        restore: bool,
    };

    pub fn init(gpa: std.mem.Allocator, program: *const Program) error{OutOfMemory}!*Scratch {
        const n = 2 * program.insts.len; // Two states per instruction (see loop_of).
        const slots = program.slot_count;
        const s = try gpa.create(Scratch);
        for (&s.lists) |*l| {
            l.* = .{
                .pcs = try gpa.alloc(u32, n),
                .caps = try gpa.alloc(i32, n * slots),
                .mark = try gpa.alloc(u32, n),
            };
            @memset(l.mark, 0);
        }
        s.stack = try gpa.alloc(StackEntry, program.stack_max);
        s.work = try gpa.alloc(i32, slots);
        s.best = try gpa.alloc(i32, slots);
        return s;
    }

    /// The bytes `init` takes for a program, to charge for before allocating.
    pub fn bytesFor(program: *const Program) usize {
        const n = 2 * program.insts.len;
        return 2 * n * (8 + 4 * @as(usize, program.slot_count)) + program.stack_max * 12 + 8 * @as(usize, program.slot_count);
    }
};

/// Finds a match at or after `start` (at `start` only, when anchored: a sticky RegExp). Returns the
/// capture slots (2 per group, -1 where a group took no part), valid until the next run with
/// this scratch. `meter` has `fn step(meter, threads: usize) !void`, called at every input
/// position with the live threads, to pay for them (and stop a run that has no budget left),
/// and `fn skipped(meter, units: usize, unit_bytes: usize) !void` for input scanned in bulk.
pub fn exec(
    comptime Unit: type,
    program: *const Program,
    scratch: *Scratch,
    input: []const Unit,
    start: usize,
    anchored: bool,
    meter: anytype,
) !?[]const i32 {
    assert(start <= input.len);
    const slots = program.slot_count;
    var m: Matcher(Unit) = .{ .program = program, .scratch = scratch, .input = input };
    var clist = &scratch.lists[0];
    var nlist = &scratch.lists[1];
    clist.clear();
    nlist.clear();
    var matched = false;
    const first = if (anchored) null else firstChar(program);
    // With no thread alive, a match can only start where the first character is: scan to
    // it in bulk (paid for like any bulk read) instead of stepping position by position.
    var pos = if (first) |c| try m.skipTo(c, start, meter) orelse return null else start;
    @memset(scratch.work, -1);
    m.add(clist, 0, pos);
    while (true) {
        if (clist.len == 0) {
            // Every thread died: only a match starting further on is left.
            if (matched or anchored or pos >= input.len) break;
            pos += m.charAt(pos).?.len;
            if (first) |c| pos = try m.skipTo(c, pos, meter) orelse break;
            clist.clear(); // The failed start at the last position marked its instructions.
            @memset(scratch.work, -1);
            m.add(clist, 0, pos);
            continue;
        }
        try meter.step(clist.len);
        const ch = m.charAt(pos);
        nlist.clear();
        var i: u32 = 0;
        while (i < clist.len) : (i += 1) {
            const pc = clist.pcs[i];
            const caps = clist.caps[i * slots ..][0..slots];
            const inst = program.insts[pc];
            const ok = switch (inst.op) {
                .match => {
                    @memcpy(scratch.best, caps);
                    matched = true;
                    break; // Threads of lower priority are cut.
                },
                .char => ch != null and m.canon(ch.?.c) == inst.a,
                .any => ch != null,
                .any_but_newline => ch != null and !isLineTerminator(ch.?.c),
                .class => ch != null and m.inClass(inst, ch.?.c),
                else => unreachable, // Only consuming instructions and match are on a list.
            };
            if (ok) {
                @memcpy(scratch.work, caps);
                m.add(nlist, pc + 1, pos + ch.?.len);
            }
        }
        const c = ch orelse break; // The end of the input: nothing more can be consumed.
        pos += c.len;
        std.mem.swap(*Scratch.List, &clist, &nlist);
        if (!matched and !anchored) {
            if (clist.len == 0) {
                if (first) |f| {
                    pos = try m.skipTo(f, pos, meter) orelse break;
                    clist.clear(); // Starts tried at the last position may have marked some.
                }
            }
            @memset(scratch.work, -1);
            m.add(clist, 0, pos);
        }
    }
    if (!matched) return null;
    return scratch.best[0 .. 2 * program.group_count];
}

/// The character every match starts with, when the program begins with one (a quick scan
/// skips positions where no match can start); not with ignore-case.
fn firstChar(program: *const Program) ?u21 {
    if (program.flags.ignore_case) return null;
    const insts = program.insts;
    var pc: usize = 0;
    while (pc < insts.len) : (pc += 1) {
        switch (insts[pc].op) {
            .save => continue,
            // A surrogate is left out: in unicode mode one inside a pair starts no match.
            .char => return if (insts[pc].a <= 0xFFFF and !(isLead(insts[pc].a) or isTrail(insts[pc].a))) @intCast(insts[pc].a) else null,
            else => return null,
        }
    }
    return null;
}

fn isLineTerminator(c: u21) bool {
    return c == '\n' or c == '\r' or c == 0x2028 or c == 0x2029;
}

fn isWordChar(c: u21) bool {
    return (c >= 'a' and c <= 'z') or (c >= 'A' and c <= 'Z') or (c >= '0' and c <= '9') or c == '_';
}

fn Matcher(comptime Unit: type) type {
    return struct {
        program: *const Program,
        scratch: *Scratch,
        input: []const Unit,

        const Self = @This();
        const Char = struct { c: u21, len: u8 };

        fn charAt(m: *const Self, pos: usize) ?Char {
            if (pos >= m.input.len) return null;
            const u: u21 = m.input[pos];
            if (Unit == u16 and m.program.flags.unicode and isLead(u) and pos + 1 < m.input.len and isTrail(m.input[pos + 1])) {
                return .{ .c = combine(u, m.input[pos + 1]), .len = 2 };
            }
            return .{ .c = u, .len = 1 };
        }

        /// The next position at or after `from` holding `c`, its scan charged to `meter`.
        fn skipTo(m: *const Self, c: u21, from: usize, meter: anytype) !?usize {
            const found = m.findUnit(c, from);
            try meter.skipped((found orelse m.input.len) - from, @sizeOf(Unit));
            return found;
        }

        fn findUnit(m: *const Self, c: u21, from: usize) ?usize {
            if (Unit == u8 and c > 0xFF) return null;
            return std.mem.indexOfScalarPos(Unit, m.input, from, @intCast(c));
        }

        inline fn canon(m: *const Self, c: u21) u21 {
            if (!m.program.flags.ignore_case) return c;
            return canonicalize(c, m.program.flags.unicode);
        }

        fn inClass(m: *const Self, inst: Inst, c: u21) bool {
            const ranges = m.program.ranges[inst.a..][0 .. inst.b & count_mask];
            var found = inRanges(ranges, c);
            if (!found and m.program.flags.ignore_case) {
                // A member matches when it canonicalises as `c` does: try the characters
                // that can (c's canonical form and the case mappings of both), each checked.
                const unicode = m.program.flags.unicode;
                const cc = canonicalize(c, unicode);
                const candidates = [_]u21{
                    cc,                          casing.mapSimple(.lower, cc),
                    casing.mapSimple(.lower, c), casing.mapSimple(.upper, c),
                };
                for (candidates) |candidate| {
                    if (candidate != c and inRanges(ranges, candidate) and canonicalize(candidate, unicode) == cc) {
                        found = true;
                        break;
                    }
                }
            }
            return found != (inst.b & negated_bit != 0);
        }

        fn inRanges(ranges: []const Range, c: u21) bool {
            var lo: usize = 0;
            var hi: usize = ranges.len;
            while (lo < hi) {
                const mid = (lo + hi) / 2;
                if (ranges[mid].hi < c) lo = mid + 1 else if (ranges[mid].lo > c) hi = mid else return true;
            }
            return false;
        }

        fn before(m: *const Self, pos: usize) ?u21 {
            if (pos == 0) return null;
            return m.input[pos - 1];
        }

        fn wordAt(m: *const Self, pos: usize) bool {
            if (pos >= m.input.len) return false;
            return m.isWord(m.input[pos]);
        }

        fn isWord(m: *const Self, c: u21) bool {
            if (isWordChar(c)) return true;
            // With ignore-case and unicode, ſ and the Kelvin sign fold into \w.
            return m.program.flags.ignore_case and m.program.flags.unicode and (c == 0x017F or c == 0x212A);
        }

        fn assertion(m: *const Self, op: Op, pos: usize) bool {
            return switch (op) {
                .input_start => pos == 0,
                .input_end => pos == m.input.len,
                .line_start => pos == 0 or isLineTerminator(m.input[pos - 1]),
                .line_end => pos == m.input.len or isLineTerminator(m.input[pos]),
                .word_boundary, .not_word_boundary => blk: {
                    const a = pos > 0 and m.isWord(m.input[pos - 1]);
                    const b = m.wordAt(pos);
                    break :blk (a != b) == (op == .word_boundary);
                },
                else => unreachable,
            };
        }

        /// Adds the thread at `pc` with the captures in `scratch.work`, following every
        /// instruction that consumes nothing, in priority order.
        fn add(m: *Self, list: *Scratch.List, pc0: u32, pos: usize) void {
            const s = m.scratch;
            const slots = m.program.slot_count;
            const insts = m.program.insts;
            const p: i32 = @intCast(pos);
            var sp: usize = 0;
            s.stack[sp] = .{ .a = pc0, .value = 0, .restore = false };
            sp += 1;
            while (sp > 0) {
                sp -= 1;
                const entry = s.stack[sp];
                if (entry.restore) {
                    s.work[entry.a] = entry.value;
                    continue;
                }
                const pc = entry.a;
                const inst = insts[pc];
                // A loop's check is not marked: a thread that reaches it having consumed
                // something must pass even when an empty iteration reached it first.
                if (inst.op != .loop_check) {
                    const loop = m.program.loop_of[pc];
                    const key = if (loop != no_loop and s.work[loop] == p) pc + insts.len else pc;
                    if (list.mark[key] == list.generation) continue;
                    list.mark[key] = list.generation;
                }
                switch (inst.op) {
                    .jump => {
                        s.stack[sp] = .{ .a = inst.a, .value = 0, .restore = false };
                        sp += 1;
                    },
                    .split => {
                        s.stack[sp] = .{ .a = inst.b, .value = 0, .restore = false };
                        s.stack[sp + 1] = .{ .a = inst.a, .value = 0, .restore = false };
                        sp += 2;
                    },
                    .save => {
                        s.stack[sp] = .{ .a = inst.a, .value = s.work[inst.a], .restore = true };
                        s.stack[sp + 1] = .{ .a = pc + 1, .value = 0, .restore = false };
                        sp += 2;
                        s.work[inst.a] = p;
                    },
                    .reset => {
                        for (inst.a..inst.b) |slot| {
                            s.stack[sp] = .{ .a = @intCast(slot), .value = s.work[slot], .restore = true };
                            sp += 1;
                            s.work[slot] = -1;
                        }
                        s.stack[sp] = .{ .a = pc + 1, .value = 0, .restore = false };
                        sp += 1;
                    },
                    .loop_check => {
                        // An iteration that consumed nothing fails, as the spec's empty check
                        // fails it; leaving the loop is a thread of its own, from the split.
                        if (s.work[inst.a] != p) {
                            s.stack[sp] = .{ .a = pc + 1, .value = 0, .restore = false };
                            sp += 1;
                        }
                    },
                    .line_start, .line_end, .input_start, .input_end, .word_boundary, .not_word_boundary => {
                        if (m.assertion(inst.op, pos)) {
                            s.stack[sp] = .{ .a = pc + 1, .value = 0, .restore = false };
                            sp += 1;
                        }
                    },
                    .char, .any, .any_but_newline, .class, .match => {
                        const i = list.len;
                        list.pcs[i] = pc;
                        @memcpy(list.caps[i * slots ..][0..slots], s.work);
                        list.len += 1;
                    },
                }
                assert(sp <= s.stack.len);
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// Tests.

const TestMeter = struct {
    steps: u64 = 0,
    fn step(t: *TestMeter, threads: usize) !void {
        t.steps += threads + 1;
    }

    fn skipped(t: *TestMeter, units: usize, unit_bytes: usize) !void {
        t.steps += units * unit_bytes / 8;
    }
};

fn testMatch(pattern: []const u8, flags_text: []const u8, input: []const u8) !?[]const i32 {
    const gpa = std.testing.allocator;
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const a = arena.allocator();
    const src = try a.alloc(u16, pattern.len);
    for (pattern, 0..) |c, i| src[i] = c;
    var failure: Failure = undefined;
    const program = try compile(a, src, Flags.parse(flags_text).?, &failure);
    const scratch = try Scratch.init(a, program);
    var meter: TestMeter = .{};
    const result = try exec(u8, program, scratch, input, 0, program.flags.sticky, &meter) orelse return null;
    return try gpa.dupe(i32, result);
}

fn expectMatch(pattern: []const u8, flags: []const u8, input: []const u8, expected: []const i32) !void {
    const got = (try testMatch(pattern, flags, input)) orelse return error.TestExpectedMatch;
    defer std.testing.allocator.free(got);
    try std.testing.expectEqualSlices(i32, expected, got);
}

test "regexp: leftmost-first matches and captures, as a backtracking engine finds them" {
    try expectMatch("b+", "", "aabbbc", &.{ 2, 5 });
    try expectMatch("b+?", "", "aabbbc", &.{ 2, 3 });
    try expectMatch("(a|ab)(c|bcd)", "", "abcd", &.{ 0, 4, 0, 1, 1, 4 });
    try expectMatch("(?:(a)|b)+", "", "ab", &.{ 0, 2, -1, -1 });
    try expectMatch("(a*)*b", "", "b", &.{ 0, 1, -1, -1 });
    try expectMatch("(a*)+b", "", "b", &.{ 0, 1, 0, 0 });
    try expectMatch("^\\d{2,3}$", "", "123", &.{ 0, 3 });
    try expectMatch("\\bfoo\\b", "", "a foo b", &.{ 2, 5 });
    try expectMatch("[^a-c]+", "i", "ABCdef", &.{ 3, 6 });
    try std.testing.expect((try testMatch("^\\d{4}$", "", "12345")) == null);
    try expectMatch("^b", "m", "a\nb", &.{ 2, 3 });
    try expectMatch("(a?b??)*", "", "ab", &.{ 0, 2, 1, 2 });
}

test "regexp: a pathological pattern runs in linear time" {
    const gpa = std.testing.allocator;
    const input = try gpa.alloc(u8, 100_000);
    defer gpa.free(input);
    @memset(input, 'a');
    try std.testing.expect((try testMatch("(a*)*b", "", input)) == null);
    const found = (try testMatch("(a|aa)+$", "", input)) orelse return error.TestExpectedMatch;
    defer gpa.free(found);
    try std.testing.expectEqualSlices(i32, &.{ 0, 100_000, 99_999, 100_000 }, found);
}

test "regexp: refused features and malformed patterns are SyntaxErrors that say why" {
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "(a)\\1", "back-references" },
        .{ "(?=a)", "lookahead" },
        .{ "(?<=a)b", "lookbehind" },
        .{ "(", "Unterminated group" },
        .{ "a**", "Nothing to repeat" },
        .{ "[b-a]", "Range out of order" },
        .{ "a{1000000}", "too large" },
    };
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    for (cases) |c| {
        const src = try arena.allocator().alloc(u16, c[0].len);
        for (c[0], 0..) |ch, i| src[i] = ch;
        var failure: Failure = .{ .message = "" };
        try std.testing.expectError(error.SyntaxError, compile(arena.allocator(), src, .{}, &failure));
        try std.testing.expect(std.mem.indexOf(u8, failure.message, c[1]) != null);
    }
}
