//! The bytecode verifier: run on every program before it may be loaded, whatever produced it.
//!
//! It decodes every function's code (each opcode known, each operand inside the code), checks
//! every index an instruction carries against what it indexes (constants, slots, captures,
//! functions, globals, exports), checks closures' capture lists against their creator, and
//! walks every reachable path with the operand stack depth and the handler depth, requiring
//! them never to underflow, never to exceed the function's declared maxima, to agree wherever
//! paths meet, and never to run off the end of the code. The interpreter relies on exactly
//! these facts and checks nothing of the kind itself.
const std = @import("std");

const Program = @import("Program.zig");
const bytecode = @import("bytecode.zig");
const Op = bytecode.Op;
const builtins = @import("builtins.zig");

pub const Error = error{ Invalid, OutOfMemory };

const Problem = @import("image.zig").Problem;

const op_count = @typeInfo(Op).@"enum".field_names.len;

pub fn program(gpa: std.mem.Allocator, p: *const Program, problem: *Problem) Error!void {
    var v: Verifier = .{ .gpa = gpa, .p = p, .problem = problem };
    if (p.functions.len == 0) return v.fail("no functions");
    for (p.exports) |e| if (e >= p.strings.len) return v.fail("export name out of range");
    for (p.host_globals) |h| {
        if (h >= p.strings.len or p.strings[h].wide) return v.fail("host global name out of range");
    }
    for (p.functions, 0..) |*f, i| try v.function(f, @intCast(i));
}

const State = struct {
    depth: u16,
    handlers: u16,

    const unknown: State = .{ .depth = 0xFFFF, .handlers = 0xFFFF };
};

