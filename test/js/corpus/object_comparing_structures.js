// Comparing two objects key by key.
const same = (x, y) => {
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  if (kx.length !== ky.length) return false;
  return kx.every((k) => k in y && x[k] === y[k]);
};
console.log(same({ a: 1, b: 2 }, { b: 2, a: 1 }));
console.log(same({ a: 1 }, { a: 1, b: undefined }));
console.log(same({}, {}));
