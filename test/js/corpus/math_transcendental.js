// Transcendental functions on a few inputs (node uses fdlibm-derived implementations).
console.log(Math.sin(0), Math.cos(0), Math.tan(0));
console.log(Math.sin(1), Math.cos(1), Math.tan(1));
console.log(Math.sin(Math.PI));
console.log(Math.cos(Math.PI));
console.log(Math.atan2(1, 1), Math.atan2(-1, -1), Math.atan(1));
console.log(Math.exp(1), Math.exp(0), Math.exp(-1));
console.log(Math.log(Math.E), Math.log(1), Math.log(0), Math.log(-1));
console.log(Math.log2(8), Math.log2(1024), Math.log10(1000), Math.log10(2));
console.log(Math.asin(1), Math.acos(0), Math.sinh(1), Math.cosh(1), Math.tanh(1));
console.log(Math.expm1(1e-10), Math.log1p(1e-10));
