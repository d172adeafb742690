//! Tests of the config file mapper (file.zig): whole files in both formats, every mistake
//! with its line and column, and every setting's file default.
const std = @import("std");

const file = @import("file.zig");
const Address = @import("../stdx/Address.zig").Address;
const Config = @import("Config.zig");
const settings = @import("settings.zig");
const Format = file.Format;
const Problems = file.Problems;
const parseSource = file.parseSource;

const testing = std.testing;

fn expectProblems(source: [:0]const u8, format: Format, expected: []const struct { line: u32, column: u32, contains: []const u8 }) !void {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    try testing.expectError(error.Invalid, parseSource(arena_state.allocator(), source, format, &config, &problems));
    errdefer for (problems.slice()) |got| {
        std.debug.print("got {d}:{d}: {s}\n", .{ got.position.line, got.position.column, got.message });
    };
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
    const pool = &config.pools()[0];
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
    try testing.expectEqual(Config.Strategy.least_conn, config.pools()[0].strategy);
    try testing.expect(!config.admin.enabled); // No section: no admin listener.
    try testing.expectEqual(@as(u32, 2), config.pools()[0].backends_count);
    try testing.expect(config.pools()[0].outlier.on.status_5xx and !config.pools()[0].outlier.on.connect);
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
        .{ .line = 5, .column = 5, .contains = "several pools need routes" },
        .{ .line = 8, .column = 25, .contains = "expected one of round_robin" },
        .{ .line = 9, .column = 39, .contains = "invalid duration" },
        .{ .line = 10, .column = 37, .contains = "given twice" },
        .{ .line = 12, .column = 9, .contains = "pool \"other\" has no backends" },
    });
}

