"use strict";
// In strict code a function declared in a block is scoped to that block (sluice is always strict).
{
  function blockOnly() {
    return 1;
  }
  console.log(blockOnly());
}
console.log(typeof blockOnly);
