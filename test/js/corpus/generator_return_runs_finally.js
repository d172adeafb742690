// return(v) on a generator suspended inside try runs its finally blocks (not its catch
// blocks); a finally block may yield, return or throw over it.
function* g() {
  try {
    yield 1;
    yield 2;
  } catch (e) {
    console.log("caught?", e);
  } finally {
    console.log("finally runs");
  }
  yield 99;
}
const a = g();
console.log(a.next(), a.return(7), a.next());
function* h() {
  try {
    yield 1;
  } finally {
    yield "from finally";
    console.log("after");
  }
}
const b = h();
console.log(b.next(), b.return(5), b.next(), b.next());
function* k() {
  try {
    yield 1;
  } finally {
    return "override";
  }
}
const c = k();
console.log(c.next(), c.return(5), c.next());
function* m() {
  try {
    try {
      yield 1;
    } finally {
      console.log("inner");
    }
  } finally {
    console.log("outer");
  }
}
const d = m();
d.next();
console.log(d.return(3));
function* q() {
  try {
    yield 1;
  } finally {
    throw new Error("boom");
  }
}
const r = q();
r.next();
try {
  r.return(1);
} catch (err) {
  console.log(err.message);
}
console.log(r.next());
