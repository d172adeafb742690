// Math.min and Math.max with no arguments, NaN and -0.
console.log(Math.max());
console.log(Math.min());
console.log(Math.max(1, 3, 2));
console.log(Math.min(1, 3, 2));
console.log(Math.max(1, NaN, 3));
console.log(Math.min(-0, 0));
console.log(Math.max(-0, 0));
console.log(Math.max("7", 3));
console.log(Math.min(null, 1));
console.log(Math.max(undefined, 1));
