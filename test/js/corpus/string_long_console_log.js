// A long string at top level prints unchanged.
const s = "x".repeat(200) + "y".repeat(50);
console.log(s);
console.log(s.length);