test "config file: a port out of range is named as the port, not the host" {
    try expectProblems(
        \\.{
        \\    .pools = .{ .app = .{ .backends = .{ "127.0.0.1:9000", "127.0.0.1:330001" } } },
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 60, .contains = "invalid address \"127.0.0.1:330001\": port 330001 is out of range (0 to 65535)" },
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
    try testing.expectEqualStrings("p", config.pools()[0].name);
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

test "config file: a pool's tls section turns TLS to its backends on; its mistakes are positioned" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    const source =
        \\{"pools": {"p": {"backends": ["localhost:8443", "10.0.0.5:8443"],
        \\  "tls": {"verify": true, "ca": "ca.pem", "server_name": "api.internal",
        \\          "client_cert": "c.pem", "client_key": "c.key"}},
        \\  "q": {"backends": ["10.0.0.6:80"], "tls": {}}, "r": {"backends": ["10.0.0.7:80"]}},
        \\ "routes": [{"pool": "p"}]}
    ;
    try parseSource(arena_state.allocator(), source, .json, &config, &problems);
    const p = &config.pools()[0];
    try testing.expect(p.tls.enabled and p.tls.verify);
    try testing.expectEqualStrings("api.internal", p.tls.server_name);
    try testing.expectEqualStrings("c.key", p.tls.client_key);
    try testing.expectEqualStrings("localhost", p.backends()[0].host_name);
    try testing.expectEqualStrings("", p.backends()[1].host_name);
    try testing.expect(config.pools()[1].tls.enabled and config.pools()[1].tls.ca.len == 0);
    try testing.expect(!config.pools()[2].tls.enabled);
    try testing.expect(config.usesUpstreamTls());
    try config.validate();
    try expectProblems(
        \\.{ .pools = .{ .p = .{
        \\    .backends = .{"10.0.0.5:9000"},
        \\    .tls = .{ .verify = "yes", .client_cert = "c.pem", .server_name = "a b", .sni = "x" },
        \\} } }
    , .zon, &.{
        .{ .line = 3, .column = 12, .contains = "client_cert and client_key go together" },
        .{ .line = 3, .column = 25, .contains = "expected true or false" },
        .{ .line = 3, .column = 71, .contains = "a server name is a DNS name or an IP address" },
        .{ .line = 3, .column = 78, .contains = "unknown key \"sni\"" },
    });
}

test "config file: syntax errors and semantic checks name their place" {
    try expectProblems("{\"pools\": {\"app\": {\"backends\": [\"1.2.3.4:80\"],}}}", .json, &.{
        .{ .line = 1, .column = 47, .contains = "" },
    });
    try expectProblems(
        \\.{ .pools = .{ .app = .{ .backends = .{} } } }
    , .zon, &.{
        .{ .line = 1, .column = 38, .contains = "no backends" },
    });
}

test "config file: checks across settings are reported at their value, with every other mistake" {
    // Each of these used to be found by `Config.validate` only, reported at 1:1 and only
    // once every other mistake was fixed.
    try expectProblems(
        \\.{
        \\    .limits = .{ .header_bytes_max = "4KiB", .target_bytes_max = "8KiB" },
        \\    .wokers = 2,
        \\    .timeouts = .{ .client_idle = "90", .drain = "0" },
        \\    .pools = .{
        \\        .app = .{
        \\            .backends = .{"10.0.0.5:9000"},
        \\            .strategy = .hash,
        \\            .hash = .{ .on = .header },
        \\            .health = .{ .path = "healthz", .host = "a host", .interval = "2" },
        \\        },
        \\        .sticky = .{
        \\            .strategy = .sticky,
        \\            .sticky_cookie = "",
        \\            .hash = .{ .on = .cookie, .name = "a;b" },
        \\        },
        \\    },
        \\    .routes = .{.{ .pool = "app" }},
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 66, .contains = "limits.target_bytes_max (8192) must be below limits.header_bytes_max (4096)" },
        .{ .line = 3, .column = 5, .contains = "unknown key \"wokers\"" },
        .{ .line = 4, .column = 35, .contains = "a duration needs its unit: \"90ms\", \"90s\" or \"90m\"" },
        .{ .line = 4, .column = 50, .contains = "a duration needs its unit" },
        .{ .line = 9, .column = 21, .contains = "hash on a header or a cookie needs its .name" },
        .{ .line = 10, .column = 34, .contains = "a health path starts with /" },
        .{ .line = 10, .column = 53, .contains = "a health host is at most 1024 bytes of visible ASCII" },
        .{ .line = 10, .column = 75, .contains = "a duration needs its unit: \"2ms\"" },
        .{ .line = 12, .column = 9, .contains = "pool \"sticky\" has no backends" },
        .{ .line = 14, .column = 30, .contains = "a cookie name is 1 to 64 letters" },
        .{ .line = 15, .column = 47, .contains = "a header or cookie name is 1 to 255 letters" },
    });
    // No pools at all: at the top-level value, not after the rest.
    try expectProblems(
        \\
        \\.{ .workers = 0 }
    , .zon, &.{
        .{ .line = 2, .column = 1, .contains = "no pools" },
        .{ .line = 2, .column = 15, .contains = "from 1 to" },
    });
    // Only the head limit given: the problem is at it.
    try expectProblems(
        \\{"limits": {"header_bytes_max": 4096}, "pools": {"p": {"backends": ["10.0.0.5:9000"]}}}
    , .json, &.{
        .{ .line = 1, .column = 33, .contains = "limits.target_bytes_max (8192) must be below" },
    });
}

test "config file: a file the walk accepts passes Config.validate (no problem left for 1:1)" {
    // The cases at the edge of each check `validate` makes, written as a file: each is
    // either accepted by both or refused by the walk at its place.
    const accepted = [_][:0]const u8{
        \\.{ .limits = .{ .header_bytes_max = "1KiB", .target_bytes_max = 1023 },
        \\   .pools = .{ .p = .{ .backends = .{"10.0.0.5:9000"} } } }
        ,
        \\.{ .pools = .{ .p = .{ .backends = .{"10.0.0.5:9000"}, .strategy = .hash,
        \\   .hash = .{ .on = .cookie, .name = "session" }, .health = .{ .path = "" } } } }
        ,
        \\.{ .pools = .{ .p = .{ .backends = .{"10.0.0.5:9000"}, .strategy = .sticky,
        \\   .sticky_cookie = "s", .health = .{ .path = "/h?x=1", .host = "example.com:8080" } } } }
        ,
    };
    for (accepted) |source| {
        var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
        defer arena_state.deinit();
        var config: Config = .{};
        var problems: Problems = .{};
        try parseSource(arena_state.allocator(), source, .zon, &config, &problems);
        try config.validate();
    }
}

