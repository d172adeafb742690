// Sets drop duplicates and keep first-insertion order.
console.log(new Set([3, 1, 3, 2, 1]));
console.log([...new Set("mississippi")].join(""));
console.log(new Set([NaN, NaN, 0, -0]));
const o = {};
console.log(new Set([o, o, {}]).size);
