//! What crosses the proxy: the request head as the backend sees it and the response head as
//! the client sees it.
//!
//! The rule every line here follows: the framing of a forwarded message is the framing sluice
//! parsed, written by sluice (RFC 9112 §6.3). The fields sluice owns (Content-Length,
//! Transfer-Encoding, Host, the upgrade handshake, X-Forwarded-*, Forwarded, X-Real-IP) are
//! never copied on the sender's word and never removed because a `Connection` field names
//! them: a `Connection: Content-Length` that made a proxy drop the length would let the body
//! be read as a second request. Other hop-by-hop fields (RFC 9110 §7.6.1) are dropped,
//! including every field a Connection field names.
//!
//! Decision: the request head is composed into the (still empty) upstream buffer, so the body
//! bytes behind it in the client buffer never move. The response head is rewritten in place:
//! the response is received at `response_headroom_bytes` into its buffer and the new head is
//! written from offset 0. Before a byte is written, a planning pass works out the exact size
//! and checks that no write overtakes a byte still to be read; when the headroom does not
//! cover that, the received bytes are first moved further into the buffer, and when the
//! buffer cannot take that either the rewrite fails (a 502) instead of writing past anything.
//! These checks are code, not assertions: they hold in every build mode.
const std = @import("std");
const assert = std.debug.assert;
const http = @import("../http/http.zig");
const HeaderPolicy = @import("../policy/HeaderPolicy.zig");
const compression = @import("../policy/compression.zig");

/// Room in front of a received response head for the fields we may add: a Connection field
/// and one extra field (the sticky-session Set-Cookie). More growth than this is handled by
/// moving the received bytes (see `rewriteResponse`); this is what makes that rare.
pub const response_headroom_bytes: u32 = "Connection: keep-alive\r\n".len + extra_field_bytes_max;

/// The longest extra response field: "Set-Cookie: " + a cookie name of at most 64 bytes +
/// "=" + a 16-digit backend id + "; Path=/; HttpOnly\r\n" fits with room to spare.
pub const extra_field_bytes_max = 128;

/// The longest Host value we forward (and copy into X-Forwarded-Host). DNS names are at most
/// 253 bytes; with a port and brackets, 300 leaves room. A longer Host is a 400.
pub const host_bytes_max = 300;
comptime {
    std.debug.assert(host_bytes_max == @import("../config/Config.zig").rewrite_host_bytes_max);
}

comptime {
    const Config = @import("../config/Config.zig");
    assert(response_headroom_bytes <= Config.rewrite_headroom_bytes);
}

pub const Forwarding = struct {
    /// The peer's address as text (no port).
    client_ip: []const u8,
    /// The peer is a trusted proxy: keep and append to its forwarding fields.
    trusted: bool,
    proto: []const u8 = "http",
    /// Forward field names with an underscore (CGI and WSGI servers read `X_Real_IP` as
    /// `HTTP_X_REAL_IP`, the same variable as `X-Real-IP`, so by default they are dropped).
    allow_underscores: bool = false,
    /// A listener that forwards its clients' certificates.
    certificate: ?CertificateFields = null,
    /// The route's request header rules (policy/HeaderPolicy.zig); null: none.
    rules: ?*const Rules = null,
    /// The route's path rewrite: the target the pool sees; null: the client's.
    path: ?*const HeaderPolicy.PathRewrite = null,
};

/// Header rules to apply to one head, with what their variables stand for.
pub const Rules = HeaderPolicy.Rules;

/// The fields that carry a client certificate to the backend (`Config.Tls`
/// `client_subject_header`, `client_fingerprint_header`): sluice's own. A field of either name
/// from the client (or a handler) is dropped whether or not a certificate was presented, so a
/// backend that trusts these fields cannot be told a subject the handshake did not verify.
pub const CertificateFields = struct {
    /// Empty: that field is not written.
    subject_name: []const u8 = "",
    fingerprint_name: []const u8 = "",
    /// Null when the client presented no certificate (the subject also when it is too long to
    /// give whole: `tls.Engine.PeerCertificate`).
    subject: ?[]const u8 = null,
    fingerprint: ?[]const u8 = null,

    fn owns(fields: *const CertificateFields, name: []const u8) bool {
        const eql = http.chars.eqlIgnoreCase;
        return (fields.subject_name.len > 0 and eql(name, fields.subject_name)) or
            (fields.fingerprint_name.len > 0 and eql(name, fields.fingerprint_name));
    }
};

/// What sluice makes of a field, by its name (case-insensitive).
const FieldKind = enum {
    other,
    host,
    content_length,
    transfer_encoding,
    /// Connection and the other fields that describe one connection, never the message
    /// (RFC 9110 §7.6.1, RFC 9112 §6.1, plus the non-standard Keep-Alive and
    /// Proxy-Connection that old clients send).
    hop_by_hop,
    upgrade,
    x_forwarded_for,
    x_forwarded_proto,
    x_forwarded_host,
    forwarded,
    x_real_ip,
};

/// One switch on the length, then at most a few comparisons: most fields cost one branch.
fn classify(name: []const u8) FieldKind {
    const eql = http.chars.eqlIgnoreCase;
    return switch (name.len) {
        2 => if (eql(name, "te")) .hop_by_hop else .other,
        4 => if (eql(name, "host")) .host else .other,
        7 => if (eql(name, "upgrade")) .upgrade else if (eql(name, "trailer")) .hop_by_hop else .other,
        9 => if (eql(name, "forwarded")) .forwarded else if (eql(name, "x-real-ip")) .x_real_ip else .other,
        10 => if (eql(name, "connection") or eql(name, "keep-alive")) .hop_by_hop else .other,
        14 => if (eql(name, "content-length")) .content_length else .other,
        15 => if (eql(name, "x-forwarded-for")) .x_forwarded_for else .other,
        16 => if (eql(name, "x-forwarded-host")) .x_forwarded_host else if (eql(name, "proxy-connection")) .hop_by_hop else .other,
        17 => if (eql(name, "transfer-encoding"))
            .transfer_encoding
        else if (eql(name, "x-forwarded-proto"))
            .x_forwarded_proto
        else
            .other,
        18 => if (eql(name, "proxy-authenticate")) .hop_by_hop else .other,
        19 => if (eql(name, "proxy-authorization")) .hop_by_hop else .other,
        else => .other,
    };
}

/// Whether this request may become a tunnel if the backend answers 101. An upgrade to h2c
/// (cleartext HTTP/2) is never offered: through a proxy it lets a client talk HTTP/2 straight
/// to the backend, past everything the proxy checks ("h2c smuggling"). Such a request is
/// forwarded as a plain request, its Upgrade field dropped like any hop-by-hop field.
pub fn upgradeAllowed(head: *const http.Request) bool {
    if (!head.upgrade) return false;
    const value = head.get("upgrade") orelse return false;
    var protocols = std.mem.splitScalar(u8, value, ',');
    while (protocols.next()) |protocol| {
        const name = std.mem.trim(u8, protocol, " \t");
        if (std.ascii.eqlIgnoreCase(name, "h2c")) return false;
    }
    return true;
}

/// The host the request is for, as forwarded in Host and X-Forwarded-Host: the authority of
/// an absolute-form target (RFC 9112 §3.2.2: it overrides any Host field), else Host.
pub fn requestHost(head: *const http.Request) ?[]const u8 {
    return originForm(head).host orelse head.host;
}

/// What a JavaScript handler's `Response.proxy` changes in the request it sends on
/// (handler/Handler.zig checked both: an origin-form target, and fields that are tokens and
/// field values, none of them one sluice writes itself).
pub const Overrides = struct {
    /// Sent instead of the client's target.
    target: ?[]const u8 = null,
    /// Replace the client's fields of the same name (case-insensitive), or are added.
    fields: []const http.Header = &.{},
    /// The client's fields of these names (case-insensitive) are not sent.
    removed: []const []const u8 = &.{},

    fn replaces(overrides: Overrides, name: []const u8) bool {
        for (overrides.fields) |field| if (http.chars.eqlIgnoreCase(field.name, name)) return true;
        for (overrides.removed) |removed| if (http.chars.eqlIgnoreCase(removed, name)) return true;
        return false;
    }
};

