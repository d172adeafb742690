"use strict";
// Strict code: a function declared in a block is block scoped, unlike a var beside it.
{
  function inBlock() {
    return "block-scoped";
  }
  var beside = inBlock();
}
console.log(typeof inBlock, beside);
function outer() {
  if (true) {
    function shadow() {
      return "inner";
    }
  }
  return typeof shadow;
}
function shadow() {
  return "outer";
}
console.log(outer(), shadow());
