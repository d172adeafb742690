//! The command line: `sluice [flags]`, `sluice demo [flags]`, `sluice check FILE`,
//! `sluice reload`, `sluice settings`, `--help`, `--version`.
//! Flags fill the same `Config` a config file does. Each flag is a row of the settings table
//! (settings.zig), which gives its name, the kind of value it takes, its bounds and its help,
//! so the command line, config files and `--help` cannot disagree. A mistake yields one
//! `Diagnostic` naming the flag; main prints it as one line and exits 2, the usual code for a
//! usage error.
const std = @import("std");
const assert = std.debug.assert;
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("Config.zig");
const Cidr = @import("Cidr.zig");
const HeaderRules = @import("HeaderRules.zig");
const units = @import("units.zig");
const settings = @import("settings.zig");
const Setting = settings.Setting;
const help = @import("help.zig");

pub const Command = enum { run, demo, check, reload, settings, help, version };

pub const Parsed = struct {
    command: Command,
    config: Config,
    /// `--config FILE` (run), or the FILE of `sluice check FILE`.
    config_path: ?[]const u8 = null,
    /// `--pid-file PATH`: written by a running instance, read by `sluice reload`.
    pid_file: ?[]const u8 = null,
    /// `sluice reload --admin ADDR`: the admin listener to ask.
    reload_admin: ?Address = null,
};

/// What went wrong, for one line on stderr: `sluice: {flag}: {message}`.
pub const Diagnostic = struct {
    flag: []const u8 = "",
    message_buffer: [256]u8 = undefined,
    message_len: usize = 0,

    pub fn message(diagnostic: *const Diagnostic) []const u8 {
        return diagnostic.message_buffer[0..diagnostic.message_len];
    }

    fn set(diagnostic: *Diagnostic, flag: []const u8, comptime fmt: []const u8, args: anytype) error{Usage} {
        diagnostic.flag = flag;
        const text = std.fmt.bufPrint(&diagnostic.message_buffer, fmt, args) catch
            diagnostic.message_buffer[0..];
        diagnostic.message_len = text.len;
        return error.Usage;
    }
};

/// The text of `sluice --help`, written from the settings table (help.zig).
pub const usage = help.usage;
/// The text of `sluice settings`.
pub const settings_listing = help.listing;

/// A flag's row in `settings.table`.
const Flag = struct { index: u16, takes_value: bool };

/// `--max-connections` to its row. A backend's options are not flags: `--backend` reads them.
const flags = blk: {
    @setEvalBranchQuota(100_000);
    const Pair = struct { []const u8, Flag };
    var pairs: []const Pair = &.{};
    for (settings.table, 0..) |setting, i| {
        if (!isFlag(setting)) continue;
        const flag: Flag = .{ .index = i, .takes_value = setting.value != .switch_ and setting.value != .boolean };
        pairs = pairs ++ [_]Pair{.{ "--" ++ setting.flag.?, flag }};
    }
    break :blk std.StaticStringMap(Flag).initComptime(pairs);
};

fn isFlag(comptime setting: settings.Setting) bool {
    return setting.flag != null and setting.scope != .backend;
}

/// `args` excludes argv[0]. Backend lists go into `arena` (Config.Pool.backends_list).
pub fn parse(arena: std.mem.Allocator, args: []const []const u8, diagnostic: *Diagnostic) error{Usage}!Parsed {
    return parseOnto(arena, args, .{}, diagnostic);
}

/// Applies the flags in `args` over `base`: the defaults, or what a `--config` file set (main
/// loads the file, then parses again onto it, so flags override the file).
pub fn parseOnto(arena: std.mem.Allocator, args: []const []const u8, base: Config, diagnostic: *Diagnostic) error{Usage}!Parsed {
    var parsed: Parsed = .{ .command = .run, .config = base };
    try parseInPlace(arena, args, &parsed, diagnostic);
    return parsed;
}

