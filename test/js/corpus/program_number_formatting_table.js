// A table of numbers in several printing forms.
const xs = [0, 1, -1, 0.5, 1 / 3, 100, 1e21, 1e-7, 123.456, -0.0001];
for (const x of xs) {
  console.log([String(x), x.toFixed(2), JSON.stringify(x), `${x}`].join(" | "));
}
