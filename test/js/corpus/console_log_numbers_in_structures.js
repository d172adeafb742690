// Numbers inside structures print like String(n), except -0.
console.log([0.1 + 0.2, 1e21, 1e-7, -0, NaN, Infinity, -Infinity, 5e-324]);
console.log({ a: -0, b: 0, c: -1.5 });
