//! A header block being received (HEADERS and its CONTINUATIONs), for either side's session:
//! its fields point at nghttp2's reference-counted buffers (held, not copied) until the block
//! is handed to the handler and released. HPACK decodes one block at a time per connection, so
//! a session needs one, only while a block is in flight; it is one block of the worker's pool,
//! the fields and the buffer references laid out after this header.
//!
//! Limits (RFC 9113 §6.5.2's list size, and a field count) are counted as fields arrive; past
//! either, the rest of the block is decoded (HPACK's state must follow) and nothing more is
//! kept, and the session answers as its side must (`too_large`).
const std = @import("std");
const assert = std.debug.assert;
const c = @import("nghttp2");
const memory = @import("memory.zig");
const wire = @import("wire.zig");
const Field = wire.Field;

const HeaderBlock = @This();

stream: wire.StreamId,
/// A trailer block (HEADERS after the message's head).
trailers: bool,
/// The pseudo-fields kept (a request's or a response's; others are decoded and unused).
pseudo: [pseudo_names.len][]const u8 = @splat(""),
/// RFC 9113 §6.5.2's size so far.
list_bytes: u64 = 0,
too_large: bool = false,
fields_count: u32 = 0,
/// Every name and value buffer held, pseudo-fields' included.
buffers_count: u32 = 0,
fields_max: u32,
/// `fields_max` fields, then `buffersMax(fields_max)` buffers, in the same pool block.
fields: [*]Field,
buffers: [*]*c.nghttp2_rcbuf,

pub const Pseudo = enum { method, scheme, authority, path, status };
const pseudo_names = [_][]const u8{ ":method", ":scheme", ":authority", ":path", ":status" };

pub fn bytes(fields_max: u32) usize {
    return @sizeOf(HeaderBlock) + @as(usize, fields_max) * @sizeOf(Field) + buffersMax(fields_max) * @sizeOf(*c.nghttp2_rcbuf);
}

fn buffersMax(fields_max: u32) usize {
    return 2 * (@as(usize, fields_max) + pseudo_names.len);
}

/// A block from `pool` for `stream`; null when the pool is empty.
pub fn create(pool: *memory.Pool, stream: wire.StreamId, trailers: bool, fields_max: u32) ?*HeaderBlock {
    const memory_block = pool.allocBytes(bytes(fields_max)) orelse return null;
    const block: *HeaderBlock = @ptrCast(@alignCast(memory_block));
    block.* = .{
        .stream = stream,
        .trailers = trailers,
        .fields_max = fields_max,
        .fields = @ptrCast(@alignCast(memory_block + @sizeOf(HeaderBlock))),
        .buffers = @ptrCast(@alignCast(memory_block + @sizeOf(HeaderBlock) + fields_max * @sizeOf(Field))),
    };
    return block;
}

/// Lets go of the buffers held and gives the block back to `pool`.
pub fn destroy(block: *HeaderBlock, pool: *memory.Pool) void {
    for (block.buffers[0..block.buffers_count]) |buffer| c.nghttp2_rcbuf_decref(buffer);
    pool.freeBytes(@ptrCast(block));
}

/// One decoded field: counted against the limits, and kept unless the block is over them. A
/// pseudo-field is kept by name (each at most once: nghttp2 refuses repeats).
pub fn add(block: *HeaderBlock, name_buffer: *c.nghttp2_rcbuf, value_buffer: *c.nghttp2_rcbuf, list_bytes_max: u32) void {
    const name = slice(name_buffer);
    const value = slice(value_buffer);
    block.list_bytes += name.len + value.len + 32;
    const pseudo = name.len > 0 and name[0] == ':';
    if (!pseudo) block.fields_count += 1;
    // Keep decoding past a limit, keep nothing more.
    if (block.list_bytes > list_bytes_max or block.fields_count > block.fields_max) block.too_large = true;
    if (block.too_large) return;
    const which: ?usize = if (pseudo) pseudoIndex(name) else null;
    if (pseudo and which == null) return; // One sluice does not use (:protocol): decoded, unused.
    assert(block.buffers_count + 2 <= buffersMax(block.fields_max));
    c.nghttp2_rcbuf_incref(name_buffer);
    c.nghttp2_rcbuf_incref(value_buffer);
    block.buffers[block.buffers_count] = name_buffer;
    block.buffers[block.buffers_count + 1] = value_buffer;
    block.buffers_count += 2;
    if (which) |i| {
        block.pseudo[i] = value;
    } else {
        block.fields[block.fields_count - 1] = .{ .name = name, .value = value };
    }
}

/// The index in `pseudo_names` of `name` (which starts with ':'), or null: picked by length
/// and a letter, then compared whole (once per field of every request).
fn pseudoIndex(name: []const u8) ?usize {
    const guess: usize = switch (name.len) {
        5 => 3, // :path
        7 => switch (name[1]) {
            'm' => 0, // :method
            's' => if (name[2] == 'c') 1 else 4, // :scheme, :status
            else => return null,
        },
        10 => 2, // :authority
        else => return null,
    };
    return if (std.mem.eql(u8, name, pseudo_names[guess])) guess else null;
}

pub fn get(block: *const HeaderBlock, which: Pseudo) []const u8 {
    return block.pseudo[@backingInt(which)];
}

pub fn regular(block: *const HeaderBlock) []const Field {
    return block.fields[0..block.fields_count];
}

fn slice(buffer: *c.nghttp2_rcbuf) []const u8 {
    const vec = c.nghttp2_rcbuf_get_buf(buffer);
    return if (vec.len == 0) "" else vec.base[0..vec.len];
}

test "HeaderBlock: each pseudo-field name is found, and nothing else" {
    for (pseudo_names, 0..) |name, i| try std.testing.expectEqual(@as(?usize, i), pseudoIndex(name));
    for ([_][]const u8{ ":protocol", ":pat", ":pathx", ":mEthod", ":sxheme", ":stat", ":authorit", ":" }) |name| {
        try std.testing.expectEqual(@as(?usize, null), pseudoIndex(name));
    }
}
