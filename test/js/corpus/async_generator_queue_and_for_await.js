"use strict";
// An async generator answers queued next/return requests in order; for await over async
// generators, sync iterables of promises, [Symbol.asyncIterator] methods and class methods.
async function* g() {
  console.log("start");
  const a = yield 1;
  console.log("got", a);
  const b = await Promise.resolve(2);
  yield b;
  try {
    yield 3;
  } finally {
    console.log("finally");
  }
  return 4;
}
const it = g();
console.log(Object.prototype.toString.call(it), it);
it.next("x").then(r => console.log("r1", r));
it.next("y").then(r => console.log("r2", r));
it.next("z").then(r => console.log("r3", r));
it.return(9).then(r => console.log("r4", r));
it.next().then(r => console.log("r5", r));
(async () => {
  for await (const x of g()) console.log("loop", x);
  for await (const x of [Promise.resolve("p1"), "v2"]) console.log("sync", x);
  const obj = { async *[Symbol.asyncIterator]() { yield "o1"; yield "o2"; } };
  for await (const x of obj) { console.log("obj", x); break; }
  class C { async *m(n) { for (let i = 0; i < n; i++) yield i * 10; } }
  for await (const x of new C().m(3)) console.log("class", x);
  try { for await (const x of 5) {} } catch (e) { console.log(e.message); }
  const t = g(); 
  await t.throw(new Error("early")).catch(e => console.log("thrown", e.message));
  console.log(await t.next());
})();
