//! How sluice speaks TLS to the backends of one pool: whom to trust, what to show, what to
//! offer. Built on the control thread and shared read-only by the workers, each of which
//! makes its connections from it (`Engine.initClient`) and keeps, per backend, the last
//! session to resume (`Resumption`).
//!
//! Decisions: verification is on unless turned off, against the pool's CA file or else the
//! system's CA bundle (the first of the usual paths that exists, read once and shared by every
//! pool that uses it: a static binary cannot rely on a library's compiled-in directory); the
//! certificate must carry the name sluice connects to (SNI, host name check by AWS-LC, RFC
//! 6125). The protocol policy is the listeners' (Mozilla "intermediate"). AWS-LC refuses a
//! backend's request to renegotiate (a HelloRequest) with a fatal alert.
//! Sessions are resumed with the backend's tickets: AWS-LC's client session cache is off and
//! sluice keeps the newest session per backend per worker, so nothing is shared or locked.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("aws_lc");
const failure = @import("failure.zig");
const certificate = @import("certificate.zig");
const ServerContext = @import("ServerContext.zig");
const Engine = @import("Engine.zig");

const ClientContext = @This();

ctx: *c.SSL_CTX,
verify: bool,
/// Engines made from this context and not yet deinitialized, on any worker.
engines_live: std.atomic.Value(u32) = .init(0),

pub const Options = struct {
    /// Check the backend's certificate and name. Off only for backends that cannot be given a
    /// proper certificate; a man in the middle can then read everything.
    verify: bool = true,
    /// PEM CA certificates to trust; null: the system's bundle.
    ca_pem: ?[]const u8 = null,
    ca_name: []const u8 = "CA file",
    /// A certificate and key to show backends that ask (mutual TLS).
    client_certificate: ?certificate.Source = null,
    alpn: []const []const u8 = &.{"http/1.1"},
    min_version: ServerContext.Version = .tls1_2,
    max_version: ServerContext.Version = .tls1_3,
};

pub const Error = error{ Invalid, OutOfMemory };

/// Where Linux distributions keep their CA bundle, in the order Go's crypto/x509 looks.
pub const system_bundle_paths = [_][]const u8{
    "/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Gentoo, Arch
    "/etc/pki/tls/certs/ca-bundle.crt", // Fedora, RHEL 6
    "/etc/ssl/ca-bundle.pem", // openSUSE
    "/etc/pki/tls/cacert.pem", // OpenELEC
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
    "/etc/ssl/cert.pem", // Alpine
};

/// The most CA certificates one bundle may hold.
pub const ca_certificates_max = certificate.ca_certificates_max;

