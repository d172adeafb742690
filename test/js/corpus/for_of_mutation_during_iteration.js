// for...of sees elements pushed during iteration.
const a = [1, 2, 3];
const seen = [];
for (const x of a) {
  seen.push(x);
  if (x < 3) a.push(x + 10);
}
console.log(seen);
const m = new Map([["a", 1]]);
const keys = [];
for (const [k] of m) {
  keys.push(k);
  if (m.size < 4) m.set(k + "x", 0);
}
console.log(keys);
const s = new Set([1, 2, 3]);
const vs = [];
for (const v of s) {
  vs.push(v);
  s.delete(v + 1);
}
console.log(vs);
