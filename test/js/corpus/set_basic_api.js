// Set add/has/delete/size/clear.
const s = new Set();
console.log(s.add(1) === s);
s.add(2).add(2).add("2");
console.log(s.size, s.has(2), s.has("2"), s.has(3));
console.log(s.delete(2), s.delete(2), s.size);
s.clear();
console.log(s.size, s);
