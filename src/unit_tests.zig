//! The one entry point for unit tests. `tools/check_test_entry.sh` (run by `make test`) fails
//! when a file under src/ that has tests is not reached from here, so none silently drops out.
const std = @import("std");

pub const files = .{
    @import("stdx/Address.zig"),
    @import("stdx/BufferPool.zig"),
    @import("stdx/StaticAllocator.zig"),
    @import("stdx/sys.zig"),
    @import("config/Config.zig"),
    @import("config/Cidr.zig"),
    @import("config/cli.zig"),
    @import("config/units.zig"),
    @import("balance/RoundRobin.zig"),
    @import("http/http.zig"),
    @import("loop/loop.zig"),
    @import("proxy/rewrite.zig"),
    @import("proxy/failure.zig"),
    @import("proxy/Session.zig"),
    @import("proxy/Proxy.zig"),
    @import("upstream/Pool.zig"),
    @import("runtime/Worker.zig"),
    @import("runtime/control.zig"),
    @import("demo/Backend.zig"),
};

test {
    std.testing.refAllDecls(@This());
    inline for (files) |file| std.testing.refAllDecls(file);
}
