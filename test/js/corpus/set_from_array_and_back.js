// Array.from and spread turn Sets into arrays.
const s = new Set([5, 1, 5]);
console.log(Array.from(s), [...s], Array.from(s).length);
console.log(new Set().size, [...new Set()]);
