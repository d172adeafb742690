//! What a TLS listener serves: its certificates, chosen by SNI from the names in the
//! certificates themselves, and the protocol policy. Built on the control thread (start-up,
//! reload) and shared read-only by every worker: `Engine.initServer` makes a connection from
//! it on any thread.
//!
//! Decision: one AWS-LC `SSL_CTX` per group of certificates that carry the same names (an
//! RSA and an ECDSA certificate for one site share a group, and AWS-LC picks the one the
//! client's signature algorithms allow); the first group is the default, for clients that
//! send no SNI or a name no certificate has. SNI switches a connection to its group's
//! `SSL_CTX` in AWS-LC's servername callback, as nginx and HAProxy do. Names are matched
//! exactly, then as a wildcard on the first label (`*.example.com` covers `a.example.com`,
//! not `example.com` nor `a.b.example.com`, RFC 6125 §6.4.3), case-insensitively.
//!
//! Policy: Mozilla's "intermediate" (guidelines 5.7) as AWS-LC can serve it: TLS 1.2 and 1.3;
//! for 1.2 ECDHE with AES-GCM or ChaCha20-Poly1305 only (AWS-LC has no finite-field DHE, which
//! the guidelines keep for clients older than any that still speak TLS 1.2 with AES-GCM);
//! groups X25519, P-256, P-384; the client's cipher preference (every cipher offered is
//! strong); RSA keys of at least 2048 bits and no SHA-1 or MD5 signatures in a served chain
//! (checked here: AWS-LC has no OpenSSL "security level"). Renegotiation is refused: AWS-LC
//! never renegotiates as a server, and answers a client's request with a fatal
//! no_renegotiation alert. Session resumption is by ticket only, sealed with the process's
//! `TicketKeys`: no server-side session cache, so nothing per session is kept and any worker
//! resumes any ticket.
//!
//! Client certificates (`Options.client_certificates`): the listener asks for one signed by
//! the operator's CAs, and refuses a connection without one (`required`) or accepts it
//! (`optional`); a certificate that is sent must verify either way (nginx's `ssl_verify_client
//! on | optional`). Such a context gets its own session ID context (a hash of the CAs and the
//! mode), so a ticket issued where no certificate was asked for never resumes where one is.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("aws_lc");
const failure = @import("failure.zig");
const certificate = @import("certificate.zig");
const TicketKeys = @import("TicketKeys.zig");
const Engine = @import("Engine.zig");

const ServerContext = @This();

arena: std.heap.ArenaAllocator,
/// The first group is the default.
groups: []Group,
/// Exact names to their group, and wildcard names by the part after "*.".
exact: std.StringHashMapUnmanaged(u16) = .empty,
wildcard: std.StringHashMapUnmanaged(u16) = .empty,
/// ALPN protocols in wire format (each preceded by its length).
alpn: []const u8,
ticket_keys: ?*const TicketKeys,
/// Engines made from this context and not yet deinitialized, on any worker.
engines_live: std.atomic.Value(u32) = .init(0),

pub const Version = enum {
    tls1_2,
    tls1_3,

    pub fn number(v: Version) u16 {
        return switch (v) {
            .tls1_2 => c.TLS1_2_VERSION,
            .tls1_3 => c.TLS1_3_VERSION,
        };
    }
};

pub const Options = struct {
    /// At least one; the first is the default certificate.
    certificates: []const certificate.Source,
    /// In the server's order of preference.
    alpn: []const []const u8 = &.{"http/1.1"},
    min_version: Version = .tls1_2,
    max_version: Version = .tls1_3,
    /// Null: no session tickets, every handshake is a full one.
    ticket_keys: ?*const TicketKeys = null,
    /// How long a client may resume a session (the ticket's lifetime hint).
    session_lifetime_s: u32 = 24 * 3600,
    /// Ask clients for a certificate signed by these CAs.
    client_certificates: ?ClientCertificates = null,
};

/// What a listener asks of its clients' certificates.
pub const ClientCertificates = struct {
    /// PEM CA certificates a client's certificate must chain to.
    ca_pem: []const u8,
    ca_name: []const u8 = "client CA file",
    verify: Verify = .required,

    pub const Verify = enum {
        /// A client without a certificate is refused (certificate_required alert).
        required,
        /// A client may send none; one that is sent must verify.
        optional,
    };
};

