// splice with out-of-range and missing arguments.
const a = [1, 2, 3];
console.log(a.splice(10, 1), a);
console.log(a.splice(-10, 1), a);
console.log(a.splice(1, -5), a);
console.log(a.splice(), a);
console.log(a.splice(0, 100, 9), a);
