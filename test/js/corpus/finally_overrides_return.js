// A return in finally overrides the try's return value.
function f() {
  try {
    return "try";
  } finally {
    return "finally";
  }
}
console.log(f());
function g() {
  try {
    throw new Error("lost");
  } finally {
    return "finally swallowed the throw";
  }
}
console.log(g());
