// break and continue affect the innermost loop only.
const out = [];
for (let i = 0; i < 4; i++) {
  for (let j = 0; j < 4; j++) {
    if (j === i) continue;
    if (j > 2) break;
    out.push(`${i}${j}`);
  }
}
console.log(out.join(" "));
