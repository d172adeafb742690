// Defaults are evaluated only when the value is undefined.
let calls = 0;
const def = (v) => {
  calls++;
  return v;
};
const [a = def("a"), b = def("b")] = [1];
const { c = def("c"), d = def("d") } = { c: null };
console.log(a, b, c, d, calls);
const [e = 1, f = e * 2] = [];
console.log(e, f);
