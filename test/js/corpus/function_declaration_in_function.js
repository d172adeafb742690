// Nested function declarations.
function outer(n) {
  function helper(k) {
    return k * n;
  }
  return [helper(1), helper(2), helper(3)];
}
console.log(outer(5));
