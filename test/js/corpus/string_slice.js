// slice with negative and out-of-range indexes.
const s = "abcdef";
console.log(s.slice(2));
console.log(s.slice(2, 4));
console.log(s.slice(-2));
console.log(s.slice(-4, -1));
console.log(s.slice(4, 2));
console.log(s.slice(0, 100));
console.log(s.slice(-100));
console.log(JSON.stringify(s.slice(6)));
console.log(s.slice(1.5, 3.9));
console.log(s.slice());
