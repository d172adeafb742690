//! The Prometheus text exposition format, version 0.0.4, written into a caller's
//! `std.Io.Writer` (a fixed buffer): `# HELP` and `# TYPE` once per metric family, then its
//! samples as `name{label="value",...} value`, one per line.
//!
//! Decision: values are integers or nanoseconds printed as seconds with nine decimals, never
//! floats, so rendering needs no float formatting and the text is exact. Label values are
//! escaped as the format requires (`\\`, `\"`, `\n`); metric names, label names and help texts
//! are ours, checked at compile time.
const std = @import("std");
const assert = std.debug.assert;

const Histogram = @import("Histogram.zig");

const Prometheus = @This();

writer: *std.Io.Writer,

pub const content_type = "text/plain; version=0.0.4; charset=utf-8";

pub const Error = std.Io.Writer.Error;

pub const Type = enum { counter, gauge, histogram };

pub const Label = struct {
    name: []const u8,
    value: []const u8,
};

pub fn init(writer: *std.Io.Writer) Prometheus {
    return .{ .writer = writer };
}

/// The `# HELP` and `# TYPE` lines that open a family; its samples follow.
pub fn family(
    prometheus: *Prometheus,
    comptime name: []const u8,
    comptime kind: Type,
    comptime help: []const u8,
) Error!void {
    comptime assertName(name);
    comptime assertHelp(help);
    comptime if (kind == .counter) assert(std.mem.endsWith(u8, name, "_total"));
    try prometheus.writer.writeAll("# HELP " ++ name ++ " " ++ help ++ "\n# TYPE " ++ name ++
        " " ++ @tagName(kind) ++ "\n");
}

/// `name{labels} value`.
pub fn sample(
    prometheus: *Prometheus,
    comptime name: []const u8,
    labels: []const Label,
    value: u64,
) Error!void {
    comptime assertName(name);
    try prometheus.writer.writeAll(name);
    try prometheus.labelSet(labels, null);
    try prometheus.writer.print(" {d}\n", .{value});
}

/// `name{labels} seconds`, from nanoseconds, exactly (nine decimals).
pub fn sampleSeconds(
    prometheus: *Prometheus,
    comptime name: []const u8,
    labels: []const Label,
    value_ns: u64,
) Error!void {
    comptime assertName(name);
    try prometheus.writer.writeAll(name);
    try prometheus.labelSet(labels, null);
    try prometheus.writer.writeByte(' ');
    try writeSeconds(prometheus.writer, value_ns);
    try prometheus.writer.writeByte('\n');
}

/// A whole histogram family: cumulative `_bucket` samples ending with `le="+Inf"`, then
/// `_sum` (seconds) and `_count`. The family's HELP and TYPE lines are written by `family`.
pub fn histogram(
    prometheus: *Prometheus,
    comptime name: []const u8,
    labels: []const Label,
    value: *const Histogram,
) Error!void {
    comptime assertName(name);
    var cumulative: u64 = 0;
    for (&value.counts, 0..) |*count, index| {
        cumulative +%= count.load();
        const le = if (index < Histogram.bounds_text.len) Histogram.bounds_text[index] else "+Inf";
        try prometheus.writer.writeAll(name ++ "_bucket");
        try prometheus.labelSet(labels, .{ .name = "le", .value = le });
        try prometheus.writer.print(" {d}\n", .{cumulative});
    }
    assert(cumulative == value.count());
    try prometheus.sampleSeconds(name ++ "_sum", labels, value.sum_ns.load());
    try prometheus.sample(name ++ "_count", labels, cumulative);
}

fn labelSet(prometheus: *Prometheus, labels: []const Label, extra: ?Label) Error!void {
    if (labels.len == 0 and extra == null) return;
    const w = prometheus.writer;
    try w.writeByte('{');
    for (labels, 0..) |label, index| {
        if (index > 0) try w.writeByte(',');
        try writeLabel(w, label);
    }
    if (extra) |label| {
        if (labels.len > 0) try w.writeByte(',');
        try writeLabel(w, label);
    }
    try w.writeByte('}');
}

fn writeLabel(w: *std.Io.Writer, label: Label) Error!void {
    assert(label.name.len > 0);
    try w.writeAll(label.name);
    try w.writeAll("=\"");
    try writeEscaped(w, label.value);
    try w.writeByte('"');
}

/// A label value: backslash, double quote and line feed are escaped; every other byte is
/// written as it is (the format is UTF-8 and says nothing more).
pub fn writeEscaped(w: *std.Io.Writer, value: []const u8) Error!void {
    var start: usize = 0;
    for (value, 0..) |c, index| {
        const escape: []const u8 = switch (c) {
            '\\' => "\\\\",
            '"' => "\\\"",
            '\n' => "\\n",
            else => continue,
        };
        try w.writeAll(value[start..index]);
        try w.writeAll(escape);
        start = index + 1;
    }
    try w.writeAll(value[start..]);
}

