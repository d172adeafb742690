//! Numbers to text and back, exactly as ECMAScript specifies them.
//!
//! - `format` is Number::toString: the shortest digits that round-trip (Ryu, from std) laid
//!   out by the spec's exponent rules (decimal from 1e-7 up to 1e21, exponent outside).
//! - `toFixed` is exact: it rounds the double's true binary value (a small big-integer
//!   computation), with ties away from zero as the spec asks, where printf would round to
//!   even. `(2.5).toFixed(0)` is "3", `(1.005).toFixed(2)` is "1.00".
//! - `parse` is ToNumber on a string; `parseFloat` and `parseInt` are the globals.
const std = @import("std");
const assert = std.debug.assert;

/// Enough for any output of `format` ("-1.2345678901234567e-308" is 24 bytes).
pub const format_bytes_max = 32;

/// Number::toString(x) with radix 10.
pub fn format(buf: *[format_bytes_max]u8, x: f64) []const u8 {
    // Integers below 2^53 print as themselves: no digit generation needed.
    if (x == @trunc(x) and @abs(x) < 9007199254740992.0) {
        if (x == 0) return "0";
        const i: i64 = @intFromFloat(x);
        return std.fmt.bufPrint(buf, "{d}", .{i}) catch unreachable;
    }
    if (std.math.isNan(x)) return "NaN";
    if (x == 0) return "0";
    if (std.math.isInf(x)) return if (x > 0) "Infinity" else "-Infinity";
    var len: usize = 0;
    var v = x;
    if (v < 0) {
        buf[0] = '-';
        len = 1;
        v = -v;
    }
    const decimal = std.fmt.float.binaryToDecimal(u64, @bitCast(v), 52, 11, false, &std.fmt.float.Backend64_TablesFull);
    var mantissa = decimal.mantissa;
    var exponent = decimal.exponent;
    while (mantissa % 10 == 0) {
        mantissa /= 10;
        exponent += 1;
    }
    var digits_buf: [20]u8 = undefined;
    const digits = std.fmt.bufPrint(&digits_buf, "{d}", .{mantissa}) catch unreachable;
    const k: i32 = @intCast(digits.len);
    const n: i32 = exponent + k;
    var out: std.Io.Writer = .fixed(buf[len..]);
    if (k <= n and n <= 21) {
        out.writeAll(digits) catch unreachable;
        out.splatByteAll('0', @intCast(n - k)) catch unreachable;
    } else if (0 < n and n <= 21) {
        const point: usize = @intCast(n);
        out.writeAll(digits[0..point]) catch unreachable;
        out.writeByte('.') catch unreachable;
        out.writeAll(digits[point..]) catch unreachable;
    } else if (-6 < n and n <= 0) {
        out.writeAll("0.") catch unreachable;
        out.splatByteAll('0', @intCast(-n)) catch unreachable;
        out.writeAll(digits) catch unreachable;
    } else {
        out.writeByte(digits[0]) catch unreachable;
        if (k > 1) {
            out.writeByte('.') catch unreachable;
            out.writeAll(digits[1..]) catch unreachable;
        }
        const e = n - 1;
        out.print("e{c}{d}", .{ @as(u8, if (e < 0) '-' else '+'), @abs(e) }) catch unreachable;
    }
    return buf[0 .. len + out.end];
}

// ---------------------------------------------------------------------------------------
// toFixed: exact decimal rounding with a small fixed-size big integer.

