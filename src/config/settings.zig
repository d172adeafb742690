//! Every setting, written once: its command-line flag, its config-file key, the kind of value
//! it takes and its bounds, its default, its `--help` text and whether a reload may change it.
//! The CLI parser (cli.zig), the file mapper (file.zig), `--help` and `sluice settings`
//! (help.zig), the reload refusal (runtime/generations.zig), `Config.validate` and `Config`'s
//! own field defaults all read this table, so a setting cannot mean one thing on the command
//! line and another in a file (a backend's `max-conns` once had a minimum of 1 on the command
//! line and of 0 in a file).
//!
//! Decision: a default is written here as text in command-line syntax (`"16KiB"`, `"10s"`),
//! and `Config`'s field default is that text parsed at compile time by the parser the flag
//! itself uses. What `--help`, `sluice settings` and the docs show is then, by construction,
//! what the program does; a unit test checks every Config field that is a setting has exactly
//! one row, and that its default is the row's.
//!
//! The table is comptime data (a row may name an enum type or a check function): readers walk
//! it with `inline for`. Settings with structure (listeners, pools, routes, backends, the hash
//! key, the admin section) have a row for their name, default and help, and a small parser of
//! their own in cli.zig and file.zig.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("Config.zig");
const HeaderRules = @import("HeaderRules.zig");
const RateLimit = @import("RateLimit.zig");
const units = @import("units.zig");
const chars = @import("../http/chars.zig");

pub const Setting = struct {
    /// The command-line flag, without its `--`. For a `.backend` row: the option's name in
    /// `--backend ADDR,NAME=N`. Null: only in a config file.
    flag: ?[]const u8 = null,
    /// What `--help` calls the flag's value; empty: from the value's kind (`N`, `SIZE`, `DUR`,
    /// an enumeration's tags).
    arg: []const u8 = "",
    /// The key in a config file, dotted from the object of its scope: `limits.header_bytes_max`
    /// at the top level, `timeouts.connect` in a pool. Null: only a flag.
    key: ?[]const u8 = null,
    scope: Scope,
    /// The fields of the scope's struct it sets, dotted (`health.interval_ns`). One for every
    /// kind of value but `.structure`, which may set several or none.
    fields: []const []const u8 = &.{},
    value: Value,
    /// The value when none is given, as it is written on the command line. Null: the setting is
    /// off or unset (its field is zero, empty or null), as `unset` says.
    default: ?[]const u8 = null,
    /// What no value means, shown as the default when `default` is null.
    unset: []const u8 = "none",
    /// What 0 means when it is allowed and is not simply a number (a mistake's message says it).
    zero: ?[]const u8 = null,
    /// Whether a reload may change it. Only `.global` settings can need a restart (a pool is
    /// rebuilt whole when any of its settings changes, and a handler compiled again).
    reload: Reload = .applies,
    /// Where `--help` lists it.
    section: Section = .options,
    /// `--help`'s text, lines separated by `\n`. `{default}`, `{min}` and `{max}` stand for the
    /// row's own; `{NAME.default}` (and `.min`, `.max`) for those of the backend option NAME.
    help: []const u8 = "",

    /// The one field a row of a simple kind sets.
    pub fn field(comptime setting: Setting) []const u8 {
        comptime assert(setting.fields.len == 1);
        return setting.fields[0];
    }

    /// The default as `--help` and the docs show it.
    pub fn defaultText(comptime setting: Setting) []const u8 {
        return setting.default orelse setting.unset;
    }

    /// `--help`'s name for the flag's value.
    pub fn argName(comptime setting: Setting) []const u8 {
        if (setting.arg.len > 0) return setting.arg;
        return switch (setting.value) {
            .count, .status_range => "N",
            .size => "SIZE",
            .duration => "DUR",
            .enumeration => |E| comptime enumChoices(E, "|"),
            .switch_, .boolean => "",
            else => unreachable, // Each row of the other kinds names its own.
        };
    }
};

/// The longest default `--help` shows in a flag's text (a line of it: help.zig's 88 columns
/// less the 36 before the text).
const help_default_bytes_max = 52;

pub const Scope = enum {
    /// Read by main, not part of Config: `--config`, `--pid-file`, `--trace-init`.
    command_line,
    /// A field of Config: a key at the top level of a file.
    global,
    /// A field of `Config.Pool`: a key of a pool in a file; quick-mode flags fill the one pool.
    pool,
    /// A field of `Config.Backend`: an option of `--backend ADDR,...`, a key of a backend object.
    backend,
    /// A field of `Config.Route`: a key of a route in a file, over the global setting.
    route,
    /// A field of `Config.Handler`: a key of a handler object in a file (`.handlers = .{ .app =
    /// .{ .file = "app.js", .memory = "4MiB" } }`); a handler given as a file name, on the
    /// command line or compiled in has the defaults.
    handler,
};

pub const Reload = enum { applies, restart };

pub const Section = enum { options, balancing, health, retries };

pub const Bounds = struct { min: u64, max: u64 };

pub const Value = union(enum) {
    /// A whole number within bounds.
    count: Bounds,
    /// Bytes within bounds: a number, or one with KiB, MiB or GiB.
    size: Bounds,
    /// Nanoseconds, more than zero: `500ms`, `10s`, `2m`, `1h`. A bare number is milliseconds
    /// on the command line and a mistake in a file (units.zig).
    duration,
    /// One of the enum's tags: `auto` on the command line, `.auto` in ZON, `"auto"` in JSON.
    enumeration: type,
    /// A string, with its own rule; empty means unset.
    text: Text,
    /// A set of upstream failure kinds: `connect,reset` on the command line, a list in a file.
    failure_kinds,
    /// Statuses `LOW-HIGH` (or one status) within bounds: `status_min` and `status_max`.
    status_range: Bounds,
    /// A setting with structure, with its own small parser in cli.zig and file.zig.
    structure: Structure,
    /// Command line only: a flag that takes no value.
    switch_,
    /// On or off: a field of Config; on the command line a flag that takes no value and
    /// turns it on, in a file `true` or `false`. Off unless the row says otherwise.
    boolean,
    /// Command line only: a file path.
    path,
};

pub const Text = struct {
    /// What a file's value should have been: "expected a string: {what}".
    what: []const u8,
    /// Why the text is refused, if it is.
    check: *const fn ([]const u8) ?[]const u8,
};

pub const Structure = enum {
    /// One address, replacing the listeners (`listen`, `--listen`).
    listen,
    /// A list of addresses or named listeners (a file's `listeners`).
    listeners,
    trusted_proxies,
    /// DNS servers for backends by name: `--resolver ADDR`, repeatable; in a file a list.
    resolvers,
    pools,
    routes,
    /// `--admin ADDR`; in a file the section's presence turns the listener on.
    admin,
    backends,
    /// A backend's address (positional on the command line: `--backend ADDR,...`).
    backend_address,
    /// `ip|path|header:NAME|cookie:NAME`; in a file `.{ .on = ..., .name = ... }`.
    hash,
    /// `--handler-file NAME=FILE`, repeatable; in a file `.{ .NAME = "FILE" }`.
    handlers,
    /// `--tls-cert FILE`, repeatable, each followed by its `--tls-key FILE`; in a file a
    /// listener's `.tls` (config/file.zig).
    tls_cert,
    tls_key,
    /// TLS to a pool's backends: `--backend-tls on|ca=FILE,...`; in a file `.{ .verify = true,
    /// .ca = "FILE", ... }`, whose presence turns it on.
    upstream_tls,
    /// Header rules (config/HeaderRules.zig): `.{ .set = .{ .Name = "value" }, .add = ...,
    /// .remove = .{"Name"} }` at the top level and in a route.
    request_headers,
    response_headers,
    /// `--request-header 'NAME: VALUE'`, `--response-header 'NAME: VALUE'`,
    /// `--remove-response-header NAME`: each repeatable, over the top level's rules.
    cli_request_header,
    cli_response_header,
    cli_remove_response_header,
    /// A route's `strip_prefix = true`: `rewrite_prefix = "/"`.
    strip_prefix,
    /// Address blocks (config/Cidr.zig) a client must be in (`allow`) or must not be in
    /// (`deny`): `--allow CIDR`, repeatable; in a file a list of strings. Kept as the checked
    /// text, space-separated (`Config.Access`); policy/AccessPolicy.zig parses it per generation.
    allow,
    deny,
};

