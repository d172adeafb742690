//! OpenSSL's errors as sluice's: a Zig error set a caller can switch on (a plain HTTP request
//! on a TLS port gets a 400, a failed verification a 502 with its reason, a full pool a shed
//! connection), and a sentence for the log line, made from OpenSSL's own reason strings when
//! asked, never before (an engine keeps 8 bytes: the packed error code and the verification
//! result).
const std = @import("std");
const c = @import("c.zig");

pub const Failure = error{
    /// The peer sent a plain HTTP request to a TLS port (the caller can answer 400 in clear).
    PlainHttp,
    /// The bytes are not TLS records at all (garbage instead of a ClientHello).
    NotTls,
    /// No TLS version both sides accept.
    ProtocolVersion,
    /// No cipher, group or signature algorithm both sides accept.
    NoSharedCipher,
    /// The client offered ALPN protocols and none is ours (RFC 7301 §3.2).
    NoApplicationProtocol,
    /// The peer's certificate failed verification; `describe` says why.
    CertificateVerifyFailed,
    /// The peer ended the handshake or connection with a fatal alert; `describe` names it.
    AlertReceived,
    /// A renegotiation was attempted and refused.
    RenegotiationRefused,
    /// The connection's input ended without a close_notify alert (a truncation, or a peer
    /// that does not bother: the HTTP framing decides which).
    UnexpectedEof,
    /// The worker's TLS memory pool had no block of the size needed.
    OutOfMemory,
    /// Any other violation of the protocol (bad record MAC, decode error, ...).
    Protocol,
};

/// What an engine remembers of a failure: enough to classify it and describe it later.
pub const Record = struct {
    /// OpenSSL's packed error code (library and reason); 0 when OpenSSL queued none.
    code: u32 = 0,
    /// The certificate verification result (X509_V_*), 0 (X509_V_OK) unless verification failed.
    verify: i32 = 0,
    /// Set when sluice's own pool refused an allocation during the operation.
    out_of_memory: bool = false,

    /// Takes the earliest error on this thread's OpenSSL queue (the most specific: later ones
    /// are the callers wrapping it) and clears the queue.
    pub fn capture(out_of_memory: bool, verify: i32) Record {
        const code = c.ERR_peek_error();
        c.ERR_clear_error();
        return .{ .code = @truncate(code), .verify = verify, .out_of_memory = out_of_memory };
    }

    pub fn classify(record: Record) Failure {
        if (record.out_of_memory) return error.OutOfMemory;
        const code: c_ulong = record.code;
        const reason = c.errReason(code);
        if (reason == c.ERR_R_MALLOC_FAILURE) return error.OutOfMemory;
        if (c.errLib(code) != c.ERR_LIB_SSL) return error.Protocol;
        return switch (reason) {
            c.SSL_R_HTTP_REQUEST, c.SSL_R_HTTPS_PROXY_REQUEST => error.PlainHttp,
            c.SSL_R_WRONG_VERSION_NUMBER,
            c.SSL_R_UNKNOWN_PROTOCOL,
            c.SSL_R_PACKET_LENGTH_TOO_LONG,
            => error.NotTls,
            c.SSL_R_UNSUPPORTED_PROTOCOL,
            c.SSL_R_VERSION_TOO_LOW,
            c.SSL_R_NO_PROTOCOLS_AVAILABLE,
            c.SSL_AD_REASON_OFFSET + c.SSL_AD_PROTOCOL_VERSION,
            => error.ProtocolVersion,
            c.SSL_R_NO_SHARED_CIPHER, c.SSL_R_NO_SHARED_GROUPS => error.NoSharedCipher,
            c.SSL_R_NO_APPLICATION_PROTOCOL,
            c.SSL_AD_REASON_OFFSET + c.SSL_AD_NO_APPLICATION_PROTOCOL,
            => error.NoApplicationProtocol,
            c.SSL_R_CERTIFICATE_VERIFY_FAILED => error.CertificateVerifyFailed,
            c.SSL_R_NO_RENEGOTIATION,
            c.SSL_AD_REASON_OFFSET + c.SSL_AD_NO_RENEGOTIATION,
            => error.RenegotiationRefused,
            c.SSL_R_UNEXPECTED_EOF_WHILE_READING => error.UnexpectedEof,
            else => if (reason > c.SSL_AD_REASON_OFFSET and reason < c.SSL_AD_REASON_OFFSET + 256)
                error.AlertReceived
            else
                error.Protocol,
        };
    }

    /// "certificate verify failed: unable to get local issuer certificate", or OpenSSL's
    /// reason ("wrong version number", "sslv3 alert handshake failure"), into `buffer`.
    pub fn describe(record: Record, buffer: []u8) []const u8 {
        if (record.out_of_memory) return copy(buffer, "out of memory: the worker's TLS memory pool is exhausted");
        if (record.code == 0) return copy(buffer, "no reason given by OpenSSL");
        var code_text: [32]u8 = undefined;
        const reason = reasonText(record.code) orelse
            std.fmt.bufPrint(&code_text, "OpenSSL error {x:0>8}", .{record.code}) catch unreachable;
        if (record.verify != c.X509_V_OK) {
            const why = std.mem.span(c.X509_verify_cert_error_string(record.verify));
            return std.fmt.bufPrint(buffer, "{s}: {s}", .{ reason, why }) catch copy(buffer, reason);
        }
        return copy(buffer, reason);
    }
};

