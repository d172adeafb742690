// The default sort over mixed values, compared as strings.
const xs = [];
let s = 3;
for (let i = 0; i < 60; i++) {
  s = (s * 31 + 7) % 1009;
  xs.push(s % 3 === 0 ? s : s % 3 === 1 ? "s" + s : s / 8);
}
console.log(xs.sort().join(" "));
