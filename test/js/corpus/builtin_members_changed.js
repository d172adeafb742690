"use strict";
// A script replaces, adds and deletes builtin members, as node lets it: the builtins'
// methods are writable and configurable (not enumerable), Math.PI and a constructor's
// prototype are fixed, and each change is seen wherever the member is looked up (on the
// builtin, through an array, a string, a number, a class instance's chain). The script puts
// every builtin back as it was at its end: the corpus runs many scripts in one node process.
const map = Array.prototype.map;
Array.prototype.map = function (f) { return "mapped:" + this.length; };
console.log([1, 2].map((x) => x), Array.prototype.map === map);
Array.prototype.map = map;
console.log([1, 2].map((x) => x * 2));
Array.prototype.last = function () { return this[this.length - 1]; };
console.log([1, 2, 3].last(), "last" in [], Object.keys(Array.prototype), Array.prototype.propertyIsEnumerable("last"));
const d = Object.getOwnPropertyDescriptor(Array.prototype, "last");
console.log(typeof d.value, d.writable, d.enumerable, d.configurable);
console.log(JSON.stringify(Object.getOwnPropertyDescriptor(Array.prototype, "push"), (k, v) => typeof v === "function" ? "fn" : v));
console.log(delete Array.prototype.last, "last" in [], [].last, Object.hasOwn(Array.prototype, "last"));
// delete a builtin member: gone, or the inherited one shows through.
const all = Promise.all;
console.log(delete Promise.all, Promise.all, Object.hasOwn(Promise, "all"), Object.getOwnPropertyNames(Promise).includes("all"));
Promise.all = all;
console.log(typeof Promise.all, Object.hasOwn(Promise, "all"));
const ts = Array.prototype.toString;
delete Array.prototype.toString;
console.log(String([1, 2]), [1, 2].toString === Object.prototype.toString);
Array.prototype.toString = ts;
console.log(String([1, 2]));
// Strings, numbers, functions.
String.prototype.shout = function () { return this.toUpperCase() + "!"; };
Number.prototype.double = function () { return this * 2; };
console.log("hi".shout(), (21).double(), typeof (() => 1).call);
Object.prototype.everywhere = 7;
console.log(({}).everywhere, [].everywhere, Math.everywhere, "x".everywhere, (() => 1).everywhere);
delete Object.prototype.everywhere;
console.log(({}).everywhere, "everywhere" in {});
// defineProperty: an accessor, a read-only value, and what cannot be changed.
Object.defineProperty(Array.prototype, "first", { get() { return this[0]; }, configurable: true });
console.log([9, 8].first, Object.keys(Array.prototype).includes("first"));
Object.defineProperty(Math, "TAU", { value: 2 * Math.PI, configurable: true });
console.log(Math.TAU, Object.getOwnPropertyDescriptor(Math, "TAU").writable);
for (const t of [
  () => { Math.PI = 3; },
  () => { delete Math.PI; },
  () => { Math.TAU = 1; },
  () => { delete Array.prototype; },
  () => Object.defineProperty(Math, "PI", { value: 3 }),
  () => Object.defineProperty(Array, "prototype", { value: {} }),
  () => { [].first = 1; },
]) {
  try { t(); console.log("ok"); } catch (e) { console.log(e.name); }
}
console.log(Math.PI, delete Array.prototype.first, [1].first);
// A builtin function's own members.
const keys = Object.keys;
Object.keys.label = "k";
console.log(Object.keys.label, keys.label, Object.getOwnPropertyNames(Object.keys).sort());
delete Array.prototype.map.name;
console.log(JSON.stringify(Array.prototype.map.name), Object.hasOwn(Array.prototype.map, "name"));
// A subclass sees its parent builtin's changes.
class List extends Array {}
Array.prototype.sum = function () { return this.reduce((a, b) => a + b, 0); };
console.log(List.from([1, 2, 3]).sum(), new List().sum());
const stringify = JSON.stringify;
JSON.stringify = () => "replaced";
console.log(JSON.stringify({ a: 1 }));
JSON.stringify = stringify;
// Put everything back.
for (const [o, k] of [[Array.prototype, "sum"], [String.prototype, "shout"], [Number.prototype, "double"],
  [Math, "TAU"], [Object.keys, "label"]]) {
  delete o[k];
}
Object.defineProperty(Array.prototype.map, "name", { value: "map", configurable: true });
// toString came back by assignment after its deletion: a new, enumerable member.
console.log(Object.keys(Array.prototype));
Object.defineProperty(Array.prototype, "toString", { enumerable: false });
console.log(JSON.stringify([Array.prototype.map.name, "TAU" in Math, Object.keys(Array.prototype), [1].sum]));
