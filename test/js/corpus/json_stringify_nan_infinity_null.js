// Non-finite numbers become null, in objects and arrays alike.
console.log(JSON.stringify({ a: NaN, b: Infinity, c: -Infinity, d: -0 }));
console.log(JSON.stringify([NaN, Infinity, 0 / 0, 1 / 0]));
console.log(JSON.stringify({ x: [NaN] }, null, 2));
