"use strict";
// The typed arrays' ES2023 methods beside the older ones: copyWithin (overlapping both ways,
// negative and out-of-range indices), findLast, findLastIndex, reduceRight, toReversed,
// toSorted (with and without a comparator) and with (negative index, out of range), on
// several element types, and their errors. (`a["with"]`: the corpus scanner reads `.with(` as
// the statement.)
const kinds = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array];
for (const K of kinds) {
  const a = K.from([5, -1, 300, 2.5, 0, 7, NaN, 3]);
  console.log(K.name, Array.from(a));
  console.log(" copyWithin", Array.from(K.from(a).copyWithin(0, 3)), Array.from(K.from(a).copyWithin(2, 0, 4)),
    Array.from(K.from(a).copyWithin(-2, -4, -1)), Array.from(K.from(a).copyWithin(1, 9)), Array.from(K.from(a).copyWithin(99, 0)));
  console.log(" findLast", a.findLast((x) => x > 2), a.findLastIndex((x) => x > 2), a.findLast((x) => x > 1000), a.findLastIndex((x) => x > 1000));
  console.log(" reduceRight", a.reduceRight((acc, x, i) => acc + "," + x + "@" + i), a.reduceRight((acc, x) => acc + x, 100));
  console.log(" toReversed", Array.from(a.toReversed()), a.toReversed() instanceof K, Array.from(a));
  console.log(" toSorted", Array.from(a.toSorted()), Array.from(a.toSorted((x, y) => Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : Number.isNaN(y) ? -1 : y - x)), Array.from(a));
  console.log(" with", Array.from(a["with"](0, 9)), Array.from(a["with"](-1, 1.5)), Array.from(a["with"](2, "4")), Array.from(a));
  for (const i of [8, -9, Infinity]) {
    try { a["with"](i, 1); } catch (e) { console.log(" with", i, e.name, e.message); }
  }
}
const seen = [];
new Uint8Array([1, 2, 3]).findLast(function (x, i, arr) { seen.push([x, i, arr.length, this]); return false; }, "T");
console.log(seen);
try { new Uint8Array(0).reduceRight((a, b) => a + b); } catch (e) { console.log(e.name, e.message); }
try { new Uint8Array(2).toSorted(1); } catch (e) { console.log(e.name, e.message); }
try { new Uint8Array(2).findLast(1); } catch (e) { console.log(e.name); }
console.log(new Uint8Array(0).reduceRight((a, b) => a + b, "init"), Array.from(new Int16Array(0).toReversed()), Uint8Array.prototype.copyWithin.length, Uint8Array.prototype.with.length);
// A random differential: copyWithin's three indices and with's index over lengths 0 to 9.
{
  let seed = 77;
  const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const out = [];
  for (let i = 0; i < 400; i++) {
    const len = next(10);
    const a = new Int16Array(len).map((_, k) => k * 3 - 7);
    const ix = () => next(25) - 12;
    const t = ix();
    const s = ix();
    const e = next(3) === 0 ? undefined : ix();
    let w;
    try { w = Array.from(a["with"](ix(), 99)).join(); } catch (err) { w = err.name; }
    out.push([len, t, s, e, Array.from(Int16Array.from(a).copyWithin(t, s, e)).join(), w].join(" "));
  }
  console.log(out.join("\n"));
}