/// `parseOnto` without a copy: `parsed` holds the base (command `.run`, no paths) and the
/// flags are applied onto it. A `Parsed` is ~55 KB, and a frame that holds one costs a page
/// fault per page at start-up (the stack probe touches them all), so main parses into its
/// static one with this (docs/ARCHITECTURE.md, "Start-up").
pub fn parseInPlace(arena: std.mem.Allocator, args: []const []const u8, parsed: *Parsed, diagnostic: *Diagnostic) error{Usage}!void {
    assert(parsed.command == .run and parsed.config_path == null);
    const base_pools_count = parsed.config.pools_count;
    // --help and --version answer even when other arguments are wrong.
    for (args) |arg| {
        if (std.mem.eql(u8, arg, "--help") or std.mem.eql(u8, arg, "-h")) {
            parsed.command = .help;
            return;
        }
        if (std.mem.eql(u8, arg, "--version")) {
            parsed.command = .version;
            return;
        }
    }
    var i: usize = 0;
    if (args.len > 0 and std.mem.eql(u8, args[0], "demo")) {
        parsed.command = .demo;
        i = 1;
    }
    if (args.len > 0 and std.mem.eql(u8, args[0], "reload")) return parseReload(args[1..], parsed, diagnostic);
    if (args.len > 0 and std.mem.eql(u8, args[0], "check")) {
        if (args.len != 2) return diagnostic.set("check", "expected exactly one FILE: sluice check FILE", .{});
        parsed.command = .check;
        parsed.config_path = args[1];
        return;
    }
    if (args.len > 0 and std.mem.eql(u8, args[0], "settings")) {
        if (args.len != 1) return diagnostic.set("settings", "takes no arguments: sluice settings", .{});
        parsed.command = .settings;
        return;
    }
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        const eq = std.mem.indexOfScalar(u8, arg, '=');
        const name = if (eq) |e| arg[0..e] else arg;
        const flag = flags.get(name) orelse {
            if (!std.mem.startsWith(u8, arg, "-")) {
                return diagnostic.set(arg, "unexpected argument (see --help)", .{});
            }
            return diagnostic.set(name, "unknown flag (see --help)", .{});
        };
        if (!flag.takes_value) {
            if (eq != null) return diagnostic.set(name, "takes no value", .{});
            // `--trace-init` is a switch main reads before anything else, so that the trace
            // covers parsing too (runtime/InitTrace.zig); the others turn a setting on.
            turnOn(parsed, flag.index);
            continue;
        }
        const value = if (eq) |e| arg[e + 1 ..] else blk: {
            i += 1;
            if (i == args.len) return diagnostic.set(name, "missing value", .{});
            break :blk args[i];
        };
        try apply(arena, parsed, flag.index, name, value, diagnostic);
    }
    try checkTlsPairs(&parsed.config, diagnostic);
    const from_file = parsed.config_path != null and base_pools_count == 0;
    const backends_count = if (parsed.config.pools_count == 0) 0 else parsed.config.pools()[0].backends_count;
    if (parsed.command == .run and backends_count == 0 and !from_file and parsed.config.handler.len == 0) {
        return diagnostic.set("--backend", "at least one backend is required (or --handler, or try `sluice demo`)", .{});
    }
    if (parsed.config.handler.len > 0 and parsed.config.handlerIndex(parsed.config.handler) == null) {
        return diagnostic.set("--handler", "no handler \"{s}\": give its file with --handler-file {s}=FILE", .{
            parsed.config.handler, parsed.config.handler,
        });
    }
    inline for (settings.relations) |relation| {
        if (relation.scope != .global) continue;
        if (settings.breaks(relation, &parsed.config)) {
            const below = "--" ++ comptime settings.lookup(.global, relation.below).flag.?;
            const limit = "--" ++ comptime settings.lookup(.global, relation.limit).flag.?;
            return diagnostic.set(below, "must be smaller than " ++ limit, .{});
        }
    }
    for (parsed.config.pools()) |*pool| {
        if (pool.health.path.len == 0 and (pool.health.host.len > 0)) {
            return diagnostic.set("--health-host", "needs --health-path (active checks are off without it)", .{});
        }
    }
}

/// `sluice reload --pid-file PATH` or `sluice reload --admin ADDR`.
/// The config in `parsed` is left as it was: `reload` does not read it.
fn parseReload(args: []const []const u8, parsed: *Parsed, diagnostic: *Diagnostic) error{Usage}!void {
    parsed.command = .reload;
    var i: usize = 0;
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        const eq = std.mem.indexOfScalar(u8, arg, '=');
        const name = if (eq) |e| arg[0..e] else arg;
        const value = if (eq) |e| arg[e + 1 ..] else blk: {
            i += 1;
            if (i == args.len) return diagnostic.set(name, "missing value", .{});
            break :blk args[i];
        };
        if (std.mem.eql(u8, name, "--pid-file")) {
            parsed.pid_file = value;
        } else if (std.mem.eql(u8, name, "--admin")) {
            parsed.reload_admin = try parseAddress(name, value, diagnostic);
        } else {
            return diagnostic.set(name, "sluice reload takes --pid-file PATH or --admin ADDR", .{});
        }
    }
    if ((parsed.pid_file == null) == (parsed.reload_admin == null)) {
        return diagnostic.set("reload", "expected exactly one of --pid-file PATH or --admin ADDR", .{});
    }
}

/// Applies the flag of row `index`: a flag that takes a value (see `flags`).
fn apply(arena: std.mem.Allocator, parsed: *Parsed, index: u16, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (index) {
        inline 0...settings.table.len - 1 => |i| {
            const setting = settings.table[i];
            if (comptime !isFlag(setting) or setting.value == .switch_ or setting.value == .boolean) unreachable; // Not in `flags`.
            return applyFlag(setting, arena, parsed, name, value, diagnostic);
        },
        else => unreachable,
    }
}

