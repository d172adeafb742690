// Arrays of pairs, as from Object.entries.
console.log(Object.entries({ a: 1, b: "two", c: [3] }));
const pairs = [];
for (let i = 0; i < 9; i++) pairs.push(["k" + i, i]);
console.log(pairs);
