// expect: 4:15 Uint8Array|typed array
// anchor: Uint8Array
// Typed arrays are out.
const bytes = Uint8Array.from([1, 2, 3]);
console.log(bytes);