/// One `SSL_CTX` and the certificates in it (at most one per key type).
pub const Group = struct {
    server: *ServerContext,
    ctx: *c.SSL_CTX,
    names: []const []const u8,
    key_types: [2]?certificate.KeyType = .{ null, null },
    /// Each certificate's private key (not owned: the SSL_CTX holds it; how the status
    /// callback tells which certificate AWS-LC chose) and OCSP response.
    keys: [2]?*c.EVP_PKEY = .{ null, null },
    ocsp: [2]?[]const u8 = .{ null, null },
};

pub const Error = error{ Invalid, OutOfMemory };

pub const tls12_ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" ++
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" ++
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
pub const tls13_ciphersuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
pub const groups_list = "X25519:P-256:P-384";

/// Loads every certificate and builds the contexts. `server` must not move afterwards
/// (AWS-LC's callbacks point at it) and must outlive every engine made from it.
pub fn init(server: *ServerContext, allocator: std.mem.Allocator, options: Options, diagnostic: *certificate.Diagnostic) Error!void {
    assert(options.certificates.len > 0);
    assert(options.certificates.len <= std.math.maxInt(u16));
    server.* = .{
        .arena = .init(allocator),
        .groups = &.{},
        .alpn = &.{},
        .ticket_keys = options.ticket_keys,
    };
    errdefer server.deinitGroups();
    const arena = server.arena.allocator();
    server.alpn = try encodeAlpn(arena, options.alpn);
    var groups: std.ArrayList(Group) = .empty;
    try groups.ensureTotalCapacity(arena, options.certificates.len);
    server.groups = groups.items;
    for (options.certificates) |source| {
        var loaded = try certificate.load(source, diagnostic);
        defer loaded.deinit();
        try certificate.checkPolicy(&loaded, source, diagnostic);
        const names = try certificate.hostNames(arena, loaded.leaf);
        const ocsp = if (source.ocsp_der) |der| try checkOcsp(arena, der, source, &loaded, diagnostic) else null;
        const group = findGroup(groups.items, names.names, loaded.keyType()) orelse blk: {
            const ctx = try newContext(options, diagnostic);
            groups.appendAssumeCapacity(.{ .server = server, .ctx = ctx, .names = names.names });
            server.groups = groups.items;
            break :blk &groups.items[groups.items.len - 1];
        };
        const slot: usize = if (group.key_types[0] == null) 0 else 1;
        if (c.SSL_CTX_use_cert_and_key(group.ctx, loaded.leaf, loaded.key, loaded.chain, 1) != 1) {
            var why: [96]u8 = undefined;
            diagnostic.set("{s}: not accepted: {s}", .{ source.cert_name, failure.popReason(&why) });
            return error.Invalid;
        }
        group.key_types[slot] = loaded.keyType();
        group.keys[slot] = loaded.key;
        group.ocsp[slot] = ocsp;
    }
    for (server.groups, 0..) |*group, index| {
        try server.addNames(@intCast(index), group.names);
        if (c.SSL_CTX_set_ex_data(group.ctx, 0, group) != 1) return error.OutOfMemory;
    }
    _ = c.SSL_CTX_set_tlsext_servername_callback(server.groups[0].ctx, serverNameCallback);
}

pub fn deinit(server: *ServerContext) void {
    assert(server.engines_live.load(.acquire) == 0);
    server.deinitGroups();
    server.* = undefined;
}

fn deinitGroups(server: *ServerContext) void {
    // A connection still holding an SSL_CTX keeps it alive (AWS-LC counts references);
    // this drops the context's own.
    for (server.groups) |group| c.SSL_CTX_free(group.ctx);
    server.groups = &.{};
    server.arena.deinit();
}

