// typeof and instanceof of Maps and Sets.
const m = new Map();
const s = new Set();
console.log(typeof m, typeof s, m instanceof Map, s instanceof Set, m instanceof Object);
console.log(Array.isArray(m), Array.isArray([...s]));
