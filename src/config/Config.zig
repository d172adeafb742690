//! The whole run-time configuration as plain data: what the command line and config files
//! fill in, so both map onto one schema. Every limit the data plane sizes itself from lives
//! here; each setting's default, bounds, flag and file key are written once, in
//! `settings.zig`, and a field's default below is read from there (`settings.default`).
//! `validate` checks values and the relations between them once, before anything is allocated.
const std = @import("std");
const assert = std.debug.assert;
pub const Address = @import("../stdx/Address.zig").Address;
const address_ns = @import("../stdx/Address.zig");
pub const Cidr = @import("Cidr.zig");
const settings = @import("settings.zig");
const chars = @import("../http/chars.zig");

const Config = @This();

/// The event loop's own choice of backend: the CLI fills it, workers hand it to Loop.init.
pub const IoMode = @import("../loop/Loop.zig").Mode;

pub const default_listen = Address.parse(settings.lookup(.global, "listen").default.?) catch unreachable;
/// Where the admin listener binds when a config file's `admin` section names no address.
pub const default_admin_listen = Address.initIp4(.{ 127, 0, 0, 1 }, 9901);

/// Members of one pool. The data plane sizes every per-member array from a pool's own count
/// at start-up (or when a reload builds the pool), so this bound only caps what a file or the
/// command line may ask for.
pub const backends_count_max = 1024;
/// Members of all pools together: what `/metrics` and `/status` are sized for.
pub const backends_total_max = 2048;
pub const pools_count_max = 16;
pub const listeners_count_max = 8;
pub const routes_count_max = 64;
pub const handlers_count_max = 8;
pub const trusted_proxies_count_max = 32;
/// As many as resolv.conf's `nameserver` lines glibc and musl read.
pub const resolvers_count_max = 3;
pub const workers_count_max = 256;

/// Where clients connect. None given: `default_listen`.
listeners_buffer: [listeners_count_max]Listener = undefined,
listeners_count: u32 = 0,
/// The command line's certificates (`--tls-cert FILE --tls-key FILE`, repeated): they make
/// the `--listen` listener HTTPS, or with a config file and no `--listen`, every listener the
/// file leaves plain (`listenerTls`). Files are read when a generation is built.
cli_tls: Tls = .{},
workers_count: u32 = settings.default(.global, "workers_count"), // 0 = one per CPU, resolved at start-up.
io: IoMode = settings.default(.global, "io"),
/// Where HTTP/2 is served (`http2`, `--http2`); a listener's own `.http2` overrides it.
http2: Http2 = settings.default(.global, "http2"),
/// The limit on every request (`rate_limit`, `--rate-limit`: config/RateLimit.zig's text);
/// empty: none.
rate_limit: []const u8 = "",
/// The top level's allow and deny lists (`allow`, `deny`, `--allow`, `--deny`): every request.
access: Access = .{},
/// Whether listeners take the PROXY protocol (`proxy_protocol`, `--proxy-protocol`); a
/// listener's own `.proxy_protocol` overrides it.
proxy_protocol: bool = settings.default(.global, "proxy_protocol"),
/// A response body with a length, once this much of it is left, moves backend -> pipe ->
/// client with splice(2): no copy through sluice's memory (0: never; upstream_http1.spliceBody).
splice_min_bytes: u64 = settings.default(.global, "splice_min_bytes"),

connections_max: u32 = settings.default(.global, "connections_max"),
header_bytes_max: u32 = settings.default(.global, "header_bytes_max"),
headers_count_max: u16 = settings.default(.global, "headers_count_max"),
target_bytes_max: u32 = settings.default(.global, "target_bytes_max"),
/// Response heads have their own limits, set to pass what real applications send (long
/// Content-Security-Policy values, dozens of Set-Cookie lines): nginx refuses from about
/// 4-8 KiB by default, HAProxy at 16 KiB with 101 fields, Envoy at 60 KiB with 100.
response_header_bytes_max: u32 = settings.default(.global, "response_header_bytes_max"),
response_headers_count_max: u16 = settings.default(.global, "response_headers_count_max"),
/// Request field names with `_`: dropped by default (nginx's `underscores_in_headers off`),
/// because CGI and WSGI servers map `X_Real_IP` and `X-Real-IP` to the same variable.
header_underscores: HeaderUnderscores = settings.default(.global, "header_underscores"),
/// SETTINGS_MAX_CONCURRENT_STREAMS on client connections: with the 65,535-byte stream window,
/// what one connection may buffer (h2/ServerSession.zig).
http2_streams_max: u32 = settings.default(.global, "http2_streams_max"),
/// A request body over this many bytes is refused with 413 (0: no limit; bodies stream).
/// A route may set its own (`Route.request_body_bytes_max`).
request_body_bytes_max: u64 = settings.default(.global, "request_body_bytes_max"),

client_header_timeout_ns: u64 = settings.default(.global, "client_header_timeout_ns"),
client_idle_timeout_ns: u64 = settings.default(.global, "client_idle_timeout_ns"),
drain_timeout_ns: u64 = settings.default(.global, "drain_timeout_ns"),
/// An upgraded connection (WebSocket) with no byte either way for this long is closed.
/// Longer than the keep-alive idle timeout: a quiet WebSocket is normal, a quiet keep-alive
/// connection is a slot wasted. A route may set its own (`Route.tunnel_idle_timeout_ns`).
tunnel_idle_timeout_ns: u64 = settings.default(.global, "tunnel_idle_timeout_ns"),

trusted_proxies_buffer: [trusted_proxies_count_max]Cidr = undefined,
trusted_proxies_count: u32 = 0,

/// DNS servers for backends by name (`--resolver`), asked instead of resolv.conf's
/// nameservers (whose search list and options still apply); port 53 unless given.
resolvers_buffer: [resolvers_count_max]Address = undefined,
resolvers_count: u32 = 0,
/// A backend name's answer is kept between these, whatever its TTL (dns/Watch.zig).
dns_ttl_min_ns: u64 = settings.default(.global, "dns_ttl_min_ns"),
dns_ttl_max_ns: u64 = settings.default(.global, "dns_ttl_max_ns"),

/// The backend pools. Quick mode fills one, named `default`.
pools_buffer: [pools_count_max]Pool = undefined,
pools_count: u32 = 0,
/// Which request goes where, tried in order, the first match wins. None given: every
/// request goes to the first pool (and then there must be only one).
routes_buffer: [routes_count_max]Route = undefined,
routes_count: u32 = 0,

/// JavaScript request handlers (docs/JS.md), each compiled once at start-up from its file.
/// Routes name them by `Handler.name`; a reload may not change them (a restart does).
handlers_buffer: [handlers_count_max]Handler = undefined,
handlers_count: u32 = 0,
/// Quick mode's handler: every request goes to the handler of this name (`--handler`), as
/// `--backend` sends every request to the one pool. Empty: none.
handler: []const u8 = settings.default(.global, "handler"),

/// Header rules for every request and response (a route's own are merged over them), and
/// the command line's, over the file's (config/HeaderRules.zig).
header_rules: HeaderRules = .{},
cli_header_rules_buffer: [HeaderRules.rules_count_max]CliHeaderRule = undefined,
cli_header_rules_count: u32 = 0,
/// The field that carries each request's id (generated unless the client sent a plain one),
/// forwarded and logged; empty: no ids.
request_id_header: []const u8 = settings.default(.global, "request_id_header"),

/// Gzip for responses on their way to clients (`compression.*`, `--compress`); a route may
/// turn it on or off for itself (`Route.compression`).
compression: Compression = .{},

/// The admin listener (`/metrics`, `/status`, `/healthz`), served by the control thread.
admin: Admin = .{},
access_log: AccessLog = .{},
/// The least severe log lines written (stdx/log.zig); a reload applies a new one.
log_level: LogLevel = settings.default(.global, "log_level"),

