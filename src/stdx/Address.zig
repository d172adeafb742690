//! A socket address in the kernel's own layout, so it can be handed to bind/connect and to
//! io_uring without conversion, and parsed from the forms an operator types on the command
//! line: `1.2.3.4:80`, `[::1]:80`, `:80` (every IPv4 interface) and `localhost:80`; and, for
//! backends only, a Unix socket's path, `unix:/run/app.sock` (`parseUnix`).
//!
//! Decision: no DNS here. A backend's DNS name is config/Config.zig's and runtime/Dns.zig's;
//! this type holds what the kernel connects to.
//!
//! Decision: the Unix arm is the kernel's whole `sockaddr_un` (108 bytes of path), so the
//! type is 112 bytes where IP alone was 28. A connect's completion holds a pointer, not a copy
//! (loop/Completion.zig), so the size costs only where an address is stored: a client
//! connection's slot (+84 B), a backend slot, an upstream connection.
const std = @import("std");
const linux = std.os.linux;
const assert = std.debug.assert;
const Ip6Address = std.Io.net.Ip6Address;

pub const Address = extern union {
    any: linux.sockaddr,
    in: linux.sockaddr.in,
    in6: linux.sockaddr.in6,
    /// `path` is NUL-terminated: `parseUnix` keeps paths to `unix_path_bytes_max`.
    un: linux.sockaddr.un,

    /// `PortOutOfRange`: the port is a number, above 65535 (a typo such as `:330001`, which
    /// deserves a message about the port rather than about the host).
    pub const ParseError = error{ MissingPort, InvalidPort, PortOutOfRange, InvalidHost };

    pub fn parse(text: []const u8) ParseError!Address {
        const colon = std.mem.lastIndexOfScalar(u8, text, ':') orelse return error.MissingPort;
        const host = text[0..colon];
        const port = try parsePort(text[colon + 1 ..]);
        if (host.len == 0) return initIp4(.{ 0, 0, 0, 0 }, port);
        if (std.mem.eql(u8, host, "localhost")) return initIp4(.{ 127, 0, 0, 1 }, port);
        if (host[0] == '[') {
            if (host.len < 2 or host[host.len - 1] != ']') return error.InvalidHost;
            const ip6 = Ip6Address.parse(host[1 .. host.len - 1], port) catch
                return error.InvalidHost;
            return initIp6(ip6.bytes, port);
        }
        return initIp4(try parseIp4(host), port);
    }

    /// What a Unix socket backend is written with.
    pub const unix_prefix = "unix:";
    /// The longest path: `sun_path` less its terminating NUL.
    pub const unix_path_bytes_max = @typeInfo(@FieldType(linux.sockaddr.un, "path")).array.len - 1;

    /// `unix:/ABSOLUTE/PATH`. The path is absolute (a relative one would follow the working
    /// directory, which a reload cannot see) and visible ASCII other than `"`, `\` and `,`, so
    /// its text goes into log lines, metrics labels and JSON as it is, needing no escape, and
    /// `--backend`'s options can follow it after a comma. Linux's abstract sockets (a leading
    /// NUL) are not offered.
    pub fn parseUnix(text: []const u8) error{UnixPathInvalid}!Address {
        if (!std.mem.startsWith(u8, text, unix_prefix)) return error.UnixPathInvalid;
        const path = text[unix_prefix.len..];
        if (path.len < 2 or path.len > unix_path_bytes_max or path[0] != '/') return error.UnixPathInvalid;
        for (path) |c| if (c < 0x21 or c > 0x7e or c == '"' or c == '\\' or c == ',') return error.UnixPathInvalid;
        var address: Address = .{ .un = .{ .path = @splat(0) } };
        @memcpy(address.un.path[0..path.len], path);
        return address;
    }

    pub fn isUnix(address: *const Address) bool {
        return address.any.family == linux.AF.UNIX;
    }

    /// The path of a Unix socket address, without its NUL.
    pub fn unixPath(address: *const Address) []const u8 {
        assert(address.isUnix());
        return std.mem.sliceTo(&address.un.path, 0);
    }

    /// The port's text in an address `parse` refused with `PortOutOfRange`.
    pub fn portText(text: []const u8) []const u8 {
        const colon = std.mem.lastIndexOfScalar(u8, text, ':') orelse return "";
        return text[colon + 1 ..];
    }

    pub fn initIp4(bytes: [4]u8, port: u16) Address {
        return .{ .in = .{
            .port = std.mem.nativeToBig(u16, port),
            .addr = @bitCast(bytes),
            .zero = @splat(0),
        } };
    }

    pub fn initIp6(bytes: [16]u8, port: u16) Address {
        return .{ .in6 = .{
            .port = std.mem.nativeToBig(u16, port),
            .flowinfo = 0,
            .addr = bytes,
            .scope_id = 0,
        } };
    }

    /// Copies an address the kernel wrote (accept, getsockname) into our union.
    pub fn fromStorage(storage: *const linux.sockaddr.storage) Address {
        var address: Address = undefined;
        switch (storage.family) {
            linux.AF.INET => address.in = @as(*const linux.sockaddr.in, @ptrCast(storage)).*,
            linux.AF.INET6 => address.in6 = @as(*const linux.sockaddr.in6, @ptrCast(storage)).*,
            else => unreachable, // We only create TCP/IP sockets.
        }
        return address;
    }

    pub fn family(address: *const Address) u16 {
        return address.any.family;
    }

    pub fn sockaddr(address: *const Address) *const linux.sockaddr {
        return &address.any;
    }

    pub fn socklen(address: *const Address) linux.socklen_t {
        return switch (address.any.family) {
            linux.AF.INET => @sizeOf(linux.sockaddr.in),
            linux.AF.INET6 => @sizeOf(linux.sockaddr.in6),
            // unix(7): the family, the path and its NUL.
            linux.AF.UNIX => @intCast(@offsetOf(linux.sockaddr.un, "path") + address.unixPath().len + 1),
            else => unreachable,
        };
    }

    /// 0 for a Unix socket, which has none.
    pub fn getPort(address: *const Address) u16 {
        return std.mem.bigToNative(u16, switch (address.any.family) {
            linux.AF.INET => address.in.port,
            linux.AF.INET6 => address.in6.port,
            linux.AF.UNIX => 0,
            else => unreachable,
        });
    }

    pub fn setPort(address: *Address, port: u16) void {
        switch (address.any.family) {
            linux.AF.INET => address.in.port = std.mem.nativeToBig(u16, port),
            linux.AF.INET6 => address.in6.port = std.mem.nativeToBig(u16, port),
            else => unreachable,
        }
    }

    pub fn eql(a: *const Address, b: *const Address) bool {
        if (a.any.family != b.any.family) return false;
        return switch (a.any.family) {
            linux.AF.INET => a.in.port == b.in.port and a.in.addr == b.in.addr,
            linux.AF.INET6 => a.in6.port == b.in6.port and
                std.mem.eql(u8, &a.in6.addr, &b.in6.addr),
            linux.AF.UNIX => std.mem.eql(u8, a.unixPath(), b.unixPath()),
            else => unreachable,
        };
    }

    /// Writes an IP address's host part only (no port): what X-Forwarded-For carries. A Unix
    /// socket has no host part (its text is `format`'s).
    pub fn formatHost(address: *const Address, buffer: []u8) []const u8 {
        assert(!address.isUnix());
        var writer: std.Io.Writer = .fixed(buffer);
        address.writeHost(&writer) catch unreachable; // Buffers are sized for the longest form.
        return writer.buffered();
    }

    pub fn format(address: *const Address, writer: *std.Io.Writer) std.Io.Writer.Error!void {
        if (address.isUnix()) return address.writeHost(writer);
        if (address.any.family == linux.AF.INET6) {
            try writer.writeByte('[');
            try address.writeHost(writer);
            try writer.writeByte(']');
        } else {
            try address.writeHost(writer);
        }
        try writer.print(":{d}", .{address.getPort()});
    }

    /// The whole address as text (`1.2.3.4:80`, `[...]:80`, `unix:/run/app.sock`), for log
    /// lines.
    pub fn toText(address: *const Address, buffer: *[text_bytes_max]u8) []const u8 {
        var writer: std.Io.Writer = .fixed(buffer);
        address.format(&writer) catch unreachable; // Sized for the longest form.
        return writer.buffered();
    }

    /// What a request to this address names as its host when no other is configured (a health
    /// probe's Host, an HTTP/2 probe's :authority): the address's text; `localhost` for a Unix
    /// socket, whose path is not a host (nginx does the same).
    pub fn authority(address: *const Address, buffer: *[text_bytes_max]u8) []const u8 {
        comptime assert("localhost".len <= ip_text_bytes_max);
        return if (address.isUnix()) "localhost" else address.toText(buffer);
    }

    /// The longest text `formatHost` produces for an IP address (a full IPv6 address): what a
    /// client's address, always IP, takes.
    pub const host_text_bytes_max = 39;
    /// The longest text `format` produces for an IP address: "[" host "]:" 5-digit port; the
    /// longest `authority` too.
    pub const ip_text_bytes_max = host_text_bytes_max + 2 + 1 + 5;
    /// The longest text `format` produces: a Unix socket's `unix:PATH`.
    pub const text_bytes_max = @max(ip_text_bytes_max, unix_prefix.len + unix_path_bytes_max);

    fn writeHost(address: *const Address, writer: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (address.any.family) {
            linux.AF.INET => {
                const b: [4]u8 = @bitCast(address.in.addr);
                try writer.print("{d}.{d}.{d}.{d}", .{ b[0], b[1], b[2], b[3] });
            },
            linux.AF.INET6 => try writeIp6(writer, &address.in6.addr),
            linux.AF.UNIX => try writer.print(unix_prefix ++ "{s}", .{address.unixPath()}),
            else => unreachable,
        }
    }
};