const ns_per_s = std.time.ns_per_s;
const size_max = std.math.maxInt(u64);

/// In the order `--help` lists them within a section and `sluice check` lists the keys of an
/// object: a file's top-level keys come first in the order they have always been listed.
pub const table = [_]Setting{
    // --- the command line and the top level of a file ---------------------------------------
    .{
        .flag = "config",
        .arg = "FILE",
        .scope = .command_line,
        .value = .path,
        .help = "a config file (docs/CONFIG.md)",
    },
    .{
        .flag = "listen",
        .arg = "ADDR",
        .key = "listen",
        .scope = .global,
        .value = .{ .structure = .listen },
        .default = ":8080",
        .help = "where clients connect (default {default})",
    },
    .{
        .key = "listeners",
        .scope = .global,
        .fields = &.{ "listeners_buffer", "listeners_count" },
        .value = .{ .structure = .listeners },
        .unset = "one, from listen",
    },
    .{
        .flag = "tls-cert",
        .arg = "FILE",
        .scope = .global,
        .fields = &.{"cli_tls"},
        .value = .{ .structure = .tls_cert },
        .unset = "off",
        .help = "serve HTTPS on --listen with this PEM chain (the\n" ++
            "server's certificate first), then its --tls-key;\n" ++
            "repeat the pair for more certificates, chosen by\n" ++
            "SNI (the first is the default). With --config and\n" ++
            "no --listen: every listener the file leaves plain",
    },
    .{
        .flag = "tls-key",
        .arg = "FILE",
        .scope = .global,
        .fields = &.{},
        .value = .{ .structure = .tls_key },
        .unset = "off",
        .help = "the private key (PEM, not encrypted) of the\n" ++
            "--tls-cert before it",
    },
    .{
        .flag = "workers",
        .key = "workers",
        .scope = .global,
        .fields = &.{"workers_count"},
        .value = .{ .count = .{ .min = 1, .max = Config.workers_count_max } },
        .unset = "one per CPU",
        .reload = .restart,
        .help = "worker threads (default: {default})",
    },
    .{
        .flag = "io",
        .key = "io",
        .scope = .global,
        .fields = &.{"io"},
        .value = .{ .enumeration = Config.IoMode },
        .default = "auto",
        .reload = .restart,
        .help = "event loop backend (default {default}: io_uring,\nfalling back to epoll when unavailable)",
    },
    .{
        .flag = "http2",
        .key = "http2",
        .scope = .global,
        .fields = &.{"http2"},
        .value = .{ .enumeration = Config.Http2 },
        .default = "tls",
        .help = "where clients may speak HTTP/2 (default {default}:\n" ++
            "HTTPS listeners, by ALPN; on: plain listeners too,\n" ++
            "with prior knowledge; a listener's .http2 overrides)",
    },
    .{
        .flag = "proxy-protocol",
        .key = "proxy_protocol",
        .scope = .global,
        .fields = &.{"proxy_protocol"},
        .value = .boolean,
        .unset = "off",
        .help = "clients come through a load balancer that sends\n" ++
            "the PROXY protocol (v1 or v2): its address is the\n" ++
            "client's; a connection without one is refused (a\n" ++
            "listener's .proxy_protocol overrides)",
    },
    .{
        .flag = "splice-min",
        .key = "splice_min",
        .scope = .global,
        .fields = &.{"splice_min_bytes"},
        .value = .{ .size = .{ .min = 0, .max = size_max } },
        .default = "64KiB",
        .reload = .restart,
        .help = "splice(2) a response body once this much is left\n(default {default}; 0: never)",
    },
    .{
        .flag = "max-connections",
        .key = "limits.max_connections",
        .scope = .global,
        .fields = &.{"connections_max"},
        .value = .{ .count = .{ .min = 1, .max = 1 << 20 } },
        .default = "4096",
        .reload = .restart,
        .help = "client connections, all workers (default {default})",
    },
    .{
        .flag = "header-bytes-max",
        .key = "limits.header_bytes_max",
        .scope = .global,
        .fields = &.{"header_bytes_max"},
        .value = .{ .size = .{ .min = 1024, .max = 1024 * 1024 } },
        .default = "16KiB",
        .reload = .restart,
        .help = "request head size limit (default {default}) -> 431",
    },
    .{
        .flag = "headers-count-max",
        .key = "limits.headers_count_max",
        .scope = .global,
        .fields = &.{"headers_count_max"},
        .value = .{ .count = .{ .min = 8, .max = 1024 } },
        .default = "100",
        .reload = .restart,
        .help = "request header field limit (default {default}) -> 431",
    },
    .{
        .flag = "target-bytes-max",
        .key = "limits.target_bytes_max",
        .scope = .global,
        .fields = &.{"target_bytes_max"},
        .value = .{ .size = .{ .min = 64, .max = 1024 * 1024 } },
        .default = "8KiB",
        .reload = .restart,
        .help = "request-target limit (default {default}) -> 414",
    },
    .{
        .flag = "request-body-max",
        .key = "limits.request_body_max",
        .scope = .global,
        .fields = &.{"request_body_bytes_max"},
        .value = .{ .size = .{ .min = 0, .max = size_max } },
        .default = "0",
        .zero = "no limit",
        .help = "request body limit (default {default}: none) -> 413",
    },
    .{
        .flag = "response-header-bytes-max",
        .key = "limits.response_header_bytes_max",
        .scope = .global,
        .fields = &.{"response_header_bytes_max"},
        .value = .{ .size = .{ .min = 1024, .max = 1024 * 1024 } },
        .default = "32KiB",
        .reload = .restart,
        .help = "response head size limit (default {default}) -> 502",
    },
    .{
        .flag = "response-headers-count-max",
        .key = "limits.response_headers_count_max",
        .scope = .global,
        .fields = &.{"response_headers_count_max"},
        .value = .{ .count = .{ .min = 8, .max = 1024 } },
        .default = "256",
        .reload = .restart,
        .help = "response header field limit (default {default}) -> 502",
    },
    .{
        .flag = "header-underscores",
        .key = "limits.header_underscores",
        .scope = .global,
        .fields = &.{"header_underscores"},
        .value = .{ .enumeration = Config.HeaderUnderscores },
        .default = "drop",
        .help = "request fields named with `_` (default {default})",
    },
    .{
        .flag = "http2-max-streams",
        .key = "limits.http2_max_streams",
        .scope = .global,
        .fields = &.{"http2_streams_max"},
        .value = .{ .count = .{ .min = 1, .max = 1000 } },
        .default = "100",
        .reload = .restart,
        .help = "streams an HTTP/2 client may have open at once\non one connection (default {default})",
    },
    .{
        .flag = "client-header-timeout",
        .key = "timeouts.client_header",
        .scope = .global,
        .fields = &.{"client_header_timeout_ns"},
        .value = .duration,
        .default = "10s",
        .reload = .restart,
        .help = "time to receive a request head (default {default}) -> 408",
    },
    .{
        .flag = "client-idle-timeout",
        .key = "timeouts.client_idle",
        .scope = .global,
        .fields = &.{"client_idle_timeout_ns"},
        .value = .duration,
        .default = "60s",
        .reload = .restart,
        .help = "keep-alive idle and body gaps (default {default})",
    },
    .{
        .flag = "drain-timeout",
        .key = "timeouts.drain",
        .scope = .global,
        .fields = &.{"drain_timeout_ns"},
        .value = .duration,
        .default = "10s",
        .reload = .restart,
        .help = "SIGTERM/SIGINT drain deadline (default {default})",
    },
    .{
        .flag = "tunnel-idle-timeout",
        .key = "timeouts.tunnel_idle",
        .scope = .global,
        .fields = &.{"tunnel_idle_timeout_ns"},
        .value = .duration,
        .default = "1h",
        .help = "upgraded (WebSocket) connections (default {default})",
    },
    .{
        .flag = "resolver",
        .arg = "ADDR",
        .key = "resolvers",
        .scope = .global,
        .fields = &.{ "resolvers_buffer", "resolvers_count" },
        .value = .{ .structure = .resolvers },
        .reload = .restart,
        .help = "DNS server for backends by name, IP or IP:PORT\n" ++
            "(repeatable, at most 3; default {default})",
        .unset = "/etc/resolv.conf's",
    },
    .{
        .flag = "dns-ttl-min",
        .key = "dns.ttl_min",
        .scope = .global,
        .fields = &.{"dns_ttl_min_ns"},
        .value = .duration,
        .default = "1s",
        .help = "a backend name's answer is kept at least this\nlong, whatever its TTL (default {default})",
    },
    .{
        .flag = "dns-ttl-max",
        .key = "dns.ttl_max",
        .scope = .global,
        .fields = &.{"dns_ttl_max_ns"},
        .value = .duration,
        .default = "5m",
        .help = "and at most this long: a change is seen within it\n(default {default})",
    },
    .{
        .flag = "trusted-proxy",
        .arg = "CIDR",
        .key = "trusted_proxies",
        .scope = .global,
        .fields = &.{ "trusted_proxies_buffer", "trusted_proxies_count" },
        .value = .{ .structure = .trusted_proxies },
        .reload = .restart,
        .help = "peers whose X-Forwarded-For is kept and appended\n" ++
            "to (repeatable; default {default}: always replaced)",
    },
    .{
        .flag = "allow",
        .arg = "CIDR",
        .key = "allow",
        .scope = .global,
        .fields = &.{"access.allow"},
        .value = .{ .structure = .allow },
        .unset = "everyone",
        .help = "only clients in these blocks are served, others\n" ++
            "get 403 (repeatable; a listener's and a route's\n" ++
            "lists apply too; default {default})",
    },
    .{
        .flag = "deny",
        .arg = "CIDR",
        .key = "deny",
        .scope = .global,
        .fields = &.{"access.deny"},
        .value = .{ .structure = .deny },
        .unset = "no one",
        .help = "clients in these blocks get 403, whatever the\n" ++
            "allow lists say (repeatable; default {default})",
    },
    .{
        .flag = "rate-limit",
        .arg = "RATE[/s|/m][,burst=N][,key=ip|route|header:NAME]",
        .key = "rate_limit",
        .scope = .global,
        .fields = &.{"rate_limit"},
        .value = .{ .text = .{ .what = "a rate limit such as \"100/s,burst=50\"", .check = rateLimitMistake } },
        .unset = "off",
        .help = "token buckets per client address (IPv6: its /64),\n" ++
            "header value or route; over the limit: 429 with\n" ++
            "Retry-After. Each worker takes its share of the\n" ++
            "rate and burst (default {default})",
    },
    .{
        .flag = "trace-init",
        .scope = .command_line,
        .value = .switch_,
        .unset = "off",
        .help = "print each start-up phase's cost in ns",
    },
    .{
        .flag = "pid-file",
        .arg = "PATH",
        .scope = .command_line,
        .value = .path,
        .help = "write the pid here once listening (for reload)",
    },
    .{
        .key = "pools",
        .scope = .global,
        .fields = &.{ "pools_buffer", "pools_count" },
        .value = .{ .structure = .pools },
        .unset = "required",
    },
    .{
        .key = "routes",
        .scope = .global,
        .fields = &.{ "routes_buffer", "routes_count" },
        .value = .{ .structure = .routes },
        .unset = "every request to the one pool",
    },
    .{
        .flag = "handler-file",
        .arg = "NAME=FILE",
        .key = "handlers",
        .scope = .global,
        .fields = &.{ "handlers_buffer", "handlers_count" },
        .value = .{ .structure = .handlers },
        .unset = "none",
        .help = "compile the JavaScript handler NAME from FILE at\n" ++
            "start-up and on reload (repeatable; docs/JS.md)",
    },
    .{
        .flag = "handler",
        .arg = "NAME",
        .key = "handler",
        .scope = .global,
        .fields = &.{"handler"},
        .value = .{ .text = .{ .what = "a handler name", .check = handlerNameMistake } },
        .unset = "none",
        .help = "send every request to handler NAME (as --backend\ndoes to a pool)",
    },
    // --- compression (policy/compression.zig, proxy/Compressor.zig) ----------------------------
    .{
        .flag = "compress",
        .key = "compression.enabled",
        .scope = .global,
        .fields = &.{"compression.enabled"},
        .value = .boolean,
        .unset = "off",
        .help = "gzip responses whose type is listed for clients\n" ++
            "that accept it (a route's .compression overrides)",
    },
    .{
        .flag = "compress-level",
        .key = "compression.level",
        .scope = .global,
        .fields = &.{"compression.level"},
        .value = .{ .count = .{ .min = 1, .max = 9 } },
        .default = "1",
        .help = "gzip level, 1 fastest to 9 smallest (default {default})",
    },
    .{
        .flag = "compress-types",
        .arg = "LIST",
        .key = "compression.types",
        .scope = .global,
        .fields = &.{"compression.types"},
        .value = .{ .text = .{ .what = "media types such as \"text/html application/json\"", .check = Config.Compression.typesMistake } },
        .help = "media types to gzip, space-separated in one\nargument, `type/*` allowed (default: text, CSS,\nJavaScript, JSON, XML and SVG)",
        .default = "text/html text/plain text/css text/javascript application/javascript application/json application/xml image/svg+xml",
    },
    .{
        .flag = "compress-min",
        .key = "compression.min_length",
        .scope = .global,
        .fields = &.{"compression.min_bytes"},
        .value = .{ .size = .{ .min = 0, .max = size_max } },
        .default = "256",
        .help = "a Content-Length under this passes as it is\n(default {default})",
    },
    .{
        .flag = "compress-slots",
        .key = "compression.slots",
        .scope = .global,
        .fields = &.{"compression.slots"},
        .value = .{ .count = .{ .min = 1, .max = 4096 } },
        .default = "32",
        .reload = .restart,
        .help = "responses each worker gzips at once; past that\nthey pass as they are (default {default})",
    },
    // --- edge policy: header rules (config/HeaderRules.zig) ---------------------------------
    .{
        .key = "request_headers",
        .scope = .global,
        .fields = &.{"header_rules.request"},
        .value = .{ .structure = .request_headers },
        .unset = "none",
    },
    .{
        .key = "response_headers",
        .scope = .global,
        .fields = &.{"header_rules.response"},
        .value = .{ .structure = .response_headers },
        .unset = "none",
    },
    .{
        .flag = "request-header",
        .arg = "'NAME: VALUE'",
        .scope = .global,
        .value = .{ .structure = .cli_request_header },
        .unset = "none",
        .help = "set this field on every request before the pool\n" ++
            "sees it (repeatable; $client_ip, $request_id,\n" ++
            "$scheme and $host stand for the request's)",
    },
    .{
        .flag = "response-header",
        .arg = "'NAME: VALUE'",
        .scope = .global,
        .value = .{ .structure = .cli_response_header },
        .unset = "none",
        .help = "set this field on every response (repeatable)",
    },
    .{
        .flag = "remove-response-header",
        .arg = "NAME",
        .scope = .global,
        .value = .{ .structure = .cli_remove_response_header },
        .unset = "none",
        .help = "remove this field from every response (repeatable)",
    },
    .{
        .flag = "request-id",
        .arg = "NAME",
        .key = "request_id",
        .scope = .global,
        .fields = &.{"request_id_header"},
        .value = .{ .text = .{ .what = "a field name such as \"X-Request-Id\"", .check = requestIdHeaderMistake } },
        .unset = "off",
        .help = "give each request an id in field NAME (kept when\n" ++
            "the client sent a plain one), forwarded and logged",
    },
    .{
        .flag = "admin",
        .arg = "ADDR",
        .key = "admin",
        .scope = .global,
        .fields = &.{"admin"},
        .value = .{ .structure = .admin },
        .unset = "off",
        .reload = .restart,
        .help = "admin listener: /metrics, /status, /healthz,\n" ++
            "POST /reload (default {default}; e.g. 127.0.0.1:9901)",
    },
    .{
        .flag = "access-log",
        .arg = "stdout|PATH",
        .key = "access_log.target",
        .scope = .global,
        .fields = &.{"access_log.target"},
        .value = .{ .text = .{ .what = "\"stdout\" or a file path", .check = anyText } },
        .unset = "off",
        .reload = .restart,
        .help = "a line per request (default {default}); SIGUSR1 reopens",
    },
    .{
        .flag = "access-log-format",
        .key = "access_log.format",
        .scope = .global,
        .fields = &.{"access_log.format"},
        .value = .{ .enumeration = Config.AccessLogFormat },
        .default = "combined",
        .reload = .restart,
        .help = "(default {default})",
    },
    .{
        .flag = "log-level",
        .key = "log_level",
        .scope = .global,
        .fields = &.{"log_level"},
        .value = .{ .enumeration = Config.LogLevel },
        .default = "info",
        .help = "the least severe log lines shown (default {default})",
    },

    // --- a pool: the quick-mode flags fill the one pool -------------------------------------
    .{
        .flag = "backend",
        .key = "backends",
        .scope = .pool,
        .fields = &.{ "backends_list", "backends_count" },
        .value = .{ .structure = .backends },
        .unset = "required",
        .section = .balancing,
        .help = "weight {weight.min}..{weight.max} (default {weight.default}; 0 drains the backend);\n" ++
            "max-conns caps its open connections, max-pending\n" ++
            "its requests in flight (default {max-conns.default}: no caps)",
    },
    .{
        .flag = "strategy",
        .arg = "NAME",
        .key = "strategy",
        .scope = .pool,
        .fields = &.{"strategy"},
        .value = .{ .enumeration = Config.Strategy },
        .default = "round_robin",
        .section = .balancing,
        .help = "{default} (default), weighted, least_conn,\nrandom, hash, sticky",
    },
    .{
        .flag = "hash-key",
        .arg = "ip|path|header:NAME|cookie:NAME",
        .key = "hash",
        .scope = .pool,
        .fields = &.{ "hash_on", "hash_name" },
        .value = .{ .structure = .hash },
        .default = "ip",
        .section = .balancing,
        .help = "what `hash` hashes (default {default})",
    },
    .{
        .flag = "sticky-cookie",
        .arg = "NAME",
        .key = "sticky_cookie",
        .scope = .pool,
        .fields = &.{"sticky_cookie"},
        .value = .{ .text = .{ .what = "a cookie name", .check = cookieNameMistake } },
        .default = "sluice_backend",
        .section = .balancing,
        .help = "the cookie `sticky` sets (default {default})",
    },
    .{
        .flag = "health-path",
        .arg = "PATH",
        .key = "health.path",
        .scope = .pool,
        .fields = &.{"health.path"},
        .value = .{ .text = .{ .what = "a path such as \"/healthz\"", .check = healthPathMistake } },
        .unset = "off",
        .section = .health,
        .help = "probe every backend with this path (default {default}:\n" ++
            "no active checks; backends start healthy)",
    },
    .{
        .flag = "health-method",
        .key = "health.method",
        .scope = .pool,
        .fields = &.{"health.method"},
        .value = .{ .enumeration = Config.HealthMethod },
        .default = "GET",
        .section = .health,
        .help = "(default {default})",
    },
    .{
        .flag = "health-host",
        .arg = "HOST",
        .key = "health.host",
        .scope = .pool,
        .fields = &.{"health.host"},
        .value = .{ .text = .{ .what = "a Host value", .check = healthHostMistake } },
        .unset = "backend address",
        .section = .health,
        .help = "Host of the probe (default: the {default})",
    },
    .{
        .flag = "health-interval",
        .key = "health.interval",
        .scope = .pool,
        .fields = &.{"health.interval_ns"},
        .value = .duration,
        .default = "2s",
        .section = .health,
        .help = "between probes (default {default})",
    },
    .{
        .flag = "health-timeout",
        .key = "health.timeout",
        .scope = .pool,
        .fields = &.{"health.timeout_ns"},
        .value = .duration,
        .default = "1s",
        .section = .health,
        .help = "per probe (default {default})",
    },
    .{
        .flag = "health-status",
        .arg = "LOW-HIGH",
        .key = "health.status",
        .scope = .pool,
        .fields = &.{ "health.status_min", "health.status_max" },
        .value = .{ .status_range = .{ .min = 100, .max = 599 } },
        .default = "200-399",
        .section = .health,
        .help = "passing statuses (default {default})",
    },
    .{
        .flag = "health-rise",
        .key = "health.rise",
        .scope = .pool,
        .fields = &.{"health.rise"},
        .value = .{ .count = .{ .min = 1, .max = 100 } },
        .default = "2",
        .section = .health,
        .help = "passes to bring a backend up (default {default})",
    },
    .{
        .flag = "health-fall",
        .key = "health.fall",
        .scope = .pool,
        .fields = &.{"health.fall"},
        .value = .{ .count = .{ .min = 1, .max = 100 } },
        .default = "3",
        .section = .health,
        .help = "failures to take it down (default {default})",
    },
    .{
        .flag = "eject-after",
        .key = "ejection.after",
        .scope = .pool,
        .fields = &.{"outlier.consecutive_failures"},
        .value = .{ .count = .{ .min = 0, .max = 1000 } },
        .default = "5",
        .zero = "off",
        .section = .health,
        .help = "consecutive failures in real traffic that eject\n" ++
            "a backend (default {default}; 0 turns ejection off)",
    },
    .{
        .flag = "eject-on",
        .arg = "KINDS",
        .key = "ejection.on",
        .scope = .pool,
        .fields = &.{"outlier.on"},
        .value = .failure_kinds,
        .default = "connect,reset,timeout",
        .section = .health,
        .help = "which failures count: connect,reset,timeout,5xx\n(default {default})",
    },
    .{
        .flag = "eject-time",
        .key = "ejection.time",
        .scope = .pool,
        .fields = &.{"outlier.ejection_ns"},
        .value = .duration,
        .default = "10s",
        .section = .health,
        .help = "first ejection; doubles on repeats (default {default})",
    },
    .{
        .flag = "eject-time-max",
        .key = "ejection.time_max",
        .scope = .pool,
        .fields = &.{"outlier.ejection_max_ns"},
        .value = .duration,
        .default = "5m",
        .section = .health,
        .help = "longest ejection (default {default})",
    },
    .{
        .flag = "eject-max-percent",
        .key = "ejection.max_percent",
        .scope = .pool,
        .fields = &.{"outlier.max_ejected_percent"},
        .value = .{ .count = .{ .min = 0, .max = 100 } },
        .default = "50",
        .section = .health,
        .help = "share of the pool ejected at once (default {default})",
    },
    .{
        .flag = "tries",
        .key = "retry.tries",
        .scope = .pool,
        .fields = &.{"retry.tries_max"},
        .value = .{ .count = .{ .min = 1, .max = 10 } },
        .default = "3",
        .section = .retries,
        .help = "tries per request, the first included (default {default})",
    },
    .{
        .flag = "retry-on",
        .arg = "KINDS",
        .key = "retry.on",
        .scope = .pool,
        .fields = &.{"retry.on"},
        .value = .failure_kinds,
        .default = "connect,reset",
        .section = .retries,
        .help = "connect,reset,timeout,5xx (default\n{default}); only when safe",
    },
    .{
        .flag = "retry-budget",
        .arg = "PERCENT",
        .key = "retry.budget_percent",
        .scope = .pool,
        .fields = &.{"retry.budget_percent"},
        .value = .{ .count = .{ .min = 0, .max = 100 } },
        .default = "20",
        .section = .retries,
        .help = "retries at most this share of requests, plus 10\nper second (default {default})",
    },
    .{
        .flag = "upstream-connect-timeout",
        .key = "timeouts.connect",
        .scope = .pool,
        .fields = &.{"connect_timeout_ns"},
        .value = .duration,
        .default = "5s",
        .section = .retries,
        .help = "backend connect (default {default}) -> 504",
    },
    .{
        .flag = "upstream-response-timeout",
        .key = "timeouts.response",
        .scope = .pool,
        .fields = &.{"response_timeout_ns"},
        .value = .duration,
        .default = "60s",
        .section = .retries,
        .help = "request sent to response head (default {default}) -> 504",
    },
    .{
        .flag = "upstream-body-timeout",
        .key = "timeouts.body",
        .scope = .pool,
        .fields = &.{"body_timeout_ns"},
        .value = .duration,
        .default = "60s",
        .section = .retries,
        .help = "gap between response body bytes (default {default}):\n" ++
            "the client connection is closed mid-body (its\n" ++
            "status line was already relayed)",
    },
    .{
        .flag = "upstream-total-timeout",
        .key = "timeouts.total",
        .scope = .pool,
        .fields = &.{"total_timeout_ns"},
        .value = .duration,
        .unset = "off",
        .section = .retries,
        .help = "whole exchange (default {default}) -> 504, or a close\nonce the response has started",
    },
    .{
        .flag = "upstream-idle-timeout",
        .key = "timeouts.idle",
        .scope = .pool,
        .fields = &.{"idle_timeout_ns"},
        .value = .duration,
        .default = "30s",
        .section = .retries,
        .help = "pooled idle backend connections (default {default})",
    },
    .{
        .flag = "upstream-keepalive",
        .key = "keepalive",
        .scope = .pool,
        .fields = &.{"keepalive_max"},
        .value = .{ .count = .{ .min = 0, .max = 4096 } },
        .default = "64",
        .section = .retries,
        .help = "idle backend connections kept per backend and\nworker (default {default})",
    },
    .{
        .flag = "backend-protocol",
        .arg = "http1|h2c|h2",
        .key = "protocol",
        .scope = .pool,
        .fields = &.{"protocol"},
        .value = .{ .enumeration = Config.UpstreamProtocol },
        .default = "http1",
        .section = .retries,
        .help = "what the backends speak: {default} (default), h2c\n(HTTP/2 with prior knowledge), or h2 (HTTP/2 over\nTLS by ALPN, with --backend-tls); h2 and h2c\nmultiplex requests",
    },
    .{
        .flag = "backend-tls",
        .arg = "on|OPTIONS",
        .key = "tls",
        .scope = .pool,
        .fields = &.{"tls"},
        .value = .{ .structure = .upstream_tls },
        .unset = "off",
        .section = .balancing,
        .help = "TLS to the backends (default {default}): on, or\n" ++
            "options ca=FILE,server-name=NAME,cert=FILE,\n" ++
            "key=FILE,verify=off (comma-separated); verified\n" ++
            "against the system CAs unless ca= or verify=off",
    },
    .{
        .flag = "send-proxy",
        .key = "send_proxy",
        .scope = .pool,
        .fields = &.{"send_proxy"},
        .value = .{ .enumeration = Config.SendProxy },
        .default = "off",
        .section = .balancing,
        .help = "a PROXY protocol header first on each backend\n" ++
            "connection (default {default}; v2: with the client's\n" ++
            "address); such connections are not reused",
    },

    // --- a backend: options of `--backend ADDR,...`, keys of a backend object ---------------
    .{
        .key = "address",
        .scope = .backend,
        .fields = &.{ "address", "host_name", "by_name", "port" },
        .value = .{ .structure = .backend_address },
        .unset = "required",
    },
    .{
        .flag = "weight",
        .key = "weight",
        .scope = .backend,
        .fields = &.{"weight"},
        .value = .{ .count = .{ .min = 0, .max = 1000 } },
        .default = "1",
        .zero = "drained",
    },
    // 0 is no cap, on the command line as in a file (the command line used to refuse it): it is
    // the default, a generated file must be able to write it, and nginx's `max_conns=0` and
    // HAProxy's `maxconn 0` mean the same. A backend that takes no requests is `weight=0`.
    .{
        .flag = "max-conns",
        .key = "max_connections",
        .scope = .backend,
        .fields = &.{"max_connections"},
        .value = .{ .count = .{ .min = 0, .max = 1 << 20 } },
        .default = "0",
        .zero = "no cap",
    },
    .{
        .flag = "max-pending",
        .key = "max_pending",
        .scope = .backend,
        .fields = &.{"max_pending"},
        .value = .{ .count = .{ .min = 0, .max = 1 << 20 } },
        .default = "0",
        .zero = "no cap",
    },

    // --- a route: over the global setting of the same name -----------------------------------
    .{
        .key = "tunnel_idle_timeout",
        .scope = .route,
        .fields = &.{"tunnel_idle_timeout_ns"},
        .value = .duration,
        .unset = "timeouts.tunnel_idle",
    },
    .{
        .key = "request_body_max",
        .scope = .route,
        .fields = &.{"request_body_bytes_max"},
        .value = .{ .size = .{ .min = 0, .max = size_max } },
        .unset = "limits.request_body_max",
        .zero = "no limit",
    },
    .{
        .key = "rewrite_prefix",
        .scope = .route,
        .fields = &.{"rewrite_prefix"},
        .value = .{ .text = .{ .what = "a path such as \"/\" or \"/v2/\"", .check = rewritePrefixMistake } },
        .unset = "the target as sent",
    },
    .{
        .key = "strip_prefix",
        .scope = .route,
        .value = .{ .structure = .strip_prefix },
        .unset = "false",
    },
    .{
        .key = "rate_limit",
        .scope = .route,
        .fields = &.{"rate_limit"},
        .value = .{ .text = .{ .what = "a rate limit such as \"100/s,burst=50\"", .check = rateLimitMistake } },
        .unset = "none",
    },
    .{
        .key = "compression",
        .scope = .route,
        .fields = &.{"compression"},
        .value = .boolean,
        .unset = "compression.enabled",
    },
    .{
        .key = "allow",
        .scope = .route,
        .fields = &.{"access.allow"},
        .value = .{ .structure = .allow },
        .unset = "everyone",
    },
    .{
        .key = "deny",
        .scope = .route,
        .fields = &.{"access.deny"},
        .value = .{ .structure = .deny },
        .unset = "no one",
    },
    .{
        .key = "request_headers",
        .scope = .route,
        .fields = &.{"header_rules.request"},
        .value = .{ .structure = .request_headers },
        .unset = "the top level's",
    },
    .{
        .key = "response_headers",
        .scope = .route,
        .fields = &.{"header_rules.response"},
        .value = .{ .structure = .response_headers },
        .unset = "the top level's",
    },
    // --- a handler's limits (docs/JS.md, "Limits"): each call gets them afresh ------------------
    .{
        .key = "memory",
        .scope = .handler,
        .fields = &.{"heap_bytes"},
        .value = .{ .size = .{ .min = 64 * 1024, .max = 256 * 1024 * 1024 } },
        .default = "1MiB",
    },
    .{
        .key = "budget",
        .scope = .handler,
        .fields = &.{"budget_ticks"},
        .value = .{ .count = .{ .min = 1000, .max = 1_000_000_000_000 } },
        .default = "50000000",
    },
    .{
        .key = "deadline",
        .scope = .handler,
        .fields = &.{"deadline_ns"},
        .value = .duration,
        .default = "50ms",
    },
    .{
        .key = "depth",
        .scope = .handler,
        .fields = &.{"depth"},
        .value = .{ .count = .{ .min = 8, .max = 10_000 } },
        .default = "512",
    },
    .{
        .key = "body_max",
        .scope = .handler,
        .fields = &.{"body_bytes_max"},
        .value = .{ .size = .{ .min = 0, .max = 64 * 1024 * 1024 } },
        .default = "64KiB",
        .zero = "no request body (a request with one is 413)",
    },
    .{
        .key = "suspended_max",
        .scope = .handler,
        .fields = &.{"suspended_max"},
        .value = .{ .count = .{ .min = 0, .max = 4096 } },
        .default = "64",
        .zero = "no request may wait on a timer (one that would is 503)",
    },
    .{
        .key = "fetch_max",
        .scope = .handler,
        .fields = &.{"fetch_max"},
        .value = .{ .count = .{ .min = 0, .max = 16 } },
        .default = "8",
        .zero = "no fetch (each is rejected with a TypeError)",
    },
};

