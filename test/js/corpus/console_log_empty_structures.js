// Empty arrays, objects, Maps and Sets.
console.log([]);
console.log({});
console.log([[]]);
console.log({ a: {} });
console.log([{}, []]);
console.log(new Map());
console.log(new Set());
console.log({ a: [], b: {} });
