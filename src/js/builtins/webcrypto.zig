//! The `crypto` global of WinterTC's minimum common API, as far as the language goes:
//! `crypto.randomUUID()` (a version 4 UUID, RFC 9562 section 5.4).
//!
//! Decision: the random bytes come from a ChaCha8 generator per engine (per worker), seeded
//! with 32 bytes from the kernel (getrandom) on its first use and erasing its key as it goes
//! (std.Random.ChaCha), so a UUID costs no system call and no allocation. Math.random's
//! xorshift is not used: a UUID may be a token, and must not be predictable from others.
//! `crypto.getRandomValues(typedArray)` fills an integer typed array from the same generator,
//! at most 65,536 bytes a call as the standard says (node's QuotaExceededError past it).
//! `crypto.subtle.digest(algorithm, data)` hashes with the TLS library through `digest_hook`,
//! which the program installs at start-up (js/ may import only std), and returns a settled
//! Promise of an ArrayBuffer: the hash is computed at the call, as node's is before it resolves.
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
const names = @import("../names.zig");

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

/// A one-shot digest by Web Crypto's algorithm name ("SHA-256") into `out`: its length, or
/// null for an unknown name. main.zig installs the TLS library's (tls/digest.zig).
pub const DigestFn = *const fn (name: []const u8, data: []const u8, out: *[64]u8) ?usize;

/// Written once by main.zig before any engine runs (no thread exists yet), read after.
pub var digest_hook: ?DigestFn = null;

const digest_names = [_][]const u8{ "SHA-1", "SHA-256", "SHA-384", "SHA-512" };

pub fn digest(vm: *Vm, this: Value, args: []const Value) Error!Value {
    _ = this;
    const p = try builtins.promises.newPromise(vm);
    const result = digestValue(vm, args) catch |err| switch (err) {
        error.Throw => {
            try builtins.promises.rejectPromise(vm, p, vm.exception);
            return Value.obj(&p.object);
        },
        error.Terminate => return err,
    };
    try builtins.promises.resolvePromise(vm, p, result);
    return Value.obj(&p.object);
}

/// The digest as an ArrayBuffer, or node's exception for the arguments.
fn digestValue(vm: *Vm, args: []const Value) Error!Value {
    if (args.len < 2) return throwCoded(vm, .type_error, "ERR_MISSING_ARGS", "Failed to execute 'digest' on 'SubtleCrypto': 2 arguments required, but only 1 present.");
    const name = try algorithmName(vm, args[0]);
    const data: []const u8 = if (args[1].objectOf(.typed_array)) |o|
        o.as(object.TypedArray).bytes()
    else if (args[1].objectOf(.array_buffer)) |o|
        o.as(object.ArrayBuffer).slice()
    else
        return throwCoded(vm, .type_error, "ERR_INVALID_ARG_TYPE", "Failed to execute 'digest' on 'SubtleCrypto': 2nd argument is not instance of ArrayBuffer, Buffer, TypedArray, or DataView.");
    const hook = digest_hook orelse return vm.throwMessage(.@"error", "crypto.subtle.digest: no digest in this build");
    try vm.charge(meter.bytesCost(data.len));
    var out: [64]u8 = undefined;
    const len = hook(name, data, &out) orelse unreachable; // algorithmName gave one of the four.
    const buffer = try builtins.typed_arrays.newBuffer(vm, len);
    @memcpy(buffer.slice(), out[0..len]);
    return Value.obj(&buffer.object);
}

/// The algorithm's canonical name from a string or `{ name }`, case-insensitively.
fn algorithmName(vm: *Vm, algorithm: Value) Error![]const u8 {
    var name_value = algorithm;
    if (algorithm.is(.object)) {
        name_value = try ops.getField(vm, algorithm, names.string("name"));
        if (name_value.isUndefined()) return throwCoded(vm, .type_error, "ERR_MISSING_OPTION", "Failed to normalize algorithm: passed algorithm can not be converted to 'Algorithm' because 'name' is required in 'Algorithm'.");
    }
    const s = try ops.toString(vm, name_value);
    if (!s.flags.wide) {
        for (digest_names) |known| {
            if (std.ascii.eqlIgnoreCase(s.latin1(), known)) return known;
        }
    }
    return builtins.base64.throwDomException(vm, "NotSupportedError", 9, "Unrecognized algorithm name");
}

const throwCoded = builtins.text_encoding.throwCoded;

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