/// The `compression` section (policy/compression.zig decides, proxy/Compressor.zig
/// compresses). `slots` is sized at start-up: a reload may not change it.
pub const Compression = struct {
    enabled: bool = settings.default(.global, "compression.enabled"),
    /// Deflate's level, 1 (fastest) to 9 (smallest).
    level: u4 = settings.default(.global, "compression.level"),
    /// Media types compressed, lowercase and space-separated; `type/*` covers a type.
    types: []const u8 = settings.default(.global, "compression.types"),
    /// A response with a Content-Length under this passes as it is.
    min_bytes: u64 = settings.default(.global, "compression.min_bytes"),
    /// Responses each worker compresses at once; past that they pass uncompressed.
    slots: u32 = settings.default(.global, "compression.slots"),

    /// A `types` value's mistake, if it has one: space-separated lowercase media types
    /// (`type/subtype` of token characters, or `type/*`).
    pub fn typesMistake(text: []const u8) ?[]const u8 {
        if (text.len == 0) return "the list is empty";
        var entries = std.mem.tokenizeScalar(u8, text, ' ');
        while (entries.next()) |entry| {
            const slash = std.mem.indexOfScalar(u8, entry, '/') orelse return "each type is written type/subtype";
            if (slash == 0 or slash == entry.len - 1) return "each type is written type/subtype";
            for (entry, 0..) |c, i| {
                if (i == slash) continue;
                if (c == '*') {
                    if (i == entry.len - 1 and i == slash + 1) continue;
                    return "`*` stands only for a whole subtype (`text/*`)";
                }
                if (!chars.isTchar(c)) return "a type has a character that is not a token character";
                if (c >= 'A' and c <= 'Z') return "write types in lowercase";
            }
        }
        return null;
    }
};

test "config: compression types are lowercase type/subtype or type/*" {
    const mistake = Compression.typesMistake;
    try std.testing.expect(mistake("text/html image/svg+xml text/*") == null);
    try std.testing.expect(mistake("") != null);
    try std.testing.expect(mistake("text") != null);
    try std.testing.expect(mistake("Text/html") != null);
    try std.testing.expect(mistake("text/h\"tml") != null);
    try std.testing.expect(mistake("*/html") != null);
}

pub const Handler = struct {
    /// What routes and `--handler` name it by; a metrics label.
    name: []const u8,
    /// The JavaScript file, compiled at start-up; empty for a handler compiled in.
    path: []const u8,
    /// The bytecode image of a handler compiled in (`zig build -Dhandler=FILE`); empty: `path`
    /// is compiled at start-up.
    image: []const u8 = "",
    /// JavaScript text compiled at start-up, for a handler the binary carries as source (the
    /// demo's). Exactly one of `path`, `image` and `source` is given.
    source: []const u8 = "",
    /// The limits of one call (settings.zig, scope handler; docs/JS.md, "Limits"): the engine's
    /// heap, its execution budget in ticks, its wall-clock deadline, and its call depth.
    heap_bytes: u64 = settings.default(.handler, "heap_bytes"),
    budget_ticks: u64 = settings.default(.handler, "budget_ticks"),
    deadline_ns: u64 = settings.default(.handler, "deadline_ns"),
    depth: u32 = settings.default(.handler, "depth"),
    /// The largest request body read for the handler (`request.body`); a larger one is a 413
    /// and the handler does not run. The connection's buffer bounds it too.
    body_bytes_max: u64 = settings.default(.handler, "body_bytes_max"),
    /// Requests of this handler that may wait on a timer at once, per worker: each reserves
    /// `heap_bytes` of address space, touched only as it is used (docs/JS.md, "Timers").
    suspended_max: u32 = settings.default(.handler, "suspended_max"),
    /// Fetches to pools one request of this handler may have in flight at once (docs/JS.md,
    /// "fetch"); at most `js.HostOps.ops_max`.
    fetch_max: u32 = settings.default(.handler, "fetch_max"),
};

pub const Listener = struct {
    /// What routes name it by (`Route.listeners`); empty: it has no name.
    name: []const u8 = "",
    address: Address,
    /// HTTPS when it has certificates (a file's `.tls`); see `Config.listenerTls`.
    tls: Tls = .{},
    /// This listener's `.http2`; null: the global `http2` (`Config.listenerHttp2`).
    http2: ?bool = null,
    /// This listener's `.proxy_protocol`; null: the global one.
    proxy_protocol: ?bool = null,
    /// This listener's `.allow` and `.deny`, checked besides the top level's.
    access: Access = .{},
};

/// Who may be served (policy/AccessPolicy.zig): each list is address blocks as checked text,
/// separated by single spaces (`10.0.0.0/8 ::1`), kept as text so that a `Config` carries no
/// array for a feature most leave empty. Empty: no such list.
pub const Access = struct {
    allow: []const u8 = "",
    deny: []const u8 = "",

    pub fn isEmpty(access: *const Access) bool {
        return access.allow.len == 0 and access.deny.len == 0;
    }

    /// `list` with `cidr` (checked by the caller) appended, in `arena`.
    pub fn append(arena: std.mem.Allocator, list: []const u8, cidr: []const u8) error{OutOfMemory}![]const u8 {
        if (list.len == 0) return arena.dupe(u8, cidr);
        return std.mem.concat(arena, u8, &.{ list, " ", cidr });
    }
};

/// Where clients may speak HTTP/2 (docs/HTTP2.md): `tls`, on HTTPS listeners that agree on it
/// with ALPN (browsers do whenever it is offered); `on`, there and on plain listeners to
/// clients that start with HTTP/2's preface (prior knowledge, h2c); `off`, nowhere.
/// `Upgrade: h2c` is never honoured (docs/ARCHITECTURE.md, "h2c smuggling").
pub const Http2 = enum { tls, on, off };

pub const HeaderRules = @import("HeaderRules.zig");

/// One `--request-header`, `--response-header` or `--remove-response-header` flag: its kind
/// and its value as given (`NAME: VALUE`, or `NAME`), checked by the command line's parser.
pub const CliHeaderRule = struct {
    kind: Kind,
    text: []const u8,

    pub const Kind = enum { request_set, response_set, response_remove };
};

pub fn cliHeaderRules(config: *const Config) []const CliHeaderRule {
    return config.cli_header_rules_buffer[0..config.cli_header_rules_count];
}

pub fn addCliHeaderRule(config: *Config, rule: CliHeaderRule) error{TooMany}!void {
    if (config.cli_header_rules_count == HeaderRules.rules_count_max) return error.TooMany;
    config.cli_header_rules_buffer[config.cli_header_rules_count] = rule;
    config.cli_header_rules_count += 1;
}

pub const certificates_count_max = 8;

/// A listener's TLS: its certificates (the first is the default, served to clients that send
/// no SNI or a name no certificate has) and its protocol policy. Plain HTTP without
/// certificates. The files are read, checked and loaded when a generation is built (start-up
/// and every reload), so a reload picks up renewed certificates.
pub const Tls = struct {
    certificates_buffer: [certificates_count_max]Certificate = undefined,
    certificates_count: u8 = 0,
    min_version: TlsVersion = .@"1.2",
    /// Offer ALPN `http/1.1` (false: no ALPN answer at all).
    alpn_http1: bool = true,
    /// Path to PEM CA certificates: clients are asked for a certificate signed by one of them.
    /// Empty: none is asked for.
    client_ca: []const u8 = "",
    /// With `client_ca`: a client without a certificate is refused (`required`) or served
    /// (`optional`); a certificate that is sent must verify either way.
    client_verify: ClientVerify = .required,
    /// With `client_ca`: request fields that carry a verified client certificate's subject
    /// (RFC 4514, "CN=alice,O=Example") and SHA-256 fingerprint (64 hex digits) to the
    /// backend. A field of the same name from the client is never forwarded. Empty: not sent.
    client_subject_header: []const u8 = "",
    client_fingerprint_header: []const u8 = "",

    pub fn certificates(t: *const Tls) []const Certificate {
        return t.certificates_buffer[0..t.certificates_count];
    }

    pub fn enabled(t: *const Tls) bool {
        return t.certificates_count > 0;
    }

    pub fn addCertificate(t: *Tls, certificate: Certificate) error{TooMany}!void {
        if (t.certificates_count == certificates_count_max) return error.TooMany;
        t.certificates_buffer[t.certificates_count] = certificate;
        t.certificates_count += 1;
    }
};

