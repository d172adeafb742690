// Destructuring Map entries and Object.entries.
const m = new Map([["a", 1], ["b", 2]]);
for (const [k, v] of m) console.log(k + v);
const [[k1, v1]] = m;
console.log(k1, v1);
const [skipped, [k2]] = Object.entries({ x: 1, y: 2 });
console.log(skipped);
console.log(k2);
