// NaN through every printing path.
const n = 0 / 0;
console.log(n);
console.log([n]);
console.log({ n });
console.log(String(n), `${n}`, "" + n);
console.log(JSON.stringify(n));
console.log(JSON.stringify({ n, list: [n] }));
console.log(n === n, n !== n);
console.log(typeof n);
console.log(Number.parseInt("x"));
console.log(Math.sqrt(-1));
console.log(undefined + 1);
