// Grouped numbers are right-aligned; mixed-sign numbers too.
const a = [];
for (let i = 0; i < 16; i++) a.push(i % 2 === 0 ? i * 111 : -i);
console.log(a);
const b = [1.5, 22.25, 333.125, 4, 55, 666, 7777, 8, 99, 1000, 0.5, 12];
console.log(b);
