//! Date: the constructor, Date.parse and Date.UTC, and Date.prototype's getters, setters and
//! formats, with the spec's time arithmetic on doubles (milliseconds since the epoch, NaN for
//! an invalid date, TimeClip at ±8.64e15).
//!
//! Decision: local time is UTC. sluice is a static musl binary that reads no time zone
//! database, and a proxy's logs and headers speak UTC anyway, so the local getters and
//! setters are the UTC ones, getTimezoneOffset is 0, and toString prints what node prints
//! under TZ=UTC (`GMT+0000 (Coordinated Universal Time)`). Parsing follows node: ISO 8601
//! (a date alone is UTC, a date and time without an offset local, which is UTC here), then
//! the forms V8's legacy parser reads: RFC 7231 and RFC 2822 dates, `Jan 2, 2024`,
//! `1/2/2024 10:00 PM`, `toString()`'s own output.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const DateObject = object.DateObject;
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const globals_fns = @import("globals.zig");
const arg = builtins.arg;

const ms_per_day: f64 = 86_400_000;
const time_max: f64 = 8.64e15;

const month_names = [_][]const u8{ "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
const day_names = [_][]const u8{ "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };

// ---------------------------------------------------------------------------------------
// The spec's arithmetic.

fn timeClip(t: f64) f64 {
    if (!std.math.isFinite(t) or @abs(t) > time_max) return std.math.nan(f64);
    return @trunc(t) + 0; // + 0 turns -0 into +0.
}

/// Days from 1970-01-01 to the first of month `m` (0-based) of year `y` (proleptic
/// Gregorian; Hinnant's days_from_civil).
fn daysFromCivil(y_in: i64, m: i64) i64 {
    const y = if (m < 2) y_in - 1 else y_in;
    const era = @divFloor(y, 400);
    const yoe = y - era * 400;
    const mp = @mod(m + 10, 12); // March-based; m is 0-based.
    const doy = @divFloor(153 * mp + 2, 5);
    const doe = yoe * 365 + @divFloor(yoe, 4) - @divFloor(yoe, 100) + doy;
    return era * 146097 + doe - 719468;
}

/// MakeDay: the day number of year y, month m (any integer, carried into the year), date d.
fn makeDay(y: f64, m: f64, d: f64) f64 {
    if (!std.math.isFinite(y) or !std.math.isFinite(m) or !std.math.isFinite(d)) return std.math.nan(f64);
    const yi = @trunc(y);
    const mi = @trunc(m);
    const di = @trunc(d);
    const ym = yi + @floor(mi / 12);
    // Past about ±400,000 years every date is clipped anyway; the integers below stay small.
    if (@abs(ym) > 400_000) return std.math.nan(f64);
    const mn: i64 = @intFromFloat(@mod(mi, 12));
    const day = daysFromCivil(@intFromFloat(ym), mn);
    return @as(f64, @floatFromInt(day)) + di - 1;
}

fn makeTime(h: f64, m: f64, s: f64, ms: f64) f64 {
    if (!std.math.isFinite(h) or !std.math.isFinite(m) or !std.math.isFinite(s) or !std.math.isFinite(ms)) return std.math.nan(f64);
    return @trunc(h) * 3_600_000 + @trunc(m) * 60_000 + @trunc(s) * 1000 + @trunc(ms);
}

fn makeDate(day: f64, time: f64) f64 {
    if (!std.math.isFinite(day) or !std.math.isFinite(time)) return std.math.nan(f64);
    const tv = day * ms_per_day + time;
    if (!std.math.isFinite(tv)) return std.math.nan(f64);
    return tv;
}

/// A time value taken apart (valid times only).
const Fields = struct {
    year: i64,
    /// 0-based.
    month: u8,
    /// 1-based.
    date: u8,
    hours: u8,
    minutes: u8,
    seconds: u8,
    ms: u16,
    /// 0 is Sunday.
    weekday: u8,

    fn of(t: f64) Fields {
        assert(std.math.isFinite(t));
        const ti: i64 = @intFromFloat(t);
        const days = @divFloor(ti, 86_400_000);
        const in_day: i64 = @mod(ti, 86_400_000);
        // Hinnant's civil_from_days.
        const z = days + 719468;
        const era = @divFloor(z, 146097);
        const doe = z - era * 146097;
        const yoe = @divFloor(doe - @divFloor(doe, 1460) + @divFloor(doe, 36524) - @divFloor(doe, 146096), 365);
        const doy = doe - (365 * yoe + @divFloor(yoe, 4) - @divFloor(yoe, 100));
        const mp = @divFloor(5 * doy + 2, 153);
        const d = doy - @divFloor(153 * mp + 2, 5) + 1;
        const m = if (mp < 10) mp + 3 else mp - 9;
        const y = yoe + era * 400 + @as(i64, if (m <= 2) 1 else 0);
        return .{
            .year = y,
            .month = @intCast(m - 1),
            .date = @intCast(d),
            .hours = @intCast(@divFloor(in_day, 3_600_000)),
            .minutes = @intCast(@mod(@divFloor(in_day, 60_000), 60)),
            .seconds = @intCast(@mod(@divFloor(in_day, 1000), 60)),
            .ms = @intCast(@mod(in_day, 1000)),
            .weekday = @intCast(@mod(days + 4, 7)),
        };
    }

    fn array(f: Fields) [7]f64 {
        return .{
            @floatFromInt(f.year),  @floatFromInt(f.month),   @floatFromInt(f.date),
            @floatFromInt(f.hours), @floatFromInt(f.minutes), @floatFromInt(f.seconds),
            @floatFromInt(f.ms),
        };
    }
};

/// The time value of [year, month, date, hours, minutes, seconds, ms], clipped.
fn compose(v: [7]f64) f64 {
    return timeClip(makeDate(makeDay(v[0], v[1], v[2]), makeTime(v[3], v[4], v[5], v[6])));
}

/// Date.UTC's and the constructor's arguments: a year 0 to 99 means 1900 to 1999.
fn fromArguments(vm: *Vm, args: []const Value) Error!f64 {
    var v: [7]f64 = .{ std.math.nan(f64), 0, 1, 0, 0, 0, 0 };
    for (args[0..@min(args.len, 7)], 0..) |a, i| v[i] = try ops.toNumber(vm, a);
    if (!std.math.isNan(v[0])) {
        const yi = number.toIntegerOrInfinity(v[0]);
        if (yi >= 0 and yi <= 99) v[0] = 1900 + yi;
    }
    return compose(v);
}

fn now() f64 {
    const v = globals_fns.dateNow(undefined, Value.undefined_value, &.{}) catch unreachable;
    return v.asNumber();
}

// ---------------------------------------------------------------------------------------
// Construction.

pub fn newDate(vm: *Vm, t: f64) Error!Value {
    const d = vm.heap.create(DateObject) catch return vm.outOfMemory();
    d.* = .{ .object = .{ .kind = .date }, .time = t };
    return Value.obj(&d.object);
}

pub fn construct(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    if (args.len == 0) return newDate(vm, now());
    if (args.len == 1) {
        const v = args[0];
        if (v.objectOf(.date)) |o| return newDate(vm, o.as(DateObject).time);
        const p = try ops.toPrimitive(vm, v, .default);
        if (p.isString()) return newDate(vm, try parseString(vm, p.asString()));
        return newDate(vm, timeClip(try ops.toNumber(vm, p)));
    }
    return newDate(vm, try fromArguments(vm, args));
}

/// `Date()` without `new`: the current time as toString shows it.
pub fn call(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return Value.string(try toStringOf(vm, now()));
}

pub fn parse(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const s = try ops.toString(vm, arg(args, 0));
    return Value.number(try parseString(vm, s));
}

pub fn utc(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    return Value.number(try fromArguments(vm, args));
}

fn thisTime(vm: *Vm, this: Value, comptime method: []const u8) Error!*DateObject {
    if (this.objectOf(.date)) |o| return o.as(DateObject);
    _ = method;
    return vm.throwMessage(.type_error, "this is not a Date object.");
}

// ---------------------------------------------------------------------------------------
// Getters and setters.

pub const Field = enum { year, month, date, hours, minutes, seconds, ms, weekday };

/// getFullYear, getUTCMonth...: one function per field (local and UTC are the same).
pub fn getter(comptime f: Field) builtins.NativeFn {
    return struct {
        fn get(vm: *Vm, this: Value, args: []const Value) Error!Value {
            _ = args;
            const t = (try thisTime(vm, this, "get")).time;
            if (std.math.isNan(t)) return Value.nan;
            const fields = Fields.of(t);
            return Value.number(switch (f) {
                .year => @floatFromInt(fields.year),
                .month => @floatFromInt(fields.month),
                .date => @floatFromInt(fields.date),
                .hours => @floatFromInt(fields.hours),
                .minutes => @floatFromInt(fields.minutes),
                .seconds => @floatFromInt(fields.seconds),
                .ms => @floatFromInt(fields.ms),
                .weekday => @floatFromInt(fields.weekday),
            });
        }
    }.get;
}

/// setHours(h, m, s, ms), setMonth(m, d)...: the fields from `first`, as many as given (at
/// most `count_max`), over the date's own; an invalid date stays invalid, except for
/// setFullYear, which starts from +0.
pub fn setter(comptime first: Field, comptime count_max: usize) builtins.NativeFn {
    return struct {
        fn set(vm: *Vm, this: Value, args: []const Value) Error!Value {
            const d = try thisTime(vm, this, "set");
            try ops.checkModuleWrite(vm, d);
            var given: [4]f64 = undefined;
            const n = @max(1, @min(args.len, count_max));
            for (0..n) |i| given[i] = try ops.toNumber(vm, arg(args, i));
            var t = d.time;
            if (std.math.isNan(t)) {
                if (first != .year) return Value.nan;
                t = 0;
            }
            var v = Fields.of(t).array();
            const at = @backingInt(first);
            for (0..n) |i| v[at + i] = given[i];
            d.time = compose(v);
            return Value.number(d.time);
        }
    }.set;
}

pub fn getTime(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.number((try thisTime(vm, this, "getTime")).time);
}

pub fn setTime(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const d = try thisTime(vm, this, "setTime");
    try ops.checkModuleWrite(vm, d);
    d.time = timeClip(try ops.toNumber(vm, arg(args, 0)));
    return Value.number(d.time);
}

pub fn getTimezoneOffset(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = (try thisTime(vm, this, "getTimezoneOffset")).time;
    return if (std.math.isNan(t)) Value.nan else Value.number(0);
}

/// Annex B's getYear: the year less 1900.
pub fn getYear(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const t = (try thisTime(vm, this, "getYear")).time;
    if (std.math.isNan(t)) return Value.nan;
    return Value.number(@floatFromInt(Fields.of(t).year - 1900));
}

// ---------------------------------------------------------------------------------------
// Formats.

const Text = struct {
    buf: [96]u8 = undefined,
    len: usize = 0,

    fn print(t: *Text, comptime fmt: []const u8, args: anytype) void {
        const written = std.fmt.bufPrint(t.buf[t.len..], fmt, args) catch unreachable;
        t.len += written.len;
    }

    fn slice(t: *const Text) []const u8 {
        return t.buf[0..t.len];
    }
};

/// A year as toString and toUTCString show it: four digits at least, a sign if negative.
fn printYear(t: *Text, year: i64) void {
    if (year < 0) t.print("-{d:0>4}", .{@as(u64, @intCast(-year))}) else t.print("{d:0>4}", .{@as(u64, @intCast(year))});
}

fn datePart(t: *Text, f: Fields) void {
    t.print("{s} {s} {d:0>2} ", .{ day_names[f.weekday], month_names[f.month], f.date });
    printYear(t, f.year);
}

fn timePart(t: *Text, f: Fields) void {
    t.print("{d:0>2}:{d:0>2}:{d:0>2} GMT+0000 (Coordinated Universal Time)", .{ f.hours, f.minutes, f.seconds });
}

/// What `String(date)` is: `Tue Jan 02 2024 03:04:05 GMT+0000 (Coordinated Universal Time)`.
pub fn toStringOf(vm: *Vm, time: f64) Error!*String {
    if (std.math.isNan(time)) return vm.newLatin1("Invalid Date");
    var t: Text = .{};
    const f = Fields.of(time);
    datePart(&t, f);
    t.print(" ", .{});
    timePart(&t, f);
    return vm.newLatin1(t.slice());
}

fn isoText(t: *Text, time: f64) void {
    const f = Fields.of(time);
    if (f.year >= 0 and f.year <= 9999) {
        t.print("{d:0>4}", .{@as(u64, @intCast(f.year))});
    } else if (f.year < 0) {
        t.print("-{d:0>6}", .{@as(u64, @intCast(-f.year))});
    } else t.print("+{d:0>6}", .{@as(u64, @intCast(f.year))});
    t.print("-{d:0>2}-{d:0>2}T{d:0>2}:{d:0>2}:{d:0>2}.{d:0>3}Z", .{ f.month + 1, f.date, f.hours, f.minutes, f.seconds, f.ms });
}

/// What console.log shows for a Date: its ISO text, or `Invalid Date`.
pub fn inspectText(time: f64, buf: *[96]u8) []const u8 {
    if (std.math.isNan(time)) return "Invalid Date";
    var t: Text = .{};
    isoText(&t, time);
    @memcpy(buf[0..t.len], t.slice());
    return buf[0..t.len];
}

pub fn toStringMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return Value.string(try toStringOf(vm, (try thisTime(vm, this, "toString")).time));
}

pub fn toDateString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const time = (try thisTime(vm, this, "toDateString")).time;
    if (std.math.isNan(time)) return Value.string(try vm.newLatin1("Invalid Date"));
    var t: Text = .{};
    datePart(&t, Fields.of(time));
    return Value.string(try vm.newLatin1(t.slice()));
}

