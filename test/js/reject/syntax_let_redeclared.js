// expect: 6:5
// anchor: a
// A syntax error: a let declared twice in one scope (node: "Identifier 'a' has already been declared").
let a = 1;
const b = 2;
let a = 3;
console.log(a, b);
