// A let declared outside the loop is shared by all closures.
const fns = [];
let i = 0;
for (; i < 3; i++) fns.push(() => i);
console.log(fns.map((f) => f()));
const fns2 = [];
let j = 0;
while (j < 3) {
  const captured = j;
  fns2.push(() => captured);
  j++;
}
console.log(fns2.map((f) => f()));
