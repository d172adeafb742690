// Spread preserves property order, with overrides keeping the first position.
const base = { z: 1, a: 2, 5: "five" };
const ext = { ...base, a: "override", b: 3, 1: "one" };
console.log(ext);
console.log(Object.keys(ext));
