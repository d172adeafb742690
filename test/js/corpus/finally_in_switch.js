// finally around a switch with returns.
function f(k) {
  try {
    switch (k) {
      case 1:
        return "one";
      default:
        throw new Error("bad " + k);
    }
  } catch (e) {
    return "caught " + e.message;
  } finally {
    console.log("finally for", k);
  }
}
console.log(f(1));
console.log(f(2));
