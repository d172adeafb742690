//! TextEncoder and TextDecoder of the Encoding standard, UTF-8 only (what WinterTC's minimum
//! common API asks for): `encode`, `encodeInto`, and `decode` with `fatal` and `ignoreBOM`.
//!
//! Decision: an instance is a plain object linked to its builtin prototype, with its settings
//! as own read-only, hidden properties (`encoding`, `fatal`, `ignoreBOM`), so it needs no
//! object kind of its own; the prototype's getters of the spec become those properties.
//! Lone surrogates encode as U+FFFD (USVString); decoding replaces each maximal invalid
//! subsequence with one U+FFFD (urlsearchparams.decodeUtf8, the standard's decoder).
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const Object = object.Object;
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const typed_arrays = @import("typed_arrays.zig");
const arg = builtins.arg;

const fixed: object.PropertyFlags = .{ .not_enumerable = true, .read_only = true, .not_configurable = true };

/// A TypeError or RangeError with node's `code` (`ERR_INVALID_ARG_TYPE`...).
pub fn throwCoded(vm: *Vm, kind: object.ErrorKind, comptime code: []const u8, message: []const u8) Error {
    const e = try vm.newError(kind, message);
    const code_string = try vm.newLatin1(code);
    e.object.properties.put(vm.heap, names.string("code"), Value.string(code_string)) catch return vm.outOfMemory();
    return vm.throwValue(Value.obj(&e.object));
}

fn withPrototype(vm: *Vm, comptime prototype: []const u8) Error!*Object {
    const o = try vm.newObject(3);
    o.proto = Value.builtin(builtins.builtinId(prototype));
    return o;
}

pub fn isEncoder(o: *const Object) bool {
    return o.proto.eqlBits(Value.builtin(builtins.builtinId("%TextEncoder.prototype%")));
}

pub fn isDecoder(o: *const Object) bool {
    return o.proto.eqlBits(Value.builtin(builtins.builtinId("%TextDecoder.prototype%")));
}

pub fn requireNewEncoder(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Class constructor TextEncoder cannot be invoked without 'new'");
}

pub fn requireNewDecoder(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Class constructor TextDecoder cannot be invoked without 'new'");
}

pub fn constructEncoder(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    const o = try withPrototype(vm, "%TextEncoder.prototype%");
    o.properties.define(vm.heap, names.string("encoding"), Value.string(names.string("utf-8")), fixed) catch return vm.outOfMemory();
    return Value.obj(o);
}

/// `new TextDecoder(label?, { fatal, ignoreBOM }?)`: the labels of UTF-8 only.
pub fn constructDecoder(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const label = arg(args, 0);
    if (!label.isUndefined()) {
        const text = try ops.toString(vm, label);
        if (!isUtf8Label(text)) {
            var buf: [256]u8 = undefined;
            const message = std.fmt.bufPrint(&buf, "The \"{f}\" encoding is not supported", .{ops.StringFormat{ .s = text }}) catch "The encoding is not supported";
            return throwCoded(vm, .range_error, "ERR_ENCODING_NOT_SUPPORTED", message);
        }
    }
    const options = arg(args, 1);
    var fatal = false;
    var ignore_bom = false;
    if (options.is(.object)) {
        fatal = ops.toBoolean(try ops.getField(vm, options, names.string("fatal")));
        ignore_bom = ops.toBoolean(try ops.getField(vm, options, names.string("ignoreBOM")));
    }
    const o = try withPrototype(vm, "%TextDecoder.prototype%");
    o.properties.define(vm.heap, names.string("encoding"), Value.string(names.string("utf-8")), fixed) catch return vm.outOfMemory();
    o.properties.define(vm.heap, names.string("fatal"), Value.boolean(fatal), fixed) catch return vm.outOfMemory();
    o.properties.define(vm.heap, names.string("ignoreBOM"), Value.boolean(ignore_bom), fixed) catch return vm.outOfMemory();
    return Value.obj(o);
}

