"use strict";
// An array pattern whose default initializer or nested binding or target throws closes its
// iterator (return() called once, what it throws ignored, the first exception goes on), in
// declarations, assignments and parameters; not when the iterator's next() throws, and
// not when the iterator was already done.
const log = [];
function counted(name, items, options = {}) {
  let i = 0;
  return {
    [Symbol.iterator]() { return this; },
    next() {
      i++;
      if (options.nextThrowsAt === i) throw new Error(`${name} next threw`);
      return { value: items[i - 1], done: i > items.length };
    },
    return() {
      log.push(`${name} return`);
      if (options.returnThrows) throw new Error("return threw");
      return {};
    },
  };
}
function thrower(message) { throw new Error(message); }
function run(label, body) {
  try {
    const result = body();
    console.log(label, "no exception", result, "|", log.splice(0).join(", "));
  } catch (err) {
    console.log(label, err instanceof Error ? err.message : err, "|", log.splice(0).join(", "));
  }
}
run("declaration default throws", () => {
  const [a, b = thrower("default threw")] = counted("a", [1, undefined, 3]);
  return a + b;
});
run("default throws, return() throws too", () => {
  const [a = thrower("default threw")] = counted("b", [undefined], { returnThrows: true });
  return a;
});
run("nested object pattern throws", () => {
  const [{ x }] = counted("c", [null]);
  return x;
});
run("nested array pattern throws", () => {
  const [[y]] = counted("d", [5]);
  return y;
});
run("nested pattern's own iterator closes too", () => {
  const [[p, q = thrower("inner default")]] = counted("e", [counted("inner", [1, undefined])]);
  return p + q;
});
run("assignment target throws", () => {
  const target = { set v(x) { throw new Error(`setter got ${x}`); } };
  let first;
  [first, target.v] = counted("f", [1, 2, 3]);
  return first;
});
run("assignment target's object is null", () => {
  const holder = null;
  let first;
  [first, holder.v] = counted("g", [1, 2, 3]);
  return first;
});
run("assignment default throws", () => {
  let m, n;
  [m, n = thrower("assignment default")] = counted("h", [1, undefined]);
  return m + n;
});
run("parameter default throws", () => {
  function f([a, b = thrower("parameter default")]) { return a + b; }
  return f(counted("i", [1, undefined]));
});
run("arrow parameter nested pattern throws", () => (([[z]]) => z)(counted("j", [1])));
run("next() throws: not closed", () => {
  const [a, b] = counted("k", [1, 2, 3], { nextThrowsAt: 2 });
  return a + b;
});
run("done before the default: not closed", () => {
  const [a, b = thrower("after done")] = counted("l", [1]);
  return a + b;
});
run("rest drained it: not closed", () => {
  const target = { set v(x) { throw new Error(`rest setter got ${x.length}`); } };
  [...target.v] = counted("m", [1, 2, 3]);
  return "unreached";
});
run("no throw: closed once", () => {
  const [a, b = 10] = counted("n", [1, undefined, 3]);
  return a + b;
});
run("arrays and strings", () => {
  try { const [a = thrower("array default")] = []; log.push(a); } catch (err) { log.push(err.message); }
  try { const [s, [t]] = "ab"; log.push(`${s} ${t}`); } catch (err) { log.push("string"); }
  return "done";
});
function* gen() {
  try {
    yield 1;
    yield undefined;
    yield 3;
  } finally {
    log.push("generator finally");
  }
}
run("generator's finally runs", () => {
  const [a, b = thrower("generator default")] = gen();
  return a + b;
});
run("generator's finally runs on a nested throw", () => {
  const [a, { b }] = (function* () { try { yield 1; yield null; yield 3; } finally { log.push("g2 finally"); } })();
  return a + b;
});
function* suspendedInDefault() {
  const [a = yield "paused"] = counted("o", [undefined, 2]);
  return a;
}
const g = suspendedInDefault();
console.log(JSON.stringify(g.next()));
console.log("generator return() in a default", JSON.stringify(g.return(4)), log.splice(0).join(", "));
const g2 = suspendedInDefault();
g2.next();
try { g2.throw(new Error("thrown in")); } catch (err) { console.log("generator throw() in a default", err.message, log.splice(0).join(", ")); }
const g3 = suspendedInDefault();
g3.next();
console.log("resumed", JSON.stringify(g3.next(7)), log.splice(0).join(", "));
// A member target's object and key are evaluated before the iterator's next(), so a throw
// there closes an iterator that has not stepped.
function loud(name, items) {
  const it = counted(name, items);
  const next = it.next;
  it.next = function () { log.push(`${name} next`); return next.call(this); };
  return it;
}
const holder = {};
function key(k) { log.push(`key ${k}`); return k; }
function obj() { log.push("object"); return holder; }
[obj()[key("a")], obj().b = 5, ...obj()[key("rest")]] = loud("p", [1, undefined, 3, 4]);
console.log("order", JSON.stringify(holder), log.splice(0).join(", "));
run("target object throws before next()", () => {
  [thrower("target threw").x] = loud("q", [1]);
});
run("target key throws before next()", () => {
  [holder[thrower("key threw")]] = loud("r", [1]);
});
run("rest target throws before next()", () => {
  [...holder[thrower("rest key threw")]] = loud("s", [1]);
});
