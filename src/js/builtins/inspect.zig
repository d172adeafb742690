//! console.log's formatting: node's util.inspect (with its defaults: depth 2, 80 columns,
//! `compact: 3`, 100 array items, 10,000 string characters) and util.format's `%` directives,
//! for the kinds of values this engine has.
//!
//! The layout rules follow node's lib/internal/util/inspect.js closely, because the output is
//! compared byte for byte with node's: when entries go on one line (`reduceToSingleString`),
//! how arrays of more than six items are grouped in columns (`groupArrayElements`), how long
//! strings are split, how keys are quoted and how cycles are marked. Lengths are counted in
//! UTF-16 units and display widths as node counts them.
//!
//! Formatting runs no user code, so it works in scratch memory: the free middle of the run's
//! heap, given back when the line is written.
const std = @import("std");
const Allocator = std.mem.Allocator;

const Vm = @import("../Vm.zig");
const Value = @import("../value.zig").Value;
const string = @import("../string.zig");
const String = string.String;
const object = @import("../object.zig");
const Object = object.Object;
const number = @import("../number.zig");
const names = @import("../names.zig");
const builtins = @import("../builtins.zig");
const regexp_flags_len = @import("../regexp.zig").Flags.letters.len;
const Program = @import("../Program.zig");
const meter = @import("../meter.zig");

const break_length = 80;
const depth_max = 2;
const array_items_max = 100;
const string_length_max = 10_000;
const min_line_length = 16;

/// `Stopped`: the run's budget or deadline ran out while formatting (the engine has recorded
/// which; the caller ends the run).
pub const Error = error{ OutOfMemory, Stopped };

/// What formatting a value costs beyond its text (a string's units are paid for apiece).
const value_ticks = 8;

const Output = std.ArrayList([]const u8);

