// Object.assign preserves the target's existing key positions.
const t = { c: 0, a: 0 };
Object.assign(t, { a: 1, b: 2, c: 3, 0: "z" });
console.log(t);
