// Maps iterate in insertion order; re-setting keeps the position.
const m = new Map();
m.set("z", 1).set("a", 2).set(3, 3).set("m", 4);
m.set("z", 100);
console.log([...m.keys()]);
m.delete("a");
m.set("a", 5);
console.log([...m.entries()]);
console.log([...m.values()]);
