// A short-circuited chain does not evaluate the rest.
let count = 0;
const bump = () => {
  count++;
  return "k";
};
const u = undefined;
console.log(u?.[bump()]);
console.log(u?.a.b.c[bump()]);
console.log(count);
const o = { a: undefined };
try {
  console.log(o.a?.b.c);
  console.log(o.a.b);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
