//! The bytecode image: a Program as bytes, for embedding at build time and loading at start.
//!
//! Layout (little-endian): a 32-byte header (magic "SLUICEJS", format version, flags, body
//! length, CRC-32 of the body), then the body: counts, the source name, the source text (for
//! `String(f)`), number constants,
//! string constants, exports, host global names, and each function (its fixed fields, code,
//! captures, positions and site names; its fixed fields include its source text's range).
//!
//! `load` never trusts its input: every length is checked against what remains, every
//! count against a limit, the checksum and version first; then the verifier (verify.zig)
//! checks the code itself. An image that passes both cannot make the interpreter read or
//! write outside what it was given.
const std = @import("std");
const assert = std.debug.assert;

const Program = @import("Program.zig");
const bytecode = @import("bytecode.zig");
const verify = @import("verify.zig");

pub const magic = "SLUICEJS";
pub const version: u32 = 12;
const header_bytes = 32;

/// Bounds on what an image may declare, checked before anything is allocated.
pub const limits = struct {
    pub const functions_max = 0xFFF0;
    pub const constants_max = 0xFFF0;
    pub const code_bytes_max = 1 << 24;
    pub const string_bytes_max = 1 << 28;
    pub const source_bytes_max = 1 << 28;
    pub const positions_max = 1 << 24;
    pub const image_bytes_max = 1 << 30;
};

pub const Problem = struct {
    message: []const u8 = "",
};

pub const LoadError = error{ InvalidImage, OutOfMemory };

// ---------------------------------------------------------------------------------------
// Writing.

const Out = struct {
    list: std.ArrayList(u8) = .empty,
    gpa: std.mem.Allocator,

    fn bytes(o: *Out, b: []const u8) !void {
        try o.list.appendSlice(o.gpa, b);
    }

    fn int(o: *Out, comptime T: type, v: T) !void {
        var buf: [@sizeOf(T)]u8 = undefined;
        std.mem.writeInt(T, &buf, v, .little);
        try o.list.appendSlice(o.gpa, &buf);
    }
};

pub fn write(gpa: std.mem.Allocator, program: *const Program) error{OutOfMemory}![]u8 {
    var o: Out = .{ .gpa = gpa };
    const zeros: [header_bytes]u8 = @splat(0);
    try o.bytes(&zeros);
    try o.int(u32, @intCast(program.functions.len));
    try o.int(u32, @intCast(program.numbers.len));
    try o.int(u32, @intCast(program.strings.len));
    try o.int(u32, @intCast(program.exports.len));
    try o.int(u32, @intCast(program.host_globals.len));
    try o.int(u32, @intCast(program.source_name.len));
    try o.bytes(program.source_name);
    try o.int(u32, @intCast(program.source.len));
    try o.bytes(program.source);
    for (program.numbers) |x| try o.int(u64, @bitCast(x));
    for (program.strings) |s| {
        try o.int(u8, @intFromBool(s.wide));
        try o.int(u32, @intCast(s.bytes.len));
        try o.bytes(s.bytes);
    }
    for (program.exports) |e| try o.int(u16, e);
    for (program.host_globals) |h| try o.int(u16, h);
    for (program.functions) |f| {
        try o.int(u16, f.name);
        try o.int(u16, f.length);
        try o.int(u16, f.param_count);
        try o.int(u16, f.local_count);
        try o.int(u16, f.stack_max);
        try o.int(u16, f.handler_max);
        try o.int(u8, @intFromBool(f.has_rest));
        try o.int(u8, @backingInt(f.kind));
        try o.int(u16, f.parent);
        try o.int(u32, f.source_start);
        try o.int(u32, f.source_end);
        try o.int(u32, @intCast(f.code.len));
        try o.int(u32, @intCast(f.captures.len));
        try o.int(u32, @intCast(f.positions.len));
        try o.int(u32, @intCast(f.site_names.len));
        try o.bytes(f.code);
        for (f.captures) |c| try o.int(u16, @bitCast(c));
        for (f.positions) |p| {
            try o.int(u32, p.pc);
            try o.int(u32, p.line);
            try o.int(u32, p.column);
        }
        for (f.site_names) |s| {
            try o.int(u32, s.pc);
            try o.int(u16, s.name);
        }
    }
    const all = o.list.items;
    const body = all[header_bytes..];
    @memcpy(all[0..8], magic);
    std.mem.writeInt(u32, all[8..12], version, .little);
    std.mem.writeInt(u32, all[12..16], 0, .little);
    std.mem.writeInt(u32, all[16..20], @intCast(body.len), .little);
    std.mem.writeInt(u32, all[20..24], std.hash.Crc32.hash(body), .little);
    return all;
}

// ---------------------------------------------------------------------------------------
// Loading.

const In = struct {
    bytes: []const u8,
    at: usize = 0,
    problem: *Problem,

    fn fail(in: *In, message: []const u8) LoadError {
        in.problem.message = message;
        return error.InvalidImage;
    }

    fn take(in: *In, n: usize) LoadError![]const u8 {
        if (n > in.bytes.len - in.at) return in.fail("truncated");
        const slice = in.bytes[in.at .. in.at + n];
        in.at += n;
        return slice;
    }

    fn int(in: *In, comptime T: type) LoadError!T {
        const b = try in.take(@sizeOf(T));
        return std.mem.readInt(T, b[0..@sizeOf(T)], .little);
    }

    fn count(in: *In, max: usize) LoadError!usize {
        const n = try in.int(u32);
        if (n > max) return in.fail("a count is over its limit");
        return n;
    }
};