const routes_zon =
    \\.{
    \\    .listeners = .{
    \\        "0.0.0.0:8080",
    \\        .{ .name = "public", .listen = "0.0.0.0:8443" },
    \\        .{ .name = "internal", .listen = "10.0.0.1:8080" },
    \\    },
    \\    .routes = .{
    \\        .{ .name = "api", .host = "api.example.com", .path_prefix = "/v1/", .methods = .{ .GET, .HEAD }, .pool = "api" },
    \\        .{ .host = "*.example.com", .listeners = .{"internal"}, .pool = .static },
    \\        .{
    \\            .name = "ping",
    \\            .path_prefix = "/ping",
    \\            .respond = .{
    \\                .status = 200,
    \\                .content_type = "text/plain",
    \\                .headers = .{ .@"Cache-Control" = "no-store", .@"X-Note" = "say \"hi\"" },
    \\                .body = "pong\n",
    \\            },
    \\        },
    \\        .{ .listeners = .{ "public", "internal" }, .redirect = .{ .location = "https://example.com", .status = 301, .keep_path = true } },
    \\    },
    \\    .pools = .{
    \\        .static = .{ .backends = .{"10.0.0.7:80"} },
    \\        .api = .{ .backends = .{ "10.0.0.5:9000", "10.0.0.6:9000" } },
    \\    },
    \\}
;

const routes_json =
    \\{
    \\  "listeners": ["0.0.0.0:8080", {"name": "public", "listen": "0.0.0.0:8443"},
    \\                {"name": "internal", "listen": "10.0.0.1:8080"}],
    \\  "routes": [
    \\    {"name": "api", "host": "api.example.com", "path_prefix": "/v1/", "methods": ["GET", "HEAD"], "pool": "api"},
    \\    {"host": "*.example.com", "listeners": ["internal"], "pool": "static"},
    \\    {"name": "ping", "path_prefix": "/ping", "respond": {"status": 200, "content_type": "text/plain",
    \\      "headers": {"Cache-Control": "no-store", "X-Note": "say \"hi\""}, "body": "pong\n"}},
    \\    {"listeners": ["public", "internal"], "redirect": {"location": "https://example.com", "status": 301, "keep_path": true}}
    \\  ],
    \\  "pools": {
    \\    "static": {"backends": ["10.0.0.7:80"]},
    \\    "api": {"backends": ["10.0.0.5:9000", "10.0.0.6:9000"]}
    \\  }
    \\}
;

test "config file: listeners, pools and routes map to indexes and bitmasks" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(), routes_zon, .zon, &config, &problems);

    const listeners = config.listeners();
    try testing.expectEqual(@as(usize, 3), listeners.len);
    try testing.expectEqualStrings("", listeners[0].name);
    try testing.expectEqualStrings("internal", listeners[2].name);
    try testing.expect(listeners[1].address.eql(&try Address.parse("0.0.0.0:8443")));
    try testing.expectEqualStrings("static", config.pools()[0].name);
    try testing.expectEqualStrings("api", config.pools()[1].name);

    const routes = config.routes();
    try testing.expectEqual(@as(usize, 4), routes.len);
    // Declared before the pools, resolved after: "api" is the second pool.
    try testing.expectEqual(Config.Route.Action.pool, routes[0].action);
    try testing.expectEqual(@as(u16, 1), routes[0].pool);
    try testing.expectEqualStrings("api.example.com", routes[0].host);
    try testing.expectEqualStrings("/v1/", routes[0].path_prefix);
    try testing.expectEqual(Config.methodBit(.get) | Config.methodBit(.head), routes[0].methods);
    try testing.expectEqual(@as(u32, 0), routes[0].listeners);

    try testing.expectEqual(@as(u16, 0), routes[1].pool);
    try testing.expectEqualStrings("*.example.com", routes[1].host);
    try testing.expectEqual(@as(u32, 0b100), routes[1].listeners);

    try testing.expectEqual(Config.Route.Action.respond, routes[2].action);
    try testing.expectEqualStrings("ping", routes[2].name);
    try testing.expectEqual(@as(u16, 200), routes[2].status);
    try testing.expectEqualStrings("text/plain", routes[2].content_type);
    try testing.expectEqualStrings("Cache-Control: no-store\r\nX-Note: say \"hi\"\r\n", routes[2].headers_text);
    try testing.expectEqualStrings("pong\n", routes[2].body);

    try testing.expectEqual(Config.Route.Action.redirect, routes[3].action);
    try testing.expectEqual(@as(u32, 0b110), routes[3].listeners);
    try testing.expectEqualStrings("https://example.com", routes[3].location);
    try testing.expectEqual(@as(u16, 301), routes[3].responseStatus());
    try testing.expect(routes[3].keep_path);
}

