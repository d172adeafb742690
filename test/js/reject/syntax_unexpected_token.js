// expect: 4:7
// anchor: =
// A syntax error: a declaration without a name (node: "Unexpected token '='").
const = 5;
