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

/// The longest assignment target written, such as `c.pools_buffer[15].health.interval_ns`:
/// Config nests three levels deep under short names.
const path_bytes_max = 128;

fn emitFields(w: *std.Io.Writer, prefix: []const u8, comptime T: type, value: *const T) !void {
    inline for (@typeInfo(T).@"struct".field_names) |name| {
        const field = &@field(value, name);
        var path_buffer: [path_bytes_max]u8 = undefined;
        const path = std.fmt.bufPrint(&path_buffer, "{s}." ++ name, .{prefix}) catch unreachable;
        if (comptime std.mem.eql(u8, name, "backends_list")) {
            // A constant list: `Config.Pool` never writes a list in place, and the command
            // line's `addBackend` copies it into its arena before appending.
            try w.print("    {s}.setBackends(&[_]Config.Backend{{\n", .{prefix});
            for (field.*) |*backend| {
                if (backend.by_name) return error.Unsupported; // The demo's are addresses.
                var text: [Address.text_bytes_max]u8 = undefined;
                const parse = if (backend.address.isUnix()) "parseUnix" else "parse";
                try w.print("        .{{ .address = Config.Address.{s}(\"{s}\") catch unreachable, " ++
                    ".host_name = \"{s}\", .weight = {d}, .max_connections = {d}, .max_pending = {d} }},\n", .{
                    parse,          backend.address.toText(&text), backend.host_name,
                    backend.weight, backend.max_connections,       backend.max_pending,
                });
            }
            try w.writeAll("    }) catch unreachable;\n");
        } else if (comptime std.mem.eql(u8, name, "trusted_proxies_buffer")) {
            for (field[0..value.trusted_proxies_count]) |*cidr| {
                try w.print("    {s}.addTrustedProxy(.{{ .family = {d}, .bytes = .{any}, " ++
                    ".prefix_bits = {d} }}) catch unreachable;\n", .{ prefix, cidr.family, cidr.bytes, cidr.prefix_bits });
            }
        } else if (comptime std.mem.eql(u8, name, "resolvers_buffer")) {
            // The baked configuration is the demo's: its backends are addresses.
            if (value.resolvers_count != 0) return error.Unsupported;
        } else if (comptime std.mem.endsWith(u8, name, "_buffer")) {
            // Pools, listeners, routes: the ones in use, each set field by field over zeroes
            // (the `_count` field that follows says how many).
            const count = @field(value, name[0 .. name.len - "_buffer".len] ++ "_count");
            for (field[0..count], 0..) |*element, i| {
                var element_buffer: [path_bytes_max]u8 = undefined;
                const element_path = std.fmt.bufPrint(&element_buffer, "{s}[{d}]", .{ path, i }) catch unreachable;
                try w.print("    {s} = @import(\"std\").mem.zeroes(@TypeOf({s}[0]));\n", .{ element_path, path });
                try emitFields(w, element_path, @TypeOf(element.*), element);
            }
        } else if (comptime std.mem.eql(u8, name, "backends_count") or
            std.mem.eql(u8, name, "trusted_proxies_count") or std.mem.eql(u8, name, "resolvers_count"))
        {
            // Counted by setBackends and addTrustedProxy.
        } else {
            try emitValue(w, path, @TypeOf(field.*), field);
        }
    }
}

