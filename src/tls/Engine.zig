//! One connection's TLS, driven with memory: the caller hands in the ciphertext it received
//! and room for the ciphertext to send (`Wire`), and plaintext to write or room to read it
//! into; the engine says how much of each it used and what it needs next. It owns no socket,
//! no buffer and no timer: the connection has those, and its event loop decides when to call.
//!
//! Decision: a custom BIO over the caller's slices instead of AWS-LC's memory BIOs (or a BIO
//! pair). A memory BIO is a buffer that grows and never shrinks, so every connection would
//! keep up to two more record-sized buffers and every byte would be copied once more; this
//! BIO hands AWS-LC the caller's bytes directly and holds nothing between calls. AWS-LC's own
//! read and write buffers are sized to the record at hand and go back to the pool as soon as
//! they are empty, so an idle connection holds only AWS-LC's connection state (see
//! docs/TLS.md for the figures).
//!
//! Every call may both consume input and produce output (a TLS 1.3 server writes its tickets
//! after the handshake, a KeyUpdate asks for an answer, a failure sends an alert): after every
//! call, send `wire.output[0..wire.produced]`, even when the call failed, and drop
//! `wire.input[0..wire.consumed]`.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("aws_lc");
const memory = @import("memory.zig");
const failure = @import("failure.zig");
const Failure = failure.Failure;
const ServerContext = @import("ServerContext.zig");
const ClientContext = @import("ClientContext.zig");
const certificate = @import("certificate.zig");

const Engine = @This();

ssl: *c.SSL,
role: Role,
state: State,
/// Set when an operation failed: what `describe` explains and the next call returns.
failed_with: failure.Record = .{},
/// Plaintext bytes an SSL_write was given that could not leave yet (the output was full):
/// AWS-LC holds their record and must be called again with the same bytes first.
write_pending: u32 = 0,

pub const Role = enum { server, client };

pub const State = enum {
    handshaking,
    open,
    /// The peer sent close_notify (reads return `.closed`), or we sent ours.
    closed,
    failed,
};

/// The caller's bytes for one call.
pub const Wire = struct {
    /// Ciphertext received from the peer and not yet taken.
    input: []const u8 = &.{},
    /// The peer will send no more (the socket read end-of-file).
    input_closed: bool = false,
    /// Room for ciphertext to send to the peer.
    output: []u8 = &.{},
    /// How much of `input` the engine took; the caller drops these bytes.
    consumed: usize = 0,
    /// How much of `output` the engine wrote; the caller sends these bytes.
    produced: usize = 0,

    pub fn unread(wire: *const Wire) []const u8 {
        return wire.input[wire.consumed..];
    }

    pub fn written(wire: *const Wire) []const u8 {
        return wire.output[0..wire.produced];
    }
};

/// What the engine needs before it can go on.
pub const Progress = enum {
    done,
    /// More ciphertext from the peer.
    want_read,
    /// Room in `output` (send what was produced, then call again).
    want_write,
};

pub const Read = struct {
    /// Plaintext bytes written to the caller's buffer.
    plaintext: usize,
    progress: enum {
        /// Every complete record given was read: more ciphertext is needed for more.
        want_read,
        /// Send the output, then call again.
        want_write,
        /// The plaintext buffer is full; more may be ready (call again with room).
        plaintext_full,
        /// The peer sent close_notify: no more data will come.
        closed,
    },
};

pub const Write = struct {
    /// Plaintext bytes taken (encrypted into `output`, or held by AWS-LC when the output
    /// filled up: then call again with the bytes after these).
    plaintext: usize,
    progress: Progress,
};

/// What encryption adds to a record at most (header, explicit nonce, MAC or tag, padding):
/// AWS-LC's own bound. `write` keeps this much room per record so a record never has to
/// wait inside AWS-LC.
pub const record_overhead_max: usize = c.SSL3_RT_HEADER_LENGTH + c.SSL3_RT_MAX_ENCRYPTED_OVERHEAD;
/// The largest record's plaintext.
pub const record_plaintext_max: usize = c.SSL3_RT_MAX_PLAIN_LENGTH;
/// Room in `Wire.output` that always holds a whole record.
pub const record_bytes_max = record_plaintext_max + record_overhead_max;

