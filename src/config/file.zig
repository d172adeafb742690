//! A config file, ZON or JSON, onto the one schema (`Config`). The parsers (zon.zig, json.zig)
//! turn the text into a tree whose every value knows its line and column; this file maps
//! that tree onto `Config` and collects every mistake with its position and what was
//! expected, instead of stopping at the first, so `sluice check` shows them all at once.
//! Unknown keys are mistakes, never ignored: a typo must not silently fall back to a default.
//!
//! The file's keys, their values' kinds and bounds are the settings table's (settings.zig): an
//! object of settings (the top level, `limits`, a pool, its `health`, a backend) is walked by
//! one generic `section`, so a key's bounds and messages are those of its flag. Settings with
//! structure (listeners, pools, routes, backends, the hash key, the admin section) have small
//! parsers here. Routes name pools and listeners that may be declared after them, so those
//! names are resolved once the whole file has been walked; the problems are then sorted, so
//! they still read in file order.
//!
//! Strings in the resulting Config (names, paths, a route's header lines) point into `arena`,
//! which must live as long as the Config.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const Config = @import("Config.zig");
const Cidr = @import("Cidr.zig");
const HeaderRules = @import("HeaderRules.zig");
const units = @import("units.zig");
const settings = @import("settings.zig");
const http_path = @import("../http/path.zig");
const tree = @import("tree.zig");
const zon = @import("zon.zig");
const json = @import("json.zig");
const Method = @import("../http/method.zig").Method;
const chars = @import("../http/chars.zig");

const Node = tree.Node;
const Field = tree.Field;
const Position = tree.Position;

pub const Format = enum { zon, json };

/// `.zon` or `.json`, by the file name's extension.
pub fn formatOf(path: []const u8) ?Format {
    if (std.mem.endsWith(u8, path, ".zon")) return .zon;
    if (std.mem.endsWith(u8, path, ".json")) return .json;
    return null;
}

pub const Problem = struct {
    position: Position,
    message: []const u8,

    fn before(_: void, a: Problem, b: Problem) bool {
        if (a.position.line != b.position.line) return a.position.line < b.position.line;
        return a.position.column < b.position.column;
    }
};

/// Every mistake found, in file order, up to a bound (the rest are counted).
pub const Problems = struct {
    items: [items_max]Problem = undefined,
    count: u32 = 0,
    dropped: u32 = 0,

    pub const items_max = 64;

    pub fn slice(problems: *const Problems) []const Problem {
        return problems.items[0..problems.count];
    }

    pub fn ok(problems: *const Problems) bool {
        return problems.count == 0 and problems.dropped == 0;
    }

    /// Into file order, keeping the order of problems found at the same place (a stable sort).
    fn sort(problems: *Problems) void {
        std.sort.insertion(Problem, problems.items[0..problems.count], {}, Problem.before);
    }

    fn add(problems: *Problems, position: Position, message: []const u8) void {
        if (problems.count == items_max) {
            problems.dropped += 1;
            return;
        }
        problems.items[problems.count] = .{ .position = position, .message = message };
        problems.count += 1;
    }
};

pub const LoadError = error{ CannotRead, Invalid, OutOfMemory };

/// Reads `path` and maps it onto `config` (which starts from the defaults). On `Invalid`,
/// `problems` says why; on `CannotRead`, `problems` has one entry at 1:1 naming the errno.
pub fn load(arena: std.mem.Allocator, path: []const u8, config: *Config, problems: *Problems) LoadError!void {
    const format = formatOf(path) orelse {
        problems.add(.{ .line = 1, .column = 1 }, "unknown file type: expected a name ending in .zon or .json");
        return error.Invalid;
    };
    const source = readFile(arena, path, problems) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.CannotRead => return error.CannotRead,
    };
    try parseSource(arena, source, format, config, problems);
    try resolveHandlerPaths(arena, path, config);
    try resolveCertificatePaths(arena, path, config);
    try resolveUpstreamTlsPaths(arena, path, config);
}

/// A listener's certificate, key, OCSP and client CA files are found beside the config file too.
fn resolveCertificatePaths(arena: std.mem.Allocator, config_path: []const u8, config: *Config) error{OutOfMemory}!void {
    const dir = std.fs.path.dirname(config_path) orelse return;
    for (config.listeners_buffer[0..config.listeners_count]) |*listener| {
        const t = &listener.tls;
        for (t.certificates_buffer[0..t.certificates_count]) |*certificate| {
            inline for (.{ "cert", "key", "ocsp" }) |field| {
                const file = @field(certificate, field);
                if (file.len > 0 and !std.fs.path.isAbsolute(file)) {
                    @field(certificate, field) = try std.fs.path.join(arena, &.{ dir, file });
                }
            }
        }
        if (t.client_ca.len > 0 and !std.fs.path.isAbsolute(t.client_ca)) {
            t.client_ca = try std.fs.path.join(arena, &.{ dir, t.client_ca });
        }
    }
}

/// A pool's TLS files are found beside the config file, as its handlers are.
fn resolveUpstreamTlsPaths(arena: std.mem.Allocator, config_path: []const u8, config: *Config) error{OutOfMemory}!void {
    const dir = std.fs.path.dirname(config_path) orelse return;
    for (config.pools_buffer[0..config.pools_count]) |*pool| {
        inline for (.{ "ca", "client_cert", "client_key" }) |name| {
            const field = &@field(pool.tls, name);
            if (field.len > 0 and !std.fs.path.isAbsolute(field.*)) field.* = try std.fs.path.join(arena, &.{ dir, field.* });
        }
    }
}

/// A file's handlers are found beside it, as a file's own references usually are (so
/// `sluice check /etc/sluice/prod.zon` compiles `/etc/sluice/app.js` from any directory); an
/// absolute path stays as it is.
fn resolveHandlerPaths(arena: std.mem.Allocator, config_path: []const u8, config: *Config) error{OutOfMemory}!void {
    const dir = std.fs.path.dirname(config_path) orelse return;
    for (config.handlers_buffer[0..config.handlers_count]) |*handler| {
        if (handler.path.len == 0 or std.fs.path.isAbsolute(handler.path)) continue; // Compiled in, or absolute.
        handler.path = try std.fs.path.join(arena, &.{ dir, handler.path });
    }
}

/// Maps `source` onto `config`. Exposed for the tests and for `-Dconfig` at build time.
pub fn parseSource(
    arena: std.mem.Allocator,
    source: [:0]const u8,
    format: Format,
    config: *Config,
    problems: *Problems,
) error{ Invalid, OutOfMemory }!void {
    var diagnostic: tree.Diagnostic = .empty;
    const root = switch (format) {
        .zon => zon.parse(arena, source, &diagnostic),
        .json => json.parse(arena, source, &diagnostic),
    } catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Syntax => {
            problems.add(diagnostic.position, diagnostic.message);
            return error.Invalid;
        },
    };
    var mapper: Mapper = .{ .arena = arena, .problems = problems, .config = config };
    mapper.root(&root);
    problems.sort();
    if (!problems.ok()) return error.Invalid;
    // Every check `validate` makes is also made by the walk, at the value it concerns and
    // together with every other mistake (a test below has a file for each). This is the
    // backstop for a check added to `validate` alone: reported, but only at the top.
    config.validate() catch |err| {
        problems.add(root.position, validateMessage(err));
        return error.Invalid;
    };
}

fn readFile(arena: std.mem.Allocator, path: []const u8, problems: *Problems) error{ CannotRead, OutOfMemory }![:0]const u8 {
    const path_z = try arena.dupeSentinel(u8, path, 0);
    const rc = linux.open(path_z, .{ .ACCMODE = .RDONLY, .CLOEXEC = true }, 0);
    if (linux.errno(rc) != .SUCCESS) {
        problems.add(.{ .line = 1, .column = 1 }, errnoMessage(arena, "cannot open", linux.errno(rc)));
        return error.CannotRead;
    }
    const fd: linux.fd_t = @intCast(rc);
    defer _ = linux.close(fd);
    const buffer = try arena.alloc(u8, tree.source_bytes_max + 1);
    var len: usize = 0;
    while (len < buffer.len) {
        const n = sys.read(fd, buffer[len..]) catch {
            problems.add(.{ .line = 1, .column = 1 }, "cannot read the file");
            return error.CannotRead;
        };
        if (n == 0) break;
        len += n;
    }
    if (len > tree.source_bytes_max) {
        problems.add(.{ .line = 1, .column = 1 }, tree.messages.too_large);
        return error.CannotRead;
    }
    const source = try arena.allocSentinel(u8, len, 0);
    @memcpy(source, buffer[0..len]);
    return source;
}

