// Unbounded recursion that is not caught.
function forever(n) {
  return forever(n + 1) + 1;
}
console.log("recursing");
forever(0);
