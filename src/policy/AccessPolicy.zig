//! Who may be served: the allow and deny lists of the top level, of each listener and of each
//! route (`Config.Access`), parsed once when a generation is built, so a request compares
//! its client's address with ready blocks and parses nothing.
//!
//! Decision: the lists add up. A request must pass the top level's, its listener's and its
//! route's; each passes when the client is in none of its `deny` blocks and, if it has an
//! `allow` list, in one of its `allow` blocks (deny wins, as nginx's `deny 10.0.0.5; allow
//! 10.0.0.0/8; deny all;` reads). An inner level cannot loosen an outer one: what the top level
//! refuses no route serves. The client is the one sluice resolved: the peer, or its PROXY
//! protocol header's address; an IPv4 client on a dual-stack socket (`::ffff:a.b.c.d`) is
//! matched as IPv4.
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Config = @import("../config/Config.zig");
const Cidr = @import("../config/Cidr.zig");
const Address = @import("../stdx/Address.zig").Address;

const AccessPolicy = @This();

top: List,
/// One per listener of the config, by index.
listeners: []const List,
/// One per route of the config, by index.
routes: []const List,

pub const List = struct {
    allow: []const Cidr = &.{},
    deny: []const Cidr = &.{},

    pub fn allows(list: *const List, client: *const Address) bool {
        for (list.deny) |*cidr| if (cidr.contains(client)) return false;
        if (list.allow.len == 0) return true;
        for (list.allow) |*cidr| if (cidr.contains(client)) return true;
        return false;
    }

    fn parse(arena: std.mem.Allocator, access: *const Config.Access) error{OutOfMemory}!List {
        return .{ .allow = try parseBlocks(arena, access.allow), .deny = try parseBlocks(arena, access.deny) };
    }
};

/// The policy of `config`, or null when no list is written anywhere (then a request pays one
/// comparison).
pub fn build(arena: std.mem.Allocator, config: *const Config) error{OutOfMemory}!?AccessPolicy {
    var any = !config.access.isEmpty();
    for (config.listeners()) |*listener| any = any or !listener.access.isEmpty();
    for (config.routes()) |*route| any = any or !route.access.isEmpty();
    if (!any) return null;
    const listeners = try arena.alloc(List, config.listeners().len);
    for (listeners, config.listeners()) |*list, *listener| list.* = try .parse(arena, &listener.access);
    const routes = try arena.alloc(List, config.routes().len);
    for (routes, config.routes()) |*list, *route| list.* = try .parse(arena, &route.access);
    return .{ .top = try .parse(arena, &config.access), .listeners = listeners, .routes = routes };
}

/// Whether `client`, on listener `listener` (null: one this config no longer has) taking route
/// `route` (null: none matched, or no routes), passes every list that applies.
pub fn allows(policy: *const AccessPolicy, client: *const Address, listener: ?usize, route: ?usize) bool {
    const address = unmapped(client);
    if (!policy.top.allows(&address)) return false;
    if (listener) |index| if (!policy.listeners[index].allows(&address)) return false;
    if (route) |index| if (!policy.routes[index].allows(&address)) return false;
    return true;
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is; any other as it is.
fn unmapped(client: *const Address) Address {
    if (client.family() != linux.AF.INET6) return client.*;
    const bytes = client.in6.addr;
    const prefix = @as([10]u8, @splat(0)) ++ [2]u8{ 0xff, 0xff };
    if (!std.mem.eql(u8, bytes[0..12], &prefix)) return client.*;
    return Address.initIp4(bytes[12..16].*, client.getPort());
}

/// Blocks from their checked text (`Config.Access`): single spaces between them.
fn parseBlocks(arena: std.mem.Allocator, text: []const u8) error{OutOfMemory}![]const Cidr {
    if (text.len == 0) return &.{};
    const blocks = try arena.alloc(Cidr, std.mem.countScalar(u8, text, ' ') + 1);
    var words = std.mem.splitScalar(u8, text, ' ');
    for (blocks) |*block| block.* = Cidr.parse(words.next().?) catch unreachable; // Checked by the mappers.
    assert(words.next() == null);
    return blocks;
}

const testing = std.testing;

test "access: deny wins, an allow list admits only its blocks, and the levels add up" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var config: Config = .{};
    config.access = .{ .deny = "10.0.0.5" };
    try config.addRoute(.{ .path_prefix = "/admin/", .access = .{ .allow = "10.0.0.0/8 ::1" } });
    try config.addRoute(.{});
    const policy = (try build(arena, &config)).?;
    const inside = try Address.parse("10.1.2.3:1");
    const denied = try Address.parse("10.0.0.5:1");
    const outside = try Address.parse("192.0.2.1:1");
    const mapped = try Address.parse("[::ffff:10.1.2.3]:1");
    const loopback6 = try Address.parse("[::1]:1");
    try testing.expect(policy.allows(&inside, 0, 0));
    try testing.expect(policy.allows(&mapped, 0, 0));
    try testing.expect(policy.allows(&loopback6, 0, 0));
    try testing.expect(!policy.allows(&outside, 0, 0));
    try testing.expect(policy.allows(&outside, 0, 1));
    try testing.expect(policy.allows(&outside, null, null));
    try testing.expect(!policy.allows(&denied, 0, 0)); // The top level's deny, whatever the route allows.
    try testing.expect(!policy.allows(&denied, null, null));
}

test "access: no list anywhere builds no policy" {
    var arena_state: std.heap.ArenaAllocator = .init(testing.allocator);
    defer arena_state.deinit();
    var config: Config = .{};
    try config.addRoute(.{});
    try testing.expect((try build(arena_state.allocator(), &config)) == null);
}
