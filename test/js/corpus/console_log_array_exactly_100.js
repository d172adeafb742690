// Exactly 100 items print in full.
const a = [];
for (let i = 0; i < 100; i++) a.push(i * 3);
console.log(a);