/// The Encoding standard's labels of UTF-8, compared after trimming ASCII white space and
/// case-insensitively.
fn isUtf8Label(s: *const String) bool {
    if (s.flags.wide) return false;
    const trimmed = std.mem.trim(u8, s.latin1(), " \t\n\x0C\r");
    const labels = [_][]const u8{ "utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8" };
    for (labels) |l| {
        if (std.ascii.eqlIgnoreCase(trimmed, l)) return true;
    }
    return false;
}

fn thisObject(vm: *Vm, this: Value, comptime check: fn (*const Object) bool, comptime what: []const u8) Error!*Object {
    if (this.is(.object) and check(this.asObject())) return this.asObject();
    return throwCoded(vm, .type_error, "ERR_INVALID_THIS", "Value of \"this\" must be of type " ++ what);
}

/// The scalar value at unit `i` and how many units it took (a lone surrogate is U+FFFD).
fn scalarAt(s: *const String, i: usize) struct { cp: u21, units: u32 } {
    const cp = string.codePointAtString(s, i);
    if (cp >= 0x10000) return .{ .cp = cp, .units = 2 };
    if (cp >= 0xD800 and cp <= 0xDFFF) return .{ .cp = 0xFFFD, .units = 1 };
    return .{ .cp = cp, .units = 1 };
}

fn utf8Length(cp: u21) u32 {
    return if (cp < 0x80) 1 else if (cp < 0x800) 2 else if (cp < 0x10000) 3 else 4;
}

/// Writes `cp` (a scalar value) as UTF-8 at the front of `out`.
fn writeScalar(cp: u21, out: []u8) void {
    _ = std.unicode.utf8Encode(cp, out) catch unreachable; // A scalar value, room checked.
}

pub fn encode(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = try thisObject(vm, this, isEncoder, "TextEncoder");
    const input = arg(args, 0);
    const s = if (input.isUndefined()) string.empty else try ops.toString(vm, input);
    try vm.charge(meter.elementsCost(s.len));
    var total: usize = 0;
    var i: usize = 0;
    while (i < s.len) {
        const scalar = scalarAt(s, i);
        total += utf8Length(scalar.cp);
        i += scalar.units;
    }
    const t = try typed_arrays.newTypedArray(vm, .uint8, total);
    const out = t.bytes();
    var written: usize = 0;
    i = 0;
    while (i < s.len) {
        const scalar = scalarAt(s, i);
        writeScalar(scalar.cp, out[written..]);
        written += utf8Length(scalar.cp);
        i += scalar.units;
    }
    assert(written == total);
    return Value.obj(&t.object);
}

/// `encodeInto(source, destination)`: as much of `source` as fits whole, and
/// `{ read, written }` in UTF-16 units and bytes.
pub fn encodeInto(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = try thisObject(vm, this, isEncoder, "TextEncoder");
    const s = try ops.toString(vm, arg(args, 0));
    const dest_value = arg(args, 1);
    const dest_object = dest_value.objectOf(.typed_array);
    if (dest_object == null or dest_object.?.as(object.TypedArray).element != .uint8) {
        var buf: [256]u8 = undefined;
        const message = std.fmt.bufPrint(&buf, "The \"dest\" argument must be an instance of Uint8Array. Received {f}", .{Received{ .vm = vm, .v = dest_value }}) catch "The \"dest\" argument must be an instance of Uint8Array.";
        return throwCoded(vm, .type_error, "ERR_INVALID_ARG_TYPE", message);
    }
    const dest = dest_object.?.as(object.TypedArray);
    try ops.checkModuleWrite(vm, dest.buffer);
    const out = dest.bytes();
    try vm.charge(meter.elementsCost(@min(s.len, out.len)));
    var read: usize = 0;
    var written: usize = 0;
    while (read < s.len) {
        const scalar = scalarAt(s, read);
        const n = utf8Length(scalar.cp);
        if (written + n > out.len) break;
        writeScalar(scalar.cp, out[written..]);
        written += n;
        read += scalar.units;
    }
    const result = try vm.newObject(2);
    result.properties.put(vm.heap, names.string("read"), Value.number(@floatFromInt(read))) catch return vm.outOfMemory();
    result.properties.put(vm.heap, names.string("written"), Value.number(@floatFromInt(written))) catch return vm.outOfMemory();
    return Value.obj(result);
}

