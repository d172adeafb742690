//! DNS messages on the wire (RFC 1035 §4): build one query (A, AAAA or SRV, with an optional
//! EDNS0 OPT record, RFC 6891) and parse its reply strictly. The decision a reader must know:
//! a reply is trusted only as far as it matches the query (ID, one question with the same name,
//! type and class IN) and only the records on the CNAME chain from the asked name are used;
//! everything else is checked for shape (counts, lengths, names) and then ignored, so a reply
//! that is malformed anywhere is refused as a whole rather than half-read.
//!
//! Nothing here allocates: a query is written into the caller's buffer and a reply is parsed
//! into the caller's `Reply`, whose record array has a fixed capacity (`records_max`).
const std = @import("std");
const assert = std.debug.assert;
const readInt = std.mem.readInt;

/// RFC 1035 §3.1: a name on the wire, length octets and labels and the root's zero, is at most
/// 255 bytes; the same name in dotted text without its trailing dot is at most 253.
pub const name_wire_bytes_max = 255;
pub const name_text_bytes_max = 253;
/// RFC 1035 §2.3.4.
pub const label_bytes_max = 63;
/// A CNAME chain longer than this is refused (glibc follows 16 in one answer; real chains
/// are two or three long).
pub const cname_chain_max = 8;
/// The records of the asked type a `Reply` keeps; more are counted and dropped.
pub const records_max = 32;
/// What a UDP reply may be when we do not advertise EDNS0 (RFC 1035 §4.2.1).
pub const udp_bytes_classic = 512;
/// The largest query `buildQuery` can write: header, the longest name, type and class, OPT.
pub const query_bytes_max = header_bytes + name_wire_bytes_max + 4 + opt_bytes;

const header_bytes = 12;
const opt_bytes = 11;
const class_in = 1;
const type_cname = 5;
const type_opt = 41;
const flag_qr: u16 = 0x8000;
const flag_tc: u16 = 0x0200;
const flag_rd: u16 = 0x0100;
const opcode_mask: u16 = 0x7800;

pub const Kind = enum(u16) {
    a = 1,
    aaaa = 28,
    srv = 33,
};

pub const Rcode = enum {
    no_error,
    /// The name does not exist (RFC 1035 §4.1.1, code 3): a final answer, not tried elsewhere.
    nxdomain,
    /// The server failed (code 2): the next server may do better.
    servfail,
    /// Refused (5), not implemented (4), format error (1) and anything else.
    other,
};

/// A name in dotted text, without the trailing dot, in the case the wire gave it.
pub const Name = struct {
    bytes: [name_text_bytes_max]u8 = undefined,
    len: u8 = 0,

    pub fn slice(name: *const Name) []const u8 {
        return name.bytes[0..name.len];
    }
};

pub const Srv = struct {
    priority: u16,
    weight: u16,
    port: u16,
    target: Name,
};

pub const Record = union(Kind) {
    a: [4]u8,
    aaaa: [16]u8,
    srv: Srv,
};

pub const Reply = struct {
    rcode: Rcode = .no_error,
    /// The TC bit: the answer did not fit, ask again over TCP. Nothing past the question was
    /// read.
    truncated: bool = false,
    /// The smallest TTL over the CNAMEs followed and the records kept, in seconds (RFC 2181
    /// §8: a TTL with its top bit set counts as 0). 0 when nothing was kept.
    ttl_s: u32 = 0,
    /// The name the records belong to: the asked name or the end of its CNAME chain.
    canonical: Name = .{},
    cnames_followed: u8 = 0,
    records_count: u8 = 0,
    /// Records of the asked type on the chain beyond `records_max`.
    records_dropped: u32 = 0,
    records: [records_max]Record = undefined,

    pub fn slice(reply: *const Reply) []const Record {
        return reply.records[0..reply.records_count];
    }
};

pub const Query = struct {
    id: u16,
    /// Dotted text; a trailing dot (absolute name) is allowed and ignored here.
    name: []const u8,
    kind: Kind,
};

pub const BuildError = error{ NameInvalid, NoSpaceLeft };

pub const ParseError = error{
    /// The message ends inside its header, a question, a record or a name.
    Short,
    /// Bytes after the last record the counts announce.
    TrailingBytes,
    NotResponse,
    IdMismatch,
    OpcodeMismatch,
    QuestionCount,
    QuestionMismatch,
    /// A label type other than a length or a pointer (RFC 6891 §5 retired the others).
    LabelType,
    /// A compression pointer to itself, to a later offset or past the start of the name
    /// segment it ends: the only shapes a loop can take.
    PointerInvalid,
    NameTooLong,
    /// A label holding a dot cannot be written as text without ambiguity.
    LabelDot,
    RdataLength,
    ClassMismatch,
    CnameChainTooLong,
    /// Two CNAMEs for one owner (RFC 2181 §10.1).
    CnameAmbiguous,
};

