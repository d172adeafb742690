// toFixed on large numbers, exponents, NaN and Infinity.
console.log((1e21).toFixed(2));
console.log((1e20).toFixed(2));
console.log((123456789.123456789).toFixed(5));
console.log((0.1).toFixed(20));
console.log((1 / 3).toFixed(20));
console.log((NaN).toFixed(2));
console.log((Infinity).toFixed(1));
console.log((-Infinity).toFixed(1));
console.log((-0).toFixed(1));
console.log((-0.0001).toFixed(2));
console.log((9.995).toFixed(2));
console.log((99.995).toFixed(2));
