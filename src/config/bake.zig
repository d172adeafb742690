//! `zig build -Dconfig=FILE`: compiles a config file into the binary. The build runs this
//! program on the host: it loads FILE exactly as `sluice check` does (a mistake fails the
//! build with `FILE:LINE:COL: ...`), then writes Zig source that rebuilds the same `Config`
//! value at compile time. The compiler type-checks it and `main` evaluates it in a `comptime`
//! block, so the binary starts with its configuration already in its data: nothing to read or
//! parse at start-up. Flags given at run time still override it, as they override `--config`.
//!
//! usage: bake FILE OUTPUT.zig      (with no FILE: `bake - OUTPUT.zig` writes "no config")
const std = @import("std");
const Config = @import("Config.zig");
const Address = @import("../stdx/Address.zig").Address;
const file = @import("file.zig");

pub fn main(init: std.process.Init) !u8 {
    const arena = init.arena.allocator();
    const args = try init.minimal.args.toSlice(arena);
    if (args.len != 3) {
        std.debug.print("usage: bake FILE OUTPUT.zig\n", .{});
        return 2;
    }
    const path = args[1];
    const output_path = args[2];
    var source: std.Io.Writer.Allocating = .init(arena);
    defer source.deinit();
    if (std.mem.eql(u8, path, "-")) {
        try source.writer.writeAll("//! No config baked in (zig build without -Dconfig).\npub const present = false;\n");
    } else {
        var config: Config = .{};
        var problems: file.Problems = .{};
        file.load(arena, path, &config, &problems) catch {
            for (problems.slice()) |problem| {
                std.debug.print("{s}:{d}:{d}: {s}\n", .{ path, problem.position.line, problem.position.column, problem.message });
            }
            return 1;
        };
        try emit(&source.writer, path, &config);
    }
    try std.Io.Dir.cwd().writeFile(init.io, .{ .sub_path = output_path, .data = source.written() });
    return 0;
}

/// Zig source for `config`: a function the importer calls at compile time with its own
/// `Config` type (the generated file cannot import sluice's sources itself).
pub fn emit(w: *std.Io.Writer, path: []const u8, config: *const Config) !void {
    try w.print("//! Baked from {s} by src/config/bake.zig (zig build -Dconfig). Do not edit.\n", .{path});
    try w.writeAll("pub const present = true;\n\n");
    try w.writeAll("pub fn build(comptime Config: type) Config {\n");
    try w.writeAll("    @setEvalBranchQuota(1_000_000);\n");
    try w.writeAll("    var c: Config = .{};\n");
    try emitFields(w, "c", Config, config);
    try w.writeAll("    return c;\n}\n");
}

fn emitFields(w: *std.Io.Writer, comptime prefix: []const u8, comptime T: type, value: *const T) !void {
    inline for (@typeInfo(T).@"struct".field_names) |name| {
        const field = &@field(value, name);
        const path = prefix ++ "." ++ name;
        if (comptime std.mem.eql(u8, name, "backends_buffer")) {
            // Only the backends in use, through the same function the CLI uses.
            for (field[0..value.backends_count]) |*backend| {
                var text: [Address.text_bytes_max]u8 = undefined;
                try w.print("    " ++ prefix ++ ".addBackend(.{{ .address = Config.Address.parse(\"{s}\") catch unreachable, " ++
                    ".weight = {d}, .max_connections = {d}, .max_pending = {d} }}) catch unreachable;\n", .{
                    backend.address.toText(&text), backend.weight, backend.max_connections, backend.max_pending,
                });
            }
        } else if (comptime std.mem.eql(u8, name, "trusted_proxies_buffer")) {
            for (field[0..value.trusted_proxies_count]) |*cidr| {
                try w.print("    " ++ prefix ++ ".addTrustedProxy(.{{ .family = {d}, .bytes = .{any}, " ++
                    ".prefix_bits = {d} }}) catch unreachable;\n", .{ cidr.family, cidr.bytes, cidr.prefix_bits });
            }
        } else if (comptime std.mem.eql(u8, name, "backends_count") or
            std.mem.eql(u8, name, "trusted_proxies_count"))
        {
            // Counted by addBackend and addTrustedProxy.
        } else {
            try emitValue(w, path, @TypeOf(field.*), field);
        }
    }
}

fn emitValue(w: *std.Io.Writer, comptime path: []const u8, comptime T: type, value: *const T) !void {
    if (T == Address) {
        var text: [Address.text_bytes_max]u8 = undefined;
        return w.print("    {s} = Config.Address.parse(\"{s}\") catch unreachable;\n", .{ path, value.toText(&text) });
    }
    switch (@typeInfo(T)) {
        .int, .bool => try w.print("    {s} = {any};\n", .{ path, value.* }),
        .@"enum" => try w.print("    {s} = .{s};\n", .{ path, @tagName(value.*) }),
        .pointer => try w.print("    {s} = \"{f}\";\n", .{ path, std.zig.fmtString(value.*) }),
        .@"struct" => |info| if (info.layout == .@"packed") {
            try w.print("    {s} = @bitCast(@as(u{d}, {d}));\n", .{ path, @bitSizeOf(T), @as(@Int(.unsigned, @bitSizeOf(T)), @bitCast(value.*)) });
        } else {
            try emitFields(w, path, T, value);
        },
        else => @compileError("bake: no way to write a " ++ @typeName(T)),
    }
}

test "bake: the emitted source rebuilds the config it was made from" {
    var config: Config = .{};
    config.workers_count = 3;
    config.pool.strategy = .hash;
    config.pool.hash_on = .header;
    config.pool.hash_name = "X-\"User\"";
    config.pool.outlier.on.status_5xx = true;
    try config.pool.addBackend(.{ .address = try Address.parse("10.0.0.5:9000"), .weight = 3 });
    try config.addTrustedProxy(try @import("Cidr.zig").parse("10.0.0.0/8"));
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try emit(&out.writer, "t.zon", &config);
    const text = out.written();
    const expected = [_][]const u8{
        "c.workers_count = 3;",
        "c.pool.strategy = .hash;",
        "c.pool.hash_name = \"X-\\\"User\\\"\";",
        "c.pool.addBackend(.{ .address = Config.Address.parse(\"10.0.0.5:9000\") catch unreachable, .weight = 3,",
        "c.addTrustedProxy(.{ .family = 2,",
        "c.pool.outlier.on = @bitCast(@as(u8, 15));",
    };
    for (expected) |line| {
        if (std.mem.indexOf(u8, text, line) == null) {
            std.debug.print("missing: {s}\nin:\n{s}\n", .{ line, text });
            return error.TestUnexpectedResult;
        }
    }
}