/// A flag of a `.boolean` row: the setting is on (nothing for a `.switch_`).
fn turnOn(parsed: *Parsed, index: u16) void {
    switch (index) {
        inline 0...settings.table.len - 1 => |i| {
            const setting = settings.table[i];
            if (comptime setting.value != .boolean or setting.flag == null) return;
            comptime assert(setting.scope == .global); // The only scope of such flags so far.
            settings.fieldPointer(setting.field(), &parsed.config).* = true;
        },
        else => unreachable,
    }
}

fn applyFlag(comptime setting: Setting, arena: std.mem.Allocator, parsed: *Parsed, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (setting.scope) {
        // Not settings: paths main reads.
        .command_line => if (comptime std.mem.eql(u8, setting.flag.?, "config")) {
            if (parsed.command == .demo) return diagnostic.set(name, "the demo has its own backends", .{});
            parsed.config_path = value;
        } else {
            comptime assert(std.mem.eql(u8, setting.flag.?, "pid-file"));
            if (value.len == 0) return diagnostic.set(name, "expected a file path", .{});
            parsed.pid_file = value;
        },
        .global => try applyValue(setting, arena, &parsed.config, name, value, diagnostic),
        .pool => {
            const pool = parsed.config.quickPool() orelse return diagnostic.set(
                name,
                "the config file has several pools: set this in the file, per pool",
                .{},
            );
            try applyValue(setting, arena, pool, name, value, diagnostic);
        },
        .backend, .route, .handler => comptime unreachable, // Not flags.
    }
}

/// Parses `value` as the row says and stores it in `target` (a Config, Pool or Backend).
fn applyValue(comptime setting: Setting, arena: std.mem.Allocator, target: anytype, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (setting.value) {
        .count => |bounds| settings.fieldPointer(setting.field(), target).* =
            @intCast(try parseCount(name, value, bounds, diagnostic)),
        .size => |bounds| settings.fieldPointer(setting.field(), target).* =
            @intCast(try parseSize(name, value, bounds, diagnostic)),
        .duration => settings.fieldPointer(setting.field(), target).* = try parseDuration(name, value, diagnostic),
        .enumeration => |E| settings.fieldPointer(setting.field(), target).* = try parseEnum(E, name, value, diagnostic),
        .text => |text| {
            if (text.check(value)) |mistake| {
                return diagnostic.set(name, "invalid value \"{s}\": {s}", .{ value, mistake });
            }
            settings.fieldPointer(setting.field(), target).* = value;
        },
        .failure_kinds => settings.fieldPointer(setting.field(), target).* = try parseFailureKinds(name, value, diagnostic),
        .status_range => |bounds| {
            const range = settings.parseStatusRange(value, bounds) orelse return diagnostic.set(
                name,
                "invalid range \"{s}\": expected LOW-HIGH within {d}-{d}, such as {s}",
                .{ value, bounds.min, bounds.max, setting.default.? },
            );
            settings.fieldPointer(setting.fields[0], target).* = range.min;
            settings.fieldPointer(setting.fields[1], target).* = range.max;
        },
        .structure => |structure| try applyStructure(structure, arena, target, name, value, diagnostic),
        .switch_, .boolean, .path => comptime unreachable, // Take no value: see `turnOn`.
    }
}