/// An IPv6 address in RFC 5952's canonical text: lower-case hex without leading zeros, the
/// longest run of two or more zero groups written `::` (the leftmost of equal runs), and an
/// IPv4-mapped address in mixed notation (`::ffff:192.0.2.1`, §5). One form per address, so
/// a log line, X-Forwarded-For and a metrics label can be compared and searched as text.
fn writeIp6(writer: *std.Io.Writer, bytes: *const [16]u8) std.Io.Writer.Error!void {
    var groups: [8]u16 = undefined;
    for (&groups, 0..) |*group, i| group.* = std.mem.readInt(u16, bytes[2 * i ..][0..2], .big);
    const mapped_prefix = @as([10]u8, @splat(0)) ++ [_]u8{ 0xff, 0xff };
    if (std.mem.eql(u8, bytes[0..12], &mapped_prefix)) {
        return writer.print("::ffff:{d}.{d}.{d}.{d}", .{ bytes[12], bytes[13], bytes[14], bytes[15] });
    }
    const run = longestZeroRun(&groups);
    var i: usize = 0;
    while (i < groups.len) {
        if (run.len >= 2 and i == run.start) {
            // "::" stands for the run and both separators around it.
            try writer.writeAll("::");
            i += run.len;
            continue;
        }
        if (i != 0 and !(run.len >= 2 and i == run.start + run.len)) try writer.writeByte(':');
        try writer.print("{x}", .{groups[i]});
        i += 1;
    }
}