fn errnoMessage(arena: std.mem.Allocator, what: []const u8, errno: linux.E) []const u8 {
    const reason = switch (errno) {
        .NOENT => "no such file",
        .ACCES, .PERM => "permission denied",
        .ISDIR => "it is a directory",
        .NAMETOOLONG => "the name is too long",
        else => @tagName(errno),
    };
    return std.fmt.allocPrint(arena, "{s}: {s}", .{ what, reason }) catch what;
}

pub fn validateMessage(err: Config.ValidateError) []const u8 {
    return switch (err) {
        error.NoBackends => "no backends: a pool needs at least one",
        error.TooManyBackends => std.fmt.comptimePrint("more than {d} backends in all pools together", .{Config.backends_total_max}),
        error.OutOfRange => "a setting is outside what it allows (see `sluice settings`)",
        error.TargetBytesTooLarge => "limits.target_bytes_max must be below limits.header_bytes_max",
        error.HashNameMissing => "hash on a header or cookie needs its name",
        error.NameTooLong => "a name or path is too long",
        error.DuplicateName => "two pools or two listeners have the same name",
        error.DuplicateListener => "two listeners have the same address",
        error.RoutesMissing => "several pools need routes to say which requests go where",
        error.RouteListenerUnknown => "a route names a listener that does not exist",
        error.RouteHostNotLowercase => "a route's host must be lowercase",
        error.RouteHostWildcard => "a route's host wildcard must be \"*.\" and a suffix, such as \"*.example.com\"",
        error.RoutePoolUnknown => "a route names a pool that does not exist",
        error.RouteStatus => "a route's status must be 200-599 (respond) or 300-399 (redirect)",
        error.RouteLocationMissing => "a redirect needs a location",
        error.RouteTextInvalid => "a route's location or content type has bytes a header field cannot carry",
        error.RouteResponseTooLarge => "a route's response does not fit in a connection buffer (limits.header_bytes_max)",
        error.RouteHandlerUnknown => "a route names a handler that does not exist",
        error.HandlerUnknown => "handler names a handler that does not exist",
        error.HandlerWithRoutes => "give either handler (every request to one handler) or routes, not both",
        error.UpstreamTlsInvalid => "a pool's tls settings do not go together (client_cert with client_key, ca with verify)",
        error.H2cWithSendProxy => "protocols h2c and h2 share a connection among clients, so it cannot carry one client's PROXY header (send_proxy)",
        error.H2cWithTls => "protocol h2c is HTTP/2 without TLS: for HTTP/2 over TLS use protocol h2",
        error.H2WithoutTls => "protocol h2 is HTTP/2 over TLS: give the pool tls settings (.tls = .{}, or --backend-tls on), or use h2c for HTTP/2 without TLS",
    };
}