/// One certificate of a listener: paths to a PEM chain (the server's certificate first), its
/// PEM private key, and optionally a DER OCSP response to staple.
pub const Certificate = struct {
    cert: []const u8,
    key: []const u8 = "",
    ocsp: []const u8 = "",
};

pub const TlsVersion = enum { @"1.2", @"1.3" };

pub const ClientVerify = enum { required, optional };

/// The longest name of a request field that carries a client certificate's subject or
/// fingerprint (`Tls.client_subject_header`).
pub const client_certificate_header_bytes_max = 64;

/// One routing rule: a request matches when every condition given matches (an empty one
/// matches anything), and then gets the route's action.
pub const Route = struct {
    /// A metrics label; empty: the route's position, from 0.
    name: []const u8 = "",
    /// The listeners (bit i: `listeners()[i]`) the route applies to; 0: all of them.
    listeners: u32 = 0,
    /// Lowercase. Exact (`example.com`, the port of the Host field ignored), or `*.` and a
    /// suffix (`*.example.com`: any name ending in `.example.com`, not the bare domain).
    host: []const u8 = "",
    /// Matches the path (the target before any `?`) when it starts with these bytes.
    path_prefix: []const u8 = "",
    /// Bit `@intFromEnum(method)` for each method it matches; 0: all.
    methods: u16 = 0,
    action: Action = .pool,
    /// `.pool`: the index of the pool in `pools()`.
    pool: u16 = 0,
    /// `.handler`: the index of the handler in `handlers()`.
    handler: u16 = 0,
    /// `.respond` (200 when 0) and `.redirect` (302 when 0).
    status: u16 = 0,
    /// `.redirect`: the Location (or, with `scheme`, none).
    location: []const u8 = "",
    /// `.redirect`: the request's path and query are appended to `location`.
    keep_path: bool = false,
    /// `.redirect` to the request's own host with this scheme ("https" or "http"), its port
    /// dropped (or `redirect_port` given), its path and query kept: `https://HOST/TARGET`.
    /// Instead of `location`.
    scheme: []const u8 = "",
    /// `.redirect` with `scheme`: the port written after the host; 0: none (the scheme's own).
    redirect_port: u16 = 0,
    /// `.respond`: its Content-Type (none when empty), extra header fields as
    /// `Name: value\r\n` lines, and the body.
    content_type: []const u8 = "",
    headers_text: []const u8 = "",
    body: []const u8 = "",
    /// Overrides `Config.tunnel_idle_timeout_ns` for this route's upgrades; 0: not set.
    tunnel_idle_timeout_ns: u64 = settings.default(.route, "tunnel_idle_timeout_ns"),
    /// Overrides `Config.request_body_bytes_max` for this route; null: not set (0: no limit).
    request_body_bytes_max: ?u64 = settings.default(.route, "request_body_bytes_max"),
    /// Header rules over the top level's (config/HeaderRules.zig).
    header_rules: HeaderRules = .{},
    /// This route's `.allow` and `.deny`, checked besides the top level's and the listener's.
    access: Access = .{},
    /// This route's own limit (config/RateLimit.zig's text), besides the top level's.
    rate_limit: []const u8 = "",
    /// `.pool` with a `path_prefix`: the prefix is replaced by this before forwarding (`/`:
    /// stripped); empty: the target is forwarded as sent.
    rewrite_prefix: []const u8 = settings.default(.route, "rewrite_prefix"),
    /// Turns `Config.compression` on or off for this route; null: as the top level says.
    compression: ?bool = null,

    pub const Action = enum { pool, respond, redirect, handler };

    pub fn matchesMethod(route: *const Route, method: @import("../http/method.zig").Method) bool {
        return route.methods == 0 or route.methods & methodBit(method) != 0;
    }

    pub fn responseStatus(route: *const Route) u16 {
        if (route.status != 0) return route.status;
        return if (route.action == .redirect) 302 else 200;
    }

    /// The most bytes the route's own response head and body can take, what it copies from
    /// the request aside (`requestBytesCopied`).
    pub fn localResponseBytes(route: *const Route) usize {
        // The protocol's status line and framing (HTTP/1.1's, in the room in front of the
        // fields), and the names, separators and line ends of Content-Type and Location.
        const fixed = @import("../http/LocalResponse.zig").head_room + 32;
        const scheme_room = if (route.scheme.len > 0) route.scheme.len + "://:65535".len else 0;
        return fixed + route.location.len + scheme_room + route.content_type.len +
            route.headers_text.len + route.body.len;
    }

    /// The most bytes of the request the route's response copies: the target of a
    /// `keep_path` redirect, or the host and target of a `scheme` redirect (both are in the
    /// head, so at most its size).
    pub fn requestBytesCopied(route: *const Route, config: *const Config) usize {
        if (route.scheme.len > 0) return config.header_bytes_max;
        return if (route.keep_path) config.target_bytes_max else 0;
    }
};

pub fn methodBit(method: @import("../http/method.zig").Method) u16 {
    return @as(u16, 1) << @intCast(@backingInt(method));
}

pub const AccessLog = struct {
    /// Empty: off. `stdout`, or a file path (opened for appending; SIGUSR1 reopens it, for
    /// log rotation).
    target: []const u8 = settings.default(.global, "access_log.target"),
    format: AccessLogFormat = settings.default(.global, "access_log.format"),

    pub fn enabled(log: *const AccessLog) bool {
        return log.target.len > 0;
    }
};

pub const AccessLogFormat = enum { combined, json };

pub const HeaderUnderscores = enum { drop, allow };

pub const LogLevel = @import("../stdx/log.zig").Level;

pub const Admin = struct {
    /// Off unless `--admin ADDR` or a config file's `admin` section asks for it.
    enabled: bool = false,
    /// Bound as given: the docs recommend loopback, nothing refuses another address.
    listen: Address = default_admin_listen,
};

pub const Pool = struct {
    /// The config file's name for the pool; `default` in quick mode. A metrics label.
    name: []const u8 = "default",
    /// Out of line, in the config's arena (`addBackend`, `setBackends`): a pool of 1,024
    /// members would make every `Config` value 1 MiB otherwise. Never written in place, since
    /// copies of a `Config` share it.
    backends_list: []const Backend = &.{},
    backends_count: u32 = 0,
    /// Set only on a pool instance's copy whose list holds the addresses of backends by name
    /// (runtime/Dns.zig): the slots to size it for, since names may bring more members later.
    /// 0: from the list (`Members.slotsFor`).
    member_slots: u32 = 0,
    strategy: Strategy = settings.default(.pool, "strategy"),
    /// What `hash` hashes; `hash_name` names the header or cookie.
    hash_on: HashOn = settings.default(.pool, "hash_on"),
    hash_name: []const u8 = settings.default(.pool, "hash_name"),
    /// The cookie `sticky` sets and honours.
    sticky_cookie: []const u8 = settings.default(.pool, "sticky_cookie"),
    health: HealthCheck = .{},
    outlier: Outlier = .{},
    retry: Retry = .{},

    connect_timeout_ns: u64 = settings.default(.pool, "connect_timeout_ns"),
    /// Request sent -> response head received.
    response_timeout_ns: u64 = settings.default(.pool, "response_timeout_ns"),
    /// Longest gap between body bytes, either direction, once the exchange is under way.
    body_timeout_ns: u64 = settings.default(.pool, "body_timeout_ns"),
    /// Whole exchange, from picking a backend to the last response byte; 0 = no limit.
    total_timeout_ns: u64 = settings.default(.pool, "total_timeout_ns"),
    /// Pooled idle connections are closed after this.
    idle_timeout_ns: u64 = settings.default(.pool, "idle_timeout_ns"),
    /// Idle connections kept per backend and worker.
    keepalive_max: u32 = settings.default(.pool, "keepalive_max"),
    /// A PROXY protocol header first on each new connection to a backend (`send_proxy`).
    send_proxy: SendProxy = settings.default(.pool, "send_proxy"),
    /// TLS to the backends (a file's `.tls`, `--backend-tls`); off unless `enabled`.
    tls: UpstreamTls = .{},
    /// What the backends speak: HTTP/1.1, or HTTP/2 with prior knowledge, many requests to a
    /// connection (proxy/Http2Backend.zig).
    protocol: UpstreamProtocol = settings.default(.pool, "protocol"),

    pub fn backends(pool: *const Pool) []const Backend {
        assert(pool.backends_list.len == pool.backends_count);
        return pool.backends_list;
    }

    /// Appends a backend: a fresh list in `arena` each time (the old one may be shared with a
    /// copy of this config, or be the baked config's constant), which is quadratic but only
    /// for the command line's few flags; files set the whole list at once (`setBackends`).
    pub fn addBackend(pool: *Pool, arena: std.mem.Allocator, backend: Backend) error{ TooMany, OutOfMemory }!void {
        if (pool.backends_count == backends_count_max) return error.TooMany;
        const list = try arena.alloc(Backend, pool.backends_count + 1);
        @memcpy(list[0..pool.backends_count], pool.backends());
        list[pool.backends_count] = backend;
        pool.backends_list = list;
        pool.backends_count += 1;
    }

    /// Replaces the list with `list` (kept, not copied).
    pub fn setBackends(pool: *Pool, list: []const Backend) error{TooMany}!void {
        if (list.len > backends_count_max) return error.TooMany;
        pool.backends_list = list;
        pool.backends_count = @intCast(list.len);
    }

    /// Every value within its setting's bounds (settings.zig), then what depends on several.
    pub fn validate(pool: *const Pool) ValidateError!void {
        if (pool.backends_count == 0) return error.NoBackends;
        if (pool.name.len > pool_name_bytes_max) return error.NameTooLong;
        if (settings.outOfRange(.pool, pool) != null) return error.OutOfRange;
        for (pool.backends()) |*backend| {
            if (settings.outOfRange(.backend, backend) != null) return error.OutOfRange;
        }
        const named = pool.hash_on == .header or pool.hash_on == .cookie;
        if (pool.strategy == .hash and named and pool.hash_name.len == 0) return error.HashNameMissing;
        if (pool.hash_name.len > name_bytes_max) return error.NameTooLong;
        if (pool.tls.mistake()) |_| return error.UpstreamTlsInvalid;
        if (pool.protocol == .h2c and pool.tls.enabled) return error.H2cWithTls;
        if (pool.protocol == .h2 and !pool.tls.enabled) return error.H2WithoutTls;
        // A PROXY header names one client; a shared HTTP/2 connection carries many.
        if (pool.protocol.multiplexed() and pool.send_proxy != .off) return error.H2cWithSendProxy;
    }
};

