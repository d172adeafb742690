// Operations that produce -0.
console.log(-1 * 0);
console.log(0 / -5);
console.log(-0.0);
console.log(Math.ceil(-0.5));
console.log(Math.trunc(-0.9));
console.log(Math.round(-0.5));
console.log(-5 % 5);
console.log(-0 % 3);
console.log(Math.floor(-0));
const a = 0;
console.log(-a);