pub const Inspector = struct {
    vm: *Vm,
    gpa: Allocator,
    indentation: u32 = 0,
    current_depth: u32 = 0,
    seen: std.ArrayList(*Object) = .empty,
    circular: std.ArrayList(*Object) = .empty,
    /// Nesting shown before `[Object]`: 2, or 0 for `%s`.
    depth: u32 = depth_max,

    fn print(in: *Inspector, comptime fmt: []const u8, args: anytype) Error![]u8 {
        return std.fmt.allocPrint(in.gpa, fmt, args);
    }

    fn spaces(in: *Inspector, n: usize) Error![]u8 {
        const s = try in.gpa.alloc(u8, n);
        @memset(s, ' ');
        return s;
    }

    /// Pays for formatting as it goes: an object of a million keys can be stopped inside.
    fn pay(in: *Inspector, ticks: u64) Error!void {
        in.vm.charge(ticks) catch return error.Stopped;
    }

    /// util.inspect(v).
    pub fn inspect(in: *Inspector, v: Value) Error![]const u8 {
        in.indentation = 0;
        in.current_depth = 0;
        in.seen.clearRetainingCapacity();
        in.circular.clearRetainingCapacity();
        return in.formatValue(v, 0);
    }

    fn formatValue(in: *Inspector, v: Value, recurse_times: u32) Error![]const u8 {
        const units: usize = if (v.isString()) @min(v.asString().len, string_length_max) else 0;
        try in.pay(value_ticks + meter.unitsCost(units));
        if (!v.is(.object)) return in.formatPrimitive(v);
        const o = v.asObject();
        for (in.seen.items) |s| {
            if (s == o) {
                const index = for (in.circular.items, 0..) |c, i| {
                    if (c == o) break i + 1;
                } else blk: {
                    try in.circular.append(in.gpa, o);
                    break :blk in.circular.items.len;
                };
                return in.print("[Circular *{d}]", .{index});
            }
        }
        return in.formatRaw(o, recurse_times);
    }

    fn formatPrimitive(in: *Inspector, v: Value) Error![]const u8 {
        if (v.isNumber()) return formatNumber(in.gpa, v.asNumber());
        if (v.isString()) return in.formatString(v.asString());
        if (v.isUndefined()) return "undefined";
        if (v.isNull()) return "null";
        if (v.eqlBits(Value.true_value)) return "true";
        if (v.eqlBits(Value.false_value)) return "false";
        if (v.is(.symbol)) {
            var out: std.Io.Writer.Allocating = .init(in.gpa);
            @import("../symbol.zig").writeDescriptive(&out.writer, v.asSymbolKey()) catch return error.OutOfMemory;
            return out.written();
        }
        if (v.is(.native)) {
            const native = builtins.native(in.vm, @intCast(v.payload()));
            if (native.name.len == 0) return "[Function (anonymous)]";
            return in.print("[Function: {s}]", .{native.name});
        }
        if (v.is(.builtin)) {
            const id: u32 = @intCast(v.payload());
            const name = builtins.builtinName(in.vm, id);
            // V8's Error has one enumerable own property, stackTraceLimit.
            if (std.mem.eql(u8, name, "Error")) return "[Function: Error] { stackTraceLimit: 10 }";
            if (builtins.isCallableBuiltin(id)) return in.print("[Function: {s}]", .{name});
            return in.print("Object [{s}] {{}}", .{name});
        }
        return "undefined";
    }

    /// A string inside a structure: quoted and escaped, split at line breaks when long.
    fn formatString(in: *Inspector, s: *const String) Error![]const u8 {
        var len = s.len;
        var trailer: []const u8 = "";
        if (len > string_length_max) {
            const remaining = len - string_length_max;
            len = string_length_max;
            trailer = try in.print("... {d} more character{s}", .{ remaining, if (remaining > 1) "s" else "" });
        }
        if (len > min_line_length and len > break_length -| in.indentation -| 4) {
            // Split after each line feed; each piece quoted on its own line.
            var out: std.ArrayList(u8) = .empty;
            var start: usize = 0;
            var first = true;
            while (start < len) {
                var end = start;
                while (end < len and s.at(end) != '\n') end += 1;
                if (end < len) end += 1;
                if (!first) {
                    try out.appendSlice(in.gpa, " +\n");
                    try out.appendNTimes(in.gpa, ' ', in.indentation + 2);
                }
                first = false;
                try strEscape(in.gpa, &out, s, start, end);
                start = end;
            }
            try out.appendSlice(in.gpa, trailer);
            return out.items;
        }
        var out: std.ArrayList(u8) = .empty;
        try strEscape(in.gpa, &out, s, 0, len);
        try out.appendSlice(in.gpa, trailer);
        return out.items;
    }

    const Extras = enum { object, array };

    fn formatRaw(in: *Inspector, o: *Object, recurse_times_in: u32) Error![]const u8 {
        var recurse_times = recurse_times_in;
        var base: []const u8 = "";
        var braces: [2][]const u8 = .{ "{", "}" };
        var extras: Extras = .object;
        if (builtins.urlsearchparams.isSearchParams(o)) return in.formatSearchParams(o, recurse_times);
        if (builtins.url.isUrl(o)) return in.formatUrl(o, recurse_times);
        if (o.kind == .plain) {
            var text: [96]u8 = undefined;
            if (builtins.text_encoding.inspectText(o, &text)) |shown| return in.print("{s}", .{shown});
        }
        const is_headers = builtins.headers.isHeaders(o);
        const is_data_view = builtins.data_view.isDataView(o);
        const keys = if (is_headers)
            try builtins.headers.inspectProperties(o, in.gpa)
        else
            try in.visibleProperties(o);
        switch (o.kind) {
            .map => if (is_headers) {
                // node shows undici's list as an object: `Headers { a: '1' }`.
                if (keys.len == 0) return "Headers {}";
                braces[0] = "Headers {";
            } else if (is_data_view) {
                braces[0] = "DataView {";
            } else {
                const m = object.mapOf(o);
                const prefix = try in.print("Map({d}) ", .{m.live});
                if (m.live == 0 and keys.len == 0) return in.print("{s}{{}}", .{prefix});
                braces[0] = try in.print("{s}{{", .{prefix});
            },
            .promise => {
                const p = o.as(object.Promise);
                const shown = switch (p.state) {
                    .pending => "<pending>",
                    .fulfilled => try in.formatValue(p.result, recurse_times + 1),
                    .rejected => try in.print("<rejected> {s}", .{try in.formatValue(p.result, recurse_times + 1)}),
                };
                if (keys.len == 0) return in.print("Promise {{ {s} }}", .{shown});
                braces[0] = try in.print("Promise {{ {s},", .{shown});
            },
            .promise_function => return "[Function (anonymous)]",
            .regexp => {
                const re = o.as(object.RegExpObject);
                var flags: [regexp_flags_len]u8 = undefined;
                base = try in.print("/{f}/{s}", .{ Utf8{ .s = re.source }, re.program.flags.write(&flags) });
                if (keys.len == 0) return base;
            },
            .date => {
                var text: [96]u8 = undefined;
                base = try in.print("{s}", .{builtins.dates.inspectText(o.as(object.DateObject).time, &text)});
                if (keys.len == 0) return base;
            },
            .generator => if (o.as(object.Generator).async_generator != null) {
                braces[0] = "Object [AsyncGenerator] {";
                if (keys.len == 0) return "Object [AsyncGenerator] {}";
            } else {
                braces[0] = "Object [Generator] {";
                if (keys.len == 0) return "Object [Generator] {}";
            },
            .accessor => {
                const a = o.as(object.Accessor);
                if (a.setter.isUndefined()) return "[Getter]";
                if (a.getter.isUndefined()) return "[Setter]";
                return "[Getter/Setter]";
            },
            .bound_function => {
                const target = o.as(object.BoundFunction).target;
                const target_name: *const String = if (target.objectOf(.closure)) |f| in.vm.closureName(f.as(object.Closure)) else string.empty;
                base = try in.print("[Function: bound {f}]", .{Utf8{ .s = target_name }});
                if (keys.len == 0) return base;
            },
            .array => {
                const a = o.as(object.Array);
                braces = .{ "[", "]" };
                if (a.len == 0 and keys.len == 0) return "[]";
                extras = .array;
            },
            .typed_array => {
                // node: `Uint8Array(3) [ 1, 2, 3 ]`.
                const t = o.as(object.TypedArray);
                const prefix = try in.print("{s}({d}) ", .{ t.element.name(), t.len });
                if (t.len == 0 and keys.len == 0) return in.print("{s}[]", .{prefix});
                braces = .{ try in.print("{s}[", .{prefix}), "]" };
                extras = .array;
            },
            .array_buffer => braces[0] = "ArrayBuffer {",
            .set => {
                const m = object.mapOf(o);
                const prefix = try in.print("Set({d}) ", .{m.live});
                if (m.live == 0 and keys.len == 0) return in.print("{s}{{}}", .{prefix});
                braces[0] = try in.print("{s}{{", .{prefix});
            },
            .iterator => {
                const it = o.as(object.Iterator);
                braces[0] = switch (it.iterator_kind) {
                    .map_keys, .map_values => "[Map Iterator] {",
                    .map_entries => "[Map Entries] {",
                    .set_values => "[Set Iterator] {",
                    .set_entries => "[Set Entries] {",
                    .array_keys, .array_values, .array_entries => "Object [Array Iterator] {",
                    .string_values => "Object [String Iterator] {",
                    .for_in_keys, .protocol => "Object [Iterator] {",
                };
                if (braces[0][0] == 'O' and keys.len == 0) return in.print("{s}}}", .{braces[0]});
            },
            .closure => {
                const c = o.as(object.Closure);
                const name = in.vm.closureName(c);
                base = if (c.function.kind.isClassConstructor())
                    try in.classBase(c, name)
                else if (name.len == 0)
                    "[Function (anonymous)]"
                else
                    try in.print("[Function: {f}]", .{Utf8{ .s = name }});
                if (keys.len == 0) return base;
            },
            .error_object => {
                base = try in.formatError(o.as(object.ErrorObject));
                if (keys.len == 0 and o.as(object.ErrorObject).cause.eqlBits(Value.hole)) return base;
            },
            .plain => {
                if (builtins.arguments.isArguments(o)) {
                    // node 20 shows a strict arguments object's elements as keys.
                    braces[0] = "[Arguments] {";
                } else if (o.class != 0 and o.class <= in.vm.host.class_names.len) {
                    braces[0] = try in.print("{s} {{", .{in.vm.host.class_names[o.class - 1]});
                } else if (try in.constructorPrefix(o)) |prefix| {
                    braces[0] = try in.print("{s} {{", .{prefix});
                }
                if (keys.len == 0) return in.print("{s}}}", .{braces[0]});
            },
        }
        if (recurse_times > in.depth) {
            // node's `[${constructor name} ${tag}]`: the builtin that made it, and the
            // iterators' toStringTag.
            return switch (o.kind) {
                .array => "[Array]",
                .map => if (is_headers) "[Headers]" else if (is_data_view) "[DataView]" else "[Map]",
                .set => "[Set]",
                .closure => "[Function]",
                .error_object => in.print("[{s}]", .{o.as(object.ErrorObject).error_kind.name()}),
                .iterator => switch (o.as(object.Iterator).iterator_kind) {
                    .map_keys, .map_values, .map_entries => "[Object [Map Iterator]]",
                    .set_values, .set_entries => "[Object [Set Iterator]]",
                    .array_keys, .array_values, .array_entries => "[Object [Array Iterator]]",
                    .string_values => "[Object [String Iterator]]",
                    .for_in_keys, .protocol => "[Object [Iterator]]",
                },
                .generator => if (o.as(object.Generator).async_generator != null) "[Object [AsyncGenerator]]" else "[Object [Generator]]",
                .promise => "[Promise]",
                .typed_array => in.print("[{s}]", .{o.as(object.TypedArray).element.name()}),
                .array_buffer => "[ArrayBuffer]",
                else => "[Object]",
            };
        }
        recurse_times += 1;
        try in.seen.append(in.gpa, o);
        in.current_depth = recurse_times;
        var output: Output = .empty;
        switch (o.kind) {
            .array => try in.formatArray(o.as(object.Array), recurse_times, &output),
            .map, .set => if (is_data_view) {
                try in.formatDataView(o, recurse_times, &output);
            } else if (!is_headers) {
                try in.formatMapOrSet(o, recurse_times, &output);
            },
            .iterator => try in.formatIterator(o.as(object.Iterator), recurse_times, &output),
            .typed_array => try in.formatTypedArray(o.as(object.TypedArray), &output),
            .array_buffer => try in.formatArrayBuffer(o.as(object.ArrayBuffer), &output),
            else => {},
        }
        for (keys) |p| try output.append(in.gpa, try in.formatProperty(p.key, p.value, recurse_times, false));
        if (o.kind == .error_object) {
            // The cause is an own property that is not enumerable: node shows it as [cause].
            const cause = o.as(object.ErrorObject).cause;
            if (!cause.eqlBits(Value.hole)) {
                in.indentation += 2;
                const str = try in.formatValue(cause, recurse_times);
                in.indentation -= 2;
                try output.append(in.gpa, try in.print("[cause]: {s}", .{str}));
            }
        }
        for (in.circular.items, 0..) |c, i| {
            if (c == o) {
                const reference = try in.print("<ref *{d}>", .{i + 1});
                base = if (base.len == 0) reference else try in.print("{s} {s}", .{ reference, base });
                break;
            }
        }
        _ = in.seen.pop();
        return in.reduceToSingleString(output.items, base, braces, extras, recurse_times, o);
    }

    /// node's custom inspect of a URL: each component on a line of its own (there are more
    /// than six), `URL {}` past the depth.
    fn formatUrl(in: *Inspector, o: *Object, recurse_times: u32) Error![]const u8 {
        if (recurse_times > in.depth) return "URL {}";
        try in.pay(value_ticks * builtins.url.fields.len);
        // The components come from the inspector's scratch: the engine's heap is that scratch
        // while formatting, so nothing may be allocated there.
        const href = builtins.url.hrefText(o);
        const texts = builtins.url.componentTexts(in.gpa, href) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Invalid, error.Idna => unreachable, // A stored href parses (url.zig).
        };
        const pad = try in.spaces(in.indentation + 2);
        var out: std.ArrayList(u8) = .empty;
        try out.appendSlice(in.gpa, "URL {");
        for (builtins.url.fields, texts, 0..) |name, text, k| {
            const shown = if (std.mem.eql(u8, name, "searchParams")) blk: {
                in.indentation += 2;
                defer in.indentation -= 2;
                break :blk try in.formatSearchParams(builtins.url.paramsOf(o), recurse_times + 1);
            } else blk: {
                const s: String = .{ .ptr = text.ptr, .len = @intCast(text.len) };
                break :blk try in.formatString(&s);
            };
            try out.appendSlice(in.gpa, try in.print("{s}\n{s}{s}: {s}", .{ if (k == 0) "" else ",", pad, name, shown }));
        }
        try out.appendSlice(in.gpa, try in.print("\n{s}}}", .{try in.spaces(in.indentation)}));
        return out.items;
    }

    /// node's custom inspect of a URLSearchParams: `URLSearchParams { 'a' => '1' }`, or, past
    /// 80 columns, a pair a line with the closing brace on the last; `[Object]` past the depth.
    fn formatSearchParams(in: *Inspector, o: *Object, recurse_times: u32) Error![]const u8 {
        if (recurse_times > in.depth) return "[Object]";
        const items = builtins.urlsearchparams.listOf(o).slice();
        if (items.len == 0) return "URLSearchParams {}";
        // Each pair is inspected on its own, as at the top level (no indentation).
        const indentation = in.indentation;
        in.indentation = 0;
        var parts: std.ArrayList([]const u8) = .empty;
        var total: usize = 0;
        var i: usize = 0;
        while (i < items.len) : (i += 2) {
            try in.pay(value_ticks);
            const name = try in.formatString(items[i].asString());
            const value = try in.formatString(items[i + 1].asString());
            const part = try in.print("{s} => {s}", .{ name, value });
            total += part.len + 2;
            try parts.append(in.gpa, part);
        }
        in.indentation = indentation;
        var out: std.ArrayList(u8) = .empty;
        if (total - 2 > break_length) {
            const newline = try in.print("\n{s}", .{try in.spaces(indentation + 2)});
            try out.appendSlice(in.gpa, "URLSearchParams {");
            for (parts.items, 0..) |part, k| {
                try out.appendSlice(in.gpa, if (k == 0) newline else try in.print(",{s}", .{newline}));
                try out.appendSlice(in.gpa, part);
            }
            try out.appendSlice(in.gpa, " }");
            return out.items;
        }
        try out.appendSlice(in.gpa, "URLSearchParams { ");
        for (parts.items, 0..) |part, k| {
            if (k > 0) try out.appendSlice(in.gpa, ", ");
            try out.appendSlice(in.gpa, part);
        }
        try out.appendSlice(in.gpa, " }");
        return out.items;
    }

    /// The properties console.log shows: the enumerable ones.
    /// node lists the string keys, then the symbols.
    fn visibleProperties(in: *Inspector, o: *Object) Error![]const object.Property {
        const all = o.properties.slice();
        for (all) |p| {
            if (p.flags.not_enumerable or p.key.flags.symbol) break;
        } else return all;
        var visible: std.ArrayList(object.Property) = .empty;
        for (all) |p| if (!p.flags.not_enumerable and !p.key.flags.symbol) try visible.append(in.gpa, p);
        for (all) |p| if (!p.flags.not_enumerable and p.key.flags.symbol) try visible.append(in.gpa, p);
        return visible.items;
    }

    /// node's name before an object's braces when it does not inherit from Object.prototype
    /// directly: its constructor's name (`A { x: 1 }`), or `[Object: null prototype]`.
    fn constructorPrefix(in: *Inspector, o: *Object) Error!?[]const u8 {
        if (o.proto.isUndefined() or o.proto.is(.builtin)) return null;
        if (o.proto.isNull()) return "[Object: null prototype]";
        var current = o.proto;
        var depth: u32 = 0;
        while (current.is(.object) and depth < 1000) : (depth += 1) {
            const p = current.asObject();
            if (p.properties.get(names.string("constructor"))) |c| {
                if (c.objectOf(.closure)) |f| {
                    const name = in.vm.closureName(f.as(object.Closure));
                    if (name.len > 0) return try in.print("{f}", .{Utf8{ .s = name }});
                }
                break;
            }
            current = p.proto;
        }
        return null;
    }

    /// `[class A]`, `[class B extends A]`.
    fn classBase(in: *Inspector, c: *object.Closure, name: *const String) Error![]const u8 {
        const shown = if (name.len == 0) "(anonymous)" else try in.print("{f}", .{Utf8{ .s = name }});
        if (c.object.proto.objectOf(.closure)) |parent| {
            const parent_name = in.vm.closureName(parent.as(object.Closure));
            return in.print("[class {s} extends {f}]", .{ shown, Utf8{ .s = parent_name } });
        }
        if (c.object.proto.is(.builtin)) {
            return in.print("[class {s} extends {s}]", .{ shown, builtins.builtinName(in.vm, @intCast(c.object.proto.payload())) });
        }
        return in.print("[class {s}]", .{shown});
    }

    fn formatError(in: *Inspector, e: *object.ErrorObject) Error![]const u8 {
        var out: std.ArrayList(u8) = .empty;
        const name = e.object.properties.get(names.string("name"));
        if (name != null and name.?.isString()) {
            const n = name.?.asString();
            const kind = e.error_kind.name();
            // util.inspect's improveStack: a name ending in "Error" that is not the
            // constructor's is shown after it, `Error [NotFoundError]: m`.
            if (n.len >= 5 and !n.eqlLatin1(kind) and !n.flags.wide and std.mem.endsWith(u8, n.latin1(), "Error")) {
                if (std.mem.indexOf(u8, kind, n.latin1()) != null) {
                    try out.appendSlice(in.gpa, kind);
                } else {
                    try out.print(in.gpa, "{s} [{f}]", .{ kind, Utf8{ .s = n } });
                }
            } else {
                try out.print(in.gpa, "{f}", .{Utf8{ .s = n }});
            }
        } else {
            try out.appendSlice(in.gpa, e.error_kind.name());
        }
        if (e.message) |m| {
            if (m.len > 0) try out.print(in.gpa, ": {f}", .{Utf8{ .s = m }});
        }
        if (e.position) |p| {
            try out.appendSlice(in.gpa, "\n    at ");
            try out.print(in.gpa, "{f}", .{Utf8{ .s = p }});
        } else {
            try out.insert(in.gpa, 0, '[');
            try out.append(in.gpa, ']');
        }
        if (in.indentation == 0) return out.items;
        // The message and the stack are indented with the structure around them.
        var indented: std.ArrayList(u8) = .empty;
        for (out.items) |ch| {
            try indented.append(in.gpa, ch);
            if (ch == '\n') try indented.appendNTimes(in.gpa, ' ', in.indentation);
        }
        return indented.items;
    }

    fn formatArray(in: *Inspector, a: *object.Array, recurse_times: u32, output: *Output) Error!void {
        const len = @min(array_items_max, a.len);
        var i: u32 = 0;
        while (i < len) {
            if (a.items[i].eqlBits(Value.hole)) {
                var end = i;
                while (end < a.len and a.items[end].eqlBits(Value.hole)) end += 1;
                const empty = end - i;
                try output.append(in.gpa, try in.print("<{d} empty item{s}>", .{ empty, if (empty > 1) "s" else "" }));
                i = end;
                if (output.items.len >= len) break;
                continue;
            }
            in.indentation += 2;
            try output.append(in.gpa, try in.formatValue(a.items[i], recurse_times));
            in.indentation -= 2;
            i += 1;
            if (output.items.len >= len) break;
        }
        const remaining = a.len - i;
        if (remaining > 0) try output.append(in.gpa, try remainingText(in, remaining));
    }

    fn formatTypedArray(in: *Inspector, t: *object.TypedArray, output: *Output) Error!void {
        const len = @min(array_items_max, t.len);
        for (0..len) |i| {
            const x = builtins.typed_arrays.load(t, @intCast(i));
            try output.append(in.gpa, try formatNumber(in.gpa, x));
        }
        if (t.len > len) try output.append(in.gpa, try remainingText(in, t.len - len));
    }

    /// node's `byteLength`, `byteOffset` and `buffer` of a DataView.
    fn formatDataView(in: *Inspector, o: *Object, recurse_times: u32, output: *Output) Error!void {
        inline for (.{ "byteLength", "byteOffset", "buffer" }) |name| {
            const v = builtins.data_view.field(o, names.string(name));
            try output.append(in.gpa, try in.formatProperty(names.string(name), v, recurse_times, false));
        }
    }

    /// node's `[Uint8Contents]: <01 02>` (the first 100 bytes) and `byteLength`.
    fn formatArrayBuffer(in: *Inspector, b: *object.ArrayBuffer, output: *Output) Error!void {
        const shown_max = array_items_max;
        const shown = b.slice()[0..@min(shown_max, b.len)];
        var text: std.ArrayList(u8) = .empty;
        try text.appendSlice(in.gpa, "[Uint8Contents]: <");
        for (shown, 0..) |byte, i| {
            if (i > 0) try text.append(in.gpa, ' ');
            try text.print(in.gpa, "{x:0>2}", .{byte});
        }
        if (b.len > shown_max) try text.print(in.gpa, " ... {d} more byte{s}", .{ b.len - shown_max, if (b.len - shown_max > 1) "s" else "" });
        try text.append(in.gpa, '>');
        try output.append(in.gpa, text.items);
        try output.append(in.gpa, try in.print("byteLength: {d}", .{b.len}));
    }

    fn formatMapOrSet(in: *Inspector, o: *Object, recurse_times: u32, output: *Output) Error!void {
        const m = object.mapOf(o);
        in.indentation += 2;
        var count: u32 = 0;
        for (m.slice()) |entry| {
            if (entry.key.eqlBits(Value.hole)) continue;
            if (count >= array_items_max) break;
            count += 1;
            if (o.kind == .set) {
                try output.append(in.gpa, try in.formatValue(entry.key, recurse_times));
            } else {
                const k = try in.formatValue(entry.key, recurse_times);
                const v = try in.formatValue(entry.value, recurse_times);
                try output.append(in.gpa, try in.print("{s} => {s}", .{ k, v }));
            }
        }
        in.indentation -= 2;
        if (m.live > count) try output.append(in.gpa, try remainingText(in, m.live - count));
    }

    fn formatIterator(in: *Inspector, it: *object.Iterator, recurse_times: u32, output: *Output) Error!void {
        if (!it.source.is(.object)) return;
        const source = it.source.asObject();
        if (source.kind != .map and source.kind != .set) return;
        const m = object.mapOf(source);
        in.indentation += 2;
        var i = it.index;
        while (i < m.len and output.items.len < array_items_max) : (i += 1) {
            const entry = m.entries[i];
            if (entry.key.eqlBits(Value.hole)) continue;
            switch (it.iterator_kind) {
                .map_keys, .set_values => try output.append(in.gpa, try in.formatValue(entry.key, recurse_times)),
                .map_values => try output.append(in.gpa, try in.formatValue(entry.value, recurse_times)),
                .map_entries, .set_entries => {
                    const second = if (it.iterator_kind == .set_entries) entry.key else entry.value;
                    const pair = [_][]const u8{ try in.formatValue(entry.key, recurse_times), try in.formatValue(second, recurse_times) };
                    try output.append(in.gpa, try in.reduceToSingleString(&pair, "", .{ "[", "]" }, .array, recurse_times, null));
                },
                else => {},
            }
        }
        in.indentation -= 2;
    }

    fn formatProperty(in: *Inspector, key: *const String, v: Value, recurse_times: u32, is_array_item: bool) Error![]const u8 {
        in.indentation += 2;
        const str = try in.formatValue(v, recurse_times);
        in.indentation -= 2;
        if (is_array_item) return str;
        var out: std.ArrayList(u8) = .empty;
        if (key.flags.symbol) {
            var w: std.Io.Writer.Allocating = .init(in.gpa);
            w.writer.writeByte('[') catch return error.OutOfMemory;
            @import("../symbol.zig").writeDescriptive(&w.writer, key) catch return error.OutOfMemory;
            w.writer.writeByte(']') catch return error.OutOfMemory;
            try out.appendSlice(in.gpa, w.written());
        } else if (key.eqlLatin1("__proto__")) {
            try out.appendSlice(in.gpa, "['__proto__']");
        } else if (isPlainKey(key)) {
            try out.appendSlice(in.gpa, key.latin1());
        } else {
            try strEscape(in.gpa, &out, key, 0, key.len);
        }
        try out.appendSlice(in.gpa, ": ");
        try out.appendSlice(in.gpa, str);
        return out.items;
    }

    fn reduceToSingleString(
        in: *Inspector,
        output_in: []const []const u8,
        base: []const u8,
        braces: [2][]const u8,
        extras: Extras,
        recurse_times: u32,
        value: ?*Object,
    ) Error![]const u8 {
        var output = output_in;
        const entries = output.len;
        if (extras == .array and entries > 6) output = try in.groupArrayElements(output, value);
        if (@as(i64, in.current_depth) - recurse_times < 3 and entries == output.len) {
            const start = output.len + in.indentation + jsLength(braces[0]) + jsLength(base) + 10;
            if (isBelowBreakLength(output, start, base)) {
                const joined = try std.mem.join(in.gpa, ", ", output);
                if (std.mem.indexOfScalar(u8, joined, '\n') == null) {
                    return in.print("{s}{s}{s} {s} {s}", .{ base, if (base.len > 0) " " else "", braces[0], joined, braces[1] });
                }
            }
        }
        const indentation = try in.print("\n{s}", .{try in.spaces(in.indentation)});
        const separator = try in.print(",{s}  ", .{indentation});
        const joined = try std.mem.join(in.gpa, separator, output);
        return in.print("{s}{s}{s}{s}  {s}{s}{s}", .{ base, if (base.len > 0) " " else "", braces[0], indentation, joined, indentation, braces[1] });
    }

    fn groupArrayElements(in: *Inspector, output: []const []const u8, value: ?*Object) Error![]const []const u8 {
        var total_length: usize = 0;
        var max_length: usize = 0;
        var output_length = output.len;
        const a: ?*object.Array = if (value) |v| (if (v.kind == .array) v.as(object.Array) else null) else null;
        // The "... more items" entry is not grouped.
        if (output.len > array_items_max) output_length -= 1;
        const separator_space = 2;
        const data_len = try in.gpa.alloc(usize, output_length);
        for (output[0..output_length], data_len) |entry, *d| {
            const len = displayWidth(entry);
            d.* = len;
            total_length += len + separator_space;
            if (max_length < len) max_length = len;
        }
        const actual_max = max_length + separator_space;
        const total_f: f64 = @floatFromInt(total_length);
        const actual_f: f64 = @floatFromInt(actual_max);
        if (actual_max * 3 + in.indentation < break_length and (total_f / actual_f > 5 or max_length <= 6)) {
            const approx_char_heights = 2.5;
            const average_bias = @sqrt(actual_f - total_f / @as(f64, @floatFromInt(output.len)));
            const biased_max = @max(actual_f - 3 - average_bias, 1);
            const columns_f = @min(
                @min(jsRound(@sqrt(approx_char_heights * biased_max * @as(f64, @floatFromInt(output_length))) / biased_max), @floor(@as(f64, @floatFromInt(break_length - in.indentation)) / actual_f)),
                @min(@as(f64, 3 * 4), 15),
            );
            const columns: usize = if (columns_f >= 1) @intFromFloat(columns_f) else 0;
            if (columns <= 1) return output;
            const max_line_length = try in.gpa.alloc(usize, columns);
            for (0..columns) |i| {
                var line_max: usize = 0;
                var j = i;
                while (j < output_length) : (j += columns) line_max = @max(line_max, data_len[j]);
                max_line_length[i] = line_max + separator_space;
            }
            var pad_start = true;
            if (a) |arr| {
                for (0..output.len) |i| {
                    if (i >= arr.len or !arr.items[i].isNumber()) {
                        pad_start = false;
                        break;
                    }
                }
            }
            var grouped: std.ArrayList([]const u8) = .empty;
            var i: usize = 0;
            while (i < output_length) : (i += columns) {
                const max = @min(i + columns, output_length);
                var line: std.ArrayList(u8) = .empty;
                var j = i;
                while (j < max - 1) : (j += 1) {
                    const cell = try in.print("{s}, ", .{output[j]});
                    const padding = max_line_length[j - i] + jsLength(output[j]) - data_len[j];
                    try appendPadded(in.gpa, &line, cell, padding, pad_start);
                }
                if (pad_start) {
                    const padding = max_line_length[j - i] + jsLength(output[j]) - data_len[j] - separator_space;
                    try appendPadded(in.gpa, &line, output[j], padding, true);
                } else {
                    try line.appendSlice(in.gpa, output[j]);
                }
                try grouped.append(in.gpa, line.items);
            }
            if (output_length < output.len) try grouped.append(in.gpa, output[output_length]);
            return grouped.items;
        }
        return output;
    }
};

