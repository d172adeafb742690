//! The interpreter: a loop over a switch on the opcode byte, with the running frame's state
//! (code, pc, operand stack top, locals) in local variables.
//!
//! Fast paths (numbers, dense arrays, own properties) are inline; everything else calls into
//! operations.zig. Any operation may fail with `error.Throw`; `run` then unwinds to the
//! innermost handler and resumes, or leaves when the exception passes the frame that the
//! `run` call entered with. The current instruction's pc is stored in the frame before each
//! instruction, so that errors know where they happened.
//!
//! Every index this loop uses was checked by the verifier (verify.zig) before the program
//! could be loaded: jump targets, slots, constants, functions, stack depth. What the verifier
//! cannot know (the types on the stack) is checked here, at run time, on every path that
//! would otherwise misread memory.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const value_mod = @import("value.zig");
const Value = value_mod.Value;
const Cell = value_mod.Cell;
const bytecode = @import("bytecode.zig");
const Op = bytecode.Op;
const readU16 = bytecode.readU16;
const readU32 = bytecode.readU32;
const object = @import("object.zig");
const string = @import("string.zig");
const ops = @import("operations.zig");
const builtins = @import("builtins.zig");
const number = @import("number.zig");
const Program = @import("Program.zig");
const meter = @import("meter.zig");
const classes = @import("classes.zig");

/// Runs from the top frame until the frame this call entered with returns.
pub fn run(vm: *Vm) Error!Value {
    while (true) {
        if (execute(vm)) |result| {
            return result;
        } else |err| switch (err) {
            error.Throw => if (!vm.unwind()) return error.Throw,
            error.Terminate => return error.Terminate,
        }
    }
}

