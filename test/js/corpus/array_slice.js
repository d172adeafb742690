// slice copies ranges, with negative indexes.
const a = [0, 1, 2, 3, 4];
console.log(a.slice(1, 3));
console.log(a.slice(-2));
console.log(a.slice(2, -1));
console.log(a.slice());
console.log(a.slice(10));
console.log(a.slice(3, 1));
const copy = a.slice();
copy.push(5);
console.log(a.length, copy.length);
