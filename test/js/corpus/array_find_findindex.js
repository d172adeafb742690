// find and findIndex.
const xs = [5, 12, 8, 130, 44];
console.log(xs.find((x) => x > 10));
console.log(xs.findIndex((x) => x > 10));
console.log(xs.find((x) => x > 1000));
console.log(xs.findIndex((x) => x > 1000));
const people = [{ name: "ann", age: 30 }, { name: "bob", age: 25 }];
console.log(people.find((p) => p.age < 28));
console.log(people.findIndex((p) => p.name === "ann"));
