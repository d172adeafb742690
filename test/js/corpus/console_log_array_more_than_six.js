// Arrays with more than six entries are grouped in columns when they do not fit.
console.log([1, 2, 3, 4, 5, 6]);
console.log([1, 2, 3, 4, 5, 6, 7]);
const a = [];
for (let i = 0; i < 26; i++) a.push(i);
console.log(a);
const b = [];
for (let i = 0; i < 30; i++) b.push(i * 1000);
console.log(b);
