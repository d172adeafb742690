// Grouped arrays with mixed types.
const a = [];
for (let i = 0; i < 20; i++) a.push(i % 3 === 0 ? "s" + i : i % 3 === 1 ? i : null);
console.log(a);
const b = [];
for (let i = 0; i < 12; i++) b.push(i % 2 === 0 ? -i : i * 1.5);
console.log(b);
