//! Tests of message.zig: queries as bytes, replies built by hand (a small writer below, and
//! literal bytes where the malformation is in the framing), one test per refusal, and a seeded
//! mutation run that must never crash.
const std = @import("std");
const message = @import("message.zig");
const fuzz = @import("fuzz.zig");
const testing = std.testing;

/// Writes replies byte by byte for the tests; it checks nothing, so tests can lie in any field.
pub const ReplyWriter = struct {
    bytes: [4096]u8 = undefined,
    len: usize = 0,

    pub fn header(w: *ReplyWriter, id: u16, flags: u16, counts: [4]u16) void {
        w.u16be(id);
        w.u16be(flags);
        for (counts) |count| w.u16be(count);
    }

    pub fn name(w: *ReplyWriter, text: []const u8) void {
        w.len += message.encodeName(w.bytes[w.len..], text) catch unreachable;
    }

    pub fn pointer(w: *ReplyWriter, offset: u16) void {
        w.u16be(0xc000 | offset);
    }

    pub fn question(w: *ReplyWriter, text: []const u8, kind: u16) void {
        w.name(text);
        w.u16be(kind);
        w.u16be(1);
    }

    /// A record's fixed part after its owner name.
    pub fn fixed(w: *ReplyWriter, kind: u16, class: u16, ttl: u32, rdata_len: u16) void {
        w.u16be(kind);
        w.u16be(class);
        w.u16be(@truncate(ttl >> 16));
        w.u16be(@truncate(ttl));
        w.u16be(rdata_len);
    }

    pub fn a(w: *ReplyWriter, owner: []const u8, ttl: u32, address: [4]u8) void {
        w.name(owner);
        w.fixed(1, 1, ttl, 4);
        w.raw(&address);
    }

    pub fn cname(w: *ReplyWriter, owner: []const u8, ttl: u32, target: []const u8) void {
        w.name(owner);
        var scratch: [message.name_wire_bytes_max]u8 = undefined;
        const target_len = message.encodeName(&scratch, target) catch unreachable;
        w.fixed(5, 1, ttl, @intCast(target_len));
        w.raw(scratch[0..target_len]);
    }

    pub fn raw(w: *ReplyWriter, bytes: []const u8) void {
        @memcpy(w.bytes[w.len..][0..bytes.len], bytes);
        w.len += bytes.len;
    }

    pub fn u16be(w: *ReplyWriter, value: u16) void {
        std.mem.writeInt(u16, w.bytes[w.len..][0..2], value, .big);
        w.len += 2;
    }

    pub fn slice(w: *const ReplyWriter) []const u8 {
        return w.bytes[0..w.len];
    }
};

const ok: u16 = 0x8180; // QR, RD, RA, NOERROR.
const query_a: message.Query = .{ .id = 0x1234, .name = "api.example", .kind = .a };

fn repeated(comptime byte: u8, comptime count: usize) [count]u8 {
    return @splat(byte);
}

/// A reply to `query_a` with its header and question written.
fn answering(counts: [4]u16) ReplyWriter {
    var w: ReplyWriter = .{};
    w.header(query_a.id, ok, counts);
    w.question(query_a.name, @backingInt(query_a.kind));
    return w;
}

fn parse(bytes: []const u8, query: message.Query) message.ParseError!message.Reply {
    var reply: message.Reply = undefined;
    try message.parseReply(bytes, query, &reply);
    return reply;
}

test "message: a query for A is its header, the name as labels, type and class" {
    var buffer: [message.query_bytes_max]u8 = undefined;
    const bytes = try message.buildQuery(&buffer, query_a, null);
    try testing.expectEqualSlices(u8, &.{
        0x12, 0x34, 0x01, 0x00, 0, 1,   0,   0,   0,   0,   0,   0,
        3,    'a',  'p',  'i',  7, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
        0,    0,    1,    0,    1,
    }, bytes);
}

test "message: a query with EDNS0 adds an OPT record with the UDP size" {
    var buffer: [message.query_bytes_max]u8 = undefined;
    const query: message.Query = .{ .id = 7, .name = "x.", .kind = .srv };
    const bytes = try message.buildQuery(&buffer, query, 1232);
    try testing.expectEqualSlices(u8, &.{
        0, 7, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1,
        1, 'x', 0, 0, 33, 0, 1, // The question.
        0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0, // OPT: root, type 41, 1232.
    }, bytes);
}

test "message: names that cannot be asked are refused" {
    var buffer: [message.query_bytes_max]u8 = undefined;
    const long_label = repeated('a', 64);
    const label_dot = repeated('a', 63) ++ ".";
    const long_name = label_dot ++ label_dot ++ label_dot ++ label_dot; // 256 bytes of text.
    for ([_][]const u8{ "", ".", "a..b", ".a", &long_label, long_name }) |name| {
        const query: message.Query = .{ .id = 1, .name = name, .kind = .a };
        try testing.expectError(error.NameInvalid, message.buildQuery(&buffer, query, null));
    }
    var small: [20]u8 = undefined;
    try testing.expectError(error.NoSpaceLeft, message.buildQuery(&small, query_a, null));
}

