// s[i] gives code units, undefined out of range.
const s = "añ😀";
console.log(s[0], s[1]);
console.log(s[2] === "\ud83d", s[3] === "\ude00");
console.log(s[4]);
console.log(s[-1]);
console.log(s["1"]);
console.log("abc"[1]);
