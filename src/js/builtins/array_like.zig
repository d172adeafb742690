//! Array.prototype's methods on a `this` that is not an array: an array-like object
//! (`{ length: 2, 0: "a", 1: "b" }`), a string, a typed array, a primitive. These are the
//! spec's generic algorithms, element by element through Get, HasProperty, Set and
//! DeletePropertyOrThrow, in the spec's order (the length is read before the callback is
//! checked, and so on), so getters and setters see what they see in node. Real arrays never
//! come here: array.zig keeps their dense path and sends everything else to this file.
//!
//! The decision a reader must know: a length is any integer up to 2^53 - 1, so an object
//! such as `{ length: 2 ** 53 - 1, 9007199254740990: "x" }` is walked by its keys, not by
//! its indexes. When the length is far larger than the keys the object and its prototypes
//! hold, a walk jumps from one integer key to the next (found afresh at each step, so a
//! callback that adds or deletes keys is seen as the spec says); otherwise it visits every
//! index. Either way every step is paid for, so a walk over anything stops within budget.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const array = @import("array.zig");
const objects = @import("objects.zig");
const arg = builtins.arg;

/// 2^53 - 1: the largest length of an array-like (ToLength).
const length_limit: u64 = (1 << 53) - 1;

/// A walk jumps between keys when the length passes this many times the keys it could
/// find, and this floor.
const sparse_ratio = 8;
const sparse_floor = 1024;

/// The object a method works on (ToObject of `this`, kept as the primitive for strings and
/// other primitives: there are no wrapper objects) and its length (LengthOfArrayLike).
const Target = struct {
    value: Value,
    len: u64,
    /// Walks jump between the integer keys found on the object and its prototypes.
    sparse: bool,
};

fn begin(vm: *Vm, this: Value, comptime method: []const u8) Error!Target {
    if (this.isNullish()) return array.throwNullishThis(vm, method);
    const len = try lengthOf(vm, this);
    return .{ .value = this, .len = len, .sparse = this.is(.object) and len > sparse_floor and
        len / sparse_ratio > keysInChain(this.asObject()) };
}

/// LengthOfArrayLike: ToLength(Get(O, "length")).
pub fn lengthOf(vm: *Vm, v: Value) Error!u64 {
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, try ops.getField(vm, v, names.string("length"))));
    if (!(x > 0)) return 0;
    return @intFromFloat(@min(x, @as(f64, @floatFromInt(length_limit))));
}

fn key(k: u64) Value {
    return Value.number(@floatFromInt(k));
}

fn has(vm: *Vm, t: Target, k: u64) Error!bool {
    if (t.value.isString()) return k < t.value.asString().len;
    if (t.value.is(.object) or t.value.is(.builtin) or t.value.is(.native)) return ops.hasProperty(vm, t.value, key(k));
    // A number's, boolean's or symbol's wrapper has no integer keys of its own.
    return false;
}

fn get(vm: *Vm, t: Target, k: u64) Error!Value {
    return ops.getElement(vm, t.value, key(k));
}

/// Set(O, k, v, true). A string's indexes are read-only; a write to another primitive goes
/// to a wrapper object that nobody else can see, so it is dropped.
fn set(vm: *Vm, t: Target, k: u64, v: Value) Error!void {
    if (t.value.isString()) {
        if (k < t.value.asString().len) return throwStringReadOnly(vm, key(k));
        return;
    }
    if (!isObjectLike(t.value)) return;
    return ops.setElement(vm, t.value, key(k), v);
}

fn setLength(vm: *Vm, t: Target, len: u64) Error!void {
    if (t.value.isString()) return throwStringReadOnly(vm, Value.string(names.string("length")));
    if (!isObjectLike(t.value)) return;
    return ops.setField(vm, t.value, names.string("length"), key(len));
}

/// DeletePropertyOrThrow(O, k).
fn delete(vm: *Vm, t: Target, k: u64) Error!void {
    if (t.value.isString()) {
        if (k < t.value.asString().len) return vm.throwFmt(.type_error, "Cannot delete property '{d}' of [object String]", .{k});
        return;
    }
    if (!isObjectLike(t.value)) return;
    _ = try ops.deleteField(vm, t.value, try ops.toPropertyKey(vm, key(k)));
}

fn isObjectLike(v: Value) bool {
    return v.is(.object) or v.is(.builtin) or v.is(.native);
}

