"use strict";
// The arguments object of a non-arrow function (ES 10.4.4.6, strict mode: unmapped): its
// elements, length, Symbol.iterator, the poisoned callee, how node prints it, and who sees it.
function f() { return arguments; }
console.log(f(1, 2), f(), f("a", { x: 1 }));
const a = f(1, 2); a.foo = 3; console.log(a);
const b = f(1, 2, 3); delete b[1]; console.log(b);
const c = f(1); c.length = 5; console.log(c, c.length);
console.log(Object.prototype.toString.call(f()));
console.log(Object.getOwnPropertyNames(f(1,2)), Object.keys(f(1,2)), JSON.stringify(f(1,2)));
try { f().callee } catch (e) { console.log(e.constructor.name, e.message) }
try { f().callee = 1 } catch (e) { console.log(e.constructor.name, e.message) }
const d = Object.getOwnPropertyDescriptor(f(), "callee"); console.log(d, d.get === d.set, JSON.stringify(d.get.name), d.get.length);
console.log(Object.getOwnPropertyDescriptor(f(1), "length"));
console.log(Object.getOwnPropertyDescriptor(f(1), Symbol.iterator));
console.log(f(1,2)[Symbol.iterator] === Array.prototype.values);
console.log([...f(1,2,3)], Array.from(f(4,5)));
console.log({a: f(1)}, [f(1,2)]);
console.log(typeof f(), Array.isArray(f()), f() instanceof Object, Object.getPrototypeOf(f()) === Object.prototype);
function g(a, b = 10, ...rest) { return [arguments.length, a, b, rest, [...arguments]]; }
console.log(g(), g(1), g(1, undefined, 3, 4));
function h(a) { a = 5; return arguments[0]; }
console.log(h(1));
function k(x) { var y = 2; let z = 3; return Array.prototype.slice.call(arguments); }
console.log(k(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
function outer() { const inner = () => arguments[1]; return inner(9, 9); }
console.log(outer("a", "b"));
function* gen() { yield arguments.length; yield arguments[0]; }
console.log([...gen(7, 8)]);
async function af() { await null; return arguments[0]; }
af("async").then(v => console.log(v));
class C { constructor() { this.n = arguments.length; } m() { return arguments[0]; } static s(a, b) { return arguments.length; } }
console.log(new C(1, 2).n, new C().m("m"), C.s(1,2,3));
const o = { get x() { return arguments.length; }, set x(v) { console.log("set", arguments.length, v); } };
console.log(o.x); o.x = 4;
function sum() { let t = 0; for (const x of arguments) t += x; return t; }
console.log(sum(1, 2, 3, 4));
function ap() { return Math.max.apply(null, arguments); }
console.log(ap(3, 9, 2));
function fwd() { return sum.apply(null, [...arguments]); }
console.log(fwd(5, 6));
const named = function self() { return [arguments.length, typeof self]; };
console.log(named(1,2));
function many(a, b) { var x, y, z; let q = 1; return arguments; }
console.log(many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
function modify() { arguments[0] = "changed"; arguments.length = 1; return [...arguments]; }
console.log(modify("x", "y"));
console.log(Object.entries(f("p", "q")));
for (const k in f("a", "b")) console.log("key", k);
console.log({ a: { b: { c: { d: f(1) } } } });
console.log(typeof (function () { return typeof arguments; })());
function shorthand() { return { arguments }; }
console.log(shorthand(1));
function nested() { return (function () { return arguments.length; })(); }
console.log(nested(1, 2, 3));
function viaArrowChain() { return (() => () => arguments[0])()(); }
console.log(viaArrowChain("deep"));
function withClass() { class K { m() { return arguments.length; } static [arguments[0]]() { return "computed"; } } return [new K().m(1, 2), K.key()]; }
console.log(withClass("key"));
function spreadArgs() { return [...arguments].reverse(); }
console.log(spreadArgs(1, 2, 3));
const frozen = Object.freeze(f(1));
try { frozen[0] = 2; } catch (e) { console.log(e.message); }
const ak = f("a", "b");
console.log([...ak.keys ? [] : ["no keys method"]], ak.length, ak.hasOwnProperty("length"), "callee" in ak, ak.propertyIsEnumerable("callee"));
console.log(Array.prototype.values.call(f(1, 2)).next(), [...Array.prototype.entries.call(f("x", "y"))], [...Array.prototype.keys.call({ length: 3 })]);
console.log(String(f(1)), `${Object.keys(f(9))}`);
console.log(JSON.stringify({ args: f(1, "two", null) }));
function defaults(a = arguments.length, b = arguments[0]) { return [a, b]; }
console.log(defaults(), defaults(undefined, undefined, 3), defaults(7));
function destructure({ x }, [y]) { return [x, y, arguments.length, arguments[0], arguments[1]]; }
console.log(destructure({ x: 1 }, [2]));
function lengthChanges() { arguments.length = 0; const out = []; for (const v of arguments) out.push(v); arguments.length = 3; for (const v of arguments) out.push(v); return out; }
console.log(lengthChanges("a", "b"));
function iterSwap() { arguments[Symbol.iterator] = function* () { yield "own"; }; return [...arguments]; }
console.log(iterSwap(1));
const callee = Object.getOwnPropertyDescriptor(f(), "callee").get;
console.log(callee === Object.getOwnPropertyDescriptor(f(), "callee").set, Object.getOwnPropertyNames(callee));
try { delete f().callee; } catch (e) { console.log(e.message); }
console.log(Object.getOwnPropertyNames(f(1)).length, Object.getOwnPropertySymbols(f(1)).length);
function* genRest(a) {
  yield arguments.length;
  yield a;
}
console.log([...genRest(1, 2, 3)]);