/// The group for a client's SNI name, or the default.
pub fn groupFor(server: *const ServerContext, server_name: []const u8) u16 {
    var buffer: [253]u8 = undefined;
    var name = server_name;
    if (name.len > 0 and name[name.len - 1] == '.') name = name[0 .. name.len - 1];
    if (name.len == 0 or name.len > buffer.len) return 0;
    const lower = std.ascii.lowerString(&buffer, name);
    if (server.exact.get(lower)) |index| return index;
    const dot = std.mem.indexOfScalar(u8, lower, '.') orelse return 0;
    if (dot == 0) return 0;
    return server.wildcard.get(lower[dot + 1 ..]) orelse 0;
}

/// An RSA and an ECDSA certificate with the same names share an `SSL_CTX`.
fn findGroup(groups: []Group, names: []const []const u8, key_type: certificate.KeyType) ?*Group {
    for (groups) |*group| {
        if (group.key_types[1] != null) continue;
        if (group.key_types[0] == key_type) continue;
        if (group.names.len != names.len) continue;
        for (group.names, names) |a, b| {
            if (!std.mem.eql(u8, a, b)) break;
        } else return group;
    }
    return null;
}

fn addNames(server: *ServerContext, index: u16, names: []const []const u8) error{OutOfMemory}!void {
    const arena = server.arena.allocator();
    for (names) |name| {
        // An earlier certificate keeps a name it shares with a later one.
        if (std.mem.startsWith(u8, name, "*.")) {
            const entry = try server.wildcard.getOrPut(arena, name[2..]);
            if (!entry.found_existing) entry.value_ptr.* = index;
        } else {
            const entry = try server.exact.getOrPut(arena, name);
            if (!entry.found_existing) entry.value_ptr.* = index;
        }
    }
}

fn newContext(options: Options, diagnostic: *certificate.Diagnostic) Error!*c.SSL_CTX {
    const ctx: *c.SSL_CTX = c.SSL_CTX_new(c.TLS_server_method()) orelse return error.OutOfMemory;
    errdefer c.SSL_CTX_free(ctx);
    const min = Version.number(options.min_version);
    const max = Version.number(options.max_version);
    var ok = c.SSL_CTX_set_min_proto_version(ctx, min) == 1 and
        c.SSL_CTX_set_max_proto_version(ctx, max) == 1 and
        c.SSL_CTX_set_strict_cipher_list(ctx, tls12_ciphers) == 1 and
        c.SSL_CTX_set_ciphersuites(ctx, tls13_ciphersuites) == 1 and
        c.SSL_CTX_set1_groups_list(ctx, groups_list) == 1;
    _ = c.SSL_CTX_set_options(ctx, if (options.ticket_keys == null) c.SSL_OP_NO_TICKET else 0);
    _ = c.SSL_CTX_set_mode(ctx, Engine.modes);
    _ = c.SSL_CTX_set_session_cache_mode(ctx, c.SSL_SESS_CACHE_OFF);
    _ = c.SSL_CTX_set_timeout(ctx, options.session_lifetime_s);
    c.SSL_CTX_set_session_psk_dhe_timeout(ctx, options.session_lifetime_s);
    var session_id_context: [32]u8 = undefined;
    const sid = sessionIdContext(options.client_certificates, &session_id_context);
    ok = ok and c.SSL_CTX_set_session_id_context(ctx, sid.ptr, sid.len) == 1;
    if (options.ticket_keys != null) {
        ok = ok and c.SSL_CTX_set_tlsext_ticket_key_cb(ctx, ticketCallback) == 1;
    }
    if (!ok) {
        var why: [96]u8 = undefined;
        diagnostic.set("cannot set up a TLS server context: {s}", .{failure.popReason(&why)});
        return error.Invalid;
    }
    if (options.client_certificates) |client| try askForCertificates(ctx, client, diagnostic);
    c.SSL_CTX_set_alpn_select_cb(ctx, alpnCallback, null);
    _ = c.SSL_CTX_set_tlsext_status_cb(ctx, statusCallback);
    return ctx;
}

/// "sluice" for a listener that asks for no certificate; otherwise a hash of what it asks, so
/// that a session (a ticket) resumes only where the same certificates would be accepted.
fn sessionIdContext(client: ?ClientCertificates, buffer: *[32]u8) []const u8 {
    comptime assert(c.SSL_MAX_SID_CTX_LENGTH == 32);
    const asked = client orelse return "sluice";
    var hash: std.crypto.hash.sha2.Sha256 = .init(.{});
    hash.update("sluice client certificates\x00");
    hash.update(@tagName(asked.verify));
    hash.update(asked.ca_pem);
    hash.final(buffer);
    return buffer;
}

