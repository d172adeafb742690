//! What a run has changed of the builtins. The builtins are compiled-in tables shared by
//! every engine, so a change cannot be written into them: it is a list in the run's heap,
//! newest first, that the lookups consult before the tables. A change replaces a member
//! (`Array.prototype.map = f`, `Object.defineProperty(Math, "PI", ...)` where its
//! attributes allow), adds one (`Array.prototype.last = ...`, an accessor too), or deletes
//! one (`delete Promise.all`, `delete f.name`), on a builtin object (a `.builtin` value:
//! a constructor, a prototype, a namespace) or a builtin function (a `.native` value).
//!
//! The decision a reader must know: the list is persistent, never written in place. The
//! module's top level leaves its list (module state), and each request starts from it
//! (`Vm.startRun`) and prepends its own changes in its own heap, so a request's changes are
//! private to it, the next request sees the module's view, and the module's memory is never
//! written from a request. A suspended request keeps its head (`Vm.Suspension`). A run with
//! no changes pays one branch per builtin member read (`vm.builtin_changes == null`); a run
//! with some pays a walk of its list, charged to the budget per entry.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const Value = @import("value.zig").Value;
const String = @import("string.zig").String;
const object = @import("object.zig");
const names = @import("names.zig");
const meter = @import("meter.zig");
const builtins = @import("builtins.zig");

pub const Change = struct {
    /// The builtin object (`.builtin`) or function (`.native`) changed.
    target: Value,
    key: *String,
    /// The member's value (an `Accessor` object when `flags.accessor`); `hole`: deleted.
    value: Value,
    flags: object.PropertyFlags,
    next: ?*const Change,
};

/// An own member of a builtin: its value (an Accessor when `flags.accessor`) and attributes.
pub const Member = struct { value: Value, flags: object.PropertyFlags };

/// The attributes of a builtin method (and of a member a script adds by assignment, less
/// `not_enumerable`): writable and configurable, not enumerable, as the spec gives them.
pub const method_flags: object.PropertyFlags = .{ .not_enumerable = true };
/// Math.PI, Number.MAX_VALUE, a constructor's `prototype`, the well-known symbols.
pub const fixed_flags: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true, .not_configurable = true };
/// A function's `name` and `length`: read-only, configurable.
pub const intrinsic_flags: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true };

fn sameKey(a: *const String, b: *const String) bool {
    if (a == b) return true;
    if (a.flags.symbol or b.flags.symbol) return false;
    return a.eql(b);
}

/// The newest change of `key` of `target` in this run, if any.
pub fn find(vm: *Vm, target: Value, key: *const String) Error!?*const Change {
    var entry = vm.builtin_changes;
    while (entry) |e| : (entry = e.next) {
        try vm.charge(meter.elementsCost(1));
        if (e.target.eqlBits(target) and sameKey(e.key, key)) return e;
    }
    return null;
}

/// Whether `key` of the builtin `target` is deleted in this run.
pub fn isDeleted(vm: *Vm, target: Value, key: *String) Error!bool {
    if (vm.builtin_changes == null) return false;
    const change = (try find(vm, target, key)) orelse return false;
    return change.value.eqlBits(Value.hole);
}

fn prepend(vm: *Vm, target: Value, key: *String, value: Value, flags: object.PropertyFlags) Error!void {
    assert(target.is(.builtin) or target.is(.native));
    const change = vm.heap.create(Change) catch return vm.outOfMemory();
    change.* = .{ .target = target, .key = key, .value = value, .flags = flags, .next = vm.builtin_changes };
    vm.builtin_changes = change;
}

/// Deletes `key` of `target` for the rest of the run (the caller checked it may).
pub fn delete(vm: *Vm, target: Value, key: *String) Error!void {
    if (try isDeleted(vm, target, key)) return;
    try prepend(vm, target, key, Value.hole, .{});
}

/// Sets `key` of `target` to `value` with `flags` for the rest of the run.
pub fn put(vm: *Vm, target: Value, key: *String, value: Value, flags: object.PropertyFlags) Error!void {
    assert(!value.eqlBits(Value.hole));
    try prepend(vm, target, key, value, flags);
}

/// The own member `key` of a builtin object or function as the run sees it: changed, or the
/// tables'; null when it has none.
pub fn ownMember(vm: *Vm, target: Value, key: *String) Error!?Member {
    if (vm.builtin_changes != null) if (try find(vm, target, key)) |c| {
        if (c.value.eqlBits(Value.hole)) return null;
        return .{ .value = c.value, .flags = c.flags };
    };
    return tableMember(vm, target, key);
}

/// The own member `key` as the compiled-in tables have it, with the spec's attributes:
/// methods writable and configurable, numbers (Math.PI), symbols and `prototype` fixed, a
/// function's `name` and `length` read-only but configurable.
pub fn tableMember(vm: *Vm, target: Value, key: *String) Error!?Member {
    if (target.is(.native)) {
        if (!names.is(key, "name") and !names.is(key, "length")) return null;
        const native = builtins.native(vm, @intCast(target.payload()));
        const value = if (names.is(key, "name")) Value.string(try vm.newLatin1(native.name)) else Value.number(@floatFromInt(native.length));
        return .{ .value = value, .flags = intrinsic_flags };
    }
    const id: u32 = @intCast(target.payload());
    const function_proto = comptime builtins.builtinId("%Function.prototype%");
    if (id == function_proto and (names.is(key, "name") or names.is(key, "length"))) {
        // Function.prototype is a function named "" of length 0: what a function whose own
        // name or length was deleted inherits.
        return .{ .value = if (names.is(key, "name")) Value.string(@import("string.zig").empty) else Value.number(0), .flags = intrinsic_flags };
    }
    if (!hasOwnInTable(vm, id, key)) return null;
    const value = try builtins.staticMember(vm, id, key);
    if (id >= builtins.builtin_objects.len and value.isUndefined()) return null;
    if (names.is(key, "name") or names.is(key, "length")) return .{ .value = value, .flags = intrinsic_flags };
    if (value.isNumber() or value.is(.symbol) or names.is(key, "prototype")) return .{ .value = value, .flags = fixed_flags };
    return .{ .value = value, .flags = method_flags };
}