const Verifier = struct {
    gpa: std.mem.Allocator,
    p: *const Program,
    problem: *Problem,

    fn fail(v: *Verifier, message: []const u8) Error {
        v.problem.message = message;
        return error.Invalid;
    }

    fn function(v: *Verifier, f: *const Program.Function, index: u16) Error!void {
        const p = v.p;
        if (@as(u32, f.param_count) + @intFromBool(f.has_rest) > f.local_count) return v.fail("more parameters than locals");
        if (f.name != Program.no_name and f.name >= p.strings.len) return v.fail("function name out of range");
        if ((index == 0) != (f.kind == .top_level)) return v.fail("only the top level is top-level code");
        if (index == 0) {
            if (f.parent != Program.no_name or f.captures.len != 0 or f.param_count != 0 or f.has_rest) {
                return v.fail("the top level takes no parameters and captures nothing");
            }
        } else {
            if (f.parent >= index) return v.fail("a function's creator must come before it");
            const parent = &p.functions[f.parent];
            for (f.captures) |c| {
                if (c.from_local) {
                    if (c.index >= parent.local_count) return v.fail("capture slot out of range");
                } else if (c.index >= parent.captures.len) {
                    return v.fail("capture index out of range");
                }
            }
        }
        for (f.site_names) |s| if (s.name >= p.strings.len) return v.fail("site name out of range");
        const code = f.code;
        if (code.len == 0) return v.fail("empty code");
        // Pass 1: decode, mark instruction starts, check operands.
        const starts = try v.gpa.alloc(bool, code.len);
        defer v.gpa.free(starts);
        @memset(starts, false);
        var pc: usize = 0;
        while (pc < code.len) {
            if (code[pc] >= op_count) return v.fail("unknown opcode");
            const op: Op = @fromBackingInt(@intCast(code[pc]));
            const size = bytecode.size(op);
            if (size > code.len - pc) return v.fail("instruction runs past the end of the code");
            starts[pc] = true;
            try v.operands(f, index, op, code, pc);
            pc += size;
        }
        // Pass 2: jump targets land on instructions.
        pc = 0;
        while (pc < code.len) {
            const op: Op = @fromBackingInt(@intCast(code[pc]));
            if (bytecode.info(op).jumps) {
                const target = bytecode.readU32(code, pc + 1);
                if (target >= code.len or !starts[target]) return v.fail("jump target is not an instruction");
            }
            pc += bytecode.size(op);
        }
        try v.depths(f, starts);
    }

    fn operands(v: *Verifier, f: *const Program.Function, index: u16, op: Op, code: []const u8, pc: usize) Error!void {
        const p = v.p;
        const info = bytecode.info(op);
        const a: u32 = switch (info.operand) {
            .u16, .u16_u16 => bytecode.readU16(code, pc + 1),
            else => 0,
        };
        switch (op) {
            .push_number => if (a >= p.numbers.len) return v.fail("number constant out of range"),
            .push_string, .new_private_name, .get_field, .get_field2, .put_field, .delete_field, .define_field, .throw_const_assign, .throw_undeclared => {
                if (a >= p.strings.len) return v.fail("string constant out of range");
            },
            .require_object => {
                if (a != Program.no_name and a >= p.strings.len) return v.fail("string constant out of range");
                if (std.enums.fromInt(bytecode.RequireWording, bytecode.readU16(code, pc + 3)) == null) return v.fail("bad operand");
            },
            .iter_start, .append_spread => {
                if (std.enums.fromInt(bytecode.IterationMode, code[pc + 1]) == null) return v.fail("bad operand");
            },
            .iter_start_protected => {
                if (std.enums.fromInt(bytecode.IterationMode, code[pc + 5]) == null) return v.fail("bad operand");
            },
            .push_global => if (a >= builtins.globals_count + p.host_globals.len) return v.fail("global out of range"),
            .get_loc, .put_loc, .set_uninitialized, .get_cell, .put_cell, .init_cell, .new_cell, .copy_cell, .box_local => {
                if (a >= f.local_count) return v.fail("local slot out of range");
            },
            .get_loc_check, .put_loc_check, .get_cell_check, .put_cell_check => {
                if (a >= f.local_count) return v.fail("local slot out of range");
                if (bytecode.readU16(code, pc + 3) >= p.strings.len) return v.fail("string constant out of range");
            },
            .get_upval, .put_upval => if (a >= f.captures.len) return v.fail("capture out of range"),
            .get_upval_check, .put_upval_check => {
                if (a >= f.captures.len) return v.fail("capture out of range");
                if (bytecode.readU16(code, pc + 3) >= p.strings.len) return v.fail("string constant out of range");
            },
            .closure => {
                if (a >= p.functions.len or a == 0) return v.fail("function out of range");
                if (p.functions[a].parent != index) return v.fail("closure of a function this one does not create");
            },
            .set_export => if (a >= p.exports.len) return v.fail("export out of range"),
            .push_callee => if (index == 0) return v.fail("the top level has no callee"),
            .push_special => {
                if (index == 0) return v.fail("the top level has no special values");
                if (code[pc + 1] >= bytecode.special_count) return v.fail("bad operand");
            },
            .define_member => if ((code[pc + 1] >> 4) != 0) return v.fail("bad operand"),
            .make_class => if (code[pc + 1] > 1) return v.fail("bad operand"),
            else => {},
        }
    }

    /// Walks every reachable path with (stack depth, handler depth).
    fn depths(v: *Verifier, f: *const Program.Function, starts: []const bool) Error!void {
        _ = starts;
        const code = f.code;
        const states = try v.gpa.alloc(State, code.len);
        defer v.gpa.free(states);
        @memset(states, State.unknown);
        var work: std.ArrayList(u32) = .empty;
        defer work.deinit(v.gpa);
        try v.reach(&work, states, 0, .{ .depth = 0, .handlers = 0 }, f);
        while (work.pop()) |pc| {
            const state = states[pc];
            const op: Op = @fromBackingInt(@intCast(code[pc]));
            const info = bytecode.info(op);
            const next: u32 = pc + bytecode.size(op);
            const operand: u32 = switch (info.operand) {
                .u8 => code[pc + 1],
                else => 0,
            };
            // Only `jump` and `jump_if_false`/`jump_if_true` charge the budget when they go
            // back (the interpreter's `tick`); any other jump that went back could loop
            // without ever being charged, so it must go forward. The compiler emits them so.
            // Read from the opcode table, so that a jump added later is covered too.
            const charged = op == .jump or op == .jump_if_false or op == .jump_if_true;
            if (info.jumps and !charged and bytecode.readU32(code, pc + 1) <= pc) {
                return v.fail("a jump that is not charged goes back");
            }
            const pops: u32 = info.pops orelse bytecode.dynamicPops(op, operand);
            if (state.depth < pops) return v.fail("stack underflow");
            const after: u32 = state.depth - pops + info.pushes;
            switch (op) {
                .jump => try v.reach(&work, states, bytecode.readU32(code, pc + 1), state, f),
                .jump_if_false, .jump_if_true => {
                    const s: State = .{ .depth = @intCast(after), .handlers = state.handlers };
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), s, f);
                    try v.reach(&work, states, next, s, f);
                },
                .jump_if_false_keep, .jump_if_true_keep, .jump_if_not_nullish_keep, .jump_if_defined_keep => {
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), state, f);
                    try v.reach(&work, states, next, .{ .depth = @intCast(after), .handlers = state.handlers }, f);
                },
                .jump_if_nullish_drop => {
                    const drop: u32 = code[pc + 5];
                    if (state.depth < drop + 1) return v.fail("stack underflow");
                    const target: State = .{ .depth = @intCast(state.depth - drop), .handlers = state.handlers };
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), target, f);
                    try v.reach(&work, states, next, state, f);
                },
                .iter_delegate, .iter_delegate_abrupt, .async_delegate_result => {
                    const s: State = .{ .depth = @intCast(after), .handlers = state.handlers };
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), s, f);
                    try v.reach(&work, states, next, s, f);
                },
                .async_iter_done => {
                    if (state.depth < 1) return v.fail("stack underflow");
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), .{ .depth = state.depth - 1, .handlers = state.handlers }, f);
                    try v.reach(&work, states, next, .{ .depth = @intCast(after), .handlers = state.handlers }, f);
                },
                .iter_next, .async_iter_return => {
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), state, f);
                    try v.reach(&work, states, next, .{ .depth = @intCast(after), .handlers = state.handlers }, f);
                },
                .try_push => {
                    if (state.handlers + 1 > f.handler_max) return v.fail("more handlers than declared");
                    const handler: State = .{ .depth = state.depth + 1, .handlers = state.handlers };
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), handler, f);
                    try v.reach(&work, states, next, .{ .depth = state.depth, .handlers = state.handlers + 1 }, f);
                },
                .try_pop, .iter_end => {
                    if (state.handlers == 0) return v.fail("try_pop without a handler");
                    try v.reach(&work, states, next, .{ .depth = @intCast(after), .handlers = state.handlers - 1 }, f);
                },
                .iter_start_protected => {
                    if (state.handlers + 1 > f.handler_max) return v.fail("more handlers than declared");
                    const handler: State = .{ .depth = @intCast(after + 1), .handlers = state.handlers };
                    try v.reach(&work, states, bytecode.readU32(code, pc + 1), handler, f);
                    try v.reach(&work, states, next, .{ .depth = @intCast(after), .handlers = state.handlers + 1 }, f);
                },
                else => {
                    if (info.terminator) continue;
                    try v.reach(&work, states, next, .{ .depth = @intCast(after), .handlers = state.handlers }, f);
                },
            }
        }
    }

    fn reach(v: *Verifier, work: *std.ArrayList(u32), states: []State, pc: u32, state: State, f: *const Program.Function) Error!void {
        if (pc >= states.len) return v.fail("execution runs past the end of the code");
        if (state.depth > f.stack_max) return v.fail("stack deeper than declared");
        const known = states[pc];
        if (known.depth == State.unknown.depth) {
            states[pc] = state;
            try work.append(v.gpa, pc);
            return;
        }
        if (known.depth != state.depth or known.handlers != state.handlers) {
            return v.fail("stack depths disagree where paths meet");
        }
    }
};

