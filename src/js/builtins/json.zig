//! JSON.parse (with a reviver) and JSON.stringify (with a replacer function or list, and an
//! indent), byte for byte as V8's, error messages included: SyntaxErrors give the position in
//! UTF-16 units and, for an unexpected token, the text around it; a cycle is reported with the
//! path that closes it.
const std = @import("std");

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const Object = object.Object;
const ops = @import("../operations.zig");
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const meter = @import("../meter.zig");
const arg = builtins.arg;

/// Nesting deeper than this is a RangeError where a walk recurses natively (the reviver and
/// JSON.stringify; JSON.parse's own parse does not recurse).
const depth_max = 1000;

// ---------------------------------------------------------------------------------------
// JSON.parse.

const Parser = struct {
    vm: *Vm,
    s: *String,
    i: usize = 0,

    fn peek(p: *const Parser) ?u16 {
        return if (p.i < p.s.len) p.s.at(p.i) else null;
    }

    fn skipSpace(p: *Parser) void {
        while (p.i < p.s.len) : (p.i += 1) {
            switch (p.s.at(p.i)) {
                ' ', '\t', '\n', '\r' => {},
                else => return,
            }
        }
    }

    fn failAt(p: *Parser, comptime message: []const u8, pos: usize) Error {
        return p.vm.throwFmt(.syntax_error, "{s} in JSON at position {d}", .{ message, pos });
    }

    /// V8's message for a character that cannot start or continue what is expected.
    fn unexpected(p: *Parser) Error {
        const s = p.s;
        if (p.i >= s.len) return p.vm.throwMessage(.syntax_error, "Unexpected end of JSON input");
        const special = [_][]const u8{ "undefined", "NaN", "Infinity", "[object Object]" };
        for (special) |text| {
            if (s.eqlLatin1(text)) return p.vm.throwFmt(.syntax_error, "\"{s}\" is not valid JSON", .{text});
        }
        const u = s.at(p.i);
        if (u >= '0' and u <= '9' or u == '-') return p.failAt("Unexpected number", p.i);
        if (u == '"') return p.failAt("Unexpected string", p.i);
        var token: [1]u16 = .{u};
        const token_view: String = tokenString(&token);
        const context = 10;
        if (s.len < 2 * context + 1) {
            return p.vm.throwFmt(.syntax_error, "Unexpected token '{f}', \"{f}\" is not valid JSON", .{
                ops.StringFormat{ .s = &token_view }, ops.StringFormat{ .s = s },
            });
        }
        const start = p.i -| context;
        const end = @min(s.len, p.i + context);
        const around = string.slice(p.vm.heap, s, start, end) catch return p.vm.outOfMemory();
        return p.vm.throwFmt(.syntax_error, "Unexpected token '{f}', {s}\"{f}\"{s} is not valid JSON", .{
            ops.StringFormat{ .s = &token_view },
            if (start > 0) "..." else "",
            ops.StringFormat{ .s = around },
            if (end < s.len) "..." else "",
        });
    }

    /// A JSON text's value, without native recursion: the open arrays and objects wait on a
    /// stack of their own in the run's heap (a container and, for an object, the key its
    /// next value goes to), so nesting is bounded by the heap and the budget, as node's
    /// parser is by its memory, not by the native stack (200,000 levels parse as in node).
    fn parseValue(p: *Parser) Error!Value {
        var open: ?*object.Array = null;
        next_value: while (true) {
            p.skipSpace();
            const u = p.peek() orelse return p.unexpected();
            var done: Value = switch (u) {
                '{' => if (try p.openObject()) |first_key| {
                    try p.push(&open, Value.obj(try p.vm.newObject(0)), Value.string(first_key));
                    continue :next_value;
                } else Value.obj(try p.vm.newObject(0)),
                '[' => if (try p.openArray()) {
                    try p.push(&open, Value.obj(&(try p.vm.newArray(0)).object), Value.undefined_value);
                    continue :next_value;
                } else Value.obj(&(try p.vm.newArray(0)).object),
                '"' => Value.string(try p.parseString()),
                '-', '0'...'9' => try p.parseNumber(),
                't' => try p.literal("true", Value.true_value),
                'f' => try p.literal("false", Value.false_value),
                'n' => try p.literal("null", Value.null_value),
                else => return p.unexpected(),
            };
            // A value is complete: it goes into the innermost open container, which either
            // waits for its next value or closes and is itself complete.
            while (open) |stack| {
                if (stack.len == 0) break;
                try p.vm.charge(meter.elementsCost(1));
                const items = stack.slice();
                const container = items[stack.len - 2];
                if (container.objectOf(.array)) |a| {
                    a.as(object.Array).push(p.vm.heap, done) catch return p.vm.outOfMemory();
                    if (try p.arrayContinues()) continue :next_value;
                } else {
                    const key = items[stack.len - 1].asString();
                    container.asObject().properties.put(p.vm.heap, key, done) catch return p.vm.outOfMemory();
                    if (try p.objectContinues()) |next_key| {
                        items[stack.len - 1] = Value.string(next_key);
                        continue :next_value;
                    }
                }
                stack.len -= 2;
                done = container;
            }
            return done;
        }
    }

    /// An open container and the key its next value goes to, on the stack made on first use.
    fn push(p: *Parser, open: *?*object.Array, container: Value, key: Value) Error!void {
        const stack = open.* orelse blk: {
            const made = try p.vm.newArray(16);
            open.* = made;
            break :blk made;
        };
        try p.vm.charge(meter.elementsCost(2));
        stack.push(p.vm.heap, container) catch return p.vm.outOfMemory();
        stack.push(p.vm.heap, key) catch return p.vm.outOfMemory();
    }

    fn literal(p: *Parser, comptime text: []const u8, v: Value) Error!Value {
        for (text) |c| {
            if (p.i >= p.s.len) return p.unexpected();
            if (p.s.at(p.i) != c) return p.unexpected();
            p.i += 1;
        }
        return v;
    }

    /// Past `{`: the first key (and its colon), or null for `{}`.
    fn openObject(p: *Parser) Error!?*String {
        p.i += 1;
        p.skipSpace();
        if (p.peek() == '}') {
            p.i += 1;
            return null;
        }
        if (p.peek() != '"') return p.failAt("Expected property name or '}'", p.i);
        return try p.keyAndColon();
    }

    fn keyAndColon(p: *Parser) Error!*String {
        const key = try p.parseString();
        p.skipSpace();
        if (p.peek() != ':') return p.failAt("Expected ':' after property name", p.i);
        p.i += 1;
        return key;
    }

    /// After an object's value: the next key (and its colon), or null when `}` closes it.
    fn objectContinues(p: *Parser) Error!?*String {
        p.skipSpace();
        const next = p.peek() orelse return p.failAt("Expected ',' or '}' after property value", p.i);
        if (next == '}') {
            p.i += 1;
            return null;
        }
        if (next != ',') return p.failAt("Expected ',' or '}' after property value", p.i);
        p.i += 1;
        p.skipSpace();
        if (p.peek() != '"') return p.failAt("Expected double-quoted property name", p.i);
        return try p.keyAndColon();
    }

    /// Past `[`: whether an element follows (false for `[]`).
    fn openArray(p: *Parser) Error!bool {
        try p.vm.charge(meter.elementsCost(1));
        p.i += 1;
        p.skipSpace();
        if (p.peek() == ']') {
            p.i += 1;
            return false;
        }
        return true;
    }

    /// After an array's element: whether another follows (false when `]` closes it).
    fn arrayContinues(p: *Parser) Error!bool {
        p.skipSpace();
        const next = p.peek() orelse return p.failAt("Expected ',' or ']' after array element", p.i);
        if (next == ',') {
            p.i += 1;
            return true;
        }
        if (next == ']') {
            p.i += 1;
            return false;
        }
        return p.failAt("Expected ',' or ']' after array element", p.i);
    }

    fn parseString(p: *Parser) Error!*String {
        const s = p.s;
        p.i += 1; // The opening quote.
        const start = p.i;
        // Fast path: no escapes.
        while (p.i < s.len) : (p.i += 1) {
            const u = s.at(p.i);
            if (u == '"') {
                const result = string.slice(p.vm.heap, s, start, p.i) catch return p.vm.outOfMemory();
                p.i += 1;
                return result;
            }
            if (u == '\\') break;
            if (u < 0x20) return p.failAt("Bad control character in string literal", p.i);
        }
        if (p.i >= s.len) return p.failAt("Unterminated string", p.i);
        var b = string.StringBuffer.init(p.vm.heap);
        for (start..p.i) |k| b.appendUnit(s.at(k)) catch return p.vm.outOfMemory();
        while (true) {
            if (p.i >= s.len) return p.failAt("Unterminated string", p.i);
            const u = s.at(p.i);
            if (u == '"') {
                p.i += 1;
                return b.finish() catch p.vm.outOfMemory();
            }
            if (u < 0x20) return p.failAt("Bad control character in string literal", p.i);
            if (u != '\\') {
                b.appendUnit(u) catch return p.vm.outOfMemory();
                p.i += 1;
                continue;
            }
            p.i += 1;
            if (p.i >= s.len) return p.unexpected();
            const e = s.at(p.i);
            const unit: u16 = switch (e) {
                '"' => '"',
                '\\' => '\\',
                '/' => '/',
                'b' => 0x08,
                'f' => 0x0C,
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => blk: {
                    var cp: u16 = 0;
                    for (1..5) |k| {
                        if (p.i + k >= s.len) return p.failAt("Bad Unicode escape", p.i + k);
                        const h = s.at(p.i + k);
                        const d: u16 = if (h < 0x80) (std.fmt.charToDigit(@intCast(h), 16) catch
                            return p.failAt("Bad Unicode escape", p.i + k)) else return p.failAt("Bad Unicode escape", p.i + k);
                        cp = cp * 16 + d;
                    }
                    p.i += 4;
                    break :blk cp;
                },
                else => return p.failAt("Bad escaped character", p.i),
            };
            b.appendUnit(unit) catch return p.vm.outOfMemory();
            p.i += 1;
        }
    }

    fn parseNumber(p: *Parser) Error!Value {
        const s = p.s;
        const start = p.i;
        if (s.at(p.i) == '-') {
            p.i += 1;
            if (p.i >= s.len or !isDigit(s.at(p.i))) return p.failAt("No number after minus sign", p.i);
        }
        if (s.at(p.i) == '0') {
            p.i += 1;
            if (p.i < s.len and isDigit(s.at(p.i))) return p.failAt("Unexpected number", p.i);
        } else {
            while (p.i < s.len and isDigit(s.at(p.i))) p.i += 1;
        }
        if (p.i < s.len and s.at(p.i) == '.') {
            p.i += 1;
            if (p.i >= s.len or !isDigit(s.at(p.i))) {
                if (p.i >= s.len) return p.failAt("Unterminated fractional number", p.i);
                return p.failAt("Unterminated fractional number", p.i);
            }
            while (p.i < s.len and isDigit(s.at(p.i))) p.i += 1;
        }
        if (p.i < s.len and (s.at(p.i) == 'e' or s.at(p.i) == 'E')) {
            p.i += 1;
            if (p.i < s.len and (s.at(p.i) == '+' or s.at(p.i) == '-')) p.i += 1;
            if (p.i >= s.len or !isDigit(s.at(p.i))) return p.failAt("Exponent part is missing a number", p.i);
            while (p.i < s.len and isDigit(s.at(p.i))) p.i += 1;
        }
        var buf: [512]u8 = undefined;
        const len = p.i - start;
        if (len > buf.len) {
            // Over 512 characters: digits beyond the 500th cannot change a double, except
            // through the exponent; keep the start and the exponent.
            return Value.number(longNumber(s, start, p.i));
        }
        for (0..len) |k| buf[k] = @intCast(s.at(start + k));
        return Value.number(std.fmt.parseFloat(f64, buf[0..len]) catch std.math.nan(f64));
    }
};

