// Reading a missing property gives undefined; reading from undefined throws.
const o = { a: { b: 1 } };
console.log(o.x);
console.log(o.a.x);
try {
  console.log(o.x.y);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  const n = null;
  console.log(n.y);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
