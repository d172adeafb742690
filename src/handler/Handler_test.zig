//! Handler.zig's tests: a call's request built and response written, the failures counted,
//! bodies larger than the buffer, fetched bodies returned or read, and request bodies read on
//! demand, each through the handler's public calls on a real engine and module.
const std = @import("std");

const js = @import("../js/js.zig");
const Engine = js.Engine;
const http = @import("../http/http.zig");
const Handler = @import("Handler.zig");
const host = @import("host.zig");
const fetch = @import("fetch.zig");
const request_object = @import("request_object.zig");

const Request = Handler.Request;
const Reply = Handler.Reply;
const Tally = Handler.Tally;
const FetchResult = Handler.FetchResult;
const BodyResult = Handler.BodyResult;
const Failure = Handler.Failure;
const Kept = Handler.Kept;

const testing = std.testing;

const test_source =
    \\export default function handler(request) {
    \\  const { method, path, query, headers, ip } = request;
    \\  if (path === "/big") return Response.text("x".repeat(5000));
    \\  if (path === "/bighead") return Response.text("x", { headers: { a: "y".repeat(5000) } });
    \\  if (path === "/throw") throw new Error("no");
    \\  if (path === "/string") return "not a response";
    \\  if (path === "/smuggle") { const r = Response.text("x", { headers: { a: "b" } }); r.headers["x\r\ny"] = "z"; return r; }
    \\  if (path === "/retype") { const r = Response.text("x"); r.type = "a\r\nb: c"; return r; }
    \\  if (path === "/304") return Response.text("stale", { status: 304, headers: { etag: '"v1"' } });
    \\  return Response.json({ method, path, q: query.q, h: headers["x-h"], ip }, { status: 201, headers: { "x-a": "b" } });
    \\}
;

var test_tally: Tally = .{};

fn testHandler(module: *Engine.Module) !Handler {
    return handlerOf(module, test_source, "test");
}

/// A handler named `name` running `source` (its file `name.js`), compiled into `module`.
fn handlerOf(module: *Engine.Module, source: []const u8, comptime name: []const u8) !Handler {
    var failure: js.Compiler.Failure = undefined;
    module.* = try Engine.Module.fromSource(testing.allocator, source, name ++ ".js", &host.host, &failure);
    errdefer module.deinit();
    test_tally = .{};
    var diagnostic: std.Io.Writer = .fixed(&.{});
    return Handler.init(testing.allocator, module, name, .{}, &test_tally, &diagnostic);
}

fn testRequest(target: []const u8) Request {
    const headers = &[_]http.Header{ .{ .name = "X-H", .value = "1" }, .{ .name = "x-h", .value = "2" } };
    return .{ .method = "GET", .target = target, .path_and_query = target, .headers = headers, .ip = "192.0.2.1" };
}

test "handler: a call builds the request and writes the whole response into the buffer" {
    var module: Engine.Module = undefined;
    var handler = try testHandler(&module);
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    var out: [512]u8 = undefined;
    var scratch: [64]u8 = undefined;
    const request = testRequest("/p?q=a+b");
    for (0..3) |_| { // The same answer each time: nothing survives a call.
        const local = handler.respond(&request, .{ .head_only = false }, &out, &scratch, 1).response.local;
        const body = "{\"method\":\"GET\",\"path\":\"/p\",\"q\":\"a b\",\"h\":\"1, 2\",\"ip\":\"192.0.2.1\"}";
        // Fields and body: no status line, no framing (the client's protocol writes them).
        try testing.expectEqualStrings("Content-Type: application/json\r\nx-a: b\r\n\r\n" ++ body, out[0..local.len]);
        try testing.expectEqual(@as(u16, 201), local.status);
        try testing.expectEqual(@as(?u64, body.len), local.content_length);
        try testing.expectEqualStrings(body, local.body(&out));
    }
    // HEAD: the same fields and length, no body.
    const head = handler.respond(&request, .{ .head_only = true }, &out, &scratch, 1).response.local;
    try testing.expectEqualStrings("Content-Type: application/json\r\nx-a: b\r\n\r\n", out[0..head.len]);
    try testing.expectEqual(@as(?u64, 66), head.content_length); // The GET's body.
    try testing.expectEqual(@as(u64, 4), handler.tally.stats.requests.load());
}

