// Missing arguments are undefined; extra arguments are ignored.
function f(a, b, c) {
  return [a, b, c];
}
console.log(f(1));
console.log(f(1, 2, 3, 4, 5));
const g = (x) => x;
console.log(g(), g(1, 2));
