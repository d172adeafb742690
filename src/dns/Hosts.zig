//! /etc/hosts: lines of an IP address then names (the canonical name and aliases), `#` to the
//! end of a line a comment (hosts(5)). The resolver looks here before it asks a server, as
//! glibc does with `hosts: files dns` and musl always does.
//!
//! The decision: no table is built. The file's bytes stay in the caller's buffer (bounded by
//! `file_bytes_max`), every line is checked once when loaded, and a lookup scans them. A lookup
//! is rare (a name's re-resolution every few seconds on the control thread) and a scan of a
//! few kilobytes is cheaper than the memory and the limits a table would need.
const Hosts = @This();

const std = @import("std");
const assert = std.debug.assert;
const text_file = @import("text_file.zig");
const message = @import("message.zig");
const ResolvConf = @import("ResolvConf.zig");

/// The file's bytes, owned by the caller.
bytes: []const u8,

pub const path_default = "/etc/hosts";
/// A hosts file larger than this is refused (an ad-blocking list of 100,000 names is; a
/// container's or a server's is a few hundred bytes).
pub const file_bytes_max = 64 * 1024;

pub const Error = error{Invalid} || text_file.ReadError;

pub fn load(path: []const u8, buffer: *[file_bytes_max]u8, diagnostic: *text_file.Diagnostic) Error!Hosts {
    const bytes = try text_file.read(path, buffer, diagnostic);
    return parse(bytes, path, diagnostic);
}

/// Checks every line: an IP address (not scoped) and at least one valid name.
pub fn parse(bytes: []const u8, path: []const u8, diagnostic: *text_file.Diagnostic) error{Invalid}!Hosts {
    diagnostic.path = path;
    var lines: text_file.Lines = .init(bytes, "#");
    var scratch: [message.name_wire_bytes_max]u8 = undefined;
    while (lines.next()) |line| {
        var words = text_file.fields(line);
        const ip_text = words.next() orelse continue;
        if (ResolvConf.parseIp(ip_text, 0) == null) {
            diagnostic.set(lines.number, "\"{s}\" is not an IP address", .{ip_text});
            return error.Invalid;
        }
        var names: u32 = 0;
        while (words.next()) |name| : (names += 1) {
            _ = message.encodeName(&scratch, name) catch {
                diagnostic.set(lines.number, "\"{s}\" is not a valid name", .{name});
                return error.Invalid;
            };
        }
        if (names == 0) {
            diagnostic.set(lines.number, "{s} without a name", .{ip_text});
            return error.Invalid;
        }
    }
    return .{ .bytes = bytes };
}

/// Fills `reply` with the addresses of `kind` listed for `name`, in file order, and returns
/// whether there was any. SRV is not a hosts file's business: always false.
pub fn lookup(hosts: *const Hosts, name: []const u8, kind: message.Kind, reply: *message.Reply) bool {
    reply.* = .{};
    if (kind == .srv) return false;
    var lines: text_file.Lines = .init(hosts.bytes, "#");
    while (lines.next()) |line| {
        var words = text_file.fields(line);
        const ip_text = words.next() orelse continue;
        const matches = while (words.next()) |word| {
            if (message.nameEql(word, name)) break true;
        } else false;
        if (!matches) continue;
        const address = ResolvConf.parseIp(ip_text, 0).?; // Checked by parse.
        const record: message.Record = switch (address.family()) {
            std.os.linux.AF.INET => .{ .a = @bitCast(address.in.addr) },
            else => .{ .aaaa = address.in6.addr },
        };
        if (std.meta.activeTag(record) != kind) continue;
        if (reply.records_count == message.records_max) {
            reply.records_dropped += 1;
            continue;
        }
        reply.records[reply.records_count] = record;
        reply.records_count += 1;
    }
    assert(reply.records_count <= message.records_max);
    return reply.records_count > 0;
}

const testing = std.testing;

test "hosts: names and aliases map to their addresses, by family, without regard to case" {
    const bytes =
        \\127.0.0.1   localhost
        \\::1         localhost ip6-localhost # loopback
        \\10.0.0.5    api.internal API
        \\10.0.0.6    api.internal
        \\
        \\# a comment line
    ;
    var diagnostic: text_file.Diagnostic = .{};
    const hosts = try parse(bytes, "hosts", &diagnostic);
    var reply: message.Reply = undefined;
    try testing.expect(hosts.lookup("api", .a, &reply));
    try testing.expectEqual([4]u8{ 10, 0, 0, 5 }, reply.records[0].a);
    try testing.expect(hosts.lookup("API.internal.", .a, &reply));
    try testing.expectEqual(@as(u8, 2), reply.records_count);
    try testing.expectEqual([4]u8{ 10, 0, 0, 6 }, reply.records[1].a);
    try testing.expect(hosts.lookup("localhost", .aaaa, &reply));
    try testing.expectEqual(@as(u8, 1), reply.records_count);
    try testing.expectEqual(@as(u8, 1), reply.records[0].aaaa[15]);
    try testing.expect(!hosts.lookup("ip6-localhost", .a, &reply));
    try testing.expect(!hosts.lookup("missing", .a, &reply));
    try testing.expect(!hosts.lookup("localhost", .srv, &reply));
}

test "hosts: mistakes name the file and line" {
    try text_file.expectMistakes(parse, &.{
        .{ .bytes = "10.0.0.300 a\n", .line = 1, .message = "\"10.0.0.300\" is not an IP address" },
        .{ .bytes = "# x\n10.0.0.1\n", .line = 2, .message = "10.0.0.1 without a name" },
        .{ .bytes = "10.0.0.1 a..b\n", .line = 1, .message = "\"a..b\" is not a valid name" },
    });
}

test "hosts: the system's file loads" {
    var buffer: [file_bytes_max]u8 = undefined;
    var diagnostic: text_file.Diagnostic = .{};
    // The test machine's /etc/hosts is whatever it is: only a refusal with a reason is allowed.
    if (load(path_default, &buffer, &diagnostic)) |_| {} else |_| {
        try testing.expect(diagnostic.message().len > 0);
    }
}