/// Reads and verifies an image. The Program's slices point into `bytes` (code) and into
/// memory from `gpa` (tables, and wide strings, copied to be aligned); both must outlive it.
pub fn load(gpa: std.mem.Allocator, bytes: []const u8, problem: *Problem) LoadError!Program {
    if (bytes.len < header_bytes or bytes.len > limits.image_bytes_max) {
        problem.message = "not an image (size)";
        return error.InvalidImage;
    }
    if (!std.mem.eql(u8, bytes[0..8], magic)) {
        problem.message = "not an image (magic)";
        return error.InvalidImage;
    }
    if (std.mem.readInt(u32, bytes[8..12], .little) != version) {
        problem.message = "image format version not supported";
        return error.InvalidImage;
    }
    const body_len = std.mem.readInt(u32, bytes[16..20], .little);
    if (body_len != bytes.len - header_bytes) {
        problem.message = "image length does not match its header";
        return error.InvalidImage;
    }
    const body = bytes[header_bytes..];
    if (std.hash.Crc32.hash(body) != std.mem.readInt(u32, bytes[20..24], .little)) {
        problem.message = "image checksum does not match";
        return error.InvalidImage;
    }
    var in: In = .{ .bytes = body, .problem = problem };
    const functions_count = try in.count(limits.functions_max);
    const numbers_count = try in.count(limits.constants_max);
    const strings_count = try in.count(limits.constants_max);
    const exports_count = try in.count(limits.constants_max);
    const host_count = try in.count(limits.constants_max);
    const name_len = try in.count(4096);
    if (functions_count == 0) return in.fail("no top-level function");
    const source_name = try in.take(name_len);
    const source_len = try in.count(limits.source_bytes_max);
    const source = try in.take(source_len);

    const numbers = try gpa.alloc(f64, numbers_count);
    for (numbers) |*x| {
        const v: f64 = @bitCast(try in.int(u64));
        // One NaN only: any other bit pattern could be read as a tagged value.
        x.* = if (std.math.isNan(v)) std.math.nan(f64) else v;
    }
    const strings = try gpa.alloc(Program.StringConstant, strings_count);
    var string_bytes: usize = 0;
    for (strings) |*s| {
        const flags = try in.int(u8);
        if (flags > 1) return in.fail("bad string flags");
        const len = try in.count(limits.string_bytes_max);
        string_bytes += len;
        if (string_bytes > limits.string_bytes_max) return in.fail("too many string bytes");
        const raw = try in.take(len);
        const wide = flags == 1;
        if (wide) {
            if (len % 2 != 0) return in.fail("odd wide string");
            const aligned = try gpa.alignedAlloc(u8, .@"2", len);
            @memcpy(aligned, raw);
            s.* = .{ .bytes = aligned, .wide = true };
        } else {
            s.* = .{ .bytes = raw, .wide = false };
        }
    }
    const exports = try gpa.alloc(u16, exports_count);
    for (exports) |*e| e.* = try in.int(u16);
    const host_globals = try gpa.alloc(u16, host_count);
    for (host_globals) |*h| h.* = try in.int(u16);
    const functions = try gpa.alloc(Program.Function, functions_count);
    for (functions) |*f| {
        f.* = try loadFunction(gpa, &in);
        if (f.source_start > f.source_end or f.source_end > source.len) {
            return in.fail("a function's source text is outside the source");
        }
    }
    if (in.at != body.len) return in.fail("trailing bytes");
    const program: Program = .{
        .functions = functions,
        .numbers = numbers,
        .strings = strings,
        .exports = exports,
        .host_globals = host_globals,
        .source_name = source_name,
        .source = source,
    };
    verify.program(gpa, &program, problem) catch |err| switch (err) {
        error.Invalid => return error.InvalidImage,
        error.OutOfMemory => return error.OutOfMemory,
    };
    return program;
}

fn loadFunction(gpa: std.mem.Allocator, in: *In) LoadError!Program.Function {
    const name = try in.int(u16);
    const length = try in.int(u16);
    const param_count = try in.int(u16);
    const local_count = try in.int(u16);
    const stack_max = try in.int(u16);
    const handler_max = try in.int(u16);
    const has_rest = try in.int(u8);
    const kind = std.enums.fromInt(Program.Kind, try in.int(u8)) orelse return in.fail("bad function kind");
    const parent = try in.int(u16);
    const source_start = try in.int(u32);
    const source_end = try in.int(u32);
    if (has_rest > 1) return in.fail("bad function flags");
    const code_len = try in.count(limits.code_bytes_max);
    const captures_len = try in.count(0x7FFF);
    const positions_len = try in.count(limits.positions_max);
    const sites_len = try in.count(limits.positions_max);
    const code = try in.take(code_len);
    const captures = try gpa.alloc(bytecode.Capture, captures_len);
    for (captures) |*c| c.* = @bitCast(try in.int(u16));
    const positions = try gpa.alloc(Program.Position, positions_len);
    for (positions) |*p| p.* = .{ .pc = try in.int(u32), .line = try in.int(u32), .column = try in.int(u32) };
    const sites = try gpa.alloc(Program.SiteName, sites_len);
    for (sites) |*s| s.* = .{ .pc = try in.int(u32), .name = try in.int(u16) };
    return .{
        .name = name,
        .length = length,
        .param_count = param_count,
        .local_count = local_count,
        .stack_max = stack_max,
        .handler_max = handler_max,
        .has_rest = has_rest == 1,
        .kind = kind,
        .parent = parent,
        .code = code,
        .captures = captures,
        .positions = positions,
        .site_names = sites,
        .source_start = source_start,
        .source_end = source_end,
    };
}
