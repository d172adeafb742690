// Fractions n/d for small n and d.
const lines = [];
for (let d = 1; d <= 24; d++) {
  const row = [];
  for (let n = 1; n <= 12; n++) row.push(n / d);
  lines.push(row.join(" "));
}
console.log(lines.join("\n"));