pub fn toTimeString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const time = (try thisTime(vm, this, "toTimeString")).time;
    if (std.math.isNan(time)) return Value.string(try vm.newLatin1("Invalid Date"));
    var t: Text = .{};
    timePart(&t, Fields.of(time));
    return Value.string(try vm.newLatin1(t.slice()));
}

pub fn toISOString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const time = (try thisTime(vm, this, "toISOString")).time;
    if (std.math.isNan(time)) return vm.throwMessage(.range_error, "Invalid time value");
    var t: Text = .{};
    isoText(&t, time);
    return Value.string(try vm.newLatin1(t.slice()));
}

/// RFC 7231's IMF-fixdate: `Tue, 02 Jan 2024 03:04:05 GMT`.
pub fn toUTCString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    const time = (try thisTime(vm, this, "toUTCString")).time;
    if (std.math.isNan(time)) return Value.string(try vm.newLatin1("Invalid Date"));
    const f = Fields.of(time);
    var t: Text = .{};
    t.print("{s}, {d:0>2} {s} ", .{ day_names[f.weekday], f.date, month_names[f.month] });
    printYear(&t, f.year);
    t.print(" {d:0>2}:{d:0>2}:{d:0>2} GMT", .{ f.hours, f.minutes, f.seconds });
    return Value.string(try vm.newLatin1(t.slice()));
}

