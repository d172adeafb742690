"use strict";
// Writes to read-only properties: a function's name and length, a Map's or Set's size (a
// getter), a frozen error's message.
const fn = (p) => p;
for (const [name, op] of [["name", () => { fn.name = "x"; }], ["length", () => { fn.length = 2; }], ["custom", () => { fn.custom = 1; return fn.custom; }]]) {
  try { console.log(name, op()); } catch (e) { console.log(name, e.message); }
}
const m = new Map([[1, 2]]), s = new Set([1]);
try { m.size = 0; } catch (e) { console.log(e.message); }
try { s.size = 0; } catch (e) { console.log(e.message); }
console.log(m.size, s.size);
const err = Object.freeze(new RangeError("frozen"));
try { err.message = "x"; } catch (e) { console.log(e.message); }
try { err.extra = "x"; } catch (e) { console.log(e.message); }
const obj = Object.freeze({ a: 1, nested: { b: 2 } });
try { obj.a = 2; } catch (e) { console.log(e.message); }
obj.nested.b = 3; console.log(obj);
