// Symbols: descriptions, conversions, symbol-keyed properties, the registry.
const s = Symbol("foo");
const t = Symbol();
console.log(typeof s, s.toString(), String(t), s.description, t.description);
console.log(Symbol.iterator, Symbol.asyncIterator.description, typeof Symbol.iterator);
console.log(Symbol.toPrimitive.toString(), Symbol.toStringTag.description, Symbol("a b"));
const o = { a: 1, [s]: 2, b: 3 };
console.log(o, Object.keys(o), o[s], s in o, JSON.stringify(o));
console.log(Object.getOwnPropertySymbols(o), Object.getOwnPropertyNames(o));
console.log(Symbol.for("x") === Symbol.for("x"), Symbol.keyFor(Symbol.for("x")), Symbol.keyFor(s));
console.log(Symbol("x") === Symbol("x"), s === s, s == s, [s].includes(s), [s].indexOf(s));
try { `${s}`; } catch (e) { console.log(e.constructor.name, e.message); }
try { s + 1; } catch (e) { console.log(e.message); }
try { s + ""; } catch (e) { console.log(e.message); }
try { new Symbol(); } catch (e) { console.log(e.message); }
try { Symbol.keyFor("x"); } catch (e) { console.log(e.message); }
console.log(JSON.stringify({ k: s, l: [s] }), [s, t], { [Symbol.iterator]: 1 });
const m = new Map([[s, 1]]);
console.log(m.get(s), m.has(Symbol("foo")), new Set([s, s]).size);
const copy = { ...o };
console.log(copy[s], Object.assign({}, { x: 1 }).x, !!s, s.constructor === Symbol);
const key = Symbol("k");
class A { [key]() { return "method"; } static [Symbol.for("st")]() { return 5; } }
console.log(new A()[key](), A[Symbol.for("st")]());
console.log(Object.getOwnPropertyDescriptor(o, s), delete o[s], o[s]);
