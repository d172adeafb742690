//! The builtin library, laid out at compile time: every native function in one table, the
//! methods of each kind of value as a table indexed by name id (names.zig), and the globals.
//! Nothing here is built at run time, so an engine's set-up does not depend on the library's
//! size, and looking up `arr.push` is two array indexings.
//!
//! A host (a handler's `Response`, issue 13) adds its own globals and natives through `Host`;
//! their ids follow the builtins'.
const std = @import("std");
const assert = std.debug.assert;

const Vm = @import("Vm.zig");
const Error = Vm.Error;
const value_mod = @import("value.zig");
const Value = value_mod.Value;
const String = @import("string.zig").String;
const object = @import("object.zig");
const Object = object.Object;
const names = @import("names.zig");
const ops = @import("operations.zig");

pub const array = @import("builtins/array.zig");
pub const array_like = @import("builtins/array_like.zig");
pub const strings = @import("builtins/strings.zig");
pub const numbers = @import("builtins/numbers.zig");
pub const objects = @import("builtins/objects.zig");
pub const json = @import("builtins/json.zig");
pub const collections = @import("builtins/collections.zig");
pub const errors = @import("builtins/errors.zig");
pub const globals_fns = @import("builtins/globals.zig");
pub const console = @import("builtins/console.zig");
pub const functions = @import("builtins/functions.zig");
pub const descriptors = @import("builtins/descriptors.zig");
pub const symbols = @import("builtins/symbols.zig");
pub const generators = @import("builtins/generators.zig");
pub const async_generators = @import("builtins/async_generators.zig");
pub const promises = @import("builtins/promises.zig");
pub const timers = @import("builtins/timers.zig");
pub const regexps = @import("builtins/regexps.zig");
pub const dates = @import("builtins/dates.zig");
pub const base64 = @import("builtins/base64.zig");
pub const webcrypto = @import("builtins/webcrypto.zig");
pub const headers = @import("builtins/headers.zig");
pub const urlsearchparams = @import("builtins/urlsearchparams.zig");
pub const url = @import("builtins/url.zig");
pub const request = @import("builtins/request.zig");
pub const data_view = @import("builtins/data_view.zig");
pub const typed_array_methods = @import("builtins/typed_array_methods.zig");
pub const structured_clone = @import("builtins/structured_clone.zig");
pub const typed_arrays = @import("builtins/typed_arrays.zig");
pub const text_encoding = @import("builtins/text_encoding.zig");
pub const arguments = @import("builtins/arguments.zig");

pub const NativeFn = *const fn (vm: *Vm, this: Value, args: []const Value) Error!Value;

pub const Native = struct {
    name: []const u8,
    length: u8,
    func: NativeFn,
};

/// The argument at `i`, or undefined.
pub inline fn arg(args: []const Value, i: usize) Value {
    return if (i < args.len) args[i] else Value.undefined_value;
}

/// Method tables: the members of a kind of value, or of a namespace.
pub const Class = enum {
    object_proto,
    array_proto,
    string_proto,
    number_proto,
    boolean_proto,
    function_proto,
    error_proto,
    map_proto,
    set_proto,
    iterator_proto,
    math,
    json,
    console,
    object_ctor,
    array_ctor,
    string_ctor,
    number_ctor,
    date,
    symbol_ctor,
    symbol_proto,
    generator_proto,
    async_generator_proto,
    promise_ctor,
    promise_proto,
    regexp_proto,
    date_proto,
    crypto,
    headers_proto,
    request_proto,
    urlsearchparams_proto,
    url_ctor,
    url_proto,
    data_view_proto,
    array_buffer_ctor,
    array_buffer_proto,
    typed_array_ctor,
    typed_array_proto,
    text_encoder_proto,
    text_decoder_proto,
    subtle_crypto,
    /// Functions the language needs as values but no object shows as a member
    /// (%ThrowTypeError%, the getter and setter of an arguments object's `callee`).
    intrinsics,
    empty,
};

const Entry = struct {
    name: []const u8,
    /// `global`: the same function as the global of that name (Number.parseInt is
    /// parseInt).
    /// `symbol`: a well-known symbol, by its name ("@@iterator").
    value: union(enum) { native: Native, number: f64, global: []const u8, symbol: []const u8 },
};

fn sym(comptime name: []const u8, comptime symbol_name: []const u8) Entry {
    return .{ .name = name, .value = .{ .symbol = symbol_name } };
}

fn nat(comptime name: []const u8, comptime length: u8, comptime func: NativeFn) Entry {
    return .{ .name = name, .value = .{ .native = .{ .name = name, .length = length, .func = func } } };
}

fn num(comptime name: []const u8, comptime x: f64) Entry {
    return .{ .name = name, .value = .{ .number = x } };
}

