//! Math, Number's statics and Number.prototype (toFixed, toString, toPrecision).
//!
//! Math's transcendental functions are fdlibm's, as V8's are (fdlibm.zig), so that results
//! agree with node's to the last bit.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const builtins = @import("../builtins.zig");
const fdlibm = @import("../fdlibm.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

fn num(vm: *Vm, args: []const Value, i: usize) Error!f64 {
    const v = arg(args, i);
    return if (v.isNumber()) v.asNumber() else ops.toNumber(vm, v);
}

fn unary(comptime f: fn (f64) f64) builtins.NativeFn {
    return struct {
        fn call(vm: *Vm, this: Value, args: []const Value) Error!Value {
            _ = this;
            return Value.number(f(try num(vm, args, 0)));
        }
    }.call;
}

fn absF(x: f64) f64 {
    return @abs(x);
}
fn floorF(x: f64) f64 {
    return @floor(x);
}
fn ceilF(x: f64) f64 {
    return @ceil(x);
}
fn truncF(x: f64) f64 {
    return @trunc(x);
}
fn sqrtF(x: f64) f64 {
    return @sqrt(x);
}
fn signF(x: f64) f64 {
    if (std.math.isNan(x) or x == 0) return x;
    return if (x > 0) 1 else -1;
}
fn roundF(x: f64) f64 {
    if (std.math.isNan(x) or std.math.isInf(x)) return x;
    if (x == 0) return x;
    if (x > 0 and x < 0.5) return 0;
    if (x < 0 and x >= -0.5) return -0.0;
    const r = @floor(x);
    return if (x - r >= 0.5) r + 1 else r;
}
fn cbrtF(x: f64) f64 {
    return fdlibm.cbrt(x);
}
fn expF(x: f64) f64 {
    return fdlibm.exp(x);
}
fn expm1F(x: f64) f64 {
    return fdlibm.expm1(x);
}
fn logF(x: f64) f64 {
    return fdlibm.log(x);
}
fn log2F(x: f64) f64 {
    return fdlibm.log2(x);
}
fn log10F(x: f64) f64 {
    return fdlibm.log10(x);
}
fn log1pF(x: f64) f64 {
    return fdlibm.log1p(x);
}
fn sinF(x: f64) f64 {
    return fdlibm.sin(x);
}
fn cosF(x: f64) f64 {
    return fdlibm.cos(x);
}
fn tanF(x: f64) f64 {
    return fdlibm.tan(x);
}
fn asinF(x: f64) f64 {
    return fdlibm.asin(x);
}
fn acosF(x: f64) f64 {
    return fdlibm.acos(x);
}
fn atanF(x: f64) f64 {
    return fdlibm.atan(x);
}
fn sinhF(x: f64) f64 {
    return fdlibm.sinh(x);
}
fn coshF(x: f64) f64 {
    return fdlibm.cosh(x);
}
fn tanhF(x: f64) f64 {
    return fdlibm.tanh(x);
}
fn asinhF(x: f64) f64 {
    return fdlibm.asinh(x);
}
fn acoshF(x: f64) f64 {
    return fdlibm.acosh(x);
}
fn atanhF(x: f64) f64 {
    return fdlibm.atanh(x);
}
fn froundF(x: f64) f64 {
    return @floatCast(@as(f32, @floatCast(x)));
}

pub const abs = unary(absF);
pub const floor = unary(floorF);
pub const ceil = unary(ceilF);
pub const trunc = unary(truncF);
pub const sqrt = unary(sqrtF);
pub const sign = unary(signF);
pub const round = unary(roundF);
pub const cbrt = unary(cbrtF);
pub const exp = unary(expF);
pub const expm1 = unary(expm1F);
pub const log = unary(logF);
pub const log2 = unary(log2F);
pub const log10 = unary(log10F);
pub const log1p = unary(log1pF);
pub const sin = unary(sinF);
pub const cos = unary(cosF);
pub const tan = unary(tanF);
pub const asin = unary(asinF);
pub const acos = unary(acosF);
pub const atan = unary(atanF);
pub const sinh = unary(sinhF);
pub const cosh = unary(coshF);
pub const tanh = unary(tanhF);
pub const asinh = unary(asinhF);
pub const acosh = unary(acoshF);
pub const atanh = unary(atanhF);
pub const fround = unary(froundF);

pub fn atan2(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const y = try num(vm, args, 0);
    const x = try num(vm, args, 1);
    return Value.number(fdlibm.atan2(y, x));
}

pub fn pow(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const x = try num(vm, args, 0);
    const y = try num(vm, args, 1);
    return Value.number(ops.power(x, y));
}

pub fn max(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try vm.charge(meter.elementsCost(args.len));
    var result = -std.math.inf(f64);
    var nan = false;
    for (args, 0..) |_, i| {
        const x = try num(vm, args, i);
        if (std.math.isNan(x)) nan = true;
        if (x > result or (x == 0 and result == 0 and !std.math.signbit(x))) result = x;
    }
    return Value.number(if (nan) std.math.nan(f64) else result);
}

pub fn min(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try vm.charge(meter.elementsCost(args.len));
    var result = std.math.inf(f64);
    var nan = false;
    for (args, 0..) |_, i| {
        const x = try num(vm, args, i);
        if (std.math.isNan(x)) nan = true;
        if (x < result or (x == 0 and result == 0 and std.math.signbit(x))) result = x;
    }
    return Value.number(if (nan) std.math.nan(f64) else result);
}

pub fn hypot(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    try vm.charge(meter.elementsCost(2 * args.len));
    var sum: f64 = 0;
    var inf = false;
    var nan = false;
    var largest: f64 = 0;
    for (args, 0..) |_, i| {
        const x = @abs(try num(vm, args, i));
        if (std.math.isInf(x)) inf = true;
        if (std.math.isNan(x)) nan = true;
        largest = @max(largest, x);
    }
    if (inf) return Value.number(std.math.inf(f64));
    if (nan) return Value.nan;
    if (largest == 0) return Value.number(0);
    // Scaled, as V8 does, to avoid overflow; with Kahan summation.
    var compensation: f64 = 0;
    for (args, 0..) |_, i| {
        const x = @abs(try num(vm, args, i)) / largest;
        const summand = x * x - compensation;
        const preliminary = sum + summand;
        compensation = (preliminary - sum) - summand;
        sum = preliminary;
    }
    return Value.number(@sqrt(sum) * largest);
}

pub fn imul(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const a = number.toInt32(try num(vm, args, 0));
    const b = number.toInt32(try num(vm, args, 1));
    return Value.number(@floatFromInt(a *% b));
}

pub fn clz32(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const x = number.toUint32(try num(vm, args, 0));
    return Value.number(@floatFromInt(@clz(x)));
}

pub fn random(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return Value.number(vm.random());
}

// ---------------------------------------------------------------------------------------
// Number.

pub fn isInteger(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    if (!v.isNumber()) return Value.false_value;
    const x = v.asNumber();
    return Value.boolean(!std.math.isInf(x) and x == @trunc(x));
}

pub fn isSafeInteger(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    if (!v.isNumber()) return Value.false_value;
    const x = v.asNumber();
    return Value.boolean(!std.math.isInf(x) and x == @trunc(x) and @abs(x) <= 9007199254740991);
}

pub fn numberIsFinite(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    return Value.boolean(v.isNumber() and !std.math.isInf(v.asNumber()) and !std.math.isNan(v.asNumber()));
}

pub fn numberIsNaN(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = vm;
    _ = this;
    const v = arg(args, 0);
    return Value.boolean(v.isNumber() and std.math.isNan(v.asNumber()));
}

fn thisNumber(vm: *Vm, this: Value, comptime method: []const u8) Error!f64 {
    if (this.isNumber()) return this.asNumber();
    return vm.throwMessage(.type_error, "Number.prototype." ++ method ++ " requires that 'this' be a Number");
}

pub fn toFixed(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const x = try thisNumber(vm, this, "toFixed");
    const digits = number.toIntegerOrInfinity(try num(vm, args, 0));
    if (digits < 0 or digits > 100) return vm.throwMessage(.range_error, "toFixed() digits argument must be between 0 and 100");
    var buf: [number.to_fixed_bytes_max + number.format_bytes_max]u8 = undefined;
    const text = number.toFixed(&buf, x, @intFromFloat(digits));
    try vm.charge(digitsCost(text.len));
    return Value.string(try vm.newLatin1(text));
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const x = try thisNumber(vm, this, "toString");
    const radix_arg = arg(args, 0);
    if (radix_arg.isUndefined()) return Value.string(try ops.numberToString(vm, x));
    const radix = number.toIntegerOrInfinity(try ops.toNumber(vm, radix_arg));
    if (radix < 2 or radix > 36) return vm.throwMessage(.range_error, "toString() radix argument must be between 2 and 36");
    if (radix == 10) return Value.string(try ops.numberToString(vm, x));
    var buf: [2200]u8 = undefined;
    const text = number.formatRadix(&buf, x, @intFromFloat(radix));
    try vm.charge(digitsCost(text.len));
    return Value.string(try vm.newLatin1(text));
}

pub fn toPrecision(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const x = try thisNumber(vm, this, "toPrecision");
    const p_arg = arg(args, 0);
    if (p_arg.isUndefined()) return Value.string(try ops.numberToString(vm, x));
    const p = number.toIntegerOrInfinity(try ops.toNumber(vm, p_arg));
    if (std.math.isNan(x) or std.math.isInf(x)) return Value.string(try ops.numberToString(vm, x));
    if (p < 1 or p > 100) return vm.throwMessage(.range_error, "toPrecision() argument must be between 1 and 100");
    var buf: [160]u8 = undefined;
    const text = number.toPrecision(&buf, x, @intFromFloat(p));
    try vm.charge(digitsCost(text.len));
    return Value.string(try vm.newLatin1(text));
}

/// What writing `n` digits cost toFixed, toPrecision and toString(radix): big-number
/// arithmetic per digit for the long ones (at most a few thousand digits, so a call is
/// bounded either way; the charge keeps the budget honest).
fn digitsCost(n: usize) u64 {
    return meter.unitsCost(16 * n);
}

pub fn valueOf(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.number(try thisNumber(vm, this, "valueOf"));
}
