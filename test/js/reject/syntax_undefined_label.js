// expect: 6:11
// anchor: outer
// A syntax error: a label is not visible inside a function nested in its statement (node: "Undefined label 'outer'").
outer: for (const x of [1]) {
  [x].forEach(() => {
    break outer;
  });
}
