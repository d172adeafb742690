// The default sort compares strings, so numbers sort lexicographically.
console.log([10, 9, 1, 100, 25].sort());
console.log(["b", "a", "c", "B", "A"].sort());
console.log([true, false, "x", 3].sort());
console.log([-1, -2, 3, 0].sort());
console.log([1e21, 5, 1e-7].sort());
