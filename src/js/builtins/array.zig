//! Array.prototype, Array.isArray/from/of and the Array constructor.
//!
//! Methods that call back into the script (map, forEach, sort...) re-read the array after
//! every call, since the callback may grow or shrink it; the visiting rules are the spec's
//! (length fixed at the start, holes skipped where the spec skips them).
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const Array = object.Array;
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const objects = @import("objects.zig");
const array_like = @import("array_like.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

fn thisArray(vm: *Vm, this: Value, comptime method: []const u8) Error!*Array {
    if (this.objectOf(.array)) |o| return o.as(Array);
    if (this.isNullish()) return throwNullishThis(vm, method);
    return vm.throwMessage(.type_error, "Array.prototype." ++ method ++ " called on a value that is not an array");
}

/// ToObject(this) of null or undefined, as V8 words it.
pub fn throwNullishThis(vm: *Vm, comptime method: []const u8) Error {
    // V8's Torque builtins name themselves; the others fail in ToObject.
    const named = comptime for ([_][]const u8{ "concat", "every", "filter", "find", "findIndex", "findLast", "findLastIndex", "forEach", "indexOf", "map", "reduce", "reduceRight", "some" }) |m| {
        if (std.mem.eql(u8, m, method)) break true;
    } else false;
    if (!named) return vm.throwMessage(.type_error, "Cannot convert undefined or null to object");
    return vm.throwMessage(.type_error, "Array.prototype." ++ method ++ " called on null or undefined");
}

pub fn requireCallable(vm: *Vm, f: Value) Error!void {
    if (!ops.isCallable(f)) return vm.throwFmt(.type_error, "{f} is not a function", .{ops.ValueText{ .vm = vm, .v = f }});
}

fn checkExtensible(vm: *Vm, a: *Array) Error!void {
    try ops.checkModuleWrite(vm, a);
    if (a.object.frozen) return vm.throwFmt(.type_error, "Cannot add property {d}, object is not extensible", .{a.len});
}

/// A frozen array's length cannot be set, even to what it is: push(), pop() and shift() of
/// an empty one, unshift() and splice(i, 0) set it last and throw this.
fn throwLengthReadOnly(vm: *Vm) Error {
    return vm.throwMessage(.type_error, "Cannot assign to read only property 'length' of object '[object Array]'");
}

fn checkWritable(vm: *Vm, a: *Array) Error!void {
    try ops.checkModuleWrite(vm, a);
    if (a.object.frozen) return vm.throwFmt(.type_error, "Cannot assign to read only property '0' of object '[object Array]'", .{});
}

fn element(a: *const Array, i: usize) Value {
    if (i >= a.len) return Value.undefined_value;
    const v = a.items[i];
    return if (v.eqlBits(Value.hole)) Value.undefined_value else v;
}

fn present(a: *const Array, i: usize) bool {
    return i < a.len and !a.items[i].eqlBits(Value.hole);
}

fn index(i: usize) Value {
    return Value.number(@floatFromInt(i));
}

/// A relative index argument (negative from the end), clamped to [0, len].
pub fn relative(vm: *Vm, v: Value, len: usize, default: usize) Error!usize {
    if (v.isUndefined()) return default;
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, v));
    const l: f64 = @floatFromInt(len);
    if (x < 0) return @intFromFloat(@max(l + x, 0));
    return @intFromFloat(@min(x, l));
}

pub fn at(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.at(vm, this, args)).as(Array);
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, arg(args, 0)));
    const l: f64 = @floatFromInt(a.len);
    const k = if (x < 0) l + x else x;
    if (k < 0 or k >= l) return Value.undefined_value;
    return element(a, @intFromFloat(k));
}

pub fn push(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.push(vm, this, args)).as(Array);
    if (args.len == 0 and a.object.frozen) return throwLengthReadOnly(vm);
    try checkExtensible(vm, a);
    if (@as(usize, a.len) + args.len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    try vm.charge(meter.elementsCost(args.len));
    a.reserve(vm.heap, @as(usize, a.len) + args.len) catch return vm.outOfMemory();
    for (args) |v| {
        a.items[a.len] = v;
        a.len += 1;
    }
    return index(a.len);
}

pub fn pop(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.pop(vm, this, args)).as(Array);
    if (a.len == 0) return if (a.object.frozen) throwLengthReadOnly(vm) else Value.undefined_value;
    try ops.checkModuleWrite(vm, a);
    if (a.object.frozen) return vm.throwFmt(.type_error, "Cannot delete property '{d}' of [object Array]", .{a.len - 1});
    a.len -= 1;
    const v = a.items[a.len];
    return if (v.eqlBits(Value.hole)) Value.undefined_value else v;
}

pub fn shift(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.shift(vm, this, args)).as(Array);
    if (a.len == 0) return if (a.object.frozen) throwLengthReadOnly(vm) else Value.undefined_value;
    // The elements move down one, then the last is deleted.
    if (a.len == 1 and a.object.frozen) return vm.throwMessage(.type_error, "Cannot delete property '0' of [object Array]");
    try checkWritable(vm, a);
    // Every element moves down one.
    try vm.charge(meter.bytesCost(@as(usize, a.len) * @sizeOf(Value)));
    const first = element(a, 0);
    std.mem.copyForwards(Value, a.items[0 .. a.len - 1], a.items[1..a.len]);
    a.len -= 1;
    return first;
}