fn entries(class: Class) []const Entry {
    return switch (class) {
        .object_proto => &.{
            nat("hasOwnProperty", 1, objects.hasOwnProperty),
            nat("toString", 0, objects.toStringMethod),
            nat("toLocaleString", 0, objects.toStringMethod),
            nat("valueOf", 0, objects.valueOf),
            nat("propertyIsEnumerable", 1, descriptors.propertyIsEnumerable),
            nat("isPrototypeOf", 1, descriptors.isPrototypeOf),
        },
        .array_proto => &.{
            nat("at", 1, array.at),                      nat("concat", 1, array.concat),
            nat("entries", 0, array.entries),            nat("every", 1, array.every),
            nat("fill", 1, array.fill),                  nat("filter", 1, array.filter),
            nat("find", 1, array.find),                  nat("findIndex", 1, array.findIndex),
            nat("findLast", 1, array.findLast),          nat("findLastIndex", 1, array.findLastIndex),
            nat("flat", 0, array.flat),                  nat("flatMap", 1, array.flatMap),
            nat("forEach", 1, array.forEach),            nat("includes", 1, array.includes),
            nat("indexOf", 1, array.indexOf),            nat("join", 1, array.joinMethod),
            nat("keys", 0, array.keys),                  nat("lastIndexOf", 1, array.lastIndexOf),
            nat("map", 1, array.map),                    nat("pop", 0, array.pop),
            nat("push", 1, array.push),                  nat("reduce", 1, array.reduce),
            nat("reduceRight", 1, array.reduceRight),    nat("reverse", 0, array.reverse),
            nat("shift", 0, array.shift),                nat("slice", 2, array.slice),
            nat("some", 1, array.some),                  nat("sort", 1, array.sort),
            nat("splice", 2, array.splice),              nat("unshift", 1, array.unshift),
            nat("values", 0, array.values),              nat("toString", 0, array.toStringMethod),
            nat("toReversed", 0, array.toReversed),      nat("toSorted", 1, array.toSorted),
            nat("with", 2, array.with),                  nat("toLocaleString", 0, array.toStringMethod),
            nat("copyWithin", 2, array_like.copyWithin), nat("toSpliced", 2, array_like.toSpliced),
            nat("@@iterator", 0, array.values),
        },
        .string_proto => &.{
            nat("at", 1, strings.at),                         nat("charAt", 1, strings.charAt),
            nat("charCodeAt", 1, strings.charCodeAt),         nat("codePointAt", 1, strings.codePointAt),
            nat("concat", 1, strings.concat),                 nat("endsWith", 1, strings.endsWith),
            nat("includes", 1, strings.includes),             nat("indexOf", 1, strings.indexOf),
            nat("lastIndexOf", 1, strings.lastIndexOf),       nat("localeCompare", 1, strings.localeCompare),
            nat("padEnd", 1, strings.padEnd),                 nat("padStart", 1, strings.padStart),
            nat("repeat", 1, strings.repeat),                 nat("replace", 2, strings.replace),
            nat("replaceAll", 2, strings.replaceAll),         nat("slice", 2, strings.slice),
            nat("split", 2, strings.split),                   nat("startsWith", 1, strings.startsWith),
            nat("substring", 2, strings.substring),           nat("substr", 2, strings.substr),
            nat("toLowerCase", 0, strings.toLowerCase),       nat("toUpperCase", 0, strings.toUpperCase),
            nat("toLocaleLowerCase", 0, strings.toLowerCase), nat("toLocaleUpperCase", 0, strings.toUpperCase),
            nat("toString", 0, strings.valueOf),              nat("valueOf", 0, strings.valueOf),
            nat("trim", 0, strings.trim),                     nat("trimEnd", 0, strings.trimEnd),
            nat("trimStart", 0, strings.trimStart),           nat("trimLeft", 0, strings.trimStart),
            nat("trimRight", 0, strings.trimEnd),             nat("normalize", 0, strings.valueOf),
            nat("isWellFormed", 0, strings.isWellFormed),     nat("@@iterator", 0, symbols.stringIterator),
            nat("match", 1, regexps.match),                   nat("matchAll", 1, regexps.matchAll),
            nat("search", 1, regexps.search),
        },
        .number_proto => &.{
            nat("toFixed", 1, numbers.toFixed),
            nat("toString", 1, numbers.toStringMethod),
            nat("toLocaleString", 0, numbers.toStringMethod),
            nat("valueOf", 0, numbers.valueOf),
            nat("toPrecision", 1, numbers.toPrecision),
        },
        .boolean_proto => &.{
            nat("toString", 0, globals_fns.booleanToString),
            nat("valueOf", 0, globals_fns.booleanValueOf),
        },
        .function_proto => &.{
            nat("toString", 0, objects.functionToString),
            nat("call", 1, functions.call),
            nat("apply", 2, functions.apply),
            nat("bind", 1, functions.bind),
        },
        .error_proto => &.{
            nat("toString", 0, errors.toStringMethod),
        },
        .map_proto => &.{
            nat("get", 1, collections.mapGet),              nat("set", 2, collections.mapSet),
            nat("has", 1, collections.map_methods.has),     nat("delete", 1, collections.map_methods.delete),
            nat("clear", 0, collections.map_methods.clear), nat("forEach", 1, collections.map_methods.forEach),
            nat("keys", 0, collections.mapKeys),            nat("values", 0, collections.mapValues),
            nat("entries", 0, collections.mapEntries),      nat("@@iterator", 0, collections.mapEntries),
        },
        .set_proto => &.{
            nat("add", 1, collections.setAdd),                  nat("has", 1, collections.set_methods.has),
            nat("delete", 1, collections.set_methods.delete),   nat("clear", 0, collections.set_methods.clear),
            nat("forEach", 1, collections.set_methods.forEach), nat("keys", 0, collections.setValues),
            nat("values", 0, collections.setValues),            nat("entries", 0, collections.setEntries),
            nat("@@iterator", 0, collections.setValues),
        },
        .iterator_proto => &.{
            nat("next", 0, collections.iteratorNext),
            nat("@@iterator", 0, symbols.returnThis),
        },
        .math => &.{
            nat("abs", 1, numbers.abs),     nat("acos", 1, numbers.acos),     nat("acosh", 1, numbers.acosh),
            nat("asin", 1, numbers.asin),   nat("asinh", 1, numbers.asinh),   nat("atan", 1, numbers.atan),
            nat("atan2", 2, numbers.atan2), nat("atanh", 1, numbers.atanh),   nat("cbrt", 1, numbers.cbrt),
            nat("ceil", 1, numbers.ceil),   nat("clz32", 1, numbers.clz32),   nat("cos", 1, numbers.cos),
            nat("cosh", 1, numbers.cosh),   nat("exp", 1, numbers.exp),       nat("expm1", 1, numbers.expm1),
            nat("floor", 1, numbers.floor), nat("fround", 1, numbers.fround), nat("hypot", 2, numbers.hypot),
            nat("imul", 2, numbers.imul),   nat("log", 1, numbers.log),       nat("log10", 1, numbers.log10),
            nat("log1p", 1, numbers.log1p), nat("log2", 1, numbers.log2),     nat("max", 2, numbers.max),
            nat("min", 2, numbers.min),     nat("pow", 2, numbers.pow),       nat("random", 0, numbers.random),
            nat("round", 1, numbers.round), nat("sign", 1, numbers.sign),     nat("sin", 1, numbers.sin),
            nat("sinh", 1, numbers.sinh),   nat("sqrt", 1, numbers.sqrt),     nat("tan", 1, numbers.tan),
            nat("tanh", 1, numbers.tanh),   nat("trunc", 1, numbers.trunc),   num("E", std.math.e),
            num("LN10", std.math.ln10),     num("LN2", std.math.ln2),         num("LOG10E", std.math.log10e),
            num("LOG2E", std.math.log2e),   num("PI", std.math.pi),           num("SQRT1_2", std.math.sqrt1_2),
            num("SQRT2", std.math.sqrt2),
        },
        .json => &.{
            nat("parse", 2, json.parse),
            nat("stringify", 3, json.stringify),
        },
        .console => &.{
            nat("log", 0, console.log),       nat("info", 0, console.log),
            nat("debug", 0, console.log),     nat("error", 0, console.logError),
            nat("warn", 0, console.logError),
        },
        .object_ctor => &.{
            nat("keys", 1, objects.keys),                                               nat("values", 1, objects.values),
            nat("entries", 1, objects.entries),                                         nat("assign", 2, objects.assign),
            nat("fromEntries", 1, objects.fromEntries),                                 nat("freeze", 1, objects.freeze),
            nat("isFrozen", 1, objects.isFrozen),                                       nat("hasOwn", 2, objects.hasOwn),
            nat("getOwnPropertyNames", 1, descriptors.getOwnPropertyNames),             nat("is", 2, objects.is),
            nat("create", 2, descriptors.create),                                       nat("getPrototypeOf", 1, descriptors.getPrototypeOf),
            nat("setPrototypeOf", 2, descriptors.setPrototypeOf),                       nat("defineProperty", 3, descriptors.defineProperty),
            nat("defineProperties", 2, descriptors.defineProperties),                   nat("getOwnPropertyDescriptor", 2, descriptors.getOwnPropertyDescriptor),
            nat("getOwnPropertyDescriptors", 1, descriptors.getOwnPropertyDescriptors), nat("preventExtensions", 1, descriptors.preventExtensions),
            nat("isExtensible", 1, descriptors.isExtensible),                           nat("seal", 1, descriptors.seal),
            nat("isSealed", 1, descriptors.isSealed),                                   nat("getOwnPropertySymbols", 1, descriptors.getOwnPropertySymbols),
        },
        .array_ctor => &.{
            nat("isArray", 1, array.isArray),
            nat("from", 1, array.from),
            nat("of", 0, array.of),
        },
        .string_ctor => &.{
            nat("fromCharCode", 1, strings.fromCharCode),
            nat("fromCodePoint", 1, strings.fromCodePoint),
        },
        .number_ctor => &.{
            nat("isInteger", 1, numbers.isInteger),                      nat("isFinite", 1, numbers.numberIsFinite),
            nat("isNaN", 1, numbers.numberIsNaN),                        nat("isSafeInteger", 1, numbers.isSafeInteger),
            .{ .name = "parseInt", .value = .{ .global = "parseInt" } }, .{ .name = "parseFloat", .value = .{ .global = "parseFloat" } },
            num("MAX_SAFE_INTEGER", 9007199254740991),                   num("MIN_SAFE_INTEGER", -9007199254740991),
            num("MAX_VALUE", std.math.floatMax(f64)),                    num("MIN_VALUE", 5e-324),
            num("EPSILON", std.math.floatEps(f64)),                      num("POSITIVE_INFINITY", std.math.inf(f64)),
            num("NEGATIVE_INFINITY", -std.math.inf(f64)),                num("NaN", std.math.nan(f64)),
        },
        .date => &.{
            nat("now", 0, globals_fns.dateNow),
            nat("parse", 1, dates.parse),
            nat("UTC", 7, dates.utc),
        },
        .regexp_proto => &.{
            nat("exec", 1, regexps.exec),                 nat("test", 1, regexps.testMethod),
            nat("toString", 0, regexps.toStringMethod),   nat("@@match", 1, regexps.symbolMatch),
            nat("@@matchAll", 1, regexps.symbolMatchAll), nat("@@replace", 2, regexps.symbolReplace),
            nat("@@search", 1, regexps.symbolSearch),     nat("@@split", 2, regexps.symbolSplit),
        },
        .date_proto => &.{
            nat("getTime", 0, dates.getTime),                       nat("valueOf", 0, dates.getTime),
            nat("setTime", 1, dates.setTime),                       nat("getTimezoneOffset", 0, dates.getTimezoneOffset),
            nat("getFullYear", 0, dates.getter(.year)),             nat("getUTCFullYear", 0, dates.getter(.year)),
            nat("getMonth", 0, dates.getter(.month)),               nat("getUTCMonth", 0, dates.getter(.month)),
            nat("getDate", 0, dates.getter(.date)),                 nat("getUTCDate", 0, dates.getter(.date)),
            nat("getDay", 0, dates.getter(.weekday)),               nat("getUTCDay", 0, dates.getter(.weekday)),
            nat("getHours", 0, dates.getter(.hours)),               nat("getUTCHours", 0, dates.getter(.hours)),
            nat("getMinutes", 0, dates.getter(.minutes)),           nat("getUTCMinutes", 0, dates.getter(.minutes)),
            nat("getSeconds", 0, dates.getter(.seconds)),           nat("getUTCSeconds", 0, dates.getter(.seconds)),
            nat("getMilliseconds", 0, dates.getter(.ms)),           nat("getUTCMilliseconds", 0, dates.getter(.ms)),
            nat("getYear", 0, dates.getYear),                       nat("setFullYear", 3, dates.setter(.year, 3)),
            nat("setUTCFullYear", 3, dates.setter(.year, 3)),       nat("setMonth", 2, dates.setter(.month, 2)),
            nat("setUTCMonth", 2, dates.setter(.month, 2)),         nat("setDate", 1, dates.setter(.date, 1)),
            nat("setUTCDate", 1, dates.setter(.date, 1)),           nat("setHours", 4, dates.setter(.hours, 4)),
            nat("setUTCHours", 4, dates.setter(.hours, 4)),         nat("setMinutes", 3, dates.setter(.minutes, 3)),
            nat("setUTCMinutes", 3, dates.setter(.minutes, 3)),     nat("setSeconds", 2, dates.setter(.seconds, 2)),
            nat("setUTCSeconds", 2, dates.setter(.seconds, 2)),     nat("setMilliseconds", 1, dates.setter(.ms, 1)),
            nat("setUTCMilliseconds", 1, dates.setter(.ms, 1)),     nat("toISOString", 0, dates.toISOString),
            nat("toUTCString", 0, dates.toUTCString),               nat("toGMTString", 0, dates.toUTCString),
            nat("toString", 0, dates.toStringMethod),               nat("toDateString", 0, dates.toDateString),
            nat("toTimeString", 0, dates.toTimeString),             nat("toLocaleString", 0, dates.toLocaleString),
            nat("toLocaleDateString", 0, dates.toLocaleDateString), nat("toLocaleTimeString", 0, dates.toLocaleTimeString),
            nat("toJSON", 1, dates.toJSON),                         nat("@@toPrimitive", 1, dates.toPrimitiveMethod),
        },
        .symbol_ctor => &.{
            nat("for", 1, symbols.symbolFor),                  nat("keyFor", 1, symbols.keyFor),
            sym("asyncIterator", "@@asyncIterator"),           sym("hasInstance", "@@hasInstance"),
            sym("isConcatSpreadable", "@@isConcatSpreadable"), sym("iterator", "@@iterator"),
            sym("match", "@@match"),                           sym("matchAll", "@@matchAll"),
            sym("replace", "@@replace"),                       sym("search", "@@search"),
            sym("species", "@@species"),                       sym("split", "@@split"),
            sym("toPrimitive", "@@toPrimitive"),               sym("toStringTag", "@@toStringTag"),
            sym("unscopables", "@@unscopables"),
        },
        .generator_proto => &.{
            nat("next", 1, generators.next),
            nat("return", 1, generators.returnMethod),
            nat("throw", 1, generators.throwMethod),
            nat("@@iterator", 0, symbols.returnThis),
        },
        .async_generator_proto => &.{
            nat("next", 1, async_generators.next),
            nat("return", 1, async_generators.returnMethod),
            nat("throw", 1, async_generators.throwMethod),
            nat("@@asyncIterator", 0, symbols.returnThis),
        },
        .promise_ctor => &.{
            nat("resolve", 1, promises.resolveStatic), nat("reject", 1, promises.rejectStatic),
            nat("all", 1, promises.all),               nat("allSettled", 1, promises.allSettled),
            nat("any", 1, promises.any),               nat("race", 1, promises.race),
        },
        .promise_proto => &.{
            nat("then", 2, promises.then),
            nat("catch", 1, promises.catchMethod),
            nat("finally", 1, promises.finallyMethod),
        },
        .symbol_proto => &.{
            nat("toString", 0, symbols.toStringMethod),
            nat("valueOf", 0, symbols.valueOf),
        },
        .crypto => &.{
            nat("randomUUID", 0, webcrypto.randomUUID),
            nat("getRandomValues", 1, webcrypto.getRandomValues),
        },
        .headers_proto => &.{
            nat("append", 2, headers.append),      nat("delete", 1, headers.delete),
            nat("get", 1, headers.get),            nat("getSetCookie", 0, headers.getSetCookie),
            nat("has", 1, headers.has),            nat("set", 2, headers.set),
            nat("forEach", 1, headers.forEach),    nat("keys", 0, headers.keys),
            nat("values", 0, headers.values),      nat("entries", 0, headers.entries),
            nat("@@iterator", 0, headers.entries),
        },
        .urlsearchparams_proto => &.{
            nat("append", 2, urlsearchparams.append),      nat("delete", 1, urlsearchparams.delete),
            nat("get", 1, urlsearchparams.get),            nat("getAll", 1, urlsearchparams.getAll),
            nat("has", 1, urlsearchparams.has),            nat("set", 2, urlsearchparams.set),
            nat("sort", 0, urlsearchparams.sort),          nat("toString", 0, urlsearchparams.toStringMethod),
            nat("forEach", 1, urlsearchparams.forEach),    nat("keys", 0, urlsearchparams.keys),
            nat("values", 0, urlsearchparams.values),      nat("entries", 0, urlsearchparams.entries),
            nat("@@iterator", 0, urlsearchparams.entries),
        },
        .url_ctor => &.{nat("canParse", 1, url.canParse)},
        .data_view_proto => &.{
            nat("getInt8", 1, data_view.getter(i8, "getInt8")),        nat("setInt8", 2, data_view.setter(i8, "setInt8")),
            nat("getUint8", 1, data_view.getter(u8, "getUint8")),      nat("setUint8", 2, data_view.setter(u8, "setUint8")),
            nat("getInt16", 1, data_view.getter(i16, "getInt16")),     nat("setInt16", 2, data_view.setter(i16, "setInt16")),
            nat("getUint16", 1, data_view.getter(u16, "getUint16")),   nat("setUint16", 2, data_view.setter(u16, "setUint16")),
            nat("getInt32", 1, data_view.getter(i32, "getInt32")),     nat("setInt32", 2, data_view.setter(i32, "setInt32")),
            nat("getUint32", 1, data_view.getter(u32, "getUint32")),   nat("setUint32", 2, data_view.setter(u32, "setUint32")),
            nat("getFloat32", 1, data_view.getter(f32, "getFloat32")), nat("setFloat32", 2, data_view.setter(f32, "setFloat32")),
            nat("getFloat64", 1, data_view.getter(f64, "getFloat64")), nat("setFloat64", 2, data_view.setter(f64, "setFloat64")),
        },
        .url_proto => &.{
            nat("toString", 0, url.toStringMethod), nat("toJSON", 0, url.toJSON),
        },
        .array_buffer_ctor => &.{nat("isView", 1, typed_arrays.isView)},
        .array_buffer_proto => &.{nat("slice", 2, typed_arrays.bufferSlice)},
        .typed_array_ctor => &.{ nat("from", 1, typed_arrays.from), nat("of", 0, typed_arrays.of) },
        .typed_array_proto => &.{
            nat("at", 1, typed_arrays.at),                              nat("entries", 0, typed_arrays.entries),
            nat("every", 1, typed_arrays.every),                        nat("fill", 1, typed_arrays.fill),
            nat("filter", 1, typed_arrays.filter),                      nat("find", 1, typed_arrays.find),
            nat("findIndex", 1, typed_arrays.findIndex),                nat("forEach", 1, typed_arrays.forEach),
            nat("includes", 1, typed_arrays.includes),                  nat("indexOf", 1, typed_arrays.indexOf),
            nat("join", 1, typed_arrays.joinMethod),                    nat("keys", 0, typed_arrays.keys),
            nat("lastIndexOf", 1, typed_arrays.lastIndexOf),            nat("map", 1, typed_arrays.map),
            nat("reduce", 1, typed_arrays.reduce),                      nat("reverse", 0, typed_arrays.reverse),
            nat("set", 1, typed_arrays.setMethod),                      nat("slice", 2, typed_arrays.slice),
            nat("some", 1, typed_arrays.some),                          nat("subarray", 2, typed_arrays.subarray),
            nat("sort", 1, typed_arrays.sort),                          nat("values", 0, typed_arrays.values),
            nat("toString", 0, typed_arrays.toStringMethod),            nat("@@iterator", 0, typed_arrays.values),
            nat("copyWithin", 2, typed_array_methods.copyWithin),       nat("findLast", 1, typed_array_methods.findLast),
            nat("findLastIndex", 1, typed_array_methods.findLastIndex), nat("reduceRight", 1, typed_array_methods.reduceRight),
            nat("toReversed", 0, typed_array_methods.toReversed),       nat("toSorted", 1, typed_array_methods.toSorted),
            nat("with", 2, typed_array_methods.with),
        },
        .request_proto => &.{
            nat("text", 0, request.textMethod),         nat("json", 0, request.jsonMethod),
            nat("arrayBuffer", 0, request.arrayBuffer), nat("clone", 0, request.clone),
        },
        .text_encoder_proto => &.{ nat("encode", 0, text_encoding.encode), nat("encodeInto", 2, text_encoding.encodeInto) },
        .text_decoder_proto => &.{nat("decode", 0, text_encoding.decode)},
        .subtle_crypto => &.{nat("digest", 2, webcrypto.digest)},
        .intrinsics => &.{
            .{ .name = "%ThrowTypeError%", .value = .{ .native = .{ .name = "", .length = 0, .func = arguments.throwTypeError } } },
        },
        .empty => &.{},
    };
}

