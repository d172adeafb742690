// Exactly rounded Math functions: abs, sign, sqrt, cbrt of perfect cubes, hypot, pow.
console.log(Math.abs(-5.5), Math.abs(3), Math.abs(-Infinity));
console.log(Math.sign(-3), Math.sign(0), Math.sign(7), Math.sign(NaN));
console.log(Math.sqrt(16), Math.sqrt(2), Math.sqrt(0.25), Math.sqrt(-0));
console.log(Math.cbrt(27), Math.cbrt(-8));
console.log(Math.hypot(3, 4), Math.hypot(), Math.hypot(5));
console.log(Math.pow(2, 10), Math.pow(2, -1), Math.pow(2, 0.5), Math.pow(0, 0));
console.log(Math.pow(NaN, 0), Math.pow(1, Infinity), Math.pow(-8, 1 / 3));
console.log(Math.pow(10, 21), Math.pow(10, -7));
console.log(Math.pow(2, 53) + 1);
