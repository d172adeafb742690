"use strict";
// return() and throw() on an async generator in each state: not started, suspended at a yield
// (inside try/finally, and a finally that yields), running an await, and finished; the
// order of settlements as node gives it.
async function* body() {
  try {
    console.log("body start");
    const x = yield "first";
    console.log("body got", x);
    await null;
    yield "second";
  } catch (e) {
    console.log("caught", e);
    yield "from catch";
  } finally {
    console.log("finally");
    yield "from finally";
  }
  return "end";
}
async function run(name, steps) {
  const g = body();
  const out = [];
  for (const [method, arg] of steps) {
    out.push(g[method](arg).then(r => console.log(name, method, r), e => console.log(name, method, "rejected", e)));
  }
  await Promise.all(out);
}
(async () => {
  await run("start-return", [["return", "R"], ["next"]]);
  await run("start-throw", [["throw", "T"], ["next"]]);
  await run("yield-return", [["next"], ["return", Promise.resolve("RP")], ["next"], ["next"]]);
  await run("yield-throw", [["next"], ["throw", "E"], ["next"], ["next"], ["next"]]);
  await run("queued", [["next"], ["next", "a"], ["next"], ["next"], ["next"], ["next"]]);
  await run("rejected-return", [["next"], ["return", Promise.reject("no")], ["next"], ["next"]]);
  const done = body();
  for await (const v of done) console.log("drain", v);
  console.log(await done.return(Promise.resolve(7)));
  await done.throw("late").catch(e => console.log("late rejected", e));
  console.log(await done.next());
  // A wrong receiver rejects, it does not throw.
  const next = Object.getPrototypeOf(body()).next;
  await next.call({}).catch(e => console.log(e.constructor.name, e.message));
  // return x awaits x; yield of a rejected promise throws at the yield.
  async function* awaits() {
    try { yield Promise.reject(new Error("bad yield")); } catch (e) { console.log("yield threw", e.message); }
    return Promise.resolve("awaited return");
  }
  for await (const v of awaits()) console.log("never", v);
  const a = awaits();
  console.log(await a.next());
  console.log(typeof a[Symbol.asyncIterator], a[Symbol.asyncIterator]() === a, String(a));
})();
