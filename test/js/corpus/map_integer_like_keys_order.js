// Unlike objects, Maps keep integer-like keys in insertion order.
const m = new Map();
m.set("b", 1).set("2", 2).set("1", 3).set(0, 4);
console.log([...m.keys()]);
const o = {};
o.b = 1;
o["2"] = 2;
o["1"] = 3;
o[0] = 4;
console.log(Object.keys(o));
