//! TLS for sluice: OpenSSL 3 behind one narrow module. Nothing outside src/tls/ names an
//! OpenSSL symbol or includes its headers; what crosses the border are Zig types (contexts,
//! an engine per connection, error sets, plain reports). Moving to AWS-LC or a newer OpenSSL
//! touches this folder only.
//!
//! The one decision a reader must know: OpenSSL never sees a file descriptor. An `Engine`
//! transforms bytes (ciphertext in, plaintext out, and back) through caller-owned slices, so
//! the connection keeps its socket, its buffers and its event loop, and a handshake never
//! blocks a worker. And OpenSSL never sees the general heap on a worker: its allocator is
//! sluice's (`memory.zig`), bounded pools per worker.
//!
//!   init                 once, before anything else here: routes OpenSSL's memory, loads it
//!   ServerContext        certificates (SNI, RSA and ECDSA), policy, ALPN, tickets, OCSP
//!   ClientContext        for backends: verification, SNI, mutual TLS, session resumption
//!   Engine               one connection's TLS, driven with memory (see `Engine.Wire`)
//!   Ciphertext           the records a connection holds between socket operations
//!   TicketKeys           session-ticket keys: rotated by the control thread, read by workers
//!   memory.Pool          a worker's bounded memory for OpenSSL
//!   certificate          loading, names, and `check`'s findings about a cert/key pair
//!   Failure              what went wrong, as a Zig error; `Engine.describe` says it in words
const std = @import("std");
const c = @import("c.zig");

pub const memory = @import("memory.zig");
pub const certificate = @import("certificate.zig");
pub const ServerContext = @import("ServerContext.zig");
pub const ClientContext = @import("ClientContext.zig");
pub const Engine = @import("Engine.zig");
pub const Ciphertext = @import("Ciphertext.zig");
pub const TicketKeys = @import("TicketKeys.zig");
pub const failure = @import("failure.zig");
pub const Failure = failure.Failure;

pub const InitError = error{ TooLate, UnsupportedOpenSsl, OpenSslInit, OutOfMemory };

pub const Options = struct {
    /// Where threads that have not entered a `memory.Pool` get OpenSSL's memory (the control
    /// thread: contexts, certificates, reload). Must be thread-safe.
    heap: std.mem.Allocator = std.heap.c_allocator,
};

var init_state: std.atomic.Value(enum(u8) { none, done, failed }) = .init(.none);
/// A spin lock: init runs once, on the control thread; the lock only makes a second caller wait.
var init_mutex: std.atomic.Mutex = .unlocked;

/// Once per process, before any other call into this module, on the control thread; later
/// calls return the first result. Routes OpenSSL's allocator to `memory` (so it must come
/// before OpenSSL allocates anything), then starts OpenSSL without reading any OpenSSL
/// configuration file (sluice's policy is set in code, the same on every host), without its
/// exit handler (the process exits without freeing what lives as long as it), and with its
/// error strings (the reasons in log lines).
pub fn init(options: Options) InitError!void {
    while (!init_mutex.tryLock()) std.atomic.spinLoopHint();
    defer init_mutex.unlock();
    switch (init_state.load(.acquire)) {
        .done => return,
        .failed => return error.OpenSslInit,
        .none => {},
    }
    errdefer init_state.store(.failed, .release);
    if (!memory.install(options.heap, c.CRYPTO_set_mem_functions)) return error.TooLate;
    const version = c.OpenSSL_version_num();
    if (version < 0x30000000 or version >= 0x40000000) return error.UnsupportedOpenSsl;
    // Not the legacy by-name table of every cipher (`EVP_get_cipherbyname`): OpenSSL 3 fetches
    // the ciphers it uses from its provider, and filling the table cost ~0.4 ms of a TLS
    // start-up. The digests' table stays: the certificate signature checks of the security
    // level look digests up by name (without it, "ca md too weak" for every certificate).
    const flags = c.OPENSSL_INIT_NO_LOAD_CONFIG | c.OPENSSL_INIT_NO_ATEXIT |
        c.OPENSSL_INIT_LOAD_SSL_STRINGS | c.OPENSSL_INIT_LOAD_CRYPTO_STRINGS |
        c.OPENSSL_INIT_NO_ADD_ALL_CIPHERS;
    if (c.OPENSSL_init_ssl(flags, null) != 1) return error.OpenSslInit;
    try Engine.initLibrary();
    try TicketKeys.initLibrary();
    init_state.store(.done, .release);
}

/// Prepares the calling thread (a worker, after `pool.enter()`): OpenSSL's per-thread state
/// (its error queue and its two random generators) is made now, from the worker's pool, so
/// that the first handshake does not pay for it. Optional; without it the first handshake
/// on the thread makes them.
pub fn prepareThread() void {
    var byte: [1]u8 = undefined;
    c.ERR_clear_error();
    _ = c.RAND_bytes(&byte, 1);
    _ = c.RAND_priv_bytes(&byte, 1);
}

/// The OpenSSL version linked in, as "3.0.19" (for `sluice version` and the start-up line).
pub fn libraryVersion(buffer: []u8) []const u8 {
    const v = c.OpenSSL_version_num();
    return std.fmt.bufPrint(buffer, "{d}.{d}.{d}", .{ (v >> 28) & 0xf, (v >> 20) & 0xff, (v >> 4) & 0xff }) catch buffer[0..0];
}

test {
    _ = @import("glibc_shim.zig");
    _ = c;
    _ = memory;
    _ = certificate;
    _ = ServerContext;
    _ = ClientContext;
    _ = Engine;
    _ = Ciphertext;
    _ = TicketKeys;
    _ = failure;
    _ = @import("handshake_test.zig");
}

test "tls: init routes OpenSSL's memory and is idempotent" {
    try init(.{});
    try init(.{});
    var buffer: [32]u8 = undefined;
    try std.testing.expect(std.mem.startsWith(u8, libraryVersion(&buffer), "3."));
}
