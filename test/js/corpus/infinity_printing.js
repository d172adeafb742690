// Infinity and -Infinity through every printing path.
const inf = 1 / 0;
console.log(inf, -inf);
console.log([inf, -inf]);
console.log({ inf });
console.log(String(-inf), `${inf}`);
console.log(JSON.stringify([inf, -inf]));
console.log(inf > 1e308, -inf < -1e308);
console.log(inf - inf);
console.log(inf * 0);
console.log(1e308 * 10);
console.log(-1e308 * 10);
console.log(Infinity === inf);
