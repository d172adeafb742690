// The catch parameter is scoped to the catch block.
const e = "outer";
try {
  throw "inner";
} catch (e) {
  console.log(e);
}
console.log(e);
