// Sorting by several keys with a composed comparator.
const people = [
  { last: "smith", first: "bob", age: 40 },
  { last: "jones", first: "amy", age: 31 },
  { last: "smith", first: "al", age: 22 },
  { last: "jones", first: "amy", age: 19 },
];
const cmp = (a, b) =>
  a.last < b.last ? -1 : a.last > b.last ? 1 :
    a.first < b.first ? -1 : a.first > b.first ? 1 : a.age - b.age;
people.sort(cmp);
for (const p of people) console.log(p.last, p.first, p.age);
