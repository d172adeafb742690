// The in operator checks own keys (and array indexes).
const o = { a: undefined, 1: "x" };
console.log("a" in o, "b" in o, 1 in o, "1" in o);
const arr = [10, 20];
console.log(0 in arr, 2 in arr, "length" in arr);
const m = new Map([["k", 1]]);
console.log("k" in { k: 0 });
try {
  console.log("a" in "abc");
} catch (e) {
  console.log(e.name + ": " + e.message);
}
