//! One connection's TLS, driven with memory: the caller hands in the ciphertext it received
//! and room for the ciphertext to send (`Wire`), and plaintext to write or room to read it
//! into; the engine says how much of each it used and what it needs next. It owns no socket,
//! no buffer and no timer: the connection has those, and its event loop decides when to call.
//!
//! Decision: a custom BIO over the caller's slices instead of OpenSSL's memory BIOs (or a BIO
//! pair). A memory BIO is a buffer that grows and never shrinks, so every connection would
//! keep up to two more record-sized buffers and every byte would be copied once more; this
//! BIO hands OpenSSL the caller's bytes directly and holds nothing between calls. With
//! SSL_MODE_RELEASE_BUFFERS, OpenSSL's own read and write buffers go back to the pool whenever
//! they are empty, so an idle connection holds only OpenSSL's connection state (see
//! docs/ARCHITECTURE.md, "TLS", for the figures).
//!
//! Every call may both consume input and produce output (a TLS 1.3 server writes its tickets
//! after the handshake, a KeyUpdate asks for an answer, a failure sends an alert): after every
//! call, send `wire.output[0..wire.produced]`, even when the call failed, and drop
//! `wire.input[0..wire.consumed]`.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("c.zig");
const memory = @import("memory.zig");
const failure = @import("failure.zig");
const Failure = failure.Failure;
const ServerContext = @import("ServerContext.zig");
const ClientContext = @import("ClientContext.zig");

const Engine = @This();

ssl: *c.SSL,
role: Role,
state: State,
/// Set when an operation failed: what `describe` explains and the next call returns.
failed_with: failure.Record = .{},
/// Plaintext bytes an SSL_write was given that could not leave yet (the output was full):
/// OpenSSL holds their record and must be called again with the same bytes first.
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
    /// Plaintext bytes taken (encrypted into `output`, or held by OpenSSL when the output
    /// filled up: then call again with the bytes after these).
    plaintext: usize,
    progress: Progress,
};

/// What encryption adds to a record at most (header, explicit nonce, MAC or tag, padding):
/// OpenSSL's own bound. `write` keeps this much room per record so a record never has to
/// wait inside OpenSSL.
pub const record_overhead_max = c.SSL3_RT_HEADER_LENGTH + c.SSL3_RT_MAX_ENCRYPTED_OVERHEAD;
/// The largest record's plaintext.
pub const record_plaintext_max = c.SSL3_RT_MAX_PLAIN_LENGTH;
/// Room in `Wire.output` that always holds a whole record.
pub const record_bytes_max = record_plaintext_max + record_overhead_max;

/// The modes every context sets: write records as soon as each is sealed (partial writes), let
/// a retried write come from a moved buffer, and give OpenSSL's buffers back when empty.
pub const modes = c.SSL_MODE_ENABLE_PARTIAL_WRITE | c.SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
    c.SSL_MODE_RELEASE_BUFFERS;

var bio_method: ?*c.BIO_METHOD = null;

/// Builds the BIO method once. From `tls.init`.
pub fn initLibrary() error{OpenSslInit}!void {
    if (bio_method != null) return;
    const index = c.BIO_get_new_index();
    if (index == -1) return error.OpenSslInit;
    const method = c.BIO_meth_new(index | c.BIO_TYPE_SOURCE_SINK, "sluice wire") orelse return error.OpenSslInit;
    if (c.BIO_meth_set_write_ex(method, bioWrite) != 1 or
        c.BIO_meth_set_read_ex(method, bioRead) != 1 or
        c.BIO_meth_set_ctrl(method, bioCtrl) != 1 or
        c.BIO_meth_set_create(method, bioCreate) != 1) return error.OpenSslInit;
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
    var engine = try initSsl(client.ctx, .client);
    errdefer engine.deinitSsl();
    const ssl = engine.ssl;
    c.SSL_set_connect_state(ssl);
    var name_buffer: [256]u8 = undefined;
    if (options.server_name.len == 0 or options.server_name.len >= name_buffer.len) return error.Protocol;
    @memcpy(name_buffer[0..options.server_name.len], options.server_name);
    name_buffer[options.server_name.len] = 0;
    const name: [*:0]const u8 = name_buffer[0..options.server_name.len :0];
    const is_ip = isIpAddress(options.server_name);
    var ok = true;
    if (!is_ip) ok = ok and c.SSL_set_tlsext_host_name(ssl, name);
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
    const bio = c.BIO_new(bio_method.?) orelse return outOfMemoryOr(failures_before);
    // One BIO both ways; SSL_set_bio takes its one reference.
    c.SSL_set_bio(ssl, bio, bio);
    return .{ .ssl = ssl, .role = role, .state = .handshaking };
}

