//! Symbols: `Symbol(description)`, `Symbol.for`/`keyFor` and the well-known symbols
//! (Symbol.iterator, asyncIterator, toPrimitive, toStringTag...).
//!
//! The one decision a reader must know: a symbol *is* its property key. A symbol value points
//! at a `String` header flagged `symbol`, of length 0, whose `ptr` points at the symbol's
//! description (or at `no_description`). Objects store properties keyed by `*String`, and a
//! symbol key matches only itself (object.Properties compares it by address, `String.eql`
//! refuses it), so symbol-keyed properties need nothing new in the object model, and no text
//! comparison (`key.eqlLatin1("constructor")`) can ever mistake a symbol for a name. The
//! well-known symbols are static keys in names.zig ("@@iterator"), whose name id indexes the
//! builtin method tables like any other name: Array.prototype[Symbol.iterator] is one lookup.
//!
//! `Symbol.for`'s registry is a list in the run's heap; the engine puts it back to the
//! module's list at each request, as it resets the heap (Engine.beginRequest).
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const Value = @import("value.zig").Value;
const string = @import("string.zig");
const String = string.String;
const names = @import("names.zig");
const meter = @import("meter.zig");

/// What a symbol made without a description points at.
var no_description: u8 = 0;

/// An entry of `Symbol.for`'s registry.
pub const Registered = struct {
    key: *String,
    next: ?*Registered,
};

/// A new symbol with this description (null: none).
pub fn create(vm: *Vm, text: ?*const String) Error!*String {
    const key = vm.heap.create(String) catch return vm.outOfMemory();
    const address = @intFromPtr(key);
    key.* = .{
        .ptr = if (text) |d| @ptrCast(d) else @ptrCast(&no_description),
        .len = 0,
        // Unique per symbol; a hash index spreads symbols like any other keys.
        .hash_value = @truncate((address >> 3) *% 0x9E3779B97F4A7C15 >> 32),
        .flags = .{ .hashed = true, .index = .no, .symbol = true },
        .name_id = String.name_none,
    };
    return key;
}

/// A symbol's description, or null if it has none.
pub fn description(key: *const String) ?*String {
    assert(key.flags.symbol);
    if (key.ptr == @as([*]const u8, @ptrCast(&no_description))) return null;
    return @ptrCast(@alignCast(@constCast(key.ptr)));
}

/// `Symbol.for(s)`: the registry's symbol of that description, made on first use.
pub fn registered(vm: *Vm, text: *String) Error!*String {
    var entry = vm.symbol_registry;
    while (entry) |e| : (entry = e.next) {
        try vm.charge(meter.elementsCost(1));
        if (description(e.key).?.eql(text)) return e.key;
    }
    const key = try create(vm, text);
    const node = vm.heap.create(Registered) catch return vm.outOfMemory();
    node.* = .{ .key = key, .next = vm.symbol_registry };
    vm.symbol_registry = node;
    return key;
}

/// `Symbol.keyFor(sym)`: the registry's description of a symbol, if it is registered.
pub fn registryKey(vm: *Vm, key: *const String) Error!?*String {
    var entry = vm.symbol_registry;
    while (entry) |e| : (entry = e.next) {
        try vm.charge(meter.elementsCost(1));
        if (e.key == key) return description(key).?;
    }
    return null;
}

/// `Symbol(desc)` as String(sym) and inspect write it.
pub fn writeDescriptive(w: *std.Io.Writer, key: *const String) std.Io.Writer.Error!void {
    try w.writeAll("Symbol(");
    if (description(key)) |d| try string.writeUtf8(w, d);
    try w.writeByte(')');
}

/// `Symbol(desc)` as a string of the run (String(sym), sym.toString()).
pub fn descriptiveString(vm: *Vm, key: *const String) Error!*String {
    const d = description(key) orelse return vm.newLatin1("Symbol()");
    var b = string.Builder.init(vm.heap, d.len + 8, d.flags.wide) catch return vm.outOfMemory();
    try vm.charge(meter.bytesCost(d.byteLen()));
    b.appendLatin1("Symbol(");
    b.appendString(d);
    b.appendLatin1(")");
    return b.finish() catch vm.outOfMemory();
}

/// A well-known symbol, by its name in names.zig ("@@iterator").
pub fn wellKnown(comptime name: []const u8) *String {
    comptime assert(names.isSymbolName(name));
    return names.string(name);
}

test "symbol: well-known keys are symbols with descriptions and match no string" {
    const it = wellKnown("@@iterator");
    try std.testing.expect(it.flags.symbol);
    try std.testing.expect(description(it).?.eqlLatin1("Symbol.iterator"));
    try std.testing.expect(!it.eql(string.empty));
    try std.testing.expect(names.lookup("@@iterator") == null);
}
