// A generator function's own prototype: an object with no constructor inheriting %GeneratorPrototype%, which its generator objects inherit; replaced by a non-object, they inherit %GeneratorPrototype%.
function* g() { yield 1; }
function* h() { yield 2; }
const it = g();
console.log(typeof g.prototype, Object.getPrototypeOf(it) === g.prototype, it instanceof g, it instanceof h);
console.log(Object.getOwnPropertyNames(g).join(","), Object.getOwnPropertyNames(g.prototype).length, g.prototype.hasOwnProperty("constructor"));
const d = Object.getOwnPropertyDescriptor(g, "prototype");
console.log(d.writable, d.enumerable, d.configurable);
console.log(Object.getPrototypeOf(g.prototype) === Object.getPrototypeOf(h.prototype), g.prototype !== h.prototype);
g.prototype.extra = () => "extra";
console.log(it.extra(), [...g()], it.next(), String(it), Object.prototype.toString.call(it));
console.log(it);
const generatorPrototype = Object.getPrototypeOf(g.prototype);
g.prototype = 5;
const it2 = g();
console.log(Object.getPrototypeOf(it2) === generatorPrototype, typeof it2.next, [...it2]);
async function* ag() { yield 1; }
const ai = ag();
console.log(typeof ag.prototype, Object.getPrototypeOf(ai) === ag.prototype, typeof ai.next, typeof ag.prototype.next);
ai.next().then((r) => console.log("async generator", r));
const o = { *m() { yield 2; } };
console.log(typeof o.m.prototype, [...o.m()], Object.getPrototypeOf(o.m()) === o.m.prototype);
class C { *m() { yield 3; } static *s() { yield 4; } }
console.log(typeof C.prototype.m.prototype, [...new C().m()], [...C.s()]);
try { new g(); } catch (e) { console.log(e.constructor.name); }