fn remainingText(in: *Inspector, remaining: u32) Error![]const u8 {
    return in.print("... {d} more item{s}", .{ remaining, if (remaining > 1) "s" else "" });
}

/// JavaScript's Math.round: halves go up.
fn jsRound(x: f64) f64 {
    return @floor(x + 0.5);
}

fn appendPadded(gpa: Allocator, line: *std.ArrayList(u8), text: []const u8, width: usize, pad_start: bool) Error!void {
    const len = jsLength(text);
    const pad = if (width > len) width - len else 0;
    if (pad_start) try line.appendNTimes(gpa, ' ', pad);
    try line.appendSlice(gpa, text);
    if (!pad_start) try line.appendNTimes(gpa, ' ', pad);
}

fn isBelowBreakLength(output: []const []const u8, start: usize, base: []const u8) bool {
    var total = output.len + start;
    if (total + output.len > break_length) return false;
    for (output) |entry| {
        total += jsLength(entry);
        if (total > break_length) return false;
    }
    return std.mem.indexOfScalar(u8, base, '\n') == null;
}

/// /^[a-zA-Z_][a-zA-Z_0-9]*$/
fn isPlainKey(key: *const String) bool {
    if (key.flags.wide or key.len == 0) return false;
    const text = key.latin1();
    if (!(std.ascii.isAlphabetic(text[0]) or text[0] == '_')) return false;
    for (text[1..]) |ch| {
        if (!(std.ascii.isAlphanumeric(ch) or ch == '_')) return false;
    }
    return true;
}

