// expect: 6:14
// anchor: checks
// A syntax error: `continue` may only name a loop's label (node: "Illegal continue statement: 'checks' does not denote an iteration statement").
checks: {
  for (let i = 0; i < 2; i++) {
    continue checks;
  }
}