test "message: an A answer gives its addresses and the smallest TTL" {
    var w: ReplyWriter = .{};
    w.header(0x1234, ok, .{ 1, 2, 0, 0 });
    w.question("API.example", 1); // Case differs: RFC 4343.
    w.a("api.example", 300, .{ 10, 0, 0, 1 });
    w.pointer(12); // Owner compressed to the question's name.
    w.fixed(1, 1, 60, 4);
    w.raw(&.{ 10, 0, 0, 2 });
    const reply = try parse(w.slice(), query_a);
    try testing.expectEqual(message.Rcode.no_error, reply.rcode);
    try testing.expectEqual(@as(u8, 2), reply.records_count);
    try testing.expectEqual([4]u8{ 10, 0, 0, 1 }, reply.records[0].a);
    try testing.expectEqual([4]u8{ 10, 0, 0, 2 }, reply.records[1].a);
    try testing.expectEqual(@as(u32, 60), reply.ttl_s);
}

test "message: AAAA and SRV records are read, SRV target compressed" {
    var w: ReplyWriter = .{};
    w.header(9, ok, .{ 1, 1, 0, 0 });
    w.question("v6.test", 28);
    w.pointer(12);
    w.fixed(28, 1, 5, 16);
    w.raw(&([_]u8{0x20} ++ repeated(0, 14) ++ [_]u8{1}));
    const six = try parse(w.slice(), .{ .id = 9, .name = "v6.test", .kind = .aaaa });
    try testing.expectEqual(@as(u8, 0x20), six.records[0].aaaa[0]);
    try testing.expectEqual(@as(u32, 5), six.ttl_s);

    w = .{};
    w.header(9, ok, .{ 1, 1, 0, 0 });
    w.question("_http._tcp.svc.test", 33);
    w.pointer(12);
    w.fixed(33, 1, 30, 6 + 2 + 2); // Fixed part, the label "b", a pointer.
    w.raw(&.{ 0, 10, 0, 5, 0x1f, 0x90, 1, 'b' });
    w.pointer(12 + 6 + 5); // "svc.test" inside the question's name, after "_http._tcp".
    const srv = try parse(w.slice(), .{ .id = 9, .name = "_http._tcp.svc.test", .kind = .srv });
    const record = srv.records[0].srv;
    try testing.expectEqual(@as(u16, 10), record.priority);
    try testing.expectEqual(@as(u16, 5), record.weight);
    try testing.expectEqual(@as(u16, 8080), record.port);
    try testing.expectEqualStrings("b.svc.test", record.target.slice());
}

test "message: a CNAME chain is followed, off-chain records are ignored, TTL is the minimum" {
    var w = answering(.{ 1, 4, 0, 0 });
    w.a("evil.example", 1, .{ 6, 6, 6, 6 }); // Not on the chain: ignored.
    w.cname("lb.example", 20, "node.example");
    w.cname("api.example", 100, "lb.example");
    w.a("node.example", 50, .{ 10, 1, 1, 1 });
    const reply = try parse(w.slice(), query_a);
    try testing.expectEqual(@as(u8, 2), reply.cnames_followed);
    try testing.expectEqualStrings("node.example", reply.canonical.slice());
    try testing.expectEqual(@as(u8, 1), reply.records_count);
    try testing.expectEqual([4]u8{ 10, 1, 1, 1 }, reply.records[0].a);
    try testing.expectEqual(@as(u32, 20), reply.ttl_s);
}

test "message: a CNAME loop or a chain too long is refused, as are two CNAMEs for one name" {
    var w = answering(.{ 1, 2, 0, 0 });
    w.cname("api.example", 1, "b.example");
    w.cname("b.example", 1, "api.example");
    try testing.expectError(error.CnameChainTooLong, parse(w.slice(), query_a));

    w = answering(.{ 1, 2, 0, 0 });
    w.cname("api.example", 1, "b.example");
    w.cname("api.example", 1, "c.example");
    try testing.expectError(error.CnameAmbiguous, parse(w.slice(), query_a));
}

test "message: a TTL with its top bit set counts as 0" {
    var w = answering(.{ 1, 1, 0, 0 });
    w.a("api.example", 0x8000_0001, .{ 1, 2, 3, 4 });
    try testing.expectEqual(@as(u32, 0), (try parse(w.slice(), query_a)).ttl_s);
}

