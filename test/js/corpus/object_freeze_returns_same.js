// Object.freeze returns its argument; primitives pass through.
const o = { a: 1 };
console.log(Object.freeze(o) === o);
console.log(Object.freeze(5), Object.freeze("s"), Object.freeze(null));
console.log(o);
