"use strict";
// A strict function's caller and arguments throw; an empty array's includes converts nothing.
function f() {}
for (const key of ["caller", "arguments"]) {
  try {
    console.log(f[key]);
  } catch (e) {
    console.log(e.constructor.name, e.message);
  }
  try {
    f[key] = 1;
  } catch (e) {
    console.log(e.constructor.name, e.message);
  }
  console.log(key in f, Object.hasOwn(f, key));
}
const coerced = [];
console.log([].includes(1, { valueOf() { coerced.push("valueOf"); return 0; } }), coerced);
console.log(Object.hasOwn(Object, "keys"), Object.hasOwn(Math, "PI"), Object.hasOwn(parseInt, "length"));
