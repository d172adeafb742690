// toFixed over a grid of values and digit counts.
const values = [0, 0.5, 1.005, 1.25, 1.35, 2.5, 10.235, 123.456789, 0.000123, 999.9995, 1e-7,
  4.35, 8.575, 0.045, 1.45, 5e-324, 1e20, 123456789.987654321];
for (const v of values) {
  const row = [];
  for (let d = 0; d <= 8; d++) row.push(v.toFixed(d));
  console.log(row.join(" "), (-v).toFixed(3));
}
