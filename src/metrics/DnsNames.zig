//! Backend names as the snapshot shows them (runtime/Dns.zig fills them): each name with its
//! port, its state, the addresses it last resolved to (its pools' members from it), its TTL,
//! how long ago it last resolved, and its resolutions and failures. In `/status` under `dns`,
//! and in `/metrics` as the `sluice_dns_*` families labelled `name="NAME:PORT"`.
const std = @import("std");

const Address = @import("../stdx/Address.zig").Address;
const Prometheus = @import("Prometheus.zig");
const Json = @import("Json.zig");

/// runtime/Dns.zig's `names_max` (the collector asserts they agree).
pub const names_max = 64;
/// Per name: its JSON object, with up to 64 addresses of at most 47 bytes quoted, 3.6 KiB,
/// and four Prometheus samples of about 330 bytes.
pub const render_bytes_per_name = 5 * 1024;

pub const Name = struct {
    name: []const u8,
    /// 0: an SRV name (labelled `srv+NAME`).
    port: u16,
    /// `pending` (never answered), `resolved`, `not_found` or `failing`.
    state: []const u8,
    /// The last good set (kept through failures).
    addresses: []const Address,
    ttl_s: u32,
    /// Since the last answer with addresses; null: never.
    age_ns: ?u64,
    resolutions: u64,
    failures: u64,
    /// `not_found` or `servers_failed`; empty before any failure.
    last_failure: []const u8,
};

pub fn writeStatus(names: []const Name, json: *Json) Json.Error!void {
    try json.key("dns");
    try json.beginArray();
    for (names) |*name| {
        try json.beginObject();
        try json.fieldString("name", name.name);
        try json.fieldInt("port", name.port);
        try json.fieldString("state", name.state);
        try json.key("addresses");
        try json.beginArray();
        for (name.addresses) |*address| {
            var text: [Address.text_bytes_max]u8 = undefined;
            try json.string(address.toText(&text));
        }
        try json.endArray();
        try json.fieldInt("ttl_seconds", name.ttl_s);
        try json.key("last_resolved_seconds_ago");
        if (name.age_ns) |age| try json.seconds(age) else try json.null();
        try json.fieldInt("resolutions", name.resolutions);
        try json.fieldInt("failures", name.failures);
        try json.fieldString("last_failure", name.last_failure);
        try json.endObject();
    }
    try json.endArray();
}

pub fn writePrometheus(names: []const Name, p: *Prometheus) Prometheus.Error!void {
    if (names.len == 0) return;
    const families = .{
        .{ "sluice_dns_addresses", .gauge, "Addresses a backend name resolved to last (its pools' members from it)." },
        .{ "sluice_dns_ttl_seconds", .gauge, "The TTL of a backend name's last answer." },
        .{ "sluice_dns_resolutions_total", .counter, "Resolutions of a backend name that ended." },
        .{ "sluice_dns_failures_total", .counter, "Resolutions of a backend name that failed (no such name, or no answer); the last good set was kept." },
    };
    inline for (families, 0..) |family, i| {
        try p.family(family[0], family[1], family[2]);
        for (names) |*name| {
            var label: [256 + 8]u8 = undefined;
            const value = (if (name.port == 0)
                std.fmt.bufPrint(&label, "srv+{s}", .{name.name})
            else
                std.fmt.bufPrint(&label, "{s}:{d}", .{ name.name, name.port })) catch unreachable; // 253 + 6.
            const sample: u64 = switch (i) {
                0 => name.addresses.len,
                1 => name.ttl_s,
                2 => name.resolutions,
                3 => name.failures,
                else => unreachable,
            };
            try p.sample(family[0], &.{.{ .name = "name", .value = value }}, sample);
        }
    }
}
