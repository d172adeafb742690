// Map and Set normalise -0 keys to +0.
const m = new Map();
m.set(-0, "zero");
console.log(m);
console.log(m.get(0));
const s = new Set([-0, 0]);
console.log(s);
console.log(s.size);
console.log([...s]);
