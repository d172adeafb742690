// Object.keys, Object.values and Object.entries.
const o = { x: 1, y: "two", z: [3] };
console.log(Object.keys(o));
console.log(Object.values(o));
console.log(Object.entries(o));
console.log(Object.keys({}), Object.values({}), Object.entries({}));
console.log(Object.keys([4, 5]));
console.log(Object.keys("ab"));
console.log(Object.entries([7]));
