// Walking a string by code points with codePointAt.
const s = "a😀b𝒳";
const cps = [];
let i = 0;
while (i < s.length) {
  const cp = s.codePointAt(i);
  cps.push(cp);
  i += cp > 0xffff ? 2 : 1;
}
console.log(cps);