fn throwStringReadOnly(vm: *Vm, k: Value) Error {
    return vm.throwFmt(.type_error, "Cannot assign to read only property '{f}' of object '[object String]'", .{ops.ValueText{ .vm = vm, .v = k }});
}

// ---------------------------------------------------------------------------------------
// Walks: the indexes a loop visits, every one or (sparse) only those that may be present.

/// The integer keys an object and its prototypes could hold, an upper bound.
fn keysInChain(start: *object.Object) u64 {
    var count: u64 = 0;
    var o = start;
    var depth: u32 = 0;
    while (depth < prototype_depth_max) : (depth += 1) {
        count += o.properties.len;
        switch (o.kind) {
            .array => count += o.as(object.Array).len,
            .typed_array => count += o.as(object.TypedArray).len,
            else => {},
        }
        if (!o.proto.is(.object)) break;
        o = o.proto.asObject();
    }
    return count;
}

/// Prototype chains are made by the script, which cannot make a cycle (setPrototypeOf
/// refuses one); this bounds the walk anyway.
const prototype_depth_max = 10_000;

/// An integer key's value: a canonical decimal below 2^53 ("0", "17", "9007199254740990").
fn integerKey(k: *String) ?u64 {
    if (k.flags.symbol or k.flags.private) return null;
    if (k.arrayIndex()) |i| return i;
    if (k.len == 0 or k.len > 16) return null;
    var x: u64 = 0;
    for (0..k.len) |i| {
        const c = k.at(i);
        if (c < '0' or c > '9' or (i == 0 and c == '0')) return null;
        x = x * 10 + (c - '0');
    }
    return if (x <= length_limit) x else null;
}

/// The nearest integer key at or past `k` (below it when `down`) on the object or its
/// prototypes, or null. Paid for by the keys it looks at.
fn nearestKey(vm: *Vm, start: *object.Object, k: u64, comptime down: bool) Error!?u64 {
    var best: ?u64 = null;
    var o = start;
    var depth: u32 = 0;
    while (depth < prototype_depth_max) : (depth += 1) {
        try vm.charge(meter.elementsCost(o.properties.len + 1));
        for (o.properties.slice()) |p| {
            const i = integerKey(p.key) orelse continue;
            if (better(i, k, best, down)) best = i;
        }
        switch (o.kind) {
            .array => if (try nearestElement(vm, o.as(object.Array), k, down)) |i| {
                if (better(i, k, best, down)) best = i;
            },
            .typed_array => {
                const len = o.as(object.TypedArray).len;
                const i: ?u64 = if (down) (if (len == 0) null else @min(k, len - 1)) else (if (k < len) k else null);
                if (i) |x| if (better(x, k, best, down)) {
                    best = x;
                };
            },
            else => {},
        }
        if (!o.proto.is(.object)) break;
        o = o.proto.asObject();
    }
    return best;
}

fn better(i: u64, k: u64, best: ?u64, comptime down: bool) bool {
    if (down) return i <= k and (best == null or i > best.?);
    return i >= k and (best == null or i < best.?);
}

fn nearestElement(vm: *Vm, a: *const object.Array, k: u64, comptime down: bool) Error!?u64 {
    if (down) {
        if (a.len == 0) return null;
        var i: u64 = @min(k, a.len - 1);
        while (true) : (i -= 1) {
            try vm.charge(meter.elementsCost(1));
            if (!a.items[i].eqlBits(Value.hole)) return i;
            if (i == 0) return null;
        }
    }
    var i = k;
    while (i < a.len) : (i += 1) {
        try vm.charge(meter.elementsCost(1));
        if (!a.items[i].eqlBits(Value.hole)) return i;
    }
    return null;
}

/// The indexes from `from` up to `end` (exclusive) that a HasProperty loop must look at.
const Upward = struct {
    next_k: u64,
    end: u64,

    fn next(w: *Upward, vm: *Vm, t: Target) Error!?u64 {
        if (w.next_k >= w.end) return null;
        try vm.charge(meter.elementsCost(1));
        var k = w.next_k;
        if (t.sparse) k = (try nearestKey(vm, t.value.asObject(), k, false)) orelse return null;
        if (k >= w.end) return null;
        w.next_k = k + 1;
        return k;
    }
};

