// Array destructuring with skipping, defaults and rest.
const [a, b] = [1, 2, 3];
console.log(a, b);
const [x = 10, y = 20, z = 30] = [1, undefined, null];
console.log(x, y, z);
const [first, ...others] = ["h", "e", "l", "l", "o"];
console.log(first, others);
const [p, q] = [1];
console.log(p, q);
const [[n1, n2], [n3]] = [[1, 2], [3]];
console.log(n1, n2, n3);
const [...all] = "hi";
console.log(all);
