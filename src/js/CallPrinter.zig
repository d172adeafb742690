//! The source text V8 shows for an expression in "x is not a function", "x is not iterable"
//! and "Cannot destructure ... of 'x'": V8 prints the syntax tree around the failing
//! instruction (its CallPrinter), folding number arithmetic as its parser does; this prints
//! ours the same way. Used by the compiler when it emits an instruction that can fail so.
const std = @import("std");

const ast = @import("ast.zig");
const Node = ast.Node;
const number = @import("number.zig");
const fdlibm = @import("fdlibm.zig");

const Printer = @This();

arena: std.mem.Allocator,

/// V8 joins `a + b + c` (one operator, left to right, no parentheses) into one n-ary node.
pub fn isNary(b: ast.Binary) bool {
    switch (b.op) {
        // Comparisons are never joined.
        .eq, .ne, .strict_eq, .strict_ne, .lt, .gt, .le, .ge, .instanceof, .in => return false,
        else => {},
    }
    return b.lhs.data == .binary and b.lhs.data.binary.op == b.op and !b.lhs.parenthesized;
}

/// The source text V8 shows for an expression. `iterator`: V8 prints inside an iteration
/// error, where calls lose their "(...)" and `new` shows its callee.
pub fn render(arena: std.mem.Allocator, node: *const Node, iterator: bool) []const u8 {
    var printer: Printer = .{ .arena = arena };
    const p = &printer;
    var out: std.ArrayList(u8) = .empty;
    p.renderPrinted(&out, node, iterator, 0) catch return "(intermediate value)";
    return out.items;
}

/// Prints a node; "(intermediate value)" if it prints nothing (V8's Find with print set).
const RenderError = error{ TooLong, OutOfMemory };

fn renderPrinted(p: *Printer, out: *std.ArrayList(u8), node: *const Node, iterator: bool, depth: u32) RenderError!void {
    if (depth > 32 or out.items.len > 400) return error.TooLong;
    const before = out.items.len;
    try p.renderNode(out, node, iterator, depth);
    if (out.items.len == before) try out.appendSlice(p.arena, "(intermediate value)");
}

/// The number V8's parser folds an expression to: arithmetic, bitwise and shift operators
/// and signs on number literals.
fn foldNumber(node: *const Node, depth: u32) ?f64 {
    if (depth > 32) return null;
    switch (node.data) {
        .number => |x| return x,
        .unary => |u| {
            const x = foldNumber(u.operand, depth + 1) orelse return null;
            return switch (u.op) {
                .negate => -x,
                .plus => x,
                .bit_not => @floatFromInt(~number.toInt32(x)),
                else => null,
            };
        },
        .binary => |b| {
            const x = foldNumber(b.lhs, depth + 1) orelse return null;
            const y = foldNumber(b.rhs, depth + 1) orelse return null;
            return switch (b.op) {
                .add => x + y,
                .sub => x - y,
                .mul => x * y,
                .div => x / y,
                .mod => @rem(x, y),
                .pow => fdlibm.pow(x, y),
                .shl => @floatFromInt(number.toInt32(x) << shiftCount(y)),
                .sar => @floatFromInt(number.toInt32(x) >> shiftCount(y)),
                .shr => @floatFromInt(number.toUint32(x) >> shiftCount(y)),
                .bit_and => @floatFromInt(number.toInt32(x) & number.toInt32(y)),
                .bit_or => @floatFromInt(number.toInt32(x) | number.toInt32(y)),
                .bit_xor => @floatFromInt(number.toInt32(x) ^ number.toInt32(y)),
                else => null,
            };
        },
        else => return null,
    }
}

fn shiftCount(y: f64) u5 {
    return @intCast(number.toUint32(y) & 31);
}

