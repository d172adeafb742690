// Powers of two and ten, and their neighbours, as integers and strings.
const out = [];
for (let k = 0; k <= 75; k += 3) {
  const p = Math.pow(2, k);
  out.push(`${k} ${p - 1} ${p} ${p + 1}`);
}
for (let k = 15; k <= 23; k++) {
  const p = Math.pow(10, k);
  out.push(`${k} ${p} ${p + 1} ${p * 1.5}`);
}
console.log(out.join("\n"));
