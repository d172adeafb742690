//! One-shot message digests through AWS-LC: SHA-1, SHA-256, SHA-384 and SHA-512, named as Web
//! Crypto names them. The JavaScript engine's `crypto.subtle.digest` reaches this through a
//! hook that main.zig installs (js/ imports nothing but std: tools/check_layers.sh), so the
//! engine hashes with the TLS library, not with code of its own. AWS-LC's one-shot functions
//! keep their context on the stack: a digest allocates nothing.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("aws_lc");

/// The longest digest (SHA-512's 64 bytes).
pub const digest_bytes_max = 64;

/// The digest of `data` by the algorithm Web Crypto calls `name` ("SHA-256"), written to the
/// front of `out`; its length, or null for a name that is none of the four.
pub fn digestByName(name: []const u8, data: []const u8, out: *[digest_bytes_max]u8) ?usize {
    const len: usize = if (std.mem.eql(u8, name, "SHA-1")) blk: {
        _ = c.SHA1(data.ptr, data.len, out);
        break :blk 20;
    } else if (std.mem.eql(u8, name, "SHA-256")) blk: {
        _ = c.SHA256(data.ptr, data.len, out);
        break :blk 32;
    } else if (std.mem.eql(u8, name, "SHA-384")) blk: {
        _ = c.SHA384(data.ptr, data.len, out);
        break :blk 48;
    } else if (std.mem.eql(u8, name, "SHA-512")) blk: {
        _ = c.SHA512(data.ptr, data.len, out);
        break :blk 64;
    } else return null;
    assert(len <= digest_bytes_max);
    return len;
}

test "digest: the four algorithms give the FIPS 180 test vectors for \"abc\"" {
    var out: [digest_bytes_max]u8 = undefined;
    const cases = [_]struct { name: []const u8, hex: []const u8 }{
        .{ .name = "SHA-1", .hex = "a9993e364706816aba3e25717850c26c9cd0d89d" },
        .{ .name = "SHA-256", .hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        .{ .name = "SHA-384", .hex = "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7" },
        .{ .name = "SHA-512", .hex = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
    };
    for (cases) |case| {
        const len = digestByName(case.name, "abc", &out).?;
        var expected: [digest_bytes_max]u8 = undefined;
        const want = try std.fmt.hexToBytes(&expected, case.hex);
        try std.testing.expectEqualSlices(u8, want, out[0..len]);
    }
    try std.testing.expectEqual(@as(?usize, null), digestByName("MD5", "abc", &out));
}