test "message: RCODEs: NXDOMAIN, SERVFAIL, the others, and an extended RCODE in OPT" {
    const cases = [_]struct { flags: u16, rcode: message.Rcode }{
        .{ .flags = 0x8183, .rcode = .nxdomain },
        .{ .flags = 0x8182, .rcode = .servfail },
        .{ .flags = 0x8185, .rcode = .other },
        .{ .flags = 0x8181, .rcode = .other },
    };
    for (cases) |case| {
        var w: ReplyWriter = .{};
        w.header(0x1234, case.flags, .{ 1, 0, 0, 0 });
        w.question("api.example", 1);
        const reply = try parse(w.slice(), query_a);
        try testing.expectEqual(case.rcode, reply.rcode);
        try testing.expectEqual(@as(u8, 0), reply.records_count);
    }
    var w = answering(.{ 1, 0, 0, 1 });
    w.raw(&.{0}); // OPT at the root, extended RCODE 1 (BADVERS with the low 0).
    w.fixed(41, 1232, 0x0100_0000, 0);
    try testing.expectEqual(message.Rcode.other, (try parse(w.slice(), query_a)).rcode);
}

test "message: a truncated reply says so and its cut records are not read" {
    var w: ReplyWriter = .{};
    w.header(0x1234, ok | 0x0200, .{ 1, 5, 0, 0 });
    w.question("api.example", 1);
    w.raw(&.{ 3, 'a' }); // Cut in the middle of a name.
    const reply = try parse(w.slice(), query_a);
    try testing.expect(reply.truncated);
    try testing.expectEqual(@as(u8, 0), reply.records_count);
}

test "message: the ID, the QR bit, the opcode and the question must match the query" {
    var w: ReplyWriter = .{};
    w.header(0x1235, ok, .{ 1, 0, 0, 0 });
    w.question("api.example", 1);
    try testing.expectError(error.IdMismatch, parse(w.slice(), query_a));

    w = .{};
    w.header(0x1234, 0x0100, .{ 1, 0, 0, 0 });
    w.question("api.example", 1);
    try testing.expectError(error.NotResponse, parse(w.slice(), query_a));

    w = .{};
    w.header(0x1234, ok | 0x2000, .{ 1, 0, 0, 0 }); // Opcode 4, NOTIFY.
    w.question("api.example", 1);
    try testing.expectError(error.OpcodeMismatch, parse(w.slice(), query_a));

    for ([_]u16{ 0, 2 }) |count| {
        w = answering(.{ count, 0, 0, 0 });
        try testing.expectError(error.QuestionCount, parse(w.slice(), query_a));
    }

    const questions = [_]struct { name: []const u8, kind: u16, class: u16 }{
        .{ .name = "other.example", .kind = 1, .class = 1 },
        .{ .name = "api.example", .kind = 28, .class = 1 },
        .{ .name = "api.example", .kind = 1, .class = 3 },
    };
    for (questions) |question| {
        w = .{};
        w.header(0x1234, ok, .{ 1, 0, 0, 0 });
        w.name(question.name);
        w.u16be(question.kind);
        w.u16be(question.class);
        try testing.expectError(error.QuestionMismatch, parse(w.slice(), query_a));
    }
}

test "message: counts that promise more records than there are, or fewer, are refused" {
    var w = answering(.{ 1, 2, 0, 0 });
    w.a("api.example", 1, .{ 1, 2, 3, 4 });
    try testing.expectError(error.Short, parse(w.slice(), query_a));

    w = answering(.{ 1, 0, 0, 0 });
    w.a("api.example", 1, .{ 1, 2, 3, 4 });
    try testing.expectError(error.TrailingBytes, parse(w.slice(), query_a));

    try testing.expectError(error.Short, parse(&.{ 0x12, 0x34, 0x81, 0x80, 0, 1 }, query_a));
}

test "message: rdata lengths must fit the message and the type" {
    var w = answering(.{ 1, 1, 0, 0 });
    w.pointer(12);
    w.fixed(1, 1, 1, 5); // An A record of 5 bytes.
    w.raw(&.{ 1, 2, 3, 4, 5 });
    try testing.expectError(error.RdataLength, parse(w.slice(), query_a));

    w.len -= 5 + 10;
    w.fixed(1, 1, 1, 40); // Past the end.
    w.raw(&.{ 1, 2, 3, 4 });
    try testing.expectError(error.Short, parse(w.slice(), query_a));

    w = answering(.{ 1, 1, 0, 0 });
    w.pointer(12);
    w.fixed(5, 1, 1, 4); // A CNAME whose name runs past its rdata.
    w.raw(&.{ 3, 'a', 'b', 'c', 0 });
    w.u16be(0); // Padding so the message itself is long enough.
    try testing.expectError(error.Short, parse(w.slice(), query_a));

    w = answering(.{ 1, 1, 0, 0 });
    w.pointer(12);
    w.fixed(33, 1, 1, 6); // An SRV with no room for its target.
    w.raw(&.{ 0, 0, 0, 0, 0, 80 });
    try testing.expectError(error.RdataLength, parse(w.slice(), query_a));
}

