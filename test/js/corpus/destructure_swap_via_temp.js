// Swapping values with declarations only (no destructuring assignment).
let a = 1;
let b = 2;
const t = a;
a = b;
b = t;
console.log(a, b);
const [c, d] = [b, a];
console.log(c, d);
