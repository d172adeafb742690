//! The DNS namespace: `message` (queries and strict reply parsing on the wire). Our own small
//! resolver rather than getaddrinfo; see docs/ARCHITECTURE.md "DNS (src/dns/)".
pub const message = @import("message.zig");

test {
    _ = @import("message.zig");
    _ = @import("message_test.zig");
}
