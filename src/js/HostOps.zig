//! A run's host operations in flight: promises that only the host can settle, such as a
//! handler's `fetch` (handler/fetch.zig). Timers are the other kind of operation a run may
//! wait on (builtins/timers.zig), but those the engine settles itself when the host says the
//! time has come; these the host settles with a value it builds (`Engine.settleHostOp`).
//!
//! Decision: a fixed table, not a list in the run's heap. Its size bounds what a request may
//! have in flight at once (`Vm.Limits.host_ops_max`, at most `ops_max`), the host can name an
//! operation by its index when its answer comes back, and the table is a value the engine
//! keeps in a suspended request's slot (`Vm.Suspension`) like the run's other state: nothing
//! is allocated per operation but what the native builds in the run's heap.
const std = @import("std");
const assert = std.debug.assert;

const Value = @import("value.zig").Value;
const object = @import("object.zig");

const HostOps = @This();

ops: [ops_max]Op = @splat(.{}),
/// Operations requested or started, not yet settled.
in_flight: u8 = 0,

/// The most operations one run may have in flight, whatever the limit asks: a handler's 16
/// fetches and the read of its request body (handler/request_body.zig).
pub const ops_max = 17;

pub const Op = struct {
    state: State = .free,
    /// What the script waits on: settled by `Engine.settleHostOp`.
    promise: ?*object.Promise = null,
    /// What the native recorded for the host to read (a fetch's request), in the run's heap.
    request: Value = Value.undefined_value,

    pub const State = enum {
        free,
        /// The native made it; the host has not taken it yet (`takeRequested`).
        requested,
        /// The host is working on it.
        started,
    };
};

/// Records an operation: its index, or null when `limit` are in flight already.
pub fn begin(h: *HostOps, limit: u8, promise: *object.Promise, request: Value) ?u8 {
    assert(limit <= ops_max);
    if (h.in_flight >= limit) return null;
    const index: u8 = for (h.ops, 0..) |op, i| {
        if (op.state == .free) break @intCast(i);
    } else unreachable; // Fewer than `ops_max` are in flight.
    h.ops[index] = .{ .state = .requested, .promise = promise, .request = request };
    h.in_flight += 1;
    return index;
}

/// The next operation the host has not taken yet, now started.
pub fn takeRequested(h: *HostOps) ?u8 {
    for (&h.ops, 0..) |*op, i| if (op.state == .requested) {
        op.state = .started;
        return @intCast(i);
    };
    return null;
}

/// The operation's promise, its slot free again.
pub fn finish(h: *HostOps, index: u8) *object.Promise {
    const op = &h.ops[index];
    assert(op.state != .free);
    assert(h.in_flight > 0);
    const promise = op.promise.?;
    op.* = .{};
    h.in_flight -= 1;
    return promise;
}

pub fn pending(h: *const HostOps) bool {
    return h.in_flight > 0;
}

test "HostOps: at most the limit in flight, indices reused once settled" {
    var promises: [3]object.Promise = undefined;
    var h: HostOps = .{};
    try std.testing.expectEqual(@as(?u8, 0), h.begin(2, &promises[0], Value.undefined_value));
    try std.testing.expectEqual(@as(?u8, 1), h.begin(2, &promises[1], Value.undefined_value));
    try std.testing.expectEqual(@as(?u8, null), h.begin(2, &promises[2], Value.undefined_value));
    try std.testing.expectEqual(@as(?u8, 0), h.takeRequested());
    try std.testing.expectEqual(@as(?u8, 1), h.takeRequested());
    try std.testing.expectEqual(@as(?u8, null), h.takeRequested());
    try std.testing.expectEqual(&promises[0], h.finish(0));
    try std.testing.expect(h.pending());
    try std.testing.expectEqual(@as(?u8, 0), h.begin(2, &promises[2], Value.undefined_value));
    _ = h.finish(1);
    _ = h.finish(0);
    try std.testing.expect(!h.pending());
}
