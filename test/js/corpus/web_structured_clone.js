"use strict";
// structuredClone as node 20 has it: plain objects, arrays (holes and extra properties), Date,
// RegExp, Map, Set and errors cloned, cycles kept, prototypes dropped, DataCloneError with V8's
// messages for what cannot be cloned; then 300 random nested values cloned and printed.
const o = { a: 1, s: "x", n: null, u: undefined, arr: Object.assign(new Array(3), { 0: 1, 2: 3 }), d: new Date(0), r: /ab+c/gi, m: new Map([[1, { k: 2 }]]), st: new Set([1, "a"]), nested: { deep: [{ x: -0 }] } };
o.self = o;
o.arr.extra = "prop";
const c = structuredClone(o);
console.log(c, c !== o, c.self === c, c.d !== o.d, c.m.get(1) !== o.m.get(1));
class A { constructor() { this.v = 1; } get g() { return 2; } }
console.log(structuredClone(new A()), Object.getPrototypeOf(structuredClone(new A())) === Object.prototype);
console.log(structuredClone({ get x() { return 5; } }), structuredClone([]), structuredClone("s"), structuredClone(true), structuredClone(undefined), structuredClone(null));
for (const bad of [() => 1, function named() {}, Symbol("q"), { f() {} }, [Symbol()], new Promise(() => {}), Math, { p: Promise.resolve() }]) {
  try { structuredClone(bad); console.log("cloned"); } catch (e) { console.log(e.name, e.message, e.code, e instanceof Error); }
}
const e = new RangeError("boom", { cause: 7 }); e.extra = 1;
const ce = structuredClone(e);
console.log(ce instanceof RangeError, ce.message, ce.name, ce.cause, ce.extra, Object.keys(ce));
const te = new TypeError("t"); te.name = "Custom";
console.log(structuredClone(te).name, structuredClone(new Error("x")).constructor === Error);
const re = /x/g; re.lastIndex = 3; console.log(structuredClone(re).lastIndex, structuredClone(re).flags);
const sym = { [Symbol("k")]: 1, b: 2 }; console.log(structuredClone(sym));
const ne = {}; Object.defineProperty(ne, "hidden", { value: 1, enumerable: false }); ne.v = 2; console.log(structuredClone(ne));
const arr = [1, 2]; arr[5] = 6; console.log(structuredClone(arr), structuredClone(arr).length);
console.log(structuredClone(new Date(NaN)), structuredClone({ 2: "b", 1: "a", x: 0 }));
try { structuredClone(); } catch (e) { console.log(e.name, e.message); }
{
// Random nested values cloned and printed: the clone must look as the original does.
let seed = 99;
const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const make = (depth) => {
  const k = next(depth > 3 ? 5 : 10);
  switch (k) {
    case 0: return next(100) - 50;
    case 1: return "s" + next(10);
    case 2: return null;
    case 3: return undefined;
    case 4: return next(2) === 0;
    case 5: { const a = []; const n = next(4); for (let i = 0; i < n; i++) a.push(make(depth + 1)); if (next(3) === 0) a[n + 2] = 1; return a; }
    case 6: { const o = {}; const n = next(4); for (let i = 0; i < n; i++) o["k" + next(5)] = make(depth + 1); return o; }
    case 7: { const m = new Map(); const n = next(3); for (let i = 0; i < n; i++) m.set(make(depth + 1), make(depth + 1)); return m; }
    case 8: { const s = new Set(); const n = next(3); for (let i = 0; i < n; i++) s.add(make(depth + 1)); return s; }
    default: return new Date(next(1e9) * 1000);
  }
};
for (let i = 0; i < 300; i++) {
  const v = make(0);
  const c = structuredClone(v);
  console.log(JSON.stringify([...String(typeof c)]), c);
}
}
