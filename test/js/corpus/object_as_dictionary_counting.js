// Counting words with a plain object.
const words = "the cat and the hat and the bat".split(" ");
const counts = {};
for (const w of words) {
  counts[w] = (counts[w] || 0) + 1;
}
console.log(counts);
const top = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
console.log(top);
