// Math.round, floor, ceil and trunc, with halves and negatives.
const xs = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 4.7, -4.7, 1e21 + 0.5,
  -0.2];
for (const x of xs) {
  console.log(x, Math.round(x), Math.floor(x), Math.ceil(x), Math.trunc(x));
}
