// Map keys use SameValueZero: 1 and "1" differ, NaN equals NaN, objects by identity.
const m = new Map();
m.set(1, "number");
m.set("1", "string");
m.set(NaN, "nan");
m.set(true, "bool");
m.set(null, "null");
m.set(undefined, "undef");
const k = { id: 1 };
m.set(k, "object");
console.log(m.get(1), m.get("1"), m.get(NaN), m.get(true), m.get(null), m.get(undefined));
console.log(m.get(k), m.get({ id: 1 }));
console.log(m.size);
console.log(m);
