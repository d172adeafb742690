// Building a large array and reading its summary.
const a = [];
for (let i = 0; i < 1000; i++) a.push(i * i);
console.log(a.length, a[999], a.indexOf(961), a.includes(1000));
console.log(a.slice(0, 5), a.slice(-3));
console.log(a.filter((x) => x % 7 === 0).length);
