// expect: 5:3 yield* in async generators
// anchor: yield* inner()
// async generators are in; yield* inside one is not yet.
async function* ticks() {
  yield* inner();
}
async function* inner() {
  yield 1;
}
console.log(ticks);
