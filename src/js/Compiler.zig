//! From the resolved tree to a Program: bytecode per function, constant pools, exports.
//!
//! The compiler tracks the operand stack depth of every instruction it emits (each opcode's
//! effect is data in bytecode.zig), so that it can size each frame and so that jumps out of
//! nested constructs pop exactly what those constructs pushed. `finally` blocks are compiled
//! inline on each path that leaves their `try` (normal exit, break, continue, return, and
//! the exception path), which keeps completion handling out of the interpreter entirely.
//!
//! Bindings live in frame slots; a binding an inner function captures lives in a cell that the
//! slot holds, created fresh each time its scope is entered (so closures made in a loop each
//! see their own iteration's binding).
const std = @import("std");
const assert = std.debug.assert;

const ast = @import("ast.zig");
const Node = ast.Node;
const scope = @import("scope.zig");
const Binding = scope.Binding;
const FunctionInfo = scope.FunctionInfo;
const Parser = @import("Parser.zig");
const Lexer = @import("Lexer.zig");
const bytecode = @import("bytecode.zig");
const Op = bytecode.Op;
const Program = @import("Program.zig");
const CallPrinter = @import("CallPrinter.zig");
const builtins = @import("builtins.zig");
const string = @import("string.zig");

const Compiler = @This();

arena: std.mem.Allocator,
source: []const u8,
line_starts: []const u32,
failure: ?Failure = null,
strings: std.ArrayList(Program.StringConstant) = .empty,
string_map: std.StringHashMapUnmanaged(u16) = .empty,
numbers: std.ArrayList(f64) = .empty,
number_map: std.AutoHashMapUnmanaged(u64, u16) = .empty,
functions: []Program.Function = &.{},
/// Every tagged template's site (the resolver's list), made by the top level.
templates: []const *ast.TemplateObject = &.{},
exports: std.ArrayList(u16) = .empty,
host_globals: []const []const u8,
stack_floor: usize = 0,
/// The function being compiled.
f: *FunctionBuilder = undefined,

pub const Failure = struct {
    line: u32,
    column: u32,
    /// Static text, or text in the compiling allocator (a message naming a token): `keep`
    /// before that allocator is freed.
    message: []const u8,
    storage: [message_bytes_max]u8 = undefined,

    pub const message_bytes_max = 200;

    /// Copies the message into the failure itself (cut at `message_bytes_max`), so that it
    /// outlives the memory the compiler used.
    pub fn keep(failure: *Failure) void {
        const len = @min(failure.message.len, message_bytes_max);
        std.mem.copyForwards(u8, failure.storage[0..len], failure.message[0..len]);
        failure.message = failure.storage[0..len];
    }
};

pub const Error = error{ SyntaxError, OutOfMemory };

pub const Options = struct {
    source_name: []const u8 = "<input>",
    /// Globals the host adds (Response, for handlers), resolved by name.
    host_globals: []const []const u8 = &.{},
    /// Native stack the compiler may use for deeply nested input before refusing it as
    /// "nested too deeply" (parsing and compiling recurse over the tree). The thread
    /// compiling must have more.
    native_stack_bytes: usize = 160 * 1024,
};

/// Limits an input can reach, each refused with a compile error.
pub const functions_max = 0xFFF0;
pub const constants_max = 0xFFF0;
pub const code_bytes_max = 1 << 24;
pub const locals_max = 0x7FF0;
pub const stack_max = 0x7FF0;

/// Compiles `source` to a Program whose memory lives in `arena`. On a syntax error or a
/// construct outside the language, fills `failure` (with line and column) and returns
/// error.SyntaxError.
pub fn compile(arena: std.mem.Allocator, source: []const u8, options: Options, failure: *Failure) Error!Program {
    var c: Compiler = .{
        .arena = arena,
        .source = source,
        .line_starts = try lineStarts(arena, source),
        .host_globals = options.host_globals,
    };
    const program = c.compileSource(options) catch |err| {
        if (err == error.SyntaxError) failure.* = c.failure orelse .{ .line = 1, .column = 1, .message = "syntax error" };
        return err;
    };
    return program;
}

fn compileSource(c: *Compiler, options: Options) Error!Program {
    const stack_floor = @frameAddress() -| options.native_stack_bytes;
    c.stack_floor = stack_floor;
    var parse_failure: Parser.Failure = undefined;
    const tree = Parser.parse(c.arena, c.source, stack_floor, &parse_failure) catch |err| switch (err) {
        error.SyntaxError => return c.failAt(parse_failure.pos, parse_failure.message),
        error.OutOfMemory => return error.OutOfMemory,
    };
    var resolver: scope.Resolver = .{
        .arena = c.arena,
        .globals = lookupGlobal,
        .host_globals = options.host_globals,
        .host_global_base = builtins.globals_count,
        .stack_floor = stack_floor,
    };
    resolver.resolveProgram(tree) catch |err| switch (err) {
        error.SyntaxError => return c.failAt(resolver.failure.?.pos, resolver.failure.?.message),
        error.OutOfMemory => return error.OutOfMemory,
    };
    if (resolver.functions.items.len > functions_max) return c.failAt(0, "too many functions in one program");
    c.functions = try c.arena.alloc(Program.Function, resolver.functions.items.len);
    c.templates = resolver.templates.items;
    for (tree.exports) |e| {
        const b = tree.function.info.?.scope.find(e.local) orelse
            return c.failFmt(e.pos, "Export '{s}' is not defined in module", .{e.local});
        _ = b;
        for (c.exports.items) |existing| {
            if (std.mem.eql(u8, c.strings.items[existing].bytes, e.name)) {
                return c.failFmt(e.pos, "Duplicate export of '{s}'", .{e.name});
            }
        }
        try c.exports.append(c.arena, try c.stringConstant(e.name, e.pos));
    }
    try c.compileFunction(tree.function, tree);
    const host = try c.arena.alloc(u16, options.host_globals.len);
    for (options.host_globals, host) |name, *index| index.* = try c.stringConstant(name, 0);
    return .{
        .functions = c.functions,
        .numbers = c.numbers.items,
        .strings = c.strings.items,
        .exports = c.exports.items,
        .host_globals = host,
        .source_name = options.source_name,
        .source = c.source,
    };
}

fn lookupGlobal(name: []const u8) ?u16 {
    return builtins.globalId(name);
}

fn lineStarts(arena: std.mem.Allocator, source: []const u8) Error![]const u32 {
    var starts: std.ArrayList(u32) = .empty;
    try starts.append(arena, 0);
    for (source, 0..) |ch, i| {
        if (ch == '\n') try starts.append(arena, @intCast(i + 1));
    }
    return starts.items;
}

fn lineColumn(c: *const Compiler, pos: u32) struct { line: u32, column: u32 } {
    // The last line start at or before pos.
    var lo: usize = 0;
    var hi: usize = c.line_starts.len;
    while (hi - lo > 1) {
        const mid = (lo + hi) / 2;
        if (c.line_starts[mid] <= pos) lo = mid else hi = mid;
    }
    const start = c.line_starts[lo];
    var column: u32 = 1;
    for (c.source[start..@min(pos, c.source.len)]) |ch| {
        if (ch & 0xC0 != 0x80) column += 1;
        if (ch >= 0xF0) column += 1;
    }
    return .{ .line = @intCast(lo + 1), .column = column };
}

fn failAt(c: *Compiler, pos: u32, message: []const u8) Error {
    const lc = c.lineColumn(pos);
    c.failure = .{ .line = lc.line, .column = lc.column, .message = message };
    return error.SyntaxError;
}

fn failFmt(c: *Compiler, pos: u32, comptime fmt: []const u8, args: anytype) Error {
    return c.failAt(pos, try std.fmt.allocPrint(c.arena, fmt, args));
}

// ---------------------------------------------------------------------------------------
// Constants.

/// The index of a string constant, from its WTF-8 text, stored Latin-1 or UTF-16LE.
fn stringConstant(c: *Compiler, wtf8: []const u8, pos: u32) Error!u16 {
    if (c.string_map.get(wtf8)) |index| return index;
    if (c.strings.items.len >= constants_max) return c.failAt(pos, "too many string constants in one program");
    var units: std.ArrayList(u16) = .empty;
    var wide = false;
    var it: string.Utf8Iterator = .{ .text = wtf8 };
    while (it.next()) |cp| {
        if (cp >= 0x10000) {
            const v = cp - 0x10000;
            try units.append(c.arena, @intCast(0xD800 + (v >> 10)));
            try units.append(c.arena, @intCast(0xDC00 + (v & 0x3FF)));
        } else {
            try units.append(c.arena, @intCast(cp));
        }
        if (cp > 0xFF) wide = true;
    }
    if (units.items.len > string.length_max) return c.failAt(pos, "string constant too long");
    var bytes: []u8 = undefined;
    if (wide) {
        bytes = try c.arena.alloc(u8, units.items.len * 2);
        for (units.items, 0..) |u, i| std.mem.writeInt(u16, bytes[i * 2 ..][0..2], u, .little);
    } else {
        bytes = try c.arena.alloc(u8, units.items.len);
        for (units.items, 0..) |u, i| bytes[i] = @intCast(u);
    }
    const index: u16 = @intCast(c.strings.items.len);
    try c.strings.append(c.arena, .{ .bytes = bytes, .wide = wide });
    try c.string_map.put(c.arena, wtf8, index);
    return index;
}

fn numberConstant(c: *Compiler, x: f64, pos: u32) Error!u16 {
    const bits: u64 = @bitCast(if (std.math.isNan(x)) std.math.nan(f64) else x);
    if (c.number_map.get(bits)) |index| return index;
    if (c.numbers.items.len >= constants_max) return c.failAt(pos, "too many number constants in one program");
    const index: u16 = @intCast(c.numbers.items.len);
    try c.numbers.append(c.arena, @bitCast(bits));
    try c.number_map.put(c.arena, bits, index);
    return index;
}

// ---------------------------------------------------------------------------------------
// Emitting code.

const Label = struct {
    offset: ?u32 = null,
    fixups: std.ArrayList(u32) = .empty,
    /// The stack depth every jump here arrives with.
    depth: ?u32 = null,
};

const Context = union(enum) {
    /// `iterator`: a for...of loop, whose iterator is closed when the loop is left early;
    /// its state is the two stack values just below `depth` (`async_iterator`: a `for
    /// await`, whose close awaits what `return()` returned). Its exception handler (which
    /// closes the iterator when the loop throws) is pushed once for a `for...of`, so that
    /// only leaving it pops it, and once per iteration for a `for await`, whose next() runs
    /// outside it (`iterationHandler`).
    /// `labels`: the statement labels naming the loop (`continue name` continues it).
    loop: struct { break_label: *Label, continue_label: *Label, depth: u32, iterator: bool = false, async_iterator: bool = false, labels: []const []const u8 = &.{} },
    switch_block: struct { break_label: *Label, depth: u32 },
    /// A labelled statement that is not a loop: only `break name` leaves it.
    labeled: struct { labels: []const []const u8, break_label: *Label, depth: u32 },
    /// Inside a `try` block or a `catch` block that has a handler pushed; `finalizer` runs
    /// on every exit.
    protected: struct { finalizer: ?*Node, handler: bool },
};

const FunctionBuilder = struct {
    info: *FunctionInfo,
    code: std.ArrayList(u8) = .empty,
    positions: std.ArrayList(Program.Position) = .empty,
    site_names: std.ArrayList(Program.SiteName) = .empty,
    depth: u32 = 0,
    depth_max: u32 = 0,
    handlers: u32 = 0,
    handlers_max: u32 = 0,
    locals_top: u32 = 0,
    locals_max: u32 = 0,
    reachable: bool = true,
    contexts: std.ArrayList(Context) = .empty,
    /// The labels of the loop statement about to be compiled, taken by its body's context.
    loop_labels: []const []const u8 = &.{},
    /// The exception paths that close an iterator, compiled after the function's last
    /// instruction so that the normal path has nothing to jump over.
    close_handlers: std.ArrayList(CloseHandler) = .empty,
    /// The end of the optional chain being compiled, and the depth at its start.
    chain_end: ?*Label = null,
    chain_depth: u32 = 0,
    last_position: u32 = std.math.maxInt(u32),
};

/// Where an iterator's exception handler lands, and what it finds there: the iterator's state
/// two values below `depth` (`drop` values above it, then the exception).
const CloseHandler = struct {
    label: *Label,
    /// The handlers open outside the protected region (the machine popped its own).
    handlers: u32,
    drop: u32,
    is_async: bool,
    /// A slot free while the region runs, for the exception.
    temp: u16,
    pos: u32,
};

fn adjust(c: *Compiler, pops: u32, pushes: u32) void {
    const f = c.f;
    // Dead code after a terminator may pop below zero in the bookkeeping; it never runs.
    f.depth = (f.depth -| pops) + pushes;
    f.depth_max = @max(f.depth_max, f.depth);
}