/// en-US, as node formats with its default locale: `1/2/2024, 3:04:05 AM`.
fn localeText(vm: *Vm, this: Value, comptime date: bool, comptime time_part: bool) Error!Value {
    const time = (try thisTime(vm, this, "toLocaleString")).time;
    if (std.math.isNan(time)) return Value.string(try vm.newLatin1("Invalid Date"));
    const f = Fields.of(time);
    var t: Text = .{};
    if (date) t.print("{d}/{d}/{d}", .{ f.month + 1, f.date, f.year });
    if (date and time_part) t.print(", ", .{});
    if (time_part) {
        const h12 = if (f.hours % 12 == 0) 12 else f.hours % 12;
        t.print("{d}:{d:0>2}:{d:0>2} {s}", .{ h12, f.minutes, f.seconds, if (f.hours < 12) "AM" else "PM" });
    }
    return Value.string(try vm.newLatin1(t.slice()));
}

pub fn toLocaleString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return localeText(vm, this, true, true);
}

pub fn toLocaleDateString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return localeText(vm, this, true, false);
}

pub fn toLocaleTimeString(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = args;
    return localeText(vm, this, false, true);
}

/// toJSON: the ISO text, or null for an invalid date.
pub fn toJSON(vm: *Vm, this: Value, args: []const Value) Error!Value {
    if (this.objectOf(.date)) |o| {
        if (std.math.isNan(o.as(DateObject).time)) return Value.null_value;
        return toISOString(vm, this, args);
    }
    const p = try ops.toPrimitive(vm, this, .number);
    if (p.isNumber() and !std.math.isFinite(p.asNumber())) return Value.null_value;
    const f = try ops.getField(vm, this, names.string("toISOString"));
    if (!ops.isCallable(f)) return vm.throwMessage(.type_error, "toISOString is not a function");
    return vm.call(f, this, &.{});
}