/// Builtin objects: the namespaces and constructors that globals name.
pub const BuiltinObject = struct {
    name: []const u8,
    class: Class,
    /// The name of the builtin prototype object its instances inherit from (`prototype`).
    prototype: ?[]const u8 = null,
    /// For a prototype object: the constructor whose prototype it is.
    constructor_of: ?[]const u8 = null,
    call: ?Native = null,
    construct: ?Native = null,
    /// What `instanceof` accepts.
    instances: Instances = .none,
};

pub const Instances = union(enum) {
    none,
    any_object,
    kind: object.Kind,
    error_kind: object.ErrorKind,
    any_error,
    /// Objects with this builtin prototype on their chain (a Headers).
    prototype: []const u8,
    /// Typed arrays of this element type.
    typed_array: object.ElementType,
};

fn ctor(comptime name: []const u8, comptime length: u8, comptime func: NativeFn) Native {
    return .{ .name = name, .length = length, .func = func };
}

/// ArrayBuffer and the nine typed array constructors, each with its prototype.
const typed_array_objects = blk: {
    var list: []const BuiltinObject = &.{
        .{ .name = "ArrayBuffer", .prototype = "%ArrayBuffer.prototype%", .class = .array_buffer_ctor, .call = ctor("ArrayBuffer", 1, typed_arrays.requireNewBuffer), .construct = ctor("ArrayBuffer", 1, typed_arrays.constructBuffer), .instances = .{ .kind = .array_buffer } },
        .{ .name = "%ArrayBuffer.prototype%", .class = .array_buffer_proto, .constructor_of = "ArrayBuffer" },
    };
    for (typed_arrays.element_types) |e| {
        const name = e.name();
        list = list ++ &[_]BuiltinObject{
            .{ .name = name, .prototype = "%" ++ name ++ ".prototype%", .class = .typed_array_ctor, .call = ctor(name, 3, typed_arrays.requireNew(e)), .construct = ctor(name, 3, typed_arrays.construct(e)), .instances = .{ .typed_array = e } },
            .{ .name = "%" ++ name ++ ".prototype%", .class = .typed_array_proto, .constructor_of = name },
        };
    }
    break :blk list[0..].*;
};

