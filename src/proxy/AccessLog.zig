//! One worker's access log: a line per exchange, formatted into a ring of buffers that the
//! worker owns. The worker never writes to the log file: when a buffer fills, or every 200 ms,
//! it publishes the buffer (an atomic length) and goes on in the next one; the control thread
//! writes published buffers out, oldest first and all workers' in one `writev`, and hands them
//! back. A worker therefore never blocks on a disk. If every buffer of the ring is waiting (the
//! control thread got no CPU, or the disk is slower than the traffic, for longer than the ring
//! holds), lines are dropped and counted rather than stalling requests.
//!
//! Decision: a ring of `buffers_count` buffers, not two. Two 64 KiB buffers hold about 25 ms
//! of lines per worker at 20k requests a second, and on 2 busy cores the control thread is
//! not always scheduled that soon: a soak at 10.5k requests/s dropped 2,019 of 5.16M lines.
//! Eight hold about 200 ms at that rate (docs/ARCHITECTURE.md, "Access log", has the figures).
//!
//! Formats: `combined` (nginx's and Apache's, with `"` and bytes outside printable ASCII as
//! `\xHH`) and `json` (one object per line).
const std = @import("std");
const assert = std.debug.assert;

const StaticAllocator = @import("../stdx/StaticAllocator.zig");
const Json = @import("../metrics/Json.zig");
const Config = @import("../config/Config.zig");
const Loop = @import("../loop/loop.zig").Loop;

const AccessLog = @This();

pub const Format = Config.AccessLogFormat;

/// 64 KiB each: at ~130 to 300 bytes a line, hundreds of lines per buffer.
pub const buffer_bytes = 64 * 1024;
/// Buffers in the ring: 512 KiB per worker, allocated untouched (a worker's pages become
/// resident as its traffic cycles through them).
pub const buffers_count = 8;

comptime {
    assert(std.math.isPowerOfTwo(buffers_count));
    assert(buffers_count <= std.math.maxInt(u8));
    assert(buffer_bytes <= std.math.maxInt(u32));
}

/// `buffers_count` buffers of `buffer_bytes`, one after the other.
memory: []u8,
/// Bytes waiting in each buffer for the control thread; 0 = the buffer is the worker's. At
/// most `buffers_count - 1` wait at once: the worker always holds the one it fills.
published: [buffers_count]std.atomic.Value(u32) = @splat(.init(0)),
/// The worker's: the buffer being filled, and how much of it is.
filling: u8 = 0,
len: u32 = 0,
/// The control thread's: the oldest buffer it has not written out yet.
oldest: u8 = 0,
format: Format,
dropped: std.atomic.Value(u64) = .init(0),
/// The writer's loop (the control thread's), woken when a full buffer is published and none
/// was waiting before it (one wake-up per batch: a writer with buffers waiting has been woken
/// already), so that a burst is written out at once rather than at the next periodic flush.
/// Null until the writer starts; set by the control thread, read by the worker.
writer_loop: std.atomic.Value(?*Loop) = .init(null),
/// The wall clock's second that `time_text` shows (formatting dates is not free; one per
/// second is enough).
time_second: i64 = -1,
time_text: [32]u8 = undefined,
time_len: u8 = 0,

pub fn init(allocator: std.mem.Allocator, format: Format) !AccessLog {
    const memory = try StaticAllocator.allocUntouched(allocator, u8, null, buffers_count * buffer_bytes);
    return .{ .memory = memory, .format = format };
}

pub fn deinit(log: *AccessLog, allocator: std.mem.Allocator) void {
    allocator.free(log.memory);
    log.* = undefined;
}