/// How node's ERR_INVALID_ARG_TYPE names what it received: `an instance of Array`,
/// `type number (5)`, `undefined`.
const Received = struct {
    vm: *Vm,
    v: Value,

    pub fn format(self: Received, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const v = self.v;
        if (v.isNullish()) return w.writeAll(if (v.isNull()) "null" else "undefined");
        if (v.is(.object)) {
            const constructor = ops.getField(self.vm, v, names.string("constructor")) catch return w.writeAll("an instance of Object");
            const name = ops.getField(self.vm, constructor, names.string("name")) catch return w.writeAll("an instance of Object");
            if (!name.isString()) return w.writeAll("an instance of Object");
            try w.writeAll("an instance of ");
            return string.writeUtf8(w, name.asString());
        }
        try w.writeAll("type ");
        try string.writeUtf8(w, ops.typeOf(self.vm, v));
        try w.writeAll(" (");
        if (v.isString()) {
            try w.writeByte('\'');
            try string.writeUtf8(w, v.asString());
            try w.writeByte('\'');
        } else {
            try (ops.ShortFormat{ .vm = self.vm, .v = v }).format(w);
        }
        return w.writeByte(')');
    }
};

/// `decode(input?, options?)`: the bytes of a typed array or an ArrayBuffer as a string.
/// `{ stream: true }` is not kept: each call decodes its bytes whole (docs/JS.md).
pub fn decode(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const decoder = try thisObject(vm, this, isDecoder, "TextDecoder");
    const input = arg(args, 0);
    var bytes: []const u8 = &.{};
    if (input.objectOf(.typed_array)) |o| {
        bytes = o.as(object.TypedArray).bytes();
    } else if (input.objectOf(.array_buffer)) |o| {
        bytes = o.as(object.ArrayBuffer).slice();
    } else if (!input.isUndefined()) {
        return throwCoded(vm, .type_error, "ERR_INVALID_ARG_TYPE", "The \"list\" argument must be an instance of SharedArrayBuffer, ArrayBuffer or ArrayBufferView.");
    }
    const fatal = decoder.properties.get(names.string("fatal")).?.eqlBits(Value.true_value);
    const ignore_bom = decoder.properties.get(names.string("ignoreBOM")).?.eqlBits(Value.true_value);
    if (!ignore_bom and std.mem.startsWith(u8, bytes, "\xEF\xBB\xBF")) bytes = bytes[3..];
    try vm.charge(meter.bytesCost(bytes.len));
    if (fatal and !std.unicode.utf8ValidateSlice(bytes)) {
        return throwCoded(vm, .type_error, "ERR_ENCODING_INVALID_ENCODED_DATA", "The encoded data was not valid for encoding utf-8");
    }
    if (bytes.len == 0) return Value.string(string.empty);
    return Value.string(try builtins.urlsearchparams.decodeUtf8(vm, bytes));
}

/// console.log's text for an encoder or decoder, as node's custom inspect writes it.
pub fn inspectText(o: *const Object, buf: []u8) ?[]const u8 {
    if (isEncoder(o)) return "{ encoding: 'utf-8' }";
    if (!isDecoder(o)) return null;
    const fatal = o.properties.get(names.string("fatal")).?.eqlBits(Value.true_value);
    const ignore_bom = o.properties.get(names.string("ignoreBOM")).?.eqlBits(Value.true_value);
    return std.fmt.bufPrint(buf, "TextDecoder {{ encoding: 'utf-8', fatal: {}, ignoreBOM: {} }}", .{ fatal, ignore_bom }) catch unreachable;
}

test "text encoding: a scalar value takes 1 to 4 bytes of UTF-8" {
    try std.testing.expectEqual(@as(u32, 1), utf8Length('a'));
    try std.testing.expectEqual(@as(u32, 2), utf8Length(0xE9));
    try std.testing.expectEqual(@as(u32, 3), utf8Length(0xFFFD));
    try std.testing.expectEqual(@as(u32, 4), utf8Length(0x1F600));
}
