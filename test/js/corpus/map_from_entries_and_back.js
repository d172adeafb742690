// Converting between objects, entries and Maps.
const o = { b: 1, a: 2, 1: "one" };
const m = new Map(Object.entries(o));
console.log(m);
console.log(Object.fromEntries(m));
console.log(Array.from(m));
console.log([...m].map(([k, v]) => k + "=" + v).join("&"));