/// Verification of clients' certificates against `client.ca_pem`, whose subjects are also the
/// names the CertificateRequest lists.
fn askForCertificates(ctx: *c.SSL_CTX, client: ClientCertificates, diagnostic: *certificate.Diagnostic) Error!void {
    const store = c.SSL_CTX_get_cert_store(ctx);
    var cas = try certificate.parseCertificateList(client.ca_pem, client.ca_name, certificate.ca_certificates_max, diagnostic);
    defer cas.deinit();
    for (0..cas.count()) |index| {
        const ca = cas.at(index);
        // A duplicate is not an error.
        _ = c.X509_STORE_add_cert(store, ca);
        if (c.SSL_CTX_add_client_CA(ctx, ca) != 1) return error.OutOfMemory;
    }
    c.ERR_clear_error();
    const mode = c.SSL_VERIFY_PEER | switch (client.verify) {
        .required => c.SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
        .optional => 0,
    };
    c.SSL_CTX_set_verify(ctx, mode, null);
}

fn encodeAlpn(arena: std.mem.Allocator, protocols: []const []const u8) error{OutOfMemory}![]const u8 {
    var bytes: std.ArrayList(u8) = .empty;
    for (protocols) |protocol| {
        assert(protocol.len > 0 and protocol.len < 256);
        try bytes.append(arena, @intCast(protocol.len));
        try bytes.appendSlice(arena, protocol);
    }
    return bytes.items;
}

/// The OCSP response must be a successful one that answers for this certificate; it is
/// stapled as it is (sluice does not fetch or refresh responses: the file is the operator's,
/// and a reload picks up a new one).
fn checkOcsp(arena: std.mem.Allocator, der: []const u8, source: certificate.Source, loaded: *const certificate.Loaded, diagnostic: *certificate.Diagnostic) Error![]const u8 {
    var cursor: [*c]const u8 = der.ptr;
    const response = c.d2i_OCSP_RESPONSE(null, &cursor, @intCast(der.len)) orelse {
        var why: [96]u8 = undefined;
        diagnostic.set("{s}: not a DER OCSP response: {s}", .{ source.ocsp_name, failure.popReason(&why) });
        return error.Invalid;
    };
    defer c.OCSP_RESPONSE_free(response);
    if (c.OCSP_response_status(response) != c.OCSP_RESPONSE_STATUS_SUCCESSFUL) {
        diagnostic.set("{s}: the OCSP response is not a successful one (status {d})", .{ source.ocsp_name, c.OCSP_response_status(response) });
        return error.Invalid;
    }
    if (loaded.chainCount() == 0) {
        diagnostic.set("{s}: stapling needs the issuer's certificate after the leaf in {s}", .{ source.ocsp_name, source.cert_name });
        return error.Invalid;
    }
    const basic = c.OCSP_response_get1_basic(response) orelse {
        diagnostic.set("{s}: the OCSP response has no basic response", .{source.ocsp_name});
        return error.Invalid;
    };
    defer c.OCSP_BASICRESP_free(basic);
    const id = c.OCSP_cert_to_id(null, loaded.leaf, loaded.chainAt(0)) orelse return error.OutOfMemory;
    defer c.OCSP_CERTID_free(id);
    var status: c_int = -1;
    var reason: c_int = 0;
    var this_update: [*c]c.ASN1_GENERALIZEDTIME = null;
    var next_update: [*c]c.ASN1_GENERALIZEDTIME = null;
    if (c.OCSP_resp_find_status(basic, id, &status, &reason, null, &this_update, &next_update) != 1) {
        c.ERR_clear_error();
        diagnostic.set("{s}: the OCSP response is not about the certificate in {s}", .{ source.ocsp_name, source.cert_name });
        return error.Invalid;
    }
    if (status != c.V_OCSP_CERTSTATUS_GOOD) {
        diagnostic.set("{s}: the OCSP response says the certificate is {s}", .{ source.ocsp_name, if (status == c.V_OCSP_CERTSTATUS_REVOKED) "revoked" else "unknown" });
        return error.Invalid;
    }
    if (next_update != null) {
        var days: c_int = 0;
        var seconds: c_int = 0;
        if (c.ASN1_TIME_diff(&days, &seconds, null, next_update) == 1 and (days < 0 or (days == 0 and seconds < 0))) {
            diagnostic.set("{s}: the OCSP response is stale (its next update has passed)", .{source.ocsp_name});
            return error.Invalid;
        }
    }
    return arena.dupe(u8, der);
}

