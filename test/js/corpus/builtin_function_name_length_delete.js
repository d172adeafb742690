"use strict";
// A builtin function's name and length are configurable, not writable: delete removes the
// own property (the function then inherits Function.prototype's "" and 0), a write throws.
const map = Array.prototype.map;
console.log(Object.getOwnPropertyDescriptor(map, "length"), Object.getOwnPropertyDescriptor(map, "name"));
try { map.name = "other"; } catch (e) { console.log(e.constructor.name, map.name); }
console.log(delete map.length, Object.hasOwn(map, "length"), map.length, "length" in map);
console.log(delete map.name, Object.hasOwn(map, "name"), JSON.stringify(map.name));
console.log(delete map.name, Object.getOwnPropertyDescriptor(map, "name"));
// Constructors too, and each function on its own.
console.log(delete Map.length, Object.hasOwn(Map, "length"), Map.length, Object.getOwnPropertyNames(Map).includes("length"));
console.log(Object.hasOwn(Array.prototype.filter, "name"), Array.prototype.filter.name, Set.length);
// The function still works.
console.log([1, 2].map((x) => x * 2));
// Math.PI stays fixed.
try { delete Math.PI; } catch (e) { console.log(e.constructor.name, Math.PI); }

// The script's own functions too: deleted, name and length are Function.prototype's, and a
// class inherits its parent's; a frozen or sealed function keeps them (TypeError).
function f(a, b) {}
console.log(delete f.length, Object.hasOwn(f, "length"), f.length, Object.getOwnPropertyNames(f));
console.log(delete f.name, Object.hasOwn(f, "name"), JSON.stringify(f.name), Object.getOwnPropertyDescriptor(f, "name"));
class A { static m() {} }
class B extends A {}
console.log(delete B.name, B.name, Object.hasOwn(B, "name"));
const frozen = Object.freeze(() => 1);
try { delete frozen.name; } catch (e) { console.log(e.constructor.name, e.message); }
const sealed = Object.seal(function () {});
try { delete sealed.length; } catch (e) { console.log(e.constructor.name, e.message); }
console.log(frozen.name, sealed.length);
