// expect: 4:1 async generators
// anchor: async function*
// async functions and generators are in, async generators are not.
async function* ticks() {
  yield 1;
}
console.log(ticks);
