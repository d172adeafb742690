// push returns the new length; pop returns the removed element.
const a = [];
console.log(a.push(1));
console.log(a.push(2, 3));
console.log(a);
console.log(a.pop());
console.log(a);
console.log([].pop());
console.log(a.length);
