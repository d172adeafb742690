// forEach visits the indexes that exist when it reaches them.
const a = [1, 2, 3];
const seen = [];
a.forEach((x) => {
  seen.push(x);
  if (a.length < 6) a.push(x * 10);
});
console.log(seen, a);
const b = [1, 2, 3, 4];
const seen2 = [];
b.forEach((x) => {
  seen2.push(x);
  b.pop();
});
console.log(seen2, b);
