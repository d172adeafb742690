// shift and unshift at the front.
const a = [1, 2, 3];
console.log(a.shift());
console.log(a);
console.log(a.unshift(9, 8));
console.log(a);
console.log([].shift());
const b = [];
b.unshift(1);
b.unshift(2);
console.log(b);
