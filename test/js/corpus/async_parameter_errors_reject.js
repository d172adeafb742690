// An async function whose parameters throw while being bound returns a rejected promise,
// while a generator's call throws at once.
async function later(x = y, y) {
  return x;
}
async function destructures([first]) {
  return first;
}
const arrow = async ({ a }) => a;
const calls = [later(), destructures(null), arrow(null)];
console.log(calls.every((p) => p instanceof Promise));
for (const p of calls) p.catch((e) => console.log("rejected:", e.constructor.name));
function* generator([first]) {
  yield first;
}
try {
  generator(null);
} catch (e) {
  console.log("the generator's call threw:", e.constructor.name);
}
destructures([7]).then((v) => console.log("fulfilled:", v));
