//! A program's bytecode as text, for `sluice js dump FILE` and for debugging the compiler.
const std = @import("std");

const Program = @import("Program.zig");
const bytecode = @import("bytecode.zig");
const Op = bytecode.Op;

pub fn program(w: *std.Io.Writer, p: *const Program) std.Io.Writer.Error!void {
    for (p.functions, 0..) |*f, i| {
        try w.print("function {d}", .{i});
        if (f.name != Program.no_name) try w.print(" {s}", .{p.strings[f.name].bytes});
        try w.print(" (params {d}{s}, locals {d}, stack {d}, handlers {d}, parent {d}, captures {d})\n", .{
            f.param_count, if (f.has_rest) " + rest" else "", f.local_count, f.stack_max, f.handler_max, f.parent, f.captures.len,
        });
        var pc: usize = 0;
        while (pc < f.code.len) {
            const op: Op = @fromBackingInt(@intCast(f.code[pc]));
            const info = bytecode.info(op);
            try w.print("  {d:>5}  {s}", .{ pc, @tagName(op) });
            switch (info.operand) {
                .none => {},
                .u8 => try w.print(" {d}", .{f.code[pc + 1]}),
                .i8 => try w.print(" {d}", .{@as(i8, @bitCast(f.code[pc + 1]))}),
                .u16 => {
                    const a = bytecode.readU16(f.code, pc + 1);
                    try w.print(" {d}", .{a});
                    switch (op) {
                        .push_string, .get_field, .get_field2, .put_field, .define_field, .delete_field => try w.print(" ({s})", .{p.strings[a].bytes}),
                        .push_number => try w.print(" ({d})", .{p.numbers[a]}),
                        else => {},
                    }
                },
                .u32 => try w.print(" -> {d}", .{bytecode.readU32(f.code, pc + 1)}),
                .u16_u16 => try w.print(" {d} {d}", .{ bytecode.readU16(f.code, pc + 1), bytecode.readU16(f.code, pc + 3) }),
                .u32_u8 => try w.print(" -> {d} {s} {d}", .{
                    bytecode.readU32(f.code, pc + 1),
                    if (op == .iter_start_protected) "mode" else "drop",
                    f.code[pc + 5],
                }),
            }
            try w.writeByte('\n');
            pc += bytecode.size(op);
        }
    }
}
