// Shortest round-trip formatting across exponents and mantissas (a deterministic sweep).
const mantissas = [1, 1.5, 2.5e-1, 3.14159, 9.999999999999999, 1.2345678901234567, 7.000000000000001];
const out = [];
for (const m of mantissas) {
  for (let e = -12; e <= 25; e++) {
    out.push(String(m * Math.pow(10, e)));
  }
}
console.log(out.join("\n"));
