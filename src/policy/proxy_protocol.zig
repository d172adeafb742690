//! The PROXY protocol (HAProxy's, versions 1 and 2): the header a load balancer in front of
//! sluice writes before the client's first byte, carrying the client's address; and the
//! version 2 header sluice writes to a backend of a pool that asks for it (`send_proxy`).
//!
//! Decision: parsing is strict and incremental over the bytes received so far (the connection
//! calls `parse` again with more), and it never waits for bytes that cannot make a header: a
//! first byte that starts neither signature, a v1 line past 107 bytes, a bare LF, a v2 length
//! past `v2_bytes_max` are refused at once. What follows the header is the client's own
//! stream (a request head, a TLS ClientHello) and is left where it is.
//! - v1: `PROXY TCP4|TCP6 SRC DST SPORT DPORT\r\n` with single spaces, canonical numbers (no
//!   leading zeros: the v1 text is generated, so anything else is not a real sender) and
//!   each address of the family named; `PROXY UNKNOWN ...\r\n` keeps the peer's address.
//! - v2: the 12-byte signature, version 2, command LOCAL (a health check of the sender: the
//!   peer's address is kept) or PROXY; for PROXY, TCP over IPv4 or IPv6 gives the address,
//!   UNSPEC keeps the peer's, and UDP or a Unix socket is refused (sluice serves TCP
//!   streams, and a Unix path is no client address). The TLVs after the addresses are
//!   walked so that a malformed list is refused, and otherwise ignored (their CRC32c
//!   included: the sender is trusted by the operator's choice of listener, not by a checksum).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;
const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");

pub const v2_signature = "\r\n\r\n\x00\r\nQUIT\n";
/// A v2 header with the LOCAL command and no addresses: what the sender says of a connection
/// of its own, such as a health probe (HAProxy's `check-send-proxy`).
pub const v2_local = v2_signature ++ "\x20\x00\x00\x00";
/// The longest v1 line, CRLF included (the specification's own bound).
pub const v1_bytes_max = 107;
/// The longest v2 header accepted: the fixed 16 bytes and up to 1 KiB of addresses and TLVs
/// (AWS's, Azure's and GCP's TLVs take under 300; HAProxy's SSL TLVs about as much).
pub const v2_bytes_max = 16 + 1024;
/// The most bytes `parse` can need to decide.
pub const header_bytes_max = @max(v1_bytes_max, v2_bytes_max);
/// What `writeV2` writes at most: the fixed part and two IPv6 addresses and ports.
pub const v2_written_bytes_max = 16 + 36;

pub const Result = union(enum) {
    /// More bytes are needed (all so far could start a valid header).
    incomplete,
    invalid: Reason,
    complete: Header,
};

pub const Header = struct {
    /// The header's length: the client's own bytes start here.
    len: u32,
    /// The client's address; null: keep the connection's peer (v1 UNKNOWN, v2 LOCAL or UNSPEC).
    source: ?Address,
    version: Version,
};

pub const Version = enum { v1, v2 };

pub const Reason = enum {
    /// The first bytes start neither signature: no PROXY header.
    missing,
    v1_malformed,
    v1_too_long,
    v2_version,
    v2_command,
    v2_family,
    v2_too_long,
    v2_short_addresses,
    v2_tlv,

    pub fn text(reason: Reason) []const u8 {
        return switch (reason) {
            .missing => "no PROXY protocol header",
            .v1_malformed => "a malformed PROXY v1 line",
            .v1_too_long => "a PROXY v1 line longer than 107 bytes",
            .v2_version => "a PROXY v2 header of another version",
            .v2_command => "a PROXY v2 header with an unknown command",
            .v2_family => "a PROXY v2 header for UDP or a Unix socket, or an unknown family",
            .v2_too_long => "a PROXY v2 header past 1 KiB of addresses and TLVs",
            .v2_short_addresses => "a PROXY v2 header too short for its addresses",
            .v2_tlv => "a PROXY v2 header with a malformed TLV",
        };
    }
};

/// Parses the header at the start of `bytes`, all received so far.
pub fn parse(bytes: []const u8) Result {
    if (bytes.len == 0) return .incomplete;
    const v1_prefix = "PROXY ";
    const n = @min(bytes.len, v1_prefix.len);
    if (n > 0 and std.mem.eql(u8, bytes[0..n], v1_prefix[0..n])) {
        return if (bytes.len < v1_prefix.len) .incomplete else parseV1(bytes);
    }
    const m = @min(bytes.len, v2_signature.len);
    if (m > 0 and std.mem.eql(u8, bytes[0..m], v2_signature[0..m])) {
        return if (bytes.len < 16) .incomplete else parseV2(bytes);
    }
    return .{ .invalid = .missing };
}

