//! The HTTP/1.1 codec: request and response head parsers and a chunked-body framing scanner;
//! and the protocol-neutral request and sluice-made response the proxy reads and writes.
//!
//! Everything here is allocation-free and zero-copy: the caller owns the buffers, sized at
//! start-up, and parsed heads are slices into them. The codec only finds where messages end
//! and whether they are well-formed; bodies are forwarded raw, never re-encoded. It refuses
//! rather than repairs anything a stricter or looser upstream could frame differently.

const std = @import("std");

pub const chars = @import("chars.zig");
pub const field_values = @import("field_values.zig");
pub const Reject = @import("reject.zig").Reject;
pub const Method = @import("method.zig").Method;
pub const Version = @import("message.zig").Version;
pub const Header = @import("message.zig").Header;
pub const Body = @import("message.zig").Body;
pub const TargetForm = @import("message.zig").TargetForm;
pub const Limits = @import("message.zig").Limits;
pub const Request = @import("Request.zig");
pub const LocalResponse = @import("LocalResponse.zig");
pub const RequestParser = @import("RequestParser.zig");
pub const ResponseParser = @import("ResponseParser.zig");
pub const ChunkedDecoder = @import("ChunkedDecoder.zig");
pub const path = @import("path.zig");

test {
    _ = @import("chars.zig");
    _ = @import("reject.zig");
    _ = @import("method.zig");
    _ = @import("message.zig");
    _ = @import("field_values.zig");
    _ = @import("HeadScanner.zig");
    _ = @import("Request.zig");
    _ = @import("LocalResponse.zig");
    _ = @import("RequestParser.zig");
    _ = @import("ResponseParser.zig");
    _ = @import("ChunkedDecoder.zig");
    _ = @import("path.zig");
    _ = @import("fuzz.zig");
    _ = @import("bench.zig");
}

test "http: every file of the codec is imported by the test block above" {
    // Run from the repository root (as `zig build test` and `zig test src/http/http.zig` are);
    // from anywhere else there is nothing to check against.
    const io = std.testing.io;
    var dir = std.Io.Dir.cwd().openDir(io, "src/http", .{ .iterate = true }) catch |err|
        switch (err) {
            error.FileNotFound => return error.SkipZigTest,
            else => return err,
        };
    defer dir.close(io);
    const source = @embedFile("http.zig");
    const test_block = source[std.mem.find(u8, source, "\ntest {").?..];
    var files_count: u32 = 0;
    var it = dir.iterate();
    while (try it.next(io)) |entry| {
        if (entry.kind != .file or !std.mem.endsWith(u8, entry.name, ".zig")) continue;
        if (std.mem.eql(u8, entry.name, "http.zig")) continue;
        files_count += 1;
        var line_buffer: [128]u8 = undefined;
        const line = try std.fmt.bufPrint(&line_buffer, "_ = @import(\"{s}\");", .{entry.name});
        if (std.mem.find(u8, test_block, line) == null) {
            std.debug.print("src/http/{s} is not imported by the test block of http.zig\n", .{
                entry.name,
            });
            return error.TestFileNotIncluded;
        }
    }
    try std.testing.expect(files_count >= 10);
}
