// Array.prototype's methods on what is not an array: array-like objects, strings, holes,
// getters that count their reads, callbacks that grow or shrink the object, and thisArg.
const proto = Array.prototype;
const like = { length: 4, 0: "a", 1: "b", 3: "d" };
console.log(proto.map.call(like, (x, i) => x + i));
console.log(proto.filter.call(like, (x) => x !== "b"));
console.log(proto.reduce.call(like, (acc, x) => acc + x), proto.reduceRight.call(like, (acc, x) => acc + x));
console.log(proto.indexOf.call(like, "d"), proto.lastIndexOf.call(like, "a"), proto.includes.call(like, undefined));
console.log(proto.some.call("abc", (c) => c === "c"), proto.every.call("aaa", (c) => c === "a"));
console.log(proto.join.call({ length: 3, 0: 1, 2: null }, "+"), proto.join.call("xyz"));
console.log(proto.slice.call({ length: 5, 1: "one", 3: "three" }, 1, -1));
console.log(proto.find.call({ length: 3, 2: 9 }, (x) => x > 1), proto.findLastIndex.call("aba", (c) => c === "a"));
console.log(proto.at.call({ length: 2, 1: "last" }, -1), proto.at.call("hey", 0));

// The length is read first, as ToLength: strings of digits, negatives and fractions.
console.log(proto.map.call({ length: "2", 0: 1, 1: 2 }, (x) => x * 10));
console.log(proto.map.call({ length: -3, 0: 1 }, (x) => x), proto.map.call({ length: 1.9, 0: 7 }, (x) => x));

// Getters see each read once, in the spec's order.
const reads = [];
const watched = {
  get length() { reads.push("length"); return 2; },
  get 0() { reads.push("0"); return "first"; },
  get 1() { reads.push("1"); return "second"; },
};
proto.forEach.call(watched, () => {});
console.log(reads.join(" "));

// A callback that changes the object: a key added past the original length is not visited,
// a key deleted before its turn is skipped.
const changing = { length: 3, 0: 0, 1: 1, 2: 2 };
const seen = [];
proto.forEach.call(changing, (x, i, o) => {
  seen.push(x);
  if (i === 0) { delete o[1]; o[3] = 3; }
});
console.log(seen, changing);

// Writes: push, pop, shift, unshift, reverse and fill set the length as they go.
const stack = { length: 0 };
console.log(proto.push.call(stack, "x", "y"), stack);
console.log(proto.pop.call(stack), stack);
const queue = { length: 3, 0: "a", 2: "c" };
console.log(proto.shift.call(queue), queue);
console.log(proto.unshift.call(queue, "z"), queue);
console.log(proto.reverse.call({ length: 3, 0: "first", 1: "middle" }));
console.log(proto.fill.call({ length: 3 }, 0, 1));
const empty = {};
console.log(proto.pop.call(empty), empty);

// Errors: no object, a read-only string, a callback that is not one.
for (const f of [
  () => proto.map.call(null, (x) => x),
  () => proto.join.call(undefined),
  () => proto.push.call("ab", "c"),
  () => proto.forEach.call({ length: 1 }, 1),
]) {
  try { f(); } catch (e) { console.log(e.constructor.name, e.message); }
}

// thisArg reaches the callback, on arrays and array-likes alike.
const context = { offset: 100 };
console.log([1, 2].map(function (x) { return x + this.offset; }, context));
console.log(proto.map.call({ length: 1, 0: 1 }, function (x) { return x + this.offset; }, context));
console.log([3].filter(function () { return this === context; }, context));

// splice moves the tail element by element and deletes what falls off the end.
const spliced = { length: 5, 0: "a", 1: "b", 3: "d" };
console.log(proto.splice.call(spliced, 1, 2, "X", "Y", "Z"), spliced);
const shrunk = { length: 4, 0: 0, 1: 1, 2: 2, 3: 3 };
console.log(proto.splice.call(shrunk, 1, 2), shrunk);
console.log(proto.splice.call({ length: 2, 0: 1, 1: 2 }), proto.splice.call({ length: 2, 0: 1, 1: 2 }, 1));

// copyWithin and toSpliced, on arrays and array-likes; toReversed and with on array-likes.
console.log([1, 2, 3, 4, 5].copyWithin(0, 3), [1, 2, 3, 4, 5].copyWithin(1, 0, 3));
console.log(proto.copyWithin.call({ length: 5, 3: 1 }, 0, 3));
console.log([1, 2, 3].toSpliced(1, 1, "a", "b"), proto.toSpliced.call({ length: 3, 0: 1, 2: 3 }, 0, 0), proto.toSpliced.call("abc", 1));
console.log(proto.toReversed.call({ length: 3, 0: 1, 2: 3 }), proto.with.call("abc", 1, "X"));
try { proto.with.call({ length: 1 }, 5, 0); } catch (e) { console.log(e.constructor.name, e.message); }
