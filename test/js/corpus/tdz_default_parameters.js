// Default parameters are evaluated left to right; later ones are in the TDZ.
const f = (a = 1, b = a + 1) => [a, b];
console.log(f(), f(5), f(5, 0));
const g = (a = b, b = 1) => [a, b];
try {
  g();
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(g(7));