pub const Composed = struct {
    len: usize,
    /// Fields dropped because their name has an underscore (`Forwarding.allow_underscores`).
    underscore_fields_dropped: u32,
};

/// Writes the request head the backend receives into `out`.
/// NoSpaceLeft means the client's head plus our fields does not fit: a 431 for the client.
pub fn composeRequest(
    out: []u8,
    head: *const http.Request,
    forwarding: Forwarding,
    overrides: Overrides,
) error{NoSpaceLeft}!Composed {
    var w: Out = .{ .buffer = out };
    const dropped = try writeRequest(&w, head, forwarding, overrides);
    return .{ .len = w.end, .underscore_fields_dropped = dropped };
}

fn writeRequest(
    w: *Out,
    head: *const http.Request,
    forwarding: Forwarding,
    overrides: Overrides,
) Out.Error!u32 {
    // RFC 9112 §3.2.2: with an absolute-form target the authority in it names the host and
    // any Host field is ignored. Forwarding origin-form with Host taken from the authority
    // means the backend cannot read the host differently from how we did.
    const target = originForm(head);
    const host = target.host orelse head.host;
    if (overrides.target) |path| {
        assert(path.len > 0 and path[0] == '/' and http.chars.findNonTargetByte(path) == null);
        try w.puts(&.{ head.method_text, " ", path, " ", head.version.text(), "\r\n" });
    } else {
        // A route's rewrite replaces the target's two pieces; the line is written the same way.
        const first, const second = if (forwarding.path) |path|
            .{ path.replacement, path.rest }
        else
            .{ target.prefix, target.path };
        try w.puts(&.{ head.method_text, " ", first, second, " ", head.version.text(), "\r\n" });
    }
    if (host) |value| try writeField(w, "Host", value);
    var seen: struct {
        length: bool = false,
        x_forwarded_for: bool = false,
        x_forwarded_proto: bool = false,
        x_forwarded_host: bool = false,
        forwarded: bool = false,
    } = .{};
    var underscores: u32 = 0;
    // Most requests carry no Connection field, or one that names only hop-by-hop fields:
    // then no field is checked against it.
    const names_fields = head.connectionNamesFields();
    for (head.headers) |field| {
        if (overrides.fields.len + overrides.removed.len > 0 and overrides.replaces(field.name)) continue;
        switch (classify(field.name)) {
            // Framing and routing come from the parse, written below (or first, for Host).
            .host, .transfer_encoding, .hop_by_hop, .upgrade => continue,
            .content_length => {
                seen.length = true;
                continue;
            },
            .x_forwarded_for => {
                seen.x_forwarded_for = forwarding.trusted;
                continue; // Merged below, with the peer appended.
            },
            // From a trusted proxy these are kept as sent, whatever Connection says; from
            // anyone else they are claims about the client sluice cannot check.
            .x_forwarded_proto, .x_forwarded_host, .forwarded, .x_real_ip => |kind| {
                if (!forwarding.trusted) continue;
                switch (kind) {
                    .x_forwarded_proto => seen.x_forwarded_proto = true,
                    .x_forwarded_host => seen.x_forwarded_host = true,
                    .forwarded => seen.forwarded = true,
                    else => {},
                }
            },
            .other => {
                if (forwarding.certificate) |*fields| if (fields.owns(field.name)) continue;
                if (forwarding.rules) |rules| if (rules.side.drops(field.name)) continue;
                if (!forwarding.allow_underscores and std.mem.findScalar(u8, field.name, '_') != null) {
                    underscores += 1;
                    continue;
                }
                if (names_fields and head.connectionHasToken(field.name)) continue;
            },
        }
        try writeField(w, field.name, field.value);
    }
    for (overrides.fields) |field| {
        // The handler may set only fields that describe the message and not its framing,
        // routing or client (`host.isReservedIn`): so they cannot undo what this writes.
        assert(classify(field.name) == .other or classify(field.name) == .x_real_ip);
        assert(http.chars.findNonFieldValueByte(field.value) == null);
        if (forwarding.certificate) |*fields| if (fields.owns(field.name)) continue;
        try writeField(w, field.name, field.value);
    }
    if (forwarding.certificate) |fields| try writeCertificateFields(w, fields);
    if (forwarding.rules) |rules| try writeRules(w, rules);
    try writeForwardedFor(w, head, forwarding, seen.x_forwarded_for);
    if (seen.forwarded) try writeForwarded(w, forwarding.client_ip);
    if (!seen.x_forwarded_proto) try writeField(w, "X-Forwarded-Proto", forwarding.proto);
    if (!seen.x_forwarded_host) if (host) |value| try writeField(w, "X-Forwarded-Host", value);
    switch (head.body) {
        .content_length => |length| {
            var digits: [20]u8 = undefined;
            try w.puts(&.{ "Content-Length: ", decimal(&digits, length), "\r\n" });
        },
        .chunked => try writeField(w, "Transfer-Encoding", "chunked"),
        // An explicit "Content-Length: 0" stays: some servers refuse a POST without a length.
        .none => if (seen.length) try writeField(w, "Content-Length", "0"),
        .close_delimited => unreachable, // Not a request framing.
    }
    if (upgradeAllowed(head)) {
        try writeField(w, "Connection", "upgrade");
        try writeField(w, "Upgrade", head.get("upgrade").?);
    }
    try w.put("\r\n");
    return underscores;
}

/// The rules' fields, their variables expanded (each a field value: see HeaderPolicy).
fn writeRules(w: *Out, rules: *const Rules) Out.Error!void {
    const len = rules.side.writtenBytes(rules.variables);
    if (len > w.buffer.len - w.end) return error.NoSpaceLeft;
    rules.side.write(rules.variables, w.buffer[w.end..][0..len]);
    w.end += len;
}

fn writeCertificateFields(w: *Out, fields: CertificateFields) Out.Error!void {
    if (fields.subject_name.len > 0) if (fields.subject) |subject| {
        assert(http.chars.findNonFieldValueByte(subject) == null); // tls escapes all else
        try writeField(w, fields.subject_name, subject);
    };
    if (fields.fingerprint_name.len > 0) if (fields.fingerprint) |fingerprint| {
        try writeField(w, fields.fingerprint_name, fingerprint);
    };
}

pub const OriginForm = struct {
    /// "/" when an absolute-form target has an empty path (RFC 9112 §3.2.1), else "".
    prefix: []const u8,
    path: []const u8,
    /// The authority of an absolute-form target; null for the other forms.
    host: ?[]const u8,
};

pub fn originForm(head: *const http.Request) OriginForm {
    if (head.target_form != .absolute) return .{ .prefix = "", .path = head.target, .host = null };
    const scheme_end = std.mem.indexOf(u8, head.target, "://").?; // The parser checked it.
    const rest = head.target[scheme_end + 3 ..];
    const authority_end = std.mem.indexOfAny(u8, rest, "/?") orelse rest.len;
    const path = rest[authority_end..];
    const needs_slash = path.len == 0 or path[0] == '?'; // "http://h" and "http://h?q".
    return .{
        .prefix = if (needs_slash) "/" else "",
        .path = path,
        .host = rest[0..authority_end],
    };
}

fn writeField(w: *Out, name: []const u8, value: []const u8) Out.Error!void {
    try w.puts(&.{ name, ": ", value, "\r\n" });
}

/// A head written into a fixed buffer: a bounds check and a copy per piece. (std.Io.Writer's
/// `writeAll` through its interface cost about 75 instructions a call here, and a request
/// head is written in some twenty pieces.)
const Out = struct {
    buffer: []u8,
    end: usize = 0,

    const Error = error{NoSpaceLeft};

    fn put(out: *Out, bytes: []const u8) Error!void {
        if (bytes.len > out.buffer.len - out.end) return error.NoSpaceLeft;
        @memcpy(out.buffer[out.end..][0..bytes.len], bytes);
        out.end += bytes.len;
    }

    fn puts(out: *Out, pieces: []const []const u8) Error!void {
        for (pieces) |piece| try out.put(piece);
    }

    fn written(out: *const Out) []const u8 {
        return out.buffer[0..out.end];
    }
};