pub const builtin_objects = [_]BuiltinObject{
    .{ .name = "Math", .class = .math },
    .{ .name = "JSON", .class = .json },
    .{ .name = "console", .class = .console },
    .{ .name = "crypto", .class = .crypto },
    .{ .name = "%SubtleCrypto%", .class = .subtle_crypto },
    .{ .name = "Headers", .prototype = "%Headers.prototype%", .class = .empty, .call = ctor("Headers", 0, headers.requireNew), .construct = ctor("Headers", 0, headers.construct), .instances = .{ .prototype = "%Headers.prototype%" } },
    .{ .name = "%Headers.prototype%", .class = .headers_proto, .constructor_of = "Headers" },
    .{ .name = "URLSearchParams", .prototype = "%URLSearchParams.prototype%", .class = .empty, .call = ctor("URLSearchParams", 0, urlsearchparams.requireNew), .construct = ctor("URLSearchParams", 0, urlsearchparams.construct), .instances = .{ .prototype = "%URLSearchParams.prototype%" } },
    .{ .name = "%URLSearchParams.prototype%", .class = .urlsearchparams_proto, .constructor_of = "URLSearchParams" },
    .{ .name = "Request", .prototype = "%Request.prototype%", .class = .empty, .call = ctor("Request", 1, request.requireNew), .construct = ctor("Request", 1, request.construct), .instances = .{ .prototype = "%Request.prototype%" } },
    .{ .name = "%Request.prototype%", .class = .request_proto, .constructor_of = "Request" },
    .{ .name = "URL", .prototype = "%URL.prototype%", .class = .url_ctor, .call = ctor("URL", 1, url.requireNew), .construct = ctor("URL", 1, url.construct), .instances = .{ .prototype = "%URL.prototype%" } },
    .{ .name = "%URL.prototype%", .class = .url_proto, .constructor_of = "URL" },
    .{ .name = "DataView", .prototype = "%DataView.prototype%", .class = .empty, .call = ctor("DataView", 1, data_view.requireNew), .construct = ctor("DataView", 1, data_view.construct), .instances = .{ .prototype = "%DataView.prototype%" } },
    .{ .name = "%DataView.prototype%", .class = .data_view_proto, .constructor_of = "DataView" },
    .{ .name = "TextEncoder", .prototype = "%TextEncoder.prototype%", .class = .empty, .call = ctor("TextEncoder", 0, text_encoding.requireNewEncoder), .construct = ctor("TextEncoder", 0, text_encoding.constructEncoder), .instances = .{ .prototype = "%TextEncoder.prototype%" } },
    .{ .name = "%TextEncoder.prototype%", .class = .text_encoder_proto, .constructor_of = "TextEncoder" },
    .{ .name = "TextDecoder", .prototype = "%TextDecoder.prototype%", .class = .empty, .call = ctor("TextDecoder", 0, text_encoding.requireNewDecoder), .construct = ctor("TextDecoder", 0, text_encoding.constructDecoder), .instances = .{ .prototype = "%TextDecoder.prototype%" } },
    .{ .name = "%TextDecoder.prototype%", .class = .text_decoder_proto, .constructor_of = "TextDecoder" },
    .{ .name = "Object", .prototype = "%Object.prototype%", .class = .object_ctor, .call = ctor("Object", 1, objects.construct), .construct = ctor("Object", 1, objects.construct), .instances = .any_object },
    .{ .name = "Array", .prototype = "%Array.prototype%", .class = .array_ctor, .call = ctor("Array", 1, array.construct), .construct = ctor("Array", 1, array.construct), .instances = .{ .kind = .array } },
    .{ .name = "String", .prototype = "%String.prototype%", .class = .string_ctor, .call = ctor("String", 1, globals_fns.stringCall) },
    .{ .name = "Number", .prototype = "%Number.prototype%", .class = .number_ctor, .call = ctor("Number", 1, globals_fns.numberCall) },
    .{ .name = "Boolean", .prototype = "%Boolean.prototype%", .class = .empty, .call = ctor("Boolean", 1, globals_fns.booleanCall) },
    .{ .name = "Map", .prototype = "%Map.prototype%", .class = .empty, .call = ctor("Map", 0, collections.requireNewMap), .construct = ctor("Map", 0, collections.constructMap), .instances = .{ .kind = .map } },
    .{ .name = "Set", .prototype = "%Set.prototype%", .class = .empty, .call = ctor("Set", 0, collections.requireNewSet), .construct = ctor("Set", 0, collections.constructSet), .instances = .{ .kind = .set } },
    .{ .name = "Date", .prototype = "%Date.prototype%", .class = .date, .call = ctor("Date", 7, dates.call), .construct = ctor("Date", 7, dates.construct), .instances = .{ .kind = .date } },
    .{ .name = "%Date.prototype%", .class = .date_proto, .constructor_of = "Date" },
    .{ .name = "RegExp", .prototype = "%RegExp.prototype%", .class = .empty, .call = ctor("RegExp", 2, regexps.call), .construct = ctor("RegExp", 2, regexps.construct), .instances = .{ .kind = .regexp } },
    .{ .name = "%RegExp.prototype%", .class = .regexp_proto, .constructor_of = "RegExp" },
    .{ .name = "Symbol", .prototype = "%Symbol.prototype%", .class = .symbol_ctor, .call = ctor("Symbol", 0, symbols.call) },
    .{ .name = "%Symbol.prototype%", .class = .symbol_proto, .constructor_of = "Symbol" },
    .{ .name = "%Generator.prototype%", .class = .generator_proto },
    // The builtins' iterators (an array's, a string's, a Map's, a Set's) inherit `next` and
    // `[Symbol.iterator]` from it: %ArrayIteratorPrototype% and its kin merged with
    // %IteratorPrototype%.
    .{ .name = "%Iterator.prototype%", .class = .iterator_proto },
    .{ .name = "%AsyncGenerator.prototype%", .class = .async_generator_proto },
    .{ .name = "Promise", .prototype = "%Promise.prototype%", .class = .promise_ctor, .call = ctor("Promise", 1, promises.requireNew), .construct = ctor("Promise", 1, promises.construct), .instances = .{ .kind = .promise } },
    .{ .name = "%Promise.prototype%", .class = .promise_proto, .constructor_of = "Promise" },
    .{ .name = "Error", .prototype = "%Error.prototype%", .class = .empty, .call = ctor("Error", 1, errors.constructError), .construct = ctor("Error", 1, errors.constructError), .instances = .any_error },
    .{ .name = "TypeError", .prototype = "%TypeError.prototype%", .class = .empty, .call = ctor("TypeError", 1, errors.constructTypeError), .construct = ctor("TypeError", 1, errors.constructTypeError), .instances = .{ .error_kind = .type_error } },
    .{ .name = "RangeError", .prototype = "%RangeError.prototype%", .class = .empty, .call = ctor("RangeError", 1, errors.constructRangeError), .construct = ctor("RangeError", 1, errors.constructRangeError), .instances = .{ .error_kind = .range_error } },
    .{ .name = "SyntaxError", .prototype = "%SyntaxError.prototype%", .class = .empty, .call = ctor("SyntaxError", 1, errors.constructSyntaxError), .construct = ctor("SyntaxError", 1, errors.constructSyntaxError), .instances = .{ .error_kind = .syntax_error } },
    .{ .name = "ReferenceError", .prototype = "%ReferenceError.prototype%", .class = .empty, .call = ctor("ReferenceError", 1, errors.constructReferenceError), .construct = ctor("ReferenceError", 1, errors.constructReferenceError), .instances = .{ .error_kind = .reference_error } },
    .{ .name = "EvalError", .prototype = "%EvalError.prototype%", .class = .empty, .call = ctor("EvalError", 1, errors.constructEvalError), .construct = ctor("EvalError", 1, errors.constructEvalError), .instances = .{ .error_kind = .eval_error } },
    .{ .name = "Function", .class = .empty, .prototype = "%Function.prototype%" },
    .{ .name = "%Object.prototype%", .class = .object_proto, .constructor_of = "Object" },
    .{ .name = "%Array.prototype%", .class = .array_proto, .constructor_of = "Array" },
    .{ .name = "%Function.prototype%", .class = .function_proto, .constructor_of = "Function" },
    .{ .name = "%String.prototype%", .class = .string_proto, .constructor_of = "String" },
    .{ .name = "%Number.prototype%", .class = .number_proto, .constructor_of = "Number" },
    .{ .name = "%Boolean.prototype%", .class = .boolean_proto, .constructor_of = "Boolean" },
    .{ .name = "%Map.prototype%", .class = .map_proto, .constructor_of = "Map" },
    .{ .name = "%Set.prototype%", .class = .set_proto, .constructor_of = "Set" },
    .{ .name = "%Error.prototype%", .class = .error_proto, .constructor_of = "Error" },
    .{ .name = "%TypeError.prototype%", .class = .error_proto, .constructor_of = "TypeError" },
    .{ .name = "%RangeError.prototype%", .class = .error_proto, .constructor_of = "RangeError" },
    .{ .name = "%SyntaxError.prototype%", .class = .error_proto, .constructor_of = "SyntaxError" },
    .{ .name = "%ReferenceError.prototype%", .class = .error_proto, .constructor_of = "ReferenceError" },
    .{ .name = "%EvalError.prototype%", .class = .error_proto, .constructor_of = "EvalError" },
    .{ .name = "%URIError.prototype%", .class = .error_proto, .constructor_of = "URIError" },
    .{ .name = "URIError", .prototype = "%URIError.prototype%", .class = .empty, .call = ctor("URIError", 1, errors.constructUriError), .construct = ctor("URIError", 1, errors.constructUriError), .instances = .{ .error_kind = .uri_error } },
    .{ .name = "%AggregateError.prototype%", .class = .error_proto, .constructor_of = "AggregateError" },
    .{ .name = "AggregateError", .prototype = "%AggregateError.prototype%", .class = .empty, .call = ctor("AggregateError", 2, errors.constructAggregateError), .construct = ctor("AggregateError", 2, errors.constructAggregateError), .instances = .{ .error_kind = .aggregate_error } },
} ++ typed_array_objects;