fn longNumber(s: *const String, start: usize, end: usize) f64 {
    var buf: [2048]u8 = undefined;
    const len = @min(end - start, buf.len);
    for (0..len) |k| buf[k] = @intCast(s.at(start + k));
    return std.fmt.parseFloat(f64, buf[0..len]) catch std.math.nan(f64);
}

fn isDigit(u: u16) bool {
    return u >= '0' and u <= '9';
}

/// A one-unit string view on the stack (for messages only).
fn tokenString(unit: *[1]u16) String {
    if (unit[0] <= 0xFF) {
        return .{ .ptr = @ptrCast(string.single(@intCast(unit[0])).ptr), .len = 1 };
    }
    return .{ .ptr = @ptrCast(unit), .len = 1, .flags = .{ .wide = true } };
}

pub fn parse(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const text = try ops.toString(vm, arg(args, 0));
    // One pass over the text, a unit at a time, paid for before it starts (what it builds is
    // paid for as it is built).
    try vm.charge(meter.unitsCost(text.len));
    var p: Parser = .{ .vm = vm, .s = text };
    const result = try p.parseValue();
    p.skipSpace();
    if (p.i < text.len) return vm.throwFmt(.syntax_error, "Unexpected non-whitespace character after JSON at position {d}", .{p.i});
    const reviver = arg(args, 1);
    if (!ops.isCallable(reviver)) return result;
    const root = try vm.newObject(1);
    root.properties.put(vm.heap, string.empty, result) catch return vm.outOfMemory();
    return internalize(vm, Value.obj(root), string.empty, reviver, 0);
}

