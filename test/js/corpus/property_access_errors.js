// Reading properties of null and undefined throws TypeError with node's messages.
const u = undefined;
const n = null;
const o = { a: undefined };
const attempts = [() => u.x, () => n.x, () => o.a.b, () => u[0], () => n["key"], () => o.a.b.c];
for (const f of attempts) {
  try {
    f();
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
try {
  n.x = 1;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  u.y = 1;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