fn parseV1(bytes: []const u8) Result {
    const window = bytes[0..@min(bytes.len, v1_bytes_max)];
    const end = std.mem.indexOfScalar(u8, window, '\n') orelse
        return if (bytes.len >= v1_bytes_max) .{ .invalid = .v1_too_long } else .incomplete;
    if (end == 0 or window[end - 1] != '\r') return .{ .invalid = .v1_malformed };
    const line = window["PROXY ".len .. end - 1];
    const header_len: u32 = @intCast(end + 1);
    if (std.mem.startsWith(u8, line, "UNKNOWN")) {
        // "UNKNOWN" and whatever follows a space: the sender could not say (RFC-like text).
        if (line.len != "UNKNOWN".len and line["UNKNOWN".len] != ' ') return .{ .invalid = .v1_malformed };
        if (!printable(line)) return .{ .invalid = .v1_malformed };
        return .{ .complete = .{ .len = header_len, .source = null, .version = .v1 } };
    }
    const source = parseV1Addresses(line) orelse return .{ .invalid = .v1_malformed };
    return .{ .complete = .{ .len = header_len, .source = source, .version = .v1 } };
}

fn printable(text: []const u8) bool {
    for (text) |c| if (c < 0x20 or c > 0x7e) return false;
    return true;
}

/// `TCP4 SRC DST SPORT DPORT`: the source address and port, or null when anything is off.
fn parseV1Addresses(line: []const u8) ?Address {
    var fields = std.mem.splitScalar(u8, line, ' ');
    const protocol = fields.next().?;
    const ip6 = if (std.mem.eql(u8, protocol, "TCP4")) false else if (std.mem.eql(u8, protocol, "TCP6")) true else return null;
    const source_text = fields.next() orelse return null;
    const destination_text = fields.next() orelse return null;
    const source_port = port(fields.next() orelse return null) orelse return null;
    _ = port(fields.next() orelse return null) orelse return null;
    if (fields.next() != null) return null;
    const source = host(source_text, ip6, source_port) orelse return null;
    _ = host(destination_text, ip6, 0) orelse return null;
    return source;
}

fn port(text: []const u8) ?u16 {
    if (text.len == 0 or text.len > 5) return null;
    if (text.len > 1 and text[0] == '0') return null;
    for (text) |c| if (c < '0' or c > '9') return null;
    return std.fmt.parseInt(u16, text, 10) catch null;
}

fn host(text: []const u8, ip6: bool, port_number: u16) ?Address {
    if (text.len == 0 or text.len > Address.host_text_bytes_max) return null;
    // An IPv4 address has no ':' and an IPv6 one always has: the family must be the one named.
    if ((std.mem.indexOfScalar(u8, text, ':') != null) != ip6) return null;
    var buffer: [Address.host_text_bytes_max + 4]u8 = undefined;
    const with_port = (if (ip6)
        std.fmt.bufPrint(&buffer, "[{s}]:0", .{text})
    else
        std.fmt.bufPrint(&buffer, "{s}:0", .{text})) catch return null;
    var address = Address.parse(with_port) catch return null;
    if (std.mem.eql(u8, text, "localhost")) return null; // Address.parse's convenience, not an IP.
    address.setPort(port_number);
    return address;
}

fn parseV2(bytes: []const u8) Result {
    assert(bytes.len >= 16);
    const version_command = bytes[12];
    if (version_command >> 4 != 2) return .{ .invalid = .v2_version };
    const local = switch (version_command & 0x0f) {
        0 => true,
        1 => false,
        else => return .{ .invalid = .v2_command },
    };
    const family_protocol = bytes[13];
    const length = std.mem.readInt(u16, bytes[14..16], .big);
    if (16 + @as(u32, length) > v2_bytes_max) return .{ .invalid = .v2_too_long };
    if (bytes.len < 16 + @as(usize, length)) return .incomplete;
    const body = bytes[16..][0..length];
    const header_len: u32 = 16 + @as(u32, length);
    const addresses_len: usize, const source: ?Address = switch (family_protocol) {
        0x00 => .{ 0, null }, // UNSPEC: the sender does not say.
        0x11 => if (body.len < 12) return .{ .invalid = .v2_short_addresses } else .{
            12, Address.initIp4(body[0..4].*, std.mem.readInt(u16, body[8..10], .big)),
        },
        0x21 => if (body.len < 36) return .{ .invalid = .v2_short_addresses } else .{
            36, Address.initIp6(body[0..16].*, std.mem.readInt(u16, body[32..34], .big)),
        },
        else => if (local) .{ body.len, null } else return .{ .invalid = .v2_family },
    };
    if (!tlvsWellFormed(body[addresses_len..])) return .{ .invalid = .v2_tlv };
    // LOCAL: the sender's own connection (a health check); its addresses are not a client's.
    return .{ .complete = .{ .len = header_len, .source = if (local) null else source, .version = .v2 } };
}

