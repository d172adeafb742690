"use strict";
// A `for await` whose body throws closes its iterator: return() is called and its result
// awaited, what it throws, rejects with or resolves to is ignored, and the body's exception
// goes on. Not when the iterator's own next() throws or rejects.
const log = [];
function asyncCounted(name, options) {
  let i = 0;
  return {
    [Symbol.asyncIterator]() { return this; },
    next() {
      i++;
      if (options.nextThrowsAt === i) throw new Error(`${name} next threw`);
      if (options.nextRejectsAt === i) return Promise.reject(new Error(`${name} next rejected`));
      return Promise.resolve({ value: i, done: i > 5 });
    },
    return() {
      log.push(`${name} return`);
      if (options.returnThrows) throw new Error("return threw");
      if (options.returnRejects) return Promise.reject(new Error("return rejected"));
      return new Promise((resolve) => {
        Promise.resolve().then(() => { log.push(`${name} return settled`); resolve("returnValue" in options ? options.returnValue : {}); });
      });
    },
  };
}
async function run(label, body) {
  try {
    await body();
    console.log(label, "no exception", log.splice(0).join(", "));
  } catch (err) {
    console.log(label, err instanceof Error ? err.message : err, "|", log.splice(0).join(", "));
  }
}
async function* finallyLogs() {
  try {
    yield 1;
    yield 2;
  } finally {
    log.push("generator finally");
  }
}
function* syncFinally() {
  try {
    yield "s1";
    yield "s2";
  } finally {
    log.push("sync generator finally");
  }
}
async function* suspendedInLoop() {
  for await (const x of asyncCounted("g", {})) yield x;
}
async function main() {
  await run("body throws", async () => {
    for await (const x of asyncCounted("a", {})) if (x === 2) throw new Error("body threw at 2");
  });
  await run("return() throws", async () => {
    for await (const x of asyncCounted("b", { returnThrows: true })) if (x === 1) throw new Error("body threw");
  });
  await run("return() rejects", async () => {
    for await (const x of asyncCounted("c", { returnRejects: true })) if (x === 1) throw new Error("body threw");
  });
  await run("return() gives a number", async () => {
    for await (const x of asyncCounted("d", { returnValue: 3 })) if (x === 1) throw new Error("body threw");
  });
  await run("next() throws", async () => {
    for await (const x of asyncCounted("e", { nextThrowsAt: 2 })) log.push(`e ${x}`);
  });
  await run("next() rejects", async () => {
    for await (const x of asyncCounted("f", { nextRejectsAt: 3 })) log.push(`f ${x}`);
  });
  await run("binding throws", async () => {
    const target = { set x(v) { if (v === 2) throw new Error("setter threw"); log.push(`set ${v}`); } };
    for await (target.x of asyncCounted("h", {}));
  });
  await run("caught inside: not closed", async () => {
    for await (const x of asyncCounted("i", {})) {
      try { if (x === 2) throw new Error("caught"); } catch (err) { log.push(`caught at ${x}`); }
      if (x === 3) continue;
    }
  });
  await run("async generator's finally runs", async () => {
    for await (const x of finallyLogs()) throw new Error(`threw at ${x}`);
  });
  await run("sync generator behind for await", async () => {
    for await (const x of syncFinally()) throw new Error(`threw at ${x}`);
  });
  await run("break then throw in a later loop", async () => {
    for await (const x of asyncCounted("j", {})) if (x === 2) break;
    for await (const x of asyncCounted("k", {})) if (x === 2) throw new Error("k threw");
  });
  const gen = suspendedInLoop();
  await gen.next();
  console.log("generator return()", JSON.stringify(await gen.return(9)), log.splice(0).join(", "));
  const gen2 = suspendedInLoop();
  await gen2.next();
  try { await gen2.throw(new Error("thrown in")); } catch (err) { console.log("generator throw()", err.message, log.splice(0).join(", ")); }
}
main();
