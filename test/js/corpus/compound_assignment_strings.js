// += concatenates when either side is a string.
let s = "a";
s += "b";
s += 1;
s += null;
s += undefined;
s += true;
console.log(s);
let n = 1;
n += "1";
console.log(n, typeof n);
const parts = [];
let acc = "";
for (const w of ["x", "y", "z"]) {
  acc += w;
  parts.push(acc);
}
console.log(parts);
