// A replacer array selects keys, in the array's order, at every level.
const v = { b: 1, a: 2, c: { a: 3, d: 4 }, 1: "one" };
console.log(JSON.stringify(v, ["a", "c"]));
console.log(JSON.stringify(v, ["c", "a", "d"]));
console.log(JSON.stringify(v, [1, "b"]));
console.log(JSON.stringify(v, ["a", "a", "b"]));
console.log(JSON.stringify(v, []));
console.log(JSON.stringify([{ a: 1, b: 2 }], ["b"]));
console.log(JSON.stringify(v, ["a", "c"], 2));