fn emit(c: *Compiler, op: Op) Error!void {
    const info = bytecode.info(op);
    assert(info.operand == .none);
    try c.f.code.append(c.arena, @backingInt(op));
    c.adjust(info.pops.?, info.pushes);
    if (info.terminator) c.f.reachable = false;
}

fn emitU8(c: *Compiler, op: Op, operand: u8) Error!void {
    const info = bytecode.info(op);
    assert(info.operand == .u8 or info.operand == .i8);
    try c.f.code.appendSlice(c.arena, &.{ @backingInt(op), operand });
    const pops = info.pops orelse bytecode.dynamicPops(op, operand);
    c.adjust(pops, info.pushes);
}

fn emitU16(c: *Compiler, op: Op, operand: u16) Error!void {
    const info = bytecode.info(op);
    assert(info.operand == .u16);
    var bytes: [3]u8 = undefined;
    bytes[0] = @backingInt(op);
    std.mem.writeInt(u16, bytes[1..3], operand, .little);
    try c.f.code.appendSlice(c.arena, &bytes);
    c.adjust(info.pops.?, info.pushes);
    if (info.terminator) c.f.reachable = false;
}

fn emitU16U16(c: *Compiler, op: Op, a: u16, b: u16) Error!void {
    const info = bytecode.info(op);
    assert(info.operand == .u16_u16);
    var bytes: [5]u8 = undefined;
    bytes[0] = @backingInt(op);
    std.mem.writeInt(u16, bytes[1..3], a, .little);
    std.mem.writeInt(u16, bytes[3..5], b, .little);
    try c.f.code.appendSlice(c.arena, &bytes);
    c.adjust(info.pops.?, info.pushes);
}

/// Emits a jump to `label`; `target_depth` is the stack depth the jump arrives with.
fn emitJump(c: *Compiler, op: Op, label: *Label, target_depth: u32, extra: ?u8) Error!void {
    const info = bytecode.info(op);
    assert(info.jumps);
    try c.f.code.append(c.arena, @backingInt(op));
    const operand_at: u32 = @intCast(c.f.code.items.len);
    try c.f.code.appendSlice(c.arena, &.{ 0, 0, 0, 0 });
    if (extra) |e| try c.f.code.append(c.arena, e);
    if (label.offset) |offset| {
        std.mem.writeInt(u32, c.f.code.items[operand_at..][0..4], offset, .little);
    } else {
        try label.fixups.append(c.arena, operand_at);
    }
    // Dead code (after a throw) keeps exact bookkeeping too, so its jumps count.
    if (label.depth) |d| assert(d == target_depth) else label.depth = target_depth;
    // The fall-through's stack effect.
    c.adjust(info.pops.?, info.pushes);
    if (info.terminator) c.f.reachable = false;
}

fn bind(c: *Compiler, label: *Label) void {
    const offset: u32 = @intCast(c.f.code.items.len);
    label.offset = offset;
    for (label.fixups.items) |at| std.mem.writeInt(u32, c.f.code.items[at..][0..4], offset, .little);
    label.fixups.clearRetainingCapacity();
    if (label.depth) |d| {
        if (c.f.reachable) assert(d == c.f.depth);
        c.f.depth = d;
        c.f.depth_max = @max(c.f.depth_max, d);
        c.f.reachable = true;
    } else {
        label.depth = c.f.depth;
    }
}

fn newLabel(c: *Compiler) Error!*Label {
    const label = try c.arena.create(Label);
    label.* = .{};
    return label;
}

/// Records the source position of the next instruction.
fn mark(c: *Compiler, pos: u32) Error!void {
    if (pos == c.f.last_position) return;
    c.f.last_position = pos;
    const lc = c.lineColumn(pos);
    const pc: u32 = @intCast(c.f.code.items.len);
    if (c.f.positions.items.len > 0 and c.f.positions.items[c.f.positions.items.len - 1].pc == pc) {
        c.f.positions.items[c.f.positions.items.len - 1] = .{ .pc = pc, .line = lc.line, .column = lc.column };
        return;
    }
    try c.f.positions.append(c.arena, .{ .pc = pc, .line = lc.line, .column = lc.column });
}

/// Names the next instruction's site for its error message ("x is not a function").
fn siteName(c: *Compiler, text: []const u8, pos: u32) Error!void {
    const index = try c.stringConstant(text, pos);
    try c.f.site_names.append(c.arena, .{ .pc = @intCast(c.f.code.items.len), .name = index });
}

fn allocLocal(c: *Compiler, pos: u32) Error!u16 {
    const slot = c.f.locals_top;
    if (slot >= locals_max) return c.failAt(pos, "too many local variables in one function");
    c.f.locals_top += 1;
    c.f.locals_max = @max(c.f.locals_max, c.f.locals_top);
    return @intCast(slot);
}

// ---------------------------------------------------------------------------------------
// Functions and scopes.

fn compileFunction(c: *Compiler, node: *ast.Function, program: ?*ast.Program) Error!void {
    const info = node.info.?;
    var builder: FunctionBuilder = .{ .info = info };
    const saved = c.f;
    c.f = &builder;
    defer c.f = saved;

    if (node.parameters.len + 1 >= locals_max) return c.failAt(node.pos, "too many parameters in one function");
    const param_count: u32 = @intCast(node.parameters.len);
    c.f.locals_top = param_count + @intFromBool(node.rest != null);
    c.f.locals_max = c.f.locals_top;

    // Simple parameters use their own slot; the other bindings get theirs.
    for (node.parameters, 0..) |p, i| {
        if (p.target.data == .identifier) {
            const b = p.target.data.identifier.resolution.binding.binding;
            b.slot = @intCast(i);
            b.slot_valid = true;
        }
    }
    if (node.rest) |rest| {
        if (rest.data == .identifier) {
            const b = rest.data.identifier.resolution.binding.binding;
            b.slot = @intCast(param_count);
            b.slot_valid = true;
        }
    }
    // The arguments object is made first, while every argument is still where the call put
    // it (the slots above the parameters are about to become locals); bindSpecials stores it.
    if (info.specials[@backingInt(scope.Special.arguments)] != null) {
        try c.emitU8(.push_special, @backingInt(scope.Special.arguments));
    }
    if (node.self_binding) |b| {
        b.slot = try c.allocLocal(node.pos);
        b.slot_valid = true;
        if (b.captured) try c.emitU16(.new_cell, b.slot);
        try c.emit(.push_callee);
        try c.storeBinding(b, .init, node.pos);
    }
    try c.declareScope(info.scope);
    if (info.index == 0) try c.templateObjects();
    try c.bindSpecials(info);
    // An async function's call makes its promise before the parameters are bound, so that
    // an exception binding them rejects the promise (a generator's throws from the call).
    const async_start = node.kind.suspends() and node.kind.isAsync();
    if (async_start) try c.emit(.generator_start);
    // A simple parameter an earlier default may read starts in its dead zone: its argument
    // waits in a spare slot until its turn.
    const arguments_aside = try c.arena.alloc(u16, node.parameters.len);
    for (node.parameters, 0..) |p, i| {
        if (p.target.data != .identifier) continue;
        const b = p.target.data.identifier.resolution.binding.binding;
        if (!b.needs_tdz) continue;
        arguments_aside[i] = try c.allocLocal(p.target.pos);
        try c.emitU16(.get_loc, @intCast(i));
        try c.emitU16(.put_loc, arguments_aside[i]);
        try c.emitU16(if (b.captured) .new_cell else .set_uninitialized, @intCast(i));
    }
    // Parameters in order: defaults, patterns, boxing.
    for (node.parameters, 0..) |p, i| {
        const slot: u16 = @intCast(i);
        if (p.target.data == .identifier) {
            const b = p.target.data.identifier.resolution.binding.binding;
            if (b.needs_tdz) {
                try c.emitU16(.get_loc, arguments_aside[i]);
                if (p.default) |d| try c.defaultValue(d, b.name);
                try c.storeBinding(b, .init, p.target.pos);
                continue;
            }
            if (p.default) |d| {
                try c.emitU16(.get_loc, slot);
                try c.defaultValue(d, b.name);
                try c.emitU16(.put_loc, slot);
            }
            if (b.captured) try c.emitU16(.box_local, slot);
        } else {
            try c.emitU16(.get_loc, slot);
            if (p.default) |d| try c.defaultValue(d, null);
            // V8 shows a parameter by its value's type; with a default, by the conditional
            // its desugaring makes.
            const site: ?[]const u8 = if (p.default != null) "(intermediate value)(intermediate value)(intermediate value)" else null;
            try c.bindPatternFrom(p.target, .init, .{ .object = .{ .destructure = site } });
        }
    }
    if (node.rest) |rest| {
        if (rest.data == .identifier) {
            const b = rest.data.identifier.resolution.binding.binding;
            if (b.captured) try c.emitU16(.box_local, @intCast(param_count));
        } else {
            try c.emitU16(.get_loc, @intCast(param_count));
            try c.bindPattern(rest, .init);
        }
    }
    try c.hoistFunctions(info.scope);
    // A generator's call ends here, returning the generator; its body runs on next().
    if (node.kind.suspends() and !async_start) try c.emit(.generator_start);
    if (node.kind == .base_constructor) {
        // A class's fields are defined on the new instance before its constructor's body.
        try c.emitU8(.push_special, @backingInt(scope.Special.this));
        try c.emitU8(.push_special, @backingInt(scope.Special.callee));
        try c.emit(.init_fields);
    }
    for (node.body) |statement| try c.compileStatement(statement);
    if (program) |tree| try c.compileExports(tree);
    // Even when unreachable: a label bound at the end needs an instruction to land on.
    if (node.kind == .derived_constructor) {
        try c.emit(.push_undefined);
        try c.derivedResult(node.pos);
        try c.emit(.@"return");
    }
    try c.emit(.return_undefined);
    for (c.f.close_handlers.items) |h| try c.closeOnThrow(h);

    if (c.f.code.items.len > code_bytes_max) return c.failAt(node.pos, "function too large");
    if (c.f.depth_max > stack_max) return c.failAt(node.pos, "expression too complex");
    var name: u16 = Program.no_name;
    if (node.name) |n| name = try c.stringConstant(n, node.pos);
    var length: u16 = 0;
    for (node.parameters) |p| {
        if (p.default != null) break;
        length += 1;
    }
    const captures = try c.arena.alloc(bytecode.Capture, info.upvalues.items.len);
    for (info.upvalues.items, captures) |b, *capture| {
        if (b.function == info.parent.?) {
            assert(b.slot_valid and b.captured);
            capture.* = .{ .from_local = true, .index = @intCast(b.slot) };
        } else {
            capture.* = .{ .from_local = false, .index = @intCast(info.parent.?.upvalueIndex(b).?) };
        }
    }
    c.functions[info.index] = .{
        .name = name,
        .length = length,
        .param_count = @intCast(param_count),
        .local_count = @intCast(c.f.locals_max),
        .stack_max = @intCast(c.f.depth_max),
        .handler_max = @intCast(c.f.handlers_max),
        .has_rest = node.rest != null,
        .kind = if (node.is_arrow) (if (node.kind.isAsync()) .async_arrow else .arrow) else node.kind,
        .parent = if (info.parent) |p| @intCast(p.index) else Program.no_name,
        .code = c.f.code.items,
        .captures = captures,
        .positions = c.f.positions.items,
        .site_names = c.f.site_names.items,
        .source_start = if (program == null) node.pos else 0,
        .source_end = if (program == null) node.end else 0,
    };
}

/// Binds the special values (`this`, `new.target`...) the function's code uses to their
/// hidden bindings; a derived constructor's `this` stays in its dead zone until `super()`.
/// The arguments object, the last of them, was pushed at the function's entry.
fn bindSpecials(c: *Compiler, info: *FunctionInfo) Error!void {
    comptime assert(@backingInt(scope.Special.arguments) == scope.special_count - 1);
    comptime assert(scope.special_count == bytecode.special_count);
    for (info.specials, 0..) |special, i| {
        const b = special orelse continue;
        if (b.kind == .derived_this) continue;
        if (i != @backingInt(scope.Special.arguments)) try c.emitU8(.push_special, @intCast(i));
        try c.storeBinding(b, .init, b.pos);
    }
}

/// value -> what a derived constructor returns: an object it returned, else its `this`.
fn derivedResult(c: *Compiler, pos: u32) Error!void {
    const info = c.f.info;
    if (info.specials[@backingInt(scope.Special.this)]) |b| {
        try c.loadBinding(b, false, pos);
    } else {
        // `this` is never bound (no `super()`): only a returned object will do.
        try c.emit(.push_undefined);
    }
    try c.mark(pos);
    try c.emit(.derived_result);
}

