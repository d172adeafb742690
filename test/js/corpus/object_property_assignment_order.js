// Assignment order determines key order for string keys.
const o = {};
o.second = 2;
o.first = 1;
o[0] = 0;
o.third = 3;
console.log(o);
console.log(JSON.stringify(o));
