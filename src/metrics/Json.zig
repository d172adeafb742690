//! A small JSON writer into a caller's `std.Io.Writer` (a fixed buffer): objects, arrays,
//! strings, integers, booleans and seconds, with the commas and nesting tracked here so a
//! renderer only says what to write.
//!
//! Decision: strings are always valid JSON (RFC 8259 §7) whatever the bytes: `"`, `\` and
//! control characters are escaped, valid UTF-8 passes through, and a string that is not valid
//! UTF-8 has each byte above 0x7f replaced by U+FFFD. std.json.Stringify assumes valid UTF-8,
//! and a pool name comes from a config file.
const std = @import("std");
const assert = std.debug.assert;

const Json = @This();

writer: *std.Io.Writer,
/// Open containers; `has_items[d]` says whether container `d` needs a comma before its next
/// item.
depth: u8 = 0,
has_items: [depth_max]bool = @splat(false),
/// A key was written: the next value is its value, not an item of an array.
after_key: bool = false,

pub const Error = std.Io.Writer.Error;
pub const content_type = "application/json";

const depth_max = 8;

pub fn init(writer: *std.Io.Writer) Json {
    return .{ .writer = writer };
}

pub fn beginObject(json: *Json) Error!void {
    try json.beforeValue();
    try json.writer.writeByte('{');
    json.push();
}

pub fn endObject(json: *Json) Error!void {
    assert(!json.after_key);
    json.pop();
    try json.writer.writeByte('}');
}

pub fn beginArray(json: *Json) Error!void {
    try json.beforeValue();
    try json.writer.writeByte('[');
    json.push();
}

pub fn endArray(json: *Json) Error!void {
    assert(!json.after_key);
    json.pop();
    try json.writer.writeByte(']');
}

/// An object's key; its value is whatever is written next.
pub fn key(json: *Json, comptime name: []const u8) Error!void {
    assert(json.depth > 0);
    assert(!json.after_key);
    comptime for (name) |c| assert(c >= 0x20 and c < 0x7f and c != '"' and c != '\\');
    try json.separate();
    try json.writer.writeAll("\"" ++ name ++ "\":");
    json.after_key = true;
}

pub fn string(json: *Json, value: []const u8) Error!void {
    try json.beforeValue();
    try writeString(json.writer, value);
}

/// One string value written from several pieces, as if they were one.
pub fn stringPieces(json: *Json, pieces: []const []const u8) Error!void {
    try json.beforeValue();
    try json.writer.writeByte('"');
    for (pieces) |piece| try writeEscaped(json.writer, piece);
    try json.writer.writeByte('"');
}

pub fn int(json: *Json, value: u64) Error!void {
    try json.beforeValue();
    try json.writer.print("{d}", .{value});
}

pub fn @"null"(json: *Json) Error!void {
    try json.beforeValue();
    try json.writer.writeAll("null");
}

pub fn boolean(json: *Json, value: bool) Error!void {
    try json.beforeValue();
    try json.writer.writeAll(if (value) "true" else "false");
}

/// Nanoseconds as a number of seconds with three decimals (milliseconds).
pub fn seconds(json: *Json, value_ns: u64) Error!void {
    try json.beforeValue();
    const ms = value_ns / std.time.ns_per_ms;
    try json.writer.print("{d}.{d:0>3}", .{ ms / 1000, ms % 1000 });
}

pub fn fieldString(json: *Json, comptime name: []const u8, value: []const u8) Error!void {
    try json.key(name);
    try json.string(value);
}

pub fn fieldInt(json: *Json, comptime name: []const u8, value: u64) Error!void {
    try json.key(name);
    try json.int(value);
}

pub fn fieldBool(json: *Json, comptime name: []const u8, value: bool) Error!void {
    try json.key(name);
    try json.boolean(value);
}

/// Every container was closed: the document is complete.
pub fn done(json: *const Json) bool {
    return json.depth == 0 and !json.after_key;
}

fn beforeValue(json: *Json) Error!void {
    if (json.after_key) {
        json.after_key = false;
        return;
    }
    try json.separate();
}

/// The comma before an item that is not its container's first.
fn separate(json: *Json) Error!void {
    if (json.depth == 0) return;
    const has_items = &json.has_items[json.depth - 1];
    if (has_items.*) try json.writer.writeByte(',');
    has_items.* = true;
}

