// Objects compare by reference.
const a = { x: 1 };
const b = { x: 1 };
const c = a;
console.log(a === b, a === c, a == b);
c.x = 2;
console.log(a.x);
console.log({} === {}, typeof {});
