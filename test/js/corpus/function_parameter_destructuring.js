// Destructuring patterns as parameters, with defaults.
function f({ a, b = 2 }, [c, d = 4] = []) {
  return [a, b, c, d];
}
console.log(f({ a: 1 }));
console.log(f({ a: 1, b: null }, [3]));
const g = ({ name = "anon", tags: [first = "none"] = [] } = {}) => name + ":" + first;
console.log(g(), g({ name: "x" }), g({ tags: ["t1", "t2"] }));
try {
  f();
} catch (e) {
  console.log(e.name + ": " + e.message);
}
