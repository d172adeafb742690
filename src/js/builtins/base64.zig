//! `atob` and `btoa`, as WinterTC's minimum common API and the HTML standard define them, and
//! as node 20 implements them: `btoa` encodes a string of Latin-1 units as base64, `atob`
//! decodes "forgiving base64" (ASCII white space skipped, `=` padding optional) into one.
//!
//! Decision: the errors are node's, checked in node's order (an invalid character, a `=` before
//! the end or more than two; then one character left over; then padding that completes no
//! group of four), so that scripts that print `e.name` and `e.message` agree. node throws a
//! `DOMException`; there is no DOMException here, so the error is an `Error` whose own `name`
//! is `InvalidCharacterError` and whose `code` is 5, as a DOMException's are (docs/JS.md,
//! "Web APIs").
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const meter = @import("../meter.zig");

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The 6-bit value of each base64 character; `none` for the rest.
const none: u8 = 0xFF;
const decode_table: [256]u8 = blk: {
    var t: [256]u8 = @splat(none);
    for (alphabet, 0..) |c, i| t[c] = i;
    break :blk t;
};

/// The ASCII white space `atob` skips (the infra standard's: tab, LF, FF, CR, space).
fn isAsciiWhitespace(u: u16) bool {
    return u == '\t' or u == '\n' or u == 0x0C or u == '\r' or u == ' ';
}

/// The one argument both take, converted as node's template literal converts it.
fn input(vm: *Vm, args: []const Value) Error!*String {
    if (args.len == 0) return vm.throwMessage(.type_error, "The \"input\" argument must be specified");
    return ops.toString(vm, args[0]);
}

/// node's DOMException for both functions: an Error named InvalidCharacterError, code 5.
fn throwInvalidCharacter(vm: *Vm, message: []const u8) Error {
    return throwDomException(vm, "InvalidCharacterError", 5, message);
}

/// What stands for a DOMException (there is none in the language): an Error whose own
/// `name` and `code` are the DOMException's, not enumerable, as a DOMException's getters.
pub fn throwDomException(vm: *Vm, comptime name: []const u8, code: u8, message: []const u8) Error {
    const e = try vm.newError(.@"error", message);
    const hidden = object.PropertyFlags.hidden;
    const name_string = try vm.newLatin1(name);
    e.object.properties.define(vm.heap, names.string("name"), Value.string(name_string), hidden) catch return vm.outOfMemory();
    e.object.properties.define(vm.heap, names.string("code"), Value.number(@floatFromInt(code)), hidden) catch return vm.outOfMemory();
    return vm.throwValue(Value.obj(&e.object));
}

pub fn btoa(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const s = try input(vm, args);
    try vm.charge(meter.unitsCost(s.len));
    var i: usize = 0;
    while (i < s.len) : (i += 1) {
        if (s.at(i) > 0xFF) return throwInvalidCharacter(vm, "Invalid character");
    }
    const out_len = std.base64.standard.Encoder.calcSize(s.len);
    var out = string.Builder.init(vm.heap, out_len, false) catch return vm.outOfMemory();
    var group: [3]u8 = undefined;
    var start: usize = 0;
    while (start < s.len) : (start += 3) {
        const n = @min(3, s.len - start);
        for (0..n) |k| group[k] = @intCast(s.at(start + k));
        var encoded: [4]u8 = undefined;
        out.appendLatin1(std.base64.standard.Encoder.encode(&encoded, group[0..n]));
    }
    assert(out.len == out_len);
    return Value.string(out.finish() catch return vm.outOfMemory());
}

/// What `atob`'s checks found: the count of base64 characters (padding excluded).
fn checkForgiving(vm: *Vm, s: *const String) Error!usize {
    var significant: usize = 0;
    var equals: usize = 0;
    var i: usize = 0;
    while (i < s.len) : (i += 1) {
        const u = s.at(i);
        if (isAsciiWhitespace(u)) continue;
        if (u == '=') {
            equals += 1;
            if (equals > 2) return throwInvalidCharacter(vm, "Invalid character");
        } else if (u > 0xFF or decode_table[u] == none or equals > 0) {
            // Past the first `=` only more `=` may come.
            return throwInvalidCharacter(vm, "Invalid character");
        }
        significant += 1;
    }
    const data = significant - equals;
    // A lone character left over is reported before padding that completes no group.
    if (data % 4 == 1) return throwInvalidCharacter(vm, "The string to be decoded is not correctly encoded.");
    if (equals > 0 and significant % 4 != 0) return throwInvalidCharacter(vm, "Invalid character");
    return data;
}

pub fn atob(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const s = try input(vm, args);
    try vm.charge(meter.unitsCost(s.len));
    const data = try checkForgiving(vm, s);
    // Each character carries 6 bits; the bits of an incomplete last byte are dropped.
    const out_len = data * 6 / 8;
    var out = string.Builder.init(vm.heap, out_len, false) catch return vm.outOfMemory();
    var bits: u32 = 0;
    var bit_count: u5 = 0;
    var i: usize = 0;
    while (i < s.len) : (i += 1) {
        const u = s.at(i);
        if (isAsciiWhitespace(u)) continue;
        if (u == '=') break;
        // Only the bits not yet written matter: at most 6 + 7 of them.
        bits = ((bits << 6) | decode_table[u]) & 0x3FFF;
        bit_count += 6;
        if (bit_count >= 8) {
            bit_count -= 8;
            out.append(@intCast((bits >> bit_count) & 0xFF));
        }
    }
    assert(out.len == out_len);
    return Value.string(out.finish() catch return vm.outOfMemory());
}