/// The indexes from `from` down to 0 that a HasProperty loop must look at.
const Downward = struct {
    /// One past the next index to look at (0 when done).
    above: u64,

    fn next(w: *Downward, vm: *Vm, t: Target) Error!?u64 {
        if (w.above == 0) return null;
        try vm.charge(meter.elementsCost(1));
        var k = w.above - 1;
        if (t.sparse) k = (try nearestKey(vm, t.value.asObject(), k, true)) orelse return null;
        w.above = k;
        return k;
    }
};

/// A relative index argument, clamped to [0, len] (lengths here fit a usize).
const relative = array.relative;
comptime {
    std.debug.assert(@bitSizeOf(usize) >= 64);
}

fn callback(vm: *Vm, t: Target, f: Value, this_arg: Value, v: Value, k: u64) Error!Value {
    return vm.call(f, this_arg, &.{ v, key(k), t.value });
}

fn newArrayOfLength(vm: *Vm, len: u64) Error!*object.Array {
    if (len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    const result = try vm.newArray(@intCast(len));
    @memset(result.items[0..@intCast(len)], Value.hole);
    result.len = @intCast(len);
    return result;
}

// ---------------------------------------------------------------------------------------
// The methods, each as the spec writes it.

pub fn forEach(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "forEach");
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    var w: Upward = .{ .next_k = 0, .end = t.len };
    while (try w.next(vm, t)) |k| {
        if (try has(vm, t, k)) _ = try callback(vm, t, f, arg(args, 1), try get(vm, t, k), k);
    }
    return Value.undefined_value;
}

pub fn map(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "map");
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    const result = try newArrayOfLength(vm, t.len);
    var w: Upward = .{ .next_k = 0, .end = t.len };
    while (try w.next(vm, t)) |k| {
        if (!try has(vm, t, k)) continue;
        const v = try callback(vm, t, f, arg(args, 1), try get(vm, t, k), k);
        result.items[@intCast(k)] = v;
    }
    return Value.obj(&result.object);
}

pub fn filter(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "filter");
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    const result = try vm.newArray(0);
    var w: Upward = .{ .next_k = 0, .end = t.len };
    while (try w.next(vm, t)) |k| {
        if (!try has(vm, t, k)) continue;
        const v = try get(vm, t, k);
        if (!ops.toBoolean(try callback(vm, t, f, arg(args, 1), v, k))) continue;
        if (result.len >= object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
        result.push(vm.heap, v) catch return vm.outOfMemory();
    }
    return Value.obj(&result.object);
}

const Quantifier = enum { some, every };

fn someOrEvery(vm: *Vm, t: Target, args: []const Value, comptime q: Quantifier) Error!Value {
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    var w: Upward = .{ .next_k = 0, .end = t.len };
    while (try w.next(vm, t)) |k| {
        if (!try has(vm, t, k)) continue;
        const verdict = ops.toBoolean(try callback(vm, t, f, arg(args, 1), try get(vm, t, k), k));
        if (q == .some and verdict) return Value.true_value;
        if (q == .every and !verdict) return Value.false_value;
    }
    return Value.boolean(q == .every);
}

pub fn some(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return someOrEvery(vm, try begin(vm, this, "some"), args, .some);
}

pub fn every(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return someOrEvery(vm, try begin(vm, this, "every"), args, .every);
}

pub fn reduce(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "reduce");
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    var w: Upward = .{ .next_k = 0, .end = t.len };
    var accumulator = if (args.len >= 2) args[1] else try firstPresent(vm, t, &w);
    while (try w.next(vm, t)) |k| {
        if (!try has(vm, t, k)) continue;
        accumulator = try vm.call(f, Value.undefined_value, &.{ accumulator, try get(vm, t, k), key(k), t.value });
    }
    return accumulator;
}

pub fn reduceRight(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "reduceRight");
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    var w: Downward = .{ .above = t.len };
    var accumulator = if (args.len >= 2) args[1] else try firstPresent(vm, t, &w);
    while (try w.next(vm, t)) |k| {
        if (!try has(vm, t, k)) continue;
        accumulator = try vm.call(f, Value.undefined_value, &.{ accumulator, try get(vm, t, k), key(k), t.value });
    }
    return accumulator;
}

/// reduce's first value when none is given: the first element present in the walk's order.
fn firstPresent(vm: *Vm, t: Target, w: anytype) Error!Value {
    while (try w.next(vm, t)) |k| {
        if (try has(vm, t, k)) return get(vm, t, k);
    }
    return vm.throwMessage(.type_error, "Reduce of empty array with no initial value");
}

