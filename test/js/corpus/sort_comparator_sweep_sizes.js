// Numeric sorts of arrays of many sizes, checked and summarised.
const out = [];
let seed = 99;
for (let n = 0; n <= 64; n += 4) {
  const xs = [];
  for (let i = 0; i < n; i++) {
    seed = (seed * 75 + 74) % 65537;
    xs.push((seed % 200) - 100);
  }
  const sorted = xs.slice().sort((a, b) => a - b);
  let ok = true;
  for (let i = 1; i < sorted.length; i++) if (sorted[i - 1] > sorted[i]) ok = false;
  out.push(`${n}:${ok}:${sorted.slice(0, 3).join("/")}`);
}
console.log(out.join(" "));
