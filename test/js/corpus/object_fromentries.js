// Object.fromEntries from arrays of pairs and from a Map.
console.log(Object.fromEntries([["a", 1], ["b", 2]]));
console.log(Object.fromEntries(new Map([["x", [1]], ["y", null]])));
console.log(Object.fromEntries([]));
console.log(Object.fromEntries([[1, "one"], ["1", "uno"]]));
const o = { a: 1, b: 2 };
console.log(Object.fromEntries(Object.entries(o).map(([k, v]) => [k.toUpperCase(), v * 10])));