/// Global functions (not objects): their ids follow the builtin objects'.
const global_functions = [_]Native{
    .{ .name = "parseInt", .length = 2, .func = globals_fns.parseInt },
    .{ .name = "parseFloat", .length = 1, .func = globals_fns.parseFloat },
    .{ .name = "isNaN", .length = 1, .func = globals_fns.isNaN },
    .{ .name = "isFinite", .length = 1, .func = globals_fns.isFinite },
    .{ .name = "encodeURIComponent", .length = 1, .func = globals_fns.encodeURIComponent },
    .{ .name = "decodeURIComponent", .length = 1, .func = globals_fns.decodeURIComponent },
    .{ .name = "encodeURI", .length = 1, .func = globals_fns.encodeURI },
    .{ .name = "decodeURI", .length = 1, .func = globals_fns.decodeURI },
    .{ .name = "queueMicrotask", .length = 1, .func = promises.queueMicrotask },
    .{ .name = "setTimeout", .length = 5, .func = timers.setTimeout },
    .{ .name = "clearTimeout", .length = 1, .func = timers.clearTimeout },
    .{ .name = "setInterval", .length = 5, .func = timers.setInterval },
    .{ .name = "clearInterval", .length = 1, .func = timers.clearTimeout },
    .{ .name = "atob", .length = 1, .func = base64.atob },
    .{ .name = "btoa", .length = 1, .func = base64.btoa },
    .{ .name = "structuredClone", .length = 2, .func = structured_clone.structuredClone },
};

