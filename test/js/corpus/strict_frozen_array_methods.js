"use strict";
// Every mutating Array method on a frozen array throws at its first write, as the spec orders
// the writes: elements moved, items set, then the length (even an empty push() sets it).
const ops = [
  ["push()", (a) => a.push()], ["push(9)", (a) => a.push(9)], ["pop()", (a) => a.pop()], ["shift()", (a) => a.shift()],
  ["unshift()", (a) => a.unshift()], ["unshift(9)", (a) => a.unshift(9)], ["unshift(8, 9)", (a) => a.unshift(8, 9)],
  ["splice(0, 0)", (a) => a.splice(0, 0)], ["splice(0)", (a) => a.splice(0)], ["splice(1, 1)", (a) => a.splice(1, 1)],
  ["splice(0, 1)", (a) => a.splice(0, 1)], ["splice(1, 0, 7)", (a) => a.splice(1, 0, 7)], ["splice(0, 1, 7)", (a) => a.splice(0, 1, 7)],
  ["splice(0, 1, 7, 8)", (a) => a.splice(0, 1, 7, 8)], ["splice(5, 0, 7)", (a) => a.splice(5, 0, 7)], ["splice(-1, 1, 7, 8, 9)", (a) => a.splice(-1, 1, 7, 8, 9)],
  ["splice(0, 2, 7)", (a) => a.splice(0, 2, 7)], ["splice(1)", (a) => a.splice(1)],
  ["reverse()", (a) => a.reverse()], ["sort()", (a) => a.sort()], ["length = 0", (a) => { a.length = 0; }],
  ["length = 5", (a) => { a.length = 5; }], ["[0] = 1", (a) => { a[0] = 1; }], ["x = 1", (a) => { a.x = 1; }],
];
for (const src of [[], [1], [3, 1, 2]]) {
  for (const [name, op] of ops) {
    const a = Object.freeze(src.slice());
    let out;
    try { out = JSON.stringify(op(a)); } catch (e) { out = e.name + ": " + e.message; }
    console.log(JSON.stringify(src), name, out);
  }
}
