// Binary search over a sorted array.
const search = (xs, t) => {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (xs[mid] === t) return mid;
    if (xs[mid] < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
};
const xs = [];
for (let i = 0; i < 100; i++) xs.push(i * 3);
console.log(search(xs, 0), search(xs, 297), search(xs, 150), search(xs, 151), search([], 1));