/// The modes every context sets: write records as soon as each is sealed (partial writes), and
/// let a retried write come from a moved buffer. (AWS-LC gives its record buffers back when
/// empty without being asked.)
pub const modes: u32 = c.SSL_MODE_ENABLE_PARTIAL_WRITE | c.SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;

var bio_method: ?*c.BIO_METHOD = null;

/// Builds the BIO method once. From `tls.init`.
pub fn initLibrary() error{LibraryInit}!void {
    if (bio_method != null) return;
    const index = c.BIO_get_new_index();
    if (index == -1) return error.LibraryInit;
    const method: *c.BIO_METHOD = c.BIO_meth_new(index | c.BIO_TYPE_SOURCE_SINK, "sluice wire") orelse
        return error.LibraryInit;
    if (c.BIO_meth_set_write(method, bioWrite) != 1 or
        c.BIO_meth_set_read(method, bioRead) != 1 or
        c.BIO_meth_set_ctrl(method, bioCtrl) != 1 or
        c.BIO_meth_set_create(method, bioCreate) != 1) return error.LibraryInit;
    bio_method = method;
}

/// A connection accepted on a listener. On the worker that will drive it; `server` must
/// outlive the engine.
pub fn initServer(server: *ServerContext) Failure!Engine {
    const engine = try initSsl(server.groups[0].ctx, .server);
    c.SSL_set_accept_state(engine.ssl);
    _ = server.engines_live.fetchAdd(1, .monotonic);
    return engine;
}

pub const ClientOptions = struct {
    /// The backend's name: sent as SNI, and the name its certificate must carry. An IP
    /// address is checked against the certificate's IP addresses and sends no SNI (RFC 6066
    /// §3 allows host names only).
    server_name: []const u8,
    /// Where this backend's last session is kept (one per backend per worker): offered to
    /// resume, and replaced by the session this connection gets.
    resumption: ?*ClientContext.Resumption = null,
};

/// A connection to a backend. On the worker that will drive it; `client` must outlive it.
pub fn initClient(client: *ClientContext, options: ClientOptions) Failure!Engine {
    const failures_before = poolFailures();
    const engine = try initSsl(client.ctx, .client);
    errdefer c.SSL_free(engine.ssl);
    const ssl = engine.ssl;
    c.SSL_set_connect_state(ssl);
    var name_buffer: [256]u8 = undefined;
    if (options.server_name.len == 0 or options.server_name.len >= name_buffer.len) return error.Protocol;
    @memcpy(name_buffer[0..options.server_name.len], options.server_name);
    name_buffer[options.server_name.len] = 0;
    const name: [*:0]const u8 = name_buffer[0..options.server_name.len :0];
    const is_ip = isIpAddress(options.server_name);
    var ok = true;
    if (!is_ip) ok = ok and c.SSL_set_tlsext_host_name(ssl, name) == 1;
    if (client.verify) {
        if (is_ip) {
            ok = ok and c.X509_VERIFY_PARAM_set1_ip_asc(c.SSL_get0_param(ssl), name) == 1;
        } else {
            ok = ok and c.SSL_set1_host(ssl, name) == 1;
        }
    }
    if (options.resumption) |resumption| {
        ok = ok and c.SSL_set_ex_data(ssl, 0, resumption) == 1;
        if (ok) ok = resumption.offer(ssl);
    }
    if (!ok) return outOfMemoryOr(failures_before);
    _ = client.engines_live.fetchAdd(1, .monotonic);
    return engine;
}

fn initSsl(ctx: *c.SSL_CTX, role: Role) Failure!Engine {
    const failures_before = poolFailures();
    const ssl = c.SSL_new(ctx) orelse return outOfMemoryOr(failures_before);
    errdefer c.SSL_free(ssl);
    const bio: *c.BIO = c.BIO_new(bio_method.?) orelse return outOfMemoryOr(failures_before);
    // One BIO both ways; SSL_set_bio takes its one reference.
    c.SSL_set_bio(ssl, bio, bio);
    return .{ .ssl = ssl, .role = role, .state = .handshaking };
}

