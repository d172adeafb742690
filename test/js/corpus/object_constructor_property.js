// Every value's inherited `constructor`: the plain-object test of merge and clone helpers.
const isPlainObject = (v) => v !== null && typeof v === "object" && v.constructor === Object;
const samples = [{}, { a: 1 }, [], new Map(), new Set(), new Error("e"), null, 5, "s", true, JSON, Math];
console.log(samples.map(isPlainObject));
console.log([{}.constructor, [].constructor, new Map().constructor, new Set().constructor]);
console.log((5).constructor, "s".constructor, true.constructor);
console.log(new TypeError("t").constructor === TypeError, new RangeError("r").constructor.name);
console.log("constructor" in {}, { constructor: "own" }.constructor);
const deepMerge = (a, b) => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k], v) : v;
  }
  return out;
};
console.log(deepMerge({ db: { host: "a", port: 1 }, tags: ["x"] }, { db: { port: 2 }, tags: ["y"] }));
const typeName = (v) => (v === null || v === undefined ? String(v) : v.constructor.name);
console.log([1, "a", [], {}, new Map(), new Set(), new SyntaxError("s"), null, undefined].map(typeName));
