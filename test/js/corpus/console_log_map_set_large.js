// Large Maps and Sets break over lines and stop after 100 entries.
const m = new Map();
for (let i = 0; i < 12; i++) m.set("key" + i, i * i);
console.log(m);
const s = new Set();
for (let i = 0; i < 120; i++) s.add(i);
console.log(s);
const m2 = new Map();
for (let i = 0; i < 105; i++) m2.set(i, i);
console.log(m2);
