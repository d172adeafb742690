// String equality and ordering compare code units.
console.log("a" === "a", "a" === "A");
console.log("abc" < "abd", "abc" < "ab");
console.log("Z" < "a");
console.log("😀" > "\uffff");
console.log("é" === "e\u0301");
console.log("10" > "9");
console.log(["b", "a", "C", "é", "e"].sort());