/// The settings with structure that have a flag; the others are only in files.
fn applyStructure(comptime structure: settings.Structure, arena: std.mem.Allocator, target: anytype, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (structure) {
        .listen => target.setListener(try parseAddress(name, value, diagnostic)),
        .trusted_proxies => {
            const cidr = Cidr.parse(value) catch
                return diagnostic.set(name, "invalid value \"{s}\": expected ADDRESS or ADDRESS/BITS", .{value});
            target.addTrustedProxy(cidr) catch
                return diagnostic.set(name, "more than {d} trusted proxies", .{Config.trusted_proxies_count_max});
        },
        .resolvers => target.addResolver(value) catch |err| return switch (err) {
            error.TooMany => diagnostic.set(name, "more than {d} resolvers", .{Config.resolvers_count_max}),
            error.Invalid => diagnostic.set(name, "invalid resolver \"{s}\": expected IP or IP:PORT", .{value}),
        },
        .admin => target.admin = .{ .enabled = true, .listen = try parseAddress(name, value, diagnostic) },
        .backends => target.addBackend(arena, try parseBackend(arena, name, value, diagnostic)) catch |err| switch (err) {
            error.TooMany => return diagnostic.set(name, "more than {d} backends", .{Config.backends_count_max}),
            error.OutOfMemory => return diagnostic.set(name, "out of memory", .{}),
        },
        .hash => {
            const key = settings.parseHashKey(value) catch |err| switch (err) {
                error.InvalidHashKey => return diagnostic.set(name, "invalid value \"{s}\": expected ip, path, header:NAME or cookie:NAME", .{value}),
                error.InvalidName => {
                    const key_name = value[std.mem.indexOfScalar(u8, value, ':').? + 1 ..];
                    const mistake = settings.hashNameMistake(key_name).?;
                    return diagnostic.set(name, "invalid value \"{s}\": {s}", .{ value, mistake });
                },
            };
            target.hash_on = key.on;
            target.hash_name = key.name;
        },
        .handlers => {
            const eq = std.mem.indexOfScalar(u8, value, '=') orelse
                return diagnostic.set(name, "invalid value \"{s}\": expected NAME=FILE, such as app=app.js", .{value});
            const handler_name = value[0..eq];
            if (handler_name.len == 0) return diagnostic.set(name, "invalid value \"{s}\": the NAME before = is missing", .{value});
            if (settings.handlerNameMistake(handler_name)) |mistake| {
                return diagnostic.set(name, "invalid name \"{s}\": {s}", .{ handler_name, mistake });
            }
            if (eq + 1 == value.len) return diagnostic.set(name, "invalid value \"{s}\": the FILE after = is missing", .{value});
            target.setHandler(.{ .name = handler_name, .path = value[eq + 1 ..] }) catch
                return diagnostic.set(name, "more than {d} handlers", .{Config.handlers_count_max});
        },
        .tls_cert => target.cli_tls.addCertificate(.{ .cert = value }) catch
            return diagnostic.set(name, "more than {d} certificates", .{Config.certificates_count_max}),
        .tls_key => {
            const t = &target.cli_tls;
            if (t.certificates_count == 0 or t.certificates_buffer[t.certificates_count - 1].key.len > 0) {
                return diagnostic.set(name, "\"{s}\" has no --tls-cert before it: give --tls-cert FILE --tls-key FILE", .{value});
            }
            t.certificates_buffer[t.certificates_count - 1].key = value;
        },
        .upstream_tls => target.tls = try parseUpstreamTls(name, value, diagnostic),
        .cli_request_header => try addHeaderRule(target, .request_set, name, value, diagnostic),
        .cli_response_header => try addHeaderRule(target, .response_set, name, value, diagnostic),
        .cli_remove_response_header => try addHeaderRule(target, .response_remove, name, value, diagnostic),
        .allow => target.access.allow = try appendCidr(arena, target.access.allow, name, value, diagnostic),
        .deny => target.access.deny = try appendCidr(arena, target.access.deny, name, value, diagnostic),
        .listeners, .pools, .routes, .backend_address, .request_headers, .response_headers, .strip_prefix => comptime unreachable, // Files only.
    }
}

/// `--allow CIDR`, `--deny CIDR`: the block checked, then added to the list's text.
fn appendCidr(arena: std.mem.Allocator, list: []const u8, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}![]const u8 {
    _ = Cidr.parse(value) catch
        return diagnostic.set(name, "invalid value \"{s}\": expected ADDRESS or ADDRESS/BITS", .{value});
    return Config.Access.append(arena, list, value) catch diagnostic.set(name, "out of memory", .{});
}