test "config file: the same routes in JSON make the same config" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var from_zon: Config = .{};
    var from_json: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(), routes_zon, .zon, &from_zon, &problems);
    try parseSource(arena_state.allocator(), routes_json, .json, &from_json, &problems);
    try testing.expectEqual(@as(u32, 4), from_json.routes_count);
    try testing.expectEqualStrings(from_zon.routes()[2].headers_text, from_json.routes()[2].headers_text);
    try testing.expect(Config.deepEql(Config, &from_zon, &from_json));
}

test "config file: mistakes in listeners and routes are reported where they are" {
    try expectProblems(
        \\.{
        \\    .listen = "0.0.0.0:8080",
        \\    .listeners = .{"0.0.0.0:8081"},
        \\    .pools = .{ .app = .{ .backends = .{"10.0.0.5:9000"} } },
        \\    .routes = .{
        \\        .{ .host = "API.example.com", .pool = "app" },
        \\        .{ .host = "api.*.com", .pool = "nope" },
        \\        .{ .path_prefix = "api", .methods = .{ .GET, .CONNECT, .FETCH }, .pool = .app },
        \\        .{ .listeners = .{"public"}, .pool = "app", .redirect = .{ .location = "/x" } },
        \\        .{ .name = "no action" },
        \\        .{ .respond = .{ .status = 700, .headers = .{ .@"Bad Name" = "x", .@"X-Ok" = "a\nb", .@"content-length" = "3" } } },
        \\        .{ .redirect = .{ .status = 200 } },
        \\        .{ .respond = .{ .status = 204, .body = "gone" } },
        \\    },
        \\}
    , .zon, &.{
        .{ .line = 3, .column = 5, .contains = "either listen (one address) or listeners" },
        .{ .line = 6, .column = 20, .contains = "write the host in lowercase, \"api.example.com\"" },
        .{ .line = 7, .column = 20, .contains = "a wildcard is \"*.\" and a suffix" },
        .{ .line = 7, .column = 41, .contains = "unknown pool \"nope\": the pools are app" },
        .{ .line = 8, .column = 27, .contains = "starts with /" },
        .{ .line = 8, .column = 54, .contains = "CONNECT cannot be routed" },
        .{ .line = 8, .column = 64, .contains = "unknown method \"FETCH\"" },
        .{ .line = 9, .column = 27, .contains = "unknown listener \"public\": there are no named listeners" },
        .{ .line = 9, .column = 53, .contains = "exactly one of pool, handler, respond or redirect" },
        .{ .line = 10, .column = 9, .contains = "exactly one of pool, handler, respond or redirect" },
        .{ .line = 10, .column = 20, .contains = "a route name is 1 to 64 bytes" },
        .{ .line = 11, .column = 36, .contains = "from 200 to 599" },
        .{ .line = 11, .column = 55, .contains = "a header field name is a token" },
        .{ .line = 11, .column = 86, .contains = "control characters" },
        .{ .line = 11, .column = 94, .contains = "writes Content-Length" },
        .{ .line = 12, .column = 24, .contains = "a redirect needs .location" },
        .{ .line = 12, .column = 37, .contains = "from 300 to 399" },
        .{ .line = 13, .column = 23, .contains = "a 204 or 304 response has no body" },
    });
}

test "config file: a redirect to the request's own host, and its mistakes" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(),
        \\.{ .listen = "0.0.0.0:80", .routes = .{
        \\    .{ .redirect = .{ .scheme = "https", .status = 308 } },
        \\    .{ .redirect = .{ .scheme = "https", .port = 8443 } },
        \\} }
    , .zon, &config, &problems);
    try config.validate();
    const routes = config.routes();
    try testing.expectEqualStrings("https", routes[0].scheme);
    try testing.expectEqual(@as(u16, 308), routes[0].responseStatus());
    try testing.expectEqual(@as(u16, 0), routes[0].redirect_port);
    try testing.expectEqual(@as(u16, 8443), routes[1].redirect_port);
    try testing.expectEqual(@as(u16, 302), routes[1].responseStatus());

    try expectProblems(
        \\.{ .listen = "0.0.0.0:80", .routes = .{
        \\    .{ .redirect = .{ .scheme = "ftp" } },
        \\    .{ .redirect = .{ .scheme = "https", .location = "https://a" } },
        \\    .{ .redirect = .{ .scheme = "https", .keep_path = false } },
        \\    .{ .redirect = .{ .location = "https://a", .port = 443 } },
        \\    .{ .redirect = .{ .scheme = "https", .port = 0 } },
        \\    .{ .redirect = .{ .status = 301 } },
        \\} }
    , .zon, &.{
        .{ .line = 2, .column = 33, .contains = "a redirect's scheme is \"https\" or \"http\"" },
        .{ .line = 3, .column = 20, .contains = "not both" },
        .{ .line = 4, .column = 20, .contains = "always keeps the path" },
        .{ .line = 5, .column = 20, .contains = ".port is for a redirect with .scheme" },
        .{ .line = 6, .column = 50, .contains = "from 1 to 65535" },
        .{ .line = 7, .column = 20, .contains = "a redirect needs .location, or .scheme" },
    });
}

