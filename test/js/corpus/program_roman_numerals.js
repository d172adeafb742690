// Converting integers to Roman numerals and back.
const table = [[1000, "M"], [900, "CM"], [500, "D"], [400, "CD"], [100, "C"], [90, "XC"],
  [50, "L"], [40, "XL"], [10, "X"], [9, "IX"], [5, "V"], [4, "IV"], [1, "I"]];
const toRoman = (n) => {
  let out = "";
  for (const [v, s] of table) {
    while (n >= v) {
      out += s;
      n -= v;
    }
  }
  return out;
};
const fromRoman = (s) => {
  let i = 0;
  let n = 0;
  for (const [v, sym] of table) {
    while (s.startsWith(sym, i)) {
      n += v;
      i += sym.length;
    }
  }
  return n;
};
for (const n of [1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999]) {
  const r = toRoman(n);
  console.log(n, r, fromRoman(r));
}
