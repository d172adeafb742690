// A Caesar cipher over ASCII letters.
const shift = (s, k) => s.split("").map((ch) => {
  const c = ch.charCodeAt(0);
  if (c >= 65 && c <= 90) return String.fromCharCode(((c - 65 + k) % 26 + 26) % 26 + 65);
  if (c >= 97 && c <= 122) return String.fromCharCode(((c - 97 + k) % 26 + 26) % 26 + 97);
  return ch;
}).join("");
const enc = shift("Hello, World!", 3);
console.log(enc, shift(enc, -3));
