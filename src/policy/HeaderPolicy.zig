//! A route's header rules as the data plane applies them: the top level's rules, the command
//! line's and the route's own (config/HeaderRules.zig), merged once when a generation is
//! built, so a request reads one ready list per direction and nothing is merged or parsed per
//! request.
//!
//! Merging: the layers apply in order (top level, command line, route), and within a layer
//! removals, then sets, then adds. A set or a removal of a name drops every field of that name
//! written by an earlier layer, and every field of that name the other side sent; an add only
//! adds. So a route that sets `Cache-Control` replaces the top level's, and a route that adds
//! a field keeps the top level's fields (unlike nginx, where one `add_header` in a location
//! silently drops every inherited one).
//!
//! A request id (`request_id`, or a value that names `$request_id`) is a set rule of the top
//! level, `NAME: $request_id`, ahead of the others: the client's field of that name is dropped,
//! and the id the exchange chose (the client's when it is plain, else a generated one) is
//! written instead.
const std = @import("std");
const assert = std.debug.assert;

const Config = @import("../config/Config.zig");
const HeaderRules = Config.HeaderRules;
const chars = @import("../http/chars.zig");
const RequestIds = @import("RequestIds.zig");
const http_path = @import("../http/path.zig");

const HeaderPolicy = @This();

request: Side = .{},
response: Side = .{},
/// Some value names `$request_id`, or `request_id` is on: the exchange picks an id.
needs_request_id: bool = false,

/// One field to write.
pub const Field = struct {
    name: []const u8,
    value: []const u8,
    /// The value names a variable: written piece by piece (`Variables.pieces`).
    variables: bool,
};

/// One direction's merged rules.
pub const Side = struct {
    /// The other side's fields of these names are not passed on (each name set or removed).
    dropped: []const []const u8 = &.{},
    /// Written after the passed fields, in order.
    written: []const Field = &.{},

    pub fn isEmpty(side: *const Side) bool {
        return side.dropped.len == 0 and side.written.len == 0;
    }

    /// Whether a field called `name` (any case) is not passed on.
    pub fn drops(side: *const Side, name: []const u8) bool {
        for (side.dropped) |dropped| if (chars.eqlIgnoreCase(dropped, name)) return true;
        return false;
    }

    /// The exact bytes `written` takes with these variables (`Name: value\r\n` each).
    pub fn writtenBytes(side: *const Side, variables: *const Variables) usize {
        var total: usize = 0;
        for (side.written) |field| {
            total += field.name.len + ": ".len + "\r\n".len;
            if (!field.variables) {
                total += field.value.len;
                continue;
            }
            var pieces = variables.pieces(field.value);
            while (pieces.next()) |piece| total += piece.len;
        }
        return total;
    }

    /// Writes `written` into `out`, which has exactly `writtenBytes` bytes; returns them.
    pub fn write(side: *const Side, variables: *const Variables, out: []u8) void {
        var at: usize = 0;
        for (side.written) |field| {
            at = put(out, at, field.name);
            at = put(out, at, ": ");
            if (field.variables) {
                var pieces = variables.pieces(field.value);
                while (pieces.next()) |piece| at = put(out, at, piece);
            } else {
                at = put(out, at, field.value);
            }
            at = put(out, at, "\r\n");
        }
        assert(at == out.len);
    }

    fn put(out: []u8, at: usize, bytes: []const u8) usize {
        @memcpy(out[at..][0..bytes.len], bytes);
        return at + bytes.len;
    }
};

/// One direction's rules with what their variables stand for: what the head composers take.
pub const Rules = struct {
    side: *const Side,
    /// The exchange's (`Applied`): it outlives the head's rewriting.
    variables: *const Variables,
};

