// const in for...of gets a fresh binding each iteration.
const out = [];
for (const v of [1, 2, 3]) out.push(v * 2);
console.log(out);
try {
  for (const i = 0; i < 2; i++) out.push(i);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(out);