pub fn unshift(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.unshift(vm, this, args)).as(Array);
    if (a.object.frozen) {
        if (args.len == 0) return throwLengthReadOnly(vm);
        // The last element moves up first, to an index past the end.
        const to = if (a.len == 0) 0 else a.len - 1 + args.len;
        return vm.throwFmt(.type_error, "Cannot add property {d}, object is not extensible", .{to});
    }
    if (args.len == 0) return index(a.len);
    try checkExtensible(vm, a);
    const new_len = @as(usize, a.len) + args.len;
    if (new_len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    try vm.charge(meter.bytesCost(new_len * @sizeOf(Value)));
    a.reserve(vm.heap, new_len) catch return vm.outOfMemory();
    std.mem.copyBackwards(Value, a.items[args.len..new_len], a.items[0..a.len]);
    @memcpy(a.items[0..args.len], args);
    a.len = @intCast(new_len);
    return index(a.len);
}

/// A callback's call: `this` is the method's thisArg (its second argument).
fn callback3(vm: *Vm, f: Value, this_arg: Value, v: Value, i: usize, a: *Array) Error!Value {
    return vm.call(f, this_arg, &.{ v, index(i), Value.obj(&a.object) });
}

pub fn forEach(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.forEach(vm, this, args)).as(Array);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const len = a.len;
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        if (present(a, i)) _ = try callback3(vm, f, arg(args, 1), a.items[i], i, a);
    }
    return Value.undefined_value;
}

pub fn map(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.map(vm, this, args)).as(Array);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const len = a.len;
    const result = try vm.newArray(len);
    result.len = len;
    @memset(result.items[0..len], Value.hole);
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        if (present(a, i)) result.items[i] = try callback3(vm, f, arg(args, 1), a.items[i], i, a);
    }
    return Value.obj(&result.object);
}

pub fn filter(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.filter(vm, this, args)).as(Array);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const result = try vm.newArray(0);
    const len = a.len;
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        if (!present(a, i)) continue;
        const v = a.items[i];
        if (ops.toBoolean(try callback3(vm, f, arg(args, 1), v, i, a))) result.push(vm.heap, v) catch return vm.outOfMemory();
    }
    return Value.obj(&result.object);
}

fn reduceImpl(vm: *Vm, a: *Array, args: []const Value, reverse_order: bool) Error!Value {
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const len = a.len;
    var k: usize = 0;
    var accumulator: Value = undefined;
    const at_position = struct {
        fn at(l: usize, step: usize, rev: bool) usize {
            return if (rev) l - 1 - step else step;
        }
    }.at;
    if (args.len >= 2) {
        accumulator = args[1];
    } else {
        while (k < len and !present(a, at_position(len, k, reverse_order))) k += 1;
        try vm.charge(meter.elementsCost(k));
        if (k >= len) return vm.throwMessage(.type_error, "Reduce of empty array with no initial value");
        accumulator = a.items[at_position(len, k, reverse_order)];
        k += 1;
    }
    while (k < len) : (k += 1) {
        try vm.charge(meter.elementsCost(1));
        const i = at_position(len, k, reverse_order);
        if (!present(a, i)) continue;
        accumulator = try vm.call(f, Value.undefined_value, &.{ accumulator, a.items[i], index(i), Value.obj(&a.object) });
    }
    return accumulator;
}

pub fn reduce(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = this.objectOf(.array) orelse return array_like.reduce(vm, this, args);
    return reduceImpl(vm, a.as(Array), args, false);
}

pub fn reduceRight(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = this.objectOf(.array) orelse return array_like.reduceRight(vm, this, args);
    return reduceImpl(vm, a.as(Array), args, true);
}

const FindResult = enum { value, index };

fn findImpl(vm: *Vm, a: *Array, args: []const Value, result: FindResult, from_end: bool) Error!Value {
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const len = a.len;
    for (0..len) |step| {
        try vm.charge(meter.elementsCost(1));
        const i = if (from_end) len - 1 - step else step;
        const v = element(a, i);
        if (ops.toBoolean(try callback3(vm, f, arg(args, 1), v, i, a))) return if (result == .value) v else index(i);
    }
    return if (result == .value) Value.undefined_value else Value.number(-1);
}

pub fn find(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = this.objectOf(.array) orelse return array_like.find(vm, this, args);
    return findImpl(vm, a.as(Array), args, .value, false);
}

pub fn findIndex(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = this.objectOf(.array) orelse return array_like.findIndex(vm, this, args);
    return findImpl(vm, a.as(Array), args, .index, false);
}

pub fn findLast(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = this.objectOf(.array) orelse return array_like.findLast(vm, this, args);
    return findImpl(vm, a.as(Array), args, .value, true);
}

pub fn findLastIndex(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = this.objectOf(.array) orelse return array_like.findLastIndex(vm, this, args);
    return findImpl(vm, a.as(Array), args, .index, true);
}

pub fn some(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.some(vm, this, args)).as(Array);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const len = a.len;
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        if (present(a, i) and ops.toBoolean(try callback3(vm, f, arg(args, 1), a.items[i], i, a))) return Value.true_value;
    }
    return Value.false_value;
}

pub fn every(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.every(vm, this, args)).as(Array);
    const f = arg(args, 0);
    try requireCallable(vm, f);
    const len = a.len;
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        if (present(a, i) and !ops.toBoolean(try callback3(vm, f, arg(args, 1), a.items[i], i, a))) return Value.false_value;
    }
    return Value.true_value;
}

pub fn includes(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.includes(vm, this, args)).as(Array);
    // An empty array answers before its fromIndex is converted (no valueOf runs).
    if (a.len == 0) return Value.false_value;
    const target = arg(args, 0);
    const start = try relative(vm, arg(args, 1), a.len, 0);
    for (start..a.len) |i| {
        if ((i - start) % scan_chunk == 0) try vm.charge(meter.elementsCost(2 * scan_chunk));
        if (object.sameValueZero(element(a, i), target)) return Value.true_value;
    }
    return Value.false_value;
}