/// One X-Forwarded-For field: the trusted chain (every such field, in order) then the peer.
fn writeForwardedFor(
    w: *Out,
    head: *const http.Request,
    forwarding: Forwarding,
    have_for: bool,
) Out.Error!void {
    try w.put("X-Forwarded-For: ");
    if (have_for) {
        assert(forwarding.trusted);
        for (head.headers) |field| {
            if (classify(field.name) != .x_forwarded_for) continue;
            if (field.value.len == 0) continue;
            try w.puts(&.{ field.value, ", " });
        }
    }
    try w.puts(&.{ forwarding.client_ip, "\r\n" });
}

/// The trusted proxy's Forwarded chain, kept above, gets this hop appended as one more field
/// line (RFC 7239 §4: lines are one list, in order). An IPv6 node is quoted and bracketed.
fn writeForwarded(w: *Out, client_ip: []const u8) Out.Error!void {
    if (std.mem.findScalar(u8, client_ip, ':') != null) {
        try w.puts(&.{ "Forwarded: for=\"[", client_ip, "]\"\r\n" });
    } else {
        try w.puts(&.{ "Forwarded: for=", client_ip, "\r\n" });
    }
}

// ---------------------------------------------------------------------------------------------
// Responses

/// How the response tells the client what happens to its connection.
pub const ClientConnection = enum {
    /// HTTP/1.1 client, connection stays open: say nothing (persistence is the default).
    keep_alive_default,
    /// HTTP/1.0 client that asked for keep-alive and gets it.
    keep_alive_explicit,
    /// We close after this response.
    close,
    /// 101: the connection becomes a tunnel.
    upgrade,
};

pub const ResponseRewrite = struct {
    connection: ClientConnection,
    /// False for an HTTP/1.0 client (RFC 9112 §6.1: no Transfer-Encoding unless the request
    /// was HTTP/1.1): sluice removes the chunked framing itself, the body then ends with the
    /// connection, and a HEAD or 304 answer's Transfer-Encoding is not passed either.
    keep_transfer_encoding: bool = true,
    /// One whole field line ("Name: value\r\n") to add, or empty.
    extra_field: []const u8 = "",
    /// The route's response header rules (policy/HeaderPolicy.zig); null: none.
    rules: ?*const Rules = null,
    /// What compression changes (policy/compression.zig): its fields are written after the
    /// kept ones, and a weakened ETag replaces the backend's; null: nothing.
    change: ?*const compression.HeadChange = null,
};

pub const ResponseError = error{
    /// The rewritten head, with the bytes received behind it, does not fit the buffer.
    HeadTooLarge,
};

/// Rewrites the response head found at `buffer[head_start..][0..head_len]` to start at
/// `buffer[0]`, and moves the `received_len - head_len` bytes that followed it (body, or the
/// next response after a 1xx) to follow the new head. Returns the new head's length.
/// `head` must come from parsing exactly those bytes, or (`head_len` 0) from fields that lie
/// outside `buffer` (an HTTP/2 backend's head: written out from them).
pub fn rewriteResponse(
    buffer: []u8,
    head_start: usize,
    head_len: usize,
    received_len: usize,
    head: *const http.ResponseParser.Head,
    options: ResponseRewrite,
) ResponseError!usize {
    // Only so that `tail_buffer` is not filled with 0xAA, as safe builds fill `undefined`: for
    // its 400-odd bytes that is a memset call per response, 0.7% of a keep-alive request's
    // instructions. This body indexes nothing and does no arithmetic (the calls keep their own
    // checks); `composeTail` writes the tail before anything reads it and returns what it wrote.
    @setRuntimeSafety(false);
    assert(head_len <= received_len);
    assert(head_start + received_len <= buffer.len);
    if (options.extra_field.len > extra_field_bytes_max) return error.HeadTooLarge;
    // Every decision that reads a field is taken now: once the received bytes move, the
    // parser's slices point at the old place, and only offsets (`Emitter.copy`) are used.
    const kept = try keptFields(head, options);
    var tail_buffer: [tail_bytes_max]u8 = undefined;
    const tail: Tail = .{ .framing = composeTail(&tail_buffer, head, options), .rules = options.rules };
    if (try rewriteNormal(buffer, head_start, head_len, received_len, head, &kept, tail)) |new_len| return new_len;
    return rewriteTwoPass(buffer, head_start, head_len, received_len, head, &kept, tail);
}

/// Any head: a planning pass works out the new length and how far writes would overtake
/// reads, the received bytes move right by that much, and the writing pass follows.
fn rewriteTwoPass(
    buffer: []u8,
    head_start: usize,
    head_len: usize,
    received_len: usize,
    head: *const http.ResponseParser.Head,
    kept: *const KeptFields,
    tail: Tail,
) ResponseError!usize {
    var plan: Emitter = .{ .buffer = buffer, .mode = .plan };
    try emitResponse(&plan, head, kept, tail);
    const new_len = plan.at;
    // The head's own bytes must stay ahead of every write, and the bytes after it must not be
    // written over either: move everything right by as much as that takes.
    const head_end = head_start + head_len;
    const shift = @max(plan.overrun, new_len -| head_end);
    if (head_start + shift + received_len > buffer.len) return error.HeadTooLarge;
    if (shift > 0) {
        const received = buffer[head_start..][0..received_len];
        @memmove(buffer[head_start + shift ..][0..received_len], received);
    }
    var write: Emitter = .{ .buffer = buffer, .mode = .write, .shift = shift };
    try emitResponse(&write, head, kept, tail);
    if (write.at != new_len) return error.HeadTooLarge; // The two passes differ: a bug, contained.
    const rest_len = received_len - head_len;
    const rest_start = head_end + shift;
    assert(new_len <= rest_start);
    @memmove(buffer[new_len..][0..rest_len], buffer[rest_start..][0..rest_len]);
    return new_len;
}