/// Relations between settings: `below` must be less than `limit`. Checked by the command line
/// (naming the flags), by a file's walk (at the value, naming the keys) and by
/// `Config.validate`; the defaults are checked at compile time below.
pub const Relation = struct { scope: Scope, below: []const u8, limit: []const u8 };

pub const relations = [_]Relation{
    // The request line is part of the head.
    .{ .scope = .global, .below = "limits.target_bytes_max", .limit = "limits.header_bytes_max" },
};

// --- lookups -----------------------------------------------------------------------------------

/// The struct a scope's fields belong to.
pub fn Target(comptime scope: Scope) type {
    return switch (scope) {
        .command_line => @compileError("command-line settings are not part of Config"),
        .global => Config,
        .pool => Config.Pool,
        .backend => Config.Backend,
        .route => Config.Route,
        .handler => Config.Handler,
    };
}

/// The type of the field at a dotted path (`health.interval_ns`).
pub fn FieldAt(comptime T: type, comptime path: []const u8) type {
    const dot = std.mem.indexOfScalar(u8, path, '.') orelse return @FieldType(T, path);
    return FieldAt(@FieldType(T, path[0..dot]), path[dot + 1 ..]);
}

fn FieldPointer(comptime Pointer: type, comptime path: []const u8) type {
    const info = @typeInfo(Pointer).pointer;
    const F = FieldAt(info.child, path);
    return if (info.attrs.@"const") *const F else *F;
}