pub fn indexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.indexOf(vm, this, args)).as(Array);
    // As includes: an empty array answers before its fromIndex is converted.
    if (a.len == 0) return Value.number(-1);
    const target = arg(args, 0);
    const start = try relative(vm, arg(args, 1), a.len, 0);
    for (start..a.len) |i| {
        if ((i - start) % scan_chunk == 0) try vm.charge(meter.elementsCost(2 * scan_chunk));
        if (present(a, i) and ops.strictEquals(a.items[i], target)) return index(i);
    }
    return Value.number(-1);
}

pub fn lastIndexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.lastIndexOf(vm, this, args)).as(Array);
    if (a.len == 0) return Value.number(-1);
    const target = arg(args, 0);
    var last: i64 = @as(i64, a.len) - 1;
    if (args.len >= 2) {
        const x = number.toIntegerOrInfinity(try ops.toNumber(vm, args[1]));
        const l: f64 = @floatFromInt(a.len);
        const k = if (x < 0) l + x else @min(x, l - 1);
        if (k < 0) return Value.number(-1);
        last = @intFromFloat(k);
    }
    var i = last;
    while (i >= 0) : (i -= 1) {
        if (@rem(last - i, scan_chunk) == 0) try vm.charge(meter.elementsCost(2 * scan_chunk));
        const u: usize = @intCast(i);
        if (present(a, u) and ops.strictEquals(a.items[u], target)) return index(u);
    }
    return Value.number(-1);
}

/// Elements a scan (includes, indexOf, lastIndexOf) pays for at a time, before looking at them.
const scan_chunk = 64;

/// Arrays being joined right now (per thread, since each worker runs its own engine), so
/// that a cycle joins as "" (as in V8) instead of recursing without end.
threadlocal var join_depth: usize = 0;
threadlocal var join_stack: [64]*const Array = undefined;

pub fn join(vm: *Vm, a: *Array, separator: *String) Error!*String {
    for (join_stack[0..join_depth]) |entry| {
        if (entry == a) return string.empty;
    }
    if (join_depth == join_stack.len) return vm.throwStackOverflow();
    try vm.checkNativeStack();
    join_stack[join_depth] = a;
    join_depth += 1;
    defer join_depth -= 1;
    if (a.len == 0) return string.empty;
    // The parts first (they may run user code), then one allocation.
    try vm.charge(meter.elementsCost(2 * @as(usize, a.len)));
    const parts = vm.heap.alloc(*String, a.len) catch return vm.outOfMemory();
    var total: usize = 0;
    var wide = separator.flags.wide;
    const len = a.len;
    for (parts, 0..) |*part, i| {
        const v = element(a, i);
        part.* = if (v.isNullish()) string.empty else try ops.toString(vm, v);
        total += part.*.len;
        if (part.*.flags.wide) wide = true;
    }
    total += @as(usize, separator.len) * (len - 1);
    if (total > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    try vm.charge(meter.elementsCost(len) + meter.bytesCost(if (wide) total * 2 else total));
    var b = string.Builder.init(vm.heap, total, wide) catch return vm.outOfMemory();
    for (parts, 0..) |part, i| {
        if (i > 0) b.appendString(separator);
        b.appendString(part);
    }
    return b.finish() catch vm.outOfMemory();
}

pub fn joinMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.join(vm, this, args)).as(Array);
    const sep = arg(args, 0);
    const separator = if (sep.isUndefined()) names.string(",") else try ops.toString(vm, sep);
    return Value.string(try join(vm, a, separator));
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.toString(vm, this, args)).as(Array);
    return Value.string(try join(vm, a, names.string(",")));
}

pub fn slice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.slice(vm, this, args)).as(Array);
    const start = try relative(vm, arg(args, 0), a.len, 0);
    const end = try relative(vm, arg(args, 1), a.len, a.len);
    const count = if (end > start) end - start else 0;
    try vm.charge(meter.bytesCost(count * @sizeOf(Value)));
    const result = try vm.newArray(count);
    if (count > 0) @memcpy(result.items[0..count], a.items[start..end]);
    result.len = @intCast(count);
    return Value.obj(&result.object);
}

/// splice on a frozen array throws at its first write, as the spec orders them: the tail
/// moving (down from its start, or up from its end), the items, then the length.
fn spliceFrozen(vm: *Vm, len: usize, start: usize, delete_count: usize, item_count: usize) Error {
    const tail = len - start - delete_count;
    if (item_count < delete_count) {
        if (tail > 0) return vm.throwFmt(.type_error, "Cannot assign to read only property '{d}' of object '[object Array]'", .{start + item_count});
        return vm.throwFmt(.type_error, "Cannot delete property '{d}' of [object Array]", .{len - 1});
    }
    if (item_count > delete_count and tail > 0) {
        return vm.throwFmt(.type_error, "Cannot add property {d}, object is not extensible", .{len - 1 + item_count - delete_count});
    }
    if (item_count > 0) {
        if (start < len) return vm.throwFmt(.type_error, "Cannot assign to read only property '{d}' of object '[object Array]'", .{start});
        return vm.throwFmt(.type_error, "Cannot add property {d}, object is not extensible", .{start});
    }
    return throwLengthReadOnly(vm);
}