pub const globals_count: u16 = builtin_objects.len + global_functions.len;

// ---------------------------------------------------------------------------------------
// The flattened tables, computed at compile time.

const class_count = @typeInfo(Class).@"enum".field_names.len;

const Layout = struct {
    natives: []const Native,
    /// Per class, per name id: a native id, `constant_bit | constant index`, or `absent`.
    tables: [class_count][names.count]u16,
    constants: []const f64,
    /// Native ids of each builtin object's call and construct behaviour.
    calls: [builtin_objects.len]u16,
    constructs: [builtin_objects.len]u16,
    global_function_ids: [global_functions.len]u16,
};

const absent: u16 = 0xFFFF;
const constant_bit: u16 = 0x8000;
/// A well-known symbol's name id follows this bit.
const symbol_bit: u16 = 0x4000;

const layout: Layout = blk: {
    @setEvalBranchQuota(10_000_000);
    var natives: []const Native = &.{};
    var constants: []const f64 = &.{};
    var tables: [class_count][names.count]u16 = undefined;
    for (&tables) |*t| @memset(t, absent);
    // Global functions first, so that class members can alias them.
    var global_function_ids: [global_functions.len]u16 = undefined;
    for (global_functions, 0..) |n, i| {
        _ = names.id(n.name);
        global_function_ids[i] = natives.len;
        natives = natives ++ [_]Native{n};
    }
    for (0..class_count) |c| {
        for (entries(@fromBackingInt(@intCast(c)))) |e| {
            const name_id = names.id(e.name);
            switch (e.value) {
                .native => |n| {
                    tables[c][name_id] = @intCast(natives.len);
                    natives = natives ++ [_]Native{n};
                },
                .number => |x| {
                    tables[c][name_id] = constant_bit | constants.len;
                    constants = constants ++ [_]f64{x};
                },
                .symbol => |symbol_name| {
                    tables[c][name_id] = symbol_bit | names.id(symbol_name);
                },
                .global => |global_name| {
                    tables[c][name_id] = for (global_functions, 0..) |g, i| {
                        if (std.mem.eql(u8, g.name, global_name)) break global_function_ids[i];
                    } else @compileError("no global function " ++ global_name);
                },
            }
        }
    }
    var calls: [builtin_objects.len]u16 = undefined;
    var constructs: [builtin_objects.len]u16 = undefined;
    for (builtin_objects, 0..) |o, i| {
        if (o.name[0] != '%') _ = names.id(o.name);
        calls[i] = absent;
        constructs[i] = absent;
        if (o.call) |n| {
            calls[i] = natives.len;
            natives = natives ++ [_]Native{n};
        }
        if (o.construct) |n| {
            constructs[i] = natives.len;
            natives = natives ++ [_]Native{n};
        }
    }
    assert(natives.len < symbol_bit and names.count < symbol_bit);
    break :blk .{
        .natives = natives,
        .tables = tables,
        .constants = constants,
        .calls = calls,
        .constructs = constructs,
        .global_function_ids = global_function_ids,
    };
};

pub const natives_count: u32 = layout.natives.len;

// ---------------------------------------------------------------------------------------
// Lookups.

pub fn globalId(name: []const u8) ?u16 {
    for (builtin_objects, 0..) |o, i| {
        if (std.mem.eql(u8, o.name, name)) return @intCast(i);
    }
    for (global_functions, 0..) |n, i| {
        if (std.mem.eql(u8, n.name, name)) return @intCast(builtin_objects.len + i);
    }
    return null;
}

pub fn globalIsConstructor(id: u16) bool {
    return id < builtin_objects.len and builtin_objects[id].construct != null;
}