/// A pointer to the field at a dotted path, as const as `target`.
pub fn fieldPointer(comptime path: []const u8, target: anytype) FieldPointer(@TypeOf(target), path) {
    const dot = comptime std.mem.indexOfScalar(u8, path, '.');
    if (dot) |d| return fieldPointer(path[d + 1 ..], &@field(target, path[0..d]));
    return &@field(target, path);
}

/// The index in `table` of the row of `scope` with this key (or, with no key, this flag).
pub fn indexOf(comptime scope: Scope, comptime name: []const u8) usize {
    comptime {
        for (table, 0..) |setting, i| {
            if (setting.scope != scope) continue;
            const own = setting.key orelse setting.flag.?;
            if (std.mem.eql(u8, own, name)) return i;
        }
        @compileError("no setting " ++ name ++ " in scope " ++ @tagName(scope));
    }
}

pub fn lookup(comptime scope: Scope, comptime name: []const u8) Setting {
    return table[indexOf(scope, name)];
}

/// The row that sets this field of the scope's struct.
fn rowOfField(comptime scope: Scope, comptime path: []const u8) Setting {
    comptime {
        for (table) |candidate| {
            if (candidate.scope != scope) continue;
            for (candidate.fields) |name| if (std.mem.eql(u8, name, path)) return candidate;
        }
        @compileError("no setting sets " ++ @tagName(scope) ++ " field " ++ path);
    }
}

