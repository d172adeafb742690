// Run-length encoding and decoding.
const encode = (s) => {
  let out = "";
  let i = 0;
  while (i < s.length) {
    let j = i;
    while (j < s.length && s[j] === s[i]) j++;
    out += (j - i) + s[i];
    i = j;
  }
  return out;
};
const decode = (s) => {
  let out = "";
  let num = "";
  for (const ch of s) {
    if (ch >= "0" && ch <= "9") num += ch;
    else {
      out += ch.repeat(Number.parseInt(num, 10));
      num = "";
    }
  }
  return out;
};
const enc = encode("aaabccddddde");
console.log(enc, decode(enc));