/// The policy one exchange applies, in a per-worker array beside the exchange slots
/// (proxy/Proxy.zig `policy_slots`), so an exchange slot grows by one pointer and an
/// exchange without rules touches none of it.
pub const Applied = struct {
    /// This request's id when the policy asks for one: the client's, or `request_id_buffer`.
    request_id: []const u8 = "",
    request_id_buffer: [RequestIds.bytes]u8 = undefined,
    variables: Variables = undefined,
    /// Each direction's rules; null when the route has none for it.
    request: ?Rules = null,
    response: ?Rules = null,
    /// The route rewrites the path: what the pool sees instead of the target's path.
    path: ?PathRewrite = null,
    /// The route rewrites the path, and this request's matched only in normal form: a 400.
    path_refused: bool = false,
};

/// A rewritten target: `replacement` (the route's `rewrite_prefix`) then `rest` (the target
/// after the prefix, its query included, byte for byte as the client sent it).
pub const PathRewrite = struct {
    replacement: []const u8,
    rest: []const u8,

    /// The route's prefix replaced in `path` (an origin-form target: path and query), or null
    /// when the path is not in the normal form routes match (http/path.zig: `/%61pi/`,
    /// `//api/`, `/api/./x`, `/api/%2e%2e/v1/x`): with a prefix replaced, a dot segment in the
    /// rest could climb out of the replacement at the backend (`/v2/../v1/x`), and sluice
    /// does not re-encode a path to rewrite it, so such a request is refused. `scratch` has
    /// `http.path.growth_factor_max` times the path's bytes.
    pub fn of(path: []const u8, prefix: []const u8, replacement: []const u8, scratch: []u8) ?PathRewrite {
        assert(replacement.len > 0 and replacement[0] == '/');
        const path_only = path[0 .. std.mem.findScalar(u8, path, '?') orelse path.len];
        if (!std.mem.eql(u8, http_path.normalize(path_only, scratch), path_only)) return null;
        if (!std.mem.startsWith(u8, path, prefix)) return null;
        var rest = path[prefix.len..];
        // One slash at the seam: `/api` replaced by `/` in `/api/x` is `/x`, not `//x`.
        if (replacement[replacement.len - 1] == '/' and rest.len > 0 and rest[0] == '/') rest = rest[1..];
        return .{ .replacement = replacement, .rest = rest };
    }
};

/// What a value's variables stand for in one exchange. Each is a field value already (see
/// config/HeaderRules.zig), so whatever a request carries, an expansion has no CR or LF.
pub const Variables = struct {
    client_ip: []const u8,
    request_id: []const u8 = "",
    scheme: []const u8,
    /// Empty for an HTTP/1.0 request without one.
    host: []const u8 = "",

    pub fn pieces(variables: *const Variables, template: []const u8) Pieces {
        return .{ .variables = variables, .inner = .{ .template = template } };
    }

    pub const Pieces = struct {
        variables: *const Variables,
        inner: HeaderRules.Pieces,

        pub fn next(p: *Pieces) ?[]const u8 {
            const piece = p.inner.next() orelse return null;
            return switch (piece) {
                .literal => |text| text,
                .variable => |variable| switch (variable) {
                    .client_ip => p.variables.client_ip,
                    .request_id => p.variables.request_id,
                    .scheme => p.variables.scheme,
                    .host => p.variables.host,
                },
                .unknown => unreachable, // The config's mappers refused it.
            };
        }
    };
};

pub const BuildError = error{OutOfMemory};

/// Merges the layers (see the file comment). Every slice points into `allocator`'s memory or
/// into the config, which the generation keeps alive as long as this.
pub fn build(
    allocator: std.mem.Allocator,
    config: *const Config,
    route: ?*const Config.Route,
) BuildError!HeaderPolicy {
    var request: Builder = .{ .allocator = allocator };
    defer request.deinit();
    var response: Builder = .{ .allocator = allocator };
    defer response.deinit();
    if (config.request_id_header.len > 0) {
        try request.set(config.request_id_header, "$request_id");
    }
    try request.layer(&config.header_rules.request);
    try response.layer(&config.header_rules.response);
    for (config.cliHeaderRules()) |rule| switch (rule.kind) {
        .request_set, .response_set => {
            const parsed = HeaderRules.parseFlagField(if (rule.kind == .request_set) .request else .response, rule.text);
            const field = parsed.field; // The command line's parser checked it.
            try (if (rule.kind == .request_set) &request else &response).set(field.name, field.value);
        },
        .response_remove => try response.remove(rule.text),
    };
    if (route) |r| {
        try request.layer(&r.header_rules.request);
        try response.layer(&r.header_rules.response);
    }
    var policy: HeaderPolicy = .{
        .request = try request.finish(),
        .response = undefined,
    };
    errdefer policy.deinitSide(allocator, .request);
    policy.response = try response.finish();
    policy.needs_request_id = config.request_id_header.len > 0 or
        request.uses_request_id or response.uses_request_id;
    return policy;
}

