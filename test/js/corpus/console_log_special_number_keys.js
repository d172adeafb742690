// Keys made from special numbers.
const o = {};
o[NaN] = 1;
o[Infinity] = 2;
o[-1] = 3;
o[1e21] = 4;
o[0.5] = 5;
console.log(o);
