"use strict";
// The differences from node that issue 25 lists, where they are fixed: numeric separators
// after a leading 0 and a trailing comma after a rest element are refused at compile time
// (reject files), so here: a function's `caller` in strict mode, Object.hasOwn on the
// builtins, includes/indexOf/lastIndexOf on an empty array converting no fromIndex, and
// JSON.parse nesting far past the native stack.
function f() {}
try {
  f.caller = 1;
  console.log("assigned");
} catch (e) {
  console.log(e.name, e.message);
}
console.log(Object.hasOwn(Object, "keys"), Object.hasOwn(Math, "PI"), Object.hasOwn(Object, "nope"),
  Object.hasOwn(Array.prototype, "push"), Object.hasOwn(JSON, "parse"));
let conversions = 0;
const from = { valueOf() { conversions++; return 0; } };
console.log([].includes(1, from), [].indexOf(1, from), [].lastIndexOf(1, from), conversions);
console.log([1].includes(1, from), [1].indexOf(1, from), [1].lastIndexOf(1, from), conversions);
for (const depth of [1000, 50000, 250000]) {
  const a = JSON.parse("[".repeat(depth) + "]".repeat(depth));
  let n = 0;
  for (let x = a; x.length; x = x[0]) n++;
  const o = JSON.parse('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
  let m = 0;
  let y = o;
  for (; typeof y === "object"; y = y.a) m++;
  console.log(depth, n, m, y);
}
const bad = ["[".repeat(100000), "[".repeat(50000) + "1,]" + "]".repeat(49999), '{"a":'.repeat(1000) + "}"];
for (const text of bad) {
  try {
    JSON.parse(text);
  } catch (e) {
    console.log(e.name, e.message.slice(0, 80));
  }
}