/// The same sequence of writes, run twice: `plan` only measures (and finds how far writes
/// would overtake reads), `write` writes, reading the head's bytes `shift` further on.
const Emitter = struct {
    buffer: []u8,
    mode: enum { plan, write },
    /// Where the next byte goes.
    at: usize = 0,
    /// How far right the received bytes were moved before the write pass.
    shift: usize = 0,
    /// Plan: how far the furthest write ran past the start of a read that came after it.
    overrun: usize = 0,

    fn literal(e: *Emitter, bytes: []const u8) ResponseError!void {
        if (e.at + bytes.len > e.buffer.len) return error.HeadTooLarge;
        if (e.mode == .write) @memcpy(e.buffer[e.at..][0..bytes.len], bytes);
        e.at += bytes.len;
    }

    /// `bytes` lies in `buffer` (where the parser found it, before any shift), or wholly
    /// outside it (a head that came as fields: an HTTP/2 backend's), when it is a literal.
    fn copy(e: *Emitter, bytes: []const u8) ResponseError!void {
        if (bytes.len == 0) return; // An empty slice may point anywhere (a literal "").
        const start = @intFromPtr(bytes.ptr);
        const buffer_start = @intFromPtr(e.buffer.ptr);
        if (start + bytes.len <= buffer_start or start >= buffer_start + e.buffer.len) return e.literal(bytes);
        const offset = start - buffer_start;
        if (offset > e.buffer.len or bytes.len > e.buffer.len - offset) return error.HeadTooLarge;
        const from = offset + e.shift;
        if (from + bytes.len > e.buffer.len or e.at + bytes.len > e.buffer.len) {
            return error.HeadTooLarge;
        }
        switch (e.mode) {
            .plan => e.overrun = @max(e.overrun, e.at -| from),
            .write => {
                if (e.at > from) return error.HeadTooLarge; // The plan said otherwise: a bug.
                @memmove(e.buffer[e.at..][0..bytes.len], e.buffer[from..][0..bytes.len]);
            },
        }
        e.at += bytes.len;
    }

    fn field(e: *Emitter, name: []const u8, value: []const u8) ResponseError!void {
        try e.copy(name);
        try e.literal(": ");
        try e.copy(value);
        try e.literal("\r\n");
    }

    /// The status line as received, when it reads exactly as sluice would write it
    /// (`HTTP/1.1 SSS reason` and CRLF; the parser checked the status digits).
    fn normalStatusLine(e: *const Emitter, head: *const http.ResponseParser.Head) ?[]const u8 {
        if (head.version != .http11 or head.reason.len == 0) return null;
        const reason = e.offsetOf(head.reason) orelse return null;
        if (reason < 13) return null;
        const start = reason - 13;
        const line = e.crlfLine(start, reason + head.reason.len) orelse return null;
        const now = e.source(start, 13);
        // Compared as integers: std.mem.eql costs a call and a vector setup for 9 bytes.
        const version = std.mem.readInt(u64, now[0..8], .little);
        if (version != std.mem.readInt(u64, "HTTP/1.1", .little) or now[8] != ' ' or now[12] != ' ') return null;
        return line;
    }

    /// A field's line as received, when it reads exactly as `field` would write it:
    /// `name: value` and CRLF, one space and no trailing whitespace.
    fn normalFieldLine(e: *const Emitter, header: http.Header) ?[]const u8 {
        if (header.value.len == 0) return null; // An empty slice may point anywhere.
        const name = e.offsetOf(header.name) orelse return null;
        const value = e.offsetOf(header.value) orelse return null;
        if (value != name + header.name.len + 2) return null;
        const line = e.crlfLine(name, value + header.value.len) orelse return null;
        const colon = e.source(name + header.name.len, 2);
        if (colon[0] != ':' or colon[1] != ' ') return null;
        return line;
    }

    /// Where `bytes` starts in the buffer as the parser found it, if it lies in it.
    fn offsetOf(e: *const Emitter, bytes: []const u8) ?usize {
        const offset = @intFromPtr(bytes.ptr) -% @intFromPtr(e.buffer.ptr);
        if (offset > e.buffer.len or bytes.len > e.buffer.len - offset) return null;
        return offset;
    }

    /// `buffer[start..end]` and the CRLF after it, if one follows, at the head's place as the
    /// parser found it (what `copy` takes).
    fn crlfLine(e: *const Emitter, start: usize, end: usize) ?[]const u8 {
        if (end + 2 + e.shift > e.buffer.len) return null;
        const crlf = e.source(end, 2);
        if (crlf[0] != '\r' or crlf[1] != '\n') return null;
        return e.buffer[start .. end + 2];
    }

    /// The bytes that were at `offset` when the head was parsed: `shift` further on in the
    /// write pass. Nothing before them has been written over yet (the plan saw to it).
    fn source(e: *const Emitter, offset: usize, len: usize) []const u8 {
        assert(offset + e.shift + len <= e.buffer.len);
        return e.buffer[offset + e.shift ..][0..len];
    }
};

/// The most fields a response head may have (the CLI and file bound
/// `response_headers_count_max` to it).
pub const response_fields_max = 1024;
const KeptFields = std.StaticBitSet(response_fields_max);

/// Which of the response's fields are forwarded.
fn keptFields(head: *const http.ResponseParser.Head, options: ResponseRewrite) ResponseError!KeptFields {
    if (head.headers.len > response_fields_max) return error.HeadTooLarge;
    // RFC 9110 §8.6 and RFC 9112 §6.1: no Content-Length or Transfer-Encoding in a 1xx or 204.
    // In a response to HEAD, or a 304, they describe the representation, not this message:
    // they pass as sent. Otherwise the framing is sluice's own, written after the fields.
    const no_content = head.status < 200 or head.status == 204;
    const describes_representation = !no_content and head.body == .none;
    const names_fields = head.connectionNamesFields();
    var kept: KeptFields = .empty;
    for (head.headers, 0..) |field, i| {
        switch (classify(field.name)) {
            .content_length => if (!describes_representation) continue,
            .transfer_encoding => if (!describes_representation or !options.keep_transfer_encoding) continue,
            .hop_by_hop => continue,
            .upgrade => if (options.connection != .upgrade) continue,
            .other, .host, .x_forwarded_for, .x_forwarded_proto, .x_forwarded_host, .forwarded, .x_real_ip => {
                if (names_fields and head.connectionHasToken(field.name)) continue;
                if (options.rules) |rules| if (rules.side.drops(field.name)) continue;
                if (options.change) |change| if (change.drops(field.name)) continue;
            },
        }
        kept.set(i);
    }
    return kept;
}

/// Reads the head only through `Emitter.copy` (offsets) and its parsed numbers: see
/// `keptFields`.
fn emitResponse(
    e: *Emitter,
    head: *const http.ResponseParser.Head,
    kept: *const KeptFields,
    tail: Tail,
) ResponseError!void {
    assert(head.status >= 100 and head.status <= 599); // The parser checked it.
    const status_text = [3]u8{
        @intCast('0' + head.status / 100),
        @intCast('0' + head.status / 10 % 10),
        @intCast('0' + head.status % 10),
    };
    // Lines that are already written as sluice would write them (most of a backend's head)
    // go over as runs, one move each, instead of piece by piece.
    var run: []const u8 = "";
    if (e.normalStatusLine(head)) |line| {
        run = line;
    } else {
        try e.literal("HTTP/1.1 ");
        try e.literal(&status_text);
        try e.literal(" ");
        // No reason (an HTTP/2 backend's head has none; an HTTP/1.1 one may send none): the
        // standard phrase, which some clients' parsers require (llhttp's, in h2load).
        try e.copy(if (head.reason.len > 0) head.reason else http.LocalResponse.standardPhrase(head.status));
        try e.literal("\r\n");
    }
    for (head.headers, 0..) |field, i| {
        if (!kept.isSet(i)) continue;
        if (e.normalFieldLine(field)) |line| {
            if (run.len > 0 and run.ptr + run.len == line.ptr) {
                run.len += line.len;
                continue;
            }
            try e.copy(run);
            run = line;
            continue;
        }
        try e.copy(run);
        run = "";
        try e.field(field.name, field.value);
    }
    try e.copy(run);
    if (tail.rules) |rules| {
        for (rules.side.written) |field| {
            try e.literal(field.name);
            try e.literal(": ");
            if (field.variables) {
                var pieces = rules.variables.pieces(field.value);
                while (pieces.next()) |piece| try e.literal(piece);
            } else {
                try e.literal(field.value);
            }
            try e.literal("\r\n");
        }
    }
    try e.literal(tail.framing);
}

/// What sluice writes after the fields it keeps: the rules' fields, if any, then its own
/// framing and the end of the head (`composeTail`).
const Tail = struct {
    framing: []const u8,
    rules: ?*const Rules,

    inline fn len(tail: *const Tail) usize {
        const rules = tail.rules orelse return tail.framing.len;
        return rules.side.writtenBytes(rules.variables) + tail.framing.len;
    }

    /// Into `out`, of exactly `len` bytes (outside the bytes being moved: the rules' values
    /// live in the config and the client's buffer).
    inline fn write(tail: *const Tail, out: []u8) void {
        if (tail.rules == null) return @memcpy(out, tail.framing);
        const rules_len = out.len - tail.framing.len;
        if (tail.rules) |rules| rules.side.write(rules.variables, out[0..rules_len]);
        @memcpy(out[rules_len..], tail.framing);
    }
};

/// The longest tail: a Content-Length of 20 digits (or the chunked coding), compression's
/// fields, the extra field, a Connection field and the empty line.
const tail_bytes_max = "Content-Length: ".len + 20 + 2 + compression_fields_bytes_max + extra_field_bytes_max +
    "Connection: keep-alive\r\n".len + 2;
const compression_fields_bytes_max = "Content-Encoding: gzip\r\n".len + "Vary: Accept-Encoding\r\n".len +
    "ETag: \r\n".len + compression.etag_bytes_max + 2;

