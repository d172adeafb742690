// expect: 5:16 Float64Array|typed array
// anchor: Float64Array
// Typed arrays are out (Float64Array too).
console.log("before");
const values = Float64Array.of(1.5);
console.log(values);
