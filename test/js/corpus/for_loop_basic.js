// Classic for loops, counting up and down.
const out = [];
for (let i = 0; i < 5; i++) out.push(i);
console.log(out);
const down = [];
for (let i = 10; i > 0; i -= 3) down.push(i);
console.log(down);
let n = 0;
for (; n < 3;) n++;
console.log(n);
for (let i = 0, j = 10; i < j; i += 3) {
  console.log(i, j);
  j -= 3;
}
