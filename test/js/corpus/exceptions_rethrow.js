// Catch, inspect and rethrow.
function risky(n) {
  if (n > 2) throw new RangeError("too big: " + n);
  return n;
}
function wrapper(n) {
  try {
    return risky(n);
  } catch (e) {
    if (e instanceof RangeError) throw new Error("wrapped " + e.message);
    throw e;
  }
}
for (const n of [1, 5]) {
  try {
    console.log(wrapper(n));
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