/// `--request-header 'NAME: VALUE'` and the others, checked as a file's rules are.
fn addHeaderRule(config: *Config, kind: Config.CliHeaderRule.Kind, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!void {
    switch (kind) {
        .request_set, .response_set => switch (HeaderRules.parseFlagField(if (kind == .request_set) .request else .response, value)) {
            .field => {},
            .mistake => |mistake| return diagnostic.set(name, "invalid value \"{s}\": {s}", .{ value, mistake }),
        },
        .response_remove => if (HeaderRules.nameMistake(.response, value)) |mistake| {
            return diagnostic.set(name, "invalid value \"{s}\": {s}", .{ value, mistake });
        },
    }
    config.addCliHeaderRule(.{ .kind = kind, .text = value }) catch
        return diagnostic.set(name, "more than {d} header rules on the command line", .{HeaderRules.rules_count_max});
}

/// Each `--tls-cert` needs its `--tls-key` after it.
fn checkTlsPairs(config: *const Config, diagnostic: *Diagnostic) error{Usage}!void {
    for (config.cli_tls.certificates()) |*certificate| {
        if (certificate.key.len == 0) {
            return diagnostic.set("--tls-cert", "\"{s}\" needs its private key: --tls-key FILE after it", .{certificate.cert});
        }
    }
}

/// `ADDR[,weight=N][,max-conns=N][,max-pending=N]`: the options are the backend rows.
fn parseBackend(arena: std.mem.Allocator, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Config.Backend {
    var parts = std.mem.splitScalar(u8, value, ',');
    const address_text = parts.first();
    var backend = Config.parseBackendAddress(arena, address_text) catch |err|
        return backendAddressMistake(name, address_text, err, diagnostic);
    next: while (parts.next()) |part| {
        const eq = std.mem.indexOfScalar(u8, part, '=') orelse
            return diagnostic.set(name, "invalid option \"{s}\": " ++ backend_options, .{part});
        inline for (settings.table) |setting| {
            if (setting.scope == .backend and setting.flag != null) {
                if (std.mem.eql(u8, part[0..eq], setting.flag.?)) {
                    try applyValue(setting, arena, &backend, name, part[eq + 1 ..], diagnostic);
                    continue :next;
                }
            }
        }
        return diagnostic.set(name, "invalid option \"{s}\": " ++ backend_options, .{part});
    }
    return backend;
}

/// `on`, `off`, or options `ca=FILE,server-name=NAME,cert=FILE,key=FILE,verify=on|off` (TLS
/// on, each option over the defaults): the keys of a file's `.tls`, spelled as flags are.
fn parseUpstreamTls(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Config.UpstreamTls {
    if (std.mem.eql(u8, value, "off")) return .{};
    var result: Config.UpstreamTls = .{ .enabled = true };
    if (std.mem.eql(u8, value, "on")) return result;
    var parts = std.mem.splitScalar(u8, value, ',');
    while (parts.next()) |part| {
        const eq = std.mem.indexOfScalar(u8, part, '=') orelse
            return diagnostic.set(name, "invalid option \"{s}\": " ++ upstream_tls_options, .{part});
        const key = part[0..eq];
        const option = part[eq + 1 ..];
        if (option.len == 0) return diagnostic.set(name, "invalid option \"{s}\": the value after = is missing", .{part});
        if (std.mem.eql(u8, key, "verify")) {
            const verify = std.meta.stringToEnum(enum { on, off }, option) orelse
                return diagnostic.set(name, "invalid option \"{s}\": expected verify=on or verify=off", .{part});
            result.verify = verify == .on;
        } else if (std.mem.eql(u8, key, "ca")) {
            result.ca = option;
        } else if (std.mem.eql(u8, key, "server-name")) {
            if (Config.serverNameMistake(option)) |why| return diagnostic.set(name, "invalid option \"{s}\": {s}", .{ part, why });
            result.server_name = option;
        } else if (std.mem.eql(u8, key, "cert")) {
            result.client_cert = option;
        } else if (std.mem.eql(u8, key, "key")) {
            result.client_key = option;
        } else return diagnostic.set(name, "invalid option \"{s}\": " ++ upstream_tls_options, .{part});
    }
    if (result.mistake()) |why| return diagnostic.set(name, "{s}", .{why});
    return result;
}

const upstream_tls_options = "expected on, off, or ca=FILE, server-name=NAME, cert=FILE, key=FILE, verify=on|off";

/// "expected weight=N, max-conns=N or max-pending=N".
const backend_options = blk: {
    var options: []const []const u8 = &.{};
    for (settings.table) |setting| {
        if (setting.scope == .backend and setting.flag != null) {
            options = options ++ [_][]const u8{setting.flag.? ++ "=" ++ setting.argName()};
        }
    }
    var text: []const u8 = "expected ";
    for (options, 0..) |option, i| {
        const separator = if (i == 0) "" else if (i + 1 == options.len) " or " else ", ";
        text = text ++ separator ++ option;
    }
    break :blk text;
};

/// A comma-separated subset of connect, reset, timeout, 5xx (empty: none).
fn parseFailureKinds(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Config.FailureKinds {
    var kinds: Config.FailureKinds = .none;
    if (value.len == 0) return kinds;
    var parts = std.mem.splitScalar(u8, value, ',');
    while (parts.next()) |part| settings.failureKind(&kinds, part) catch
        return diagnostic.set(name, "invalid kind \"{s}\": expected a list of " ++ settings.failure_kind_names, .{part});
    return kinds;
}

fn parseEnum(comptime E: type, name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!E {
    if (std.meta.stringToEnum(E, value)) |tag| return tag;
    const names = comptime Config.enumNames(E);
    return diagnostic.set(name, "invalid value \"{s}\": expected one of {s}", .{ value, names });
}

fn parseAddress(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!Address {
    return Address.parse(value) catch |err| {
        var buffer: [512]u8 = undefined;
        return diagnostic.set(name, "{s}", .{Config.addressMistake(&buffer, value, err, Config.address_host_rule)});
    };
}

fn backendAddressMistake(name: []const u8, value: []const u8, err: Config.BackendAddressError, diagnostic: *Diagnostic) error{Usage} {
    var buffer: [512]u8 = undefined;
    return diagnostic.set(name, "{s}", .{Config.addressMistake(&buffer, value, err, Config.backend_host_rule)});
}

fn parseCount(name: []const u8, value: []const u8, bounds: settings.Bounds, diagnostic: *Diagnostic) error{Usage}!u64 {
    const expected = "invalid value \"{s}\": expected a whole number from {d} to {d}";
    const n = std.fmt.parseInt(u64, value, 10) catch
        return diagnostic.set(name, expected, .{ value, bounds.min, bounds.max });
    if (n < bounds.min or n > bounds.max) return diagnostic.set(name, expected, .{ value, bounds.min, bounds.max });
    return n;
}

fn parseSize(name: []const u8, value: []const u8, bounds: settings.Bounds, diagnostic: *Diagnostic) error{Usage}!u64 {
    const bytes = units.parseBytes(value) catch
        return diagnostic.set(name, "invalid size \"{s}\": expected bytes, or a number with KiB, MiB or GiB", .{value});
    if (bytes < bounds.min or bytes > bounds.max) {
        return diagnostic.set(name, "invalid size \"{s}\": expected from {d} to {d} bytes", .{ value, bounds.min, bounds.max });
    }
    return bytes;
}

fn parseDuration(name: []const u8, value: []const u8, diagnostic: *Diagnostic) error{Usage}!u64 {
    const ns = units.parseDurationNs(value, .milliseconds) catch
        return diagnostic.set(name, "invalid duration \"{s}\": expected e.g. 500ms, 10s or 2m", .{value});
    if (ns == 0) return diagnostic.set(name, "invalid duration \"{s}\": must be more than zero", .{value});
    return ns;
}

/// The tests' backend lists, left to the process (a few hundred bytes).
const test_arena = std.heap.page_allocator;

test "cli: --tls-cert and --tls-key pairs serve the --listen listener; a key needs its certificate" {
    var diagnostic: Diagnostic = .{};
    const parsed = try parse(test_arena, &.{
        "--tls-cert", "a.pem", "--tls-key", "a.key", "--listen",  "127.0.0.1:0",
        "--tls-cert", "b.pem", "--tls-key", "b.key", "--backend", "127.0.0.1:9001",
    }, &diagnostic);
    const t = parsed.config.listenerTls(0).?;
    try std.testing.expectEqual(@as(usize, 2), t.certificates().len);
    try std.testing.expectEqualStrings("b.key", t.certificates()[1].key);
    const cases = [_]struct { args: []const []const u8, contains: []const u8 }{
        .{ .args = &.{ "--backend", "127.0.0.1:1", "--tls-key", "a.key" }, .contains = "has no --tls-cert before it" },
        .{ .args = &.{ "--backend", "127.0.0.1:1", "--tls-cert", "a.pem" }, .contains = "needs its private key" },
        .{ .args = &.{ "--backend", "127.0.0.1:1", "--tls-cert", "a.pem", "--tls-key", "a.key", "--tls-key", "b.key" }, .contains = "has no --tls-cert before it" },
    };
    for (cases) |case| {
        try std.testing.expectError(error.Usage, parse(test_arena, case.args, &diagnostic));
        try std.testing.expect(std.mem.indexOf(u8, diagnostic.message(), case.contains) != null);
    }
}

test "cli: quick mode fills the config" {
    var diagnostic: Diagnostic = .{};
    const parsed = try parse(test_arena, &.{
        "--listen",  "127.0.0.1:0",     "--backend=127.0.0.1:9001",
        "--backend", "[::1]:9002",      "--workers",
        "2",         "--io=epoll",      "--client-header-timeout",
        "1500ms",    "--trusted-proxy", "10.0.0.0/8",
        "--admin",   "127.0.0.1:0",
    }, &diagnostic);
    try std.testing.expectEqual(Command.run, parsed.command);
    try std.testing.expectEqual(@as(u32, 2), parsed.config.pools()[0].backends_count);
    try std.testing.expectEqual(@as(u32, 2), parsed.config.workers_count);
    try std.testing.expectEqual(Config.IoMode.epoll, parsed.config.io);
    try std.testing.expectEqual(@as(u64, 1500 * std.time.ns_per_ms), parsed.config.client_header_timeout_ns);
    try std.testing.expectEqual(@as(u32, 1), parsed.config.trusted_proxies_count);
    try std.testing.expect(parsed.config.admin.enabled);
    try std.testing.expectEqual(@as(u16, 0), parsed.config.admin.listen.getPort());
    try std.testing.expectEqualStrings("default", parsed.config.pools()[0].name);
    try parsed.config.validate();
}

test "cli: --backend-tls is on, off, or the options of a file's tls" {
    var diagnostic: Diagnostic = .{};
    var parsed = try parse(test_arena, &.{ "--backend", "localhost:8443", "--backend-tls", "on" }, &diagnostic);
    const pool = &parsed.config.pools()[0];
    try std.testing.expect(pool.tls.enabled and pool.tls.verify and pool.tls.ca.len == 0);
    try std.testing.expectEqualStrings("localhost", pool.backends()[0].host_name);
    parsed = try parse(test_arena, &.{ "--backend", "10.0.0.5:443", "--backend-tls", "ca=ca.pem,server-name=api.internal,cert=c.pem,key=c.key" }, &diagnostic);
    const tls = parsed.config.pools()[0].tls;
    try std.testing.expectEqualStrings("ca.pem", tls.ca);
    try std.testing.expectEqualStrings("api.internal", tls.server_name);
    try std.testing.expectEqualStrings("c.key", tls.client_key);
    parsed = try parse(test_arena, &.{ "--backend", "10.0.0.5:443", "--backend-tls", "verify=off" }, &diagnostic);
    try std.testing.expect(parsed.config.pools()[0].tls.enabled and !parsed.config.pools()[0].tls.verify);
    for ([_][]const u8{ "yes", "ca=", "cert=c.pem", "verify=off,ca=x", "server-name=a b", "port=1" }) |bad| {
        try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "10.0.0.5:443", "--backend-tls", bad }, &diagnostic));
        try std.testing.expectEqualStrings("--backend-tls", diagnostic.flag);
    }
}

test "cli: each mistake names its flag" {
    const cases = [_]struct { args: []const []const u8, flag: []const u8 }{
        .{ .args = &.{}, .flag = "--backend" },
        .{ .args = &.{ "--backend", "nonsense" }, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--listen", "999.1.1.1:80" }, .flag = "--listen" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--workers", "0" }, .flag = "--workers" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--io", "bogus" }, .flag = "--io" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--bogus" }, .flag = "--bogus" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--drain-timeout", "0s" }, .flag = "--drain-timeout" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--header-bytes-max", "1MB" }, .flag = "--header-bytes-max" },
        .{ .args = &.{"--backend"}, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--admin", "9901" }, .flag = "--admin" },
    };
    for (cases) |case| {
        var diagnostic: Diagnostic = .{};
        try std.testing.expectError(error.Usage, parse(test_arena, case.args, &diagnostic));
        try std.testing.expectEqualStrings(case.flag, diagnostic.flag);
        try std.testing.expect(diagnostic.message().len > 0);
    }
}

test "cli: balancing, health and retry flags fill the pool" {
    var diagnostic: Diagnostic = .{};
    const parsed = try parse(test_arena, &.{
        "--backend",                "127.0.0.1:9001,weight=3,max-conns=10",
        "--backend",                "127.0.0.1:9002,weight=0",
        "--strategy",               "hash",
        "--hash-key",               "cookie:session",
        "--health-path",            "/healthz",
        "--health-status",          "200-204",
        "--eject-on",               "reset,5xx",
        "--retry-on",               "connect",
        "--tries",                  "2",
        "--upstream-total-timeout", "30s",
    }, &diagnostic);
    const pool = &parsed.config.pools()[0];
    try std.testing.expectEqual(@as(u16, 3), pool.backends()[0].weight);
    try std.testing.expectEqual(@as(u32, 10), pool.backends()[0].max_connections);
    try std.testing.expectEqual(@as(u16, 0), pool.backends()[1].weight);
    try std.testing.expectEqual(Config.Strategy.hash, pool.strategy);
    try std.testing.expectEqual(Config.HashOn.cookie, pool.hash_on);
    try std.testing.expectEqualStrings("session", pool.hash_name);
    try std.testing.expect(pool.health.enabled());
    try std.testing.expectEqual(@as(u16, 204), pool.health.status_max);
    try std.testing.expect(pool.outlier.on.status_5xx and pool.outlier.on.reset and !pool.outlier.on.connect);
    try std.testing.expect(pool.retry.on.connect and !pool.retry.on.reset);
    try std.testing.expectEqual(@as(u8, 2), pool.retry.tries_max);
    try std.testing.expectEqual(@as(u64, 30 * std.time.ns_per_s), pool.total_timeout_ns);
    try parsed.config.validate();
}

test "cli: balancing mistakes name their flag" {
    const cases = [_]struct { args: []const []const u8, flag: []const u8 }{
        .{ .args = &.{ "--backend", "1.2.3.4:1,weight=1001" }, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1,colour=red" }, .flag = "--backend" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--strategy", "fastest" }, .flag = "--strategy" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--hash-key", "header:" }, .flag = "--hash-key" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--health-path", "healthz" }, .flag = "--health-path" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--health-status", "300-200" }, .flag = "--health-status" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--eject-on", "reset,slow" }, .flag = "--eject-on" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--tries", "0" }, .flag = "--tries" },
        .{ .args = &.{ "--backend", "1.2.3.4:1", "--health-host", "h" }, .flag = "--health-host" },
    };
    for (cases) |case| {
        var diagnostic: Diagnostic = .{};
        try std.testing.expectError(error.Usage, parse(test_arena, case.args, &diagnostic));
        try std.testing.expectEqualStrings(case.flag, diagnostic.flag);
    }
}