/// Whether `bytes` is a whole number of TLVs (type, 16-bit length, value).
fn tlvsWellFormed(bytes: []const u8) bool {
    var rest = bytes;
    while (rest.len > 0) {
        if (rest.len < 3) return false;
        const value_len = std.mem.readInt(u16, rest[1..3], .big);
        if (rest.len - 3 < value_len) return false;
        rest = rest[3 + value_len ..];
    }
    return true;
}

/// A v2 PROXY header for a connection from `source` to `destination`, written into `out`. The
/// two must be of one family; when they are not (an IPv4 client on an IPv6 listener), the
/// IPv4 one is written as IPv4-mapped IPv6.
pub fn writeV2(source: *const Address, destination: *const Address, out: *[v2_written_bytes_max]u8) []const u8 {
    out[0..12].* = v2_signature.*;
    out[12] = 0x21; // Version 2, PROXY.
    const both_ip4 = source.family() == linux.AF.INET and destination.family() == linux.AF.INET;
    if (both_ip4) {
        out[13] = 0x11;
        std.mem.writeInt(u16, out[14..16], 12, .big);
        out[16..20].* = @bitCast(source.in.addr);
        out[20..24].* = @bitCast(destination.in.addr);
        std.mem.writeInt(u16, out[24..26], source.getPort(), .big);
        std.mem.writeInt(u16, out[26..28], destination.getPort(), .big);
        return out[0..28];
    }
    out[13] = 0x21;
    std.mem.writeInt(u16, out[14..16], 36, .big);
    out[16..32].* = ip6Bytes(source);
    out[32..48].* = ip6Bytes(destination);
    std.mem.writeInt(u16, out[48..50], source.getPort(), .big);
    std.mem.writeInt(u16, out[50..52], destination.getPort(), .big);
    return out[0..52];
}

/// The v2 header for a client at `client` whose connection is the socket `client_fd`: its
/// local address (where the client reached sluice) is the destination. Null when the kernel
/// cannot say (out of memory for the call).
pub fn headerFor(client: *const Address, client_fd: linux.fd_t, out: *[v2_written_bytes_max]u8) ?[]const u8 {
    var storage: linux.sockaddr.storage = undefined;
    _ = sys.getsockname(client_fd, &storage) catch return null;
    const local = Address.fromStorage(&storage);
    return writeV2(client, &local, out);
}

fn ip6Bytes(address: *const Address) [16]u8 {
    return switch (address.family()) {
        linux.AF.INET6 => address.in6.addr,
        linux.AF.INET => @as([10]u8, @splat(0)) ++ [2]u8{ 0xff, 0xff } ++ @as([4]u8, @bitCast(address.in.addr)),
        else => unreachable, // Clients and listeners are IP.
    };
}

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

fn expectSource(result: Result, text: []const u8, len: usize) !void {
    const header = switch (result) {
        .complete => |h| h,
        else => return error.TestUnexpectedResult,
    };
    try testing.expectEqual(@as(u32, @intCast(len)), header.len);
    var buffer: [Address.text_bytes_max]u8 = undefined;
    try testing.expectEqualStrings(text, header.source.?.toText(&buffer));
}

fn expectInvalid(reason: Reason, result: Result) !void {
    switch (result) {
        .invalid => |got| try testing.expectEqual(reason, got),
        else => return error.TestUnexpectedResult,
    }
}

test "proxy_protocol: v1 TCP4 and TCP6 give the source address and port" {
    const v4 = "PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\r\nGET / HTTP/1.1\r\n";
    try expectSource(parse(v4), "192.0.2.7:56324", v4.len - "GET / HTTP/1.1\r\n".len);
    const v6 = "PROXY TCP6 2001:db8::7 2001:db8::1 65535 80\r\n";
    try expectSource(parse(v6), "[2001:db8::7]:65535", v6.len);
}

test "proxy_protocol: v1 UNKNOWN keeps the peer" {
    for ([_][]const u8{ "PROXY UNKNOWN\r\n", "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n" }) |line| {
        const header = parse(line).complete;
        try testing.expectEqual(@as(u32, @intCast(line.len)), header.len);
        try testing.expect(header.source == null);
    }
}

