// Each error kind has its own prototype, inheriting Error.prototype; well-known symbols are
// read-only properties of Symbol; a symbol's prototype is Symbol.prototype.
const kinds = [TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];
for (const K of kinds) {
  const e = new K("m");
  console.log(K.name, Object.getPrototypeOf(e) === K.prototype, Object.getPrototypeOf(K.prototype) === Error.prototype,
    K.prototype.constructor === K, e instanceof K, e instanceof Error, String(e));
}
try { null.x; } catch (e) { console.log(Object.getPrototypeOf(e) === TypeError.prototype); }
console.log(Object.getOwnPropertyDescriptor(Symbol, "iterator"));
console.log(Object.getPrototypeOf(Symbol("s")) === Symbol.prototype);
Promise.reject(new RangeError("r")).catch((e) => console.log(Object.getPrototypeOf(e) === RangeError.prototype));