/// What sluice writes after the fields it keeps: its own framing, the extra field, what
/// happens to the connection, and the empty line that ends the head.
fn composeTail(out: *[tail_bytes_max]u8, head: *const http.ResponseParser.Head, options: ResponseRewrite) []const u8 {
    assert(options.extra_field.len <= extra_field_bytes_max); // rewriteResponse checked.
    var w: Out = .{ .buffer = out };
    switch (head.body) {
        .content_length => |length| {
            var digits: [20]u8 = undefined;
            w.puts(&.{ "Content-Length: ", decimal(&digits, length), "\r\n" }) catch unreachable; // Sized for the longest.
        },
        .chunked => if (options.keep_transfer_encoding) w.put("Transfer-Encoding: chunked\r\n") catch unreachable,
        .none, .close_delimited => {},
    }
    if (options.change) |change| composeChange(&w, change);
    w.put(options.extra_field) catch unreachable;
    w.put(switch (options.connection) {
        .keep_alive_default => "",
        .keep_alive_explicit => "Connection: keep-alive\r\n",
        .close => "Connection: close\r\n",
        .upgrade => "Connection: upgrade\r\n",
    }) catch unreachable;
    w.put("\r\n") catch unreachable;
    return w.written();
}

/// Compression's fields (the tail is sized for all of them).
fn composeChange(w: *Out, change: *const compression.HeadChange) void {
    assert(change.weak_etag.len <= compression.etag_bytes_max + 2);
    if (change.gzip) w.put("Content-Encoding: gzip\r\n") catch unreachable;
    if (change.vary) w.put("Vary: Accept-Encoding\r\n") catch unreachable;
    if (change.weak_etag.len > 0) w.puts(&.{ "ETag: ", change.weak_etag, "\r\n" }) catch unreachable;
}

/// The usual case in one pass: the status line and every kept field read as sluice would write
/// them, so the new head is those lines in order, each moved left (the first to offset 0,
/// before the head, so no move runs over a byte still to be moved), then `tail`; the bytes
/// after the head follow it. Null, with nothing written, when a line needs rewriting.
fn rewriteNormal(
    buffer: []u8,
    head_start: usize,
    head_len: usize,
    received_len: usize,
    head: *const http.ResponseParser.Head,
    kept: *const KeptFields,
    tail: Tail,
) ResponseError!?usize {
    const probe: Emitter = .{ .buffer = buffer, .mode = .plan };
    // The kept lines as runs of adjacent ones, found before anything moves.
    var runs: [runs_max][]const u8 = undefined;
    var runs_count: usize = 1;
    runs[0] = probe.normalStatusLine(head) orelse return null;
    for (head.headers, 0..) |field, i| {
        if (!kept.isSet(i)) continue;
        const line = probe.normalFieldLine(field) orelse return null;
        const last = &runs[runs_count - 1];
        if (last.ptr + last.len == line.ptr) {
            last.len += line.len;
            continue;
        }
        if (runs_count == runs_max) return null;
        runs[runs_count] = line;
        runs_count += 1;
    }
    var at: usize = 0;
    for (runs[0..runs_count]) |run| at = moveLeft(buffer, at, run);
    const new_len = at + tail.len();
    const rest_start = head_start + head_len;
    const rest_len = received_len - head_len;
    if (new_len + rest_len > buffer.len) return error.HeadTooLarge;
    if (new_len > rest_start) {
        // The tail reaches into what followed the head: that moves right first.
        @memmove(buffer[new_len..][0..rest_len], buffer[rest_start..][0..rest_len]);
        tail.write(buffer[at..new_len]);
    } else {
        tail.write(buffer[at..new_len]);
        @memmove(buffer[new_len..][0..rest_len], buffer[rest_start..][0..rest_len]);
    }
    return new_len;
}

/// Runs of adjacent kept lines `rewriteNormal` moves: a backend's head drops a few fields
/// (framing, Connection, what it names), so a few runs; more go the two-pass way.
const runs_max = 16;

/// Moves `run` (a slice of `buffer`, right of `at`) to `at`; returns where the next goes.
fn moveLeft(buffer: []u8, at: usize, run: []const u8) usize {
    const from = @intFromPtr(run.ptr) - @intFromPtr(buffer.ptr);
    assert(at <= from and from + run.len <= buffer.len);
    @memmove(buffer[at..][0..run.len], buffer[from..][0..run.len]);
    return at + run.len;
}

/// `value` in decimal, written at the end of `digits`: twice per relayed response head, where
/// `std.fmt` costs several times as much.
fn decimal(digits: *[20]u8, value: u64) []const u8 {
    var rest = value;
    var at: usize = digits.len;
    while (true) {
        at -= 1;
        digits[at] = @intCast('0' + rest % 10);
        rest /= 10;
        if (rest == 0) return digits[at..];
    }
}

// ---------------------------------------------------------------------------------------------
// Tests

test "rewrite: decimal writes every u64 as std.fmt does" {
    var digits: [20]u8 = undefined;
    var expected: [20]u8 = undefined;
    for ([_]u64{ 0, 7, 10, 1234567890, std.math.maxInt(u64) }) |value| {
        try testing.expectEqualStrings(try std.fmt.bufPrint(&expected, "{d}", .{value}), decimal(&digits, value));
    }
}

const testing = std.testing;

fn parseRequest(text: []const u8, headers: []http.Header) !http.RequestParser {
    var parser: http.RequestParser = .init(headers, .{
        .header_bytes_max = 16 * 1024,
        .headers_count_max = @intCast(headers.len),
        .target_bytes_max = 8 * 1024,
    });
    switch (parser.feed(text)) {
        .complete => return parser,
        else => return error.TestUnexpectedResult,
    }
}

fn composeForTest(out: []u8, text: []const u8, forwarding: Forwarding) ![]const u8 {
    var headers: [64]http.Header = undefined;
    const parser = try parseRequest(text, &headers);
    const composed = try composeRequest(out, &parser.head, forwarding, .{});
    return out[0..composed.len];
}

const untrusted: Forwarding = .{ .client_ip = "10.0.0.9", .trusted = false };

test "rewrite: request drops hop-by-hop fields and those named in Connection" {
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "GET /a?b HTTP/1.1\r\nHost: example.com\r\n" ++
        "Connection: keep-alive, X-Secret\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n" ++
        "X-Secret: 1\r\nProxy-Authorization: Basic x\r\nAccept: */*\r\n" ++
        "X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil\r\n\r\n", untrusted);
    try testing.expectEqualStrings("GET /a?b HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n" ++
        "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\n" ++
        "X-Forwarded-Host: example.com\r\n\r\n", text);
}

test "rewrite: Connection never removes a field sluice owns; the length is sluice's own" {
    // The probe's smuggling request: without its Content-Length the backend would read the
    // body as a second request.
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "POST /a HTTP/1.1\r\nHost: example.com\r\n" ++
        "Connection: Content-Length, host, X-Forwarded-For, Upgrade, transfer-encoding\r\n" ++
        "Content-Length: 007\r\n\r\nabcdefg", untrusted);
    try testing.expectEqualStrings("POST /a HTTP/1.1\r\nHost: example.com\r\n" ++
        "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\n" ++
        "X-Forwarded-Host: example.com\r\nContent-Length: 7\r\n\r\n", text);
    const chunked = try composeForTest(&out, "POST / HTTP/1.1\r\nHost: h\r\n" ++
        "Connection:Transfer-Encoding\r\nTransfer-Encoding: chunked\r\n\r\n", untrusted);
    try testing.expect(std.mem.endsWith(u8, chunked, "Transfer-Encoding: chunked\r\n\r\n"));
    // A zero length stays explicit; no length stays absent.
    const zero = try composeForTest(&out, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", untrusted);
    try testing.expect(std.mem.endsWith(u8, zero, "Content-Length: 0\r\n\r\n"));
    const none = try composeForTest(&out, "GET / HTTP/1.1\r\nHost: h\r\n\r\n", untrusted);
    try testing.expect(std.mem.indexOf(u8, none, "Content-Length") == null);
}

test "rewrite: a trusted peer's forwarding chain is kept and appended to" {
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "POST / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 1.1.1.1\r\n" ++
        "Transfer-Encoding: chunked\r\nX-Forwarded-For: 2.2.2.2, 3.3.3.3\r\n" ++
        "X-Forwarded-Proto: https\r\nForwarded: for=1.1.1.1\r\nX-Real-IP: 1.1.1.1\r\n" ++
        "Connection: X-Forwarded-Proto, X-Real-IP\r\n\r\n", .{ .client_ip = "::1", .trusted = true });
    try testing.expectEqualStrings("POST / HTTP/1.1\r\nHost: h\r\nX-Forwarded-Proto: https\r\n" ++
        "Forwarded: for=1.1.1.1\r\nX-Real-IP: 1.1.1.1\r\n" ++
        "X-Forwarded-For: 1.1.1.1, 2.2.2.2, 3.3.3.3, ::1\r\nForwarded: for=\"[::1]\"\r\n" ++
        "X-Forwarded-Host: h\r\nTransfer-Encoding: chunked\r\n\r\n", text);
}