fn copy(buffer: []u8, text: []const u8) []const u8 {
    const n = @min(buffer.len, text.len);
    @memcpy(buffer[0..n], text[0..n]);
    return buffer[0..n];
}

/// OpenSSL's words for an error code ("certificate verify failed"), or null when it has none.
pub fn reasonText(code: c_ulong) ?[]const u8 {
    const text = c.ERR_reason_error_string(code) orelse return null;
    return std.mem.span(text);
}

/// The earliest reason on this thread's OpenSSL error queue, and the queue cleared.
pub fn popReason() []const u8 {
    const code = c.ERR_peek_error();
    c.ERR_clear_error();
    return reasonText(code) orelse "no reason given";
}

test "failure: OpenSSL's reasons become sluice's errors" {
    const ssl = struct {
        fn record(reason: c_ulong) Record {
            return .{ .code = @intCast((@as(c_ulong, c.ERR_LIB_SSL) << 23) | reason) };
        }
    };
    try std.testing.expectEqual(error.PlainHttp, ssl.record(c.SSL_R_HTTP_REQUEST).classify());
    try std.testing.expectEqual(error.NotTls, ssl.record(c.SSL_R_WRONG_VERSION_NUMBER).classify());
    try std.testing.expectEqual(error.CertificateVerifyFailed, ssl.record(c.SSL_R_CERTIFICATE_VERIFY_FAILED).classify());
    try std.testing.expectEqual(error.AlertReceived, ssl.record(1040).classify()); // handshake_failure alert
    try std.testing.expectEqual(error.NoApplicationProtocol, ssl.record(1120).classify());
    try std.testing.expectEqual(error.OutOfMemory, (Record{ .out_of_memory = true }).classify());
    try std.testing.expectEqual(error.Protocol, (Record{}).classify());
    var buffer: [16]u8 = undefined;
    try std.testing.expectEqualStrings("out of memory: t", (Record{ .out_of_memory = true }).describe(&buffer));
}

test "failure: a reason in OpenSSL's words, or its code" {
    try @import("tls.zig").init(.{});
    const verify_failed: c_ulong = 0x0A000086; // SSL routines, certificate verify failed
    try std.testing.expectEqualStrings("certificate verify failed", reasonText(verify_failed).?);
    var buffer: [128]u8 = undefined;
    const unknown: Record = .{ .code = 0x0A7FFFFF, .verify = c.X509_V_OK };
    try std.testing.expectEqualStrings("OpenSSL error 0a7fffff", unknown.describe(&buffer));
}
