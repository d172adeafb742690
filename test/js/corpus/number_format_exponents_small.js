// Small numbers switch to exponent notation below 1e-6.
console.log(0.000001);
console.log(0.0000001);
console.log(1e-7);
console.log(1.5e-7);
console.log(0.00000123);
console.log(0.000001234);
console.log(1e-6);
console.log(-1e-7);
console.log(5e-324);
console.log(2.2250738585072014e-308);
console.log(1e-300 / 1e10);
