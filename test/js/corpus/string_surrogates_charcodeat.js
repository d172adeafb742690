// charCodeAt returns code units; codePointAt combines pairs.
const s = "x😀y";
for (let i = 0; i < s.length; i++) {
  console.log(i, s.charCodeAt(i), s.codePointAt(i));
}
console.log(s.charCodeAt(10));
console.log(s.codePointAt(10));
console.log("\ud83d".codePointAt(0));
console.log("\ude00x".codePointAt(0));
