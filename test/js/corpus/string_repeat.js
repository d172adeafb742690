// repeat, including 0 and the RangeError for negative counts.
console.log("ab".repeat(3));
console.log(JSON.stringify("ab".repeat(0)));
console.log(JSON.stringify("".repeat(5)));
console.log("-".repeat(2.9));
try {
  "x".repeat(-1);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  "x".repeat(Infinity);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
