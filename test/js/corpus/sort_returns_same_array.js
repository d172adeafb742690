// sort sorts in place and returns the same array.
const a = [3, 1, 2];
const r = a.sort();
console.log(r === a, a);
const b = [];
console.log(b.sort(), [5].sort());
