// Numeric keys are strings: o[1] and o["1"] are the same property.
const o = {};
o[1] = "a";
o["2"] = "b";
o[1.5] = "c";
o[-0] = "z";
console.log(o[1], o["1"], o[2], o["1.5"], o[0], o["0"]);
console.log(Object.keys(o));