test "config file: duplicates, several pools without routes, and a response too large" {
    try expectProblems(
        \\.{
        \\    .listeners = .{ .{ .name = "a", .listen = "0.0.0.0:1" }, .{ .name = "a", .listen = "0.0.0.0:2" }, "0.0.0.0:1" },
        \\    .pools = .{
        \\        .app = .{ .backends = .{"10.0.0.5:9000"} },
        \\        .app = .{ .backends = .{"10.0.0.6:9000"} },
        \\    },
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 62, .contains = "listener \"a\" is given twice" },
        .{ .line = 2, .column = 103, .contains = "already a listener" },
        .{ .line = 3, .column = 5, .contains = "several pools need routes" },
        .{ .line = 5, .column = 9, .contains = "pool \"app\" is given twice" },
    });
    const body: [5000]u8 = @splat('x');
    try expectProblems(
        \\{"pools": {"app": {"backends": ["10.0.0.5:9000"]}},
        \\ "routes": [{"name": "r", "respond": {"body": "
    ++ body ++
        \\"}}, {"name": "r", "pool": "app"}],
        \\ "limits": {"header_bytes_max": "1KiB", "target_bytes_max": 512, "response_header_bytes_max": "1KiB"}}
    , .json, &.{
        .{ .line = 2, .column = 38, .contains = "this response takes up to 5160 bytes, more than a connection buffer holds (4096" },
        .{ .line = 2, .column = 5062, .contains = "route \"r\" is given twice" },
    });
}

test "config file: an empty list of listeners or methods is a mistake, not a match for nothing" {
    try expectProblems(
        \\{"listen": "0.0.0.0:8080", "pools": {"app": {"backends": ["10.0.0.5:9000"]}},
        \\ "routes": [{"listeners": [], "methods": [], "pool": "app"}], "routes": []}
    , .json, &.{
        .{ .line = 2, .column = 27, .contains = "omit listeners to match every listener" },
        .{ .line = 2, .column = 42, .contains = "omit methods to match any" },
        .{ .line = 2, .column = 63, .contains = "\"routes\" is given twice" },
    });
}

test "config file: listeners on port 0 may share an address, as each gets its own port" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    var problems: Problems = .{};
    const source =
        \\.{
        \\    .listeners = .{ .{ .name = "public", .listen = "127.0.0.1:0" }, "127.0.0.1:0" },
        \\    .pools = .{ .app = .{ .backends = .{"10.0.0.5:9000"} } },
        \\}
    ;
    try parseSource(arena_state.allocator(), source, .zon, &config, &problems);
    try testing.expectEqual(@as(u32, 2), config.listeners_count);
}

/// `.{ .a = .{ .b = VALUE } }` for the key `a.b`.
fn nestedKey(comptime key: []const u8, comptime value: []const u8) []const u8 {
    const dot = comptime std.mem.indexOfScalar(u8, key, '.') orelse return "." ++ key ++ " = " ++ value;
    return "." ++ key[0..dot] ++ " = .{ " ++ nestedKey(key[dot + 1 ..], value) ++ " }";
}

test "config file: writing a setting's default in a file gives Config's default" {
    // Each setting with a default, written alone in a file as `sluice settings` and
    // docs/CONFIG.md show it: the file's Config is the defaults' Config.
    const pool = ".pools = .{ .p = .{ .backends = .{\"10.0.0.5:9000\"} } }";
    inline for (settings.table) |setting| {
        const written = comptime settings.fileDefault(setting);
        if (written) |value| {
            const key = setting.key.?;
            const source: [:0]const u8 = comptime switch (setting.scope) {
                .global => ".{ " ++ pool ++ ", " ++ nestedKey(key, value) ++ " }",
                .pool => ".{ .pools = .{ .p = .{ .backends = .{\"10.0.0.5:9000\"}, " ++ nestedKey(key, value) ++ " } } }",
                .backend => ".{ .pools = .{ .p = .{ .backends = .{.{ .address = \"10.0.0.5:9000\", " ++
                    nestedKey(key, value) ++ " }} } } }",
                .route => ".{ " ++ pool ++ ", .routes = .{.{ .pool = \"p\", " ++ nestedKey(key, value) ++ " }} }",
                .handler => ".{ " ++ pool ++ ", .handlers = .{ .h = .{ .file = \"h.js\", " ++ nestedKey(key, value) ++ " } } }",
                .command_line => unreachable,
            };
            var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
            defer arena_state.deinit();
            var written_config: Config = .{};
            var problems: Problems = .{};
            parseSource(arena_state.allocator(), source, .zon, &written_config, &problems) catch |err| {
                for (problems.slice()) |got| std.debug.print("{s}: {d}:{d}: {s}\n", .{ source, got.position.line, got.position.column, got.message });
                return err;
            };
            var default_config: Config = .{};
            try parseSource(arena_state.allocator(), switch (setting.scope) {
                .route => ".{ " ++ pool ++ ", .routes = .{.{ .pool = \"p\" }} }",
                .handler => ".{ " ++ pool ++ ", .handlers = .{ .h = \"h.js\" } }",
                else => ".{ " ++ pool ++ " }",
            }, .zon, &default_config, &problems);
            if (setting.value == .structure and setting.value.structure == .listen) {
                // One listener, given: the same as none given, the default.
                try testing.expect(written_config.listeners()[0].address.eql(&Config.default_listen));
                written_config.listeners_count = 0;
            }
            if (!Config.deepEql(Config, &written_config, &default_config)) std.debug.print("{s}\n", .{source});
            try testing.expect(Config.deepEql(Config, &written_config, &default_config));
        }
    }
}

test "config file: the keys of an object and their bounds are the table's" {
    try expectProblems(
        \\.{
        \\    .limits = .{ .max_conections = 10, .headers_count_max = 7 },
        \\    .pools = .{ .p = .{
        \\        .backends = .{ .{ .address = "10.0.0.5:9000", .max_connections = 1048577, .weight = -1 } },
        \\        .health = .{ .status = "99-200", .rise = 0 },
        \\        .retry = .{ .budget_percent = 101 },
        \\        .timeouts = .{ .total = "0s" },
        \\    } },
        \\    .routes = .{.{ .pool = "p", .request_body_max = -1, .tunnel_idle_timeout = "5" }},
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 18, .contains = "unknown key \"max_conections\": expected one of max_connections, header_bytes_max, " ++
            "headers_count_max, target_bytes_max, request_body_max, response_header_bytes_max, " ++
            "response_headers_count_max, header_underscores" },
        .{ .line = 2, .column = 61, .contains = "expected a whole number from 8 to 1024" },
        .{ .line = 4, .column = 74, .contains = "expected a whole number from 0 to 1048576" },
        .{ .line = 4, .column = 93, .contains = "expected a whole number from 0 to 1000" },
        .{ .line = 5, .column = 32, .contains = "invalid status range: expected LOW-HIGH within 100-599" },
        .{ .line = 5, .column = 50, .contains = "expected a whole number from 1 to 100" },
        .{ .line = 6, .column = 39, .contains = "expected a whole number from 0 to 100" },
        .{ .line = 7, .column = 33, .contains = "a duration must be more than zero" },
        .{ .line = 9, .column = 53, .contains = "expected a size such as \"16KiB\" (0: no limit)" },
        .{ .line = 9, .column = 80, .contains = "a duration needs its unit: \"5ms\"" },
    });
}

