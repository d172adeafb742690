// A closure keeps its own state.
const makeCounter = () => {
  let n = 0;
  return { inc: () => ++n, get: () => n };
};
const c1 = makeCounter();
const c2 = makeCounter();
c1.inc();
c1.inc();
c2.inc();
console.log(c1.get(), c2.get());
