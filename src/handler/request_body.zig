//! A handler's request body read on demand: `request.text()`, `request.json()` and
//! `request.arrayBuffer()` (docs/ARCHITECTURE.md, "Handler bodies of any size").
//!
//! A body that fits the room behind the head is read before the call and is `request.body`
//! (a string); these methods answer from it at once, `json()` synchronously as it always has
//! (so `await` works either way). A larger body, or one of unknown length, is not read before
//! the call: `request.body` is null, and the first of these methods records a host operation
//! (js/HostOps.zig), as `fetch` does, so the call suspends while the exchange gathers the body
//! into the request's heap; the promise settles with the text, the parsed JSON or an
//! ArrayBuffer over the bytes. Such a body can be read once, as the Fetch standard's can: a
//! second read rejects with a TypeError ("body already used"). A handler that never asks
//! leaves the body unread, and `Response.proxy` streams it to the pool.
const std = @import("std");
const assert = std.debug.assert;

const js = @import("../js/js.zig");
const Vm = js.Vm;
const Value = js.Value;
const builtins = js.builtins;
const object = @import("../js/object.zig");
const meter = js.meter;
const host = @import("host.zig");
const rejected = @import("fetch.zig").rejected;

/// What the handler asked the body as.
pub const Kind = enum(u8) { text, json, array_buffer };

/// The request object's hidden state of a body left unread before the call: a number, one of
/// `State`'s. Absent: the body was read before the call (`request.body`).
pub const state_name = js.string.hostKey("#body");
/// The kind the read in flight was asked as (a number, `Kind`).
const kind_name = js.string.hostKey("#bodyKind");

pub const State = enum(u8) { unread, reading, used };

/// `request.text()`: a promise of the body decoded as UTF-8.
pub fn text(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    return read(vm, this, .text);
}

/// `request.json()`: the body parsed; a value at once when the body was read before the call
/// (as it always was), else a promise of it.
pub fn json(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    if (!this.isObject()) return vm.throwMessage(.type_error, "request.json: call it on the request (request.json())");
    if (stateOf(this) == null) {
        const body = host.own(this, "body") orelse return vm.throwMessage(.type_error, "request.json: the request has no body property");
        if (!body.isString()) return vm.throwMessage(.type_error, "request.json: request.body is not a string");
        return js.Engine.parseJson(vm, body);
    }
    return read(vm, this, .json);
}

/// `request.arrayBuffer()`: a promise of the body's bytes.
pub fn arrayBuffer(vm: *Vm, this: Value, args: []const Value) Vm.Error!Value {
    _ = args;
    return read(vm, this, .array_buffer);
}

fn read(vm: *Vm, this: Value, kind: Kind) Vm.Error!Value {
    if (!this.isObject()) return vm.throwMessage(.type_error, "request body methods: call them on the request (await request.text())");
    const p = try builtins.promises.newPromise(vm);
    const state = stateOf(this) orelse {
        // Read before the call: answered from `request.body`.
        const body = host.own(this, "body") orelse Value.string(js.string.empty);
        if (!body.isString()) return rejectWith(vm, p, "request body methods: request.body was changed to something that is not a string");
        const result = switch (kind) {
            .text => body,
            .json => js.Engine.parseJson(vm, body) catch |err| switch (err) {
                error.Throw => return rejected(vm, p),
                else => |e| return e,
            },
            .array_buffer => try utf8Buffer(vm, body.asString()),
        };
        try builtins.promises.resolvePromise(vm, p, result);
        return Value.obj(&p.object);
    };
    if (state != .unread) return rejectWith(vm, p, "request body: body already used (a body larger than the buffer can be read once)");
    if (vm.host_ops.begin(vm.limits.host_ops_max, p, this) == null) {
        return rejectWith(vm, p, "request body: as many operations as fetch_max are in flight already");
    }
    try setState(vm, this.asObject(), .reading);
    try host.putHostKey(vm, this.asObject(), kind_name, Value.number(@floatFromInt(@backingInt(kind))));
    return Value.obj(&p.object);
}