/// Unsigned integer of up to 3072 bits, little-endian 32-bit limbs. Big enough for a double's
/// mantissa times 5^1074 (about 2,550 bits), the largest exact decimal expansion.
const Big = struct {
    limbs: [96]u32 = @splat(0),
    len: usize = 0,

    fn fromU64(v: u64) Big {
        var b: Big = .{};
        b.limbs[0] = @truncate(v);
        b.limbs[1] = @truncate(v >> 32);
        b.len = if (b.limbs[1] != 0) 2 else if (b.limbs[0] != 0) 1 else 0;
        return b;
    }

    fn mulSmall(b: *Big, m: u32) void {
        var carry: u64 = 0;
        for (b.limbs[0..b.len]) |*limb| {
            const t = @as(u64, limb.*) * m + carry;
            limb.* = @truncate(t);
            carry = t >> 32;
        }
        if (carry != 0) {
            b.limbs[b.len] = @intCast(carry);
            b.len += 1;
        }
    }

    fn shiftLeft(b: *Big, bits: usize) void {
        const words = bits / 32;
        const rest: u5 = @intCast(bits % 32);
        if (b.len == 0) return;
        var i: usize = b.len + words + 1;
        while (i > 0) {
            i -= 1;
            const src = if (i >= words) i - words else null;
            var v: u32 = 0;
            if (src) |s| {
                const lo: u64 = if (s < b.len) b.limbs[s] else 0;
                const below: u64 = if (s > 0 and s - 1 < b.len) b.limbs[s - 1] else 0;
                v = @truncate(((lo << 32) | below) >> (32 - @as(u6, rest)));
            }
            b.limbs[i] = v;
        }
        b.len = b.len + words + 1;
        b.trim();
    }

    fn shiftRight(b: *Big, bits: usize) void {
        const words = bits / 32;
        const rest: u5 = @intCast(bits % 32);
        if (words >= b.len) {
            b.* = .{};
            return;
        }
        for (0..b.len - words) |i| {
            const lo: u64 = b.limbs[i + words];
            const hi: u64 = if (i + words + 1 < b.len) b.limbs[i + words + 1] else 0;
            b.limbs[i] = @truncate(((hi << 32) | lo) >> rest);
        }
        for (b.len - words..b.len) |i| b.limbs[i] = 0;
        b.len -= words;
        b.trim();
    }

    fn addBit(b: *Big, bit: usize) void {
        var i = bit / 32;
        var carry: u64 = @as(u64, 1) << @intCast(bit % 32);
        while (carry != 0) : (i += 1) {
            const t = @as(u64, b.limbs[i]) + carry;
            b.limbs[i] = @truncate(t);
            carry = t >> 32;
            if (i >= b.len) b.len = i + 1;
        }
    }

    fn trim(b: *Big) void {
        while (b.len > 0 and b.limbs[b.len - 1] == 0) b.len -= 1;
    }

    /// Divides by 10, returning the remainder.
    fn divTen(b: *Big) u32 {
        var rem: u64 = 0;
        var i = b.len;
        while (i > 0) {
            i -= 1;
            const cur = (rem << 32) | b.limbs[i];
            b.limbs[i] = @intCast(cur / 10);
            rem = cur % 10;
        }
        b.trim();
        return @intCast(rem);
    }

    /// Decimal digits, most significant first, into `buf` (from its end).
    fn toDecimal(b: Big, buf: []u8) []const u8 {
        var copy = b;
        var i = buf.len;
        if (copy.len == 0) {
            i -= 1;
            buf[i] = '0';
        }
        while (copy.len > 0) {
            i -= 1;
            buf[i] = '0' + @as(u8, @intCast(copy.divTen()));
        }
        return buf[i..];
    }
};

pub const to_fixed_bytes_max = 1 + 22 + 1 + 100;