fn outOfMemoryOr(failures_before: u64) Failure {
    const record = failure.Record.capture(poolFailures() != failures_before, 0);
    return if (record.code == 0) error.OutOfMemory else record.classify();
}

/// Frees AWS-LC's state of the connection. Send nothing more: call `close` first for a
/// clean close_notify. (A session stays resumable however its connection ended: AWS-LC, unlike
/// OpenSSL, does not forget the session of a connection freed without close_notify.)
pub fn deinit(engine: *Engine) void {
    const live = switch (engine.role) {
        .server => &ServerContext.of(engine.ssl).engines_live,
        .client => &ClientContext.of(engine.ssl).engines_live,
    };
    const before = live.fetchSub(1, .monotonic);
    assert(before > 0);
    c.SSL_free(engine.ssl);
    engine.* = undefined;
}

/// Runs the handshake as far as the bytes allow.
pub fn handshake(engine: *Engine, wire: *Wire) Failure!Progress {
    try engine.checkUsable();
    assert(engine.state == .handshaking);
    const call = engine.begin(wire);
    defer engine.end();
    const rc = c.SSL_do_handshake(engine.ssl);
    if (rc == 1) {
        engine.state = .open;
        switch (engine.role) {
            .client => ClientContext.Resumption.afterHandshake(engine.ssl),
            .server => flushTickets(engine),
        }
        return .done;
    }
    return switch (c.SSL_get_error(engine.ssl, rc)) {
        c.SSL_ERROR_WANT_READ => if (wire.input_closed) engine.fail(unexpectedEof()) else .want_read,
        c.SSL_ERROR_WANT_WRITE => .want_write,
        // The input ended mid-handshake: AWS-LC queues no reason for that.
        c.SSL_ERROR_SYSCALL => engine.fail(if (c.ERR_peek_error() == 0) unexpectedEof() else call.capture(engine)),
        else => engine.fail(call.capture(engine)),
    };
}

/// Sends a TLS 1.3 server's session tickets with the handshake's last output. AWS-LC holds
/// them until the first write; but after its Finished a client may wait for the server to say
/// something before its request leaves (Nagle on the client's socket, Python's for one, holds
/// the request until its Finished is acknowledged), and with nothing to send the server's
/// kernel acknowledges only after its delayed-ACK timer: 40 ms on every new connection. A
/// zero-byte write flushes them (AWS-LC's documented way); without room they simply go with
/// the first response, as before.
fn flushTickets(engine: *Engine) void {
    assert(engine.role == .server and engine.state == .open);
    _ = c.SSL_write(engine.ssl, "", 0); // 0 whether or not there was anything to send
    c.ERR_clear_error(); // WANT_WRITE without room: nothing lost (above)
}

/// Decrypts as much of `wire.input` as there are whole records for, into `plaintext`.
pub fn read(engine: *Engine, wire: *Wire, plaintext: []u8) Failure!Read {
    try engine.checkUsable();
    if (engine.state == .closed) return .{ .plaintext = 0, .progress = .closed };
    assert(engine.state == .open);
    assert(plaintext.len > 0);
    const call = engine.begin(wire);
    defer engine.end();
    var total: usize = 0;
    while (total < plaintext.len) {
        // With nothing to read, SSL_read would only start on a record it cannot finish.
        if (wire.consumed == wire.input.len and c.SSL_has_pending(engine.ssl) == 0 and !wire.input_closed) {
            return .{ .plaintext = total, .progress = .want_read };
        }
        const room: c_int = @intCast(@min(plaintext.len - total, std.math.maxInt(c_int)));
        const rc = c.SSL_read(engine.ssl, plaintext[total..].ptr, room);
        if (rc > 0) {
            total += @intCast(rc);
            continue;
        }
        switch (c.SSL_get_error(engine.ssl, rc)) {
            c.SSL_ERROR_WANT_READ => return .{ .plaintext = total, .progress = .want_read },
            c.SSL_ERROR_WANT_WRITE => return .{ .plaintext = total, .progress = .want_write },
            c.SSL_ERROR_ZERO_RETURN => {
                engine.state = .closed;
                return .{ .plaintext = total, .progress = .closed };
            },
            else => {
                const record = call.capture(engine);
                // Plaintext already decrypted is the caller's: hand it over now and fail on
                // the next call.
                if (total > 0) {
                    engine.failed_with = record;
                    engine.state = .failed;
                    return .{ .plaintext = total, .progress = .want_read };
                }
                return engine.fail(record);
            },
        }
    }
    return .{ .plaintext = total, .progress = .plaintext_full };
}