pub fn splice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.splice(vm, this, args)).as(Array);
    const start = try relative(vm, arg(args, 0), a.len, 0);
    var delete_count: usize = 0;
    if (args.len == 1) {
        delete_count = a.len - start;
    } else if (args.len >= 2) {
        const x = number.toIntegerOrInfinity(try ops.toNumber(vm, args[1]));
        delete_count = @intFromFloat(@min(@max(x, 0), @as(f64, @floatFromInt(a.len - start))));
    }
    const items = if (args.len > 2) args[2..] else &[_]Value{};
    if (delete_count > 0 or items.len > 0) try ops.checkModuleWrite(vm, a);
    if (a.object.frozen) return spliceFrozen(vm, a.len, start, delete_count, items.len);
    // The removed elements are copied out, the tail moves, the items are copied in.
    try vm.charge(meter.bytesCost((@as(usize, a.len) + items.len) * @sizeOf(Value)));
    const removed = try vm.newArray(delete_count);
    @memcpy(removed.items[0..delete_count], a.items[start .. start + delete_count]);
    removed.len = @intCast(delete_count);
    const new_len = a.len - delete_count + items.len;
    if (new_len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    a.reserve(vm.heap, new_len) catch return vm.outOfMemory();
    const tail_from = start + delete_count;
    const tail_to = start + items.len;
    if (tail_to > tail_from) {
        std.mem.copyBackwards(Value, a.items[tail_to .. tail_to + (a.len - tail_from)], a.items[tail_from..a.len]);
    } else if (tail_to < tail_from) {
        std.mem.copyForwards(Value, a.items[tail_to .. tail_to + (a.len - tail_from)], a.items[tail_from..a.len]);
    }
    @memcpy(a.items[start .. start + items.len], items);
    a.len = @intCast(new_len);
    return Value.obj(&removed.object);
}

pub fn concat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.concat(vm, this, args)).as(Array);
    var total: usize = a.len;
    for (args) |v| total += if (v.objectOf(.array)) |o| o.as(Array).len else 1;
    try vm.charge(meter.elementsCost(args.len) + meter.bytesCost(total * @sizeOf(Value)));
    const result = try vm.newArray(a.len);
    @memcpy(result.items[0..a.len], a.items[0..a.len]);
    result.len = a.len;
    for (args) |v| {
        if (v.objectOf(.array)) |o| {
            const other = o.as(Array);
            result.reserve(vm.heap, @as(usize, result.len) + other.len) catch return vm.outOfMemory();
            @memcpy(result.items[result.len..][0..other.len], other.items[0..other.len]);
            result.len += other.len;
        } else {
            result.push(vm.heap, v) catch return vm.outOfMemory();
        }
    }
    return Value.obj(&result.object);
}

pub fn reverse(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.reverse(vm, this, args)).as(Array);
    if (a.len > 1) try checkWritable(vm, a);
    try vm.charge(meter.elementsCost(a.len));
    std.mem.reverse(Value, a.items[0..a.len]);
    return this;
}

pub fn toReversed(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.toReversed(vm, this, args)).as(Array);
    try vm.charge(meter.elementsCost(a.len));
    const result = try vm.newArray(a.len);
    for (0..a.len) |i| result.items[i] = element(a, a.len - 1 - i);
    result.len = a.len;
    return Value.obj(&result.object);
}

pub fn fill(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.fill(vm, this, args)).as(Array);
    const start = try relative(vm, arg(args, 1), a.len, 0);
    const end = try relative(vm, arg(args, 2), a.len, a.len);
    if (end > start) {
        try checkWritable(vm, a);
        try vm.charge(meter.bytesCost((end - start) * @sizeOf(Value)));
        @memset(a.items[start..end], arg(args, 0));
    }
    return this;
}

pub fn with(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.with(vm, this, args)).as(Array);
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, arg(args, 0)));
    const l: f64 = @floatFromInt(a.len);
    const k = if (x < 0) l + x else x;
    if (k < 0 or k >= l) {
        // V8 shows the argument as given (NoSideEffectsToString), not the integer.
        return vm.throwFmt(.range_error, "Invalid index : {f}", .{ops.ValueText{ .vm = vm, .v = arg(args, 0) }});
    }
    try vm.charge(meter.elementsCost(a.len));
    const result = try vm.newArray(a.len);
    for (0..a.len) |i| result.items[i] = element(a, i);
    result.len = a.len;
    result.items[@intFromFloat(k)] = arg(args, 1);
    return Value.obj(&result.object);
}

fn flattenInto(vm: *Vm, result: *Array, a: *Array, depth: f64, nesting: u32) Error!void {
    if (nesting > 1000) return vm.throwStackOverflow();
    try vm.checkNativeStack();
    try vm.charge(meter.elementsCost(a.len));
    for (0..a.len) |i| {
        if (!present(a, i)) continue;
        const v = a.items[i];
        if (depth >= 1) {
            if (v.objectOf(.array)) |o| {
                try flattenInto(vm, result, o.as(Array), depth - 1, nesting + 1);
                continue;
            }
        }
        result.push(vm.heap, v) catch return vm.outOfMemory();
    }
}

pub fn flat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.flat(vm, this, args)).as(Array);
    const d = arg(args, 0);
    const depth = if (d.isUndefined()) 1 else number.toIntegerOrInfinity(try ops.toNumber(vm, d));
    const result = try vm.newArray(a.len);
    try flattenInto(vm, result, a, depth, 0);
    return Value.obj(&result.object);
}

/// One of flatMap's results: an array's elements, or the value itself.
pub fn flattenOne(vm: *Vm, result: *Array, v: Value) Error!void {
    if (v.objectOf(.array)) |o| return flattenInto(vm, result, o.as(Array), 0, 0);
    result.push(vm.heap, v) catch return vm.outOfMemory();
}

pub fn flatMap(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.flatMap(vm, this, args)).as(Array);
    const f = arg(args, 0);
    if (!ops.isCallable(f)) return vm.throwMessage(.type_error, "flatMap mapper function is not callable");
    const result = try vm.newArray(a.len);
    const len = a.len;
    for (0..len) |i| {
        try vm.charge(meter.elementsCost(1));
        if (!present(a, i)) continue;
        try flattenOne(vm, result, try callback3(vm, f, arg(args, 1), a.items[i], i, a));
    }
    return Value.obj(&result.object);
}

