//! Header rules as the operator wrote them (a file's `request_headers` and `response_headers`,
//! at the top level and in a route; the command line's `--request-header`,
//! `--response-header` and `--remove-response-header`): fields to set, to add and to remove,
//! on the request before the pool sees it and on the response before the client sees it.
//!
//! Decision: the rules are kept as text, one `Name: value\r\n` line per field to set or add
//! and one `Name\r\n` line per field to remove, so a route carries six slices (96 bytes) and
//! a `Config` with 64 routes does not grow by fixed arrays it rarely uses. The generation
//! compiles them once (proxy/policy's `HeaderRules`), merged with the global rules, so a
//! request reads a ready list and never this text.
//!
//! Values may name variables: `$client_ip`, `$request_id`, `$scheme`, `$host`; `$$` is a `$`.
//! Each is a field value by construction (an address, generated or checked id, a scheme, a
//! Host the parser checked), so a rule cannot write a CR or LF.
const std = @import("std");
const chars = @import("../http/chars.zig");

const HeaderRules = @This();

request: Side = .{},
response: Side = .{},

/// The rules of one direction.
pub const Side = struct {
    /// `Name: value\r\n` lines: each replaces every field of its name.
    set: []const u8 = "",
    /// `Name: value\r\n` lines: each is written after the fields already there.
    add: []const u8 = "",
    /// `Name\r\n` lines: fields of these names are not passed on.
    remove: []const u8 = "",

    pub fn isEmpty(side: *const Side) bool {
        return side.set.len == 0 and side.add.len == 0 and side.remove.len == 0;
    }
};

pub fn isEmpty(rules: *const HeaderRules) bool {
    return rules.request.isEmpty() and rules.response.isEmpty();
}

pub const Direction = enum { request, response };

/// At most this many rules of each kind (set, add, remove) in one direction of one route, or
/// of the top level, or of the command line.
pub const rules_count_max = 32;
/// The longest value as written (variables unexpanded).
pub const value_bytes_max = 1024;
/// The longest field name.
pub const name_bytes_max = 128;

/// Bytes the longest expansion of each variable writes: an IPv6 address, a request id, a
/// scheme, a Host (proxy/rewrite.zig `host_bytes_max`: a longer one is a 400).
pub const Variable = enum {
    client_ip,
    request_id,
    scheme,
    host,

    pub fn bytesMax(variable: Variable) usize {
        return switch (variable) {
            .client_ip => 46,
            .request_id => request_id_bytes_max,
            .scheme => "https".len,
            .host => 300,
        };
    }
};

/// A client's request id is kept when it has 1 to this many bytes of `requestIdByte`; else a
/// generated one replaces it.
pub const request_id_bytes_max = 64;

/// What a client's request id may hold: letters, digits and `-_.:+/=` (UUIDs, hex, base64):
/// nothing that needs quoting in a log line or a field value.
pub fn requestIdByte(c: u8) bool {
    return std.ascii.isAlphanumeric(c) or std.mem.findScalar(u8, "-_.:+/=", c) != null;
}

pub fn requestIdValid(id: []const u8) bool {
    if (id.len == 0 or id.len > request_id_bytes_max) return false;
    for (id) |c| if (!requestIdByte(c)) return false;
    return true;
}

/// Fields sluice writes itself on either side: framing and the connection. A rule that set
/// one could contradict the framing sluice parsed (the start of request smuggling).
const owned_fields = [_][]const u8{
    "content-length",   "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
    "proxy-connection",
};

/// Owned on the request side too: sluice writes Host from the request it parsed and the
/// forwarding fields from the peer it saw (README, "Forwarding headers").
const request_owned_fields = [_][]const u8{
    "host", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip",
};

