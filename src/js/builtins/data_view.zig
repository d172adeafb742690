//! `DataView`, as ECMAScript defines it and node 20 (V8) runs it: a window of an
//! ArrayBuffer read and written as 8-, 16- and 32-bit integers and 32- and 64-bit floats,
//! big-endian unless the last argument says little; V8's RangeErrors for offsets outside
//! the window and for a window outside the buffer.
//!
//! Decision: like a Headers or a URL, a DataView is a Map-kind object whose prototype link
//! is `DataView.prototype`, holding its buffer, byte offset and byte length in entries no
//! script can see; the getters `buffer`, `byteOffset` and `byteLength` read them. The
//! BigInt methods (`getBigInt64`...) are not here: the engine has no BigInt.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const String = @import("../string.zig").String;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const arg = builtins.arg;

const buffer_key = Value.number(0);
const offset_key = Value.number(1);
const length_key = Value.number(2);

pub fn isDataView(o: *const object.Object) bool {
    return o.kind == .map and o.proto.eqlBits(Value.builtin(builtins.builtinId("%DataView.prototype%")));
}

pub fn isField(key: *String) bool {
    return names.is(key, "buffer") or names.is(key, "byteOffset") or names.is(key, "byteLength");
}

/// `buffer`, `byteOffset` or `byteLength` (`isField` chose the key).
pub fn field(o: *object.Object, key: *String) Value {
    const m = object.mapOf(o);
    if (names.is(key, "buffer")) return m.get(buffer_key).?;
    if (names.is(key, "byteOffset")) return m.get(offset_key).?;
    return m.get(length_key).?;
}

const View = struct { bytes: []u8, buffer: *object.ArrayBuffer };

fn viewOf(o: *object.Object) View {
    const m = object.mapOf(o);
    const buffer = m.get(buffer_key).?.asObject().as(object.ArrayBuffer);
    const offset: usize = @intFromFloat(m.get(offset_key).?.asNumber());
    const len: usize = @intFromFloat(m.get(length_key).?.asNumber());
    return .{ .bytes = buffer.slice()[offset..][0..len], .buffer = buffer };
}

pub fn requireNew(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.throwMessage(.type_error, "Constructor DataView requires 'new'");
}

/// ECMAScript's ToIntegerOrInfinity.
fn toInteger(vm: *Vm, v: Value) Error!f64 {
    const x = try ops.toNumber(vm, v);
    if (std.math.isNan(x)) return 0;
    return @trunc(x);
}

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const buffer_v = arg(args, 0);
    const buffer = if (buffer_v.objectOf(.array_buffer)) |b| b.as(object.ArrayBuffer) else {
        return vm.throwMessage(.type_error, "First argument to DataView constructor must be an ArrayBuffer");
    };
    const buffer_len: f64 = @floatFromInt(buffer.len);
    const offset = try toInteger(vm, arg(args, 1));
    if (offset < 0 or offset > buffer_len) {
        return vm.throwFmt(.range_error, "Start offset {d} is outside the bounds of the buffer", .{offset});
    }
    var len = buffer_len - offset;
    if (!arg(args, 2).isUndefined()) {
        len = try toInteger(vm, arg(args, 2));
        if (len < 0 or offset + len > buffer_len) return vm.throwFmt(.range_error, "Invalid DataView length {d}", .{len});
    }
    const m = object.newMap(vm.heap, .map) catch return vm.outOfMemory();
    m.object.proto = Value.builtin(builtins.builtinId("%DataView.prototype%"));
    m.put(vm.heap, buffer_key, buffer_v) catch return vm.outOfMemory();
    m.put(vm.heap, offset_key, Value.number(offset)) catch return vm.outOfMemory();
    m.put(vm.heap, length_key, Value.number(len)) catch return vm.outOfMemory();
    return Value.obj(&m.object);
}

fn thisView(vm: *Vm, this: Value, comptime method: []const u8) Error!View {
    if (this.is(.object) and isDataView(this.asObject())) return viewOf(this.asObject());
    return vm.throwMessage(.type_error, "Method DataView.prototype." ++ method ++ " called on incompatible receiver " ++ "[object Object]");
}

/// The bytes [index, index + size) of the view, or V8's RangeError.
fn window(vm: *Vm, view: View, index: f64, size: usize) Error![]u8 {
    const len: f64 = @floatFromInt(view.bytes.len);
    if (index < 0 or index + @as(f64, @floatFromInt(size)) > len) {
        return vm.throwMessage(.range_error, "Offset is outside the bounds of the DataView");
    }
    return view.bytes[@intFromFloat(index)..][0..size];
}

fn endian(little: Value) std.builtin.Endian {
    return if (ops.toBoolean(little)) .little else .big;
}

/// `getInt8`...`getFloat64`: `T` is the element's type.
pub fn getter(comptime T: type, comptime method: []const u8) builtins.NativeFn {
    return struct {
        fn get(vm: *Vm, this: Value, args: []const Value) Error!Value {
            const view = try thisView(vm, this, method);
            const index = try toInteger(vm, arg(args, 0));
            const bytes = try window(vm, view, index, @sizeOf(T));
            const Bits = @Int(.unsigned, @bitSizeOf(T));
            const bits = std.mem.readInt(Bits, bytes[0..@sizeOf(T)], endian(arg(args, 1)));
            const x: T = @bitCast(bits);
            return Value.number(if (@typeInfo(T) == .float) @floatCast(x) else @floatFromInt(x));
        }
    }.get;
}

/// `setInt8`...`setFloat64`: the value converted as a typed array's element would be
/// (integers modulo 2^n), written in the chosen byte order.
pub fn setter(comptime T: type, comptime method: []const u8) builtins.NativeFn {
    return struct {
        fn set(vm: *Vm, this: Value, args: []const Value) Error!Value {
            const view = try thisView(vm, this, method);
            const index = try toInteger(vm, arg(args, 0));
            const x = try ops.toNumber(vm, arg(args, 1));
            const order = endian(arg(args, 2));
            const bytes = try window(vm, view, index, @sizeOf(T));
            try ops.checkModuleWrite(vm, view.buffer);
            const Bits = @Int(.unsigned, @bitSizeOf(T));
            const bits: Bits = if (@typeInfo(T) == .float) @bitCast(@as(T, @floatCast(x))) else @truncate(modular(x));
            std.mem.writeInt(Bits, bytes[0..@sizeOf(T)], bits, order);
            return Value.undefined_value;
        }
    }.set;
}

/// ECMAScript's ToUint32: NaN and the infinities are 0, the rest truncated modulo 2^32.
fn modular(x: f64) u32 {
    if (!std.math.isFinite(x)) return 0;
    return @intFromFloat(@mod(@trunc(x), 4294967296.0));
}

test "data_view: ToUint32 wraps and truncates" {
    try std.testing.expectEqual(@as(u32, 0xFFFFFFFF), modular(-1));
    try std.testing.expectEqual(@as(u8, 44), @as(u8, @truncate(modular(300))));
    try std.testing.expectEqual(@as(u32, 2), modular(2.9));
    try std.testing.expectEqual(@as(u32, 0), modular(std.math.inf(f64)));
}