/// `client` must not move afterwards and must outlive every engine made from it.
pub fn init(client: *ClientContext, arena: std.mem.Allocator, options: Options, diagnostic: *certificate.Diagnostic) Error!void {
    const ctx: *c.SSL_CTX = c.SSL_CTX_new(c.TLS_client_method()) orelse return error.OutOfMemory;
    errdefer c.SSL_CTX_free(ctx);
    client.* = .{ .ctx = ctx, .verify = options.verify };
    const min = ServerContext.Version.number(options.min_version);
    const max = ServerContext.Version.number(options.max_version);
    var ok = c.SSL_CTX_set_min_proto_version(ctx, min) == 1 and
        c.SSL_CTX_set_max_proto_version(ctx, max) == 1 and
        c.SSL_CTX_set_strict_cipher_list(ctx, ServerContext.tls12_ciphers) == 1 and
        c.SSL_CTX_set_ciphersuites(ctx, ServerContext.tls13_ciphersuites) == 1 and
        c.SSL_CTX_set1_groups_list(ctx, ServerContext.groups_list) == 1;
    _ = c.SSL_CTX_set_mode(ctx, Engine.modes);
    // The backend's certificate chain: plenty for real chains, and a bound on what a backend
    // can make a worker hold during a handshake.
    c.SSL_CTX_set_max_cert_list(ctx, certificate_chain_bytes_max);
    _ = c.SSL_CTX_set_session_cache_mode(ctx, c.SSL_SESS_CACHE_CLIENT | c.SSL_SESS_CACHE_NO_INTERNAL_STORE);
    c.SSL_CTX_sess_set_new_cb(ctx, newSessionCallback);
    if (options.alpn.len > 0) {
        var wire: [256]u8 = undefined;
        var len: usize = 0;
        for (options.alpn) |protocol| {
            assert(protocol.len > 0 and len + 1 + protocol.len <= wire.len);
            wire[len] = @intCast(protocol.len);
            @memcpy(wire[len + 1 ..][0..protocol.len], protocol);
            len += 1 + protocol.len;
        }
        // The one call that returns 0 on success.
        ok = ok and c.SSL_CTX_set_alpn_protos(ctx, &wire, @intCast(len)) == 0;
    }
    if (!ok) {
        var why: [96]u8 = undefined;
        diagnostic.set("cannot set up a TLS client context: {s}", .{failure.popReason(&why)});
        return error.Invalid;
    }
    if (options.verify) {
        c.SSL_CTX_set_verify(ctx, c.SSL_VERIFY_PEER, null);
        if (options.ca_pem) |pem| {
            _ = try addCertificates(c.SSL_CTX_get_cert_store(ctx).?, pem, options.ca_name, diagnostic);
        } else {
            c.SSL_CTX_set1_cert_store(ctx, try systemStore(arena, diagnostic));
        }
    } else {
        c.SSL_CTX_set_verify(ctx, c.SSL_VERIFY_NONE, null);
    }
    if (options.client_certificate) |source| {
        var loaded = try certificate.load(source, diagnostic);
        defer loaded.deinit();
        try certificate.checkPolicy(&loaded, source, diagnostic);
        if (c.SSL_CTX_use_cert_and_key(ctx, loaded.leaf, loaded.key, loaded.chain, 1) != 1) {
            var why: [96]u8 = undefined;
            diagnostic.set("{s}: not accepted: {s}", .{ source.cert_name, failure.popReason(&why) });
            return error.Invalid;
        }
    }
    if (c.SSL_CTX_set_ex_data(ctx, 0, client) != 1) return error.OutOfMemory;
}

pub fn deinit(client: *ClientContext) void {
    assert(client.engines_live.load(.acquire) == 0);
    c.SSL_CTX_free(client.ctx);
    client.* = undefined;
}

/// 100 KiB is AWS-LC's default; real chains are 3 to 10 KiB.
pub const certificate_chain_bytes_max = 32 * 1024;

/// The client context of a connection made by `Engine.initClient`.
pub fn of(ssl: *const c.SSL) *ClientContext {
    return @ptrCast(@alignCast(c.SSL_CTX_get_ex_data(c.SSL_get_SSL_CTX(ssl), 0).?));
}