test "cli: demo needs no backend; help and version win" {
    var diagnostic: Diagnostic = .{};
    try std.testing.expectEqual(Command.demo, (try parse(test_arena, &.{"demo"}, &diagnostic)).command);
    try std.testing.expectEqual(Command.help, (try parse(test_arena, &.{ "--bogus=1", "--help" }, &diagnostic)).command);
}

test "cli: a backend's caps take 0 (no cap), as in a file" {
    // The command line used to refuse max-conns=0 and max-pending=0 while a file took them;
    // both read the backend rows of settings.zig now.
    var diagnostic: Diagnostic = .{};
    const parsed = try parse(test_arena, &.{ "--backend", "127.0.0.1:9001,max-conns=0,max-pending=0,weight=0" }, &diagnostic);
    const backend = parsed.config.pools()[0].backends()[0];
    try std.testing.expectEqual(@as(u32, 0), backend.max_connections);
    try std.testing.expectEqual(@as(u32, 0), backend.max_pending);
    try std.testing.expectEqual(@as(u16, 0), backend.weight);
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001,max-conns=1048577" }, &diagnostic));
    try std.testing.expectEqualStrings("invalid value \"1048577\": expected a whole number from 0 to 1048576", diagnostic.message());
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001,colour=red" }, &diagnostic));
    try std.testing.expectEqualStrings("invalid option \"colour=red\": expected weight=N, max-conns=N or max-pending=N", diagnostic.message());
}

