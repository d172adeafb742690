// A comparator that returns NaN treats the pair as equal; Infinity sorts correctly.
const xs = [3, Infinity, -Infinity, 0, -0, 2];
console.log(xs.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
console.log([2, 1, 3].sort(() => NaN));
