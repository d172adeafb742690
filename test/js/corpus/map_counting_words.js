// A Map as a counter.
const text = "b a c b a b";
const counts = new Map();
for (const w of text.split(" ")) counts.set(w, (counts.get(w) ?? 0) + 1);
console.log(counts);
const sorted = [...counts].sort((x, y) => y[1] - x[1]);
console.log(sorted);
