//! Seeded fuzzer of the DNS reply parser: `zig build dns-fuzz -- [--seed N] [--iterations N]`.
//!
//! Inputs: well-formed replies (a CNAME chain with off-chain records and OPT, a compressed SRV
//! answer, a truncated reply), each mutated at the byte level (bytes set, bits flipped, cut,
//! random bytes appended) and parsed as the reply to its query. The properties: parsing never
//! crashes (the program is built ReleaseSafe, so an out-of-bounds read is a crash), and what
//! it accepts is within bounds: at most `records_max` records, all of the asked kind, a
//! canonical name within 253 bytes, a TTL without its top bit, and nothing kept from a reply
//! that is truncated or says no. The seed is printed first; `--seed` replays a run. The unit
//! tests run it with the test runner's seed (message_test.zig).
const std = @import("std");
const message = @import("message.zig");
const ReplyWriter = @import("message_test.zig").ReplyWriter;

const iterations_default = 100_000;

pub fn main(init: std.process.Init) !void {
    var seed_arg: ?u64 = null;
    var iterations: u32 = iterations_default;
    var args = init.minimal.args.iterate();
    _ = args.skip();
    while (args.next()) |arg| {
        const value = if (std.mem.eql(u8, arg, "--seed") or std.mem.eql(u8, arg, "--iterations"))
            std.fmt.parseInt(u64, args.next() orelse "", 10) catch
                std.process.fatal("dns-fuzz: {s} takes a number", .{arg})
        else
            std.process.fatal("dns-fuzz: unknown argument '{s}'; usage: dns-fuzz [--seed N] [--iterations N]", .{arg});
        if (std.mem.eql(u8, arg, "--seed")) seed_arg = value else iterations = @intCast(@min(value, std.math.maxInt(u32)));
    }
    const seed = seed_arg orelse seed: {
        var bytes: [8]u8 = undefined;
        init.io.random(&bytes);
        break :seed std.mem.readInt(u64, &bytes, .little);
    };
    std.debug.print("dns-fuzz: seed={d}\n", .{seed});
    const accepted = run(seed, iterations) catch std.process.exit(1);
    std.debug.print("dns-fuzz: {d} iterations passed, {d} mutated replies accepted\n", .{ iterations, accepted });
}

pub const Error = error{FuzzPropertyFailed};

const Input = struct { writer: ReplyWriter, query: message.Query };

/// Deterministic for a seed, no allocation, no output unless a property fails. Returns how
/// many mutated replies parsed.
pub fn run(seed: u64, iterations: u32) Error!u32 {
    const inputs = [_]Input{ chainInput(), srvInput(), truncatedInput() };
    var prng = std.Random.DefaultPrng.init(seed);
    const random = prng.random();
    var mutated: [1024]u8 = undefined;
    var accepted: u32 = 0;
    for (0..iterations) |iteration| {
        const input = &inputs[iteration % inputs.len];
        const valid = input.writer.slice();
        var len = valid.len;
        @memcpy(mutated[0..len], valid);
        for (0..random.intRangeAtMost(u32, 1, 4)) |_| {
            if (len == 0) break;
            switch (random.uintLessThan(u8, 4)) {
                0 => mutated[random.uintLessThan(usize, len)] = random.int(u8),
                1 => mutated[random.uintLessThan(usize, len)] ^= @as(u8, 1) << random.int(u3),
                2 => len = random.uintLessThan(usize, len + 1),
                else => if (len + 8 <= mutated.len) {
                    random.bytes(mutated[len..][0..8]);
                    len += 8;
                },
            }
        }
        var reply: message.Reply = undefined;
        message.parseReply(mutated[0..len], input.query, &reply) catch continue;
        accepted += 1;
        if (!withinBounds(&reply, input.query.kind)) {
            std.debug.print("dns-fuzz: seed {d} iteration {d}: reply out of bounds: {x}\n", .{
                seed, iteration, mutated[0..len],
            });
            return error.FuzzPropertyFailed;
        }
    }
    return accepted;
}

fn withinBounds(reply: *const message.Reply, kind: message.Kind) bool {
    if (reply.records_count > message.records_max) return false;
    if (reply.canonical.len > message.name_text_bytes_max) return false;
    if (reply.ttl_s & 0x8000_0000 != 0) return false;
    if ((reply.truncated or reply.rcode != .no_error) and reply.records_count != 0) return false;
    for (reply.slice()) |record| if (std.meta.activeTag(record) != kind) return false;
    return true;
}

const ok: u16 = 0x8180;

fn chainInput() Input {
    const query: message.Query = .{ .id = 0x1234, .name = "api.example", .kind = .a };
    var w: ReplyWriter = .{};
    w.header(query.id, ok, .{ 1, 3, 1, 1 });
    w.question(query.name, 1);
    w.cname("api.example", 100, "lb.example");
    w.pointer(12);
    w.fixed(16, 1, 10, 2); // A TXT record, off the chain's type.
    w.raw(&.{ 1, 'x' });
    w.a("lb.example", 50, .{ 10, 1, 1, 1 });
    w.a("ns.example", 50, .{ 10, 1, 1, 2 });
    w.raw(&.{0});
    w.fixed(41, 1232, 0, 0);
    return .{ .writer = w, .query = query };
}

fn srvInput() Input {
    const query: message.Query = .{ .id = 9, .name = "_http._tcp.svc.test", .kind = .srv };
    var w: ReplyWriter = .{};
    w.header(query.id, ok, .{ 1, 2, 0, 0 });
    w.question(query.name, 33);
    for (0..2) |index| {
        w.pointer(12);
        w.fixed(33, 1, 30, 6 + 2 + 2);
        w.raw(&.{ 0, 10, 0, 5, 0x1f, 0x90, 1, 'a' + @as(u8, @intCast(index)) });
        w.pointer(12 + 6 + 5); // "svc.test" in the question.
    }
    return .{ .writer = w, .query = query };
}

fn truncatedInput() Input {
    const query: message.Query = .{ .id = 77, .name = "big.test", .kind = .aaaa };
    var w: ReplyWriter = .{};
    w.header(query.id, ok | 0x0200, .{ 1, 4, 0, 0 });
    w.question(query.name, 28);
    w.pointer(12);
    w.fixed(28, 1, 30, 16);
    return .{ .writer = w, .query = query };
}
