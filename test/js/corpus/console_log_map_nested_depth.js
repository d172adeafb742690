// Depth limits apply inside Maps and Sets.
console.log(new Map([["a", { b: { c: { d: 1 } } }]]));
console.log(new Set([[[[1]]]]));
console.log({ a: { b: new Map([["c", 1]]) } });
console.log({ a: { b: { c: new Map([["d", 1]]) } } });
console.log({ a: { b: { c: new Set([1]) } } });
