// Spread in object literals copies own enumerable properties; later wins.
const base = { a: 1, b: 2 };
console.log({ ...base, b: 3, c: 4 });
console.log({ b: 0, ...base });
console.log({ ...null, ...undefined, ...{} });
console.log({ ..."hi" });
console.log({ ...[10, 20] });
const copy = { ...base };
copy.a = 100;
console.log(base, copy);
