// expect: 4:16 lookahead assertions
// anchor: /x(?=y)/
// Lookahead is refused by name: the linear-time engine has no lookaround.
const before = /x(?=y)/;
console.log(before.test("xy"));
