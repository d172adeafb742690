//! Sets of a pool's members (slot i is bit i), sized at start-up from the pool's member count:
//! `words` holds ceil(count / 64) words, allocated once by whoever owns the set. Two flavours
//! share the helpers: plain words (one thread's, or immutable once published) and atomic
//! words (health's `available`, written by any worker and the control thread).
//!
//! The one decision to know: a pick never copies or combines whole sets. It asks for the next
//! member at or after a position (`nextSet`), and the caller filters that member with whatever
//! else applies (tried, capped, drained): the common case touches one word whatever the pool's
//! size, and only a pool whose members are mostly unavailable walks more (one word per 64).
const std = @import("std");
const assert = std.debug.assert;

pub const word_bits = 64;
pub const Word = u64;
pub const AtomicWord = std.atomic.Value(u64);

pub fn wordsFor(bits_count: u32) u32 {
    return (bits_count + word_bits - 1) / word_bits;
}

pub fn isSet(words: []const Word, index: u32) bool {
    return words[index / word_bits] & bit(index) != 0;
}

pub fn set(words: []Word, index: u32) void {
    words[index / word_bits] |= bit(index);
}

pub fn unset(words: []Word, index: u32) void {
    words[index / word_bits] &= ~bit(index);
}

/// Sets the first `count` bits and clears the rest.
pub fn setFirst(words: []Word, bits_count: u32) void {
    assert(bits_count <= words.len * word_bits);
    for (words, 0..) |*word, i| {
        const start: u32 = @intCast(i * word_bits);
        word.* = if (bits_count >= start + word_bits) ~@as(Word, 0) else if (bits_count <= start) 0 else low(bits_count - start);
    }
}

pub fn count(words: []const Word) u32 {
    var total: u32 = 0;
    for (words) |word| total += @popCount(word);
    return total;
}

pub fn isSetAtomic(words: []const AtomicWord, index: u32) bool {
    return words[index / word_bits].load(.acquire) & bit(index) != 0;
}

pub fn setAtomic(words: []AtomicWord, index: u32) void {
    _ = words[index / word_bits].fetchOr(bit(index), .acq_rel);
}

pub fn unsetAtomic(words: []AtomicWord, index: u32) void {
    _ = words[index / word_bits].fetchAnd(~bit(index), .acq_rel);
}

pub fn countAtomic(words: []const AtomicWord) u32 {
    var total: u32 = 0;
    for (words) |*word| total += @popCount(word.load(.acquire));
    return total;
}

/// The first set bit at or after `from` among the first `limit` bits, wrapping around to 0;
/// null when none is set. `Words` is `[]const Word` or `[]const AtomicWord`. Visits at most
/// `wordsFor(limit) + 1` words.
pub fn nextSet(words: anytype, limit: u32, from: u32) ?u32 {
    assert(limit > 0 and limit <= words.len * word_bits);
    assert(from < limit);
    const words_count = wordsFor(limit);
    var word_index = from / word_bits;
    // The first word without the bits below `from`; then whole words, wrapping; then the
    // first word's low bits.
    var word = load(words, word_index) & ~low(from % word_bits);
    var visited: u32 = 0;
    while (visited <= words_count) : (visited += 1) {
        if (word != 0) {
            const index: u32 = @intCast(word_index * word_bits + @ctz(word));
            if (index < limit) return index;
            // Bits at and above `limit` are never set by the owners; treat them as absent.
        }
        word_index += 1;
        if (word_index == words_count) word_index = 0;
        word = load(words, word_index);
    }
    return null;
}

fn load(words: anytype, index: u32) Word {
    const Element = @typeInfo(@TypeOf(words)).pointer.child;
    return if (Element == AtomicWord) words[index].load(.acquire) else words[index];
}

pub fn bit(index: u32) Word {
    return @as(Word, 1) << @intCast(index % word_bits);
}

/// The low `n` bits set, for n in 0..63.
fn low(n: u32) Word {
    assert(n < word_bits);
    return (@as(Word, 1) << @intCast(n)) - 1;
}

test "bit set: next set bit wraps and agrees with a scan, for sizes across word edges" {
    var prng: std.Random.DefaultPrng = .init(0xb175);
    var words: [17]Word = undefined;
    for ([_]u32{ 1, 63, 64, 65, 128, 1000, 1024, 1088 }) |limit| {
        for (0..200) |_| {
            const used = wordsFor(limit);
            for (words[0..used]) |*word| word.* = prng.next() & prng.next() & prng.next();
            // Owners never set bits at or above the limit.
            if (limit % word_bits != 0) words[used - 1] &= low(limit % word_bits);
            const from: u32 = @intCast(prng.next() % limit);
            var expected: ?u32 = null;
            for (0..limit) |step| {
                const index: u32 = @intCast((from + step) % limit);
                if (isSet(words[0..used], index)) {
                    expected = index;
                    break;
                }
            }
            try std.testing.expectEqual(expected, nextSet(@as([]const Word, words[0..used]), limit, from));
        }
    }
}

test "bit set: first bits, counts and atomic words" {
    var words: [3]Word = undefined;
    setFirst(&words, 130);
    try std.testing.expectEqual(@as(u32, 130), count(&words));
    try std.testing.expect(isSet(&words, 129) and !isSet(&words, 130));
    unset(&words, 64);
    try std.testing.expectEqual(@as(?u32, 65), nextSet(@as([]const Word, &words), 130, 64));
    setFirst(&words, 0);
    try std.testing.expectEqual(@as(?u32, null), nextSet(@as([]const Word, &words), 130, 7));

    var atomic: [2]AtomicWord = .{ .init(0), .init(0) };
    setAtomic(&atomic, 100);
    try std.testing.expect(isSetAtomic(&atomic, 100));
    try std.testing.expectEqual(@as(?u32, 100), nextSet(@as([]const AtomicWord, &atomic), 128, 101));
    unsetAtomic(&atomic, 100);
    try std.testing.expectEqual(@as(u32, 0), countAtomic(&atomic));
}
