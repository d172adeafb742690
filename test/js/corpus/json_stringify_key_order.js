// Keys follow property order, integer keys first.
console.log(JSON.stringify({ b: 1, a: 2, 10: 3, 2: 4 }));
const o = {};
o.z = 1;
o.y = 2;
o[5] = 3;
console.log(JSON.stringify(o));
