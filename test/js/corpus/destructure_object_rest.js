// Object rest collects the remaining own properties.
const { a, ...rest } = { a: 1, b: 2, c: 3 };
console.log(a, rest);
const { x, ...empty } = { x: 1 };
console.log(empty);
const { 1: one, ...others } = { 1: "one", 2: "two", k: "v" };
console.log(one, others);
