// Union, intersection and difference with Sets and arrays.
const a = new Set([1, 2, 3, 4]);
const b = new Set([3, 4, 5]);
const union = new Set([...a, ...b]);
const inter = new Set([...a].filter((x) => b.has(x)));
const diff = new Set([...a].filter((x) => !b.has(x)));
console.log(union, inter, diff);