/// Number.prototype.toFixed(digits) for 0 <= digits <= 100. Values at or above 1e21 in
/// magnitude fall back to `format`, as the spec says.
pub fn toFixed(buf: *[to_fixed_bytes_max + format_bytes_max]u8, x: f64, digits: u7) []const u8 {
    assert(digits <= 100);
    if (std.math.isNan(x)) return "NaN";
    if (@abs(x) >= 1e21) return format(buf[0..format_bytes_max], x);
    var len: usize = 0;
    var v = x;
    if (v < 0) {
        buf[0] = '-';
        len = 1;
        v = -v;
    }
    // v = mantissa * 2^exponent exactly.
    const bits: u64 = @bitCast(v);
    const biased: i32 = @intCast((bits >> 52) & 0x7FF);
    const fraction = bits & ((@as(u64, 1) << 52) - 1);
    const mantissa = if (biased == 0) fraction else fraction | (@as(u64, 1) << 52);
    const exponent: i32 = if (biased == 0) -1074 else biased - 1075;
    // n = round_half_up(v * 10^digits).
    var n = Big.fromU64(mantissa);
    for (0..digits) |_| n.mulSmall(10);
    if (exponent >= 0) {
        n.shiftLeft(@intCast(exponent));
    } else {
        const shift: usize = @intCast(-exponent);
        n.addBit(shift - 1); // + 1/2 before truncating: ties round up.
        n.shiftRight(shift);
    }
    var digit_buf: [1 + 22 + 100]u8 = undefined;
    const text = n.toDecimal(&digit_buf);
    // At least digits + 1 digits, so there is a units digit before the point.
    const width = @max(text.len, @as(usize, digits) + 1);
    @memset(buf[len..][0 .. width - text.len], '0');
    @memcpy(buf[len + width - text.len ..][0..text.len], text);
    if (digits == 0) return buf[0 .. len + width];
    const int_len = width - digits;
    std.mem.copyBackwards(u8, buf[len + int_len + 1 ..][0..digits], buf[len + int_len ..][0..digits]);
    buf[len + int_len] = '.';
    return buf[0 .. len + width + 1];
}

/// The exact decimal expansion of a finite positive double: its digits (no leading zeros)
/// and the position of the decimal point (value = 0.DIGITS x 10^point).
fn exactDigits(buf: []u8, x: f64) struct { digits: []const u8, point: i32 } {
    assert(x > 0 and !std.math.isInf(x));
    const bits: u64 = @bitCast(x);
    const biased: i32 = @intCast((bits >> 52) & 0x7FF);
    const fraction = bits & ((@as(u64, 1) << 52) - 1);
    const mantissa = if (biased == 0) fraction else fraction | (@as(u64, 1) << 52);
    const exponent: i32 = if (biased == 0) -1074 else biased - 1075;
    var n = Big.fromU64(mantissa);
    var scale: i32 = 0;
    if (exponent >= 0) {
        n.shiftLeft(@intCast(exponent));
    } else {
        // m / 2^k = m * 5^k / 10^k.
        for (0..@intCast(-exponent)) |_| n.mulSmall(5);
        scale = exponent;
    }
    const text = n.toDecimal(buf);
    return .{ .digits = text, .point = @as(i32, @intCast(text.len)) + scale };
}

/// Number.prototype.toPrecision(p) for a finite x and 1 <= p <= 100: the exact value rounded
/// half up to p significant digits, fixed or exponential as the spec chooses.
pub fn toPrecision(out: *[160]u8, x: f64, p: u7) []const u8 {
    assert(p >= 1 and p <= 100);
    var len: usize = 0;
    var v = x;
    if (v < 0) {
        out[0] = '-';
        len = 1;
        v = -v;
    }
    var digits: [101]u8 = undefined;
    var e: i32 = 0;
    if (v == 0) {
        @memset(digits[0..p], '0');
    } else {
        var buf: [800]u8 = undefined;
        const exact = exactDigits(&buf, v);
        e = exact.point - 1;
        const available = @min(exact.digits.len, p);
        @memcpy(digits[0..available], exact.digits[0..available]);
        @memset(digits[available..p], '0');
        if (exact.digits.len > p and exact.digits[p] >= '5') {
            // Round up, carrying.
            var i: usize = p;
            while (i > 0) {
                i -= 1;
                if (digits[i] == '9') {
                    digits[i] = '0';
                } else {
                    digits[i] += 1;
                    break;
                }
            } else {
                digits[0] = '1';
                e += 1;
            }
        }
    }
    var w: std.Io.Writer = .fixed(out[len..]);
    if (e < -6 or e >= p) {
        w.writeByte(digits[0]) catch unreachable;
        if (p > 1) {
            w.writeByte('.') catch unreachable;
            w.writeAll(digits[1..p]) catch unreachable;
        }
        w.print("e{c}{d}", .{ @as(u8, if (e < 0) '-' else '+'), @abs(e) }) catch unreachable;
    } else if (e >= 0) {
        const int_len: usize = @intCast(e + 1);
        w.writeAll(digits[0..int_len]) catch unreachable;
        if (p > int_len) {
            w.writeByte('.') catch unreachable;
            w.writeAll(digits[int_len..p]) catch unreachable;
        }
    } else {
        w.writeAll("0.") catch unreachable;
        w.splatByteAll('0', @intCast(-e - 1)) catch unreachable;
        w.writeAll(digits[0..p]) catch unreachable;
    }
    return out[0 .. len + w.end];
}