/// A file's key as written anywhere in a file: `limits.header_bytes_max`,
/// `pools.NAME.timeouts.connect`, `pools.NAME.backends[].weight`, `routes[].request_body_max`.
pub fn fullKey(comptime setting: Setting) []const u8 {
    const key = setting.key orelse return "";
    return switch (setting.scope) {
        .command_line, .global => key,
        .pool => "pools.NAME." ++ key,
        .backend => "pools.NAME.backends[]." ++ key,
        .route => "routes[]." ++ key,
        .handler => "handlers.NAME." ++ key,
    };
}

/// A file's key and whether it is a setting or a section of settings under it (`limits`).
pub const Key = struct { name: []const u8, kind: union(enum) { setting: usize, section } };

/// The keys of the object at `prefix` (`""`, `"limits."`) of a scope, in table order: each a
/// setting, or a section named by the first part of longer keys.
pub fn keysAt(comptime scope: Scope, comptime prefix: []const u8) []const Key {
    comptime {
        @setEvalBranchQuota(100_000);
        var keys: []const Key = &.{};
        for (table, 0..) |setting, i| {
            if (setting.scope != scope) continue;
            const key = setting.key orelse continue;
            if (!std.mem.startsWith(u8, key, prefix)) continue;
            const rest = key[prefix.len..];
            const dot = std.mem.indexOfScalar(u8, rest, '.');
            const name = if (dot) |d| rest[0..d] else rest;
            const known = for (keys) |k| {
                if (std.mem.eql(u8, k.name, name)) break true;
            } else false;
            if (known) {
                assert(dot != null); // Two settings with one key.
                continue;
            }
            const kind: @FieldType(Key, "kind") = if (dot == null) .{ .setting = i } else .section;
            keys = keys ++ [_]Key{.{ .name = name, .kind = kind }};
        }
        return keys;
    }
}