test "config file: a listener's tls maps its certificates and policy; plain listeners stay plain" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    const source =
        \\.{
        \\    .listeners = .{
        \\        .{ .name = "http", .listen = "127.0.0.1:80" },
        \\        .{ .name = "https", .listen = "127.0.0.1:443", .tls = .{
        \\            .certificates = .{
        \\                .{ .cert = "a.pem", .key = "a.key", .ocsp = "a.der" },
        \\                .{ .cert = "b.pem", .key = "b.key" },
        \\            },
        \\            .min_version = "1.3",
        \\            .alpn = .{},
        \\        } },
        \\    },
        \\    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9000"} } },
        \\}
    ;
    var config: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(), source, .zon, &config, &problems);
    try testing.expect(config.listenerTls(0) == null);
    const t = config.listenerTls(1).?;
    try testing.expectEqual(@as(usize, 2), t.certificates().len);
    try testing.expectEqualStrings("a.der", t.certificates()[0].ocsp);
    try testing.expectEqualStrings("b.key", t.certificates()[1].key);
    try testing.expectEqual(Config.TlsVersion.@"1.3", t.min_version);
    try testing.expect(!t.alpn_http1);
    try testing.expect(config.hasTls());
}

test "config file: a listener's tls asks for client certificates and names the fields that forward them" {
    var arena_state = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena_state.deinit();
    const source =
        \\.{
        \\    .listeners = .{ .{ .listen = "127.0.0.1:443", .tls = .{
        \\        .certificates = .{.{ .cert = "a.pem", .key = "a.key" }},
        \\        .client_ca = "clients.pem",
        \\        .client_verify = "optional",
        \\        .client_subject_header = "X-Client-Subject",
        \\        .client_fingerprint_header = "X-Client-Sha256",
        \\    } } },
        \\    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9000"} } },
        \\}
    ;
    var config: Config = .{};
    var problems: Problems = .{};
    try parseSource(arena_state.allocator(), source, .zon, &config, &problems);
    const t = config.listenerTls(0).?;
    try testing.expectEqualStrings("clients.pem", t.client_ca);
    try testing.expectEqual(Config.ClientVerify.optional, t.client_verify);
    try testing.expectEqualStrings("X-Client-Subject", t.client_subject_header);
    try testing.expectEqualStrings("X-Client-Sha256", t.client_fingerprint_header);
}