/// Date.prototype[Symbol.toPrimitive](hint).
pub fn toPrimitiveMethod(vm: *Vm, this: Value, args: []const Value) Error!Value {
    const d = try thisTime(vm, this, "[Symbol.toPrimitive]");
    const hint = arg(args, 0);
    if (hint.isString()) {
        const h = hint.asString();
        if (h.eqlLatin1("number")) return Value.number(d.time);
        if (h.eqlLatin1("string") or h.eqlLatin1("default")) return Value.string(try toStringOf(vm, d.time));
    }
    return vm.throwMessage(.type_error, "Invalid hint: " ++ "");
}

// ---------------------------------------------------------------------------------------
// Parsing.

fn parseString(vm: *Vm, s: *const String) Error!f64 {
    try vm.charge(meter.unitsCost(s.len));
    if (s.flags.wide or s.len > 256) return std.math.nan(f64);
    const text = s.latin1();
    if (parseIso(text)) |t| return t;
    return parseLegacy(text) orelse std.math.nan(f64);
}

const Cursor = struct {
    text: []const u8,
    i: usize = 0,

    fn peek(c: *const Cursor) u8 {
        return if (c.i < c.text.len) c.text[c.i] else 0;
    }

    fn eat(c: *Cursor, ch: u8) bool {
        if (c.peek() != ch) return false;
        c.i += 1;
        return true;
    }

    /// Exactly n digits.
    fn digits(c: *Cursor, n: usize) ?i64 {
        if (c.i + n > c.text.len) return null;
        var v: i64 = 0;
        for (c.text[c.i .. c.i + n]) |ch| {
            if (!std.ascii.isDigit(ch)) return null;
            v = v * 10 + (ch - '0');
        }
        c.i += n;
        return v;
    }
};

