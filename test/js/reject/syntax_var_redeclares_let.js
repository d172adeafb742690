// expect: 6:7
// anchor: total
// A syntax error: a var may not redeclare a let of a block it is in (node: "Identifier 'total' has already been declared").
let total = 0;
for (const n of [1, 2]) {
  var total = n;
}
console.log(total);
