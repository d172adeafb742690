// expect: 6:7
// anchor: helper
// A syntax error: in strict code a function declared in a block is lexical there, so a var of the same name in that block redeclares it.
{
  function helper() {}
  var helper = 1;
}
