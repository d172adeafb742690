"use strict";
// for await: break and return close the iterator (its return() awaited), an abrupt next()
// rejects the loop, results that are not objects, and the TypeErrors of GetIterator.
function counter(limit, withReturn) {
  let i = 0;
  const it = {
    [Symbol.asyncIterator]() { console.log("get iterator"); return this; },
    next(v) {
      console.log("next", v);
      i++;
      return Promise.resolve({ value: i, done: i > limit });
    },
  };
  if (withReturn) it.return = v => { console.log("return called", v); return Promise.resolve({ done: true }); };
  return it;
}
async function firstOver(limit) {
  for await (const x of counter(5, true)) {
    if (x > limit) return x;
  }
  return -1;
}
(async () => {
  for await (const x of counter(2, true)) console.log("x", x);
  for await (const x of counter(5, true)) { if (x === 2) break; console.log("b", x); }
  console.log("returned", await firstOver(1));
  outer: for (const tag of ["a", "b"]) {
    for await (const x of counter(3, false)) { if (x === 2) continue outer; console.log(tag, x); }
  }
  for (const bad of [1, undefined, null, {}, { [Symbol.asyncIterator]: 1 }, { [Symbol.asyncIterator]() { return 1; } },
    { [Symbol.iterator]() { return 1; } }, { [Symbol.asyncIterator]() { return { next() { return 1; } }; } },
    { [Symbol.asyncIterator]() { return { next() { return Promise.reject(new Error("next failed")); } }; } }]) {
    try {
      for await (const x of bad) console.log("never", x);
    } catch (e) {
      console.log(e.constructor.name, e.message);
    }
  }
  const o = { list: 5 };
  try { for await (const x of o.list) {} } catch (e) { console.log(e.message); }
  try {
    for await (const x of { [Symbol.asyncIterator]() { return { next: () => ({ value: 1, done: false }), return: () => 5 }; } }) break;
  } catch (e) {
    console.log(e.constructor.name, e.message);
  }
  // Sync iterables: each value awaited, a rejected one throws in the loop.
  try {
    for await (const x of [1, Promise.resolve(2), Promise.reject(new Error("third")), 4]) console.log("sync", x);
  } catch (e) {
    console.log("sync threw", e.message);
  }
  function* gen() { try { yield 1; yield 2; } finally { console.log("gen finally"); } }
  for await (const x of gen()) { console.log("gen", x); break; }
  // Interleaving with other microtasks.
  Promise.resolve().then(() => console.log("tick 1")).then(() => console.log("tick 2")).then(() => console.log("tick 3"));
  for await (const x of [10, 20]) console.log("interleaved", x);
})();
