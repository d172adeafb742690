// yield* sends next(v)'s value to the inner generator and is its return value.
function* inner() {
  const a = yield 1;
  console.log("inner got", a);
  const b = yield 2;
  console.log("inner got", b);
  return "inner done";
}
function* outer() {
  const r = yield* inner();
  console.log("yield* gave", r);
  const s = yield* [10, 20];
  console.log("array gave", s);
  return r;
}
const o = outer();
console.log(o.next("x"), o.next("y"), o.next("z"), o.next(), o.next(), o.next());
function* letters() {
  yield* "ab";
  yield* new Set([5]);
}
console.log([...letters()]);
