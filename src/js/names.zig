//! The names the engine knows at compile time: every builtin property and method name, the
//! globals, and the strings the engine itself produces ("undefined", "[object Object]"...).
//!
//! Each has an id (its index in `list`) and a static String, laid out at compile time with
//! its hash, so that looking up a builtin method is an array index by the key's id, and the
//! engine's own strings cost nothing at run time. A string's id is found once (at load for
//! the program's constants, on first use for others) and cached in the string.
const std = @import("std");
const assert = std.debug.assert;

const string_mod = @import("string.zig");
const String = string_mod.String;

pub const list = [_][]const u8{
    // Properties the engine reads and writes itself.
    "length",                   "name",                      "message",            "stack",
    "cause",                    "size",                      "value",              "done",
    "next",                     "constructor",               "prototype",          "toJSON",
    "toString",                 "valueOf",                   "hasOwnProperty",     "isPrototypeOf",
    "propertyIsEnumerable",     "toLocaleString",            "__proto__",
    // Array.prototype.
             "at",
    "concat",                   "entries",                   "every",              "fill",
    "filter",                   "find",                      "findIndex",          "findLast",
    "findLastIndex",            "flat",                      "flatMap",            "forEach",
    "includes",                 "indexOf",                   "join",               "keys",
    "lastIndexOf",              "map",                       "pop",                "push",
    "reduce",                   "reduceRight",               "reverse",            "shift",
    "slice",                    "some",                      "sort",               "splice",
    "unshift",                  "values",                    "toReversed",         "toSorted",
    "toSpliced",                "with",                      "copyWithin",
    // String.prototype.
            "charAt",
    "charCodeAt",               "codePointAt",               "endsWith",           "localeCompare",
    "normalize",                "padEnd",                    "padStart",           "repeat",
    "replace",                  "replaceAll",                "split",              "startsWith",
    "substring",                "substr",                    "toLowerCase",        "toUpperCase",
    "toLocaleLowerCase",        "toLocaleUpperCase",         "trim",               "trimEnd",
    "trimStart",                "trimLeft",                  "trimRight",          "isWellFormed",
    // Number.prototype.
    "toFixed",                  "toPrecision",               "toExponential",
    // Map and Set.
         "get",
    "set",                      "has",                       "delete",             "clear",
    "add",
    // Math.
                         "abs",                       "acos",               "acosh",
    "asin",                     "asinh",                     "atan",               "atan2",
    "atanh",                    "cbrt",                      "ceil",               "clz32",
    "cos",                      "cosh",                      "exp",                "expm1",
    "floor",                    "fround",                    "hypot",              "imul",
    "log",                      "log10",                     "log1p",              "log2",
    "max",                      "min",                       "pow",                "random",
    "round",                    "sign",                      "sin",                "sinh",
    "sqrt",                     "tan",                       "tanh",               "trunc",
    "E",                        "LN10",                      "LN2",                "LOG10E",
    "LOG2E",                    "PI",                        "SQRT1_2",            "SQRT2",
    // JSON, console, Date.
    "parse",                    "stringify",                 "error",              "warn",
    "info",                     "debug",                     "now",
    // Object, Array, String, Number statics.
                   "assign",
    "fromEntries",              "freeze",                    "isFrozen",           "hasOwn",
    "getOwnPropertyNames",      "is",                        "isArray",            "from",
    "of",                       "fromCharCode",              "fromCodePoint",      "isInteger",
    "isFinite",                 "isNaN",                     "isSafeInteger",      "parseInt",
    "parseFloat",               "MAX_SAFE_INTEGER",          "MIN_SAFE_INTEGER",   "MAX_VALUE",
    "MIN_VALUE",                "EPSILON",                   "POSITIVE_INFINITY",  "NEGATIVE_INFINITY",
    "NaN",
    // Globals.
                         "Math",                      "JSON",               "console",
    "Object",                   "Array",                     "String",             "Number",
    "Boolean",                  "Map",                       "Set",                "Date",
    "Error",                    "TypeError",                 "RangeError",         "SyntaxError",
    "ReferenceError",           "EvalError",                 "URIError",           "encodeURIComponent",
    "decodeURIComponent",       "encodeURI",                 "decodeURI",          "Function",
    // Strings the engine produces.
    "undefined",                "null",                      "true",               "false",
    "Infinity",                 "-Infinity",                 "number",             "string",
    "boolean",                  "object",                    "function",           "symbol",
    "bigint",                   "[object Object]",           "[object Map]",       "[object Set]",
    "[object Iterator]",        ",",                         "default",            "[object Array]",
    // Functions, prototypes and descriptors.
    "call",                     "apply",                     "bind",               "create",
    "getPrototypeOf",           "setPrototypeOf",            "defineProperty",     "defineProperties",
    "getOwnPropertyDescriptor", "getOwnPropertyDescriptors", "preventExtensions",  "isExtensible",
    "seal",                     "isSealed",                  "writable",           "enumerable",
    "configurable",             "get ",                      "set ",
    // Symbol.
                  "Symbol",
    "for",                      "keyFor",                    "description",        "getOwnPropertySymbols",
    "asyncIterator",            "iterator",                  "toPrimitive",        "toStringTag",
    "hasInstance",              "isConcatSpreadable",        "match",              "matchAll",
    "search",                   "species",                   "unscopables",        "return",
    "throw",
    // Promise.
                       "Promise",                   "queueMicrotask",     "then",
    "setTimeout",               "clearTimeout",              "setInterval",        "clearInterval",
    "catch",                    "finally",                   "resolve",            "reject",
    "all",                      "allSettled",                "any",                "race",
    "status",                   "reason",                    "errors",             "AggregateError",
    // RegExp.
    "RegExp",                   "lastIndex",                 "source",             "flags",
    "global",                   "ignoreCase",                "multiline",          "dotAll",
    "unicode",                  "sticky",                    "hasIndices",         "exec",
    "test",                     "index",                     "input",              "groups",
    "indices",                  "unicodeSets",
    // Date.
                  "UTC",                "getTime",
    "getFullYear",              "getMonth",                  "getDate",            "getDay",
    "getHours",                 "getMinutes",                "getSeconds",         "getMilliseconds",
    "getUTCFullYear",           "getUTCMonth",               "getUTCDate",         "getUTCDay",
    "getUTCHours",              "getUTCMinutes",             "getUTCSeconds",      "getUTCMilliseconds",
    "getTimezoneOffset",        "setTime",                   "setFullYear",        "setMonth",
    "setDate",                  "setHours",                  "setMinutes",         "setSeconds",
    "setMilliseconds",          "setUTCFullYear",            "setUTCMonth",        "setUTCDate",
    "setUTCHours",              "setUTCMinutes",             "setUTCSeconds",      "setUTCMilliseconds",
    "toISOString",              "toUTCString",               "toGMTString",        "toDateString",
    "toTimeString",             "toLocaleDateString",        "toLocaleTimeString", "getYear",
    // Web APIs.
    "atob",                     "btoa",                      "crypto",             "randomUUID",
    "code",                     "Headers",                   "getSetCookie",       "set-cookie",
    ", ",                       "append",                    "URLSearchParams",    "URL",
    "href",                     "origin",                    "protocol",           "username",
    "password",                 "host",                      "hostname",           "port",
    "pathname",                 "searchParams",              "hash",               "canParse",
    "DataView",                 "getInt8",                   "setInt8",            "getUint8",
    "setUint8",                 "getInt16",                  "setInt16",           "getUint16",
    "setUint16",                "getInt32",                  "setInt32",           "getUint32",
    "setUint32",                "getFloat32",                "setFloat32",         "getFloat64",
    "setFloat64",               "getAll",                    "structuredClone",
    // ArrayBuffer and the typed arrays.
       "ArrayBuffer",
    "isView",                   "byteLength",                "byteOffset",         "buffer",
    "BYTES_PER_ELEMENT",        "subarray",                  "Int8Array",          "Uint8Array",
    "Uint8ClampedArray",        "Int16Array",                "Uint16Array",        "Int32Array",
    "Uint32Array",              "Float32Array",              "Float64Array",       "TextEncoder",
    "TextDecoder",              "encode",                    "encodeInto",         "decode",
    "encoding",                 "fatal",                     "ignoreBOM",          "read",
    "written",                  "utf-8",                     "getRandomValues",    "subtle",
    "digest",
    // Request.
                      "Request",                   "method",             "url",
    "headers",                  "body",                      "text",               "json",
    "arrayBuffer",              "clone",                     "content-type",       "GET",
    "HEAD",                     "POST",                      "PUT",                "DELETE",
    "OPTIONS",
    // A handler's request and Response objects (src/handler/): their natives add these keys
    // as the static strings, so building one allocates no key and finds none by its text.
                     "statusText",                "ok",                 "bodyUsed",
    "type",                     "location",                  "pool",               "path",
    "target",                   "query",                     "ip",
    // The well-known symbols: their statics are symbol keys (symbol.zig), equal to no
    // string, and `lookup` never finds them.
                    "@@iterator",
    "@@asyncIterator",          "@@toPrimitive",             "@@toStringTag",      "@@hasInstance",
    "@@isConcatSpreadable",     "@@match",                   "@@matchAll",         "@@replace",
    "@@search",                 "@@species",                 "@@split",            "@@unscopables",
    // An arguments object's own property, and the intrinsic builtins.zig's table holds.
    "callee",                   "%ThrowTypeError%",
};