/// The length in UTF-16 units of UTF-8 text.
pub fn jsLength(text: []const u8) usize {
    var n: usize = 0;
    for (text) |ch| {
        if (ch & 0xC0 != 0x80) n += 1;
        if (ch >= 0xF0) n += 1;
    }
    return n;
}

/// Columns on a terminal, as node estimates them.
fn displayWidth(text: []const u8) usize {
    var width: usize = 0;
    var it: string.Utf8Iterator = .{ .text = text };
    while (it.next()) |cp| {
        if (isFullWidth(cp)) {
            width += 2;
        } else if (!isZeroWidth(cp)) {
            width += 1;
        }
    }
    return width;
}

fn isZeroWidth(cp: u21) bool {
    return cp <= 0x1F or (cp >= 0x7F and cp <= 0x9F) or (cp >= 0x300 and cp <= 0x36F) or
        (cp >= 0x200B and cp <= 0x200F) or (cp >= 0x20D0 and cp <= 0x20FF) or
        (cp >= 0xFE00 and cp <= 0xFE0F) or (cp >= 0xFE20 and cp <= 0xFE2F) or (cp >= 0xE0100 and cp <= 0xE01EF);
}

fn isFullWidth(cp: u21) bool {
    return cp >= 0x1100 and (cp <= 0x115F or cp == 0x2329 or cp == 0x232A or
        (cp >= 0x2E80 and cp <= 0x3247 and cp != 0x303F) or (cp >= 0x3250 and cp <= 0x4DBF) or
        (cp >= 0x4E00 and cp <= 0xA4C6) or (cp >= 0xA960 and cp <= 0xA97C) or
        (cp >= 0xAC00 and cp <= 0xD7A3) or (cp >= 0xF900 and cp <= 0xFAFF) or
        (cp >= 0xFE10 and cp <= 0xFE19) or (cp >= 0xFE30 and cp <= 0xFE6B) or
        (cp >= 0xFF01 and cp <= 0xFF60) or (cp >= 0xFFE0 and cp <= 0xFFE6) or
        (cp >= 0x1B000 and cp <= 0x1B001) or (cp >= 0x1F200 and cp <= 0x1F251) or
        (cp >= 0x1F300 and cp <= 0x1F64F) or (cp >= 0x1F900 and cp <= 0x1F9FF) or
        (cp >= 0x20000 and cp <= 0x3FFFD));
}