/// The most bytes `writeEscaped` writes for `len` bytes of value: every byte doubled.
pub fn escapedBytesMax(len: usize) usize {
    return 2 * len;
}

/// Nanoseconds as seconds with nine decimals: 1500000000 is "1.500000000".
pub fn writeSeconds(w: *std.Io.Writer, ns: u64) Error!void {
    try w.print("{d}.{d:0>9}", .{ ns / std.time.ns_per_s, ns % std.time.ns_per_s });
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`, and ours all start with `sluice_`.
fn assertName(comptime name: []const u8) void {
    assert(std.mem.startsWith(u8, name, "sluice_"));
    for (name) |c| switch (c) {
        'a'...'z', 'A'...'Z', '0'...'9', '_', ':' => {},
        else => @compileError("not a metric name: " ++ name),
    };
}

/// A HELP text needs escaping only for backslash and line feed; ours have neither.
fn assertHelp(comptime help: []const u8) void {
    assert(help.len > 0);
    for (help) |c| if (c == '\\' or c == '\n') @compileError("help needs escaping: " ++ help);
}

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

test "prometheus: label values escape backslash, quote and line feed, nothing else" {
    var buffer: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    var prometheus: Prometheus = .init(&w);
    try prometheus.family("sluice_test_total", .counter, "A test counter.");
    try prometheus.sample("sluice_test_total", &.{
        .{ .name = "pool", .value = "a\\b\"c\nd" },
        .{ .name = "backend", .value = "[::1]:80 é" },
    }, 42);
    try prometheus.sample("sluice_test_total", &.{}, 0);
    try testing.expectEqualStrings(
        \\# HELP sluice_test_total A test counter.
        \\# TYPE sluice_test_total counter
        \\sluice_test_total{pool="a\\b\"c\nd",backend="[::1]:80 é"} 42
        \\sluice_test_total 0
        \\
    , w.buffered());
}

test "prometheus: a histogram is cumulative, ends at +Inf, and +Inf equals _count" {
    var value: Histogram = .{};
    value.observe(100 * std.time.ns_per_us); // <= 0.0005
    value.observe(100 * std.time.ns_per_us);
    value.observe(3 * std.time.ns_per_ms); // <= 0.005
    value.observe(20 * std.time.ns_per_s); // +Inf only
    var buffer: [4096]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    var prometheus: Prometheus = .init(&w);
    try prometheus.family("sluice_d_seconds", .histogram, "Durations.");
    try prometheus.histogram("sluice_d_seconds", &.{.{ .name = "pool", .value = "p" }}, &value);
    const text = w.buffered();
    var lines = std.mem.splitScalar(u8, text, '\n');
    try testing.expectEqualStrings("# HELP sluice_d_seconds Durations.", lines.next().?);
    try testing.expectEqualStrings("# TYPE sluice_d_seconds histogram", lines.next().?);
    const expected_cumulative = [_]u64{ 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4 };
    for (expected_cumulative, 0..) |cumulative, index| {
        const le = if (index < Histogram.bounds_text.len) Histogram.bounds_text[index] else "+Inf";
        var line_buffer: [128]u8 = undefined;
        const line = try std.fmt.bufPrint(&line_buffer, "sluice_d_seconds_bucket{{pool=\"p\",le=\"{s}\"}} {d}", .{ le, cumulative });
        try testing.expectEqualStrings(line, lines.next().?);
    }
    try testing.expectEqualStrings("sluice_d_seconds_sum{pool=\"p\"} 20.003200000", lines.next().?);
    try testing.expectEqualStrings("sluice_d_seconds_count{pool=\"p\"} 4", lines.next().?);
    try testing.expectEqualStrings("", lines.next().?);
    try testing.expectEqual(null, lines.next());
}

test "prometheus: a full buffer is an error, never a cut line passed as whole" {
    var buffer: [40]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    var prometheus: Prometheus = .init(&w);
    try testing.expectError(error.WriteFailed, prometheus.family("sluice_x_total", .counter, "A counter with a long help text."));
}

test "prometheus: seconds are exact" {
    var buffer: [64]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try writeSeconds(&w, 0);
    try w.writeByte(' ');
    try writeSeconds(&w, 1);
    try w.writeByte(' ');
    try writeSeconds(&w, 12 * std.time.ns_per_s + 34);
    try testing.expectEqualStrings("0.000000000 0.000000001 12.000000034", w.buffered());
}