test "config file: client-certificate keys need a CA, and fields sluice can own" {
    try expectProblems(
        \\.{
        \\    .listeners = .{ .{ .listen = "127.0.0.1:1", .tls = .{ .certificates = .{.{ .cert = "c", .key = "k" }},
        \\            .client_verify = "optional", .client_subject_header = "X-S" } },
        \\        .{ .listen = "127.0.0.1:2", .tls = .{ .certificates = .{.{ .cert = "c", .key = "k" }}, .client_ca = "ca.pem",
        \\            .client_verify = "maybe", .client_subject_header = "X-Forwarded-For", .client_fingerprint_header = "a b" } },
        \\        .{ .listen = "127.0.0.1:3", .tls = .{ .certificates = .{.{ .cert = "c", .key = "k" }}, .client_ca = "ca.pem",
        \\            .client_subject_header = "X-Same", .client_fingerprint_header = "x-same" } } },
        \\    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9000"} } },
        \\}
    , .zon, &.{
        .{ .line = 3, .column = 13, .contains = "this needs .client_ca" },
        .{ .line = 3, .column = 42, .contains = "this needs .client_ca" },
        .{ .line = 5, .column = 30, .contains = "unknown value \"maybe\"" },
        .{ .line = 5, .column = 64, .contains = "sluice writes X-Forwarded-For itself" },
        .{ .line = 5, .column = 112, .contains = "a header field name is a token" },
        .{ .line = 7, .column = 48, .contains = "two different fields" },
    });
}

test "config file: mistakes in a listener's tls are reported where they are" {
    try expectProblems(
        \\.{
        \\    .listeners = .{ .{ .listen = "127.0.0.1:1", .tls = .{ .certificates = .{} } },
        \\        .{ .listen = "127.0.0.1:2", .tls = .{ .certificates = .{ .{ .key = "k" } }, .min_version = "1.1" } },
        \\        .{ .listen = "127.0.0.1:3", .tls = .{ .alpn = .{"h2"}, .ciphers = "x" } } },
        \\    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9000"} } },
        \\}
    , .zon, &.{
        .{ .line = 2, .column = 75, .contains = "no certificates" },
        .{ .line = 3, .column = 66, .contains = "a certificate needs .cert" },
        .{ .line = 3, .column = 100, .contains = "unknown value \"1.1\"" },
        .{ .line = 4, .column = 44, .contains = "tls needs .certificates" },
        .{ .line = 4, .column = 57, .contains = "h2 is offered by the listener's .http2" },
        .{ .line = 4, .column = 64, .contains = "unknown key \"ciphers\"" },
    });
}