/// The longest run of zero groups, the leftmost of equal ones (RFC 5952 §4.2.3).
fn longestZeroRun(groups: *const [8]u16) struct { start: usize, len: usize } {
    var best_start: usize = 0;
    var best_len: usize = 0;
    var i: usize = 0;
    while (i < groups.len) {
        if (groups[i] != 0) {
            i += 1;
            continue;
        }
        const start = i;
        while (i < groups.len and groups[i] == 0) i += 1;
        if (i - start > best_len) {
            best_start = start;
            best_len = i - start;
        }
    }
    assert(best_start + best_len <= groups.len);
    return .{ .start = best_start, .len = best_len };
}

pub fn parsePort(text: []const u8) Address.ParseError!u16 {
    if (text.len == 0) return error.InvalidPort;
    for (text) |c| if (c < '0' or c > '9') return error.InvalidPort;
    return std.fmt.parseInt(u16, text, 10) catch error.PortOutOfRange; // Digits: only too large.
}

fn parseIp4(text: []const u8) Address.ParseError![4]u8 {
    var bytes: [4]u8 = undefined;
    var parts = std.mem.splitScalar(u8, text, '.');
    var count: usize = 0;
    while (parts.next()) |part| : (count += 1) {
        if (count == 4) return error.InvalidHost;
        if (part.len == 0 or part.len > 3) return error.InvalidHost;
        if (part.len > 1 and part[0] == '0') return error.InvalidHost; // No octal ambiguity.
        for (part) |c| if (c < '0' or c > '9') return error.InvalidHost;
        bytes[count] = std.fmt.parseInt(u8, part, 10) catch return error.InvalidHost;
    }
    if (count != 4) return error.InvalidHost;
    return bytes;
}