/// What a pool's backends speak.
pub const UpstreamProtocol = enum {
    http1,
    /// HTTP/2 over plain TCP with prior knowledge (RFC 9113 §3.3): gRPC servers and other
    /// h2c backends.
    h2c,
    /// HTTP/2 over TLS, agreed by ALPN (RFC 9113 §3.2): the pool's `.tls` settings apply, and
    /// a backend that does not choose `h2` fails the connect.
    h2,

    /// Requests share connections as streams (proxy/Http2Backend.zig).
    pub fn multiplexed(protocol: UpstreamProtocol) bool {
        return protocol != .http1;
    }
};

/// How a pool speaks TLS to its backends (upstream/BackendTls.zig builds it). Paths are read
/// when the pool is built (start-up, and a reload that changes the pool).
pub const UpstreamTls = struct {
    enabled: bool = false,
    /// Check the backend's certificate and name. Off only for backends that cannot be given
    /// a proper certificate: anyone on the path can then read and change everything.
    verify: bool = true,
    /// PEM CA certificates to trust; empty: the system's bundle.
    ca: []const u8 = "",
    /// The name sent as SNI and checked in the certificate; empty: the backend address's host
    /// if it is a name, else its IP (checked against the certificate's IP addresses, no SNI).
    server_name: []const u8 = "",
    /// A PEM certificate chain and key shown to backends that ask (mutual TLS).
    client_cert: []const u8 = "",
    client_key: []const u8 = "",

    /// Why these settings cannot work together, or null.
    pub fn mistake(upstream: *const UpstreamTls) ?[]const u8 {
        if (!upstream.enabled) return null;
        if ((upstream.client_cert.len == 0) != (upstream.client_key.len == 0)) {
            return "client_cert and client_key go together: give both";
        }
        if (!upstream.verify and upstream.ca.len > 0) return "ca is not used with verify = false: give one or the other";
        if (upstream.server_name.len > 0) if (serverNameMistake(upstream.server_name)) |why| return why;
        return null;
    }
};

/// A name to send as SNI and check in a certificate: a DNS name (RFC 1123 labels) or an IP
/// address, at most 253 bytes.
pub fn serverNameMistake(name: []const u8) ?[]const u8 {
    if (name.len == 0 or name.len > 253) return "a server name has 1 to 253 bytes";
    for (name) |c| switch (c) {
        'a'...'z', 'A'...'Z', '0'...'9', '-', '.', ':' => {},
        else => return "a server name is a DNS name or an IP address (letters, digits, '-', '.')",
    };
    return null;
}

/// The host name of a backend address as the operator wrote it (`localhost:9000`), for SNI and
/// the certificate check; empty when the host is an IP address. Only for addresses
/// `Address.parse` took, so the name is a static string; a DNS name is `parseBackendAddress`'s.
pub fn backendHostName(text: []const u8) []const u8 {
    const colon = std.mem.lastIndexOfScalar(u8, text, ':') orelse return "";
    return if (std.mem.eql(u8, text[0..colon], "localhost")) "localhost" else "";
}

/// What a listener's and a backend's HOST may be, for the mistake that names it.
pub const address_host_rule = "expected HOST:PORT where HOST is an IP address or localhost";
pub const backend_host_rule = "expected HOST:PORT where HOST is an IP address, localhost, or a DNS name (letters, digits, '-' and '_' in labels of 1 to 63 bytes), or unix:/PATH";

/// What a Unix socket backend may be (`Address.parseUnix`).
pub const unix_rule = std.fmt.comptimePrint("expected unix:/PATH, an absolute path of at most {d} bytes of visible ASCII other than '\"', '\\' and ','", .{Address.unix_path_bytes_max});

/// The one text of an address mistake, for the command line and files alike: `host_rule` is
/// `address_host_rule` or `backend_host_rule`. What does not fit `buffer` is cut.
pub fn addressMistake(buffer: []u8, text: []const u8, err: BackendAddressError, comptime host_rule: []const u8) []const u8 {
    var w: std.Io.Writer = .fixed(buffer);
    // `parseBackendAddress` takes `unix:` first, so otherwise only a listener's, an admin
    // listener's or a resolver's gets here.
    const unix_elsewhere = std.mem.startsWith(u8, text, Address.unix_prefix) and err != error.UnixPathInvalid;
    if (unix_elsewhere) {
        w.print("invalid address \"{s}\": expected HOST:PORT; Unix sockets are for backends only", .{text}) catch {};
        return w.buffered();
    }
    (switch (err) {
        error.MissingPort, error.InvalidPort => w.print("invalid address \"{s}\": expected HOST:PORT with a port from 0 to 65535", .{text}),
        error.PortOutOfRange => w.print("invalid address \"{s}\": port {s} is out of range (0 to 65535)", .{ text, Address.portText(text) }),
        error.InvalidHost, error.NameInvalid => w.print("invalid address \"{s}\": " ++ host_rule, .{text}),
        error.UnixPathInvalid => w.print("invalid address \"{s}\": " ++ unix_rule, .{text}),
        error.OutOfMemory => w.writeAll("out of memory"),
    }) catch {}; // Cut: a value longer than any address.
    return w.buffered();
}

pub const BackendAddressError = Address.ParseError || error{ NameInvalid, UnixPathInvalid, OutOfMemory };