/// An array iterator over an array, or over any other object as an array-like (an arguments
/// object, `{ length: 2, 0: "a" }`): that one reads `length` and each index through Get at
/// every step (collections.iteratorStep), as %ArrayIteratorPrototype%.next does.
fn iterator(vm: *Vm, this: Value, kind: object.IteratorKind, comptime method: []const u8) Error!Value {
    const source = if (this.is(.object)) this else Value.obj(&(try thisArray(vm, this, method)).object);
    const it = vm.heap.create(object.Iterator) catch return vm.outOfMemory();
    it.* = .{ .object = .{ .kind = .iterator }, .source = source, .iterator_kind = kind };
    return Value.obj(&it.object);
}

pub fn keys(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return iterator(vm, this, .array_keys, "keys");
}

pub fn values(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return iterator(vm, this, .array_values, "values");
}

pub fn entries(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return iterator(vm, this, .array_entries, "entries");
}

// ---------------------------------------------------------------------------------------
// Sorting: V8's TimSort (its array-sort.tq, a port of CPython's listsort), step for step,
// so that a comparator that is inconsistent (one that meets NaN, say) or that has effects
// is called with the same pairs in the same order, and leaves the same result, as in node.
// Undefined values go last, then holes, as the spec says; the work array holds indices
// into the values, and the comparator never sees it.