/// Gives every binding of a scope a slot, and makes cells and dead zones as needed. The
/// function scope's simple parameters already have theirs.
fn declareScope(c: *Compiler, s: *scope.Scope) Error!void {
    for (s.bindings.items) |b| {
        if (b.slot_valid and b.kind == .parameter) continue;
        b.slot = try c.allocLocal(b.pos);
        b.slot_valid = true;
        if (b.kind == .@"var") {
            // A var is undefined from the function's entry. Said explicitly: a frame's slots
            // above the parameters hold the call's extra arguments.
            assert(s.kind == .function);
            try c.emit(.push_undefined);
            try c.emitU16(.put_loc, b.slot);
            if (b.captured) try c.emitU16(.box_local, b.slot);
        } else if (b.captured) {
            try c.emitU16(.new_cell, b.slot);
        } else if (b.needs_tdz) {
            try c.emitU16(.set_uninitialized, b.slot);
        }
    }
}

/// The strings objects of every tagged template's site, made on the top level's entry: they
/// are frozen constants, so making them early cannot be seen, and a site then gives the
/// same object every time it runs, in every request, at no cost per call.
fn templateObjects(c: *Compiler) Error!void {
    for (c.templates) |site| {
        try c.stringArray(site.cooked, site.pos);
        try c.stringArray(site.raw, site.pos);
        try c.emit(.template_object);
        try c.storeBinding(site.binding.?, .init, site.pos);
    }
}

fn stringArray(c: *Compiler, pieces: []const []const u8, pos: u32) Error!void {
    if (pieces.len > 0xFFFF) return c.failAt(pos, "too many substitutions in one template");
    try c.emitU16(.new_array, @intCast(pieces.len));
    for (pieces) |piece| {
        try c.emitU16(.push_string, try c.stringConstant(piece, pos));
        try c.emit(.append);
    }
}

/// Function declarations are created on entry to their scope, before any statement runs.
fn hoistFunctions(c: *Compiler, s: *scope.Scope) Error!void {
    for (s.functions.items) |f| {
        const b = s.find(f.name.?).?;
        try c.closure(f, null);
        try c.storeBinding(b, .init, f.pos);
    }
}

fn enterScope(c: *Compiler, s: ?*scope.Scope) Error!u32 {
    const saved = c.f.locals_top;
    if (s) |block_scope| {
        try c.declareScope(block_scope);
        try c.hoistFunctions(block_scope);
    }
    return saved;
}

fn leaveScope(c: *Compiler, saved: u32) void {
    c.f.locals_top = saved;
}

fn closure(c: *Compiler, f: *ast.Function, inferred_name: ?[]const u8) Error!void {
    if (f.name == null and inferred_name != null) f.name = inferred_name;
    try c.compileFunction(f, null);
    try c.emitU16(.closure, @intCast(f.info.?.index));
}

fn compileExports(c: *Compiler, tree: *ast.Program) Error!void {
    for (tree.exports, 0..) |e, i| {
        const b = tree.function.info.?.scope.find(e.local).?;
        try c.loadBinding(b, false, e.pos);
        try c.emitU16(.set_export, @intCast(i));
    }
}

// ---------------------------------------------------------------------------------------
// Bindings.

/// `init_special`: `super()` binding a derived constructor's `this`, maybe from an arrow.
const StoreMode = enum { init, assign, init_special };

fn loadBinding(c: *Compiler, b: *Binding, check: bool, pos: u32) Error!void {
    if (b.function == c.f.info) {
        assert(b.slot_valid);
        if (b.captured) {
            if (check) try c.emitU16U16(.get_cell_check, b.slot, try c.stringConstant(b.name, pos)) else try c.emitU16(.get_cell, b.slot);
        } else {
            if (check) try c.emitU16U16(.get_loc_check, b.slot, try c.stringConstant(b.name, pos)) else try c.emitU16(.get_loc, b.slot);
        }
        return;
    }
    const index = c.f.info.upvalueIndex(b).?;
    if (check) try c.emitU16U16(.get_upval_check, index, try c.stringConstant(b.name, pos)) else try c.emitU16(.get_upval, index);
}

/// Stores the value on top of the stack (consuming it) into a binding.
fn storeBinding(c: *Compiler, b: *Binding, mode: StoreMode, pos: u32) Error!void {
    if (mode == .assign and b.isConst()) {
        // The value is consumed for the bookkeeping; the code after is dead.
        try c.emitU16(.throw_const_assign, try c.stringConstant(b.name, pos));
        c.adjust(1, 0);
        return;
    }
    const check = mode == .assign and b.needs_tdz and (b.kind == .let);
    if (b.function == c.f.info) {
        assert(b.slot_valid);
        if (b.captured) {
            if (mode != .assign) {
                try c.emitU16(.init_cell, b.slot);
            } else if (check) {
                try c.emitU16U16(.put_cell_check, b.slot, try c.stringConstant(b.name, pos));
            } else try c.emitU16(.put_cell, b.slot);
        } else {
            if (check) try c.emitU16U16(.put_loc_check, b.slot, try c.stringConstant(b.name, pos)) else try c.emitU16(.put_loc, b.slot);
        }
        return;
    }
    assert(mode != .init);
    const index = c.f.info.upvalueIndex(b).?;
    if (check) try c.emitU16U16(.put_upval_check, index, try c.stringConstant(b.name, pos)) else try c.emitU16(.put_upval, index);
}

fn loadIdentifier(c: *Compiler, node: *Node) Error!void {
    const id = node.data.identifier;
    switch (id.resolution) {
        .binding => |r| try c.loadBinding(r.binding, r.check, node.pos),
        .global => |g| try c.emitU16(.push_global, g),
        .constant => |x| try c.pushNumber(x, node.pos),
        .undefined_constant => try c.emit(.push_undefined),
        .undeclared => {
            try c.mark(node.pos);
            try c.emitU16(.throw_undeclared, try c.stringConstant(id.name, node.pos));
            c.adjust(0, 1);
        },
        .unresolved => unreachable, // The resolver visits every identifier.
    }
}

/// Stores the value on top of the stack (consuming it) into an identifier target.
fn storeIdentifier(c: *Compiler, node: *Node, mode: StoreMode) Error!void {
    const id = node.data.identifier;
    switch (id.resolution) {
        .binding => |r| try c.storeBinding(r.binding, mode, node.pos),
        .global, .constant, .undefined_constant => return c.failFmt(node.pos, "cannot assign to the builtin {s}", .{id.name}),
        .undeclared => {
            try c.mark(node.pos);
            try c.emitU16(.throw_undeclared, try c.stringConstant(id.name, node.pos));
            c.adjust(1, 0);
        },
        .unresolved => unreachable, // The resolver visits every identifier.
    }
}

// ---------------------------------------------------------------------------------------
// Statements.

/// A statement leaves the stack as it found it; in dead code (after a throw) the bookkeeping
/// is put back to that level, so that labels bound later agree with their jumps.
fn compileStatement(c: *Compiler, node: *Node) Error!void {
    const depth = c.f.depth;
    try c.statementInner(node);
    if (c.f.reachable) assert(c.f.depth == depth) else c.f.depth = depth;
}

fn statementInner(c: *Compiler, node: *Node) Error!void {
    if (@frameAddress() < c.stack_floor) return c.failAt(node.pos, "the program is nested too deeply");
    switch (node.data) {
        .class_declaration => |class| {
            try c.classExpression(class);
            try c.storeBinding(class.outer_binding.?, .init, class.pos);
        },
        .field_definition => |d| {
            const this = c.f.info.specials[@backingInt(scope.Special.this)].?;
            try c.loadBinding(this, false, d.pos);
            try c.expression(d.key);
            const name = if (d.key.data == .string) d.key.data.string else null;
            if (d.value) |v| try c.expressionNamed(v, name) else try c.emit(.push_undefined);
            try c.mark(d.pos);
            const kind: @FieldType(bytecode.MemberFlags, "kind") = switch (d.kind) {
                .field => .field,
                .method => .method,
                .getter => .getter,
                .setter => .setter,
            };
            try c.emitU8(.define_member, @bitCast(bytecode.MemberFlags{ .kind = kind, .not_enumerable = false, .own = true }));
            try c.emit(.pop);
        },
        .declaration => |d| {
            for (d.declarators) |declarator| {
                // `var x;` leaves x as it is; `var x = v` assigns (maybe a catch parameter).
                if (d.kind == .@"var" and declarator.init == null) continue;
                try c.mark(declarator.target.pos);
                if (declarator.init) |init| {
                    try c.expressionNamed(init, targetName(declarator.target));
                } else {
                    try c.emit(.push_undefined);
                }
                const source: PatternSource = if (declarator.init) |init| .{
                    .object = .{ .destructure = CallPrinter.render(c.arena, init, false) },
                    .array = c.declarationSite(init),
                } else .{};
                try c.bindPatternFrom(declarator.target, if (d.kind == .@"var") .assign else .init, source);
            }
        },
        .function_declaration => {}, // Created on entry to its scope.
        .expression_statement => |e| {
            try c.mark(e.pos);
            try c.effect(e);
        },
        .block => |b| {
            const saved = try c.enterScope(b.scope);
            for (b.body) |s| try c.compileStatement(s);
            c.leaveScope(saved);
        },
        .if_statement => |i| {
            const otherwise = try c.newLabel();
            const end = try c.newLabel();
            try c.mark(i.condition.pos);
            try c.condition(i.condition, otherwise, false);
            try c.compileStatement(i.then);
            if (i.otherwise) |o| {
                if (c.f.reachable) try c.emitJump(.jump, end, c.f.depth, null);
                c.f.reachable = false;
                c.bind(otherwise);
                try c.compileStatement(o);
            } else {
                c.bind(otherwise);
            }
            c.bind(end);
        },
        .for_statement => |*f| try c.forStatement(f),
        .for_of => |*f| try c.forEach(f, false),
        .for_in => |*f| try c.forEach(f, true),
        .while_statement => |w| {
            const top = try c.newLabel();
            const end = try c.newLabel();
            c.bind(top);
            try c.mark(w.condition.pos);
            try c.condition(w.condition, end, false);
            try c.loopBody(w.body, end, top);
            if (c.f.reachable) try c.emitJump(.jump, top, c.f.depth, null);
            c.f.reachable = false;
            c.bind(end);
        },
        .do_while => |w| {
            const top = try c.newLabel();
            const next = try c.newLabel();
            const end = try c.newLabel();
            c.bind(top);
            try c.loopBody(w.body, end, next);
            c.bind(next);
            try c.mark(w.condition.pos);
            try c.condition(w.condition, top, true);
            c.bind(end);
        },
        .break_statement, .continue_statement => try c.jumpStatement(node),
        .labeled => try c.labeledStatement(node),
        .return_statement => |value| try c.returnStatement(value, node.pos),
        .throw_statement => |value| {
            try c.expression(value);
            try c.mark(node.pos);
            try c.emit(.throw);
        },
        .try_statement => |*t| try c.tryStatement(t),
        .switch_statement => |*s| try c.switchStatement(s),
        .empty_statement => {},
        else => unreachable, // Expressions are wrapped in expression statements.
    }
}

/// Compiles a condition and jumps to `label` when it is `when` (false by default).
fn condition(c: *Compiler, node: *Node, label: *Label, when: bool) Error!void {
    if (node.data == .unary and node.data.unary.op == .not) {
        return c.condition(node.data.unary.operand, label, !when);
    }
    try c.expression(node);
    try c.emitJump(if (when) .jump_if_true else .jump_if_false, label, c.f.depth - 1, null);
}

fn loopBody(c: *Compiler, body: *Node, break_label: *Label, continue_label: *Label) Error!void {
    return c.loopBodyOf(body, break_label, continue_label, false);
}

fn loopBodyOf(c: *Compiler, body: *Node, break_label: *Label, continue_label: *Label, iterator: bool) Error!void {
    return c.loopBodyWith(body, break_label, continue_label, iterator, false);
}

fn loopBodyWith(c: *Compiler, body: *Node, break_label: *Label, continue_label: *Label, iterator: bool, async_iterator: bool) Error!void {
    const labels = c.f.loop_labels;
    c.f.loop_labels = &.{};
    try c.f.contexts.append(c.arena, .{ .loop = .{
        .break_label = break_label,
        .continue_label = continue_label,
        .depth = c.f.depth,
        .iterator = iterator,
        .async_iterator = async_iterator,
        .labels = labels,
    } });
    defer _ = c.f.contexts.pop();
    try c.compileStatement(body);
}