/// One policy per route of `config`, then (last) the one for requests no route took and for
/// a config without routes. For a generation's arena: freed with it.
pub fn buildAll(arena: std.mem.Allocator, config: *const Config) BuildError![]const HeaderPolicy {
    // Nothing configured anywhere: no list, so an exchange finds none at once (a route
    // without rules then costs a load and a branch).
    if (!configured(config)) return &.{};
    const policies = try arena.alloc(HeaderPolicy, config.routes_count + 1);
    for (policies, 0..) |*policy, i| {
        const route: ?*const Config.Route = if (i < config.routes_count) &config.routes()[i] else null;
        policy.* = try build(arena, config, route);
    }
    return policies;
}

/// Whether any header rule or request id is configured.
pub fn configured(config: *const Config) bool {
    if (config.request_id_header.len > 0 or config.cli_header_rules_count > 0) return true;
    if (!config.header_rules.isEmpty()) return true;
    for (config.routes()) |*route| if (!route.header_rules.isEmpty() or route.rewrite_prefix.len > 0) return true;
    return false;
}

pub fn deinit(policy: *HeaderPolicy, allocator: std.mem.Allocator) void {
    policy.deinitSide(allocator, .request);
    policy.deinitSide(allocator, .response);
    policy.* = undefined;
}

fn deinitSide(policy: *HeaderPolicy, allocator: std.mem.Allocator, comptime which: enum { request, response }) void {
    const side = &@field(policy, @tagName(which));
    allocator.free(side.dropped);
    allocator.free(side.written);
}

const Builder = struct {
    allocator: std.mem.Allocator,
    dropped: std.ArrayList([]const u8) = .empty,
    written: std.ArrayList(Field) = .empty,
    uses_request_id: bool = false,

    fn deinit(b: *Builder) void {
        b.dropped.deinit(b.allocator);
        b.written.deinit(b.allocator);
    }

    fn layer(b: *Builder, side: *const HeaderRules.Side) BuildError!void {
        var removed: HeaderRules.NameLines = .{ .text = side.remove };
        while (removed.next()) |name| try b.remove(name);
        var sets: HeaderRules.FieldLines = .{ .text = side.set };
        while (sets.next()) |field| try b.set(field.name, field.value);
        var added: HeaderRules.FieldLines = .{ .text = side.add };
        while (added.next()) |field| try b.add(field.name, field.value);
    }

    fn remove(b: *Builder, name: []const u8) BuildError!void {
        var i: usize = 0;
        while (i < b.written.items.len) {
            if (chars.eqlIgnoreCase(b.written.items[i].name, name)) {
                _ = b.written.orderedRemove(i);
            } else i += 1;
        }
        for (b.dropped.items) |dropped| if (chars.eqlIgnoreCase(dropped, name)) return;
        try b.dropped.append(b.allocator, name);
    }

    fn set(b: *Builder, name: []const u8, value: []const u8) BuildError!void {
        try b.remove(name);
        try b.add(name, value);
    }

    fn add(b: *Builder, name: []const u8, value: []const u8) BuildError!void {
        assert(HeaderRules.valueMistake(value) == null);
        if (HeaderRules.usesVariable(value, .request_id)) b.uses_request_id = true;
        try b.written.append(b.allocator, .{ .name = name, .value = value, .variables = HeaderRules.hasVariables(value) });
    }

    fn finish(b: *Builder) BuildError!Side {
        const dropped = try b.dropped.toOwnedSlice(b.allocator);
        errdefer b.allocator.free(dropped);
        return .{ .dropped = dropped, .written = try b.written.toOwnedSlice(b.allocator) };
    }
};

