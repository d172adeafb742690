// Returning several values with arrays and objects.
const minMax = (xs) => {
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
};
const [lo, hi] = minMax([3, -1, 7, 2]);
console.log(lo, hi);
const stats = (xs) => ({ n: xs.length, mean: xs.reduce((a, b) => a + b, 0) / xs.length });
const { n, mean } = stats([1, 2, 3, 4]);
console.log(n, mean);
console.log(stats([]));
