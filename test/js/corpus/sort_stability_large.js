// Stability on a large array (past any insertion-sort threshold).
const xs = [];
let seed = 7;
for (let i = 0; i < 500; i++) {
  seed = (seed * 1103 + 12345) % 65536;
  xs.push({ k: seed % 10, i });
}
xs.sort((a, b) => a.k - b.k);
let stable = true;
for (let i = 1; i < xs.length; i++) {
  if (xs[i - 1].k === xs[i].k && xs[i - 1].i > xs[i].i) stable = false;
}
console.log(stable);
console.log(xs.slice(0, 12).map((x) => x.i));
console.log(xs.slice(-12).map((x) => x.i));