/// `HOST:PORT` as a backend: an IP address or localhost (`Address.parse`), or a DNS name to
/// resolve (dns/), copied into `arena`; or an SRV name without a port (`srvName`). A name is letters, digits, `-` and `_` in dot-separated
/// labels of 1 to 63 bytes, 253 bytes at most, with an optional final dot; a host whose last
/// label is all digits is a mistyped IP address, not a name.
pub fn parseBackendAddress(arena: std.mem.Allocator, text: []const u8) BackendAddressError!Backend {
    if (std.mem.startsWith(u8, text, Address.unix_prefix)) return .{ .address = try Address.parseUnix(text) };
    if (srvName(text)) |name| {
        if (!isDnsName(name)) return error.NameInvalid;
        return .{
            .address = .{ .any = std.mem.zeroes(std.os.linux.sockaddr) },
            .host_name = try arena.dupe(u8, name),
            .by_name = true,
            .port = 0,
        };
    }
    const by_ip = Address.parse(text) catch |err| switch (err) {
        error.InvalidHost => {
            const colon = std.mem.lastIndexOfScalar(u8, text, ':').?; // Else MissingPort.
            const host = text[0..colon];
            const port = address_ns.parsePort(text[colon + 1 ..]) catch unreachable; // Parsed.
            if (!isDnsName(host)) return error.NameInvalid;
            return .{
                .address = .{ .any = std.mem.zeroes(std.os.linux.sockaddr) },
                .host_name = try arena.dupe(u8, host),
                .by_name = true,
                .port = port,
            };
        },
        else => |e| return e,
    };
    return .{ .address = by_ip, .host_name = backendHostName(text) };
}

/// The name of an SRV backend, whose targets give the ports (and weights): `srv+NAME`, or a
/// name in RFC 2782's `_service._proto.domain` form written without a port.
fn srvName(text: []const u8) ?[]const u8 {
    if (std.mem.startsWith(u8, text, "srv+")) return text["srv+".len..];
    if (std.mem.startsWith(u8, text, "_") and std.mem.indexOfScalar(u8, text, ':') == null) return text;
    return null;
}

pub fn isDnsName(host: []const u8) bool {
    const name = if (std.mem.endsWith(u8, host, ".")) host[0 .. host.len - 1] else host;
    if (name.len == 0 or name.len > 253) return false;
    var labels = std.mem.splitScalar(u8, name, '.');
    var last: []const u8 = "";
    while (labels.next()) |label| {
        if (label.len == 0 or label.len > 63) return false;
        for (label) |c| switch (c) {
            'a'...'z', 'A'...'Z', '0'...'9', '-', '_' => {},
            else => return false,
        };
        last = label;
    }
    for (last) |c| if (!std.ascii.isDigit(c)) return true;
    return false;
}

pub const Backend = struct {
    /// Unset (family 0) when `by_name`.
    address: Address,
    /// The host as written when it is a name (`localhost`, or a DNS name); empty for an IP
    /// address. TLS sends it as SNI.
    host_name: []const u8 = "",
    /// A DNS name (`host_name`) with `port`, resolved on the control thread (runtime/Dns.zig):
    /// each address it resolves to is a member with this entry's weight and caps. Port 0: an
    /// SRV name, whose targets give each member's port and weight.
    by_name: bool = false,
    port: u16 = 0,
    /// Share of requests for `weighted`, `least_conn`, `random`; 0 drains the backend: it is
    /// never chosen for a new request, and its in-flight requests finish.
    weight: u16 = settings.default(.backend, "weight"),
    /// Connections open to this backend (busy and idle), all workers together; 0 = no cap.
    /// Over the cap a request tries another backend, else gets a 503.
    max_connections: u32 = settings.default(.backend, "max_connections"),
    /// Requests pending at this backend (sent, response not yet complete), all workers
    /// together; 0 = no cap. Over it, as above. Unlike `max_connections`, idle pooled
    /// connections do not count.
    max_pending: u32 = settings.default(.backend, "max_pending"),
};

/// The balancer's own choice of strategy (see balance/Balancer.zig).
pub const Strategy = @import("../balance/Balancer.zig").Strategy;

/// What a pool writes first on a new backend connection: nothing, or a PROXY protocol v2
/// header with the client's address (policy/proxy_protocol.zig).
pub const SendProxy = enum { off, v2 };

pub const HashOn = enum { client_ip, header, cookie, path };

/// Kinds of upstream failure, as a set: which ones count towards ejection, which ones are
/// retried.
pub const FailureKinds = packed struct(u8) {
    /// The connection could not be made (refused, unreachable, connect timeout).
    connect: bool = true,
    /// The connection broke before a response head arrived (reset, closed, malformed head).
    reset: bool = true,
    /// No response head within the response timeout.
    timeout: bool = true,
    /// A 5xx response head (retried only when nothing of it has been relayed).
    status_5xx: bool = false,
    _padding: u4 = 0,

    pub const none: FailureKinds = .{ .connect = false, .reset = false, .timeout = false };
};

pub const HealthMethod = enum { GET, HEAD };

pub const HealthCheck = struct {
    /// Active checks run when a path is set. Until a check says otherwise, a backend is
    /// healthy (a cold start must not wait for probes to serve).
    path: []const u8 = settings.default(.pool, "health.path"),
    method: HealthMethod = settings.default(.pool, "health.method"),
    /// Host header of the probe; empty = the backend's address.
    host: []const u8 = settings.default(.pool, "health.host"),
    interval_ns: u64 = settings.default(.pool, "health.interval_ns"),
    timeout_ns: u64 = settings.default(.pool, "health.timeout_ns"),
    status_min: u16 = settings.default(.pool, "health.status_min"),
    status_max: u16 = settings.default(.pool, "health.status_max"),
    /// Consecutive passes that bring a down backend up, and failures that take it down.
    rise: u8 = settings.default(.pool, "health.rise"),
    fall: u8 = settings.default(.pool, "health.fall"),

    pub fn enabled(check: *const HealthCheck) bool {
        return check.path.len > 0;
    }
};

/// Passive outlier detection from real traffic.
pub const Outlier = struct {
    /// Consecutive failures (of the kinds in `on`) that eject a backend; 0 = off.
    consecutive_failures: u32 = settings.default(.pool, "outlier.consecutive_failures"),
    on: FailureKinds = settings.default(.pool, "outlier.on"),
    /// The first ejection lasts this long; each repeat ejection doubles it, up to the max.
    ejection_ns: u64 = settings.default(.pool, "outlier.ejection_ns"),
    ejection_max_ns: u64 = settings.default(.pool, "outlier.ejection_max_ns"),
    /// At most this share of the pool is ejected at once, rounded down (so a lone backend is
    /// never ejected; 100 lets every backend be).
    max_ejected_percent: u8 = settings.default(.pool, "outlier.max_ejected_percent"),
};

pub const Retry = struct {
    /// Tries per request, the first included; 1 = never retry.
    tries_max: u8 = settings.default(.pool, "retry.tries_max"),
    /// What is retried (when safe: see ARCHITECTURE.md, "Retries"). Not response timeouts
    /// by default: a request that timed out may still be running on its backend (a long poll,
    /// a slow report), and sending it again doubles the work and the client's wait.
    on: FailureKinds = settings.default(.pool, "retry.on"),
    /// Retries are at most this share of requests...
    budget_percent: u8 = settings.default(.pool, "retry.budget_percent"),
    /// ...plus this many per second and worker, so a quiet pool can still retry.
    budget_min_per_second: u32 = 10,
};

/// Bytes a rewritten head may grow by: X-Forwarded-For (existing value is replaced or the
/// peer appended), X-Forwarded-Proto, X-Forwarded-Host (a copy of Host, itself bounded by
/// `host_bytes_max`) and `Connection: close`. The sum is asserted in `proxy/rewrite.zig`.
pub const rewrite_headroom_bytes = 1024;

const default_listeners = [_]Listener{.{ .address = default_listen }};

/// The TLS listener `listeners()[index]` serves: its own, else the command line's; null when
/// it is plain HTTP.
pub fn listenerTls(config: *const Config, index: usize) ?*const Tls {
    const listener = &config.listeners()[index];
    if (listener.tls.enabled()) return &listener.tls;
    if (config.cli_tls.enabled()) return &config.cli_tls;
    return null;
}

/// Whether `listeners()[index]` serves HTTP/2: offered by ALPN when it is HTTPS, taken with
/// prior knowledge when it is plain.
pub fn listenerHttp2(config: *const Config, index: usize) bool {
    if (config.listeners()[index].http2) |own| return own;
    return switch (config.http2) {
        .tls => config.listenerTls(index) != null,
        .on => true,
        .off => false,
    };
}