// ---------------------------------------------------------------------------------------
// Text to numbers.

/// JavaScript's WhiteSpace and LineTerminator, as StringToNumber and trim() strip them.
pub fn isSpace(unit: u16) bool {
    return switch (unit) {
        0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF => true,
        0x2000...0x200A => true,
        else => false,
    };
}

/// ToNumber applied to a string given as code units that are all ASCII after trimming (the
/// caller maps anything else to NaN).
pub fn parse(text_in: []const u8) f64 {
    const text = std.mem.trim(u8, text_in, " \t\n\r\x0b\x0c");
    if (text.len == 0) return 0;
    if (text.len > 2 and text[0] == '0') {
        const radix: ?u8 = switch (text[1]) {
            'x', 'X' => 16,
            'o', 'O' => 8,
            'b', 'B' => 2,
            else => null,
        };
        if (radix) |r| return parseIntegerDigits(text[2..], r) orelse std.math.nan(f64);
    }
    const end = decimalPrefix(text);
    if (end != text.len) return std.math.nan(f64);
    return parseDecimal(text);
}

/// The length of the longest prefix that is a StrDecimalLiteral (sign, digits, point,
/// exponent, or Infinity); 0 when there is none.
pub fn decimalPrefix(text: []const u8) usize {
    var i: usize = 0;
    if (i < text.len and (text[i] == '+' or text[i] == '-')) i += 1;
    if (std.mem.startsWith(u8, text[i..], "Infinity")) return i + "Infinity".len;
    const int_start = i;
    while (i < text.len and std.ascii.isDigit(text[i])) i += 1;
    var digits = i - int_start;
    if (i < text.len and text[i] == '.') {
        const frac_start = i + 1;
        var j = frac_start;
        while (j < text.len and std.ascii.isDigit(text[j])) j += 1;
        if (digits > 0 or j > frac_start) {
            digits += j - frac_start;
            i = j;
        }
    }
    if (digits == 0) return 0;
    if (i < text.len and (text[i] == 'e' or text[i] == 'E')) {
        var j = i + 1;
        if (j < text.len and (text[j] == '+' or text[j] == '-')) j += 1;
        const exp_start = j;
        while (j < text.len and std.ascii.isDigit(text[j])) j += 1;
        if (j > exp_start) i = j;
    }
    return i;
}

/// A text that `decimalPrefix` accepted whole.
fn parseDecimal(text: []const u8) f64 {
    var body = text;
    var negative = false;
    if (body.len > 0 and (body[0] == '+' or body[0] == '-')) {
        negative = body[0] == '-';
        body = body[1..];
    }
    const magnitude = if (std.mem.eql(u8, body, "Infinity"))
        std.math.inf(f64)
    else
        std.fmt.parseFloat(f64, body) catch std.math.nan(f64);
    return if (negative) -magnitude else magnitude;
}

/// The global parseFloat on ASCII text (after the caller trimmed leading white space).
pub fn parseFloatPrefix(text: []const u8) f64 {
    const end = decimalPrefix(text);
    if (end == 0) return std.math.nan(f64);
    return parseDecimal(text[0..end]);
}