/// Writes a recursive query for `query` into `buffer` and returns the bytes written. With
/// `edns_udp_bytes`, an OPT record advertises that UDP payload size (RFC 6891 §6.2.5).
pub fn buildQuery(buffer: []u8, query: Query, edns_udp_bytes: ?u16) BuildError![]const u8 {
    var end: usize = header_bytes;
    if (buffer.len < end) return error.NoSpaceLeft;
    writeU16(buffer[0..2], query.id);
    writeU16(buffer[2..4], flag_rd);
    writeU16(buffer[4..6], 1);
    writeU16(buffer[6..8], 0);
    writeU16(buffer[8..10], 0);
    writeU16(buffer[10..12], if (edns_udp_bytes != null) 1 else 0);
    end += try encodeName(buffer[end..], query.name);
    if (buffer.len < end + 4) return error.NoSpaceLeft;
    writeU16(buffer[end..][0..2], @backingInt(query.kind));
    writeU16(buffer[end + 2 ..][0..2], class_in);
    end += 4;
    if (edns_udp_bytes) |udp_bytes| {
        assert(udp_bytes >= udp_bytes_classic);
        if (buffer.len < end + opt_bytes) return error.NoSpaceLeft;
        const opt = buffer[end..][0..opt_bytes];
        opt[0] = 0; // The root name.
        writeU16(opt[1..3], type_opt);
        writeU16(opt[3..5], udp_bytes);
        @memset(opt[5..9], 0); // Extended RCODE, version 0, no DO bit.
        writeU16(opt[9..11], 0);
        end += opt_bytes;
    }
    assert(end <= query_bytes_max);
    return buffer[0..end];
}

/// The name in dotted text as labels on the wire; refuses empty labels, labels over 63 bytes
/// and names over 255 wire bytes. A trailing dot is allowed; the root alone is refused (we
/// never ask it).
pub fn encodeName(buffer: []u8, text: []const u8) BuildError!usize {
    const name = if (std.mem.endsWith(u8, text, ".")) text[0 .. text.len - 1] else text;
    if (name.len == 0 or name.len > name_text_bytes_max) return error.NameInvalid;
    var end: usize = 0;
    var labels = std.mem.splitScalar(u8, name, '.');
    while (labels.next()) |label| {
        if (label.len == 0 or label.len > label_bytes_max) return error.NameInvalid;
        if (buffer.len < end + 1 + label.len) return error.NoSpaceLeft;
        buffer[end] = @intCast(label.len);
        @memcpy(buffer[end + 1 ..][0..label.len], label);
        end += 1 + label.len;
    }
    if (buffer.len < end + 1) return error.NoSpaceLeft;
    buffer[end] = 0;
    end += 1;
    assert(end <= name_wire_bytes_max);
    return end;
}

/// Parses `message`, the reply to `query`, into `reply`. Errors mean the message is not a
/// well-formed reply to this query; a well-formed reply that says no is a `Reply` with its
/// `rcode`.
pub fn parseReply(message: []const u8, query: Query, reply: *Reply) ParseError!void {
    reply.* = .{};
    if (message.len < header_bytes) return error.Short;
    const id = readU16(message[0..2]);
    const flags = readU16(message[2..4]);
    const counts = [4]u16{
        readU16(message[4..6]),
        readU16(message[6..8]),
        readU16(message[8..10]),
        readU16(message[10..12]),
    };
    if (flags & flag_qr == 0) return error.NotResponse;
    if (id != query.id) return error.IdMismatch;
    if (flags & opcode_mask != 0) return error.OpcodeMismatch;
    if (counts[0] != 1) return error.QuestionCount;

    var at: usize = header_bytes;
    var question: Name = .{};
    at = try readName(message, at, &question);
    if (message.len < at + 4) return error.Short;
    const question_type = readU16(message[at..][0..2]);
    const question_class = readU16(message[at + 2 ..][0..2]);
    at += 4;
    if (!nameEql(question.slice(), query.name) or question_type != @backingInt(query.kind) or
        question_class != class_in) return error.QuestionMismatch;

    reply.rcode = rcodeOf(flags & 0xf);
    if (flags & flag_tc != 0) {
        // RFC 1035 §4.1.1: the rest may be cut anywhere; only the TCP answer is read.
        reply.truncated = true;
        return;
    }

    const answers_start = at;
    var extended_rcode: u8 = 0;
    for (counts[1..], 1..) |count, section| {
        for (0..count) |_| {
            var record: RawRecord = undefined;
            at = try readRecord(message, at, &record);
            if (section == 1 and record.class != class_in) return error.ClassMismatch;
            if (section == 3 and record.type == type_opt and record.owner.len == 0) {
                extended_rcode = @truncate(record.ttl >> 24);
            }
        }
    }
    if (at != message.len) return error.TrailingBytes;
    if (extended_rcode != 0) reply.rcode = .other;
    if (reply.rcode != .no_error) return;
    try collectAnswers(message, answers_start, counts[1], question.slice(), query.kind, reply);
}

