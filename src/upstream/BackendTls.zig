//! How one pool speaks TLS to its backends: the `tls.ClientContext` built from the pool's
//! `.tls` settings (whom to trust, the client certificate to show), and each backend's server
//! name. Built on the control thread with the pool instance (start-up, or the reload that
//! changes the pool) and read by every worker; each worker keeps its own sessions to resume,
//! per backend (`LocalPool.resumptions`).
//!
//! Decision: the name a backend's certificate must carry is the pool's `server_name` when
//! given, else the host of the backend's address when it is a name (`localhost`: sluice does
//! not resolve other names yet), else its IP address, which is checked against the
//! certificate's IP addresses and sends no SNI (RFC 6066 §3 allows host names only). Files
//! are read here, so a mistake in one (missing, not PEM, a key that does not match) fails the
//! build with the file's name and the reason, and the running generation keeps serving.
//! ALPN offers `http/1.1`, or only `h2` for a pool whose protocol is h2.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const tls = @import("../tls/tls.zig");

const BackendTls = @This();

context: tls.ClientContext,
/// Per slot (upstream/Members.zig): the name the member's certificate must carry (see the
/// decision above). A slot's name is written by the control thread while the slot is free
/// (`setName`).
names: [][]const u8,
/// Per worker, then per backend: the sessions that worker resumes with that backend (each
/// worker touches only its own row: `LocalPool.resumptions`).
resumptions: []tls.ClientContext.Resumption,
/// SHA-256 of the files' contents (CA, client certificate, client key) it was built from: a
/// reload that leaves the pool's settings alone still rebuilds it when a file changed
/// (`sameFiles`), so a renewed certificate is picked up by a reload.
files_digest: Digest,

pub const Digest = [std.crypto.hash.sha2.Sha256.digest_length]u8;

pub const Error = error{ Invalid, OutOfMemory };

/// `backend_tls` must not move afterwards (engines point at its context). Strings and file
/// contents go into `arena`, which outlives it.
pub fn init(
    backend_tls: *BackendTls,
    arena: std.mem.Allocator,
    pool: *const Config.Pool,
    slots_count: u32,
    workers_count: usize,
    diagnostic: *tls.certificate.Diagnostic,
) Error!void {
    assert(slots_count >= pool.backends_count);
    const settings = &pool.tls;
    assert(settings.enabled);
    tls.init(.{}) catch |err| {
        diagnostic.set("cannot start AWS-LC: {s}", .{@errorName(err)});
        return error.Invalid;
    };
    const names = try arena.alloc([]const u8, slots_count);
    @memset(names, "");
    for (names[0..pool.backends_count], pool.backends()) |*name, *backend| name.* = try serverName(arena, settings, backend);
    const files = try Files.read(arena, settings, diagnostic);
    var options: tls.ClientContext.Options = .{ .verify = settings.verify };
    // HTTP/2 over TLS is agreed by ALPN and nothing else (RFC 9113 §3.2): offering only `h2`
    // makes a backend that cannot speak it say so in the handshake.
    if (pool.protocol == .h2) options.alpn = &.{"h2"};
    if (settings.ca.len > 0) {
        options.ca_pem = files.ca;
        options.ca_name = settings.ca;
    }
    if (settings.client_cert.len > 0) {
        options.client_certificate = .{
            .cert_pem = files.client_cert,
            .key_pem = files.client_key,
            .cert_name = settings.client_cert,
            .key_name = settings.client_key,
        };
    }
    const resumptions = try arena.alloc(tls.ClientContext.Resumption, workers_count * slots_count);
    @memset(resumptions, .{});
    backend_tls.* = .{
        .context = undefined,
        .names = names,
        .resumptions = resumptions,
        .files_digest = files.digest(),
    };
    try backend_tls.context.init(arena, options, diagnostic);
}

/// A new member takes slot `index` (free until now): its server name, in `arena` (the pool
/// instance's). Each worker forgets its sessions with the slot's previous member when it
/// adopts the table (LocalPool.adoptMembers).
pub fn setName(backend_tls: *BackendTls, arena: std.mem.Allocator, settings: *const Config.UpstreamTls, index: u16, backend: *const Config.Backend) error{OutOfMemory}!void {
    backend_tls.names[index] = try serverName(arena, settings, backend);
}

