// expect: 4:17
// anchor: ,
// A syntax error: an empty property in an object literal (node: "Unexpected token ','").
const o = {a: 1,, b: 2};
console.log(o);
