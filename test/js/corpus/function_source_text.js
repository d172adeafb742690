// String(f) of a function is its source text, from `function` or the arrow's parameters to
// the end of its body, comments and spacing included.
const add = (a, b) => a + b;
function twice(x) {
  // doubles
  return x * 2;
}
const pick = ({ a, b = 2 }, ...rest) => { return [a, b, rest]; };
const holder = { run: (n) => n + 1 };
console.log(String(add));
console.log(`${twice}`);
console.log("" + pick);
console.log(String(holder.run), String((q) => q));
console.log([add, holder.run].join(" | "));
console.log(String(Math.max), String(parseInt), String(JSON.stringify));