/// Walks the tree, filling `config` and adding a problem for each mistake. A wrong value
/// leaves the default in place and the walk goes on, so later mistakes are found too.
const Mapper = struct {
    arena: std.mem.Allocator,
    problems: *Problems,
    config: *Config,
    /// What each route in `config.routes()` names, resolved by `resolveRoutes`.
    route_refs: [Config.routes_count_max]RouteRefs = undefined,

    /// The nodes of a route that name things declared anywhere in the file, or whose check
    /// depends on settings that may come after the route (`limits`).
    const RouteRefs = struct {
        pool: ?*const Node = null,
        handler: ?*const Node = null,
        listeners: ?*const Node = null,
        /// The `pool`, `respond` or `redirect` value; null when the route has no action.
        action: ?*const Node = null,
    };

    fn root(m: *Mapper, node: *const Node) void {
        const seen = m.section(node, "the top level", .global, "", m.config) orelse return;
        m.resolveRoutes();
        if (seen.node("pools") == null and m.config.needsPool()) {
            m.problem(node.position, "no pools: a file needs .pools with at least one pool and its backends " ++
                "(unless every request goes to a handler or a route's own response)");
        }
        if (seen.node("handler")) |handler_node| {
            if (m.config.handler.len > 0 and m.config.handlerIndex(m.config.handler) == null) {
                m.problem(handler_node.position, m.print("unknown handler \"{s}\": {s}", .{
                    m.config.handler, m.namesOf(Config.Handler, m.config.handlers(), "handlers"),
                }));
            }
            if (seen.node("routes") != null) {
                m.problem(seen.namePosition("handler").?, "give either handler (every request to one " ++
                    "handler) or routes, not both");
            }
        }
        if (seen.node("routes") == null and seen.node("handler") == null and m.config.pools_count > 1) {
            m.problem(seen.namePosition("pools") orelse node.position, "several pools need routes to " ++
                "say which requests go to which pool (see \"Routes\" in docs/CONFIG.md)");
        }
    }

    const listen_both = "give either listen (one address) or listeners (a list), not both";

    // --- objects of settings ---------------------------------------------------------------

    /// Walks an object whose keys are the settings of `scope` under `prefix` (and sections of
    /// them, such as `limits`), storing each value in `target`: the top level, a pool, a
    /// backend. Null when the value is not an object.
    fn section(
        m: *Mapper,
        node: *const Node,
        what: []const u8,
        comptime scope: settings.Scope,
        comptime prefix: []const u8,
        target: *settings.Target(scope),
    ) ?Seen(settings.keysAt(scope, prefix)) {
        const keys = comptime settings.keysAt(scope, prefix);
        const fields = m.object(node, what) orelse return null;
        var seen: Seen(keys) = .{};
        for (fields) |*field| {
            switch (m.knownKey(keys, field, &seen) orelse continue) {
                inline 0...keys.len - 1 => |i| switch (keys[i].kind) {
                    .setting => |row| m.setting(settings.table[row], target, &field.node, &seen),
                    .section => {
                        const name = keys[i].name;
                        _ = m.section(&field.node, name, scope, prefix ++ name ++ ".", target);
                    },
                },
                else => unreachable,
            }
        }
        m.relations(scope, prefix, target, node, &seen);
        return seen;
    }

    /// What `section` saw of an object: each key's value and where its name is.
    fn Seen(comptime keys: []const settings.Key) type {
        return struct {
            nodes: [keys.len]?*const Node = @splat(null),
            name_positions: [keys.len]Position = undefined,

            fn node(seen: *const @This(), comptime name: []const u8) ?*const Node {
                return seen.nodes[comptime keyIndex(keys, name)];
            }

            fn namePosition(seen: *const @This(), comptime name: []const u8) ?Position {
                const index = comptime keyIndex(keys, name);
                return if (seen.nodes[index] == null) null else seen.name_positions[index];
            }
        };
    }

    /// The index of the field's key, recorded in `seen`; null (and a problem) when the key is
    /// unknown or given twice.
    fn knownKey(m: *Mapper, comptime keys: []const settings.Key, field: *const Field, seen: anytype) ?usize {
        const index = for (keys, 0..) |key, i| {
            if (std.mem.eql(u8, key.name, field.name)) break i;
        } else {
            m.problem(field.name_position, m.print("unknown key \"{s}\": expected one of {s}", .{
                field.name, comptime settings.namesText(keys),
            }));
            return null;
        };
        if (seen.nodes[index] != null) {
            m.problem(field.name_position, m.print("\"{s}\" is given twice", .{field.name}));
            return null;
        }
        seen.nodes[index] = &field.node;
        seen.name_positions[index] = field.name_position;
        return index;
    }

    /// The relations between settings of this object (settings.relations), once it is read:
    /// at the value given for the lower one, else at the higher one, else at the object.
    fn relations(m: *Mapper, comptime scope: settings.Scope, comptime prefix: []const u8, target: anytype, node: *const Node, seen: anytype) void {
        inline for (settings.relations) |relation| {
            const here = comptime relation.scope == scope and
                isDirectKey(prefix, relation.below) and isDirectKey(prefix, relation.limit);
            if (here and settings.breaks(relation, target)) {
                const below = settings.fieldPointer(comptime settings.lookup(scope, relation.below).field(), target).*;
                const limit = settings.fieldPointer(comptime settings.lookup(scope, relation.limit).field(), target).*;
                const at = seen.node(relation.below[prefix.len..]) orelse seen.node(relation.limit[prefix.len..]) orelse node;
                m.problem(at.position, m.print(relation.below ++ " ({d}) must be below " ++ relation.limit ++ " ({d})", .{ below, limit }));
            }
        }
    }

    /// Stores the value of a setting's key in `target`; a wrong value leaves what was there.
    fn setting(m: *Mapper, comptime row: settings.Setting, target: anytype, node: *const Node, seen: anytype) void {
        switch (row.value) {
            .count => |bounds| if (m.count(node, bounds)) |n| {
                storeNumber(settings.fieldPointer(row.field(), target), n);
            },
            .size => |bounds| if (m.size(node, bounds, row.zero)) |bytes| {
                storeNumber(settings.fieldPointer(row.field(), target), bytes);
            },
            .duration => if (m.duration(node)) |ns| {
                settings.fieldPointer(row.field(), target).* = ns;
            },
            .enumeration => |E| if (m.enumeration(E, node)) |value| {
                settings.fieldPointer(row.field(), target).* = value;
            },
            .text => |rule| if (m.checkedString(node, rule)) |value| {
                settings.fieldPointer(row.field(), target).* = value;
            },
            .failure_kinds => if (m.failureKinds(node)) |kinds| {
                settings.fieldPointer(row.field(), target).* = kinds;
            },
            .status_range => |bounds| if (m.statusRange(node, bounds)) |range| {
                settings.fieldPointer(row.fields[0], target).* = range.min;
                settings.fieldPointer(row.fields[1], target).* = range.max;
            },
            .structure => |which| m.structure(which, target, node, seen),
            .boolean => if (m.boolean(node)) |value| {
                settings.fieldPointer(row.field(), target).* = value;
            },
            .switch_, .path => comptime unreachable, // Command line only.
        }
    }

    /// The settings with structure, each with its own small parser below.
    fn structure(m: *Mapper, comptime which: settings.Structure, target: anytype, node: *const Node, seen: anytype) void {
        switch (which) {
            .listen => if (seen.node("listeners") != null) {
                m.problem(seen.namePosition("listen").?, listen_both);
            } else if (m.address(node)) |parsed| target.setListener(parsed),
            .listeners => if (seen.node("listen") != null) {
                m.problem(seen.namePosition("listeners").?, listen_both);
            } else m.listeners(node),
            .trusted_proxies => m.trustedProxies(node),
            .resolvers => m.resolvers(node),
            .pools => m.pools(node),
            .routes => m.routes(node),
            .admin => m.admin(node),
            .backends => m.backends(node),
            .backend_address => if (m.backendAddress(node)) |parsed| {
                const weight = target.weight;
                const max_connections = target.max_connections;
                const max_pending = target.max_pending;
                target.* = parsed;
                target.weight = weight;
                target.max_connections = max_connections;
                target.max_pending = max_pending;
            },
            .upstream_tls => m.upstreamTls(node),
            .hash => m.hash(node),
            .handlers => m.handlers(node),
            .tls_cert, .tls_key => comptime unreachable, // Command line only: a file's listener has `.tls`.
            .strip_prefix => if (m.boolean(node)) |strip| {
                if (strip) target.rewrite_prefix = "/";
            },
            .allow => target.access.allow = m.cidrList(node, "allow"),
            .deny => target.access.deny = m.cidrList(node, "deny"),
            .request_headers => target.header_rules.request = m.headerRules(node, .request),
            .response_headers => target.header_rules.response = m.headerRules(node, .response),
            // Command line only: a file writes `request_headers` and `response_headers`.
            .cli_request_header, .cli_response_header, .cli_remove_response_header => comptime unreachable,
        }
    }

    /// The section's presence turns the admin listener on; `.listen` defaults to loopback.
    fn admin(m: *Mapper, node: *const Node) void {
        const listener_settings = &m.config.admin;
        var entries = m.keyed(node, "admin", AdminKey) orelse return;
        listener_settings.enabled = true;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .listen => listener_settings.listen = m.address(v) orelse listener_settings.listen,
            }
        }
    }

    const AdminKey = enum { listen };

    /// `.{ "10.0.0.0/8", "::1" }`: each block checked, the list kept as text (`Config.Access`).
    fn cidrList(m: *Mapper, node: *const Node, what: []const u8) []const u8 {
        var list: []const u8 = "";
        for (m.array(node, what) orelse return "") |*item| {
            const text = m.string(item, "a CIDR such as \"10.0.0.0/8\"") orelse continue;
            _ = Cidr.parse(text) catch {
                m.problem(item.position, "invalid CIDR: expected ADDRESS or ADDRESS/BITS");
                continue;
            };
            list = Config.Access.append(m.arena, list, text) catch {
                m.problem(item.position, "out of memory");
                return list;
            };
        }
        return list;
    }

    fn trustedProxies(m: *Mapper, node: *const Node) void {
        for (m.array(node, "trusted_proxies") orelse return) |*item| {
            const text = m.string(item, "a CIDR such as \"10.0.0.0/8\"") orelse continue;
            const cidr = Cidr.parse(text) catch {
                m.problem(item.position, "invalid CIDR: expected ADDRESS or ADDRESS/BITS");
                continue;
            };
            m.config.addTrustedProxy(cidr) catch {
                m.problem(item.position, std.fmt.comptimePrint("more than {d} trusted proxies", .{Config.trusted_proxies_count_max}));
                return;
            };
        }
    }

    fn resolvers(m: *Mapper, node: *const Node) void {
        for (m.array(node, "resolvers") orelse return) |*item| {
            const text = m.string(item, "a DNS server such as \"10.0.0.2\" or \"10.0.0.2:53\"") orelse continue;
            m.config.addResolver(text) catch |err| switch (err) {
                error.Invalid => m.problem(item.position, "invalid resolver: expected IP or IP:PORT"),
                error.TooMany => return m.problem(item.position, std.fmt.comptimePrint("more than {d} resolvers", .{Config.resolvers_count_max})),
            };
        }
    }

    /// `.{ "0.0.0.0:8080", .{ .name = "internal", .listen = "10.0.0.1:8080" } }`.
    fn listeners(m: *Mapper, node: *const Node) void {
        const items = m.array(node, "listeners") orelse return;
        if (items.len == 0) {
            return m.problem(node.position, "no listeners: omit listeners for the default " ++
                "0.0.0.0:8080, or give at least one");
        }
        for (items) |*item| {
            const parsed = m.listener(item) orelse continue;
            // Port 0 asks the kernel for a free port: two such listeners never collide.
            const any_port = parsed.address.getPort() == 0;
            for (m.config.listeners_buffer[0..m.config.listeners_count]) |*other| {
                if (!any_port and other.address.eql(&parsed.address)) {
                    m.problem(item.position, "this address is already a listener");
                } else if (parsed.name.len > 0 and std.mem.eql(u8, other.name, parsed.name)) {
                    m.problem(item.position, m.print("listener \"{s}\" is given twice", .{parsed.name}));
                }
            }
            m.config.addListener(parsed) catch {
                return m.problem(item.position, std.fmt.comptimePrint("more than {d} listeners", .{Config.listeners_count_max}));
            };
        }
    }

    /// `"ADDR"`, or `.{ .name = "NAME", .listen = "ADDR" }`.
    fn listener(m: *Mapper, node: *const Node) ?Config.Listener {
        if (node.value == .string) return .{ .address = m.address(node) orelse return null };
        var entries = m.keyed(node, "a listener: \"HOST:PORT\" or an object with .listen", ListenerKey) orelse return null;
        var result: Config.Listener = .{ .address = undefined };
        var has_address = false;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .name => result.name = m.label(v, "a listener name", listener_name_bytes_max) orelse result.name,
                .listen => if (m.address(v)) |parsed| {
                    result.address = parsed;
                    has_address = true;
                },
                .tls => m.tls(v, &result.tls),
                .http2 => result.http2 = m.boolean(v) orelse result.http2,
                .proxy_protocol => result.proxy_protocol = m.boolean(v) orelse result.proxy_protocol,
                .allow => result.access.allow = m.cidrList(v, "allow"),
                .deny => result.access.deny = m.cidrList(v, "deny"),
            }
        }
        if (!has_address) {
            if (!entries.seen.contains(.listen)) m.problem(node.position, "a listener needs .listen");
            return null;
        }
        return result;
    }

    const ListenerKey = enum { name, listen, tls, http2, proxy_protocol, allow, deny };

    /// `.{ .certificates = .{ .{ .cert = "a.pem", .key = "a.key" }, ... }, .min_version = "1.2",
    /// .alpn = .{"http/1.1"} }`: the first certificate is the default one.
    /// ... and the client certificates asked for: `.client_ca = "clients.pem"`,
    /// `.client_verify = "required" | "optional"`, `.client_subject_header = "NAME"`,
    /// `.client_fingerprint_header = "NAME"`.
    fn tls(m: *Mapper, node: *const Node, result: *Config.Tls) void {
        var entries = m.keyed(node, "a listener's tls", TlsKey) orelse return;
        // Where the client-certificate keys are, for the checks across them below.
        var client_keys: [3]?Position = @splat(null);
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .certificates => m.certificates(v, result),
                .min_version => result.min_version = m.enumeration(Config.TlsVersion, v) orelse result.min_version,
                .alpn => if (m.alpn(v)) |http1| {
                    result.alpn_http1 = http1;
                },
                .client_ca => if (m.string(v, "a file's path")) |file| {
                    if (file.len == 0) m.problem(v.position, "expected a file's path, not an empty string") else result.client_ca = file;
                },
                .client_verify => {
                    client_keys[0] = entry.name_position;
                    result.client_verify = m.enumeration(Config.ClientVerify, v) orelse result.client_verify;
                },
                .client_subject_header => {
                    client_keys[1] = entry.name_position;
                    result.client_subject_header = m.certificateHeader(v) orelse result.client_subject_header;
                },
                .client_fingerprint_header => {
                    client_keys[2] = entry.name_position;
                    result.client_fingerprint_header = m.certificateHeader(v) orelse result.client_fingerprint_header;
                },
            }
        }
        if (!entries.seen.contains(.certificates)) m.problem(node.position, "tls needs .certificates (at least one)");
        // The client-certificate keys only mean something with a CA to verify against.
        if (result.client_ca.len == 0) {
            for (client_keys) |at| if (at) |position| {
                m.problem(position, "this needs .client_ca (the CAs clients' certificates must chain to)");
            };
        } else if (result.client_subject_header.len > 0 and
            std.ascii.eqlIgnoreCase(result.client_subject_header, result.client_fingerprint_header))
        {
            m.problem(client_keys[2].?, "the subject and the fingerprint need two different fields");
        }
    }

    const TlsKey = enum { certificates, min_version, alpn, client_ca, client_verify, client_subject_header, client_fingerprint_header };

    /// The name of a request field sluice writes for a client certificate: a token that is not
    /// one of the fields sluice already owns (framing, Host, forwarding).
    fn certificateHeader(m: *Mapper, node: *const Node) ?[]const u8 {
        const name = m.string(node, "a header field name") orelse return null;
        if (name.len > Config.client_certificate_header_bytes_max) {
            m.problem(node.position, std.fmt.comptimePrint("a header field name here has at most {d} bytes", .{Config.client_certificate_header_bytes_max}));
            return null;
        }
        if (headerNameMistake(name)) |message| {
            m.problem(node.position, message);
            return null;
        }
        const owned = [_][]const u8{
            "Host",            "Upgrade",           "Keep-Alive",       "TE",        "Trailer",   "Proxy-Connection",
            "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "Forwarded", "X-Real-IP",
        };
        for (owned) |field| if (std.ascii.eqlIgnoreCase(name, field)) {
            m.problem(node.position, m.print("sluice writes {s} itself: name another field", .{field}));
            return null;
        };
        return name;
    }

    fn certificates(m: *Mapper, node: *const Node, result: *Config.Tls) void {
        const items = m.array(node, "certificates") orelse return;
        if (items.len == 0) return m.problem(node.position, "no certificates: give at least one");
        for (items) |*item| {
            var entries = m.keyed(item, "a certificate: .{ .cert = \"FILE\", .key = \"FILE\" }", CertificateKey) orelse continue;
            var certificate: Config.Certificate = .{ .cert = "" };
            while (entries.next()) |entry| {
                const file = m.string(entry.node, "a file's path") orelse continue;
                if (file.len == 0) {
                    m.problem(entry.node.position, "expected a file's path, not an empty string");
                    continue;
                }
                switch (entry.key) {
                    .cert => certificate.cert = file,
                    .key => certificate.key = file,
                    .ocsp => certificate.ocsp = file,
                }
            }
            if (certificate.cert.len == 0 or certificate.key.len == 0) {
                if (!entries.seen.contains(.cert) or !entries.seen.contains(.key)) {
                    m.problem(item.position, "a certificate needs .cert (its PEM chain) and .key (its PEM private key)");
                }
                continue;
            }
            result.addCertificate(certificate) catch {
                return m.problem(item.position, std.fmt.comptimePrint("more than {d} certificates", .{Config.certificates_count_max}));
            };
        }
    }

    const CertificateKey = enum { cert, key, ocsp };

    /// Whether ALPN offers `http/1.1` (`h2` is the listener's `.http2`), or none.
    fn alpn(m: *Mapper, node: *const Node) ?bool {
        const items = m.array(node, "ALPN protocols") orelse return null;
        for (items) |*item| {
            const protocol = m.string(item, "a protocol name such as \"http/1.1\"") orelse return null;
            if (std.mem.eql(u8, protocol, "h2")) {
                m.problem(item.position, "h2 is offered by the listener's .http2 (true by default on HTTPS listeners): list \"http/1.1\" here, or nothing");
                return null;
            }
            if (!std.mem.eql(u8, protocol, "http/1.1")) {
                m.problem(item.position, m.print("unknown ALPN protocol \"{s}\": sluice serves \"http/1.1\"", .{protocol}));
                return null;
            }
        }
        return items.len > 0;
    }

    fn pools(m: *Mapper, node: *const Node) void {
        const fields = m.object(node, "pools (an object of named pools)") orelse return;
        if (fields.len == 0) return m.problem(node.position, "no pools: expected at least one named pool");
        for (fields) |*field| {
            if (field.name.len > Config.pool_name_bytes_max) {
                m.problem(field.name_position, std.fmt.comptimePrint("a pool name has at most {d} bytes", .{Config.pool_name_bytes_max}));
            }
            if (indexOfName(Config.Pool, m.config.pools(), field.name) != null) {
                m.problem(field.name_position, m.print("pool \"{s}\" is given twice", .{field.name}));
            }
            _ = m.config.addPool(.{ .name = field.name }) catch {
                return m.problem(field.name_position, std.fmt.comptimePrint("more than {d} pools", .{Config.pools_count_max}));
            };
            m.pool(&field.node, field.name_position, field.name);
        }
    }

    /// The pool being mapped: the last one added.
    fn currentPool(m: *Mapper) *Config.Pool {
        assert(m.config.pools_count > 0);
        return &m.config.pools_buffer[m.config.pools_count - 1];
    }

    fn pool(m: *Mapper, node: *const Node, name_position: Position, name: []const u8) void {
        const p = m.currentPool();
        const seen = m.section(node, "a pool", .pool, "", p) orelse return;
        // Checks across keys, once the whole pool is read (its keys come in any order).
        if (seen.node("backends") == null) {
            m.problem(name_position, m.print("pool \"{s}\" has no backends: give .backends", .{name}));
        }
        const named = p.hash_on == .header or p.hash_on == .cookie;
        if (p.strategy == .hash and named and p.hash_name.len == 0) {
            const at = if (seen.node("hash")) |hash_value| hash_value.position else name_position;
            m.problem(at, "hash on a header or a cookie needs its .name");
        }
    }

    fn backends(m: *Mapper, node: *const Node) void {
        const items = m.array(node, "backends") orelse return;
        if (items.len == 0) return m.problem(node.position, "no backends: a pool needs at least one");
        if (items.len > Config.backends_count_max) {
            const first_over = &items[Config.backends_count_max];
            return m.problem(first_over.position, std.fmt.comptimePrint("more than {d} backends", .{Config.backends_count_max}));
        }
        // The whole list at once, in the arena (Config.Pool.backends_list).
        const list = m.arena.alloc(Config.Backend, items.len) catch
            return m.problem(node.position, "out of memory for the backends");
        var parsed: usize = 0;
        for (items) |*item| {
            list[parsed] = m.backend(item) orelse continue;
            parsed += 1;
        }
        m.currentPool().setBackends(list[0..parsed]) catch unreachable; // Counted above.
    }

    /// `"ADDR"`, or `.{ .address = "ADDR", .weight = N, .max_connections = N, .max_pending = N }`.
    fn backend(m: *Mapper, node: *const Node) ?Config.Backend {
        if (node.value == .string) return m.backendAddress(node);
        // An address of family 0 is no address: `Address.parse` never makes one.
        var result: Config.Backend = .{ .address = .{ .any = std.mem.zeroes(linux.sockaddr) } };
        const what = "a backend: \"HOST:PORT\" or an object with .address";
        _ = m.section(node, what, .backend, "", &result) orelse return null;
        if (result.address.any.family == 0 and !result.by_name) {
            m.problem(node.position, "a backend needs .address");
            return null;
        }
        return result;
    }

    fn hash(m: *Mapper, node: *const Node) void {
        const p = m.currentPool();
        var entries = m.keyed(node, "hash", HashKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .on => p.hash_on = m.enumeration(Config.HashOn, v) orelse p.hash_on,
                .name => p.hash_name = m.checkedString(v, .{ .what = "a header or cookie name", .check = settings.hashNameMistake }) orelse p.hash_name,
            }
        }
    }

    const HashKey = enum { on, name };

    /// `.{ .verify = true, .ca = "ca.pem", .server_name = "api.internal", .client_cert = "c.pem",
    /// .client_key = "k.pem" }`: its presence turns TLS to the pool's backends on (`.{}` is
    /// verified TLS against the system's CA bundle). Paths are relative to the file.
    fn upstreamTls(m: *Mapper, node: *const Node) void {
        const p = m.currentPool();
        var entries = m.keyed(node, "tls: an object such as .{ .ca = \"ca.pem\" }", UpstreamTlsKey) orelse return;
        var result: Config.UpstreamTls = .{ .enabled = true };
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .verify => result.verify = m.boolean(v) orelse result.verify,
                .ca => result.ca = m.filePath(v, "a PEM file of CA certificates") orelse result.ca,
                .server_name => result.server_name = m.checkedString(v, .{
                    .what = "a DNS name or IP address",
                    .check = Config.serverNameMistake,
                }) orelse result.server_name,
                .client_cert => result.client_cert = m.filePath(v, "a PEM certificate chain") orelse result.client_cert,
                .client_key => result.client_key = m.filePath(v, "a PEM private key") orelse result.client_key,
            }
        }
        if (result.mistake()) |why| m.problem(node.position, why);
        p.tls = result;
    }

    const UpstreamTlsKey = enum { verify, ca, server_name, client_cert, client_key };

    /// A file's path, not empty.
    fn filePath(m: *Mapper, node: *const Node, what: []const u8) ?[]const u8 {
        const text = m.string(node, what) orelse return null;
        if (text.len == 0) {
            m.problem(node.position, m.print("expected a string: {s} (a path, not empty)", .{what}));
            return null;
        }
        return text;
    }

    /// `"200-399"` or `"204"`, within bounds.
    fn statusRange(m: *Mapper, node: *const Node, comptime bounds: settings.Bounds) ?settings.StatusRange {
        const text_value = m.string(node, "a status range such as \"200-399\"") orelse return null;
        return settings.parseStatusRange(text_value, bounds) orelse {
            m.problem(node.position, std.fmt.comptimePrint("invalid status range: expected LOW-HIGH within " ++
                "{d}-{d}, such as \"200-399\"", .{ bounds.min, bounds.max }));
            return null;
        };
    }

    /// `.{ .connect, .reset }` or `["connect", "reset"]`; `5xx` as `.@"5xx"` or `"5xx"`.
    fn failureKinds(m: *Mapper, node: *const Node) ?Config.FailureKinds {
        const expected = "a list of " ++ settings.failure_kind_names;
        const items = m.array(node, expected) orelse return null;
        var kinds: Config.FailureKinds = .none;
        for (items) |*item| {
            const name = m.word(item) orelse {
                m.problem(item.position, "expected one of " ++ settings.failure_kind_names);
                continue;
            };
            settings.failureKind(&kinds, name) catch
                m.problem(item.position, "unknown failure kind: expected one of " ++ settings.failure_kind_names);
        }
        return kinds;
    }

    // --- routes ----------------------------------------------------------------------------

    fn routes(m: *Mapper, node: *const Node) void {
        const items = m.array(node, "routes (objects)") orelse return;
        if (items.len == 0) {
            return m.problem(node.position, "no routes: omit routes to send every request to the " ++
                "only pool, or give at least one");
        }
        for (items) |*item| {
            if (m.config.routes_count == Config.routes_count_max) {
                return m.problem(item.position, std.fmt.comptimePrint("more than {d} routes", .{Config.routes_count_max}));
            }
            m.route(item);
        }
    }

    /// Conditions (`name`, `listeners`, `host`, `path_prefix`, `methods`) and exactly one
    /// action (`pool`, `respond`, `redirect`). What names a pool or a listener is kept in
    /// `route_refs` for `resolveRoutes`.
    fn route(m: *Mapper, node: *const Node) void {
        var entries = m.keyed(node, "a route", RouteKey) orelse return;
        var result: Config.Route = .{};
        var refs: RouteRefs = .{};
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .name => result.name = m.routeName(v) orelse result.name,
                .listeners => refs.listeners = v,
                .host => result.host = m.routeHost(v) orelse result.host,
                .path_prefix => result.path_prefix = m.pathPrefix(v) orelse result.path_prefix,
                .methods => result.methods = m.methods(v) orelse result.methods,
                .pool => if (m.firstAction(&refs, entry.name_position, v)) {
                    result.action = .pool;
                    refs.pool = v;
                },
                .handler => if (m.firstAction(&refs, entry.name_position, v)) {
                    result.action = .handler;
                    refs.handler = v;
                },
                .respond => if (m.firstAction(&refs, entry.name_position, v)) {
                    result.action = .respond;
                    m.respond(v, &result);
                },
                .redirect => if (m.firstAction(&refs, entry.name_position, v)) {
                    result.action = .redirect;
                    m.redirect(v, &result);
                },
                // The settings a route gives over the file's own (settings.zig, scope route).
                inline else => |key| m.setting(comptime settings.lookup(.route, @tagName(key)), &result, v, {}),
            }
        }
        if (refs.action == null) m.problem(node.position, route_action_count);
        if (result.rewrite_prefix.len > 0) if (Config.rewriteMistake(&result)) |mistake| m.problem(node.position, mistake);
        const index = m.config.routes_count;
        assert(index < Config.routes_count_max); // `routes` checked the count.
        m.config.addRoute(result) catch unreachable;
        m.route_refs[index] = refs;
    }

    /// A route's keys: its conditions, the settings it may give (the table's route rows),
    /// its action.
    const RouteKey = blk: {
        const conditions = [_][]const u8{ "name", "listeners", "host", "path_prefix", "methods" };
        const actions = [_][]const u8{ "pool", "handler", "respond", "redirect" };
        var names: []const [:0]const u8 = &.{};
        for (conditions) |name| names = names ++ [_][:0]const u8{std.fmt.comptimePrint("{s}", .{name})};
        for (settings.keysAt(.route, "")) |key| names = names ++ [_][:0]const u8{std.fmt.comptimePrint("{s}", .{key.name})};
        for (actions) |name| names = names ++ [_][:0]const u8{std.fmt.comptimePrint("{s}", .{name})};
        break :blk @Enum(u8, .exhaustive, names, &std.simd.iota(u8, names.len));
    };

    const route_action_count = "a route needs exactly one of pool, handler, respond or redirect";

    /// Whether `action` is the route's first action (a second one is a problem at its key).
    fn firstAction(m: *Mapper, refs: *RouteRefs, key_position: Position, action: *const Node) bool {
        if (refs.action != null) {
            m.problem(key_position, route_action_count);
            return false;
        }
        refs.action = action;
        return true;
    }

    fn routeName(m: *Mapper, node: *const Node) ?[]const u8 {
        const name = m.label(node, "a route name", Config.route_name_bytes_max) orelse return null;
        if (indexOfName(Config.Route, m.config.routes(), name) != null) {
            m.problem(node.position, m.print("route \"{s}\" is given twice", .{name}));
            return null;
        }
        return name;
    }

    fn routeHost(m: *Mapper, node: *const Node) ?[]const u8 {
        const host = m.string(node, "a host such as \"api.example.com\" or \"*.example.com\"") orelse return null;
        for (host) |c| if (std.ascii.isUpper(c)) {
            const lower = std.ascii.allocLowerString(m.arena, host) catch host;
            m.problem(node.position, m.print("write the host in lowercase, \"{s}\" (a request's Host " ++
                "matches whatever its case)", .{lower}));
            return null;
        };
        if (hostMistake(host)) |message| {
            m.problem(node.position, message);
            return null;
        }
        return host;
    }

    fn pathPrefix(m: *Mapper, node: *const Node) ?[]const u8 {
        const prefix = m.string(node, "a path prefix such as \"/api/\"") orelse return null;
        // "*" is the asterisk-form target of `OPTIONS * HTTP/1.1` (RFC 9112 §3.2.4): no path
        // prefix matches it, so a route that wants it says so.
        if (std.mem.eql(u8, prefix, "*")) return prefix;
        if (prefix.len == 0 or prefix[0] != '/') {
            m.problem(node.position, "a path prefix starts with /, such as \"/api/\" (or is \"*\", for OPTIONS *)");
            return null;
        }
        for (prefix) |c| if (!chars.isTargetByte(c)) {
            m.problem(node.position, "a path prefix is visible ASCII, without spaces or #, as in a request line");
            return null;
        };
        // Requests are matched in their normal form (http/path.zig), so a prefix in another
        // form could never match: say which one to write.
        const normal_buffer = m.arena.alloc(u8, http_path.growth_factor_max * prefix.len) catch return prefix;
        const normal = http_path.normalize(prefix, normal_buffer);
        if (!std.mem.eql(u8, normal, prefix)) {
            m.problem(node.position, m.print("write the path prefix in normal form, \"{s}\" (requests are " ++
                "matched with dot segments removed, slashes merged and unreserved characters decoded)", .{normal}));
            return null;
        }
        return prefix;
    }

    /// `.{ .GET, .HEAD }` or `["GET", "HEAD"]`: exact, as methods are case-sensitive.
    fn methods(m: *Mapper, node: *const Node) ?u16 {
        const items = m.array(node, "methods such as .{ .GET, .HEAD }") orelse return null;
        if (items.len == 0) {
            m.problem(node.position, "no methods: omit methods to match any");
            return null;
        }
        var bits: u16 = 0;
        for (items) |*item| {
            const name = m.word(item) orelse {
                m.problem(item.position, "expected a method: one of " ++ method_names);
                continue;
            };
            const method = Method.parse(name);
            switch (method) {
                .connect => m.problem(item.position, "CONNECT cannot be routed: sluice never proxies it"),
                .other => m.problem(item.position, m.print("unknown method \"{s}\": expected one of " ++
                    method_names, .{name})),
                else => bits |= Config.methodBit(method),
            }
        }
        return bits;
    }

    const method_names = "GET, HEAD, POST, PUT, DELETE, OPTIONS, TRACE, PATCH";

    /// `.{ .status = 200, .content_type = "text/plain", .headers = .{ ... }, .body = "..." }`.
    fn respond(m: *Mapper, node: *const Node, result: *Config.Route) void {
        var entries = m.keyed(node, "respond", RespondKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .status => if (m.count(v, .{ .min = 200, .max = 599 })) |status| {
                    result.status = @intCast(status);
                },
                .content_type => result.content_type =
                    m.fieldValue(v, "a media type such as \"text/plain\"") orelse result.content_type,
                .headers => result.headers_text = m.headerLines(v) orelse result.headers_text,
                .body => result.body = m.string(v, "the response body") orelse result.body,
            }
        }
        // RFC 9110 §15.3.5 and §15.4.5: these responses end with their head.
        if (result.body.len > 0 and (result.status == 204 or result.status == 304)) {
            m.problem(node.position, "a 204 or 304 response has no body");
        }
    }

    const RespondKey = enum { status, content_type, headers, body };

    /// `.{ .location = "https://example.com/new", .status = 301, .keep_path = true }`, or to
    /// the request's own host: `.{ .scheme = "https", .port = 8443, .status = 308 }`.
    fn redirect(m: *Mapper, node: *const Node, result: *Config.Route) void {
        var entries = m.keyed(node, "redirect", RedirectKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .location => result.location = m.location(v) orelse result.location,
                .scheme => result.scheme = m.redirectScheme(v) orelse result.scheme,
                .port => if (m.count(v, .{ .min = 1, .max = 65535 })) |port| {
                    result.redirect_port = @intCast(port);
                },
                .status => if (m.count(v, .{ .min = 300, .max = 399 })) |status| {
                    result.status = @intCast(status);
                },
                .keep_path => result.keep_path = m.boolean(v) orelse result.keep_path,
            }
        }
        const seen = entries.seen;
        if (seen.contains(.location) and seen.contains(.scheme)) {
            m.problem(node.position, "a redirect takes .location or .scheme (to the request's own host), not both");
        } else if (!seen.contains(.location) and !seen.contains(.scheme)) {
            m.problem(node.position, "a redirect needs .location, or .scheme to redirect to the request's own host");
        } else if (seen.contains(.scheme) and seen.contains(.keep_path)) {
            m.problem(node.position, "a redirect with .scheme always keeps the path: .keep_path is for .location");
        } else if (seen.contains(.port) and !seen.contains(.scheme)) {
            m.problem(node.position, ".port is for a redirect with .scheme: write it in .location");
        }
    }

    const RedirectKey = enum { location, scheme, port, status, keep_path };

    fn redirectScheme(m: *Mapper, node: *const Node) ?[]const u8 {
        const text = m.string(node, "\"https\" or \"http\"") orelse return null;
        if (!Config.redirectSchemeValid(text)) {
            m.problem(node.position, "a redirect's scheme is \"https\" or \"http\"");
            return null;
        }
        return text;
    }

    fn location(m: *Mapper, node: *const Node) ?[]const u8 {
        const text = m.string(node, "a URL such as \"https://example.com/new\"") orelse return null;
        if (text.len == 0 or !Config.isVisible(text)) {
            m.problem(node.position, "a location is visible ASCII without spaces, such as \"https://example.com/new\"");
            return null;
        }
        return text;
    }

    /// `.{ .set = .{ .@"X-Frame-Options" = "DENY" }, .add = .{ ... }, .remove = .{"Server"} }`:
    /// each kind as lines of text in the arena (config/HeaderRules.zig). A name sluice owns, a
    /// value with a control byte or an unknown variable is a problem at its position.
    fn headerRules(m: *Mapper, node: *const Node, direction: HeaderRules.Direction) HeaderRules.Side {
        var side: HeaderRules.Side = .{};
        var entries = m.keyed(node, "header rules (.set, .add, .remove)", HeaderRulesKey) orelse return side;
        while (entries.next()) |entry| {
            switch (entry.key) {
                .set => side.set = m.headerRuleFields(entry.node, direction) orelse "",
                .add => side.add = m.headerRuleFields(entry.node, direction) orelse "",
                .remove => side.remove = m.headerRuleNames(entry.node, direction) orelse "",
            }
        }
        return side;
    }

    const HeaderRulesKey = enum { set, add, remove };

    fn headerRuleFields(m: *Mapper, node: *const Node, direction: HeaderRules.Direction) ?[]const u8 {
        const fields = m.object(node, "fields (name = value)") orelse return null;
        if (fields.len > HeaderRules.rules_count_max) {
            m.problem(node.position, std.fmt.comptimePrint("more than {d} fields", .{HeaderRules.rules_count_max}));
            return null;
        }
        var bytes: usize = 0;
        var valid = true;
        for (fields) |*field| {
            if (HeaderRules.nameMistake(direction, field.name)) |message| {
                m.problem(field.name_position, message);
                valid = false;
            }
            const value = m.string(&field.node, "a header field value") orelse {
                valid = false;
                continue;
            };
            if (HeaderRules.valueMistake(value)) |message| {
                m.problem(field.node.position, message);
                valid = false;
                continue;
            }
            bytes += field.name.len + ": ".len + value.len + "\r\n".len;
        }
        if (!valid) return null;
        return m.fieldLines(node, fields, bytes);
    }

    /// `fields` (checked) as `Name: value\r\n` lines, `bytes` long, in the arena.
    fn fieldLines(m: *Mapper, node: *const Node, fields: []const Field, bytes: usize) ?[]const u8 {
        const text = m.arena.alloc(u8, bytes) catch {
            m.problem(node.position, "out of memory");
            return null;
        };
        var w: std.Io.Writer = .fixed(text);
        for (fields) |*field| w.print("{s}: {s}\r\n", .{ field.name, field.node.value.string }) catch unreachable;
        assert(w.end == text.len);
        return text;
    }

    fn headerRuleNames(m: *Mapper, node: *const Node, direction: HeaderRules.Direction) ?[]const u8 {
        const items = m.array(node, "field names such as .{ \"Server\", \"X-Powered-By\" }") orelse return null;
        if (items.len > HeaderRules.rules_count_max) {
            m.problem(node.position, std.fmt.comptimePrint("more than {d} fields", .{HeaderRules.rules_count_max}));
            return null;
        }
        var bytes: usize = 0;
        var valid = true;
        for (items) |*item| {
            const name = m.string(item, "a header field name") orelse {
                valid = false;
                continue;
            };
            if (HeaderRules.nameMistake(direction, name)) |message| {
                m.problem(item.position, message);
                valid = false;
                continue;
            }
            bytes += name.len + "\r\n".len;
        }
        if (!valid) return null;
        const text = m.arena.alloc(u8, bytes) catch {
            m.problem(node.position, "out of memory");
            return null;
        };
        var w: std.Io.Writer = .fixed(text);
        for (items) |*item| w.print("{s}\r\n", .{item.value.string}) catch unreachable;
        assert(w.end == text.len);
        return text;
    }

    /// `.{ .@"Cache-Control" = "no-store" }`: rendered as `Name: value\r\n` lines, in file
    /// order, into the arena.
    fn headerLines(m: *Mapper, node: *const Node) ?[]const u8 {
        const fields = m.object(node, "headers (field name = value)") orelse return null;
        var bytes: usize = 0;
        var valid = true;
        for (fields) |*field| {
            const value = m.fieldValue(&field.node, "a header field value") orelse {
                valid = false;
                continue;
            };
            if (headerNameMistake(field.name)) |message| {
                m.problem(field.name_position, message);
                valid = false;
            }
            bytes += field.name.len + ": ".len + value.len + "\r\n".len;
        }
        if (!valid) return null;
        return m.fieldLines(node, fields, bytes);
    }

    /// Once the whole file is read: the pools and listeners routes name, and whether each
    /// local response fits in a connection buffer (`limits` may come after the routes).
    fn resolveRoutes(m: *Mapper) void {
        const config = m.config;
        const routes_count = config.routes_count;
        for (config.routes_buffer[0..routes_count], m.route_refs[0..routes_count]) |*result, *refs| {
            if (refs.pool) |node| result.pool = m.poolIndex(node) orelse 0;
            if (refs.handler) |node| result.handler = m.handlerIndex(node) orelse 0;
            if (refs.listeners) |node| result.listeners = m.listenerBits(node) orelse 0;
            if (result.action == .pool or result.action == .handler) continue;
            const node = refs.action orelse continue;
            const copied = result.requestBytesCopied(config);
            const bytes = result.localResponseBytes() + copied;
            if (bytes > config.bufferBytes()) {
                m.problem(node.position, m.print("this response takes up to {d} bytes{s}, more than " ++
                    "a connection buffer holds ({d}, from limits.header_bytes_max)", .{
                    bytes, if (copied > 0) " with what it copies from the request" else "", config.bufferBytes(),
                }));
            }
        }
    }

    fn poolIndex(m: *Mapper, node: *const Node) ?u16 {
        const name = m.word(node) orelse {
            m.problem(node.position, "expected a pool name");
            return null;
        };
        const index = indexOfName(Config.Pool, m.config.pools(), name) orelse {
            const known = m.namesOf(Config.Pool, m.config.pools(), "pools");
            m.problem(node.position, m.print("unknown pool \"{s}\": {s}", .{ name, known }));
            return null;
        };
        return @intCast(index);
    }

    fn handlerIndex(m: *Mapper, node: *const Node) ?u16 {
        const name = m.word(node) orelse {
            m.problem(node.position, "expected a handler name");
            return null;
        };
        return m.config.handlerIndex(name) orelse {
            const known = m.namesOf(Config.Handler, m.config.handlers(), "handlers");
            m.problem(node.position, m.print("unknown handler \"{s}\": {s} (a handler is declared in " ++
                ".handlers, or given with --handler-file NAME=FILE)", .{ name, known }));
            return null;
        };
    }

    /// `.{ .app = "app.js" }`: each handler's name and its JavaScript file.
    fn handlers(m: *Mapper, node: *const Node) void {
        const fields = m.object(node, "handlers (name = \"file.js\" or .{ .file = \"file.js\", limits })") orelse return;
        for (fields) |*field| {
            if (settings.handlerNameMistake(field.name)) |mistake| {
                m.problem(field.name_position, mistake);
                continue;
            }
            if (m.config.handlerIndex(field.name) != null) {
                m.problem(field.name_position, m.print("handler \"{s}\" is given twice", .{field.name}));
                continue;
            }
            var handler: Config.Handler = .{ .name = field.name, .path = "" };
            if (field.node.value == .object) {
                m.handlerObject(&field.node, &handler);
            } else {
                handler.path = m.handlerFile(&field.node) orelse continue;
            }
            if (handler.path.len == 0) continue; // Its problem is reported.
            m.config.setHandler(handler) catch {
                m.problem(field.name_position, std.fmt.comptimePrint("more than {d} handlers", .{Config.handlers_count_max}));
                return;
            };
        }
    }

    fn handlerFile(m: *Mapper, node: *const Node) ?[]const u8 {
        const path = m.string(node, "the handler's JavaScript file, such as \"app.js\"") orelse return null;
        if (path.len == 0) {
            m.problem(node.position, "expected the handler's JavaScript file, such as \"app.js\"");
            return null;
        }
        return path;
    }

    /// `.{ .file = "app.js", .memory = "4MiB", .deadline = "20ms", .depth = 256 }`: the file,
    /// and the limits the table's handler rows give (the rest keep their defaults).
    fn handlerObject(m: *Mapper, node: *const Node, handler: *Config.Handler) void {
        var entries = m.keyed(node, "a handler", HandlerKey) orelse return;
        while (entries.next()) |entry| {
            switch (entry.key) {
                .file => handler.path = m.handlerFile(entry.node) orelse "",
                inline else => |key| m.setting(comptime settings.lookup(.handler, @tagName(key)), handler, entry.node, {}),
            }
        }
        if (!entries.seen.contains(.file)) {
            m.problem(node.position, "a handler needs its file: .{ .file = \"app.js\" }");
        }
    }

    /// A handler object's keys: its file, then the settings the table's handler rows give.
    const HandlerKey = blk: {
        var names: []const [:0]const u8 = &.{"file"};
        for (settings.keysAt(.handler, "")) |key| names = names ++ [_][:0]const u8{std.fmt.comptimePrint("{s}", .{key.name})};
        break :blk @Enum(u8, .exhaustive, names, &std.simd.iota(u8, names.len));
    };

    /// Bit i for `listeners()[i]`, each named in the list.
    fn listenerBits(m: *Mapper, node: *const Node) ?u32 {
        const items = m.array(node, "listener names") orelse return null;
        if (items.len == 0) {
            m.problem(node.position, "no listeners: omit listeners to match every listener");
            return null;
        }
        const listeners_known = m.config.listeners();
        var bits: u32 = 0;
        for (items) |*item| {
            const name = m.word(item) orelse {
                m.problem(item.position, "expected a listener name");
                continue;
            };
            const index = indexOfName(Config.Listener, listeners_known, name) orelse {
                const known = m.namesOf(Config.Listener, listeners_known, "named listeners");
                m.problem(item.position, m.print("unknown listener \"{s}\": {s}", .{ name, known }));
                continue;
            };
            bits |= @as(u32, 1) << @intCast(index);
        }
        return bits;
    }

    /// "the pools are a, b" or "there are no pools", for a message about an unknown name.
    fn namesOf(m: *Mapper, comptime T: type, items: []const T, what: []const u8) []const u8 {
        var text: std.Io.Writer.Allocating = .init(m.arena);
        text.writer.print("the {s} are ", .{what}) catch return what;
        var named: u32 = 0;
        for (items) |*item| {
            if (item.name.len == 0) continue;
            text.writer.print("{s}{s}", .{ if (named == 0) "" else ", ", item.name }) catch return what;
            named += 1;
        }
        if (named == 0) return m.print("there are no {s}", .{what});
        return text.written();
    }

    // --- values ---------------------------------------------------------------------------

    fn object(m: *Mapper, node: *const Node, what: []const u8) ?[]const Field {
        if (node.value == .object) return node.value.object;
        m.problem(node.position, m.print("expected {s} as an object (.{{ .key = value }} in ZON, {{...}} in JSON)", .{what}));
        return null;
    }

    /// An array; ZON's empty `.{}` parses as an empty object and means an empty array here.
    fn array(m: *Mapper, node: *const Node, what: []const u8) ?[]const Node {
        switch (node.value) {
            .array => |items| return items,
            .object => |fields| if (fields.len == 0) return &.{},
            else => {},
        }
        m.problem(node.position, m.print("expected {s} as a list (.{{ a, b }} in ZON, [a, b] in JSON)", .{what}));
        return null;
    }

    fn string(m: *Mapper, node: *const Node, what: []const u8) ?[]const u8 {
        if (node.value == .string) return node.value.string;
        m.problem(node.position, m.print("expected a string: {s}", .{what}));
        return null;
    }

    /// A name other settings refer to (a route's listeners) or a metrics label: visible
    /// ASCII, from 1 to `bytes_max` bytes.
    fn label(m: *Mapper, node: *const Node, what: []const u8, bytes_max: u32) ?[]const u8 {
        const text = m.string(node, what) orelse return null;
        if (text.len == 0 or text.len > bytes_max or !Config.isVisible(text)) {
            m.problem(node.position, m.print("{s} is 1 to {d} bytes of visible ASCII without spaces", .{ what, bytes_max }));
            return null;
        }
        return text;
    }

    /// A string with its setting's own rule (settings.zig).
    fn checkedString(m: *Mapper, node: *const Node, comptime rule: settings.Text) ?[]const u8 {
        const value = m.string(node, rule.what) orelse return null;
        if (rule.check(value)) |mistake| {
            m.problem(node.position, mistake);
            return null;
        }
        return value;
    }

    /// A string that may follow `Name: ` in a header field sluice writes.
    fn fieldValue(m: *Mapper, node: *const Node, what: []const u8) ?[]const u8 {
        const text = m.string(node, what) orelse return null;
        if (!Config.isFieldValue(text)) {
            m.problem(node.position, "a header field value cannot hold control characters such as CR or LF");
            return null;
        }
        return text;
    }

    fn boolean(m: *Mapper, node: *const Node) ?bool {
        if (node.value == .bool) return node.value.bool;
        m.problem(node.position, "expected true or false");
        return null;
    }

    /// An enum literal or a string.
    fn word(m: *Mapper, node: *const Node) ?[]const u8 {
        _ = m;
        return switch (node.value) {
            .string => |text| text,
            .enum_literal => |text| text,
            else => null,
        };
    }

    fn enumeration(m: *Mapper, comptime E: type, node: *const Node) ?E {
        const names = comptime Config.enumNames(E);
        const text = m.word(node) orelse {
            m.problem(node.position, "expected one of " ++ names);
            return null;
        };
        return std.meta.stringToEnum(E, text) orelse {
            m.problem(node.position, m.print("unknown value \"{s}\": expected one of {s}", .{ text, names }));
            return null;
        };
    }

    fn count(m: *Mapper, node: *const Node, comptime bounds: settings.Bounds) ?u64 {
        const range = std.fmt.comptimePrint("expected a whole number from {d} to {d}", .{ bounds.min, bounds.max });
        if (node.value != .integer or node.value.integer < bounds.min or node.value.integer > bounds.max) {
            m.problem(node.position, range);
            return null;
        }
        return @intCast(node.value.integer);
    }

    /// A string with units (`"16KiB"`) or a plain number of bytes.
    fn size(m: *Mapper, node: *const Node, comptime bounds: settings.Bounds, comptime zero: ?[]const u8) ?u64 {
        const expected = "expected a size such as \"16KiB\"" ++ if (zero) |meaning| " (0: " ++ meaning ++ ")" else "";
        const bounded = bounds.max < std.math.maxInt(u64);
        const bytes: u64 = switch (node.value) {
            .integer => |n| if (n >= 0) @intCast(n) else if (bounded) bounds.max + 1 else {
                m.problem(node.position, expected);
                return null;
            },
            .string => |written| units.parseBytes(written) catch {
                m.problem(node.position, "invalid size: expected bytes, or a number with KiB, MiB or GiB such as \"16KiB\"");
                return null;
            },
            else => {
                m.problem(node.position, expected);
                return null;
            },
        };
        if (bytes < bounds.min or bytes > bounds.max) {
            m.problem(node.position, std.fmt.comptimePrint("size out of range: expected {d} to {d} bytes", .{ bounds.min, bounds.max }));
            return null;
        }
        return bytes;
    }

    /// `"500ms"`, `"10s"`, `"2m"`, `"1h"`. The unit is required: `"90"` could mean seconds
    /// as much as the milliseconds a bare number means on the command line.
    fn duration(m: *Mapper, node: *const Node) ?u64 {
        const text = m.string(node, "a duration such as \"500ms\", \"10s\" or \"2m\"") orelse return null;
        const ns = units.parseDurationNs(text, .unit_required) catch |err| {
            m.problem(node.position, switch (err) {
                error.MissingUnit => m.print("a duration needs its unit: \"{s}ms\", \"{s}s\" or \"{s}m\"", .{ text, text, text }),
                error.InvalidNumber, error.InvalidUnit, error.Overflow => "invalid duration: expected a number with ms, s, m or h, such as \"10s\"",
            });
            return null;
        };
        if (ns == 0) {
            m.problem(node.position, "a duration must be more than zero");
            return null;
        }
        return ns;
    }

    fn address(m: *Mapper, node: *const Node) ?Address {
        const text = m.string(node, "an address such as \"127.0.0.1:8080\"") orelse return null;
        return Address.parse(text) catch |err| {
            var buffer: [512]u8 = undefined;
            m.problem(node.position, m.print("{s}", .{Config.addressMistake(&buffer, text, err, Config.address_host_rule)}));
            return null;
        };
    }

    /// A backend's `"HOST:PORT"`: an IP address, localhost or a DNS name.
    fn backendAddress(m: *Mapper, node: *const Node) ?Config.Backend {
        const text = m.string(node, "an address such as \"10.0.0.1:8080\" or \"app.internal:8080\"") orelse return null;
        return Config.parseBackendAddress(m.arena, text) catch |err| {
            var buffer: [512]u8 = undefined;
            m.problem(node.position, m.print("{s}", .{Config.addressMistake(&buffer, text, err, Config.backend_host_rule)}));
            return null;
        };
    }

    // --- keys ------------------------------------------------------------------------------

    /// The fields of an object whose keys are `Key`'s tags, in file order. An unknown or a
    /// repeated key is reported (with what was expected) and skipped.
    fn keyed(m: *Mapper, node: *const Node, what: []const u8, comptime Key: type) ?KeyIterator(Key) {
        const fields = m.object(node, what) orelse return null;
        return .{ .mapper = m, .fields = fields };
    }

    fn KeyIterator(comptime Key: type) type {
        return struct {
            mapper: *Mapper,
            fields: []const Field,
            index: usize = 0,
            seen: std.EnumSet(Key) = .empty,

            fn next(it: *@This()) ?struct { key: Key, node: *const Node, name_position: Position } {
                while (it.index < it.fields.len) {
                    const field = &it.fields[it.index];
                    it.index += 1;
                    const m = it.mapper;
                    const key = std.meta.stringToEnum(Key, field.name) orelse {
                        m.problem(field.name_position, m.print("unknown key \"{s}\": expected one of {s}", .{
                            field.name, comptime Config.enumNames(Key),
                        }));
                        continue;
                    };
                    if (it.seen.contains(key)) {
                        m.problem(field.name_position, m.print("\"{s}\" is given twice", .{field.name}));
                        continue;
                    }
                    it.seen.insert(key);
                    return .{ .key = key, .node = &field.node, .name_position = field.name_position };
                }
                return null;
            }
        };
    }

    fn problem(m: *Mapper, position: Position, message: []const u8) void {
        m.problems.add(position, message);
    }

    fn print(m: *Mapper, comptime fmt: []const u8, args: anytype) []const u8 {
        return std.fmt.allocPrint(m.arena, fmt, args) catch "(out of memory describing the problem)";
    }
};

