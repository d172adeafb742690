"use strict";
// A for...of whose body (or its binding) throws closes its iterator: return() is called
// once, what it throws or returns is ignored and the body's exception goes on. An
// iterator whose own next(), `done` or `value` throws is not closed.
const log = [];
function counted(name, options) {
  let i = 0;
  return {
    [Symbol.iterator]() { return this; },
    next() {
      i++;
      if (options.nextThrowsAt === i) throw new Error(`${name} next threw`);
      if (options.nonObjectAt === i) return 7;
      const result = { done: i > 5 };
      if (options.getterThrowsAt === i) {
        Object.defineProperty(result, options.getter, { get() { throw new Error(`${name} ${options.getter} getter threw`); } });
      } else {
        result.value = i;
      }
      return result;
    },
    return() {
      log.push(`${name} return`);
      if (options.returnThrows) throw new Error("return threw");
      return "returnValue" in options ? options.returnValue : {};
    },
  };
}
function run(label, body) {
  try {
    body();
    console.log(label, "no exception", log.splice(0).join(", "));
  } catch (err) {
    console.log(label, err instanceof Error ? err.message : err, "|", log.splice(0).join(", "));
  }
}
run("body throws", () => {
  for (const x of counted("a", { returnValue: {} })) {
    if (x === 2) throw new Error("body threw at 2");
  }
});
run("return() throws", () => {
  for (const x of counted("b", { returnThrows: true })) {
    if (x === 3) throw new Error("body threw at 3");
  }
});
run("return() gives a number", () => {
  for (const x of counted("c", { returnValue: 5 })) {
    if (x === 1) throw "a string";
  }
});
run("next() throws", () => {
  for (const x of counted("d", { nextThrowsAt: 3 })) log.push(`d ${x}`);
});
run("next() gives a non-object", () => {
  for (const x of counted("e", { nonObjectAt: 2 })) log.push(`e ${x}`);
});
run("done getter throws", () => {
  for (const x of counted("f", { getterThrowsAt: 2, getter: "done" })) log.push(`f ${x}`);
});
run("value getter throws", () => {
  for (const x of counted("g", { getterThrowsAt: 2, getter: "value" })) log.push(`g ${x}`);
});
run("binding throws", () => {
  const target = { set x(v) { if (v === 2) throw new Error("setter threw"); log.push(`set ${v}`); } };
  for (target.x of counted("h", {})) ;
});
run("nested pattern in the head throws", () => {
  for (const { a } of [{ a: 1 }, null]) log.push(`a ${a}`);
});
run("pattern with a protocol iterator in the head", () => {
  for (const [p = (() => { throw new Error("default threw"); })()] of [[1], []]) log.push(`p ${p}`);
});
run("inner loop throws, both close", () => {
  for (const x of counted("outer", {})) {
    for (const y of counted("inner", {})) {
      if (y === 2) throw new Error(`threw at ${x}/${y}`);
    }
  }
});
run("caught inside the body: not closed", () => {
  for (const x of counted("i", {})) {
    try {
      if (x === 2) throw new Error("caught");
    } catch (err) {
      log.push(`caught at ${x}`);
    }
  }
});
run("caught outside, loop runs again", () => {
  for (let round = 0; round < 2; round++) {
    try {
      for (const x of counted(`j${round}`, {})) if (x === round + 1) throw new Error("r");
    } catch (err) {
      log.push(`caught ${round}`);
    }
  }
});
function* finallyLogs() {
  try {
    yield 1;
    yield 2;
  } finally {
    log.push("generator finally");
  }
}
run("generator's finally runs", () => {
  for (const x of finallyLogs()) throw new Error(`threw at ${x}`);
});
run("arrays, strings, Maps and Sets", () => {
  let n = 0;
  try { for (const x of [1, 2, 3]) { n += x; if (x === 2) throw new Error("array"); } } catch (err) { log.push(err.message); }
  try { for (const ch of "abc") { if (ch === "b") throw new Error("string"); } } catch (err) { log.push(err.message); }
  try { for (const [k] of new Map([[1, 1], [2, 2]])) { if (k === 1) throw new Error("map"); } } catch (err) { log.push(err.message); }
  try { for (const v of new Set([1])) { throw new Error(`set ${v}`); } } catch (err) { log.push(err.message); }
  log.push(`n ${n}`);
});
function returnsFromLoop() {
  for (const x of counted("k", {})) {
    try {
      if (x === 2) return "returned";
    } finally {
      log.push("finally in body");
    }
  }
  return "end";
}
run("return runs finally then closes", () => { log.push(returnsFromLoop()); });
outer: for (const x of counted("l", {})) {
  for (const y of counted("m", {})) {
    if (y === 2) continue outer;
    if (x === 3) break outer;
  }
}
console.log("labels", log.splice(0).join(", "));
function* suspendedInLoop() {
  for (const x of counted("n", {})) yield x;
}
const gen = suspendedInLoop();
gen.next();
console.log("generator return()", JSON.stringify(gen.return(9)), log.splice(0).join(", "));
const gen2 = suspendedInLoop();
gen2.next();
try { gen2.throw(new Error("thrown in")); } catch (err) { console.log("generator throw()", err.message, log.splice(0).join(", ")); }
function* suspendedReturnThrows() {
  for (const x of counted("o", { returnThrows: true })) yield x;
}
const gen3 = suspendedReturnThrows();
gen3.next();
try { gen3.return(1); console.log("no error"); } catch (err) { console.log("return() over a throwing return", err.message, log.splice(0).join(", ")); }
