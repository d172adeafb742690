//! console.log (and info, debug) to the engine's output, console.error and warn to its error
//! output: one line per call, formatted as node formats it (inspect.zig).
//!
//! `%j` runs JSON.stringify, which may call user code (toJSON), so its arguments are
//! stringified first, in the heap; the rest of the formatting runs no user code and uses the
//! heap's free space as scratch, so a line costs nothing once it is written.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const inspect = @import("inspect.zig");
const builtins = @import("../builtins.zig");

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
    const args = try stringifyDirectives(vm, args_in[0..@min(args_in.len, arguments_max)], &buffer);
    const heap = vm.heap;
    const free = heap.region[heap.low..heap.high];
    var scratch = std.heap.FixedBufferAllocator.init(free);
    var in = inspect.init(vm, scratch.allocator());
    var line: std.ArrayList(u8) = .empty;
    inspect.formatArgs(&in, &line, args) catch return vm.outOfMemory();
    line.append(scratch.allocator(), '\n') catch return vm.outOfMemory();
    out.writeAll(line.items) catch {}; // A closed stdout does not stop the script, as in node.
}

/// Replaces the arguments of `%j` directives by their JSON text.
fn stringifyDirectives(vm: *Vm, args: []const Value, buffer: []Value) Error![]const Value {
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
            's', 'd', 'i', 'f', 'o', 'O', 'c' => a += 1,
            'j' => {
                a += 1;
                if (!copied) {
                    @memcpy(buffer[0..args.len], args);
                    copied = true;
                }
                buffer[a] = try builtins.json.stringifyValue(vm, args[a]);
            },
            else => {},
        }
    }
    return if (copied) buffer[0..args.len] else args;
}
