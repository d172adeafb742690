// for...in lists own enumerable keys in property order.
const o = { z: 1, 3: 2, a: 3, 1: 4 };
const keys = [];
for (const k in o) keys.push(k);
console.log(keys);
const arr = ["x", "y"];
for (const i in arr) console.log(i, typeof i, arr[i]);
for (const k in {}) console.log("never");
