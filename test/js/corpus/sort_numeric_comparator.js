// Numeric sort with a comparator.
const xs = [10, 9, 1, 100, 25, -3, 0.5];
console.log(xs.slice().sort((a, b) => a - b));
console.log(xs.slice().sort((a, b) => b - a));
console.log([3, 1, 2].sort((a, b) => 0));
