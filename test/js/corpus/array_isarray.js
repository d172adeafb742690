// Array.isArray.
console.log(Array.isArray([]), Array.isArray([1]));
console.log(Array.isArray({}), Array.isArray("abc"), Array.isArray(null));
console.log(Array.isArray(new Map()), Array.isArray(undefined));
console.log(Array.isArray({ length: 0 }));