/// Whether a name is a well-known symbol's ("@@iterator" is Symbol.iterator).
pub fn isSymbolName(text: []const u8) bool {
    return text.len > 2 and text[0] == '@' and text[1] == '@';
}

pub const count = list.len;

comptime {
    assert(count < String.name_none);
}

fn idOf(comptime text: []const u8) u16 {
    @setEvalBranchQuota(1_000_000);
    for (list, 0..) |name, i| {
        if (std.mem.eql(u8, name, text)) return i;
    }
    @compileError("not a known name: " ++ text);
}

/// The id of a known name, at compile time.
pub fn id(comptime text: []const u8) u16 {
    return comptime idOf(text);
}

const map = blk: {
    @setEvalBranchQuota(1_000_000);
    var entries: []const struct { []const u8, u16 } = &.{};
    for (list, 0..) |name, i| {
        if (!isSymbolName(name)) entries = entries ++ .{.{ name, i }};
    }
    break :blk std.StaticStringMap(u16).initComptime(entries);
};

/// The id of a name given as Latin-1 bytes, if it is a known one.
pub fn lookup(text: []const u8) ?u16 {
    return map.get(text);
}

/// A well-known symbol's description ("Symbol.iterator"), by the symbol's name id.
var symbol_descriptions: [count]String = blk: {
    @setEvalBranchQuota(1_000_000);
    var table: [count]String = undefined;
    for (&table, list) |*s, name| {
        const text = if (isSymbolName(name)) "Symbol." ++ name[2..] else "";
        s.* = .{
            .ptr = text.ptr,
            .len = text.len,
            .hash_value = string_mod.hashBytes(text, false),
            .flags = .{ .hashed = true, .index = .no },
            .name_id = String.name_none,
        };
    }
    break :blk table;
};

