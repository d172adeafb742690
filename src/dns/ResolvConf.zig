//! /etc/resolv.conf as the resolver reads it: nameservers, the search list, and the options
//! ndots, timeout, attempts and edns0. The defaults and limits are those glibc and musl share
//! (glibc resolv/resolv.h: MAXNS 3, MAXDNSRCH 6, RES_TIMEOUT 5, RES_DFLRETRY 2, RES_MAXNDOTS
//! 15, RES_MAXRETRANS 30, RES_MAXRETRY 5; res_init.c: ndots 1, and 127.0.0.1 when no
//! nameserver is given; musl src/network/resolvconf.c: the same defaults, a 256-byte search
//! buffer). Where the two clamp differently we take the lower bound.
//!
//! The decision: keywords and options we do not use (sortlist, rotate, lookup...) are ignored
//! as both libcs ignore them, so a file they accept we accept; but a value we do use that
//! cannot be read (a nameserver that is not an IP address, `ndots:x`) is an error naming the
//! file and line, where the libcs silently drop it.
const ResolvConf = @This();

const std = @import("std");
const assert = std.debug.assert;
const Address = @import("../stdx/Address.zig").Address;
const text_file = @import("text_file.zig");
const message = @import("message.zig");

nameservers: [nameservers_max]Address = undefined,
nameservers_count: u8 = 0,
/// The search list's domains, each followed by one zero byte.
search_bytes: [search_bytes_max]u8 = undefined,
search_bytes_len: u16 = 0,
search_count: u8 = 0,
ndots: u8 = 1,
timeout_s: u8 = 5,
attempts: u8 = 2,
/// `options edns0`: advertise a larger UDP payload (RFC 6891).
edns0: bool = false,

pub const path_default = "/etc/resolv.conf";
pub const nameservers_max = 3;
pub const search_max = 6;
pub const search_bytes_max = 256;
pub const ndots_max = 15;
pub const timeout_s_max = 30;
pub const attempts_max = 5;
/// A resolv.conf larger than this is refused; real ones are a few hundred bytes.
pub const file_bytes_max = 16 * 1024;
pub const port = 53;

pub const Error = error{Invalid} || text_file.ReadError;

/// Reads and parses the file at `path`; `buffer` holds its bytes while parsing.
pub fn load(path: []const u8, buffer: *[file_bytes_max]u8, diagnostic: *text_file.Diagnostic) Error!ResolvConf {
    const bytes = try text_file.read(path, buffer, diagnostic);
    return parse(bytes, path, diagnostic);
}

pub fn parse(bytes: []const u8, path: []const u8, diagnostic: *text_file.Diagnostic) error{Invalid}!ResolvConf {
    diagnostic.path = path;
    var conf: ResolvConf = .{};
    var lines: text_file.Lines = .init(bytes, "#;");
    while (lines.next()) |line| {
        var words = text_file.fields(line);
        const keyword = words.next() orelse continue;
        if (std.mem.eql(u8, keyword, "nameserver")) {
            const text = words.next() orelse return invalid(diagnostic, lines.number, "nameserver without an address", .{});
            const address = parseNameserver(text) orelse
                return invalid(diagnostic, lines.number, "nameserver \"{s}\" is not an IP address", .{text});
            // glibc and musl keep the first three and ignore the rest.
            if (conf.nameservers_count < nameservers_max) {
                conf.nameservers[conf.nameservers_count] = address;
                conf.nameservers_count += 1;
            }
        } else if (std.mem.eql(u8, keyword, "search") or std.mem.eql(u8, keyword, "domain")) {
            // The last search or domain line wins (resolv.conf(5)); domain is a list of one.
            conf.search_bytes_len = 0;
            conf.search_count = 0;
            while (words.next()) |domain| {
                if (std.mem.eql(u8, keyword, "domain") and conf.search_count == 1) break;
                try conf.addSearch(domain, diagnostic, lines.number);
            }
        } else if (std.mem.eql(u8, keyword, "options")) {
            while (words.next()) |option| try conf.setOption(option, diagnostic, lines.number);
        }
    }
    if (conf.nameservers_count == 0) {
        conf.nameservers[0] = Address.initIp4(.{ 127, 0, 0, 1 }, port);
        conf.nameservers_count = 1;
    }
    assert(conf.nameservers_count <= nameservers_max);
    assert(conf.search_count <= search_max);
    return conf;
}