test "address: parses the forms an operator types" {
    const cases = [_]struct { text: []const u8, shown: []const u8 }{
        .{ .text = "127.0.0.1:8080", .shown = "127.0.0.1:8080" },
        .{ .text = ":80", .shown = "0.0.0.0:80" },
        .{ .text = "localhost:9000", .shown = "127.0.0.1:9000" },
        .{ .text = "[::1]:443", .shown = "[::1]:443" },
        .{ .text = "[::]:8080", .shown = "[::]:8080" },
        .{ .text = "10.0.0.5:0", .shown = "10.0.0.5:0" },
    };
    for (cases) |case| {
        const address = try Address.parse(case.text);
        var buffer: [Address.text_bytes_max]u8 = undefined;
        var writer: std.Io.Writer = .fixed(&buffer);
        try address.format(&writer);
        try std.testing.expectEqualStrings(case.shown, writer.buffered());
    }
}

test "address: rejects what is not an address" {
    const cases = [_]struct { text: []const u8, err: Address.ParseError }{
        .{ .text = "127.0.0.1", .err = error.MissingPort },
        .{ .text = "127.0.0.1:", .err = error.InvalidPort },
        .{ .text = "127.0.0.1:65536", .err = error.PortOutOfRange },
        .{ .text = "127.0.0.1:330001", .err = error.PortOutOfRange },
        .{ .text = "127.0.0.1:99999999999999999999999", .err = error.PortOutOfRange },
        .{ .text = "127.0.0.1:-1", .err = error.InvalidPort },
        .{ .text = "999.1.1.1:80", .err = error.InvalidHost },
        .{ .text = "1.2.3:80", .err = error.InvalidHost },
        .{ .text = "1.2.3.4.5:80", .err = error.InvalidHost },
        .{ .text = "01.2.3.4:80", .err = error.InvalidHost },
        .{ .text = "example.com:80", .err = error.InvalidHost },
        .{ .text = "[::1:80", .err = error.InvalidHost },
        .{ .text = "[zz]:80", .err = error.InvalidHost },
    };
    for (cases) |case| {
        try std.testing.expectError(case.err, Address.parse(case.text));
    }
}

test "address: port round-trips in network order" {
    var address = try Address.parse("127.0.0.1:1");
    address.setPort(54321);
    try std.testing.expectEqual(@as(u16, 54321), address.getPort());
    try std.testing.expect(address.eql(&(try Address.parse("127.0.0.1:54321"))));
    var buffer: [Address.host_text_bytes_max]u8 = undefined;
    try std.testing.expectEqualStrings("127.0.0.1", address.formatHost(&buffer));
    comptime assert(@sizeOf(Address) == 112);
}

