// expect: 5:3 continue
// anchor: continue
// A syntax error: continue outside a loop (node: "Illegal continue statement: no surrounding iteration statement").
if (true) {
  continue;
}
