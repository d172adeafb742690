//! The one entry point for unit tests. `tools/check_test_entry.sh` (run by `make test`) fails
//! when a file under src/ that has tests is not reached from here, so none silently drops out.
const std = @import("std");

pub const files = .{
    @import("stdx/Address.zig"),
    @import("stdx/BufferPool.zig"),
    @import("stdx/StaticAllocator.zig"),
    @import("stdx/sys.zig"),
    @import("stdx/mask.zig"),
    @import("config/Config.zig"),
    @import("config/Cidr.zig"),
    @import("config/cli.zig"),
    @import("config/units.zig"),
    @import("config/tree.zig"),
    @import("config/zon.zig"),
    @import("config/json.zig"),
    @import("config/file.zig"),
    @import("config/bake.zig"),
    @import("balance/Balancer.zig"),
    @import("balance/Maglev.zig"),
    @import("health/Health.zig"),
    @import("health/Checker.zig"),
    @import("http/http.zig"),
    @import("metrics/Histogram.zig"),
    @import("metrics/Prometheus.zig"),
    @import("metrics/Json.zig"),
    @import("metrics/Snapshot.zig"),
    @import("loop/loop.zig"),
    @import("proxy/rewrite.zig"),
    @import("proxy/Router.zig"),
    @import("proxy/local.zig"),
    @import("proxy/Generation.zig"),
    @import("runtime/PidFile.zig"),
    @import("runtime/generations.zig"),
    @import("proxy/failure.zig"),
    @import("proxy/Session.zig"),
    @import("proxy/Proxy.zig"),
    @import("proxy/RetryBudget.zig"),
    @import("proxy/affinity.zig"),
    @import("upstream/Pool.zig"),
    @import("upstream/Shared.zig"),
    @import("runtime/Worker.zig"),
    @import("runtime/control.zig"),
    @import("runtime/Admin.zig"),
    @import("runtime/InitTrace.zig"),
    @import("proxy/AccessLog.zig"),
    @import("demo/Backend.zig"),
    @import("js/js.zig"),
};

test {
    std.testing.refAllDecls(@This());
    inline for (files) |file| std.testing.refAllDecls(file);
}
