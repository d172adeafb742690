//! A tiny HTTP/1.1 server for `sluice demo`: answers every request with a line naming itself,
//! so a user can watch round robin alternate without starting anything else. It runs on its
//! own thread and event loop with the same parser as the proxy; bodies are not read (a request
//! with one gets its answer and a close), which is all a demo needs.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const loop_ns = @import("../loop/loop.zig");
const Loop = loop_ns.Loop;
const Socket = loop_ns.Socket;
const Completion = loop_ns.Completion;
const sys = @import("../stdx/sys.zig");
const Address = @import("../stdx/Address.zig").Address;
const http = @import("../http/http.zig");

const Backend = @This();

/// More than the proxy keeps idle towards it (64 per worker by default), so the proxy's pooled
/// connections can never use up every slot and leave new ones waiting in the accept backlog.
/// Untouched slots cost address space only (the backends are globals in .bss).
const connections_max = 1024;
const buffer_bytes = 4096;
const headers_max = 32;

number: u32,
address: Address,
loop: Loop,
listener: Socket,
accept_completion: Completion = .{},
connections: [connections_max]Connection,
free_count: u32,
free: [connections_max]u16,
ready: std.atomic.Value(u8) = .init(0),

const Connection = struct {
    backend: *Backend,
    socket: Socket = undefined,
    recv_completion: Completion = .{},
    send_completion: Completion = .{},
    in: [buffer_bytes]u8 = undefined,
    in_len: usize = 0,
    out: [256]u8 = undefined,
    out_len: usize = 0,
    out_sent: usize = 0,
    close_after: bool = false,
    headers: [headers_max]http.Header = undefined,
    parser: http.RequestParser = undefined,
};

/// Binds 127.0.0.1:0 and starts the thread. `backend` must stay at its address.
pub fn start(backend: *Backend, number: u32, mode: Loop.Mode) !void {
    var address = Address.initIp4(.{ 127, 0, 0, 1 }, 0);
    const fd = try sys.socket(
        linux.AF.INET,
        linux.SOCK.STREAM | linux.SOCK.NONBLOCK | linux.SOCK.CLOEXEC,
        0,
    );
    errdefer sys.close(fd);
    try sys.bind(fd, address.sockaddr(), address.socklen());
    try sys.listen(fd, 128);
    var storage: linux.sockaddr.storage = undefined;
    _ = try sys.getsockname(fd, &storage);
    address.setPort(Address.fromStorage(&storage).getPort());
    backend.* = .{
        .number = number,
        .address = address,
        .loop = undefined,
        .listener = Socket.init(fd),
        .connections = undefined,
        .free_count = connections_max,
        .free = undefined,
    };
    for (&backend.connections, 0..) |*connection, i| {
        connection.* = .{ .backend = backend };
        connection.parser = .init(&connection.headers, .{
            .header_bytes_max = buffer_bytes,
            .headers_count_max = headers_max,
            .target_bytes_max = buffer_bytes / 2,
        });
        backend.free[i] = @intCast(i);
    }
    const thread = try std.Thread.spawn(.{ .stack_size = 128 * 1024 }, run, .{ backend, mode });
    thread.detach();
    while (backend.ready.load(.acquire) == 0) std.Thread.yield() catch {}; // Start-up only.
    if (backend.ready.load(.acquire) != 1) return error.DemoBackendFailed;
}

fn run(backend: *Backend, mode: Loop.Mode) void {
    backend.loop = Loop.init(.{ .mode = mode, .entries = 256 }) catch {
        backend.ready.store(2, .release);
        return;
    };
    backend.acceptNext();
    backend.ready.store(1, .release);
    while (true) backend.loop.tick() catch return;
}

fn acceptNext(backend: *Backend) void {
    if (backend.free_count == 0) return; // Resumed by `release`.
    backend.loop.accept(
        &backend.accept_completion,
        &backend.listener,
        Backend,
        backend,
        acceptCallback,
    );
}

fn acceptCallback(backend: *Backend, result: sys.AcceptError!linux.fd_t) void {
    const fd = result catch return backend.acceptNext();
    backend.free_count -= 1;
    const connection = &backend.connections[backend.free[backend.free_count]];
    connection.socket = Socket.init(fd);
    connection.in_len = 0;
    connection.parser.reset();
    backend.acceptNext();
    recvHead(connection);
}

fn release(backend: *Backend, connection: *Connection) void {
    backend.loop.close(&connection.socket);
    const index: u16 = @intCast(connection - &backend.connections[0]);
    backend.free[backend.free_count] = index;
    backend.free_count += 1;
    if (!backend.accept_completion.isPending()) backend.acceptNext();
}

fn recvHead(connection: *Connection) void {
    const loop = &connection.backend.loop;
    loop.recv(
        &connection.recv_completion,
        &connection.socket,
        connection.in[connection.in_len..],
        Connection,
        connection,
        recvCallback,
    );
}

fn recvCallback(connection: *Connection, result: sys.RecvError!usize) void {
    const n = result catch 0;
    if (n == 0) return connection.backend.release(connection);
    connection.in_len += n;
    handle(connection);
}

fn handle(connection: *Connection) void {
    switch (connection.parser.feed(connection.in[0..connection.in_len])) {
        .incomplete => {
            if (connection.in_len == connection.in.len) return connection.backend.release(
                connection,
            );
            recvHead(connection);
        },
        .invalid => respond(connection, "400 Bad Request", "bad request\n", true),
        .complete => |head_len| {
            const head = &connection.parser.head;
            var body: [160]u8 = undefined;
            const text = std.fmt.bufPrint(&body, "hello from backend {d} (you asked for {s})\n", .{
                connection.backend.number,
                head.target[0..@min(head.target.len, 100)],
            }) catch unreachable; // Bounded above.
            const has_body = head.body != .none;
            const close_after = !head.keep_alive or has_body;
            // Keep any pipelined bytes for the next request.
            const rest = connection.in_len - head_len;
            std.mem.copyForwards(
                u8,
                connection.in[0..rest],
                connection.in[head_len..connection.in_len],
            );
            connection.in_len = if (has_body) 0 else rest;
            respond(connection, "200 OK", text, close_after);
        },
    }
}

fn respond(connection: *Connection, status: []const u8, body: []const u8, close_after: bool) void {
    const out = std.fmt.bufPrint(&connection.out, "HTTP/1.1 {s}\r\nContent-Type: text/plain\r\n" ++
        "Content-Length: {d}\r\n{s}\r\n{s}", .{
        status,
        body.len,
        if (close_after) "Connection: close\r\n" else "",
        body,
    }) catch unreachable; // 256 bytes hold the longest answer.
    connection.out_len = out.len;
    connection.out_sent = 0;
    connection.close_after = close_after;
    sendRest(connection);
}

fn sendRest(connection: *Connection) void {
    const loop = &connection.backend.loop;
    loop.send(
        &connection.send_completion,
        &connection.socket,
        connection.out[connection.out_sent..connection.out_len],
        Connection,
        connection,
        sendCallback,
    );
}

fn sendCallback(connection: *Connection, result: sys.SendError!usize) void {
    const n = result catch return connection.backend.release(connection);
    connection.out_sent += n;
    if (connection.out_sent < connection.out_len) return sendRest(connection);
    if (connection.close_after) return connection.backend.release(connection);
    connection.parser.reset();
    if (connection.in_len > 0) return handle(connection);
    recvHead(connection);
}
