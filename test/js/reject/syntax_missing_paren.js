// expect: 5:19
// anchor: )
// A syntax error: a call's closing parenthesis is missing (node: "missing ) after argument list").
const a = 1;
console.log((1 + 2);
