//! The language's abstract operations (ECMA-262 section 7): conversions, equality, relational
//! comparison, property access on every kind of value, and iteration. The interpreter calls
//! these for everything beyond its inline fast paths; the builtins call them too.
//!
//! Property access has no prototype chain to walk: an object's own properties come first,
//! then the builtin methods of its kind (comptime tables in builtins.zig, looked up by the
//! key's builtin name id), then Object.prototype's.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const value_mod = @import("value.zig");
const Value = value_mod.Value;
const Cell = value_mod.Cell;
const string = @import("string.zig");
const String = string.String;
const object = @import("object.zig");
const Object = object.Object;
const number = @import("number.zig");
const names = @import("names.zig");
const builtins = @import("builtins.zig");
const bytecode = @import("bytecode.zig");
const meter = @import("meter.zig");
const classes = @import("classes.zig");
const symbol = @import("symbol.zig");
const changes = @import("builtin_changes.zig");

// ---------------------------------------------------------------------------------------
// Formatting values into messages.

/// `{f}` of a string: its UTF-8 text.
pub const StringFormat = struct {
    s: *const String,

    pub fn format(self: StringFormat, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try string.writeUtf8(w, self.s);
    }
};

/// `{f}` of a property key: a name's text, a symbol as `Symbol(desc)`.
pub const KeyFormat = struct {
    s: *const String,

    pub fn format(self: KeyFormat, w: *std.Io.Writer) std.Io.Writer.Error!void {
        if (self.s.flags.symbol) return symbol.writeDescriptive(w, self.s);
        try string.writeUtf8(w, self.s);
    }
};

/// `{f}` of a value as V8 names it in a message where no source text is at hand.
pub const ShortFormat = struct {
    vm: *Vm,
    v: Value,

    pub fn format(self: ShortFormat, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const v = self.v;
        if (v.isNumber()) {
            var buf: [number.format_bytes_max]u8 = undefined;
            return w.writeAll(number.format(&buf, v.asNumber()));
        }
        if (v.isString()) {
            try w.writeByte('"');
            try string.writeUtf8(w, v.asString());
            return w.writeByte('"');
        }
        if (v.isUndefined()) return w.writeAll("undefined");
        if (v.isNull()) return w.writeAll("null");
        if (v.eqlBits(Value.true_value)) return w.writeAll("true");
        if (v.eqlBits(Value.false_value)) return w.writeAll("false");
        if (v.is(.symbol)) return symbol.writeDescriptive(w, v.asSymbolKey());
        if (v.is(.object)) {
            return switch (v.asObject().kind) {
                .array => w.writeAll("object"),
                .closure => w.writeAll("function"),
                else => w.writeAll("#<Object>"),
            };
        }
        return w.writeAll("function");
    }
};

/// `{f}` of a value as V8's NoSideEffectsToString shows it, in the messages of builtins that
/// name a bad argument by its value ("s is not a function" from `[1].map("s")`): primitives
/// as String() shows them, a function as its source text, an error as its toString, an array
/// as `[object Array]`, an object with a toString of its own as `[object Object]`, and other
/// objects by their constructor's name (`#<Object>`, `#<Map>`).
pub const ValueText = struct {
    vm: *Vm,
    v: Value,

    pub fn format(self: ValueText, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const v = self.v;
        if (v.isString()) return string.writeUtf8(w, v.asString());
        // Math, JSON and console are plain objects whose constructor is Object.
        if (v.is(.builtin) and !builtins.isCallableBuiltin(@intCast(v.payload()))) return w.writeAll("#<Object>");
        if (v.is(.native) or v.is(.builtin)) {
            const text = toString(self.vm, v) catch return w.writeAll("#<Object>");
            return string.writeUtf8(w, text);
        }
        if (!v.is(.object)) return (ShortFormat{ .vm = self.vm, .v = v }).format(w);
        const o = v.asObject();
        switch (o.kind) {
            .closure => {
                const f = o.as(object.Closure).function;
                return w.writeAll(self.vm.program.source[f.source_start..f.source_end]);
            },
            .error_object => return errorText(w, o),
            .array => return w.writeAll("[object Array]"),
            .bound_function, .promise_function => return w.writeAll("function () { [native code] }"),
            .regexp => {
                const text = builtins.regexps.toStringOf(self.vm, o.as(object.RegExpObject)) catch return w.writeAll("#<RegExp>");
                return string.writeUtf8(w, text);
            },
            .plain, .map, .set, .iterator, .accessor, .generator, .promise, .date => {},
            .array_buffer => return w.writeAll("#<ArrayBuffer>"),
            .typed_array => return w.print("[object {s}]", .{o.as(object.TypedArray).element.name()}),
        }
        if (o.properties.get(names.string("toString")) != null) return w.writeAll("[object Object]");
        if (o.properties.get(names.string("constructor"))) |constructor| {
            const name = functionName(self.vm, constructor);
            if (name.len > 0) return w.print("#<{s}>", .{name});
            return w.writeAll("[object Object]");
        }
        return w.writeAll(switch (o.kind) {
            .map => "#<Map>",
            .set => "#<Set>",
            else => "#<Object>",
        });
    }

    /// Error.prototype.toString without running anything: the own name and message.
    fn errorText(w: *std.Io.Writer, o: *Object) std.Io.Writer.Error!void {
        const e = o.as(object.ErrorObject);
        const name_value = o.properties.get(names.string("name"));
        const message: ?*const String = if (o.properties.get(names.string("message"))) |m|
            (if (m.isString()) m.asString() else null)
        else
            e.message;
        if (name_value != null and name_value.?.isString()) {
            try string.writeUtf8(w, name_value.?.asString());
        } else {
            try w.writeAll(e.error_kind.name());
        }
        if (message) |m| if (m.len > 0) {
            try w.writeAll(": ");
            try string.writeUtf8(w, m);
        };
    }

    /// A function value's name, or "" for anything else.
    fn functionName(vm: *Vm, f: Value) []const u8 {
        if (f.objectOf(.closure)) |c| {
            const name = vm.closureName(c.as(object.Closure));
            // A wide name (non-Latin-1) is not shown.
            return if (name.flags.wide) "" else name.latin1();
        }
        if (f.is(.native)) return builtins.native(vm, @intCast(f.payload())).name;
        if (f.is(.builtin) and builtins.isCallableBuiltin(@intCast(f.payload()))) {
            return builtins.builtinName(vm, @intCast(f.payload()));
        }
        return "";
    }
};

// ---------------------------------------------------------------------------------------
// Conversions.

pub fn toBoolean(v: Value) bool {
    if (v.isNumber()) {
        const x = v.asNumber();
        return !(x == 0 or std.math.isNan(x));
    }
    if (v.isString()) return v.asString().len > 0;
    if (v.is(.special)) return v.eqlBits(Value.true_value);
    return true;
}

/// ToNumber; only objects can run user code (their valueOf or toString).
pub fn toNumber(vm: *Vm, v: Value) Error!f64 {
    if (v.isNumber()) return v.asNumber();
    if (v.isString()) return stringToNumber(v.asString());
    if (v.is(.special)) {
        if (v.eqlBits(Value.true_value)) return 1;
        if (v.eqlBits(Value.false_value) or v.isNull()) return 0;
        return std.math.nan(f64);
    }
    if (v.is(.object)) {
        const p = try toPrimitive(vm, v, .number);
        return toNumber(vm, p);
    }
    if (v.is(.symbol)) return vm.throwMessage(.type_error, "Cannot convert a Symbol value to a number");
    return std.math.nan(f64);
}

pub fn toNumberValue(vm: *Vm, v: Value) Error!f64 {
    return if (v.isNumber()) v.asNumber() else toNumber(vm, v);
}

pub fn stringToNumber(s: *const String) f64 {
    meter.charge(meter.unitsCost(2 * @as(usize, s.len)));
    // Trim JavaScript white space; what remains must be ASCII to be a number.
    var start: usize = 0;
    var end: usize = s.len;
    while (start < end and number.isSpace(s.at(start))) start += 1;
    while (end > start and number.isSpace(s.at(end - 1))) end -= 1;
    if (end - start > 512) return longStringToNumber(s, start, end);
    var buf: [512]u8 = undefined;
    for (start..end) |i| {
        const u = s.at(i);
        if (u > 0x7F) return std.math.nan(f64);
        buf[i - start] = @intCast(u);
    }
    return number.parse(buf[0 .. end - start]);
}

fn longStringToNumber(s: *const String, start: usize, end: usize) f64 {
    // Only a long run of digits (or zeros after a point) can be a number this long; anything
    // else is NaN. Parse digits directly from the units.
    if (s.flags.wide) return std.math.nan(f64);
    return number.parse(s.latin1()[start..end]);
}

pub const Hint = enum { default, number, string };

/// ToPrimitive: an object's `[Symbol.toPrimitive](hint)` if it has one, then its own
/// `valueOf`/`toString` if it has callable ones (user code), otherwise the builtin
/// conversions of its kind.
pub fn toPrimitive(vm: *Vm, v: Value, hint: Hint) Error!Value {
    // Builtin objects and functions (Math, Math.max) convert to their toString text.
    if (v.is(.builtin) or v.is(.native)) return Value.string(try toString(vm, v));
    if (!v.is(.object)) return v;
    const o = v.asObject();
    if (try exoticToPrimitive(vm, v, hint)) |p| return p;
    // A Date's default hint is string (Date.prototype[Symbol.toPrimitive]).
    const as_string = hint == .string or (hint == .default and o.kind == .date);
    const first = if (as_string) names.string("toString") else names.string("valueOf");
    const second = if (as_string) names.string("valueOf") else names.string("toString");
    // OrdinaryToPrimitive: each method in turn, own or inherited; the first primitive
    // result wins. The inherited valueOf returns the object itself, so it never does; the
    // inherited toString always does.
    for ([_]*String{ first, second }) |method| {
        const f = try getField(vm, v, method);
        // With builtins changed, the native may not be the kind's own: call it as it is.
        if (f.is(.native) and o.properties.find(method) == null and vm.builtin_changes == null) {
            // The builtin's own: toString's text of its kind; valueOf gives the object.
            if (method == names.string("toString")) return Value.string(try defaultString(vm, o));
            if (o.kind == .date) return Value.number(o.as(object.DateObject).time);
        } else if (isCallable(f)) {
            const result = try vm.call(f, v, &.{});
            if (!result.is(.object)) return result;
        }
    }
    return vm.throwMessage(.type_error, "Cannot convert object to primitive value");
}

