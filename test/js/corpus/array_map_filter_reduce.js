// map, filter and reduce.
const xs = [1, 2, 3, 4, 5, 6];
console.log(xs.map((x) => x * x));
console.log(xs.filter((x) => x % 2 === 0));
console.log(xs.reduce((a, b) => a + b));
console.log(xs.reduce((a, b) => a + b, 100));
console.log(xs.map((x, i) => x * i));
console.log(xs.filter((x, i) => i > 3));
console.log(xs.reduce((acc, x, i) => acc + x * i, 0));
console.log(xs.map(String));