/// "a, b, c": names for a message saying what was expected.
pub fn namesText(comptime keys: []const Key) []const u8 {
    comptime var text: []const u8 = "";
    inline for (keys, 0..) |key, i| text = text ++ (if (i == 0) "" else ", ") ++ key.name;
    return text;
}

/// An enum's tags joined by `separator`: `auto|uring|epoll`.
pub fn enumChoices(comptime E: type, comptime separator: []const u8) []const u8 {
    comptime var text: []const u8 = "";
    inline for (@typeInfo(E).@"enum".field_names, 0..) |name, i| {
        text = text ++ (if (i == 0) "" else separator) ++ name;
    }
    return text;
}

// --- defaults ----------------------------------------------------------------------------------

/// The default of a field of the scope's struct, parsed at compile time from its row: what
/// `Config`'s field declarations are initialised with.
pub fn default(comptime scope: Scope, comptime path: []const u8) FieldAt(Target(scope), path) {
    const T = FieldAt(Target(scope), path);
    return comptime defaultOf(T, rowOfField(scope, path), path);
}

pub fn defaultOf(comptime T: type, comptime setting: Setting, comptime path: []const u8) T {
    @setEvalBranchQuota(20_000);
    const text = setting.default orelse return zeroOf(T);
    return switch (setting.value) {
        .count => std.fmt.parseInt(T, text, 10) catch unreachable,
        .size => @intCast(units.parseBytes(text) catch unreachable),
        .duration => units.parseDurationNs(text, .milliseconds) catch unreachable,
        .enumeration => |E| std.meta.stringToEnum(E, text).?,
        .text => text,
        .failure_kinds => parseFailureKinds(text, ',') catch unreachable,
        .status_range => |bounds| blk: {
            const range = parseStatusRange(text, bounds).?;
            break :blk if (std.mem.endsWith(u8, path, "_min")) range.min else range.max;
        },
        .structure => |structure| switch (structure) {
            .hash => blk: {
                const key = parseHashKey(text) catch unreachable;
                break :blk if (std.mem.eql(u8, path, "hash_on")) key.on else key.name;
            },
            else => unreachable, // Their defaults are prose ("required", "off").
        },
        .boolean => std.mem.eql(u8, text, "true"),
        .switch_, .path => unreachable, // Not part of Config.
    };
}

