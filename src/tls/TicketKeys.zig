//! The session-ticket keys: one set for the whole process, so a ticket one worker issued
//! resumes on any other worker, and on the contexts a reload builds. The control thread owns
//! it and rotates it (`rotate`, every `rotation_interval_s`); workers read it from AWS-LC's
//! ticket callback, on every full handshake (to seal a new ticket) and every resumption (to
//! open one).
//!
//! Decision: a sequence lock, not a pointer to immutable sets. The writer makes the sequence
//! odd, writes, and makes it even again; a reader copies the keys and retries if the sequence
//! was odd or moved. Readers never block the writer or each other, nothing is allocated or
//! freed, and there is no set whose lifetime has to be tracked across workers. Every word is
//! an atomic (relaxed on x86-64: plain moves), so the copy is not a data race.
//!
//! Keys: the newest seals tickets; the older ones still open them (and such a ticket is
//! renewed), so a ticket stays good for between `slots_count - 1` and `slots_count` rotation
//! intervals. Each key is a 16-byte name (sent in the clear in the ticket, to find the key),
//! an AES-256-CBC key and an HMAC-SHA256 key: the scheme RFC 5077 §4 recommends and AWS-LC's
//! (and OpenSSL's) own default uses.
const std = @import("std");
const assert = std.debug.assert;
const c = @import("aws_lc");

const TicketKeys = @This();

/// Odd while the control thread is writing.
sequence: std.atomic.Value(u64) = .init(0),
/// `slots_count` keys, then the index of the newest, as 64-bit words.
words: [words_count]std.atomic.Value(u64) = @splat(.init(0)),

pub const slots_count = 3;
/// How often the control thread should call `rotate`: tickets then stay good for 24 to 36
/// hours, as long as `ServerContext`'s session lifetime lets clients keep them.
pub const rotation_interval_s = 12 * 3600;

pub const Key = extern struct {
    name: [16]u8,
    aes: [32]u8,
    hmac: [32]u8,

    /// An all-zero name marks an empty slot (RAND_bytes makes one with probability 2^-128).
    fn empty(key: *const Key) bool {
        return std.mem.allEqual(u8, &key.name, 0);
    }
};

const key_words = @sizeOf(Key) / 8;
const newest_word = slots_count * key_words;
const words_count = newest_word + 1;

comptime {
    assert(@sizeOf(Key) == 80);
    assert(@sizeOf(Key) % 8 == 0);
}

const Snapshot = struct {
    keys: [slots_count]Key,
    newest: usize,
};

/// One fresh key, the newest; the other slots empty. On the control thread.
pub fn init(keys: *TicketKeys) error{Random}!void {
    keys.* = .{};
    try keys.rotate();
}

/// A fresh key becomes the newest; the oldest is forgotten (its tickets no longer resume).
/// The control thread only.
pub fn rotate(keys: *TicketKeys) error{Random}!void {
    var snapshot = keys.read();
    var key: Key = undefined;
    if (c.RAND_priv_bytes(@ptrCast(&key), @sizeOf(Key)) != 1) {
        c.ERR_clear_error();
        return error.Random;
    }
    const slot = (snapshot.newest + 1) % slots_count;
    snapshot.keys[slot] = key;
    snapshot.newest = slot;
    keys.write(&snapshot);
    std.crypto.secureZero(u8, std.mem.asBytes(&key));
    std.crypto.secureZero(u8, std.mem.asBytes(&snapshot));
}

/// The key that seals new tickets. Any thread.
pub fn newest(keys: *const TicketKeys) Key {
    const snapshot = keys.read();
    return snapshot.keys[snapshot.newest];
}

pub const Found = struct {
    key: Key,
    /// Not the newest key: the ticket opens, and the client gets a new one.
    renew: bool,
};

/// The key named `name`, if it is still in the set. Any thread.
pub fn find(keys: *const TicketKeys, name: *const [16]u8) ?Found {
    const snapshot = keys.read();
    for (snapshot.keys, 0..) |key, index| {
        if (key.empty()) continue;
        if (std.mem.eql(u8, &key.name, name)) return .{ .key = key, .renew = index != snapshot.newest };
    }
    return null;
}

fn read(keys: *const TicketKeys) Snapshot {
    var copy: [words_count]u64 = undefined;
    // The writer holds the lock for a few dozen stores, a few times a day: a reader retries
    // at most a handful of times. Bounded anyway, so a bug shows up as a crash, not a hang.
    for (0..1_000_000) |_| {
        const before = keys.sequence.load(.acquire);
        if (before & 1 == 1) {
            std.atomic.spinLoopHint();
            continue;
        }
        // Acquire loads: none of them can be moved after the second sequence load below.
        for (&copy, &keys.words) |*to, *from| to.* = from.load(.acquire);
        if (keys.sequence.load(.monotonic) == before) break;
    } else @panic("TicketKeys: a reader never saw a stable sequence");
    var snapshot: Snapshot = undefined;
    @memcpy(std.mem.asBytes(&snapshot.keys), std.mem.sliceAsBytes(copy[0..newest_word]));
    snapshot.newest = @intCast(copy[newest_word]);
    assert(snapshot.newest < slots_count);
    return snapshot;
}

