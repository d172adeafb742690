//! The URL standard's basic URL parser (WHATWG, as node 20's ada implements it), on UTF-8
//! bytes, with no engine in sight: a `Record` of serialized components, the host parser
//! (domains, IPv4 in all its forms, IPv6), the percent-encode sets, dot-segment removal and
//! default ports, and the serializer.
//!
//! Decision: a record's path is kept serialized ("/a/b", or an opaque path's text) rather
//! than as a list of segments: appending a segment is appending "/seg" and shortening is
//! cutting at the last "/", so the whole parse writes into one buffer the caller sizes with
//! `capacityFor` and nothing grows. Hosts that are not ASCII after percent-decoding would need
//! IDNA (UTS 46 mapping and punycode); they are refused with `error.Idna`, which the engine
//! reports as a TypeError that says so. Labels that start with "xn--" are not checked.
const std = @import("std");
const assert = std.debug.assert;

pub const Failure = error{ Invalid, Idna };

pub const Record = struct {
    scheme: []const u8 = "",
    username: []const u8 = "",
    password: []const u8 = "",
    /// Serialized (an IPv6 address in brackets); null when the URL has no host.
    host: ?[]const u8 = null,
    port: ?u16 = null,
    /// "/a/b" for a list of segments, the text itself for an opaque path.
    path: []const u8 = "",
    opaque_path: bool = false,
    query: ?[]const u8 = null,
    fragment: ?[]const u8 = null,

    pub fn isSpecial(r: *const Record) bool {
        return defaultPort(r.scheme) != null or std.mem.eql(u8, r.scheme, "file");
    }

    pub fn hasCredentials(r: *const Record) bool {
        return r.username.len > 0 or r.password.len > 0;
    }

    /// The URL serializer. `out` must hold `serializedLen(r)` bytes.
    pub fn serialize(r: *const Record, out: []u8) []const u8 {
        var w: Out = .{ .buf = out };
        w.put(r.scheme);
        w.put(":");
        if (r.host) |host| {
            w.put("//");
            if (r.hasCredentials()) {
                w.put(r.username);
                if (r.password.len > 0) {
                    w.put(":");
                    w.put(r.password);
                }
                w.put("@");
            }
            w.put(host);
            if (r.port) |port| w.printPort(port);
        } else if (!r.opaque_path and r.path.len > 1 and r.path[0] == '/' and r.path[1] == '/') {
            w.put("/.");
        }
        w.put(r.path);
        if (r.query) |q| {
            w.put("?");
            w.put(q);
        }
        if (r.fragment) |f| {
            w.put("#");
            w.put(f);
        }
        return w.written();
    }

    pub fn serializedLen(r: *const Record) usize {
        var n = r.scheme.len + 1 + 2 + r.path.len;
        if (r.host) |host| n += 2 + r.username.len + 1 + r.password.len + 1 + host.len + 6;
        if (r.query) |q| n += 1 + q.len;
        if (r.fragment) |f| n += 1 + f.len;
        return n;
    }
};

/// The default port of a special scheme; null for other schemes (and for file).
pub fn defaultPort(scheme: []const u8) ?u16 {
    const table = [_]struct { []const u8, u16 }{
        .{ "http", 80 }, .{ "https", 443 }, .{ "ws", 80 }, .{ "wss", 443 }, .{ "ftp", 21 },
    };
    for (table) |t| if (std.mem.eql(u8, t[0], scheme)) return t[1];
    return null;
}

pub fn isSpecialScheme(scheme: []const u8) bool {
    return defaultPort(scheme) != null or std.mem.eql(u8, scheme, "file");
}

/// The bytes a parse of `input` against `base` may write: every input byte percent-encoded
/// (3 each), the base's path copied, and room for a host serialized longer than its text
/// (IPv4 "0" is "0.0.0.0") and the "/" of an empty special path.
pub fn capacityFor(input_len: usize, base: ?*const Record) usize {
    const base_len = if (base) |b| b.path.len else 0;
    return input_len * 3 + base_len + 64;
}