fn zeroOf(comptime T: type) T {
    return switch (@typeInfo(T)) {
        .int => 0,
        .optional => null,
        .pointer => "",
        .bool => false,
        else => @compileError("no zero value for " ++ @typeName(T)),
    };
}

/// The default as a config file writes it (`"16KiB"`, `4096`, `.auto`), or null when the
/// setting has none to write (it is off or unset).
pub fn fileDefault(comptime setting: Setting) ?[]const u8 {
    comptime {
        const text = setting.default orelse return null;
        return switch (setting.value) {
            .count => text,
            .size => if (isDigits(text)) text else "\"" ++ text ++ "\"",
            .duration, .text, .status_range => "\"" ++ text ++ "\"",
            .enumeration => enumLiteral(text),
            .failure_kinds => blk: {
                var list: []const u8 = ".{";
                var parts = std.mem.splitScalar(u8, text, ',');
                var first = true;
                while (parts.next()) |part| : (first = false) {
                    list = list ++ (if (first) " " else ", ") ++ enumLiteral(part);
                }
                break :blk list ++ " }";
            },
            .structure => |structure| switch (structure) {
                .listen => "\"" ++ addressText(text) ++ "\"",
                .hash => blk: {
                    const key = parseHashKey(text) catch unreachable;
                    const on = ".{ .on = ." ++ @tagName(key.on);
                    break :blk if (key.name.len == 0) on ++ " }" else on ++ ", .name = \"" ++ key.name ++ "\" }";
                },
                else => unreachable, // Their defaults are prose.
            },
            .boolean => text,
            .switch_, .path => null,
        };
    }
}

fn isDigits(text: []const u8) bool {
    for (text) |c| if (!std.ascii.isDigit(c)) return false;
    return text.len > 0;
}

fn enumLiteral(comptime tag: []const u8) []const u8 {
    return if (std.zig.isValidId(tag)) "." ++ tag else ".@\"" ++ tag ++ "\"";
}

/// `:8080` as `0.0.0.0:8080`: the form the logs use.
fn addressText(comptime text: []const u8) []const u8 {
    comptime {
        const address = Config.Address.parse(text) catch unreachable;
        var buffer: [Config.Address.text_bytes_max]u8 = undefined;
        const written = address.toText(&buffer);
        const copy = written[0..written.len].*;
        return &copy;
    }
}

// --- values with rules of their own, shared by the command line and files -----------------------

pub const FailureKindsError = error{UnknownKind};

/// One of connect, reset, timeout, 5xx.
pub fn failureKind(kinds: *Config.FailureKinds, name: []const u8) FailureKindsError!void {
    if (std.mem.eql(u8, name, "connect")) {
        kinds.connect = true;
    } else if (std.mem.eql(u8, name, "reset")) {
        kinds.reset = true;
    } else if (std.mem.eql(u8, name, "timeout")) {
        kinds.timeout = true;
    } else if (std.mem.eql(u8, name, "5xx")) {
        kinds.status_5xx = true;
    } else return error.UnknownKind;
}

pub const failure_kind_names = "connect, reset, timeout, 5xx";

/// `connect,reset` (an empty text is the empty set).
pub fn parseFailureKinds(text: []const u8, separator: u8) FailureKindsError!Config.FailureKinds {
    var kinds: Config.FailureKinds = .none;
    if (text.len == 0) return kinds;
    var parts = std.mem.splitScalar(u8, text, separator);
    while (parts.next()) |part| try failureKind(&kinds, part);
    return kinds;
}

pub const StatusRange = struct { min: u16, max: u16 };

/// `LOW-HIGH` or one status, within bounds; null if it is not.
pub fn parseStatusRange(text: []const u8, bounds: Bounds) ?StatusRange {
    const dash = std.mem.indexOfScalar(u8, text, '-');
    const low = std.fmt.parseInt(u16, if (dash) |d| text[0..d] else text, 10) catch return null;
    const high = std.fmt.parseInt(u16, if (dash) |d| text[d + 1 ..] else text, 10) catch return null;
    if (low < bounds.min or high > bounds.max or low > high) return null;
    return .{ .min = low, .max = high };
}

pub const HashKey = struct { on: Config.HashOn, name: []const u8 = "" };

pub const HashKeyError = error{ InvalidHashKey, InvalidName };

/// `ip`, `path`, `header:NAME` or `cookie:NAME`.
pub fn parseHashKey(text: []const u8) HashKeyError!HashKey {
    const colon = std.mem.indexOfScalar(u8, text, ':');
    const kind = if (colon) |c| text[0..c] else text;
    const name = if (colon) |c| text[c + 1 ..] else "";
    if (colon == null and std.mem.eql(u8, kind, "ip")) return .{ .on = .client_ip };
    if (colon == null and std.mem.eql(u8, kind, "path")) return .{ .on = .path };
    const on: Config.HashOn = if (std.mem.eql(u8, kind, "header"))
        .header
    else if (std.mem.eql(u8, kind, "cookie"))
        .cookie
    else
        return error.InvalidHashKey;
    if (hashNameMistake(name) != null) return error.InvalidName;
    return .{ .on = on, .name = name };
}

/// What replaces a route's path prefix: a path, in the normal form requests are matched in,
/// without a query.
pub fn rewritePrefixMistake(text: []const u8) ?[]const u8 {
    if (text.len == 0) return null;
    if (text[0] != '/') return "a rewritten prefix starts with /, such as \"/\" or \"/v2/\"";
    if (text.len > 1024) return "a rewritten prefix has at most 1024 bytes";
    for (text) |c| if (!chars.isTargetByte(c) or c == '?') {
        return "a rewritten prefix is visible ASCII without spaces, # or ?, as in a request line";
    };
    return null;
}

/// A request id's field: a name a request rule could set (not one sluice owns).
fn rateLimitMistake(text: []const u8) ?[]const u8 {
    if (text.len == 0) return null; // Off.
    return RateLimit.mistake(text);
}

fn requestIdHeaderMistake(text: []const u8) ?[]const u8 {
    if (text.len == 0) return null; // Off.
    return HeaderRules.nameMistake(.request, text);
}

fn anyText(_: []const u8) ?[]const u8 {
    return null;
}

/// A name written into a field as it is: an RFC 9110 token (§5.6.2).
fn tokenMistake(text: []const u8, comptime bytes_max: u32, comptime what: []const u8) ?[]const u8 {
    var valid = text.len > 0 and text.len <= bytes_max;
    for (text) |c| valid = valid and chars.isTchar(c);
    if (valid) return null;
    return std.fmt.comptimePrint("{s} is 1 to {d} letters, digits or !#$%&'*+-.^_`|~", .{ what, bytes_max });
}

pub fn cookieNameMistake(text: []const u8) ?[]const u8 {
    return tokenMistake(text, Config.sticky_cookie_bytes_max, "a cookie name");
}

/// A handler's name: a token, as it is a metrics label and a file's stem (`-Dhandler`); empty
/// is unset.
pub fn handlerNameMistake(text: []const u8) ?[]const u8 {
    if (text.len == 0) return null;
    return tokenMistake(text, Config.handler_name_bytes_max, "a handler name");
}

pub fn hashNameMistake(text: []const u8) ?[]const u8 {
    return tokenMistake(text, Config.name_bytes_max, "a header or cookie name");
}

