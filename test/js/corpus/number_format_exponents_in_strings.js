// Exponent forms through String(), templates, concatenation and join.
const xs = [1e21, 1e-7, 1.5e-10, 2e25, 1e-6, 123e-20, 1e300];
for (const x of xs) {
  console.log(String(x), `${x}`, "" + x, [x].join());
}
