// size through a sequence of operations.
const m = new Map();
const sizes = [];
for (let i = 0; i < 5; i++) {
  m.set(i % 3, i);
  sizes.push(m.size);
}
m.delete(0);
sizes.push(m.size);
console.log(sizes, m);
