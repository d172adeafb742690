// Nested arrays and booleans.
console.log(JSON.stringify([[[]], [[1, [true, [false, [null]]]]]]));
console.log(JSON.stringify([[[]], [[1]]], null, 1));