/// A small `for...of` loop, compiled and verified: the program the tests below break.
fn verifiedLoop(arena: std.mem.Allocator) !Program {
    const Compiler = @import("Compiler.zig");
    var failure: Compiler.Failure = undefined;
    const p = try Compiler.compile(arena, "let n = 0; for (const x of [1, 2]) n += x;", .{}, &failure);
    var problem: Problem = .{};
    try program(std.testing.allocator, &p, &problem);
    return p;
}

test "a jump that the interpreter does not charge may not go back" {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const p = try verifiedLoop(arena);
    var problem: Problem = .{};

    // The loop's exit (taken when the iterator is done) pointed at the `iter_next` itself: a
    // loop that never reaches a charged backward `jump`.
    const code = try arena.dupe(u8, p.functions[0].code);
    var pc: usize = 0;
    const at = while (pc < code.len) {
        const op: Op = @fromBackingInt(@intCast(code[pc]));
        if (op == .iter_next) break pc;
        pc += bytecode.size(op);
    } else return error.TestUnexpectedResult;
    std.mem.writeInt(u32, code[at + 1 ..][0..4], @intCast(at), .little);
    var functions = try arena.dupe(Program.Function, p.functions);
    functions[0].code = code;
    var patched = p;
    patched.functions = functions;
    try std.testing.expectError(error.Invalid, program(std.testing.allocator, &patched, &problem));
    try std.testing.expectEqualStrings("a jump that is not charged goes back", problem.message);
}

test "iter_start_protected opens a handler the function must declare, and iter_end closes it" {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const p = try verifiedLoop(arena);
    var problem: Problem = .{};
    var found_end = false;
    var pc: usize = 0;
    const code = p.functions[0].code;
    while (pc < code.len) : (pc += bytecode.size(@fromBackingInt(@intCast(code[pc])))) {
        if (code[pc] == @backingInt(Op.iter_end)) found_end = true;
    }
    try std.testing.expect(found_end);

    // With no handler declared, the loop's handler has no room.
    var functions = try arena.dupe(Program.Function, p.functions);
    functions[0].handler_max = 0;
    var patched = p;
    patched.functions = functions;
    try std.testing.expectError(error.Invalid, program(std.testing.allocator, &patched, &problem));
    try std.testing.expectEqualStrings("more handlers than declared", problem.message);
}