/// Whether a host operation's recorded value is a body read (a request object), not a fetch.
pub fn isRead(op_request: Value) bool {
    if (!op_request.isObject()) return false;
    const state = stateOf(op_request) orelse return false;
    return state == .reading;
}

/// The settled value of a read: built in the request's heap from `bytes` (which live there),
/// or the rejection's TypeError with `failure`.
pub fn settle(vm: *Vm, request: Value, bytes: []align(8) u8) Vm.Error!Value {
    assert(isRead(request));
    try setState(vm, request.asObject(), .used);
    const kind: Kind = @fromBackingInt(@as(u8, @intFromFloat(host.ownHidden(request, kind_name).?.asNumber())));
    switch (kind) {
        .text, .json => {
            try vm.charge(meter.bytesCost(bytes.len));
            const decoded = try decode(vm, bytes);
            if (kind == .text) return Value.string(decoded);
            return js.Engine.parseJson(vm, Value.string(decoded));
        },
        .array_buffer => {
            if (bytes.len > object.byte_length_max) return vm.outOfMemory();
            const buffer = vm.heap.create(object.ArrayBuffer) catch return vm.outOfMemory();
            buffer.* = .{ .object = .{ .kind = .array_buffer }, .bytes = bytes.ptr, .len = @intCast(bytes.len) };
            return Value.obj(&buffer.object);
        },
    }
}

/// The body as a string: ASCII (the common case) is a Latin-1 string over the bytes where they
/// are, with no copy; anything else is decoded as UTF-8 (each invalid sequence U+FFFD) into a
/// string of its own, which takes two or three times the body's size of the heap.
pub fn decode(vm: *Vm, bytes: []const u8) Vm.Error!*js.string.String {
    if (bytes.len == 0) return js.string.empty;
    for (bytes) |b| {
        if (b >= 0x80) return builtins.urlsearchparams.decodeUtf8(vm, bytes);
    }
    return js.string.newHeader(vm.heap, bytes.ptr, @intCast(bytes.len), false) catch vm.outOfMemory();
}

/// A read that failed (the body does not fit the handler's memory): its state is `used`.
pub fn fail(vm: *Vm, request: Value, message: []const u8) Vm.Error!Value {
    try setState(vm, request.asObject(), .used);
    return vm.throwMessage(.type_error, message);
}

/// Marks a request whose body was not read before the call: `request.body` is null.
pub fn markUnread(heap: *js.Heap, request: Value) js.Heap.Error!void {
    try request.asObject().properties.define(heap, state_name, Value.number(@floatFromInt(@backingInt(State.unread))), host.host_key_flags);
}

fn stateOf(request: Value) ?State {
    const v = host.ownHidden(request, state_name) orelse return null;
    if (!v.isNumber()) return null;
    return @fromBackingInt(@as(u8, @intFromFloat(v.asNumber())));
}

fn setState(vm: *Vm, o: *object.Object, state: State) Vm.Error!void {
    try host.putHostKey(vm, o, state_name, Value.number(@floatFromInt(@backingInt(state))));
}

/// An ArrayBuffer of a string's UTF-8 bytes.
fn utf8Buffer(vm: *Vm, s: *const js.string.String) Vm.Error!Value {
    var counter: std.Io.Writer.Discarding = .init(&.{});
    js.string.writeUtf8(&counter.writer, s) catch unreachable; // Discarding never fails.
    const len: usize = @intCast(counter.fullCount());
    try vm.charge(meter.bytesCost(len));
    const buffer = try builtins.typed_arrays.newBuffer(vm, len);
    var w: std.Io.Writer = .fixed(buffer.slice());
    js.string.writeUtf8(&w, s) catch unreachable; // Exactly `len` bytes.
    return Value.obj(&buffer.object);
}

fn rejectWith(vm: *Vm, p: *object.Promise, message: []const u8) Vm.Error!Value {
    switch (vm.throwMessage(.type_error, message)) {
        error.Throw => return rejected(vm, p),
        error.Terminate => |err| return err,
    }
}
