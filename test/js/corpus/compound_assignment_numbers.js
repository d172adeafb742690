// Compound assignment operators on numbers.
let x = 10;
x += 5;
console.log(x);
x -= 3;
console.log(x);
x *= 2;
console.log(x);
x /= 8;
console.log(x);
x %= 2;
console.log(x);
const o = { a: 1 };
o.a += 41;
o["a"] *= 2;
console.log(o);