const FindResult = enum { value, index };

/// find and its kin visit every index, present or not (Get, no HasProperty).
fn findImpl(vm: *Vm, t: Target, args: []const Value, comptime result: FindResult, comptime from_end: bool) Error!Value {
    const f = arg(args, 0);
    try array.requireCallable(vm, f);
    var step: u64 = 0;
    while (step < t.len) : (step += 1) {
        try vm.charge(meter.elementsCost(1));
        const k = if (from_end) t.len - 1 - step else step;
        const v = try get(vm, t, k);
        if (ops.toBoolean(try callback(vm, t, f, arg(args, 1), v, k))) return if (result == .value) v else key(k);
    }
    return if (result == .value) Value.undefined_value else Value.number(-1);
}

pub fn find(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return findImpl(vm, try begin(vm, this, "find"), args, .value, false);
}

pub fn findIndex(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return findImpl(vm, try begin(vm, this, "findIndex"), args, .index, false);
}

pub fn findLast(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return findImpl(vm, try begin(vm, this, "findLast"), args, .value, true);
}

pub fn findLastIndex(vm: *Vm, this: Value, args: []const Value) Error!Value {
    return findImpl(vm, try begin(vm, this, "findLastIndex"), args, .index, true);
}

pub fn indexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "indexOf");
    if (t.len == 0) return Value.number(-1);
    const start = try relative(vm, arg(args, 1), t.len, 0);
    var w: Upward = .{ .next_k = start, .end = t.len };
    while (try w.next(vm, t)) |k| {
        if (try has(vm, t, k) and ops.strictEquals(try get(vm, t, k), arg(args, 0))) return key(k);
    }
    return Value.number(-1);
}

pub fn lastIndexOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "lastIndexOf");
    if (t.len == 0) return Value.number(-1);
    var above = t.len;
    if (args.len >= 2) {
        const x = number.toIntegerOrInfinity(try ops.toNumber(vm, args[1]));
        const l: f64 = @floatFromInt(t.len);
        const k = if (x < 0) l + x else @min(x, l - 1);
        if (k < 0) return Value.number(-1);
        above = @as(u64, @intFromFloat(k)) + 1;
    }
    var w: Downward = .{ .above = above };
    while (try w.next(vm, t)) |k| {
        if (try has(vm, t, k) and ops.strictEquals(try get(vm, t, k), arg(args, 0))) return key(k);
    }
    return Value.number(-1);
}

pub fn includes(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "includes");
    if (t.len == 0) return Value.false_value;
    const start = try relative(vm, arg(args, 1), t.len, 0);
    // includes reads absent elements as undefined, so only a search for undefined must
    // look at every index.
    const every_index = arg(args, 0).isUndefined();
    var w: Upward = .{ .next_k = start, .end = t.len };
    var walk = t;
    if (every_index) walk.sparse = false;
    while (try w.next(vm, walk)) |k| {
        if (object.sameValueZero(try get(vm, t, k), arg(args, 0))) return Value.true_value;
    }
    return Value.false_value;
}

pub fn at(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "at");
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, arg(args, 0)));
    const l: f64 = @floatFromInt(t.len);
    const k = if (x < 0) l + x else x;
    if (k < 0 or k >= l) return Value.undefined_value;
    return get(vm, t, @intFromFloat(k));
}

pub fn join(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "join");
    const sep = arg(args, 0);
    const separator = if (sep.isUndefined()) names.string(",") else try ops.toString(vm, sep);
    return Value.string(try joinTarget(vm, t, separator));
}

fn joinTarget(vm: *Vm, t: Target, separator: *String) Error!*String {
    if (t.len == 0) return string.empty;
    if ((t.len - 1) * separator.len > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    try vm.checkNativeStack();
    var out = string.empty;
    var k: u64 = 0;
    while (k < t.len) : (k += 1) {
        try vm.charge(meter.elementsCost(1));
        if (k > 0) out = try ops.concatTwo(vm, out, separator);
        const v = try get(vm, t, k);
        if (!v.isNullish()) out = try ops.concatTwo(vm, out, try ops.toString(vm, v));
    }
    return out;
}

pub fn push(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "push");
    if (t.len + args.len > length_limit) {
        return vm.throwFmt(.type_error, "Pushing {d} elements on an array-like of length {d} is disallowed, as the total surpasses 2**53-1", .{ args.len, t.len });
    }
    for (args, 0..) |v, i| {
        try vm.charge(meter.elementsCost(1));
        try set(vm, t, t.len + i, v);
    }
    try setLength(vm, t, t.len + args.len);
    return key(t.len + args.len);
}

