// A JSON round trip copies plain data deeply.
const src = { a: [1, { b: 2 }], c: "s", d: null };
const copy = JSON.parse(JSON.stringify(src));
copy.a[1].b = 99;
console.log(src, copy);
