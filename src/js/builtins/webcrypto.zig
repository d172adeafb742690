//! The `crypto` global of WinterTC's minimum common API, as far as the language goes:
//! `crypto.randomUUID()` (a version 4 UUID, RFC 9562 section 5.4).
//!
//! Decision: the random bytes come from a ChaCha8 generator per engine (per worker), seeded
//! with 32 bytes from the kernel (getrandom) on its first use and erasing its key as it goes
//! (std.Random.ChaCha), so a UUID costs no system call and no allocation. Math.random's
//! xorshift is not used: a UUID may be a token, and must not be predictable from others.
//! `crypto.getRandomValues(typedArray)` fills an integer typed array from the same generator,
//! at most 65,536 bytes a call as the standard says (node's QuotaExceededError past it).
const std = @import("std");
const assert = std.debug.assert;
const linux = std.os.linux;

const Vm = @import("../Vm.zig");
const Error = Vm.Error;
const Value = @import("../value.zig").Value;
const object = @import("../object.zig");
const ops = @import("../operations.zig");
const meter = @import("../meter.zig");
const builtins = @import("../builtins.zig");

/// The engine's generator, seeded from the kernel when first used.
fn generator(vm: *Vm) Error!*std.Random.ChaCha {
    if (vm.csprng == null) {
        var seed: [std.Random.ChaCha.secret_seed_length]u8 = undefined;
        var filled: usize = 0;
        while (filled < seed.len) {
            const rc = linux.getrandom(seed[filled..].ptr, seed.len - filled, 0);
            switch (linux.errno(rc)) {
                .SUCCESS => filled += rc,
                .INTR => {}, // Interrupted before any byte: ask again.
                else => return vm.throwMessage(.@"error", "crypto: the kernel's random source failed"),
            }
        }
        vm.csprng = .init(seed);
        std.crypto.secureZero(u8, &seed);
    }
    return &vm.csprng.?;
}

/// The 36 characters of a version 4 UUID made of `bytes`.
fn formatUuid(bytes: *[16]u8, out: *[36]u8) void {
    bytes[6] = (bytes[6] & 0x0F) | 0x40; // Version 4.
    bytes[8] = (bytes[8] & 0x3F) | 0x80; // The variant of RFC 9562.
    const hex = "0123456789abcdef";
    var o: usize = 0;
    for (bytes, 0..) |b, i| {
        if (i == 4 or i == 6 or i == 8 or i == 10) {
            out[o] = '-';
            o += 1;
        }
        out[o] = hex[b >> 4];
        out[o + 1] = hex[b & 0x0F];
        o += 2;
    }
    assert(o == out.len);
}

pub fn randomUUID(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    _ = args;
    var bytes: [16]u8 = undefined;
    (try generator(vm)).fill(&bytes);
    var text: [36]u8 = undefined;
    formatUuid(&bytes, &text);
    return Value.string(try vm.newLatin1(&text));
}

/// The most bytes one getRandomValues call fills (Web Crypto's quota).
const random_values_bytes_max = 65_536;

pub fn getRandomValues(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const target = builtins.arg(args, 0);
    const o = target.objectOf(.typed_array) orelse return typeMismatch(vm);
    const t = o.as(object.TypedArray);
    if (t.element == .float32 or t.element == .float64) return typeMismatch(vm);
    const bytes = t.bytes();
    if (bytes.len > random_values_bytes_max) {
        return builtins.base64.throwDomException(vm, "QuotaExceededError", 22, "The requested length exceeds 65,536 bytes");
    }
    try ops.checkModuleWrite(vm, t.buffer);
    try vm.charge(meter.bytesCost(bytes.len));
    (try generator(vm)).fill(bytes);
    return target;
}

fn typeMismatch(vm: *Vm) Error {
    return builtins.base64.throwDomException(vm, "TypeMismatchError", 17, "The data argument must be an integer-type TypedArray");
}

test "webcrypto: a UUID has version 4 and the RFC 9562 variant" {
    var bytes: [16]u8 = @splat(0xFF);
    var text: [36]u8 = undefined;
    formatUuid(&bytes, &text);
    try std.testing.expectEqualStrings("ffffffff-ffff-4fff-bfff-ffffffffffff", &text);
    bytes = @splat(0);
    formatUuid(&bytes, &text);
    try std.testing.expectEqualStrings("00000000-0000-4000-8000-000000000000", &text);
}
