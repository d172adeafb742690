// toUpperCase and toLowerCase over Latin-1 and Latin Extended-A.
const up = [];
const low = [];
for (let c = 0xc0; c <= 0x17f; c++) {
  const ch = String.fromCharCode(c);
  up.push(ch.toUpperCase());
  low.push(ch.toLowerCase());
}
console.log(up.join(""));
console.log(low.join(""));
console.log(up.join("").length, low.join("").length);