/// What one line says.
pub const Entry = struct {
    client_ip: []const u8,
    method: []const u8,
    target: []const u8,
    version: []const u8,
    /// 0 when nothing was answered (logged as 499, nginx's "client closed the request").
    status: u16,
    bytes_sent: u64,
    duration_ns: u64,
    /// Empty when no backend was reached.
    backend: []const u8,
    /// From the first try's start to the end of the exchange; null when no backend was tried.
    upstream_ns: ?u64 = null,
    /// Backends tried (retries included).
    tries: u8 = 0,
    /// Why sluice ended the exchange itself (`Failure` names such as `upstream_reset`, or
    /// `upstream_response_incomplete`); empty when it ended normally.
    reason: []const u8 = "",
    /// Bytes read from the client: head, body and, for an upgrade, what went through the tunnel.
    request_bytes: u64 = 0,
    referer: []const u8,
    user_agent: []const u8,
    /// On a TLS listener, the protocol ("TLSv1.3") and AWS-LC's cipher name; empty on a plain
    /// one (AWS-LC's static strings: nothing is copied).
    tls_version: []const u8 = "",
    tls_cipher: []const u8 = "",
    /// The client certificate presented on a TLS listener that asks for one: its subject
    /// (RFC 4514; empty when too long to give whole) and SHA-256 fingerprint (64 hex digits).
    /// Empty without one.
    client_subject: []const u8 = "",
    client_fingerprint: []const u8 = "",
    /// The request's id (`request_id`); empty when ids are off. Plain bytes only
    /// (config/HeaderRules.zig `requestIdValid`, or generated hex): written unescaped.
    request_id: []const u8 = "",
    /// The target the pool was sent when the route rewrote it: two pieces, one after the
    /// other (the replaced prefix, then the rest of the client's target); null: not rewritten.
    rewritten: ?[2][]const u8 = null,
};

/// What a client connection knows of an exchange's client, for its line (the exchange knows the
/// rest): its address, the body bytes taken from it for the request (framing included), and
/// on a TLS listener the session's protocol, cipher and client certificate (empty otherwise).
pub const ClientFacts = struct {
    ip: []const u8,
    /// The request came on an HTTP/2 stream (the line's version).
    http2: bool = false,
    request_body_bytes: u64 = 0,
    tls_version: []const u8 = "",
    tls_cipher: []const u8 = "",
    client_subject: []const u8 = "",
    client_fingerprint: []const u8 = "",
};

/// Adds a line (worker thread). `now_s` is the wall clock in seconds since the epoch.
pub fn append(log: *AccessLog, entry: *const Entry, now_s: i64) void {
    if (log.time_second != now_s) log.formatTime(now_s);
    if (log.tryAppend(entry)) return;
    // Full: hand this buffer over, ask for it to be written now, and try once in the next.
    const published = log.publish();
    // The buffer before the one just published was free: the writer has nothing queued, and
    // may be asleep.
    if (!published or log.waitingBefore(ringPrevious(log.filling)) == 0) {
        if (log.writer_loop.load(.acquire)) |loop| loop.wake();
    }
    if (!published or !log.tryAppend(entry)) {
        _ = log.dropped.fetchAdd(1, .monotonic);
    }
}

/// Hands the buffer being filled to the control thread, if it has lines and the next buffer
/// of the ring is free (worker thread). False when the whole ring is waiting to be written.
pub fn publish(log: *AccessLog) bool {
    if (log.len == 0) return true;
    const next = ringNext(log.filling);
    if (log.published[next].load(.acquire) != 0) return false;
    log.published[log.filling].store(log.len, .release);
    log.filling = next;
    log.len = 0;
    return true;
}

/// The periodic hand-over (worker thread): the buffer being filled goes to the control thread
/// only when the writer has written everything before it. A writer that is behind would not
/// write it sooner, and each partial buffer published then takes a whole slot of the ring: a
/// writer held up for a few periods would see the ring fill with a few lines per buffer and
/// lines dropped long before the ring's bytes are used. Full buffers are published by
/// `append` whatever the writer's state.
pub fn publishIfCaughtUp(log: *AccessLog) void {
    if (log.waitingBefore(log.filling) != 0) return;
    _ = log.publish();
}

/// The bytes waiting in the buffer before `index` in the ring (0: none waits there).
fn waitingBefore(log: *const AccessLog, index: u8) u32 {
    return log.published[ringPrevious(index)].load(.acquire);
}

