// Functions stored in object properties and called through them.
const calc = {
  add: (a, b) => a + b,
  mul: (a, b) => a * b,
  ops: { neg: (a) => -a },
};
console.log(calc.add(2, 3), calc.mul(4, 5), calc.ops.neg(7));
console.log(calc["add"](1, 1));
console.log(typeof calc.add);
