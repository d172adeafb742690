// Default parameter expressions can use earlier parameters and outer bindings.
const base = 10;
function f(a, b = a * base, c = b + a) {
  return [a, b, c];
}
console.log(f(1), f(1, 2), f(1, undefined, 3));
