//! Global functions (parseInt, parseFloat, isNaN, isFinite, the URI functions), the String,
//! Number and Boolean conversions, Boolean.prototype and Date.now.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

/// The ASCII prefix of a string after its leading white space, in `buf` (parseInt and
/// parseFloat stop at the first character that is not ASCII anyway).
fn asciiPrefix(s: *const String, buf: []u8) []const u8 {
    var i: usize = 0;
    while (i < s.len and number.isSpace(s.at(i))) i += 1;
    var n: usize = 0;
    while (i < s.len and n < buf.len) : (i += 1) {
        const u = s.at(i);
        if (u > 0x7F) break;
        buf[n] = @intCast(u);
        n += 1;
    }
    // The units scanned, and the parse of what was kept.
    meter.charge(meter.unitsCost(i + n));
    return buf[0..n];
}

pub fn parseInt(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const s = try ops.toString(vm, arg(args, 0));
    const radix = number.toInt32(try ops.toNumber(vm, arg(args, 1)));
    var buf: [4096]u8 = undefined;
    return Value.number(number.parseIntPrefix(asciiPrefix(s, &buf), radix));
}

pub fn parseFloat(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const s = try ops.toString(vm, arg(args, 0));
    var buf: [4096]u8 = undefined;
    return Value.number(number.parseFloatPrefix(asciiPrefix(s, &buf)));
}

pub fn isNaN(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return Value.boolean(std.math.isNan(try ops.toNumber(vm, arg(args, 0))));
}

pub fn isFinite(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const x = try ops.toNumber(vm, arg(args, 0));
    return Value.boolean(!std.math.isNan(x) and !std.math.isInf(x));
}

pub fn stringCall(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    if (args.len == 0) return Value.string(string.empty);
    // String(sym) is the one conversion of a symbol to a string that does not throw.
    if (args[0].is(.symbol)) return Value.string(try @import("../symbol.zig").descriptiveString(vm, args[0].asSymbolKey()));
    return Value.string(try ops.toString(vm, args[0]));
}

pub fn numberCall(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    if (args.len == 0) return Value.number(0);
    return Value.number(try ops.toNumber(vm, args[0]));
}

pub fn booleanCall(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    return Value.boolean(ops.toBoolean(arg(args, 0)));
}

pub fn booleanToString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    if (!this.isBool()) return vm.throwMessage(.type_error, "Boolean.prototype.toString requires that 'this' be a Boolean");
    return Value.string(if (this.eqlBits(Value.true_value)) names.string("true") else names.string("false"));
}

pub fn booleanValueOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    if (!this.isBool()) return vm.throwMessage(.type_error, "Boolean.prototype.valueOf requires that 'this' be a Boolean");
    return this;
}

pub fn dateNow(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    _ = args;
    var ts: std.os.linux.timespec = undefined;
    _ = std.os.linux.clock_gettime(.REALTIME, &ts);
    const ms = @as(i64, ts.sec) * 1000 + @divTrunc(@as(i64, ts.nsec), 1_000_000);
    return Value.number(@floatFromInt(ms));
}

// ---------------------------------------------------------------------------------------
// URI encoding: UTF-8, percent-encoded with upper-case hex.

const component_unreserved = "-_.!~*'()";
const uri_reserved = ";/?:@&=+$,#";

fn isUnreserved(c: u16, extra: []const u8) bool {
    if (c >= 0x80) return false;
    const b: u8 = @intCast(c);
    if (std.ascii.isAlphanumeric(b)) return true;
    return std.mem.indexOfScalar(u8, component_unreserved, b) != null or std.mem.indexOfScalar(u8, extra, b) != null;
}