test "rewrite: an untrusted client's Forwarded and X-Real-IP never reach the backend" {
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "GET / HTTP/1.1\r\nHost: h\r\nForwarded: for=6.6.6.6\r\n" ++
        "X-Real-IP: 6.6.6.6\r\nx-real-ip: 7.7.7.7\r\n\r\n", untrusted);
    try testing.expect(std.mem.indexOf(u8, text, "6.6.6.6") == null);
    try testing.expect(std.mem.indexOf(u8, text, "7.7.7.7") == null);
}

test "rewrite: a client certificate's fields are sluice's: the client's of those names never pass" {
    var out: [1024]u8 = undefined;
    const request = "GET / HTTP/1.1\r\nHost: h\r\nX-Client-Subject: CN=admin\r\nx-client-sha256: 00\r\n" ++
        "Accept: */*\r\n\r\n";
    var forwarding = untrusted;
    forwarding.certificate = .{
        .subject_name = "X-Client-Subject",
        .fingerprint_name = "X-Client-Sha256",
        .subject = "CN=alice,O=Example",
        .fingerprint = "a844b1a213a3d1d378d71946799c3cfb8b646a937dcf059a98de16bcfa0b7f07",
    };
    const verified = try composeForTest(&out, request, forwarding);
    try testing.expectEqualStrings("GET / HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n" ++
        "X-Client-Subject: CN=alice,O=Example\r\n" ++
        "X-Client-Sha256: a844b1a213a3d1d378d71946799c3cfb8b646a937dcf059a98de16bcfa0b7f07\r\n" ++
        "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n\r\n", verified);
    // No certificate presented: the client's claims go, and nothing takes their place.
    forwarding.certificate.?.subject = null;
    forwarding.certificate.?.fingerprint = null;
    const anonymous = try composeForTest(&out, request, forwarding);
    try testing.expectEqualStrings("GET / HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n" ++
        "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n\r\n", anonymous);
}

test "rewrite: field names with an underscore are dropped and counted unless allowed" {
    var headers: [8]http.Header = undefined;
    const parser = try parseRequest("GET / HTTP/1.1\r\nHost: h\r\nX_Forwarded_For: 6.6.6.6\r\n" ++
        "X-Ok: 1\r\nmy_field: 2\r\n\r\n", &headers);
    var out: [1024]u8 = undefined;
    const dropped = try composeRequest(&out, &parser.head, untrusted, .{});
    try testing.expectEqual(@as(u32, 2), dropped.underscore_fields_dropped);
    try testing.expect(std.mem.indexOf(u8, out[0..dropped.len], "6.6.6.6") == null);
    try testing.expect(std.mem.indexOf(u8, out[0..dropped.len], "X-Ok: 1\r\n") != null);
    var allowed = untrusted;
    allowed.allow_underscores = true;
    const kept = try composeRequest(&out, &parser.head, allowed, .{});
    try testing.expectEqual(@as(u32, 0), kept.underscore_fields_dropped);
    try testing.expect(std.mem.indexOf(u8, out[0..kept.len], "my_field: 2\r\n") != null);
}

test "rewrite: an upgrade request keeps Upgrade and says so in Connection" {
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n" ++
        "Upgrade: websocket\r\nSec-WebSocket-Key: k\r\n\r\n", .{ .client_ip = "::1", .trusted = false });
    try testing.expectEqualStrings("GET /ws HTTP/1.1\r\nHost: h\r\nSec-WebSocket-Key: k\r\n" ++
        "X-Forwarded-For: ::1\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n" ++
        "Connection: upgrade\r\nUpgrade: websocket\r\n\r\n", text);
}

test "rewrite: an absolute-form target becomes origin-form with its authority as Host" {
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "GET http://Example.com:8080/p?q=1 HTTP/1.1\r\n" ++
        "Host: other.example\r\nAccept: */*\r\n\r\n", untrusted);
    try testing.expectEqualStrings("GET /p?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\n" ++
        "Accept: */*\r\nX-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\n" ++
        "X-Forwarded-Host: Example.com:8080\r\n\r\n", text);
    const bare = try composeForTest(&out, "GET http://h?x HTTP/1.1\r\nHost: h\r\n\r\n", untrusted);
    try testing.expect(std.mem.startsWith(u8, bare, "GET /?x HTTP/1.1\r\nHost: h\r\n"));
}

test "rewrite: an h2c upgrade is forwarded as a plain request" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n" ++
        "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", &headers);
    try testing.expect(!upgradeAllowed(&parser.head));
    var out: [1024]u8 = undefined;
    const composed = try composeRequest(&out, &parser.head, untrusted, .{});
    try testing.expectEqualStrings("GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 10.0.0.9\r\n" ++
        "X-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n\r\n", out[0..composed.len]);
}

test "rewrite: a head that does not fit is NoSpaceLeft, never a partial write past the end" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("GET / HTTP/1.1\r\nHost: h\r\n\r\n", &headers);
    var out: [64]u8 = undefined;
    for (0..out.len) |len| {
        try testing.expectError(error.NoSpaceLeft, composeRequest(out[0..len], &parser.head, untrusted, .{}));
    }
}

test "rewrite: a handler's overrides replace the target and the client's fields of their names; framing and forwarding stay sluice's" {
    var headers: [32]http.Header = undefined;
    const parser = try parseRequest("POST http://h/old?q HTTP/1.1\r\nHost: h\r\nX-User: client\r\n" ++
        "x-user: again\r\nAccept: */*\r\nContent-Length: 3\r\n\r\n", &headers);
    var out: [1024]u8 = undefined;
    const fields = [_]http.Header{ .{ .name = "X-USER", .value = "handler" }, .{ .name = "X-New", .value = "1" } };
    const composed = try composeRequest(&out, &parser.head, untrusted, .{ .target = "/new?x=1", .fields = &fields });
    try testing.expectEqualStrings("POST /new?x=1 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nX-USER: handler\r\n" ++
        "X-New: 1\r\nX-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n" ++
        "Content-Length: 3\r\n\r\n", out[0..composed.len]);
    // Bounded in every build mode: a rewrite that does not fit is NoSpaceLeft.
    for (0..composed.len) |len| {
        try testing.expectError(error.NoSpaceLeft, composeRequest(out[0..len], &parser.head, untrusted, .{ .target = "/new?x=1", .fields = &fields }));
    }
    // Removed names: every client field of the name goes, in any case; the rest stay.
    const removed = [_][]const u8{ "x-USER", "absent" };
    const without = try composeRequest(&out, &parser.head, untrusted, .{ .removed = &removed });
    try testing.expectEqualStrings("POST /old?q HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n" ++
        "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n" ++
        "Content-Length: 3\r\n\r\n", out[0..without.len]);
}

const response_limits: http.Limits = .{
    .header_bytes_max = 64 * 1024,
    .headers_count_max = 1024,
    .target_bytes_max = 8 * 1024,
};

/// Puts `response` at `start` in `buffer`, parses and rewrites it; returns the new head and
/// what follows it.
fn rewriteForTest(
    buffer: []u8,
    start: usize,
    response: []const u8,
    method: http.Method,
    options: ResponseRewrite,
) !struct { head: []const u8, rest: []const u8 } {
    const headers = try testing.allocator.alloc(http.Header, response_limits.headers_count_max);
    defer testing.allocator.free(headers);
    var parser: http.ResponseParser = .init(headers, response_limits);
    @memcpy(buffer[start..][0..response.len], response);
    const head_len: usize = switch (parser.feed(buffer[start..][0..response.len], method)) {
        .complete => |len| len,
        else => return error.TestUnexpectedResult,
    };
    const n = try rewriteResponse(buffer, start, head_len, response.len, &parser.head, options);
    return .{ .head = buffer[0..n], .rest = buffer[n..][0 .. response.len - head_len] };
}

