// Chaining string methods.
const raw = "  Hello, World  ";
console.log(raw.trim().toLowerCase().split(", ").join("|"));
console.log(raw.trim().replaceAll("o", "0").padEnd(16, ".") + "!");
console.log("a-b".split("-").map((p) => p.toUpperCase()).join("+"));
console.log("abc".split("").reverse().join(""));
