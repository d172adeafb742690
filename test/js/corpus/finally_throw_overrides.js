// An exception thrown in finally replaces the pending one.
try {
  try {
    throw new Error("first");
  } finally {
    throw new Error("second");
  }
} catch (e) {
  console.log(e.message);
}
function f() {
  try {
    return 1;
  } finally {
    throw new TypeError("from finally");
  }
}
try {
  f();
} catch (e) {
  console.log(e.name + ": " + e.message);
}
