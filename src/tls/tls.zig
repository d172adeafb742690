//! TLS for sluice: AWS-LC behind one narrow module. Nothing outside src/tls/ names an AWS-LC
//! symbol or imports its API (the `aws_lc` module, translated from its headers by build.zig:
//! tools/check_layers.sh holds other folders to that); what crosses the border are Zig types
//! (contexts, an engine per connection, error sets, plain reports).
//!
//! The one decision a reader must know: AWS-LC never sees a file descriptor. An `Engine`
//! transforms bytes (ciphertext in, plaintext out, and back) through caller-owned slices, so
//! the connection keeps its socket, its buffers and its event loop (`stream` drives them for
//! it), and a handshake never
//! blocks a worker. And AWS-LC never sees the general heap on a worker: its allocator is
//! sluice's (`memory.zig`), bounded pools per worker.
//!
//!   init                 once, before anything else here: routes AWS-LC's memory
//!   ServerContext        certificates (SNI, RSA and ECDSA), policy, ALPN, tickets, OCSP,
//!                        client certificates
//!   ClientContext        for backends: verification, SNI, mutual TLS, session resumption
//!   Engine               one connection's TLS, driven with memory (see `Engine.Wire`)
//!   Ciphertext           the records a connection holds between socket operations
//!   stream               the handshake, receives and sends over a socket on a `Loop`, for an
//!                        owner (a client connection, a try on a backend) that reads plaintext
//!   TicketKeys           session-ticket keys: rotated by the control thread, read by workers
//!   memory.Pool          a worker's bounded memory for AWS-LC
//!   certificate          loading, names, and `check`'s findings about a cert/key pair
//!   Failure              what went wrong, as a Zig error; `Engine.describe` says it in words
//!   digest               one-shot SHA-1/256/384/512 (the engine's crypto.subtle.digest)
const std = @import("std");
const c = @import("aws_lc");

pub const memory = @import("memory.zig");
pub const certificate = @import("certificate.zig");
pub const ServerContext = @import("ServerContext.zig");
pub const ClientContext = @import("ClientContext.zig");
pub const Engine = @import("Engine.zig");
pub const Ciphertext = @import("Ciphertext.zig");
/// A socket's TLS driven on a `Loop` for an owner that reads and writes plaintext.
pub const stream = @import("stream.zig");
pub const TicketKeys = @import("TicketKeys.zig");
pub const failure = @import("failure.zig");
pub const Failure = failure.Failure;
pub const digest = @import("digest.zig");

pub const InitError = error{ TooLate, LibraryInit, OutOfMemory };

pub const Options = struct {
    /// Where threads that have not entered a `memory.Pool` get AWS-LC's memory (the control
    /// thread: contexts, certificates, reload). Must be thread-safe.
    heap: std.mem.Allocator = std.heap.c_allocator,
};

var init_state: std.atomic.Value(enum(u8) { none, done, failed }) = .init(.none);
/// A spin lock: init runs once, on the control thread; the lock only makes a second caller wait.
var init_mutex: std.atomic.Mutex = .unlocked;

/// Once per process, before any other call into this module, on the control thread; later
/// calls return the first result. Routes AWS-LC's allocator to `memory` (so it must come
/// before AWS-LC allocates anything), then makes what every connection shares (the BIO method,
/// the ticket cipher). AWS-LC itself needs no set-up call: it reads no configuration file and
/// initialises itself (CPU capabilities, the random generator) lazily, on first use.
pub fn init(options: Options) InitError!void {
    while (!init_mutex.tryLock()) std.atomic.spinLoopHint();
    defer init_mutex.unlock();
    switch (init_state.load(.acquire)) {
        .done => return,
        .failed => return error.LibraryInit,
        .none => {},
    }
    errdefer init_state.store(.failed, .release);
    if (!memory.install(options.heap)) return error.TooLate;
    try Engine.initLibrary();
    init_state.store(.done, .release);
}

/// Prepares the calling thread (a worker, after `pool.enter()`): AWS-LC's per-thread state
/// (its error queue and its random generator) is made now, so that the first handshake does
/// not pay for it. Optional; without it the first handshake on the thread makes them.
pub fn prepareThread() void {
    var byte: [1]u8 = undefined;
    c.ERR_clear_error();
    _ = c.RAND_bytes(&byte, 1);
}

/// The AWS-LC version linked in, as "AWS-LC 5.12.0" (for `sluice version` and the start-up
/// line).
pub fn libraryVersion() []const u8 {
    return std.mem.span(c.OpenSSL_version(c.OPENSSL_VERSION));
}

test {
    _ = memory;
    _ = certificate;
    _ = ServerContext;
    _ = ClientContext;
    _ = Engine;
    _ = Ciphertext;
    _ = stream;
    _ = TicketKeys;
    _ = failure;
    _ = @import("handshake_test.zig");
}

test "tls: init routes AWS-LC's memory and is idempotent" {
    try init(.{});
    try init(.{});
    try std.testing.expect(std.mem.startsWith(u8, libraryVersion(), "AWS-LC "));
}
