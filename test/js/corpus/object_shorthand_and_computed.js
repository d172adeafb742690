// Shorthand properties and computed keys.
const a = 1;
const b = "two";
const key = "dyn";
const o = { a, b, [key]: 3, [key + "2"]: 4, [1 + 1]: "num" };
console.log(o);
const i = 5;
console.log({ [`k${i}`]: i, [i]: "five" });