/// A bump writer over a buffer sized by `capacityFor`.
pub const Out = struct {
    buf: []u8,
    len: usize = 0,

    fn put(w: *Out, bytes: []const u8) void {
        @memcpy(w.buf[w.len..][0..bytes.len], bytes);
        w.len += bytes.len;
    }

    fn byte(w: *Out, b: u8) void {
        w.buf[w.len] = b;
        w.len += 1;
    }

    fn written(w: *const Out) []const u8 {
        return w.buf[0..w.len];
    }

    fn since(w: *const Out, start: usize) []const u8 {
        return w.buf[start..w.len];
    }

    fn printPort(w: *Out, port: u16) void {
        const text = std.fmt.bufPrint(w.buf[w.len + 1 ..], "{d}", .{port}) catch unreachable; // Sized.
        w.buf[w.len] = ':';
        w.len += 1 + text.len;
    }

    /// `bytes` with each byte of `set` as %XX (upper-case hex).
    fn encode(w: *Out, bytes: []const u8, set: EncodeSet) void {
        for (bytes) |b| {
            if (set.has(b)) {
                const hex = "0123456789ABCDEF";
                w.put(&.{ '%', hex[b >> 4], hex[b & 0x0F] });
            } else {
                w.byte(b);
            }
        }
    }
};

/// The percent-encode sets of the URL standard, each a superset of the one before.
pub const EncodeSet = enum {
    c0_control,
    fragment,
    query,
    special_query,
    path,
    userinfo,

    pub fn has(set: EncodeSet, b: u8) bool {
        if (b < 0x20 or b > 0x7E) return true;
        return switch (set) {
            .c0_control => false,
            .fragment => switch (b) {
                ' ', '"', '<', '>', '`' => true,
                else => false,
            },
            .query => switch (b) {
                ' ', '"', '#', '<', '>' => true,
                else => false,
            },
            .special_query => b == '\'' or EncodeSet.query.has(b),
            .path => switch (b) {
                '?', '`', '{', '}' => true,
                else => EncodeSet.query.has(b),
            },
            .userinfo => switch (b) {
                '/', ':', ';', '=', '@', '[', '\\', ']', '^', '|' => true,
                else => EncodeSet.path.has(b),
            },
        };
    }
};

/// Parses `raw` (UTF-8; tabs and newlines are removed from it in place) against an optional
/// base into `buf` (`capacityFor` bytes).
pub fn parse(buf: []u8, raw: []u8, base: ?*const Record) Failure!Record {
    var p: Parser = .{ .in = clean(raw), .out = .{ .buf = buf }, .base = base };
    return p.run();
}

/// Leading and trailing C0 controls and spaces go, and tabs and newlines anywhere.
fn clean(raw: []u8) []const u8 {
    var start: usize = 0;
    var end = raw.len;
    while (start < end and raw[start] <= 0x20) start += 1;
    while (end > start and raw[end - 1] <= 0x20) end -= 1;
    var n = start;
    for (raw[start..end]) |b| {
        if (b == '\t' or b == '\n' or b == '\r') continue;
        raw[n] = b;
        n += 1;
    }
    return raw[start..n];
}