/// Whether connections to `listeners()[index]` start with a PROXY protocol header.
pub fn listenerProxyProtocol(config: *const Config, index: usize) bool {
    return config.listeners()[index].proxy_protocol orelse config.proxy_protocol;
}

/// Whether any listener serves HTTPS (the workers then size TLS memory and buffers).
pub fn hasTls(config: *const Config) bool {
    for (0..config.listeners().len) |i| {
        if (config.listenerTls(i) != null) return true;
    }
    return false;
}

pub fn listeners(config: *const Config) []const Listener {
    if (config.listeners_count == 0) return &default_listeners;
    return config.listeners_buffer[0..config.listeners_count];
}

pub fn addListener(config: *Config, listener: Listener) error{TooMany}!void {
    if (config.listeners_count == listeners_count_max) return error.TooMany;
    config.listeners_buffer[config.listeners_count] = listener;
    config.listeners_count += 1;
}

/// `--listen`: one listener, replacing any a config file gave.
pub fn setListener(config: *Config, address: Address) void {
    config.listeners_count = 0;
    config.addListener(.{ .address = address }) catch unreachable;
}

pub fn pools(config: *const Config) []const Pool {
    return config.pools_buffer[0..config.pools_count];
}

pub fn addPool(config: *Config, pool: Pool) error{TooMany}!*Pool {
    if (config.pools_count == pools_count_max) return error.TooMany;
    config.pools_buffer[config.pools_count] = pool;
    config.pools_count += 1;
    return &config.pools_buffer[config.pools_count - 1];
}

/// The pool quick-mode flags (`--backend`, `--strategy`, ...) fill: the only one, created
/// when there is none. Null when a config file has several (the CLI then refuses the flag).
pub fn quickPool(config: *Config) ?*Pool {
    if (config.pools_count == 0) return config.addPool(.{}) catch unreachable;
    if (config.pools_count > 1) return null;
    return &config.pools_buffer[0];
}

pub fn handlers(config: *const Config) []const Handler {
    return config.handlers_buffer[0..config.handlers_count];
}

/// Adds a handler, or gives an existing one of the same name its new file (a command line's
/// `--handler-file` over a config file's `handlers`): its index, which routes use, stays.
pub fn setHandler(config: *Config, handler: Handler) error{TooMany}!void {
    for (config.handlers_buffer[0..config.handlers_count]) |*known| {
        if (std.mem.eql(u8, known.name, handler.name)) {
            known.* = handler; // `--handler-file app=dev.js` over a compiled-in `app`, say.
            return;
        }
    }
    if (config.handlers_count == handlers_count_max) return error.TooMany;
    config.handlers_buffer[config.handlers_count] = handler;
    config.handlers_count += 1;
}

/// The index of the pool named `name`, if there is one (a handler's `Response.proxy`).
pub fn poolIndex(config: *const Config, name: []const u8) ?u16 {
    for (config.pools(), 0..) |*pool, i| {
        if (std.mem.eql(u8, pool.name, name)) return @intCast(i);
    }
    return null;
}

/// "the pools are a, b" (or "there are no pools"), for a message about a pool name that is not
/// one of them: `Response.proxy` to an unknown pool says which exist (the pool of `--backend`
/// flags is called `default`, and nothing else says so at run time).
pub fn poolNames(config: *const Config, buffer: *[pool_names_text_bytes_max]u8) []const u8 {
    if (config.pools_count == 0) return "there are no pools";
    var w: std.Io.Writer = .fixed(buffer);
    w.writeAll("the pools are ") catch unreachable; // Sized for every pool's longest name.
    for (config.pools(), 0..) |*pool, i| {
        w.print("{s}{s}", .{ if (i == 0) "" else ", ", pool.name }) catch unreachable; // As above.
    }
    return w.buffered();
}

pub const pool_names_text_bytes_max = "the pools are ".len + pools_count_max * (pool_name_bytes_max + 2);

/// The index of the handler named `name`, if there is one.
pub fn handlerIndex(config: *const Config, name: []const u8) ?u16 {
    for (config.handlers(), 0..) |*handler, i| {
        if (std.mem.eql(u8, handler.name, name)) return @intCast(i);
    }
    return null;
}

/// Whether any request can reach a pool: without one, a configuration needs no pool (every
/// request goes to `--handler`, or every route answers by itself or with a handler).
pub fn needsPool(config: *const Config) bool {
    if (config.handler.len > 0) return false;
    if (config.routes_count == 0) return true;
    for (config.routes()) |*route| if (route.action == .pool) return true;
    return false;
}

pub fn routes(config: *const Config) []const Route {
    return config.routes_buffer[0..config.routes_count];
}

/// A route's label in `/metrics` and `/status`: its name, else its position. A route's count
/// goes on across reloads by this label.
pub fn routeLabel(config: *const Config, index: usize) []const u8 {
    const route = &config.routes()[index];
    if (route.name.len > 0) return route.name;
    const positions = comptime blk: {
        @setEvalBranchQuota(100_000);
        var names: [routes_count_max][]const u8 = undefined;
        for (&names, 0..) |*name, i| name.* = std.fmt.comptimePrint("{d}", .{i});
        break :blk names;
    };
    return positions[index];
}

pub fn addRoute(config: *Config, route: Route) error{TooMany}!void {
    if (config.routes_count == routes_count_max) return error.TooMany;
    config.routes_buffer[config.routes_count] = route;
    config.routes_count += 1;
}

/// What may follow `Name: ` in a header field we write (RFC 9110 §5.5, no obs-text).
pub fn isFieldValue(text: []const u8) bool {
    for (text) |c| if ((c < ' ' and c != '\t') or c == 0x7f) return false;
    return true;
}

pub fn trustedProxies(config: *const Config) []const Cidr {
    return config.trusted_proxies_buffer[0..config.trusted_proxies_count];
}

pub fn resolvers(config: *const Config) []const Address {
    return config.resolvers_buffer[0..config.resolvers_count];
}

/// `IP` (port 53) or `IP:PORT`.
pub fn addResolver(config: *Config, text: []const u8) error{ TooMany, Invalid }!void {
    if (text.len == 0 or text[0] == ':') return error.Invalid; // `:53` is no server.
    const address = Address.parse(text) catch blk: {
        var buffer: [64]u8 = undefined;
        const bare_ip6 = std.mem.count(u8, text, ":") > 1 and text[0] != '[';
        const with_port = (if (bare_ip6)
            std.fmt.bufPrint(&buffer, "[{s}]:53", .{text})
        else
            std.fmt.bufPrint(&buffer, "{s}:53", .{text})) catch return error.Invalid;
        break :blk Address.parse(with_port) catch return error.Invalid;
    };
    if (address.getPort() == 0) return error.Invalid;
    if (config.resolvers_count == resolvers_count_max) return error.TooMany;
    config.resolvers_buffer[config.resolvers_count] = address;
    config.resolvers_count += 1;
}

/// Whether a pool has a backend by name (then the control thread resolves).
pub fn usesDns(config: *const Config) bool {
    for (config.pools()) |*pool| for (pool.backends()) |*backend| if (backend.by_name) return true;
    return false;
}

pub fn addTrustedProxy(config: *Config, cidr: Cidr) error{TooMany}!void {
    if (config.trusted_proxies_count == trusted_proxies_count_max) return error.TooMany;
    config.trusted_proxies_buffer[config.trusted_proxies_count] = cidr;
    config.trusted_proxies_count += 1;
}

pub const ValidateError = error{
    NoBackends,
    /// More than `backends_total_max` backends in all pools together.
    TooManyBackends,
    /// A value outside what its setting allows (settings.zig: bounds, zero, a name's bytes).
    OutOfRange,
    TargetBytesTooLarge,
    HashNameMissing,
    NameTooLong,
    DuplicateName,
    DuplicateListener,
    RoutesMissing,
    RouteListenerUnknown,
    RouteHostNotLowercase,
    RouteHostWildcard,
    RoutePoolUnknown,
    RouteStatus,
    RouteLocationMissing,
    RouteTextInvalid,
    RouteResponseTooLarge,
    RouteHandlerUnknown,
    HandlerUnknown,
    HandlerWithRoutes,
    UpstreamTlsInvalid,
    H2cWithTls,
    H2WithoutTls,
    H2cWithSendProxy,
};