/// Encrypts `plaintext` into `wire.output`, one record per 16 KiB, as far as the room allows.
pub fn write(engine: *Engine, wire: *Wire, plaintext: []const u8) Failure!Write {
    try engine.checkUsable();
    assert(engine.state == .open);
    const call = engine.begin(wire);
    defer engine.end();
    var total: usize = 0;
    while (total < plaintext.len) {
        const left = plaintext.len - total;
        const chunk = if (engine.write_pending > 0) blk: {
            // AWS-LC holds a sealed record of these bytes: the retry must repeat them.
            assert(left >= engine.write_pending);
            break :blk engine.write_pending;
        } else blk: {
            const room = wire.output.len - wire.produced;
            if (room <= record_overhead_max) return .{ .plaintext = total, .progress = .want_write };
            break :blk @min(left, room - record_overhead_max, record_plaintext_max);
        };
        const rc = c.SSL_write(engine.ssl, plaintext[total..].ptr, @intCast(chunk));
        if (rc > 0) {
            assert(rc == chunk);
            engine.write_pending = 0;
            total += chunk;
            continue;
        }
        switch (c.SSL_get_error(engine.ssl, rc)) {
            c.SSL_ERROR_WANT_WRITE => {
                engine.write_pending = @intCast(chunk);
                return .{ .plaintext = total, .progress = .want_write };
            },
            c.SSL_ERROR_WANT_READ => return .{ .plaintext = total, .progress = .want_read },
            else => return engine.fail(call.capture(engine)),
        }
    }
    return .{ .plaintext = total, .progress = .done };
}

/// Sends close_notify (once). The connection can be closed when this is `.done` and the
/// output sent; sluice does not wait for the peer's close_notify (HTTP framing says where
/// the data ends).
pub fn close(engine: *Engine, wire: *Wire) Failure!Progress {
    try engine.checkUsable();
    if (engine.state == .handshaking) return .done; // nothing was agreed: just close
    const call = engine.begin(wire);
    defer engine.end();
    engine.state = .closed;
    const rc = c.SSL_shutdown(engine.ssl);
    if (rc >= 0) return .done;
    return switch (c.SSL_get_error(engine.ssl, rc)) {
        c.SSL_ERROR_WANT_WRITE => .want_write,
        c.SSL_ERROR_WANT_READ => .done,
        else => engine.fail(call.capture(engine)),
    };
}

/// Why the engine failed, for a log line ("certificate verify failed: unable to get local
/// issuer certificate").
pub fn describe(engine: *const Engine, buffer: []u8) []const u8 {
    return engine.failed_with.describe(buffer);
}

/// "TLSv1.3", "TLSv1.2".
pub fn version(engine: *const Engine) []const u8 {
    return std.mem.span(c.SSL_get_version(engine.ssl));
}

/// The protocol version as its wire number (0x0304 for TLS 1.3), for metrics.
pub fn versionNumber(engine: *const Engine) u16 {
    return @intCast(c.SSL_version(engine.ssl));
}

/// The cipher's name as OpenSSL spells it (AWS-LC keeps those names): "TLS_AES_128_GCM_SHA256",
/// "ECDHE-RSA-AES128-GCM-SHA256".
pub fn cipher(engine: *const Engine) []const u8 {
    return std.mem.span(c.SSL_CIPHER_get_name(c.SSL_get_current_cipher(engine.ssl)));
}

