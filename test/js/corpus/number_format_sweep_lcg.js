// Formatting of pseudo-random doubles made by a linear congruential generator.
let state = 12345;
const next = () => {
  state = (state * 1103515245 + 12345) % 2147483648;
  return state;
};
const lines = [];
for (let i = 0; i < 150; i++) {
  const a = next();
  const b = next() % 1000 + 1;
  const scale = Math.pow(10, (next() % 40) - 20);
  const x = (a / b) * scale;
  lines.push(`${x} ${-x} ${x / 3} ${x * 7}`);
}
console.log(lines.join("\n"));