pub fn pop(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try begin(vm, this, "pop");
    if (t.len == 0) {
        try setLength(vm, t, 0);
        return Value.undefined_value;
    }
    const v = try get(vm, t, t.len - 1);
    try delete(vm, t, t.len - 1);
    try setLength(vm, t, t.len - 1);
    return v;
}

pub fn shift(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try begin(vm, this, "shift");
    if (t.len == 0) {
        try setLength(vm, t, 0);
        return Value.undefined_value;
    }
    const first = try get(vm, t, 0);
    var k: u64 = 1;
    while (k < t.len) : (k += 1) {
        try vm.charge(meter.elementsCost(1));
        try move(vm, t, k, k - 1);
    }
    try delete(vm, t, t.len - 1);
    try setLength(vm, t, t.len - 1);
    return first;
}

pub fn unshift(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "unshift");
    if (args.len > 0) {
        if (t.len + args.len > length_limit) {
            return vm.throwMessage(.type_error, "Invalid array length");
        }
        var k = t.len;
        while (k > 0) : (k -= 1) {
            try vm.charge(meter.elementsCost(1));
            try move(vm, t, k - 1, k - 1 + args.len);
        }
        for (args, 0..) |v, i| try set(vm, t, i, v);
    }
    try setLength(vm, t, t.len + args.len);
    return key(t.len + args.len);
}

/// One step of shift, unshift, splice and reverse: the element at `from` goes to `to`, or,
/// if there is none, `to` is deleted.
fn move(vm: *Vm, t: Target, from: u64, to: u64) Error!void {
    if (try has(vm, t, from)) return set(vm, t, to, try get(vm, t, from));
    return delete(vm, t, to);
}

pub fn slice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "slice");
    const start = try relative(vm, arg(args, 0), t.len, 0);
    const end = try relative(vm, arg(args, 1), t.len, t.len);
    const count = if (end > start) end - start else 0;
    const result = try newArrayOfLength(vm, count);
    var w: Upward = .{ .next_k = start, .end = end };
    while (try w.next(vm, t)) |k| {
        if (try has(vm, t, k)) result.items[@intCast(k - start)] = try get(vm, t, k);
    }
    return Value.obj(&result.object);
}

pub fn fill(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "fill");
    const start = try relative(vm, arg(args, 1), t.len, 0);
    const end = try relative(vm, arg(args, 2), t.len, t.len);
    var k = start;
    while (k < end) : (k += 1) {
        try vm.charge(meter.elementsCost(1));
        try set(vm, t, k, arg(args, 0));
    }
    return this;
}

pub fn reverse(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try begin(vm, this, "reverse");
    if (t.len < 2) return this;
    var lower: u64 = 0;
    var upper = t.len - 1;
    while (lower < upper) : ({
        lower += 1;
        upper -= 1;
    }) {
        try vm.charge(meter.elementsCost(2));
        const lower_exists = try has(vm, t, lower);
        const lower_value = if (lower_exists) try get(vm, t, lower) else Value.undefined_value;
        const upper_exists = try has(vm, t, upper);
        const upper_value = if (upper_exists) try get(vm, t, upper) else Value.undefined_value;
        if (upper_exists) try set(vm, t, lower, upper_value) else if (lower_exists) try delete(vm, t, lower);
        if (lower_exists) try set(vm, t, upper, lower_value) else if (upper_exists) try delete(vm, t, upper);
    }
    return this;
}

/// splice's and toSpliced's count of elements to remove or skip: none without a start, the
/// rest without a count, else the count clamped to what is there.
fn removalCount(vm: *Vm, args: []const Value, len: u64, start: u64) Error!u64 {
    if (args.len == 0) return 0;
    if (args.len == 1) return len - start;
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, args[1]));
    return @intFromFloat(@min(@max(x, 0), @as(f64, @floatFromInt(len - start))));
}

fn throwTooLong(vm: *Vm) Error {
    return vm.throwMessage(.type_error, "Invalid array length: the result would pass 2**53-1");
}

