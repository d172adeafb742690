// Strings expose length and indexes as properties.
const s = "hello";
console.log(s.length, s["length"]);
const key = "length";
console.log(s[key]);
console.log(s.missing);
console.log("length" in { length: 1 });