test "proxy_protocol: malformed v1 lines are refused" {
    const lines = [_][]const u8{
        "PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\n", // bare LF
        "PROXY TCP4 192.0.2.7  198.51.100.1 56324 443\r\n", // two spaces
        "PROXY TCP4 192.0.2.7 198.51.100.1 056324 443\r\n", // leading zero
        "PROXY TCP4 192.0.2.7 198.51.100.1 65536 443\r\n", // port out of range
        "PROXY TCP4 2001:db8::7 198.51.100.1 1 2\r\n", // family mismatch
        "PROXY TCP6 192.0.2.7 198.51.100.1 1 2\r\n", // family mismatch
        "PROXY TCP4 192.0.2.7 198.51.100.1 1\r\n", // a field short
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 2 3\r\n", // a field more
        "PROXY TCP4 localhost 198.51.100.1 1 2\r\n", // a name
        "PROXY UDP4 192.0.2.7 198.51.100.1 1 2\r\n",
        "PROXY UNKNOWNX\r\n",
        "PROXY TCP4 192.0.2.07 198.51.100.1 1 2\r\n", // octal-looking
    };
    for (lines) |line| try testing.expect(parse(line) == .invalid);
    try testing.expect(parse("GET / HTTP/1.1\r\n") == .invalid);
    try testing.expect(parse("\x16\x03\x01\x02\x00") == .invalid); // A ClientHello.
    try testing.expect(parse("PROXY TCP4 1.2.3.4 5.6.7.8 1 2") == .incomplete);
    try testing.expect(parse("PROX") == .incomplete);
    const long = "PROXY UNKNOWN " ++ @as([100]u8, @splat('x'));
    try expectInvalid(.v1_too_long, parse(long));
}

test "proxy_protocol: v2 from writeV2 parses back, split at every index" {
    var out: [v2_written_bytes_max]u8 = undefined;
    const pairs = [_][2][]const u8{
        .{ "192.0.2.7:56324", "198.51.100.1:443" },
        .{ "[2001:db8::7]:1", "[2001:db8::1]:2" },
        .{ "192.0.2.7:56324", "[2001:db8::1]:2" },
    };
    const expected = [_][]const u8{ "192.0.2.7:56324", "[2001:db8::7]:1", "[::ffff:192.0.2.7]:56324" };
    for (pairs, expected) |pair, want| {
        const source = try Address.parse(pair[0]);
        const destination = try Address.parse(pair[1]);
        const header = writeV2(&source, &destination, &out);
        for (0..header.len) |i| try testing.expect(parse(header[0..i]) == .incomplete);
        try expectSource(parse(header), want, header.len);
        try testing.expectEqual(Version.v2, parse(header).complete.version);
    }
}

test "proxy_protocol: v2 LOCAL, UNSPEC keep the peer; bad ones are refused" {
    try testing.expect(parse(v2_local).complete.source == null);
    try testing.expectEqual(@as(usize, 16), parse(v2_local).complete.len);
    const unspec = v2_signature ++ "\x21\x00\x00\x03\x04\x00\x00"; // One empty NOOP TLV.
    try testing.expectEqual(@as(u32, unspec.len), parse(unspec).complete.len);
    try expectInvalid(.v2_version, parse(v2_signature ++ "\x11\x11\x00\x0c"));
    try expectInvalid(.v2_command, parse(v2_signature ++ "\x22\x11\x00\x0c"));
    try expectInvalid(.v2_family, parse(v2_signature ++ "\x21\x12\x00\x00"));
    try expectInvalid(.v2_family, parse(v2_signature ++ "\x21\x31\x00\x00"));
    try expectInvalid(.v2_too_long, parse(v2_signature ++ "\x21\x11\xff\xff"));
    try expectInvalid(.v2_short_addresses, parse(v2_signature ++ "\x21\x11\x00\x04\x01\x02\x03\x04"));
    const bad_tlv = v2_signature ++ "\x21\x11\x00\x0e" ++ "\x01\x02\x03\x04\x05\x06\x07\x08\x00\x01\x00\x02" ++ "\x04\x00";
    try expectInvalid(.v2_tlv, parse(bad_tlv));
}

test "proxy_protocol: parse never reads past its input (seeded fuzz)" {
    // The runner's seed, so `zig build test -- --seed N` replays a failure it reports.
    var prng: std.Random.DefaultPrng = .init(testing.random_seed);
    const random = prng.random();
    var buffer: [256]u8 = undefined;
    for (0..20_000) |_| {
        const len = random.uintAtMost(usize, buffer.len);
        random.bytes(buffer[0..len]);
        // Half start with a signature, so the parsers behind it are reached.
        if (len >= 16 and random.boolean()) buffer[0..12].* = v2_signature.*;
        if (len >= 6 and random.boolean()) buffer[0..6].* = "PROXY ".*;
        switch (parse(buffer[0..len])) {
            .complete => |header| try testing.expect(header.len <= len),
            .incomplete, .invalid => {},
        }
    }
}