const Sorter = struct {
    vm: *Vm,
    comparator: Value,
    values: []const Value,
    /// With no comparator: each value's string, computed once.
    strings: ?[]*String,
    work: []u32,
    temp: []u32,
    min_gallop: usize = min_gallop_wins,
    run_base: [run_stack_max]usize = undefined,
    run_len: [run_stack_max]usize = undefined,
    runs: usize = 0,

    const min_gallop_wins = 7;
    /// A comparison's own cost, beyond the comparator's or the strings'.
    const compare_ticks = 16;
    /// Enough pending runs for any length below 2^64 (run lengths grow like Fibonacci).
    const run_stack_max = 96;

    /// The comparator's verdict: below zero when x goes before y (NaN counts as zero).
    fn compare(s: *Sorter, x: u32, y: u32) Error!f64 {
        // Paid for one comparison at a time, so a sort of any length can be stopped inside;
        // comparing strings pays for the units compared too (String.order).
        try s.vm.charge(compare_ticks);
        if (s.strings) |strings| return switch (strings[x].order(strings[y])) {
            .lt => -1,
            .eq => 0,
            .gt => 1,
        };
        const result = try s.vm.call(s.comparator, Value.undefined_value, &.{ s.values[x], s.values[y] });
        const v = try ops.toNumber(s.vm, result);
        return if (std.math.isNan(v)) 0 else v;
    }

    fn sort(s: *Sorter) Error!void {
        const n = s.work.len;
        if (n < 2) return;
        var remaining = n;
        var low: usize = 0;
        const min_run = minRunLength(n);
        while (remaining != 0) {
            var run = try s.countAndMakeRun(low, low + remaining);
            if (run < min_run) {
                const forced = @min(min_run, remaining);
                try s.binaryInsertionSort(low, low + run, low + forced);
                run = forced;
            }
            s.run_base[s.runs] = low;
            s.run_len[s.runs] = run;
            s.runs += 1;
            try s.mergeCollapse();
            low += run;
            remaining -= run;
        }
        while (s.runs > 1) {
            var i = s.runs - 2;
            if (i > 0 and s.run_len[i - 1] < s.run_len[i + 1]) i -= 1;
            try s.mergeAt(i);
        }
    }

    fn minRunLength(length: usize) usize {
        var n = length;
        var r: usize = 0;
        while (n >= 64) {
            r |= n & 1;
            n >>= 1;
        }
        return n + r;
    }

    /// The length of the run starting at `low` (a descending one is reversed in place).
    fn countAndMakeRun(s: *Sorter, low: usize, high: usize) Error!usize {
        if (low + 1 == high) return 1;
        var run: usize = 2;
        var previous = s.work[low + 1];
        const descending = try s.compare(previous, s.work[low]) < 0;
        var i = low + 2;
        while (i < high) : (i += 1) {
            const current = s.work[i];
            const order = try s.compare(current, previous);
            if (descending) {
                if (order >= 0) break;
            } else {
                if (order < 0) break;
            }
            previous = current;
            run += 1;
        }
        if (descending) std.mem.reverse(u32, s.work[low .. low + run]);
        return run;
    }

    /// Sorts work[low..high], of which work[low..start] is sorted already.
    fn binaryInsertionSort(s: *Sorter, low: usize, start_in: usize, high: usize) Error!void {
        var start = if (low == start_in) start_in + 1 else start_in;
        while (start < high) : (start += 1) {
            var left = low;
            var right = start;
            const pivot = s.work[start];
            while (left < right) {
                const mid = left + ((right - left) >> 1);
                if (try s.compare(pivot, s.work[mid]) < 0) right = mid else left = mid + 1;
            }
            var p = start;
            while (p > left) : (p -= 1) s.work[p] = s.work[p - 1];
            s.work[left] = pivot;
        }
    }

    fn invariantHolds(s: *const Sorter, n: usize) bool {
        if (n < 2) return true;
        return s.run_len[n - 2] > s.run_len[n - 1] + s.run_len[n];
    }

    fn mergeCollapse(s: *Sorter) Error!void {
        while (s.runs > 1) {
            var n = s.runs - 2;
            if (!s.invariantHolds(n + 1) or !s.invariantHolds(n)) {
                if (s.run_len[n - 1] < s.run_len[n + 1]) n -= 1;
                try s.mergeAt(n);
            } else if (s.run_len[n] <= s.run_len[n + 1]) {
                try s.mergeAt(n);
            } else break;
        }
    }

    /// Merges pending runs i and i + 1.
    fn mergeAt(s: *Sorter, i: usize) Error!void {
        var base_a = s.run_base[i];
        var length_a = s.run_len[i];
        const base_b = s.run_base[i + 1];
        var length_b = s.run_len[i + 1];
        s.run_len[i] = length_a + length_b;
        if (i + 3 == s.runs) {
            s.run_base[i + 1] = s.run_base[i + 2];
            s.run_len[i + 1] = s.run_len[i + 2];
        }
        s.runs -= 1;
        // Elements of a already in place before b's first, and of b after a's last.
        const k = try s.gallopRight(s.work, s.work[base_b], base_a, length_a, 0);
        base_a += k;
        length_a -= k;
        if (length_a == 0) return;
        length_b = try s.gallopLeft(s.work, s.work[base_a + length_a - 1], base_b, length_b, length_b - 1);
        if (length_b == 0) return;
        if (length_a <= length_b) {
            try s.mergeLow(base_a, length_a, base_b, length_b);
        } else {
            try s.mergeHigh(base_a, length_a, base_b, length_b);
        }
    }

    /// Where `key` goes in array[base..base+length], before any equal element; the search
    /// starts at `hint`.
    fn gallopLeft(s: *Sorter, array: []const u32, key: u32, base: usize, length: usize, hint: usize) Error!usize {
        const h: isize = @intCast(hint);
        const len: isize = @intCast(length);
        var last: isize = 0;
        var offset: isize = 1;
        if (try s.compare(array[base + hint], key) < 0) {
            const max_offset = len - h;
            while (offset < max_offset) {
                if (try s.compare(array[offsetAt(base, h + offset)], key) >= 0) break;
                last = offset;
                offset = (offset << 1) + 1;
            }
            if (offset > max_offset) offset = max_offset;
            last += h;
            offset += h;
        } else {
            const max_offset = h + 1;
            while (offset < max_offset) {
                if (try s.compare(array[offsetAt(base, h - offset)], key) < 0) break;
                last = offset;
                offset = (offset << 1) + 1;
            }
            if (offset > max_offset) offset = max_offset;
            const t = last;
            last = h - offset;
            offset = h - t;
        }
        last += 1;
        while (last < offset) {
            const m = last + ((offset - last) >> 1);
            if (try s.compare(array[offsetAt(base, m)], key) < 0) last = m + 1 else offset = m;
        }
        return @intCast(offset);
    }

    /// Where `key` goes in array[base..base+length], after any equal element.
    fn gallopRight(s: *Sorter, array: []const u32, key: u32, base: usize, length: usize, hint: usize) Error!usize {
        const h: isize = @intCast(hint);
        const len: isize = @intCast(length);
        var last: isize = 0;
        var offset: isize = 1;
        if (try s.compare(key, array[base + hint]) < 0) {
            const max_offset = h + 1;
            while (offset < max_offset) {
                if (try s.compare(key, array[offsetAt(base, h - offset)]) >= 0) break;
                last = offset;
                offset = (offset << 1) + 1;
            }
            if (offset > max_offset) offset = max_offset;
            const t = last;
            last = h - offset;
            offset = h - t;
        } else {
            const max_offset = len - h;
            while (offset < max_offset) {
                if (try s.compare(key, array[offsetAt(base, h + offset)]) < 0) break;
                last = offset;
                offset = (offset << 1) + 1;
            }
            if (offset > max_offset) offset = max_offset;
            last += h;
            offset += h;
        }
        last += 1;
        while (last < offset) {
            const m = last + ((offset - last) >> 1);
            if (try s.compare(key, array[offsetAt(base, m)]) < 0) offset = m else last = m + 1;
        }
        return @intCast(offset);
    }

    fn offsetAt(base: usize, offset: isize) usize {
        return @intCast(@as(isize, @intCast(base)) + offset);
    }

    /// Merges the adjacent runs a and b (a the shorter), source the low end, with a copied out.
    fn mergeLow(s: *Sorter, base_a: usize, length_a_in: usize, base_b: usize, length_b_in: usize) Error!void {
        var length_a = length_a_in;
        var length_b = length_b_in;
        const work = s.work;
        const temp = s.temp[0..length_a];
        @memcpy(temp, work[base_a .. base_a + length_a]);
        var dest = base_a;
        var cursor_temp: usize = 0;
        var cursor_b = base_b;
        work[dest] = work[cursor_b];
        dest += 1;
        cursor_b += 1;
        const outcome: enum { done, copy_b } = outcome: {
            length_b -= 1;
            if (length_b == 0) break :outcome .done;
            if (length_a == 1) break :outcome .copy_b;
            var min_gallop = s.min_gallop;
            while (true) {
                var wins_a: usize = 0;
                var wins_b: usize = 0;
                // One element at a time, until one run keeps winning.
                while (true) {
                    if (try s.compare(work[cursor_b], temp[cursor_temp]) < 0) {
                        work[dest] = work[cursor_b];
                        dest += 1;
                        cursor_b += 1;
                        wins_b += 1;
                        length_b -= 1;
                        wins_a = 0;
                        if (length_b == 0) break :outcome .done;
                        if (wins_b >= min_gallop) break;
                    } else {
                        work[dest] = temp[cursor_temp];
                        dest += 1;
                        cursor_temp += 1;
                        wins_a += 1;
                        length_a -= 1;
                        wins_b = 0;
                        if (length_a == 1) break :outcome .copy_b;
                        if (wins_a >= min_gallop) break;
                    }
                }
                // Galloping, while it pays.
                min_gallop += 1;
                var first = true;
                while (wins_a >= min_gallop_wins or wins_b >= min_gallop_wins or first) {
                    first = false;
                    min_gallop = @max(1, min_gallop -| 1);
                    s.min_gallop = min_gallop;
                    wins_a = try s.gallopRight(temp, work[cursor_b], cursor_temp, length_a, 0);
                    if (wins_a > 0) {
                        @memcpy(work[dest .. dest + wins_a], temp[cursor_temp .. cursor_temp + wins_a]);
                        dest += wins_a;
                        cursor_temp += wins_a;
                        length_a -= wins_a;
                        if (length_a == 1) break :outcome .copy_b;
                        // Only an inconsistent comparator empties a here.
                        if (length_a == 0) break :outcome .done;
                    }
                    work[dest] = work[cursor_b];
                    dest += 1;
                    cursor_b += 1;
                    length_b -= 1;
                    if (length_b == 0) break :outcome .done;
                    wins_b = try s.gallopLeft(work, temp[cursor_temp], cursor_b, length_b, 0);
                    if (wins_b > 0) {
                        std.mem.copyForwards(u32, work[dest .. dest + wins_b], work[cursor_b .. cursor_b + wins_b]);
                        dest += wins_b;
                        cursor_b += wins_b;
                        length_b -= wins_b;
                        if (length_b == 0) break :outcome .done;
                    }
                    work[dest] = temp[cursor_temp];
                    dest += 1;
                    cursor_temp += 1;
                    length_a -= 1;
                    if (length_a == 1) break :outcome .copy_b;
                }
                min_gallop += 1;
                s.min_gallop = min_gallop;
            }
        };
        switch (outcome) {
            .done => if (length_a > 0) @memcpy(work[dest .. dest + length_a], temp[cursor_temp .. cursor_temp + length_a]),
            .copy_b => {
                // The last element of a belongs after what remains of b.
                std.mem.copyForwards(u32, work[dest .. dest + length_b], work[cursor_b .. cursor_b + length_b]);
                work[dest + length_b] = temp[cursor_temp];
            },
        }
    }

    /// Merges the adjacent runs a and b (b the shorter), source the high end, with b copied out.
    fn mergeHigh(s: *Sorter, base_a: usize, length_a_in: usize, base_b: usize, length_b_in: usize) Error!void {
        var length_a = length_a_in;
        var length_b = length_b_in;
        const work = s.work;
        const temp = s.temp[0..length_b];
        @memcpy(temp, work[base_b .. base_b + length_b]);
        // Cursors may step to -1 when their run is used up.
        var dest: isize = @intCast(base_b + length_b - 1);
        var cursor_temp: isize = @intCast(length_b - 1);
        var cursor_a: isize = @intCast(base_a + length_a - 1);
        work[offsetAt(0, dest)] = work[offsetAt(0, cursor_a)];
        dest -= 1;
        cursor_a -= 1;
        const outcome: enum { done, copy_a } = outcome: {
            length_a -= 1;
            if (length_a == 0) break :outcome .done;
            if (length_b == 1) break :outcome .copy_a;
            var min_gallop = s.min_gallop;
            while (true) {
                var wins_a: usize = 0;
                var wins_b: usize = 0;
                while (true) {
                    if (try s.compare(temp[offsetAt(0, cursor_temp)], work[offsetAt(0, cursor_a)]) < 0) {
                        work[offsetAt(0, dest)] = work[offsetAt(0, cursor_a)];
                        dest -= 1;
                        cursor_a -= 1;
                        wins_a += 1;
                        length_a -= 1;
                        wins_b = 0;
                        if (length_a == 0) break :outcome .done;
                        if (wins_a >= min_gallop) break;
                    } else {
                        work[offsetAt(0, dest)] = temp[offsetAt(0, cursor_temp)];
                        dest -= 1;
                        cursor_temp -= 1;
                        wins_b += 1;
                        length_b -= 1;
                        wins_a = 0;
                        if (length_b == 1) break :outcome .copy_a;
                        if (wins_b >= min_gallop) break;
                    }
                }
                min_gallop += 1;
                var first = true;
                while (wins_a >= min_gallop_wins or wins_b >= min_gallop_wins or first) {
                    first = false;
                    min_gallop = @max(1, min_gallop -| 1);
                    s.min_gallop = min_gallop;
                    const k = try s.gallopRight(work, temp[offsetAt(0, cursor_temp)], base_a, length_a, length_a - 1);
                    wins_a = length_a - k;
                    if (wins_a > 0) {
                        dest -= @intCast(wins_a);
                        cursor_a -= @intCast(wins_a);
                        const to = offsetAt(0, dest + 1);
                        const source = offsetAt(0, cursor_a + 1);
                        std.mem.copyBackwards(u32, work[to .. to + wins_a], work[source .. source + wins_a]);
                        length_a -= wins_a;
                        if (length_a == 0) break :outcome .done;
                    }
                    work[offsetAt(0, dest)] = temp[offsetAt(0, cursor_temp)];
                    dest -= 1;
                    cursor_temp -= 1;
                    length_b -= 1;
                    if (length_b == 1) break :outcome .copy_a;
                    const j = try s.gallopLeft(temp, work[offsetAt(0, cursor_a)], 0, length_b, length_b - 1);
                    wins_b = length_b - j;
                    if (wins_b > 0) {
                        dest -= @intCast(wins_b);
                        cursor_temp -= @intCast(wins_b);
                        const to = offsetAt(0, dest + 1);
                        const source = offsetAt(0, cursor_temp + 1);
                        @memcpy(work[to .. to + wins_b], temp[source .. source + wins_b]);
                        length_b -= wins_b;
                        if (length_b == 1) break :outcome .copy_a;
                        // Only an inconsistent comparator empties b here.
                        if (length_b == 0) break :outcome .done;
                    }
                    work[offsetAt(0, dest)] = work[offsetAt(0, cursor_a)];
                    dest -= 1;
                    cursor_a -= 1;
                    length_a -= 1;
                    if (length_a == 0) break :outcome .done;
                }
                min_gallop += 1;
                s.min_gallop = min_gallop;
            }
        };
        switch (outcome) {
            .done => if (length_b > 0) {
                const to = offsetAt(0, dest - @as(isize, @intCast(length_b - 1)));
                @memcpy(work[to .. to + length_b], temp[0..length_b]);
            },
            .copy_a => {
                // The first element of b belongs before what remains of a.
                dest -= @intCast(length_a);
                cursor_a -= @intCast(length_a);
                const to = offsetAt(0, dest + 1);
                const source = offsetAt(0, cursor_a + 1);
                std.mem.copyBackwards(u32, work[to .. to + length_a], work[source .. source + length_a]);
                work[offsetAt(0, dest)] = temp[offsetAt(0, cursor_temp)];
            },
        }
    }
};