/// The protocol ALPN agreed on, if any.
pub fn alpn(engine: *const Engine) ?[]const u8 {
    var data: [*c]const u8 = null;
    var len: c_uint = 0;
    c.SSL_get0_alpn_selected(engine.ssl, &data, &len);
    if (data == null or len == 0) return null;
    return data[0..len];
}

/// The handshake resumed a session (no certificate was sent or checked).
pub fn resumed(engine: *const Engine) bool {
    return c.SSL_session_reused(engine.ssl) == 1;
}

/// Plaintext AWS-LC has decrypted and no read has taken yet: a connection that holds some
/// cannot be reused for another request (those bytes are not its answer).
pub fn hasPending(engine: *const Engine) bool {
    return c.SSL_has_pending(engine.ssl) != 0;
}

/// The certificate a peer presented, as a listener forwards and logs a client's: its subject
/// and fingerprint, formatted on the stack when asked (nothing is kept per connection, and
/// nothing allocated).
pub const PeerCertificate = struct {
    subject_buffer: [subject_bytes_max]u8 = undefined,
    subject_len: u16 = 0,
    /// SHA-256 of the certificate (its DER), in lower-case hex.
    fingerprint: [64]u8 = undefined,

    /// Longer subjects are not given (a cut one could name someone else); the fingerprint is.
    pub const subject_bytes_max = 1024;

    /// RFC 4514 ("CN=alice,O=Example"), or null when longer than `subject_bytes_max`.
    pub fn subject(peer: *const PeerCertificate) ?[]const u8 {
        if (peer.subject_len == 0) return null;
        return peer.subject_buffer[0..peer.subject_len];
    }
};

/// The peer's certificate (a listener's client, once the handshake verified it, or the
/// session it resumed did), or false when it sent none.
pub fn peerCertificate(engine: *const Engine, out: *PeerCertificate) bool {
    assert(engine.state == .open or engine.state == .closed);
    const chain = c.SSL_get0_peer_certificates(engine.ssl) orelse return false;
    if (c.sk_CRYPTO_BUFFER_num(chain) == 0) return false;
    const leaf_der = c.sk_CRYPTO_BUFFER_value(chain, 0);
    var digest: [32]u8 = undefined;
    _ = c.SHA256(c.CRYPTO_BUFFER_data(leaf_der), c.CRYPTO_BUFFER_len(leaf_der), &digest);
    out.fingerprint = std.fmt.bytesToHex(digest, .lower);
    out.subject_len = 0;
    const leaf = c.SSL_get0_peer_certificate(engine.ssl) orelse return true;
    if (certificate.subjectText(leaf, &out.subject_buffer)) |text| out.subject_len = @intCast(text.len);
    return true;
}

/// The name the client asked for (SNI), if it sent one.
pub fn serverName(engine: *const Engine) ?[]const u8 {
    const name = c.SSL_get_servername(engine.ssl, c.TLSEXT_NAMETYPE_host_name);
    if (name == null) return null;
    return std.mem.span(name);
}

fn checkUsable(engine: *const Engine) Failure!void {
    if (engine.state == .failed) return engine.failed_with.classify();
}

fn fail(engine: *Engine, record: failure.Record) Failure {
    engine.failed_with = record;
    engine.state = .failed;
    return record.classify();
}

/// What an operation needs to classify its failure: the pool's failure count before it, so a
/// refused allocation is reported as such even when AWS-LC words it otherwise.
const Call = struct {
    pool_failures: u64,

    fn capture(call: Call, engine: *const Engine) failure.Record {
        var record = failure.Record.capture(poolFailures() != call.pool_failures, c.X509_V_OK);
        // The verification result says why only when verification is what failed (before
        // any verification it is X509_V_ERR_INVALID_CALL).
        if (c.ERR_GET_REASON(record.code) == c.SSL_R_CERTIFICATE_VERIFY_FAILED) {
            record.verify = @intCast(c.SSL_get_verify_result(engine.ssl));
        }
        return record;
    }
};