/// The reviver walk: children first, then the reviver on each property.
fn internalize(vm: *Vm, holder: Value, key: *String, reviver: Value, depth: u32) Error!Value {
    if (depth > depth_max) return vm.throwStackOverflow();
    try vm.checkNativeStack();
    try vm.charge(meter.elementsCost(1));
    const v = try ops.getField(vm, holder, key);
    if (v.is(.object)) {
        const o = v.asObject();
        if (o.kind == .array) {
            const a = o.as(object.Array);
            var i: u32 = 0;
            while (i < a.len) : (i += 1) {
                const k = try ops.numberToString(vm, @floatFromInt(i));
                const revived = try internalize(vm, v, k, reviver, depth + 1);
                if (revived.isUndefined()) {
                    if (i < a.len) a.items[i] = Value.hole;
                } else try ops.setIndex(vm, a, i, revived);
            }
        } else if (o.kind == .plain) {
            const key_list = try ops.ownKeysArray(vm, v);
            for (key_list.slice()) |k| {
                const revived = try internalize(vm, v, k.asString(), reviver, depth + 1);
                if (revived.isUndefined()) {
                    _ = o.properties.remove(vm.heap, k.asString()) catch return vm.outOfMemory();
                } else {
                    o.properties.put(vm.heap, k.asString(), revived) catch return vm.outOfMemory();
                }
            }
        }
    }
    return vm.call(reviver, holder, &.{ Value.string(key), v });
}