const Parser = struct {
    in: []const u8,
    i: usize = 0,
    out: Out,
    base: ?*const Record,
    special: bool = false,
    /// A setter's parse (the standard's "state override"): `?` and `#` are data.
    override: bool = false,

    fn peek(p: *const Parser) ?u8 {
        return if (p.i < p.in.len) p.in[p.i] else null;
    }

    fn peekAt(p: *const Parser, offset: usize) ?u8 {
        return if (p.i + offset < p.in.len) p.in[p.i + offset] else null;
    }

    fn advance(p: *Parser) void {
        assert(p.i < p.in.len);
        p.i += 1;
    }

    fn isSlash(p: *const Parser, c: ?u8) bool {
        const b = c orelse return false;
        return b == '/' or (p.special and b == '\\');
    }

    /// The input up to the first byte `stop` accepts (or the end).
    fn take(p: *Parser, comptime stop: fn (*const Parser, u8) bool) []const u8 {
        const start = p.i;
        while (p.i < p.in.len and !stop(p, p.in[p.i])) p.i += 1;
        return p.in[start..p.i];
    }

    fn run(p: *Parser) Failure!Record {
        var r: Record = .{};
        if (p.schemeEnd()) |colon| {
            const start = p.out.len;
            for (p.in[0..colon]) |b| p.out.byte(std.ascii.toLower(b));
            r.scheme = p.out.since(start);
            p.i = colon + 1;
            return p.afterScheme(&r);
        }
        const base = p.base orelse return error.Invalid;
        if (base.opaque_path) {
            if (p.peek() != '#') return error.Invalid;
            r = base.*;
            p.advance();
            p.fragment(&r);
            return r;
        }
        r.scheme = base.scheme;
        p.special = r.isSpecial();
        if (std.mem.eql(u8, r.scheme, "file")) return p.file(&r);
        return p.relative(&r, base);
    }

    /// The index of the `:` that ends a scheme, or null when the input starts with none.
    fn schemeEnd(p: *Parser) ?usize {
        var j: usize = 0;
        var first = true;
        while (j < p.in.len) : (j += 1) {
            const b = p.in[j];
            if (first) {
                if (!std.ascii.isAlphabetic(b)) return null;
                first = false;
                continue;
            }
            if (b == ':') return j;
            if (!(std.ascii.isAlphanumeric(b) or b == '+' or b == '-' or b == '.')) return null;
        }
        return null;
    }

    fn afterScheme(p: *Parser, r: *Record) Failure!Record {
        p.special = r.isSpecial();
        if (std.mem.eql(u8, r.scheme, "file")) {
            return p.file(r);
        }
        if (p.special) {
            if (p.base) |base| {
                if (std.mem.eql(u8, base.scheme, r.scheme) and !(p.peek() == '/' and p.peekAt(1) == '/')) {
                    return p.relative(r, base);
                }
            }
            while (p.isSlash(p.peek())) p.advance();
            try p.authority(r);
            return p.pathStart(r);
        }
        if (p.peek() == '/') {
            p.advance();
            if (p.peek() == '/') {
                p.advance();
                try p.authority(r);
                return p.pathStart(r);
            }
            try p.pathState(r, p.out.len);
            return p.tail(r);
        }
        r.opaque_path = true;
        const start = p.out.len;
        const text = p.take(stopAtQueryOrFragment);
        p.out.encode(text, .c0_control);
        r.path = p.out.since(start);
        return p.tail(r);
    }

    fn relative(p: *Parser, r: *Record, base: *const Record) Failure!Record {
        const c = p.peek() orelse {
            copyAuthority(r, base);
            return p.fromBasePath(r, base);
        };
        if (p.isSlash(c)) {
            p.advance();
            if (p.special and p.isSlash(p.peek())) {
                while (p.isSlash(p.peek())) p.advance();
                try p.authority(r);
                return p.pathStart(r);
            }
            if (!p.special and p.peek() == '/') {
                p.advance();
                try p.authority(r);
                return p.pathStart(r);
            }
            copyAuthority(r, base);
            try p.pathState(r, p.out.len);
            return p.tail(r);
        }
        copyAuthority(r, base);
        return p.fromBasePath(r, base);
    }

    /// The input continues the base's path: the end keeps its path and query, a query or a
    /// fragment keeps its path (a fragment its query too), anything else replaces its last
    /// segment.
    fn fromBasePath(p: *Parser, r: *Record, base: *const Record) Failure!Record {
        const start = p.out.len;
        p.out.put(base.path);
        r.path = p.out.since(start);
        const c = p.peek() orelse {
            r.query = base.query;
            return r.*;
        };
        if (c == '?' or c == '#') {
            if (c == '#') r.query = base.query;
            return p.tail(r);
        }
        p.shorten(r, start);
        try p.pathState(r, start);
        return p.tail(r);
    }

    fn copyAuthority(r: *Record, base: *const Record) void {
        r.username = base.username;
        r.password = base.password;
        r.host = base.host;
        r.port = base.port;
    }

    /// The file scheme: its host is never null, and "localhost" is the empty host.
    fn file(p: *Parser, r: *Record) Failure!Record {
        p.special = true;
        r.host = "";
        if (p.isSlash(p.peek())) {
            p.advance();
            if (p.isSlash(p.peek())) {
                p.advance();
                const host_start = p.i;
                const text = p.take(stopAtAuthorityEnd);
                if (isWindowsDriveLetter(text)) {
                    // "file://C:/x": the drive letter is the path's first segment.
                    p.i = host_start;
                    try p.pathState(r, p.out.len);
                    return p.tail(r);
                }
                if (text.len > 0) {
                    const host = try p.hostParse(text, true);
                    r.host = if (std.mem.eql(u8, host, "localhost")) "" else host;
                }
                return p.pathStart(r);
            }
            if (p.base) |base| if (std.mem.eql(u8, base.scheme, "file")) {
                r.host = base.host;
            };
            try p.pathState(r, p.out.len);
            return p.tail(r);
        }
        if (p.base) |base| if (std.mem.eql(u8, base.scheme, "file")) {
            r.host = base.host;
            return p.fromBasePath(r, base);
        };
        try p.pathState(r, p.out.len);
        return p.tail(r);
    }

    fn stopAtAuthorityEnd(p: *const Parser, b: u8) bool {
        return b == '/' or b == '?' or b == '#' or (p.special and b == '\\');
    }

    fn stopAtQueryOrFragment(p: *const Parser, b: u8) bool {
        _ = p;
        return b == '?' or b == '#';
    }

    fn stopAtFragment(p: *const Parser, b: u8) bool {
        _ = p;
        return b == '#';
    }

    fn stopAtSegmentEnd(p: *const Parser, b: u8) bool {
        if (p.override and (b == '?' or b == '#')) return false;
        return b == '/' or b == '?' or b == '#' or (p.special and b == '\\');
    }

    /// userinfo@host:port, up to the path.
    fn authority(p: *Parser, r: *Record) Failure!void {
        const text = p.take(stopAtAuthorityEnd);
        var host_port = text;
        if (std.mem.lastIndexOfScalar(u8, text, '@')) |at| {
            const info = text[0..at];
            host_port = text[at + 1 ..];
            if (host_port.len == 0) return error.Invalid;
            const colon = std.mem.indexOfScalar(u8, info, ':');
            var start = p.out.len;
            p.out.encode(info[0 .. colon orelse info.len], .userinfo);
            r.username = p.out.since(start);
            if (colon) |c| {
                start = p.out.len;
                p.out.encode(info[c + 1 ..], .userinfo);
                r.password = p.out.since(start);
            }
        }
        const colon = portColon(host_port);
        const host_text = host_port[0 .. colon orelse host_port.len];
        if (host_text.len == 0) {
            if (p.special or colon != null or r.hasCredentials()) return error.Invalid;
            r.host = "";
            return;
        }
        r.host = try p.hostParse(host_text, p.special);
        if (colon) |c| r.port = try parsePort(host_port[c + 1 ..], r.scheme);
    }

    fn pathStart(p: *Parser, r: *Record) Failure!Record {
        const c = p.peek();
        if (p.special) {
            if (p.isSlash(c)) p.advance();
            try p.pathState(r, p.out.len);
            return p.tail(r);
        }
        if (c == null or c == '?' or c == '#') return p.tail(r);
        p.advance(); // The '/' that ended the authority.
        try p.pathState(r, p.out.len);
        return p.tail(r);
    }

    /// Segments up to the query or the fragment, appended to the path that starts at
    /// `start` in the output (a copied base path, or nothing).
    fn pathState(p: *Parser, r: *Record, start: usize) Failure!void {
        while (true) {
            const segment = p.take(stopAtSegmentEnd);
            const c = p.peek();
            const slash = p.isSlash(c);
            if (isDoubleDot(segment)) {
                const had_segments = p.out.len > start;
                p.shorten(r, start);
                // node's ada leaves an empty path empty for other schemes ("foo://h/.." is
                // "foo://h"), where the standard would make it "/".
                if (!slash and (p.special or had_segments)) p.out.byte('/');
            } else if (isSingleDot(segment)) {
                if (!slash) p.out.byte('/');
            } else {
                p.out.byte('/');
                p.out.encode(segment, .path);
            }
            r.path = p.out.since(start);
            if (!slash) return;
            p.advance();
        }
    }

    /// Removes the last segment of the path at [start, out.len); a file URL's lone drive
    /// letter stays.
    fn shorten(p: *Parser, r: *Record, start: usize) void {
        const path = p.out.since(start);
        if (std.mem.eql(u8, r.scheme, "file") and path.len == 3 and std.ascii.isAlphabetic(path[1]) and path[2] == ':') return;
        const cut = std.mem.lastIndexOfScalar(u8, path, '/') orelse return;
        p.out.len = start + cut;
        r.path = p.out.since(start);
    }

    /// The query and fragment, if the input has them.
    fn tail(p: *Parser, r: *Record) Record {
        if (p.peek() == '?') {
            p.advance();
            const text = p.take(stopAtFragment);
            const start = p.out.len;
            p.out.encode(text, if (p.special) .special_query else .query);
            r.query = p.out.since(start);
        }
        if (p.peek() == '#') {
            p.advance();
            p.fragment(r);
        }
        return r.*;
    }

    fn fragment(p: *Parser, r: *Record) void {
        const text = p.take(stopNever);
        const start = p.out.len;
        p.out.encode(text, .fragment);
        r.fragment = p.out.since(start);
    }

    fn stopNever(p: *const Parser, b: u8) bool {
        _ = p;
        _ = b;
        return false;
    }

    fn hostParse(p: *Parser, text: []const u8, special: bool) Failure![]const u8 {
        return parseHost(&p.out, text, special);
    }
};

