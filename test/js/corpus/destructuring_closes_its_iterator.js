"use strict";
// Array destructuring closes an iterator it did not finish (return() called, a generator's
// finally blocks run), and not one that is done or that a rest element drained.
const log = [];
function counted(limit) {
  let i = 0;
  return {
    [Symbol.iterator]() { return this; },
    next() { i++; log.push(`next ${i}`); return { value: i, done: i > limit }; },
    return() { log.push("return"); return {}; },
  };
}
const [a, b] = counted(5);
console.log(a, b, log.splice(0).join(", "));
const [c, d, e] = counted(2);
console.log(c, d, e, log.splice(0).join(", "));
const [f, ...rest] = counted(3);
console.log(f, rest, log.splice(0).join(", "));
const [x, y, w] = counted(9);
console.log(x, y, w, log.splice(0).join(", "));
function* gen() {
  try { yield 1; yield 2; yield 3; } finally { console.log("gen finally"); }
}
const [g1] = gen();
console.log(g1);
function params([p, q]) { return p + q; }
console.log(params(counted(4)), log.splice(0).join(", "));
for (const [k] of [counted(3)]) console.log("for", k, log.splice(0).join(", "));
const [s1, s2] = "hey";
const [m1] = new Map([[1, 2], [3, 4]]);
console.log(s1, s2, m1);
const bad = { [Symbol.iterator]() { return this; }, next() { return { value: 1, done: false }; }, return() { return 5; } };
try { const [z] = bad; console.log("no error", z); } catch (err) { console.log(err.constructor.name, err.message); }
