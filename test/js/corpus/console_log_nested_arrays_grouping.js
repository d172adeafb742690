// Grouping applies per array, including nested ones.
const outer = [];
for (let i = 0; i < 3; i++) {
  const inner = [];
  for (let j = 0; j < 10; j++) inner.push(i * 10 + j);
  outer.push(inner);
}
console.log(outer);
console.log({ data: outer[0] });
