// Arrow function forms: expression body, block body, object literal body.
const a = () => 1;
const b = (x) => x + 1;
const c = x => x * 2;
const d = (x, y) => {
  const s = x + y;
  return s * s;
};
const e = () => ({ wrapped: true });
const f = () => {};
console.log(a(), b(1), c(4), d(1, 2), e(), f());
