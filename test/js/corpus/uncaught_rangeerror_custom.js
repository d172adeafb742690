// An uncaught RangeError thrown by the script.
function check(n) {
  if (n > 10) throw new RangeError("value " + n + " exceeds 10");
  return n;
}
console.log(check(5));
console.log(check(50));
