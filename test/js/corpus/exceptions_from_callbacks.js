// Exceptions propagate out of array callbacks and sort comparators.
try {
  [1, 2, 3].map((x) => {
    if (x === 2) throw new Error("in map at " + x);
    return x;
  });
} catch (e) {
  console.log(e.message);
}
try {
  [3, 2, 1].sort(() => {
    throw new TypeError("in comparator");
  });
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  new Map([[1, 2]]).forEach(() => {
    throw "from forEach";
  });
} catch (e) {
  console.log(e);
}