test "cli: names and hosts follow the same rules as in a file" {
    var diagnostic: Diagnostic = .{};
    // A Host with an IPv6 literal and a port is a valid probe Host (it used to be refused here).
    const parsed = try parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--health-path", "/h", "--health-host", "[::1]:8080" }, &diagnostic);
    try std.testing.expectEqualStrings("[::1]:8080", parsed.config.pools()[0].health.host);
    // A cookie or header name is a token: no `:` (it used to pass here and broke Set-Cookie).
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--sticky-cookie", "a:b" }, &diagnostic));
    try std.testing.expectEqualStrings("--sticky-cookie", diagnostic.flag);
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--hash-key", "header:a:b" }, &diagnostic));
    try std.testing.expectEqualStrings("invalid value \"header:a:b\": a header or cookie name is 1 to 255 letters, digits or !#$%&'*+-.^_`|~", diagnostic.message());
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--health-path", "h" }, &diagnostic));
    try std.testing.expectEqualStrings("invalid value \"h\": a health path starts with /, such as \"/healthz\"", diagnostic.message());
}

test "cli: every flag of the table is parsed, and a switch takes no value" {
    var diagnostic: Diagnostic = .{};
    inline for (settings.table) |setting| {
        if (comptime isFlag(setting)) try std.testing.expect(flags.get("--" ++ setting.flag.?) != null);
    }
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--trace-init=1" }, &diagnostic));
    _ = try parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--trace-init" }, &diagnostic);
    try std.testing.expectEqual(Command.settings, (try parse(test_arena, &.{"settings"}, &diagnostic)).command);
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "settings", "x" }, &diagnostic));
}

test "cli: --proxy-protocol turns it on for --listen, takes no value, and a listener's own wins" {
    var diagnostic: Diagnostic = .{};
    var parsed = try parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--listen", ":0" }, &diagnostic);
    try std.testing.expect(!parsed.config.listenerProxyProtocol(0));
    parsed = try parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--listen", ":0", "--proxy-protocol" }, &diagnostic);
    try std.testing.expect(parsed.config.listenerProxyProtocol(0));
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--proxy-protocol=on" }, &diagnostic));
    try std.testing.expectEqualStrings("takes no value", diagnostic.message());
    parsed.config.listeners_buffer[0].proxy_protocol = false;
    try std.testing.expect(!parsed.config.listenerProxyProtocol(0));
}

test "cli: the relation between the head and target limits names both flags" {
    var diagnostic: Diagnostic = .{};
    try std.testing.expectError(error.Usage, parse(test_arena, &.{ "--backend", "127.0.0.1:9001", "--header-bytes-max", "4KiB" }, &diagnostic));
    try std.testing.expectEqualStrings("--target-bytes-max", diagnostic.flag);
    try std.testing.expectEqualStrings("must be smaller than --header-bytes-max", diagnostic.message());
}
