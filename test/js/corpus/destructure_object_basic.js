// Object destructuring with renaming, defaults and nesting.
const { a, b: renamed, c = "default", d: { e = 5 } = {} } = { a: 1, b: 2, d: { e: undefined } };
console.log(a, renamed, c, e);
const { length } = "hello";
console.log(length);
const { ["dyn" + "amic"]: dynamic } = { dynamic: "computed key" };
console.log(dynamic);
const { missing } = {};
console.log(missing);
const { 0: zero, 1: one } = ["first", "second"];
console.log(zero, one);