/// A resource record as read, its rdata still a range of the message.
const RawRecord = struct {
    owner: Name,
    type: u16,
    class: u16,
    ttl: u32,
    rdata_start: usize,
    rdata_len: u16,
};

/// Reads one record at `at`, checks its rdata against its type, returns the offset after it.
fn readRecord(message: []const u8, at: usize, record: *RawRecord) ParseError!usize {
    var end = try readName(message, at, &record.owner);
    if (message.len < end + 10) return error.Short;
    record.type = readU16(message[end..][0..2]);
    record.class = readU16(message[end + 2 ..][0..2]);
    record.ttl = readInt(u32, message[end + 4 ..][0..4], .big);
    record.rdata_len = readU16(message[end + 8 ..][0..2]);
    end += 10;
    record.rdata_start = end;
    if (message.len < end + record.rdata_len) return error.Short;
    end += record.rdata_len;
    try checkRdata(message, record);
    return end;
}

/// The types we read must fill their rdata exactly; names in rdata may be compressed (RFC
/// 1035 §4.1.4 allows it for CNAME; RFC 2782 forbids it for SRV, but servers do it).
fn checkRdata(message: []const u8, record: *const RawRecord) ParseError!void {
    const rdata_end = record.rdata_start + record.rdata_len;
    var scratch: Name = .{};
    switch (record.type) {
        @backingInt(Kind.a) => if (record.rdata_len != 4) return error.RdataLength,
        @backingInt(Kind.aaaa) => if (record.rdata_len != 16) return error.RdataLength,
        @backingInt(Kind.srv) => {
            if (record.rdata_len < 7) return error.RdataLength;
            const name_end = try readName(message[0..rdata_end], record.rdata_start + 6, &scratch);
            if (name_end != rdata_end) return error.RdataLength;
        },
        type_cname => {
            if (record.rdata_len < 1) return error.RdataLength;
            const name_end = try readName(message[0..rdata_end], record.rdata_start, &scratch);
            if (name_end != rdata_end) return error.RdataLength;
        },
        else => {},
    }
}

/// Follows the CNAME chain from `asked` through the answer section, then keeps the records of
/// `kind` owned by its end. Records off the chain are ignored: a server may add them, and
/// trusting them would let it answer for names we did not ask about.
fn collectAnswers(
    message: []const u8,
    answers_start: usize,
    answers_count: u16,
    asked: []const u8,
    kind: Kind,
    reply: *Reply,
) ParseError!void {
    setName(&reply.canonical, asked);
    var ttl_s: u32 = std.math.maxInt(u32);
    var chain: u8 = 0;
    while (true) : (chain += 1) {
        var next: ?RawRecord = null;
        var at = answers_start;
        for (0..answers_count) |_| {
            var record: RawRecord = undefined;
            at = readRecord(message, at, &record) catch unreachable; // Read once already.
            if (record.type != type_cname) continue;
            if (!nameEql(record.owner.slice(), reply.canonical.slice())) continue;
            if (next != null) return error.CnameAmbiguous;
            next = record;
        }
        const cname = next orelse break;
        if (chain == cname_chain_max) return error.CnameChainTooLong;
        ttl_s = @min(ttl_s, ttlOf(cname.ttl));
        _ = readName(message, cname.rdata_start, &reply.canonical) catch unreachable;
    }
    reply.cnames_followed = chain;

    var at = answers_start;
    for (0..answers_count) |_| {
        var record: RawRecord = undefined;
        at = readRecord(message, at, &record) catch unreachable;
        if (record.type != @backingInt(kind)) continue;
        if (!nameEql(record.owner.slice(), reply.canonical.slice())) continue;
        if (reply.records_count == records_max) {
            reply.records_dropped += 1;
            continue;
        }
        ttl_s = @min(ttl_s, ttlOf(record.ttl));
        reply.records[reply.records_count] = recordOf(message, &record, kind);
        reply.records_count += 1;
    }
    reply.ttl_s = if (reply.records_count == 0) 0 else ttl_s;
    assert(reply.records_count <= records_max);
}

