// Modules are strict: frozen writes throw.
const o = Object.freeze({ a: 1 });
try {
  o.a = 2;
} catch (e) {
  console.log(e.name + ": " + e.message);
}
export function unused() {
  return o;
}