test "handler: a 304 has no Content-Length, no Content-Type of the helper's and no body" {
    // RFC 9110 §8.6, §15.4.5: a Content-Length would have to be the 200's; representation
    // metadata is only what guides caches (the handler's ETag here).
    var module: Engine.Module = undefined;
    var handler = try testHandler(&module);
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    var out: [512]u8 = undefined;
    var scratch: [64]u8 = undefined;
    const request = testRequest("/304");
    const local = handler.respond(&request, .{ .head_only = false }, &out, &scratch, 1).response.local;
    try testing.expectEqual(@as(u16, 304), local.status);
    try testing.expectEqual(@as(?u64, null), local.content_length);
    try testing.expectEqualStrings("etag: \"v1\"\r\n\r\n", out[0..local.len]);
}

test "handler: a head too large, an exception, a non-Response and fields changed to smuggle bytes are counted failures" {
    var module: Engine.Module = undefined;
    var handler = try testHandler(&module);
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    var out: [1024]u8 = @splat(0);
    var scratch: [64]u8 = undefined;
    const reply: Reply = .{ .head_only = false };
    const cases = [_]struct { []const u8, Failure }{
        .{ "/bighead", .response_too_large },
        .{ "/throw", .exception },
        .{ "/string", .not_a_response },
        .{ "/smuggle", .not_a_response },
        .{ "/retype", .not_a_response },
    };
    var counts: [Failure.count]u64 = @splat(0);
    for (cases, 1..) |case, i| {
        const request = testRequest(case[0]);
        try testing.expectEqual(case[1], handler.respond(&request, reply, &out, &scratch, i * std.time.ns_per_s).failed);
        counts[@backingInt(case[1])] += 1;
        for (counts, &handler.tally.stats.failures) |expected, *counter| try testing.expectEqual(expected, counter.load());
    }
    // The bounded writer stopped at the buffer's end.
    try testing.expectEqual(@as(usize, out.len), std.mem.indexOfScalar(u8, &out, 0) orelse out.len);
}

test "handler: a body larger than the buffer is the buffer's first bytes and the rest in a kept slot" {
    var module: Engine.Module = undefined;
    var handler = try testHandler(&module);
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    var out: [1024]u8 = undefined;
    var scratch: [64]u8 = undefined;
    const reply: Reply = .{ .head_only = false };
    const request = testRequest("/big");
    const big = handler.respond(&request, reply, &out, &scratch, 1).response;
    try testing.expectEqual(out.len, big.local.len);
    try testing.expectEqual(@as(?u64, 5000), big.local.content_length);
    const rest = big.kept.?.rest;
    try testing.expectEqual(@as(usize, 5000 - (out.len - big.local.fields_len)), rest.len);
    try testing.expect(std.mem.allEqual(u8, rest, 'x'));
    try testing.expectEqual(@as(u32, 1), handler.engine.suspendedCount());
    // Another call meanwhile runs in another slot: the kept bytes stay as they were.
    const other = testRequest("/p");
    _ = handler.respond(&other, reply, &out, &scratch, 1);
    try testing.expect(std.mem.allEqual(u8, rest, 'x'));
    handler.releaseBody(big.kept.?.ticket);
    try testing.expectEqual(@as(u32, 0), handler.engine.suspendedCount());
    // HEAD: the head only, nothing kept.
    const head = handler.respond(&request, .{ .head_only = true }, &out, &scratch, 1).response;
    try testing.expectEqual(@as(?*Kept, null), head.kept);
    try testing.expectEqual(@as(u32, 0), handler.engine.suspendedCount());
}

