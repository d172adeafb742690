//! The settings table's tests (settings.zig): one row per Config field, defaults as Config's
//! and within bounds, enumerations and objects as the help and files write them.
const std = @import("std");
const Config = @import("Config.zig");
const settings = @import("settings.zig");
const Scope = settings.Scope;
const Target = settings.Target;
const fileDefault = settings.fileDefault;
const lookup = settings.lookup;
const namesText = settings.namesText;
const outOfRange = settings.outOfRange;
const parseFailureKinds = settings.parseFailureKinds;
const table = settings.table;
const FieldAt = settings.FieldAt;
const Relation = settings.Relation;
const StatusRange = settings.StatusRange;
const keysAt = settings.keysAt;
const brokenRelation = settings.brokenRelation;
const defaultOf = settings.defaultOf;
const parseStatusRange = settings.parseStatusRange;
const fieldPointer = settings.fieldPointer;
const parseHashKey = settings.parseHashKey;
const cookieNameMistake = settings.cookieNameMistake;
const healthPathMistake = settings.healthPathMistake;
const healthHostMistake = settings.healthHostMistake;

const testing = std.testing;

/// Fields that are not settings: a pool's name is its key in `pools`; the retry budget's
/// per-second floor is fixed; a route's conditions and action belong to the `routes` parser.
const structure_fields = .{
    .{ .global, "cli_header_rules_buffer" },
    .{ .global, "cli_header_rules_count" },
    .{ .pool, "name" },
    .{ .pool, "retry.budget_min_per_second" },
    .{ .route, "name" },
    .{ .route, "listeners" },
    .{ .route, "host" },
    .{ .route, "path_prefix" },
    .{ .route, "methods" },
    .{ .route, "action" },
    .{ .route, "pool" },
    .{ .route, "handler" },
    .{ .route, "status" },
    .{ .route, "location" },
    .{ .route, "keep_path" },
    .{ .route, "scheme" },
    .{ .route, "redirect_port" },
    .{ .route, "content_type" },
    .{ .route, "headers_text" },
    .{ .route, "body" },
    // Not a setting: a pool instance's copy's slots when it has names (runtime/Dns.zig).
    .{ .pool, "member_slots" },
    .{ .handler, "name" },
    .{ .handler, "path" },
    .{ .handler, "image" },
    .{ .handler, "source" },
};

fn isStructureField(comptime scope: Scope, comptime path: []const u8) bool {
    inline for (structure_fields) |entry| {
        if (entry[0] == scope and std.mem.eql(u8, entry[1], path)) return true;
    }
    return false;
}

/// How many rows set this field, or one of the structs it is in (`admin` sets `admin.listen`).
fn rowsSetting(comptime scope: Scope, comptime path: []const u8) u32 {
    var count: u32 = 0;
    inline for (table) |setting| {
        if (setting.scope != scope) continue;
        inline for (setting.fields) |name| {
            if (comptime covers(name, path)) count += 1;
        }
    }
    return count;
}

fn covers(comptime name: []const u8, comptime path: []const u8) bool {
    if (std.mem.eql(u8, name, path)) return true;
    return path.len > name.len and std.mem.startsWith(u8, path, name) and path[name.len] == '.';
}

/// Every leaf field of `T` (nested structs walked, except packed ones and `Address`), dotted.
fn expectEachFieldOneRow(comptime scope: Scope, comptime T: type, comptime prefix: []const u8) !void {
    inline for (@typeInfo(T).@"struct".field_names, @typeInfo(T).@"struct".field_types) |name, F| {
        const path = prefix ++ name;
        const nested = @typeInfo(F) == .@"struct" and @typeInfo(F).@"struct".layout != .@"packed" and
            F != Config.Address;
        const count = rowsSetting(scope, path);
        if (isStructureField(scope, path)) {
            try testing.expectEqual(@as(u32, 0), count);
        } else if (nested and count == 0) {
            try expectEachFieldOneRow(scope, F, path ++ ".");
        } else {
            if (count != 1) std.debug.print("{s} field {s}: {d} rows\n", .{ @tagName(scope), path, count });
            try testing.expectEqual(@as(u32, 1), count);
        }
    }
}

test "settings: every Config field that is a setting has exactly one row" {
    try expectEachFieldOneRow(.global, Config, "");
    try expectEachFieldOneRow(.pool, Config.Pool, "");
    try expectEachFieldOneRow(.backend, Config.Backend, "");
    try expectEachFieldOneRow(.route, Config.Route, "");
    try expectEachFieldOneRow(.handler, Config.Handler, "");
}

fn expectDefaults(comptime scope: Scope, target: *const Target(scope)) !void {
    inline for (table) |setting| {
        if (setting.scope != scope) continue;
        inline for (setting.fields) |path| {
            const F = FieldAt(Target(scope), path);
            const simple = switch (setting.value) {
                .structure => |s| s == .hash,
                else => true,
            };
            if (simple) {
                const expected = comptime defaultOf(F, setting, path);
                const actual = fieldPointer(path, target).*;
                const equal = switch (@typeInfo(F)) {
                    .pointer => std.mem.eql(u8, expected, actual),
                    else => std.meta.eql(expected, actual),
                };
                if (!equal) std.debug.print("{s} field {s}: not the row's default\n", .{ @tagName(scope), path });
                try testing.expect(equal);
            }
        }
    }
}

test "settings: every row's default is Config's default" {
    try expectDefaults(.global, &Config{});
    try expectDefaults(.pool, &Config.Pool{});
    try expectDefaults(.backend, &Config.Backend{ .address = Config.default_listen });
    try expectDefaults(.route, &Config.Route{});
    try expectDefaults(.handler, &Config.Handler{ .name = "", .path = "" });
    try testing.expect(Config.default_listen.eql(&(try Config.Address.parse(lookup(.global, "listen").default.?))));
}

