"use strict";
// yield* in an async generator: over another async generator, over a sync iterable (values
// that are promises are awaited by the wrapper), over a hand-written async iterator whose
// next() sees what next(v) sent, and the inner return value as the expression's value.
async function* inner(tag) {
  const got = yield `${tag}-1`;
  console.log(tag, "inner got", got);
  yield `${tag}-2`;
  return `${tag}-done`;
}
async function* outer() {
  const r = yield* inner("a");
  console.log("inner returned", r);
  const s = yield* [1, Promise.resolve(2), 3];
  console.log("sync returned", s);
  let n = 0;
  const hand = {
    [Symbol.asyncIterator]() { return this; },
    next(v) {
      console.log("hand next", v);
      n++;
      return Promise.resolve({ value: n * 100, done: n > 2 });
    },
  };
  const h = yield* hand;
  console.log("hand returned", h);
  return "outer-done";
}
(async () => {
  const g = outer();
  let step = 0;
  for (;;) {
    const r = await g.next(`sent-${step++}`);
    console.log("step", r);
    if (r.done) break;
  }
  for await (const v of outer()) console.log("loop", v);
  async function* bad() { yield* 5; }
  await bad().next().catch(e => console.log(e.constructor.name, e.message));
  async function* badResult() { yield* { [Symbol.asyncIterator]() { return { next() { return 7; } }; } }; }
  await badResult().next().catch(e => console.log(e.constructor.name, e.message));
  Promise.resolve().then(() => console.log("tick 1")).then(() => console.log("tick 2")).then(() => console.log("tick 3"));
  for await (const v of (async function* () { yield* inner("t"); })()) console.log("ticked", v);
})();
