// Top-level strings and numbers, with indentation ignored.
console.log(JSON.stringify("text", null, 2));
console.log(JSON.stringify(42, null, 2));
console.log(JSON.stringify(null, null, 2));
console.log(JSON.stringify([1], null, 2));