/// A number within its setting's bounds into its field (optional for a route's setting).
fn storeNumber(field: anytype, n: u64) void {
    const F = @typeInfo(@TypeOf(field)).pointer.child;
    if (@typeInfo(F) == .optional) field.* = @as(@typeInfo(F).optional.child, @intCast(n)) else field.* = @intCast(n);
}

fn keyIndex(comptime keys: []const settings.Key, comptime name: []const u8) usize {
    for (keys, 0..) |key, i| if (std.mem.eql(u8, key.name, name)) return i;
    @compileError("no key " ++ name);
}

/// Whether `key` is directly in the object at `prefix` (not in a section under it).
fn isDirectKey(comptime prefix: []const u8, comptime key: []const u8) bool {
    return std.mem.startsWith(u8, key, prefix) and std.mem.indexOfScalar(u8, key[prefix.len..], '.') == null;
}

/// Routes name listeners by it; as short as a pool's name, which is a metrics label.
const listener_name_bytes_max = 64;

/// The index of the item called `name` (unnamed items never match).
fn indexOfName(comptime T: type, items: []const T, name: []const u8) ?usize {
    if (name.len == 0) return null;
    for (items, 0..) |*item, i| {
        if (std.mem.eql(u8, item.name, name)) return i;
    }
    return null;
}