/// The `:` before a port: the first outside an IPv6 address's brackets.
fn portColon(text: []const u8) ?usize {
    var in_brackets = false;
    for (text, 0..) |b, i| {
        switch (b) {
            '[' => in_brackets = true,
            ']' => in_brackets = false,
            ':' => if (!in_brackets) return i,
            else => {},
        }
    }
    return null;
}

/// Digits only, at most 65535; empty or the scheme's default is no port.
fn parsePort(text: []const u8, scheme: []const u8) Failure!?u16 {
    if (text.len == 0) return null;
    var port: u32 = 0;
    for (text) |b| {
        if (!std.ascii.isDigit(b)) return error.Invalid;
        port = port * 10 + (b - '0');
        if (port > 65535) return error.Invalid;
    }
    if (defaultPort(scheme) == @as(u16, @intCast(port))) return null;
    return @intCast(port);
}

/// The leading digits of a port setter's value: null when there are none or too many.
pub fn portPrefix(text: []const u8) ?u16 {
    var port: u32 = 0;
    var n: usize = 0;
    while (n < text.len and std.ascii.isDigit(text[n])) : (n += 1) {
        port = port * 10 + (text[n] - '0');
        if (port > 65535) return null;
    }
    if (n == 0) return null;
    return @intCast(port);
}

