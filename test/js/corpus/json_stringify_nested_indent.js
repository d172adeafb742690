// Indentation with a number of spaces.
const v = { a: 1, b: [1, 2, { c: [] }], d: {}, e: { f: { g: "h" } }, i: [[]], j: [{}] };
console.log(JSON.stringify(v, null, 2));
console.log(JSON.stringify(v, null, 4));
console.log(JSON.stringify([], null, 2), JSON.stringify({}, null, 2));