/// A number as inspect shows it: -0 keeps its sign.
pub fn formatNumber(gpa: Allocator, x: f64) Error![]const u8 {
    if (x == 0 and std.math.signbit(x)) return "-0";
    var buf: [number.format_bytes_max]u8 = undefined;
    return gpa.dupe(u8, number.format(&buf, x));
}

/// Quotes and escapes units [start, end) of a string as node's strEscape does: single quotes
/// unless the text has some (then double quotes, or backquotes), control characters escaped,
/// lone surrogates as \uXXXX.
pub fn strEscape(gpa: Allocator, out: *std.ArrayList(u8), s: *const String, start: usize, end: usize) Error!void {
    var has_single = false;
    var has_double = false;
    var has_backquote = false;
    for (start..end) |i| {
        switch (s.at(i)) {
            '\'' => has_single = true,
            '"' => has_double = true,
            '`' => has_backquote = true,
            '$' => if (i + 1 < end and s.at(i + 1) == '{') {
                has_backquote = true;
            },
            else => {},
        }
    }
    var quote: u8 = '\'';
    if (has_single) {
        if (!has_double) {
            quote = '"';
        } else if (!has_backquote) {
            quote = '`';
        }
    }
    try out.append(gpa, quote);
    var i = start;
    while (i < end) : (i += 1) {
        const u = s.at(i);
        if ((u == quote and quote == '\'') or u == '\\' or u < 0x20 or (u > 0x7E and u < 0xA0)) {
            try appendMeta(gpa, out, u);
            continue;
        }
        if (u >= 0xD800 and u <= 0xDFFF) {
            if (u <= 0xDBFF and i + 1 < end) {
                const v = s.at(i + 1);
                if (v >= 0xDC00 and v <= 0xDFFF) {
                    const cp = 0x10000 + ((@as(u21, u) - 0xD800) << 10) + (v - 0xDC00);
                    var buf: [4]u8 = undefined;
                    const n = std.unicode.utf8Encode(cp, &buf) catch unreachable; // A scalar value.
                    try out.appendSlice(gpa, buf[0..n]);
                    i += 1;
                    continue;
                }
            }
            try out.print(gpa, "\\u{x}", .{u});
            continue;
        }
        var buf: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(u, &buf) catch unreachable; // Not a surrogate.
        try out.appendSlice(gpa, buf[0..n]);
    }
    try out.append(gpa, quote);
}

