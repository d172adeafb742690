//! AWS-LC's errors as sluice's: a Zig error set a caller can switch on (a plain HTTP request on
//! a TLS port gets a 400, a failed verification a 502 with its reason, a full pool a shed
//! connection), and a sentence for the log line, made from AWS-LC's own reason names when
//! asked, never before (an engine keeps 12 bytes: the packed error code, the verification
//! result and whether the pool ran dry).
//!
//! AWS-LC names its reasons as its C macros do ("CERTIFICATE_VERIFY_FAILED",
//! "TLSV1_ALERT_NO_APPLICATION_PROTOCOL"); `describe` lowers them into words ("certificate
//! verify failed", "tlsv1 alert no application protocol"), which are OpenSSL's words too.
const std = @import("std");
const c = @import("aws_lc");

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
    /// A certificate was required of the peer (a listener's `client_verify = "required"`), and
    /// it sent none.
    CertificateRequired,
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
    /// AWS-LC's packed error code (library and reason); 0 when it queued none.
    code: u32 = 0,
    /// The certificate verification result (X509_V_*), 0 (X509_V_OK) unless verification failed.
    verify: i32 = 0,
    /// Set when sluice's own pool refused an allocation during the operation.
    out_of_memory: bool = false,

    /// Takes the earliest error on this thread's queue (the most specific: later ones are the
    /// callers wrapping it) and clears the queue.
    pub fn capture(out_of_memory: bool, verify: i32) Record {
        const code = c.ERR_peek_error();
        c.ERR_clear_error();
        return .{ .code = code, .verify = verify, .out_of_memory = out_of_memory };
    }

    pub fn classify(record: Record) Failure {
        if (record.out_of_memory) return error.OutOfMemory;
        const reason = c.ERR_GET_REASON(record.code);
        if (reason == c.ERR_R_MALLOC_FAILURE) return error.OutOfMemory;
        if (c.ERR_GET_LIB(record.code) != c.ERR_LIB_SSL) return error.Protocol;
        return switch (reason) {
            c.SSL_R_HTTP_REQUEST, c.SSL_R_HTTPS_PROXY_REQUEST => error.PlainHttp,
            c.SSL_R_WRONG_VERSION_NUMBER,
            c.SSL_R_UNKNOWN_PROTOCOL,
            c.SSL_R_ENCRYPTED_LENGTH_TOO_LONG,
            c.SSL_R_RECORD_TOO_LARGE,
            => error.NotTls,
            c.SSL_R_UNSUPPORTED_PROTOCOL,
            c.SSL_R_VERSION_TOO_LOW,
            c.SSL_R_NO_PROTOCOLS_AVAILABLE,
            c.SSL_AD_REASON_OFFSET + c.SSL_AD_PROTOCOL_VERSION,
            => error.ProtocolVersion,
            c.SSL_R_NO_SHARED_CIPHER,
            c.SSL_R_NO_SHARED_GROUP,
            c.SSL_R_NO_COMMON_SIGNATURE_ALGORITHMS,
            => error.NoSharedCipher,
            c.SSL_R_NO_APPLICATION_PROTOCOL,
            c.SSL_AD_REASON_OFFSET + c.SSL_AD_NO_APPLICATION_PROTOCOL,
            => error.NoApplicationProtocol,
            c.SSL_R_CERTIFICATE_VERIFY_FAILED => error.CertificateVerifyFailed,
            c.SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE => error.CertificateRequired,
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

    /// "certificate verify failed: unable to get local issuer certificate", or AWS-LC's
    /// reason in words ("wrong version number", "sslv3 alert handshake failure"), into `buffer`.
    pub fn describe(record: Record, buffer: []u8) []const u8 {
        if (record.out_of_memory) return copy(buffer, "out of memory: the worker's TLS memory pool is exhausted");
        if (record.code == 0) return copy(buffer, "no reason given by AWS-LC");
        var reason_buffer: [96]u8 = undefined;
        const reason = reasonText(record.code, &reason_buffer);
        if (record.verify != c.X509_V_OK) {
            const why = std.mem.span(c.X509_verify_cert_error_string(record.verify));
            return std.fmt.bufPrint(buffer, "{s}: {s}", .{ reason, why }) catch copy(buffer, reason);
        }
        return copy(buffer, reason);
    }
};

/// The packed code of an error AWS-LC reports in the SSL library (as `ERR_PACK` does).
pub fn sslCode(reason: c_int) u32 {
    return (@as(u32, c.ERR_LIB_SSL) << 24) | @as(u32, @intCast(reason));
}

fn copy(buffer: []u8, text: []const u8) []const u8 {
    const n = @min(buffer.len, text.len);
    @memcpy(buffer[0..n], text[0..n]);
    return buffer[0..n];
}

/// AWS-LC's reason for an error code in words ("certificate verify failed"), or its code.
pub fn reasonText(code: u32, buffer: []u8) []const u8 {
    const name: []const u8 = if (c.ERR_reason_error_string(code)) |text| std.mem.span(text) else "unknown error";
    if (std.mem.eql(u8, name, "unknown error")) {
        return std.fmt.bufPrint(buffer, "AWS-LC error {x:0>8}", .{code}) catch copy(buffer, name);
    }
    return words(name, buffer);
}

/// "CERTIFICATE_VERIFY_FAILED" as "certificate verify failed" (names AWS-LC gives in lower
/// case, such as "malloc failure", pass through).
fn words(name: []const u8, buffer: []u8) []const u8 {
    const n = @min(buffer.len, name.len);
    for (buffer[0..n], name[0..n]) |*to, from| to.* = if (from == '_') ' ' else std.ascii.toLower(from);
    return buffer[0..n];
}

/// The earliest reason on this thread's error queue, in words, and the queue cleared.
pub fn popReason(buffer: []u8) []const u8 {
    const code = c.ERR_peek_error();
    c.ERR_clear_error();
    if (code == 0) return copy(buffer, "no reason given");
    return reasonText(code, buffer);
}

test "failure: AWS-LC's reasons become sluice's errors" {
    const ssl = struct {
        fn record(reason: c_int) Record {
            return .{ .code = sslCode(reason) };
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

test "failure: a reason in words, or its code" {
    try @import("tls.zig").init(.{});
    var buffer: [128]u8 = undefined;
    try std.testing.expectEqualStrings("certificate verify failed", reasonText(sslCode(c.SSL_R_CERTIFICATE_VERIFY_FAILED), &buffer));
    try std.testing.expectEqualStrings("tlsv1 alert no application protocol", reasonText(sslCode(1120), &buffer));
    const unknown: Record = .{ .code = sslCode(0xfff), .verify = c.X509_V_OK };
    try std.testing.expectEqualStrings("AWS-LC error 10000fff", unknown.describe(&buffer));
}
