// Nested plain objects and arrays on one line when short.
console.log({ a: 1, b: { c: 2, d: [3, 4] } });
console.log([1, [2, [3]]]);
console.log({ x: [{ y: 1 }, { y: 2 }] });
console.log([{ a: 1 }, { b: 2 }]);
