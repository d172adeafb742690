//! The build-time handler compiler (`zig build -Dhandler=app.js`): compiles a handler's file
//! with the engine's compiler and sluice's `Response` host, and writes the bytecode image that
//! build.zig embeds in the binary. A mistake fails the build as `FILE:LINE:COL: message`, the
//! same line `sluice check` and `--handler-file` print. The image is the one a start-up
//! compile makes; the binary loads it with `Engine.Module.fromImage`, which verifies it again.
const std = @import("std");

const js = @import("../js/js.zig");
const host = @import("host.zig");

pub fn main(init: std.process.Init) !u8 {
    const arena = init.arena.allocator();
    const args = try init.minimal.args.toSlice(arena);
    if (args.len != 3) {
        std.debug.print("usage: handler-compile FILE.js OUTPUT\n", .{});
        return 2;
    }
    const path = args[1];
    const source = std.Io.Dir.cwd().readFileAlloc(init.io, path, arena, .limited(4 * 1024 * 1024)) catch |err| {
        std.debug.print("{s}: cannot read the handler: {t}\n", .{ path, err });
        return 1;
    };
    var names: [8][]const u8 = undefined;
    var failure: js.Compiler.Failure = undefined;
    const image = js.Engine.compileImage(arena, source, .{
        .source_name = std.fs.path.basename(path),
        .host_globals = host.host.globalNames(&names),
    }, &failure) catch |err| switch (err) {
        error.SyntaxError => {
            std.debug.print("{s}:{d}:{d}: {s}\n", .{ path, failure.line, failure.column, failure.message });
            return 1;
        },
        error.OutOfMemory => return err,
    };
    try std.Io.Dir.cwd().writeFile(init.io, .{ .sub_path = args[2], .data = image });
    return 0;
}