test "rewrite: response head rewritten in place, the bytes behind it follow it" {
    var buffer: [512]u8 = undefined;
    const response = "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n" ++
        "Keep-Alive: timeout=5\r\nContent-Length: 5\r\nServer: s\r\n\r\nhello";
    const result = try rewriteForTest(&buffer, response_headroom_bytes, response, .get, .{ .connection = .close });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nServer: s\r\nContent-Length: 5\r\n" ++
        "Connection: close\r\n\r\n", result.head);
    try testing.expectEqualStrings("hello", result.rest);
}

test "rewrite: response rules drop their names and write theirs before sluice's framing" {
    const side: HeaderPolicy.Side = .{
        .dropped = &.{ "server", "x-powered-by", "cache-control" },
        .written = &.{
            .{ .name = "Cache-Control", .value = "no-store", .variables = false },
            .{ .name = "X-Request-Id", .value = "$request_id", .variables = true },
        },
    };
    const variables: HeaderPolicy.Variables = .{ .client_ip = "10.0.0.9", .request_id = "r1", .scheme = "http" };
    const rules: *const Rules = &.{ .side = &side, .variables = &variables };
    // Headroom 0 and a head that grows: the received bytes move right, the body follows.
    var buffer: [512]u8 = undefined;
    const response = "HTTP/1.1 200 OK\r\nServer: s\r\nCache-Control: public\r\nX-Powered-By: php\r\n" ++
        "Content-Length: 5\r\nETag: \"e\"\r\n\r\nhello";
    for ([_]usize{ 0, response_headroom_bytes }) |start| {
        const result = try rewriteForTest(&buffer, start, response, .get, .{ .connection = .keep_alive_default, .rules = rules });
        try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nETag: \"e\"\r\nCache-Control: no-store\r\n" ++
            "X-Request-Id: r1\r\nContent-Length: 5\r\n\r\n", result.head);
        try testing.expectEqualStrings("hello", result.rest);
    }
    // A head that is not in sluice's form takes the two-pass way, with the same result.
    const odd = "HTTP/1.0 200 OK\r\nServer:s\r\nContent-Length: 5\r\n\r\nhello";
    const result = try rewriteForTest(&buffer, 0, odd, .get, .{ .connection = .close, .rules = rules });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nX-Request-Id: r1\r\n" ++
        "Content-Length: 5\r\nConnection: close\r\n\r\n", result.head);
}

test "rewrite: request rules replace the client's fields of their names and cannot touch framing" {
    const side: HeaderPolicy.Side = .{
        .dropped = &.{ "x-env", "x-request-id" },
        .written = &.{
            .{ .name = "X-Request-Id", .value = "$request_id", .variables = true },
            .{ .name = "X-Env", .value = "prod", .variables = false },
            .{ .name = "X-Via", .value = "$scheme://$host for $client_ip", .variables = true },
        },
    };
    const variables: HeaderPolicy.Variables = .{ .client_ip = "10.0.0.9", .request_id = "abc", .scheme = "http", .host = "h" };
    var forwarding = untrusted;
    forwarding.rules = &.{ .side = &side, .variables = &variables };
    var out: [1024]u8 = undefined;
    const text = try composeForTest(&out, "POST / HTTP/1.1\r\nHost: h\r\nX-Env: dev\r\nx-request-id: evil\r\n" ++
        "Content-Length: 2\r\n\r\nhi", forwarding);
    try testing.expectEqualStrings("POST / HTTP/1.1\r\nHost: h\r\nX-Request-Id: abc\r\nX-Env: prod\r\n" ++
        "X-Via: http://h for 10.0.0.9\r\nX-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Proto: http\r\n" ++
        "X-Forwarded-Host: h\r\nContent-Length: 2\r\n\r\n", text);
    // Too little room: NoSpaceLeft, not a partial field.
    try testing.expectError(error.NoSpaceLeft, composeForTest(out[0..60], "GET / HTTP/1.1\r\nHost: h\r\n\r\n", forwarding));
}

test "rewrite: a response's framing survives Connection naming it (and is sluice's own)" {
    var buffer: [512]u8 = undefined;
    const length = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 200 OK\r\n" ++
        "Connection: Content-Length\r\nContent-Length: 05\r\n\r\nhello", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", length.head);
    const chunked = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 200 OK\r\n" ++
        "connection: transfer-encoding\r\nTransfer-Encoding:chunked\r\n\r\n0\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", chunked.head);
    try testing.expectEqualStrings("0\r\n\r\n", chunked.rest);
}

test "rewrite: no framing fields on 1xx and 204; HEAD and 304 keep theirs as sent" {
    var buffer: [512]u8 = undefined;
    const interim = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 100 Continue\r\n" ++
        "Transfer-Encoding: chunked\r\n\r\nHTTP/1.1 200 OK\r\n", .post, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 100 Continue\r\n\r\n", interim.head);
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\n", interim.rest);
    const no_content = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 204 No Content\r\n" ++
        "Transfer-Encoding: chunked\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 204 No Content\r\n\r\n", no_content.head);
    const no_content_length = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 204 No Content\r\n" ++
        "Content-Length: 3\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 204 No Content\r\n\r\n", no_content_length.head);
    const head = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 200 OK\r\n" ++
        "Content-Length: 99\r\n\r\n", .head, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head.head);
    const not_modified = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 304 Not Modified\r\n" ++
        "Content-Length: 99\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", not_modified.head);
}

