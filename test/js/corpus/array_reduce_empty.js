// reduce of an empty array without an initial value throws.
try {
  [].reduce((a, b) => a + b);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log([].reduce((a, b) => a + b, 0));
console.log([7].reduce((a, b) => a + b));
console.log(["a", "b"].reduce((acc, s) => acc + s, ""));