const testing = std.testing;

test "header policy: a route's set replaces the top level's, its add keeps it" {
    var config: Config = .{};
    config.header_rules.response = .{
        .set = "Cache-Control: no-store\r\nX-Frame-Options: DENY\r\n",
        .add = "X-Served-By: edge\r\n",
        .remove = "Server\r\n",
    };
    config.request_id_header = "X-Request-Id";
    try config.addCliHeaderRule(.{ .kind = .response_remove, .text = "X-Powered-By" });
    var route: Config.Route = .{};
    route.header_rules.response = .{ .set = "cache-control: max-age=60\r\n", .add = "X-Served-By: api\r\n" };
    var policy = try build(testing.allocator, &config, &route);
    defer policy.deinit(testing.allocator);
    try testing.expect(policy.needs_request_id);
    try testing.expectEqual(@as(usize, 1), policy.request.written.len);
    try testing.expect(policy.request.drops("x-request-id"));
    const response = policy.response;
    try testing.expect(response.drops("SERVER") and response.drops("x-powered-by") and response.drops("Cache-Control"));
    try testing.expect(!response.drops("X-Served-By"));
    var names: [4][]const u8 = undefined;
    for (response.written, 0..) |field, i| names[i] = field.value;
    try testing.expectEqual(@as(usize, 4), response.written.len);
    try testing.expectEqualStrings("DENY", names[0]);
    try testing.expectEqualStrings("edge", names[1]);
    try testing.expectEqualStrings("max-age=60", names[2]);
    try testing.expectEqualStrings("api", names[3]);
}

test "path rewrite: the prefix is replaced byte for byte, one slash at the seam, query kept" {
    const cases = [_]struct { []const u8, []const u8, []const u8, ?[]const u8 }{
        .{ "/api/users?id=1&x=%2F", "/api/", "/", "/users?id=1&x=%2F" },
        .{ "/api/users", "/api", "/", "/users" },
        .{ "/api", "/api", "/", "/" },
        .{ "/api/", "/api/", "/", "/" },
        .{ "/api?q", "/api", "/", "/?q" },
        .{ "/api/v1/%C3%A9/a%20b?q=%7e", "/api/v1/", "/v2/", "/v2/%C3%A9/a%20b?q=%7e" },
        .{ "/api/v1/%7Euser", "/api/v1/", "/v2/", null },
        .{ "/api/v1/%2e%2e/v1/x", "/api/v1/", "/v2/", null },
        .{ "/api/./x", "/api/", "/", null },
        .{ "/api/%c3%a9", "/api/", "/", null },
        .{ "/apix", "/api", "/b", "/bx" },
        .{ "/%61pi/x", "/api/", "/", null },
        .{ "//api/x", "/api/", "/", null },
    };
    for (cases) |case| {
        var scratch: [3 * 64]u8 = undefined;
        const got = PathRewrite.of(case[0], case[1], case[2], &scratch);
        if (case[3]) |want| {
            var buffer: [64]u8 = undefined;
            const text = try std.fmt.bufPrint(&buffer, "{s}{s}", .{ got.?.replacement, got.?.rest });
            try testing.expectEqualStrings(want, text);
        } else try testing.expectEqual(null, got);
    }
}

test "header policy: variables expand to exactly the bytes measured" {
    var config: Config = .{};
    config.header_rules.request = .{ .add = "X-Client: $client_ip via $scheme://$host ($$) $request_id\r\n" };
    var policy = try build(testing.allocator, &config, null);
    defer policy.deinit(testing.allocator);
    try testing.expect(policy.needs_request_id);
    const variables: Variables = .{ .client_ip = "::1", .request_id = "abc", .scheme = "https", .host = "h.example" };
    var out: [128]u8 = undefined;
    const len = policy.request.writtenBytes(&variables);
    policy.request.write(&variables, out[0..len]);
    try testing.expectEqualStrings("X-Client: ::1 via https://h.example ($) abc\r\n", out[0..len]);
}