fn forStatement(c: *Compiler, f: *ast.For) Error!void {
    const saved = try c.enterScope(f.scope);
    if (f.init) |init| try c.compileStatement(init);
    // The first iteration has its own copy too: a closure made in the head's initialiser
    // keeps the value the initialiser left.
    try c.copyLoopCells(f.scope);
    const top = try c.newLabel();
    const next = try c.newLabel();
    const end = try c.newLabel();
    c.bind(top);
    if (f.condition) |cond| {
        try c.mark(cond.pos);
        try c.condition(cond, end, false);
    }
    try c.loopBody(f.body, end, next);
    c.bind(next);
    // Each iteration gets its own copy of a captured loop variable.
    try c.copyLoopCells(f.scope);
    if (f.update) |step| {
        try c.mark(step.pos);
        try c.effect(step);
    }
    try c.emitJump(.jump, top, c.f.depth, null);
    c.f.reachable = false;
    c.bind(end);
    c.leaveScope(saved);
}

fn copyLoopCells(c: *Compiler, loop_scope: ?*scope.Scope) Error!void {
    const s = loop_scope orelse return;
    for (s.bindings.items) |b| {
        if (b.captured) try c.emitU16(.copy_cell, b.slot);
    }
}

fn forEach(c: *Compiler, f: *ast.ForEach, keys: bool) Error!void {
    const saved = try c.enterScope(f.scope);
    try c.expression(f.iterable);
    try c.mark(f.iterable.pos);
    if (keys) {
        try c.emit(.keys_start);
    } else if (f.is_await) {
        try c.iterationSite(.async_iter_start, c.forOfSite(f.iterable), f.iterable.pos);
    } else {
        // Its handler covers its next() too, which leaves the iterator done when it throws;
        // a `for await`'s next() is bytecode, so its handler covers each body alone.
        try c.protectedIterStart(c.forOfSite(f.iterable), f.iterable.pos);
    }
    const top = try c.newLabel();
    const end = try c.newLabel();
    c.bind(top);
    if (f.is_await) {
        // iterator next -> iterator next value: Await(next()), then its `done` and `value`.
        try c.emit(.dup2);
        try c.emitU8(.call_method, 0);
        try c.emit(.yield);
        try c.emitJump(.async_iter_done, end, c.f.depth - 1, null);
        try c.protectIterator(1, true, f.iterable.pos);
    } else {
        try c.emitJump(.iter_next, end, c.f.depth, null);
    }
    if (f.scope) |s| {
        for (s.bindings.items) |b| {
            if (b.captured) try c.emitU16(.new_cell, b.slot);
        }
    }
    if (f.kind) |kind| {
        // V8 names the hidden variable its for-of desugaring makes.
        try c.bindPatternFrom(f.target, if (kind == .@"var") .assign else .init, .{ .object = .{ .destructure = ".for" }, .array = .{ .mode = .plain, .text = ".for" } });
    } else {
        try c.bindPattern(f.target, .assign);
    }
    // The loop's depth is that of its iterator state (the value bound is consumed).
    try c.loopBodyWith(f.body, end, top, !keys, f.is_await);
    if (f.is_await) {
        if (c.f.reachable) try c.emit(.try_pop);
        c.f.handlers -= 1;
    }
    if (c.f.reachable) try c.emitJump(.jump, top, c.f.depth, null);
    c.f.reachable = false;
    c.bind(end);
    if (keys or f.is_await) {
        try c.emit(.pop);
        try c.emit(.pop);
    } else {
        try c.emit(.iter_end);
        c.f.handlers -= 1;
    }
    c.leaveScope(saved);
}

/// iterable -> state state, with the handler that closes the iterator pushed (the
/// instruction is iter_start and try_push in one, so that a loop over an array pays no
/// more dispatches than it did before it had a handler).
fn protectedIterStart(c: *Compiler, site: IterationSite, pos: u32) Error!void {
    if (site.mode != .value and site.text.len > 0) try c.siteName(site.text, pos);
    const label = try c.closeHandler(0, false, pos);
    // The handler finds the state (iterable -> 2 values) and the exception.
    try c.emitJump(.iter_start_protected, label, c.f.depth + 2, @backingInt(site.mode));
    c.f.handlers += 1;
    c.f.handlers_max = @max(c.f.handlers_max, c.f.handlers);
}

/// Pushes the handler that closes the iterator whose state is on the stack, `drop` values
/// below the top, when the code after it throws (ES §14.7.5.7 and §8.6.2: IteratorClose,
/// AsyncIteratorClose with a throw completion). Its code comes after the function's.
fn protectIterator(c: *Compiler, drop: u32, is_async: bool, pos: u32) Error!void {
    try c.pushHandler(try c.closeHandler(drop, is_async, pos));
}

/// A close handler to be compiled after the function's code, and its label.
fn closeHandler(c: *Compiler, drop: u32, is_async: bool, pos: u32) Error!*Label {
    const label = try c.newLabel();
    // Any slot above the live ones is free when the handler runs: the region is left.
    const temp = try c.allocLocal(pos);
    c.f.locals_top -= 1;
    try c.f.close_handlers.append(c.arena, .{ .label = label, .handlers = c.f.handlers, .drop = drop, .is_async = is_async, .temp = temp, .pos = pos });
    return label;
}

/// An iterator's exception path: closes it, ignoring what the close throws, and throws the
/// exception again. A generator's return signal (return() while the region is suspended
/// at a `yield`) is a return completion: what the close throws goes on instead, and a
/// `return()` result that is not an object is a TypeError (throw_after_close picks).
fn closeOnThrow(c: *Compiler, h: CloseHandler) Error!void {
    assert(!c.f.reachable);
    c.bind(h.label);
    c.f.handlers = h.handlers;
    try c.mark(h.pos);
    try c.emitU16(.put_loc, h.temp);
    for (0..h.drop) |_| try c.emit(.pop);
    const close_failed = try c.newLabel();
    try c.pushHandler(close_failed);
    try c.closeIterator(h.is_async);
    try c.popHandler();
    try c.emitU16(.get_loc, h.temp);
    try c.emit(.throw);
    c.bind(close_failed);
    try c.emitU16(.get_loc, h.temp);
    try c.emit(.throw_after_close);
    assert(!c.f.reachable and c.f.handlers == h.handlers);
}

/// Leaves a for...of whose state is at the loop's depth: closes its iterator (break, return,
/// continue to an outer label) and pops its exception handler, which a `break` of a
/// for...of leaves to the loop's end (iter_end). A for...of closes inside its handler:
/// what return() throws goes through the handler, which finds the iterator done.
fn leaveIteratorLoop(c: *Compiler, depth: u32, is_async: bool, pop_handler: bool) Error!void {
    try c.popTo(depth);
    if (is_async) {
        try c.emit(.try_pop);
        return c.closeIterator(true);
    }
    try c.closeIterator(false);
    if (pop_handler) try c.emit(.try_pop);
}

/// A for...of left early closes its iterator (the state on the stack's top); a `for await`
/// awaits what `return()` returned and requires an object (AsyncIteratorClose).
fn closeIterator(c: *Compiler, is_async: bool) Error!void {
    if (!is_async) return c.emit(.iter_close);
    const skip = try c.newLabel();
    try c.emitJump(.async_iter_return, skip, c.f.depth, null);
    try c.emit(.yield);
    try c.emit(.iter_result_check);
    c.bind(skip);
}

/// `a: b: statement`: a loop takes its labels into its own context; anything else gets a
/// context that `break a` leaves.
fn labeledStatement(c: *Compiler, node: *Node) Error!void {
    var labels: std.ArrayList([]const u8) = .empty;
    var body = node;
    while (body.data == .labeled) : (body = body.data.labeled.body) try labels.append(c.arena, body.data.labeled.label);
    switch (body.data) {
        .for_statement, .for_of, .for_in, .while_statement, .do_while => {
            assert(c.f.loop_labels.len == 0);
            c.f.loop_labels = labels.items;
            try c.compileStatement(body);
            assert(c.f.loop_labels.len == 0); // Taken by the loop's body.
        },
        else => {
            const end = try c.newLabel();
            try c.f.contexts.append(c.arena, .{ .labeled = .{ .labels = labels.items, .break_label = end, .depth = c.f.depth } });
            try c.compileStatement(body);
            _ = c.f.contexts.pop();
            c.bind(end);
        },
    }
}

fn hasLabel(labels: []const []const u8, name: []const u8) bool {
    for (labels) |l| {
        if (std.mem.eql(u8, l, name)) return true;
    }
    return false;
}

/// `break` and `continue`, labelled or not: leaves every context up to its target, closing
/// the iterators of the for...of loops and running the finally blocks it leaves.
fn jumpStatement(c: *Compiler, node: *Node) Error!void {
    const is_break = node.data == .break_statement;
    const target: ?[]const u8 = switch (node.data) {
        .break_statement, .continue_statement => |label| label,
        else => unreachable,
    };
    var i = c.f.contexts.items.len;
    while (i > 0) {
        i -= 1;
        const context = c.f.contexts.items[i];
        switch (context) {
            .loop => |l| {
                if (target) |name| if (!hasLabel(l.labels, name)) {
                    // Left on the way to an outer target.
                    if (l.iterator) try c.leaveIteratorLoop(l.depth, l.async_iterator, true);
                    continue;
                };
                const label = if (is_break) l.break_label else l.continue_label;
                if (is_break and l.iterator) {
                    try c.leaveIteratorLoop(l.depth, l.async_iterator, false);
                } else {
                    try c.popTo(l.depth);
                    // A `for await`'s handler is pushed again by the next iteration.
                    if (l.async_iterator) try c.emit(.try_pop);
                }
                try c.emitJump(.jump, label, c.f.depth, null);
                c.f.reachable = false;
                return;
            },
            .switch_block => |s| {
                if (!is_break or target != null) continue;
                try c.popTo(s.depth);
                try c.emitJump(.jump, s.break_label, c.f.depth, null);
                c.f.reachable = false;
                return;
            },
            .labeled => |l| {
                const name = target orelse continue;
                if (!hasLabel(l.labels, name)) continue;
                assert(is_break); // The parser refuses `continue` to a label that is no loop's.
                try c.popTo(l.depth);
                try c.emitJump(.jump, l.break_label, c.f.depth, null);
                c.f.reachable = false;
                return;
            },
            .protected => try c.leaveProtected(i),
        }
    }
    unreachable; // The parser checked that a loop, switch or label encloses it.
}

/// Emits pops down to a depth.
fn popTo(c: *Compiler, depth: u32) Error!void {
    while (c.f.depth > depth) try c.emit(.pop);
}

/// Leaves the protected region at context index `i` on a jump out: pops its handler and runs
/// its finally block, compiled with only the contexts outside it (a break in the finally
/// block belongs to them).
fn leaveProtected(c: *Compiler, i: usize) Error!void {
    const p = c.f.contexts.items[i].protected;
    if (p.handler) try c.emit(.try_pop);
    if (p.finalizer) |finalizer| {
        const all = c.f.contexts.items;
        const saved_len = all.len;
        const saved = try c.arena.dupe(Context, all);
        c.f.contexts.items.len = i;
        try c.compileStatement(finalizer);
        c.f.contexts.items.len = 0;
        try c.f.contexts.appendSlice(c.arena, saved);
        assert(c.f.contexts.items.len == saved_len);
    }
}

fn returnStatement(c: *Compiler, value: ?*Node, pos: u32) Error!void {
    var protected = false;
    for (c.f.contexts.items) |context| switch (context) {
        .protected => |p| if (p.finalizer != null) {
            protected = true;
        },
        .loop => |l| if (l.iterator) {
            protected = true;
        },
        .switch_block, .labeled => {},
    };
    if (value) |v| try c.expression(v) else try c.emit(.push_undefined);
    // An async generator's `return x` awaits x (ES §15.6.2, the Return statement).
    if (value != null and c.f.info.node.kind.isAsyncGenerator()) try c.emit(.yield);
    if (c.f.info.node.kind == .derived_constructor and !c.f.info.node.is_arrow) try c.derivedResult(pos);
    if (!protected) {
        try c.mark(pos);
        try c.emit(.@"return");
        return;
    }
    const temp = try c.allocLocal(pos);
    defer c.f.locals_top -= 1;
    try c.emitU16(.put_loc, temp);
    var i = c.f.contexts.items.len;
    while (i > 0) {
        i -= 1;
        switch (c.f.contexts.items[i]) {
            .protected => try c.leaveProtected(i),
            // A for...of being left closes its iterator: the state is at the loop's depth.
            .loop => |l| if (l.iterator) try c.leaveIteratorLoop(l.depth, l.async_iterator, true),
            .switch_block, .labeled => {},
        }
        if (!c.f.reachable) return; // The finally block itself left.
    }
    try c.emitU16(.get_loc, temp);
    try c.emit(.@"return");
}

