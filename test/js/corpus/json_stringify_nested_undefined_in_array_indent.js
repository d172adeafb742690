// undefined inside an indented array prints null.
console.log(JSON.stringify([undefined, () => 0, NaN], null, 2));
console.log(JSON.stringify({ a: [undefined], b: undefined }, null, 2));
