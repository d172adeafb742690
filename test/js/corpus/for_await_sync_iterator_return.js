"use strict";
// A sync iterator behind `for await` or an async generator's `yield*` has its return() and
// throw() called as %AsyncFromSyncIteratorPrototype% calls them: the result's value is
// awaited and a fresh { value, done } comes back.
const log = [];
function syncIterable(returnValue) {
  return {
    [Symbol.iterator]() {
      let i = 0;
      return {
        next() { i++; return { value: i, done: i > 3 }; },
        return(v) { log.push(`return(${v})`); return { value: returnValue, done: true }; },
        throw(e) { log.push(`throw(${e})`); return { value: Promise.resolve("from throw"), done: true }; },
      };
    },
  };
}
async function* outer(iterable) {
  const result = yield* iterable;
  log.push(`yield* gave ${result}`);
  return result;
}
async function main() {
  for await (const x of syncIterable(Promise.resolve("late"))) {
    if (x === 2) break;
  }
  console.log("break", log.splice(0).join(", "));
  try {
    for await (const x of syncIterable(1)) {
      if (x === 1) throw new Error("body");
    }
  } catch (err) {
    console.log("throw", err.message, log.splice(0).join(", "));
  }
  const g = outer(syncIterable(Promise.resolve("returned value")));
  console.log(JSON.stringify(await g.next()));
  const r = await g.return("asked");
  console.log("yield* return", typeof r.value, r.value instanceof Promise, r.done, log.splice(0).join(", "));
  const g2 = outer(syncIterable(0));
  await g2.next();
  const t = await g2.throw("boom");
  console.log("yield* throw", JSON.stringify(t), log.splice(0).join(", "));
}
main();