fn digitValue(c: u8) ?u8 {
    return switch (c) {
        '0'...'9' => c - '0',
        'a'...'z' => c - 'a' + 10,
        'A'...'Z' => c - 'A' + 10,
        else => null,
    };
}

/// All of `digits` in `radix`, or null if any is not a digit (or there are none).
fn parseIntegerDigits(digits: []const u8, radix: u8) ?f64 {
    if (digits.len == 0) return null;
    for (digits) |c| {
        const d = digitValue(c) orelse return null;
        if (d >= radix) return null;
    }
    return integerValue(digits, radix);
}

/// The value of digits known valid in `radix`, as V8 computes it (StringToIntHelper): radix
/// 10 through the correctly rounded decimal parser, powers of two correctly rounded (to
/// nearest, ties to even), and every other radix in V8's chunks of digits whose multiplier
/// fits 32 bits, each chunk folded in with one double multiply-add. The spec lets those
/// radixes approximate, and node's answers are the rounding of that loop (parseInt of
/// "9007199254740992" in radix 36 is 1.9896986116031807e+24, not the exact value's rounding).
pub fn integerValue(digits_in: []const u8, radix: u8) f64 {
    // V8 skips leading zeros first, which moves where the chunks below start.
    const digits = std.mem.trimStart(u8, digits_in, "0");
    if (digits.len == 0) return 0;
    if (radix == 10) return std.fmt.parseFloat(f64, digits) catch unreachable; // Digits only.
    if (std.math.isPowerOfTwo(radix)) return powerOfTwoValue(digits, radix);
    const multiplier_max: u32 = 0xFFFF_FFFF / 36;
    var value: f64 = 0;
    var i: usize = 0;
    while (i < digits.len) {
        var part: u32 = 0;
        var multiplier: u32 = 1;
        while (i < digits.len) : (i += 1) {
            const m = multiplier * radix;
            if (m > multiplier_max) break; // This digit starts the next chunk.
            part = part * radix + digitValue(digits[i]).?;
            multiplier = m;
        }
        value = value * @as(f64, @floatFromInt(multiplier)) + @as(f64, @floatFromInt(part));
    }
    return value;
}

/// Digits in radix 2, 4, 8, 16 or 32, correctly rounded: the first 53 significant bits, then
/// the dropped bits and whether any later digit is not zero decide the rounding.
fn powerOfTwoValue(digits: []const u8, radix: u8) f64 {
    const bits_per_digit: u6 = @intCast(std.math.log2_int(u8, radix));
    var number: u64 = 0;
    var exponent: i32 = 0;
    for (digits, 0..) |c, i| {
        number = (number << bits_per_digit) | digitValue(c).?;
        const overflow = number >> 53;
        if (overflow == 0) continue;
        const overflow_bits: u6 = @intCast(64 - @clz(overflow));
        const dropped = number & ((@as(u64, 1) << overflow_bits) - 1);
        number >>= overflow_bits;
        exponent = overflow_bits;
        var zero_tail = true;
        for (digits[i + 1 ..]) |rest| {
            zero_tail = zero_tail and rest == '0';
            exponent += bits_per_digit;
        }
        const middle = @as(u64, 1) << (overflow_bits - 1);
        if (dropped > middle or (dropped == middle and (number & 1 != 0 or !zero_tail))) number += 1;
        if (number >> 53 != 0) { // Rounding up carried into a 54th bit.
            number >>= 1;
            exponent += 1;
        }
        break;
    }
    assert(number < @as(u64, 1) << 53);
    return std.math.ldexp(@as(f64, @floatFromInt(number)), exponent);
}

