// Nested conditional operators associate to the right.
const sign = (x) => (x > 0 ? "pos" : x < 0 ? "neg" : x === 0 ? "zero" : "nan");
console.log([5, -5, 0, NaN].map(sign));
const t = true ? false ? 1 : 2 : 3;
console.log(t);