/// ES §7.1.1 steps 2.a-d: `input[Symbol.toPrimitive]`, called with the hint's name, must
/// give a primitive; null when the object has none. A Date's own (the builtin, on its
/// prototype) is left to the ordinary order below, which sees a replaced valueOf or
/// toString as the builtin's steps do.
fn exoticToPrimitive(vm: *Vm, v: Value, hint: Hint) Error!?Value {
    const exotic = try getField(vm, v, symbol.wellKnown("@@toPrimitive"));
    if (exotic.isNullish()) return null;
    if (exotic.is(.native) and v.asObject().kind == .date) return null;
    if (!isCallable(exotic)) return vm.throwFmt(.type_error, "{f} is not a function", .{DefaultSite{ .vm = vm, .v = exotic }});
    const name = switch (hint) {
        .default => names.string("default"),
        .number => names.string("number"),
        .string => names.string("string"),
    };
    const result = try vm.call(exotic, v, &.{Value.string(name)});
    if (isObjectLike(result)) return vm.throwMessage(.type_error, "Cannot convert object to primitive value");
    return result;
}

/// What Object.prototype.toString (and Array's, Error's) make of an object.
fn defaultString(vm: *Vm, o: *Object) Error!*String {
    switch (o.kind) {
        .array => return builtins.array.join(vm, o.as(object.Array), names.string(",")),
        .error_object => return builtins.errors.errorToString(vm, Value.obj(o)),
        .closure => {
            // Its source text, as JavaScript's Function.prototype.toString gives it.
            const f = o.as(object.Closure).function;
            return vm.newString(vm.program.source[f.source_start..f.source_end]);
        },
        .map => return if (builtins.headers.isHeaders(o))
            vm.newLatin1("[object Headers]")
        else if (builtins.urlsearchparams.isSearchParams(o))
            (try builtins.urlsearchparams.toStringMethod(vm, Value.obj(o), &.{})).asString()
        else if (builtins.url.isUrl(o))
            (try builtins.url.toStringMethod(vm, Value.obj(o), &.{})).asString()
        else if (builtins.data_view.isDataView(o))
            vm.newLatin1("[object DataView]")
        else
            names.string("[object Map]"),
        .set => return names.string("[object Set]"),
        .bound_function => return vm.newLatin1("function () { [native code] }"),
        .accessor => return names.string("[object Object]"),
        .generator => return vm.newLatin1(if (o.as(object.Generator).async_generator != null) "[object AsyncGenerator]" else "[object Generator]"),
        .promise => return vm.newLatin1("[object Promise]"),
        .promise_function => return vm.newLatin1("function () { [native code] }"),
        .regexp => return builtins.regexps.toStringOf(vm, o.as(object.RegExpObject)),
        .date => return builtins.dates.toStringOf(vm, o.as(object.DateObject).time),
        // Each kind of iterator has its own toStringTag.
        .iterator => return vm.newLatin1(switch (o.as(object.Iterator).iterator_kind) {
            .map_keys, .map_values, .map_entries => "[object Map Iterator]",
            .set_values, .set_entries => "[object Set Iterator]",
            .array_keys, .array_values, .array_entries => "[object Array Iterator]",
            .string_values => "[object String Iterator]",
            .for_in_keys, .protocol => "[object Object]",
        }),
        .plain => return if (builtins.request.isRequestLike(Value.obj(o)))
            vm.newLatin1("[object Request]")
        else if (builtins.arguments.isArguments(o))
            vm.newLatin1("[object Arguments]")
        else
            // Object.prototype.toString's own steps: a [Symbol.toStringTag] names the tag.
            (try builtins.objects.toStringMethod(vm, Value.obj(o), &.{})).asString(),
        .array_buffer => return vm.newLatin1("[object ArrayBuffer]"),
        .typed_array => return (try builtins.typed_arrays.toStringMethod(vm, Value.obj(o), &.{})).asString(),
    }
}

/// Whether `typeof v` is "object" or "function" (and not null): heap objects, and the builtin
/// objects and functions, which are tagged values of their own.
pub fn isObjectLike(v: Value) bool {
    return v.is(.object) or v.is(.builtin) or v.is(.native);
}

pub fn isCallable(v: Value) bool {
    if (v.is(.native)) return true;
    if (v.objectOf(.closure) != null) return true;
    if (v.objectOf(.bound_function) != null) return true;
    if (v.objectOf(.promise_function) != null) return true;
    if (v.is(.builtin)) return builtins.isCallableBuiltin(@intCast(v.payload()));
    return false;
}

/// ToString.
pub fn toString(vm: *Vm, v: Value) Error!*String {
    if (v.isString()) return v.asString();
    if (v.isNumber()) return numberToString(vm, v.asNumber());
    if (v.is(.special)) {
        if (v.eqlBits(Value.true_value)) return names.string("true");
        if (v.eqlBits(Value.false_value)) return names.string("false");
        if (v.isNull()) return names.string("null");
        return names.string("undefined");
    }
    if (v.is(.object)) {
        const p = try toPrimitive(vm, v, .string);
        return toString(vm, p);
    }
    if (v.is(.native)) {
        const native = builtins.native(vm, @intCast(v.payload()));
        // node's console methods are bound functions, whose text has no name.
        const bound = native.func == builtins.console.log or native.func == builtins.console.logError;
        var buf: [128]u8 = undefined;
        const text = if (bound)
            "function () { [native code] }"
        else
            std.fmt.bufPrint(&buf, "function {s}() {{ [native code] }}", .{native.name}) catch "function () { [native code] }";
        return vm.newString(text);
    }
    if (v.is(.builtin)) return builtins.builtinToString(vm, @intCast(v.payload()));
    if (v.is(.symbol)) return vm.throwMessage(.type_error, "Cannot convert a Symbol value to a string");
    return names.string("undefined");
}

pub fn numberToString(vm: *Vm, x: f64) Error!*String {
    if (x >= 0 and x < string.small_integers_count and x == @trunc(x)) {
        return string.smallInteger(@intFromFloat(x));
    }
    var buf: [number.format_bytes_max]u8 = undefined;
    return vm.newLatin1(number.format(&buf, x));
}

/// ToPropertyKey: strings as they are, a symbol as its key, everything else through
/// ToString (an object's ToPrimitive may give a symbol).
pub fn toPropertyKey(vm: *Vm, v: Value) Error!*String {
    if (v.isString()) return v.asString();
    if (v.is(.symbol)) return v.asSymbolKey();
    if (v.is(.object)) {
        const p = try toPrimitive(vm, v, .string);
        if (p.is(.symbol)) return p.asSymbolKey();
        return toString(vm, p);
    }
    return toString(vm, v);
}

pub fn typeOf(vm: *Vm, v: Value) *String {
    if (v.isNumber()) return names.string("number");
    if (v.isString()) return names.string("string");
    if (v.is(.symbol)) return names.string("symbol");
    if (v.is(.special)) {
        if (v.isBool()) return names.string("boolean");
        if (v.isNull()) return names.string("object");
        return names.string("undefined");
    }
    // A host's constructor (a handler's Response) is a function too.
    if (isCallable(v) or builtins.isHostConstructor(vm, v)) return names.string("function");
    return names.string("object");
}

// ---------------------------------------------------------------------------------------
// Arithmetic and comparison.

pub fn modulo(x: f64, y: f64) f64 {
    // Integers (the common case) take the integer remainder; fmod is a slow loop.
    const limit = 9007199254740992.0;
    if (x == @trunc(x) and y == @trunc(y) and @abs(x) < limit and @abs(y) < limit and y != 0) {
        const r = @rem(@as(i64, @intFromFloat(x)), @as(i64, @intFromFloat(y)));
        // The result has the dividend's sign, zero included: -4 % 2 is -0.
        if (r == 0) return if (std.math.signbit(x)) -0.0 else 0.0;
        return @floatFromInt(r);
    }
    if (std.math.isInf(y) and !std.math.isInf(x)) return x;
    return @rem(x, y);
}

/// `x ** y` and Math.pow: V8's fdlibm pow, whose special cases are already JavaScript's
/// (`1 ** Infinity` is NaN, `NaN ** 0` is 1).
pub fn power(x: f64, y: f64) f64 {
    return @import("fdlibm.zig").pow(x, y);
}

pub fn bitwise(op: bytecode.Op, x: f64, y: f64) f64 {
    const a = number.toInt32(x);
    const b = number.toInt32(y);
    const shift: u5 = @intCast(number.toUint32(y) & 31);
    return switch (op) {
        .bit_and => @floatFromInt(a & b),
        .bit_or => @floatFromInt(a | b),
        .bit_xor => @floatFromInt(a ^ b),
        .shl => @floatFromInt(a << shift),
        .sar => @floatFromInt(a >> shift),
        .shr => @floatFromInt(number.toUint32(x) >> shift),
        else => unreachable,
    };
}

pub fn add(vm: *Vm, a: Value, b: Value) Error!Value {
    if (a.isString() and b.isString()) return Value.string(try concatTwo(vm, a.asString(), b.asString()));
    const pa = try toPrimitive(vm, a, .default);
    const pb = try toPrimitive(vm, b, .default);
    if (pa.isString() or pb.isString()) {
        const sa = try toString(vm, pa);
        const sb = try toString(vm, pb);
        return Value.string(try concatTwo(vm, sa, sb));
    }
    return Value.number(try toNumber(vm, pa) + try toNumber(vm, pb));
}

