// The same object twice, not in a cycle, is stringified twice.
const shared = { v: 1 };
console.log(JSON.stringify({ a: shared, b: shared, c: [shared, shared] }));
