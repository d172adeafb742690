// Integer-like keys come first in ascending order, then strings in insertion order.
const o = { b: 1, 2: "two", a: 2, 1: "one", "10": "ten", "-1": "neg", "1.5": "frac", "01": "lead" };
console.log(Object.keys(o));
console.log(o);
console.log(JSON.stringify(o));
for (const k in o) console.log(k);