/// The published buffers, oldest first, into `out` (control thread); how many. Give them back
/// with `release` once written.
pub fn collect(log: *const AccessLog, out: *[buffers_count - 1][]const u8) u8 {
    var count: u8 = 0;
    var index = log.oldest;
    while (count < out.len) : (count += 1) {
        const len = log.published[index].load(.acquire);
        if (len == 0) break;
        out[count] = log.bufferAt(index)[0..len];
        index = ringNext(index);
    }
    return count;
}

/// The `count` oldest published buffers were written: the worker may fill them again.
pub fn release(log: *AccessLog, count: u8) void {
    assert(count < buffers_count);
    for (0..count) |_| {
        assert(log.published[log.oldest].load(.monotonic) != 0);
        log.published[log.oldest].store(0, .release);
        log.oldest = ringNext(log.oldest);
    }
}

/// The control thread writes out what was published, buffer by buffer, and gives the buffers
/// back.
pub fn drainPublished(log: *AccessLog, context: anytype, comptime write: fn (@TypeOf(context), []const u8) void) void {
    var slices: [buffers_count - 1][]const u8 = undefined;
    const count = log.collect(&slices);
    for (slices[0..count]) |bytes| write(context, bytes);
    log.release(count);
}

/// After the worker thread has exited: everything, published or not, in order.
pub fn drainAll(log: *AccessLog, context: anytype, comptime write: fn (@TypeOf(context), []const u8) void) void {
    log.drainPublished(context, write);
    assert(log.oldest == log.filling); // Everything before the one being filled was published.
    if (log.len > 0) write(context, log.bufferAt(log.filling)[0..log.len]);
    log.len = 0;
}

fn bufferAt(log: *const AccessLog, index: u8) []u8 {
    assert(index < buffers_count);
    return log.memory[@as(usize, index) * buffer_bytes ..][0..buffer_bytes];
}

fn ringNext(index: u8) u8 {
    return (index + 1) % buffers_count;
}

fn ringPrevious(index: u8) u8 {
    return (index + buffers_count - 1) % buffers_count;
}

fn tryAppend(log: *AccessLog, entry: *const Entry) bool {
    const buffer = log.bufferAt(log.filling);
    var writer: std.Io.Writer = .fixed(buffer[log.len..]);
    const ok = switch (log.format) {
        .combined => log.writeCombined(&writer, entry),
        .json => log.writeJson(&writer, entry),
    };
    ok catch return false;
    log.len += @intCast(writer.end);
    assert(log.len <= buffer.len);
    return true;
}

fn writeCombined(log: *const AccessLog, w: *std.Io.Writer, e: *const Entry) std.Io.Writer.Error!void {
    try w.print("{s} - - [{s}] \"", .{ e.client_ip, log.time_text[0..log.time_len] });
    try writeEscaped(w, e.method);
    try w.writeByte(' ');
    try writeEscaped(w, e.target);
    try w.print(" {s}\" {d} {d} \"", .{ e.version, statusOf(e), e.bytes_sent });
    try writeEscaped(w, if (e.referer.len == 0) "-" else e.referer);
    try w.writeAll("\" \"");
    try writeEscaped(w, if (e.user_agent.len == 0) "-" else e.user_agent);
    // sluice's extras after the standard fields (docs/CONFIG.md "Access log"): the backend,
    // upstream time in seconds, tries, the reason sluice ended the exchange, request bytes,
    // the TLS protocol and cipher, the client certificate's subject and fingerprint.
    try w.writeAll("\" \"");
    try writeEscaped(w, if (e.backend.len == 0) "-" else e.backend);
    try w.writeAll("\" ");
    if (e.upstream_ns) |ns| try writeSeconds(w, ns) else try w.writeByte('-');
    try w.print(" {d} {s} {d} {s} {s} \"", .{
        e.tries,                                          if (e.reason.len == 0) "-" else e.reason,
        e.request_bytes,                                  if (e.tls_version.len == 0) "-" else e.tls_version,
        if (e.tls_cipher.len == 0) "-" else e.tls_cipher,
    });
    try writeEscaped(w, if (e.client_subject.len == 0) "-" else e.client_subject);
    try w.print("\" {s}", .{if (e.client_fingerprint.len == 0) "-" else e.client_fingerprint});
    // Edge policy's extras, each `key=value` and only when it applies, so lines without them
    // keep their shape: the request id, and the target the pool saw when a route rewrote it.
    if (e.request_id.len > 0) try w.print(" request_id={s}", .{e.request_id});
    if (e.rewritten) |pieces| {
        try w.writeAll(" upstream_target=\"");
        for (pieces) |piece| try writeEscaped(w, piece);
        try w.writeByte('"');
    }
    try w.writeByte('\n');
}

