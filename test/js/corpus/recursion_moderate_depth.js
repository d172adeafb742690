// Recursion a few thousand deep is fine.
function depth(n) {
  return n === 0 ? 0 : 1 + depth(n - 1);
}
console.log(depth(2000));
const sumTo = (n) => (n === 0 ? 0 : n + sumTo(n - 1));
console.log(sumTo(1000));
