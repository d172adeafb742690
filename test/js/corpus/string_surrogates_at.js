// at() with positive and negative indexes over surrogate pairs.
const s = "a😀b";
console.log(s.at(0));
console.log(s.at(1) === "\ud83d");
console.log(s.at(2) === "\ude00");
console.log(s.at(-1));
console.log(s.at(-3) === "\ud83d");
console.log(s.at(4));
console.log(s.at(-5));
console.log("abc".at(1.7));
console.log("abc".at(-0));
