// do...while runs its body at least once.
let i = 10;
do {
  console.log("body", i);
  i++;
} while (i < 10);
let j = 0;
do j += 2; while (j < 7);
console.log(j);
let k = 0;
do {
  k++;
  if (k === 2) continue;
  if (k === 4) break;
  console.log("k", k);
} while (true);
