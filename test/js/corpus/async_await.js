// async functions, arrows and methods, await on values, promises and rejections, in node's order.
async function f(x) { console.log("f start", x); const y = await x; console.log("f got", y); return y * 2; }
const g = async (a, b = 1) => (await a) + b;
const h = async x => { throw new Error("h" + x); };
const o = { async m() { return this.k; }, k: "kay" };
class C { async n(v) { await null; return v + 1; } static async s() { return "static"; } }
console.log("before");
const p = f(21);
console.log("after call", p);
p.then((v) => console.log("f ->", v));
g(Promise.resolve(2)).then((v) => console.log("g ->", v));
h(1).catch((e) => console.log("h ->", e.message));
o.m().then((v) => console.log("m ->", v));
new C().n(4).then((v) => console.log("n ->", v));
C.s().then((v) => console.log("s ->", v));
async function order() {
  console.log("o1");
  await undefined;
  console.log("o2");
  try { await Promise.reject(new Error("rej")); } catch (e) { console.log("o3", e.message); }
  const all = await Promise.all([f(1), g(3), 4]);
  console.log("o4", all);
  for (const x of [1, 2]) console.log("loop", await x);
  return "done";
}
order().then((v) => console.log("order ->", v));
(async function () { console.log("iife"); })();
const e = async function named() { return typeof named; };
e().then((v) => console.log("named ->", v));
console.log("sync end", typeof f, Object.prototype.toString.call(f(0)));
async function nested() {
  const inner = async (n) => (n > 0 ? 1 + (await inner(n - 1)) : 0);
  return inner(5);
}
nested().then((v) => console.log("nested", v));
const thenable = { then(resolve) { resolve("from thenable"); } };
(async () => console.log(await thenable))();
