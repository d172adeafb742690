// Reassigning an existing key keeps its position; new keys go last.
const o = { a: 1, b: 2, c: 3 };
o.a = 10;
o.d = 4;
o.b = undefined;
console.log(Object.keys(o));
console.log(o);