pub fn globalValue(vm: *Vm, id: u16) Error!Value {
    if (id < builtin_objects.len) return Value.builtin(id);
    if (id < globals_count) return Value.native(layout.global_function_ids[id - builtin_objects.len]);
    const host_index = id - globals_count;
    if (host_index >= vm.program.host_globals.len) return vm.terminate(.invalid_bytecode);
    return vm.host_globals[host_index];
}

pub fn native(vm: *Vm, id: u32) *const Native {
    if (id < layout.natives.len) return &layout.natives[id];
    const host_id = id - layout.natives.len;
    if (host_id < vm.host.natives.len) return &vm.host.natives[host_id];
    return &missing_native;
}

const missing_native: Native = .{ .name = "missing", .length = 0, .func = missingNative };

fn missingNative(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    return vm.terminate(.invalid_bytecode);
}

fn memberValue(entry: u16) ?Value {
    if (entry == absent) return null;
    if (entry & constant_bit != 0) return Value.number(layout.constants[entry & ~constant_bit]);
    if (entry & symbol_bit != 0) return Value.symbol(names.byId(entry & ~symbol_bit));
    return Value.native(entry);
}

pub fn classMember(class: Class, key: *String) ?Value {
    const name_id = names.nameId(key) orelse return null;
    return memberValue(layout.tables[@backingInt(class)][name_id]);
}

/// The builtin methods of an object's kind, then Object.prototype's.
pub fn protoMember(vm: *Vm, o: *Object, key: *String) ?Value {
    _ = vm;
    const name_id = names.nameId(key) orelse return null;
    const class: Class = switch (o.kind) {
        .plain => .object_proto,
        .array => .array_proto,
        .closure => .function_proto,
        .error_object => .error_proto,
        .map => .map_proto,
        .set => .set_proto,
        .iterator => .iterator_proto,
        .bound_function => .function_proto,
        .accessor => .object_proto,
        .generator => if (o.as(object.Generator).async_generator != null) .async_generator_proto else .generator_proto,
        .promise => .promise_proto,
        .promise_function => .function_proto,
        .regexp => .regexp_proto,
        .date => .date_proto,
        .array_buffer => .array_buffer_proto,
        .typed_array => .typed_array_proto,
    };
    if (memberValue(layout.tables[@backingInt(class)][name_id])) |v| return v;
    return memberValue(layout.tables[@backingInt(Class.object_proto)][name_id]);
}

/// The methods of a primitive's wrapper prototype (String.prototype...).
pub fn primitiveMember(v: Value, key: *String) ?Value {
    const name_id = names.nameId(key) orelse return null;
    const class: Class = if (v.isString())
        .string_proto
    else if (v.is(.symbol))
        .symbol_proto
    else if (v.isNumber())
        .number_proto
    else if (v.isBool())
        .boolean_proto
    else
        .function_proto;
    if (memberValue(layout.tables[@backingInt(class)][name_id])) |m| return m;
    return memberValue(layout.tables[@backingInt(Class.object_proto)][name_id]);
}

/// The id of the builtin object of this name, at compile time.
pub fn builtinId(comptime name: []const u8) u16 {
    @setEvalBranchQuota(10_000);
    return comptime for (builtin_objects, 0..) |o, i| {
        if (std.mem.eql(u8, o.name, name)) break @intCast(i);
    } else @compileError("no builtin object " ++ name);
}

/// The builtin prototype an object of this kind inherits from when it has no link of its own.
pub fn kindPrototype(o: *const Object) Value {
    return Value.builtin(switch (o.kind) {
        .plain, .accessor => builtinId("%Object.prototype%"),
        .iterator => builtinId("%Iterator.prototype%"),
        .array => builtinId("%Array.prototype%"),
        .closure, .bound_function => builtinId("%Function.prototype%"),
        .generator => if (@as(*const object.Generator, @fieldParentPtr("object", o)).async_generator != null)
            builtinId("%AsyncGenerator.prototype%")
        else
            builtinId("%Generator.prototype%"),
        .promise => builtinId("%Promise.prototype%"),
        .promise_function => builtinId("%Function.prototype%"),
        .regexp => builtinId("%RegExp.prototype%"),
        .date => builtinId("%Date.prototype%"),
        .array_buffer => builtinId("%ArrayBuffer.prototype%"),
        .typed_array => typedArrayPrototype(@as(*const object.TypedArray, @fieldParentPtr("object", o)).element),
        .error_object => switch (@as(*const object.ErrorObject, @fieldParentPtr("object", o)).error_kind) {
            .@"error" => builtinId("%Error.prototype%"),
            .type_error => builtinId("%TypeError.prototype%"),
            .range_error => builtinId("%RangeError.prototype%"),
            .syntax_error => builtinId("%SyntaxError.prototype%"),
            .reference_error => builtinId("%ReferenceError.prototype%"),
            .eval_error => builtinId("%EvalError.prototype%"),
            .uri_error => builtinId("%URIError.prototype%"),
            .aggregate_error => builtinId("%AggregateError.prototype%"),
        },
        .map => builtinId("%Map.prototype%"),
        .set => builtinId("%Set.prototype%"),
    });
}

fn typedArrayPrototype(e: object.ElementType) u16 {
    return switch (e) {
        inline else => |k| comptime builtinId("%" ++ k.name() ++ ".prototype%"),
    };
}

/// What a builtin object inherits from: Object.prototype for the other prototypes and the
/// namespaces, Function.prototype for the constructors, nothing for Object.prototype.
pub fn prototypeOfBuiltin(id: u32) Value {
    if (id >= builtin_objects.len) return Value.builtin(builtinId("%Object.prototype%"));
    if (id == builtinId("%Object.prototype%")) return Value.null_value;
    // The error kinds' prototypes inherit Error.prototype.
    if (builtin_objects[id].class == .error_proto and id != builtinId("%Error.prototype%")) return Value.builtin(builtinId("%Error.prototype%"));
    if (isCallableBuiltin(id) or id == builtinId("Function")) return Value.builtin(builtinId("%Function.prototype%"));
    return Value.builtin(builtinId("%Object.prototype%"));
}

fn builtinIdRuntime(name: []const u8) ?u16 {
    for (builtin_objects, 0..) |o, i| {
        if (std.mem.eql(u8, o.name, name)) return @intCast(i);
    }
    return null;
}

/// A property of a builtin object (`Math.PI`, `JSON.parse`) or of a host object.
pub fn staticMember(vm: *Vm, id: u32, key: *String) Error!Value {
    if (id < builtin_objects.len) {
        const o = builtin_objects[id];
        if (classMember(o.class, key)) |v| return v;
        if (o.prototype) |p| if (names.is(key, "prototype")) return Value.builtin(builtinIdRuntime(p).?);
        if (o.constructor_of) |c| {
            if (names.is(key, "constructor")) return Value.builtin(builtinIdRuntime(c).?);
            // The prototypes other than Object's inherit Object.prototype's methods.
            return classMember(.object_proto, key) orelse Value.undefined_value;
        }
        // crypto.subtle: the one namespace inside a namespace.
        if (id == (comptime builtinId("crypto")) and names.is(key, "subtle")) return Value.builtin(comptime builtinId("%SubtleCrypto%"));
        if (typed_arrays.elementOfConstructor(id)) |e| {
            if (names.is(key, "BYTES_PER_ELEMENT")) return Value.number(@floatFromInt(e.size()));
        }
        if (o.call != null or o.construct != null or id == builtinId("Function")) {
            // Constructors inherit Function.prototype's call, apply and bind.
            if (classMember(.function_proto, key)) |v| return v;
        }
        // Math, JSON and console are plain objects (the constructors' own constructor is
        // Function, outside the language).
        if (names.is(key, "constructor") and o.call == null and o.construct == null) return Value.builtin(comptime globalId("Object").?);
        if (names.is(key, "name") and (o.call != null or o.construct != null)) return Value.string(names.byId(names.lookup(o.name).?));
        if (names.is(key, "length")) {
            if (o.construct orelse o.call) |n| return Value.number(@floatFromInt(n.length));
        }
        // The other plain builtin objects (%GeneratorPrototype%, reached through a generator
        // function's `prototype`; Math, JSON) inherit Object.prototype's methods.
        if (o.call == null and o.construct == null) return classMember(.object_proto, key) orelse Value.undefined_value;
        return Value.undefined_value;
    }
    const host_id = id - builtin_objects.len;
    if (host_id >= vm.host.objects.len) return Value.undefined_value;
    const host_object = vm.host.objects[host_id];
    for (host_object.members) |m| {
        if (key.eqlLatin1(m.name)) return Value.native(natives_count + m.native);
    }
    return Value.undefined_value;
}