fn tryStatement(c: *Compiler, t: *ast.Try) Error!void {
    const end = try c.newLabel();
    const handler = try c.newLabel();
    const depth = c.f.depth;
    const handlers = c.f.handlers;
    try c.pushHandler(handler);
    try c.f.contexts.append(c.arena, .{ .protected = .{ .finalizer = t.finalizer, .handler = true } });
    try c.compileStatement(t.block);
    _ = c.f.contexts.pop();
    if (c.f.reachable) {
        try c.popHandler();
        if (t.finalizer) |fin| try c.compileStatement(fin);
        if (c.f.reachable) try c.emitJump(.jump, end, c.f.depth, null);
    }
    c.f.reachable = false;
    c.bind(handler);
    c.f.handlers = handlers; // The machine popped the handler to get here.
    assert(c.f.depth == depth + 1);
    if (t.handler) |catch_block| {
        const finally_handler = try c.newLabel();
        const saved = c.f.locals_top;
        if (t.finalizer != null) {
            // The exception is on the stack; protect the catch block too.
            try c.pushHandler(finally_handler);
            try c.f.contexts.append(c.arena, .{ .protected = .{ .finalizer = t.finalizer, .handler = true } });
        }
        // A generator's return() passes catch blocks by (to the finally block, if any).
        if (c.f.info.node.kind.isGenerator()) try c.emit(.catch_guard);
        const s = t.catch_scope.?;
        try c.declareScope(s);
        if (t.parameter) |p| {
            try c.bindPatternFrom(p, .init, .{ .object = .{ .destructure = ".catch" } });
        } else {
            try c.emit(.pop);
        }
        try c.hoistFunctions(s);
        for (catch_block.data.block.body) |statement| try c.compileStatement(statement);
        c.leaveScope(saved);
        if (t.finalizer) |fin| {
            _ = c.f.contexts.pop();
            if (c.f.reachable) {
                try c.popHandler();
                try c.compileStatement(fin);
                if (c.f.reachable) try c.emitJump(.jump, end, c.f.depth, null);
            }
            c.f.reachable = false;
            c.bind(finally_handler);
            c.f.handlers = handlers;
            try c.rethrowAfter(fin);
        } else if (c.f.reachable) {
            try c.emitJump(.jump, end, c.f.depth, null);
            c.f.reachable = false;
        }
    } else {
        try c.rethrowAfter(t.finalizer.?);
    }
    c.bind(end);
}

/// The exception path of a finally block: keep the exception, run the block, throw it again.
fn rethrowAfter(c: *Compiler, finalizer: *Node) Error!void {
    const temp = try c.allocLocal(finalizer.pos);
    defer c.f.locals_top -= 1;
    try c.emitU16(.put_loc, temp);
    try c.compileStatement(finalizer);
    if (c.f.reachable) {
        try c.emitU16(.get_loc, temp);
        try c.emit(.throw);
    }
}

fn pushHandler(c: *Compiler, handler: *Label) Error!void {
    try c.emitJump(.try_push, handler, c.f.depth + 1, null);
    c.f.handlers += 1;
    c.f.handlers_max = @max(c.f.handlers_max, c.f.handlers);
}

fn popHandler(c: *Compiler) Error!void {
    try c.emit(.try_pop);
    c.f.handlers -= 1;
}

fn switchStatement(c: *Compiler, s: *ast.Switch) Error!void {
    try c.expression(s.discriminant);
    const saved = c.f.locals_top;
    const temp = try c.allocLocal(s.discriminant.pos);
    try c.emitU16(.put_loc, temp);
    _ = try c.enterScope(s.scope);
    const end = try c.newLabel();
    const bodies = try c.arena.alloc(*Label, s.cases.len);
    var default_label: ?*Label = null;
    for (s.cases, bodies) |case, *label| {
        label.* = try c.newLabel();
        if (case.test_value) |value| {
            try c.emitU16(.get_loc, temp);
            try c.expression(value);
            try c.mark(case.pos);
            try c.emit(.strict_eq);
            try c.emitJump(.jump_if_true, label.*, c.f.depth - 1, null);
        } else {
            default_label = label.*;
        }
    }
    try c.emitJump(.jump, default_label orelse end, c.f.depth, null);
    c.f.reachable = false;
    try c.f.contexts.append(c.arena, .{ .switch_block = .{ .break_label = end, .depth = c.f.depth } });
    for (s.cases, bodies) |case, label| {
        c.bind(label);
        for (case.body) |statement| try c.compileStatement(statement);
    }
    _ = c.f.contexts.pop();
    c.bind(end);
    c.leaveScope(saved);
}

// ---------------------------------------------------------------------------------------
// Destructuring.

fn targetName(target: *const Node) ?[]const u8 {
    return if (target.data == .identifier) target.data.identifier.name else null;
}

/// What V8 says when a pattern meets a value it cannot destructure. V8 words these errors
/// from the syntax around the failing instruction (its CallPrinter), so the compiler works
/// out the same wording here, from the same syntax, and the instruction carries it.
const PatternSource = struct {
    object: ObjectSource = .read,
    array: IterationSite = .{},
};

const ObjectSource = union(enum) {
    /// Nested without a default: V8 reads the first property as any property read
    /// ("Cannot read properties of null (reading 'a')").
    read,
    /// A declaration, assignment, default, parameter, catch or for-of binding: "Cannot
    /// destructure property 'a' of 'S' as it is null.", S the value's source text (null:
    /// the value's type, as V8 shows a parameter).
    destructure: ?[]const u8,
    /// A pattern that is the value of property `key` of a pattern V8 names.
    property: struct { key: []const u8, site: ?[]const u8 },
};

/// How an iteration reports a value it cannot iterate (operations.IterationMode).
const IterationSite = struct {
    mode: bytecode.IterationMode = .value,
    text: []const u8 = "",
};

/// Binds the value on top of the stack (consuming it) to a target: an identifier, a member
/// (in assignments), or a pattern.
fn bindPattern(c: *Compiler, target: *Node, mode: StoreMode) Error!void {
    return c.bindPatternFrom(target, mode, .{});
}

fn bindPatternFrom(c: *Compiler, target: *Node, mode: StoreMode, source: PatternSource) Error!void {
    switch (target.data) {
        .identifier => try c.storeIdentifier(target, mode),
        .member => |m| {
            try c.expression(m.object);
            try c.emit(.swap);
            try c.mark(target.pos);
            try c.emitU16(.put_field, try c.fieldName(m.name, m.name_pos));
            try c.emit(.pop);
        },
        .index => |i| {
            try c.expression(i.object);
            try c.expression(i.key);
            try c.emit(.roll3);
            try c.mark(target.pos);
            try c.emit(.put_elem);
            try c.emit(.pop);
        },
        .with_default => |d| {
            try c.defaultValue(d.value, targetName(d.target));
            try c.bindPatternFrom(d.target, mode, .{ .object = .{ .destructure = CallPrinter.render(c.arena, d.value, false) } });
        },
        .array_pattern => |p| {
            try c.mark(target.pos);
            const protect = bindingsMayThrow(p, mode);
            if (protect) {
                try c.protectedIterStart(source.array, target.pos);
            } else {
                try c.iterationSite(.iter_start, source.array, target.pos);
            }
            for (p.elements) |element| {
                if (element) |e| try c.arrayElement(e, mode, .iter_value) else {
                    try c.emit(.iter_value);
                    try c.emit(.pop);
                }
            }
            if (p.rest) |rest| try c.arrayElement(rest, mode, .iter_rest);
            // An iterator the pattern did not finish is closed (ES §8.6.2, IteratorClose
            // when iteratorRecord.[[Done]] is false); a rest element finished it. What the
            // close throws passes the handler, which finds the iterator done.
            if (p.rest == null) try c.emit(.iter_close);
            if (protect) {
                try c.emit(.iter_end);
                c.f.handlers -= 1;
            } else {
                try c.emit(.pop);
                try c.emit(.pop);
            }
        },
        .object_pattern => |p| try c.objectPattern(target, p, mode, source.object),
        else => return c.failAt(target.pos, "Invalid destructuring assignment target"),
    }
}

/// One element of an array pattern (or its rest, `step` iter_rest): the iterator's next value
/// bound to it. A member target's object and key are evaluated before the iterator steps
/// (ES §13.15.5.5 AssignmentElement: lref first), and wait in locals meanwhile.
fn arrayElement(c: *Compiler, element: *Node, mode: StoreMode, step: Op) Error!void {
    const default = if (element.data == .with_default) element.data.with_default.value else null;
    const target = if (element.data == .with_default) element.data.with_default.target else element;
    if (target.data != .member and target.data != .index) {
        try c.emit(step);
        return c.bindPattern(element, mode);
    }
    const saved = c.f.locals_top;
    defer c.f.locals_top = saved;
    const object_slot = try c.allocLocal(target.pos);
    const key_slot = try c.allocLocal(target.pos);
    switch (target.data) {
        .member => |m| try c.expression(m.object),
        .index => |i| try c.expression(i.object),
        else => unreachable,
    }
    try c.emitU16(.put_loc, object_slot);
    if (target.data == .index) {
        try c.expression(target.data.index.key);
        try c.emitU16(.put_loc, key_slot);
    }
    try c.emit(step);
    if (default) |d| try c.defaultValue(d, null);
    try c.emitU16(.get_loc, object_slot);
    switch (target.data) {
        .member => |m| {
            try c.emit(.swap);
            try c.mark(target.pos);
            try c.emitU16(.put_field, try c.fieldName(m.name, m.name_pos));
        },
        .index => {
            try c.emitU16(.get_loc, key_slot);
            try c.emit(.roll3);
            try c.mark(target.pos);
            try c.emit(.put_elem);
        },
        else => unreachable,
    }
    try c.emit(.pop);
}

/// Whether binding an array pattern's elements can throw, which closes its iterator: not
/// when each element is a hole or a name being declared, so that `const [a, b] = pair`
/// pushes no handler. Any default, nested pattern or assignment target may throw.
fn bindingsMayThrow(p: ast.ArrayPattern, mode: StoreMode) bool {
    if (mode != .init) return true;
    for (p.elements) |element| {
        const e = element orelse continue;
        if (e.data != .identifier) return true;
    }
    if (p.rest) |rest| return rest.data != .identifier;
    return false;
}

/// The null-or-undefined check of an object pattern, worded as V8 words it. Where V8
/// lets the first property read fail (a plain first key), `get_field` gives its message.
fn requireObject(c: *Compiler, target: *Node, p: ast.ObjectPattern, source: ObjectSource) Error!void {
    const plain_first = p.properties.len > 0 and p.properties[0].key == .static;
    const rest_only = p.properties.len == 0 and p.rest != null;
    var key: ?[]const u8 = null;
    var site: ?[]const u8 = null;
    var wording: bytecode.RequireWording = .destructure;
    switch (source) {
        .read => {
            if (plain_first) return;
            wording = .read;
        },
        .destructure => |text| {
            if (plain_first and p.properties[0].value.data == .with_default) return;
            if (plain_first) key = p.properties[0].key.static;
            site = text;
        },
        .property => |parent| {
            if (plain_first) return;
            if (rest_only) {
                wording = .read;
            } else {
                key = parent.key;
                site = parent.site;
            }
        },
    }
    try c.mark(target.pos);
    if (site) |text| try c.siteName(text, target.pos);
    const name = if (key) |k| try c.stringConstant(k, target.pos) else Program.no_name;
    try c.emitU16U16(.require_object, name, @backingInt(wording));
}

fn objectPattern(c: *Compiler, target: *Node, p: ast.ObjectPattern, mode: StoreMode, source: ObjectSource) Error!void {
    try c.requireObject(target, p, source);
    // Computed keys are kept for the rest object, which must leave them out.
    const saved = c.f.locals_top;
    defer c.f.locals_top = saved;
    var key_temps: std.ArrayList(u16) = .empty;
    for (p.properties) |property| {
        try c.emit(.dup);
        switch (property.key) {
            .static => |name| {
                try c.mark(property.pos);
                try c.emitU16(.get_field, try c.fieldName(name, property.pos));
            },
            .computed => |key| {
                try c.expression(key);
                if (p.rest != null) {
                    const temp = try c.allocLocal(property.pos);
                    try c.emit(.dup);
                    try c.emitU16(.put_loc, temp);
                    try key_temps.append(c.arena, temp);
                }
                try c.mark(property.pos);
                try c.emit(.get_elem);
            },
        }
        try c.bindPatternFrom(property.value, mode, propertySource(source, property));
    }
    if (p.rest) |rest| {
        var count: u32 = 0;
        var computed: usize = 0;
        for (p.properties) |property| {
            switch (property.key) {
                .static => |name| try c.emitU16(.push_string, try c.stringConstant(name, property.pos)),
                .computed => {
                    try c.emitU16(.get_loc, key_temps.items[computed]);
                    computed += 1;
                },
            }
            count += 1;
        }
        if (count > 255) return c.failAt(target.pos, "too many properties before a rest element");
        try c.emitU8(.object_rest, @intCast(count));
        try c.bindPattern(rest, mode);
    } else {
        try c.emit(.pop);
    }
}

