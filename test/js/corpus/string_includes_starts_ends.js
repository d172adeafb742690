// includes, startsWith and endsWith with positions.
const s = "hello world";
console.log(s.includes("o w"), s.includes("xyz"), s.includes(""));
console.log(s.includes("hello", 1));
console.log(s.startsWith("hell"), s.startsWith("world", 6), s.startsWith(""));
console.log(s.endsWith("world"), s.endsWith("hello", 5), s.endsWith("o", 100));
console.log(s.startsWith("h", -3));
console.log("😀x".startsWith("\ud83d"));
console.log("ab".endsWith("b", 1));
