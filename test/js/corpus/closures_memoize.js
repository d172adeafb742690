// Memoising with a closure over a Map.
const memo = (f) => {
  const cache = new Map();
  return (n) => {
    if (!cache.has(n)) cache.set(n, f(n));
    return cache.get(n);
  };
};
let calls = 0;
const slowSquare = (n) => {
  calls++;
  return n * n;
};
const fast = memo(slowSquare);
console.log(fast(4), fast(4), fast(5), calls);
