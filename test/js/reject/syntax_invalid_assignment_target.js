// expect: 5:3
// anchor: 1
// A syntax error: assignment to a literal (node: "Invalid left-hand side in assignment").
const x = 1;
  1 = x;