pub fn splice(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "splice");
    const start = try relative(vm, arg(args, 0), t.len, 0);
    const delete_count = try removalCount(vm, args, t.len, start);
    const items = if (args.len > 2) args[2..] else &[_]Value{};
    if (t.len + items.len - delete_count > length_limit) return throwTooLong(vm);
    const removed = try newArrayOfLength(vm, delete_count);
    var w: Upward = .{ .next_k = start, .end = start + delete_count };
    while (try w.next(vm, t)) |k| {
        if (try has(vm, t, k)) removed.items[@intCast(k - start)] = try get(vm, t, k);
    }
    const tail_end = t.len - delete_count;
    if (items.len < delete_count) {
        var k = start;
        while (k < tail_end) : (k += 1) {
            try vm.charge(meter.elementsCost(1));
            try move(vm, t, k + delete_count, k + items.len);
        }
        k = t.len;
        while (k > tail_end + items.len) : (k -= 1) {
            try vm.charge(meter.elementsCost(1));
            try delete(vm, t, k - 1);
        }
    } else if (items.len > delete_count) {
        var k = tail_end;
        while (k > start) : (k -= 1) {
            try vm.charge(meter.elementsCost(1));
            try move(vm, t, k + delete_count - 1, k + items.len - 1);
        }
    }
    for (items, 0..) |v, i| try set(vm, t, start + i, v);
    try setLength(vm, t, tail_end + items.len);
    return Value.obj(&removed.object);
}

/// toSpliced, for arrays and array-likes alike: a copy with no holes (each absent element
/// read as undefined).
pub fn toSpliced(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "toSpliced");
    const start = try relative(vm, arg(args, 0), t.len, 0);
    const skip_count = try removalCount(vm, args, t.len, start);
    const items = if (args.len > 2) args[2..] else &[_]Value{};
    const new_len = t.len + items.len - skip_count;
    if (new_len > length_limit) return throwTooLong(vm);
    const result = try newArrayOfLength(vm, new_len);
    for (0..start) |k| {
        try vm.charge(meter.elementsCost(1));
        result.items[k] = try get(vm, t, k);
    }
    @memcpy(result.items[start..][0..items.len], items);
    for (start + items.len..new_len) |i| {
        try vm.charge(meter.elementsCost(1));
        result.items[i] = try get(vm, t, i - items.len + skip_count);
    }
    return Value.obj(&result.object);
}

/// copyWithin, for arrays and array-likes alike: element by element, from the far end
/// when the ranges overlap that way.
pub fn copyWithin(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "copyWithin");
    var to = try relative(vm, arg(args, 0), t.len, 0);
    var from = try relative(vm, arg(args, 1), t.len, 0);
    const final = try relative(vm, arg(args, 2), t.len, t.len);
    var count = @min(if (final > from) final - from else 0, t.len - to);
    const backwards = from < to and to < from + count;
    if (backwards) {
        from += count - 1;
        to += count - 1;
    }
    while (count > 0) : (count -= 1) {
        try vm.charge(meter.elementsCost(1));
        try move(vm, t, from, to);
        if (count == 1) break;
        if (backwards) {
            from -= 1;
            to -= 1;
        } else {
            from += 1;
            to += 1;
        }
    }
    return this;
}

pub fn toReversed(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = try begin(vm, this, "toReversed");
    const result = try newArrayOfLength(vm, t.len);
    for (0..@intCast(t.len)) |k| {
        try vm.charge(meter.elementsCost(1));
        result.items[k] = try get(vm, t, t.len - 1 - k);
    }
    return Value.obj(&result.object);
}

pub fn with(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "with");
    const x = number.toIntegerOrInfinity(try ops.toNumber(vm, arg(args, 0)));
    const l: f64 = @floatFromInt(t.len);
    const k = if (x < 0) l + x else x;
    if (k < 0 or k >= l) {
        return vm.throwFmt(.range_error, "Invalid index : {f}", .{ops.ValueText{ .vm = vm, .v = arg(args, 0) }});
    }
    const replaced: u64 = @intFromFloat(k);
    const result = try newArrayOfLength(vm, t.len);
    for (0..@intCast(t.len)) |i| {
        try vm.charge(meter.elementsCost(1));
        result.items[i] = if (i == replaced) arg(args, 1) else try get(vm, t, i);
    }
    return Value.obj(&result.object);
}

const Holes = enum {
    /// Absent elements are left out (sort's SortIndexedProperties).
    skip,
    /// Absent elements are read as undefined (toSorted).
    read,
    /// Absent elements stay holes, at their indexes (flat).
    keep,
};