/// a + b on strings; V8's RangeError past the longest string it makes.
pub fn concatTwo(vm: *Vm, a: *String, b: *String) Error!*String {
    if (@as(usize, a.len) + b.len > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    return string.concat(vm.heap, a, b) catch vm.outOfMemory();
}

pub fn strictEquals(a: Value, b: Value) bool {
    if (a.isNumber() and b.isNumber()) return a.asNumber() == b.asNumber();
    if (a.isString() and b.isString()) return a.asString().eql(b.asString());
    return a.bits == b.bits;
}

pub fn looseEquals(vm: *Vm, a: Value, b: Value) Error!bool {
    if (a.isNumber() and b.isNumber()) return a.asNumber() == b.asNumber();
    if (a.isString() and b.isString()) return a.asString().eql(b.asString());
    if (a.isNullish() or b.isNullish()) return a.isNullish() and b.isNullish();
    if (isObjectLike(a) and isObjectLike(b)) return a.bits == b.bits;
    if (a.isBool()) return looseEquals(vm, Value.number(try toNumber(vm, a)), b);
    if (b.isBool()) return looseEquals(vm, a, Value.number(try toNumber(vm, b)));
    if (a.isNumber() and b.isString()) return a.asNumber() == stringToNumber(b.asString());
    if (a.isString() and b.isNumber()) return stringToNumber(a.asString()) == b.asNumber();
    if (isObjectLike(a) and (b.isNumber() or b.isString())) return looseEquals(vm, try toPrimitive(vm, a, .default), b);
    if (isObjectLike(b) and (a.isNumber() or a.isString())) return looseEquals(vm, a, try toPrimitive(vm, b, .default));
    return a.bits == b.bits;
}

/// `<`, `<=`, `>`, `>=` on values that are not both numbers.
pub fn compare(vm: *Vm, op: bytecode.Op, a: Value, b: Value) Error!bool {
    const pa = try toPrimitive(vm, a, .number);
    const pb = try toPrimitive(vm, b, .number);
    if (pa.isString() and pb.isString()) {
        const order = pa.asString().order(pb.asString());
        return switch (op) {
            .lt => order == .lt,
            .le => order != .gt,
            .gt => order == .gt,
            .ge => order != .lt,
            else => unreachable,
        };
    }
    const x = try toNumber(vm, pa);
    const y = try toNumber(vm, pb);
    return switch (op) {
        .lt => x < y,
        .le => x <= y,
        .gt => x > y,
        .ge => x >= y,
        else => unreachable,
    };
}

pub fn instanceOf(vm: *Vm, v: Value, constructor: Value) Error!bool {
    if (!(constructor.is(.object) or constructor.is(.builtin) or constructor.is(.native))) {
        return vm.throwMessage(.type_error, "Right-hand side of 'instanceof' is not an object");
    }
    // A host's constructor (a handler's Response) is no builtin function, but its instances
    // are known by their class.
    if (constructor.is(.builtin) and constructor.payload() >= builtins.builtin_objects.len) {
        return builtins.isInstance(vm, @intCast(constructor.payload()), v);
    }
    if (!isCallable(constructor)) {
        return vm.throwMessage(.type_error, "Right-hand side of 'instanceof' is not callable");
    }
    if (constructor.objectOf(.bound_function)) |b| return instanceOf(vm, v, b.as(object.BoundFunction).target);
    if (constructor.objectOf(.closure)) |_| {
        const prototype = try getField(vm, constructor, names.string("prototype"));
        if (!isObjectLike(prototype)) {
            return vm.throwMessage(.type_error, "Function has non-object prototype 'undefined' in instanceof check");
        }
        return inherits(v, prototype);
    }
    if (!constructor.is(.builtin)) return false; // A builtin function that is no constructor.
    return builtins.isInstance(vm, @intCast(constructor.payload()), v);
}

/// Whether `prototype` is on v's prototype chain.
pub fn inherits(v: Value, prototype: Value) bool {
    if (!v.is(.object)) return false;
    var current = prototypeOf(v.asObject());
    var depth: u32 = 0;
    while (depth < chain_depth_max) : (depth += 1) {
        if (current.eqlBits(prototype)) return true;
        if (current.is(.object)) {
            current = prototypeOf(current.asObject());
        } else if (current.is(.builtin)) {
            current = builtins.prototypeOfBuiltin(@intCast(current.payload()));
        } else return false;
    }
    return false;
}

/// The longest prototype chain walked; `setPrototypeOf` refuses cycles, so only a chain built
/// that long could reach it.
pub const chain_depth_max: u32 = 100_000;

/// An object's prototype: its own link, or its kind's builtin prototype.
pub fn prototypeOf(o: *const Object) Value {
    if (!o.proto.isUndefined()) return o.proto;
    return builtins.kindPrototype(o);
}

/// The prototype an object made by `new` with this new.target inherits from: its
/// `prototype` if that is an object, else Object.prototype.
pub fn prototypeForNew(vm: *Vm, new_target: Value) Error!Value {
    const p = try getField(vm, new_target, names.string("prototype"));
    if (p.is(.object) or p.is(.builtin)) return p;
    return Value.undefined_value;
}

/// `key in obj`.
pub fn hasProperty(vm: *Vm, obj: Value, key_value: Value) Error!bool {
    if (obj.is(.builtin) or obj.is(.native)) {
        // Their members are all defined values, and Object.prototype gives `constructor`.
        const key = try toPropertyKey(vm, key_value);
        if (key.eqlLatin1("constructor")) return true;
        return !(try getPrimitiveField(vm, obj, key)).isUndefined();
    }
    if (!obj.is(.object)) {
        // V8 throws before converting an object key and shows it as NoSideEffectsToString
        // does ('#<Object>', '[object Array]').
        if (isObjectLike(key_value)) {
            return vm.throwFmt(.type_error, "Cannot use 'in' operator to search for '{f}' in {f}", .{
                ValueText{ .vm = vm, .v = key_value }, ValueText{ .vm = vm, .v = obj },
            });
        }
        const key = try toPropertyKey(vm, key_value);
        // V8 shows a string operand without quotes.
        if (obj.isString()) {
            return vm.throwFmt(.type_error, "Cannot use 'in' operator to search for '{f}' in {f}", .{
                KeyFormat{ .s = key }, StringFormat{ .s = obj.asString() },
            });
        }
        return vm.throwFmt(.type_error, "Cannot use 'in' operator to search for '{f}' in {f}", .{
            KeyFormat{ .s = key }, ShortFormat{ .vm = vm, .v = obj },
        });
    }
    const o = obj.asObject();
    if (key_value.isString() and key_value.asString().flags.private) return o.properties.find(key_value.asString()) != null;
    if (o.kind == .array and key_value.isNumber()) {
        const a = o.as(object.Array);
        if (arrayIndex(key_value.asNumber())) |i| return i < a.len and !a.items[i].eqlBits(Value.hole);
    }
    const key = try toPropertyKey(vm, key_value);
    if (o.properties.find(key) != null) return true;
    if (!o.proto.isUndefined()) {
        if (hasIntrinsic(o, key)) return true;
        const proto = o.proto;
        if (proto.isNull()) return false;
        return hasProperty(vm, proto, if (key.flags.symbol) Value.symbol(key) else Value.string(key));
    }
    switch (o.kind) {
        .array => {
            const a = o.as(object.Array);
            if (key.arrayIndex()) |i| return i < a.len and !a.items[i].eqlBits(Value.hole);
            if (key.eqlLatin1("length")) return true;
        },
        // Error.prototype has name and message; every error has its own stack.
        .error_object => if (key.eqlLatin1("message") or key.eqlLatin1("name") or key.eqlLatin1("stack") or
            (key.eqlLatin1("cause") and !o.as(object.ErrorObject).cause.eqlBits(Value.hole))) return true,
        .closure => if (key.eqlLatin1("name") or key.eqlLatin1("length") or isPoisoned(key)) return true,
        .map => {
            if (builtins.url.isUrl(o) and builtins.url.isField(key)) return true;
            if (builtins.data_view.isDataView(o) and builtins.data_view.isField(key)) return true;
            if (!builtins.url.isUrl(o) and !builtins.data_view.isDataView(o) and key.eqlLatin1("size") and !builtins.headers.isHeaders(o)) return true;
        },
        .set => if (key.eqlLatin1("size")) return true,
        .typed_array => if (key.arrayIndex()) |i| return i < o.as(object.TypedArray).len else if (builtins.typed_arrays.isField(key)) return true,
        .array_buffer => if (key.eqlLatin1("byteLength")) return true,
        else => {},
    }
    if (vm.builtin_changes != null) return changes.has(vm, builtins.kindPrototype(o), key);
    if (key.eqlLatin1("constructor")) return true;
    return builtins.protoMember(vm, o, key) != null;
}

// ---------------------------------------------------------------------------------------
// Properties.

/// The array index a number denotes, if it is one.
pub inline fn arrayIndex(x: f64) ?u32 {
    if (!(x >= 0 and x < 4294967295.0)) return null;
    const i: u32 = @intFromFloat(x);
    if (@as(f64, @floatFromInt(i)) != x) return null;
    return i;
}

pub fn getField(vm: *Vm, obj: Value, key: *String) Error!Value {
    if (obj.is(.object)) {
        const o = obj.asObject();
        if (o.properties.find(key)) |i| {
            const p = o.properties.items[i];
            if (p.flags.accessor) return callGetter(vm, p.value, obj);
            return p.value;
        }
        if (!o.proto.isUndefined()) return getInherited(vm, o, key, obj);
        return getObjectField(vm, o, key);
    }
    return getPrimitiveField(vm, obj, key);
}

/// Runs an accessor's getter with `receiver` as `this` (undefined without one).
pub fn callGetter(vm: *Vm, accessor: Value, receiver: Value) Error!Value {
    const a = accessor.asObject().as(object.Accessor);
    if (a.getter.isUndefined()) return Value.undefined_value;
    return vm.call(a.getter, receiver, &.{});
}

/// A property not among an object's own, on an object whose prototype is its own link: its
/// kind's own fields (an array's length...), then the chain.
fn getInherited(vm: *Vm, o: *Object, key: *String, receiver: Value) Error!Value {
    if (o.kind != .plain) {
        if (hasIntrinsic(o, key)) return getObjectField(vm, o, key);
    }
    if (o.proto.isNull()) return Value.undefined_value;
    return getFieldFrom(vm, o.proto, key, receiver);
}

/// `key` looked up from `start` along the prototype chain, getters run with `receiver`.
pub fn getFieldFrom(vm: *Vm, start: Value, key: *String, receiver: Value) Error!Value {
    var current = start;
    var depth: u32 = 0;
    while (depth < chain_depth_max) : (depth += 1) {
        if (current.is(.builtin)) {
            if (vm.builtin_changes != null) return changes.get(vm, current, key, receiver);
            return builtins.staticMember(vm, @intCast(current.payload()), key);
        }
        if (!current.is(.object)) return Value.undefined_value;
        const o = current.asObject();
        if (o.properties.find(key)) |i| {
            const p = o.properties.items[i];
            if (p.flags.accessor) return callGetter(vm, p.value, receiver);
            return p.value;
        }
        if (o.proto.isUndefined()) return getObjectField(vm, o, key);
        if (o.kind != .plain and hasIntrinsic(o, key)) return getObjectField(vm, o, key);
        if (o.proto.isNull()) return Value.undefined_value;
        current = o.proto;
    }
    return vm.throwStackOverflow();
}

/// Whether a kind keeps `key` as a field of its own (an array's elements and length, a
/// function's name and length, an error's message).
fn hasIntrinsic(o: *Object, key: *String) bool {
    return switch (o.kind) {
        .array => key.arrayIndex() != null or names.is(key, "length"),
        .closure, .promise_function => object.closureHasIntrinsic(o, key),
        .error_object => names.is(key, "message") or names.is(key, "stack") or names.is(key, "cause"),
        // A Headers is a Map inside (builtins/headers.zig) but has no size.
        // A URL is one too (builtins/url.zig), with its components instead.
        .map => if (builtins.url.isUrl(o))
            builtins.url.isField(key)
        else if (builtins.data_view.isDataView(o))
            builtins.data_view.isField(key)
        else
            names.is(key, "size") and !builtins.headers.isHeaders(o),
        .set => names.is(key, "size"),
        .regexp => builtins.regexps.isField(key),
        .typed_array => builtins.typed_arrays.isField(key),
        .array_buffer => names.is(key, "byteLength"),
        else => false,
    };
}

fn getObjectField(vm: *Vm, o: *Object, key: *String) Error!Value {
    switch (o.kind) {
        .plain => {},
        .array => {
            const a = o.as(object.Array);
            if (key.arrayIndex()) |i| return elementAt(a, i);
            if (names.is(key, "length")) return Value.number(@floatFromInt(a.len));
        },
        .closure => {
            const f = o.as(object.Closure).function;
            if (isPoisoned(key)) return throwPoisoned(vm);
            // Deleted, they are Function.prototype's.
            if (names.is(key, "name")) return Value.string(if (o.deleted_intrinsics.name) string.empty else vm.closureName(o.as(object.Closure)));
            if (names.is(key, "length")) return Value.number(if (o.deleted_intrinsics.length) 0 else @floatFromInt(f.length));
        },
        .error_object => {
            const e = o.as(object.ErrorObject);
            if (names.is(key, "message")) return Value.string(e.message orelse string.empty);
            if (names.is(key, "name")) return Value.string(errorKindName(e.error_kind));
            if (names.is(key, "stack")) return Value.string(try builtins.errors.stackString(vm, e));
            if (names.is(key, "cause") and !e.cause.eqlBits(Value.hole)) return e.cause;
        },
        .map, .set => {
            if (builtins.url.isUrl(o) and builtins.url.isField(key)) return builtins.url.field(vm, o, key);
            if (builtins.data_view.isDataView(o) and builtins.data_view.isField(key)) return builtins.data_view.field(o, key);
            if (names.is(key, "size")) {
                // A URLSearchParams keeps its pairs in one entry (builtins/urlsearchparams.zig).
                if (builtins.urlsearchparams.isSearchParams(o)) return Value.number(@floatFromInt(builtins.urlsearchparams.size(o)));
                return Value.number(@floatFromInt(object.mapOf(o).live));
            }
        },
        .iterator, .accessor, .generator, .promise, .date => {},
        .typed_array => if (builtins.typed_arrays.field(o.as(object.TypedArray), key)) |v| return v,
        .array_buffer => if (builtins.typed_arrays.bufferField(o.as(object.ArrayBuffer), key)) |v| return v,
        .regexp => if (try builtins.regexps.field(vm, o.as(object.RegExpObject), key)) |v| return v,
        .promise_function => {
            // Deleted, they are Function.prototype's: "" and 0.
            if (names.is(key, "name")) return Value.string(string.empty);
            if (names.is(key, "length")) return Value.number(if (o.deleted_intrinsics.length) 0 else @floatFromInt(o.as(object.PromiseFunction).length()));
        },
        .bound_function => {
            if (names.is(key, "name")) return Value.string(try boundName(vm, o.as(object.BoundFunction)));
            if (names.is(key, "length")) return boundLength(vm, o.as(object.BoundFunction));
        },
    }
    if (vm.builtin_changes != null) return changes.get(vm, builtins.kindPrototype(o), key, Value.obj(o));
    if (names.is(key, "constructor")) return constructorOf(o);
    return builtins.protoMember(vm, o, key) orelse Value.undefined_value;
}

/// `o.constructor`, inherited from its prototype: the builtin that makes objects of its kind
/// (a function's is Function, outside the language, so undefined).
fn constructorOf(o: *Object) Value {
    const name = switch (o.kind) {
        .plain, .iterator => "Object",
        .array => "Array",
        .map => "Map",
        .set => "Set",
        .error_object => o.as(object.ErrorObject).error_kind.name(),
        .closure, .bound_function, .accessor, .generator, .promise_function => return Value.undefined_value,
        .promise => "Promise",
        .regexp => "RegExp",
        .date => "Date",
        .array_buffer => "ArrayBuffer",
        .typed_array => return Value.builtin(switch (o.as(object.TypedArray).element) {
            inline else => |e| comptime builtins.builtinId(e.name()),
        }),
    };
    return Value.builtin(builtins.globalId(name).?);
}

/// `caller` and `arguments` of a strict function: Function.prototype's accessors that throw.
fn isPoisoned(key: *String) bool {
    return key.len > 0 and (key.eqlLatin1("caller") or key.eqlLatin1("arguments"));
}

pub fn throwPoisoned(vm: *Vm) Error {
    return vm.throwMessage(.type_error, "'caller', 'callee', and 'arguments' properties may not be accessed on strict mode functions or the arguments objects for calls to them");
}

/// A bound function's length: its target's, less the arguments it binds (never below 0).
fn boundLength(vm: *Vm, b: *object.BoundFunction) Error!Value {
    const target_length = try getField(vm, b.target, names.string("length"));
    if (!target_length.isNumber()) return Value.number(0);
    return Value.number(@max(0, target_length.asNumber() - @as(f64, @floatFromInt(b.args.len))));
}

fn boundName(vm: *Vm, b: *object.BoundFunction) Error!*String {
    const target_name = try getField(vm, b.target, names.string("name"));
    const text = if (target_name.isString()) target_name.asString() else string.empty;
    return concatTwo(vm, try vm.newLatin1("bound "), text);
}

pub fn errorKindName(kind: object.ErrorKind) *String {
    return switch (kind) {
        inline else => |k| names.string(comptime k.name()),
    };
}

fn elementAt(a: *const object.Array, i: u32) Value {
    if (i >= a.len) return Value.undefined_value;
    const v = a.items[i];
    return if (v.eqlBits(Value.hole)) Value.undefined_value else v;
}

fn getPrimitiveField(vm: *Vm, obj: Value, key: *String) Error!Value {
    if (obj.isString()) {
        const s = obj.asString();
        if (key.arrayIndex()) |i| {
            if (i >= s.len) return Value.undefined_value;
            return Value.string(try charAt(vm, s, i));
        }
        if (names.is(key, "length")) return Value.number(@floatFromInt(s.len));
        if (names.is(key, "constructor")) return Value.builtin(comptime builtins.globalId("String").?);
        if (vm.builtin_changes != null) return changes.get(vm, primitivePrototype(obj), key, obj);
        return builtins.primitiveMember(obj, key) orelse Value.undefined_value;
    }
    if (obj.isNullish()) {
        return vm.throwFmt(.type_error, "Cannot read properties of {s} (reading '{f}')", .{
            if (obj.isNull()) "null" else "undefined", KeyFormat{ .s = key },
        });
    }
    if ((obj.is(.builtin) or obj.is(.native)) and vm.builtin_changes != null) return changes.get(vm, obj, key, obj);
    if (obj.is(.builtin)) return builtins.staticMember(vm, @intCast(obj.payload()), key);
    if (obj.is(.symbol)) {
        if (names.is(key, "description")) return builtins.symbols.descriptionOf(obj.asSymbolKey());
        if (names.is(key, "constructor")) return Value.builtin(comptime builtins.globalId("Symbol").?);
    }
    if (names.is(key, "constructor")) {
        // A primitive's wrapper's constructor: (5).constructor is Number.
        if (obj.isNumber()) return Value.builtin(comptime builtins.globalId("Number").?);
        if (obj.isBool()) return Value.builtin(comptime builtins.globalId("Boolean").?);
    }
    if (obj.is(.native)) {
        const native = builtins.native(vm, @intCast(obj.payload()));
        if (names.is(key, "name")) return Value.string(try vm.newLatin1(native.name));
        if (names.is(key, "length")) return Value.number(@floatFromInt(native.length));
    }
    if (vm.builtin_changes != null) return changes.get(vm, primitivePrototype(obj), key, obj);
    return builtins.primitiveMember(obj, key) orelse Value.undefined_value;
}

/// The builtin prototype a primitive's members come from.
fn primitivePrototype(v: Value) Value {
    return Value.builtin(if (v.isString())
        comptime builtins.builtinId("%String.prototype%")
    else if (v.is(.symbol))
        comptime builtins.builtinId("%Symbol.prototype%")
    else if (v.isNumber())
        comptime builtins.builtinId("%Number.prototype%")
    else if (v.isBool())
        comptime builtins.builtinId("%Boolean.prototype%")
    else
        comptime builtins.builtinId("%Function.prototype%"));
}

/// The one-unit string at index i.
pub fn charAt(vm: *Vm, s: *String, i: usize) Error!*String {
    const unit = s.at(i);
    if (unit <= 0xFF) return string.single(@intCast(unit));
    return string.fromUtf16(vm.heap, &.{unit}) catch vm.outOfMemory();
}

/// V8's TypeError for obj[key] on null or undefined when the key is an object: the key is
/// not converted (no toString runs) but shown as NoSideEffectsToString shows it, and left
/// out when that would be a bare `[object ...]` (an array, an object with its own toString).
fn throwNullishObjectKey(vm: *Vm, obj: Value, key: Value, comptime reading: bool) Error {
    var buf: [4096]u8 = undefined;
    var w = std.Io.Writer.fixed(&buf);
    const shown: ?[]const u8 = if ((ValueText{ .vm = vm, .v = key }).format(&w)) |_| blk: {
        const text = w.buffered();
        break :blk if (std.mem.startsWith(u8, text, "[object ")) null else text;
    } else |_| null;
    const base = if (obj.isNull()) "null" else "undefined";
    const verb = if (reading) "read" else "set";
    const gerund = if (reading) "reading" else "setting";
    if (shown) |text| return vm.throwFmt(.type_error, "Cannot " ++ verb ++ " properties of {s} (" ++ gerund ++ " '{s}')", .{ base, text });
    return vm.throwFmt(.type_error, "Cannot " ++ verb ++ " properties of {s}", .{base});
}

pub fn getElement(vm: *Vm, obj: Value, key: Value) Error!Value {
    if (key.isString() and key.asString().flags.private) return classes.privateGet(vm, obj, key.asString());
    if (obj.isNullish() and isObjectLike(key)) return throwNullishObjectKey(vm, obj, key, true);
    if (key.isNumber()) {
        if (obj.objectOf(.array)) |o| {
            if (arrayIndex(key.asNumber())) |i| return elementAt(o.as(object.Array), i);
        } else if (obj.objectOf(.typed_array)) |o| {
            if (arrayIndex(key.asNumber())) |i| return builtins.typed_arrays.get(o.as(object.TypedArray), i);
        } else if (obj.isString()) {
            const s = obj.asString();
            if (arrayIndex(key.asNumber())) |i| {
                if (i >= s.len) return Value.undefined_value;
                return Value.string(try charAt(vm, s, i));
            }
        }
    }
    return getField(vm, obj, try toPropertyKey(vm, key));
}

pub fn setField(vm: *Vm, obj: Value, key: *String, v: Value) Error!void {
    if (obj.is(.builtin) or obj.is(.native)) return changes.assign(vm, obj, key, v);
    if (!obj.is(.object)) return setPrimitiveField(vm, obj, key);
    const o = obj.asObject();
    if (o.properties.find(key)) |i| {
        const p = o.properties.items[i];
        if (p.flags.accessor) return callSetter(vm, o, key, p.value, obj, v);
        if (p.flags.read_only) return throwReadOnly(vm, o, key);
    } else if (o.proto.is(.object) and !(o.kind != .plain and hasIntrinsic(o, key))) {
        // An inherited setter runs; an inherited read-only property forbids the write.
        if (try inheritedSetter(vm, o.proto, key)) |found| {
            if (found.flags.accessor) return callSetter(vm, o, key, found.value, obj, v);
            return throwReadOnly(vm, o, key);
        }
    } else if (vm.builtin_changes != null and !o.proto.isNull() and !(o.kind != .plain and hasIntrinsic(o, key))) {
        // The same for what a script defined on a builtin prototype.
        const start = if (o.proto.isUndefined()) builtins.kindPrototype(o) else o.proto;
        if (try changes.inheritedMember(vm, start, key)) |found| {
            if (found.flags.accessor) return callSetter(vm, o, key, found.value, obj, v);
            if (found.flags.read_only) return throwReadOnly(vm, o, key);
        }
    }
    if (o.properties.find(key) == null) switch (o.kind) {
        // Inherited accessors without a setter, and a function's read-only own properties.
        .map, .set => if (builtins.url.isUrl(o) and builtins.url.isField(key)) {
            return builtins.url.setField(vm, o, key, v);
        } else if (builtins.data_view.isDataView(o) and builtins.data_view.isField(key)) {
            return vm.throwFmt(.type_error, "Cannot set property {f} of #<DataView> which has only a getter", .{KeyFormat{ .s = key }});
        } else if (names.is(key, "size")) {
            return vm.throwFmt(.type_error, "Cannot set property size of {s} which has only a getter", .{if (o.kind == .map) "#<Map>" else "#<Set>"});
        },
        .closure => {
            if (names.is(key, "name") or names.is(key, "length")) return throwReadOnly(vm, o, key);
            if (isPoisoned(key)) return throwPoisoned(vm);
        },
        .promise_function => if (o.properties.find(key) == null and object.closureHasIntrinsic(o, key)) {
            return throwReadOnly(vm, o, key);
        },
        .regexp => if (builtins.regexps.isField(key)) {
            return vm.throwFmt(.type_error, "Cannot set property {f} of {f} which has only a getter", .{ KeyFormat{ .s = key }, ValueText{ .vm = vm, .v = obj } });
        },
        .typed_array => {
            if (key.arrayIndex()) |i| return builtins.typed_arrays.set(vm, o.as(object.TypedArray), i, v);
            // Other canonical numeric keys ("-1", "1.5") name no element and make no property.
            if (try isCanonicalNumeric(vm, key)) {
                _ = try toNumber(vm, v);
                return;
            }
            if (builtins.typed_arrays.isField(key)) return vm.throwFmt(.type_error, "Cannot set property {f} of [object Object] which has only a getter", .{KeyFormat{ .s = key }});
        },
        .array_buffer => if (names.is(key, "byteLength")) {
            return vm.throwMessage(.type_error, "Cannot set property byteLength of [object Object] which has only a getter");
        },
        else => {},
    };
    if (o.frozen) return throwFrozen(vm, o, key);
    try checkModuleWrite(vm, o);
    if (o.sealed_shape and o.properties.find(key) == null and !hasIntrinsic(o, key)) {
        return vm.throwFmt(.type_error, "Cannot add property {f}, object is not extensible", .{KeyFormat{ .s = key }});
    }
    switch (o.kind) {
        .array => {
            const a = o.as(object.Array);
            if (key.arrayIndex()) |i| return setIndex(vm, a, i, v);
            if (names.is(key, "length")) return setLength(vm, a, v);
        },
        .error_object => if (names.is(key, "message") and v.isString()) {
            o.as(object.ErrorObject).message = v.asString();
            return;
        },
        else => {},
    }
    o.properties.put(vm.heap, key, v) catch return vm.outOfMemory();
}

/// An accessor or read-only data property on the chain from `start`, which decides what a
/// write of `key` does; null when the write makes an own property.
fn inheritedSetter(vm: *Vm, start: Value, key: *String) Error!?object.Property {
    var current = start;
    var depth: u32 = 0;
    while (depth < chain_depth_max) : (depth += 1) {
        if (!current.is(.object)) return null;
        const o = current.asObject();
        if (o.properties.find(key)) |i| {
            const p = o.properties.items[i];
            return if (p.flags.accessor or p.flags.read_only) p else null;
        }
        current = o.proto;
    }
    return vm.throwStackOverflow();
}

fn callSetter(vm: *Vm, o: *Object, key: *String, accessor: Value, receiver: Value, v: Value) Error!void {
    const a = accessor.asObject().as(object.Accessor);
    if (a.setter.isUndefined()) {
        return vm.throwFmt(.type_error, "Cannot set property {f} of {f} which has only a getter", .{ KeyFormat{ .s = key }, ValueText{ .vm = vm, .v = Value.obj(o) } });
    }
    // V8 reports a write to an arguments object's `callee` (whose setter is
    // %ThrowTypeError%) as a write to a read-only property.
    if (a.setter.eqlBits(builtins.arguments.throwTypeErrorFunction())) return throwReadOnly(vm, o, key);
    _ = try vm.call(a.setter, receiver, &.{v});
}

fn setPrimitiveField(vm: *Vm, obj: Value, key: *String) Error {
    if (obj.isNullish()) {
        return vm.throwFmt(.type_error, "Cannot set properties of {s} (setting '{f}')", .{
            if (obj.isNull()) "null" else "undefined", KeyFormat{ .s = key },
        });
    }
    if (obj.isString()) {
        // Indexes inside the string and its length are read-only properties of it.
        const s = obj.asString();
        const own = if (key.arrayIndex()) |i| i < s.len else key.eqlLatin1("length");
        if (own) return vm.throwFmt(.type_error, "Cannot assign to read only property '{f}' of string '{f}'", .{ KeyFormat{ .s = key }, StringFormat{ .s = s } });
        return vm.throwFmt(.type_error, "Cannot create property '{f}' on string '{f}'", .{ KeyFormat{ .s = key }, StringFormat{ .s = s } });
    }
    if (obj.isNumber() or obj.isBool() or obj.is(.symbol)) {
        return vm.throwFmt(.type_error, "Cannot create property '{f}' on {s} '{f}'", .{
            KeyFormat{ .s = key }, if (obj.isNumber()) "number" else if (obj.isBool()) "boolean" else "symbol", ShortFormat{ .vm = vm, .v = obj },
        });
    }
    return vm.throwFmt(.type_error, "Cannot add property {f}, object is not extensible", .{KeyFormat{ .s = key }});
}

fn throwFrozen(vm: *Vm, o: *Object, key: *String) Error {
    const own = o.properties.find(key) != null or switch (o.kind) {
        .array => if (key.arrayIndex()) |i| i < o.as(object.Array).len else names.is(key, "length"),
        .error_object => names.is(key, "message") and o.as(object.ErrorObject).message != null,
        else => false,
    };
    if (own) return throwReadOnly(vm, o, key);
    return vm.throwFmt(.type_error, "Cannot add property {f}, object is not extensible", .{KeyFormat{ .s = key }});
}

/// V8's TypeError for a write to a read-only own property, naming the object as
/// NoSideEffectsToString shows it (`object '[object Array]'`, `function '(p) => p'`).
fn throwReadOnly(vm: *Vm, o: *Object, key: *String) Error {
    return vm.throwFmt(.type_error, "Cannot assign to read only property '{f}' of {s} '{f}'", .{
        KeyFormat{ .s = key }, if (o.kind == .closure or o.kind == .promise_function) "function" else "object", ValueText{ .vm = vm, .v = Value.obj(o) },
    });
}

pub fn setIndex(vm: *Vm, a: *object.Array, i: u32, v: Value) Error!void {
    try checkModuleWrite(vm, a);
    if (i < a.len) {
        a.items[i] = v;
        return;
    }
    if (a.object.frozen) {
        var buf: [16]u8 = undefined;
        return vm.throwFmt(.type_error, "Cannot add property {s}, object is not extensible", .{std.fmt.bufPrint(&buf, "{d}", .{i}) catch "?"});
    }
    if (i >= object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    a.setLength(vm.heap, @as(usize, i) + 1) catch return vm.outOfMemory();
    a.items[i] = v;
}

fn setLength(vm: *Vm, a: *object.Array, v: Value) Error!void {
    const x = try toNumber(vm, v);
    const len = arrayIndex(x) orelse return vm.throwMessage(.range_error, "Invalid array length");
    if (len > object.length_max) return vm.throwMessage(.range_error, "Invalid array length");
    a.setLength(vm.heap, len) catch return vm.outOfMemory();
}

pub fn setElement(vm: *Vm, obj: Value, key: Value, v: Value) Error!void {
    if (key.isString() and key.asString().flags.private) return classes.privateSet(vm, obj, key.asString(), v);
    if (obj.isNullish() and isObjectLike(key)) return throwNullishObjectKey(vm, obj, key, false);
    if (key.isNumber()) {
        if (obj.objectOf(.array)) |o| {
            if (arrayIndex(key.asNumber())) |i| {
                if (o.frozen) return throwFrozen(vm, o, try toPropertyKey(vm, key));
                return setIndex(vm, o.as(object.Array), i, v);
            }
        } else if (obj.objectOf(.typed_array)) |o| {
            if (arrayIndex(key.asNumber())) |i| return builtins.typed_arrays.set(vm, o.as(object.TypedArray), i, v);
        }
    }
    return setField(vm, obj, try toPropertyKey(vm, key), v);
}

/// CanonicalNumericIndexString: a key that is some number's own string ("-1", "1.5", "-0",
/// "NaN"), which on a typed array names an element slot, never a property.
fn isCanonicalNumeric(vm: *Vm, key: *String) Error!bool {
    if (key.flags.symbol or key.len == 0) return false;
    if (key.eqlLatin1("-0")) return true;
    const first = key.at(0);
    if (!(first == '-' or first == 'I' or first == 'N' or (first >= '0' and first <= '9'))) return false;
    const x = stringToNumber(key);
    return (try numberToString(vm, x)).eql(key);
}

pub fn deleteField(vm: *Vm, obj: Value, key: *String) Error!bool {
    if (!obj.is(.object)) {
        if (obj.isNullish()) {
            return vm.throwFmt(.type_error, "Cannot convert undefined or null to object", .{});
        }
        if (obj.isString()) {
            // A string's indexes and length are its own properties, and not configurable.
            const s = obj.asString();
            const own = if (key.arrayIndex()) |i| i < s.len else names.is(key, "length");
            if (own) return vm.throwFmt(.type_error, "Cannot delete property '{f}' of [object String]", .{KeyFormat{ .s = key }});
        }
        // A builtin's members are changed in the run's list (builtin_changes.zig): methods
        // and a function's name and length are configurable, Math.PI and `prototype` not.
        if (obj.is(.builtin) or obj.is(.native)) {
            const member = (try changes.ownMember(vm, obj, key)) orelse return true;
            if (member.flags.not_configurable) {
                return vm.throwFmt(.type_error, "Cannot delete property '{f}' of {f}", .{ KeyFormat{ .s = key }, ValueText{ .vm = vm, .v = obj } });
            }
            try changes.delete(vm, obj, key);
        }
        return true;
    }
    const o = obj.asObject();
    try checkModuleWrite(vm, o);
    switch (o.kind) {
        .array => {
            const a = o.as(object.Array);
            if (key.arrayIndex()) |i| {
                if (i >= a.len) return true;
                if (o.frozen) return vm.throwFmt(.type_error, "Cannot delete property '{d}' of [object Array]", .{i});
                a.items[i] = Value.hole;
                return true;
            }
            if (names.is(key, "length")) return vm.throwMessage(.type_error, "Cannot delete property 'length' of [object Array]");
        },
        // Own properties kept as fields: deleting one leaves the inherited value (an empty
        // message or name).
        .error_object => if (o.properties.find(key) == null) {
            const e = o.as(object.ErrorObject);
            if (names.is(key, "message") and e.message != null) {
                if (o.frozen) return vm.throwFmt(.type_error, "Cannot delete property 'message' of {f}", .{ValueText{ .vm = vm, .v = obj }});
                e.message = null;
                return true;
            }
            if (names.is(key, "cause") and !e.cause.eqlBits(Value.hole)) {
                if (o.frozen) return vm.throwFmt(.type_error, "Cannot delete property 'cause' of {f}", .{ValueText{ .vm = vm, .v = obj }});
                e.cause = Value.hole;
                return true;
            }
        },
        .typed_array => if (key.arrayIndex()) |i| {
            if (i >= o.as(object.TypedArray).len) return true;
            return vm.throwFmt(.type_error, "Cannot delete property '{d}' of [object {s}]", .{ i, o.as(object.TypedArray).element.name() });
        },
        .closure, .promise_function => if (o.properties.find(key) == null and object.closureHasIntrinsic(o, key)) {
            if (o.frozen or o.sealed_shape_all) return vm.throwFmt(.type_error, "Cannot delete property '{f}' of {f}", .{ KeyFormat{ .s = key }, ValueText{ .vm = vm, .v = obj } });
            if (names.is(key, "name")) o.deleted_intrinsics.name = true else o.deleted_intrinsics.length = true;
            return true;
        },
        else => {},
    }
    if (o.properties.find(key)) |i| {
        // A non-configurable property (an arguments object's `callee`, or one that
        // defineProperty made so) stays, and strict mode says so.
        if (o.frozen or o.properties.items[i].flags.not_configurable) {
            return vm.throwFmt(.type_error, "Cannot delete property '{f}' of {f}", .{ KeyFormat{ .s = key }, ValueText{ .vm = vm, .v = obj } });
        }
    }
    _ = o.properties.remove(vm.heap, key) catch return vm.outOfMemory();
    return true;
}

/// Writing to a module's state from a request is refused: a handler keeps no state between
/// requests, and a request's objects must not outlive it by hiding in module state.
pub inline fn checkModuleWrite(vm: *Vm, address: *const anyopaque) Error!void {
    if (@intFromPtr(address) >= vm.module_floor) return throwModuleWrite(vm);
}

fn throwModuleWrite(vm: *Vm) Error {
    return vm.throwMessage(.type_error, "Cannot modify module state from a request: handlers keep no state between requests");
}

pub fn checkCellWritable(vm: *Vm, cell: *Cell) Error!void {
    return checkModuleWrite(vm, cell);
}

/// Copies own enumerable properties of `src` onto `target`, except `excluded` keys (object
/// spread and object rest).
pub fn copyProperties(vm: *Vm, target: *Object, src: Value, excluded: []const Value) Error!void {
    // Each key is looked for among the excluded ones.
    const per_key = 1 + excluded.len;
    if (src.isString()) {
        const s = src.asString();
        try vm.charge(meter.elementsCost(s.len * per_key));
        for (0..s.len) |i| {
            const key = try numberToString(vm, @floatFromInt(i));
            if (try isExcluded(vm, key, excluded)) continue;
            target.properties.put(vm.heap, key, Value.string(try charAt(vm, s, i))) catch return vm.outOfMemory();
        }
        return;
    }
    if (!src.is(.object)) return;
    const o = src.asObject();
    try vm.charge(meter.elementsCost(@as(usize, o.properties.len) * per_key));
    if (o.kind == .array) {
        const a = o.as(object.Array);
        try vm.charge(meter.elementsCost(@as(usize, a.len) * per_key));
        for (a.slice(), 0..) |v, i| {
            if (v.eqlBits(Value.hole)) continue;
            const key = try numberToString(vm, @floatFromInt(i));
            if (try isExcluded(vm, key, excluded)) continue;
            target.properties.put(vm.heap, key, v) catch return vm.outOfMemory();
        }
    }
    if (o.kind == .typed_array) {
        const t = o.as(object.TypedArray);
        try vm.charge(meter.elementsCost(@as(usize, t.len) * per_key));
        for (0..t.len) |i| {
            const key = try numberToString(vm, @floatFromInt(i));
            if (try isExcluded(vm, key, excluded)) continue;
            target.properties.put(vm.heap, key, builtins.typed_arrays.get(t, @intCast(i))) catch return vm.outOfMemory();
        }
    }
    for (o.properties.slice()) |p| {
        if (p.flags.not_enumerable) continue;
        if (try isExcluded(vm, p.key, excluded)) continue;
        // A getter runs; what it changes in the source is not seen (the keys were taken).
        const value = if (p.flags.accessor) try callGetter(vm, p.value, src) else p.value;
        target.properties.put(vm.heap, p.key, value) catch return vm.outOfMemory();
    }
}

fn isExcluded(vm: *Vm, key: *String, excluded: []const Value) Error!bool {
    for (excluded) |e| {
        if (key.eql(try toPropertyKey(vm, e))) return true;
    }
    return false;
}

/// for-in's iteration: the keys now, each visited only if still present when reached.
pub fn forInStart(vm: *Vm, v: Value) Error!Value {
    const keys = try ownKeysArray(vm, v);
    if (!v.is(.object)) return Value.obj(&keys.object);
    const it = vm.heap.create(object.Iterator) catch return vm.outOfMemory();
    it.* = .{ .object = .{ .kind = .iterator }, .source = v, .iterator_kind = .for_in_keys, .keys = keys };
    return Value.obj(&it.object);
}

/// Whether an object still has an own key (for-in skips keys deleted on the way).
pub fn hasOwnKey(o: *Object, key: *String) bool {
    if (o.properties.find(key) != null) return true;
    if (o.kind == .array) {
        const a = o.as(object.Array);
        if (key.arrayIndex()) |i| return i < a.len and !a.items[i].eqlBits(Value.hole);
    }
    if (o.kind == .typed_array) {
        if (key.arrayIndex()) |i| return i < o.as(object.TypedArray).len;
    }
    return false;
}

/// The own enumerable string keys, in order (for-in, Object.keys).
pub fn ownKeysArray(vm: *Vm, v: Value) Error!*object.Array {
    if (v.isString()) {
        const s = v.asString();
        try vm.charge(meter.elementsCost(s.len));
        const keys = try vm.newArray(s.len);
        for (0..s.len) |i| keys.push(vm.heap, Value.string(try numberToString(vm, @floatFromInt(i)))) catch return vm.outOfMemory();
        return keys;
    }
    if (!v.is(.object)) {
        const keys = try vm.newArray(0);
        // A builtin's enumerable keys are the ones a script added (its own are hidden).
        if ((v.is(.builtin) or v.is(.native)) and vm.builtin_changes != null) try changes.addedKeys(vm, v, keys, .enumerable);
        return keys;
    }
    const o = v.asObject();
    var count: usize = o.properties.len;
    if (o.kind == .array) count += o.as(object.Array).len;
    if (o.kind == .typed_array) count += o.as(object.TypedArray).len;
    try vm.charge(meter.elementsCost(count));
    const keys = try vm.newArray(count);
    if (o.kind == .array) {
        const a = o.as(object.Array);
        for (a.slice(), 0..) |item, i| {
            if (item.eqlBits(Value.hole)) continue;
            keys.push(vm.heap, Value.string(try numberToString(vm, @floatFromInt(i)))) catch return vm.outOfMemory();
        }
    }
    if (o.kind == .typed_array) {
        for (0..o.as(object.TypedArray).len) |i| {
            keys.push(vm.heap, Value.string(try numberToString(vm, @floatFromInt(i)))) catch return vm.outOfMemory();
        }
    }
    for (o.properties.slice()) |p| {
        if (p.flags.not_enumerable or p.key.flags.symbol) continue;
        keys.push(vm.heap, Value.string(p.key)) catch return vm.outOfMemory();
    }
    return keys;
}

// ---------------------------------------------------------------------------------------
// Strings.

/// ToString of each value, concatenated (template literals).
pub fn concatValues(vm: *Vm, values: []Value) Error!*String {
    var total: usize = 0;
    var wide = false;
    for (values) |*v| {
        const s = try toString(vm, v.*);
        v.* = Value.string(s);
        total += s.len;
        if (s.flags.wide) wide = true;
    }
    if (total > string.length_max) return vm.throwMessage(.range_error, "Invalid string length");
    if (values.len == 2) return concatTwo(vm, values[0].asString(), values[1].asString());
    if (values.len == 1) return values[0].asString();
    try vm.charge(meter.bytesCost(if (wide) total * 2 else total));
    var b = string.Builder.init(vm.heap, total, wide) catch return vm.outOfMemory();
    for (values) |v| b.appendString(v.asString());
    return b.finish() catch vm.outOfMemory();
}

// ---------------------------------------------------------------------------------------
// Iteration: the state is (source, cursor), two stack values.

/// Where an iteration happens, for its "not iterable" message: the wording and the
/// site's source text (see bytecode.IterationMode).
pub const IterationSite = struct {
    mode: bytecode.IterationMode = .value,
    text: ?*String = null,
};

/// Whether a value iterates as its builtin kind does, with no user code to ask: a string (its
/// prototype is read-only), or an array, Map, Set or builtin iterator that inherits its kind's
/// prototype and has no `[Symbol.iterator]` of its own. Every other value goes through the
/// iteration protocol (`protocolIterator`).
pub fn isIterable(v: Value) bool {
    if (v.isString()) return true;
    if (!v.is(.object)) return false;
    const o = v.asObject();
    const kind_ok = switch (o.kind) {
        .array, .map, .set, .iterator, .typed_array => true,
        else => false,
    };
    if (!kind_ok or !o.proto.isUndefined()) return false;
    return o.properties.len == 0 or o.properties.find(symbol.wellKnown("@@iterator")) == null;
}

/// `v[Symbol.iterator]`, or undefined (null and undefined have none).
pub fn iteratorMethod(vm: *Vm, v: Value) Error!Value {
    if (v.isNullish()) return Value.undefined_value;
    return getField(vm, v, symbol.wellKnown("@@iterator"));
}

/// GetIterator: calls `v[Symbol.iterator]()` and keeps the iterator and its `next` in an
/// internal iterator object that `iterNext` steps; null when v has no such method.
fn protocolIterator(vm: *Vm, v: Value) Error!?Value {
    return protocolIteratorWith(vm, v, try iteratorMethod(vm, v));
}

fn protocolIteratorWith(vm: *Vm, v: Value, method: Value) Error!?Value {
    if (!isCallable(method)) return null;
    const iterator = try vm.call(method, v, &.{});
    if (!isObjectLike(iterator)) return vm.throwMessage(.type_error, "Result of the Symbol.iterator method is not an object");
    const next = try getField(vm, iterator, names.string("next"));
    const it = vm.heap.create(object.Iterator) catch return vm.outOfMemory();
    it.* = .{ .object = .{ .kind = .iterator }, .source = iterator, .iterator_kind = .protocol, .next_method = next };
    return Value.obj(&it.object);
}

/// One step of the iteration protocol: `next()`, then its `done` and `value`. A generator
/// whose `next` is the builtin one is resumed directly, with no result object made.
/// A step that throws (next() itself, its result's `done` or `value` getter) leaves the
/// iterator done, so that no IteratorClose calls its `return()` (ES §7.4.8 IteratorStep).
pub fn protocolStep(vm: *Vm, it: *object.Iterator) Error!?Value {
    errdefer it.done = true;
    if (it.source.objectOf(.generator)) |o| {
        if (it.next_method.eqlBits(builtins.classMember(.generator_proto, names.string("next")).?)) {
            const r = try vm.resumeGenerator(o.as(object.Generator), Value.undefined_value, .next);
            if (r.done) {
                it.done = true;
                return null;
            }
            return r.value;
        }
    }
    if (!isCallable(it.next_method)) {
        it.done = true;
        return vm.throwFmt(.type_error, "{f} is not a function", .{ValueText{ .vm = vm, .v = it.next_method }});
    }
    const result = try vm.call(it.next_method, it.source, &.{});
    if (!isObjectLike(result)) {
        it.done = true;
        return vm.throwFmt(.type_error, "Iterator result {f} is not an object", .{ValueText{ .vm = vm, .v = result }});
    }
    if (toBoolean(try getField(vm, result, names.string("done")))) {
        it.done = true;
        return null;
    }
    return try getField(vm, result, names.string("value"));
}

/// Checks that a value can be iterated and returns the source to iterate.
pub inline fn iterStart(vm: *Vm, v: Value, site: IterationSite) Error!Value {
    // An array, string, Map or Set in a run that changed no builtin: the loop's hot path.
    if (vm.builtin_changes == null and isIterable(v)) return v;
    return iterStartCalling(vm, v, site);
}

/// iterStart when it may call something: the iterable's own [Symbol.iterator], or the
/// builtin one a run replaced (`Array.prototype[Symbol.iterator] = f`: f is called).
noinline fn iterStartCalling(vm: *Vm, v: Value, site: IterationSite) Error!Value {
    if (isIterable(v)) {
        const method = try iteratorMethod(vm, v);
        if (method.eqlBits(builtinIteratorMethod(vm, v))) return v;
        if (try protocolIteratorWith(vm, v, method)) |it| return it;
        return throwNotIterable(vm, v, site);
    }
    if (try protocolIterator(vm, v)) |it| return it;
    return throwNotIterable(vm, v, site);
}

/// The `[Symbol.iterator]` the tables give a value that isIterable accepts.
fn builtinIteratorMethod(vm: *Vm, v: Value) Value {
    const key = symbol.wellKnown("@@iterator");
    const member = if (v.isString()) builtins.primitiveMember(v, key) else builtins.protoMember(vm, v.asObject(), key);
    return member orelse Value.undefined_value;
}

/// "... is not iterable", worded as V8 words it at the site.
pub fn throwNotIterable(vm: *Vm, v: Value, site: IterationSite) Error {
    if (site.mode == .property_value) {
        const shown: SiteText = .{ .vm = vm, .v = v, .text = site.text };
        if (v.isNullish()) {
            const what = if (v.isNull()) "null" else "undefined";
            return vm.throwFmt(.type_error, "Cannot destructure property 'Symbol(Symbol.iterator)' of '{f}' as it is {s}.", .{ shown, what });
        }
        return vm.throwFmt(.type_error, "{f} is not iterable (cannot read property Symbol(Symbol.iterator))", .{shown});
    }
    const text = site.text orelse return vm.throwFmt(.type_error, "{f} is not iterable (cannot read property Symbol(Symbol.iterator))", .{DefaultSite{ .vm = vm, .v = v }});
    const s = StringFormat{ .s = text };
    return switch (site.mode) {
        .value => vm.throwFmt(.type_error, "{f} is not iterable (cannot read property Symbol(Symbol.iterator))", .{DefaultSite{ .vm = vm, .v = v }}),
        .plain => vm.throwFmt(.type_error, "{f} is not iterable", .{s}),
        .noted => vm.throwFmt(.type_error, "{f} is not iterable (cannot read property Symbol(Symbol.iterator))", .{s}),
        .call => vm.throwFmt(.type_error, "{f} is not a function or its return value is not iterable", .{s}),
        .spread_argument => if (v.isNullish())
            vm.throwFmt(.type_error, "{f} is not iterable (cannot read property {s})", .{ s, if (v.isNull()) "null" else "undefined" })
        else
            vm.throwMessage(.type_error, "Spread syntax requires ...iterable[Symbol.iterator] to be a function"),
        .property_value => unreachable, // Handled above.
    };
}

/// A site's source text, or the value as V8 shows it without one.
pub const SiteText = struct {
    vm: *Vm,
    v: Value,
    text: ?*String,

    pub fn format(self: SiteText, w: *std.Io.Writer) std.Io.Writer.Error!void {
        if (self.text) |s| return (StringFormat{ .s = s }).format(w);
        return (DefaultSite{ .vm = self.vm, .v = self.v }).format(w);
    }
};

/// A value as V8 shows it where it has no source text for it: its type, and for
/// primitives its value ("number 5", "object null", "string \"a\"", "undefined").
pub const DefaultSite = struct {
    vm: *Vm,
    v: Value,

    pub fn format(self: DefaultSite, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const v = self.v;
        try string.writeUtf8(w, typeOf(self.vm, v));
        if (v.isString() or v.isNumber() or v.isNull() or v.isBool()) {
            try w.writeByte(' ');
            try (ShortFormat{ .vm = self.vm, .v = v }).format(w);
        }
    }
};

/// The next value, advancing the cursor; null when done.
pub fn iterNext(vm: *Vm, source: *Value, cursor: *Value) Error!?Value {
    if (!cursor.isNumber()) return null;
    const index_f = cursor.asNumber();
    if (!(index_f >= 0 and index_f < 4294967296.0)) return null;
    const index: u32 = @intFromFloat(index_f);
    const v = source.*;
    if (v.isString()) {
        const s = v.asString();
        if (index >= s.len) return null;
        const cp = string.codePointAtString(s, index);
        const units: u32 = if (cp >= 0x10000) 2 else 1;
        cursor.* = Value.number(@floatFromInt(index + units));
        if (units == 1) return Value.string(try charAt(vm, s, index));
        return Value.string(string.slice(vm.heap, s, index, index + 2) catch return vm.outOfMemory());
    }
    if (!v.is(.object)) return null;
    const o = v.asObject();
    switch (o.kind) {
        .array => {
            const a = o.as(object.Array);
            if (index >= a.len) return null;
            cursor.* = Value.number(@floatFromInt(index + 1));
            return elementAt(a, index);
        },
        .map, .set => {
            const m = object.mapOf(o);
            var i = index;
            while (i < m.len and m.entries[i].key.eqlBits(Value.hole)) i += 1;
            meter.charge(meter.elementsCost(2 * (i - index))); // Deleted entries skipped.
            if (i >= m.len) {
                cursor.* = Value.number(@floatFromInt(i));
                return null;
            }
            cursor.* = Value.number(@floatFromInt(i + 1));
            const entry = m.entries[i];
            if (o.kind == .set) return entry.key;
            return Value.obj(try pair(vm, entry.key, entry.value));
        },
        .typed_array => {
            const t = o.as(object.TypedArray);
            if (index >= t.len) return null;
            cursor.* = Value.number(@floatFromInt(index + 1));
            return builtins.typed_arrays.get(t, index);
        },
        .iterator => return builtins.collections.iteratorStep(vm, o.as(object.Iterator)),
        else => return null,
    }
}

/// One step of `yield*`: the inner iterator's `next(sent)`; when it is done, its `value`
/// (a generator's return value) is the `yield*` expression's.
pub fn delegateStep(vm: *Vm, source: *Value, cursor: *Value, sent: Value) Error!Vm.Resumed {
    if (source.objectOf(.iterator)) |o| {
        const it = o.as(object.Iterator);
        if (it.iterator_kind == .protocol) {
            if (it.done) return .{ .value = Value.undefined_value, .done = true };
            if (it.source.objectOf(.generator)) |g| {
                if (it.next_method.eqlBits(builtins.classMember(.generator_proto, names.string("next")).?)) {
                    const r = try vm.resumeGenerator(g.as(object.Generator), sent, .next);
                    if (r.done) it.done = true;
                    return r;
                }
            }
            if (!isCallable(it.next_method)) {
                it.done = true;
                return vm.throwFmt(.type_error, "{f} is not a function", .{ValueText{ .vm = vm, .v = it.next_method }});
            }
            const result = try vm.call(it.next_method, it.source, &.{sent});
            if (!isObjectLike(result)) {
                it.done = true;
                return vm.throwFmt(.type_error, "Iterator result {f} is not an object", .{ValueText{ .vm = vm, .v = result }});
            }
            const done = toBoolean(try getField(vm, result, names.string("done")));
            if (done) it.done = true;
            return .{ .value = try getField(vm, result, names.string("value")), .done = done };
        }
    }
    if (try iterNext(vm, source, cursor)) |v| return .{ .value = v, .done = false };
    return .{ .value = Value.undefined_value, .done = true };
}

/// `yield*` resumed by throw(e) or return(v) (ES §15.5.5 steps 7.b-c): the inner iterator's
/// throw(e) or return(v), whose result, when not done, is yielded again. A done throw()
/// result ends the `yield*` with its value; a done return() result returns its value from
/// the outer generator (the return signal goes on with it). An inner iterator with no
/// `return` lets the outer return go on; one with no `throw` is closed, and that is a
/// TypeError.
pub fn delegateAbrupt(vm: *Vm, source: Value, exception: Value, gen: *object.Generator) Error!Vm.Resumed {
    const is_return = exception.eqlBits(Value.generator_return);
    const it: ?*object.Iterator = if (source.objectOf(.iterator)) |o| o.as(object.Iterator) else null;
    const protocol = if (it) |i| i.iterator_kind == .protocol and !i.done else false;
    const method = if (protocol)
        try getField(vm, it.?.source, if (is_return) names.string("return") else names.string("throw"))
    else
        Value.undefined_value;
    if (method.isNullish()) {
        if (is_return) {
            if (it) |i| i.done = true;
            return vm.throwValue(exception);
        }
        try iterClose(vm, source);
        return vm.throwMessage(.type_error, "The iterator does not provide a 'throw' method.");
    }
    const inner = it.?;
    const result = try vm.call(method, inner.source, &.{if (is_return) gen.return_value else exception});
    if (!isObjectLike(result)) {
        inner.done = true;
        return vm.throwFmt(.type_error, "Iterator result {f} is not an object", .{ValueText{ .vm = vm, .v = result }});
    }
    const done = toBoolean(try getField(vm, result, names.string("done")));
    const value = try getField(vm, result, names.string("value"));
    if (!done) return .{ .value = value, .done = false };
    inner.done = true;
    if (!is_return) return .{ .value = value, .done = true };
    gen.return_value = value;
    return vm.throwValue(Value.generator_return);
}

/// IteratorClose for a loop left early: a protocol iterator that is not done has its
/// `return()` called (a generator's builtin one finishes it), whose result must be an object.
pub fn iterClose(vm: *Vm, source: Value) Error!void {
    const o = source.objectOf(.iterator) orelse return;
    const it = o.as(object.Iterator);
    if (it.iterator_kind != .protocol or it.done) return;
    it.done = true;
    if (it.source.objectOf(.generator)) |g| {
        const builtin_return = builtins.classMember(.generator_proto, names.string("return")).?;
        const method = try getField(vm, it.source, names.string("return"));
        if (method.eqlBits(builtin_return)) {
            _ = try vm.resumeGenerator(g.as(object.Generator), Value.undefined_value, .@"return");
            return;
        }
    }
    const method = try getField(vm, it.source, names.string("return"));
    if (method.isNullish()) return;
    if (!isCallable(method)) return vm.throwFmt(.type_error, "{f} is not a function", .{DefaultSite{ .vm = vm, .v = method }});
    const result = try vm.call(method, it.source, &.{});
    if (!isObjectLike(result)) return vm.throwFmt(.type_error, "Iterator result {f} is not an object", .{ShortFormat{ .vm = vm, .v = result }});
}

/// A two-element array, [a, b].
pub fn pair(vm: *Vm, a: Value, b: Value) Error!*Object {
    const arr = try vm.newArray(2);
    arr.items[0] = a;
    arr.items[1] = b;
    arr.len = 2;
    return &arr.object;
}

/// Appends every value of an iterable to an array (spread).
pub fn appendIterable(vm: *Vm, a: *object.Array, iterable: Value, site: IterationSite) Error!void {
    // An array iterates as itself unless a run that changed a builtin replaced
    // Array.prototype[Symbol.iterator] (iterStart knows, and gives the protocol iterator).
    var source = iterable;
    if (vm.builtin_changes != null or iterable.objectOf(.array) == null) source = try iterStart(vm, iterable, site);
    if (source.objectOf(.array)) |o| {
        const src = o.as(object.Array);
        try vm.charge(meter.elementsCost(src.len));
        a.reserve(vm.heap, @as(usize, a.len) + src.len) catch return vm.outOfMemory();
        for (src.slice(), 0..) |v, i| a.items[a.len + i] = if (v.eqlBits(Value.hole)) Value.undefined_value else v;
        a.len += src.len;
        return;
    }
    var cursor = Value.number(0);
    while (try iterNext(vm, &source, &cursor)) |v| {
        try vm.charge(meter.elementsCost(1));
        a.push(vm.heap, v) catch return vm.outOfMemory();
    }
}