fn appendMeta(gpa: Allocator, out: *std.ArrayList(u8), u: u16) Error!void {
    switch (u) {
        0x08 => try out.appendSlice(gpa, "\\b"),
        0x09 => try out.appendSlice(gpa, "\\t"),
        0x0A => try out.appendSlice(gpa, "\\n"),
        0x0C => try out.appendSlice(gpa, "\\f"),
        0x0D => try out.appendSlice(gpa, "\\r"),
        '\'' => try out.appendSlice(gpa, "\\'"),
        '\\' => try out.appendSlice(gpa, "\\\\"),
        else => try out.print(gpa, "\\x{X:0>2}", .{u}),
    }
}

/// `{f}`: a string as UTF-8.
pub const Utf8 = struct {
    s: *const String,

    pub fn format(self: Utf8, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try string.writeUtf8(w, self.s);
    }
};

/// util.format: console.log's arguments as one line (without the newline).
pub fn formatArgs(in: *Inspector, out: *std.ArrayList(u8), args: []const Value) Error!void {
    var a: usize = 0;
    var join: []const u8 = "";
    if (args.len > 0 and args[0].isString()) {
        const first = args[0].asString();
        if (args.len == 1) {
            try appendUtf8(in.gpa, out, first, 0, first.len);
            return;
        }
        var last: usize = 0;
        var i: usize = 0;
        while (i + 1 < first.len) : (i += 1) {
            if (first.at(i) != '%') continue;
            i += 1;
            const next = first.at(i);
            if (a + 1 != args.len) {
                var text: ?[]const u8 = null;
                switch (next) {
                    's' => {
                        a += 1;
                        const v = args[a];
                        if (v.isString()) {
                            text = try utf8Of(in.gpa, v.asString());
                        } else if (v.is(.object)) {
                            var shallow: Inspector = .{ .vm = in.vm, .gpa = in.gpa, .depth = 0 };
                            text = try shallow.inspect(v);
                        } else {
                            text = try in.inspect(v);
                        }
                    },
                    'j' => {
                        // console.log replaced the argument with its JSON text already.
                        a += 1;
                        text = if (args[a].isString()) try utf8Of(in.gpa, args[a].asString()) else "undefined";
                    },
                    'd', 'i', 'f' => {
                        // console.log replaced the argument with Number(v), parseInt(v) or
                        // parseFloat(v) already (they may call user code).
                        a += 1;
                        text = try formatNumber(in.gpa, args[a].asNumber());
                    },
                    'o', 'O' => {
                        a += 1;
                        text = try in.inspect(args[a]);
                    },
                    'c' => {
                        a += 1;
                        text = "";
                    },
                    '%' => {
                        try appendUtf8(in.gpa, out, first, last, i);
                        last = i + 1;
                        continue;
                    },
                    else => continue,
                }
                if (last != i - 1) try appendUtf8(in.gpa, out, first, last, i - 1);
                try out.appendSlice(in.gpa, text.?);
                last = i + 1;
            } else if (next == '%') {
                try appendUtf8(in.gpa, out, first, last, i);
                last = i + 1;
            }
        }
        if (last != 0) {
            a += 1;
            join = " ";
            if (last < first.len) try appendUtf8(in.gpa, out, first, last, first.len);
        }
    }
    while (a < args.len) : (a += 1) {
        try out.appendSlice(in.gpa, join);
        const v = args[a];
        if (v.isString()) {
            try appendUtf8(in.gpa, out, v.asString(), 0, v.asString().len);
        } else {
            try out.appendSlice(in.gpa, try in.inspect(v));
        }
        join = " ";
    }
}

