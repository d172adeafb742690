// Grouping records by a key into an object of arrays.
const people = [
  { name: "a", dept: "eng" },
  { name: "b", dept: "ops" },
  { name: "c", dept: "eng" },
  { name: "d", dept: "sales" },
];
const groups = {};
for (const p of people) {
  if (!(p.dept in groups)) groups[p.dept] = [];
  groups[p.dept].push(p.name);
}
console.log(groups);
