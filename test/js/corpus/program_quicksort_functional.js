// A functional quicksort with filter and spread.
const qs = (xs) => {
  if (xs.length <= 1) return xs;
  const [p, ...rest] = xs;
  return [...qs(rest.filter((x) => x < p)), p, ...qs(rest.filter((x) => x >= p))];
};
console.log(qs([5, 3, 8, 1, 9, 2, 7, 5, 0, -4, 3.5]));