/// The global parseInt on ASCII text (after the caller trimmed leading white space).
/// `radix` is ToInt32 of the argument (0 when absent).
pub fn parseIntPrefix(text_in: []const u8, radix_in: i32) f64 {
    var text = text_in;
    var negative = false;
    if (text.len > 0 and (text[0] == '+' or text[0] == '-')) {
        negative = text[0] == '-';
        text = text[1..];
    }
    var radix = radix_in;
    var strip_prefix = true;
    if (radix != 0) {
        if (radix < 2 or radix > 36) return std.math.nan(f64);
        if (radix != 16) strip_prefix = false;
    } else radix = 10;
    if (strip_prefix and text.len >= 2 and text[0] == '0' and (text[1] == 'x' or text[1] == 'X')) {
        text = text[2..];
        radix = 16;
    }
    const r: u8 = @intCast(radix);
    var end: usize = 0;
    while (end < text.len) : (end += 1) {
        const d = digitValue(text[end]) orelse break;
        if (d >= r) break;
    }
    if (end == 0) return std.math.nan(f64);
    const magnitude = integerValue(text[0..end], r);
    return if (negative) -magnitude else magnitude;
}

// ---------------------------------------------------------------------------------------
// Integer conversions.

/// ToInt32: the number modulo 2^32, as a signed 32-bit integer; NaN and infinities are 0.
pub fn toInt32(x: f64) i32 {
    if (x >= -2147483648.0 and x <= 2147483647.0) return @intFromFloat(x);
    return @bitCast(toUint32(x));
}

pub fn toUint32(x: f64) u32 {
    if (x >= 0 and x <= 4294967295.0) return @intFromFloat(x);
    if (std.math.isNan(x) or std.math.isInf(x)) return 0;
    const truncated = @trunc(x);
    const modulo = @mod(truncated, 4294967296.0);
    return @intFromFloat(modulo);
}

/// ToIntegerOrInfinity, for indices and counts.
pub fn toIntegerOrInfinity(x: f64) f64 {
    if (std.math.isNan(x)) return 0;
    return @trunc(x) + 0.0; // + 0.0 turns -0 into +0.
}

/// Number.prototype.toString(radix) for radix 2..36 other than 10, digit for digit as V8
/// prints it: fraction digits while they still tell the value from its neighbours (half an
/// ulp), rounding the last one to even; integer digits exactly up to 2^53, zeros beyond.
pub fn formatRadix(buf: []u8, x: f64, radix: u8) []const u8 {
    assert(radix >= 2 and radix <= 36 and buf.len >= 2200);
    if (std.math.isNan(x)) return "NaN";
    if (std.math.isInf(x)) return if (x > 0) "Infinity" else "-Infinity";
    const digit_chars = "0123456789abcdefghijklmnopqrstuvwxyz";
    const r: f64 = @floatFromInt(radix);
    const v = @abs(x);
    var integer = @floor(v);
    var fraction = v - integer;
    // Fraction digits first: rounding may carry into the integer part.
    var frac_buf: [1100]u8 = undefined;
    var frac_len: usize = 0;
    var delta = @max(nextUp(0.0), 0.5 * (nextUp(v) - v));
    if (fraction >= delta) {
        while (true) {
            fraction *= r;
            delta *= r;
            const digit: usize = @intFromFloat(@floor(fraction));
            frac_buf[frac_len] = digit_chars[digit];
            frac_len += 1;
            fraction -= @floatFromInt(digit);
            if (fraction > 0.5 or (fraction == 0.5 and (digit & 1) != 0)) {
                if (fraction + delta > 1) {
                    while (true) {
                        if (frac_len == 0) {
                            integer += 1;
                            break;
                        }
                        frac_len -= 1;
                        const d = std.mem.indexOfScalar(u8, digit_chars, frac_buf[frac_len]).?;
                        if (d + 1 < radix) {
                            frac_buf[frac_len] = digit_chars[d + 1];
                            frac_len += 1;
                            break;
                        }
                    }
                    break;
                }
            }
            if (fraction < delta or frac_len == frac_buf.len) break;
        }
    }
    var int_buf: [1100]u8 = undefined;
    var i: usize = int_buf.len;
    const exact_max: f64 = 9007199254740992.0; // 2^53: below it, every integer is exact.
    while (integer / r >= exact_max) {
        integer /= r;
        i -= 1;
        int_buf[i] = '0';
    }
    while (true) {
        const rem = @mod(integer, r);
        i -= 1;
        int_buf[i] = digit_chars[@intFromFloat(rem)];
        integer = (integer - rem) / r;
        if (integer <= 0) break;
    }
    var len: usize = 0;
    if (x < 0) {
        buf[0] = '-';
        len = 1;
    }
    @memcpy(buf[len..][0 .. int_buf.len - i], int_buf[i..]);
    len += int_buf.len - i;
    if (frac_len > 0) {
        buf[len] = '.';
        @memcpy(buf[len + 1 ..][0..frac_len], frac_buf[0..frac_len]);
        len += 1 + frac_len;
    }
    return buf[0..len];
}