fn utf8Of(gpa: Allocator, s: *const String) Error![]const u8 {
    var out: std.ArrayList(u8) = .empty;
    try appendUtf8(gpa, &out, s, 0, s.len);
    return out.items;
}

/// Units [start, end) of a string as UTF-8 (lone surrogates as U+FFFD).
pub fn appendUtf8(gpa: Allocator, out: *std.ArrayList(u8), s: *const String, start: usize, end: usize) Error!void {
    if (!s.flags.wide) {
        for (s.latin1()[start..end]) |ch| {
            if (ch < 0x80) {
                try out.append(gpa, ch);
            } else {
                try out.appendSlice(gpa, &.{ 0xC0 | (ch >> 6), 0x80 | (ch & 0x3F) });
            }
        }
        return;
    }
    const units = s.utf16()[start..end];
    var i: usize = 0;
    while (i < units.len) {
        const cp = string.codePointAt(units, i);
        i += if (cp >= 0x10000) 2 else 1;
        const scalar: u21 = if (cp >= 0xD800 and cp <= 0xDFFF) 0xFFFD else cp;
        var buf: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(scalar, &buf) catch unreachable; // A scalar value.
        try out.appendSlice(gpa, buf[0..n]);
    }
}

pub fn init(vm: *Vm, gpa: Allocator) Inspector {
    return .{ .vm = vm, .gpa = gpa };
}
