//! The DNS namespace: `message` (queries and strict reply parsing on the wire), `ResolvConf`
//! and `Hosts` (the system's files), `Resolver` (asynchronous, on a Loop), `Watch` (names kept
//! resolved, TTLs honoured). Our own small resolver rather than getaddrinfo; see
//! docs/ARCHITECTURE.md "DNS (src/dns/)".
pub const message = @import("message.zig");
pub const ResolvConf = @import("ResolvConf.zig");
pub const Hosts = @import("Hosts.zig");
pub const Resolver = @import("Resolver.zig");
pub const Watch = @import("Watch.zig");
pub const Diagnostic = @import("text_file.zig").Diagnostic;

test {
    _ = @import("message.zig");
    _ = @import("message_test.zig");
    _ = @import("fuzz.zig");
    _ = @import("text_file.zig");
    _ = @import("ResolvConf.zig");
    _ = @import("Hosts.zig");
    _ = @import("Resolver.zig");
    _ = @import("Resolver_test.zig");
    _ = @import("Watch.zig");
    _ = @import("Watch_test.zig");
}
