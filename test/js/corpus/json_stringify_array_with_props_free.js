// Arrays stringify their elements only.
const a = [1, 2];
console.log(JSON.stringify(a));
console.log(JSON.stringify({ list: a, len: a.length }));
