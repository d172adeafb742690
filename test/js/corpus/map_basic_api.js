// Map set/get/has/delete/size/clear.
const m = new Map();
console.log(m.set("a", 1) === m);
m.set("b", 2).set("c", 3);
console.log(m.size, m.get("a"), m.get("z"), m.has("b"), m.has("z"));
console.log(m.delete("b"), m.delete("b"), m.size);
m.clear();
console.log(m.size, m);