/// With a value on the stack: if it is undefined, replaces it with the default's value.
/// The source of a pattern that is a property's value inside an object pattern.
fn propertySource(parent: ObjectSource, property: ast.PatternProperty) PatternSource {
    if (parent != .destructure or property.key != .static) return .{};
    const site = parent.destructure;
    return .{
        .object = .{ .property = .{ .key = property.key.static, .site = site } },
        .array = .{ .mode = .property_value, .text = site orelse "" },
    };
}

fn defaultValue(c: *Compiler, value: *Node, name: ?[]const u8) Error!void {
    const done = try c.newLabel();
    try c.emitJump(.jump_if_defined_keep, done, c.f.depth, null);
    try c.expressionNamed(value, name);
    c.bind(done);
}

// ---------------------------------------------------------------------------------------
// Expressions.

/// An expression evaluated for its effect only (expression statements, for updates).
fn effect(c: *Compiler, node: *Node) Error!void {
    switch (node.data) {
        .update => |u| {
            if (u.target.data == .identifier) {
                try c.loadIdentifier(u.target);
                try c.emit(if (u.increment) .increment else .decrement);
                try c.storeIdentifier(u.target, .assign);
                return;
            }
        },
        .assign => |a| {
            if (a.op == null) {
                switch (a.target.data) {
                    .identifier => {
                        try c.expressionNamed(a.value, a.target.data.identifier.name);
                        try c.storeIdentifier(a.target, .assign);
                        return;
                    },
                    .array_pattern, .object_pattern => {
                        try c.expression(a.value);
                        try c.bindPatternFrom(a.target, .assign, .{ .object = .{ .destructure = CallPrinter.render(c.arena, a.value, false) } });
                        return;
                    },
                    else => {},
                }
            } else if (a.target.data == .identifier and a.op.? != .and_ and a.op.? != .or_ and a.op.? != .nullish) {
                // `x += v` as a statement: no copy of the result to pop.
                try c.loadIdentifier(a.target);
                try c.expression(a.value);
                try c.mark(node.pos);
                try c.emit(binaryOp(a.op.?));
                try c.storeIdentifier(a.target, .assign);
                return;
            }
        },
        else => {},
    }
    try c.expression(node);
    try c.emit(.pop);
}

fn expressionNamed(c: *Compiler, node: *Node, name: ?[]const u8) Error!void {
    if (node.data == .function and name != null) {
        const f = node.data.function;
        if (f.name == null) return c.closure(f, name);
    }
    if (node.data == .class and name != null and node.data.class.name == null and !node.parenthesized) {
        node.data.class.constructor.name = name;
    }
    return c.expression(node);
}

/// A class: its constructor and prototype made (`make_class`), then its members defined on
/// them in order, its fields' method attached, its name bound, its static fields run.
fn classExpression(c: *Compiler, class: *ast.Class) Error!void {
    const saved = try c.enterScope(class.name_scope);
    defer c.leaveScope(saved);
    for (class.private_names) |n| {
        // A fresh key for each private name, each time the class is evaluated.
        try c.emitU16(.new_private_name, try c.stringConstant(n, class.pos));
        try c.storeBinding(class.name_scope.?.find(n).?, .init, class.pos);
    }
    if (class.heritage) |h| try c.expression(h);
    try c.closure(class.constructor, null);
    try c.mark(class.pos);
    try c.emitU8(.make_class, @intFromBool(class.heritage != null));
    // constructor prototype
    // The computed field names are evaluated in their turn among the computed method names.
    var keys_done: usize = 0;
    for (class.members) |m| {
        keys_done += try c.computedFieldKeys(class, keys_done, m.pos);
        if (m.is_static) try c.emit(.swap);
        try c.pushKey(m.key, m.pos);
        try c.closure(m.function, null);
        try c.mark(m.pos);
        const flags: bytecode.MemberFlags = .{ .kind = switch (m.kind) {
            .method => .method,
            .getter => .getter,
            .setter => .setter,
        }, .not_enumerable = true };
        try c.emitU8(.define_member, @bitCast(flags));
        if (m.is_static) try c.emit(.swap);
    }
    keys_done += try c.computedFieldKeys(class, keys_done, std.math.maxInt(u32));
    assert(keys_done == class.computed_field_keys.len);
    if (class.fields) |f| {
        try c.emit(.swap);
        try c.closure(f, null);
        try c.emit(.set_fields);
        try c.emit(.swap);
    }
    try c.emit(.pop);
    if (class.self_binding) |b| {
        try c.emit(.dup);
        try c.storeBinding(b, .init, class.pos);
    }
    if (class.statics) |f| {
        try c.closure(f, null);
        try c.mark(class.pos);
        try c.emit(.call_static);
    }
}

/// Evaluates the computed field names from `first` that come before `before` (ToPropertyKey,
/// once, as the class is made) into their hidden bindings; returns how many it did.
fn computedFieldKeys(c: *Compiler, class: *const ast.Class, first: usize, before: u32) Error!usize {
    var count: usize = 0;
    for (class.computed_field_keys[first..]) |k| {
        if (k.pos >= before) break;
        try c.expression(k.expression);
        try c.mark(k.pos);
        try c.emit(.to_property_key);
        try c.storeBinding(class.name_scope.?.find(k.name).?, .init, k.pos);
        count += 1;
    }
    return count;
}

/// `super(...)`: the parent constructor runs with this constructor's `new.target`; its result
/// becomes `this`, once, and the class's fields are defined on it.
fn superCall(c: *Compiler, node: *Node, call: ast.Call) Error!void {
    const this = try c.specialHere(.this);
    try c.loadBinding(try c.specialHere(.callee), false, node.pos);
    try c.loadBinding(try c.specialHere(.new_target), false, node.pos);
    const spread = try c.callArguments(call.arguments);
    try c.mark(node.pos);
    if (spread) try c.emit(.super_call_spread) else try c.emitU8(.super_call, @intCast(call.arguments.len));
    try c.loadBinding(this, false, node.pos);
    try c.mark(node.pos);
    try c.emit(.throw_if_initialized);
    try c.emit(.dup);
    try c.storeBinding(this, .init_special, node.pos);
    try c.emit(.dup);
    try c.loadBinding(try c.specialHere(.callee), false, node.pos);
    try c.emit(.init_fields);
}

/// The hidden binding of a special value, as the code here reaches it.
fn specialHere(c: *Compiler, which: scope.Special) Error!*Binding {
    var info = c.f.info;
    while (info.node.is_arrow) info = info.parent.?;
    return info.specials[@backingInt(which)].?;
}

/// `super.x` or `super[k]`, with `this` as the receiver: this -> value.
fn superMember(c: *Compiler, node: *Node, key: *Node) Error!void {
    try c.loadBinding(try c.specialHere(.home), false, node.pos);
    try c.expression(key);
    try c.mark(node.pos);
    try c.emit(.super_get);
}

fn pushNumber(c: *Compiler, x: f64, pos: u32) Error!void {
    if (x == @trunc(x) and x >= -128 and x <= 127 and !(x == 0 and std.math.signbit(x))) {
        const small: i8 = @intFromFloat(x);
        return c.emitU8(.push_int8, @bitCast(small));
    }
    try c.emitU16(.push_number, try c.numberConstant(x, pos));
}

fn fieldName(c: *Compiler, name: []const u8, pos: u32) Error!u16 {
    if (std.mem.eql(u8, name, "__proto__")) return c.failAt(pos, "__proto__ is not supported (use Object.getPrototypeOf or Object.setPrototypeOf)");
    return c.stringConstant(name, pos);
}

fn expression(c: *Compiler, node: *Node) Error!void {
    if (@frameAddress() < c.stack_floor) return c.failAt(node.pos, "the program is nested too deeply");
    switch (node.data) {
        .number => |x| try c.pushNumber(x, node.pos),
        .string => |s| try c.emitU16(.push_string, try c.stringConstant(s, node.pos)),
        .true_literal => try c.emit(.push_true),
        .false_literal => try c.emit(.push_false),
        .null_literal => try c.emit(.push_null),
        .identifier => try c.loadIdentifier(node),
        .template => |t| try c.template(t, node.pos),
        .regexp => |r| try c.regExpLiteral(r, node.pos),
        .array => |elements| try c.arrayLiteral(elements, node.pos),
        .template_object => |site| try c.loadBinding(site.binding.?, false, node.pos),
        .object => |properties| try c.objectLiteral(properties, node.pos),
        .function => |f| try c.closure(f, null),
        .unary => |u| try c.unary(node, u),
        .update => |u| try c.update(node, u),
        .binary => |b| {
            try c.expression(b.lhs);
            try c.expression(b.rhs);
            try c.mark(node.pos);
            try c.emit(binaryOp(b.op));
        },
        .logical => |l| {
            const end = try c.newLabel();
            try c.expression(l.lhs);
            const op: Op = switch (l.op) {
                .and_ => .jump_if_false_keep,
                .or_ => .jump_if_true_keep,
                .nullish => .jump_if_not_nullish_keep,
                else => unreachable,
            };
            try c.emitJump(op, end, c.f.depth, null);
            try c.expression(l.rhs);
            c.bind(end);
        },
        .conditional => |cond| {
            const otherwise = try c.newLabel();
            const end = try c.newLabel();
            try c.condition(cond.condition, otherwise, false);
            try c.expression(cond.then);
            try c.emitJump(.jump, end, c.f.depth, null);
            c.f.reachable = false;
            c.bind(otherwise);
            try c.expression(cond.otherwise);
            c.bind(end);
        },
        .assign => |a| try c.assign(node, a),
        .sequence => |items| {
            for (items, 0..) |item, i| {
                try c.expression(item);
                if (i + 1 < items.len) try c.emit(.pop);
            }
        },
        .member => |m| {
            try c.expression(m.object);
            try c.optionalCheck(m.optional, 0);
            try c.mark(m.name_pos);
            try c.emitU16(.get_field, try c.fieldName(m.name, m.name_pos));
        },
        .index => |i| {
            try c.expression(i.object);
            try c.optionalCheck(i.optional, 0);
            try c.indexKey(i.key);
        },
        .call => |call| try c.callExpression(node, call),
        .new => |n| try c.newExpression(node, n),
        .class => |class| try c.classExpression(class),
        .super_call => |call| try c.superCall(node, call),
        .super_member => |key| {
            try c.loadBinding(try c.specialHere(.this), true, node.pos);
            try c.superMember(node, key);
        },
        .yield_expression => |y| try c.yieldExpression(y, node.pos),
        .chain => |inner| {
            const end = try c.newLabel();
            const saved_end = c.f.chain_end;
            const saved_depth = c.f.chain_depth;
            c.f.chain_end = end;
            c.f.chain_depth = c.f.depth;
            try c.expression(inner);
            c.f.chain_end = saved_end;
            c.f.chain_depth = saved_depth;
            c.bind(end);
        },
        .array_pattern, .object_pattern, .with_default => return c.failAt(node.pos, "Invalid destructuring assignment target"),
        .spread => return c.failAt(node.pos, "Unexpected token '...'"),
        .hole => return c.failAt(node.pos, "Unexpected token ','"),
        else => unreachable, // Statements never appear as expressions.
    }
}

/// `obj[key]` with obj on the stack: a constant string key becomes a field access.
fn indexKey(c: *Compiler, key: *Node) Error!void {
    if (key.data == .string) {
        const s = key.data.string;
        if (!isIndexLike(s)) {
            try c.mark(key.pos);
            return c.emitU16(.get_field, try c.fieldName(s, key.pos));
        }
    }
    try c.expression(key);
    try c.mark(key.pos);
    try c.emit(.get_elem);
}

fn isIndexLike(s: []const u8) bool {
    if (s.len == 0) return false;
    for (s) |ch| {
        if (ch < '0' or ch > '9') return false;
    }
    return true;
}

/// In an optional chain, with the object (and `extra` values under it... above the chain
/// start) on the stack: ends the chain with undefined when the top is nullish.
fn optionalCheck(c: *Compiler, optional: bool, extra: u8) Error!void {
    if (!optional) return;
    const end = c.f.chain_end.?;
    const drop: u32 = c.f.depth - c.f.chain_depth - 1;
    assert(drop >= extra);
    try c.emitJump(.jump_if_nullish_drop, end, c.f.chain_depth + 1, @intCast(drop));
}

fn binaryOp(op: ast.BinaryOp) Op {
    return switch (op) {
        .add => .add,
        .sub => .sub,
        .mul => .mul,
        .div => .div,
        .mod => .mod,
        .pow => .pow,
        .shl => .shl,
        .sar => .sar,
        .shr => .shr,
        .bit_and => .bit_and,
        .bit_or => .bit_or,
        .bit_xor => .bit_xor,
        .eq => .eq,
        .ne => .ne,
        .strict_eq => .strict_eq,
        .strict_ne => .strict_ne,
        .lt => .lt,
        .gt => .gt,
        .le => .le,
        .ge => .ge,
        .instanceof => .instanceof,
        .in => .in,
        .and_, .or_, .nullish => unreachable, // Logical nodes compile with jumps.
    };
}