/// A handler's name (a metrics label, like a pool's).
pub const handler_name_bytes_max = 64;

/// A route's name (a metrics label).
pub const route_name_bytes_max = 64;
/// The longest Host a request may carry (proxy/rewrite.zig `host_bytes_max`, asserted equal
/// there), so a longer route host could never match.
pub const rewrite_host_bytes_max = 300;

/// A header or cookie name `hash` reads.
pub const name_bytes_max = 255;
/// A pool's name (the admin listener sizes its responses from it).
pub const pool_name_bytes_max = 64;
/// The sticky cookie name: short enough that its Set-Cookie field fits the response headroom
/// (proxy/rewrite.zig `extra_field_bytes_max`).
pub const sticky_cookie_bytes_max = 64;
/// A health check's path and Host (the probe request is sized from them).
pub const health_text_bytes_max = 1024;

/// "a, b, c": an enum's tags, for messages that say what was expected (the CLI and config
/// files name the same choices the same way).
pub fn enumNames(comptime E: type) []const u8 {
    comptime var text: []const u8 = "";
    inline for (@typeInfo(E).@"enum".field_names, 0..) |name, i| {
        text = text ++ (if (i == 0) "" else ", ") ++ name;
    }
    return text;
}

/// Whether two values of a configuration type are the same setting for setting: strings by
/// content, fixed arrays with a `_count` only as far as the count.
pub fn deepEql(comptime T: type, a: *const T, b: *const T) bool {
    if (T == Address) return a.eql(b);
    switch (@typeInfo(T)) {
        .@"struct" => |info| {
            if (info.layout == .@"packed") return std.meta.eql(a.*, b.*);
            inline for (info.field_names) |name| {
                const F = @TypeOf(@field(a, name));
                if (comptime std.mem.eql(u8, name, "backends_list")) {
                    if (a.backends_count != b.backends_count) return false;
                    for (a.backends(), b.backends()) |*x, *y| {
                        if (!deepEql(Backend, x, y)) return false;
                    }
                } else if (comptime std.mem.endsWith(u8, name, "_buffer")) {
                    const count_name = name[0 .. name.len - "_buffer".len] ++ "_count";
                    const count = @field(a, count_name);
                    if (count != @field(b, count_name)) return false;
                    const Element = @typeInfo(F).array.child;
                    for (@field(a, name)[0..count], @field(b, name)[0..count]) |*x, *y| {
                        if (!deepEql(Element, x, y)) return false;
                    }
                } else if (!deepEql(F, &@field(a, name), &@field(b, name))) return false;
            }
            return true;
        },
        .pointer => return std.mem.eql(u8, a.*, b.*),
        .array, .optional, .@"union" => return std.meta.eql(a.*, b.*),
        else => return a.* == b.*,
    }
}

/// Printable ASCII without spaces: what may go into a request line or a field value we write.
pub fn isVisible(text: []const u8) bool {
    for (text) |c| if (c <= ' ' or c >= 0x7f) return false;
    return true;
}

pub fn validate(config: *const Config) ValidateError!void {
    if (settings.outOfRange(.global, config) != null) return error.OutOfRange;
    // The one relation between settings (settings.relations): target below header.
    if (settings.brokenRelation(.global, config) != null) return error.TargetBytesTooLarge;
    if (config.pools_count == 0 and config.needsPool()) return error.NoBackends;
    for (config.handlers(), 0..) |*handler, i| {
        if (handler.name.len == 0 or handler.name.len > handler_name_bytes_max) return error.NameTooLong;
        const given = @as(u8, @intFromBool(handler.path.len > 0)) + @intFromBool(handler.image.len > 0) +
            @intFromBool(handler.source.len > 0);
        if (!isVisible(handler.name) or given != 1) return error.OutOfRange;
        if (settings.outOfRange(.handler, handler) != null) return error.OutOfRange;
        for (config.handlers()[0..i]) |*other| {
            if (std.mem.eql(u8, other.name, handler.name)) return error.DuplicateName;
        }
    }
    if (config.handler.len > 0) {
        if (config.handlerIndex(config.handler) == null) return error.HandlerUnknown;
        if (config.routes_count > 0) return error.HandlerWithRoutes;
    }
    var backends_total: u32 = 0;
    for (config.pools()) |*pool| backends_total += pool.backends_count;
    if (backends_total > backends_total_max) return error.TooManyBackends;
    for (config.pools(), 0..) |*pool, i| {
        try pool.validate();
        for (config.pools()[0..i]) |*other| {
            if (std.mem.eql(u8, other.name, pool.name)) return error.DuplicateName;
        }
    }
    for (config.listeners(), 0..) |*listener, i| {
        for (config.listeners()[0..i]) |*other| {
            // Port 0 asks the kernel for a free port: two such listeners never collide.
            const any_port = listener.address.getPort() == 0;
            if (!any_port and other.address.eql(&listener.address)) return error.DuplicateListener;
            if (listener.name.len > 0 and std.mem.eql(u8, other.name, listener.name)) return error.DuplicateName;
        }
    }
    if (config.routes_count == 0 and config.pools_count > 1 and config.handler.len == 0) return error.RoutesMissing;
    for (config.routes()) |*route| try config.validateRoute(route);
}

fn validateRoute(config: *const Config, route: *const Route) ValidateError!void {
    if (settings.outOfRange(.route, route) != null) return error.OutOfRange;
    if (route.name.len > route_name_bytes_max) return error.NameTooLong;
    const listeners_all = (@as(u64, 1) << @intCast(config.listeners().len)) - 1;
    if (route.listeners & ~listeners_all != 0) return error.RouteListenerUnknown;
    if (route.host.len > rewrite_host_bytes_max) return error.NameTooLong;
    for (route.host) |c| if (std.ascii.isUpper(c)) return error.RouteHostNotLowercase;
    if (std.mem.indexOfScalar(u8, route.host, '*')) |star| {
        if (star != 0 or route.host.len < 3 or route.host[1] != '.') return error.RouteHostWildcard;
    }
    switch (route.action) {
        .pool => if (route.pool >= config.pools_count) return error.RoutePoolUnknown,
        .handler => if (route.handler >= config.handlers_count) return error.RouteHandlerUnknown,
        .respond => if (route.status != 0 and (route.status < 200 or route.status > 599)) {
            return error.RouteStatus;
        },
        .redirect => {
            // Exactly one of a location and a scheme.
            if ((route.location.len == 0) == (route.scheme.len == 0)) return error.RouteLocationMissing;
            if (route.scheme.len > 0 and !redirectSchemeValid(route.scheme)) return error.RouteTextInvalid;
            const status = route.responseStatus();
            if (status < 300 or status > 399) return error.RouteStatus;
        },
    }
    if (!isVisible(route.location) or !isFieldValue(route.content_type)) return error.RouteTextInvalid;
    if (route.rewrite_prefix.len > 0) {
        if (rewriteMistake(route) != null or settings.rewritePrefixMistake(route.rewrite_prefix) != null) return error.RouteTextInvalid;
    }
    if (route.localResponseBytes() + route.requestBytesCopied(config) > config.bufferBytes()) return error.RouteResponseTooLarge;
}

/// Why a route cannot rewrite its prefix as written, or null: it needs a pool to forward to
/// and a path prefix to replace.
pub fn rewriteMistake(route: *const Route) ?[]const u8 {
    if (route.action != .pool) return "a route rewrites its path (rewrite_prefix, strip_prefix) only when it forwards to a pool";
    if (route.path_prefix.len == 0 or std.mem.eql(u8, route.path_prefix, "*")) {
        return "a route rewrites its path prefix (rewrite_prefix, strip_prefix) only with a path_prefix to replace";
    }
    return null;
}

/// The schemes a redirect to the request's own host may name.
pub fn redirectSchemeValid(scheme: []const u8) bool {
    return std.mem.eql(u8, scheme, "https") or std.mem.eql(u8, scheme, "http");
}