pub fn requireComparator(vm: *Vm, comparator: Value) Error!void {
    if (!comparator.isUndefined() and !ops.isCallable(comparator)) {
        return vm.throwMessage(.type_error, "The comparison function must be either a function or undefined");
    }
}

pub fn sortInto(vm: *Vm, a: *Array, comparator: Value, target: *Array) Error!void {
    try requireComparator(vm, comparator);
    const len = a.len;
    // Collecting the values, converting them, and writing them back.
    try vm.charge(meter.elementsCost(3 * @as(usize, len)));
    // Collect the defined values; count undefineds and holes.
    const values_ = vm.heap.alloc(Value, len) catch return vm.outOfMemory();
    var n: usize = 0;
    var undefineds: usize = 0;
    for (a.items[0..len]) |v| {
        if (v.eqlBits(Value.hole)) continue;
        if (v.isUndefined()) {
            undefineds += 1;
            continue;
        }
        values_[n] = v;
        n += 1;
    }
    var strings: ?[]*String = null;
    if (comparator.isUndefined()) {
        const strs = vm.heap.alloc(*String, n) catch return vm.outOfMemory();
        for (values_[0..n], strs) |v, *s| s.* = try ops.toString(vm, v);
        strings = strs;
    }
    const work = vm.heap.alloc(u32, n) catch return vm.outOfMemory();
    const temp = vm.heap.alloc(u32, n / 2 + 1) catch return vm.outOfMemory();
    for (work, 0..) |*w, i| w.* = @intCast(i);
    var sorter: Sorter = .{ .vm = vm, .comparator = comparator, .values = values_[0..n], .strings = strings, .work = work, .temp = temp };
    try sorter.sort();
    target.reserve(vm.heap, len) catch return vm.outOfMemory();
    for (work, 0..) |w, i| target.items[i] = values_[w];
    @memset(target.items[n .. n + undefineds], Value.undefined_value);
    @memset(target.items[n + undefineds .. len], Value.hole);
    target.len = len;
}