fn template(c: *Compiler, t: ast.Template, pos: u32) Error!void {
    var count: u32 = 0;
    for (t.quasis, 0..) |quasi, i| {
        if (quasi.len > 0) {
            try c.emitU16(.push_string, try c.stringConstant(quasi, pos));
            count += 1;
        }
        if (i < t.expressions.len) {
            try c.expression(t.expressions[i]);
            count += 1;
        }
        // Concatenate in groups, so that the count fits its byte.
        if (count >= 254) {
            try c.mark(pos);
            try c.emitU8(.concat, @intCast(count));
            count = 1;
        }
    }
    if (count == 0) {
        try c.emitU16(.push_string, try c.stringConstant("", pos));
    } else if (t.expressions.len > 0) {
        try c.mark(pos);
        try c.emitU8(.concat, @intCast(count));
    }
}

fn arrayLiteral(c: *Compiler, elements: []const *Node, pos: u32) Error!void {
    return c.arrayOf(elements, pos, false);
}

/// An array literal, or (`arguments`) the arguments of a call with a spread among them.
fn arrayOf(c: *Compiler, elements: []const *Node, pos: u32, arguments: bool) Error!void {
    try c.emitU16(.new_array, @intCast(@min(elements.len, 0xFFFF)));
    for (elements, 0..) |element, i| {
        switch (element.data) {
            .hole => try c.emit(.append_hole),
            .spread => |inner| {
                try c.expression(inner);
                try c.mark(inner.pos);
                const site: IterationSite = if (!arguments)
                    c.spreadSite(inner)
                else if (i + 1 == elements.len)
                    .{ .mode = .spread_argument, .text = CallPrinter.render(c.arena, inner, false) }
                else
                    .{};
                try c.iterationSite(.append_spread, site, inner.pos);
            },
            else => {
                try c.expression(element);
                try c.emit(.append);
            },
        }
    }
    _ = pos;
}

fn objectLiteral(c: *Compiler, properties: []const ast.Property, pos: u32) Error!void {
    try c.mark(pos);
    try c.emitU16(.new_object, @intCast(@min(properties.len, 0xFFFF)));
    for (properties) |p| {
        if (p.shorthand_default) |d| return c.failAt(d.pos, "Invalid shorthand property initializer");
        switch (p.kind) {
            .spread => {
                try c.expression(p.value);
                try c.mark(p.pos);
                try c.emit(.copy_properties);
            },
            .getter, .setter => {
                try c.pushKey(p.key, p.pos);
                try c.expression(p.value);
                try c.mark(p.pos);
                const flags: bytecode.MemberFlags = .{ .kind = if (p.kind == .getter) .getter else .setter, .not_enumerable = false };
                try c.emitU8(.define_member, @bitCast(flags));
            },
            .method => if (usesHome(p.value)) {
                // A method that reads `super.x` needs its home object.
                try c.pushKey(p.key, p.pos);
                try c.expression(p.value);
                try c.mark(p.pos);
                try c.emitU8(.define_member, @bitCast(bytecode.MemberFlags{ .kind = .method, .not_enumerable = false }));
            } else try c.propertyDefinition(p),
            .init, .shorthand => try c.propertyDefinition(p),
        }
    }
}

fn isPrivateKey(key: *const Node) bool {
    return key.data == .identifier and key.data.identifier.name.len > 0 and key.data.identifier.name[0] == '#';
}

/// Pushes a member's key: its name as a string, or the computed expression's value.
fn pushKey(c: *Compiler, key: ast.Key, pos: u32) Error!void {
    switch (key) {
        .static => |name| try c.emitU16(.push_string, try c.stringConstant(name, pos)),
        .computed => |expr| try c.expression(expr),
    }
}

fn usesHome(value: *const Node) bool {
    return value.data.function.info.?.specials[@backingInt(scope.Special.home)] != null;
}

fn propertyDefinition(c: *Compiler, p: ast.Property) Error!void {
    switch (p.key) {
        .static => |name| {
            if (std.mem.eql(u8, name, "__proto__") and p.kind == .init) {
                return c.failAt(p.pos, "__proto__ is not supported (use Object.create or Object.setPrototypeOf)");
            }
            try c.expressionNamed(p.value, name);
            try c.mark(p.pos);
            try c.emitU16(.define_field, try c.stringConstant(name, p.pos));
        },
        .computed => |key| {
            try c.expression(key);
            try c.expression(p.value);
            try c.mark(p.pos);
            // An anonymous function takes the key as its name, at run time.
            const anonymous = p.value.data == .function and p.value.data.function.name == null;
            try c.emit(if (anonymous) .define_elem_named else .define_elem);
        },
    }
}

fn unary(c: *Compiler, node: *Node, u: ast.Unary) Error!void {
    switch (u.op) {
        .typeof => {
            if (u.operand.data == .identifier and u.operand.data.identifier.resolution == .undeclared) {
                return c.emitU16(.push_string, try c.stringConstant("undefined", node.pos));
            }
            try c.expression(u.operand);
            try c.emit(.typeof);
        },
        .delete => switch (u.operand.data) {
            .member => |m| {
                try c.expression(m.object);
                try c.mark(node.pos);
                try c.emitU16(.delete_field, try c.fieldName(m.name, m.name_pos));
            },
            .index => |i| {
                if (isPrivateKey(i.key)) return c.failAt(node.pos, "Private fields can not be deleted");
                try c.expression(i.object);
                try c.expression(i.key);
                try c.mark(node.pos);
                try c.emit(.delete_elem);
            },
            .chain => return c.failAt(node.pos, "delete of an optional chain is not supported"),
            else => {
                try c.expression(u.operand);
                try c.emit(.pop);
                try c.emit(.push_true);
            },
        },
        .void => {
            try c.expression(u.operand);
            try c.emit(.pop);
            try c.emit(.push_undefined);
        },
        else => {
            // Fold negative number literals.
            if (u.op == .negate and u.operand.data == .number) {
                return c.pushNumber(-u.operand.data.number, node.pos);
            }
            try c.expression(u.operand);
            try c.mark(node.pos);
            try c.emit(switch (u.op) {
                .negate => .negate,
                .plus => .plus,
                .not => .not,
                .bit_not => .bit_not,
                else => unreachable,
            });
        },
    }
}

fn update(c: *Compiler, node: *Node, u: ast.Update) Error!void {
    const step: Op = if (u.increment) .increment else .decrement;
    try c.mark(node.pos);
    switch (u.target.data) {
        .identifier => {
            try c.loadIdentifier(u.target);
            if (u.prefix) {
                try c.emit(step);
                try c.emit(.dup);
            } else {
                try c.emit(.to_numeric);
                try c.emit(.dup);
                try c.emit(step);
            }
            try c.storeIdentifier(u.target, .assign);
        },
        .member => |m| {
            const name = try c.fieldName(m.name, m.name_pos);
            try c.expression(m.object);
            try c.emit(.dup);
            try c.emitU16(.get_field, name);
            if (u.prefix) {
                try c.emit(step);
                try c.emitU16(.put_field, name);
            } else {
                // obj old -> old obj new
                try c.emit(.to_numeric);
                try c.emit(.dup);
                try c.emit(.rot3);
                try c.emit(step);
                try c.emitU16(.put_field, name);
                try c.emit(.pop);
            }
        },
        .index => |i| {
            try c.expression(i.object);
            try c.expression(i.key);
            try c.emit(.dup2);
            try c.emit(.get_elem);
            if (u.prefix) {
                try c.emit(step);
                try c.emit(.put_elem);
            } else {
                const saved = c.f.locals_top;
                defer c.f.locals_top = saved;
                const temp = try c.allocLocal(node.pos);
                try c.emit(.to_numeric);
                try c.emit(.dup);
                try c.emitU16(.put_loc, temp);
                try c.emit(step);
                try c.emit(.put_elem);
                try c.emit(.pop);
                try c.emitU16(.get_loc, temp);
            }
        },
        else => return c.failAt(u.target.pos, "Invalid left-hand side expression in postfix operation"),
    }
}

fn assign(c: *Compiler, node: *Node, a: ast.Assign) Error!void {
    const op = a.op orelse {
        switch (a.target.data) {
            .identifier => {
                try c.expressionNamed(a.value, a.target.data.identifier.name);
                try c.emit(.dup);
                try c.storeIdentifier(a.target, .assign);
            },
            .member => |m| {
                try c.expression(m.object);
                try c.expression(a.value);
                try c.mark(node.pos);
                try c.emitU16(.put_field, try c.fieldName(m.name, m.name_pos));
            },
            .index => |i| {
                try c.expression(i.object);
                try c.expression(i.key);
                try c.expression(a.value);
                try c.mark(node.pos);
                try c.emit(.put_elem);
            },
            else => {
                try c.expression(a.value);
                try c.emit(.dup);
                try c.bindPatternFrom(a.target, .assign, .{ .object = .{ .destructure = CallPrinter.render(c.arena, a.value, false) } });
            },
        }
        return;
    };
    const logical: ?Op = switch (op) {
        .and_ => .jump_if_false_keep,
        .or_ => .jump_if_true_keep,
        .nullish => .jump_if_not_nullish_keep,
        else => null,
    };
    switch (a.target.data) {
        .identifier => {
            try c.loadIdentifier(a.target);
            if (logical) |jump| {
                const end = try c.newLabel();
                try c.emitJump(jump, end, c.f.depth, null);
                try c.expressionNamed(a.value, a.target.data.identifier.name);
                try c.emit(.dup);
                try c.storeIdentifier(a.target, .assign);
                c.bind(end);
            } else {
                try c.expression(a.value);
                try c.mark(node.pos);
                try c.emit(binaryOp(op));
                try c.emit(.dup);
                try c.storeIdentifier(a.target, .assign);
            }
        },
        .member => |m| {
            const name = try c.fieldName(m.name, m.name_pos);
            try c.expression(m.object);
            try c.emit(.dup);
            try c.mark(m.name_pos);
            try c.emitU16(.get_field, name);
            if (logical) |jump| {
                const keep = try c.newLabel();
                const end = try c.newLabel();
                try c.emitJump(jump, keep, c.f.depth, null);
                try c.expression(a.value);
                try c.mark(node.pos);
                try c.emitU16(.put_field, name);
                try c.emitJump(.jump, end, c.f.depth, null);
                c.f.reachable = false;
                c.bind(keep);
                try c.emit(.swap);
                try c.emit(.pop);
                c.bind(end);
            } else {
                try c.expression(a.value);
                try c.mark(node.pos);
                try c.emit(binaryOp(op));
                try c.emitU16(.put_field, name);
            }
        },
        .index => |i| {
            try c.expression(i.object);
            try c.expression(i.key);
            try c.emit(.dup2);
            try c.mark(node.pos);
            try c.emit(.get_elem);
            if (logical) |jump| {
                const keep = try c.newLabel();
                const end = try c.newLabel();
                try c.emitJump(jump, keep, c.f.depth, null);
                try c.expression(a.value);
                try c.emit(.put_elem);
                try c.emitJump(.jump, end, c.f.depth, null);
                c.f.reachable = false;
                c.bind(keep);
                // obj key value -> value
                try c.emit(.rot3);
                try c.emit(.pop);
                try c.emit(.pop);
                c.bind(end);
            } else {
                try c.expression(a.value);
                try c.emit(binaryOp(op));
                try c.emit(.put_elem);
            }
        },
        else => return c.failAt(a.target.pos, "Invalid left-hand side in assignment"),
    }
}

fn hasSpread(args: []const *Node) bool {
    for (args) |arg| {
        if (arg.data == .spread) return true;
    }
    return false;
}

/// Pushes the arguments: each one, or (with a spread among them) one array of all.
fn callArguments(c: *Compiler, args: []const *Node) Error!bool {
    if (!hasSpread(args)) {
        for (args) |arg| try c.expression(arg);
        return false;
    }
    try c.arrayOf(args, 0, true);
    return true;
}

/// `Function(...)` compiles code at run time, which the language leaves out; the global
/// `Function` itself exists for `Function.prototype`.
fn refuseFunctionConstructor(c: *Compiler, callee: *const Node) Error!void {
    if (callee.data != .identifier) return;
    const id = callee.data.identifier;
    if (id.resolution == .global and std.mem.eql(u8, id.name, "Function")) {
        return c.failAt(callee.pos, "Function(...) is not supported");
    }
}