fn push(json: *Json) void {
    assert(json.depth < depth_max);
    json.has_items[json.depth] = false;
    json.depth += 1;
}

fn pop(json: *Json) void {
    assert(json.depth > 0);
    json.depth -= 1;
}

/// A JSON string: quoted and escaped (see the file's comment for bytes that are not UTF-8).
pub fn writeString(w: *std.Io.Writer, value: []const u8) Error!void {
    try w.writeByte('"');
    try writeEscaped(w, value);
    try w.writeByte('"');
}

/// A JSON string's contents, without its quotes.
fn writeEscaped(w: *std.Io.Writer, value: []const u8) Error!void {
    const utf8 = std.unicode.utf8ValidateSlice(value);
    var start: usize = 0;
    for (value, 0..) |c, index| {
        const plain = switch (c) {
            0x00...0x1f, '"', '\\' => false,
            0x80...0xff => utf8,
            else => true,
        };
        if (plain) continue;
        try w.writeAll(value[start..index]);
        start = index + 1;
        switch (c) {
            '"' => try w.writeAll("\\\""),
            '\\' => try w.writeAll("\\\\"),
            '\n' => try w.writeAll("\\n"),
            '\r' => try w.writeAll("\\r"),
            '\t' => try w.writeAll("\\t"),
            0x80...0xff => try w.writeAll("\\ufffd"),
            else => try w.print("\\u{x:0>4}", .{c}),
        }
    }
    try w.writeAll(value[start..]);
}

/// The most bytes `writeString` writes for `len` bytes: quotes, and six per escaped byte.
pub fn stringBytesMax(len: usize) usize {
    return 2 + 6 * len;
}

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

test "json: nesting, commas and keys come out as one valid document" {
    var buffer: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    var json: Json = .init(&w);
    try json.beginObject();
    try json.fieldString("name", "app");
    try json.fieldInt("count", 18446744073709551615);
    try json.key("items");
    try json.beginArray();
    try json.beginObject();
    try json.fieldBool("up", true);
    try json.endObject();
    try json.int(7);
    try json.beginArray();
    try json.endArray();
    try json.endArray();
    try json.key("uptime");
    try json.seconds(12_345_678_901);
    try json.key("empty");
    try json.beginObject();
    try json.endObject();
    try json.endObject();
    try testing.expect(json.done());
    const text = w.buffered();
    try testing.expectEqualStrings(
        \\{"name":"app","count":18446744073709551615,"items":[{"up":true},7,[]],"uptime":12.345,"empty":{}}
    , text);
    // std's parser agrees that it is JSON.
    var parsed = try std.json.parseFromSlice(std.json.Value, testing.allocator, text, .{});
    defer parsed.deinit();
    try testing.expectEqualStrings("app", parsed.value.object.get("name").?.string);
}

test "json: strings escape quotes, backslashes and control bytes; bad UTF-8 becomes U+FFFD" {
    const cases = [_]struct { in: []const u8, out: []const u8 }{
        .{ .in = "plain", .out = "\"plain\"" },
        .{ .in = "a\"b\\c", .out = "\"a\\\"b\\\\c\"" },
        .{ .in = "\n\r\t\x00\x1f", .out = "\"\\n\\r\\t\\u0000\\u001f\"" },
        .{ .in = "caf\xc3\xa9", .out = "\"caf\xc3\xa9\"" }, // Valid UTF-8 passes through.
        .{ .in = "caf\xe9", .out = "\"caf\\ufffd\"" }, // Latin-1, not UTF-8.
        .{ .in = "", .out = "\"\"" },
    };
    for (cases) |case| {
        var buffer: [64]u8 = undefined;
        var w: std.Io.Writer = .fixed(&buffer);
        try writeString(&w, case.in);
        try testing.expectEqualStrings(case.out, w.buffered());
        try testing.expect(w.buffered().len <= stringBytesMax(case.in.len));
        var parsed = try std.json.parseFromSlice([]const u8, testing.allocator, w.buffered(), .{});
        parsed.deinit();
    }
}

test "json: a full buffer is an error" {
    var buffer: [4]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    var json: Json = .init(&w);
    try json.beginObject();
    try testing.expectError(error.WriteFailed, json.fieldString("key", "value"));
}