test "rewrite: a head that came as fields (an HTTP/2 backend's) is written out in front of the body" {
    var buffer: [512]u8 = undefined;
    // The fields' bytes live elsewhere (the try's inbox), lowercase as HTTP/2 sends them.
    var names = "content-typeserver".*;
    const fields = [_]http.Header{
        .{ .name = names[0..12], .value = "text/plain" },
        .{ .name = names[12..], .value = "s" },
    };
    const head: http.ResponseParser.Head = .{
        .version = .http11,
        .status = 200,
        .reason = "",
        .headers = &fields,
        .body = .chunked,
        .keep_alive = true,
        .upgrade = false,
        .has_connection = false,
    };
    const body = "5\r\nhello\r\n";
    @memcpy(buffer[response_headroom_bytes..][0..body.len], body);
    const n = try rewriteResponse(&buffer, response_headroom_bytes, 0, body.len, &head, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nserver: s\r\n" ++
        "Transfer-Encoding: chunked\r\n\r\n", buffer[0..n]);
    try testing.expectEqualStrings(body, buffer[n..][0..body.len]);
    // With no headroom at all: the body moves right for the head, then follows it.
    @memcpy(buffer[0..body.len], body);
    const m = try rewriteResponse(&buffer, 0, 0, body.len, &head, .{ .connection = .close });
    try testing.expectEqualStrings("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nserver: s\r\n" ++
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n", buffer[0..m]);
    try testing.expectEqualStrings(body, buffer[m..][0..body.len]);
}

test "rewrite: a status line without a reason gets the standard phrase, an unnamed code none" {
    var buffer: [512]u8 = undefined;
    const named = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", named.head);
    const early = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 103 \r\nLink: </s.css>\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n", early.head);
    const unnamed = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 299\r\nContent-Length: 0\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 299 \r\nContent-Length: 0\r\n\r\n", unnamed.head);
    // A reason as sent stays, whatever it says.
    const own = try rewriteForTest(&buffer, response_headroom_bytes, "HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n", .get, .{ .connection = .keep_alive_default });
    try testing.expectEqualStrings("HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n", own.head);
}

/// A response head of `count` fields written `A1:1`, `A2:2`... (each grows by one byte).
fn tightFields(buffer: []u8, count: usize, body: []const u8) []const u8 {
    var w: std.Io.Writer = .fixed(buffer);
    w.writeAll("HTTP/1.1 200\r\n") catch unreachable;
    for (0..count) |i| w.print("A{d}:{d}\r\n", .{ i, i }) catch unreachable;
    w.print("Content-Length:{d}\r\n\r\n{s}", .{ body.len, body }) catch unreachable;
    return w.buffered();
}

test "rewrite: growth past the headroom moves the body instead of writing over it" {
    // The probe's case: many `Name:value` fields plus a sticky cookie outgrow the headroom.
    var source: [8192]u8 = undefined;
    const body = "012345678901234567890123456789012345678901234567890123456789";
    const response = tightFields(&source, 160, body);
    var buffer: [16 * 1024]u8 = undefined;
    const cookie = "Set-Cookie: sluice=0123456789abcdef; Path=/; HttpOnly\r\n";
    const result = try rewriteForTest(&buffer, response_headroom_bytes, response, .get, .{
        .connection = .keep_alive_default,
        .extra_field = cookie,
    });
    try testing.expectEqualStrings(body, result.rest);
    try testing.expect(std.mem.endsWith(u8, result.head, "Content-Length: 60\r\n" ++ cookie ++ "\r\n"));
    try testing.expect(std.mem.indexOf(u8, result.head, "\r\nA159: 159\r\n") != null);
    try testing.expectEqual(@as(usize, 160 + 4), std.mem.count(u8, result.head, "\r\n"));
}

test "rewrite: a head that cannot fit the buffer is refused, and nothing past it is touched" {
    var source: [8192]u8 = undefined;
    const response = tightFields(&source, 200, "xy");
    // Room for the response and the headroom, but not for 200 bytes of growth as well.
    var buffer: [4096 + 64]u8 = undefined;
    const size = response_headroom_bytes + response.len + 10;
    try testing.expect(size <= buffer.len);
    @memset(buffer[size..], 0xAA);
    try testing.expectError(error.HeadTooLarge, rewriteForTest(buffer[0..size], response_headroom_bytes, response, .get, .{
        .connection = .keep_alive_default,
    }));
    for (buffer[size..]) |byte| try testing.expectEqual(@as(u8, 0xAA), byte);
}

test "rewrite: the one-pass rewrite of a head written as sluice writes equals the two-pass one" {
    var prng: std.Random.DefaultPrng = .init(0x0e1e);
    const random = prng.random();
    var source: [4096]u8 = undefined;
    var one: [6000]u8 = undefined;
    var two: [6000]u8 = undefined;
    var fast: u32 = 0;
    for (0..300) |_| {
        var w: std.Io.Writer = .fixed(&source);
        try w.writeAll("HTTP/1.1 200 OK\r\n");
        for (0..random.uintLessThan(usize, 40)) |i| {
            const name = switch (random.uintLessThan(u8, 8)) {
                0 => "Keep-Alive",
                1 => "Connection",
                2 => "Content-Length",
                else => "X",
            };
            if (std.mem.eql(u8, name, "Content-Length")) continue; // One, at the end.
            try w.print("{s}{d}: v{d}\r\n", .{ name, i, i });
        }
        const body = "0123456789abcdef"[0..random.uintLessThan(usize, 17)];
        try w.print("Content-Length: {d}\r\n\r\n{s}", .{ body.len, body });
        const response = w.buffered();
        const start = random.uintLessThan(usize, 200);
        const size = @min(one.len, start + response.len + random.uintLessThan(usize, 300));
        const extra = if (random.boolean()) "Set-Cookie: s=1\r\n" else "";
        const rules_side: HeaderPolicy.Side = .{
            .dropped = &.{ "server", "x-a" },
            .written = &.{
                .{ .name = "X-Frame-Options", .value = "DENY", .variables = false },
                .{ .name = "X-Client", .value = "$client_ip ($scheme)", .variables = true },
            },
        };
        const variables: HeaderPolicy.Variables = .{ .client_ip = "10.0.0.9", .scheme = "http" };
        const rules_value: Rules = .{ .side = &rules_side, .variables = &variables };
        const rules: ?*const Rules = if (random.boolean()) &rules_value else null;
        const options: ResponseRewrite = .{
            .connection = if (random.boolean()) .close else .keep_alive_default,
            .extra_field = extra,
            .rules = rules,
        };
        const headers = try testing.allocator.alloc(http.Header, response_limits.headers_count_max);
        defer testing.allocator.free(headers);
        for ([_]*[6000]u8{ &one, &two }) |buffer| @memcpy(buffer[start..][0..response.len], response);
        var parser: http.ResponseParser = .init(headers, response_limits);
        const head_len = switch (parser.feed(one[start..][0..response.len], .get)) {
            .complete => |len| len,
            else => return error.TestUnexpectedResult,
        };
        const kept = try keptFields(&parser.head, options);
        var tail_buffer: [tail_bytes_max]u8 = undefined;
        const tail: Tail = .{ .framing = composeTail(&tail_buffer, &parser.head, options), .rules = rules };
        const one_len = rewriteNormal(one[0..size], start, head_len, response.len, &parser.head, &kept, tail) catch |err| {
            try testing.expectEqual(error.HeadTooLarge, err);
            continue;
        } orelse continue;
        fast += 1;
        // The two-pass rewrite reads the head where the parser found it: in `two`, as it was.
        const offset = @intFromPtr(two[0..].ptr) -% @intFromPtr(one[0..].ptr);
        const moved = try testing.allocator.alloc(http.Header, parser.head.headers.len);
        defer testing.allocator.free(moved);
        for (parser.head.headers, moved) |field, *copy| copy.* = .{
            .name = @as([*]const u8, @ptrFromInt(@intFromPtr(field.name.ptr) +% offset))[0..field.name.len],
            .value = @as([*]const u8, @ptrFromInt(@intFromPtr(field.value.ptr) +% offset))[0..field.value.len],
        };
        var head = parser.head;
        head.headers = moved;
        head.reason = @as([*]const u8, @ptrFromInt(@intFromPtr(head.reason.ptr) +% offset))[0..head.reason.len];
        const two_len = try rewriteTwoPass(two[0..size], start, head_len, response.len, &head, &kept, tail);
        try testing.expectEqualStrings(two[0..two_len], one[0..one_len]);
        try testing.expectEqualStrings(two[two_len..][0..body.len], one[one_len..][0..body.len]);
        try testing.expectEqualStrings(body, one[one_len..][0..body.len]);
    }
    try testing.expect(fast > 200); // The one-pass path was taken, not refused.
}

test "rewrite: any headroom and any field shape either rewrites exactly or is refused" {
    // Model check: a rewrite that succeeds equals a rewrite into a separate buffer.
    var prng: std.Random.DefaultPrng = .init(0x5eed);
    const random = prng.random();
    var source: [4096]u8 = undefined;
    var buffer: [6000]u8 = undefined;
    for (0..300) |_| {
        var w: std.Io.Writer = .fixed(&source);
        try w.writeAll(if (random.boolean()) "HTTP/1.1 200\r\n" else "HTTP/1.1 200 OK\r\n");
        const fields = random.uintLessThan(usize, 60);
        for (0..fields) |i| {
            // Written as sluice writes a field, or not (taken one at a time then).
            const space = switch (random.uintLessThan(u8, 3)) {
                0 => "",
                1 => "  ",
                else => " ",
            };
            const trailing = if (space.len == 1) "" else space;
            const name = if (random.uintLessThan(u8, 8) == 0) "Keep-Alive" else "X";
            try w.print("{s}{d}:{s}v{d}{s}\r\n", .{ name, i, space, i, trailing });
        }
        if (random.boolean()) try w.writeAll("Connection: x3, keep-alive\r\n");
        try w.writeAll("Content-Length: 3\r\n\r\nabc");
        const response = w.buffered();
        const start = random.uintLessThan(usize, 200);
        const size = start + response.len + random.uintLessThan(usize, 300);
        const extra = if (random.boolean()) "Set-Cookie: s=1\r\n" else "";
        const options: ResponseRewrite = .{ .connection = .close, .extra_field = extra };
        const result = rewriteForTest(buffer[0..size], start, response, .get, options) catch |err| {
            try testing.expectEqual(error.HeadTooLarge, err);
            continue;
        };
        var expected: [8192]u8 = undefined;
        const model = try rewriteForTest(&expected, 4096, response, .get, options);
        try testing.expectEqualStrings(model.head, result.head);
        try testing.expectEqualStrings("abc", result.rest);
    }
}