/// `new` on a builtin that is no constructor here: the primitive wrappers (`new String(s)`),
/// `new Date()`, `new Math()`.
fn refuseBuiltinNew(c: *Compiler, node: *const Node, callee: *const Node) Error!void {
    if (callee.data != .identifier) return;
    const id = callee.data.identifier;
    switch (id.resolution) {
        // `new Symbol()` is JavaScript's own TypeError, at run time.
        .global => |g| if (g < builtins.globals_count and !builtins.globalIsConstructor(g) and !std.mem.eql(u8, id.name, "Symbol")) {
            return c.failFmt(node.pos, "new {s} is not supported", .{id.name});
        },
        else => {},
    }
}

fn callExpression(c: *Compiler, node: *Node, call: ast.Call) Error!void {
    const callee = call.callee;
    try c.refuseFunctionConstructor(callee);
    const site = CallPrinter.render(c.arena, callee, false);
    switch (callee.data) {
        .super_member => |key| {
            try c.loadBinding(try c.specialHere(.this), true, node.pos);
            try c.emit(.dup);
            try c.superMember(callee, key);
            const spread = try c.callArguments(call.arguments);
            try c.mark(node.pos);
            try c.siteName(site, node.pos);
            if (spread) try c.emit(.call_method_spread) else try c.emitU8(.call_method, @intCast(call.arguments.len));
        },
        .member => |m| {
            try c.expression(m.object);
            try c.optionalCheck(m.optional, 0);
            try c.mark(m.name_pos);
            try c.emitU16(.get_field2, try c.fieldName(m.name, m.name_pos));
            try c.optionalCheck(call.optional, 1);
            const spread = try c.callArguments(call.arguments);
            try c.mark(node.pos);
            try c.siteName(site, node.pos);
            if (spread) try c.emit(.call_method_spread) else try c.emitU8(.call_method, @intCast(call.arguments.len));
        },
        .index => |i| {
            try c.expression(i.object);
            try c.optionalCheck(i.optional, 0);
            try c.expression(i.key);
            try c.mark(node.pos);
            try c.emit(.get_elem2);
            try c.optionalCheck(call.optional, 1);
            const spread = try c.callArguments(call.arguments);
            try c.mark(node.pos);
            try c.siteName(site, node.pos);
            if (spread) try c.emit(.call_method_spread) else try c.emitU8(.call_method, @intCast(call.arguments.len));
        },
        else => {
            try c.expression(callee);
            try c.optionalCheck(call.optional, 0);
            const spread = try c.callArguments(call.arguments);
            try c.mark(node.pos);
            try c.siteName(site, node.pos);
            if (spread) try c.emit(.call_spread) else try c.emitU8(.call, @intCast(call.arguments.len));
        },
    }
}

/// `/p/f` is `new RegExp("p", "f")` on the builtin RegExp, whatever the scope calls RegExp:
/// each evaluation makes a new object, as the spec says (the parser checked the pattern).
fn regExpLiteral(c: *Compiler, r: @FieldType(ast.Data, "regexp"), pos: u32) Error!void {
    try c.emitU16(.push_global, comptime builtins.globalId("RegExp").?);
    try c.emitU16(.push_string, try c.stringConstant(r.pattern, pos));
    try c.emitU16(.push_string, try c.stringConstant(r.flags, pos));
    try c.mark(pos);
    try c.siteName("RegExp", pos);
    try c.emitU8(.new, 2);
}

fn newExpression(c: *Compiler, node: *Node, n: ast.Call) Error!void {
    const callee = n.callee;
    try c.refuseFunctionConstructor(callee);
    try c.refuseBuiltinNew(node, callee);
    try c.expression(callee);
    const spread = try c.callArguments(n.arguments);
    try c.mark(node.pos);
    try c.siteName(CallPrinter.render(c.arena, callee, false), node.pos);
    if (spread) try c.emit(.new_spread) else try c.emitU8(.new, @intCast(n.arguments.len));
}

// ---------------------------------------------------------------------------------------
// Error sites: which wording V8 gives "x is not iterable" and its kin at each site (as V8's
// positions decide); the text of `x` comes from CallPrinter.zig.

/// `yield x`: value -> sent (and `await x`, which suspends an async function the same way).
/// `yield* x` yields each value of x's iteration, passing next(v)'s `v` to the inner
/// iterator's next, throw(e) to its throw and return(v) to its return (a handler around
/// the yield catches them: iter_delegate_abrupt), and is the inner iterator's return value.
fn yieldExpression(c: *Compiler, y: ast.Yield, pos: u32) Error!void {
    if (y.argument) |a| try c.expression(a) else try c.emit(.push_undefined);
    try c.mark(pos);
    if (!y.delegate and !y.is_await and c.f.info.node.kind.isAsyncGenerator()) {
        // An async generator's `yield x` awaits x, then yields it to the request queue.
        try c.emit(.yield);
        return c.emit(.yield_async);
    }
    if (!y.delegate) return c.emit(.yield);
    if (c.f.info.node.kind.isAsyncGenerator()) return c.asyncDelegate(pos);
    try c.iterationSite(.iter_start, .{ .mode = .value, .text = "" }, pos);
    // state state sent: each value next(v) sends goes to the inner iterator's next(v).
    try c.emit(.push_undefined);
    const top = try c.newLabel();
    const again = try c.newLabel();
    const handler = try c.newLabel();
    const end = try c.newLabel();
    c.bind(top);
    try c.emitJump(.iter_delegate, end, c.f.depth, null);
    // state state value: yielded; throw(e) and return(v) land in the handler.
    c.bind(again);
    try c.pushHandler(handler);
    try c.emit(.yield);
    try c.popHandler();
    try c.emitJump(.jump, top, c.f.depth, null);
    c.f.reachable = false;
    c.bind(handler);
    try c.emitJump(.iter_delegate_abrupt, end, c.f.depth - 1, null);
    try c.emitJump(.jump, again, c.f.depth, null);
    c.f.reachable = false;
    c.bind(end);
    // state state result -> result.
    const temp = try c.allocLocal(pos);
    defer c.f.locals_top -= 1;
    try c.emitU16(.put_loc, temp);
    try c.emit(.pop);
    try c.emit(.pop);
    try c.emitU16(.get_loc, temp);
}

/// An async generator's `yield* x`: x's async iterator (or its sync one, wrapped), each
/// result awaited and its value yielded as it is (ES §15.5.5, generatorKind async); the
/// value next(v) sends goes to the inner next(v), throw(e) and return(v) to its throw and
/// return (their results awaited), and the expression is the inner iterator's return
/// value.
fn asyncDelegate(c: *Compiler, pos: u32) Error!void {
    try c.iterationSite(.async_iter_start, .{ .mode = .value, .text = "" }, pos);
    const received = try c.allocLocal(pos);
    defer c.f.locals_top -= 1;
    try c.emit(.push_undefined);
    try c.emitU16(.put_loc, received);
    const top = try c.newLabel();
    const done = try c.newLabel();
    c.bind(top);
    // iterator next -> iterator next result: Await(next(received)), an object.
    try c.emit(.dup2);
    try c.emitU16(.get_loc, received);
    try c.emitU8(.call_method, 1);
    try c.emit(.yield);
    try c.emit(.dup);
    try c.emit(.iter_result_check);
    try c.emit(.dup);
    try c.emitU16(.get_field, try c.stringConstant("done", pos));
    try c.emitJump(.jump_if_true, done, c.f.depth - 1, null);
    try c.emitU16(.get_field, try c.stringConstant("value", pos));
    // iterator next value: yielded; throw(e) and return(v) land in the handler.
    const again = try c.newLabel();
    const handler = try c.newLabel();
    c.bind(again);
    try c.pushHandler(handler);
    try c.emit(.yield_async);
    try c.popHandler();
    try c.emitU16(.put_loc, received);
    try c.emitJump(.jump, top, c.f.depth, null);
    c.f.reachable = false;
    c.bind(handler);
    try c.emit(.async_delegate_call);
    try c.emit(.yield);
    try c.emitJump(.async_delegate_result, done, c.f.depth - 2, null);
    try c.emitJump(.jump, again, c.f.depth, null);
    c.f.reachable = false;
    c.bind(done);
    // iterator next result -> the result's value.
    try c.emitU16(.get_field, try c.stringConstant("value", pos));
    try c.emitU16(.put_loc, received);
    try c.emit(.pop);
    try c.emit(.pop);
    try c.emitU16(.get_loc, received);
}

fn iterationSite(c: *Compiler, op: Op, site: IterationSite, pos: u32) Error!void {
    // An empty text stands for none (the value's type is shown).
    if (site.mode != .value and site.text.len > 0) try c.siteName(site.text, pos);
    try c.emitU8(op, @backingInt(site.mode));
}

/// A for-of's iterable. Where V8's last recorded position inside the iterable is not the
/// iterable's own (optional chains, conditionals, logical and n-ary operators), it shows
/// the value's type instead.
fn forOfSite(c: *Compiler, iterable: *const Node) IterationSite {
    switch (iterable.data) {
        .chain, .conditional, .logical => return .{},
        .binary => |b| if (CallPrinter.isNary(b)) return .{},
        .sequence => |items| if (items.len > 2) return .{},
        else => {},
    }
    return c.iteratedSite(iterable);
}

/// A spread element of an array literal.
fn spreadSite(c: *Compiler, inner: *const Node) IterationSite {
    return c.iteratedSite(inner);
}

fn iteratedSite(c: *Compiler, node: *const Node) IterationSite {
    switch (node.data) {
        .call => |call| return .{ .mode = .call, .text = CallPrinter.render(c.arena, call.callee, true) },
        .new => |call| return .{ .mode = .call, .text = CallPrinter.render(c.arena, call.callee, true) },
        else => return .{ .mode = .plain, .text = CallPrinter.render(c.arena, node, true) },
    }
}

/// The initializer of an array pattern declaration. V8 names it only when the
/// initializer's node starts where the initializer does; otherwise the first call of a
/// plain name at that start, if any, with a note.
fn declarationSite(c: *Compiler, init: *const Node) IterationSite {
    if (init.parenthesized) return .{};
    switch (init.data) {
        .identifier, .number, .string, .true_literal, .false_literal, .null_literal, .object, .array, .template, .function, .conditional => {
            return .{ .mode = .plain, .text = CallPrinter.render(c.arena, init, true) };
        },
        .unary => |u| {
            // `+1` folds to a literal that starts after the sign.
            if (u.op == .plus and u.operand.data == .number and !u.operand.parenthesized) return .{};
            return .{ .mode = .plain, .text = CallPrinter.render(c.arena, init, true) };
        },
        .new => |call| return .{ .mode = .call, .text = CallPrinter.render(c.arena, call.callee, true) },
        .call => |call| if (call.callee.data == .identifier and !call.callee.parenthesized) {
            return .{ .mode = .call, .text = call.callee.data.identifier.name };
        },
        else => {},
    }
    // The leftmost operand chain, looking for `name(...)` at the start.
    var node = init;
    while (!node.parenthesized) {
        node = switch (node.data) {
            .call => |call| if (call.callee.data == .identifier and !call.callee.parenthesized)
                return .{ .mode = .noted, .text = call.callee.data.identifier.name }
            else
                call.callee,
            .member => |m| m.object,
            .index => |i| i.object,
            .binary, .logical => |b| b.lhs,
            .sequence => |items| items[0],
            .update => |u| if (u.prefix) return .{} else u.target,
            .assign => |a| a.target,
            else => return .{},
        };
    }
    return .{};
}

const DeepJob = struct {
    completed: bool = false,

    fn run(job: *DeepJob) void {
        var arena_state = std.heap.ArenaAllocator.init(std.heap.page_allocator);
        defer arena_state.deinit();
        const arena = arena_state.allocator();
        const forms = [_][2][]const u8{
            .{ "(", ")" },       .{ "[", "]" },       .{ "{a: ", "}" },
            .{ "() => (", ")" }, .{ "x ? ", " : 1" }, .{ "function f() { return ", " }" },
            .{ "!", "" },        .{ "a.b(", ")" },    .{ "`${", "}`" },
            .{ "[...", "]" },
        };
        for (forms) |form| {
            for ([_]usize{ 50, 200, 1000 }) |depth| {
                var source: std.ArrayList(u8) = .empty;
                source.appendSlice(arena, "const r = ") catch return;
                for (0..depth) |_| source.appendSlice(arena, form[0]) catch return;
                source.append(arena, '1') catch return;
                for (0..depth) |_| source.appendSlice(arena, form[1]) catch return;
                var failure: Failure = undefined;
                _ = compile(arena, source.items, .{}, &failure) catch {}; // Either outcome is fine.
            }
        }
        job.completed = true;
    }
};

test "compiler: deeply nested input is refused, not a stack overflow, on a worker-sized stack" {
    var job: DeepJob = .{};
    const thread = try std.Thread.spawn(.{ .stack_size = 256 * 1024 }, DeepJob.run, .{&job});
    thread.join();
    try std.testing.expect(job.completed);
}
