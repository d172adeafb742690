// Longest Collatz chain below a limit.
let best = 0;
let bestN = 0;
for (let n = 1; n < 3000; n++) {
  let x = n;
  let len = 1;
  while (x !== 1) {
    x = x % 2 === 0 ? x / 2 : 3 * x + 1;
    len++;
  }
  if (len > best) {
    best = len;
    bestN = n;
  }
}
console.log(bestN, best);