test "message: an answer record of another class is refused" {
    var w = answering(.{ 1, 1, 0, 0 });
    w.pointer(12);
    w.fixed(1, 3, 1, 4); // Class CH.
    w.raw(&.{ 1, 2, 3, 4 });
    try testing.expectError(error.ClassMismatch, parse(w.slice(), query_a));
}

test "message: compression pointers to themselves, forwards or in a loop are refused" {
    var w = answering(.{ 1, 1, 0, 0 });
    const at: u16 = @intCast(w.len);
    w.pointer(at); // To itself.
    w.fixed(1, 1, 1, 4);
    w.raw(&.{ 1, 2, 3, 4 });
    try testing.expectError(error.PointerInvalid, parse(w.slice(), query_a));

    w.len = at;
    w.pointer(at + 2); // Forwards.
    try testing.expectError(error.PointerInvalid, parse(w.slice(), query_a));

    // A label then a pointer back to that label: each hop goes backwards from the pointer's
    // own offset, yet it loops; the rule "before the segment's start" refuses it.
    w.len = at;
    w.raw(&.{ 1, 'x' });
    w.pointer(at);
    w.fixed(1, 1, 1, 4);
    w.raw(&.{ 1, 2, 3, 4 });
    try testing.expectError(error.PointerInvalid, parse(w.slice(), query_a));

    // The question itself may not start with a pointer: nothing precedes it.
    try testing.expectError(error.PointerInvalid, parse(&.{
        0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 1, 0, 1,
    }, query_a));
}

test "message: names over 255 bytes, bad label types and labels with dots are refused" {
    var w: ReplyWriter = .{};
    w.header(0x1234, ok, .{ 1, 0, 0, 0 });
    for (0..4) |_| {
        w.raw(&.{63});
        w.raw(&repeated('a', 63));
    }
    w.raw(&.{0}); // 4 × 64 + 1 = 257 wire bytes.
    w.u16be(1);
    w.u16be(1);
    try testing.expectError(error.NameTooLong, parse(w.slice(), query_a));

    for ([_]u8{ 0x40, 0x80 }) |label_type| {
        w = .{};
        w.header(0x1234, ok, .{ 1, 0, 0, 0 });
        w.raw(&.{ label_type, 0, 0, 1, 0, 1 });
        try testing.expectError(error.LabelType, parse(w.slice(), query_a));
    }

    w = .{};
    w.header(0x1234, ok, .{ 1, 0, 0, 0 });
    w.raw(&.{ 7, 'a', 'p', 'i', '.', 'e', 'x', 'a', 0, 0, 1, 0, 1 });
    try testing.expectError(error.LabelDot, parse(w.slice(), query_a));
}

test "message: the longest name (253 text bytes) is read and asked" {
    const label_dot = repeated('a', 63) ++ ".";
    const longest = label_dot ++ label_dot ++ label_dot ++ repeated('a', 61);
    comptime std.debug.assert(longest.len == message.name_text_bytes_max);
    const query: message.Query = .{ .id = 1, .name = longest, .kind = .a };
    var buffer: [message.query_bytes_max]u8 = undefined;
    const bytes = try message.buildQuery(&buffer, query, 4096);
    var w: ReplyWriter = .{};
    w.raw(bytes[0..12]);
    w.bytes[2] = 0x81;
    w.bytes[11] = 0;
    w.raw(bytes[12 .. bytes.len - 11]);
    const reply = try parse(w.slice(), query);
    try testing.expectEqual(message.Rcode.no_error, reply.rcode);
}

test "message: more records than a Reply holds are counted and dropped" {
    var w: ReplyWriter = .{};
    const count = message.records_max + 3;
    w.header(0x1234, ok, .{ 1, count, 0, 0 });
    w.question("api.example", 1);
    for (0..count) |index| {
        w.pointer(12);
        w.fixed(1, 1, 1, 4);
        w.raw(&.{ 10, 0, 0, @intCast(index) });
    }
    const reply = try parse(w.slice(), query_a);
    try testing.expectEqual(@as(u8, message.records_max), reply.records_count);
    try testing.expectEqual(@as(u32, 3), reply.records_dropped);
}

test "message: seeded random mutations of valid replies never crash the parser" {
    // The runner's seed, so `zig build test -- --seed N` (printed on failure) replays it; the
    // build fails a test that writes to stderr, so nothing is printed on success.
    const accepted = try fuzz.run(std.testing.random_seed, 20_000);
    try testing.expect(accepted > 0);
}
