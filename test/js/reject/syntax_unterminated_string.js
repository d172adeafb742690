// expect: 4:11
// anchor: "abc;
// A syntax error: a string literal that does not end (node: "Invalid or unexpected token").
const s = "abc;
console.log(s);