fn execute(vm: *Vm) Error!Value {
    const stack = vm.stack.ptr;
    var frame = &vm.frames[vm.frame_count - 1];
    var code = frame.function.code;
    var pc = frame.pc;
    var sp = frame.sp;
    var locals = stack + frame.base;

    while (true) {
        frame.pc = pc;
        const op: Op = @fromBackingInt(@intCast(code[pc]));
        switch (op) {
            .push_undefined => {
                stack[sp] = Value.undefined_value;
                sp += 1;
                pc += 1;
            },
            .push_null => {
                stack[sp] = Value.null_value;
                sp += 1;
                pc += 1;
            },
            .push_true => {
                stack[sp] = Value.true_value;
                sp += 1;
                pc += 1;
            },
            .push_false => {
                stack[sp] = Value.false_value;
                sp += 1;
                pc += 1;
            },
            .push_int8 => {
                const small: i8 = @bitCast(code[pc + 1]);
                stack[sp] = Value.number(@floatFromInt(small));
                sp += 1;
                pc += 2;
            },
            .push_number => {
                stack[sp] = Value.number(vm.program.numbers[readU16(code, pc + 1)]);
                sp += 1;
                pc += 3;
            },
            .push_string => {
                stack[sp] = Value.string(vm.constantString(readU16(code, pc + 1)));
                sp += 1;
                pc += 3;
            },
            .push_global => {
                stack[sp] = try builtins.globalValue(vm, readU16(code, pc + 1));
                sp += 1;
                pc += 3;
            },
            .push_callee => {
                const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
                stack[sp] = Value.obj(&closure.object);
                sp += 1;
                pc += 1;
            },
            .pop => {
                sp -= 1;
                pc += 1;
            },
            .dup => {
                stack[sp] = stack[sp - 1];
                sp += 1;
                pc += 1;
            },
            .dup2 => {
                stack[sp] = stack[sp - 2];
                stack[sp + 1] = stack[sp - 1];
                sp += 2;
                pc += 1;
            },
            .swap => {
                const a = stack[sp - 2];
                stack[sp - 2] = stack[sp - 1];
                stack[sp - 1] = a;
                pc += 1;
            },
            .rot3 => {
                // a b c -> c a b
                const c = stack[sp - 1];
                stack[sp - 1] = stack[sp - 2];
                stack[sp - 2] = stack[sp - 3];
                stack[sp - 3] = c;
                pc += 1;
            },
            .roll3 => {
                // a b c -> b c a
                const a = stack[sp - 3];
                stack[sp - 3] = stack[sp - 2];
                stack[sp - 2] = stack[sp - 1];
                stack[sp - 1] = a;
                pc += 1;
            },
            .over => {
                stack[sp] = stack[sp - 2];
                sp += 1;
                pc += 1;
            },
            .get_loc => {
                stack[sp] = locals[readU16(code, pc + 1)];
                sp += 1;
                pc += 3;
            },
            .put_loc => {
                sp -= 1;
                locals[readU16(code, pc + 1)] = stack[sp];
                pc += 3;
            },
            .get_loc_check => {
                const v = locals[readU16(code, pc + 1)];
                if (v.eqlBits(Value.uninitialized)) return throwUninitialized(vm, readU16(code, pc + 3));
                stack[sp] = v;
                sp += 1;
                pc += 5;
            },
            .put_loc_check => {
                const slot = readU16(code, pc + 1);
                if (locals[slot].eqlBits(Value.uninitialized)) return throwUninitialized(vm, readU16(code, pc + 3));
                sp -= 1;
                locals[slot] = stack[sp];
                pc += 5;
            },
            .set_uninitialized => {
                locals[readU16(code, pc + 1)] = Value.uninitialized;
                pc += 3;
            },
            .get_cell => {
                const cell = try cellAt(vm, locals[readU16(code, pc + 1)]);
                stack[sp] = cell.value;
                sp += 1;
                pc += 3;
            },
            .get_cell_check => {
                const cell = try cellAt(vm, locals[readU16(code, pc + 1)]);
                if (cell.value.eqlBits(Value.uninitialized)) return throwUninitialized(vm, readU16(code, pc + 3));
                stack[sp] = cell.value;
                sp += 1;
                pc += 5;
            },
            .put_cell, .init_cell => {
                const cell = try cellAt(vm, locals[readU16(code, pc + 1)]);
                sp -= 1;
                cell.value = stack[sp];
                pc += 3;
            },
            .put_cell_check => {
                const cell = try cellAt(vm, locals[readU16(code, pc + 1)]);
                if (cell.value.eqlBits(Value.uninitialized)) return throwUninitialized(vm, readU16(code, pc + 3));
                sp -= 1;
                cell.value = stack[sp];
                pc += 5;
            },
            .new_cell => {
                const cell = try vm.newCell(Value.uninitialized);
                locals[readU16(code, pc + 1)] = Value.cell(cell);
                pc += 3;
            },
            .copy_cell => {
                const slot = readU16(code, pc + 1);
                const old = try cellAt(vm, locals[slot]);
                const cell = try vm.newCell(old.value);
                locals[slot] = Value.cell(cell);
                pc += 3;
            },
            .box_local => {
                const slot = readU16(code, pc + 1);
                const cell = try vm.newCell(locals[slot]);
                locals[slot] = Value.cell(cell);
                pc += 3;
            },
            .get_upval => {
                const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
                stack[sp] = closure.captures[readU16(code, pc + 1)].value;
                sp += 1;
                pc += 3;
            },
            .get_upval_check => {
                const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
                const v = closure.captures[readU16(code, pc + 1)].value;
                if (v.eqlBits(Value.uninitialized)) return throwUninitialized(vm, readU16(code, pc + 3));
                stack[sp] = v;
                sp += 1;
                pc += 5;
            },
            .put_upval => {
                const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
                const cell = closure.captures[readU16(code, pc + 1)];
                try ops.checkCellWritable(vm, cell);
                sp -= 1;
                cell.value = stack[sp];
                pc += 3;
            },
            .put_upval_check => {
                const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
                const cell = closure.captures[readU16(code, pc + 1)];
                if (cell.value.eqlBits(Value.uninitialized)) return throwUninitialized(vm, readU16(code, pc + 3));
                try ops.checkCellWritable(vm, cell);
                sp -= 1;
                cell.value = stack[sp];
                pc += 5;
            },
            .throw_const_assign => return vm.throwMessage(.type_error, "Assignment to constant variable."),
            .throw_undeclared => {
                const name = vm.constantString(readU16(code, pc + 1));
                return vm.throwFmt(.reference_error, "{f} is not defined", .{ops.StringFormat{ .s = name }});
            },
            .closure => {
                const f = &vm.program.functions[readU16(code, pc + 1)];
                const captures = vm.heap.alloc(*Cell, f.captures.len) catch return vm.outOfMemory();
                for (f.captures, captures) |capture, *c| {
                    if (capture.from_local) {
                        c.* = try cellAt(vm, locals[capture.index]);
                    } else {
                        const closure = frame.closure orelse return vm.terminate(.invalid_bytecode);
                        c.* = closure.captures[capture.index];
                    }
                }
                const closure = try vm.newClosure(f, captures);
                stack[sp] = Value.obj(&closure.object);
                sp += 1;
                pc += 3;
            },
            .get_field => {
                const key = vm.constantString(readU16(code, pc + 1));
                stack[sp - 1] = try ops.getField(vm, stack[sp - 1], key);
                pc += 3;
            },
            .get_field2 => {
                const key = vm.constantString(readU16(code, pc + 1));
                stack[sp] = try ops.getField(vm, stack[sp - 1], key);
                sp += 1;
                pc += 3;
            },
            .put_field => {
                const key = vm.constantString(readU16(code, pc + 1));
                const v = stack[sp - 1];
                try ops.setField(vm, stack[sp - 2], key, v);
                stack[sp - 2] = v;
                sp -= 1;
                pc += 3;
            },
            .get_elem => {
                stack[sp - 2] = try ops.getElement(vm, stack[sp - 2], stack[sp - 1]);
                sp -= 1;
                pc += 1;
            },
            .get_elem2 => {
                stack[sp - 1] = try ops.getElement(vm, stack[sp - 2], stack[sp - 1]);
                pc += 1;
            },
            .put_elem => {
                const v = stack[sp - 1];
                try ops.setElement(vm, stack[sp - 3], stack[sp - 2], v);
                stack[sp - 3] = v;
                sp -= 2;
                pc += 1;
            },
            .delete_field => {
                const key = vm.constantString(readU16(code, pc + 1));
                stack[sp - 1] = Value.boolean(try ops.deleteField(vm, stack[sp - 1], key));
                pc += 3;
            },
            .to_property_key => {
                const key = try ops.toPropertyKey(vm, stack[sp - 1]);
                stack[sp - 1] = if (key.flags.symbol) Value.symbol(key) else Value.string(key);
                pc += 1;
            },
            .delete_elem => {
                const key = try ops.toPropertyKey(vm, stack[sp - 1]);
                stack[sp - 2] = Value.boolean(try ops.deleteField(vm, stack[sp - 2], key));
                sp -= 1;
                pc += 1;
            },
            .define_field => {
                const key = vm.constantString(readU16(code, pc + 1));
                const o = try literalObject(vm, stack[sp - 2]);
                o.properties.put(vm.heap, key, stack[sp - 1]) catch return vm.outOfMemory();
                sp -= 1;
                pc += 3;
            },
            .define_elem, .define_elem_named => {
                const o = try literalObject(vm, stack[sp - 3]);
                const key = try ops.toPropertyKey(vm, stack[sp - 2]);
                if (op == .define_elem_named) {
                    if (stack[sp - 1].objectOf(.closure)) |f| f.as(object.Closure).name = key;
                }
                o.properties.put(vm.heap, key, stack[sp - 1]) catch return vm.outOfMemory();
                sp -= 2;
                pc += 1;
            },
            .copy_properties => {
                const o = try literalObject(vm, stack[sp - 2]);
                try ops.copyProperties(vm, o, stack[sp - 1], &.{});
                sp -= 1;
                pc += 1;
            },
            .new_object => {
                const o = try vm.newObject(readU16(code, pc + 1));
                stack[sp] = Value.obj(o);
                sp += 1;
                pc += 3;
            },
            .new_array => {
                const a = try vm.newArray(readU16(code, pc + 1));
                stack[sp] = Value.obj(&a.object);
                sp += 1;
                pc += 3;
            },
            .append => {
                const a = try literalArray(vm, stack[sp - 2]);
                a.push(vm.heap, stack[sp - 1]) catch return vm.outOfMemory();
                sp -= 1;
                pc += 1;
            },
            .append_hole => {
                const a = try literalArray(vm, stack[sp - 1]);
                a.push(vm.heap, Value.hole) catch return vm.outOfMemory();
                pc += 1;
            },
            .append_spread => {
                const a = try literalArray(vm, stack[sp - 2]);
                try ops.appendIterable(vm, a, stack[sp - 1], iterationSite(vm, frame.function, pc, code[pc + 1]));
                sp -= 1;
                pc += 2;
            },
            .add => {
                const a = stack[sp - 2];
                const b = stack[sp - 1];
                stack[sp - 2] = if (a.isNumber() and b.isNumber())
                    Value.number(a.asNumber() + b.asNumber())
                else
                    try ops.add(vm, a, b);
                sp -= 1;
                pc += 1;
            },
            .sub, .mul, .div, .mod, .pow => {
                const a = stack[sp - 2];
                const b = stack[sp - 1];
                const x = if (a.isNumber()) a.asNumber() else try ops.toNumber(vm, a);
                const y = if (b.isNumber()) b.asNumber() else try ops.toNumber(vm, b);
                stack[sp - 2] = Value.number(switch (op) {
                    .sub => x - y,
                    .mul => x * y,
                    .div => x / y,
                    .mod => ops.modulo(x, y),
                    .pow => ops.power(x, y),
                    else => unreachable,
                });
                sp -= 1;
                pc += 1;
            },
            .bit_and, .bit_or, .bit_xor, .shl, .sar, .shr => {
                const x = try ops.toNumberValue(vm, stack[sp - 2]);
                const y = try ops.toNumberValue(vm, stack[sp - 1]);
                stack[sp - 2] = Value.number(ops.bitwise(op, x, y));
                sp -= 1;
                pc += 1;
            },
            .strict_eq, .strict_ne => {
                const same = ops.strictEquals(stack[sp - 2], stack[sp - 1]);
                stack[sp - 2] = Value.boolean(same == (op == .strict_eq));
                sp -= 1;
                pc += 1;
            },
            .eq, .ne => {
                const same = try ops.looseEquals(vm, stack[sp - 2], stack[sp - 1]);
                stack[sp - 2] = Value.boolean(same == (op == .eq));
                sp -= 1;
                pc += 1;
            },
            .lt, .le, .gt, .ge => {
                const a = stack[sp - 2];
                const b = stack[sp - 1];
                const result = if (a.isNumber() and b.isNumber()) switch (op) {
                    .lt => a.asNumber() < b.asNumber(),
                    .le => a.asNumber() <= b.asNumber(),
                    .gt => a.asNumber() > b.asNumber(),
                    .ge => a.asNumber() >= b.asNumber(),
                    else => unreachable,
                } else try ops.compare(vm, op, a, b);
                stack[sp - 2] = Value.boolean(result);
                sp -= 1;
                pc += 1;
            },
            .instanceof => {
                stack[sp - 2] = Value.boolean(try ops.instanceOf(vm, stack[sp - 2], stack[sp - 1]));
                sp -= 1;
                pc += 1;
            },
            .in => {
                stack[sp - 2] = Value.boolean(try ops.hasProperty(vm, stack[sp - 1], stack[sp - 2]));
                sp -= 1;
                pc += 1;
            },
            .negate => {
                const v = stack[sp - 1];
                stack[sp - 1] = Value.number(-(if (v.isNumber()) v.asNumber() else try ops.toNumber(vm, v)));
                pc += 1;
            },
            .plus, .to_numeric => {
                const v = stack[sp - 1];
                if (!v.isNumber()) stack[sp - 1] = Value.number(try ops.toNumber(vm, v));
                pc += 1;
            },
            .not => {
                stack[sp - 1] = Value.boolean(!ops.toBoolean(stack[sp - 1]));
                pc += 1;
            },
            .bit_not => {
                const x = try ops.toNumberValue(vm, stack[sp - 1]);
                stack[sp - 1] = Value.number(@floatFromInt(~number.toInt32(x)));
                pc += 1;
            },
            .typeof => {
                stack[sp - 1] = Value.string(ops.typeOf(vm, stack[sp - 1]));
                pc += 1;
            },
            .increment, .decrement => {
                const v = stack[sp - 1];
                const x = if (v.isNumber()) v.asNumber() else try ops.toNumber(vm, v);
                stack[sp - 1] = Value.number(if (op == .increment) x + 1 else x - 1);
                pc += 1;
            },
            .concat => {
                const n = code[pc + 1];
                const result = try ops.concatValues(vm, stack[sp - n .. sp]);
                sp -= n;
                stack[sp] = Value.string(result);
                sp += 1;
                pc += 2;
            },
            .jump => {
                const target = readU32(code, pc + 1);
                if (target <= pc) try tick(vm, pc - target);
                pc = target;
            },
            .jump_if_false, .jump_if_true => {
                sp -= 1;
                const truthy = ops.toBoolean(stack[sp]);
                if (truthy == (op == .jump_if_true)) {
                    const target = readU32(code, pc + 1);
                    if (target <= pc) try tick(vm, pc - target);
                    pc = target;
                } else pc += 5;
            },
            .jump_if_false_keep, .jump_if_true_keep => {
                const truthy = ops.toBoolean(stack[sp - 1]);
                if (truthy == (op == .jump_if_true_keep)) {
                    pc = readU32(code, pc + 1);
                } else {
                    sp -= 1;
                    pc += 5;
                }
            },
            .jump_if_not_nullish_keep => {
                if (!stack[sp - 1].isNullish()) {
                    pc = readU32(code, pc + 1);
                } else {
                    sp -= 1;
                    pc += 5;
                }
            },
            .jump_if_defined_keep => {
                if (!stack[sp - 1].isUndefined()) {
                    pc = readU32(code, pc + 1);
                } else {
                    sp -= 1;
                    pc += 5;
                }
            },
            .jump_if_nullish_drop => {
                if (stack[sp - 1].isNullish()) {
                    sp -= @as(u32, code[pc + 5]) + 1;
                    stack[sp] = Value.undefined_value;
                    sp += 1;
                    pc = readU32(code, pc + 1);
                } else pc += 6;
            },
            .call, .call_method => {
                const argc: u32 = code[pc + 1];
                const method = op == .call_method;
                const callee = stack[sp - argc - 1];
                const result_slot = sp - argc - 1 - @intFromBool(method);
                if (callee.objectOf(.closure)) |o| {
                    frame.pc = pc + 2;
                    frame.sp = result_slot;
                    const this = if (method) stack[sp - argc - 2] else Value.undefined_value;
                    try vm.pushFrame(o.as(object.Closure), sp - argc, argc, result_slot, false, this);
                    frame = &vm.frames[vm.frame_count - 1];
                    code = frame.function.code;
                    pc = 0;
                    sp = frame.sp;
                    locals = stack + frame.base;
                    continue;
                }
                const this = if (method) stack[sp - argc - 2] else Value.undefined_value;
                const result = try vm.callNative(callee, this, stack[sp - argc .. sp], siteName(vm, frame.function, pc));
                stack[result_slot] = result;
                sp = result_slot + 1;
                pc += 2;
            },
            .call_spread, .call_method_spread => {
                const method = op == .call_method_spread;
                const args = (stack[sp - 1].objectOf(.array) orelse return vm.terminate(.invalid_bytecode)).as(object.Array);
                const callee = stack[sp - 2];
                const result_slot = sp - 2 - @intFromBool(method);
                try vm.charge(meter.elementsCost(args.len));
                if (callee.objectOf(.closure)) |o| {
                    const start = sp - 1;
                    if (@as(usize, start) + args.len > vm.stack.len) return vm.throwStackOverflow();
                    for (args.slice(), 0..) |v, i| stack[start + i] = if (v.eqlBits(Value.hole)) Value.undefined_value else v;
                    frame.pc = pc + 1;
                    frame.sp = result_slot;
                    const this = if (method) stack[sp - 3] else Value.undefined_value;
                    try vm.pushFrame(o.as(object.Closure), start, args.len, result_slot, false, this);
                    frame = &vm.frames[vm.frame_count - 1];
                    code = frame.function.code;
                    pc = 0;
                    sp = frame.sp;
                    locals = stack + frame.base;
                    continue;
                }
                for (args.slice()) |*v| {
                    if (v.eqlBits(Value.hole)) v.* = Value.undefined_value;
                }
                const this = if (method) stack[sp - 3] else Value.undefined_value;
                const result = try vm.callNative(callee, this, args.slice(), siteName(vm, frame.function, pc));
                stack[result_slot] = result;
                sp = result_slot + 1;
                pc += 1;
            },
            .new => {
                const argc: u32 = code[pc + 1];
                const callee = stack[sp - argc - 1];
                if (callee.objectOf(.closure)) |o| {
                    const closure = o.as(object.Closure);
                    if (!closure.function.kind.isConstructor()) return throwNotConstructorAt(vm, callee, frame.function, pc);
                    const this = try vm.constructThis(closure, callee);
                    frame.pc = pc + 2;
                    frame.sp = sp - argc - 1;
                    try vm.pushConstructFrame(closure, sp - argc, argc, sp - argc - 1, false, this, callee);
                    frame = &vm.frames[vm.frame_count - 1];
                    code = frame.function.code;
                    pc = 0;
                    sp = frame.sp;
                    locals = stack + frame.base;
                    continue;
                }
                if (!classes.isConstructor(callee) and !builtins.isHostConstructor(vm, callee)) return throwNotConstructorAt(vm, callee, frame.function, pc);
                stack[sp - argc - 1] = try builtins.construct(vm, callee, stack[sp - argc .. sp]);
                sp -= argc;
                pc += 2;
            },
            .new_spread => {
                const args = (stack[sp - 1].objectOf(.array) orelse return vm.terminate(.invalid_bytecode)).as(object.Array);
                try vm.charge(meter.elementsCost(args.len));
                for (args.slice()) |*v| {
                    if (v.eqlBits(Value.hole)) v.* = Value.undefined_value;
                }
                stack[sp - 2] = try vm.construct(stack[sp - 2], args.slice(), stack[sp - 2]);
                sp -= 1;
                pc += 1;
            },
            .@"return", .return_undefined, .generator_start, .yield, .yield_async => {
                var result = if (op == .@"return" or op == .yield or op == .yield_async) stack[sp - 1] else Value.undefined_value;
                if (op == .generator_start) {
                    frame.sp = sp;
                    const gen = try vm.newGenerator(frame, pc + 1);
                    result = Value.obj(&gen.object);
                    if (frame.function.kind.isAsync()) {
                        // An async function runs to its first await now, and returns its promise.
                        const p = try builtins.promises.newPromise(vm);
                        gen.promise = p;
                        try builtins.promises.resumeAsync(vm, gen, Value.undefined_value, false);
                        result = Value.obj(&p.object);
                    } else if (frame.function.kind.isAsyncGenerator()) {
                        try builtins.async_generators.start(vm, gen);
                    }
                } else if (op == .yield or op == .yield_async) {
                    // Only a frame that next() pushed (an entry frame) can be suspended.
                    const gen = frame.generator orelse return vm.terminate(.invalid_bytecode);
                    if (!frame.entry) return vm.terminate(.invalid_bytecode);
                    frame.sp = sp - 1;
                    vm.saveFrame(gen, frame, pc + 1);
                    gen.state = .suspended_yield;
                    // An async generator's `yield`, not an `await` (async_generators.zig).
                    if (op == .yield_async) {
                        if (gen.async_generator == null) return vm.terminate(.invalid_bytecode);
                        gen.yielded = true;
                    }
                }
                if (frame.construct and !result.is(.object)) result = frame.this;
                vm.handler_count = frame.handler_base;
                vm.frame_count -= 1;
                stack[frame.result] = result;
                if (frame.entry) return result;
                frame = &vm.frames[vm.frame_count - 1];
                code = frame.function.code;
                pc = frame.pc;
                sp = frame.sp + 1;
                locals = stack + frame.base;
            },
            .throw => return vm.throwValue(stack[sp - 1]),
            .catch_guard => {
                if (stack[sp - 1].eqlBits(Value.generator_return)) return vm.throwValue(stack[sp - 1]);
                pc += 1;
            },
            .try_push => {
                vm.handlers[vm.handler_count] = .{ .target = readU32(code, pc + 1), .sp = sp };
                vm.handler_count += 1;
                pc += 5;
            },
            .try_pop => {
                if (vm.handler_count <= frame.handler_base) return vm.terminate(.invalid_bytecode);
                vm.handler_count -= 1;
                pc += 1;
            },
            .iter_start => {
                try iterStart(vm, stack, &sp, frame.function, pc, code[pc + 1]);
                pc += 2;
            },
            .iter_start_protected => {
                try iterStart(vm, stack, &sp, frame.function, pc, code[pc + 5]);
                vm.handlers[vm.handler_count] = .{ .target = readU32(code, pc + 1), .sp = sp };
                vm.handler_count += 1;
                pc += 6;
            },
            .iter_end => {
                if (vm.handler_count <= frame.handler_base) return vm.terminate(.invalid_bytecode);
                vm.handler_count -= 1;
                sp -= 2;
                pc += 1;
            },
            .keys_start => {
                stack[sp - 1] = try ops.forInStart(vm, stack[sp - 1]);
                stack[sp] = Value.number(0);
                sp += 1;
                pc += 1;
            },
            .iter_next => {
                if (try ops.iterNext(vm, &stack[sp - 2], &stack[sp - 1])) |v| {
                    stack[sp] = v;
                    sp += 1;
                    pc += 5;
                } else {
                    pc = readU32(code, pc + 1);
                }
            },
            .iter_value => {
                stack[sp] = (try ops.iterNext(vm, &stack[sp - 2], &stack[sp - 1])) orelse Value.undefined_value;
                sp += 1;
                pc += 1;
            },
            .iter_delegate => {
                frame.sp = sp;
                frame.pc = pc;
                const r = try ops.delegateStep(vm, &stack[sp - 3], &stack[sp - 2], stack[sp - 1]);
                stack[sp - 1] = r.value;
                pc = if (r.done) readU32(code, pc + 1) else pc + 5;
            },
            .iter_delegate_abrupt => {
                frame.sp = sp;
                frame.pc = pc;
                const gen = frame.generator orelse return vm.terminate(.invalid_bytecode);
                const r = try ops.delegateAbrupt(vm, stack[sp - 4], stack[sp - 1], gen);
                sp -= 1;
                stack[sp - 1] = r.value;
                pc = if (r.done) readU32(code, pc + 1) else pc + 5;
            },
            .async_delegate_call => {
                frame.sp = sp;
                frame.pc = pc;
                const gen = frame.generator orelse return vm.terminate(.invalid_bytecode);
                const is_return = stack[sp - 1].eqlBits(Value.generator_return);
                stack[sp] = try builtins.async_generators.delegateCall(vm, stack[sp - 4], stack[sp - 3], stack[sp - 1], gen);
                stack[sp - 1] = Value.number(@floatFromInt(@intFromBool(is_return)));
                sp += 1;
                pc += 1;
            },
            .async_delegate_result => {
                frame.sp = sp;
                frame.pc = pc;
                const gen = frame.generator orelse return vm.terminate(.invalid_bytecode);
                const is_return = stack[sp - 2].eqlBits(Value.number(1));
                const result = stack[sp - 1];
                sp -= 2;
                if (try builtins.async_generators.delegateResult(vm, result, is_return, gen)) |v| {
                    stack[sp - 1] = v;
                    pc += 5;
                } else {
                    stack[sp - 1] = result;
                    pc = readU32(code, pc + 1);
                }
            },
            .iter_close => {
                frame.sp = sp;
                frame.pc = pc;
                try ops.iterClose(vm, stack[sp - 2]);
                pc += 1;
            },
            .async_iter_start => {
                frame.sp = sp;
                frame.pc = pc;
                const it = try builtins.async_generators.iteratorOf(vm, stack[sp - 1], iterationSite(vm, frame.function, pc, code[pc + 1]));
                stack[sp - 1] = it.iterator;
                stack[sp] = it.next;
                sp += 1;
                pc += 2;
            },
            .async_iter_done => {
                frame.sp = sp;
                frame.pc = pc;
                if (try builtins.async_generators.resultValue(vm, stack[sp - 1])) |v| {
                    stack[sp - 1] = v;
                    pc += 5;
                } else {
                    sp -= 1;
                    pc = readU32(code, pc + 1);
                }
            },
            .async_iter_return => {
                frame.sp = sp;
                frame.pc = pc;
                if (try builtins.async_generators.callReturn(vm, stack[sp - 2], stack[sp - 1])) |r| {
                    stack[sp] = r;
                    sp += 1;
                    pc += 5;
                } else {
                    pc = readU32(code, pc + 1);
                }
            },
            .iter_result_check => {
                frame.sp = sp;
                frame.pc = pc;
                try builtins.async_generators.checkResult(vm, stack[sp - 1]);
                sp -= 1;
                pc += 1;
            },
            .throw_after_close => {
                const exception = stack[sp - 1];
                return vm.throwValue(if (exception.eqlBits(Value.generator_return)) stack[sp - 2] else exception);
            },
            .iter_rest => {
                const rest = try vm.newArray(0);
                while (try ops.iterNext(vm, &stack[sp - 2], &stack[sp - 1])) |v| {
                    try vm.charge(meter.elementsCost(1));
                    rest.push(vm.heap, v) catch return vm.outOfMemory();
                }
                stack[sp] = Value.obj(&rest.object);
                sp += 1;
                pc += 1;
            },
            .object_rest => {
                const n = code[pc + 1];
                const rest = try vm.newObject(0);
                try ops.copyProperties(vm, rest, stack[sp - n - 1], stack[sp - n .. sp]);
                sp -= n;
                stack[sp - 1] = Value.obj(rest);
                pc += 2;
            },
            .require_object => {
                const v = stack[sp - 1];
                if (v.isNullish()) return throwNotCoercible(vm, v, frame.function, pc, code);
                pc += 5;
            },
            .set_export => {
                sp -= 1;
                vm.exports[readU16(code, pc + 1)] = stack[sp];
                pc += 3;
            },
            .push_special => {
                stack[sp] = try special(vm, frame, code[pc + 1]);
                sp += 1;
                pc += 2;
            },
            .define_member => {
                const flags: bytecode.MemberFlags = @bitCast(code[pc + 1]);
                try classes.defineMember(vm, stack[sp - 3], stack[sp - 2], stack[sp - 1], flags);
                sp -= 2;
                pc += 2;
            },
            .make_class => {
                const has_heritage = code[pc + 1] == 1;
                const heritage = if (has_heritage) stack[sp - 2] else null;
                const made = try classes.makeClass(vm, stack[sp - 1], heritage);
                if (has_heritage) sp -= 1;
                stack[sp - 1] = made.constructor;
                stack[sp] = made.prototype;
                sp += 1;
                pc += 2;
            },
            .set_fields => {
                try classes.setFields(vm, stack[sp - 3], stack[sp - 2], stack[sp - 1]);
                sp -= 1;
                pc += 1;
            },
            .call_static => {
                try classes.callStatic(vm, stack[sp - 2], stack[sp - 1]);
                sp -= 1;
                pc += 1;
            },
            .init_fields => {
                try classes.initFields(vm, stack[sp - 2], stack[sp - 1]);
                sp -= 2;
                pc += 1;
            },
            .derived_result => {
                stack[sp - 2] = try classes.derivedResult(vm, stack[sp - 2], stack[sp - 1]);
                sp -= 1;
                pc += 1;
            },
            .throw_if_initialized => {
                if (!stack[sp - 1].eqlBits(Value.uninitialized) and !stack[sp - 1].isUndefined()) {
                    return vm.throwMessage(.reference_error, "Super constructor may only be called once");
                }
                sp -= 1;
                pc += 1;
            },
            .super_call, .super_call_spread => {
                const spread = op == .super_call_spread;
                const argc: u32 = if (spread) 1 else code[pc + 1];
                const base = sp - argc - 2;
                const args: []const Value = if (spread) blk: {
                    const a = (stack[sp - 1].objectOf(.array) orelse return vm.terminate(.invalid_bytecode)).as(object.Array);
                    try vm.charge(meter.elementsCost(a.len));
                    for (a.slice()) |*v| {
                        if (v.eqlBits(Value.hole)) v.* = Value.undefined_value;
                    }
                    break :blk a.slice();
                } else stack[sp - argc .. sp];
                stack[base] = try classes.superConstruct(vm, stack[base], stack[base + 1], args);
                sp = base + 1;
                pc += if (spread) @as(u32, 1) else 2;
            },
            .new_private_name => {
                const name = vm.constantString(readU16(code, pc + 1));
                stack[sp] = Value.string(try classes.newPrivateName(vm, name));
                sp += 1;
                pc += 3;
            },
            .template_object => {
                const strings = try literalArray(vm, stack[sp - 2]);
                const raw = try literalArray(vm, stack[sp - 1]);
                raw.object.frozen = true;
                const hidden_constant: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true, .not_configurable = true };
                // Made once per site by the top level, so the key's string costs nothing per call.
                const key = string.fromLatin1(vm.heap, "raw") catch return vm.outOfMemory();
                strings.object.properties.define(vm.heap, key, stack[sp - 1], hidden_constant) catch return vm.outOfMemory();
                strings.object.frozen = true;
                sp -= 1;
                pc += 1;
            },
            .super_get => {
                stack[sp - 3] = try classes.superGet(vm, stack[sp - 3], stack[sp - 2], stack[sp - 1]);
                sp -= 2;
                pc += 1;
            },
        }
    }
}

