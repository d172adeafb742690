//! The event loop namespace: `Loop` (io_uring or epoll behind one completion-based API), the
//! caller-owned `Completion`, `Socket`, `Timer` and `TimerQueue`, and nothing that allocates.
//! Start with the doc comment of Loop.zig.
pub const Loop = @import("Loop.zig");
pub const Completion = @import("Completion.zig");
pub const Socket = @import("Socket.zig");
pub const Timer = @import("Timer.zig");
pub const TimerQueue = @import("TimerQueue.zig");
pub const Sim = @import("Sim.zig");
pub const PollError = Loop.PollError;

test {
    _ = @import("Loop.zig");
    _ = @import("Completion.zig");
    _ = @import("Socket.zig");
    _ = @import("Timer.zig");
    _ = @import("TimerQueue.zig");
    _ = @import("Uring.zig");
    _ = @import("Epoll.zig");
    _ = @import("Sim.zig");
    _ = @import("backends_test.zig");
    _ = @import("../stdx/sys.zig");
}