/// Why a field name cannot have a rule in `direction`, or null.
pub fn nameMistake(direction: Direction, name: []const u8) ?[]const u8 {
    if (name.len == 0) return "a header field name cannot be empty";
    if (name.len > name_bytes_max) return "a header field name has at most 128 bytes";
    for (name) |c| if (!chars.isTchar(c)) {
        return "a header field name is a token: letters, digits and !#$%&'*+-.^_`|~";
    };
    for (owned_fields) |owned| if (std.ascii.eqlIgnoreCase(name, owned)) {
        return "sluice writes the framing and connection fields itself (Content-Length, " ++
            "Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer): a rule cannot change them";
    };
    if (direction == .request) for (request_owned_fields) |owned| if (std.ascii.eqlIgnoreCase(name, owned)) {
        return "sluice writes Host and the forwarding fields (X-Forwarded-*, Forwarded, X-Real-IP) " ++
            "itself: a rule cannot change them";
    };
    return null;
}

/// Why a value cannot be written as given, or null: control bytes (CR, LF, NUL), a length
/// over `value_bytes_max`, or an unknown `$variable`.
pub fn valueMistake(value: []const u8) ?[]const u8 {
    if (value.len > value_bytes_max) return "a header value has at most 1024 bytes";
    for (value) |c| if ((c < ' ' and c != '\t') or c == 0x7f) {
        return "a header field value cannot hold control characters such as CR or LF";
    };
    var pieces: Pieces = .{ .template = value };
    while (pieces.next()) |piece| switch (piece) {
        .literal, .variable => {},
        .unknown => return "unknown variable: a value may use $client_ip, $request_id, $scheme, " ++
            "$host, and $$ for a $",
    };
    return null;
}

/// The most bytes `value` can expand to.
pub fn expandedBytesMax(value: []const u8) usize {
    var total: usize = 0;
    var pieces: Pieces = .{ .template = value };
    while (pieces.next()) |piece| total += switch (piece) {
        .literal => |text| text.len,
        .variable => |variable| variable.bytesMax(),
        .unknown => 0,
    };
    return total;
}

/// Whether `value` names a variable (then it is expanded per request; else written as is).
pub fn hasVariables(value: []const u8) bool {
    return std.mem.findScalar(u8, value, '$') != null;
}

pub fn usesVariable(value: []const u8, wanted: Variable) bool {
    var pieces: Pieces = .{ .template = value };
    while (pieces.next()) |piece| switch (piece) {
        .variable => |variable| if (variable == wanted) return true,
        .literal, .unknown => {},
    };
    return false;
}

/// A value split into literal text and variables.
pub const Pieces = struct {
    template: []const u8,
    at: usize = 0,

    pub const Piece = union(enum) {
        literal: []const u8,
        variable: Variable,
        /// `$` followed by no known name.
        unknown,
    };

    pub fn next(pieces: *Pieces) ?Piece {
        const rest = pieces.template[pieces.at..];
        if (rest.len == 0) return null;
        if (rest[0] != '$') {
            const end = std.mem.findScalar(u8, rest, '$') orelse rest.len;
            pieces.at += end;
            return .{ .literal = rest[0..end] };
        }
        if (rest.len >= 2 and rest[1] == '$') {
            pieces.at += 2;
            return .{ .literal = "$" };
        }
        var name_len: usize = 1;
        while (name_len < rest.len and (std.ascii.isAlphanumeric(rest[name_len]) or rest[name_len] == '_')) name_len += 1;
        pieces.at += name_len;
        const name = rest[1..name_len];
        inline for (@typeInfo(Variable).@"enum".field_names) |tag| {
            if (std.mem.eql(u8, name, tag)) return .{ .variable = @field(Variable, tag) };
        }
        return .unknown;
    }
};

/// The lines of a side's `set` or `add` text as (name, value).
pub const FieldLines = struct {
    text: []const u8,

    pub fn next(lines: *FieldLines) ?struct { name: []const u8, value: []const u8 } {
        if (lines.text.len == 0) return null;
        const end = std.mem.find(u8, lines.text, "\r\n").?; // Written by the mappers.
        const line = lines.text[0..end];
        lines.text = lines.text[end + 2 ..];
        const colon = std.mem.findScalar(u8, line, ':').?; // A name is a token: no ':'.
        return .{ .name = line[0..colon], .value = std.mem.trimStart(u8, line[colon + 1 ..], " ") };
    }
};