/// Why a route's host (already lowercase) could never match a request's Host, if it could not.
fn hostMistake(host: []const u8) ?[]const u8 {
    const wildcard = "a wildcard is \"*.\" and a suffix, such as \"*.example.com\"";
    if (host.len == 0) return "an empty host: omit host to match any";
    if (host.len > Config.rewrite_host_bytes_max) {
        return std.fmt.comptimePrint("a host has at most {d} bytes", .{Config.rewrite_host_bytes_max});
    }
    if (!Config.isVisible(host)) return "a host is visible ASCII without spaces";
    const name = if (std.mem.startsWith(u8, host, "*.")) host[2..] else host;
    if (name.len == 0 or std.mem.indexOfScalar(u8, name, '*') != null) return wildcard;
    if (name[name.len - 1] == '.') return "write the host without its trailing dot (a Host's is ignored)";
    // An IP literal (`[::1]`) has colons; anything else with one names a port.
    if (name[0] != '[' and std.mem.indexOfScalar(u8, name, ':') != null) {
        return "write the host without a port (a Host's port is ignored)";
    }
    return null;
}

/// Why a respond route may not carry this header field, if it may not.
fn headerNameMistake(name: []const u8) ?[]const u8 {
    if (name.len == 0) return "a header field name cannot be empty";
    for (name) |c| if (!chars.isTchar(c)) {
        return "a header field name is a token: letters, digits and !#$%&'*+-.^_`|~";
    };
    // sluice frames the response itself; a second framing field would contradict it.
    const framing = [_][]const u8{ "Content-Length", "Transfer-Encoding", "Connection" };
    for (framing) |field| if (std.ascii.eqlIgnoreCase(name, field)) {
        return "sluice writes Content-Length, Transfer-Encoding and Connection itself";
    };
    if (std.ascii.eqlIgnoreCase(name, "Content-Type")) return "give the content type as .content_type";
    return null;
}
