// continue in a for loop still runs the update expression.
let runs = 0;
for (let i = 0; i < 5; i++) {
  if (i < 3) continue;
  runs++;
}
console.log(runs);
