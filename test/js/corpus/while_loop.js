// while loops with break and continue.
let i = 0;
const out = [];
while (i < 10) {
  i++;
  if (i % 2 === 0) continue;
  if (i > 7) break;
  out.push(i);
}
console.log(out, i);
let n = 27;
let steps = 0;
while (n !== 1) {
  n = n % 2 === 0 ? n / 2 : 3 * n + 1;
  steps++;
}
console.log(steps);
