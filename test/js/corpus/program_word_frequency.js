// Word frequencies, sorted by count then word.
const text = "It was the best of times it was the worst of times it was the age of wisdom";
const counts = new Map();
for (const w of text.toLowerCase().split(" ")) counts.set(w, (counts.get(w) || 0) + 1);
const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
for (const [w, c] of ranked.slice(0, 5)) console.log(w.padEnd(6), c);
