// in on arrays checks indexes.
const a = ["x"];
console.log(0 in a, "0" in a, 1 in a);
console.log("length" in a);
const m = new Map([["k", 1]]);
console.log("k" in m, "size" in m);