/// Every known name as a static string, hashed at compile time.
var statics: [count]String = blk: {
    @setEvalBranchQuota(1_000_000);
    var table: [count]String = undefined;
    for (&table, list, 0..) |*s, name, i| {
        if (isSymbolName(name)) {
            // A symbol key: no text, its description behind `ptr` (symbol.zig).
            s.* = .{
                .ptr = @ptrCast(&symbol_descriptions[i]),
                .len = 0,
                .hash_value = string_mod.hashBytes(name, false),
                .flags = .{ .hashed = true, .index = .no, .symbol = true },
                .name_id = i,
            };
            continue;
        }
        s.* = .{
            .ptr = name.ptr,
            .len = name.len,
            .hash_value = string_mod.hashBytes(name, false),
            .flags = .{ .hashed = true, .index = .no },
            .name_id = i,
        };
    }
    break :blk table;
};

/// The static string for a known name.
pub fn string(comptime text: []const u8) *String {
    return &statics[comptime idOf(text)];
}

pub fn byId(i: u16) *String {
    return &statics[i];
}

/// A string's name id, or null if it names nothing known. Cached in the string, except in
/// the static strings, which threads share and nobody writes.
pub fn nameId(s: *String) ?u16 {
    var found = s.name_id;
    if (found == String.name_unknown) {
        found = if (s.flags.wide) String.name_none else (lookup(s.latin1()) orelse String.name_none);
        if (!string_mod.isStatic(s)) s.name_id = found;
    }
    return if (found == String.name_none) null else found;
}

/// Whether a string is the known name `text`.
pub inline fn is(s: *String, comptime text: []const u8) bool {
    if (s == string(text)) return true;
    return nameId(s) == comptime idOf(text);
}

test "names: ids, lookups and statics agree" {
    try std.testing.expectEqual(id("push"), lookup("push").?);
    try std.testing.expect(string("push").eqlLatin1("push"));
    try std.testing.expectEqual(@as(?u16, id("length")), nameId(string("length")));
    try std.testing.expect(lookup("nope") == null);
    // No name is listed twice.
    for (list, 0..) |name, i| {
        if (isSymbolName(name)) {
            try std.testing.expect(lookup(name) == null);
        } else {
            try std.testing.expectEqual(@as(u16, @intCast(i)), lookup(name).?);
        }
    }
}
