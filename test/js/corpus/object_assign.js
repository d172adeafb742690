// Object.assign copies own enumerable properties left to right.
const target = { a: 1 };
const r = Object.assign(target, { b: 2 }, { a: 3, c: 4 });
console.log(r, r === target);
console.log(Object.assign({}, null, undefined, { x: 1 }));
console.log(Object.assign({}, "ab"));
console.log(Object.assign({}, [9, 8]));
const nested = { inner: { v: 1 } };
const copy = Object.assign({}, nested);
copy.inner.v = 2;
console.log(nested.inner.v);
