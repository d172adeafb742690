//! What a run has changed of the builtins. The builtins are compiled-in tables shared by
//! every engine, so a change cannot be written into them: it is a list in the run's heap,
//! newest first, that the lookups consult before the tables. For now the one change is the
//! spec's: `delete f.name` and `delete f.length` of a builtin function (both configurable),
//! after which the function inherits Function.prototype's ("" and 0).
//!
//! The decision a reader must know: the list is persistent, never written in place. The
//! module's top level leaves its list (module state), and each request starts from it
//! (`Vm.startRun`) and prepends its own changes in its own heap, so a request that deletes a
//! builtin's name leaves the next request the module's view, and the module's memory is never
//! written from a request. A suspended request keeps its head (`Vm.Suspension`).
const std = @import("std");

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const Value = @import("value.zig").Value;
const String = @import("string.zig").String;
const names = @import("names.zig");
const meter = @import("meter.zig");

pub const Change = struct {
    /// The builtin function (a `.native` or a callable `.builtin` value).
    target: Value,
    /// `name` or `length`.
    key: *String,
    next: ?*const Change,
};

/// Whether `key` of the builtin `target` is deleted in this run.
pub fn isDeleted(vm: *Vm, target: Value, key: *String) Error!bool {
    if (vm.builtin_changes == null) return false;
    if (!isIntrinsic(key)) return false;
    const canonical = canonicalKey(key);
    var entry = vm.builtin_changes;
    while (entry) |e| : (entry = e.next) {
        try vm.charge(meter.elementsCost(1));
        if (e.target.eqlBits(target) and e.key == canonical) return true;
    }
    return false;
}

/// Deletes a builtin function's `name` or `length` for the rest of the run.
pub fn delete(vm: *Vm, target: Value, key: *String) Error!void {
    std.debug.assert(isIntrinsic(key));
    const canonical = canonicalKey(key);
    if (try isDeleted(vm, target, canonical)) return;
    const change = vm.heap.create(Change) catch return vm.outOfMemory();
    change.* = .{ .target = target, .key = canonical, .next = vm.builtin_changes };
    vm.builtin_changes = change;
}

/// The keys a change may name: a function's `name` and `length`.
pub fn isIntrinsic(key: *String) bool {
    return names.is(key, "name") or names.is(key, "length");
}

/// The static string of an intrinsic key, so entries compare by address.
fn canonicalKey(key: *String) *String {
    return if (names.is(key, "name")) names.string("name") else names.string("length");
}
