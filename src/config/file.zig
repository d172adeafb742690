//! A config file, ZON or JSON, onto the one schema (`Config`). The parsers (zon.zig, json.zig)
//! turn the text into a tree whose every value knows its line and column; this file maps
//! that tree onto `Config` and collects every mistake with its position and what was
//! expected, instead of stopping at the first, so `sluice check` shows them all at once.
//! Unknown keys are mistakes, never ignored: a typo must not silently fall back to a default.
//!
//! The file's shape follows the command line's names, grouped (see docs/CONFIG.md):
//! `listen`, `workers`, `io`, `limits`, `timeouts`, `trusted_proxies`, `pools`, `admin`. One pool per
//! file for now: routes to several pools are not implemented yet, and a second pool is
//! reported as such rather than accepted and ignored.
//!
//! Strings in the resulting Config (names, paths) point into `arena`, which must live as long
//! as the Config.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Address = @import("../stdx/Address.zig").Address;
const sys = @import("../stdx/sys.zig");
const Config = @import("Config.zig");
const Cidr = @import("Cidr.zig");
const units = @import("units.zig");
const tree = @import("tree.zig");
const zon = @import("zon.zig");
const json = @import("json.zig");

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
    if (!problems.ok()) return error.Invalid;
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

fn validateMessage(err: Config.ValidateError) []const u8 {
    return switch (err) {
        error.NoBackends => "no backends: a pool needs at least one",
        error.HeaderBytesTooSmall => "limits.header_bytes_max is below 1KiB",
        error.HeaderBytesTooLarge => "limits.header_bytes_max is above 1MiB",
        error.TargetBytesTooLarge => "limits.target_bytes_max must be below limits.header_bytes_max",
        error.ConnectionsTooFew => "limits.max_connections must be at least 1",
        error.TimeoutZero => "a timeout is zero",
        error.HashNameMissing => "hash on a header or cookie needs its name",
        error.HealthStatusRange => "health.status must be LOW-HIGH within 100-599",
        error.HealthPathNotAbsolute => "health.path must start with /",
        error.HealthThresholdZero => "health.rise and health.fall must be at least 1",
        error.TriesZero => "retry.tries must be at least 1",
        error.PercentOver100 => "a percentage is above 100",
        error.NameTooLong => "a name or path is too long",
        error.HealthTextInvalid => "health.path and health.host must be visible ASCII without spaces",
    };
}