fn groupOf(ssl: *const c.SSL) *Group {
    return @ptrCast(@alignCast(c.SSL_CTX_get_ex_data(c.SSL_get_SSL_CTX(ssl), 0).?));
}

/// The server context of a connection made by `Engine.initServer`.
pub fn of(ssl: *const c.SSL) *ServerContext {
    return groupOf(ssl).server;
}

// --- AWS-LC's callbacks, on the worker running the handshake --------------------------------

fn serverNameCallback(ssl_or_null: ?*c.SSL, alert: [*c]c_int, arg: ?*anyopaque) callconv(.c) c_int {
    _ = alert;
    _ = arg;
    const ssl = ssl_or_null.?;
    const name = c.SSL_get_servername(ssl, c.TLSEXT_NAMETYPE_host_name);
    if (name == null) return c.SSL_TLSEXT_ERR_OK;
    const server = of(ssl);
    const index = server.groupFor(std.mem.span(name));
    if (index != 0) _ = c.SSL_set_SSL_CTX(ssl, server.groups[index].ctx);
    return c.SSL_TLSEXT_ERR_OK;
}

fn alpnCallback(ssl: ?*c.SSL, out: [*c][*c]const u8, out_len: [*c]u8, client: [*c]const u8, client_len: c_uint, arg: ?*anyopaque) callconv(.c) c_int {
    _ = arg;
    const server = of(ssl.?);
    if (server.alpn.len == 0) return c.SSL_TLSEXT_ERR_NOACK;
    const chosen = selectProtocol(server.alpn, client[0..client_len]) orelse {
        // RFC 7301 §3.2: a client that offered protocols, none of them ours, gets the
        // no_application_protocol alert (nginx does the same since 1.21.4).
        return c.SSL_TLSEXT_ERR_ALERT_FATAL;
    };
    out.* = chosen.ptr;
    out_len.* = @intCast(chosen.len);
    return c.SSL_TLSEXT_ERR_OK;
}

/// The first of our protocols (server preference) that the client also offered, as a slice
/// of the client's list; both lists in ALPN wire format (each protocol after its length).
fn selectProtocol(ours: []const u8, theirs: []const u8) ?[]const u8 {
    var our_at: usize = 0;
    while (our_at < ours.len) {
        const our_len = ours[our_at];
        const protocol = ours[our_at + 1 ..][0..our_len];
        our_at += 1 + our_len;
        var their_at: usize = 0;
        while (their_at < theirs.len) {
            const their_len = theirs[their_at];
            if (their_at + 1 + their_len > theirs.len) return null; // AWS-LC checked it; be safe
            const offered = theirs[their_at + 1 ..][0..their_len];
            their_at += 1 + their_len;
            if (std.mem.eql(u8, protocol, offered)) return offered;
        }
    }
    return null;
}

fn ticketCallback(ssl_or_null: ?*c.SSL, name: [*c]u8, iv: [*c]u8, cipher: [*c]c.EVP_CIPHER_CTX, mac: [*c]c.HMAC_CTX, encrypt: c_int) callconv(.c) c_int {
    const ssl = ssl_or_null.?;
    const keys = of(ssl).ticket_keys orelse return if (encrypt == 1) -1 else 0;
    return keys.ticketCallback(name[0..16], iv[0..16], cipher, mac, encrypt == 1);
}