/// ECMAScript's date time string format (ISO 8601's subset): `YYYY`, `YYYY-MM`,
/// `YYYY-MM-DD`, `±YYYYYY`..., then optionally `THH:mm`, `:ss`, `.sss`, and `Z` or `±HH:mm`.
fn parseIso(text: []const u8) ?f64 {
    var c: Cursor = .{ .text = text };
    var year: i64 = undefined;
    if (c.peek() == '+' or c.peek() == '-') {
        const negative = c.peek() == '-';
        c.i += 1;
        year = c.digits(6) orelse return null;
        if (negative and year == 0) return null;
        if (negative) year = -year;
    } else year = c.digits(4) orelse return null;
    var month: i64 = 1;
    var day: i64 = 1;
    if (c.eat('-')) {
        month = c.digits(2) orelse return null;
        if (c.eat('-')) day = c.digits(2) orelse return null;
    }
    if (month < 1 or month > 12 or day < 1 or day > daysInMonth(year, month)) return null;
    var h: i64 = 0;
    var m: i64 = 0;
    var sec: i64 = 0;
    var ms: f64 = 0;
    var offset_min: i64 = 0;
    if (c.eat('T') or c.eat('t')) {
        h = c.digits(2) orelse return null;
        if (!c.eat(':')) return null;
        m = c.digits(2) orelse return null;
        if (c.eat(':')) {
            sec = c.digits(2) orelse return null;
            if (c.eat('.') or c.eat(',')) {
                const start = c.i;
                var scale: f64 = 100;
                while (std.ascii.isDigit(c.peek())) : (c.i += 1) {
                    ms += @as(f64, @floatFromInt(c.peek() - '0')) * scale;
                    scale /= 10;
                }
                if (c.i == start) return null;
                ms = @floor(ms);
            }
        }
        if (h > 24 or m > 59 or sec > 59) return null;
        if (h == 24 and (m != 0 or sec != 0 or ms != 0)) return null;
        if (c.eat('Z') or c.eat('z')) {
            // UTC.
        } else if (c.peek() == '+' or c.peek() == '-') {
            const sign: i64 = if (c.peek() == '-') -1 else 1;
            c.i += 1;
            const oh = c.digits(2) orelse return null;
            if (!c.eat(':')) return null;
            const om = c.digits(2) orelse return null;
            if (oh > 23 or om > 59) return null;
            offset_min = sign * (oh * 60 + om);
        }
    }
    if (c.i != text.len) return null;
    // A date alone is UTC; a date and time without an offset is local time, UTC here, so
    // neither moves the time.
    const dayn = makeDay(@floatFromInt(year), @floatFromInt(month - 1), @floatFromInt(day));
    const t = makeDate(dayn, makeTime(@floatFromInt(h), @floatFromInt(m), @floatFromInt(sec), ms));
    return timeClip(t - @as(f64, @floatFromInt(offset_min * 60_000)));
}