fn begin(engine: *Engine, wire: *Wire) Call {
    assert(wire.consumed <= wire.input.len);
    assert(wire.produced <= wire.output.len);
    // A stale error on this thread's queue would make SSL_get_error report SSL_ERROR_SSL.
    c.ERR_clear_error();
    c.BIO_set_data(c.SSL_get_rbio(engine.ssl), wire);
    return .{ .pool_failures = poolFailures() };
}

fn end(engine: *Engine) void {
    c.BIO_set_data(c.SSL_get_rbio(engine.ssl), null);
}

fn poolFailures() u64 {
    const pool = memory.currentPool() orelse return 0;
    return pool.failures.load();
}

fn unexpectedEof() failure.Record {
    return .{ .code = failure.sslCode(c.SSL_R_UNEXPECTED_EOF_WHILE_READING) };
}

fn isIpAddress(name: []const u8) bool {
    if (std.mem.indexOfScalar(u8, name, ':') != null) return true; // IPv6: no host name has a colon
    var dots: usize = 0;
    for (name) |byte| switch (byte) {
        '0'...'9' => {},
        '.' => dots += 1,
        else => return false,
    };
    return dots == 3;
}

// --- The BIO: AWS-LC reads the caller's input and writes the caller's output ---------------

fn bioCreate(bio: [*c]c.BIO) callconv(.c) c_int {
    c.BIO_set_init(bio, 1);
    return 1;
}

fn wireOf(bio: [*c]c.BIO) ?*Wire {
    return @ptrCast(@alignCast(c.BIO_get_data(bio) orelse return null));
}

/// Bytes read, 0 at the end of the input, or -1 with the retry flag when more may come.
fn bioRead(bio: [*c]c.BIO, buffer: [*c]u8, len: c_int) callconv(.c) c_int {
    c.BIO_clear_retry_flags(bio);
    const wire = wireOf(bio) orelse {
        c.BIO_set_retry_read(bio);
        return -1;
    };
    const available = wire.input.len - wire.consumed;
    if (available == 0) {
        if (wire.input_closed) return 0; // no retry flag: AWS-LC sees the end of the stream
        c.BIO_set_retry_read(bio);
        return -1;
    }
    const n = @min(@as(usize, @intCast(len)), available);
    @memcpy(buffer[0..n], wire.input[wire.consumed..][0..n]);
    wire.consumed += n;
    return @intCast(n);
}

/// Bytes written, or -1 with the retry flag when the output is full.
fn bioWrite(bio: [*c]c.BIO, buffer: [*c]const u8, len: c_int) callconv(.c) c_int {
    c.BIO_clear_retry_flags(bio);
    const wire = wireOf(bio) orelse {
        c.BIO_set_retry_write(bio);
        return -1;
    };
    const room = wire.output.len - wire.produced;
    if (room == 0) {
        c.BIO_set_retry_write(bio);
        return -1;
    }
    const n = @min(@as(usize, @intCast(len)), room);
    @memcpy(wire.output[wire.produced..][0..n], buffer[0..n]);
    wire.produced += n;
    return @intCast(n);
}

fn bioCtrl(bio: [*c]c.BIO, command: c_int, larg: c_long, parg: ?*anyopaque) callconv(.c) c_long {
    _ = larg;
    _ = parg;
    return switch (command) {
        c.BIO_CTRL_FLUSH => 1,
        c.BIO_CTRL_EOF => blk: {
            const wire = wireOf(bio) orelse break :blk 0;
            break :blk @intFromBool(wire.input_closed and wire.consumed == wire.input.len);
        },
        // Pending bytes: none is ever buffered here.
        c.BIO_CTRL_PENDING, c.BIO_CTRL_WPENDING => 0,
        else => 0,
    };
}

test "engine: an IP literal is told from a host name" {
    try std.testing.expect(isIpAddress("10.0.0.5"));
    try std.testing.expect(isIpAddress("::1"));
    try std.testing.expect(!isIpAddress("api.internal"));
    try std.testing.expect(!isIpAddress("1.2.3"));
}
