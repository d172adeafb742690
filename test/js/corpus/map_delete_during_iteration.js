// Deleting entries during iteration skips them.
const m = new Map([["a", 1], ["b", 2], ["c", 3], ["d", 4]]);
const seen = [];
for (const [k] of m) {
  seen.push(k);
  if (k === "a") m.delete("c");
}
console.log(seen, m.size);
