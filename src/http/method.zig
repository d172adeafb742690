//! The request method (RFC 9110 §9), recognised by fixed-width integer comparison.
//!
//! Methods are case-sensitive (RFC 9110 §9.1), so `get` is not GET: it parses as `.other` and
//! is forwarded as the text the client sent. The common methods are matched by loading the
//! whole method into one integer and comparing it with comptime constants: one length switch
//! and at most two compares, no byte loop.

const std = @import("std");
const assert = std.debug.assert;

pub const Method = enum(u8) {
    get,
    head,
    post,
    put,
    delete,
    connect,
    options,
    trace,
    patch,
    /// Any other token; `Head.method_text` holds it.
    other,

    /// The method that `name` names, or `.other`. `name` is the method token as received.
    pub fn parse(name: []const u8) Method {
        switch (name.len) {
            3 => {
                const w = std.mem.readInt(u24, name[0..3], .little);
                if (w == word(u24, "GET")) return .get;
                if (w == word(u24, "PUT")) return .put;
            },
            4 => {
                const w = std.mem.readInt(u32, name[0..4], .little);
                if (w == word(u32, "HEAD")) return .head;
                if (w == word(u32, "POST")) return .post;
            },
            5 => {
                const w = std.mem.readInt(u40, name[0..5], .little);
                if (w == word(u40, "PATCH")) return .patch;
                if (w == word(u40, "TRACE")) return .trace;
            },
            6 => {
                const w = std.mem.readInt(u48, name[0..6], .little);
                if (w == word(u48, "DELETE")) return .delete;
            },
            7 => {
                const w = std.mem.readInt(u56, name[0..7], .little);
                if (w == word(u56, "CONNECT")) return .connect;
                if (w == word(u56, "OPTIONS")) return .options;
            },
            else => {},
        }
        return .other;
    }

    /// RFC 9110 §9.2.1: the method is read-only by definition. Unknown methods are not.
    pub fn isSafe(m: Method) bool {
        return switch (m) {
            .get, .head, .options, .trace => true,
            .post, .put, .delete, .connect, .patch, .other => false,
        };
    }

    /// RFC 9110 §9.2.2: repeating the request has the same effect as sending it once, so a
    /// request that failed before a response began may be retried on another upstream.
    pub fn isIdempotent(m: Method) bool {
        return switch (m) {
            .get, .head, .options, .trace, .put, .delete => true,
            .post, .connect, .patch, .other => false,
        };
    }

    /// The canonical text of a known method.
    pub fn text(m: Method) []const u8 {
        assert(m != .other);
        return switch (m) {
            .get => "GET",
            .head => "HEAD",
            .post => "POST",
            .put => "PUT",
            .delete => "DELETE",
            .connect => "CONNECT",
            .options => "OPTIONS",
            .trace => "TRACE",
            .patch => "PATCH",
            .other => unreachable,
        };
    }

    fn word(comptime T: type, comptime s: []const u8) T {
        comptime assert(@typeInfo(T).int.bits == s.len * 8);
        return std.mem.readInt(T, s[0..s.len], .little);
    }
};

test "method: every known method round-trips through its text" {
    for (std.enums.values(Method)) |m| {
        if (m == .other) continue;
        try std.testing.expectEqual(m, Method.parse(m.text()));
    }
}

test "method: matching is case-sensitive and exact-length" {
    try std.testing.expectEqual(Method.other, Method.parse("get"));
    try std.testing.expectEqual(Method.other, Method.parse("Get"));
    try std.testing.expectEqual(Method.other, Method.parse("GETS"));
    try std.testing.expectEqual(Method.other, Method.parse("GE"));
    try std.testing.expectEqual(Method.other, Method.parse(""));
    try std.testing.expectEqual(Method.other, Method.parse("PROPFIND"));
    try std.testing.expectEqual(Method.other, Method.parse("CONNECt"));
}

test "method: safe methods are idempotent" {
    for (std.enums.values(Method)) |m| {
        if (m.isSafe()) try std.testing.expect(m.isIdempotent());
    }
    try std.testing.expect(!Method.post.isIdempotent());
    try std.testing.expect(Method.put.isIdempotent() and !Method.put.isSafe());
    try std.testing.expect(!Method.other.isSafe() and !Method.other.isIdempotent());
}
