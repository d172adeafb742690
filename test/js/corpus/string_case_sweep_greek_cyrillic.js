// Case mapping over Greek and Cyrillic.
const parts = [];
for (let c = 0x370; c <= 0x4ff; c++) {
  const ch = String.fromCharCode(c);
  if (ch.toUpperCase() !== ch || ch.toLowerCase() !== ch) parts.push(ch + ch.toUpperCase() + ch.toLowerCase());
}
console.log(parts.length);
console.log(parts.join(" "));
