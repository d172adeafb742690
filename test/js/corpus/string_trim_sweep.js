// Which code units trim removes, over the BMP ranges that hold white space.
const ws = [];
const ranges = [[0, 0x20], [0x7f, 0xa0], [0x1680, 0x1680], [0x180e, 0x180e], [0x2000, 0x200b],
  [0x2028, 0x202f], [0x205f, 0x2060], [0x3000, 0x3000], [0xfeff, 0xfeff]];
for (const [lo, hi] of ranges) {
  for (let c = lo; c <= hi; c++) {
    if ((String.fromCharCode(c) + "x").trim() === "x") ws.push(c);
  }
}
console.log(ws.join(","));
