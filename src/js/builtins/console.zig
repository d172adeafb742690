//! console.log (and info, debug) to the engine's output, console.error and warn to its error
//! output: one line per call, formatted as node formats it (inspect.zig).
//!
//! `%j` runs JSON.stringify and `%d`, `%i` and `%f` convert to numbers (Number, parseInt and
//! parseFloat, as node's util.format does), which may call user code (toJSON, toString), so
//! those arguments are converted first, in the heap; the rest of the formatting runs no user code and uses the
//! heap's free space as scratch, so a line costs nothing once it is written.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const inspect = @import("inspect.zig");
const builtins = @import("../builtins.zig");
const ops = @import("../operations.zig");
const globals = @import("globals.zig");
const names = @import("../names.zig");
const meter = @import("../meter.zig");

/// Arguments beyond this are ignored (a call site has at most 255 anyway, spreads aside).
const arguments_max = 256;

pub fn log(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try writeLine(vm, vm.out, args);
    return Value.undefined_value;
}

pub fn logError(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try writeLine(vm, vm.err_out, args);
    return Value.undefined_value;
}

fn writeLine(vm: *Vm, out: *std.Io.Writer, args_in: []const Value) Error!void {
    var buffer: [arguments_max]Value = undefined;
    const args = try convertDirectives(vm, args_in[0..@min(args_in.len, arguments_max)], &buffer);
    const heap = vm.heap;
    const free = heap.region[heap.low..heap.high];
    var scratch = std.heap.FixedBufferAllocator.init(free);
    var in = inspect.init(vm, scratch.allocator());
    var line: std.ArrayList(u8) = .empty;
    const formatted = inspect.formatArgs(&in, &line, args);
    // The formatting uses the heap's free space as scratch, so it can be repeated without end:
    // it is paid for by what it wrote (at most that free space) and what it allocated there,
    // finished or not.
    try vm.charge(meter.unitsCost(line.items.len) + meter.bytesCost(scratch.end_index));
    formatted catch |err| switch (err) {
        error.OutOfMemory => return vm.outOfMemory(),
        error.Stopped => return error.Terminate,
    };
    line.append(scratch.allocator(), '\n') catch return vm.outOfMemory();
    out.writeAll(line.items) catch {}; // A closed stdout does not stop the script, as in node.
}

/// Replaces the arguments of `%j` directives by their JSON text, and those of `%d`, `%i` and
/// `%f` by the numbers node shows for them.
fn convertDirectives(vm: *Vm, args: []const Value, buffer: []Value) Error![]const Value {
    if (args.len < 2 or !args[0].isString()) return args;
    const first = args[0].asString();
    var a: usize = 0;
    var copied = false;
    var i: usize = 0;
    while (i + 1 < first.len) : (i += 1) {
        if (first.at(i) != '%') continue;
        i += 1;
        if (a + 1 == args.len) break;
        switch (first.at(i)) {
            'o', 'O', 'c' => a += 1,
            's' => {
                a += 1;
                // node's `%s` shows String(v) for functions and for objects with a toString
                // of their own, and inspects the other objects.
                const v = args[a];
                if (!ops.isCallable(v) and !hasOwnToString(v)) continue;
                if (!copied) {
                    @memcpy(buffer[0..args.len], args);
                    copied = true;
                }
                buffer[a] = Value.string(try ops.toString(vm, v));
            },
            'j', 'd', 'i', 'f' => |directive| {
                a += 1;
                if (!copied) {
                    @memcpy(buffer[0..args.len], args);
                    copied = true;
                }
                const v = args[a];
                buffer[a] = switch (directive) {
                    'j' => try builtins.json.stringifyValue(vm, v),
                    'd' => Value.number(try ops.toNumber(vm, v)),
                    'i' => try globals.parseInt(vm, Value.undefined_value, &.{v}),
                    'f' => try globals.parseFloat(vm, Value.undefined_value, &.{v}),
                    else => unreachable,
                };
            },
            else => {},
        }
    }
    return if (copied) buffer[0..args.len] else args;
}

fn hasOwnToString(v: Value) bool {
    if (!v.is(.object)) return false;
    const method = v.asObject().properties.get(names.string("toString")) orelse return false;
    return ops.isCallable(method);
}