fn nextUp(x: f64) f64 {
    return std.math.nextAfter(f64, x, std.math.inf(f64));
}

test "number: format follows Number::toString" {
    const testing = std.testing;
    const cases = .{
        .{ 0.30000000000000004, "0.30000000000000004" },       .{ 1e21, "1e+21" },                                     .{ 1e20, "100000000000000000000" },
        .{ 123456789012345680000.0, "123456789012345680000" }, .{ 1e-7, "1e-7" },                                      .{ 1.5e-7, "1.5e-7" },
        .{ 0.000001, "0.000001" },                             .{ -0.0, "0" },                                         .{ -1.5, "-1.5" },
        .{ 5e-324, "5e-324" },                                 .{ 1.7976931348623157e308, "1.7976931348623157e+308" }, .{ 100, "100" },
        .{ 0.5, "0.5" },                                       .{ 123.456, "123.456" },                                .{ 2e-7, "2e-7" },
        .{ 1.2e22, "1.2e+22" },
    };
    inline for (cases) |case| {
        var buf: [format_bytes_max]u8 = undefined;
        try testing.expectEqualStrings(case[1], format(&buf, case[0]));
    }
    var buf: [format_bytes_max]u8 = undefined;
    try testing.expectEqualStrings("NaN", format(&buf, std.math.nan(f64)));
    try testing.expectEqualStrings("-Infinity", format(&buf, -std.math.inf(f64)));
}

test "number: toFixed rounds the exact value, ties away from zero" {
    const testing = std.testing;
    const cases = .{
        .{ 2.5, 0, "3" },          .{ 1.005, 2, "1.00" },    .{ 0.125, 2, "0.13" },
        .{ -1.5, 0, "-2" },        .{ 0, 2, "0.00" },        .{ -0.0001, 2, "-0.00" },
        .{ 1e21, 2, "1e+21" },     .{ 123.456, 1, "123.5" }, .{ 0.1, 20, "0.10000000000000000555" },
        .{ 1.45, 1, "1.4" },       .{ 5e-324, 2, "0.00" },   .{ 999.995, 2, "1000.00" },
        .{ 1234.5678, 0, "1235" }, .{ 42, 3, "42.000" },
    };
    inline for (cases) |case| {
        var buf: [to_fixed_bytes_max + format_bytes_max]u8 = undefined;
        try testing.expectEqualStrings(case[2], toFixed(&buf, case[0], case[1]));
    }
}

