"use strict";
// yield* hands throw(e) and return(v) to the inner iterator: a generator's catch and finally
// blocks run, a hand-written iterator's throw/return are called, a missing throw closes it.
function* inner() {
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
function* outer() {
  try {
    const r = yield* inner();
    console.log("yield* gave", r);
    yield "outer continues";
  } finally {
    console.log("outer finally");
  }
}
let g = outer();
console.log(g.next(), g.throw("E"), g.next(), g.next(), g.next());
g = outer();
console.log(g.next(), g.return("R"), g.next());
function* returnsInFinally() {
  try { yield 1; } finally { return "from finally"; }
}
function* wraps() { const v = yield* returnsInFinally(); console.log("never", v); }
g = wraps();
console.log(g.next(), g.return("R2"), g.next());
const log = [];
const hand = {
  [Symbol.iterator]() { return this; },
  next(v) { log.push(`next ${v}`); return { value: "n", done: false }; },
  return(v) { log.push(`return ${v}`); return { value: `ret ${v}`, done: true }; },
};
function* overHand() { yield* hand; }
g = overHand();
console.log(g.next("a"), g.next("b"), g.return("c"), g.next(), log.join(", "));
const noThrow = {
  [Symbol.iterator]() { return this; },
  next() { return { value: 1, done: false }; },
  return() { log.push("closed"); return {}; },
};
function* overNoThrow() { yield* noThrow; }
g = overNoThrow();
g.next();
try { g.throw(new Error("x")); } catch (e) { console.log(e.constructor.name, e.message, log.at(-1)); }
function* overArray() { yield* [1, 2, 3]; }
g = overArray();
g.next();
try { g.throw("y"); } catch (e) { console.log(e.constructor.name, e.message); }
g = overArray();
console.log(g.next(), g.return(9), g.next());
const throwsBack = {
  [Symbol.iterator]() { return this; },
  next() { return { value: 1, done: false }; },
  throw(e) { return { value: `handled ${e}`, done: e === "stop" }; },
};
function* overThrowsBack() { const r = yield* throwsBack; console.log("ended with", r); return r; }
g = overThrowsBack();
console.log(g.next(), g.throw("go"), g.throw("stop"));
