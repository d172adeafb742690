// An exception thrown inside a callback that nobody catches.
const xs = [1, 2, 3];
xs.forEach((x) => {
  console.log("item", x);
  if (x === 2) throw new RangeError("stop at " + x);
});