test "settings: defaults are within their bounds and keep the relations" {
    var config: Config = .{};
    try testing.expectEqual(@as(?[]const u8, null), outOfRange(.global, &config));
    try testing.expectEqual(@as(?[]const u8, null), outOfRange(.pool, &Config.Pool{}));
    try testing.expectEqual(@as(?Relation, null), brokenRelation(.global, &config));
    config.headers_count_max = 7;
    try testing.expectEqualStrings("limits.headers_count_max", outOfRange(.global, &config).?);
    config = .{};
    config.workers_count = 0; // Unset: one per CPU.
    try testing.expectEqual(@as(?[]const u8, null), outOfRange(.global, &config));
    config.target_bytes_max = config.header_bytes_max;
    try testing.expectEqualStrings("limits.header_bytes_max", brokenRelation(.global, &config).?.limit);
    var pool: Config.Pool = .{};
    pool.health.status_min = 400;
    pool.health.status_max = 300;
    try testing.expectEqualStrings("health.status", outOfRange(.pool, &pool).?);
    pool = .{};
    pool.total_timeout_ns = 0; // Unset: no limit.
    pool.sticky_cookie = "a;b";
    try testing.expectEqualStrings("sticky_cookie", outOfRange(.pool, &pool).?);
}

test "settings: enumerations that name their choices in the help name every one" {
    inline for (table) |setting| {
        if (setting.value != .enumeration or setting.arg.len == 0) continue;
        inline for (@typeInfo(setting.value.enumeration).@"enum".field_names) |tag| {
            const shown = std.mem.indexOf(u8, setting.help, tag) != null or
                std.mem.eql(u8, tag, setting.default.?);
            if (!shown) std.debug.print("--{s}: help does not name {s}\n", .{ setting.flag.?, tag });
            try testing.expect(shown);
        }
    }
}

test "settings: keys of an object come in table order, sections once" {
    const top = comptime namesText(keysAt(.global, ""));
    try testing.expectEqualStrings("listen, listeners, workers, io, http2, proxy_protocol, splice_min, limits, timeouts, resolvers, dns, trusted_proxies, allow, deny, rate_limit, " ++
        "pools, routes, handlers, handler, compression, request_headers, response_headers, request_id, admin, access_log, log_level", top);
    try testing.expectEqualStrings("enabled, level, types, min_length, slots", comptime namesText(keysAt(.global, "compression.")));
    try testing.expectEqualStrings("client_header, client_idle, drain, tunnel_idle", comptime namesText(keysAt(.global, "timeouts.")));
    try testing.expectEqualStrings("backends, strategy, hash, sticky_cookie, health, ejection, retry, " ++
        "timeouts, keepalive, protocol, tls, send_proxy", comptime namesText(keysAt(.pool, "")));
    try testing.expectEqualStrings("address, weight, max_connections, max_pending", comptime namesText(keysAt(.backend, "")));
}

test "settings: file defaults are written as a file writes them" {
    try testing.expectEqualStrings("\"16KiB\"", comptime fileDefault(lookup(.global, "limits.header_bytes_max")).?);
    try testing.expectEqualStrings("0", comptime fileDefault(lookup(.global, "limits.request_body_max")).?);
    try testing.expectEqualStrings(".auto", comptime fileDefault(lookup(.global, "io")).?);
    try testing.expectEqualStrings("\"0.0.0.0:8080\"", comptime fileDefault(lookup(.global, "listen")).?);
    try testing.expectEqualStrings(".{ .connect, .reset, .timeout }", comptime fileDefault(lookup(.pool, "ejection.on")).?);
    try testing.expectEqualStrings(".{ .on = .client_ip }", comptime fileDefault(lookup(.pool, "hash")).?);
    try testing.expectEqual(@as(?[]const u8, null), comptime fileDefault(lookup(.global, "workers")));
}

test "settings: shared value rules" {
    try testing.expectEqual(Config.FailureKinds{ .connect = true, .reset = false, .timeout = false, .status_5xx = true }, try parseFailureKinds("connect,5xx", ','));
    try testing.expectError(error.UnknownKind, parseFailureKinds("connect,slow", ','));
    try testing.expectEqual(StatusRange{ .min = 200, .max = 204 }, parseStatusRange("200-204", .{ .min = 100, .max = 599 }).?);
    try testing.expectEqual(StatusRange{ .min = 204, .max = 204 }, parseStatusRange("204", .{ .min = 100, .max = 599 }).?);
    try testing.expectEqual(@as(?StatusRange, null), parseStatusRange("300-200", .{ .min = 100, .max = 599 }));
    try testing.expectEqual(@as(?StatusRange, null), parseStatusRange("99-200", .{ .min = 100, .max = 599 }));
    const key = try parseHashKey("cookie:session");
    try testing.expectEqual(Config.HashOn.cookie, key.on);
    try testing.expectEqualStrings("session", key.name);
    try testing.expectError(error.InvalidName, parseHashKey("header:"));
    try testing.expectError(error.InvalidName, parseHashKey("header:a:b")); // ':' is not a token byte.
    try testing.expectError(error.InvalidHashKey, parseHashKey("ip:x"));
    try testing.expect(cookieNameMistake("a:b") != null);
    try testing.expect(cookieNameMistake("sluice_backend") == null);
    try testing.expect(healthHostMistake("[::1]:8080") == null);
    try testing.expect(healthPathMistake("healthz") != null);
}