fn emitValue(w: *std.Io.Writer, path: []const u8, comptime T: type, value: *const T) !void {
    if (T == Address) {
        var text: [Address.text_bytes_max]u8 = undefined;
        return w.print("    {s} = Config.Address.parse(\"{s}\") catch unreachable;\n", .{ path, value.toText(&text) });
    }
    switch (@typeInfo(T)) {
        .int, .bool => try w.print("    {s} = {any};\n", .{ path, value.* }),
        .optional => |info| if (value.*) |*inner| {
            try emitValue(w, path, info.child, inner);
        } else {
            try w.print("    {s} = null;\n", .{path});
        },
        .@"enum" => if (std.zig.isValidId(@tagName(value.*))) {
            try w.print("    {s} = .{s};\n", .{ path, @tagName(value.*) });
        } else {
            try w.print("    {s} = .@\"{s}\";\n", .{ path, @tagName(value.*) }); // `.@"1.2"`
        },
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
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var config: Config = .{};
    config.workers_count = 3;
    const pool = config.quickPool().?;
    pool.strategy = .hash;
    pool.hash_on = .header;
    pool.hash_name = "X-\"User\"";
    pool.outlier.on.status_5xx = true;
    try pool.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.5:9000"), .weight = 3 });
    try config.addTrustedProxy(try @import("Cidr.zig").parse("10.0.0.0/8"));
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try emit(&out.writer, "t.zon", &config);
    const text = out.written();
    const expected = [_][]const u8{
        "c.workers_count = 3;",
        "c.pools_buffer[0].strategy = .hash;",
        "c.pools_buffer[0].hash_name = \"X-\\\"User\\\"\";",
        "c.pools_buffer[0].setBackends(&[_]Config.Backend{",
        "        .{ .address = Config.Address.parse(\"10.0.0.5:9000\") catch unreachable, .host_name = \"\", .weight = 3,",
        "c.addTrustedProxy(.{ .family = 2,",
        "c.pools_buffer[0].outlier.on = @bitCast(@as(u8, 15));",
    };
    for (expected) |line| {
        if (std.mem.indexOf(u8, text, line) == null) {
            std.debug.print("missing: {s}\nin:\n{s}\n", .{ line, text });
            return error.TestUnexpectedResult;
        }
    }
}

test "bake: pools, listeners and routes are written element by element" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var config: Config = .{};
    try config.addListener(.{ .name = "public", .address = try Address.parse("0.0.0.0:8080") });
    var internal_tls: Config.Tls = .{ .min_version = .@"1.3" };
    try internal_tls.addCertificate(.{ .cert = "site.pem", .key = "site.key" });
    try config.addListener(.{ .name = "internal", .address = try Address.parse("10.0.0.1:8080"), .tls = internal_tls });
    const api = try config.addPool(.{ .name = "api" });
    try api.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.5:9000") });
    const static = try config.addPool(.{ .name = "static" });
    try static.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.7:80"), .weight = 2 });
    try config.addRoute(.{
        .host = "*.example.com",
        .path_prefix = "/v1/",
        .methods = Config.methodBit(.get) | Config.methodBit(.head),
        .pool = 1,
    });
    try config.addRoute(.{
        .name = "ping",
        .listeners = 0b10,
        .action = .respond,
        .content_type = "text/plain",
        .headers_text = "Cache-Control: no-store\r\nX-Note: say \"hi\"\r\n",
        .body = "pong\n",
    });
    try config.addRoute(.{ .action = .redirect, .location = "https://example.com", .status = 301, .keep_path = true });
    try config.validate();

    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try emit(&out.writer, "t.zon", &config);
    const text = out.written();
    const expected = [_][]const u8{
        "c.listeners_buffer[1] = @import(\"std\").mem.zeroes(@TypeOf(c.listeners_buffer[0]));",
        "c.listeners_buffer[1].name = \"internal\";",
        "c.listeners_buffer[1].address = Config.Address.parse(\"10.0.0.1:8080\") catch unreachable;",
        "c.listeners_buffer[1].tls.certificates_buffer[0].cert = \"site.pem\";",
        "c.listeners_buffer[1].tls.certificates_buffer[0].key = \"site.key\";",
        "c.listeners_buffer[1].tls.certificates_count = 1;",
        "c.listeners_buffer[1].tls.min_version = .@\"1.3\";",
        "c.listeners_count = 2;",
        "c.pools_buffer[1].name = \"static\";",
        "c.pools_buffer[1].setBackends(&[_]Config.Backend{",
        "        .{ .address = Config.Address.parse(\"10.0.0.7:80\") catch unreachable, .host_name = \"\", .weight = 2,",
        "c.pools_count = 2;",
        "c.routes_buffer[0].host = \"*.example.com\";",
        "c.routes_buffer[0].methods = 3;",
        "c.routes_buffer[0].action = .pool;",
        "c.routes_buffer[0].pool = 1;",
        "c.routes_buffer[1].listeners = 2;",
        "c.routes_buffer[1].action = .respond;",
        "c.routes_buffer[1].headers_text = \"Cache-Control: no-store\\r\\nX-Note: say \\\"hi\\\"\\r\\n\";",
        "c.routes_buffer[1].body = \"pong\\n\";",
        "c.routes_buffer[2].action = .redirect;",
        "c.routes_buffer[2].location = \"https://example.com\";",
        "c.routes_buffer[2].status = 301;",
        "c.routes_buffer[2].keep_path = true;",
        "c.routes_count = 3;",
    };
    for (expected) |line| {
        if (std.mem.indexOf(u8, text, line) == null) {
            std.debug.print("missing: {s}\nin:\n{s}\n", .{ line, text });
            return error.TestUnexpectedResult;
        }
    }
}

test "bake: a respond body larger than any fixed buffer is written whole" {
    var test_arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer test_arena.deinit();
    var config: Config = .{};
    try config.quickPool().?.addBackend(test_arena.allocator(), .{ .address = try Address.parse("10.0.0.5:9000") });
    const body: [100 * 1024]u8 = @splat('"');
    try config.addRoute(.{ .action = .respond, .body = &body });
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try emit(&out.writer, "t.zon", &config);
    const text = out.written();
    const assignment = "c.routes_buffer[0].body = \"";
    const start = std.mem.indexOf(u8, text, assignment).?;
    const end = std.mem.indexOfScalarPos(u8, text, start, '\n').?;
    // Every quote escaped: twice the body between the assignment's quotes.
    try std.testing.expectEqual(assignment.len + 2 * body.len + "\";".len, end - start);
}
