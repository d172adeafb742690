// Objects with only data (functions are never printed by the corpus).
const o = { id: 7, name: "n", tags: ["x"], meta: { ok: true } };
console.log(o);
console.log([o, o]);
