"use strict";
// Object.freeze: writes and additions throw in strict mode (sluice is always strict).
const o = Object.freeze({ a: 1, inner: { b: 2 } });
try {
  o.a = 2;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  o.c = 3;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
o.inner.b = 20;
console.log(o);
const arr = Object.freeze([1, 2]);
try {
  arr.push(3);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  arr[0] = 9;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(arr);
