// Counting characters with an object keyed by character.
const text = "mississippi";
const freq = {};
for (const ch of text) {
  freq[ch] = (freq[ch] ?? 0) + 1;
}
console.log(freq);
console.log(Object.keys(freq).sort().map((k) => k + freq[k]).join(""));
