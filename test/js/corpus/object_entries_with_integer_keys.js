// Object.entries orders integer keys numerically.
const o = { 10: "a", 9: "b", x: "c", 100: "d" };
console.log(Object.entries(o));
