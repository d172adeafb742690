// Pascal's triangle rows.
const rows = [[1]];
for (let i = 1; i < 10; i++) {
  const prev = rows[i - 1];
  const row = [1];
  for (let j = 1; j < i; j++) row.push(prev[j - 1] + prev[j]);
  row.push(1);
  rows.push(row);
}
for (const r of rows) console.log(r.join(" "));
console.log(rows[9]);