/// The elements, read once in index order into a dense array of the run's heap, which the
/// array path then sorts or flattens.
fn collect(vm: *Vm, t: Target, comptime holes: Holes) Error!*object.Array {
    if (t.len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    const result = try vm.newArray(if (holes == .skip) 0 else @intCast(t.len));
    if (holes == .keep) {
        @memset(result.items[0..@intCast(t.len)], Value.hole);
        result.len = @intCast(t.len);
    }
    var w: Upward = .{ .next_k = 0, .end = t.len };
    var walk = t;
    if (holes == .read) walk.sparse = false;
    while (try w.next(vm, walk)) |k| {
        switch (holes) {
            .skip => if (try has(vm, t, k)) result.push(vm.heap, try get(vm, t, k)) catch return vm.outOfMemory(),
            .read => result.push(vm.heap, try get(vm, t, k)) catch return vm.outOfMemory(),
            .keep => if (try has(vm, t, k)) {
                result.items[@intCast(k)] = try get(vm, t, k);
            },
        }
    }
    return result;
}

pub fn sort(vm: *Vm, this: Value, args: []const Value) Error!Value {
    try array.requireComparator(vm, arg(args, 0));
    const t = try begin(vm, this, "sort");
    const items = try collect(vm, t, .skip);
    try array.sortInto(vm, items, arg(args, 0), items);
    for (items.slice(), 0..) |v, k| try set(vm, t, k, v);
    var k: u64 = items.len;
    while (k < t.len) : (k += 1) {
        try vm.charge(meter.elementsCost(1));
        try delete(vm, t, k);
    }
    return this;
}

pub fn toSorted(vm: *Vm, this: Value, args: []const Value) Error!Value {
    try array.requireComparator(vm, arg(args, 0));
    const t = try begin(vm, this, "toSorted");
    const items = try collect(vm, t, .read);
    try array.sortInto(vm, items, arg(args, 0), items);
    return Value.obj(&items.object);
}

/// concat on anything but an array: `this` (ToObject's) is the first element, as the array
/// path would take any object that is not an array.
pub fn concat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (this.isNullish()) return array.throwNullishThis(vm, "concat");
    const first = try vm.newArray(1);
    first.push(vm.heap, this) catch return vm.outOfMemory();
    return array.concat(vm, Value.obj(&first.object), args);
}

pub fn flat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "flat");
    const items = try collect(vm, t, .keep);
    return array.flat(vm, Value.obj(&items.object), args);
}

pub fn flatMap(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const t = try begin(vm, this, "flatMap");
    const f = arg(args, 0);
    if (!ops.isCallable(f)) return vm.throwMessage(.type_error, "flatMap mapper function is not callable");
    const result = try vm.newArray(0);
    var w: Upward = .{ .next_k = 0, .end = t.len };
    while (try w.next(vm, t)) |k| {
        if (!try has(vm, t, k)) continue;
        const v = try callback(vm, t, f, arg(args, 1), try get(vm, t, k), k);
        try array.flattenOne(vm, result, v);
    }
    return Value.obj(&result.object);
}

/// toString calls the object's own `join` when it has one, else Object.prototype's.
pub fn toString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (this.isNullish()) return array.throwNullishThis(vm, "toString");
    const join_method = try ops.getField(vm, this, names.string("join"));
    if (ops.isCallable(join_method)) return vm.call(join_method, this, &.{});
    return objects.toStringMethod(vm, this, args);
}

test "array-like: integer keys are canonical decimals up to 2^53 - 1" {
    const Heap = @import("../Heap.zig");
    var region: [64 * 1024]u8 align(16) = undefined;
    var heap = Heap.init(&region);
    const cases = .{ .{ "0", 0 }, .{ "17", 17 }, .{ "4294967295", 4294967295 }, .{ "9007199254740990", 9007199254740990 }, .{ "9007199254740991", 9007199254740991 } };
    inline for (cases) |case| {
        const s = try string.fromLatin1(&heap, case[0]);
        try std.testing.expectEqual(@as(?u64, case[1]), integerKey(s));
    }
    for ([_][]const u8{ "", "01", "-1", "1.5", "9007199254740992", "12345678901234567", "1e3", "a" }) |text| {
        const s = try string.fromLatin1(&heap, text);
        try std.testing.expectEqual(@as(?u64, null), integerKey(s));
    }
}