pub fn isCallableBuiltin(id: u32) bool {
    return id < builtin_objects.len and (builtin_objects[id].call != null or builtin_objects[id].construct != null);
}

pub fn callBehavior(vm: *Vm, id: u32) ?*const Native {
    _ = vm;
    if (id >= builtin_objects.len or layout.calls[id] == absent) return null;
    return &layout.natives[layout.calls[id]];
}

pub fn construct(vm: *Vm, callee: Value, args: []const Value) Error!Value {
    if (callee.objectOf(.closure) != null) return vm.construct(callee, args, callee);
    if (callee.objectOf(.bound_function)) |o| {
        const b = o.as(object.BoundFunction);
        return vm.construct(b.target, try vm.boundArguments(b, args), b.target);
    }
    if (callee.is(.builtin)) {
        const id = callee.payload();
        if (id < builtin_objects.len and layout.constructs[id] != absent) {
            return layout.natives[layout.constructs[id]].func(vm, Value.undefined_value, args);
        }
    }
    if (callee.is(.builtin) and callee.payload() >= builtin_objects.len) {
        const host_id = callee.payload() - builtin_objects.len;
        if (host_id < vm.host.objects.len) if (vm.host.objects[host_id].construct) |n| {
            return vm.host.natives[n].func(vm, Value.undefined_value, args);
        };
    }
    return vm.throwFmt(.type_error, "{f} is not a constructor", .{ops.ShortFormat{ .vm = vm, .v = callee }});
}

/// Whether `v` is a host object that `new` makes instances of (a handler's Response).
pub fn isHostConstructor(vm: *Vm, v: Value) bool {
    if (!v.is(.builtin) or v.payload() < builtin_objects.len) return false;
    const host_id = v.payload() - builtin_objects.len;
    return host_id < vm.host.objects.len and vm.host.objects[host_id].construct != null;
}

pub fn isInstance(vm: *Vm, id: u32, v: Value) bool {
    if (!v.is(.object)) return false;
    const o = v.asObject();
    if (id >= builtin_objects.len) {
        const host_id = id - builtin_objects.len;
        if (host_id >= vm.host.objects.len) return false;
        const class = vm.host.objects[host_id].instances_class;
        return class != 0 and o.class == class;
    }
    return switch (builtin_objects[id].instances) {
        .none => false,
        .any_object => true,
        .kind => |k| o.kind == k,
        .any_error => o.kind == .error_object,
        .error_kind => |k| o.kind == .error_object and o.as(object.ErrorObject).error_kind == k,
        .prototype => |p| ops.inherits(v, Value.builtin(builtinIdRuntime(p).?)),
        .typed_array => |e| o.kind == .typed_array and o.as(object.TypedArray).element == e,
    };
}

pub fn builtinName(vm: *Vm, id: u32) []const u8 {
    if (id < builtin_objects.len) return builtin_objects[id].name;
    const host_id = id - builtin_objects.len;
    if (host_id < vm.host.objects.len) return vm.host.objects[host_id].name;
    return "?";
}

pub fn builtinToString(vm: *Vm, id: u32) Error!*String {
    var buf: [128]u8 = undefined;
    const name = builtinName(vm, id);
    const text = if (isCallableBuiltin(id))
        std.fmt.bufPrint(&buf, "function {s}() {{ [native code] }}", .{name}) catch unreachable
    else
        std.fmt.bufPrint(&buf, "[object {s}]", .{name}) catch unreachable;
    return vm.newLatin1(text);
}

// ---------------------------------------------------------------------------------------
// Hosts.

pub const HostMember = struct {
    name: []const u8,
    /// Index into the host's `natives`.
    native: u16,
};

pub const HostObject = struct {
    name: []const u8,
    members: []const HostMember,
    /// What `new Name(...)` runs: an index into the host's `natives` (none: not a
    /// constructor).
    construct: ?u16 = null,
    /// The host class (`Object.class`) of the objects `instanceof Name` accepts (0: none).
    instances_class: u16 = 0,
};

/// A host's global function: its name and its index into the host's `natives`.
pub const HostFunction = struct {
    name: []const u8,
    native: u16,
};

/// What an embedder adds to the language: global objects whose methods are its natives.
pub const Host = struct {
    natives: []const Native = &.{},
    objects: []const HostObject = &.{},
    /// Global functions (a handler's `fetch`): native function values, callable anywhere.
    functions: []const HostFunction = &.{},
    /// Names of the host's object classes: an object whose `class` is i + 1 prints as
    /// `Name { ... }` (a handler's Response objects, for instance).
    class_names: []const []const u8 = &.{},

    pub const none: Host = .{};

    pub fn globalNames(host: *const Host, buf: [][]const u8) [][]const u8 {
        for (host.objects, 0..) |o, i| buf[i] = o.name;
        for (host.functions, host.objects.len..) |f, i| buf[i] = f.name;
        return buf[0 .. host.objects.len + host.functions.len];
    }

    pub fn globalsCount(host: *const Host) usize {
        return host.objects.len + host.functions.len;
    }

    pub fn globalValue(host: *const Host, name: []const u8) ?Value {
        for (host.objects, 0..) |o, i| {
            if (std.mem.eql(u8, o.name, name)) return Value.builtin(@intCast(builtin_objects.len + i));
        }
        for (host.functions) |f| {
            if (std.mem.eql(u8, f.name, name)) return Value.native(natives_count + f.native);
        }
        return null;
    }
};

test "builtins: every global resolves and its value has the right kind" {
    try std.testing.expect(globalId("Math") != null);
    try std.testing.expect(globalId("parseInt") != null);
    try std.testing.expect(globalId("nope") == null);
    try std.testing.expect(globalIsConstructor(globalId("Map").?));
    try std.testing.expect(!globalIsConstructor(globalId("Math").?));
    try std.testing.expect(classMember(.array_proto, names.string("push")) != null);
    try std.testing.expect(classMember(.math, names.string("PI")).?.asNumber() == std.math.pi);
}

test "builtins: Number.parseInt is the global parseInt" {
    const a = classMember(.number_ctor, names.string("parseInt")).?;
    const b = Value.native(layout.global_function_ids[globalId("parseInt").? - builtin_objects.len]);
    try std.testing.expectEqual(b.bits, a.bits);
}
