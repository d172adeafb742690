//! Why the codec refused a message: one value per distinct reason, each with the status the
//! proxy answers with and a short sentence for logs.
//!
//! `status` is the answer to a client whose REQUEST (head or chunked request body) was
//! refused. A refused RESPONSE is always the upstream's fault, so the proxy answers 502 for
//! any reject that came out of `ResponseParser` or a `ChunkedDecoder` reading a response body,
//! whatever the value; values that only responses produce map to 502 here as well.

const std = @import("std");

pub const Reject = enum(u8) {
    // Request line (RFC 9112 §3).
    bad_request_line,
    bad_method,
    method_too_long,
    bad_target,
    target_too_long,
    bad_version,
    version_not_supported,
    too_many_empty_lines,
    // Line endings (RFC 9112 §2.2).
    bare_lf,
    bare_cr,
    // Field lines (RFC 9112 §5).
    obs_fold,
    bad_field_name,
    space_before_colon,
    bad_field_value,
    // Host (RFC 9112 §3.2).
    missing_host,
    duplicate_host,
    bad_host,
    // Framing (RFC 9112 §6).
    content_length_invalid,
    content_length_repeated,
    content_length_with_transfer_encoding,
    transfer_encoding_invalid,
    transfer_encoding_repeated,
    transfer_encoding_unsupported,
    transfer_encoding_http10,
    // Limits.
    head_too_large,
    too_many_fields,
    // Chunked body (RFC 9112 §7.1).
    chunk_size_invalid,
    chunk_size_too_large,
    chunk_extension_invalid,
    chunk_extension_too_long,
    chunk_data_crlf_missing,
    trailer_invalid,
    trailer_too_large,
    // Responses only (RFC 9112 §4).
    status_line_invalid,
    status_code_invalid,

    /// The status code of the error response sent to a client whose request was refused.
    pub fn status(r: Reject) u16 {
        return switch (r) {
            .bad_request_line,
            .bad_method,
            .bad_target,
            .bad_version,
            .too_many_empty_lines,
            .bare_lf,
            .bare_cr,
            .obs_fold,
            .bad_field_name,
            .space_before_colon,
            .bad_field_value,
            .missing_host,
            .duplicate_host,
            .bad_host,
            .content_length_invalid,
            .content_length_repeated,
            .content_length_with_transfer_encoding,
            .transfer_encoding_invalid,
            .transfer_encoding_repeated,
            .transfer_encoding_http10,
            .chunk_size_invalid,
            .chunk_size_too_large,
            .chunk_extension_invalid,
            .chunk_extension_too_long,
            .chunk_data_crlf_missing,
            .trailer_invalid,
            => 400,
            .target_too_long => 414,
            .head_too_large, .too_many_fields, .trailer_too_large => 431,
            // RFC 9110 §9.1 and §15.6.2: a method or coding we do not implement.
            .method_too_long, .transfer_encoding_unsupported => 501,
            .version_not_supported => 505,
            .status_line_invalid, .status_code_invalid => 502,
        };
    }

    /// One short human sentence, for logs and the body of the error response.
    pub fn reason(r: Reject) []const u8 {
        return switch (r) {
            .bad_request_line => "Request line is not method SP target SP version",
            .bad_method => "Method is not a token",
            .method_too_long => "Method is longer than any method we implement",
            .bad_target => "Request target is malformed or not allowed for this method",
            .target_too_long => "Request target is too long",
            .bad_version => "HTTP version is malformed",
            .version_not_supported => "HTTP version is not supported",
            .too_many_empty_lines => "Too many empty lines before the request line",
            .bare_lf => "Line ends with LF not preceded by CR",
            .bare_cr => "CR not followed by LF",
            .obs_fold => "Field line starts with whitespace (obsolete line folding)",
            .bad_field_name => "Field name is not a token followed by a colon",
            .space_before_colon => "Whitespace between field name and colon",
            .bad_field_value => "Field value contains a control character",
            .missing_host => "HTTP/1.1 request has no Host field",
            .duplicate_host => "More than one Host field",
            .bad_host => "Host field value is not a valid authority",
            .content_length_invalid => "Content-Length is not a plain decimal number",
            .content_length_repeated => "More than one Content-Length field",
            .content_length_with_transfer_encoding => "Content-Length and Transfer-Encoding " ++
                "both present",
            .transfer_encoding_invalid => "Transfer-Encoding is malformed or chunked is not final",
            .transfer_encoding_repeated => "More than one Transfer-Encoding field",
            .transfer_encoding_unsupported => "Transfer-Encoding other than chunked",
            .transfer_encoding_http10 => "Transfer-Encoding in an HTTP/1.0 message",
            .head_too_large => "Message head is too large",
            .too_many_fields => "Too many header fields",
            .chunk_size_invalid => "Chunk size is not a plain hexadecimal number",
            .chunk_size_too_large => "Chunk size has more than 16 hex digits",
            .chunk_extension_invalid => "Chunk extension is malformed",
            .chunk_extension_too_long => "Chunk extension is too long",
            .chunk_data_crlf_missing => "Chunk data is not followed by CRLF",
            .trailer_invalid => "Trailer field is malformed or not allowed in a trailer",
            .trailer_too_large => "Trailer section is too large",
            .status_line_invalid => "Status line is not HTTP/1.x SP 3DIGIT SP reason",
            .status_code_invalid => "Status code is outside 100-599",
        };
    }
};

test "reject: every value has a status in the expected set and a non-empty reason" {
    for (std.enums.values(Reject)) |r| {
        const s = r.status();
        try std.testing.expect(s == 400 or s == 414 or s == 431 or s == 501 or s == 502 or
            s == 505);
        try std.testing.expect(r.reason().len > 0);
        try std.testing.expect(r.reason().len < 80);
    }
}

test "reject: response-only values map to 502" {
    try std.testing.expectEqual(@as(u16, 502), Reject.status_line_invalid.status());
    try std.testing.expectEqual(@as(u16, 502), Reject.status_code_invalid.status());
}
