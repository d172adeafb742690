// Number.parseInt of a few strings in every radix from 2 to 36.
const inputs = ["10", "zz", "0x1f", "777", "1a2b", "-11", "  42abc"];
for (const s of inputs) {
  const row = [];
  for (let r = 2; r <= 36; r++) row.push(Number.parseInt(s, r));
  console.log(JSON.stringify(s), row.join(","));
}
