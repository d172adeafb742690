// some and every, including on empty arrays.
const xs = [2, 4, 6];
console.log(xs.some((x) => x > 5), xs.every((x) => x % 2 === 0));
console.log(xs.some((x) => x > 10), xs.every((x) => x > 2));
console.log([].some((x) => true), [].every((x) => false));
let calls = 0;
[1, 2, 3, 4].some((x) => {
  calls++;
  return x === 2;
});
console.log(calls);