/// One backend's sessions on one worker, to resume the next connections with. Owned by the
/// worker's per-backend state; `deinit` on that worker.
///
/// TLS 1.3 tickets are used once (RFC 8446 §C.4 asks clients to), and a server sends a few per
/// handshake (AWS-LC and AWS-LC: two; AWS-LC none after a resumption unless it renews): so
/// the newest few are kept, and each connection takes one. A TLS 1.2 session is reused until
/// the server replaces it.
pub const Resumption = struct {
    /// Oldest first; `count` of them.
    sessions: [sessions_max]?*c.SSL_SESSION = @splat(null),
    count: u8 = 0,

    pub const sessions_max = 4;

    pub fn deinit(resumption: *Resumption) void {
        resumption.forget();
        resumption.* = undefined;
    }

    /// Forget every session (the backend changed, or refused them).
    pub fn forget(resumption: *Resumption) void {
        for (resumption.sessions[0..resumption.count]) |session| c.SSL_SESSION_free(session);
        resumption.* = .{};
    }

    /// Offers the newest session to a new connection; a TLS 1.3 one leaves the set.
    /// (For `Engine.initClient`.)
    pub fn offer(resumption: *Resumption, ssl: *c.SSL) bool {
        if (resumption.count == 0) return true;
        const newest = resumption.sessions[resumption.count - 1].?;
        if (c.SSL_set_session(ssl, newest) != 1) return false; // SSL_set_session takes a reference
        if (c.SSL_SESSION_get_protocol_version(newest) == c.TLS1_3_VERSION) {
            c.SSL_SESSION_free(newest);
            resumption.sessions[resumption.count - 1] = null;
            resumption.count -= 1;
        }
        return true;
    }

    /// After a handshake: a resumed TLS 1.2 connection whose server renewed its ticket has a
    /// new session, which the new-session callback may not have been given (AWS-LC does not
    /// call it for a resumed handshake), so it is picked up here. (For `Engine.handshake`.)
    pub fn afterHandshake(ssl: *c.SSL) void {
        const resumption: *Resumption = @ptrCast(@alignCast(c.SSL_get_ex_data(ssl, 0) orelse return));
        if (c.SSL_session_reused(ssl) != 1 or c.SSL_version(ssl) == c.TLS1_3_VERSION) return;
        const session = c.SSL_get1_session(ssl) orelse return;
        if (resumption.count > 0 and resumption.sessions[resumption.count - 1] == session) {
            c.SSL_SESSION_free(session);
            return;
        }
        if (c.SSL_SESSION_is_resumable(session) != 1) {
            c.SSL_SESSION_free(session);
            return;
        }
        resumption.keep(session);
    }

    /// Keeps `session` (this takes AWS-LC's reference) as the newest.
    fn keep(resumption: *Resumption, session: *c.SSL_SESSION) void {
        // A TLS 1.2 session replaces all: the server's new ticket supersedes the old ones.
        if (c.SSL_SESSION_get_protocol_version(session) != c.TLS1_3_VERSION) resumption.forget();
        if (resumption.count == sessions_max) {
            c.SSL_SESSION_free(resumption.sessions[0]);
            std.mem.copyForwards(?*c.SSL_SESSION, resumption.sessions[0 .. sessions_max - 1], resumption.sessions[1..]);
            resumption.count -= 1;
        }
        resumption.sessions[resumption.count] = session;
        resumption.count += 1;
    }
};

/// AWS-LC has a session to keep (after a TLS 1.2 handshake, or a TLS 1.3 ticket). Returning
/// 1 keeps AWS-LC's reference.
fn newSessionCallback(ssl: ?*c.SSL, session_or_null: ?*c.SSL_SESSION) callconv(.c) c_int {
    const resumption: *Resumption = @ptrCast(@alignCast(c.SSL_get_ex_data(ssl, 0) orelse return 0));
    const session = session_or_null.?;
    if (c.SSL_SESSION_is_resumable(session) != 1) return 0;
    if (resumption.count > 0 and resumption.sessions[resumption.count - 1] == session) return 0;
    resumption.keep(session);
    return 1;
}

/// Every PEM certificate in `pem` into `store`; how many.
fn addCertificates(store: *c.X509_STORE, pem: []const u8, name: []const u8, diagnostic: *certificate.Diagnostic) Error!usize {
    var list = try certificate.parseCertificateList(pem, name, ca_certificates_max, diagnostic);
    defer list.deinit();
    // A duplicate is not an error.
    for (0..list.count()) |index| _ = c.X509_STORE_add_cert(store, list.at(index));
    c.ERR_clear_error();
    return list.count();
}

var system_store: ?*c.X509_STORE = null;
/// A spin lock: contexts are built on the control thread; this only makes a second caller wait.
var system_store_mutex: std.atomic.Mutex = .unlocked;

/// The system's CA bundle, loaded on first use and kept for the process (every pool without a
/// CA file shares it: about 140 certificates, ~0.5 MB parsed).
fn systemStore(arena: std.mem.Allocator, diagnostic: *certificate.Diagnostic) Error!*c.X509_STORE {
    while (!system_store_mutex.tryLock()) std.atomic.spinLoopHint();
    defer system_store_mutex.unlock();
    if (system_store) |store| return store;
    for (system_bundle_paths) |path| {
        var why: []const u8 = undefined;
        const pem = certificate.readFileOrWhy(arena, path, &why) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.CannotRead => continue,
        };
        const store: *c.X509_STORE = c.X509_STORE_new() orelse return error.OutOfMemory;
        errdefer c.X509_STORE_free(store);
        _ = try addCertificates(store, pem, path, diagnostic);
        system_store = store;
        return store;
    }
    diagnostic.set("no system CA bundle found (looked in {s} and {d} other places): give the pool a CA file", .{ system_bundle_paths[0], system_bundle_paths.len - 1 });
    return error.Invalid;
}