/// Seconds with millisecond precision, as nginx prints `$upstream_response_time`.
fn writeSeconds(w: *std.Io.Writer, ns: u64) std.Io.Writer.Error!void {
    const ms = ns / std.time.ns_per_ms;
    try w.print("{d}.{d:0>3}", .{ ms / 1000, ms % 1000 });
}

fn writeJson(log: *const AccessLog, w: *std.Io.Writer, e: *const Entry) std.Io.Writer.Error!void {
    var json: Json = .init(w);
    try json.beginObject();
    try json.fieldString("time", log.time_text[0..log.time_len]);
    try json.fieldString("client", e.client_ip);
    try json.fieldString("method", e.method);
    try json.fieldString("target", e.target);
    try json.fieldString("version", e.version);
    try json.fieldInt("status", statusOf(e));
    try json.fieldInt("bytes", e.bytes_sent);
    try json.key("duration_s");
    try json.seconds(e.duration_ns);
    try json.fieldString("backend", e.backend);
    try json.key("upstream_s");
    if (e.upstream_ns) |ns| try json.seconds(ns) else try json.null();
    try json.fieldInt("tries", e.tries);
    try json.fieldString("reason", e.reason);
    try json.fieldInt("request_bytes", e.request_bytes);
    try json.fieldString("referer", e.referer);
    try json.fieldString("user_agent", e.user_agent);
    try json.fieldString("tls_version", e.tls_version);
    try json.fieldString("tls_cipher", e.tls_cipher);
    try json.fieldString("tls_client_subject", e.client_subject);
    try json.fieldString("tls_client_fingerprint", e.client_fingerprint);
    if (e.request_id.len > 0) try json.fieldString("request_id", e.request_id);
    if (e.rewritten) |pieces| {
        try json.key("upstream_target");
        try json.stringPieces(&pieces);
    }
    try json.endObject();
    try w.writeByte('\n');
}

fn statusOf(entry: *const Entry) u16 {
    return if (entry.status == 0) 499 else entry.status;
}

/// `"` `\` and bytes outside printable ASCII as `\xHH`, as nginx writes them.
fn writeEscaped(w: *std.Io.Writer, text: []const u8) std.Io.Writer.Error!void {
    for (text) |c| {
        if (c < 0x20 or c >= 0x7f or c == '"' or c == '\\') {
            try w.print("\\x{X:0>2}", .{c});
        } else {
            try w.writeByte(c);
        }
    }
}