/// Empty turns active checks off.
pub fn healthPathMistake(path: []const u8) ?[]const u8 {
    if (path.len == 0) return null;
    if (path[0] != '/') return "a health path starts with /, such as \"/healthz\"";
    if (path.len > Config.health_text_bytes_max or !Config.isVisible(path)) {
        return std.fmt.comptimePrint("a health path is at most {d} bytes of visible ASCII " ++
            "without spaces", .{Config.health_text_bytes_max});
    }
    return null;
}

/// Empty: the backend's address.
pub fn healthHostMistake(host: []const u8) ?[]const u8 {
    if (host.len > Config.health_text_bytes_max or !Config.isVisible(host)) {
        return std.fmt.comptimePrint("a health host is at most {d} bytes of visible ASCII " ++
            "without spaces", .{Config.health_text_bytes_max});
    }
    return null;
}

// --- checks of a whole Config -----------------------------------------------------------------

/// The key of the first setting of `target` (a Config, Pool, Backend or Route) whose value is
/// outside what its row allows, or null. A row without a default accepts the zero value (its
/// field is unset). The command line and files refuse such values one by one; this is the
/// backstop for a Config built another way.
pub fn outOfRange(comptime scope: Scope, target: *const Target(scope)) ?[]const u8 {
    inline for (table) |setting| {
        if (setting.scope != scope) continue;
        if (!inRange(setting, target)) return comptime setting.key orelse setting.flag.?;
    }
    return null;
}

fn inRange(comptime setting: Setting, target: anytype) bool {
    switch (setting.value) {
        .count, .size => |bounds| {
            const value = fieldPointer(setting.field(), target).*;
            const n: u64 = if (@typeInfo(@TypeOf(value)) == .optional) value orelse return true else value;
            if (setting.default == null and n == 0) return true;
            return n >= bounds.min and n <= bounds.max;
        },
        .duration => {
            const ns = fieldPointer(setting.field(), target).*;
            return ns > 0 or setting.default == null;
        },
        .text => |text| return text.check(fieldPointer(setting.field(), target).*) == null,
        .status_range => |bounds| {
            const min = fieldPointer(setting.fields[0], target).*;
            const max = fieldPointer(setting.fields[1], target).*;
            return min >= bounds.min and max <= bounds.max and min <= max;
        },
        .enumeration, .failure_kinds, .structure, .switch_, .boolean, .path => return true,
    }
}

/// The first relation of `scope` that `target` breaks, or null.
pub fn brokenRelation(comptime scope: Scope, target: *const Target(scope)) ?Relation {
    inline for (relations) |relation| {
        if (relation.scope == scope and breaks(relation, target)) return relation;
    }
    return null;
}

pub fn breaks(comptime relation: Relation, target: *const Target(relation.scope)) bool {
    const below = fieldPointer(comptime lookup(relation.scope, relation.below).field(), target).*;
    const limit = fieldPointer(comptime lookup(relation.scope, relation.limit).field(), target).*;
    return below >= limit;
}

/// Whether two Configs have the same value of a global setting (a list as far as its count).
pub fn sameValue(comptime setting: Setting, a: *const Config, b: *const Config) bool {
    comptime assert(setting.scope == .global);
    inline for (setting.fields) |path| {
        if (comptime isListCount(setting, path)) continue; // Compared with its `_buffer`.
        if (comptime std.mem.endsWith(u8, path, "_buffer")) {
            const count_path = path[0 .. path.len - "_buffer".len] ++ "_count";
            const count = fieldPointer(count_path, a).*;
            if (count != fieldPointer(count_path, b).*) return false;
            const Element = @typeInfo(FieldAt(Config, path)).array.child;
            for (fieldPointer(path, a)[0..count], fieldPointer(path, b)[0..count]) |*x, *y| {
                if (!Config.deepEql(Element, x, y)) return false;
            }
        } else if (!Config.deepEql(FieldAt(Config, path), fieldPointer(path, a), fieldPointer(path, b))) {
            return false;
        }
    }
    return true;
}

/// Whether `path` is the `_count` of a `_buffer` the row also sets (a list).
fn isListCount(comptime setting: Setting, comptime path: []const u8) bool {
    if (!std.mem.endsWith(u8, path, "_count")) return false;
    const buffer = path[0 .. path.len - "_count".len] ++ "_buffer";
    for (setting.fields) |other| if (std.mem.eql(u8, other, buffer)) return true;
    return false;
}

// --- what the compiler checks ----------------------------------------------------------------

comptime {
    @setEvalBranchQuota(200_000);
    for (table, 0..) |setting, i| {
        // Every setting is reachable: by a flag, a key, or both.
        assert(setting.flag != null or setting.key != null);
        if (setting.scope == .command_line) assert(setting.key == null and setting.fields.len == 0);
        if (setting.reload == .restart) assert(setting.scope == .global);
        switch (setting.value) {
            .count, .size => |bounds| {
                assert(setting.fields.len == 1);
                assert(bounds.min <= bounds.max);
                const F = FieldAt(Target(setting.scope), setting.fields[0]);
                const Int = switch (@typeInfo(F)) {
                    .optional => |o| o.child,
                    else => F,
                };
                // A value within bounds fits its field, so storing it needs no check.
                assert(bounds.max <= std.math.maxInt(Int));
                if (setting.default) |text| {
                    const n = if (setting.value == .count)
                        std.fmt.parseInt(u64, text, 10) catch unreachable
                    else
                        units.parseBytes(text) catch unreachable;
                    assert(n >= bounds.min and n <= bounds.max);
                }
                // What 0 means is said when 0 is allowed and not simply a number of things.
                if (setting.zero != null) assert(bounds.min == 0);
            },
            .duration, .enumeration, .text, .failure_kinds, .boolean => assert(setting.fields.len == 1),
            .status_range => |bounds| {
                assert(setting.fields.len == 2);
                assert(parseStatusRange(setting.default.?, bounds) != null);
            },
            .structure, .switch_, .path => {},
        }
        // Help text: `{default}` wherever there is a default to show, unless it is longer than a
        // help line (`--compress-types`'s list), when the help says it in words.
        if (setting.flag != null and setting.scope != .backend and setting.default != null and
            setting.default.?.len <= help_default_bytes_max)
        {
            assert(std.mem.indexOf(u8, setting.help, "{default}") != null);
        }
        // One row per flag, and per key within a scope.
        for (table[0..i]) |other| {
            if (setting.flag != null and other.flag != null and
                (setting.scope == .backend) == (other.scope == .backend))
            {
                assert(!std.mem.eql(u8, setting.flag.?, other.flag.?));
            }
            if (setting.key != null and other.key != null and setting.scope == other.scope) {
                assert(!std.mem.eql(u8, setting.key.?, other.key.?));
            }
        }
    }
    // The defaults keep the relations between limits.
    for (relations) |relation| {
        const below = lookup(relation.scope, relation.below);
        const limit = lookup(relation.scope, relation.limit);
        const below_default = units.parseBytes(below.default.?) catch unreachable;
        const limit_default = units.parseBytes(limit.default.?) catch unreachable;
        assert(below_default < limit_default);
        // Some value of `below` is allowed with every value of `limit`.
        assert(below.value.size.min < limit.value.size.min);
    }
    // A head limit fits a buffer of the size `Config.bufferBytes` computes in a u32.
    assert(lookup(.global, "limits.header_bytes_max").value.size.max + Config.rewrite_headroom_bytes <
        std.math.maxInt(u32) - 4096);
    assert(lookup(.global, "limits.response_header_bytes_max").value.size.max ==
        lookup(.global, "limits.header_bytes_max").value.size.max);
    // A backend's caps and the connections of the whole process share one range.
    assert(lookup(.backend, "max_connections").value.count.max ==
        lookup(.global, "limits.max_connections").value.count.max);
}
