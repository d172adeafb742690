// Beyond depth 2, nested objects and arrays print as [Object] and [Array].
console.log({ a: { b: { c: { d: 1 } } } });
console.log([[[[1]]]]);
console.log({ l1: { l2: { l3: [1, 2], o: {} }, l2b: [[[]]] } });
console.log([{ a: [{ b: 1 }] }]);
console.log({ a: { b: { c: {} } } });
console.log({ a: { b: { c: [] } } });