/// require_object's error: V8's words for destructuring null or undefined.
fn throwNotCoercible(vm: *Vm, v: Value, f: *const Program.Function, pc: u32, code: []const u8) Error {
    const what = if (v.isNull()) "null" else "undefined";
    const name_index = readU16(code, pc + 1);
    const wording = std.enums.fromInt(bytecode.RequireWording, readU16(code, pc + 3)) orelse .destructure;
    if (wording == .read) return vm.throwFmt(.type_error, "Cannot read properties of {s}", .{what});
    const site = siteName(vm, f, pc);
    const shown: ops.SiteText = .{ .vm = vm, .v = v, .text = site };
    if (name_index == Program.no_name) {
        return vm.throwFmt(.type_error, "Cannot destructure '{f}' as it is {s}.", .{ shown, what });
    }
    return vm.throwFmt(.type_error, "Cannot destructure property '{f}' of '{f}' as it is {s}.", .{
        ops.StringFormat{ .s = vm.constantString(name_index) }, shown, what,
    });
}

/// Charges the budget for a backward jump over `bytes` of code.
inline fn tick(vm: *Vm, bytes: u32) Error!void {
    return vm.charge(@as(u64, bytes) + 1);
}

fn cellAt(vm: *Vm, v: Value) Error!*Cell {
    if (!v.is(.cell)) return vm.terminate(.invalid_bytecode);
    return v.asCell();
}

