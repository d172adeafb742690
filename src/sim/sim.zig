//! The deterministic simulator of the data plane (`zig build sim`, see src/sim_main.zig and
//! docs/ARCHITECTURE.md "Tests"): the real proxy on the simulated kernel of loop/Sim.zig, with
//! simulated clients and backends, faults, and invariants checked after every step.
pub const Simulator = @import("Simulator.zig");
pub const Options = @import("Options.zig");
pub const Ledger = @import("Ledger.zig");
pub const Generations = @import("Generations.zig");
pub const peer_http = @import("peer_http.zig");

test "simulator: a few short seeds pass" {
    // The real pass is `zig build sim` (ReleaseSafe, thousands of seeds); this keeps the
    // simulator compiling and running under the unit tests.
    const std = @import("std");
    const world = try Simulator.create(std.heap.page_allocator);
    defer world.destroy(std.heap.page_allocator);
    for (0..4) |seed| _ = world.run(seed, 300);
}

test {
    _ = @import("peer_http.zig");
}