// ---------------------------------------------------------------------------------------
// JSON.stringify.

const PathEntry = struct { o: *Object, key: Value };

/// What a value costs JSON.stringify beyond the units of its strings: the lookups around it
/// (toJSON), its separator and its number's digits.
const property_ticks = 24;

const Stringifier = struct {
    vm: *Vm,
    out: string.StringBuffer,
    replacer: Value = Value.undefined_value,
    /// The replacer list, if the replacer is an array.
    keys: ?[]*String = null,
    gap: []const u8 = "",
    gap_buf: [10]u16 = undefined,
    gap_wide: ?[]const u16 = null,
    indent: usize = 0,
    /// Objects being serialized, and the key each was reached by (for the cycle message).
    stack: std.ArrayList(PathEntry) = .empty,
    stack_buf: [depth_max]PathEntry = undefined,

    fn put(st: *Stringifier, text: []const u8) Error!void {
        st.out.appendLatin1(text) catch return st.vm.outOfMemory();
    }

    fn newline(st: *Stringifier) Error!void {
        if (st.gap.len == 0 and st.gap_wide == null) return;
        try st.vm.charge(meter.unitsCost(st.indent * @max(st.gap.len, if (st.gap_wide) |g| g.len else 0)));
        try st.put("\n");
        for (0..st.indent) |_| try st.putGap();
    }

    fn putGap(st: *Stringifier) Error!void {
        if (st.gap_wide) |units| {
            for (units) |u| st.out.appendUnit(u) catch return st.vm.outOfMemory();
        } else try st.put(st.gap);
    }

    /// SerializeJSONProperty: false when the value serializes to nothing (undefined,
    /// functions), which the caller omits.
    fn property(st: *Stringifier, holder: Value, key: Value, value_in: Value) Error!bool {
        // A value, whatever it writes (a number's digits, a short key or string included);
        // long strings pay for their units as they are quoted.
        try st.vm.charge(property_ticks);
        var v = value_in;
        if (v.is(.object)) {
            const to_json = try ops.getField(st.vm, v, names.string("toJSON"));
            if (ops.isCallable(to_json)) v = try st.vm.call(to_json, v, &.{Value.string(try ops.toPropertyKey(st.vm, key))});
        }
        if (ops.isCallable(st.replacer)) {
            v = try st.vm.call(st.replacer, holder, &.{ Value.string(try ops.toPropertyKey(st.vm, key)), v });
        }
        if (v.isNull()) {
            try st.put("null");
        } else if (v.eqlBits(Value.true_value)) {
            try st.put("true");
        } else if (v.eqlBits(Value.false_value)) {
            try st.put("false");
        } else if (v.isString()) {
            try quote(st.vm, &st.out, v.asString());
        } else if (v.isNumber()) {
            const x = v.asNumber();
            if (std.math.isNan(x) or std.math.isInf(x)) {
                try st.put("null");
            } else {
                var buf: [number.format_bytes_max]u8 = undefined;
                try st.put(number.format(&buf, x));
            }
        } else if (v.is(.object) and v.asObject().kind != .closure) {
            try st.structure(v.asObject(), key);
        } else if (v.is(.builtin) and !builtins.isCallableBuiltin(@intCast(v.payload()))) {
            try st.put("{}");
        } else {
            return false;
        }
        return true;
    }

    fn structure(st: *Stringifier, o: *Object, key: Value) Error!void {
        // The cycle check looks at every object above this one.
        try st.vm.charge(meter.elementsCost(st.stack.items.len));
        for (st.stack.items, 0..) |entry, i| {
            if (entry.o == o) return st.throwCircular(i, key);
        }
        if (st.stack.items.len >= depth_max) return st.vm.throwStackOverflow();
        try st.vm.checkNativeStack();
        st.stack.appendAssumeCapacity(.{ .o = o, .key = key });
        defer _ = st.stack.pop();
        if (o.kind == .array) return st.array(o.as(object.Array));
        return st.objectBody(o);
    }

    fn array(st: *Stringifier, a: *object.Array) Error!void {
        if (a.len == 0) return st.put("[]");
        try st.put("[");
        st.indent += 1;
        var i: u32 = 0;
        while (i < a.len) : (i += 1) {
            if (i > 0) try st.put(",");
            try st.newline();
            const item = a.items[i];
            const v = if (item.eqlBits(Value.hole)) Value.undefined_value else item;
            if (!try st.property(Value.obj(&a.object), Value.number(@floatFromInt(i)), v)) try st.put("null");
        }
        st.indent -= 1;
        try st.newline();
        try st.put("]");
    }

    fn objectBody(st: *Stringifier, o: *Object) Error!void {
        const holder = Value.obj(o);
        var key_list: []const Value = &.{};
        var replacer_keys: []const *String = &.{};
        // The keys are taken before any user code (toJSON, a replacer) can change the
        // object; for a plain object with few properties, on the native stack.
        var own_buf: [32]*String = undefined;
        var own: []*String = &.{};
        if (st.keys) |k| {
            replacer_keys = k;
        } else if (o.kind == .plain and o.properties.len <= own_buf.len) {
            var n: usize = 0;
            for (o.properties.slice()) |prop| {
                if (prop.flags.not_enumerable or prop.key.flags.symbol) continue;
                own_buf[n] = prop.key;
                n += 1;
            }
            own = own_buf[0..n];
            if (n == 0) key_list = &.{};
        } else {
            key_list = (try ops.ownKeysArray(st.vm, holder)).slice();
        }
        const count = if (st.keys != null) replacer_keys.len else if (own.len > 0) own.len else key_list.len;
        try st.put("{");
        st.indent += 1;
        var wrote = false;
        for (0..count) |i| {
            const k = if (st.keys != null) replacer_keys[i] else if (own.len > 0) own[i] else key_list[i].asString();
            if (st.keys != null and !(try hasKey(st.vm, o, k))) continue;
            const v = try ops.getField(st.vm, holder, k);
            // Write the separator and key, and take them back if the value is omitted.
            const mark = st.out.len;
            if (wrote) try st.put(",");
            try st.newline();
            try quote(st.vm, &st.out, k);
            try st.put(if (st.gap.len > 0 or st.gap_wide != null) ": " else ":");
            if (try st.property(holder, Value.string(k), v)) {
                wrote = true;
            } else {
                st.out.len = mark;
            }
        }
        st.indent -= 1;
        if (wrote) try st.newline();
        try st.put("}");
    }

    fn throwCircular(st: *Stringifier, start: usize, closing_key: Value) Error {
        var buf: [1024]u8 = undefined;
        var w: std.Io.Writer = .fixed(&buf);
        w.writeAll("Converting circular structure to JSON") catch {};
        w.print("\n    --> starting at object with constructor '{s}'", .{constructorName(st.stack.items[start].o)}) catch {};
        const path = st.stack.items[start + 1 ..];
        const prefix_count = 2;
        const postfix_count = 1;
        for (path, 0..) |entry, i| {
            if (path.len > prefix_count + postfix_count and i >= prefix_count and i < path.len - postfix_count) {
                if (i == prefix_count) w.writeAll("\n    |     ...") catch {};
                continue;
            }
            w.writeAll("\n    |     ") catch {};
            writeKey(&w, entry.key);
            w.print(" -> object with constructor '{s}'", .{constructorName(entry.o)}) catch {};
        }
        w.writeAll("\n    --- ") catch {};
        writeKey(&w, closing_key);
        w.writeAll(" closes the circle") catch {};
        return st.vm.throwMessage(.type_error, w.buffered());
    }
};