fn literalObject(vm: *Vm, v: Value) Error!*object.Object {
    if (!v.is(.object)) return vm.terminate(.invalid_bytecode);
    const o = v.asObject();
    if (o.kind != .plain) return vm.terminate(.invalid_bytecode);
    return o;
}

fn literalArray(vm: *Vm, v: Value) Error!*object.Array {
    const o = v.objectOf(.array) orelse return vm.terminate(.invalid_bytecode);
    return o.as(object.Array);
}

fn throwNotConstructorAt(vm: *Vm, callee: Value, f: *const Program.Function, pc: u32) Error {
    const site = siteName(vm, f, pc) orelse return vm.throwNotConstructor(callee);
    return vm.throwFmt(.type_error, "{f} is not a constructor", .{ops.StringFormat{ .s = site }});
}

/// The frame's special value (scope.Special's order: this, new.target, home, callee).
fn special(vm: *Vm, frame: *const Vm.Frame, which: u8) Error!Value {
    return switch (which) {
        0 => frame.this,
        1 => frame.new_target,
        2 => if (frame.closure) |c| (if (c.home) |h| Value.obj(h) else Value.undefined_value) else Value.undefined_value,
        3 => if (frame.closure) |c| Value.obj(&c.object) else Value.undefined_value,
        4 => builtins.arguments.make(vm, frame),
        else => vm.terminate(.invalid_bytecode),
    };
}