fn isWindowsDriveLetter(s: []const u8) bool {
    return s.len == 2 and std.ascii.isAlphabetic(s[0]) and (s[1] == ':' or s[1] == '|');
}

fn isSingleDot(s: []const u8) bool {
    return std.mem.eql(u8, s, ".") or std.ascii.eqlIgnoreCase(s, "%2e");
}

fn isDoubleDot(s: []const u8) bool {
    for ([_][]const u8{ "..", ".%2e", "%2e.", "%2e%2e" }) |d| {
        if (std.ascii.eqlIgnoreCase(s, d)) return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------
// Setters: each changes one component of a record the way the standard's state-override
// parse does, or leaves the record as it was when the value does not fit. `buf` is
// `capacityFor(value.len, null)` bytes; `value` has had its tabs and newlines removed
// (`removeTabsAndNewlines`).

pub fn removeTabsAndNewlines(raw: []u8) []u8 {
    var n: usize = 0;
    for (raw) |b| {
        if (b == '\t' or b == '\n' or b == '\r') continue;
        raw[n] = b;
        n += 1;
    }
    return raw[0..n];
}

pub fn setProtocol(r: *Record, buf: []u8, value: []const u8) void {
    const end = std.mem.indexOfScalar(u8, value, ':') orelse value.len;
    const text = value[0..end];
    if (text.len == 0 or !std.ascii.isAlphabetic(text[0])) return;
    for (text) |b| if (!(std.ascii.isAlphanumeric(b) or b == '+' or b == '-' or b == '.')) return;
    const scheme = std.ascii.lowerString(buf[0..text.len], text);
    if (isSpecialScheme(scheme) != r.isSpecial()) return;
    const is_file = std.mem.eql(u8, scheme, "file");
    if (is_file and (r.hasCredentials() or r.port != null)) return;
    if (std.mem.eql(u8, r.scheme, "file") and r.host != null and r.host.?.len == 0) return;
    r.scheme = scheme;
    if (r.port != null and defaultPort(scheme) == r.port.?) r.port = null;
}

fn cannotHaveCredentials(r: *const Record) bool {
    return r.host == null or r.host.?.len == 0 or std.mem.eql(u8, r.scheme, "file");
}

pub fn setUsername(r: *Record, buf: []u8, value: []const u8) void {
    if (cannotHaveCredentials(r)) return;
    var out: Out = .{ .buf = buf };
    out.encode(value, .userinfo);
    r.username = out.written();
}

pub fn setPassword(r: *Record, buf: []u8, value: []const u8) void {
    if (cannotHaveCredentials(r)) return;
    var out: Out = .{ .buf = buf };
    out.encode(value, .userinfo);
    r.password = out.written();
}

/// `host` (with_port) or `hostname`.
pub fn setHost(r: *Record, buf: []u8, value: []const u8, with_port: bool) error{Idna}!void {
    if (r.opaque_path) return;
    const special = r.isSpecial();
    var end: usize = 0;
    while (end < value.len) : (end += 1) {
        const b = value[end];
        if (b == '/' or b == '?' or b == '#' or (special and b == '\\')) break;
    }
    const text = value[0..end];
    // A file URL has no port: its host is all the text.
    const colon = if (std.mem.eql(u8, r.scheme, "file")) null else portColon(text);
    if (colon != null and !with_port) return;
    const host_text = text[0 .. colon orelse text.len];
    if (host_text.len == 0) {
        // node's ada takes "" (even before a ":") as the empty host of other schemes.
        if (special) return;
        if (r.hasCredentials() or r.port != null) return;
        r.host = "";
        return;
    }
    var out: Out = .{ .buf = buf };
    const host = parseHost(&out, host_text, special) catch |err| switch (err) {
        error.Idna => return error.Idna,
        error.Invalid => return,
    };
    if (std.mem.eql(u8, r.scheme, "file") and std.mem.eql(u8, host, "localhost")) {
        r.host = "";
    } else {
        r.host = host;
    }
    if (colon) |c| {
        const port = portPrefix(text[c + 1 ..]) orelse return;
        r.port = if (defaultPort(r.scheme) == port) null else port;
    }
}

/// As node's ada does it: an empty value clears the port; a value that starts with a
/// control or a space, or has no digit at all, changes nothing; one with digits but none
/// in front clears the port; otherwise the leading digits are the port (too large: no
/// change).
pub fn setPort(r: *Record, value: []const u8) void {
    if (cannotHaveCredentials(r)) return;
    if (value.len == 0) {
        r.port = null;
        return;
    }
    if (value[0] <= 0x20) return;
    if (std.mem.indexOfAny(u8, value, "0123456789") == null) return;
    if (!std.ascii.isDigit(value[0])) {
        r.port = null;
        return;
    }
    const port = portPrefix(value) orelse return;
    r.port = if (defaultPort(r.scheme) == port) null else port;
}

pub fn setPathname(r: *Record, buf: []u8, value: []const u8) void {
    if (r.opaque_path) return;
    var p: Parser = .{ .in = value, .out = .{ .buf = buf }, .base = null, .override = true };
    p.special = r.isSpecial();
    r.path = "";
    if (p.special) {
        if (p.isSlash(p.peek())) p.advance();
    } else if (p.peek() == null) {
        return;
    } else if (p.peek() == '/') {
        p.advance();
    }
    p.pathState(r, 0) catch unreachable; // The path state fails on nothing.
}

pub fn setSearch(r: *Record, buf: []u8, value: []const u8) void {
    if (value.len == 0) {
        r.query = null;
        return;
    }
    const text = if (value[0] == '?') value[1..] else value;
    var out: Out = .{ .buf = buf };
    out.encode(text, if (r.isSpecial()) .special_query else .query);
    r.query = out.written();
}

pub fn setHash(r: *Record, buf: []u8, value: []const u8) void {
    if (value.len == 0) {
        r.fragment = null;
        return;
    }
    const text = if (value[0] == '#') value[1..] else value;
    var out: Out = .{ .buf = buf };
    out.encode(text, .fragment);
    r.fragment = out.written();
}

// ---------------------------------------------------------------------------------------
// Hosts.

/// The host parser: the serialized host, written to `out`.
pub fn parseHost(out: *Out, text: []const u8, special: bool) Failure![]const u8 {
    const start = out.len;
    if (text.len > 0 and text[0] == '[') {
        if (text.len < 2 or text[text.len - 1] != ']') return error.Invalid;
        const address = try parseIpv6(text[1 .. text.len - 1]);
        out.byte('[');
        writeIpv6(out, address);
        out.byte(']');
        return out.since(start);
    }
    if (!special) {
        for (text) |b| if (isForbiddenHost(b)) return error.Invalid;
        out.encode(text, .c0_control);
        return out.since(start);
    }
    // Percent-decode and lower-case into the output, then check what it holds.
    var i: usize = 0;
    while (i < text.len) : (i += 1) {
        const b = text[i];
        if (b == '%' and i + 2 < text.len and isHex(text[i + 1]) and isHex(text[i + 2])) {
            out.byte(std.ascii.toLower((hexValue(text[i + 1]) << 4) | hexValue(text[i + 2])));
            i += 2;
        } else {
            out.byte(std.ascii.toLower(b));
        }
    }
    const domain = out.since(start);
    if (domain.len == 0) return error.Invalid;
    var ascii = true;
    for (domain) |b| {
        if (b >= 0x80) ascii = false else if (isForbiddenDomain(b)) return error.Invalid;
    }
    // IDNA maps only the labels that are not ASCII, so a last label that is a number is
    // one after it too.
    if (!ascii and !endsInNumber(domain)) return error.Idna;
    if (endsInNumber(domain)) {
        const address = try parseIpv4(domain);
        out.len = start;
        writeIpv4(out, address);
    }
    return out.since(start);
}

fn isHex(b: u8) bool {
    return std.ascii.isHex(b);
}

fn hexValue(b: u8) u8 {
    return std.fmt.charToDigit(b, 16) catch unreachable; // Checked by isHex.
}

fn isForbiddenHost(b: u8) bool {
    return switch (b) {
        0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|' => true,
        else => false,
    };
}

fn isForbiddenDomain(b: u8) bool {
    return isForbiddenHost(b) or b <= 0x1F or b == '%' or b == 0x7F;
}

/// Whether the last label (a trailing empty one aside) is a number, which makes the whole
/// host an IPv4 address or a failure.
fn endsInNumber(domain: []const u8) bool {
    var text = domain;
    if (text[text.len - 1] == '.') text = text[0 .. text.len - 1];
    const dot = std.mem.lastIndexOfScalar(u8, text, '.');
    const last = if (dot) |d| text[d + 1 ..] else text;
    if (last.len > 0 and allDigits(last)) return true;
    _ = parseIpv4Number(last) catch return false;
    return true;
}

fn allDigits(s: []const u8) bool {
    for (s) |b| if (!std.ascii.isDigit(b)) return false;
    return true;
}

/// One part of an IPv4 address: decimal, 0x-hex or 0-octal, as large as it is (u64 with a
/// cap, so "99999999999999999999" is too large rather than wrapped).
fn parseIpv4Number(text: []const u8) error{Invalid}!u64 {
    if (text.len == 0) return error.Invalid;
    var digits = text;
    var radix: u8 = 10;
    if (digits.len >= 2 and digits[0] == '0' and (digits[1] == 'x' or digits[1] == 'X')) {
        digits = digits[2..];
        radix = 16;
    } else if (digits.len >= 2 and digits[0] == '0') {
        digits = digits[1..];
        radix = 8;
    }
    if (digits.len == 0) return 0;
    var n: u64 = 0;
    for (digits) |b| {
        const d = std.fmt.charToDigit(b, radix) catch return error.Invalid;
        n = n *| radix +| d;
    }
    return n;
}

fn parseIpv4(domain: []const u8) Failure!u32 {
    var text = domain;
    if (text[text.len - 1] == '.') text = text[0 .. text.len - 1];
    var numbers: [4]u64 = undefined;
    var count: usize = 0;
    var parts = std.mem.splitScalar(u8, text, '.');
    while (parts.next()) |part| {
        if (count == 4) return error.Invalid;
        numbers[count] = parseIpv4Number(part) catch return error.Invalid;
        count += 1;
    }
    for (numbers[0 .. count - 1]) |n| if (n > 255) return error.Invalid;
    const last_limit = @as(u64, 1) << @intCast(8 * (5 - count));
    if (numbers[count - 1] >= last_limit) return error.Invalid;
    var address: u64 = numbers[count - 1];
    for (numbers[0 .. count - 1], 0..) |n, i| address += n << @intCast(8 * (3 - i));
    return @intCast(address);
}

fn writeIpv4(out: *Out, address: u32) void {
    var i: u5 = 0;
    while (i < 4) : (i += 1) {
        if (i > 0) out.byte('.');
        const octet: u8 = @truncate(address >> (24 - @as(u5, i) * 8));
        const text = std.fmt.bufPrint(out.buf[out.len..], "{d}", .{octet}) catch unreachable; // Sized.
        out.len += text.len;
    }
}

fn parseIpv6(text: []const u8) Failure![8]u16 {
    var address: [8]u16 = @splat(0);
    var piece: usize = 0;
    var compress: ?usize = null;
    var i: usize = 0;
    if (text.len > 0 and text[0] == ':') {
        if (text.len < 2 or text[1] != ':') return error.Invalid;
        i = 2;
        piece = 1;
        compress = 1;
    }
    while (i < text.len) {
        if (piece == 8) return error.Invalid;
        if (text[i] == ':') {
            if (compress != null) return error.Invalid;
            i += 1;
            piece += 1;
            compress = piece;
            continue;
        }
        var value: u16 = 0;
        var length: usize = 0;
        while (length < 4 and i < text.len and isHex(text[i])) : ({
            i += 1;
            length += 1;
        }) value = value * 16 + hexValue(text[i]);
        if (i < text.len and text[i] == '.') {
            if (length == 0 or piece > 6) return error.Invalid;
            try parseEmbeddedIpv4(text[i - length ..], &address, &piece);
            i = text.len;
            break;
        }
        if (i < text.len and text[i] == ':') {
            i += 1;
            if (i == text.len) return error.Invalid;
        } else if (i < text.len) {
            return error.Invalid;
        }
        address[piece] = value;
        piece += 1;
    }
    if (compress) |c| {
        var swaps = piece - c;
        piece = 7;
        while (piece != 0 and swaps > 0) : ({
            piece -= 1;
            swaps -= 1;
        }) std.mem.swap(u16, &address[piece], &address[c + swaps - 1]);
    } else if (piece != 8) {
        return error.Invalid;
    }
    return address;
}

/// The dotted IPv4 at the end of an IPv6 address: two pieces.
fn parseEmbeddedIpv4(text: []const u8, address: *[8]u16, piece: *usize) Failure!void {
    var numbers_seen: usize = 0;
    var i: usize = 0;
    while (i < text.len) {
        if (numbers_seen > 0) {
            if (text[i] != '.' or numbers_seen >= 4) return error.Invalid;
            i += 1;
        }
        if (i >= text.len or !std.ascii.isDigit(text[i])) return error.Invalid;
        var value: ?u16 = null;
        while (i < text.len and std.ascii.isDigit(text[i])) : (i += 1) {
            const d: u16 = text[i] - '0';
            if (value) |v| {
                if (v == 0) return error.Invalid;
                value = v * 10 + d;
            } else {
                value = d;
            }
            if (value.? > 255) return error.Invalid;
        }
        address[piece.*] = address[piece.*] * 0x100 + value.?;
        numbers_seen += 1;
        if (numbers_seen == 2 or numbers_seen == 4) piece.* += 1;
    }
    if (numbers_seen != 4) return error.Invalid;
}

/// RFC 5952's form: lower-case hex, the first longest run of two or more zero pieces as "::".
fn writeIpv6(out: *Out, address: [8]u16) void {
    var best_start: ?usize = null;
    var best_len: usize = 1;
    var i: usize = 0;
    while (i < 8) {
        if (address[i] != 0) {
            i += 1;
            continue;
        }
        var j = i;
        while (j < 8 and address[j] == 0) j += 1;
        if (j - i > best_len) {
            best_start = i;
            best_len = j - i;
        }
        i = j;
    }
    i = 0;
    while (i < 8) : (i += 1) {
        if (best_start == i) {
            out.put(if (i == 0) "::" else ":");
            i += best_len - 1;
            continue;
        }
        const text = std.fmt.bufPrint(out.buf[out.len..], "{x}", .{address[i]}) catch unreachable; // Sized.
        out.len += text.len;
        if (i != 7) out.byte(':');
    }
}

test "url_parser: special URLs, hosts and paths serialize as the standard says" {
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "HTTP://EXAMPLE.com:80/a/./b/../c?q=1 2#f g", "http://example.com/a/c?q=1%202#f%20g" },
        .{ "http://0x7f.1/", "http://127.0.0.1/" },
        .{ "http://[0:0:0:0:0:0:0:1]:8080", "http://[::1]:8080/" },
        .{ "http://u:p@h/", "http://u:p@h/" },
        .{ "foo://h/%2e%2E/x", "foo://h/x" },
        .{ "mailto:x@y", "mailto:x@y" },
        .{ "http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/" },
    };
    for (cases) |c| {
        var buf: [256]u8 = undefined;
        var href: [256]u8 = undefined;
        var input: [64]u8 = undefined;
        @memcpy(input[0..c[0].len], c[0]);
        const r = try parse(&buf, input[0..c[0].len], null);
        try std.testing.expectEqualStrings(c[1], r.serialize(&href));
    }
}

test "url_parser: invalid inputs fail" {
    const cases = [_][]const u8{ "http://a b/", "http://256.1.1.1.1/", "http://[::1/", "x", "http://:80/", "http://h:99999/" };
    for (cases) |c| {
        var buf: [256]u8 = undefined;
        var input: [64]u8 = undefined;
        @memcpy(input[0..c.len], c);
        try std.testing.expectError(error.Invalid, parse(&buf, input[0..c.len], null));
    }
}