fn recordOf(message: []const u8, record: *const RawRecord, kind: Kind) Record {
    const rdata = message[record.rdata_start..][0..record.rdata_len];
    switch (kind) {
        .a => return .{ .a = rdata[0..4].* },
        .aaaa => return .{ .aaaa = rdata[0..16].* },
        .srv => {
            var srv: Srv = .{
                .priority = readU16(rdata[0..2]),
                .weight = readU16(rdata[2..4]),
                .port = readU16(rdata[4..6]),
                .target = .{},
            };
            _ = readName(message, record.rdata_start + 6, &srv.target) catch unreachable;
            return .{ .srv = srv };
        },
    }
}

/// Reads the name at `start` into `name` and returns the offset after it where it starts
/// (after its first pointer, if any). Each pointer must point before the start of the segment
/// it ends, so every jump goes strictly backwards and no loop can form; the 255-byte limit
/// counts the wire bytes of the whole name, pointers followed.
pub fn readName(message: []const u8, start: usize, name: *Name) ParseError!usize {
    name.len = 0;
    var at = start;
    var segment_start = start;
    var end: ?usize = null;
    var wire_bytes: u32 = 0;
    while (true) {
        if (at >= message.len) return error.Short;
        const octet = message[at];
        switch (octet >> 6) {
            0 => {
                const label_len: usize = octet;
                if (label_len == 0) {
                    assert(wire_bytes + 1 <= name_wire_bytes_max);
                    assert(name.len <= name_text_bytes_max);
                    return end orelse at + 1;
                }
                // Counting the root's zero still to come keeps the text within 253 bytes.
                wire_bytes += 1 + @as(u32, octet);
                if (wire_bytes + 1 > name_wire_bytes_max) return error.NameTooLong;
                if (message.len < at + 1 + label_len) return error.Short;
                const label = message[at + 1 ..][0..label_len];
                if (std.mem.indexOfScalar(u8, label, '.') != null) return error.LabelDot;
                if (name.len != 0) appendByte(name, '.');
                for (label) |byte| appendByte(name, byte);
                at += 1 + label_len;
            },
            3 => {
                if (message.len < at + 2) return error.Short;
                const target = readU16(message[at..][0..2]) & 0x3fff;
                if (target >= segment_start) return error.PointerInvalid;
                if (end == null) end = at + 2;
                segment_start = target;
                at = target;
            },
            else => return error.LabelType,
        }
    }
}

fn appendByte(name: *Name, byte: u8) void {
    assert(name.len < name_text_bytes_max);
    name.bytes[name.len] = byte;
    name.len += 1;
}

fn setName(name: *Name, text: []const u8) void {
    const trimmed = if (std.mem.endsWith(u8, text, ".")) text[0 .. text.len - 1] else text;
    assert(trimmed.len <= name_text_bytes_max);
    @memcpy(name.bytes[0..trimmed.len], trimmed);
    name.len = @intCast(trimmed.len);
}

/// Names compare without regard to ASCII case (RFC 4343) and to a trailing dot.
pub fn nameEql(a: []const u8, b: []const u8) bool {
    const a_trimmed = if (std.mem.endsWith(u8, a, ".")) a[0 .. a.len - 1] else a;
    const b_trimmed = if (std.mem.endsWith(u8, b, ".")) b[0 .. b.len - 1] else b;
    return std.ascii.eqlIgnoreCase(a_trimmed, b_trimmed);
}

fn rcodeOf(code: u16) Rcode {
    return switch (code) {
        0 => .no_error,
        2 => .servfail,
        3 => .nxdomain,
        else => .other,
    };
}

fn ttlOf(ttl: u32) u32 {
    return if (ttl & 0x8000_0000 != 0) 0 else ttl;
}

fn readU16(bytes: *const [2]u8) u16 {
    return readInt(u16, bytes, .big);
}

fn writeU16(bytes: *[2]u8, value: u16) void {
    std.mem.writeInt(u16, bytes, value, .big);
}
