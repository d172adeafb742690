// Recursive functions.
function fact(n) {
  return n <= 1 ? 1 : n * fact(n - 1);
}
function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
console.log(fact(10), fact(20), fact(25), fact(170), fact(171));
console.log(fib(20));
