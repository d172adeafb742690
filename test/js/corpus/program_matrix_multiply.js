// Multiplying matrices held as nested arrays.
const mul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, v, k) => s + v * b[k][j], 0)));
const a = [[1, 2], [3, 4], [5, 6]];
const b = [[7, 8, 9], [10, 11, 12]];
console.log(mul(a, b));
const id = [[1, 0], [0, 1]];
console.log(mul(id, [[0.1, 0.2], [0.3, 0.4]]));
