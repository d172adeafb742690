// Rest parameters collect the remaining arguments into an array.
function f(first, ...rest) {
  return [first, rest, rest.length];
}
console.log(f());
console.log(f(1));
console.log(f(1, 2, 3));
const sum = (...xs) => xs.reduce((a, b) => a + b, 0);
console.log(sum(), sum(1, 2, 3, 4));
console.log(Array.isArray(f(1)[1]));
