// Computed keys are evaluated in order and converted to strings.
const log = [];
const k = (x) => {
  log.push(x);
  return x;
};
const o = { [k("b")]: k(1), [k("a")]: k(2), [k(10)]: k(3), [k(null)]: k(4) };
console.log(o, log);
