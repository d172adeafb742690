// for...in over own keys of objects and arrays.
const o = { b: 1, a: 2, 0: 3 };
for (const k in o) console.log(k, o[k]);
for (const i in [10, 20]) console.log(i);
let count = 0;
for (const k in { x: 1, y: 2, z: 3 }) count++;
console.log(count);
