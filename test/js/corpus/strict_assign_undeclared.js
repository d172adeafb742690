"use strict";
// Assigning to an undeclared name throws in strict mode (sluice is always strict).
try {
  notDeclared = 5;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(typeof notDeclared);
