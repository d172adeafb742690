// Default sort orders by UTF-16 code units, not code points.
const xs = ["\uffff", "😀", "z", "é", "Z", "日"];
console.log(xs.sort().map((s) => s.codePointAt(0)));
