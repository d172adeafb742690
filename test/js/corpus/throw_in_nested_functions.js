// A throw unwinds through several calls to the nearest catch.
function a(n) {
  return b(n) + 1;
}
function b(n) {
  return c(n) + 1;
}
function c(n) {
  if (n < 0) throw new RangeError("negative: " + n);
  return n;
}
console.log(a(1));
try {
  a(-1);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