/// One worker's row of `resumptions`.
pub fn resumptionsOf(backend_tls: *BackendTls, worker_index: usize) []tls.ClientContext.Resumption {
    const count = backend_tls.names.len;
    return backend_tls.resumptions[worker_index * count ..][0..count];
}

/// On the control thread, once no worker has a connection made from it: the sessions go back
/// to their workers' memory (through each pool's remote list), then the context.
pub fn deinit(backend_tls: *BackendTls) void {
    for (backend_tls.resumptions) |*resumption| resumption.forget();
    backend_tls.context.deinit();
    backend_tls.* = undefined;
}

/// Whether the files `settings` names still hold what this was built from. False when one
/// changed or cannot be read (the rebuild that follows then says why).
pub fn sameFiles(backend_tls: *const BackendTls, settings: *const Config.UpstreamTls) bool {
    var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    defer arena_state.deinit();
    var diagnostic: tls.certificate.Diagnostic = .{};
    const files = Files.read(arena_state.allocator(), settings, &diagnostic) catch return false;
    return std.mem.eql(u8, &files.digest(), &backend_tls.files_digest);
}

/// The contents of the files a pool's TLS settings name (empty when not named).
const Files = struct {
    ca: []const u8 = "",
    client_cert: []const u8 = "",
    client_key: []const u8 = "",

    fn read(arena: std.mem.Allocator, settings: *const Config.UpstreamTls, diagnostic: *tls.certificate.Diagnostic) Error!Files {
        var files: Files = .{};
        inline for (.{ "ca", "client_cert", "client_key" }) |name| {
            const path = @field(settings, name);
            if (path.len > 0) @field(files, name) = try readFile(arena, path, diagnostic);
        }
        return files;
    }

    fn digest(files: Files) Digest {
        var hash: std.crypto.hash.sha2.Sha256 = .init(.{});
        inline for (.{ "ca", "client_cert", "client_key" }) |name| {
            const bytes = @field(files, name);
            var length: [8]u8 = undefined;
            std.mem.writeInt(u64, &length, bytes.len, .little); // So no two splits hash alike.
            hash.update(&length);
            hash.update(bytes);
        }
        return hash.finalResult();
    }
};

fn serverName(arena: std.mem.Allocator, settings: *const Config.UpstreamTls, backend: *const Config.Backend) error{OutOfMemory}![]const u8 {
    if (settings.server_name.len > 0) return settings.server_name;
    if (backend.host_name.len > 0) return backend.host_name;
    // A Unix socket's path names no host: the name its Host and probes use (Address.authority).
    if (backend.address.isUnix()) return "localhost";
    var buffer: [Config.Address.host_text_bytes_max]u8 = undefined;
    return arena.dupe(u8, backend.address.formatHost(&buffer));
}

fn readFile(arena: std.mem.Allocator, path: []const u8, diagnostic: *tls.certificate.Diagnostic) Error![]const u8 {
    var why: []const u8 = undefined;
    return tls.certificate.readFileOrWhy(arena, path, &why) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        error.CannotRead => {
            diagnostic.set("{s}: {s}", .{ path, why });
            return error.Invalid;
        },
    };
}

test "backend tls: the server name is the pool's, else the address's name, else its IP, else localhost for a Unix socket" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const Address = Config.Address;
    var settings: Config.UpstreamTls = .{ .enabled = true };
    const by_ip: Config.Backend = .{ .address = try Address.parse("10.0.0.5:443") };
    const by_name: Config.Backend = .{ .address = try Address.parse("localhost:443"), .host_name = Config.backendHostName("localhost:443") };
    const by_ip6: Config.Backend = .{ .address = try Address.parse("[::1]:443") };
    const by_path: Config.Backend = .{ .address = try Address.parseUnix("unix:/run/app/tls.sock") };
    try std.testing.expectEqualStrings("10.0.0.5", try serverName(arena, &settings, &by_ip));
    try std.testing.expectEqualStrings("localhost", try serverName(arena, &settings, &by_name));
    try std.testing.expectEqualStrings("::1", try serverName(arena, &settings, &by_ip6));
    try std.testing.expectEqualStrings("localhost", try serverName(arena, &settings, &by_path));
    settings.server_name = "api.internal";
    try std.testing.expectEqualStrings("api.internal", try serverName(arena, &settings, &by_ip));
    try std.testing.expectEqualStrings("api.internal", try serverName(arena, &settings, &by_path));
}
