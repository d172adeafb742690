// && and || return one of their operands and short-circuit.
const log = [];
const v = (x) => {
  log.push(x);
  return x;
};
console.log(v(0) && v(1));
console.log(v(2) && v(3));
console.log(v("") || v("b"));
console.log(v("a") || v("c"));
console.log(log);
console.log(null || undefined || 0 || "last");
console.log(1 && "x" && [] && {});