pub fn sort(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.sort(vm, this, args)).as(Array);
    if (a.len > 1) try checkWritable(vm, a);
    try sortInto(vm, a, arg(args, 0), a);
    return this;
}

pub fn toSorted(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const a = (this.objectOf(.array) orelse return array_like.toSorted(vm, this, args)).as(Array);
    const result = try vm.newArray(a.len);
    try sortInto(vm, a, arg(args, 0), result);
    for (result.slice()) |*v| {
        if (v.eqlBits(Value.hole)) v.* = Value.undefined_value;
    }
    return Value.obj(&result.object);
}

// ---------------------------------------------------------------------------------------
// Array's statics and constructor.

pub fn isArray(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    return Value.boolean(arg(args, 0).objectOf(.array) != null);
}

pub fn from(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const source = arg(args, 0);
    const f = arg(args, 1);
    if (!f.isUndefined()) try requireCallable(vm, f);
    if (source.isNullish()) return objects.throwNotIterable(vm, source);
    const result = try vm.newArray(0);
    const iterable = ops.isIterable(source) or !(try ops.iteratorMethod(vm, source)).isUndefined();
    if (iterable) {
        var state = try ops.iterStart(vm, source, .{});
        var cursor = Value.number(0);
        var i: usize = 0;
        while (try ops.iterNext(vm, &state, &cursor)) |v| : (i += 1) {
            try vm.charge(meter.elementsCost(1));
            const item = if (f.isUndefined()) v else try vm.call(f, Value.undefined_value, &.{ v, index(i) });
            result.push(vm.heap, item) catch return vm.outOfMemory();
        }
    } else if (source.is(.object)) {
        // An array-like: { length: n, 0: ..., 1: ... }.
        const len_value = try ops.getField(vm, source, names.string("length"));
        const len_f = number.toIntegerOrInfinity(try ops.toNumber(vm, len_value));
        if (len_f > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
        const len: usize = if (len_f > 0) @intFromFloat(len_f) else 0;
        for (0..len) |i| {
            try vm.charge(meter.elementsCost(1));
            const v = try ops.getElement(vm, source, index(i));
            const item = if (f.isUndefined()) v else try vm.call(f, Value.undefined_value, &.{ v, index(i) });
            result.push(vm.heap, item) catch return vm.outOfMemory();
        }
    }
    return Value.obj(&result.object);
}

pub fn of(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try vm.charge(meter.elementsCost(args.len));
    const result = try vm.newArray(args.len);
    @memcpy(result.items[0..args.len], args);
    result.len = @intCast(args.len);
    return Value.obj(&result.object);
}

/// Array(n) and new Array(n): n holes; Array(a, b...) and Array("x"): those elements.
pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (args.len == 1 and args[0].isNumber()) {
        const x = args[0].asNumber();
        const len = ops.arrayIndex(x) orelse return vm.throwMessage(.range_error, "Invalid array length");
        if (len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
        try vm.charge(meter.bytesCost(@as(usize, len) * @sizeOf(Value)));
        const result = try vm.newArray(len);
        result.setLength(vm.heap, len) catch return vm.outOfMemory();
        return Value.obj(&result.object);
    }
    return of(vm, this, args);
}