/// `22/Nov/2026:08:14:00 +0000` (combined) or `2026-11-22T08:14:00Z` (json), in UTC.
fn formatTime(log: *AccessLog, now_s: i64) void {
    const seconds: u64 = @intCast(@max(0, now_s));
    const epoch: std.time.epoch.EpochSeconds = .{ .secs = seconds };
    const day = epoch.getEpochDay();
    const year_day = day.calculateYearDay();
    const month_day = year_day.calculateMonthDay();
    const day_seconds = epoch.getDaySeconds();
    const months = [_][]const u8{ "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    const month_index = month_day.month.numeric() - 1;
    const text = switch (log.format) {
        .combined => std.fmt.bufPrint(&log.time_text, "{d:0>2}/{s}/{d}:{d:0>2}:{d:0>2}:{d:0>2} +0000", .{
            month_day.day_index + 1,          months[month_index],
            year_day.year,                    day_seconds.getHoursIntoDay(),
            day_seconds.getMinutesIntoHour(), day_seconds.getSecondsIntoMinute(),
        }),
        .json => std.fmt.bufPrint(&log.time_text, "{d}-{d:0>2}-{d:0>2}T{d:0>2}:{d:0>2}:{d:0>2}Z", .{
            year_day.year,                    month_index + 1,
            month_day.day_index + 1,          day_seconds.getHoursIntoDay(),
            day_seconds.getMinutesIntoHour(), day_seconds.getSecondsIntoMinute(),
        }),
    } catch unreachable; // 32 bytes hold either form.
    log.time_len = @intCast(text.len);
    log.time_second = now_s;
}

const testing = std.testing;

const example: Entry = .{
    .client_ip = "10.0.0.9",
    .method = "GET",
    .target = "/a?b=\"c\"",
    .version = "HTTP/1.1",
    .status = 200,
    .bytes_sent = 1234,
    .duration_ns = 1_500_000,
    .backend = "10.0.0.5:9000",
    .upstream_ns = 1_200_000,
    .tries = 1,
    .request_bytes = 77,
    .referer = "",
    .user_agent = "curl/8.0",
};

fn keepWritten(out: *std.ArrayList(u8), bytes: []const u8) void {
    out.appendSlice(testing.allocator, bytes) catch unreachable;
}

test "access log: combined and json lines" {
    var log: AccessLog = try .init(testing.allocator, .combined);
    defer log.deinit(testing.allocator);
    log.append(&example, 1_795_336_440); // 2026-11-22T08:34:00Z
    try testing.expect(log.publish());
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(testing.allocator);
    log.drainPublished(&out, keepWritten);
    try testing.expectEqualStrings("10.0.0.9 - - [22/Nov/2026:08:34:00 +0000] \"GET /a?b=\\x22c\\x22 " ++
        "HTTP/1.1\" 200 1234 \"-\" \"curl/8.0\" \"10.0.0.5:9000\" 0.001 1 - 77 - - \"-\" -\n", out.items);
    // On a TLS listener: the protocol and the cipher, then the client certificate's subject
    // and fingerprint when one was presented.
    out.clearRetainingCapacity();
    var over_tls = example;
    over_tls.tls_version = "TLSv1.3";
    over_tls.tls_cipher = "TLS_AES_128_GCM_SHA256";
    over_tls.client_subject = "CN=alice \"a\",O=Example";
    over_tls.client_fingerprint = "a844b1a213a3d1d378d71946799c3cfb8b646a937dcf059a98de16bcfa0b7f07";
    log.append(&over_tls, 1_795_336_440);
    try testing.expect(log.publish());
    log.drainPublished(&out, keepWritten);
    try testing.expect(std.mem.endsWith(u8, out.items, " 77 TLSv1.3 TLS_AES_128_GCM_SHA256 " ++
        "\"CN=alice \\x22a\\x22,O=Example\" a844b1a213a3d1d378d71946799c3cfb8b646a937dcf059a98de16bcfa0b7f07\n"));

    var json_log: AccessLog = try .init(testing.allocator, .json);
    defer json_log.deinit(testing.allocator);
    json_log.append(&example, 1_795_336_440);
    try testing.expect(json_log.publish());
    out.clearRetainingCapacity();
    json_log.drainPublished(&out, keepWritten);
    const parsed = try std.json.parseFromSlice(std.json.Value, testing.allocator, out.items, .{});
    defer parsed.deinit();
    try testing.expectEqualStrings("2026-11-22T08:34:00Z", parsed.value.object.get("time").?.string);
    try testing.expectEqual(@as(i64, 200), parsed.value.object.get("status").?.integer);
    try testing.expectEqualStrings("/a?b=\"c\"", parsed.value.object.get("target").?.string);
    try testing.expectEqual(@as(i64, 1), parsed.value.object.get("tries").?.integer);
    try testing.expectEqualStrings("", parsed.value.object.get("reason").?.string);
    try testing.expectEqualStrings("", parsed.value.object.get("tls_version").?.string);
    try testing.expectEqualStrings("", parsed.value.object.get("tls_cipher").?.string);
}

test "access log: full buffers are handed over, then lines are dropped, never blocked" {
    var log: AccessLog = try .init(testing.allocator, .combined);
    defer log.deinit(testing.allocator);
    var lines: u64 = 0;
    // Fill the whole ring without the control thread draining anything.
    while (log.dropped.load(.monotonic) == 0) : (lines += 1) log.append(&example, 0);
    try testing.expect(log.published[0].load(.monotonic) > 0);
    try testing.expect(!log.publish()); // The next one is still waiting.
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(testing.allocator);
    log.drainPublished(&out, keepWritten);
    try testing.expect(log.publish());
    log.drainPublished(&out, keepWritten);
    const written = std.mem.count(u8, out.items, "\n");
    try testing.expectEqual(lines - 1, written); // Every line but the dropped one.
}

test "access log: the periodic hand-over waits while the writer is behind" {
    var log: AccessLog = try .init(testing.allocator, .combined);
    defer log.deinit(testing.allocator);
    log.append(&example, 0);
    log.publishIfCaughtUp(); // Nothing waits: handed over.
    try testing.expect(log.published[0].load(.monotonic) > 0);
    // The writer is held up: periods pass with a line each, and they all go in one buffer
    // rather than one slot of the ring each.
    for (0..buffers_count * 2) |_| {
        log.append(&example, 0);
        log.publishIfCaughtUp();
    }
    try testing.expectEqual(@as(u8, 1), log.filling);
    try testing.expectEqual(@as(u64, 0), log.dropped.load(.monotonic));
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(testing.allocator);
    log.drainPublished(&out, keepWritten); // The writer catches up...
    log.publishIfCaughtUp(); // ...and the next period hands the rest over.
    log.drainPublished(&out, keepWritten);
    try testing.expectEqual(@as(usize, 1 + buffers_count * 2), std.mem.count(u8, out.items, "\n"));
}

test "access log: the ring writes every line once, in order, or counts it dropped (model)" {
    // Random appends, publishes (the worker's timer) and drains (the control thread) against
    // a model: what comes out is the lines in the order they were appended, none twice, and
    // every line is either written or counted as dropped.
    const seed: u64 = testing.random_seed;
    errdefer std.debug.print("access log ring model seed: {d}\n", .{seed});
    var prng = std.Random.DefaultPrng.init(seed);
    const random = prng.random();
    var log: AccessLog = try .init(testing.allocator, .combined);
    defer log.deinit(testing.allocator);
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(testing.allocator);
    var appended: u64 = 0;
    var target_buffer: [32]u8 = undefined;
    for (0..24_000) |step| {
        // The middle third, the control thread gets no CPU: the ring (about 4,300 of these
        // lines) fills and lines are dropped.
        const stalled = step / 8_000 == 1;
        switch (random.uintLessThan(u8, 10)) {
            0...6 => {
                var entry = example;
                entry.target = std.fmt.bufPrint(&target_buffer, "/{d}", .{appended}) catch unreachable;
                log.append(&entry, 0);
                appended += 1;
            },
            7 => _ = log.publish(),
            else => if (!stalled and random.uintLessThan(u8, 8) == 0) log.drainPublished(&out, keepWritten),
        }
    }
    log.drainAll(&out, keepWritten);
    var written: u64 = 0;
    var previous: ?u64 = null;
    var lines = std.mem.splitScalar(u8, out.items, '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        const start = std.mem.find(u8, line, "\"GET /").? + 6;
        const end = std.mem.findScalarPos(u8, line, start, ' ').?;
        const number = try std.fmt.parseInt(u64, line[start..end], 10);
        if (previous) |p| try testing.expect(number > p);
        previous = number;
        written += 1;
    }
    try testing.expect(log.dropped.load(.monotonic) > 0); // The ring did fill at times.
    try testing.expectEqual(appended, written + log.dropped.load(.monotonic));
}
