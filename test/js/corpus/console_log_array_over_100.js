// Arrays print at most 100 items, then "... N more items".
const a = [];
for (let i = 0; i < 101; i++) a.push(i);
console.log(a);
const b = [];
for (let i = 0; i < 250; i++) b.push(i % 7);
console.log(b);
const c = [];
for (let i = 0; i < 102; i++) c.push("s");
console.log(c);
