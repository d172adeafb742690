//! HTTP/2 for sluice: nghttp2 behind one narrow module. Nothing outside src/h2/ names an
//! nghttp2 symbol or imports its API (the `nghttp2` module, translated from its header by
//! build.zig: tools/check_layers.sh holds other folders to that); what crosses the border are
//! Zig types (a session driven with bytes, events as a tagged union, error sets, counters).
//!
//! The one decision a reader must know: nghttp2 never sees a socket or the general heap. A
//! session transforms bytes through caller-owned slices (`receive`, `send`), so the connection
//! keeps its socket, its buffers and its event loop; its memory is a worker's bounded pool.
//!
//!   ServerSession        one client connection: requests in as events, responses out
//!   ClientSession        one backend connection: requests out, responses in as events
//!   ServerSession.Setup  what every session shares: nghttp2's callbacks, options and `Limits`
//!   memory.Pool          a worker's bounded memory for nghttp2
const std = @import("std");
const c = @import("nghttp2");

pub const memory = @import("memory.zig");
pub const ServerSession = @import("ServerSession.zig");
pub const ClientSession = @import("ClientSession.zig");

/// The nghttp2 version linked ("1.68.1").
pub fn libraryVersion() []const u8 {
    const info = c.nghttp2_version(0);
    return std.mem.span(info.*.version_str);
}

test {
    _ = @import("ServerSession_test.zig");
    _ = @import("ClientSession_test.zig");
    _ = @import("HeaderBlock.zig");
}

test "h2: the linked nghttp2 is the version its header describes" {
    try std.testing.expectEqualStrings(c.NGHTTP2_VERSION, libraryVersion());
    try std.testing.expect(c.NGHTTP2_VERSION_NUM >= 0x014400); // 1.68: CONTINUATION and glitch limits
}
