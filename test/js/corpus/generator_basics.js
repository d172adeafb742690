// Generators: function*, yield and its sent value, yield*, return, throw, and generators as
// the iterables of for-of, spread, destructuring, Array.from and Set.
function* pair(a, b = 2) {
  const x = yield a;
  console.log("got", x);
  yield b + x;
  return 9;
}
const it = pair(1);
console.log(it.next("ignored"), it.next(5), it.next(), it.next());
console.log([...pair(10)], Array.from(pair(7)), new Set(pair(7)).size);
function* naturals() {
  let i = 0;
  for (;;) yield i++;
}
const n = naturals();
console.log(n.next().value, n.next().value, n.next().value);
const [p, q, r] = naturals();
console.log(p, q, r);
function* delegating() {
  yield 0;
  yield* [1, 2];
  yield* pair(3);
  yield* "ab";
  yield 4;
}
console.log([...delegating()]);
class Tree {
  constructor(v, kids) { this.v = v; this.kids = kids; }
  *[Symbol.iterator]() {
    yield this.v;
    for (const k of this.kids) yield* k;
  }
}
console.log([...new Tree(1, [new Tree(2, []), new Tree(3, [new Tree(4, [])])])]);
function* guarded() {
  try {
    yield 1;
    yield 2;
  } catch (e) {
    console.log("caught", e);
    yield 3;
  } finally {
    console.log("finally");
  }
}
const t = guarded();
console.log(t.next(), t.throw("boom"), t.next(), t.next());
const o = { *m() { yield this.k; }, k: "kay" };
console.log([...o.m()], typeof pair, Object.prototype.toString.call(pair()), pair());
try { new pair(); } catch (e) { console.log(e.message); }
function* thrower() {
  yield 1;
  throw new Error("inner");
}
try { for (const v of thrower()) console.log(v); } catch (e) { console.log(e.message); }
const early = pair();
console.log(early.return(5), early.next());
try { pair().throw(new RangeError("first")); } catch (e) { console.log(e.name, e.message); }
function* selfish() { yield self.next(); }
const self = selfish();
try { self.next(); } catch (e) { console.log(e.message); }
function* counter(limit) {
  let total = 0;
  while (total < limit) total += yield total;
  return total;
}
const c = counter(10);
c.next();
console.log(c.next(4), c.next(4), c.next(4), c.next(4));