/// One buffer holds a whole head, request or response, plus the room a rewrite needs; bodies
/// stream through it.
pub fn bufferBytes(config: *const Config) u32 {
    const head_max = @max(config.header_bytes_max, config.response_header_bytes_max);
    const bytes = std.mem.alignForward(u32, head_max + rewrite_headroom_bytes, 4096);
    assert(bytes >= head_max + rewrite_headroom_bytes);
    return bytes;
}

/// Field slots per session: its request and response parsers share one array.
pub fn headerFieldsPerSession(config: *const Config) u16 {
    return @max(config.headers_count_max, config.response_headers_count_max);
}

/// The request body limit of a route (null: no route matched), in bytes; 0: no limit.
pub fn requestBodyBytesMax(config: *const Config, route: ?*const Route) u64 {
    if (route) |r| if (r.request_body_bytes_max) |max| return max;
    return config.request_body_bytes_max;
}

/// The idle timeout of a tunnel opened on a route (null: no routes).
pub fn tunnelIdleTimeoutNs(config: *const Config, route: ?*const Route) u64 {
    if (route) |r| if (r.tunnel_idle_timeout_ns != 0) return r.tunnel_idle_timeout_ns;
    return config.tunnel_idle_timeout_ns;
}

/// The compression settings for a request that took `route` (null: no route), or null when
/// it is off for it.
pub fn compressionFor(config: *const Config, route: ?*const Route) ?*const Compression {
    const on = if (route) |r| r.compression orelse config.compression.enabled else config.compression.enabled;
    return if (on) &config.compression else null;
}

/// Whether any pool speaks TLS to its backends: the workers then size their TLS memory and
/// buffers for it at start-up (a reload cannot add it to a process started without).
pub fn usesUpstreamTls(config: *const Config) bool {
    for (config.pools()) |*pool| if (pool.tls.enabled) return true;
    return false;
}

/// Is this peer allowed to tell us who the client is (X-Forwarded-For kept and appended to)?
pub fn isTrustedProxy(config: *const Config, peer: *const Address) bool {
    for (config.trustedProxies()) |cidr| {
        if (cidr.contains(peer)) return true;
    }
    return false;
}

test "config: deepEql compares strings and backend lists by content" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var a: Config = .{};
    var b: Config = .{};
    const pa = a.quickPool().?;
    const pb = b.quickPool().?;
    try pa.addBackend(arena.allocator(), .{ .address = try Address.parse("10.0.0.1:80") });
    try pb.addBackend(arena.allocator(), .{ .address = try Address.parse("10.0.0.1:80") });
    var path_buffer = "/healthz".*;
    pa.health.path = "/healthz";
    pb.health.path = &path_buffer;
    try std.testing.expect(deepEql(Config, &a, &b));
    const changed = try arena.allocator().dupe(Backend, pb.backends());
    changed[0].weight = 2;
    try pb.setBackends(changed);
    try std.testing.expect(!deepEql(Pool, pa, pb));
}

test "config: a backend's host is an address, localhost or a DNS name" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const ip = try parseBackendAddress(arena, "10.0.0.1:80");
    try std.testing.expect(!ip.by_name);
    try std.testing.expectEqual(@as(u16, 80), ip.address.getPort());
    const local = try parseBackendAddress(arena, "localhost:9000");
    try std.testing.expectEqualStrings("localhost", local.host_name);
    try std.testing.expect(!local.by_name);
    for ([_][]const u8{ "app.internal", "app.default.svc.cluster.local.", "_http._tcp.x", "a-b.c1", "x" }) |host| {
        var buffer: [300]u8 = undefined;
        const text = try std.fmt.bufPrint(&buffer, "{s}:8080", .{host});
        const named = try parseBackendAddress(arena, text);
        try std.testing.expect(named.by_name);
        try std.testing.expectEqualStrings(host, named.host_name);
        try std.testing.expectEqual(@as(u16, 8080), named.port);
        try std.testing.expectEqual(@as(u16, 0), named.address.any.family);
    }
    const long_label: [64]u8 = @splat('a');
    var long_name: [254]u8 = @splat('a'); // Labels of 9 and dots: 254 bytes.
    for (1..26) |i| long_name[i * 10 - 1] = '.';
    var buffers: [2][300]u8 = undefined;
    const long_label_text = try std.fmt.bufPrint(&buffers[0], "{s}:80", .{&long_label});
    const long_name_text = try std.fmt.bufPrint(&buffers[1], "{s}:80", .{&long_name});
    try std.testing.expect(isDnsName(long_name[0..253]));
    for ([_][]const u8{ "10.0.0.300:80", "1.2.3:80", "a..b:80", ".a:80", "a b:80", "a!:80", long_label_text, long_name_text, "é.test:80" }) |text| {
        try std.testing.expectError(error.NameInvalid, parseBackendAddress(arena, text));
    }
    try std.testing.expectError(error.MissingPort, parseBackendAddress(arena, "app.internal"));
    for ([_][]const u8{ "srv+app.internal", "_http._tcp.app.internal", "srv+_grpc._tcp.x." }) |text| {
        const srv = try parseBackendAddress(arena, text);
        try std.testing.expect(srv.by_name);
        try std.testing.expectEqual(@as(u16, 0), srv.port);
        try std.testing.expect(!std.mem.startsWith(u8, srv.host_name, "srv+"));
    }
    try std.testing.expectError(error.NameInvalid, parseBackendAddress(arena, "srv+"));
    try std.testing.expectError(error.NameInvalid, parseBackendAddress(arena, "srv+a b"));
    try std.testing.expectError(error.PortOutOfRange, parseBackendAddress(arena, "app.internal:70000"));
    try std.testing.expectError(error.InvalidPort, parseBackendAddress(arena, "app.internal:"));
}

test "config: a backend may be a Unix socket, and only a backend; each mistake says so" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    const unix = try parseBackendAddress(arena, "unix:/run/app.sock");
    try std.testing.expect(unix.address.isUnix() and !unix.by_name);
    try std.testing.expectEqualStrings("/run/app.sock", unix.address.unixPath());
    try std.testing.expectEqualStrings("", unix.host_name);
    // `unix:` is never read as HOST:PORT, nor as a DNS name.
    try std.testing.expectError(error.UnixPathInvalid, parseBackendAddress(arena, "unix:80"));
    try std.testing.expectError(error.UnixPathInvalid, parseBackendAddress(arena, "unix:run/app.sock"));

    var buffer: [512]u8 = undefined;
    const bad_path = addressMistake(&buffer, "unix:run/app.sock", error.UnixPathInvalid, backend_host_rule);
    try std.testing.expect(std.mem.endsWith(u8, bad_path, unix_rule));
    // A listener's text goes to `Address.parse`, which reads "/run/app.sock" as the port.
    try std.testing.expectError(error.InvalidPort, Address.parse("unix:/run/app.sock"));
    const listener = addressMistake(&buffer, "unix:/run/app.sock", error.InvalidPort, address_host_rule);
    try std.testing.expect(std.mem.endsWith(u8, listener, "Unix sockets are for backends only"));
}

test "config: resolvers are IP or IP:PORT, three at most" {
    var config: Config = .{};
    try config.addResolver("10.0.0.2");
    try config.addResolver("[::1]:5353");
    try config.addResolver("fd00::53");
    try std.testing.expectEqual(@as(u16, 53), config.resolvers()[0].getPort());
    try std.testing.expectEqual(@as(u16, 5353), config.resolvers()[1].getPort());
    try std.testing.expectEqual(@as(u16, 53), config.resolvers()[2].getPort());
    try std.testing.expectError(error.TooMany, config.addResolver("10.0.0.3"));
    var other: Config = .{};
    for ([_][]const u8{ "", ":53", "dns.google", "10.0.0.2:", "10.0.0.2:99999", "10.0.0.2:0" }) |text| {
        try std.testing.expectError(error.Invalid, other.addResolver(text));
    }
}

test "config: defaults validate once a backend is given" {
    var config: Config = .{};
    try std.testing.expectError(error.NoBackends, config.validate());
    const backend: Backend = .{ .address = try Address.parse("127.0.0.1:9000") };
    try config.quickPool().?.setBackends((&backend)[0..1]);
    try config.validate();
    try std.testing.expect(config.bufferBytes() >= config.header_bytes_max + 1024);
    try std.testing.expect(config.bufferBytes() % 4096 == 0);
}