fn outOfMemoryOr(failures_before: u64) Failure {
    const record = failure.Record.capture(poolFailures() != failures_before, 0);
    return if (record.code == 0) error.OutOfMemory else record.classify();
}

/// Frees OpenSSL's state of the connection. Send nothing more: call `close` first for a
/// clean close_notify.
pub fn deinit(engine: *Engine) void {
    const live = switch (engine.role) {
        .server => &ServerContext.of(engine.ssl).engines_live,
        .client => &ClientContext.of(engine.ssl).engines_live,
    };
    const before = live.fetchSub(1, .monotonic);
    assert(before > 0);
    // OpenSSL marks the session of a connection freed without a close_notify as not
    // resumable; a connection that ends without one (the peer closed first, an idle timeout)
    // is no reason to forget the session, a failed one is. nginx does the same.
    if (engine.state == .open or engine.state == .closed) {
        c.SSL_set_shutdown(engine.ssl, c.SSL_get_shutdown(engine.ssl) | c.SSL_SENT_SHUTDOWN);
    }
    engine.deinitSsl();
    engine.* = undefined;
}

fn deinitSsl(engine: *Engine) void {
    c.SSL_free(engine.ssl);
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
        if (engine.role == .client) ClientContext.Resumption.afterHandshake(engine.ssl);
        engine.releaseBuffers();
        return .done;
    }
    return switch (c.SSL_get_error(engine.ssl, rc)) {
        c.SSL_ERROR_WANT_READ => if (wire.input_closed) engine.fail(.{ .code = unexpectedEofCode() }) else .want_read,
        c.SSL_ERROR_WANT_WRITE => .want_write,
        else => engine.fail(call.capture(engine)),
    };
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
        // With nothing to read, SSL_read would only take a record buffer from the pool and
        // keep it while the connection waits: the idle connection would hold 16 KiB more.
        if (wire.consumed == wire.input.len and c.SSL_has_pending(engine.ssl) == 0 and !wire.input_closed) {
            engine.releaseBuffers();
            return .{ .plaintext = total, .progress = .want_read };
        }
        var n: usize = 0;
        if (c.SSL_read_ex(engine.ssl, plaintext[total..].ptr, plaintext.len - total, &n) == 1) {
            total += n;
            continue;
        }
        switch (c.SSL_get_error(engine.ssl, 0)) {
            c.SSL_ERROR_WANT_READ => {
                engine.releaseBuffers();
                return .{ .plaintext = total, .progress = .want_read };
            },
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
    engine.releaseBuffers(); // kept by OpenSSL if a record is still half read
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
            // OpenSSL holds a sealed record of these bytes: the retry must repeat them.
            assert(left >= engine.write_pending);
            break :blk engine.write_pending;
        } else blk: {
            const room = wire.output.len - wire.produced;
            if (room <= record_overhead_max) return .{ .plaintext = total, .progress = .want_write };
            break :blk @min(left, room - record_overhead_max, record_plaintext_max);
        };
        var n: usize = 0;
        if (c.SSL_write_ex(engine.ssl, plaintext[total..].ptr, chunk, &n) == 1) {
            assert(n == chunk);
            engine.write_pending = 0;
            total += n;
            continue;
        }
        switch (c.SSL_get_error(engine.ssl, 0)) {
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

/// OpenSSL's name of the cipher: "TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256".
pub fn cipher(engine: *const Engine) []const u8 {
    return std.mem.span(c.SSL_CIPHER_get_name(c.SSL_get_current_cipher(engine.ssl)));
}

/// The protocol ALPN agreed on, if any.
pub fn alpn(engine: *const Engine) ?[]const u8 {
    var data: ?[*]const u8 = null;
    var len: c_uint = 0;
    c.SSL_get0_alpn_selected(engine.ssl, &data, &len);
    const bytes = data orelse return null;
    if (len == 0) return null;
    return bytes[0..len];
}

/// The handshake resumed a session (no certificate was sent or checked).
pub fn resumed(engine: *const Engine) bool {
    return c.SSL_session_reused(engine.ssl) == 1;
}

/// Plaintext OpenSSL has decrypted and no read has taken yet: a connection that holds some
/// cannot be reused for another request (those bytes are not its answer).
pub fn hasPending(engine: *const Engine) bool {
    return c.SSL_has_pending(engine.ssl) != 0;
}

/// The name the client asked for (SNI), if it sent one.
pub fn serverName(engine: *const Engine) ?[]const u8 {
    const name = c.SSL_get_servername_host(engine.ssl) orelse return null;
    return std.mem.span(name);
}

/// Gives OpenSSL's record buffers back to the pool if they hold nothing (SSL_free_buffers
/// refuses otherwise). SSL_MODE_RELEASE_BUFFERS does this after application data, but not
/// after the post-handshake messages a client reads (TLS 1.3 tickets), which leave a write
/// buffer behind: without this an idle client connection would keep 16 KiB.
fn releaseBuffers(engine: *Engine) void {
    _ = c.SSL_free_buffers(engine.ssl);
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
/// refused allocation is reported as such even when OpenSSL words it otherwise.
const Call = struct {
    pool_failures: u64,

    fn capture(call: Call, engine: *const Engine) failure.Record {
        const verify: c_long = c.SSL_get_verify_result(engine.ssl);
        return failure.Record.capture(poolFailures() != call.pool_failures, @intCast(verify));
    }
};

fn begin(engine: *Engine, wire: *Wire) Call {
    assert(wire.consumed <= wire.input.len);
    assert(wire.produced <= wire.output.len);
    // A stale error on this thread's queue would make SSL_get_error report SSL_ERROR_SSL.
    c.ERR_clear_error();
    c.BIO_set_data(c.SSL_get_rbio(engine.ssl).?, wire);
    return .{ .pool_failures = poolFailures() };
}

fn end(engine: *Engine) void {
    c.BIO_set_data(c.SSL_get_rbio(engine.ssl).?, null);
}

fn poolFailures() u64 {
    const pool = memory.currentPool() orelse return 0;
    return pool.failures.load();
}

fn unexpectedEofCode() u32 {
    return @intCast((@as(u32, c.ERR_LIB_SSL) << 23) | c.SSL_R_UNEXPECTED_EOF_WHILE_READING);
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

// --- The BIO: OpenSSL reads the caller's input and writes the caller's output ---------------

fn bioCreate(bio: *c.BIO) callconv(.c) c_int {
    c.BIO_set_init(bio, 1);
    return 1;
}

fn bioRead(bio: *c.BIO, buffer: [*]u8, len: usize, read_bytes: *usize) callconv(.c) c_int {
    c.BIO_clear_retry_flags(bio);
    read_bytes.* = 0;
    const wire: *Wire = @ptrCast(@alignCast(c.BIO_get_data(bio) orelse {
        c.BIO_set_retry_read(bio);
        return 0;
    }));
    const available = wire.input.len - wire.consumed;
    if (available == 0) {
        // No retry flag at end of input: OpenSSL sees end-of-file.
        if (!wire.input_closed) c.BIO_set_retry_read(bio);
        return 0;
    }
    const n = @min(len, available);
    @memcpy(buffer[0..n], wire.input[wire.consumed..][0..n]);
    wire.consumed += n;
    read_bytes.* = n;
    return 1;
}

fn bioWrite(bio: *c.BIO, buffer: [*]const u8, len: usize, written: *usize) callconv(.c) c_int {
    c.BIO_clear_retry_flags(bio);
    written.* = 0;
    const wire: *Wire = @ptrCast(@alignCast(c.BIO_get_data(bio) orelse {
        c.BIO_set_retry_write(bio);
        return 0;
    }));
    const room = wire.output.len - wire.produced;
    if (room == 0) {
        c.BIO_set_retry_write(bio);
        return 0;
    }
    const n = @min(len, room);
    @memcpy(wire.output[wire.produced..][0..n], buffer[0..n]);
    wire.produced += n;
    written.* = n;
    return 1;
}

fn bioCtrl(bio: *c.BIO, command: c_int, larg: c_long, parg: ?*anyopaque) callconv(.c) c_long {
    _ = larg;
    _ = parg;
    return switch (command) {
        c.BIO_CTRL_FLUSH => 1,
        c.BIO_CTRL_EOF => blk: {
            const wire: *Wire = @ptrCast(@alignCast(c.BIO_get_data(bio) orelse break :blk 0));
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
