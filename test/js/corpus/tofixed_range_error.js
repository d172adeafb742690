// toFixed's digit argument must be between 0 and 100.
try {
  (1).toFixed(101);
} catch (e) {
  console.log(e.name + ": " + e.message);
  console.log(e instanceof RangeError);
}
try {
  (1).toFixed(-1);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log((1).toFixed(100).length);
console.log((1.5).toFixed(2.7));