fn daysInMonth(year: i64, month: i64) i64 {
    return switch (month) {
        2 => if (@mod(year, 4) == 0 and (@mod(year, 100) != 0 or @mod(year, 400) == 0)) 29 else 28,
        4, 6, 9, 11 => 30,
        else => 31,
    };
}

/// The other forms node reads, as V8's legacy parser does: words (month and weekday names,
/// AM/PM, UT/UTC/GMT/Z), numbers, `hh:mm[:ss[.mmm]]`, `±hhmm` or `±hh:mm` offsets after a
/// time or a zone name, and parenthesised comments. With a month name the numbers are the
/// day and the year (the year first if it is above 31); without, `month/day/year`, or
/// `year-month-day` when the first number has more than two digits.
fn parseLegacy(text: []const u8) ?f64 {
    // A sign first is an ISO extended year, which parseIso accepted or refused already.
    if (text.len > 0 and (text[0] == '+' or text[0] == '-')) return null;
    var c: Cursor = .{ .text = text };
    var nums: [3]i64 = undefined;
    var num_digits: [3]usize = undefined;
    var num_count: usize = 0;
    var month_name: ?i64 = null;
    var time: [4]i64 = .{ 0, 0, 0, 0 };
    var has_time = false;
    var offset: ?i64 = null;
    var zone_seen = false;
    var pm: ?bool = null;
    while (c.i < text.len) {
        const ch = c.peek();
        if (std.ascii.isDigit(ch)) {
            const start = c.i;
            var v: i64 = 0;
            while (std.ascii.isDigit(c.peek())) : (c.i += 1) {
                if (c.i - start > 9) return null;
                v = v * 10 + (c.peek() - '0');
            }
            const n = c.i - start;
            if (c.peek() == ':' and !has_time) {
                // hh:mm[:ss[.mmm]]
                has_time = true;
                time[0] = v;
                c.i += 1;
                time[1] = readNumber(&c) orelse return null;
                if (c.eat(':')) {
                    time[2] = readNumber(&c) orelse return null;
                    if (c.eat('.')) {
                        const s0 = c.i;
                        var ms: i64 = 0;
                        var k: usize = 0;
                        while (std.ascii.isDigit(c.peek())) : (c.i += 1) {
                            if (k < 3) ms = ms * 10 + (c.peek() - '0');
                            k += 1;
                        }
                        if (c.i == s0) return null;
                        while (k < 3) : (k += 1) ms *= 10;
                        time[3] = ms;
                    }
                }
                continue;
            }
            if (num_count >= 3) return null;
            nums[num_count] = v;
            num_digits[num_count] = n;
            num_count += 1;
            continue;
        }
        if (std.ascii.isAlphabetic(ch)) {
            const start = c.i;
            while (std.ascii.isAlphabetic(c.peek())) c.i += 1;
            const word = text[start..c.i];
            if (word.len < 2 and !(word.len == 1 and (word[0] == 'Z' or word[0] == 'z' or word[0] == 'T' or word[0] == 't'))) return null;
            if (std.ascii.eqlIgnoreCase(word, "am") or std.ascii.eqlIgnoreCase(word, "pm")) {
                pm = std.ascii.eqlIgnoreCase(word, "pm");
            } else if (std.ascii.eqlIgnoreCase(word, "ut") or std.ascii.eqlIgnoreCase(word, "utc") or
                std.ascii.eqlIgnoreCase(word, "gmt") or std.ascii.eqlIgnoreCase(word, "z"))
            {
                zone_seen = true;
                if (offset == null) offset = 0;
            } else if (std.ascii.eqlIgnoreCase(word, "t")) {
                // The date and time separator of an ISO-like text.
            } else if (word.len >= 3) {
                if (monthIndex(word)) |m| {
                    if (month_name != null) return null;
                    month_name = m;
                } else if (!isDayName(word)) return null;
            } else return null;
            continue;
        }
        if ((ch == '+' or ch == '-') and (has_time or zone_seen) and c.i + 1 < text.len and std.ascii.isDigit(text[c.i + 1])) {
            const sign: i64 = if (ch == '-') -1 else 1;
            c.i += 1;
            const s0 = c.i;
            var v: i64 = readNumber(&c) orelse return null;
            const n = c.i - s0;
            if (c.eat(':')) {
                const mm = readNumber(&c) orelse return null;
                v = v * 60 + mm;
            } else if (n <= 2) {
                v *= 60;
            } else {
                v = @divFloor(v, 100) * 60 + @mod(v, 100);
            }
            offset = sign * v;
            continue;
        }
        if (ch == '(') {
            var depth: usize = 0;
            while (c.i < text.len) : (c.i += 1) {
                if (text[c.i] == '(') depth += 1;
                if (text[c.i] == ')') {
                    depth -= 1;
                    if (depth == 0) {
                        c.i += 1;
                        break;
                    }
                }
            }
            continue;
        }
        if (ch == ' ' or ch == ',' or ch == '/' or ch == '-' or ch == '.' or ch == '\t') {
            c.i += 1;
            continue;
        }
        return null;
    }
    var year: i64 = undefined;
    var month: i64 = undefined;
    var day: i64 = undefined;
    var year_digits: usize = 4;
    if (month_name) |m| {
        month = m;
        switch (num_count) {
            1 => {
                year = nums[0];
                year_digits = num_digits[0];
                day = 1;
            },
            2 => {
                if (nums[0] > 31 or num_digits[0] > 2) {
                    year = nums[0];
                    year_digits = num_digits[0];
                    day = nums[1];
                } else {
                    day = nums[0];
                    year = nums[1];
                    year_digits = num_digits[1];
                }
            },
            else => return null,
        }
    } else {
        if (num_count != 3) return null;
        if (num_digits[0] > 2) {
            year = nums[0];
            year_digits = num_digits[0];
            month = nums[1] - 1;
            day = nums[2];
        } else {
            month = nums[0] - 1;
            day = nums[1];
            year = nums[2];
            year_digits = num_digits[2];
        }
    }
    if (year_digits <= 2) year += if (year < 50) 2000 else 1900;
    if (month < 0 or month > 11 or day < 1 or day > 31) return null;
    if (pm) |is_pm| {
        if (time[0] > 12) return null;
        if (is_pm and time[0] < 12) time[0] += 12;
        if (!is_pm and time[0] == 12) time[0] = 0;
    }
    if (time[0] > 24 or time[1] > 59 or time[2] > 59) return null;
    if (time[0] == 24 and (time[1] != 0 or time[2] != 0 or time[3] != 0)) return null;
    const dayn = makeDay(@floatFromInt(year), @floatFromInt(month), @floatFromInt(day));
    const t = makeDate(dayn, makeTime(@floatFromInt(time[0]), @floatFromInt(time[1]), @floatFromInt(time[2]), @floatFromInt(time[3])));
    const off: i64 = offset orelse 0;
    return timeClip(t - @as(f64, @floatFromInt(off * 60_000)));
}