fn writeKey(w: *std.Io.Writer, key: Value) void {
    if (key.isNumber()) {
        w.print("index {d}", .{@as(u64, @intFromFloat(key.asNumber()))}) catch {};
    } else if (key.isString()) {
        w.print("property '{f}'", .{ops.StringFormat{ .s = key.asString() }}) catch {};
    }
}

fn constructorName(o: *Object) []const u8 {
    return switch (o.kind) {
        .array => "Array",
        .map => "Map",
        .set => "Set",
        .error_object => "Error",
        .closure => "Function",
        else => "Object",
    };
}

fn hasKey(vm: *Vm, o: *Object, key: *String) Error!bool {
    return ops.hasProperty(vm, Value.obj(o), Value.string(key));
}

/// A JSON string literal: `"`, `\` and control characters escaped, lone surrogates as \udXXX.
/// A short string's cost is in its value's (`property_ticks`); a long one pays for its units:
/// runs of Latin-1 copied in bulk, wide units one at a time.
pub fn quote(vm: *Vm, out: *string.StringBuffer, s: *const String) Error!void {
    if (s.len >= 64) try vm.charge(if (s.flags.wide) meter.unitsCost(s.len) else meter.bytesCost(s.len));
    if (!s.flags.wide) {
        // Latin-1: copy runs that need no escape in one go.
        const text = s.latin1();
        out.appendUnit('"') catch return vm.outOfMemory();
        var start: usize = 0;
        for (text, 0..) |c, i| {
            if (c >= 0x20 and c != '"' and c != '\\') continue;
            out.appendLatin1(text[start..i]) catch return vm.outOfMemory();
            try escapeLatin1(vm, out, c);
            start = i + 1;
        }
        out.appendLatin1(text[start..]) catch return vm.outOfMemory();
        out.appendUnit('"') catch return vm.outOfMemory();
        return;
    }
    out.appendUnit('"') catch return vm.outOfMemory();
    var i: usize = 0;
    while (i < s.len) : (i += 1) {
        const u = s.at(i);
        switch (u) {
            '"' => out.appendLatin1("\\\"") catch return vm.outOfMemory(),
            '\\' => out.appendLatin1("\\\\") catch return vm.outOfMemory(),
            0x08 => out.appendLatin1("\\b") catch return vm.outOfMemory(),
            0x0C => out.appendLatin1("\\f") catch return vm.outOfMemory(),
            '\n' => out.appendLatin1("\\n") catch return vm.outOfMemory(),
            '\r' => out.appendLatin1("\\r") catch return vm.outOfMemory(),
            '\t' => out.appendLatin1("\\t") catch return vm.outOfMemory(),
            0xD800...0xDBFF => {
                if (i + 1 < s.len and s.at(i + 1) >= 0xDC00 and s.at(i + 1) <= 0xDFFF) {
                    out.appendUnit(u) catch return vm.outOfMemory();
                    out.appendUnit(s.at(i + 1)) catch return vm.outOfMemory();
                    i += 1;
                } else try escapeUnit(vm, out, u);
            },
            0xDC00...0xDFFF => try escapeUnit(vm, out, u),
            else => if (u < 0x20) try escapeUnit(vm, out, u) else out.appendUnit(u) catch return vm.outOfMemory(),
        }
    }
    out.appendUnit('"') catch return vm.outOfMemory();
}

