// Date.now() returns an integer that does not go backwards (its value is not printed).
const a = Date.now();
let x = 0;
for (let i = 0; i < 10000; i++) x += i;
const b = Date.now();
console.log(x, b >= a, Number.isInteger(a), typeof a);