fn hasOwnInTable(vm: *Vm, id: u32, key: *String) bool {
    if (id >= builtins.builtin_objects.len) return true; // A host object: staticMember says.
    _ = vm;
    const o = builtins.builtin_objects[id];
    if (builtins.classMember(o.class, key) != null) return true;
    if (names.is(key, "prototype")) return o.prototype != null;
    if (names.is(key, "constructor")) return o.constructor_of != null;
    if (names.is(key, "name") or names.is(key, "length")) return builtins.isCallableBuiltin(id);
    return false;
}

/// `key` read from the builtin `target` with changes in the run: its own member (a getter
/// run with `receiver`), else its prototype's, up the builtins' chain.
pub fn get(vm: *Vm, target: Value, key: *String, receiver: Value) Error!Value {
    assert(vm.builtin_changes != null);
    var current = target;
    var depth: u32 = 0;
    while (depth < 8) : (depth += 1) {
        if (try ownMember(vm, current, key)) |m| {
            if (m.flags.accessor) return @import("operations.zig").callGetter(vm, m.value, receiver);
            return m.value;
        }
        current = parentOf(current);
        if (current.isNull()) return Value.undefined_value;
    }
    unreachable; // The builtins' chain is at most four long (Object.prototype ends it).
}

/// The member `key` of the builtin `start` or of its chain, as the run sees them.
pub fn inheritedMember(vm: *Vm, start: Value, key: *String) Error!?Member {
    var current = start;
    while (current.is(.builtin) or current.is(.native)) : (current = parentOf(current)) {
        if (try ownMember(vm, current, key)) |m| return m;
    }
    return null;
}

/// Whether the builtin `target` or its chain has `key`, as the run sees them (`in`).
pub fn has(vm: *Vm, target: Value, key: *String) Error!bool {
    var current = target;
    while (!current.isNull()) : (current = parentOf(current)) {
        if (try ownMember(vm, current, key) != null) return true;
    }
    return false;
}

/// `target.key = v` on a builtin (strict mode: a refused write throws): an own member's
/// attributes decide, then an inherited setter or read-only member (Object.prototype's),
/// else a new member, writable, enumerable and configurable, as assignment makes one.
pub fn assign(vm: *Vm, target: Value, key: *String, v: Value) Error!void {
    var current = target;
    while (!current.isNull()) : (current = parentOf(current)) {
        const m = (try ownMember(vm, current, key)) orelse continue;
        if (m.flags.accessor) {
            const setter = m.value.asObject().as(object.Accessor).setter;
            if (setter.isUndefined()) return throwNoSetter(vm, target, key);
            _ = try vm.call(setter, target, &.{v});
            return;
        }
        if (m.flags.read_only) return throwReadOnly(vm, target, key);
        if (!current.eqlBits(target)) break; // Inherited and writable: a new own member.
        return put(vm, target, key, v, m.flags);
    }
    return put(vm, target, key, v, .{});
}

fn throwReadOnly(vm: *Vm, target: Value, key: *String) Error {
    const ops = @import("operations.zig");
    return vm.throwFmt(.type_error, "Cannot assign to read only property '{f}' of {s} '{f}'", .{
        ops.KeyFormat{ .s = key }, if (ops.isCallable(target)) "function" else "object", ops.ValueText{ .vm = vm, .v = target },
    });
}

fn throwNoSetter(vm: *Vm, target: Value, key: *String) Error {
    const ops = @import("operations.zig");
    return vm.throwFmt(.type_error, "Cannot set property {f} of {f} which has only a getter", .{ ops.KeyFormat{ .s = key }, ops.ValueText{ .vm = vm, .v = target } });
}

/// What a builtin object or function inherits from.
pub fn parentOf(target: Value) Value {
    if (target.is(.native)) return Value.builtin(comptime builtins.builtinId("%Function.prototype%"));
    return builtins.prototypeOfBuiltin(@intCast(target.payload()));
}

/// The run's own string keys of `target` (`.all`: those the tables do not have; `.enumerable`:
/// the enumerable ones), each once and not deleted since, appended to `out` in the order of
/// their latest change (a key added once is
/// where it was added, as node's order of creation), for `getOwnPropertyNames` and the rest.
pub fn addedKeys(vm: *Vm, target: Value, out: *object.Array, which: enum { all, enumerable }) Error!void {
    const start = out.len;
    var entry = vm.builtin_changes;
    while (entry) |e| : (entry = e.next) {
        try vm.charge(meter.elementsCost(1));
        if (!e.target.eqlBits(target) or e.value.eqlBits(Value.hole) or e.key.flags.symbol) continue;
        if (which == .enumerable and e.flags.not_enumerable) continue;
        // The tables' keys are listed with the tables' (all of them: not enumerable).
        if (which == .all and try tableMember(vm, target, e.key) != null) continue;
        if ((try find(vm, target, e.key)).? != e) continue; // A later change of the key rules.
        out.push(vm.heap, Value.string(e.key)) catch return vm.outOfMemory();
    }
    std.mem.reverse(Value, out.slice()[start..]);
}
