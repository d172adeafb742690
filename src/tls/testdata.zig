//! The test certificates (src/tls/testdata/, made by its generate.sh) as sources, embedded so
//! tests need no files.
const certificate = @import("certificate.zig");

fn source(comptime cert: []const u8, comptime key: []const u8) certificate.Source {
    return .{
        .cert_pem = @embedFile("testdata/" ++ cert),
        .key_pem = @embedFile("testdata/" ++ key),
        .cert_name = cert,
        .key_name = key,
    };
}

pub const rsa = source("rsa.pem", "rsa.key");
pub const ecdsa = source("ecdsa.pem", "ecdsa.key");
pub const dual_rsa = source("dual-rsa.pem", "dual-rsa.key");
pub const dual_ecdsa = source("dual-ecdsa.pem", "dual-ecdsa.key");
pub const cn_only = source("cn-only.pem", "cn-only.key");
pub const client = source("client.pem", "client.key");
pub const expired = source("expired.pem", "expired.key");
pub const untrusted = source("untrusted.pem", "untrusted.key");
pub const wrong_order = source("wrong-order.pem", "ecdsa.key");
pub const ca_pem = @embedFile("testdata/ca.pem");
pub const ecdsa_ocsp = @embedFile("testdata/ecdsa.ocsp.der");
pub const encrypted_key = @embedFile("testdata/encrypted.key");
pub const encrypted_traditional_key = @embedFile("testdata/encrypted-traditional.key");