/// The lines of a side's `remove` text.
pub const NameLines = struct {
    text: []const u8,

    pub fn next(lines: *NameLines) ?[]const u8 {
        if (lines.text.len == 0) return null;
        const end = std.mem.find(u8, lines.text, "\r\n").?;
        const name = lines.text[0..end];
        lines.text = lines.text[end + 2 ..];
        return name;
    }
};

/// `NAME: VALUE` as the command line takes it (`--request-header 'X-Env: prod'`): the name and
/// the value with the spaces after the colon dropped, or why it is not one.
pub fn parseFlagField(direction: Direction, text: []const u8) union(enum) {
    field: struct { name: []const u8, value: []const u8 },
    mistake: []const u8,
} {
    const colon = std.mem.findScalar(u8, text, ':') orelse
        return .{ .mistake = "expected NAME: VALUE, such as 'X-Frame-Options: DENY'" };
    const name = text[0..colon];
    const value = std.mem.trim(u8, text[colon + 1 ..], " \t");
    if (nameMistake(direction, name)) |mistake| return .{ .mistake = mistake };
    if (valueMistake(value)) |mistake| return .{ .mistake = mistake };
    return .{ .field = .{ .name = name, .value = value } };
}

const testing = std.testing;

test "header rules: values split into literals and variables; unknown ones are refused" {
    var pieces: Pieces = .{ .template = "for=$client_ip; id=$request_id $$5 $host$scheme" };
    const expected = [_]Pieces.Piece{
        .{ .literal = "for=" },       .{ .variable = .client_ip }, .{ .literal = "; id=" },
        .{ .variable = .request_id }, .{ .literal = " " },         .{ .literal = "$" },
        .{ .literal = "5 " },         .{ .variable = .host },      .{ .variable = .scheme },
    };
    for (expected) |want| try testing.expectEqualDeep(want, pieces.next().?);
    try testing.expectEqual(null, pieces.next());
    try testing.expect(valueMistake("a $nope") != null);
    try testing.expect(valueMistake("a $") != null);
    try testing.expect(valueMistake("a\r\nInjected: 1") != null);
    try testing.expect(valueMistake("max-age=63072000; includeSubDomains") == null);
    try testing.expectEqual(@as(usize, 4 + 46), expandedBytesMax("for=$client_ip"));
}

test "header rules: fields sluice owns are refused, by side" {
    try testing.expect(nameMistake(.response, "Content-Length") != null);
    try testing.expect(nameMistake(.request, "transfer-encoding") != null);
    try testing.expect(nameMistake(.request, "X-Forwarded-For") != null);
    try testing.expect(nameMistake(.response, "X-Forwarded-For") == null);
    try testing.expect(nameMistake(.request, "Host") != null);
    try testing.expect(nameMistake(.request, "X Bad") != null);
    try testing.expect(nameMistake(.response, "Strict-Transport-Security") == null);
    try testing.expectEqualStrings("X-Env", parseFlagField(.request, "X-Env:  prod ").field.name);
    try testing.expectEqualStrings("prod", parseFlagField(.request, "X-Env:  prod ").field.value);
    try testing.expect(parseFlagField(.request, "X-Env prod") == .mistake);
}

test "header rules: request ids the client sends are kept only when plain" {
    try testing.expect(requestIdValid("3f2a9c1e-77b0-4c1d-9d1e-0123456789ab"));
    try testing.expect(!requestIdValid(""));
    try testing.expect(!requestIdValid("a\"b"));
    try testing.expect(!requestIdValid("a b"));
    try testing.expect(!requestIdValid(&@as([65]u8, @splat('x'))));
}
