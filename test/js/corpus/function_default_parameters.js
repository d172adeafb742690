// Default parameters apply for undefined, not for null.
function f(a = 1, b = "b", c = [a]) {
  return [a, b, c];
}
console.log(f());
console.log(f(undefined, null));
console.log(f(2, 3, 4));
let calls = 0;
const g = (x = ++calls) => x;
console.log(g(), g(), g(10), calls);