fn throwUninitialized(vm: *Vm, name: u16) Error {
    if (vm.constantString(name).eqlLatin1("this")) {
        return vm.throwMessage(.reference_error, "Must call super constructor in derived class before accessing 'this' or returning from derived constructor");
    }
    return vm.throwFmt(.reference_error, "Cannot access '{f}' before initialization", .{ops.StringFormat{ .s = vm.constantString(name) }});
}

/// iterable -> state state (the iterable, or its protocol iterator, and a cursor).
inline fn iterStart(vm: *Vm, stack: [*]Value, sp: *u32, f: *const Program.Function, pc: u32, mode: u8) Error!void {
    stack[sp.* - 1] = try ops.iterStart(vm, stack[sp.* - 1], iterationSite(vm, f, pc, mode));
    stack[sp.*] = Value.number(0);
    sp.* += 1;
}

fn iterationSite(vm: *Vm, f: *const Program.Function, pc: u32, mode: u8) ops.IterationSite {
    const m = std.enums.fromInt(bytecode.IterationMode, mode) orelse return .{};
    return .{ .mode = m, .text = siteName(vm, f, pc) };
}

fn siteName(vm: *Vm, f: *const Program.Function, pc: u32) ?*string.String {
    const index = f.siteNameAt(pc) orelse return null;
    return vm.constantString(index);
}
