"use strict";
// An async generator's yield* hands throw(e) and return(v) to the inner iterator (an async
// generator, a sync generator behind the wrapper, a hand-written async iterator), awaiting
// what they return.
async function* inner() {
  try {
    yield 1;
    yield 2;
  } catch (e) {
    console.log("inner caught", e);
    yield "after catch";
    return "inner result";
  } finally {
    console.log("inner finally");
  }
}
async function* outer(source) {
  try {
    const r = yield* source();
    console.log("yield* gave", r);
    yield "outer continues";
  } finally {
    console.log("outer finally");
  }
}
const show = (label) => (r) => console.log(label, r);
const fail = (label) => (e) => console.log(label, "rejected", e instanceof Error ? e.message : e);
(async () => {
  let g = outer(inner);
  await g.next().then(show("n1"));
  await g.throw("E").then(show("t1"));
  await g.next().then(show("n2"));
  await g.next().then(show("n3"));
  g = outer(inner);
  await g.next().then(show("n4"));
  await g.return(Promise.resolve("R")).then(show("r1"));
  await g.next().then(show("n5"));
  const log = [];
  const hand = {
    [Symbol.asyncIterator]() { return this; },
    next(v) { log.push(`next ${v}`); return Promise.resolve({ value: "n", done: false }); },
    return(v) { log.push(`return ${v}`); return Promise.resolve({ value: `ret ${v}`, done: true }); },
    throw(e) { log.push(`throw ${e}`); return { value: `caught ${e}`, done: false }; },
  };
  g = outer(() => hand);
  await g.next("a").then(show("h1"));
  await g.throw("x").then(show("h2"));
  await g.return("c").then(show("h3"));
  console.log(log.join(", "));
  const noThrow = {
    [Symbol.asyncIterator]() { return this; },
    next() { return Promise.resolve({ value: 1, done: false }); },
    return() { log.push("closed"); return {}; },
  };
  g = outer(() => noThrow);
  await g.next();
  await g.throw(new Error("y")).then(show("nt"), fail("nt"));
  console.log(log.at(-1));
  function* sync() { try { yield "s1"; } finally { console.log("sync finally"); } }
  g = outer(sync);
  await g.next().then(show("s"));
  await g.return("sr").then(show("sr"));
})();