fn write(keys: *TicketKeys, snapshot: *const Snapshot) void {
    var copy: [words_count]u64 = undefined;
    @memcpy(std.mem.sliceAsBytes(copy[0..newest_word]), std.mem.asBytes(&snapshot.keys));
    copy[newest_word] = snapshot.newest;
    const before = keys.sequence.load(.monotonic);
    assert(before & 1 == 0); // one writer
    keys.sequence.store(before + 1, .monotonic);
    // Release stores: a reader that sees any new word also sees the odd sequence.
    for (&keys.words, copy) |*to, from| to.store(from, .release);
    keys.sequence.store(before + 2, .release);
    std.crypto.secureZero(u64, &copy);
}

// --- AWS-LC's ticket callback --------------------------------------------------------------

/// Seals (`encrypt`) or opens a ticket: AWS-LC's `SSL_CTX_set_tlsext_ticket_key_cb` contract.
/// Returns 1 (done), 2 (opened with an older key: issue a new ticket), 0 (no such key: a full
/// handshake), -1 (error).
pub fn ticketCallback(keys: *const TicketKeys, name: *[16]u8, iv: *[16]u8, cipher: *c.EVP_CIPHER_CTX, mac: *c.HMAC_CTX, encrypt: bool) c_int {
    if (encrypt) {
        var key = keys.newest();
        defer std.crypto.secureZero(u8, std.mem.asBytes(&key));
        if (c.RAND_bytes(iv, iv.len) != 1) return -1;
        name.* = key.name;
        if (c.EVP_EncryptInit_ex(cipher, c.EVP_aes_256_cbc(), null, &key.aes, iv) != 1) return -1;
        if (c.HMAC_Init_ex(mac, &key.hmac, key.hmac.len, c.EVP_sha256(), null) != 1) return -1;
        return 1;
    }
    var found = keys.find(name) orelse return 0;
    defer std.crypto.secureZero(u8, std.mem.asBytes(&found));
    if (c.EVP_DecryptInit_ex(cipher, c.EVP_aes_256_cbc(), null, &found.key.aes, iv) != 1) return -1;
    if (c.HMAC_Init_ex(mac, &found.key.hmac, found.key.hmac.len, c.EVP_sha256(), null) != 1) return -1;
    return if (found.renew) 2 else 1;
}

test "ticket keys: rotation keeps the last keys, renews tickets of older ones, forgets the oldest" {
    try @import("tls.zig").init(.{});
    var keys: TicketKeys = undefined;
    try keys.init();
    const first = keys.newest();
    try std.testing.expect(!first.empty());
    try std.testing.expectEqual(false, keys.find(&first.name).?.renew);
    try keys.rotate();
    const second = keys.newest();
    try std.testing.expect(!std.mem.eql(u8, &first.name, &second.name));
    try std.testing.expectEqual(true, keys.find(&first.name).?.renew);
    try std.testing.expectEqualSlices(u8, &first.aes, &keys.find(&first.name).?.key.aes);
    try keys.rotate();
    try std.testing.expect(keys.find(&first.name) != null); // three slots: still there
    try keys.rotate();
    try std.testing.expectEqual(@as(?Found, null), keys.find(&first.name));
    try std.testing.expectEqual(true, keys.find(&second.name).?.renew);
    const unknown = @as([16]u8, @splat(0x42));
    try std.testing.expectEqual(@as(?Found, null), keys.find(&unknown));
}

test "ticket keys: readers on other threads only ever see whole keys while the writer rotates" {
    try @import("tls.zig").init(.{});
    var keys: TicketKeys = undefined;
    try keys.init();
    var done: std.atomic.Value(bool) = .init(false);
    var torn: std.atomic.Value(bool) = .init(false);
    const Reader = struct {
        // A key is whole when it is one that `write` stored: every key's three parts come
        // from one RAND call, so a mix of two keys shows up as a name that does not find
        // a key equal to the one read.
        fn run(k: *const TicketKeys, stop: *std.atomic.Value(bool), bad: *std.atomic.Value(bool)) void {
            while (!stop.load(.acquire)) {
                const key = k.newest();
                const found = k.find(&key.name) orelse continue; // rotated away meanwhile
                if (!std.mem.eql(u8, std.mem.asBytes(&found.key), std.mem.asBytes(&key))) bad.store(true, .release);
            }
        }
    };
    var threads: [2]std.Thread = undefined;
    for (&threads) |*thread| thread.* = try std.Thread.spawn(.{}, Reader.run, .{ &keys, &done, &torn });
    for (0..2_000) |_| try keys.rotate();
    done.store(true, .release);
    for (threads) |thread| thread.join();
    try std.testing.expect(!torn.load(.acquire));
}