/// The search list's domains in order.
pub fn searchIterator(conf: *const ResolvConf) std.mem.TokenIterator(u8, .scalar) {
    // No domain is empty (addSearch refuses it), so tokens are exactly the domains.
    return std.mem.tokenizeScalar(u8, conf.search_bytes[0..conf.search_bytes_len], 0);
}

pub fn nameserverSlice(conf: *const ResolvConf) []const Address {
    return conf.nameservers[0..conf.nameservers_count];
}

fn addSearch(conf: *ResolvConf, domain_text: []const u8, diagnostic: *text_file.Diagnostic, line: u32) error{Invalid}!void {
    const domain = std.mem.trimEnd(u8, domain_text, ".");
    if (conf.search_count == search_max) return; // glibc ignores domains past the sixth.
    var scratch: [message.name_wire_bytes_max]u8 = undefined;
    _ = message.encodeName(&scratch, domain) catch
        return invalid(diagnostic, line, "search domain \"{s}\" is not a valid name", .{domain_text});
    if (conf.search_bytes_len + domain.len + 1 > search_bytes_max)
        return invalid(diagnostic, line, "search list longer than {d} bytes", .{search_bytes_max});
    @memcpy(conf.search_bytes[conf.search_bytes_len..][0..domain.len], domain);
    conf.search_bytes[conf.search_bytes_len + domain.len] = 0;
    conf.search_bytes_len += @intCast(domain.len + 1);
    conf.search_count += 1;
}

fn setOption(conf: *ResolvConf, option: []const u8, diagnostic: *text_file.Diagnostic, line: u32) error{Invalid}!void {
    const Numeric = struct { name: []const u8, max: u8 };
    const numeric = [_]Numeric{
        .{ .name = "ndots:", .max = ndots_max },
        .{ .name = "timeout:", .max = timeout_s_max },
        .{ .name = "attempts:", .max = attempts_max },
    };
    if (std.mem.eql(u8, option, "edns0")) conf.edns0 = true;
    for (numeric, 0..) |spec, index| {
        if (!std.mem.startsWith(u8, option, spec.name)) continue;
        const text = option[spec.name.len..];
        const value = std.fmt.parseInt(u32, text, 10) catch
            return invalid(diagnostic, line, "option {s} needs a number, not \"{s}\"", .{ spec.name, text });
        // Both libcs clamp rather than refuse; a timeout or attempts of 0 becomes 1 in glibc.
        const clamped: u8 = @intCast(@min(value, spec.max));
        switch (index) {
            0 => conf.ndots = clamped,
            1 => conf.timeout_s = @max(clamped, 1),
            2 => conf.attempts = @max(clamped, 1),
            else => unreachable,
        }
    }
}

/// An IPv4 or IPv6 literal; a scoped IPv6 address (`fe80::1%eth0`) is refused.
pub fn parseIp(text: []const u8, address_port: u16) ?Address {
    if (std.mem.indexOfScalar(u8, text, '%') != null) return null;
    const ip = std.Io.net.IpAddress.parse(text, address_port) catch return null;
    return switch (ip) {
        .ip4 => |ip4| Address.initIp4(ip4.bytes, address_port),
        .ip6 => |ip6| Address.initIp6(ip6.bytes, address_port),
    };
}

fn parseNameserver(text: []const u8) ?Address {
    return parseIp(text, port);
}

fn invalid(diagnostic: *text_file.Diagnostic, line: u32, comptime fmt: []const u8, args: anytype) error{Invalid} {
    diagnostic.set(line, fmt, args);
    return error.Invalid;
}

const testing = std.testing;

fn expectSearch(conf: *const ResolvConf, expected: []const []const u8) !void {
    var search = conf.searchIterator();
    for (expected) |domain| try testing.expectEqualStrings(domain, search.next().?);
    try testing.expectEqual(@as(?[]const u8, null), search.next());
}