fn readNumber(c: *Cursor) ?i64 {
    const start = c.i;
    var v: i64 = 0;
    while (std.ascii.isDigit(c.peek())) : (c.i += 1) {
        if (c.i - start > 9) return null;
        v = v * 10 + (c.peek() - '0');
    }
    if (c.i == start) return null;
    return v;
}

fn monthIndex(word: []const u8) ?i64 {
    const full = [_][]const u8{ "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december" };
    for (full, 0..) |name, i| {
        if (word.len <= name.len and std.ascii.eqlIgnoreCase(word, name[0..word.len])) return @intCast(i);
    }
    return null;
}

fn isDayName(word: []const u8) bool {
    const full = [_][]const u8{ "sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday" };
    for (full) |name| {
        if (word.len <= name.len and std.ascii.eqlIgnoreCase(word, name[0..word.len])) return true;
    }
    return false;
}

test "dates: civil days and fields agree both ways" {
    try std.testing.expectEqual(@as(i64, 0), daysFromCivil(1970, 0));
    try std.testing.expectEqual(@as(f64, 1704164645006), compose(.{ 2024, 0, 2, 3, 4, 5, 6 }));
    const f = Fields.of(1704164645006);
    try std.testing.expectEqual(@as(i64, 2024), f.year);
    try std.testing.expectEqual(@as(u8, 2), f.weekday);
    const neg = Fields.of(-62198755200000);
    try std.testing.expectEqual(@as(i64, -1), neg.year);
    try std.testing.expectEqual(@as(u8, 5), neg.weekday);
}

test "dates: ISO and the legacy forms parse as node parses them" {
    try std.testing.expectEqual(@as(f64, 1704153600000), parseIso("2024-01-02").?);
    try std.testing.expectEqual(@as(f64, 1704161045000), parseIso("2024-01-02T03:04:05+01:00").?);
    try std.testing.expect(parseIso("2024-1-2") == null);
    try std.testing.expectEqual(@as(f64, 1704164645000), parseLegacy("Tue, 02 Jan 2024 03:04:05 GMT").?);
    try std.testing.expectEqual(@as(f64, 1704153600000), parseLegacy("Jan 2, 2024").?);
    try std.testing.expectEqual(@as(f64, -3600000), parseLegacy("Thu, 01 Jan 1970 00:00:00 GMT+0100").?);
    try std.testing.expectEqual(@as(f64, 1704189600000), parseLegacy("2 January 2024 10:00 UTC").?);
    try std.testing.expect(parseLegacy("garbage") == null);
}
