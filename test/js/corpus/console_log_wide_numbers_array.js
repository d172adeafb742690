// An array of wide numbers.
const a = [];
for (let i = 0; i < 15; i++) a.push(1234567.891 * (i + 1));
console.log(a);
