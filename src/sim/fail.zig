//! How the simulator reports a broken invariant: a panic whose message says which one, after
//! which the panic handler of `main.zig` prints the seed that replays it.
const std = @import("std");

pub fn invariant(comptime format: []const u8, args: anytype) noreturn {
    std.debug.panic("sim: invariant violated: " ++ format, args);
}
