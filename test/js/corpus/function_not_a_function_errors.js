// Calling something that is not a function throws TypeError with node's messages.
const o = { a: 1, nested: { b: null } };
const attempts = [
  () => o.a(),
  () => o.missing(),
  () => o.nested.b(),
  () => o["a"](),
  () => undefined(),
  () => (1)(),
  () => "str"(),
];
for (const f of attempts) {
  try {
    f();
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
const notFn = 5;
try {
  notFn();
} catch (e) {
  console.log(e.name + ": " + e.message);
}
