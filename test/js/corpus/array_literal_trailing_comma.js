// A trailing comma does not add an element.
const a = [1, 2, 3,];
console.log(a.length, a);
const o = { a: 1, b: 2, };
console.log(o);
