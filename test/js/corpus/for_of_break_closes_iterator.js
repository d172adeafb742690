// Leaving a for...of early (break, return) calls the iterator's return(); finishing it or
// continuing does not.
function* g() {
  try {
    yield 1;
    yield 2;
    yield 3;
  } finally {
    console.log("cleanup");
  }
}
for (const x of g()) {
  console.log(x);
  if (x === 2) break;
}
const it = {
  i: 0,
  [Symbol.iterator]() {
    return this;
  },
  next() {
    this.i++;
    return { value: this.i, done: this.i > 5 };
  },
  return() {
    console.log("return called at", this.i);
    return {};
  },
};
for (const x of it) {
  if (x === 3) break;
}
function first() {
  for (const x of it) {
    if (x === 5) return "r" + x;
  }
  return "none";
}
it.i = 3;
console.log(first());
it.i = 0;
for (const x of it) {
  if (x < 10) continue;
}
const gen = g();
for (const x of gen) {
  if (x === 1) break;
}
console.log(gen.next());