test "handler: a fetched body still at the pool is returned as a head with the pool's framing, or read once" {
    const source =
        \\export default async function handler(request) {
        \\  const r = await fetch("http://app/x");
        \\  if (request.path === "/read") {
        \\    const t = await r.text();
        \\    let again = "";
        \\    try { await r.text(); } catch (e) { again = e.message; }
        \\    return Response.text(t + "|" + r.bodyUsed + "|" + again);
        \\  }
        \\  if (request.path === "/as-is") return r;
        \\  return new Response(r.body, { status: 201, headers: { "x-a": "b" } });
        \\}
    ;
    var module: Engine.Module = undefined;
    var handler = try handlerOf(&module, source, "stream");
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    var out: [512]u8 = undefined;
    var scratch: [64]u8 = undefined;
    const reply: Reply = .{ .head_only = false };
    const cases = [_]struct { []const u8, fetch.Framing, []const u8 }{
        .{ "/", .{ .length = 10 }, "HTTP/1.1 201 Created\r\nContent-Length: 10\r\nx-a: b\r\n\r\n" },
        .{ "/", .chunked, "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nx-a: b\r\n\r\n" },
        // As it is: the pool's status and kept fields; no Connection field (the downstream's).
        .{ "/as-is", .close, "HTTP/1.1 200 OK\r\nx-b: c\r\n\r\n" },
    };
    for (cases) |case| {
        const request = testRequest(case[0]);
        const ticket = handler.respond(&request, reply, &out, &scratch, 1).suspended;
        const op = handler.nextOp(ticket).?.fetch;
        const result: FetchResult = .{ .answer = .{ .status = 200, .reason = "OK", .fields = "x-b: c\r\n", .body = .{ .pending = .{ .slot = 3, .framing = case[1] } } } };
        const streamed = handler.settleFetch(ticket, op.index, op.request.url, &result, reply, &out, 1).stream;
        try testing.expectEqual(@as(u32, 3), streamed.slot);
        try testing.expectEqualStrings(case[2], out[0..streamed.len]);
        try testing.expectEqual(@as(u32, 0), handler.engine.suspendedCount());
    }
    // Read: a host operation naming the slot, settled with the bytes; a second read rejects.
    const request = testRequest("/read");
    const ticket = handler.respond(&request, reply, &out, &scratch, 1).suspended;
    const op = handler.nextOp(ticket).?.fetch;
    const result: FetchResult = .{ .answer = .{ .status = 200, .reason = "OK", .fields = "", .body = .{ .pending = .{ .slot = 5, .framing = .chunked } } } };
    const again = handler.settleFetch(ticket, op.index, op.request.url, &result, reply, &out, 1).suspended;
    const read = handler.nextOp(again).?.fetched_body;
    try testing.expectEqual(@as(u32, 5), read.slot);
    const bytes = handler.fetchBytes(again, 5).?;
    @memcpy(bytes, "hello");
    const body: BodyResult = .{ .bytes = bytes };
    const answer = handler.settleFetchedBody(again, read, &body, reply, &out, 1).response;
    try testing.expect(std.mem.endsWith(u8, out[0..answer.local.len], "\r\n\r\nhello|true|Response.text: body already used (a fetched body can be read or returned once)"));
}

test "handler: a body not read before the call is read when the handler asks, and once" {
    const source =
        \\export default async function handler(request) {
        \\  if (request.body !== null) return Response.text("read before: " + request.body);
        \\  const t = await request.text();
        \\  let again = "";
        \\  try { await request.arrayBuffer(); } catch (e) { again = e.message; }
        \\  return Response.text(t + "|" + again);
        \\}
    ;
    var module: Engine.Module = undefined;
    var handler = try handlerOf(&module, source, "read");
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    var out: [512]u8 = undefined;
    var scratch: [64]u8 = undefined;
    const reply: Reply = .{ .head_only = false };
    var request = testRequest("/");
    request.body_unread = true;
    const ticket = handler.respond(&request, reply, &out, &scratch, 1).suspended;
    const read = handler.nextOp(ticket).?.body;
    try testing.expect(handler.nextOp(ticket) == null); // Each operation is taken once.
    const bytes = handler.fetchBytes(ticket, 5).?;
    @memcpy(bytes, "hello");
    const result: BodyResult = .{ .bytes = bytes };
    const answer = handler.settleBody(ticket, read, &result, reply, &out, 1).response;
    try testing.expect(std.mem.endsWith(u8, out[0..answer.local.len], "\r\n\r\nhello|request body: body already used (a body larger than the buffer can be read once)"));
    try testing.expectEqual(@as(u32, 0), handler.engine.suspendedCount());
    // Read before the call: the methods answer from `request.body`.
    request.body_unread = false;
    request.body = "early";
    const early = handler.respond(&request, reply, &out, &scratch, 1).response;
    try testing.expect(std.mem.endsWith(u8, out[0..early.local.len], "read before: early"));
}

test "handler: a chunked body is decoded into the arena, extensions skipped, never read past its end" {
    var module: Engine.Module = undefined;
    var handler = try testHandler(&module);
    defer module.deinit();
    defer handler.deinit(testing.allocator);
    handler.engine.beginRequest();
    try testing.expectEqualStrings("hello world", try request_object.decodeChunked(handler.engine, "5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n"));
    try testing.expectEqualStrings("", try request_object.decodeChunked(handler.engine, "0\r\n\r\n"));
    // Cut short (the connection never hands over such a body): what is whole, and no more.
    try testing.expectEqualStrings("ab", try request_object.decodeChunked(handler.engine, "2\r\nab\r\nff\r\nxyz"));
    try testing.expectEqualStrings("", try request_object.decodeChunked(handler.engine, "ffffffffffffffffffffff\r\n"));
}