fn renderNode(p: *Printer, out: *std.ArrayList(u8), node: *const Node, iterator: bool, depth: u32) RenderError!void {
    const a = p.arena;
    if (node.data == .unary or node.data == .binary) {
        if (foldNumber(node, 0)) |x| return p.renderNumber(out, x);
    }
    switch (node.data) {
        .identifier => |id| try out.appendSlice(a, id.name),
        .number => |x| try p.renderNumber(out, x),
        .string => |s| {
            try out.append(a, '"');
            try out.appendSlice(a, s);
            try out.append(a, '"');
        },
        .template => |t| {
            if (t.expressions.len == 0) {
                // A template without substitutions is a string literal to V8.
                try out.append(a, '"');
                try out.appendSlice(a, t.quasis[0]);
                try out.append(a, '"');
            } else {
                for (t.expressions) |e| try p.renderPrinted(out, e, iterator, depth + 1);
            }
        },
        .true_literal => try out.appendSlice(a, "true"),
        .false_literal => try out.appendSlice(a, "false"),
        .null_literal => try out.appendSlice(a, "null"),
        .array => |elements| {
            try out.append(a, '[');
            for (elements, 0..) |e, i| {
                if (i > 0) try out.append(a, ',');
                switch (e.data) {
                    .spread => |inner| {
                        try out.appendSlice(a, "(...");
                        try p.renderPrinted(out, inner, iterator, depth + 1);
                        try out.append(a, ')');
                    },
                    else => try p.renderPrinted(out, e, iterator, depth + 1),
                }
            }
            try out.append(a, ']');
        },
        .object => |properties| {
            try out.append(a, '{');
            for (properties) |_| try out.appendSlice(a, "(intermediate value)");
            try out.append(a, '}');
        },
        .unary => |u| {
            // V8 folds `!` on a literal into the literal (and signs, above).
            if (u.op == .not) if (foldNumber(u.operand, 0)) |x| {
                return out.appendSlice(a, if (x == 0 or std.math.isNan(x)) "true" else "false");
            };
            switch (u.operand.data) {
                .true_literal, .false_literal, .null_literal, .string => if (u.op == .not) {
                    const truthy = switch (u.operand.data) {
                        .true_literal => true,
                        .string => |s| s.len > 0,
                        else => false,
                    };
                    return out.appendSlice(a, if (truthy) "false" else "true");
                },
                else => {},
            }
            try out.append(a, '(');
            try out.appendSlice(a, switch (u.op) {
                .negate => "-",
                .plus => "+",
                .not => "!",
                .bit_not => "~",
                .typeof => "typeof ",
                .void => "void ",
                .delete => "delete ",
            });
            try p.renderPrinted(out, u.operand, iterator, depth + 1);
            try out.append(a, ')');
        },
        .update => |u| {
            const op = if (u.increment) "++" else "--";
            try out.append(a, '(');
            if (u.prefix) try out.appendSlice(a, op);
            try p.renderPrinted(out, u.target, iterator, depth + 1);
            if (!u.prefix) try out.appendSlice(a, op);
            try out.append(a, ')');
        },
        .binary, .logical => |b| {
            try out.append(a, '(');
            try p.renderOperands(out, b, iterator, depth);
            try out.append(a, ')');
        },
        .sequence => |items| {
            try out.append(a, '(');
            for (items, 0..) |item, i| {
                if (i > 0) try out.appendSlice(a, " , ");
                try p.renderPrinted(out, item, iterator, depth + 1);
            }
            try out.append(a, ')');
        },
        // V8 prints the three parts unvisited.
        .conditional => try out.appendSlice(a, "(intermediate value)(intermediate value)(intermediate value)"),
        .assign => |as| try p.renderPrinted(out, as.target, iterator, depth + 1),
        .member => |m| {
            try p.renderPrinted(out, m.object, iterator, depth + 1);
            try out.appendSlice(a, if (m.optional) "?." else ".");
            try out.appendSlice(a, m.name);
        },
        .index => |i| {
            try p.renderPrinted(out, i.object, iterator, depth + 1);
            const key: ?[]const u8 = if (i.key.parenthesized) null else switch (i.key.data) {
                .string => |s| s,
                .template => |t| if (t.expressions.len == 0) t.quasis[0] else null,
                else => null,
            };
            if (key) |name| {
                // A string key prints as a name.
                try out.appendSlice(a, if (i.optional) "?." else ".");
                try out.appendSlice(a, name);
            } else {
                try out.appendSlice(a, if (i.optional) "?.[" else "[");
                try p.renderPrinted(out, i.key, iterator, depth + 1);
                try out.append(a, ']');
            }
        },
        .call => |call| {
            try p.renderPrinted(out, call.callee, iterator, depth + 1);
            if (!iterator) try out.appendSlice(a, "(...)");
        },
        .new => |call| {
            if (iterator) {
                try p.renderPrinted(out, call.callee, iterator, depth + 1);
            } else {
                try out.appendSlice(a, "(intermediate value)");
            }
        },
        // An optional chain and an elision are printed unvisited; a function, one per
        // statement of its body.
        .chain, .hole => try out.appendSlice(a, "(intermediate value)"),
        .function => |f| for (f.body) |_| try out.appendSlice(a, "(intermediate value)"),
        else => {},
    }
}

/// `a op b`, with V8's n-ary joining of a left operand with the same operator.
fn renderOperands(p: *Printer, out: *std.ArrayList(u8), b: ast.Binary, iterator: bool, depth: u32) RenderError!void {
    if (depth > 32) return error.TooLong;
    const nary = switch (b.op) {
        // Comparisons are never joined.
        .eq, .ne, .strict_eq, .strict_ne, .lt, .gt, .le, .ge, .instanceof, .in => false,
        else => (b.lhs.data == .binary or b.lhs.data == .logical) and !b.lhs.parenthesized and switch (b.lhs.data) {
            .binary, .logical => |l| l.op == b.op,
            else => false,
        },
    };
    if (nary) {
        const inner = switch (b.lhs.data) {
            .binary, .logical => |l| l,
            else => unreachable,
        };
        try p.renderOperands(out, inner, iterator, depth + 1);
    } else {
        try p.renderPrinted(out, b.lhs, iterator, depth + 1);
    }
    try out.append(p.arena, ' ');
    try out.appendSlice(p.arena, binaryText(b.op));
    try out.append(p.arena, ' ');
    try p.renderPrinted(out, b.rhs, iterator, depth + 1);
}

fn binaryText(op: ast.BinaryOp) []const u8 {
    return switch (op) {
        .add => "+",
        .sub => "-",
        .mul => "*",
        .div => "/",
        .mod => "%",
        .pow => "**",
        .shl => "<<",
        .sar => ">>",
        .shr => ">>>",
        .bit_and => "&",
        .bit_or => "|",
        .bit_xor => "^",
        .eq => "==",
        .ne => "!=",
        .strict_eq => "===",
        .strict_ne => "!==",
        .lt => "<",
        .gt => ">",
        .le => "<=",
        .ge => ">=",
        .instanceof => "instanceof",
        .in => "in",
        .and_ => "&&",
        .or_ => "||",
        .nullish => "??",
    };
}

fn renderNumber(p: *Printer, out: *std.ArrayList(u8), x: f64) RenderError!void {
    var buf: [32]u8 = undefined;
    try out.appendSlice(p.arena, number.format(&buf, x));
}
