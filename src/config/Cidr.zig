//! An address block (`10.0.0.0/8`, `::1/128`, or a bare address meaning one host) used to say
//! which peers are trusted proxies. Matching is a masked compare on the raw bytes.
const std = @import("std");
const linux = std.os.linux;
const Address = @import("../stdx/Address.zig").Address;

const Cidr = @This();

family: u16,
bytes: [16]u8,
prefix_bits: u8,

pub const ParseError = error{ InvalidAddress, InvalidPrefix };

pub fn parse(text: []const u8) ParseError!Cidr {
    const slash = std.mem.indexOfScalar(u8, text, '/');
    const host = if (slash) |i| text[0..i] else text;
    // Reuse the address parser by giving it a port; brackets are optional for CIDR input.
    var buffer: [64]u8 = undefined;
    const with_port = if (host.len > 0 and host[0] != '[' and std.mem.indexOfScalar(u8, host, ':') != null)
        std.fmt.bufPrint(&buffer, "[{s}]:0", .{host}) catch return error.InvalidAddress
    else
        std.fmt.bufPrint(&buffer, "{s}:0", .{host}) catch return error.InvalidAddress;
    if (host.len == 0) return error.InvalidAddress;
    const address = Address.parse(with_port) catch return error.InvalidAddress;
    var cidr: Cidr = .{ .family = address.family(), .bytes = @splat(0), .prefix_bits = 0 };
    const bits_max: u8 = switch (address.family()) {
        linux.AF.INET => blk: {
            cidr.bytes[0..4].* = @bitCast(address.in.addr);
            break :blk 32;
        },
        linux.AF.INET6 => blk: {
            cidr.bytes = address.in6.addr;
            break :blk 128;
        },
        else => unreachable,
    };
    cidr.prefix_bits = bits_max;
    if (slash) |i| {
        const bits_text = text[i + 1 ..];
        if (bits_text.len == 0 or bits_text.len > 3) return error.InvalidPrefix;
        const bits = std.fmt.parseInt(u8, bits_text, 10) catch return error.InvalidPrefix;
        if (bits > bits_max) return error.InvalidPrefix;
        cidr.prefix_bits = bits;
    }
    return cidr;
}

pub fn contains(cidr: *const Cidr, address: *const Address) bool {
    if (address.family() != cidr.family) return false;
    var bytes: [16]u8 = @splat(0);
    switch (cidr.family) {
        linux.AF.INET => bytes[0..4].* = @bitCast(address.in.addr),
        linux.AF.INET6 => bytes = address.in6.addr,
        else => unreachable,
    }
    var bits_left: u32 = cidr.prefix_bits;
    for (bytes, cidr.bytes) |a, b| {
        if (bits_left == 0) return true;
        const take: u3 = @intCast(@min(bits_left, 8) % 8);
        const mask: u8 = if (bits_left >= 8) 0xff else ~(@as(u8, 0xff) >> take);
        if ((a & mask) != (b & mask)) return false;
        bits_left -= @min(bits_left, 8);
    }
    return true;
}

test "cidr: contains what its prefix covers and nothing else" {
    const net = try Cidr.parse("10.1.0.0/16");
    try std.testing.expect(net.contains(&(try Address.parse("10.1.200.3:1"))));
    try std.testing.expect(!net.contains(&(try Address.parse("10.2.0.1:1"))));
    const host = try Cidr.parse("127.0.0.1");
    try std.testing.expect(host.contains(&(try Address.parse("127.0.0.1:5"))));
    try std.testing.expect(!host.contains(&(try Address.parse("127.0.0.2:5"))));
    const odd = try Cidr.parse("192.168.0.0/23");
    try std.testing.expect(odd.contains(&(try Address.parse("192.168.1.9:1"))));
    try std.testing.expect(!odd.contains(&(try Address.parse("192.168.2.9:1"))));
    const v6 = try Cidr.parse("::1/128");
    try std.testing.expect(v6.contains(&(try Address.parse("[::1]:1"))));
    try std.testing.expect(!v6.contains(&(try Address.parse("127.0.0.1:1"))));
    const all = try Cidr.parse("0.0.0.0/0");
    try std.testing.expect(all.contains(&(try Address.parse("8.8.8.8:1"))));
    try std.testing.expectError(error.InvalidPrefix, Cidr.parse("10.0.0.0/33"));
    try std.testing.expectError(error.InvalidAddress, Cidr.parse("nope/8"));
}