fn encode(vm: *Vm, args: []const Value, extra: []const u8) Error!Value {
    const s = try ops.toString(vm, arg(args, 0));
    try vm.charge(meter.unitsCost(3 * @as(usize, s.len)));
    // At most 12 bytes of output per unit (a surrogate pair is 4 bytes, 12 escaped).
    var out = string.Builder.init(vm.heap, @as(usize, s.len) * 9, false) catch return vm.outOfMemory();
    var i: usize = 0;
    while (i < s.len) {
        const u = s.at(i);
        if (isUnreserved(u, extra)) {
            out.append(u);
            i += 1;
            continue;
        }
        var cp: u21 = u;
        if (u >= 0xDC00 and u <= 0xDFFF) return vm.throwMessage(.uri_error, "URI malformed");
        if (u >= 0xD800 and u <= 0xDBFF) {
            if (i + 1 >= s.len) return vm.throwMessage(.uri_error, "URI malformed");
            const low = s.at(i + 1);
            if (low < 0xDC00 or low > 0xDFFF) return vm.throwMessage(.uri_error, "URI malformed");
            cp = 0x10000 + ((@as(u21, u) - 0xD800) << 10) + (low - 0xDC00);
            i += 1;
        }
        i += 1;
        var bytes: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(cp, &bytes) catch unreachable; // Not a surrogate.
        for (bytes[0..n]) |b| {
            const hex = "0123456789ABCDEF";
            out.append('%');
            out.append(hex[b >> 4]);
            out.append(hex[b & 15]);
        }
    }
    return Value.string(out.finish() catch return vm.outOfMemory());
}

pub fn encodeURIComponent(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return encode(vm, args, "");
}

pub fn encodeURI(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return encode(vm, args, uri_reserved);
}

fn hexValue(u: u16) ?u8 {
    if (u > 0x7F) return null;
    return std.fmt.charToDigit(@intCast(u), 16) catch null;
}

fn decode(vm: *Vm, args: []const Value, keep: []const u8) Error!Value {
    const s = try ops.toString(vm, arg(args, 0));
    try vm.charge(meter.unitsCost(s.len));
    var out = string.Builder.init(vm.heap, s.len, true) catch return vm.outOfMemory();
    var i: usize = 0;
    while (i < s.len) {
        const u = s.at(i);
        if (u != '%') {
            out.append(u);
            i += 1;
            continue;
        }
        const first = try percentByte(vm, s, i);
        if (first < 0x80) {
            if (std.mem.indexOfScalar(u8, keep, first) != null) {
                // encodeURI's reserved characters stay escaped.
                for (0..3) |k| out.append(s.at(i + k));
            } else out.append(first);
            i += 3;
            continue;
        }
        const len: usize = if (first & 0xE0 == 0xC0) 2 else if (first & 0xF0 == 0xE0) 3 else if (first & 0xF8 == 0xF0) 4 else 0;
        if (len == 0) return vm.throwMessage(.uri_error, "URI malformed");
        var bytes: [4]u8 = undefined;
        bytes[0] = first;
        for (1..len) |k| {
            const b = try percentByte(vm, s, i + 3 * k);
            if (b & 0xC0 != 0x80) return vm.throwMessage(.uri_error, "URI malformed");
            bytes[k] = b;
        }
        const cp = std.unicode.utf8Decode(bytes[0..len]) catch return vm.throwMessage(.uri_error, "URI malformed");
        if (cp >= 0x10000) {
            const v = cp - 0x10000;
            out.append(@intCast(0xD800 + (v >> 10)));
            out.append(@intCast(0xDC00 + (v & 0x3FF)));
        } else out.append(@intCast(cp));
        i += 3 * len;
    }
    return Value.string(out.finish() catch return vm.outOfMemory());
}

fn percentByte(vm: *Vm, s: *const String, i: usize) Error!u8 {
    if (i + 2 >= s.len or s.at(i) != '%') return vm.throwMessage(.uri_error, "URI malformed");
    const hi = hexValue(s.at(i + 1)) orelse return vm.throwMessage(.uri_error, "URI malformed");
    const lo = hexValue(s.at(i + 2)) orelse return vm.throwMessage(.uri_error, "URI malformed");
    return hi * 16 + lo;
}

pub fn decodeURIComponent(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return decode(vm, args, "");
}

pub fn decodeURI(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return decode(vm, args, uri_reserved);
}