/// Walks the tree, filling `config` and adding a problem for each mistake. A wrong value
/// leaves the default in place and the walk goes on, so later mistakes are found too.
const Mapper = struct {
    arena: std.mem.Allocator,
    problems: *Problems,
    config: *Config,

    fn root(m: *Mapper, node: *const Node) void {
        var entries = m.keyed(node, "the top level", TopKey) orelse return;
        const config = m.config;
        while (entries.next()) |entry| {
            const value = entry.node;
            switch (entry.key) {
                .listen => config.listen = m.address(value) orelse config.listen,
                .workers => config.workers_count = m.count(u32, value, 1, Config.workers_count_max) orelse 0,
                .io => config.io = m.enumeration(Config.IoMode, value) orelse config.io,
                .limits => m.limits(value),
                .timeouts => m.timeouts(value),
                .trusted_proxies => m.trustedProxies(value),
                .pools => m.pools(value),
                .admin => m.admin(value),
                .access_log => m.accessLog(value),
            }
        }
    }

    const TopKey = enum { listen, workers, io, limits, timeouts, trusted_proxies, pools, admin, access_log };

    /// The section's presence turns the admin listener on; `.listen` defaults to loopback.
    fn admin(m: *Mapper, node: *const Node) void {
        const settings = &m.config.admin;
        var entries = m.keyed(node, "admin", AdminKey) orelse return;
        settings.enabled = true;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .listen => settings.listen = m.address(v) orelse settings.listen,
            }
        }
    }

    fn accessLog(m: *Mapper, node: *const Node) void {
        const settings = &m.config.access_log;
        var entries = m.keyed(node, "access_log", AccessLogKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .target => settings.target = m.string(v, "\"stdout\" or a file path") orelse settings.target,
                .format => settings.format = m.enumeration(Config.AccessLogFormat, v) orelse settings.format,
            }
        }
    }

    const AccessLogKey = enum { target, format };

    const AdminKey = enum { listen };

    fn limits(m: *Mapper, node: *const Node) void {
        const config = m.config;
        var entries = m.keyed(node, "limits", LimitKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .max_connections => config.connections_max = m.count(u32, v, 1, 1 << 20) orelse config.connections_max,
                .header_bytes_max => config.header_bytes_max = m.size(v, 1024, 1024 * 1024) orelse config.header_bytes_max,
                .headers_count_max => config.headers_count_max = m.count(u16, v, 8, 1024) orelse config.headers_count_max,
                .target_bytes_max => config.target_bytes_max = m.size(v, 64, 1024 * 1024) orelse config.target_bytes_max,
            }
        }
    }

    const LimitKey = enum { max_connections, header_bytes_max, headers_count_max, target_bytes_max };

    fn timeouts(m: *Mapper, node: *const Node) void {
        const config = m.config;
        var entries = m.keyed(node, "timeouts", TimeoutKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .client_header => config.client_header_timeout_ns = m.duration(v) orelse config.client_header_timeout_ns,
                .client_idle => config.client_idle_timeout_ns = m.duration(v) orelse config.client_idle_timeout_ns,
                .drain => config.drain_timeout_ns = m.duration(v) orelse config.drain_timeout_ns,
            }
        }
    }

    const TimeoutKey = enum { client_header, client_idle, drain };

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

    fn pools(m: *Mapper, node: *const Node) void {
        const fields = m.object(node, "pools (an object of named pools)") orelse return;
        if (fields.len == 0) return m.problem(node.position, "no pools: expected one named pool");
        const name = fields[0].name;
        if (name.len > Config.pool_name_bytes_max) {
            m.problem(fields[0].name_position, std.fmt.comptimePrint("a pool name has at most {d} bytes", .{Config.pool_name_bytes_max}));
        } else {
            m.config.pool.name = name;
        }
        m.pool(&fields[0].node);
        for (fields[1..]) |*extra| {
            m.problem(extra.name_position, "only one pool per config is supported in this version " ++
                "(routing between pools is not implemented yet)");
        }
    }

    fn pool(m: *Mapper, node: *const Node) void {
        const p = &m.config.pool;
        var entries = m.keyed(node, "a pool", PoolKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .backends => m.backends(v),
                .strategy => p.strategy = m.enumeration(Config.Strategy, v) orelse p.strategy,
                .hash => m.hash(v),
                .sticky_cookie => p.sticky_cookie = m.string(v, "a cookie name") orelse p.sticky_cookie,
                .health => m.health(v),
                .ejection => m.ejection(v),
                .retry => m.retry(v),
                .timeouts => m.poolTimeouts(v),
                .keepalive => p.keepalive_max = m.count(u32, v, 0, 4096) orelse p.keepalive_max,
            }
        }
    }

    const PoolKey = enum { backends, strategy, hash, sticky_cookie, health, ejection, retry, timeouts, keepalive };

    fn backends(m: *Mapper, node: *const Node) void {
        const items = m.array(node, "backends") orelse return;
        for (items) |*item| {
            const parsed = m.backend(item) orelse continue;
            m.config.pool.addBackend(parsed) catch {
                m.problem(item.position, std.fmt.comptimePrint("more than {d} backends", .{Config.backends_count_max}));
                return;
            };
        }
    }

    /// `"ADDR"`, or `.{ .address = "ADDR", .weight = N, .max_connections = N, .max_pending = N }`.
    fn backend(m: *Mapper, node: *const Node) ?Config.Backend {
        if (node.value == .string) return .{ .address = m.address(node) orelse return null };
        var entries = m.keyed(node, "a backend: \"HOST:PORT\" or an object with .address", BackendKey) orelse return null;
        var result: Config.Backend = .{ .address = undefined };
        var has_address = false;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .address => if (m.address(v)) |parsed| {
                    result.address = parsed;
                    has_address = true;
                },
                .weight => result.weight = m.count(u16, v, 0, 1000) orelse result.weight,
                .max_connections => result.max_connections = m.count(u32, v, 0, 1 << 20) orelse 0,
                .max_pending => result.max_pending = m.count(u32, v, 0, 1 << 20) orelse 0,
            }
        }
        if (!has_address) {
            m.problem(node.position, "a backend needs .address");
            return null;
        }
        return result;
    }

    const BackendKey = enum { address, weight, max_connections, max_pending };

    fn hash(m: *Mapper, node: *const Node) void {
        const p = &m.config.pool;
        var entries = m.keyed(node, "hash", HashKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .on => p.hash_on = m.enumeration(Config.HashOn, v) orelse p.hash_on,
                .name => p.hash_name = m.string(v, "a header or cookie name") orelse p.hash_name,
            }
        }
    }

    const HashKey = enum { on, name };

    fn health(m: *Mapper, node: *const Node) void {
        const h = &m.config.pool.health;
        var entries = m.keyed(node, "health", HealthKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .path => h.path = m.string(v, "a path such as \"/healthz\"") orelse h.path,
                .method => h.method = m.enumeration(@TypeOf(h.method), v) orelse h.method,
                .host => h.host = m.string(v, "a Host value") orelse h.host,
                .interval => h.interval_ns = m.duration(v) orelse h.interval_ns,
                .timeout => h.timeout_ns = m.duration(v) orelse h.timeout_ns,
                .status => m.statusRange(v),
                .rise => h.rise = m.count(u8, v, 1, 100) orelse h.rise,
                .fall => h.fall = m.count(u8, v, 1, 100) orelse h.fall,
            }
        }
    }

    const HealthKey = enum { path, method, host, interval, timeout, status, rise, fall };

    fn statusRange(m: *Mapper, node: *const Node) void {
        const h = &m.config.pool.health;
        const text = m.string(node, "a status range such as \"200-399\"") orelse return;
        const dash = std.mem.indexOfScalar(u8, text, '-');
        const low = std.fmt.parseInt(u16, if (dash) |d| text[0..d] else text, 10) catch 0;
        const high = std.fmt.parseInt(u16, if (dash) |d| text[d + 1 ..] else text, 10) catch 0;
        if (low < 100 or high > 599 or low > high) {
            return m.problem(node.position, "invalid status range: expected LOW-HIGH within 100-599, such as \"200-399\"");
        }
        h.status_min = low;
        h.status_max = high;
    }

    fn ejection(m: *Mapper, node: *const Node) void {
        const o = &m.config.pool.outlier;
        var entries = m.keyed(node, "ejection", EjectionKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .after => o.consecutive_failures = m.count(u32, v, 0, 1000) orelse o.consecutive_failures,
                .on => o.on = m.failureKinds(v) orelse o.on,
                .time => o.ejection_ns = m.duration(v) orelse o.ejection_ns,
                .time_max => o.ejection_max_ns = m.duration(v) orelse o.ejection_max_ns,
                .max_percent => o.max_ejected_percent = m.count(u8, v, 0, 100) orelse o.max_ejected_percent,
            }
        }
    }

    const EjectionKey = enum { after, on, time, time_max, max_percent };

    fn retry(m: *Mapper, node: *const Node) void {
        const r = &m.config.pool.retry;
        var entries = m.keyed(node, "retry", RetryKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .tries => r.tries_max = m.count(u8, v, 1, 10) orelse r.tries_max,
                .on => r.on = m.failureKinds(v) orelse r.on,
                .budget_percent => r.budget_percent = m.count(u8, v, 0, 100) orelse r.budget_percent,
            }
        }
    }

    const RetryKey = enum { tries, on, budget_percent };

    fn poolTimeouts(m: *Mapper, node: *const Node) void {
        const p = &m.config.pool;
        var entries = m.keyed(node, "timeouts", PoolTimeoutKey) orelse return;
        while (entries.next()) |entry| {
            const v = entry.node;
            switch (entry.key) {
                .connect => p.connect_timeout_ns = m.duration(v) orelse p.connect_timeout_ns,
                .response => p.response_timeout_ns = m.duration(v) orelse p.response_timeout_ns,
                .body => p.body_timeout_ns = m.duration(v) orelse p.body_timeout_ns,
                .total => p.total_timeout_ns = m.duration(v) orelse p.total_timeout_ns,
                .idle => p.idle_timeout_ns = m.duration(v) orelse p.idle_timeout_ns,
            }
        }
    }

    const PoolTimeoutKey = enum { connect, response, body, total, idle };

    /// `.{ .connect, .reset }` or `["connect", "reset"]`; `5xx` as `.@"5xx"` or `"5xx"`.
    fn failureKinds(m: *Mapper, node: *const Node) ?Config.FailureKinds {
        const items = m.array(node, "a list of connect, reset, timeout, 5xx") orelse return null;
        var kinds: Config.FailureKinds = .none;
        for (items) |*item| {
            const name = m.word(item) orelse {
                m.problem(item.position, "expected one of connect, reset, timeout, 5xx");
                continue;
            };
            if (std.mem.eql(u8, name, "connect")) {
                kinds.connect = true;
            } else if (std.mem.eql(u8, name, "reset")) {
                kinds.reset = true;
            } else if (std.mem.eql(u8, name, "timeout")) {
                kinds.timeout = true;
            } else if (std.mem.eql(u8, name, "5xx")) {
                kinds.status_5xx = true;
            } else {
                m.problem(item.position, "unknown failure kind: expected one of connect, reset, timeout, 5xx");
            }
        }
        return kinds;
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

    fn count(m: *Mapper, comptime T: type, node: *const Node, min: T, max: T) ?T {
        const range = m.print("expected a whole number from {d} to {d}", .{ min, max });
        if (node.value != .integer) {
            m.problem(node.position, range);
            return null;
        }
        const n = node.value.integer;
        if (n < min or n > max) {
            m.problem(node.position, range);
            return null;
        }
        return @intCast(n);
    }

    /// A string with units ("16KiB") or a plain number of bytes.
    fn size(m: *Mapper, node: *const Node, min: u32, max: u32) ?u32 {
        const bytes: u64 = switch (node.value) {
            .integer => |n| if (n < 0) max + 1 else @intCast(n),
            .string => |text| units.parseBytes(text) catch {
                m.problem(node.position, "invalid size: expected bytes, or a number with KiB or MiB such as \"16KiB\"");
                return null;
            },
            else => {
                m.problem(node.position, "expected a size such as \"16KiB\"");
                return null;
            },
        };
        if (bytes < min or bytes > max) {
            m.problem(node.position, m.print("size out of range: expected {d} to {d} bytes", .{ min, max }));
            return null;
        }
        return @intCast(bytes);
    }

    fn duration(m: *Mapper, node: *const Node) ?u64 {
        const text = m.string(node, "a duration such as \"500ms\", \"10s\" or \"2m\"") orelse return null;
        const ns = units.parseDurationNs(text) catch {
            m.problem(node.position, "invalid duration: expected a number with ms, s or m, such as \"10s\"");
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
        return Address.parse(text) catch {
            m.problem(node.position, "invalid address: expected HOST:PORT where HOST is an IP address or localhost");
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

            fn next(it: *@This()) ?struct { key: Key, node: *const Node } {
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
                    return .{ .key = key, .node = &field.node };
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

// ---------------------------------------------------------------------------------------------

const testing = std.testing;

fn expectProblems(source: [:0]const u8, format: Format, expected: []const struct { line: u32, column: u32, contains: []const u8 }) !void {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    try testing.expectError(error.Invalid, parseSource(arena_state.allocator(), source, format, &config, &problems));
    try testing.expectEqual(expected.len, problems.count);
    for (expected, problems.slice()) |want, got| {
        try testing.expectEqual(want.line, got.position.line);
        try testing.expectEqual(want.column, got.position.column);
        if (std.mem.indexOf(u8, got.message, want.contains) == null) {
            std.debug.print("message \"{s}\" lacks \"{s}\"\n", .{ got.message, want.contains });
            return error.TestUnexpectedResult;
        }
    }
}

const example_zon =
    \\.{
    \\    .listen = "127.0.0.1:8080",
    \\    .workers = 2,
    \\    .io = .epoll,
    \\    .limits = .{ .max_connections = 1000, .header_bytes_max = "32KiB" },
    \\    .timeouts = .{ .client_idle = "30s" },
    \\    .trusted_proxies = .{"10.0.0.0/8"},
    \\    .admin = .{ .listen = "127.0.0.1:9901" },
    \\    .pools = .{
    \\        .app = .{
    \\            .backends = .{ "10.0.0.5:9000", .{ .address = "10.0.0.6:9000", .weight = 3, .max_connections = 100 } },
    \\            .strategy = .hash,
    \\            .hash = .{ .on = .header, .name = "X-User" },
    \\            .health = .{ .path = "/healthz", .interval = "1s", .status = "200-299" },
    \\            .ejection = .{ .after = 3, .on = .{ .connect, .@"5xx" } },
    \\            .retry = .{ .tries = 2, .on = .{.connect} },
    \\            .timeouts = .{ .connect = "1s", .total = "30s" },
    \\        },
    \\    },
    \\}
;

test "config file: a full ZON file fills the schema" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(), example_zon, .zon, &config, &problems);
    try testing.expectEqual(@as(u32, 2), config.workers_count);
    try testing.expectEqual(Config.IoMode.epoll, config.io);
    try testing.expectEqual(@as(u32, 32 * 1024), config.header_bytes_max);
    try testing.expectEqual(@as(u64, 30 * std.time.ns_per_s), config.client_idle_timeout_ns);
    try testing.expectEqual(@as(u32, 1), config.trusted_proxies_count);
    try testing.expect(config.admin.enabled);
    try testing.expect(config.admin.listen.eql(&Config.default_admin_listen));
    const pool = &config.pool;
    try testing.expectEqualStrings("app", pool.name);
    try testing.expectEqual(@as(u32, 2), pool.backends_count);
    try testing.expectEqual(@as(u16, 3), pool.backends()[1].weight);
    try testing.expectEqual(Config.Strategy.hash, pool.strategy);
    try testing.expectEqualStrings("X-User", pool.hash_name);
    try testing.expectEqual(@as(u16, 299), pool.health.status_max);
    try testing.expect(pool.outlier.on.status_5xx and !pool.outlier.on.reset);
    try testing.expectEqual(@as(u8, 2), pool.retry.tries_max);
    try testing.expectEqual(@as(u64, 30 * std.time.ns_per_s), pool.total_timeout_ns);
}

test "config file: JSON maps onto the same schema" {
    const source =
        \\{"listen": "127.0.0.1:8080", "io": "epoll",
        \\ "pools": {"app": {"backends": ["10.0.0.5:9000", {"address": "10.0.0.6:9000", "weight": 3}],
        \\   "strategy": "least_conn", "ejection": {"on": ["reset", "5xx"]}}}}
    ;
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(), source, .json, &config, &problems);
    try testing.expectEqual(Config.Strategy.least_conn, config.pool.strategy);
    try testing.expect(!config.admin.enabled); // No section: no admin listener.
    try testing.expectEqual(@as(u32, 2), config.pool.backends_count);
    try testing.expect(config.pool.outlier.on.status_5xx and !config.pool.outlier.on.connect);
}

test "config file: every mistake is reported with its line and column" {
    try expectProblems(
        \\.{
        \\    .listen = "nowhere",
        \\    .wokers = 2,
        \\    .limits = .{ .max_connections = 0 },
        \\    .pools = .{
        \\        .app = .{
        \\            .backends = .{"10.0.0.5:9000"},
        \\            .strategy = .fastest,
        \\            .timeouts = .{ .connect = "soon" },
        \\            .retry = .{ .tries = 2, .tries = 3 },
        \\        },
        \\        .other = .{},
        \\    },
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 15, .contains = "invalid address" },
        .{ .line = 3, .column = 5, .contains = "unknown key \"wokers\"" },
        .{ .line = 4, .column = 37, .contains = "from 1 to" },
        .{ .line = 8, .column = 25, .contains = "expected one of round_robin" },
        .{ .line = 9, .column = 39, .contains = "invalid duration" },
        .{ .line = 10, .column = 37, .contains = "given twice" },
        .{ .line = 12, .column = 9, .contains = "only one pool" },
    });
}

test "config file: an admin section turns the listener on; its mistakes are positioned" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    const source =
        \\{"admin": {}, "pools": {"p": {"backends": ["10.0.0.5:9000"]}}}
    ;
    try parseSource(arena_state.allocator(), source, .json, &config, &problems);
    try testing.expect(config.admin.enabled);
    try testing.expect(config.admin.listen.eql(&Config.default_admin_listen));
    try testing.expectEqualStrings("p", config.pool.name);
    try expectProblems(
        \\.{
        \\    .admin = .{ .listen = "nowhere", .port = 9901 },
        \\    .pools = .{ .@"a-pool-name-that-is-longer-than-sixty-four-bytes-which-no-label-needs" = .{
        \\        .backends = .{"10.0.0.5:9000"},
        \\    } },
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 27, .contains = "invalid address" },
        .{ .line = 2, .column = 38, .contains = "unknown key \"port\": expected one of listen" },
        .{ .line = 3, .column = 17, .contains = "at most 64 bytes" },
    });
}

test "config file: syntax errors and semantic checks name their place" {
    try expectProblems("{\"pools\": {\"app\": {\"backends\": [\"1.2.3.4:80\"],}}}", .json, &.{
        .{ .line = 1, .column = 47, .contains = "" },
    });
    try expectProblems(
        \\.{ .pools = .{ .app = .{ .backends = .{} } } }
    , .zon, &.{
        .{ .line = 1, .column = 1, .contains = "no backends" },
    });
}
