// A for loop with no condition ends with break.
let i = 0;
for (;;) {
  if (i >= 4) break;
  i++;
}
console.log(i);