test "address: a Unix socket's path" {
    const address = try Address.parseUnix("unix:/run/app.sock");
    try std.testing.expect(address.isUnix());
    try std.testing.expectEqualStrings("/run/app.sock", address.unixPath());
    try std.testing.expectEqual(@as(u16, 0), address.getPort());
    // The family, the path and its NUL (unix(7)).
    try std.testing.expectEqual(@as(linux.socklen_t, 2 + 13 + 1), address.socklen());
    var text: [Address.text_bytes_max]u8 = undefined;
    try std.testing.expectEqualStrings("unix:/run/app.sock", address.toText(&text));
    try std.testing.expect(address.eql(&(try Address.parseUnix("unix:/run/app.sock"))));
    try std.testing.expect(!address.eql(&(try Address.parseUnix("unix:/run/app.sock2"))));
    try std.testing.expect(!address.eql(&(try Address.parse("127.0.0.1:80"))));

    // The longest path fits with its NUL, and its text fits the buffers sized for it.
    var longest: [Address.unix_prefix.len + Address.unix_path_bytes_max]u8 = @splat('a');
    longest[0..6].* = "unix:/".*;
    const long = try Address.parseUnix(&longest);
    try std.testing.expectEqual(@as(u8, 0), long.un.path[Address.unix_path_bytes_max]);
    try std.testing.expectEqual(@as(usize, Address.text_bytes_max), long.toText(&text).len);

    const refused = [_][]const u8{
        "unix:",
        "unix:/",
        "unix:run/app.sock", // Relative.
        "unix:/run/my app.sock",
        "unix:/run/\"app\".sock",
        "unix:/run/a\\b",
        "unix:/run/a,b.sock",
        "unix:/run/\x00abstract",
        "unix:/run/caf\xc3\xa9.sock",
        "/run/app.sock", // No prefix.
        &(longest ++ "b".*), // 108 bytes of path leave no room for the NUL.
    };
    for (refused) |text_case| {
        try std.testing.expectError(error.UnixPathInvalid, Address.parseUnix(text_case));
    }
}

test "address: IPv6 text is RFC 5952's canonical form" {
    const cases = [_]struct { text: []const u8, shown: []const u8 }{
        .{ .text = "::1", .shown = "::1" },
        .{ .text = "::", .shown = "::" },
        .{ .text = "1::", .shown = "1::" },
        // Leading zeros dropped, lower case (§4.1, §4.3).
        .{ .text = "2001:0DB8:00AB:000c:0:0:0:0001", .shown = "2001:db8:ab:c::1" },
        // The longest run of zeros is the one compressed (§4.2.3).
        .{ .text = "2001:0:0:1:0:0:0:1", .shown = "2001:0:0:1::1" },
        // Equal runs: the leftmost (§4.2.3).
        .{ .text = "2001:db8:0:0:1:0:0:1", .shown = "2001:db8::1:0:0:1" },
        // A single zero group is never "::" (§4.2.2).
        .{ .text = "2001:db8:0:1:1:1:1:1", .shown = "2001:db8:0:1:1:1:1:1" },
        .{ .text = "0:1:2:3:4:5:6:0", .shown = "0:1:2:3:4:5:6:0" },
        // Runs at either end.
        .{ .text = "0:0:0:0:0:0:0:1", .shown = "::1" },
        .{ .text = "fe80:0:0:0:0:0:0:0", .shown = "fe80::" },
        .{ .text = "0:0:1:0:0:0:1:0", .shown = "0:0:1::1:0" },
        // IPv4-mapped in mixed notation (§5).
        .{ .text = "::ffff:c000:0201", .shown = "::ffff:192.0.2.1" },
        .{ .text = "::ffff:0.0.0.0", .shown = "::ffff:0.0.0.0" },
        // Not mapped: hex groups.
        .{ .text = "::fffe:c000:201", .shown = "::fffe:c000:201" },
        .{ .text = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .shown = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
    };
    for (cases) |case| {
        const ip6 = try Ip6Address.parse(case.text, 80);
        const address = Address.initIp6(ip6.bytes, 80);
        var buffer: [Address.host_text_bytes_max]u8 = undefined;
        const shown = address.formatHost(&buffer);
        try std.testing.expectEqualStrings(case.shown, shown);
        // The text parses back to the same address.
        const again = try Ip6Address.parse(shown, 80);
        try std.testing.expectEqualSlices(u8, &ip6.bytes, &again.bytes);
    }
    // The longest text still fits the buffers sized for it.
    const longest = Address.initIp6(@splat(0xff), 65535);
    var text: [Address.text_bytes_max]u8 = undefined;
    try std.testing.expectEqual(Address.ip_text_bytes_max, longest.toText(&text).len);
}
