"use strict";
// Strings are immutable: index assignment throws in strict mode (sluice is always strict).
const s = "abc";
try {
  s[0] = "z";
  console.log("assigned");
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(s);
const t = s.toUpperCase();
console.log(s, t);