/// Staples the certificate's OCSP response when the client asked for one and we have one.
/// Runs after AWS-LC chose the certificate (the one whose key it will sign with).
fn statusCallback(ssl_or_null: ?*c.SSL, arg: ?*anyopaque) callconv(.c) c_int {
    _ = arg;
    const ssl = ssl_or_null.?;
    const group = groupOf(ssl);
    const key = c.SSL_get_privatekey(ssl) orelse return c.SSL_TLSEXT_ERR_NOACK;
    for (group.keys, group.ocsp) |candidate, response| {
        if (candidate != key) continue;
        const der = response orelse return c.SSL_TLSEXT_ERR_NOACK;
        // AWS-LC keeps a copy with the connection.
        if (c.SSL_set_ocsp_response(ssl, der.ptr, der.len) != 1) return c.SSL_TLSEXT_ERR_NOACK;
        return c.SSL_TLSEXT_ERR_OK;
    }
    return c.SSL_TLSEXT_ERR_NOACK;
}

test "server context: ALPN picks our first protocol the client offers" {
    const ours = "\x02h2\x08http/1.1";
    try std.testing.expectEqualStrings("http/1.1", selectProtocol(ours, "\x08http/1.1\x06spdy/3").?);
    try std.testing.expectEqualStrings("h2", selectProtocol(ours, "\x08http/1.1\x02h2").?);
    try std.testing.expectEqual(@as(?[]const u8, null), selectProtocol(ours, "\x06spdy/3"));
    try std.testing.expectEqual(@as(?[]const u8, null), selectProtocol(ours, "\x09http/1.1"));
}

test "server context: SNI names come from the certificates, exact then wildcard, else the default" {
    const testdata = @import("testdata.zig");
    try @import("tls.zig").init(.{});
    var diagnostic: certificate.Diagnostic = .{};
    var server: ServerContext = undefined;
    try server.init(std.testing.allocator, .{ .certificates = &.{
        testdata.rsa, testdata.ecdsa, testdata.dual_rsa, testdata.dual_ecdsa, testdata.cn_only,
    } }, &diagnostic);
    defer server.deinit();
    // dual-rsa and dual-ecdsa share a group: four groups for five certificates.
    try std.testing.expectEqual(@as(usize, 4), server.groups.len);
    try std.testing.expectEqual(@as(u16, 0), server.groupFor("rsa.test"));
    try std.testing.expectEqual(@as(u16, 0), server.groupFor("WWW.RSA.TEST."));
    try std.testing.expectEqual(@as(u16, 1), server.groupFor("ecdsa.test"));
    try std.testing.expectEqual(@as(u16, 1), server.groupFor("a.wild.test"));
    try std.testing.expectEqual(@as(u16, 0), server.groupFor("wild.test")); // not covered by *.wild.test
    try std.testing.expectEqual(@as(u16, 0), server.groupFor("a.b.wild.test")); // one label only
    try std.testing.expectEqual(@as(u16, 2), server.groupFor("dual.test"));
    try std.testing.expectEqual(@as(u16, 3), server.groupFor("cn-only.test"));
    try std.testing.expectEqual(@as(u16, 0), server.groupFor("unknown.test"));
    try std.testing.expectEqual(@as(u16, 0), server.groupFor(""));
}

test "server context: a key that does not match, or no certificate, is refused with the file's name" {
    const testdata = @import("testdata.zig");
    try @import("tls.zig").init(.{});
    var diagnostic: certificate.Diagnostic = .{};
    var server: ServerContext = undefined;
    var mismatched = testdata.rsa;
    mismatched.key_pem = testdata.ecdsa.key_pem;
    mismatched.key_name = "ecdsa.key";
    try std.testing.expectError(error.Invalid, server.init(std.testing.allocator, .{ .certificates = &.{mismatched} }, &diagnostic));
    try std.testing.expectEqualStrings("ecdsa.key: the key does not match the first certificate in rsa.pem", diagnostic.message());
    var empty = testdata.rsa;
    empty.cert_pem = "not a certificate\n";
    try std.testing.expectError(error.Invalid, server.init(std.testing.allocator, .{ .certificates = &.{empty} }, &diagnostic));
    try std.testing.expectEqualStrings("rsa.pem: no certificate in it (expected PEM blocks \"BEGIN CERTIFICATE\")", diagnostic.message());
}
