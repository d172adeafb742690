// length tracks the array's elements.
const a = [1, 2, 3];
console.log(a.length);
a.push(4);
console.log(a.length);
console.log([].length, [[]].length, [[1, 2]].length);
const b = [];
for (let i = 0; i < 10; i++) b.push(i);
console.log(b.length);