test "number: parse, parseFloat and parseInt" {
    const testing = std.testing;
    try testing.expectEqual(@as(f64, 0), parse("  "));
    try testing.expectEqual(@as(f64, 255), parse("0xff"));
    try testing.expectEqual(@as(f64, 1.5), parse(" 1.5 "));
    try testing.expectEqual(@as(f64, 0.5), parse(".5"));
    try testing.expectEqual(@as(f64, 5), parse("5."));
    try testing.expect(std.math.isNan(parse("1_000")));
    try testing.expect(std.math.isNan(parse("-0x10")));
    try testing.expect(std.math.isNan(parse("1e")));
    try testing.expectEqual(-std.math.inf(f64), parse("-Infinity"));
    try testing.expectEqual(@as(f64, 3.14), parseFloatPrefix("3.14abc"));
    try testing.expectEqual(@as(f64, 1), parseFloatPrefix("1e"));
    try testing.expect(std.math.isNan(parseFloatPrefix("abc")));
    try testing.expectEqual(@as(f64, 42), parseIntPrefix("42px", 0));
    try testing.expectEqual(@as(f64, 255), parseIntPrefix("0xff", 0));
    try testing.expectEqual(@as(f64, 0), parseIntPrefix("0xff", 10));
    try testing.expectEqual(@as(f64, -7), parseIntPrefix("-111", 2));
    try testing.expect(std.math.isNan(parseIntPrefix("z", 10)));
}

test "number: parseInt rounds as V8 does in every radix (values from node 20)" {
    const testing = std.testing;
    // Radix 36 folds chunks of digits in doubles: not the exact value's rounding.
    try testing.expectEqual(@as(f64, 1.9896986116031807e+24), parseIntPrefix("9007199254740992", 36));
    // Leading zeros are skipped before the chunks start.
    try testing.expectEqual(@as(f64, 8.209307733153561e+47), parseIntPrefix("0gsowgcok40ckgocsg44kw4s00000000", 36));
    // Powers of two round to nearest, ties to even, with later digits breaking the tie.
    try testing.expectEqual(@as(f64, 9007199254740992), parseIntPrefix("20000000000001", 16));
    try testing.expectEqual(@as(f64, 9007199254740996), parseIntPrefix("20000000000003", 16));
    try testing.expectEqual(@as(f64, 9007199254740994), parseIntPrefix("200000000000010001", 16) / 65536);
    try testing.expectEqual(@as(f64, 0), parseIntPrefix("0000", 7));
}

test "number: ToInt32 wraps modulo 2^32" {
    const testing = std.testing;
    try testing.expectEqual(@as(i32, -1), toInt32(4294967295.0));
    try testing.expectEqual(@as(i32, 0), toInt32(std.math.nan(f64)));
    try testing.expectEqual(@as(i32, -2147483648), toInt32(2147483648.0));
    try testing.expectEqual(@as(i32, 1), toInt32(4294967297.5));
    try testing.expectEqual(@as(i32, -1), toInt32(-1.9));
    try testing.expectEqual(@as(u32, 4294967295), toUint32(-1));
}

test "number: toPrecision rounds the exact value" {
    var buf: [160]u8 = undefined;
    const cases = .{
        .{ 123.456, 4, "123.5" }, .{ 0.000123, 2, "0.00012" }, .{ 1e21, 3, "1.00e+21" },
        .{ 123456, 2, "1.2e+5" }, .{ 1.25, 2, "1.3" },         .{ 0, 3, "0.00" },
        .{ -9.99, 2, "-10" },     .{ 1e-7, 1, "1e-7" },        .{ 5e-324, 2, "4.9e-324" },
    };
    inline for (cases) |case| {
        try std.testing.expectEqualStrings(case[2], toPrecision(&buf, case[0], case[1]));
    }
}

test "number: toString with a radix" {
    var buf: [2200]u8 = undefined;
    try std.testing.expectEqualStrings("ff", formatRadix(&buf, 255, 16));
    try std.testing.expectEqualStrings("-101", formatRadix(&buf, -5, 2));
    try std.testing.expectEqualStrings("0.1", formatRadix(&buf, 0.5, 2));
    try std.testing.expectEqualStrings("-ff.8", formatRadix(&buf, -255.5, 16));
    try std.testing.expectEqualStrings("5v1j4f4ds7c000", formatRadix(&buf, 1e21, 36));
    try std.testing.expectEqualStrings("0.0022002200220022002200220022002201", formatRadix(&buf, 0.1, 3));
    try std.testing.expectEqualStrings("0.0001100110011001100110011001100110011001100110011001101", formatRadix(&buf, 0.1, 2));
}