fn escapeLatin1(vm: *Vm, out: *string.StringBuffer, c: u8) Error!void {
    const text: []const u8 = switch (c) {
        '"' => "\\\"",
        '\\' => "\\\\",
        0x08 => "\\b",
        0x0C => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        else => return escapeUnit(vm, out, c),
    };
    out.appendLatin1(text) catch return vm.outOfMemory();
}

fn escapeUnit(vm: *Vm, out: *string.StringBuffer, u: u16) Error!void {
    var buf: [6]u8 = undefined;
    const text = std.fmt.bufPrint(&buf, "\\u{x:0>4}", .{u}) catch unreachable;
    out.appendLatin1(text) catch return vm.outOfMemory();
}

pub fn stringify(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    var st: Stringifier = .{ .vm = vm, .out = string.StringBuffer.init(vm.heap) };
    st.stack = .initBuffer(&st.stack_buf);
    const replacer = arg(args, 1);
    if (ops.isCallable(replacer)) {
        st.replacer = replacer;
    } else if (replacer.objectOf(.array)) |o| {
        const a = o.as(object.Array);
        var list: std.ArrayList(*String) = .empty;
        const gpa = @import("strings.zig").HeapAllocator.init(vm);
        for (a.slice()) |item| {
            // Each key is compared with those kept so far.
            try vm.charge(meter.elementsCost(1 + list.items.len));
            const key: ?*String = if (item.isString())
                item.asString()
            else if (item.isNumber())
                try ops.toString(vm, item)
            else
                null;
            if (key) |k| {
                const duplicate = for (list.items) |existing| {
                    if (existing.eql(k)) break true;
                } else false;
                if (!duplicate) list.append(gpa.allocator(), k) catch return vm.outOfMemory();
            }
        }
        st.keys = list.items;
    }
    const space = arg(args, 2);
    if (space.isNumber()) {
        const n: usize = @intFromFloat(@min(10, @max(0, number.toIntegerOrInfinity(space.asNumber()))));
        st.gap = "          "[0..n];
    } else if (space.isString()) {
        const s = space.asString();
        const n = @min(10, s.len);
        if (s.flags.wide) {
            for (0..n) |i| st.gap_buf[i] = s.at(i);
            if (n > 0) st.gap_wide = st.gap_buf[0..n];
        } else st.gap = s.latin1()[0..n];
    }
    const holder = try vm.newObject(1);
    const v = arg(args, 0);
    holder.properties.put(vm.heap, string.empty, v) catch return vm.outOfMemory();
    if (!try st.property(Value.obj(holder), Value.string(string.empty), v)) return Value.undefined_value;
    return Value.string(st.out.finish() catch return vm.outOfMemory());
}

/// JSON.stringify(v), for console.log's `%j`: a cycle gives "[Circular]", as node's does.
pub fn stringifyValue(vm: *Vm, v: Value) Error!Value {
    return stringify(vm, Value.undefined_value, &.{v}) catch |err| switch (err) {
        error.Throw => {
            if (vm.exception.objectOf(.error_object)) |o| {
                const e = o.as(object.ErrorObject);
                if (e.message) |m| {
                    if (std.mem.startsWith(u8, m.bytes(), "Converting circular")) return Value.string(try vm.newLatin1("[Circular]"));
                }
            }
            return err;
        },
        else => return err,
    };
}