test "resolv.conf: an empty file gives the libc defaults and 127.0.0.1" {
    var diagnostic: text_file.Diagnostic = .{};
    const conf = try parse("", "resolv.conf", &diagnostic);
    try testing.expectEqual(@as(u8, 1), conf.nameservers_count);
    const loopback = Address.initIp4(.{ 127, 0, 0, 1 }, 53);
    try testing.expect(conf.nameservers[0].eql(&loopback));
    try testing.expectEqual(@as(u8, 1), conf.ndots);
    try testing.expectEqual(@as(u8, 5), conf.timeout_s);
    try testing.expectEqual(@as(u8, 2), conf.attempts);
    try expectSearch(&conf, &.{});
}

test "resolv.conf: a Kubernetes pod's file" {
    const bytes =
        \\# generated by the kubelet
        \\search default.svc.cluster.local svc.cluster.local cluster.local
        \\nameserver 10.96.0.10
        \\nameserver fd00::a ; a second one
        \\options ndots:5 timeout:2 attempts:3 edns0 rotate single-request
        \\sortlist 130.155.160.0/255.255.240.0
        \\
    ;
    var diagnostic: text_file.Diagnostic = .{};
    const conf = try parse(bytes, "resolv.conf", &diagnostic);
    try testing.expectEqual(@as(u8, 2), conf.nameservers_count);
    const first = Address.initIp4(.{ 10, 96, 0, 10 }, 53);
    try testing.expect(conf.nameservers[0].eql(&first));
    try testing.expectEqual(@as(u16, 53), conf.nameservers[1].getPort());
    try expectSearch(&conf, &.{ "default.svc.cluster.local", "svc.cluster.local", "cluster.local" });
    try testing.expectEqual(@as(u8, 5), conf.ndots);
    try testing.expectEqual(@as(u8, 2), conf.timeout_s);
    try testing.expectEqual(@as(u8, 3), conf.attempts);
    try testing.expect(conf.edns0);
}

test "resolv.conf: limits: three nameservers, six domains, clamped options, last search wins" {
    const bytes =
        \\nameserver 1.1.1.1
        \\nameserver 1.1.1.2
        \\nameserver 1.1.1.3
        \\nameserver 1.1.1.4
        \\search old.example
        \\domain one.example. two.example
        \\options ndots:99 timeout:0 attempts:1000
        \\search a b c d e f g
    ;
    var diagnostic: text_file.Diagnostic = .{};
    const conf = try parse(bytes, "resolv.conf", &diagnostic);
    try testing.expectEqual(@as(u8, 3), conf.nameservers_count);
    try expectSearch(&conf, &.{ "a", "b", "c", "d", "e", "f" });
    try testing.expectEqual(@as(u8, 15), conf.ndots);
    try testing.expectEqual(@as(u8, 1), conf.timeout_s);
    try testing.expectEqual(@as(u8, 5), conf.attempts);

    const domain_only = try parse("domain one.example. two.example\n", "resolv.conf", &diagnostic);
    try expectSearch(&domain_only, &.{"one.example"});
}

test "resolv.conf: mistakes in what we read name the file and line" {
    try text_file.expectMistakes(parse, &.{
        .{ .bytes = "nameserver dns.example\n", .line = 1, .message = "nameserver \"dns.example\" is not an IP address" },
        .{ .bytes = "\n\nnameserver\n", .line = 3, .message = "nameserver without an address" },
        .{ .bytes = "nameserver fe80::1%eth0\n", .line = 1, .message = "nameserver \"fe80::1%eth0\" is not an IP address" },
        .{ .bytes = "options ndots:x\n", .line = 1, .message = "option ndots: needs a number, not \"x\"" },
        .{ .bytes = "search a..b\n", .line = 1, .message = "search domain \"a..b\" is not a valid name" },
    });
    var diagnostic: text_file.Diagnostic = .{};
    var bytes: [400]u8 = undefined;
    var writer: std.Io.Writer = .fixed(&bytes);
    try writer.writeAll("search");
    for (0..5) |_| {
        try writer.writeByte(' ');
        try writer.splatByteAll('a', 60);
    }
    try testing.expectError(error.Invalid, parse(writer.buffered(), "r", &diagnostic));
    try testing.expectEqualStrings("search list longer than 256 bytes", diagnostic.message());
    var text: [64]u8 = undefined;
    try testing.expectEqualStrings("r:1: search list longer than 256 bytes", try std.fmt.bufPrint(&text, "{f}", .{diagnostic}));
}
